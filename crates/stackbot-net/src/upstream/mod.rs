//! Reading upstream over the network: the one HTTP client ([`http`]), the fetcher that reads
//! each [`Key`] from the URLs in the configuration, and the [`Source`] of a run (the snapshot
//! to replay, or HTTP). The data and the parsers are `stackbot_core::upstream`, re-exported
//! here so `stackbot::upstream::…` names both.

pub use stackbot_core::upstream::*;

pub mod http;
mod releases;
pub mod snapshot;

use std::path::PathBuf;

use crate::config::{Loaded, UpstreamConfig};
use http::{HttpClient, HttpOptions, RequestStats};
pub use releases::fetch_releases;

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

    fn url(&self, key: &Key) -> Option<String> {
        match key {
            Key::Releases => Some(format!(
                "{}/repos/{}/releases",
                self.upstream.github_api.trim_end_matches('/'),
                self.upstream.kubernetes_repo
            )),
            other => self.url_of(other),
        }
    }

    fn fetch(&mut self, key: &Key) -> Fetched {
        if let Key::Releases = key {
            let up = &self.upstream;
            return match fetch_releases(&self.http, &up.github_api, &up.kubernetes_repo) {
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
    /// The snapshot as the run already read it to learn its day: replayed as it is when it is
    /// the file this run replays, so the run's day and its data come from one read of one
    /// file (a file replaced between two reads could give them apart).
    pub replay: Option<std::sync::Arc<snapshot::Replay>>,
    /// Override HTTP retry/backoff settings (tests).
    pub http: Option<HttpOptions>,
    /// The run's clock, for backoffs (set by the pipeline from its context).
    pub clock: Option<crate::clock::SharedClock>,
}

/// A source of upstream facts for one run: the snapshot to replay, or HTTP.
pub enum Source {
    Replay(std::sync::Arc<snapshot::Replay>),
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
            return Ok(Source::Replay(snapshot::opened_or_open(
                opts.replay.as_ref(),
                &path,
            )?));
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
            http: HttpClient::new(http_opts).map_err(|e| UpstreamError::Http(Box::new(e)))?,
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
            Source::Replay(r) => r.answer(key),
            Source::Http(f) => f.fetch(key),
        }
    }

    fn last_known(&self, key: &Key) -> Option<LastKnown> {
        match self {
            Source::Replay(r) => r.last_known(key),
            Source::Http(f) => f.last_known(key),
        }
    }

    fn url(&self, key: &Key) -> Option<String> {
        match self {
            Source::Replay(r) => r.url(key),
            Source::Http(f) => f.url(key),
        }
    }
}
