//! The HTTP side of the fake: listeners (API, upload host, download host), and the life of a
//! request: surface and path, fault injection, authentication, the primary rate limit,
//! conformance checks against GitHub's OpenAPI description, redirects for renamed
//! repositories, the API itself, conditional requests (`ETag`/`If-None-Match` → 304), and the
//! headers every answer carries.

use std::collections::{BTreeMap, HashMap};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::{Body, Bytes, HttpBody};
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

// ------------------------------------------------------------------------------ plumbing

/// A body that fails at once: the server aborts the connection mid-answer.
struct BrokenBody;

impl HttpBody for BrokenBody {
    type Data = Bytes;
    type Error = std::io::Error;
    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, std::io::Error>>> {
        Poll::Ready(Some(Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "fake github: connection dropped",
        ))))
    }
}

fn dropped() -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header("content-length", "4096")
        .body(Body::new(BrokenBody))
        .unwrap()
}

pub fn pct_decode(s: &str, plus_is_space: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Some(v) = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(if plus_is_space && b[i] == b'+' {
            b' '
        } else {
            b[i]
        });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Query parameters in their order (GitHub keeps it in the `Link`s it builds).
pub fn parse_query(q: Option<&str>) -> Vec<(String, String)> {
    q.unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (pct_decode(k, true), pct_decode(v, true)),
            None => (pct_decode(p, true), String::new()),
        })
        .collect()
}

pub fn enc_q(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The route template of a request (for counting and route faults). Stable names: tests and
/// benchmarks key on them.
pub fn route_of(segs: &[String], upload: bool) -> String {
    let s: Vec<&str> = segs.iter().map(|s| s.as_str()).collect();
    match s.as_slice() {
        ["downloads", ..] => "/downloads/{id}".to_string(),
        ["rate_limit"] => "/rate_limit".into(),
        ["repos", _, _] => "/repos/{owner}/{repo}".into(),
        ["repos", _, _, "git", "ref", ..] => "/repos/{owner}/{repo}/git/ref/{ref}".into(),
        ["repos", _, _, "git", "refs"] => "/repos/{owner}/{repo}/git/refs".into(),
        ["repos", _, _, "git", "refs", ..] => "/repos/{owner}/{repo}/git/refs/{ref}".into(),
        ["repos", _, _, "git", kind] => format!("/repos/{{owner}}/{{repo}}/git/{kind}"),
        ["repos", _, _, "git", kind, _] => format!("/repos/{{owner}}/{{repo}}/git/{kind}/{{sha}}"),
        ["repos", _, _, "contents", ..] => "/repos/{owner}/{repo}/contents/{path}".into(),
        ["repos", _, _, "compare", _] => "/repos/{owner}/{repo}/compare/{basehead}".into(),
        ["repos", _, _, "releases"] => "/repos/{owner}/{repo}/releases".into(),
        ["repos", _, _, "releases", "latest"] => "/repos/{owner}/{repo}/releases/latest".into(),
        ["repos", _, _, "releases", "tags", _] => {
            "/repos/{owner}/{repo}/releases/tags/{tag}".into()
        }
        ["repos", _, _, "releases", "assets", _] => {
            "/repos/{owner}/{repo}/releases/assets/{id}".into()
        }
        ["repos", _, _, "releases", _] => "/repos/{owner}/{repo}/releases/{id}".into(),
        ["repos", _, _, "releases", _, "assets"] if upload => {
            "/uploads/repos/{owner}/{repo}/releases/{id}/assets".into()
        }
        ["repos", _, _, "releases", _, "assets"] => {
            "/repos/{owner}/{repo}/releases/{id}/assets".into()
        }
        ["repos", _, _, "pulls"] => "/repos/{owner}/{repo}/pulls".into(),
        ["repos", _, _, "pulls", _] => "/repos/{owner}/{repo}/pulls/{number}".into(),
        ["repos", _, _, "pulls", _, rest] => {
            format!("/repos/{{owner}}/{{repo}}/pulls/{{number}}/{rest}")
        }
        ["repos", _, _, "issues"] => "/repos/{owner}/{repo}/issues".into(),
        ["repos", _, _, "issues", "comments", _] => {
            "/repos/{owner}/{repo}/issues/comments/{id}".into()
        }
        ["repos", _, _, "issues", _, "comments"] => {
            "/repos/{owner}/{repo}/issues/{number}/comments".into()
        }
        ["repos", _, _, rest @ ..] => format!("/repos/{{owner}}/{{repo}}/{}", rest.join("/")),
        _ => format!("/{}", s.join("/")),
    }
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// GitHub's weak entity tag of a representation.
pub fn etag_of(content_type: &str, body: &[u8]) -> String {
    let mut all = content_type.as_bytes().to_vec();
    all.push(0);
    all.extend_from_slice(body);
    format!("W/\"{}\"", sha256_hex(&all))
}

/// `If-None-Match` against an entity tag, with weak comparison (RFC 9110 §13.1.2).
pub fn none_match(if_none_match: &str, etag: &str) -> bool {
    let opaque = |t: &str| t.trim().trim_start_matches("W/").to_string();
    if_none_match
        .split(',')
        .any(|t| t.trim() == "*" || opaque(t) == opaque(etag))
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
    let request_id = format!(
        "FAKE:{:08X}",
        sh.request_seq
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );

    // Which surface, and the path below its prefix.
    let (surface, rest) = match listener {
        Surface::Api => match &sh.upload_prefix {
            Some(p) if raw_path.starts_with(&format!("{p}/")) => {
                (Surface::Uploads, raw_path[p.len()..].to_string())
            }
            _ => match raw_path.strip_prefix(&sh.api_prefix) {
                Some(r) if r.is_empty() || r.starts_with('/') => (Surface::Api, r.to_string()),
                _ => (Surface::Api, format!("/\u{0}{raw_path}")),
            },
        },
        other => (other, raw_path.clone()),
    };
    let segs: Vec<String> = rest
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| pct_decode(s, false))
        .collect();
    let segs = if surface == Surface::Objects {
        segs
    } else {
        canonical(&sh, segs)
    };
    let route = route_of(&segs, surface == Surface::Uploads);
    let write = !matches!(method, Method::GET | Method::HEAD);
    let (k, fault) = sh.pick_fault(&method, &route, write);
    {
        let mut st = sh.stats.lock().unwrap();
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
    let latency = sh.faults.lock().unwrap().plan.latency;
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let log = |status: u16, applied: bool| {
        if write {
            let mut st = sh.stats.lock().unwrap();
            st.writes.push(WriteRecord {
                index: k,
                method: method.to_string(),
                route: format!("{method} {route}"),
                path: rest.clone(),
                status,
                applied,
                fault: fault.as_ref().map(|f| format!("{f:?}")),
                at_ms: sh.started.elapsed().as_millis() as u64,
            });
        }
    };

    // The identity whose rate limit this request spends.
    let presented = header(&parts.headers, "authorization").map(|v| {
        v.trim_start_matches("Bearer ")
            .trim_start_matches("bearer ")
            .trim_start_matches("token ")
            .to_string()
    });
    // Who is asking: a token, an app (JWT), an installation token — or a refusal (401).
    let principal: Result<Principal, String> = match &presented {
        None => Ok(Principal::Anonymous),
        Some(p) => match sh.state.lock().unwrap().apps.principal(p) {
            Some(r) => r,
            None => match &sh.token {
                Some(expected) if p != expected => Err("Bad credentials".into()),
                _ => Ok(Principal::Token),
            },
        },
    };
    let identity = match (&principal, &presented, surface) {
        (_, _, Surface::Objects) => None,
        (Ok(Principal::Installation { id, .. }), _, _) => Some(format!("installation:{id}")),
        (Ok(Principal::App(id)), _, _) => Some(format!("app:{id}")),
        (_, Some(t), _) => Some(format!("token:{}", sha256_hex(t.as_bytes()))),
        (_, None, _) => Some("anonymous:127.0.0.1".to_string()),
    };
    let counted = surface != Surface::Objects && segs.as_slice() != ["rate_limit"];
    let out = |mut a: Ans, spend: bool| -> Response {
        a.finish_error(DOC_ROOT, surface == Surface::Uploads, &request_id);
        finish(&sh, a, identity.as_deref(), spend && counted, &request_id)
    };

    // Faults that stop the request before it is applied.
    match &fault {
        Some(Fault::Status(s)) => {
            log(*s, false);
            return out(Ans::msg(*s, "Server Error (injected)"), true);
        }
        Some(Fault::Drop) => {
            log(0, false);
            return dropped();
        }
        Some(Fault::SecondaryRateLimit(secs)) | Some(Fault::TooManyRequests(secs)) => {
            let status = if matches!(fault, Some(Fault::TooManyRequests(_))) {
                429
            } else {
                403
            };
            log(status, false);
            let mut a = Ans::msg(
                status,
                &format!(
                    "You have exceeded a secondary rate limit. Please wait a few minutes before \
                     you try again. If you reach out to GitHub Support for help, please include \
                     the request ID {request_id}."
                ),
            );
            a.retry_after = Some(*secs);
            return out(a, true);
        }
        Some(Fault::Delay(d)) => tokio::time::sleep(*d).await,
        _ => {}
    }

    if surface == Surface::Objects {
        let a = objects(&sh, &parts.headers, &segs, &query);
        log(a.status, false);
        return out(a, false);
    }

    // Authentication, and what the principal may reach.
    let principal = match principal {
        Ok(p) => p,
        Err(message) => {
            log(401, false);
            return out(Ans::msg(401, &message), true);
        }
    };
    let authed = !matches!(principal, Principal::Anonymous);
    if let Some(refusal) = authorize(&principal, write, &segs) {
        log(refusal.status, false);
        return out(refusal, true);
    }

    // The primary rate limit.
    if counted {
        let id = identity.clone().unwrap_or_default();
        let mut l = sh.limits.lock().unwrap();
        if l.exhausted(&id) {
            let status = l.opts.exhausted_status;
            drop(l);
            log(status, false);
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
            return out(a, false);
        }
    }

    // Conformance of the request against GitHub's description.
    let spec = (sh.conformance != Conformance::Off).then(Spec::get);
    let matched: Option<Matched<'static>> = spec.and_then(|s| s.find(method.as_str(), &segs));
    let shown = format!("{method} {raw_path}");
    let doc_url = matched
        .as_ref()
        .map(|m| m.op.doc_url.clone())
        .unwrap_or_else(|| DOC_ROOT.to_string());
    let mut invalid_body = None;
    match (&matched, spec) {
        (None, Some(_)) if sh.conformance == Conformance::Enforce => sh.violation(format!(
            "{shown}: no such operation in GitHub's description as vendored \
             (tests/fixtures/github/openapi.json; add it to operations.txt and re-run \
             scripts/github-openapi if stackbot now uses it)"
        )),
        (Some(m), Some(s)) => {
            sh.operations_seen
                .lock()
                .unwrap()
                .insert(format!("{} {}", m.op.method, m.op.template));
            let upload_op =
                m.op.template.ends_with("/releases/{release_id}/assets") && m.op.method == "POST";
            if upload_op != (surface == Surface::Uploads) {
                sh.violation(format!(
                    "{shown}: {} belongs on the {} host",
                    m.op.operation_id,
                    if upload_op { "upload" } else { "API" }
                ));
            }
            let check = s.check_request(m, &query_list, &body);
            for p in check.problems {
                sh.violation(format!("{shown} ({}): {p}", m.op.operation_id));
            }
            invalid_body = check.invalid_body;
        }
        _ => {}
    }

    if write && !authed {
        log(401, false);
        let mut a = Ans::msg(401, "Requires authentication");
        a.finish_error(&doc_url, surface == Surface::Uploads, &request_id);
        return out(a, true);
    }
    if let Some(message) = invalid_body {
        log(422, false);
        let mut a = Ans::msg(422, &message);
        a.finish_error(&doc_url, surface == Surface::Uploads, &request_id);
        return out(a, true);
    }

    // A renamed or transferred repository: 301 for GET/HEAD, 307 for the rest; not applied.
    let seg_strs: Vec<&str> = segs.iter().map(String::as_str).collect();
    if let ["repos", owner, name, tail @ ..] = seg_strs.as_slice() {
        let moved = match sh.state.lock().unwrap().lookup(owner, name) {
            Lookup::Moved(id) => Some(id),
            _ => None,
        };
        if let Some(id) = moved {
            let base = if surface == Surface::Uploads {
                &sh.urls.uploads
            } else {
                &sh.urls.api
            };
            let mut location = format!("{base}/repositories/{id}");
            for t in tail {
                location.push('/');
                location.push_str(&enc_path(t));
            }
            if let Some(q) = parts.uri.query() {
                location.push('?');
                location.push_str(q);
            }
            let status = if write { 307 } else { 301 };
            log(status, false);
            let mut a = Ans::json(
                status,
                json!({"message": "Moved Permanently", "url": location,
                       "documentation_url": "https://docs.github.com/v3/#http-redirects"}),
            );
            a.location = Some(location);
            return respond(
                &sh,
                a,
                matched.as_ref(),
                &shown,
                identity.as_deref(),
                counted,
                &request_id,
                &fault,
                &log,
                write,
            );
        }
    }

    // The API itself.
    let accept = header(&parts.headers, "accept").unwrap_or("").to_string();
    let mut ans = if segs.as_slice() == ["rate_limit"] && method == Method::GET {
        rate_limit_answer(&sh, identity.as_deref().unwrap_or_default())
    } else {
        let mut w = sh.state.lock().unwrap();
        let ctx = Ctx {
            urls: &sh.urls,
            authed,
            accept: &accept,
            query: &query,
            query_list: &query_list,
            upload: surface == Surface::Uploads,
            content_type: header(&parts.headers, "content-type").unwrap_or(""),
            download_key: &sh.download_key,
            principal: &principal,
        };
        routes::dispatch(&mut w, &ctx, &method, &segs, &body)
    };
    ans.finish_error(&doc_url, surface == Surface::Uploads, &request_id);
    // A created resource is named in `Location` (not by the upload host).
    if ans.status == 201
        && surface == Surface::Api
        && let Some(url) = ans.json.as_ref().and_then(|v| v["url"].as_str())
    {
        ans.location = Some(url.to_string());
    }

    // Conditional GETs: an unchanged representation is `304 Not Modified`, free of charge.
    let (bytes, ctype) = ans.body_bytes();
    let mut etag = None;
    if ans.ok() && ctype.is_some() {
        let t = etag_of(ctype.as_deref().unwrap_or(""), &bytes);
        if method == Method::GET
            && let Some(inm) = header(&parts.headers, "if-none-match")
            && none_match(inm, &t)
        {
            sh.stats.lock().unwrap().counts.not_modified += 1;
            let mut a = Ans::empty(304);
            a.link = ans.link.take();
            let r = finish(&sh, a, identity.as_deref(), false, &request_id);
            return with_etag(r, &t);
        }
        etag = Some(t);
    }
    let r = respond(
        &sh,
        ans,
        matched.as_ref(),
        &shown,
        identity.as_deref(),
        counted,
        &request_id,
        &fault,
        &log,
        write,
    );
    match etag {
        Some(t) if r.status().is_success() => with_etag(r, &t),
        _ => r,
    }
}

/// Validate an answer, apply after-success faults, and send it.
#[allow(clippy::too_many_arguments)]
fn respond(
    sh: &Shared,
    ans: Ans,
    matched: Option<&Matched<'_>>,
    shown: &str,
    identity: Option<&str>,
    counted: bool,
    request_id: &str,
    fault: &Option<Fault>,
    log: &dyn Fn(u16, bool),
    write: bool,
) -> Response {
    let applied = write && ans.ok();
    match fault {
        Some(Fault::AfterSuccess(s)) => {
            log(*s, applied);
            let mut a = Ans::msg(*s, "Server Error (injected after success)");
            a.finish_error(DOC_ROOT, false, request_id);
            finish(sh, a, identity, counted, request_id)
        }
        Some(Fault::DropAfterSuccess) => {
            log(0, applied);
            dropped()
        }
        _ => {
            log(ans.status, applied);
            if let Some(m) = matched {
                let (bytes, ctype) = ans.body_bytes();
                for p in Spec::get().check_response(
                    m,
                    ans.status,
                    ctype.as_deref().unwrap_or(""),
                    &bytes,
                ) {
                    sh.violation(format!(
                        "{shown} ({}) answered {}: {p}",
                        m.op.operation_id, ans.status
                    ));
                }
            }
            finish(sh, ans, identity, counted, request_id)
        }
    }
}

fn with_etag(mut r: Response, etag: &str) -> Response {
    r.headers_mut()
        .insert("etag", HeaderValue::from_str(etag).unwrap());
    r
}

fn enc_path(s: &str) -> String {
    enc_q(s)
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
