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

use std::sync::atomic::{AtomicBool, Ordering};

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

static QUIET: AtomicBool = AtomicBool::new(false);
static NO_COLOR: AtomicBool = AtomicBool::new(false);
static DUMB_TERM: AtomicBool = AtomicBool::new(false);
static STDERR_TERMINAL: AtomicBool = AtomicBool::new(false);

/// Remember `--quiet` once at start-up, so progress stays hidden without threading the flag
/// through every signature.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Remember what the environment says about the terminal (`NO_COLOR`, `TERM=dumb`, whether
/// stderr is one), read once at the edge: this module never reads the environment or asks the
/// process itself.
pub fn set_terminal(no_color: Option<&str>, term: Option<&str>, stderr_is_terminal: bool) {
    NO_COLOR.store(no_color.is_some_and(|v| !v.is_empty()), Ordering::Relaxed);
    DUMB_TERM.store(term == Some("dumb"), Ordering::Relaxed);
    STDERR_TERMINAL.store(stderr_is_terminal, Ordering::Relaxed);
}

/// Colours only on a terminal and never with `NO_COLOR` (any non-empty value), see
/// <https://no-color.org>. Logs captured by CI must stay free of escape sequences.
pub fn use_color() -> bool {
    let no_color = NO_COLOR
        .load(Ordering::Relaxed)
        .then_some(std::ffi::OsStr::new("1"));
    color_allowed(no_color, STDERR_TERMINAL.load(Ordering::Relaxed))
}

/// The pure rule behind [`use_color`].
pub fn color_allowed(no_color: Option<&std::ffi::OsStr>, stderr_is_tty: bool) -> bool {
    no_color.is_none_or(|v| v.is_empty()) && stderr_is_tty
}

/// Whether progress is drawn: stderr is a terminal, `--quiet` is off, `TERM` is not `dumb`, so
/// redirected output and CI logs never fill up with redraw noise.
pub fn progress_visible() -> bool {
    !QUIET.load(Ordering::Relaxed)
        && STDERR_TERMINAL.load(Ordering::Relaxed)
        && !DUMB_TERM.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn colour_needs_a_terminal_and_no_no_color() {
        assert!(color_allowed(None, true));
        assert!(
            color_allowed(Some(OsStr::new("")), true),
            "empty NO_COLOR is unset"
        );
        assert!(!color_allowed(Some(OsStr::new("1")), true));
        assert!(!color_allowed(None, false));
    }

    #[test]
    fn quiet_hides_progress_even_on_a_terminal() {
        set_quiet(true);
        let visible = progress_visible();
        set_quiet(false);
        assert!(!visible);
    }
}
