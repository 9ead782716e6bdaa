//! HTTP transport of the GitHub forge: one request at a time, classified into outcomes the
//! forge can reason about, with bounded retries for reads and pacing for writes.
//!
//! octocrab runs on the process's one reqwest client (`stackbot_net::client`,
//! `build_with_reqwest`), built without octocrab's retry layer: it retries POSTs after a 5xx,
//! which after a 502 that GitHub had already acted on creates duplicate drafts and refs.
//! Reads are retried here, by the one retry policy (`stackbot_net::retry`); writes are retried
//! by the forge, which first looks up whether an ambiguous attempt took effect. octocrab's and
//! reqwest's redirect following are off too (octocrab's turned a redirected POST into a GET and
//! took an unfollowed `307` for success): redirects are followed here, by the rules of
//! [`redirects`](super::redirects).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

use http::{HeaderValue, StatusCode};
use http_body_util::BodyExt;
use octocrab::{OctoBody, Octocrab};

use super::auth::Auth;
use super::cache::Cache;
use super::locked;
use super::pacing::{Pacer, WriteBudget};
use super::redirects::{Hop, MAX_HOPS, Origins, Via, next_hop};
use super::settings::Settings;
pub use super::wire::{Length, Outcome, Req, Resp};
use crate::ForgeError;
use crate::clock::SharedClock;
use crate::net::Origin;
use stackbot_net::retry::{
    self as retry, Ended, Failure, GiveUp, RetryPolicy, Step, Waits, classify_status,
};

/// Counters a caller (or a benchmark) can read: how many requests went out, how many retries.
#[derive(Debug, Default)]
pub struct Stats {
    pub requests: AtomicU64,
    pub retries: AtomicU64,
    /// Conditional reads GitHub answered `304 Not Modified` (free against the rate limit).
    pub not_modified: AtomicU64,
    /// Reads of immutable resources answered from the cache without a request.
    pub cache_hits: AtomicU64,
}

/// The octocrab clients plus everything needed to send and classify a request.
pub struct Transport {
    /// API and upload clients carry no credentials of their own: the transport adds the
    /// `Authorization` header per request, and only towards these two origins.
    api: Octocrab,
    upload: Octocrab,
    /// For redirects to another origin (asset storage): never sees a token.
    foreign: Octocrab,
    origins: Origins,
    /// The API base path (`/api/v3` on GitHub Enterprise, empty on github.com).
    pub(super) api_base_path: String,
    /// Which credentials requests carry.
    pub(super) auth: Auth,
    /// Every credential this run has held (token, JWTs, installation tokens), to scrub them
    /// from any text we produce.
    secrets: Mutex<Vec<String>>,
    pub policy: RetryPolicy,
    pacer: Pacer,
    pub budget: WriteBudget,
    pub stats: Stats,
    /// The run's clock: pacing, backoff, rate-limit resets.
    pub clock: SharedClock,
    /// Stored answers: ETags to revalidate, immutable resources to reuse.
    pub cache: Cache,
    /// Repositories GitHub redirected away from (`old` → `new`), each warned about once.
    pub(super) moved: Mutex<BTreeMap<String, String>>,
}

impl Transport {
    pub fn new(settings: &Settings, auth: Auth, clock: SharedClock) -> Result<Self, String> {
        let secrets = match &auth {
            Auth::Token(Some(t)) => vec![t.clone()],
            _ => Vec::new(),
        };
        // One engine under all three: the process's client (its TLS, timeouts and pool),
        // with redirects left to the transport (`redirects`, R3 of docs/http.md).
        let http = stackbot_net::client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build the GitHub client: {e}"))?;
        let build = |base: &str| -> Result<Octocrab, String> {
            Octocrab::builder()
                .base_uri(base)
                .map_err(|e| format!("invalid base URL `{base}`: {e}"))?
                .build_with_reqwest(http.clone())
                .map_err(|e| format!("cannot build the GitHub client: {e}"))
        };
        Ok(Transport {
            api: build(&settings.api_url)?,
            upload: build(&settings.upload_origin.to_string())?,
            // Every foreign request is an absolute URL; the base is never used.
            foreign: build(&settings.upload_origin.to_string())?,
            origins: Origins {
                api: settings.api_origin.clone(),
                upload: settings.upload_origin.clone(),
            },
            api_base_path: settings
                .api_url
                .parse::<http::Uri>()
                .map(|u| u.path().trim_end_matches('/').to_string())
                .unwrap_or_default(),
            auth,
            secrets: Mutex::new(secrets),
            policy: settings.policy.clone(),
            pacer: Pacer::new(settings.write_interval),
            budget: WriteBudget::new(settings.writes_per_hour),
            stats: Stats::default(),
            clock,
            moved: Mutex::new(BTreeMap::new()),
            cache: Cache::new(None),
        })
    }

    /// Replace every occurrence of a credential in `s`, whatever produced it.
    pub fn scrub(&self, s: impl Into<String>) -> String {
        let mut s = s.into();
        for t in locked(&self.secrets).iter() {
            if !t.is_empty() {
                s = s.replace(t.as_str(), "***");
            }
        }
        s
    }

    /// Remember a credential so [`Transport::scrub`] removes it.
    pub(super) fn add_secret(&self, s: &str) {
        locked(&self.secrets).push(s.to_string());
    }

    /// Repositories GitHub redirected away from during this run, `old` → `new`.
    pub fn moved(&self) -> BTreeMap<String, String> {
        locked(&self.moved).clone()
    }

    /// Send one attempt, following redirects as [`redirects`](super::redirects) allows, and
    /// classify the final answer. Every hop is a request GitHub counts.
    pub async fn attempt(&self, req: &Req) -> Outcome {
        let key = self.cache_key(req);
        if let Some(r) = key.as_deref().and_then(|k| self.cached_immutable(req, k)) {
            return Outcome::Ok(r);
        }
        if req.is_write() {
            self.pacer.wait(self.clock.as_ref());
        }
        let out = self.attempt_with_credentials(req, key.as_deref()).await;
        // An installation token GitHub no longer accepts (expired early, revoked): mint a new
        // one and send once more. A 401 is a definite refusal, nothing was performed.
        if let (Auth::App(app), Outcome::Refused(r), Some(repo)) = (&self.auth, &out, &req.scope)
            && r.status == StatusCode::UNAUTHORIZED
        {
            tracing::info!(
                target: "stackbot::forge::github",
                "GitHub refused the installation token for {repo}; minting a new one"
            );
            app.forget_token(repo);
            return self.attempt_with_credentials(req, key.as_deref()).await;
        }
        out
    }

    async fn attempt_with_credentials(&self, req: &Req, key: Option<&str>) -> Outcome {
        let auth = match self.credentials(req).await {
            Ok(a) => a,
            Err(o) => return o,
        };
        let stored = key.and_then(|k| self.cache.get(k));
        let etag = stored.as_ref().and_then(|e| e.etag.clone());
        let mut hop = Hop {
            via: req.target,
            uri: req.path.clone(),
            method: req.method.clone(),
            keep_body: true,
        };
        let mut hops = 0;
        loop {
            let creds = if hop.via == Via::Foreign {
                None
            } else {
                auth.clone()
            };
            let conditional = if hops == 0 { etag.as_deref() } else { None };
            let resp = match self.send(req, &hop, creds, conditional).await {
                Ok(r) => r,
                Err(o) => return o,
            };
            if !resp.status.is_redirection() || resp.status == StatusCode::NOT_MODIFIED {
                if hops > 0 {
                    self.note_move(&req.path, &hop, auth.clone()).await;
                }
                return self.revalidated(req, key, stored, resp);
            }
            // Relative locations resolve against the origin that answered.
            let current = match (Origin::parse(&hop.uri), hop.via) {
                (Some(o), _) => o,
                (None, Via::Api) => self.origins.api.clone(),
                (None, Via::Upload) => self.origins.upload.clone(),
                (None, Via::Foreign) => return Outcome::Refused(resp),
            };
            let location = crate::net::header(&resp.headers, http::header::LOCATION);
            let next = next_hop(
                &self.origins,
                &current,
                resp.status,
                location,
                &hop.method,
                req.follow_foreign,
            );
            match next {
                Some(mut next) if hops < MAX_HOPS => {
                    next.keep_body &= hop.keep_body;
                    hop = next;
                    hops += 1;
                }
                // Not followable: a definite answer the forge maps to `ForgeError::Moved`.
                _ => return Outcome::Refused(resp),
            }
        }
    }

    /// One HTTP exchange, body read. `Err` is a transport failure (the request may or may
    /// not have reached GitHub).
    /// `auth` is the `Authorization` value, if any (never given for a foreign hop).
    pub(super) async fn send(
        &self,
        req: &Req,
        hop: &Hop,
        auth: Option<HeaderValue>,
        if_none_match: Option<&str>,
    ) -> Result<Resp, Outcome> {
        self.stats.requests.fetch_add(1, Relaxed);
        let mut b = http::Request::builder()
            .method(hop.method.clone())
            .uri(hop.uri.as_str())
            .header(http::header::ACCEPT, req.accept);
        if let Some(etag) = if_none_match {
            b = b.header(http::header::IF_NONE_MATCH, etag);
        }
        let client = match hop.via {
            Via::Api => &self.api,
            Via::Upload => &self.upload,
            Via::Foreign => &self.foreign,
        };
        if hop.via != Via::Foreign {
            b = b.header("x-github-api-version", crate::net::GITHUB_API_VERSION);
            if let Some(auth) = auth {
                b = b.header(http::header::AUTHORIZATION, auth);
            }
        }
        let body = match (&req.body, hop.keep_body) {
            (Some((bytes, ct)), true) => {
                b = b.header(http::header::CONTENT_TYPE, *ct);
                OctoBody::from(bytes.clone())
            }
            _ => {
                b = b.header(http::header::CONTENT_LENGTH, "0");
                OctoBody::empty()
            }
        };
        let request = b
            .body(body)
            .map_err(|e| Outcome::Ambiguous(self.scrub(format!("bad request: {e}")), None))?;
        let host = self.host_of(hop);
        // The activity line (the binary's cli::activity::TARGET) says what the run waits for.
        tracing::debug!(
            target: "stackbot::activity",
            "GitHub: {} {}",
            hop.method,
            self.scrub(hop.uri.clone())
        );
        if let Some(cause) = crate::net::failure::known_unresolvable(&host) {
            return Err(self.transport_failure(hop, cause));
        }
        let resp = client
            .execute(request)
            .await
            .map_err(|e| self.transport_failure(hop, crate::net::failure::classify(&e, &host)))?;
        let (parts, body) = resp.into_parts();
        let limit = usize::try_from(req.length.max()).unwrap_or(usize::MAX);
        let body = match http_body_util::Limited::new(body, limit).collect().await {
            Ok(c) => c.to_bytes().to_vec(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                return Err(Outcome::Failed(self.too_long(req, hop)));
            }
            Err(e) => {
                return Err(Outcome::Ambiguous(
                    self.scrub(format!("connection lost while reading the answer: {e}")),
                    Some(crate::net::failure::Cause::Dropped { host }),
                ));
            }
        };
        // Fewer bytes than GitHub listed: a cut answer, asked again (a read), and never
        // stored as what an immutable resource holds.
        if let Length::Listed(listed) = req.length
            && parts.status.is_success()
            && body.len() as u64 != listed
        {
            return Err(Outcome::Ambiguous(
                format!(
                    "GitHub listed {listed} bytes for it and sent {}",
                    body.len()
                ),
                None,
            ));
        }
        Ok(Resp {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    }

    /// An answer past [`Req::length`]: a definite refusal, not repeated (asked again, it is
    /// as long), its bytes past the bound never held. Named by its hop: a caller that set the
    /// bound names what it asked for ([`relabel`]).
    fn too_long(&self, req: &Req, hop: &Hop) -> ForgeError {
        ForgeError::Rejected {
            what: format!("{} {}", hop.method, self.scrub(hop.uri.clone())),
            reason: format!(
                "the answer is longer than the {} bytes read for it; the rest was not read",
                req.length.max()
            ),
        }
    }

    /// The host a hop goes to (relative paths go to the API or upload host).
    fn host_of(&self, hop: &Hop) -> String {
        match (Origin::parse(&hop.uri), hop.via) {
            (Some(o), _) => o.host().to_string(),
            (None, Via::Upload) => self.origins.upload.host().to_string(),
            (None, _) => self.origins.api.host().to_string(),
        }
    }

    /// A request that got no answer ([`crate::net::failure`]): ambiguous (retried, and a
    /// write is looked up first) when a retry may get through; definite when it cannot heal in
    /// seconds (the name does not resolve, TLS fails), so no time goes into retries.
    fn transport_failure(&self, hop: &Hop, cause: crate::net::failure::Cause) -> Outcome {
        let what = format!("{} {}", hop.method, self.scrub(hop.uri.clone()));
        if cause.heals_in_seconds() {
            return Outcome::Ambiguous(
                self.scrub(format!(
                    "no answer ({cause}); the request may or may not have arrived"
                )),
                Some(cause),
            );
        }
        crate::net::failure::record(&what, &cause);
        Outcome::Failed(ForgeError::Transient {
            what,
            reason: self.scrub(cause.to_string()),
        })
    }

    /// The answer as an outcome, by the one retry policy's reading of it
    /// ([`classify_status`]).
    pub(super) fn classify(&self, resp: Resp) -> Outcome {
        if resp.status.is_success() {
            return Outcome::Ok(resp);
        }
        let failure = classify_status(resp.status, &resp.headers, &resp.body, self.clock.now());
        let Some(failure) = failure else {
            return Outcome::Refused(resp);
        };
        let (msg, _) = resp.message();
        let reason = self.scrub(format!("{} {msg}", resp.status));
        match failure {
            Failure::RateLimited(wait) => Outcome::RateLimited(wait, reason),
            Failure::Transient(_) => Outcome::Ambiguous(reason, None),
        }
    }

    /// The one retry loop ([`stackbot_net::retry::run`]) on the forge's policy and clock:
    /// `attempt` says which outcomes may be repeated (through [`step`]); every retry is
    /// counted and logged. `by`: no wait may end after it. The caller turns the end into its
    /// error ([`Transport::ended`], [`Transport::gave_up`]).
    pub async fn retried<T>(
        &self,
        what: &str,
        by: Option<chrono::DateTime<chrono::Utc>>,
        attempt: impl AsyncFnMut(u32) -> Step<T, Outcome>,
    ) -> Result<T, Ended<Outcome>> {
        let waits = Waits {
            clock: Some(self.clock.as_ref()),
            by,
        };
        let retrying = |n: u32, wait: std::time::Duration, last: &Outcome| {
            self.stats.retries.fetch_add(1, Relaxed);
            tracing::warn!(
                target: "stackbot::forge::github",
                "{what}: attempt {} failed ({}); retrying in {} ms",
                n + 1,
                reason(last),
                wait.as_millis()
            );
        };
        retry::run(&self.policy, waits, attempt, retrying).await
    }

    /// The error a retried request ends with: a definite failure as it is, anything else
    /// transient, naming why it was not (or no longer) repeated.
    pub fn ended(&self, what: &str, ended: Ended<Outcome>) -> ForgeError {
        let reason = match ended {
            Ended::Stopped(Outcome::Failed(e)) => return e,
            Ended::Stopped(other) => reason(&other),
            Ended::GaveUp {
                why,
                attempts,
                last,
            } => self.gave_up(what, why, attempts, &last, None),
        };
        ForgeError::Transient {
            what: what.to_string(),
            reason,
        }
    }

    /// Why the loop gave up after `attempts`, for a message. Exhausted on failures without an
    /// answer (a refused, timed-out or dropped connection every time): the host goes on the
    /// list of those the run could not reach (a 5xx is an answer, and is not).
    pub fn gave_up(
        &self,
        what: &str,
        why: GiveUp,
        attempts: u32,
        last: &Outcome,
        by: Option<chrono::DateTime<chrono::Utc>>,
    ) -> String {
        let reason = reason(last);
        match why {
            GiveUp::TooLong(w) => format!(
                "rate limited for {}s (more than the {}s we wait): {reason}",
                w.as_secs(),
                self.policy.max_rate_limit_wait.as_secs()
            ),
            GiveUp::Exhausted => {
                if let Outcome::Ambiguous(_, Some(cause)) = last {
                    crate::net::failure::record(what, cause);
                }
                format!("gave up after {attempts} attempts; last error: {reason}")
            }
            GiveUp::Deadline(wait) => format!(
                "a wait of {}s would end after its deadline ({}): {reason}",
                wait.as_secs(),
                by.map_or_else(|| "unset".to_string(), |b| b.to_string())
            ),
        }
    }

    /// A read, retried on 5xx, transport errors and rate limits. Returns the final response,
    /// which may be a refusal (404, ...) for the caller to map. A write is sent once: only
    /// its caller may repeat it ([`stackbot_net::retry::transport_may_retry`]).
    pub async fn read(&self, what: &str, req: &Req) -> Result<Result<Resp, Resp>, ForgeError> {
        let repeat = retry::transport_may_retry(&req.method);
        let attempt = async |_| match self.attempt(req).await {
            Outcome::Ok(r) => Step::Done(Ok(r)),
            Outcome::Refused(r) => Step::Done(Err(r)),
            other if repeat => step(other),
            other => Step::Stop(other),
        };
        let got = self.retried(what, None, attempt).await;
        got.map_err(|e| self.ended(what, e))
    }
}

/// An outcome as a step of the one retry loop: a rate limit (nothing was performed) and an
/// ambiguous failure may be repeated, for a caller that knows repeating is safe; the rest
/// stops the loop. GitHub's `5xx` carries no `Retry-After` that matters: it backs off.
pub fn step<T>(out: Outcome) -> Step<T, Outcome> {
    match out {
        Outcome::RateLimited(w, _) => Step::Again(Failure::RateLimited(w), out),
        Outcome::Ambiguous(..) => Step::Again(Failure::Transient(None), out),
        other => Step::Stop(other),
    }
}

/// A refusal named by what the caller asked for rather than by the URL that answered (a
/// download's storage host), as [`Transport::too_long`] names it.
pub fn relabel(what: &str, e: ForgeError) -> ForgeError {
    match e {
        ForgeError::Rejected { reason, .. } => ForgeError::Rejected {
            what: what.to_string(),
            reason,
        },
        other => other,
    }
}

/// The text of a failed outcome, for a message.
fn reason(o: &Outcome) -> String {
    match o {
        Outcome::RateLimited(_, r) | Outcome::Ambiguous(r, _) => r.clone(),
        Outcome::Failed(e) => e.to_string(),
        Outcome::Ok(r) | Outcome::Refused(r) => r.status.to_string(),
    }
}
