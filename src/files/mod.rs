//! The working tree's files, read and written here at the edge: the configuration, the lock,
//! template trees and rendered stacks, release directories, GitHub Actions' files. Core parses
//! and prints each of them and touches no file (its `clippy.toml` disallows file I/O there);
//! `lib.rs` re-exports these beside core's modules, under the paths they had
//! (`stackbot::config::load`, `stackbot::lock::load`, `stackbot::render::read_tree`, ...).
//! Upstream snapshots are read and written beside the network they replace
//! (`stackbot_net::upstream::snapshot`).

use std::path::Path;

use stackbot_core::config::{ConfigError, Loaded};
use stackbot_core::lock::{Lock, LockError};

pub mod actions;
pub mod package;
pub mod render;
mod tree;

/// Crash-safe writes: one implementation, the local forge's, whose records are the other
/// files the program writes.
pub use stackbot_forge::local::write_atomic;

/// Read, parse and validate a configuration file. Nothing is fetched or written.
pub fn load_config(path: &Path) -> Result<Loaded, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: path.to_path_buf(),
        line: None,
        message: format!("cannot read the configuration: {e}"),
        hint: "pass the file with `-c FILE` (default `./stackbot.yaml`)".into(),
    })?;
    Loaded::parse(&text, path)
}

/// Read a lock. A missing file is an empty lock (nothing rendered yet).
pub fn load_lock(path: &Path) -> Result<Lock, LockError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Lock::parse(&text, path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Lock::default()),
        Err(source) => Err(LockError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Write the lock atomically (temporary file + rename), so a crash never leaves half a lock.
pub fn save_lock(lock: &Lock, path: &Path) -> Result<(), LockError> {
    write_atomic(path, lock.to_yaml().as_bytes()).map_err(|source| LockError::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_lock_is_empty_and_a_saved_one_reads_back_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(stackbot_core::lock::LOCK_FILE);
        assert_eq!(load_lock(&path).unwrap(), Lock::default());
        let committed = concat!(env!("CARGO_MANIFEST_DIR"), "/stackbot.lock");
        let lock = load_lock(Path::new(committed)).unwrap();
        assert!(
            !lock.release_sets.is_empty(),
            "the repository's lock has sets"
        );
        save_lock(&lock, &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(load_lock(&path).unwrap(), lock);
        save_lock(&load_lock(&path).unwrap(), &path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        let entries = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(entries, 1, "no temporary file is left behind");
    }

    #[test]
    fn an_unreadable_configuration_names_the_file_and_the_flag() {
        let e = load_config(Path::new("/nonexistent/stackbot.yaml")).unwrap_err();
        assert_eq!(e.file, Path::new("/nonexistent/stackbot.yaml"));
        assert!(
            e.message.starts_with("cannot read the configuration"),
            "{e:?}"
        );
        assert!(e.hint.contains("-c FILE"), "{}", e.hint);
    }
}
