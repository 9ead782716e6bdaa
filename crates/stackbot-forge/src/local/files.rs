//! The local forge's file discipline, shared by every resource: crash-safe writes, numbered
//! record folders, and the one classification of I/O failures (a refusal a person must fix
//! versus trouble that passes), so that every resource reports a broken forge folder alike.

use std::fs;
use std::path::Path;

use crate::{ForgeError, ForgeResult};

pub(super) fn io_err(what: impl Into<String>, e: impl std::fmt::Display) -> ForgeError {
    ForgeError::Io {
        what: what.into(),
        reason: e.to_string(),
    }
}

/// [`io_err`] for a file-system call: a refusal (permission denied, read-only file system)
/// becomes [`ForgeError::Denied`], which a person must fix, instead of transient I/O trouble.
pub(super) fn fs_err(what: impl Into<String>, e: std::io::Error) -> ForgeError {
    if is_denied(&e) {
        ForgeError::Denied {
            what: what.into(),
            reason: e.to_string(),
        }
    } else {
        io_err(what, e)
    }
}

/// Whether an I/O error is the file system refusing access rather than trouble that passes.
pub fn is_denied(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
    )
}

pub(super) fn git_err(what: impl Into<String>, e: git2::Error) -> ForgeError {
    io_err(what, e.message())
}

/// The program's one crash-safe write ([`stackbot_net::atomic`]): the local forge's records,
/// and the working tree's files, which the binary writes through it.
pub use stackbot_net::atomic::write_atomic;

/// The record at `path`, JSON; [`ForgeError::NotFound`] naming `what` when there is none.
pub(super) fn read_record<T: serde::de::DeserializeOwned>(
    path: &Path,
    what: impl FnOnce() -> String,
) -> ForgeResult<T> {
    let bytes = fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ForgeError::NotFound { what: what() },
        _ => fs_err(path.display().to_string(), e),
    })?;
    serde_json::from_slice(&bytes).map_err(|e| io_err(path.display().to_string(), e))
}

/// Write `record` to `path` as JSON, crash-safely ([`write_atomic`]).
pub(super) fn write_record(path: &Path, record: &impl serde::Serialize) -> ForgeResult<()> {
    let bytes = serde_json::to_vec_pretty(record).expect("records serialize");
    write_atomic(path, &bytes).map_err(|e| fs_err(path.display().to_string(), e))
}

/// The numbers of the `<number><suffix>` entries in `dir` (pulls, issues and comments:
/// `.json` files; releases: folders); none when the folder does not exist yet. Temporary
/// entries of interrupted writes start with a dot and are skipped.
pub(super) fn numbered_records(dir: &Path, suffix: &str) -> ForgeResult<Vec<u64>> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(fs_err(dir.display().to_string(), e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| fs_err(dir.display().to_string(), e))?;
        if let Some(n) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.strip_suffix(suffix))
            .and_then(|s| s.parse::<u64>().ok())
        {
            out.push(n);
        }
    }
    Ok(out)
}
