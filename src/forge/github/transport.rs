//! HTTP transport of the GitHub forge: one request at a time, classified into outcomes the
//! forge can reason about, with bounded retries for reads and pacing for writes.
//!
//! octocrab's own retry layer is switched off ([`RetryConfig::None`]): it retries POSTs after a
//! 5xx, which after a 502 that GitHub had already acted on creates duplicate drafts and refs.
//! Reads are retried here; writes are retried by the forge, which first looks up whether an
//! ambiguous attempt took effect.

use std::time::Duration;

use http::{HeaderMap, Method, StatusCode};
use http_body_util::BodyExt;
use octocrab::service::middleware::retry::RetryConfig;
use octocrab::{OctoBody, Octocrab};

use super::pacing::{Pacer, WriteBudget};
use super::retry::{RetryPolicy, rate_limit_wait};
use crate::clock::SharedClock;
use crate::forge::ForgeError;

/// Which client sends a request: the API one or the upload one (a separate base URI, which
/// also sidesteps octocrab's GHE upload-path rewriting bug).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Api,
    Upload,
}

/// One request, fully buffered so it can be re-sent intact.
#[derive(Debug, Clone)]
pub struct Req {
    pub method: Method,
    /// Path and query, relative to the target's base URI (or already carrying its base path).
    pub path: String,
    pub body: Option<(Vec<u8>, &'static str)>,
    pub accept: &'static str,
    pub target: Target,
}

impl Req {
    pub fn get(path: impl Into<String>) -> Self {
        Req {
            method: Method::GET,
            path: path.into(),
            body: None,
            accept: "application/vnd.github+json",
            target: Target::Api,
        }
    }

    pub fn json(method: Method, path: impl Into<String>, body: &serde_json::Value) -> Self {
        Req {
            method,
            path: path.into(),
            body: Some((body.to_string().into_bytes(), "application/json")),
            accept: "application/vnd.github+json",
            target: Target::Api,
        }
    }

    pub fn delete(path: impl Into<String>) -> Self {
        Req {
            method: Method::DELETE,
            ..Req::get(path)
        }
    }

    /// Mutating requests are paced and never retried blindly.
    pub fn is_write(&self) -> bool {
        self.method != Method::GET && self.method != Method::HEAD
    }
}

/// A response with its body read.
#[derive(Debug)]
pub struct Resp {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn json<T: serde::de::DeserializeOwned>(&self, what: &str) -> Result<T, ForgeError> {
        serde_json::from_slice(&self.body).map_err(|e| ForgeError::Io {
            what: what.to_string(),
            reason: format!("unexpected response from GitHub ({}): {e}", self.status),
        })
    }

    /// GitHub's `message` plus the `code`s of `errors[]`, for classification and messages.
    pub fn message(&self) -> (String, Vec<String>) {
        let v: serde_json::Value = serde_json::from_slice(&self.body).unwrap_or_default();
        let msg = v["message"].as_str().unwrap_or("").to_string();
        let mut codes = Vec::new();
        if let Some(errs) = v["errors"].as_array() {
            for e in errs {
                if let Some(c) = e["code"].as_str() {
                    codes.push(c.to_string());
                }
                if let Some(m) = e["message"].as_str() {
                    codes.push(m.to_string());
                }
                if let Some(m) = e.as_str() {
                    codes.push(m.to_string());
                }
            }
        }
        (msg, codes)
    }
}

/// What one attempt amounted to.
#[derive(Debug)]
pub enum Outcome {
    /// 2xx.
    Ok(Resp),
    /// The server refused before acting (secondary or primary rate limit); wait this long.
    RateLimited(Duration, String),
    /// 5xx or a transport failure: the request may or may not have taken effect.
    Ambiguous(String),
    /// Any other status: a definite answer (401, 403, 404, 409, 422, ...).
    Refused(Resp),
}

/// Counters a caller (or a benchmark) can read: how many requests went out, how many retries.
#[derive(Debug, Default)]
pub struct Stats {
    pub requests: std::sync::atomic::AtomicU64,
    pub retries: std::sync::atomic::AtomicU64,
}

/// The two octocrab clients plus everything needed to send and classify a request.
pub struct Transport {
    api: Octocrab,
    upload: Octocrab,
    /// The token, kept only to scrub it from any text we produce.
    secret: Option<String>,
    pub policy: RetryPolicy,
    pacer: Pacer,
    pub budget: WriteBudget,
    pub stats: Stats,
    /// The run's clock: pacing, backoff, rate-limit resets.
    pub clock: SharedClock,
}

impl Transport {
    pub fn new(
        api_base: &str,
        upload_base: &str,
        token: Option<String>,
        policy: RetryPolicy,
        write_interval: Duration,
        writes_per_hour: Option<u32>,
        clock: SharedClock,
    ) -> Result<Self, String> {
        let build = |base: &str| -> Result<Octocrab, String> {
            let mut b = Octocrab::builder()
                .base_uri(base)
                .map_err(|e| format!("invalid base URL `{base}`: {e}"))?
                .add_retry_config(RetryConfig::None)
                .set_connect_timeout(Some(Duration::from_secs(15)))
                .set_read_timeout(Some(Duration::from_secs(120)));
            if let Some(t) = &token {
                b = b.personal_token(t.clone());
            }
            b.build()
                .map_err(|e| format!("cannot build the GitHub client: {e}"))
        };
        Ok(Transport {
            api: build(api_base)?,
            upload: build(upload_base)?,
            secret: token,
            policy,
            pacer: Pacer::new(write_interval),
            budget: WriteBudget::new(writes_per_hour),
            stats: Stats::default(),
            clock,
        })
    }

    /// Replace every occurrence of the token in `s`, whatever produced it.
    pub fn scrub(&self, s: impl Into<String>) -> String {
        let s = s.into();
        match &self.secret {
            Some(t) if !t.is_empty() => s.replace(t.as_str(), "***"),
            _ => s,
        }
    }

    /// Send one attempt and classify it.
    pub async fn attempt(&self, req: &Req) -> Outcome {
        if req.is_write() {
            self.pacer.wait(self.clock.as_ref());
        }
        self.stats
            .requests
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut b = http::Request::builder()
            .method(req.method.clone())
            .uri(req.path.as_str())
            .header(http::header::ACCEPT, req.accept)
            .header("x-github-api-version", "2022-11-28");
        let body = match &req.body {
            Some((bytes, ct)) => {
                b = b.header(http::header::CONTENT_TYPE, *ct);
                OctoBody::from(bytes.clone())
            }
            None => {
                b = b.header(http::header::CONTENT_LENGTH, "0");
                OctoBody::empty()
            }
        };
        let request = match b.body(body) {
            Ok(r) => r,
            Err(e) => return Outcome::Ambiguous(self.scrub(format!("bad request: {e}"))),
        };
        let client = match req.target {
            Target::Api => &self.api,
            Target::Upload => &self.upload,
        };
        let resp = match client.execute(request).await {
            Ok(r) => r,
            Err(e) => {
                return Outcome::Ambiguous(self.scrub(format!(
                    "connection failed or dropped before an answer: {e}"
                )));
            }
        };
        let (parts, body) = resp.into_parts();
        let body = match body.collect().await {
            Ok(c) => c.to_bytes().to_vec(),
            Err(e) => {
                return Outcome::Ambiguous(
                    self.scrub(format!("connection lost while reading the answer: {e}")),
                );
            }
        };
        let resp = Resp {
            status: parts.status,
            headers: parts.headers,
            body,
        };
        if resp.status.is_success() || resp.status.is_redirection() {
            return Outcome::Ok(resp);
        }
        if let Some(wait) =
            rate_limit_wait(resp.status, &resp.headers, &resp.body, self.clock.now())
        {
            let (msg, _) = resp.message();
            return Outcome::RateLimited(wait, self.scrub(format!("{} {msg}", resp.status)));
        }
        if resp.status.is_server_error() {
            let (msg, _) = resp.message();
            return Outcome::Ambiguous(self.scrub(format!("{} {msg}", resp.status)));
        }
        Outcome::Refused(resp)
    }

    /// Wait before retry `n`, or give up when the budget is spent. `Err` carries the reason.
    pub fn pause(&self, what: &str, n: u32, outcome: &Outcome) -> Result<(), String> {
        let (wait, reason) = match outcome {
            Outcome::RateLimited(w, r) => {
                if *w > self.policy.max_rate_limit_wait {
                    return Err(format!(
                        "rate limited for {}s (more than the {}s we wait): {r}",
                        w.as_secs(),
                        self.policy.max_rate_limit_wait.as_secs()
                    ));
                }
                (*w, r.clone())
            }
            Outcome::Ambiguous(r) => (self.policy.backoff(n), r.clone()),
            _ => return Err("not retryable".into()),
        };
        if n >= self.policy.max_retries {
            return Err(format!(
                "gave up after {} attempts; last error: {reason}",
                n + 1
            ));
        }
        self.stats
            .retries
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::warn!(
            target: "stackbot::forge::github",
            "{what}: attempt {} failed ({reason}); retrying in {} ms",
            n + 1,
            wait.as_millis()
        );
        self.clock.sleep(wait);
        Ok(())
    }

    /// A read, retried on 5xx, transport errors and rate limits. Returns the final response,
    /// which may be a refusal (404, ...) for the caller to map.
    pub async fn read(&self, what: &str, req: &Req) -> Result<Result<Resp, Resp>, ForgeError> {
        let mut n = 0;
        loop {
            let out = self.attempt(req).await;
            match out {
                Outcome::Ok(r) => return Ok(Ok(r)),
                Outcome::Refused(r) => return Ok(Err(r)),
                other => {
                    if let Err(reason) = self.pause(what, n, &other) {
                        return Err(ForgeError::Transient {
                            what: what.to_string(),
                            reason,
                        });
                    }
                }
            }
            n += 1;
        }
    }
}
