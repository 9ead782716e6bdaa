//! The forge's HTTP cache: what makes an hourly run in which nothing changed free against
//! GitHub's primary rate limit.
//!
//! - Mutable resources (refs, release lists, pull requests, comments) are revalidated with
//!   `If-None-Match` and the stored `ETag`; GitHub answers `304 Not Modified` for free (a 304
//!   does not count against the primary limit) and the stored body is used.
//! - Immutable resources are served from the cache without asking at all: git objects by sha
//!   (blobs, trees, commits, tag objects), a file at a full commit sha, a comparison of two
//!   shas, and an asset's bytes by asset id (a re-upload gets a new id).
//!
//! Entries are partitioned by credential identity (a token sees drafts an anonymous client does
//! not), kept in memory for the run and, with a directory, on disk across runs (one JSON file
//! per request, written atomically). Only GitHub's answers are stored, never a credential: the
//! identity is a hash.

use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;

use base64::Engine as _;
use http::{Method, StatusCode};
use sha2::{Digest, Sha256};
use stackbot_net::cache::{Entry, Store};

use super::auth::Auth;
use super::redirects::Via;
use super::transport::{Outcome, Req, Resp, Transport};

/// Bodies larger than this are not stored (a release tarball read once is not worth the disk).
const MAX_BODY: usize = 32 * 1024 * 1024;

/// The cache of one forge client: the one store of `stackbot_net::cache`, in memory for the
/// run and, with a directory, on disk across runs.
#[derive(Debug)]
pub struct Cache {
    store: Store,
}

impl Cache {
    /// A cache persisted under `dir` (created on first write), or in memory only.
    pub fn new(dir: Option<PathBuf>) -> Self {
        Cache {
            store: Store::new(dir, true),
        }
    }

    /// The key of a GET: who asks, what representation, which path and query.
    pub fn key(identity: &str, accept: &str, path: &str) -> String {
        format!("{identity} {accept} {path}")
    }

    /// The stored answer for `key`, from memory or disk.
    pub fn get(&self, key: &str) -> Option<Entry> {
        self.store.get(key)
    }

    /// Store an answer (not one over [`MAX_BODY`]).
    pub fn put(&self, key: &str, etag: Option<String>, link: Option<String>, body: &[u8]) {
        if body.len() > MAX_BODY {
            return;
        }
        self.store.put(&Entry {
            key: key.to_string(),
            etag,
            link,
            body: base64::engine::general_purpose::STANDARD.encode(body),
            fetched_at: None,
        });
    }
}

impl Transport {
    /// The cache key of a request, `None` when it is not cacheable (only API reads are).
    pub(super) fn cache_key(&self, req: &Req) -> Option<String> {
        if req.method != Method::GET || req.target != Via::Api {
            return None;
        }
        let identity = match &self.auth {
            Auth::Token(Some(t)) => format!("token:{}", &hex::encode(Sha256::digest(t))[..16]),
            Auth::Token(None) => "anonymous".to_string(),
            Auth::App(app) => format!("app:{}", app.creds.app_id),
        };
        Some(Cache::key(&identity, req.accept, &req.path))
    }

    /// Store what we know an immutable resource holds (an asset we just uploaded).
    pub(super) fn remember_immutable(&self, req: &Req, body: &[u8]) {
        if let Some(key) = self.cache_key(req)
            && immutable(&req.path, req.accept)
        {
            self.cache.put(&key, None, None, body);
        }
    }

    /// An immutable resource already stored: answered without a request.
    pub(super) fn cached_immutable(&self, req: &Req, key: &str) -> Option<Resp> {
        if !immutable(&req.path, req.accept) {
            return None;
        }
        let e = self.cache.get(key)?;
        self.stats.cache_hits.fetch_add(1, Relaxed);
        Some(resp_of(&e))
    }

    /// Classify the final answer of a read, through the cache: a `304` to our conditional
    /// request is the stored answer; a fresh `200` is stored (with its `ETag`, or for good
    /// when the resource is immutable).
    pub(super) fn revalidated(
        &self,
        req: &Req,
        key: Option<&str>,
        stored: Option<Entry>,
        r: Resp,
    ) -> Outcome {
        let Some(key) = key else {
            return self.classify(r);
        };
        if r.status == StatusCode::NOT_MODIFIED
            && let Some(e) = stored
        {
            self.stats.not_modified.fetch_add(1, Relaxed);
            return Outcome::Ok(resp_of(&e));
        }
        if r.status == StatusCode::OK {
            let header = |n| crate::net::header(&r.headers, n).map(str::to_string);
            let etag = header(http::header::ETAG);
            // Every `Link` line, as the paging reads them (`net::link_header`).
            let link = crate::net::link_header(&r.headers);
            if immutable(&req.path, req.accept) {
                // Keep the `Link`: an immutable list (a comparison) may have further pages.
                self.cache.put(key, None, link, &r.body);
            } else if etag.is_some() {
                self.cache.put(key, etag, link, &r.body);
            }
        }
        self.classify(r)
    }
}

/// A stored answer as a response (`200`, with its `Link` and `ETag`).
fn resp_of(e: &Entry) -> Resp {
    let mut headers = http::HeaderMap::new();
    for (name, value) in [(http::header::LINK, &e.link), (http::header::ETAG, &e.etag)] {
        if let Some(v) = value
            .as_deref()
            .and_then(|v| http::HeaderValue::from_str(v).ok())
        {
            headers.insert(name, v);
        }
    }
    Resp {
        status: StatusCode::OK,
        headers,
        body: body_bytes(e),
    }
}

/// A stored body's bytes (stored base64: JSON has no bytes).
fn body_bytes(e: &Entry) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(&e.body)
        .unwrap_or_default()
}

/// Whether the answer to `GET path` can never change: git objects by sha, a file at a full
/// commit sha, a comparison of two shas, an asset's bytes by id.
pub fn immutable(path: &str, accept: &str) -> bool {
    let (path, query) = path.split_once('?').unwrap_or((path, ""));
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let Some(i) = segs
        .iter()
        .position(|s| *s == "repos" || *s == "repositories")
    else {
        return false;
    };
    // Skip `repos/{owner}/{name}` or `repositories/{id}`.
    let rest = if segs[i] == "repos" {
        segs.get(i + 3..)
    } else {
        segs.get(i + 2..)
    };
    let sha = |s: &str| s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit());
    let param = |name: &str| {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
    };
    match rest.unwrap_or_default() {
        ["git", "blobs" | "trees" | "commits" | "tags", s] => sha(s),
        ["contents", ..] => param("ref").is_some_and(sha),
        ["compare", spec] => spec
            .split_once("...")
            .is_some_and(|(a, b)| sha(a) && sha(b)),
        ["releases", "assets", id] => {
            accept == "application/octet-stream" && id.bytes().all(|b| b.is_ascii_digit())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";
    const JSON: &str = "application/vnd.github+json";

    #[test]
    fn only_content_addressed_answers_are_immutable() {
        for p in [
            format!("/repos/o/r/git/blobs/{SHA}"),
            format!("/api/v3/repos/o/r/git/trees/{SHA}?recursive=1"),
            format!("/repos/o/r/git/commits/{SHA}"),
            format!("/repositories/7/git/tags/{SHA}"),
            format!("/repos/o/r/contents/a/b.yaml?ref={SHA}"),
            format!("/repos/o/r/compare/{SHA}...{SHA}?per_page=100"),
        ] {
            assert!(immutable(&p, JSON), "{p}");
        }
        assert!(immutable(
            "/repos/o/r/releases/assets/12",
            "application/octet-stream"
        ));
        for p in [
            "/repos/o/r/git/ref/heads/main",
            "/repos/o/r/releases?per_page=100",
            "/repos/o/r/contents/a.yaml?ref=main",
            "/repos/o/r/compare/main...feature",
            "/repos/o/r/git/trees/main",
            "/repos/o/r/pulls?state=all",
        ] {
            assert!(!immutable(p, JSON), "{p}");
        }
        assert!(
            !immutable("/repos/o/r/releases/assets/12", JSON),
            "asset metadata (state, size) may change"
        );
    }

    #[test]
    fn entries_survive_a_new_process_and_are_partitioned_by_key() {
        let dir = tempfile::tempdir().unwrap();
        let k = Cache::key("token:abc", JSON, "/repos/o/r/releases");
        let c = Cache::new(Some(dir.path().to_path_buf()));
        c.put(
            &k,
            Some("W/\"1\"".into()),
            Some("<x>; rel=\"next\"".into()),
            b"[1]",
        );
        let again = Cache::new(Some(dir.path().to_path_buf()));
        let e = again.get(&k).unwrap();
        assert_eq!(
            (e.etag.as_deref(), body_bytes(&e)),
            (Some("W/\"1\""), b"[1]".to_vec())
        );
        assert!(
            again
                .get(&Cache::key("anonymous", JSON, "/repos/o/r/releases"))
                .is_none()
        );
        let mem = Cache::new(None);
        mem.put(&k, None, None, b"x");
        assert_eq!(body_bytes(&mem.get(&k).unwrap()), b"x");
    }
}
