//! Packaging: turn a csctl stack directory into the release assets csctl and `helm package`
//! would produce, but reproducibly and with the checks csctl leaves to the operator.
//!
//! Everything here except [`read_stack_dir`] and [`write_release`] is pure: a [`FileTree`]
//! goes in, a [`Release`] (file name → bytes) comes out, so the whole pipeline is unit-tested
//! without touching the disk and `render` output can be packaged straight from memory.

use std::path::{Path, PathBuf};

pub mod addon;
pub mod archive;
pub mod chart;
pub mod csctl;
pub mod dirhash;
pub mod helmyaml;
pub mod metadata;
pub mod release;
pub mod template;
pub mod tree;
pub mod validate;
pub mod versions;

pub use dirhash::{ReleaseHashes, hashes};
pub use metadata::{Metadata, VersionSelection, Versions};
pub use release::{Release, SHA256SUMS, package, sha256sums, write_release};
pub use tree::read_stack_dir;

/// Why a stack could not be hashed or packaged. `Invalid` is the user's to fix (exit 2) and
/// always names the file (relative to the stack dir) and usually the field.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl PackageError {
    /// Bad input in `path` (a stack-relative file or the stack dir itself).
    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        PackageError::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }

    /// Bad value of `field` in `file`.
    pub fn field(file: &str, field: &str, message: impl std::fmt::Display) -> Self {
        PackageError::Invalid {
            path: file.to_string(),
            message: format!("field `{field}` {message}"),
        }
    }

    /// An I/O failure on `path`. A missing stack directory is the user's mistake, so it is
    /// reported as invalid input rather than a runtime failure.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        if source.kind() == std::io::ErrorKind::NotFound {
            return PackageError::invalid(
                path.display().to_string(),
                "does not exist: pass an existing stack directory",
            );
        }
        PackageError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Whether the user's input is at fault (exit 2) rather than the environment (exit 1).
    pub fn is_invalid_input(&self) -> bool {
        matches!(self, PackageError::Invalid { .. })
    }
}
