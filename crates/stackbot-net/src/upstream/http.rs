//! The one HTTP client every upstream read goes through.
//!
//! Upstream hosts rate-limit (GitHub: 60 requests/hour without a token), fail transiently and
//! occasionally answer with HTML error pages. Centralising the client means every source gets
//! the same timeouts, bounded retries, conditional requests against an on-disk ETag cache,
//! response size limits and error messages that name the URL and the status.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;

use crate::cache::{Entry, Store};
use crate::retry::{Failure, Step};

/// Why a GET failed after retries. Always names the URL, never the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// The server answered with a non-success status.
    #[error("GET {url}: HTTP {status}{}", if detail.is_empty() { String::new() } else { format!(" ({detail})") })]
    Status {
        url: String,
        status: u16,
        detail: String,
    },
    /// No answer at all (connection refused, timeout, TLS).
    #[error("GET {url}: {message}")]
    Transport { url: String, message: String },
    /// The body exceeded the configured limit; a mirror serving the wrong file must not fill
    /// memory. `setting` is the configuration key of the limit.
    #[error(
        "GET {url}: response larger than {limit} bytes; refusing to read it (`{setting}`; raise it in stackbot.yaml if the answer is genuine)"
    )]
    TooLarge {
        url: String,
        limit: u64,
        setting: &'static str,
    },
    /// TLS or the client itself could not be initialised.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    /// Plain `http://` to a host that is not loopback: a token or a checksum could be read or
    /// changed on the way, so the request is refused before connecting.
    #[error(
        "GET {url}: plain http:// is only allowed for loopback hosts (127.0.0.0/8, ::1, localhost); use https://"
    )]
    PlainHttp { url: String },
    /// The body is not UTF-8 text (every upstream source here is text).
    #[error("GET {url}: response is not UTF-8 text")]
    NotText { url: String },
}

impl HttpError {
    /// The HTTP status, if the server answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            HttpError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// `Accept` value of the GitHub REST API; requests with it also pin the API version.
pub use crate::net::GITHUB_JSON;

/// Knobs of the client. Defaults suit production; tests shorten the backoff.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Directory of the ETag cache; `None` disables conditional requests.
    pub cache_dir: Option<PathBuf>,
    /// Bearer token, sent only to URLs starting with one of `token_prefixes`.
    pub token: Option<String>,
    /// URL prefixes allowed to receive the token (the GitHub API base).
    pub token_prefixes: Vec<String>,
    /// Attempts per request (1 = no retry).
    pub attempts: u32,
    /// First backoff step; doubles per retry, plus up to 50% jitter.
    pub backoff: Duration,
    /// Upper bound for any single wait, including a server's `Retry-After`.
    pub max_wait: Duration,
    /// Largest body accepted (`limits.upstream.max_bytes`).
    pub max_bytes: u64,
    /// Whole-request timeout.
    pub timeout: Duration,
    /// `(from, to)` URL prefix rewrites: fetch from a mirror while keys keep the configured URL.
    pub mirrors: Vec<(String, String)>,
    /// The clock backoffs wait on (the run's clock; tests pass a manual one). `None`: the
    /// system clock.
    pub clock: Option<crate::clock::SharedClock>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            cache_dir: None,
            token: None,
            token_prefixes: Vec::new(),
            attempts: 3,
            backoff: Duration::from_millis(500),
            max_wait: Duration::from_secs(30),
            max_bytes: crate::config::UpstreamLimits::default().max_bytes,
            timeout: crate::timeouts::UPSTREAM_REQUEST,
            mirrors: Vec::new(),
            clock: None,
        }
    }
}

/// At most how many bytes of an answer are read, and the setting that says so (named when an
/// answer is refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    pub bytes: u64,
    pub setting: &'static str,
}

/// Request counters, so tests and benchmarks can compare cold and warm runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RequestStats {
    /// Requests sent on the wire (retries included).
    pub requests: u64,
    /// Requests that carried `If-None-Match`.
    pub conditional: u64,
    /// `304 Not Modified` answers served from the cache.
    pub not_modified: u64,
    /// Retries after a transient failure.
    pub retries: u64,
}

/// A successful (2xx, or 304 resolved from the cache) response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The body as text.
    pub body: String,
    /// The `Link` header, kept for pagination (also across 304s).
    pub link: Option<String>,
}

/// The upstream client: synchronous on the outside, async reqwest inside on the process's one
/// runtime ([`crate::runtime`]), so upstream and the forges share one set of I/O threads.
#[derive(Clone)]
pub struct HttpClient {
    client: reqwest::Client,
    /// The ETag cache: the one store of `crate::cache`, on disk only (a Helm index is read
    /// once per run and is not worth keeping twice).
    cache: Arc<Store>,
    opts: HttpOptions,
    counters: Arc<Mutex<RequestStats>>,
}

/// Whether `url` may be fetched: `https://` anywhere, `http://` only on loopback. Unparsable
/// URLs are left to reqwest, which fails them without connecting.
pub fn transport_allowed(url: &reqwest::Url) -> bool {
    match url.scheme() {
        "http" => url.host_str().is_some_and(crate::net::is_loopback_host),
        _ => true,
    }
}

impl HttpClient {
    /// Build the client. Fails only if TLS cannot be initialised. Redirects to plain
    /// `http://` on a non-loopback host are refused like such URLs themselves.
    pub fn new(opts: HttpOptions) -> Result<Self, HttpError> {
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            if !transport_allowed(attempt.url()) {
                let to = attempt.url().to_string();
                attempt.error(format!("redirect to plain http:// {to} refused"))
            } else if attempt.previous().len() >= 10 {
                attempt.stop()
            } else {
                attempt.follow()
            }
        });
        let client = crate::client::builder()
            .redirect(redirects)
            .timeout(opts.timeout)
            .build()
            .map_err(|e| HttpError::Client(e.to_string()))?;
        Ok(HttpClient {
            client,
            cache: Arc::new(Store::new(opts.cache_dir.clone(), false)),
            opts,
            counters: Arc::default(),
        })
    }

    /// Counters since the client was built.
    pub fn stats(&self) -> RequestStats {
        *self.count()
    }

    /// The counters, to bump one (never held across an `.await`).
    fn count(&self) -> std::sync::MutexGuard<'_, RequestStats> {
        self.counters
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The URL actually contacted for a configured URL (mirror rewrite).
    pub fn effective_url(&self, url: &str) -> String {
        for (from, to) in &self.opts.mirrors {
            if let Some(rest) = url.strip_prefix(from.as_str()) {
                return format!("{to}{rest}");
            }
        }
        url.to_string()
    }

    /// The last body this client read from `url` (kept by the ETag cache) and when it was
    /// read: the last known facts to show, marked stale, while the source fails.
    pub fn last_known(&self, url: &str) -> Option<(String, Option<chrono::DateTime<chrono::Utc>>)> {
        let entry = self.read_cache(&self.effective_url(url))?;
        Some((entry.body, entry.fetched_at))
    }

    /// The stored answer to revalidate (every upstream entry has an `ETag`).
    fn read_cache(&self, url: &str) -> Option<Entry> {
        self.cache.get(url).filter(|e| e.etag.is_some())
    }

    /// GET a text resource. `accept` sets the `Accept` header. Retries transient failures,
    /// revalidates cached bodies with `If-None-Match`, and maps every failure to an error that
    /// names the URL (the mirror URL, when one applies).
    pub fn get(&self, url: &str, accept: Option<&str>) -> Result<Response, HttpError> {
        let bound = Bound {
            bytes: self.opts.max_bytes,
            setting: "limits.upstream.max_bytes",
        };
        self.get_bounded(url, accept, bound)
    }

    /// [`Self::get`] reading at most `bound.bytes` of the body: the read stops there (the rest
    /// is never transferred) and the answer is refused naming `bound.setting`. For answers
    /// known to be small (a CHECKSUM is one line), so a wrong or hostile one costs its bound.
    pub fn get_bounded(
        &self,
        url: &str,
        accept: Option<&str>,
        bound: Bound,
    ) -> Result<Response, HttpError> {
        match self.send(url, accept, bound, true)? {
            Answer::Cached(r) => Ok(r),
            Answer::Fresh {
                url,
                bytes,
                etag,
                link,
            } => {
                let body = String::from_utf8(bytes)
                    .map_err(|_| HttpError::NotText { url: url.clone() })?;
                if etag.is_none() {
                    return Ok(Response { body, link });
                }
                let entry = Entry {
                    key: url,
                    etag,
                    link,
                    body,
                    fetched_at: self.opts.clock.as_ref().map(|c| c.now()),
                };
                self.cache.put(&entry);
                Ok(Response {
                    body: entry.body,
                    link: entry.link,
                })
            }
        }
    }

    /// GET a binary resource (a chart archive), at most `bound.bytes` of it, with the same
    /// retries, mirrors and transport rules as [`Self::get`]; never cached (the caller checks
    /// the bytes against a digest and keeps them).
    pub fn get_bytes(&self, url: &str, bound: Bound) -> Result<Vec<u8>, HttpError> {
        match self.send(url, None, bound, false)? {
            Answer::Fresh { bytes, .. } => Ok(bytes),
            Answer::Cached(r) => Ok(r.body.into_bytes()),
        }
    }

    /// One GET with its retries, run to its end on the process's runtime. Blocks the calling
    /// thread, never a runtime worker (the backoff waits on the run's clock, which sleeps).
    fn send(
        &self,
        url: &str,
        accept: Option<&str>,
        bound: Bound,
        use_cache: bool,
    ) -> Result<Answer, HttpError> {
        let rt = crate::runtime::runtime()
            .map_err(|e| HttpError::Client(format!("cannot start the I/O threads: {e}")))?;
        rt.block_on(self.send_async(url, accept, bound, use_cache))
    }

    async fn send_async(
        &self,
        url: &str,
        accept: Option<&str>,
        bound: Bound,
        use_cache: bool,
    ) -> Result<Answer, HttpError> {
        let url = self.allowed_url(url)?;
        let mut cached = use_cache.then(|| self.read_cache(&url)).flatten();
        let waits = crate::retry::Waits {
            clock: self.opts.clock.as_deref(),
            by: None,
        };
        let attempt = async |_| self.attempt(&url, accept, bound, &mut cached).await;
        let retrying = |_, _, last: &Failed| {
            match last {
                Failed::Status(err) => tracing::info!("{err}; retrying"),
                Failed::Transport(cause) => tracing::info!("GET {url}: {cause}; retrying"),
            }
            self.count().retries += 1;
        };
        let ended = match crate::retry::run(&self.policy(), waits, attempt, retrying).await {
            Ok(answer) => return Ok(answer),
            Err(ended) => ended,
        };
        let (crate::retry::Ended::Stopped(last) | crate::retry::Ended::GaveUp { last, .. }) = ended;
        Err(match last {
            Failed::Status(err) => err,
            Failed::Transport(cause) => transport_error(&url, &cause),
        })
    }

    /// One GET of [`Self::send_async`]: its answer (`Done`: an answer or a definite error),
    /// or what the one retry policy may repeat.
    async fn attempt(
        &self,
        url: &str,
        accept: Option<&str>,
        bound: Bound,
        cached: &mut Option<Entry>,
    ) -> Step<Answer, Failed> {
        let mut req = self.client.get(url);
        if let Some(a) = accept {
            req = req.header(reqwest::header::ACCEPT, a);
        }
        if accept == Some(GITHUB_JSON) {
            req = req.header("X-GitHub-Api-Version", crate::net::GITHUB_API_VERSION);
        }
        if let Some(token) = &self.opts.token
            && self.token_allowed(url)
        {
            req = req.bearer_auth(token);
        }
        if let Some(etag) = cached.as_ref().and_then(|c| c.etag.as_deref()) {
            req = req.header(reqwest::header::IF_NONE_MATCH, etag);
            self.count().conditional += 1;
        }
        let host = host_of(url);
        // A name that did not resolve a moment ago does not resolve now.
        if let Some(cause) = crate::net::failure::known_unresolvable(&host) {
            return Step::Stop(Failed::Transport(cause));
        }
        self.count().requests += 1;
        // The activity line (the binary's cli::activity::TARGET) says what the run waits for.
        tracing::debug!(target: "stackbot::activity", "upstream: GET {url}");
        let resp = match req.send().await {
            Ok(resp) => resp,
            Err(e) => {
                let cause = crate::net::failure::classify(&e, &host);
                if !cause.heals_in_seconds() {
                    return Step::Stop(Failed::Transport(cause));
                }
                return Step::Again(Failure::Transient(None), Failed::Transport(cause));
            }
        };
        let status = resp.status().as_u16();
        if status == 304
            && let Some(c) = cached.take()
        {
            self.count().not_modified += 1;
            // Confirmed current: the last known facts are as of now (the body stays as stored).
            if let Some(clock) = &self.opts.clock {
                self.cache.confirm(&c.key, clock.now());
            }
            return Step::Done(Answer::Cached(Response {
                body: c.body,
                link: c.link,
            }));
        }
        if (200..300).contains(&status) {
            return match self.read_success(url, resp, bound).await {
                Ok(answer) => Step::Done(answer),
                Err(e) => Step::Stop(Failed::Status(e)),
            };
        }
        let (headers, body) = error_body(resp).await;
        let failure = crate::retry::classify_status(
            http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::BAD_GATEWAY),
            &headers,
            &body,
            self.now(),
        );
        let err = HttpError::Status {
            url: url.to_string(),
            status,
            detail: error_detail(&headers, &body),
        };
        match failure {
            Some(failure) => Step::Again(failure, Failed::Status(err)),
            None => Step::Stop(Failed::Status(err)),
        }
    }

    /// The one retry policy ([`crate::retry`]) with this client's settings: `attempts` in
    /// all, a server's wait accepted up to `max_wait` (a longer one fails the read at once).
    fn policy(&self) -> crate::retry::RetryPolicy {
        crate::retry::RetryPolicy {
            max_retries: self.opts.attempts.saturating_sub(1),
            base_delay: self.opts.backoff,
            max_delay: self.opts.max_wait,
            max_rate_limit_wait: self.opts.max_wait,
        }
    }

    /// The run's time, for a rate limit's reset. A client without a clock (a unit test of
    /// the client) takes the epoch: any reset is then too far off to wait for.
    fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.opts
            .clock
            .as_ref()
            .map_or(chrono::DateTime::UNIX_EPOCH, |c| c.now())
    }

    /// The URL to contact for `url` (after mirrors), refused when its transport is not allowed.
    fn allowed_url(&self, url: &str) -> Result<String, HttpError> {
        let url = self.effective_url(url);
        match reqwest::Url::parse(&url) {
            Ok(u) if !transport_allowed(&u) => Err(HttpError::PlainHttp { url }),
            _ => Ok(url),
        }
    }

    fn token_allowed(&self, url: &str) -> bool {
        self.opts
            .token_prefixes
            .iter()
            .any(|p| !p.is_empty() && url.starts_with(p.as_str()))
    }

    async fn read_success(
        &self,
        url: &str,
        resp: reqwest::Response,
        bound: Bound,
    ) -> Result<Answer, HttpError> {
        let limit = bound.bytes.min(self.opts.max_bytes);
        let too_large = || HttpError::TooLarge {
            url: url.to_string(),
            limit,
            setting: bound.setting,
        };
        if resp.content_length().is_some_and(|n| n > limit) {
            return Err(too_large());
        }
        let etag = crate::net::header(resp.headers(), reqwest::header::ETAG).map(str::to_string);
        let link = crate::net::link_header(resp.headers());
        let bytes = read_at_most(resp, limit + 1)
            .await
            .map_err(|e| HttpError::Transport {
                url: url.to_string(),
                message: format!("reading the body failed: {e}"),
            })?;
        if bytes.len() as u64 > limit {
            return Err(too_large());
        }
        Ok(Answer::Fresh {
            url: url.to_string(),
            bytes,
            etag,
            link,
        })
    }
}

/// A failed attempt: what the read ends as when no retry follows it.
enum Failed {
    /// No answer (recorded among the hosts the run could not reach when it is the last).
    Transport(crate::net::failure::Cause),
    /// An answer that is an error, or a body that could not be read.
    Status(HttpError),
}

/// What [`HttpClient::send`] got: a body the cache confirmed (304), or a new one.
enum Answer {
    Cached(Response),
    Fresh {
        url: String,
        bytes: Vec<u8>,
        etag: Option<String>,
        link: Option<String>,
    },
}

fn host_of(url: &str) -> String {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_default()
}

/// The error of a GET that got no answer, recorded among the hosts the run could not reach.
fn transport_error(url: &str, cause: &crate::net::failure::Cause) -> HttpError {
    crate::net::failure::record(&format!("GET {url}"), cause);
    HttpError::Transport {
        url: url.to_string(),
        message: cause.to_string(),
    }
}

/// The first `limit` bytes of a body (or all of it, if shorter): the rest is never read.
async fn read_at_most(mut resp: reqwest::Response, limit: u64) -> Result<Vec<u8>, reqwest::Error> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut bytes = Vec::new();
    while bytes.len() < limit
        && let Some(chunk) = resp.chunk().await?
    {
        let room = limit - bytes.len();
        bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
    }
    Ok(bytes)
}

/// The headers and the first 4 KiB of an error answer's body (enough for a message).
async fn error_body(resp: reqwest::Response) -> (http::HeaderMap, Vec<u8>) {
    let headers = resp.headers().clone();
    let body = read_at_most(resp, 4096).await.unwrap_or_default();
    (headers, body)
}

/// A short, single-line hint from an error body: GitHub's JSON `message`, or the first line
/// of text. HTML pages are summarised, not dumped.
fn error_detail(headers: &http::HeaderMap, body: &[u8]) -> String {
    let rate_limited = crate::retry::rate_limit_exhausted(headers);
    let text = String::from_utf8_lossy(body);
    let mut detail = if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
        && let Some(m) = v.get("message").and_then(|m| m.as_str())
    {
        m.to_string()
    } else if text.trim_start().starts_with('<') {
        "HTML error page".to_string()
    } else {
        text.lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(120)
            .collect()
    };
    if rate_limited {
        detail = format!("rate limited: {detail}; set a token to raise the limit");
    }
    detail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_rewrites_only_matching_prefixes() {
        let c = HttpClient::new(HttpOptions {
            mirrors: vec![(
                "https://kubernetes.github.io/cloud-provider-openstack".into(),
                "http://127.0.0.1:1/cpo".into(),
            )],
            ..HttpOptions::default()
        })
        .unwrap();
        assert_eq!(
            c.effective_url("https://kubernetes.github.io/cloud-provider-openstack/index.yaml"),
            "http://127.0.0.1:1/cpo/index.yaml"
        );
        assert_eq!(c.effective_url("https://x/y"), "https://x/y");
    }

    #[test]
    fn the_settings_are_the_one_retry_policy_s() {
        let c = HttpClient::new(HttpOptions {
            attempts: 3,
            backoff: Duration::from_millis(100),
            max_wait: Duration::from_millis(350),
            ..HttpOptions::default()
        })
        .unwrap();
        let p = c.policy();
        assert_eq!(p.max_retries, 2, "three attempts are two retries");
        assert_eq!(p.backoff(5), Duration::from_millis(350));
        assert_eq!(
            p.wait(
                0,
                crate::retry::Failure::RateLimited(Duration::from_secs(100))
            ),
            Err(crate::retry::GiveUp::TooLong(Duration::from_secs(100))),
            "a server's wait beyond max_wait is not shortened but given up on"
        );
    }

    #[test]
    fn error_names_url_and_status() {
        let e = HttpError::Status {
            url: "https://x/y".into(),
            status: 503,
            detail: "HTML error page".into(),
        };
        assert_eq!(e.to_string(), "GET https://x/y: HTTP 503 (HTML error page)");
    }
}

#[cfg(test)]
mod plain_http {
    use super::*;

    #[test]
    fn plain_http_is_refused_for_non_loopback_hosts_before_connecting() {
        let client = HttpClient::new(HttpOptions {
            attempts: 1,
            ..HttpOptions::default()
        })
        .unwrap();
        // 192.0.2.0/24 is TEST-NET-1: nothing answers there, and nothing is contacted.
        for url in [
            "http://192.0.2.1/index.yaml",
            "http://example.org/index.yaml",
            "http://[2001:db8::1]/index.yaml",
        ] {
            let err = client.get(url, None).unwrap_err();
            assert!(matches!(err, HttpError::PlainHttp { .. }), "{url}: {err}");
            assert!(err.to_string().contains("use https://"), "{err}");
        }
        assert_eq!(client.stats().requests, 0, "refused before any request");
        for ok in [
            "http://127.0.0.1:1/x",
            "http://localhost/x",
            "http://[::1]/x",
            "https://example.org/x",
        ] {
            assert!(transport_allowed(&reqwest::Url::parse(ok).unwrap()), "{ok}");
        }
    }
}
