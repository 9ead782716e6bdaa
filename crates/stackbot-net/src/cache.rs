//! The one store of answers for conditional requests (issue 31, item 2), used by the GitHub
//! forge's cache and upstream's ETag cache alike: an entry per request key (its `ETag`, its
//! `Link`, its body, when it was last confirmed), one JSON file per key on disk
//! (`sha256(key).json`, written to a temporary file and renamed, so a crash never leaves half
//! an entry), and optionally a copy in memory for the run.
//!
//! What a key is and when an entry is used stay with each client: GitHub keys by credential
//! identity, `Accept` and path, and serves immutable resources without asking (docs/http.md,
//! R4); upstream keys by URL and always revalidates. The store only keeps answers.
//!
//! Hand-written, not http-cache-reqwest: its `CacheMode::Default` serves a fresh entry
//! unrevalidated for GitHub's `max-age=60` (a ref read back after the bot's own write would be
//! a minute old), it counts a `304` and a fresh hit alike (R4's accounting), and the GitHub
//! forge's requests go through octocrab's stack, which a reqwest middleware never sees.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One stored answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    /// The request key, to detect hash collisions (`url` in upstream's older entries).
    #[serde(alias = "url")]
    pub key: String,
    /// `None` for an answer that is never revalidated (an immutable resource).
    #[serde(default)]
    pub etag: Option<String>,
    /// The `Link` header, so a revalidated first page still leads to the next one.
    #[serde(default)]
    pub link: Option<String>,
    /// The body as text (a client with binary bodies stores them base64-encoded).
    pub body: String,
    /// When this body was last read or revalidated: how old the last known facts are when the
    /// source later fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetched_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// Entries on disk under `dir` (created on first write), and in memory when `memory` is on.
/// Failures to read or write the disk copy are misses: the store only saves requests, it is
/// never needed for correctness.
#[derive(Debug)]
pub struct Store {
    dir: Option<PathBuf>,
    mem: Option<Mutex<HashMap<String, Entry>>>,
}

impl Store {
    /// A store persisted under `dir` (none: in memory only, if `memory`); `memory` keeps every
    /// entry read or written for the life of the store (off where bodies are large and read
    /// once, as upstream's Helm indexes).
    pub fn new(dir: Option<PathBuf>, memory: bool) -> Self {
        Store {
            dir,
            mem: memory.then(|| Mutex::new(HashMap::new())),
        }
    }

    fn file(&self, key: &str) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        let name = hex::encode(Sha256::digest(key.as_bytes()));
        Some(dir.join(format!("{name}.json")))
    }

    fn memory(&self) -> Option<std::sync::MutexGuard<'_, HashMap<String, Entry>>> {
        let mem = self.mem.as_ref()?;
        Some(mem.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The stored answer for `key`, from memory or disk.
    pub fn get(&self, key: &str) -> Option<Entry> {
        if let Some(e) = self.memory().and_then(|m| m.get(key).cloned()) {
            return Some(e);
        }
        let e: Entry = serde_json::from_slice(&std::fs::read(self.file(key)?).ok()?).ok()?;
        if e.key != key {
            return None;
        }
        if let Some(mut m) = self.memory() {
            m.insert(key.to_string(), e.clone());
        }
        Some(e)
    }

    /// Store an answer, streamed to its file (a large body is not copied again in memory).
    pub fn put(&self, e: &Entry) {
        if let Some(path) = self.file(&e.key) {
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            // A name of its own per writer: two threads storing one key do not interleave.
            let tmp = path.with_extension(format!("tmp{}", fastrand::u32(..)));
            let written = std::fs::File::create(&tmp).ok().is_some_and(|f| {
                let mut w = std::io::BufWriter::new(f);
                serde_json::to_writer(&mut w, e).is_ok() && w.flush().is_ok()
            });
            if !written || std::fs::rename(&tmp, &path).is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
        }
        if let Some(mut m) = self.memory() {
            m.insert(e.key.clone(), e.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str, etag: Option<&str>, body: &str) -> Entry {
        Entry {
            key: key.into(),
            etag: etag.map(str::to_string),
            link: Some("<x>; rel=\"next\"".into()),
            body: body.to_string(),
            fetched_at: None,
        }
    }

    #[test]
    fn entries_survive_a_new_store_and_are_found_by_their_key_only() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::new(Some(dir.path().to_path_buf()), true);
        s.put(&entry("a", Some("W/\"1\""), "[1]"));
        let again = Store::new(Some(dir.path().to_path_buf()), false);
        let e = again.get("a").unwrap();
        assert_eq!(
            (e.etag.as_deref(), e.body.as_str()),
            (Some("W/\"1\""), "[1]")
        );
        assert_eq!(e.link.as_deref(), Some("<x>; rel=\"next\""));
        assert!(again.get("b").is_none());
        let mem = Store::new(None, true);
        mem.put(&entry("k", None, "text"));
        assert_eq!(mem.get("k").unwrap().body, "text");
        let neither = Store::new(None, false);
        neither.put(&entry("k", None, "text"));
        assert!(
            neither.get("k").is_none(),
            "no directory, no memory: nothing kept"
        );
    }

    #[test]
    fn upstream_s_earlier_entries_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::new(Some(dir.path().to_path_buf()), false);
        let url = "https://dl.k8s.io/release/stable-1.34.txt";
        let old = r#"{"url":"https://dl.k8s.io/release/stable-1.34.txt","etag":"\"e\"","link":null,"body":"v1.34.7\n","fetched_at":"2026-05-01T12:00:00Z"}"#;
        std::fs::write(s.file(url).unwrap(), old).unwrap();
        let e = s.get(url).unwrap();
        assert_eq!(
            (e.etag.as_deref(), e.body.as_str()),
            (Some("\"e\""), "v1.34.7\n")
        );
        assert!(e.fetched_at.is_some());
    }
}
