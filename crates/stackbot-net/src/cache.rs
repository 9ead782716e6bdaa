//! The one store of answers for conditional requests (issue 31, item 2), used by the GitHub
//! forge's cache and upstream's ETag cache alike: an entry per request key (its `ETag`, its
//! `Link`, its body, when it was last confirmed), one JSON file per key on disk
//! (`sha256(key).json`, replaced whole: [`crate::atomic::replace_with`]), and optionally a
//! copy in memory for the run. A `304` that confirms an entry is kept beside it (`sha256(key).at`,
//! when it was confirmed), so a revalidated body of megabytes (a Helm index) is not written
//! again every run to move one date.
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

    fn confirmed_file(&self, key: &str) -> Option<PathBuf> {
        Some(self.file(key)?.with_extension("at"))
    }

    /// The stored answer for `key`, from memory or disk, as of its last confirmation.
    pub fn get(&self, key: &str) -> Option<Entry> {
        if let Some(e) = self.memory().and_then(|m| m.get(key).cloned()) {
            return Some(e);
        }
        let mut e: Entry = serde_json::from_slice(&std::fs::read(self.file(key)?).ok()?).ok()?;
        if e.key != key {
            return None;
        }
        let confirmed = self
            .confirmed_file(key)
            .and_then(|f| std::fs::read_to_string(f).ok())
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t.trim()).ok())
            .map(|t| t.with_timezone(&chrono::Utc));
        // The later of the two: a crash between a new body and the removal of an older
        // confirmation must not make the facts look older than they are.
        e.fetched_at = e.fetched_at.max(confirmed);
        if let Some(mut m) = self.memory() {
            m.insert(key.to_string(), e.clone());
        }
        Some(e)
    }

    /// Store an answer, streamed to its file (a large body is not copied again in memory).
    pub fn put(&self, e: &Entry) {
        if let Some(path) = self.file(&e.key) {
            let _ = crate::atomic::replace_with(&path, |w| {
                serde_json::to_writer(&mut *w, e).map_err(std::io::Error::other)
            });
            if let Some(at) = self.confirmed_file(&e.key) {
                let _ = std::fs::remove_file(at);
            }
        }
        if let Some(mut m) = self.memory() {
            m.insert(e.key.clone(), e.clone());
        }
    }

    /// Record that the server confirmed the stored answer for `key` (a `304`) at `at`: the
    /// entry's body stays as written; [`Store::get`] reads it as last fetched `at`.
    pub fn confirm(&self, key: &str, at: chrono::DateTime<chrono::Utc>) {
        if let Some(file) = self.confirmed_file(key) {
            let _ = crate::atomic::replace_with(&file, |w| w.write_all(at.to_rfc3339().as_bytes()));
        }
        if let Some(e) = self.memory().as_mut().and_then(|m| m.get_mut(key)) {
            e.fetched_at = Some(at);
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

    #[test]
    fn a_confirmation_dates_the_entry_without_writing_its_body_again() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::new(Some(dir.path().to_path_buf()), false);
        let at = |h| chrono::DateTime::parse_from_rfc3339(h).unwrap().to_utc();
        let mut e = entry("index", Some("\"1\""), "entries: {}");
        e.fetched_at = Some(at("2026-05-01T12:00:00Z"));
        s.put(&e);
        let body = s.file("index").unwrap();
        let written = std::fs::metadata(&body).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        s.confirm("index", at("2026-05-02T12:00:00Z"));
        assert_eq!(
            std::fs::metadata(&body).unwrap().modified().unwrap(),
            written,
            "the body is not written again"
        );
        let again = Store::new(Some(dir.path().to_path_buf()), false);
        assert_eq!(
            again.get("index").unwrap().fetched_at,
            Some(at("2026-05-02T12:00:00Z"))
        );
        e.body = "entries: {a: []}".into();
        e.fetched_at = Some(at("2026-05-03T12:00:00Z"));
        s.put(&e);
        let got = again.get("index").unwrap();
        assert_eq!(
            (got.body.as_str(), got.fetched_at),
            ("entries: {a: []}", Some(at("2026-05-03T12:00:00Z"))),
            "a new body carries its own date"
        );
        let mem = Store::new(None, true);
        mem.put(&entry("k", Some("\"e\""), "b"));
        mem.confirm("k", at("2026-05-04T00:00:00Z"));
        assert_eq!(
            mem.get("k").unwrap().fetched_at,
            Some(at("2026-05-04T00:00:00Z"))
        );
    }
}
