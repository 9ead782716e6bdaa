//! A [`Forge`] wrapper that fails the k-th write, to simulate a crash after any side effect.
//!
//! Resume tests sweep k over every write of a run: with [`FaultMode::Before`] the k-th write
//! never happens (the process died just before it), with [`FaultMode::After`] it happens but
//! the caller sees an error (the process died right after it, or the response was lost),
//! which is the case that creates duplicate drafts on real forges.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Forge, ForgeError, ForgeResult};

/// When the injected failure strikes relative to the write it replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultMode {
    /// The k-th write is not performed.
    Before,
    /// The k-th write is performed, then reported as failed.
    After,
}

/// Fails the k-th write (1-based) and every write after it, like a dead process would.
#[derive(Debug)]
pub struct Faulty<F: Forge> {
    inner: F,
    fail_at: u64,
    mode: FaultMode,
    writes: AtomicU64,
    log: Mutex<Vec<&'static str>>,
}

impl<F: Forge> Faulty<F> {
    /// Fail the `fail_at`-th write (1-based; 0 never fails) and all later ones.
    pub fn new(inner: F, fail_at: u64, mode: FaultMode) -> Self {
        Faulty {
            inner,
            fail_at,
            mode,
            writes: AtomicU64::new(0),
            log: Mutex::new(Vec::new()),
        }
    }

    /// The wrapped forge.
    pub fn inner(&self) -> &F {
        &self.inner
    }

    /// Writes attempted so far (including the failed ones).
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::SeqCst)
    }

    /// Whether the fault has struck.
    pub fn tripped(&self) -> bool {
        self.fail_at != 0 && self.writes() >= self.fail_at
    }

    /// Names of the writes that actually reached the inner forge, in order.
    pub fn performed(&self) -> Vec<&'static str> {
        self.log.lock().expect("log lock").clone()
    }

    fn fault(method: &'static str) -> ForgeError {
        ForgeError::Transient {
            what: method.to_string(),
            reason: "injected failure".into(),
        }
    }

    /// Reads pass through; writes go through the fault schedule.
    fn intercept<T>(
        &self,
        method: &'static str,
        write: bool,
        _key: std::fmt::Arguments<'_>,
        call: impl FnOnce() -> ForgeResult<T>,
    ) -> ForgeResult<T> {
        if write {
            self.write(method, call)
        } else {
            call()
        }
    }

    /// Run one write through the fault schedule.
    fn write<T>(
        &self,
        method: &'static str,
        call: impl FnOnce() -> ForgeResult<T>,
    ) -> ForgeResult<T> {
        let n = self.writes.fetch_add(1, Ordering::SeqCst) + 1;
        let strike = self.fail_at != 0 && n >= self.fail_at;
        if strike && (n > self.fail_at || self.mode == FaultMode::Before) {
            return Err(Self::fault(method));
        }
        let out = call();
        self.log.lock().expect("log lock").push(method);
        if strike {
            return Err(Self::fault(method));
        }
        out
    }
}

crate::forge_wrapper!(Faulty);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RepoRef;
    use crate::counting::Counting;
    use crate::local::LocalForge;

    #[test]
    fn fails_the_kth_write_before_or_after_performing_it() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = RepoRef::parse("o/r").unwrap();
        for (mode, performed) in [(FaultMode::Before, 1), (FaultMode::After, 2)] {
            let dir = tmp.path().join(format!("{mode:?}"));
            let f = Faulty::new(Counting::new(LocalForge::new(&dir, "b", "b@x")), 2, mode);
            let d = f.create_draft_release(&repo, "t", "t", "").unwrap();
            assert!(f.upload_asset(&repo, d.id, "a", b"1").is_err());
            assert!(
                f.upload_asset(&repo, d.id, "b", b"2").is_err(),
                "stays dead"
            );
            assert!(f.tripped());
            assert_eq!(f.performed().len(), performed);
            assert_eq!(f.inner().writes(), performed as u64);
            // Reads still work: the next run observes what really happened.
            let rel = &f.list_releases(&repo).unwrap()[0];
            assert_eq!(rel.assets.len(), performed - 1);
            assert_eq!(f.inner().reads(), 1);
            assert_eq!(
                f.inner()
                    .by_method()
                    .get("upload_asset")
                    .copied()
                    .unwrap_or(0),
                performed as u64 - 1
            );
        }
    }
}
