//! Wire-level helpers: percent-decoding, queries, route names, entity tags, and a body that
//! breaks the connection mid-answer.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::state::sha256_hex;

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

pub fn dropped() -> Response {
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

pub fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
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
