//! The HTTP side of the fake: listeners (API, upload host, download host), and the life of a
//! request: surface and path, fault injection, authentication, the primary rate limit,
//! conformance checks against GitHub's OpenAPI description, redirects for renamed
//! repositories, the API itself, conditional requests (`ETag`/`If-None-Match` → 304), and the
//! headers every answer carries.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::extract::{Request, State as AxState};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::answer::{Ans, DOC_ROOT};
use super::app::{Principal, grants, needed_permission};
use super::openapi::{Matched, Spec};
use super::ratelimit::{RateLimitOptions, RateLimiter};
use super::repr::Urls;
use super::routes::{self, Ctx};
use super::state::{Lookup, World, sha256_hex};
use super::wire::{dropped, enc_q, etag_of, header, none_match, parse_query, pct_decode, route_of};
use super::{Conformance, Counts, Fault, Faults, WriteRecord};

/// Which host a listener plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// api.github.com (or GHE's `/api/v3`).
    Api,
    /// uploads.github.com (or GHE's `/api/uploads` on the API host).
    Uploads,
    /// Where asset downloads are redirected (objects.githubusercontent.com).
    Objects,
}

#[derive(Debug, Default)]
pub struct FaultState {
    pub plan: Faults,
    pub rng: Option<fastrand::Rng>,
    pub writes_seen: usize,
    pub route_seen: HashMap<String, usize>,
}

#[derive(Debug, Default)]
pub struct Stats {
    pub counts: Counts,
    pub writes: Vec<WriteRecord>,
}

pub struct Shared {
    pub urls: Urls,
    pub api_prefix: String,
    /// Uploads on the API host under this prefix (GHE); `None`: a separate upload host.
    pub upload_prefix: Option<String>,
    pub token: Option<String>,
    pub conformance: Conformance,
    /// The signature asset download URLs carry (like a pre-signed object URL).
    pub download_key: String,
    pub started: Instant,
    pub state: Mutex<World>,
    pub faults: Mutex<FaultState>,
    pub stats: Mutex<Stats>,
    pub limits: Mutex<RateLimiter>,
    pub violations: Mutex<Vec<String>>,
    /// `METHOD template` of every operation a request was checked against.
    pub operations_seen: Mutex<std::collections::BTreeSet<String>>,
    pub request_seq: std::sync::atomic::AtomicU64,
}

impl Shared {
    pub fn new(
        urls: Urls,
        api_prefix: String,
        upload_prefix: Option<String>,
        token: Option<String>,
        conformance: Conformance,
        rate_limit: RateLimitOptions,
    ) -> Self {
        Shared {
            urls,
            api_prefix,
            upload_prefix,
            token,
            conformance,
            download_key: format!("{:016x}", fastrand::u64(..)),
            started: Instant::now(),
            state: Mutex::new(World {
                next_id: 1000,
                ..World::default()
            }),
            faults: Mutex::new(FaultState::default()),
            stats: Mutex::new(Stats::default()),
            limits: Mutex::new(RateLimiter::new(rate_limit)),
            violations: Mutex::new(Vec::new()),
            operations_seen: Mutex::new(Default::default()),
            request_seq: std::sync::atomic::AtomicU64::new(0),
        }
    }

    pub fn violation(&self, v: String) {
        self.violations.lock().unwrap().push(v);
    }

    /// Decide this request's fault (and count it for write/route indices).
    fn pick_fault(&self, method: &Method, route: &str, write: bool) -> (usize, Option<Fault>) {
        let mut f = self.faults.lock().unwrap();
        let key = format!("{method} {route}");
        let nth = {
            let n = f.route_seen.entry(key).or_insert(0);
            *n += 1;
            *n
        };
        let k = if write {
            f.writes_seen += 1;
            f.writes_seen
        } else {
            0
        };
        if write && let Some(fault) = f.plan.on_write.get(&k) {
            return (k, Some(fault.clone()));
        }
        if let Some(rf) = f
            .plan
            .on_route
            .iter()
            .find(|rf| rf.method == *method && rf.route == route && rf.nth == nth)
        {
            return (k, Some(rf.fault.clone()));
        }
        let random = f.plan.random.clone();
        if let (Some(r), Some(rng)) = (random, f.rng.as_mut()) {
            let x = rng.f64();
            let applied = rng.f64() < r.after_success;
            let status = [500, 502, 503][rng.usize(0..3)];
            if x < r.server_error {
                return (
                    k,
                    Some(if write && applied {
                        Fault::AfterSuccess(status)
                    } else {
                        Fault::Status(status)
                    }),
                );
            }
            if x < r.server_error + r.drop {
                return (
                    k,
                    Some(if write && applied {
                        Fault::DropAfterSuccess
                    } else {
                        Fault::Drop
                    }),
                );
            }
            if x < r.server_error + r.drop + r.rate_limit {
                return (k, Some(Fault::SecondaryRateLimit(r.retry_after)));
            }
        }
        (k, None)
    }
}

// ------------------------------------------------------------------------------ a request

/// `/repositories/{id}/…` → `/repos/{owner}/{name}/…` (GitHub answers both; its `Link`s and
/// redirects use the first).
fn canonical(sh: &Shared, segs: Vec<String>) -> Vec<String> {
    if let [first, id, ..] = segs.as_slice()
        && first == "repositories"
        && let Ok(id) = id.parse::<u64>()
    {
        let w = sh.state.lock().unwrap();
        if let Some(full) = w.full_name_of(id) {
            let (o, n) = full.split_once('/').unwrap();
            let mut out = vec!["repos".to_string(), o.to_string(), n.to_string()];
            out.extend(segs[2..].iter().cloned());
            return out;
        }
    }
    segs
}

/// One request on its way through the fake: what every answer to it needs to be logged,
/// counted, checked and sent.
struct Call<'a> {
    sh: &'a Shared,
    method: Method,
    /// The path below the surface's prefix (as logged).
    rest: String,
    route: String,
    /// `METHOD /path` as sent, for violation reports.
    shown: String,
    surface: Surface,
    write: bool,
    /// 1-based index among writes (what `Faults::on_write` keys on).
    k: usize,
    fault: Option<Fault>,
    /// Whose rate limit the request spends (`None` on the download host).
    identity: Option<String>,
    /// Whether the request spends a rate-limit unit at all.
    counted: bool,
    request_id: String,
}

impl Call<'_> {
    fn log(&self, status: u16, applied: bool) {
        if !self.write {
            return;
        }
        let mut st = self.sh.stats.lock().unwrap();
        st.writes.push(WriteRecord {
            index: self.k,
            method: self.method.to_string(),
            route: format!("{} {}", self.method, self.route),
            path: self.rest.clone(),
            status,
            applied,
            fault: self.fault.as_ref().map(|f| format!("{f:?}")),
            at_ms: self.sh.started.elapsed().as_millis() as u64,
        });
    }

    fn send(&self, mut a: Ans, spend: bool, doc_url: &str) -> Response {
        a.finish_error(doc_url, self.surface == Surface::Uploads, &self.request_id);
        finish(
            self.sh,
            a,
            self.identity.as_deref(),
            spend && self.counted,
            &self.request_id,
        )
    }

    /// An answer given instead of performing the request (faults, refusals, redirects).
    fn refuse(&self, a: Ans, doc_url: &str) -> Response {
        self.log(a.status, false);
        self.send(a, true, doc_url)
    }

    /// The API's answer: checked against GitHub's description, then sent — unless a fault
    /// replaces it after the request took effect.
    fn respond(&self, ans: Ans, matched: Option<&Matched<'_>>) -> Response {
        let applied = self.write && ans.ok();
        match self.fault {
            Some(Fault::AfterSuccess(s)) => {
                self.log(s, applied);
                self.send(
                    Ans::msg(s, "Server Error (injected after success)"),
                    true,
                    DOC_ROOT,
                )
            }
            Some(Fault::DropAfterSuccess) => {
                self.log(0, applied);
                dropped()
            }
            Some(Fault::Longer(n)) => {
                self.log(ans.status, applied);
                let (mut bytes, ctype) = ans.body_bytes();
                bytes.resize(bytes.len() + n, b' ');
                let ctype = ctype.unwrap_or_else(|| "application/octet-stream".into());
                self.send(Ans::raw(ans.status, bytes, &ctype), true, DOC_ROOT)
            }
            _ => {
                self.log(ans.status, applied);
                if let Some(m) = matched
                    && self.sh.conformance != Conformance::Requests
                {
                    let (bytes, ctype) = ans.body_bytes();
                    let ctype = ctype.unwrap_or_default();
                    for p in Spec::get().check_response(m, ans.status, &ctype, &bytes) {
                        self.sh.violation(format!(
                            "{} ({}) answered {}: {p}",
                            self.shown, m.op.operation_id, ans.status
                        ));
                    }
                }
                self.send(ans, true, DOC_ROOT)
            }
        }
    }
}

/// The presented token, without its scheme.
fn presented_token(h: &HeaderMap) -> Option<String> {
    header(h, "authorization").map(|v| {
        v.trim_start_matches("Bearer ")
            .trim_start_matches("bearer ")
            .trim_start_matches("token ")
            .to_string()
    })
}

/// Who is asking: a token, an app (JWT), an installation token — or GitHub's 401 message.
fn principal_of(sh: &Shared, presented: Option<&str>) -> Result<Principal, String> {
    let Some(p) = presented else {
        return Ok(Principal::Anonymous);
    };
    if let Some(r) = sh.state.lock().unwrap().apps.principal(p) {
        return r;
    }
    match &sh.token {
        Some(expected) if p != expected => Err("Bad credentials".into()),
        _ => Ok(Principal::Token),
    }
}

/// The rate-limit identity: per installation, per app, per token, per address.
fn identity_of(principal: &Result<Principal, String>, presented: Option<&str>) -> String {
    match (principal, presented) {
        (Ok(Principal::Installation { id, .. }), _) => format!("installation:{id}"),
        (Ok(Principal::App(id)), _) => format!("app:{id}"),
        (_, Some(t)) => format!("token:{}", sha256_hex(t.as_bytes())),
        (_, None) => "anonymous:127.0.0.1".to_string(),
    }
}

/// The refusal GitHub gives once the primary rate limit is spent.
fn rate_limit_exceeded(status: u16, authed: bool) -> Ans {
    let who = if authed {
        format!("user ID {}", super::repr::account_id(super::repr::VIEWER))
    } else {
        "127.0.0.1".into()
    };
    let mut message = format!("API rate limit exceeded for {who}.");
    if !authed {
        message.push_str(
            " (But here's the good news: Authenticated requests get a higher rate limit. \
             Check out the documentation for more details.)",
        );
    }
    let mut a = Ans::msg(status, &message);
    if let Some(Value::Object(m)) = a.json.as_mut() {
        m.insert(
            "documentation_url".into(),
            json!("https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"),
        );
    }
    a
}

/// `301`/`307` to `/repositories/{id}/…` when the path names a repository's former name.
fn redirect(sh: &Shared, c: &Call, segs: &[String], query: Option<&str>) -> Option<Ans> {
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let ["repos", owner, name, tail @ ..] = segs.as_slice() else {
        return None;
    };
    let Lookup::Moved(id) = sh.state.lock().unwrap().lookup(owner, name) else {
        return None;
    };
    let base = if c.surface == Surface::Uploads {
        &sh.urls.uploads
    } else {
        &sh.urls.api
    };
    let mut location = format!("{base}/repositories/{id}");
    for t in tail {
        location.push('/');
        location.push_str(&enc_q(t));
    }
    if let Some(q) = query {
        location.push('?');
        location.push_str(q);
    }
    let mut a = Ans::json(
        if c.write { 307 } else { 301 },
        json!({"message": "Moved Permanently", "url": location,
               "documentation_url": "https://docs.github.com/v3/#http-redirects"}),
    );
    a.location = Some(location);
    Some(a)
}

/// The secondary rate limit's refusal.
fn secondary_limit(status: u16, secs: u64, request_id: &str) -> Ans {
    let mut a = Ans::msg(
        status,
        &format!(
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try \
             again. If you reach out to GitHub Support for help, please include the request ID \
             {request_id}."
        ),
    );
    a.retry_after = Some(secs);
    a
}

pub async fn handle(
    AxState((sh, listener)): AxState<(Arc<Shared>, Surface)>,
    req: Request,
) -> Response {
    let (parts, body) = req.into_parts();
    let method = parts.method.clone();
    let raw_path = parts.uri.path().to_string();
    let query_list = parse_query(parts.uri.query());
    let query: BTreeMap<String, String> = query_list.iter().cloned().collect();
    let body = axum::body::to_bytes(body, 512 * 1024 * 1024)
        .await
        .unwrap_or_default()
        .to_vec();

    let (surface, rest) = surface_of(&sh, listener, &raw_path);
    let segs = segments(&sh, surface, &rest);
    let route = route_of(&segs, surface == Surface::Uploads);
    let write = !matches!(method, Method::GET | Method::HEAD);
    let (k, fault) = sh.pick_fault(&method, &route, write);
    sh.count(&method, &route, write);
    let latency = sh.faults.lock().unwrap().plan.latency;
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let presented = presented_token(&parts.headers);
    let principal = principal_of(&sh, presented.as_deref());
    let c = Call {
        sh: &sh,
        method: method.clone(),
        rest,
        route,
        shown: format!("{method} {raw_path}"),
        surface,
        write,
        k,
        fault: fault.clone(),
        identity: (surface != Surface::Objects)
            .then(|| identity_of(&principal, presented.as_deref())),
        counted: surface != Surface::Objects && segs.as_slice() != ["rate_limit"],
        request_id: sh.next_request_id(),
    };

    // Faults that stop the request before it is applied.
    if let Some(r) = c.stopped_by_fault() {
        return r;
    }
    if let Some(Fault::Delay(d)) = fault {
        tokio::time::sleep(d).await;
    }

    if surface == Surface::Objects {
        return c.download(&parts.headers, &segs, &query);
    }

    let principal = match c.authenticate(principal, &segs) {
        Ok(p) => p,
        Err(refused) => return *refused,
    };
    let authed = !matches!(principal, Principal::Anonymous);

    if let Some(r) = c.over_the_rate_limit(authed) {
        return r;
    }

    // Conformance of the request against GitHub's description.
    let spec = (sh.conformance != Conformance::Off).then(Spec::get);
    let matched: Option<Matched<'static>> = spec.and_then(|s| s.find(method.as_str(), &segs));
    let doc_url = matched
        .as_ref()
        .map_or(DOC_ROOT, |m| &m.op.doc_url)
        .to_string();
    let invalid_body = c.check_conformance(matched.as_ref(), spec, &segs, &query_list, &body);
    if write && !authed {
        return c.refuse(Ans::msg(401, "Requires authentication"), &doc_url);
    }
    if let Some(message) = invalid_body {
        return c.refuse(Ans::msg(422, &message), &doc_url);
    }
    if let Some(a) = redirect(&sh, &c, &segs, parts.uri.query()) {
        return c.respond(a, matched.as_ref());
    }

    // The API itself.
    let mut ans = c.answer(
        &parts.headers,
        &principal,
        &segs,
        &query,
        &query_list,
        &body,
    );
    ans.finish_error(&doc_url, surface == Surface::Uploads, &c.request_id);
    if surface == Surface::Api {
        name_created(&mut ans);
    }

    c.conditional(ans, matched.as_ref(), &parts.headers)
}

/// The path's segments, percent-decoded, and (except on the download host) with the owner and
/// name of a renamed or transferred repository as they are now.
fn segments(sh: &Shared, surface: Surface, rest: &str) -> Vec<String> {
    let segs: Vec<String> = rest
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| pct_decode(s, false))
        .collect();
    if surface == Surface::Objects {
        segs
    } else {
        canonical(sh, segs)
    }
}

impl Shared {
    /// The `x-github-request-id` of the next request.
    fn next_request_id(&self) -> String {
        format!(
            "FAKE:{:08X}",
            self.request_seq
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        )
    }
}

impl Call<'_> {
    /// Authentication, and what the principal may reach: the principal, or the refusal.
    fn authenticate(
        &self,
        principal: Result<Principal, String>,
        segs: &[String],
    ) -> Result<Principal, Box<Response>> {
        let principal = match principal {
            Ok(p) => p,
            Err(message) => return Err(Box::new(self.refuse(Ans::msg(401, &message), DOC_ROOT))),
        };
        if let Some(refusal) = authorize(&principal, self.write, segs) {
            return Err(Box::new(self.refuse(refusal, DOC_ROOT)));
        }
        Ok(principal)
    }

    /// A download from the object host (release assets behind their signed URLs).
    fn download(
        &self,
        headers: &HeaderMap,
        segs: &[String],
        query: &BTreeMap<String, String>,
    ) -> Response {
        let a = objects(self.sh, headers, segs, query);
        self.log(a.status, false);
        self.send(a, false, DOC_ROOT)
    }

    /// What the API answers a request that passed every check: the rate limit, or the route.
    fn answer(
        &self,
        headers: &HeaderMap,
        principal: &Principal,
        segs: &[String],
        query: &BTreeMap<String, String>,
        query_list: &[(String, String)],
        body: &[u8],
    ) -> Ans {
        let (sh, method, surface) = (self.sh, &self.method, self.surface);
        let authed = !matches!(principal, Principal::Anonymous);
        let accept = header(headers, "accept").unwrap_or("").to_string();
        if segs == ["rate_limit"] && method == Method::GET {
            rate_limit_answer(sh, self.identity.as_deref().unwrap_or_default())
        } else {
            let mut w = sh.state.lock().unwrap();
            let ctx = Ctx {
                urls: &sh.urls,
                authed,
                accept: &accept,
                query,
                query_list,
                upload: surface == Surface::Uploads,
                content_type: header(headers, "content-type").unwrap_or(""),
                download_key: &sh.download_key,
                principal,
            };
            routes::dispatch(&mut w, &ctx, method, segs, body)
        }
    }
}

/// A created resource is named in `Location` (by the API host, not the upload host).
fn name_created(ans: &mut Ans) {
    if ans.status == 201
        && let Some(url) = ans.json.as_ref().and_then(|v| v["url"].as_str())
    {
        ans.location = Some(url.to_string());
    }
}

/// Which surface a request reached, and its path below the surface's prefix.
fn surface_of(sh: &Shared, listener: Surface, raw_path: &str) -> (Surface, String) {
    match listener {
        Surface::Api => match &sh.upload_prefix {
            Some(p) if raw_path.starts_with(&format!("{p}/")) => {
                (Surface::Uploads, raw_path[p.len()..].to_string())
            }
            _ => match raw_path.strip_prefix(&sh.api_prefix) {
                Some(r) if r.is_empty() || r.starts_with('/') => (Surface::Api, r.to_string()),
                _ => (Surface::Api, format!("/\u{0}{raw_path}")),
            },
        },
        other => (other, raw_path.to_string()),
    }
}

impl Shared {
    /// Count a request by kind and route.
    fn count(&self, method: &Method, route: &str, write: bool) {
        let mut st = self.stats.lock().unwrap();
        if write {
            st.counts.writes += 1;
        } else {
            st.counts.reads += 1;
        }
        *st.counts
            .by_route
            .entry(format!("{method} {route}"))
            .or_insert(0) += 1;
    }
}

impl Call<'_> {
    /// The answer of an injected fault that stops the request before it is applied (a delay
    /// does not stop it: the caller waits).
    fn stopped_by_fault(&self) -> Option<Response> {
        Some(match self.fault {
            Some(Fault::Status(s)) => self.refuse(Ans::msg(s, "Server Error (injected)"), DOC_ROOT),
            Some(Fault::Drop) => {
                self.log(0, false);
                dropped()
            }
            Some(Fault::SecondaryRateLimit(secs)) => {
                self.refuse(secondary_limit(403, secs, &self.request_id), DOC_ROOT)
            }
            Some(Fault::TooManyRequests(secs)) => {
                self.refuse(secondary_limit(429, secs, &self.request_id), DOC_ROOT)
            }
            _ => return None,
        })
    }

    /// The primary rate limit: once spent, refused (and free) until the window resets.
    fn over_the_rate_limit(&self, authed: bool) -> Option<Response> {
        if !self.counted {
            return None;
        }
        let id = self.identity.clone().unwrap_or_default();
        let mut l = self.sh.limits.lock().unwrap();
        if !l.exhausted(&id) {
            return None;
        }
        let status = l.opts.exhausted_status;
        drop(l);
        self.log(status, false);
        Some(self.send(rate_limit_exceeded(status, authed), false, DOC_ROOT))
    }

    /// The request against GitHub's description: every problem is a violation of the fake's
    /// conformance; what it returns is why the body is invalid (answered 422), if it is.
    fn check_conformance(
        &self,
        matched: Option<&Matched<'static>>,
        spec: Option<&'static Spec>,
        segs: &[String],
        query_list: &[(String, String)],
        body: &[u8],
    ) -> Option<String> {
        let (sh, method, surface) = (self.sh, &self.method, self.surface);
        let c = self;
        let mut invalid_body = None;
        // GraphQL is no REST operation: GitHub's REST description does not list it, and its one
        // mutation stackbot sends is checked by the route itself (query and variables).
        let graphql = method == Method::POST && segs == ["graphql"];
        match (matched, spec) {
            (None, Some(_)) if graphql => {}
            (None, Some(_))
                if matches!(sh.conformance, Conformance::Enforce | Conformance::Requests) =>
            {
                sh.violation(format!(
                    "{}: no such operation in GitHub's description as vendored \
             (tests/fixtures/github/openapi.json; add it to operations.txt and re-run \
             scripts/github-openapi if stackbot now uses it)",
                    c.shown
                ))
            }
            (Some(m), Some(s)) => {
                sh.operations_seen
                    .lock()
                    .unwrap()
                    .insert(format!("{} {}", m.op.method, m.op.template));
                let upload_op = m.op.template.ends_with("/releases/{release_id}/assets")
                    && m.op.method == "POST";
                if upload_op != (surface == Surface::Uploads) {
                    sh.violation(format!(
                        "{}: {} belongs on the {} host",
                        c.shown,
                        m.op.operation_id,
                        if upload_op { "upload" } else { "API" }
                    ));
                }
                let check = s.check_request(m, query_list, body);
                for p in check.problems {
                    sh.violation(format!("{} ({}): {p}", c.shown, m.op.operation_id));
                }
                invalid_body = check.invalid_body;
            }
            _ => {}
        }
        invalid_body
    }

    /// The answer, with its ETag; `304 Not Modified` (free of charge) for a conditional GET of
    /// an unchanged representation.
    fn conditional(
        &self,
        mut ans: Ans,
        matched: Option<&Matched<'static>>,
        headers: &HeaderMap,
    ) -> Response {
        let (sh, method, c) = (self.sh, &self.method, self);
        // Conditional GETs: an unchanged representation is `304 Not Modified`, free of charge.
        let (bytes, ctype) = ans.body_bytes();
        let Some(ctype) = ctype.filter(|_| ans.ok()) else {
            return c.respond(ans, matched);
        };
        let etag = etag_of(&ctype, &bytes);
        // Serialised once: the bytes the ETag was computed from are the bytes sent.
        ans.json = None;
        ans.raw = Some((bytes, ctype));
        if method == Method::GET
            && let Some(inm) = header(headers, "if-none-match")
            && none_match(inm, &etag)
        {
            sh.stats.lock().unwrap().counts.not_modified += 1;
            return with_etag(c.send(Ans::empty(304), false, DOC_ROOT), &etag);
        }
        let r = c.respond(ans, matched);
        if r.status().is_success() {
            with_etag(r, &etag)
        } else {
            r
        }
    }
}

fn with_etag(mut r: Response, etag: &str) -> Response {
    r.headers_mut()
        .insert("etag", HeaderValue::from_str(etag).unwrap());
    r
}

/// What an app (JWT) or an installation token may reach, as on GitHub: a JWT only the app's
/// own endpoints; an installation token only its account's repositories (others are 404,
/// invisible), those it was minted for, with the permissions it carries (else 403).
fn authorize(principal: &Principal, write: bool, segs: &[String]) -> Option<Ans> {
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    let app_route = matches!(s.as_slice(), ["app", ..] | ["repos", _, _, "installation"]);
    match principal {
        Principal::App(_) if app_route => None,
        Principal::App(_) => Some(Ans::msg(403, "Resource not accessible by integration")),
        _ if app_route => Some(Ans::msg(401, "A JSON web token could not be decoded")),
        Principal::Installation {
            account,
            permissions,
            repositories,
            ..
        } => {
            let ["repos", owner, name, rest @ ..] = s.as_slice() else {
                return None;
            };
            let listed = repositories
                .as_ref()
                .is_none_or(|r| r.contains(&name.to_ascii_lowercase()));
            if !owner.eq_ignore_ascii_case(account) || !listed {
                return Some(Ans::not_found());
            }
            match needed_permission(write, rest) {
                Some((names, level)) if !grants(permissions, names, level) => {
                    Some(Ans::msg(403, "Resource not accessible by integration"))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// `GET /rate_limit` (free of charge, as on GitHub).
fn rate_limit_answer(sh: &Shared, identity: &str) -> Ans {
    let s = sh.limits.lock().unwrap().status(identity);
    let core = json!({"limit": s.limit, "remaining": s.remaining, "used": s.used, "reset": s.reset,
                      "resource": "core"});
    let other = |name: &str, limit: u64| json!({"limit": limit, "remaining": limit, "used": 0, "reset": s.reset, "resource": name});
    Ans::json(
        200,
        json!({"resources": {"core": core, "search": other("search", 30),
                             "graphql": other("graphql", 5000)},
               "rate": core}),
    )
}

/// The download host: asset bytes for a pre-signed URL, and never a token.
fn objects(
    sh: &Shared,
    headers: &HeaderMap,
    segs: &[String],
    query: &BTreeMap<String, String>,
) -> Ans {
    if headers.contains_key("authorization") {
        sh.violation(
            "GET on the download host carried an Authorization header: the token left the \
             API host (a redirect to another host must drop credentials)"
                .into(),
        );
        return Ans::raw(
            400,
            b"<Error><Code>InvalidArgument</Code><Message>Only one auth mechanism allowed; \
              only the X-Amz-Algorithm query parameter, Signature query string parameter or the \
              Authorization header should be specified</Message></Error>"
                .to_vec(),
            "application/xml",
        );
    }
    let seg_strs: Vec<&str> = segs.iter().map(String::as_str).collect();
    if let ["artifacts", id, ..] = seg_strs.as_slice() {
        if query.get("X-Amz-Signature") != Some(&sh.download_key) {
            return Ans::raw(403, b"AuthenticationFailed".to_vec(), "application/xml");
        }
        let w = sh.state.lock().unwrap();
        return match w.repos.values().find_map(|r| routes::artifact_zip(r, id)) {
            Some(a) => Ans::raw(200, a.zip.clone(), "application/zip"),
            None => Ans::raw(404, b"BlobNotFound".to_vec(), "application/xml"),
        };
    }
    let ["downloads", id, ..] = seg_strs.as_slice() else {
        return Ans::raw(404, b"Not Found".to_vec(), "text/plain");
    };
    if query.get("X-Amz-Signature") != Some(&sh.download_key) {
        return Ans::raw(
            403,
            b"<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>"
                .to_vec(),
            "application/xml",
        );
    }
    let w = sh.state.lock().unwrap();
    for repo in w.repos.values() {
        for r in &repo.releases {
            if let Some(a) = r.assets.iter().find(|a| a.id.to_string() == *id) {
                return Ans::raw(200, a.bytes.clone(), "application/octet-stream");
            }
        }
    }
    Ans::raw(404, b"Not Found".to_vec(), "text/plain")
}

/// Turn an answer into HTTP, with the headers GitHub sends on every answer.
fn finish(sh: &Shared, a: Ans, identity: Option<&str>, spend: bool, request_id: &str) -> Response {
    let mut h = HeaderMap::new();
    if let Some(id) = identity {
        let mut l = sh.limits.lock().unwrap();
        if spend {
            l.spend(id);
            sh.stats.lock().unwrap().counts.units += 1;
        }
        let s = l.status(id);
        h.insert("x-ratelimit-limit", HeaderValue::from(s.limit));
        h.insert("x-ratelimit-remaining", HeaderValue::from(s.remaining));
        h.insert("x-ratelimit-used", HeaderValue::from(s.used));
        h.insert("x-ratelimit-reset", HeaderValue::from(s.reset));
        h.insert("x-ratelimit-resource", HeaderValue::from_static("core"));
        h.insert(
            "x-github-api-version-selected",
            HeaderValue::from_static("2022-11-28"),
        );
        h.insert(
            "x-github-media-type",
            HeaderValue::from_static("github.v3; format=json"),
        );
        h.insert(
            "vary",
            HeaderValue::from_static("Accept, Authorization, Cookie, X-GitHub-OTP"),
        );
    }
    h.insert(
        "x-github-request-id",
        HeaderValue::from_str(request_id).unwrap(),
    );
    if let Some(l) = &a.link {
        h.insert("link", HeaderValue::from_str(l).unwrap());
    }
    if let Some(l) = &a.location {
        h.insert("location", HeaderValue::from_str(l).unwrap());
    }
    if let Some(s) = a.retry_after {
        h.insert("retry-after", HeaderValue::from(s));
    }
    let status = StatusCode::from_u16(a.status).unwrap();
    let (bytes, ctype) = a.body_bytes();
    match ctype {
        Some(ct) => {
            h.insert("content-type", HeaderValue::from_str(&ct).unwrap());
            (status, h, bytes).into_response()
        }
        None => (status, h).into_response(),
    }
}
