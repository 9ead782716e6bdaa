//! Something a run does not release (or could not finish), and why, as types: the subject and
//! the reason are enums, `Display` writes the prose, and nothing parses the prose back (a
//! `--stack openstack/scs` selection compares stacks, it no longer keeps every line starting
//! with `openstack/scs`, which included `openstack/scs2`'s).
//!
//! The JSON form is unchanged: `what` and `reason` are the strings `Display` writes.

use std::fmt;

use serde::{Serialize, Serializer};

use crate::model::{Minor, StackId, series_prefix};

/// What a skipped or failed line is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// A stack × minor, written `openstack/scs2 1.34`.
    StackMinor { stack: StackId, minor: Minor },
    /// A series by its tag prefix, written `openstack-scs2-1-34`.
    Series { stack: StackId, minor: Minor },
    /// One release, by its tag (`openstack-scs2-1-34-v2`).
    Tag {
        stack: StackId,
        minor: Minor,
        tag: String,
    },
    /// The release stage of a run, written `release`.
    ReleaseStage,
    /// The SCS 0210 verdicts of a run, written `SCS 0210 verdicts`.
    Verdicts,
    /// Something known only by its name (a tag that is not a release name).
    Named(String),
}

impl Subject {
    /// The stack × minor the line is about, if it is about one.
    pub fn stack_minor(&self) -> Option<(&StackId, Minor)> {
        match self {
            Subject::StackMinor { stack, minor }
            | Subject::Series { stack, minor }
            | Subject::Tag { stack, minor, .. } => Some((stack, *minor)),
            Subject::ReleaseStage | Subject::Verdicts | Subject::Named(_) => None,
        }
    }

    /// A release by its tag: its stack and minor read from the tag (a tag that is not a
    /// release name, which the planner never makes, is [`Subject::Named`]).
    pub fn tag(tag: &str) -> Subject {
        match crate::model::ReleaseName::parse(tag) {
            Ok(name) => Subject::Tag {
                stack: name.stack,
                minor: name.minor,
                tag: tag.to_string(),
            },
            Err(_) => Subject::Named(tag.to_string()),
        }
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::StackMinor { stack, minor } => write!(f, "{stack} {minor}"),
            Subject::Series { stack, minor } => f.write_str(&series_prefix(stack, *minor)),
            Subject::Tag { tag, .. } => f.write_str(tag),
            Subject::ReleaseStage => f.write_str("release"),
            Subject::Verdicts => f.write_str("SCS 0210 verdicts"),
            Subject::Named(name) => f.write_str(name),
        }
    }
}

/// Why it is not released (or not finished).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// The rendered stack equals its latest release: up to date.
    Unchanged { tag: String },
    /// Upstream has no complete release set for it; what is missing or failing.
    NoCompleteSet { why: Vec<String> },
    /// Upstream errors keep it below its newest patch (transient).
    UpstreamErrors { errors: Vec<String> },
    /// Its content was withdrawn (the release deleted): not published again.
    Withdrawn { tag: String },
    /// The release pull request for this content was closed without merging.
    Declined { number: u64 },
    /// Pull-request mode: the release waits for its pull request (`open`: opened already).
    ReleasePullRequest { open: bool },
    /// It cannot be rendered without a fact upstream did not provide this time.
    CannotRender { what: String, error: String },
    /// An earlier release of the run failed and this one's commit builds on it.
    NotAttempted,
    /// The release stage failed before any write; the tenants were still served.
    StageFailed { error: String },
    /// The verdicts are unknown where they depend on these sources.
    VerdictsUnknown { sources: Vec<String> },
    /// The conformance gate holds it: where its candidate stands (published, in test, failed,
    /// given up), in the gate's words ([`crate::gate`]).
    InGate(String),
    /// A reason the forge or the release branch gave, in its own words.
    Said(String),
}

impl Reason {
    /// Nothing changed since the latest release (the series is up to date as rendered).
    pub fn is_unchanged(&self) -> bool {
        matches!(self, Reason::Unchanged { .. })
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Unchanged { tag } => write!(f, "unchanged since {tag} (same clusterStack hash)"),
            Reason::NoCompleteSet { why } if why.is_empty() => f.write_str("no complete release set"),
            Reason::NoCompleteSet { why } => {
                write!(f, "no complete release set: {}", why.join("; "))
            }
            Reason::UpstreamErrors { errors } => write!(
                f,
                "upstream errors keep it below its newest patch: {} (the other series went on; the next run reads again)",
                errors.join("; ")
            ),
            Reason::Withdrawn { tag } => write!(
                f,
                "{tag} was withdrawn (its release was deleted) and the rendered stack is what it shipped: not published again (its number is never reused); to publish this content anyway under a new number: `stackbot release --republish {tag}`"
            ),
            Reason::Declined { number } => write!(
                f,
                "release pull request #{number} for this content was closed without merging: not opened again (a new content opens a new pull request; reopen #{number} to release this one)"
            ),
            Reason::ReleasePullRequest { open: true } => {
                f.write_str("waiting for the release pull request to be merged")
            }
            Reason::ReleasePullRequest { open: false } => {
                f.write_str("release pull request to be opened; published after it is merged")
            }
            Reason::CannotRender { what, error } => write!(
                f,
                "cannot render without {what}, which upstream did not provide this time ({error}); the next run retries"
            ),
            Reason::NotAttempted => f.write_str(
                "not attempted: an earlier release of this run failed and this one's commit builds on it; the next run makes it",
            ),
            Reason::StageFailed { error } => {
                write!(f, "{error} (the tenants were still served; the next run retries)")
            }
            Reason::VerdictsUnknown { sources } => write!(
                f,
                "unknown where they depend on {} (the releases went on; the next run reads again)",
                sources.join("; ")
            ),
            Reason::InGate(s) | Reason::Said(s) => f.write_str(s),
        }
    }
}

fn as_display<S: Serializer>(v: &impl fmt::Display, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// Something that will not be released, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    #[serde(serialize_with = "as_display")]
    pub what: Subject,
    #[serde(serialize_with = "as_display")]
    pub reason: Reason,
}

impl Skipped {
    /// A line about a stack × minor (`openstack/scs2 1.34`).
    pub fn stack_minor(stack: &StackId, minor: Minor, reason: Reason) -> Skipped {
        let what = Subject::StackMinor {
            stack: stack.clone(),
            minor,
        };
        Skipped { what, reason }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack(s: &str) -> StackId {
        s.parse().unwrap()
    }

    #[test]
    fn the_prose_and_the_json_are_what_display_writes() {
        let k = Skipped {
            what: Subject::StackMinor {
                stack: stack("openstack/scs2"),
                minor: "1.35".parse().unwrap(),
            },
            reason: Reason::NoCompleteSet {
                why: vec!["node image x".into()],
            },
        };
        assert_eq!(k.what.to_string(), "openstack/scs2 1.35");
        assert_eq!(
            k.reason.to_string(),
            "no complete release set: node image x"
        );
        assert_eq!(
            serde_json::to_value(&k).unwrap(),
            serde_json::json!({"what": "openstack/scs2 1.35", "reason": "no complete release set: node image x"})
        );
        let series = Subject::Series {
            stack: stack("openstack/scs2"),
            minor: "1.33".parse().unwrap(),
        };
        assert_eq!(series.to_string(), "openstack-scs2-1-33");
    }

    #[test]
    fn a_subject_names_its_stack_not_a_prefix_of_it() {
        let scs2 = Subject::tag("openstack-scs2-1-34-v2");
        let (s, m) = scs2.stack_minor().unwrap();
        assert_eq!(
            (s.to_string(), m.to_string()),
            ("openstack/scs2".into(), "1.34".into())
        );
        assert_ne!(s, &stack("openstack/scs"), "openstack/scs is another stack");
        assert_eq!(Subject::Verdicts.stack_minor(), None);
    }
}
