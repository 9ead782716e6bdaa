//! Upstream facts: Kubernetes releases, lifecycle, node images, Helm charts.
//!
//! Everything fetched is stored as raw text under a *logical key* ([`Key`]) in
//! [`UpstreamData`]; all parsing and deciding happens in pure code (`resolve`). That makes a
//! snapshot nothing more than the saved `UpstreamData`, and a replay exactly a live run
//! without the network. Fetching is iterative because which CHECKSUMs matter depends on the
//! patches found: resolution (pure) says which keys are still missing, [`collect`] fetches
//! them, until nothing more is needed. This module only reads; the pipeline hands
//! [`collect`] the question "what is still needed".
//!
//! Core holds the data (keys, [`UpstreamData`], snapshots) and the parsers; reading over the
//! network (the HTTP client, the fetcher over it, the `Source` of a run) is `stackbot_net::upstream`,
//! which re-exports this module under the same paths.

pub mod cve;
pub mod helm;
pub mod images;
pub mod kubernetes;
pub mod lifecycle;
pub mod snapshot;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::model::Minor;

/// A logical upstream source. Keys name *what* was read (the releases list, a minor's marker,
/// an image's CHECKSUM URL, a Helm repository), so a snapshot recorded through a mirror still
/// replays against a configuration that names the real upstream URLs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key {
    /// All GA-relevant fields of every page of the GitHub releases list.
    Releases,
    /// kubernetes/website `schedule.yaml`.
    Schedule,
    /// `stable-<minor>.txt`, fetched only when the releases API failed.
    Marker(Minor),
    /// `<image url>.CHECKSUM` (the configured URL).
    Checksum(String),
    /// A Helm repository URL (its `index.yaml`).
    HelmIndex(String),
    /// The official Kubernetes CVE feed (JSON Feed 1.1).
    CveFeed,
    /// One CVE record (CVE JSON 5.x) by id, as the feed lists it.
    CveRecord(String),
}

impl Key {
    /// The key's id in [`UpstreamData`] and snapshot files.
    pub fn id(&self) -> String {
        match self {
            Key::Releases => "kubernetes/releases".into(),
            Key::Schedule => "kubernetes/schedule".into(),
            Key::Marker(m) => format!("kubernetes/stable-{m}"),
            Key::Checksum(url) => format!("checksum {url}"),
            Key::HelmIndex(repo) => format!("helm-index {repo}"),
            Key::CveFeed => "kubernetes/cve-feed".into(),
            Key::CveRecord(id) => format!("cve-record {id}"),
        }
    }
}

/// The outcome of reading one source. Failures are data too: a replay must reproduce the
/// fallback a live run took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "lowercase")]
pub enum Fetched {
    /// The body (for `Releases`: the reduced, merged JSON list of all pages).
    Ok { body: String },
    /// HTTP 404: not published (yet). A normal state, e.g. "waiting for node image".
    Missing { url: String },
    /// Anything else: HTTP error after retries, transport failure, malformed page.
    Error { message: String },
}

/// Everything read from upstream, by [`Key::id`]. Two values are equal when they hold the same
/// answers, however they were read (live or replayed, from which URL).
#[derive(Debug, Clone, Default, Eq, Serialize, Deserialize)]
pub struct UpstreamData {
    /// [`Key::id`] → outcome; a `BTreeMap` so snapshots are written in a stable order.
    pub entries: BTreeMap<String, Fetched>,
    /// For a source that failed this run: the body it last answered (from the ETag cache) and
    /// when. Reports show these facts marked stale; decisions never use them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub last_known: BTreeMap<String, LastKnown>,
    /// What every body here is parsed within (`limits.upstream`): set by whoever reads for a
    /// configuration, so every parse of the same body, wherever it happens, refuses alike.
    #[serde(skip)]
    pub limits: crate::config::UpstreamLimits,
    /// How this data came to be: read now (when), or replayed from a snapshot (of which day).
    /// Set by whoever reads; provenance for reports ([`crate::compliance::sources`]).
    #[serde(skip)]
    pub origin: Origin,
    /// The URL each source was read from in this run, by [`Key::id`] (live runs only).
    #[serde(skip)]
    pub urls: BTreeMap<String, String>,
}

impl PartialEq for UpstreamData {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
            && self.last_known == other.last_known
            && self.limits == other.limits
    }
}

/// How a run came by its upstream data.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Origin {
    /// Not said (data put together by hand, e.g. in a test).
    #[default]
    Unsaid,
    /// Read during this run, at `at`.
    Live { at: chrono::DateTime<chrono::Utc> },
    /// Replayed from a snapshot recorded for `recorded_for` (when it says).
    Snapshot {
        recorded_for: Option<chrono::NaiveDate>,
    },
}

/// A source's last successful answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastKnown {
    pub body: String,
    /// When it was read (`None`: a cache entry older than this field).
    pub fetched_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl UpstreamData {
    /// The outcome for a key, if it was read.
    pub fn get(&self, key: &Key) -> Option<&Fetched> {
        self.entries.get(&key.id())
    }

    /// Whether a key was read (successfully or not).
    pub fn has(&self, key: &Key) -> bool {
        self.entries.contains_key(&key.id())
    }

    /// Record an outcome.
    pub fn insert(&mut self, key: &Key, value: Fetched) {
        self.entries.insert(key.id(), value);
    }
}

/// Something that can read a logical source.
pub trait Fetch {
    /// Read one source. Never fails as a whole: failures are recorded as [`Fetched::Error`].
    fn fetch(&mut self, key: &Key) -> Fetched;

    /// What `key` last answered successfully, if the fetcher remembers it (HTTP with an ETag
    /// cache does).
    fn last_known(&self, _key: &Key) -> Option<LastKnown> {
        None
    }

    /// The URL `key` is read from, when the fetcher reads URLs (HTTP does; a replay does not).
    fn url(&self, _key: &Key) -> Option<String> {
        None
    }
}

/// Errors that stop `detect` as a whole (per-source failures are reported per minor instead).
#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    /// The snapshot to replay is missing or not a snapshot (the user's input: exit 2).
    #[error("snapshot {path}: {message}")]
    Snapshot { path: PathBuf, message: String },
    /// `--save` could not write its file.
    #[error("cannot write snapshot {path}: {message}")]
    SnapshotWrite { path: PathBuf, message: String },
    /// The HTTP client could not be set up (its error type is `stackbot_net`'s, which core
    /// does not depend on: boxed, still the `source` of the chain).
    #[error("{0}")]
    Http(Box<dyn std::error::Error + Send + Sync>),
}

/// Bound on fetch rounds; each round only fetches keys not yet read, so this is a safety net.
const MAX_ROUNDS: usize = 32;

/// Fill `data` with every key `needed` asks for, round after round, until it asks for nothing
/// new. Which keys matter is decided by the caller (resolution is pure and lives elsewhere):
/// the CHECKSUMs worth probing depend on the patches found in the previous round.
pub fn collect(
    fetcher: &mut dyn Fetch,
    data: &mut UpstreamData,
    needed: impl Fn(&UpstreamData) -> Vec<Key>,
) {
    for _ in 0..MAX_ROUNDS {
        let keys = needed(data);
        if keys.is_empty() {
            return;
        }
        for key in keys {
            let outcome = fetcher.fetch(&key);
            tracing::debug!("fetched {}", key.id());
            if matches!(outcome, Fetched::Error { .. })
                && let Some(last) = fetcher.last_known(&key)
            {
                data.last_known.insert(key.id(), last);
            }
            if let Some(url) = fetcher.url(&key) {
                data.urls.insert(key.id(), url);
            }
            data.insert(&key, outcome);
        }
    }
}

#[cfg(test)]
mod robustness {
    //! Upstream bodies are untrusted: every parser must return an error, never panic.
    use proptest::prelude::*;

    use super::{cve, helm, images, kubernetes, lifecycle};
    use crate::model::Minor;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn parsers_never_panic(body in ".{0,300}") {
            let m = Minor { major: 1, minor: 34 };
            let _ = kubernetes::parse_releases(&body);
            let _ = kubernetes::parse_marker(&body, m);
            let _ = lifecycle::parse_schedule(&body, &Default::default());
            let _ = helm::parse_index(&body);
            let _ = images::parse_checksum(&body, "ubuntu-2404-kube-v1.34.7.qcow2");
            let _ = cve::parse_feed(&body);
            let _ = cve::parse_record("CVE-2024-1", &body);
        }

        #[test]
        fn checksum_accepts_exactly_lowercase_sha256_for_the_file(hash in "[0-9a-fA-F]{60,68}") {
            let body = format!("{hash}  f.qcow2\n");
            let ok = hash.len() == 64 && !hash.bytes().any(|b| b.is_ascii_uppercase());
            prop_assert_eq!(images::parse_checksum(&body, "f.qcow2").is_ok(), ok);
        }
    }
}
