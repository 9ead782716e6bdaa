//! A tiny HTTP/1.1 server on 127.0.0.1 for upstream tests: routes to fixture files, custom
//! status per path, ETag / If-None-Match → 304, `Link` pagination of JSON lists, flaky routes
//! and request counting. Plain `std::net`, one thread per connection, `Connection: close`.
//!
//! Include it from a test crate with `#[path = "support/upstream_server.rs"] mod upstream_server;`.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A canned response.
#[derive(Clone, Debug)]
pub struct Route {
    pub status: u16,
    pub body: Vec<u8>,
    pub headers: Vec<(String, String)>,
}

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    /// Path including the query string.
    pub target: String,
    pub if_none_match: Option<String>,
    pub authorization: Option<String>,
    /// Status answered.
    pub status: u16,
}

#[derive(Default)]
struct State {
    /// Exact targets (path + query).
    routes: BTreeMap<String, Route>,
    /// Answer the next N requests to a target with this route, then fall through.
    flaky: BTreeMap<String, (usize, Route)>,
    /// URL prefix → directory.
    dirs: Vec<(String, PathBuf)>,
    etags: bool,
    seen: Vec<Seen>,
}

/// The server; lives until the test process exits.
#[derive(Clone)]
pub struct UpstreamServer {
    port: u16,
    state: Arc<Mutex<State>>,
}

/// Where the vendored upstream snapshot lives (`tests/fixtures/upstream/`).
pub fn upstream_fixtures() -> PathBuf {
    crate::shared::shared_dir().join("upstream")
}

impl UpstreamServer {
    /// The upstream of 2026-05-01 (`tests/fixtures/upstream/`) on loopback: the GitHub
    /// releases list in pages of 25 under `/github`, the version markers under `/dl`, node
    /// images under `/capi`, the schedule under `/web`, the CVE feed and records under `/cve`,
    /// and the three Helm indexes. [`UpstreamServer::fixture_mirrors`] maps the real URLs here.
    pub fn with_fixtures() -> Self {
        let s = UpstreamServer::start();
        let f = upstream_fixtures();
        let text = std::fs::read_to_string(f.join("kubernetes-releases.json")).unwrap();
        let releases: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        s.paginate_json(
            "/github/repos/kubernetes/kubernetes/releases",
            &releases,
            25,
        );
        s.serve_dir("/dl", &f.join("dl.k8s.io/release"));
        s.serve_dir("/capi", &f.join("capi-images"));
        s.serve_dir("/web", &f);
        s.serve_dir("/cve", &f.join("cve"));
        s.serve_helm_fixtures();
        s
    }

    /// The Helm indexes of `tests/fixtures/upstream/` under `/cpo`, `/cilium` and
    /// `/metrics-server`.
    pub fn serve_helm_fixtures(&self) {
        for (path, file) in [
            ("/cpo/index.yaml", "helm-index-cpo.yaml"),
            ("/cilium/index.yaml", "helm-index-cilium.yaml"),
            (
                "/metrics-server/index.yaml",
                "helm-index-metrics-server.yaml",
            ),
        ] {
            self.set(
                path,
                200,
                std::fs::read(upstream_fixtures().join(file)).unwrap(),
            );
        }
    }

    /// `(real URL prefix, this server)` for every upstream the demo configuration reads, laid
    /// out as [`UpstreamServer::with_fixtures`] serves them (`--mirror FROM=TO`).
    pub fn fixture_mirrors(&self) -> Vec<(String, String)> {
        let u = self.url();
        [
            ("https://api.github.com", format!("{u}/github")),
            ("https://dl.k8s.io/release", format!("{u}/dl")),
            (
                "https://raw.githubusercontent.com/kubernetes/website/main/data/releases/schedule.yaml",
                format!("{u}/web/k8s-schedule.yaml"),
            ),
            (
                "https://nbg1.your-objectstorage.com/osism/openstack-k8s-capi-images",
                format!("{u}/capi"),
            ),
            (
                "https://kubernetes.github.io/cloud-provider-openstack",
                format!("{u}/cpo"),
            ),
            ("https://helm.cilium.io", format!("{u}/cilium")),
            (
                "https://kubernetes-sigs.github.io/metrics-server",
                format!("{u}/metrics-server"),
            ),
            (
                "https://kubernetes.io/docs/reference/issues-security/official-cve-feed/index.json",
                format!("{u}/cve/index.json"),
            ),
            ("https://cveawg.mitre.org/api/cve", format!("{u}/cve/records")),
        ]
        .into_iter()
        .map(|(from, to)| (from.to_string(), to))
        .collect()
    }

    /// Start on an ephemeral loopback port, ETags on.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State {
            etags: true,
            ..State::default()
        }));
        let s = state.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let s = s.clone();
                std::thread::spawn(move || handle(conn, port, &s));
            }
        });
        UpstreamServer { port, state }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Serve files below `dir` under the URL prefix `prefix` (e.g. `/capi`).
    pub fn serve_dir(&self, prefix: &str, dir: &Path) {
        self.state
            .lock()
            .unwrap()
            .dirs
            .push((prefix.trim_end_matches('/').to_string(), dir.to_path_buf()));
    }

    /// Answer `target` (path, plus query if the client sends one) with `status` and `body`
    /// (status 0: drop the connection without answering).
    pub fn set(&self, target: &str, status: u16, body: impl Into<Vec<u8>>) {
        self.set_with_headers(target, status, body, &[]);
    }

    /// Like [`set`](Self::set) with extra headers.
    pub fn set_with_headers(
        &self,
        target: &str,
        status: u16,
        body: impl Into<Vec<u8>>,
        headers: &[(&str, &str)],
    ) {
        self.state.lock().unwrap().routes.insert(
            target.to_string(),
            Route {
                status,
                body: body.into(),
                headers: headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            },
        );
    }

    /// Answer the next `times` requests to `target` with `status` (and headers), then behave
    /// normally.
    pub fn fail_next(&self, target: &str, times: usize, status: u16, headers: &[(&str, &str)]) {
        self.state.lock().unwrap().flaky.insert(
            target.to_string(),
            (
                times,
                Route {
                    status,
                    body: b"<html><body>upstream hiccup</body></html>".to_vec(),
                    headers: headers
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                },
            ),
        );
    }

    /// Remove an exact route.
    pub fn unset(&self, target: &str) {
        self.state.lock().unwrap().routes.remove(target);
    }

    /// Serve `items` as a GitHub-style paginated list at `path?per_page=100` (page 1) and
    /// `path?per_page=100&page=N`, `page_size` items per page, with `Link: rel="next"/"last"`.
    pub fn paginate_json(&self, path: &str, items: &[serde_json::Value], page_size: usize) {
        let pages: Vec<&[serde_json::Value]> = if items.is_empty() {
            vec![&[]]
        } else {
            items.chunks(page_size).collect()
        };
        let base = format!("{}{path}?per_page=100", self.url());
        let last = pages.len();
        for (i, page) in pages.iter().enumerate() {
            let n = i + 1;
            let target = if n == 1 {
                format!("{path}?per_page=100")
            } else {
                format!("{path}?per_page=100&page={n}")
            };
            let mut links = Vec::new();
            if n < last {
                links.push(format!("<{base}&page={}>; rel=\"next\"", n + 1));
                links.push(format!("<{base}&page={last}>; rel=\"last\""));
            }
            if n > 1 {
                links.push(format!("<{base}&page=1>; rel=\"first\""));
            }
            let link = links.join(", ");
            let body = serde_json::to_vec(page).unwrap();
            let headers: Vec<(&str, &str)> = if link.is_empty() {
                vec![("Content-Type", "application/json")]
            } else {
                vec![("Content-Type", "application/json"), ("Link", &link)]
            };
            self.set_with_headers(&target, 200, body, &headers);
        }
    }

    /// Turn ETag support on or off.
    pub fn etags(&self, on: bool) {
        self.state.lock().unwrap().etags = on;
    }

    /// Every request so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }

    /// Number of requests so far.
    pub fn count(&self) -> usize {
        self.state.lock().unwrap().seen.len()
    }

    /// Number of requests whose target starts with `prefix`.
    pub fn count_prefix(&self, prefix: &str) -> usize {
        self.seen()
            .iter()
            .filter(|s| s.target.starts_with(prefix))
            .count()
    }

    /// Forget the request log.
    pub fn reset_counts(&self) {
        self.state.lock().unwrap().seen.clear();
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        304 => "Not Modified",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

fn etag_of(body: &[u8]) -> String {
    // FNV-1a: stable, dependency-free, good enough to tell fixture bodies apart.
    let mut h: u64 = 0xcbf29ce484222325;
    for b in body {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("\"{h:016x}\"")
}

fn lookup(state: &mut State, target: &str) -> Route {
    if let Some((n, route)) = state.flaky.get_mut(target)
        && *n > 0
    {
        *n -= 1;
        return route.clone();
    }
    if let Some(r) = state.routes.get(target) {
        return r.clone();
    }
    let path = target.split('?').next().unwrap_or(target);
    if let Some(r) = state.routes.get(path) {
        return r.clone();
    }
    for (prefix, dir) in &state.dirs {
        if let Some(rest) = path.strip_prefix(prefix.as_str())
            && let Some(rest) = rest.strip_prefix('/')
            && !rest.split('/').any(|seg| seg == ".." || seg.is_empty())
            && let Ok(body) = std::fs::read(dir.join(rest))
        {
            return Route {
                status: 200,
                body,
                headers: vec![],
            };
        }
    }
    Route {
        status: 404,
        body: b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>NoSuchKey</Code></Error>"
            .to_vec(),
        headers: vec![],
    }
}

fn handle(conn: TcpStream, port: u16, state: &Mutex<State>) {
    let _ = port;
    let mut reader = BufReader::new(conn.try_clone().expect("clone stream"));
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let target = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_string();
    let mut if_none_match = None;
    let mut authorization = None;
    let mut content_length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            let v = v.trim().to_string();
            match k.trim().to_ascii_lowercase().as_str() {
                "if-none-match" => if_none_match = Some(v),
                "authorization" => authorization = Some(v),
                "content-length" => content_length = v.parse().unwrap_or(0),
                _ => {}
            }
        }
    }
    let mut sink = vec![0u8; content_length];
    let _ = reader.read_exact(&mut sink);

    let (route, etags) = {
        let mut st = state.lock().unwrap();
        let etags = st.etags;
        (lookup(&mut st, &target), etags)
    };
    let mut status = route.status;
    let mut headers = route.headers.clone();
    let mut body = route.body.clone();
    if status == 200 && etags {
        let tag = etag_of(&body);
        if if_none_match.as_deref() == Some(tag.as_str()) {
            status = 304;
            body.clear();
        }
        headers.push(("ETag".into(), tag));
    }
    state.lock().unwrap().seen.push(Seen {
        target,
        if_none_match,
        authorization,
        status,
    });
    if status == 0 {
        // A route with status 0 never answers: the connection is dropped, as a request that
        // times out or a proxy that gives up looks to the client.
        return;
    }
    let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (k, v) in &headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    let mut conn = conn;
    let _ = conn.write_all(out.as_bytes());
    let _ = conn.write_all(&body);
    let _ = conn.flush();
}
