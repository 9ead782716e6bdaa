//! The byte-level mechanics of packaging, with csctl and `helm package` parity: csctl's
//! dirhash, the port of Helm's chart packaging (`chart`, `helmyaml`), the cluster-addon chart,
//! deterministic tar/gzip archives and the paths a [`FileTree`] may hold.
//!
//! A crate of its own because these are ports of other tools' byte formats, tested for byte
//! equality against them, and know nothing of stackbot's model: the release-packaging logic
//! that needs the model (metadata, version numbering, the release assets) is
//! `stackbot_core::package`, which re-exports everything here under the same paths.
//!
//! Everything here is pure: a [`FileTree`] goes in, bytes come out, so packaging is unit-tested
//! without touching the disk and `render` output can be packaged straight from memory (the
//! binary reads a stack directory into a tree: `stackbot::package::read_stack_dir`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub mod addon;
pub mod archive;
pub mod chart;
pub mod chartlock;
pub mod dirhash;
pub mod helmyaml;
pub mod tree;
pub mod validate;

pub use dirhash::{ReleaseHashes, hashes};

/// An in-memory stack or release tree: `/`-separated relative path → bytes. A `BTreeMap` of
/// `String` iterates in byte order, which is the order csctl's dirhash (Go `sort.Strings`)
/// needs, so pure stages can pass trees around without touching the disk. Defined here, at the
/// bottom of the crate graph, because the byte-level packaging reads and writes it; the model
/// re-exports it (`stackbot_core::model::FileTree`).
pub type FileTree = BTreeMap<String, Vec<u8>>;

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
