//! Exit codes and the one rule that decides them.
//!
//! Users script around exit codes (`0` nothing to do or done, `1` runtime failure, `2` invalid
//! input, `3` partial tenant failure), so the mapping lives in exactly one place:
//! [`crate::pipeline::exit`], which the command line and the world simulator both use. Library
//! errors say whether they are the user's input.

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
