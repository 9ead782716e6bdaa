//! Exit codes and the one rule that decides them.
//!
//! Users script around exit codes (`0` nothing to do or done, `1` runtime failure, `2` invalid
//! input, `3` partial tenant failure), so the mapping lives in exactly one place:
//! `stackbot::pipeline::exit`, which the command line and the world simulator both use, from one
//! [`Class`] per error. Library errors say whether they are the user's input.

/// Process exit status, documented in the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Success, or nothing to do.
    Success = 0,
    /// Runtime failure (network, forge, I/O); safe to re-run.
    Failure = 1,
    /// Invalid input (arguments, config, templates, stack trees); nothing was changed.
    Invalid = 2,
    /// Some tenants failed; the others were processed.
    Partial = 3,
}

/// What stopped a command, for the person who reads the error: the one classification that
/// both the exit code ([`Class::exit_status`]) and the hint under the error ([`Class::hint`])
/// follow from. `stackbot::pipeline::exit::class_of_chain` classifies an error chain; library
/// errors say whether they are the user's input (their `is_invalid_input`).
///
/// Ordered by precedence: in a chain of causes the greatest class wins, so context added on
/// the way up never hides an input or a refusal underneath.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// The world's trouble (network, forge, registry, I/O): the next run finishes the job.
    Transient,
    /// Input a human must fix: arguments, configuration, templates, stack trees, a snapshot
    /// file. Nothing was changed.
    Input,
    /// The file system refused access (permission denied, read-only): a person must fix the
    /// path's permissions; re-running alone does not help.
    Denied,
}

impl Class {
    /// The exit code users script around: 2 for input and refusals, 1 for transient trouble.
    pub fn exit_status(self) -> ExitStatus {
        // Transient trouble alone exits 1. A comparison rather than a match, so that the
        // mutation check (`.cargo/mutants.toml`) can invert it: `transient-never-exit-2`.
        if self == Class::Transient {
            ExitStatus::Failure
        } else {
            ExitStatus::Invalid
        }
    }

    /// The hint printed under the error.
    pub fn hint(self) -> &'static str {
        match self {
            Class::Denied => {
                "the file system refused access: make the path named above writable by this \
                 user (or point the configuration at one that is) and re-run; re-running alone \
                 does not help"
            }
            Class::Input => "fix the input named above and re-run; nothing was changed",
            Class::Transient => "this may be transient; re-running is safe and finishes the job",
        }
    }
}

/// Marks an error as caused by the user's input, so it exits with 2. The message must name
/// the file and the field or line, and say what to do.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InvalidInput(pub String);

impl InvalidInput {
    /// Wrap any error's message as invalid input.
    pub fn from_display(e: impl std::fmt::Display) -> Self {
        InvalidInput(e.to_string())
    }
}

/// `a, b, c`, or `none`: the choices there are, for a message that refuses another.
pub fn listed<S: AsRef<str>>(choices: &[S]) -> String {
    let all: Vec<&str> = choices.iter().map(AsRef::as_ref).collect();
    if all.is_empty() {
        "none".to_string()
    } else {
        all.join(", ")
    }
}

/// The candidate closest to `word` when it is close enough to be a typo (`supportd` →
/// `supported`, `stackz` → `stacks`), so a message can say "did you mean …?" instead of
/// listing every allowed value. `None` when nothing is near.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let given = word;
    let word = word.to_lowercase();
    candidates
        .iter()
        .filter(|c| **c != given)
        .map(|c| (edit_distance(&word, &c.to_lowercase()), *c))
        // Distance 0 is the same word in another case (`Acme` for `acme`): the best guess.
        .filter(|(d, c)| *d <= (c.chars().count() / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn a_typo_is_matched_to_the_nearest_candidate_and_a_stranger_to_none() {
        assert_eq!(did_you_mean("supportd", &["supported"]), Some("supported"));
        assert_eq!(
            did_you_mean("stackz", &["upstream", "stacks", "forge"]),
            Some("stacks")
        );
        assert_eq!(did_you_mean("githb", &["local", "github"]), Some("github"));
        assert_eq!(did_you_mean("banana", &["local", "github"]), None);
        assert_eq!(did_you_mean("stacks", &["stacks"]), None, "not a typo");
        assert_eq!(
            did_you_mean("Acme", &["acme", "globex"]),
            Some("acme"),
            "case only"
        );
    }
}
