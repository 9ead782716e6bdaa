//! The fake GitHub against recordings of real api.github.com traffic
//! (tests/fixtures/github/octokit-fixtures/, from the npm package @octokit/fixtures; see the
//! README there for which scenario each file holds).
//!
//! Every recorded request is replayed, in order, against a fresh fake; its answer must agree
//! with GitHub's: the status, the headers that matter (content type, an `ETag` where GitHub
//! sent one, `Link` relations and URLs in GitHub's `/repositories/{id}` form, `Location`,
//! `x-ratelimit-*`), and the shape of the body (every key GitHub sent, with the same JSON
//! type). Ids, shas and numbers GitHub assigned are learnt from the answers and substituted
//! in later requests and expectations, so the recording's own identifiers never matter.

use crate::support;

use std::collections::BTreeMap;

use serde_json::Value;
use support::fake_github::openapi::Spec;
use support::fake_github::{Conformance, FakeGithub, FakeOptions};

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/github/octokit-fixtures"
);

struct Replay {
    fake: FakeGithub,
    http: reqwest::blocking::Client,
    /// Recorded text → the fake's (ids, shas, numbers, hosts).
    subst: BTreeMap<String, String>,
    problems: Vec<String>,
}

impl Replay {
    fn new(fake: FakeGithub) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut subst = BTreeMap::new();
        subst.insert("https://api.github.com".to_string(), fake.api_url());
        subst.insert("https://uploads.github.com".to_string(), fake.upload_url());
        Replay {
            fake,
            http: reqwest::blocking::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            subst,
            problems: Vec::new(),
        }
    }

    /// Substitute learnt identifiers in a path (whole segments and query values) or URL.
    fn map_url(&self, url: &str) -> String {
        let mut out = url.to_string();
        for host in ["https://api.github.com", "https://uploads.github.com"] {
            if let Some(rest) = out.strip_prefix(host) {
                out = format!("{}{rest}", self.subst[host]);
            }
        }
        let (path, query) = match out.split_once('?') {
            Some((p, q)) => (p.to_string(), Some(q.to_string())),
            None => (out.clone(), None),
        };
        let map = |s: &str| self.subst.get(s).cloned().unwrap_or_else(|| s.to_string());
        let path: Vec<String> = path.split('/').map(map).collect();
        let mut out = path.join("/");
        if let Some(q) = query {
            let q: Vec<String> = q
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, v)) => format!("{k}={}", map(v)),
                    None => kv.to_string(),
                })
                .collect();
            out = format!("{out}?{}", q.join("&"));
        }
        out
    }

    fn map_value(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => {
                Value::String(self.subst.get(s).cloned().unwrap_or_else(|| s.to_string()))
            }
            Value::Number(n) => match self.subst.get(&n.to_string()) {
                Some(x) => x.parse::<u64>().map(Value::from).unwrap_or(v.clone()),
                None => v.clone(),
            },
            Value::Array(a) => Value::Array(a.iter().map(|x| self.map_value(x)).collect()),
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| (k.clone(), self.map_value(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// Learn GitHub's identifiers from a recorded answer and the fake's answer to the same.
    fn learn(&mut self, recorded: &Value, got: &Value, key: &str) {
        match (recorded, got) {
            (Value::Object(a), Value::Object(b)) => {
                for (k, x) in a {
                    if let Some(y) = b.get(k) {
                        self.learn(x, y, k);
                    }
                }
            }
            (Value::Array(a), Value::Array(b)) => {
                for (x, y) in a.iter().zip(b) {
                    self.learn(x, y, key);
                }
            }
            (x, y) if matches!(key, "id" | "sha" | "number") && x != y => {
                let text = |v: &Value| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                self.subst.insert(text(x), text(y));
            }
            _ => {}
        }
    }

    /// Send the recorded request `x` to the fake (its URLs and identifiers mapped to the
    /// fake's); its status, headers and body.
    fn replay(&self, x: &Value) -> (u16, reqwest::header::HeaderMap, String) {
        let url = self.map_url(&format!(
            "{}{}",
            x["scope"].as_str().unwrap(),
            x["path"].as_str().unwrap()
        ));
        let method: reqwest::Method = x["method"].as_str().unwrap().parse().unwrap();
        let mut req = self.http.request(method, &url).header(
            "authorization",
            "token 0000000000000000000000000000000000000001",
        );
        for (k, v) in x["reqheaders"].as_object().unwrap() {
            req = req.header(k.as_str(), v.as_str().unwrap());
        }
        req = match &x["body"] {
            Value::String(s) if s.is_empty() => req,
            Value::String(s) => req.body(s.clone()),
            other => req
                .header("content-type", "application/json; charset=utf-8")
                .body(self.map_value(other).to_string()),
        };
        let resp = req.send().unwrap();
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().unwrap();
        (status, headers, text)
    }

    /// The headers GitHub sent that the fake must send too: media type, an ETag, the
    /// rate-limit headers.
    fn check_headers(
        &mut self,
        at: &str,
        want: &serde_json::Map<String, Value>,
        headers: &reqwest::header::HeaderMap,
    ) {
        let got_header = |n: &str| headers.get(n).map(|v| v.to_str().unwrap().to_string());
        if let Some(ct) = want.get("content-type").and_then(Value::as_str) {
            let media = |s: &str| s.split(';').next().unwrap().trim().to_string();
            let got = got_header("content-type").unwrap_or_default();
            if media(&got) != media(ct) {
                self.problems
                    .push(format!("{at}: content-type `{got}`, GitHub sent `{ct}`"));
            }
        }
        if want.contains_key("etag") {
            match got_header("etag") {
                Some(t)
                    if (t.starts_with("W/\"") || t.starts_with('"'))
                        && t.ends_with('"')
                        && t.len() > 4 => {}
                other => self
                    .problems
                    .push(format!("{at}: GitHub sent an ETag, the fake {other:?}")),
            }
        }
        for h in [
            "x-ratelimit-limit",
            "x-ratelimit-remaining",
            "x-ratelimit-used",
            "x-ratelimit-reset",
        ] {
            if want.contains_key(h) && got_header(h).and_then(|v| v.parse::<u64>().ok()).is_none() {
                self.problems.push(format!("{at}: no numeric `{h}`"));
            }
        }
        if let Some(r) = want.get("x-ratelimit-resource")
            && got_header("x-ratelimit-resource").as_deref() != r.as_str()
        {
            self.problems.push(format!("{at}: x-ratelimit-resource"));
        }
    }

    fn exchange(&mut self, scenario: &str, i: usize, x: &Value) {
        let at = format!(
            "{scenario} #{i} {} {}",
            x["method"].as_str().unwrap(),
            x["path"].as_str().unwrap()
        );
        let (status, headers, text) = self.replay(x);

        let want_status = x["status"].as_u64().unwrap() as u16;
        if status != want_status {
            self.problems.push(format!(
                "{at}: status {status}, GitHub answered {want_status}: {text}"
            ));
            return;
        }
        let got_header = |n: &str| headers.get(n).map(|v| v.to_str().unwrap().to_string());
        let want = x["headers"].as_object().unwrap();
        self.check_headers(&at, want, &headers);

        // The body first: identifiers learnt from it map `Link` and `Location`.
        let recorded = &x["response"];
        let got: Value = match recorded {
            Value::String(s) if s.is_empty() => {
                if !text.is_empty() {
                    self.problems
                        .push(format!("{at}: GitHub sent no body, the fake `{text}`"));
                }
                Value::Null
            }
            Value::String(s) => {
                if text != *s {
                    self.problems
                        .push(format!("{at}: raw body `{text}`, GitHub sent `{s}`"));
                }
                Value::Null
            }
            _ => match serde_json::from_str(&text) {
                Ok(v) => v,
                Err(e) => {
                    self.problems.push(format!("{at}: not JSON ({e}): {text}"));
                    return;
                }
            },
        };
        if !got.is_null() {
            if let (Value::Array(a), Value::Array(b)) = (recorded, &got)
                && a.len() != b.len()
            {
                self.problems
                    .push(format!("{at}: {} items, GitHub sent {}", b.len(), a.len()));
            }
            shape(recorded, &got, "$", &at, &mut self.problems);
            self.learn(recorded, &got, "");
        }
        if let Some(l) = want.get("location").and_then(Value::as_str) {
            let expect = self.map_url(l);
            if got_header("location").as_deref() != Some(expect.as_str()) {
                self.problems.push(format!(
                    "{at}: location {:?}, expected {expect}",
                    got_header("location")
                ));
            }
        }
        if let Some(l) = want.get("link").and_then(Value::as_str) {
            let expect: BTreeMap<String, String> = links(l)
                .into_iter()
                .map(|(rel, u)| (rel, self.map_url(&u)))
                .collect();
            let got = links(&got_header("link").unwrap_or_default());
            if got != expect {
                self.problems
                    .push(format!("{at}: links {got:#?}, expected {expect:#?}"));
            }
        }
    }
}

/// `rel` → URL of a `Link` header.
fn links(h: &str) -> BTreeMap<String, String> {
    h.split(',')
        .filter_map(|part| {
            let (url, params) = part.split_once(';')?;
            let rel = params.trim().strip_prefix("rel=")?.trim_matches('"');
            Some((
                rel.to_string(),
                url.trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_string(),
            ))
        })
        .collect()
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every key GitHub sent is there, with the same JSON type (GitHub's `null` stands for data
/// the fake may well have; a value where GitHub had one must not be `null`).
fn shape(want: &Value, got: &Value, at: &str, ctx: &str, problems: &mut Vec<String>) {
    match (want, got) {
        (Value::Null, _) => {}
        (Value::Object(a), Value::Object(b)) => {
            for (k, x) in a {
                let here = format!("{at}.{k}");
                match b.get(k) {
                    Some(y) => shape(x, y, &here, ctx, problems),
                    None => problems.push(format!("{ctx}: {here} is missing")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                shape(x, y, &format!("{at}[{i}]"), ctx, problems);
            }
        }
        (x, y) if kind(x) != kind(y) => problems.push(format!(
            "{ctx}: {at} is {} ({y}), GitHub sent {} ({x})",
            kind(y),
            kind(x)
        )),
        _ => {}
    }
}

fn replay(scenario: &str, seed: impl FnOnce(&FakeGithub)) {
    let text = std::fs::read_to_string(format!("{DIR}/{scenario}.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert!(doc["source"].as_str().unwrap().contains(scenario));
    // Recordings also create repositories, files, issues and labels, which stackbot never
    // does: those requests are served unchecked; stackbot's operations are still validated.
    let fake = FakeGithub::start_with(
        FakeOptions::default().with_conformance(Conformance::KnownOperationsOnly),
    );
    seed(&fake);
    let mut r = Replay::new(fake);
    for (i, x) in doc["exchanges"].as_array().unwrap().iter().enumerate() {
        r.exchange(scenario, i, x);
    }
    assert!(
        r.problems.is_empty(),
        "the fake disagrees with GitHub's recording:\n  - {}",
        r.problems.join("\n  - ")
    );
    // The recorded requests of stackbot's operations are conformant, and so are the answers.
    r.fake.assert_conformant();
}

fn hello_world(fake: &FakeGithub) {
    fake.create_repo(
        "octokit-fixture-org/hello-world",
        "master",
        &[("README.md", b"# hello-world")],
    );
}

#[test]
fn release_assets_upload_read_update_and_delete() {
    replay("release-assets", |_| {});
}

#[test]
fn a_duplicate_asset_name_is_refused_by_the_upload_host() {
    replay("release-assets-conflict", |_| {});
}

#[test]
fn pagination_links_point_at_repositories_id() {
    replay("paginate-issues", |_| {});
}

#[test]
fn git_refs_create_update_list_and_delete() {
    replay("git-refs", |_| {});
}

#[test]
fn a_renamed_repository_redirects_301_and_307() {
    replay("rename-repository", |_| {});
}

#[test]
fn a_validation_error_names_resource_field_and_code() {
    replay("errors", |_| {});
}

#[test]
fn contents_list_a_directory_and_serve_the_raw_media_type() {
    replay("get-content", hello_world);
}

#[test]
fn a_repository_has_githubs_full_representation() {
    replay("get-repository", hello_world);
}

/// Fields GitHub's description requires that it added after these recordings were made.
const ADDED_SINCE_THE_RECORDINGS: &[&str] = &[
    "required property `digest` is missing", // release assets, 2025
    "required property `has_discussions` is missing", // repositories, late 2022
];

#[test]
fn githubs_recorded_answers_pass_the_conformance_validator() {
    // No false alarms: what GitHub really answered is valid against the vendored description
    // (but for fields the API gained after the recording), so a violation the fake reports is
    // the fake's or the forge's fault, not the validator's.
    let spec = Spec::get();
    let mut checked = 0;
    let mut problems = Vec::new();
    for entry in std::fs::read_dir(DIR).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for x in doc["exchanges"].as_array().unwrap() {
            let p = x["path"].as_str().unwrap().split('?').next().unwrap();
            let segs: Vec<String> = p
                .split('/')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            let Some(m) = spec.find(x["method"].as_str().unwrap(), &segs) else {
                continue;
            };
            let body = match &x["response"] {
                Value::String(s) => s.clone().into_bytes(),
                v => v.to_string().into_bytes(),
            };
            let ct = x["headers"]["content-type"].as_str().unwrap_or("");
            let status = x["status"].as_u64().unwrap() as u16;
            checked += 1;
            for e in spec.check_response(&m, status, ct, &body) {
                if !ADDED_SINCE_THE_RECORDINGS.iter().any(|a| e.contains(a)) {
                    problems.push(format!("{} {} {p}: {e}", path.display(), x["method"]));
                }
            }
        }
    }
    assert!(
        checked >= 15,
        "only {checked} recorded answers of stackbot's operations"
    );
    assert!(problems.is_empty(), "{problems:#?}");
}
