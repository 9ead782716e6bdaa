//! Upstream facts: Kubernetes releases, lifecycle, node images, Helm charts.
//!
//! Everything fetched is stored as raw text under a *logical key* ([`Key`]) in
//! [`UpstreamData`]; all parsing and deciding happens in pure code (`resolve`). That makes a
//! snapshot nothing more than the saved `UpstreamData`, and a replay exactly a live run
//! without the network. Fetching is iterative because which CHECKSUMs matter depends on the
//! patches found: resolution (pure) says which keys are still missing, [`collect`] fetches
//! them, until nothing more is needed. This module only reads; the pipeline hands
//! [`collect`] the question "what is still needed".

pub mod cve;
pub mod helm;
pub mod http;
pub mod images;
pub mod kubernetes;
pub mod lifecycle;
pub mod snapshot;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::{Loaded, UpstreamConfig};
use crate::model::Minor;
use http::{HttpClient, HttpOptions, RequestStats};

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

/// Everything read from upstream, by [`Key::id`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
}

/// Reads sources over HTTP, from the URLs in the configuration.
pub struct HttpFetcher {
    /// The shared client (retries, cache, counters).
    pub http: HttpClient,
    /// Base URLs of the Kubernetes sources.
    pub upstream: UpstreamConfig,
    /// How much of each answer is read (`limits.upstream`).
    pub limits: crate::config::UpstreamLimits,
}

fn text_outcome(http: &HttpClient, url: &str, bound: http::Bound) -> Fetched {
    match http.get_bounded(url, None, bound) {
        Ok(r) => Fetched::Ok { body: r.body },
        // The configured URL, not the mirror's: snapshots must not depend on where they were recorded.
        Err(e) if e.status() == Some(404) => Fetched::Missing {
            url: url.to_string(),
        },
        Err(e) => Fetched::Error {
            message: e.to_string(),
        },
    }
}

impl HttpFetcher {
    /// The URL a key is read from (`None` for the paginated releases list, and for a record
    /// id that is not a CVE id).
    fn url_of(&self, key: &Key) -> Option<String> {
        let up = &self.upstream;
        match key {
            Key::Releases => None,
            Key::Schedule => Some(up.schedule_url.clone()),
            Key::Marker(m) => Some(kubernetes::marker_url(&up.markers_url, *m)),
            Key::Checksum(url) => Some(url.clone()),
            Key::HelmIndex(repo) => Some(helm::index_url(repo)),
            Key::CveFeed => Some(up.cve_feed_url.clone()),
            Key::CveRecord(id) => {
                cve::is_cve_id(id).then(|| cve::record_url(&up.cve_record_url, id))
            }
        }
    }
}

impl Fetch for HttpFetcher {
    fn last_known(&self, key: &Key) -> Option<LastKnown> {
        let (body, fetched_at) = self.http.last_known(&self.url_of(key)?)?;
        Some(LastKnown { body, fetched_at })
    }

    fn fetch(&mut self, key: &Key) -> Fetched {
        if let Key::Releases = key {
            let up = &self.upstream;
            return match kubernetes::fetch_releases(&self.http, &up.github_api, &up.kubernetes_repo)
            {
                Ok(body) => Fetched::Ok { body },
                Err(message) => Fetched::Error { message },
            };
        }
        // The id comes from the feed (untrusted): only a CVE id is put into a URL.
        let Some(url) = self.url_of(key) else {
            let id = match key {
                Key::CveRecord(id) => id.as_str(),
                other => unreachable!("{} has a URL", other.id()),
            };
            return Fetched::Error {
                message: format!("`{id}` is not a CVE id; not requested"),
            };
        };
        // A CHECKSUM is one line: read no more than a small bound of it (a 200 MB answer, or
        // a first line of 10 MB, costs 4 KiB and is refused by name).
        let bound = match key {
            Key::Checksum(_) => http::Bound {
                bytes: self.limits.max_checksum_bytes,
                setting: "limits.upstream.max_checksum_bytes",
            },
            _ => http::Bound {
                bytes: self.limits.max_bytes,
                setting: "limits.upstream.max_bytes",
            },
        };
        match text_outcome(&self.http, &url, bound) {
            // GCS answers a missing marker with 403/404 and an XML "NoSuchKey" body.
            Fetched::Error { message }
                if matches!(key, Key::Marker(_)) && message.contains("HTTP 403") =>
            {
                Fetched::Missing { url }
            }
            other => other,
        }
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
    #[error("{0}")]
    Http(#[from] http::HttpError),
}

/// How `detect` reads upstream.
#[derive(Debug, Clone, Default)]
pub struct DetectOptions {
    /// Replay this snapshot instead of using the network (overrides `upstream.snapshot`).
    pub snapshot: Option<PathBuf>,
    /// Write everything fetched to this file.
    pub save: Option<PathBuf>,
    /// ETag cache directory (overrides `upstream.cache_dir`).
    pub cache_dir: Option<PathBuf>,
    /// Optional GitHub token (read from the env var named by `upstream.token_env` at the CLI edge).
    pub token: Option<String>,
    /// `(from, to)` URL prefix rewrites for mirrors; keys keep the configured URLs.
    pub mirrors: Vec<(String, String)>,
    /// Ignore `upstream.snapshot` from the configuration.
    pub live: bool,
    /// Override HTTP retry/backoff settings (tests).
    pub http: Option<HttpOptions>,
    /// The run's clock, for backoffs (set by the pipeline from its context).
    pub clock: Option<crate::clock::SharedClock>,
}

/// A source of upstream facts for one run: the snapshot to replay, or HTTP.
pub enum Source {
    Replay(snapshot::Replay),
    Http(Box<HttpFetcher>),
}

impl Source {
    /// Whether the source can answer `key` without the network: always over HTTP; on replay
    /// only when the snapshot recorded it (an older snapshot has no CVE data, and a replay
    /// never pretends it has).
    pub fn records(&self, key: &Key) -> bool {
        match self {
            Source::Replay(r) => r.has(key),
            Source::Http(_) => true,
        }
    }

    /// Open the source `opts` and the configuration ask for: `--snapshot`, else
    /// `upstream.snapshot` (unless `live`), else HTTP with the configured cache directory.
    pub fn open(loaded: &Loaded, opts: &DetectOptions) -> Result<Source, UpstreamError> {
        let config = &loaded.config;
        let snapshot = opts.snapshot.clone().or_else(|| {
            (!opts.live)
                .then(|| config.upstream.snapshot.as_ref().map(|p| loaded.resolve(p)))
                .flatten()
        });
        if let Some(path) = snapshot {
            return Ok(Source::Replay(snapshot::Replay::open(&path)?));
        }
        let mut http_opts = opts.http.clone().unwrap_or_default();
        http_opts.cache_dir = opts.cache_dir.clone().or_else(|| {
            config
                .upstream
                .cache_dir
                .as_ref()
                .map(|p| loaded.resolve(p))
        });
        http_opts.token = opts.token.clone();
        http_opts.token_prefixes = vec![config.upstream.github_api.clone()];
        http_opts.mirrors = opts.mirrors.clone();
        if opts.http.is_none() {
            http_opts.max_bytes = config.limits.upstream.max_bytes;
        }
        if http_opts.clock.is_none() {
            http_opts.clock = opts.clock.clone();
        }
        Ok(Source::Http(Box::new(HttpFetcher {
            http: HttpClient::new(http_opts)?,
            upstream: config.upstream.clone(),
            limits: config.limits.upstream,
        })))
    }

    /// Request counters of the run (all zero on replay).
    pub fn stats(&self) -> RequestStats {
        match self {
            Source::Replay(_) => RequestStats::default(),
            Source::Http(f) => f.http.stats(),
        }
    }
}

impl Fetch for Source {
    fn fetch(&mut self, key: &Key) -> Fetched {
        match self {
            Source::Replay(r) => r.fetch(key),
            Source::Http(f) => f.fetch(key),
        }
    }

    fn last_known(&self, key: &Key) -> Option<LastKnown> {
        match self {
            Source::Replay(r) => r.last_known(key),
            Source::Http(f) => f.last_known(key),
        }
    }
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
            let _ = kubernetes::next_link(&body);
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
