//! Locks of the local forge: the forge-wide run lock that serialises `release` runs, and the
//! per-repository lock that makes ref, release and pull updates atomic across processes.
//! Both are OS file locks, so a process that dies never leaves a stale lock behind.

use std::fs::{self, File};
use std::path::Path;

use super::LocalForge;
use super::files::fs_err;
use crate::{ForgeResult, RepoRef};

/// Held while a `release` run works on the forge; dropping it releases the lock.
///
/// This is the local forge's concurrency guard: two `stackbot release` processes on the same
/// forge folder are serialised, so the second one observes the first one's result and finds
/// nothing left to do. (On GitHub, where no such lock exists, `apply` relies on unique tags,
/// compare-and-swap branch updates and a canonical draft per tag instead.)
#[derive(Debug)]
pub struct RunLock {
    _lock: FileLock,
}

/// An exclusive OS lock on a file, released on drop (and by the OS if the process dies).
#[derive(Debug)]
pub(super) struct FileLock(File);

impl FileLock {
    /// The lock file at `path`, created (with its folder) when missing.
    fn open(path: &Path) -> ForgeResult<File> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(|e| fs_err(path.display().to_string(), e))?;
        }
        fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| fs_err(path.display().to_string(), e))
    }

    pub(super) fn acquire(path: &Path) -> ForgeResult<FileLock> {
        let f = Self::open(path)?;
        f.lock()
            .map_err(|e| fs_err(format!("lock {}", path.display()), e))?;
        Ok(FileLock(f))
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

impl LocalForge {
    /// Take the forge-wide run lock, waiting for another run to finish. Hold the guard for the
    /// whole observe → plan → apply sequence.
    pub fn lock_run(&self) -> ForgeResult<RunLock> {
        let path = self.root.join("run.lock");
        Ok(RunLock {
            _lock: FileLock::acquire(&path)?,
        })
    }

    /// Try to take the run lock without waiting; `None` if another run holds it.
    pub fn try_lock_run(&self) -> ForgeResult<Option<RunLock>> {
        let path = self.root.join("run.lock");
        let f = FileLock::open(&path)?;
        match f.try_lock() {
            Ok(()) => Ok(Some(RunLock { _lock: FileLock(f) })),
            Err(fs::TryLockError::WouldBlock) => Ok(None),
            Err(fs::TryLockError::Error(e)) => Err(fs_err(path.display().to_string(), e)),
        }
    }

    pub(super) fn repo_lock(&self, repo: &RepoRef) -> ForgeResult<FileLock> {
        FileLock::acquire(
            &self
                .root
                .join("repos")
                .join(&repo.owner)
                .join(format!("{}.lock", repo.name)),
        )
    }
}
