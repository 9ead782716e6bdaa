//! The output layer every command shares: Markdown for pull requests and job summaries,
//! GitHub Actions workflow commands, and terminal niceties that must never leak into logs.
//!
//! Commands compute plain data and hand it here, so the rules that are easy to get subtly
//! wrong live in one tested place: GitHub's 65,536-character comment limit, fences that a
//! diff containing backticks cannot break out of, names that cannot inject Markdown or ping
//! people, workflow-command escaping, and "colours and the activity line only on a terminal".
//!
//! - [`markdown`]: escaping, fences, tables, fitting blocks under a size limit.
//! - [`preview`]: the sticky PR preview comment rendered by `plan --format markdown`;
//!   [`from_plan`] maps a release plan into it.
//! - [`schema_doc`]: the configuration reference generated from the JSON Schema.
//! - [`status`]: `stackbot status` as text, JSON and Markdown (the dashboard issue's body).
//! - [`github`]: `::error file=…,line=…::` annotations, `$GITHUB_STEP_SUMMARY`,
//!   `$GITHUB_OUTPUT`.

pub mod detect;
pub mod from_plan;
pub mod github;
pub mod init;
pub mod markdown;
pub mod preview;
pub mod release;
pub mod schema_doc;
pub mod status;
pub mod tenants;
pub mod text;
pub mod verdict;

pub use verdict::verdict_lines;

/// What the terminal allows, read once at the edge (`--quiet`, `NO_COLOR`, `TERM`, whether
/// stderr is a terminal) and handed to what draws: a value, not process state, so this module
/// never reads the environment or asks the process, and no test changes it for another.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Terminal {
    quiet: bool,
    no_color: bool,
    dumb: bool,
    stderr_is_terminal: bool,
}

impl Terminal {
    /// `no_color` and `term` as the environment has them; an empty `NO_COLOR` is unset
    /// (<https://no-color.org>).
    pub fn new(
        quiet: bool,
        no_color: Option<&str>,
        term: Option<&str>,
        stderr_is_terminal: bool,
    ) -> Self {
        Terminal {
            quiet,
            no_color: no_color.is_some_and(|v| !v.is_empty()),
            dumb: term == Some("dumb"),
            stderr_is_terminal,
        }
    }

    /// Colours only on a terminal and never with `NO_COLOR`: logs captured by CI must stay
    /// free of escape sequences.
    pub fn use_color(&self) -> bool {
        !self.no_color && self.stderr_is_terminal
    }

    /// Whether progress is drawn: stderr is a terminal, `--quiet` is off, `TERM` is not
    /// `dumb`, so redirected output and CI logs never fill up with redraw noise.
    pub fn progress_visible(&self) -> bool {
        !self.quiet && self.stderr_is_terminal && !self.dumb
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_needs_a_terminal_and_no_no_color() {
        assert!(Terminal::new(false, None, None, true).use_color());
        assert!(
            Terminal::new(false, Some(""), None, true).use_color(),
            "empty NO_COLOR is unset"
        );
        assert!(!Terminal::new(false, Some("1"), None, true).use_color());
        assert!(!Terminal::new(false, None, None, false).use_color());
    }

    #[test]
    fn progress_needs_a_terminal_that_is_not_dumb_and_no_quiet() {
        assert!(Terminal::new(false, None, Some("xterm"), true).progress_visible());
        assert!(!Terminal::new(true, None, None, true).progress_visible());
        assert!(!Terminal::new(false, None, Some("dumb"), true).progress_visible());
        assert!(!Terminal::new(false, None, None, false).progress_visible());
        assert!(
            Terminal::new(false, Some("1"), None, true).progress_visible(),
            "NO_COLOR is about colour, not progress"
        );
    }
}
