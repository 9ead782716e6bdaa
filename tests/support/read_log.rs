//! A forge that logs every call with what it asked for (method and arguments), so a test can
//! say "no run reads the same thing twice" of each fact, not only of each method: which commit's
//! file list, which file at which commit, which tag, which asset. [`Counting`] counts per
//! method; this one tells two reads of the same file from reads of two files.
//!
//! A repeated read is one whose key was read before with no write of the run in between
//! ([`ReadLog::repeated`]): after a write, reading again is how a writer checks what it did
//! (and a branch head or a listing may have changed). Reads of content a commit id names
//! (`list_files`, `read_file`) can never change, so [`ReadLog::reread_content`] counts them
//! over the whole run, writes or not.
//!
//! [`Counting`]: stackbot::forge::counting::Counting

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use stackbot::forge::ForgeResult;

/// One call: the method, whether it writes, and (for a read) what it asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub method: &'static str,
    pub write: bool,
    /// `repo` and the arguments that name the thing read (empty for a write).
    pub key: String,
}

/// A forge that logs each call before passing it on.
pub struct ReadLog<F> {
    inner: F,
    log: Mutex<Vec<Call>>,
}

impl<F> ReadLog<F> {
    pub fn new(inner: F) -> Self {
        ReadLog {
            inner,
            log: Mutex::new(Vec::new()),
        }
    }

    /// Log one call, then make it.
    fn intercept<T>(
        &self,
        method: &'static str,
        write: bool,
        key: std::fmt::Arguments<'_>,
        call: impl FnOnce() -> ForgeResult<T>,
    ) -> ForgeResult<T> {
        let key = key.to_string();
        self.log
            .lock()
            .expect("log")
            .push(Call { method, write, key });
        call()
    }

    /// The wrapped forge (to look at it without a log entry).
    pub fn inner(&self) -> &F {
        &self.inner
    }

    /// Every call so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.log.lock().expect("log").clone()
    }

    /// Forget the calls so far.
    pub fn clear(&self) {
        self.log.lock().expect("log").clear();
    }

    /// Calls that change the forge.
    pub fn writes(&self) -> usize {
        self.calls().iter().filter(|c| c.write).count()
    }

    /// The reads that asked again for what the run had read since its last write
    /// (`method key` → how many times more).
    pub fn repeated(&self) -> BTreeMap<String, usize> {
        let mut seen = BTreeSet::new();
        let mut out = BTreeMap::new();
        for c in self.calls() {
            if c.write {
                seen.clear();
                continue;
            }
            let k = format!("{} {}", c.method, c.key);
            if !seen.insert(k.clone()) {
                *out.entry(k).or_default() += 1;
            }
        }
        out
    }

    /// The reads of a commit's file list or of a file at a commit made more than once in the
    /// whole run (`method key` → reads): what a commit holds never changes.
    pub fn reread_content(&self) -> BTreeMap<String, usize> {
        let mut n: BTreeMap<String, usize> = BTreeMap::new();
        for c in self.calls() {
            if matches!(c.method, "list_files" | "read_file") {
                *n.entry(format!("{} {}", c.method, c.key)).or_default() += 1;
            }
        }
        n.retain(|_, v| *v > 1);
        n
    }

    /// How many times `method` was called with `key`.
    pub fn reads_of(&self, method: &str, key: &str) -> usize {
        self.calls()
            .iter()
            .filter(|c| c.method == method && c.key == key)
            .count()
    }
}

stackbot::forge::forge_wrapper!(ReadLog);
