//! A [`Forge`] wrapper that counts requests, so tests and benchmarks can assert API cost
//! (a no-op run must make zero writes) without depending on a particular forge.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Forge, ForgeResult};

/// Counts every call to the wrapped forge, split into reads and writes, plus a per-method tally.
///
/// `ensure_repo` counts as a read: on GitHub it only checks, and on the local forge it writes
/// only the first time a repository is used.
#[derive(Debug)]
pub struct Counting<F: Forge> {
    inner: F,
    reads: AtomicU64,
    writes: AtomicU64,
    by_method: Mutex<BTreeMap<&'static str, u64>>,
}

impl<F: Forge> Counting<F> {
    /// Wrap a forge with all counters at zero.
    pub fn new(inner: F) -> Self {
        Counting {
            inner,
            reads: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            by_method: Mutex::new(BTreeMap::new()),
        }
    }

    /// The wrapped forge.
    pub fn inner(&self) -> &F {
        &self.inner
    }

    /// Read requests so far.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::SeqCst)
    }

    /// Write requests so far.
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::SeqCst)
    }

    /// All requests so far.
    pub fn total(&self) -> u64 {
        self.reads() + self.writes()
    }

    /// Calls per method name.
    pub fn by_method(&self) -> BTreeMap<&'static str, u64> {
        self.by_method.lock().expect("counter lock").clone()
    }

    /// Reset every counter to zero.
    pub fn reset(&self) {
        self.reads.store(0, Ordering::SeqCst);
        self.writes.store(0, Ordering::SeqCst);
        self.by_method.lock().expect("counter lock").clear();
    }

    /// Count one call, then make it.
    fn intercept<T>(
        &self,
        method: &'static str,
        write: bool,
        _key: std::fmt::Arguments<'_>,
        call: impl FnOnce() -> ForgeResult<T>,
    ) -> ForgeResult<T> {
        self.note(method, write);
        call()
    }

    fn note(&self, method: &'static str, write: bool) {
        if write {
            self.writes.fetch_add(1, Ordering::SeqCst);
        } else {
            self.reads.fetch_add(1, Ordering::SeqCst);
        }
        *self
            .by_method
            .lock()
            .expect("counter lock")
            .entry(method)
            .or_default() += 1;
    }
}

crate::forge_wrapper!(Counting);
