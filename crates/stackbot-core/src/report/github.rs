//! GitHub Actions workflow commands and environment files.
//!
//! Inside a workflow, an error printed as `::error file=stackbot.yaml,line=12::…` becomes an
//! annotation on that line of the PR's diff, and values written to `$GITHUB_OUTPUT` become
//! step outputs later steps can use (released tags, PR URLs). The escaping rules are GitHub's
//! (`%`, CR, LF in data; additionally `:` and `,` in properties); getting them wrong silently
//! truncates the message or drops the annotation.
//! Commands go to stderr, which the runner reads like stdout, so `--format json` on stdout
//! stays machine-readable.

use std::fmt;
use std::path::{Path, PathBuf};

use super::markdown::{SUMMARY_LIMIT, truncate_str};
use crate::config::ConfigError;

/// Escape the message part of a workflow command.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escape a property value (`file=`, `title=`) of a workflow command.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Annotation severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
}

impl Level {
    fn command(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
        }
    }
}

/// One annotation; its `Display` is the workflow command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    pub level: Level,
    /// Path relative to the repository root, so GitHub can attach it to the diff.
    pub file: Option<String>,
    pub line: Option<usize>,
    pub title: Option<String>,
    pub message: String,
}

impl fmt::Display for Annotation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut props = Vec::new();
        if let Some(file) = &self.file {
            props.push(format!("file={}", escape_property(file)));
        }
        if let Some(line) = self.line {
            props.push(format!("line={line}"));
        }
        if let Some(title) = &self.title {
            props.push(format!("title={}", escape_property(title)));
        }
        write!(f, "::{}", self.level.command())?;
        if !props.is_empty() {
            write!(f, " {}", props.join(","))?;
        }
        write!(f, "::{}", escape_data(&self.message))
    }
}

/// A place in a file an error is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: PathBuf,
    pub line: Option<usize>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}", self.file.display()),
            None => write!(f, "{}", self.file.display()),
        }
    }
}

/// Find the file and line an error is about, anywhere in its chain. Knows
/// [`ConfigError`] and [`Location`] (attach one with `.context(Location { .. })` to any error
/// that points into a file: a template, a tenant file); add other located error types here.
pub fn locate(err: &anyhow::Error) -> Option<Location> {
    if let Some(l) = err.downcast_ref::<Location>() {
        return Some(l.clone());
    }
    err.chain().find_map(|cause| {
        cause.downcast_ref::<ConfigError>().map(|c| Location {
            file: c.file.clone(),
            line: c.line,
        })
    })
}

/// Make `path` relative to the workspace when it lies inside it (GitHub only attaches
/// annotations to repository-relative paths) and normalise separators.
pub fn workspace_relative(path: &Path, workspace: Option<&Path>) -> String {
    let rel = workspace
        .and_then(|ws| path.strip_prefix(ws).ok())
        .unwrap_or(path);
    let s = rel.to_string_lossy().replace('\\', "/");
    s.strip_prefix("./").map(str::to_string).unwrap_or(s)
}

/// The `::error` annotation for a failed command: located when the error knows its file.
pub fn error_annotation(err: &anyhow::Error, workspace: Option<&Path>) -> Annotation {
    let mut message = err.to_string();
    for cause in err.chain().skip(1) {
        message.push_str(&format!("\n  caused by: {cause}"));
    }
    let loc = locate(err);
    Annotation {
        level: Level::Error,
        file: loc.as_ref().map(|l| workspace_relative(&l.file, workspace)),
        line: loc.and_then(|l| l.line),
        title: Some("stackbot".into()),
        message,
    }
}

/// The GitHub Actions context of this process, read once from the environment at the CLI
/// edge; library code receives it as a value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Actions {
    /// `GITHUB_ACTIONS=true`.
    pub enabled: bool,
    /// `GITHUB_STEP_SUMMARY`: Markdown appended here is shown on the run page.
    pub step_summary: Option<PathBuf>,
    /// `GITHUB_OUTPUT`: `key=value` step outputs.
    pub output: Option<PathBuf>,
    /// `GITHUB_WORKSPACE`: annotations use paths relative to it.
    pub workspace: Option<PathBuf>,
    /// Link to this workflow run (`$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID`).
    pub run_url: Option<String>,
}

impl Actions {
    /// Read the context through `get`: the CLI passes its [`crate::env::Env`], tests a map.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Self {
        let enabled = get("GITHUB_ACTIONS").is_some_and(|v| v == "true");
        let path = |k: &str| get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let run_url = match (
            get("GITHUB_SERVER_URL"),
            get("GITHUB_REPOSITORY"),
            get("GITHUB_RUN_ID"),
        ) {
            (Some(s), Some(r), Some(id)) if !s.is_empty() && !r.is_empty() && !id.is_empty() => {
                Some(format!("{s}/{r}/actions/runs/{id}"))
            }
            _ => None,
        };
        Actions {
            enabled,
            step_summary: path("GITHUB_STEP_SUMMARY"),
            output: path("GITHUB_OUTPUT"),
            workspace: path("GITHUB_WORKSPACE"),
            run_url,
        }
    }
}

/// What appending `markdown` to a job summary already `used` bytes long adds: all of it (ending
/// in a newline), or as much as GitHub's 1 MiB limit leaves room for, cut with a note; nothing
/// once the summary is full. The edge appends it (`stackbot::report::github::ActionsFiles`).
pub fn summary_addition(markdown: &str, used: usize) -> String {
    let room = SUMMARY_LIMIT.saturating_sub(used);
    let note = "\n\n_(summary truncated at GitHub's 1 MiB limit)_\n";
    if markdown.len() < room {
        let mut text = markdown.to_string();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text
    } else if room > note.len() {
        format!("{}{note}", truncate_str(markdown, room - note.len()))
    } else {
        String::new()
    }
}

/// A step output's name the runner reads back as written: not empty, no `=`, no line break, no
/// `<<` (the heredoc form's marker).
pub fn check_output_name(key: &str) -> Result<(), String> {
    if key.is_empty() || key.contains(['=', '\n', '\r']) || key.contains("<<") {
        return Err(format!("invalid step output name `{key}`"));
    }
    Ok(())
}

/// The `$GITHUB_OUTPUT` text for one output.
pub fn output_entry(key: &str, value: &str) -> String {
    if !value.contains(['\n', '\r']) {
        return format!("{key}={value}\n");
    }
    let delimiter = loop {
        let d = format!("ghadelimiter_{:016x}", fastrand::u64(..));
        if !value.contains(&d) {
            break d;
        }
    };
    let mut v = value.to_string();
    if !v.ends_with('\n') {
        v.push('\n');
    }
    format!("{key}<<{delimiter}\n{v}{delimiter}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn properties_and_data_are_escaped_as_github_requires() {
        let a = Annotation {
            level: Level::Error,
            file: Some("dir,a/b:c%.yaml".into()),
            line: Some(12),
            title: Some("x: y".into()),
            message: "100% broken\r\nsecond: line, yes".into(),
        };
        assert_eq!(
            a.to_string(),
            "::error file=dir%2Ca/b%3Ac%25.yaml,line=12,title=x%3A y::100%25 broken%0D%0Asecond: line, yes"
        );
        let bare = Annotation {
            level: Level::Warning,
            file: None,
            line: None,
            title: None,
            message: "m".into(),
        };
        assert_eq!(bare.to_string(), "::warning::m");
    }

    #[test]
    fn config_errors_become_located_annotations() {
        let dir = Path::new("/checkout");
        let path = dir.join("stackbot.yaml");
        let refused = crate::config::Loaded::parse("stacks: []\nbogus_key: 1\n", &path);
        let err = anyhow::Error::new(refused.unwrap_err()).context("loading the configuration");
        let a = error_annotation(&err, Some(dir));
        assert_eq!(a.level, Level::Error);
        assert_eq!(a.file.as_deref(), Some("stackbot.yaml"));
        assert!(a.line.is_some(), "the parser knows the line: {a}");
        let line = a.to_string();
        assert!(
            line.starts_with("::error file=stackbot.yaml,line="),
            "{line}"
        );
        assert!(line.contains("loading the configuration%0A  caused by: "));
        assert!(!line.contains('\n'));
    }

    #[test]
    fn location_context_is_found_in_the_chain() {
        let err = anyhow::anyhow!("undefined variable `foo`")
            .context(Location {
                file: "templates/openstack/scs2/csctl.yaml.tera".into(),
                line: Some(7),
            })
            .context("rendering openstack/scs2 1.34");
        let a = error_annotation(&err, None);
        assert_eq!(
            a.file.as_deref(),
            Some("templates/openstack/scs2/csctl.yaml.tera")
        );
        assert_eq!(a.line, Some(7));
        let unlocated = error_annotation(&anyhow::anyhow!("network down"), None);
        assert_eq!(
            unlocated.to_string(),
            "::error title=stackbot::network down"
        );
    }

    #[test]
    fn context_is_read_from_the_environment_only_when_enabled() {
        let a = Actions::from_lookup(env(&[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", "/tmp/s"),
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_REPOSITORY", "scs/cluster-stacks"),
            ("GITHUB_RUN_ID", "42"),
        ]));
        assert!(a.enabled);
        assert_eq!(a.step_summary, Some(PathBuf::from("/tmp/s")));
        assert_eq!(a.output, None);
        assert_eq!(
            a.run_url.as_deref(),
            Some("https://github.com/scs/cluster-stacks/actions/runs/42")
        );
        assert!(!Actions::from_lookup(env(&[("GITHUB_ACTIONS", "false")])).enabled);
    }

    #[test]
    fn a_summary_addition_never_grows_the_summary_past_the_limit() {
        assert_eq!(summary_addition("## one", 0), "## one\n");
        assert_eq!(summary_addition("## two\n", 7), "## two\n");
        let used = SUMMARY_LIMIT - 100;
        let cut = summary_addition(&"y".repeat(10_000), used);
        assert!(used + cut.len() <= SUMMARY_LIMIT, "{}", cut.len());
        assert!(cut.contains("truncated"), "{cut}");
        assert_eq!(
            summary_addition("x", SUMMARY_LIMIT - 10),
            "x\n",
            "what fits is added"
        );
        assert_eq!(
            summary_addition("x", SUMMARY_LIMIT),
            "",
            "a full summary gets nothing"
        );
    }

    #[test]
    fn an_output_name_the_runner_would_misread_is_refused() {
        for bad in ["", "bad=key", "a\nb", "a<<b"] {
            assert!(check_output_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_output_name("released").is_ok());
    }

    #[test]
    fn workspace_paths_become_relative() {
        assert_eq!(
            workspace_relative(
                Path::new("/ws/repo/stackbot.yaml"),
                Some(Path::new("/ws/repo"))
            ),
            "stackbot.yaml"
        );
        assert_eq!(
            workspace_relative(Path::new("./stackbot.yaml"), None),
            "stackbot.yaml"
        );
    }
}
