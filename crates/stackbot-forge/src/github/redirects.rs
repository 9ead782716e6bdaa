//! Redirects, as GitHub documents them: "assume any request may result in a redirection".
//!
//! A renamed or transferred repository answers `301` (reads) or `307` (other methods) with the
//! new location, and the request was *not* performed. The rules here:
//! - follow to the same API (or upload) origin, at most [`MAX_HOPS`] times, repeating method
//!   and body (a `307` must be repeated verbatim; GitHub's `301` on a write is not performed
//!   either, so it is repeated too, never turned into a GET);
//! - `303` is followed only by reads, as a GET;
//! - another origin is followed only by reads that ask for it (asset downloads, which GitHub
//!   sends to a storage host), without the token, and never over plain `http://` off loopback;
//! - anything else is not followed: the forge reports [`ForgeError::Moved`] naming the request
//!   and what to change in `stackbot.yaml`.
//!
//! When a repository path was redirected, the configuration names the old repository: the
//! transport warns once per repository, naming the new one.

use http::{HeaderValue, Method, StatusCode};

use super::locked;
use super::transport::{Req, Transport};

use crate::net::{Origin, scheme_allowed};

/// Most redirects followed for one request.
pub const MAX_HOPS: usize = 5;

/// Which client sends a hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The API client (token attached), path relative to the API base.
    Api,
    /// The upload client (token attached), path relative to the upload origin.
    Upload,
    /// The anonymous client: an absolute URL on another origin, no token.
    Foreign,
}

/// Where and how the next request of a redirect chain goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hop {
    pub via: Via,
    /// A path and query for `Api`/`Upload`, an absolute URL for `Foreign`.
    pub uri: String,
    pub method: Method,
    /// Whether the request body is sent again.
    pub keep_body: bool,
}

/// The origins a chain may stay on with the token.
#[derive(Debug, Clone)]
pub struct Origins {
    pub api: Origin,
    pub upload: Origin,
}

/// The next hop after a redirect answer, or `None` when it must not be followed.
/// `current` is the origin the answer came from (relative `Location`s resolve against it),
/// `method` the method just sent, `allow_foreign` whether the caller accepts another origin.
pub fn next_hop(
    origins: &Origins,
    current: &Origin,
    status: StatusCode,
    location: Option<&str>,
    method: &Method,
    allow_foreign: bool,
) -> Option<Hop> {
    let (method, keep_body) = match status {
        StatusCode::MOVED_PERMANENTLY
        | StatusCode::FOUND
        | StatusCode::TEMPORARY_REDIRECT
        | StatusCode::PERMANENT_REDIRECT => (method.clone(), true),
        StatusCode::SEE_OTHER if *method == Method::GET || *method == Method::HEAD => {
            (Method::GET, false)
        }
        _ => return None,
    };
    let location = location?.trim();
    let (origin, path) = if location.starts_with('/') && !location.starts_with("//") {
        (current.clone(), location.to_string())
    } else {
        let uri: http::Uri = location.parse().ok()?;
        let origin = Origin::of(&uri)?;
        let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_string();
        (origin, path)
    };
    let via = if origin == origins.api {
        Via::Api
    } else if origin == origins.upload {
        Via::Upload
    } else if allow_foreign
        && method == Method::GET
        && scheme_allowed(origin.scheme(), origin.host())
    {
        return Some(Hop {
            via: Via::Foreign,
            uri: format!("{origin}{path}"),
            method,
            keep_body: false,
        });
    } else {
        return None;
    };
    Some(Hop {
        via,
        uri: path,
        method,
        keep_body,
    })
}

/// `owner/name` of a `/repos/{owner}/{name}[/...]` path (after any API base path such as
/// `/api/v3`), lower-cased as GitHub compares them.
pub fn repo_of_path(path: &str) -> Option<String> {
    let path = path.split('?').next().unwrap_or(path);
    let mut segs = path.split('/').filter(|s| !s.is_empty());
    segs.by_ref().find(|s| *s == "repos")?;
    let owner = segs.next()?;
    let name = segs.next()?;
    Some(format!("{owner}/{name}").to_ascii_lowercase())
}

/// The repository id of a `/repositories/{id}[/...]` path, GitHub's form for moved
/// repositories and some pagination links.
pub fn repo_id_of_path(path: &str) -> Option<u64> {
    let path = path.split('?').next().unwrap_or(path);
    let mut segs = path.split('/').filter(|s| !s.is_empty());
    segs.by_ref().find(|s| *s == "repositories")?;
    segs.next()?.parse().ok()
}

/// Whether a redirect chain from `first` to `last` moved away from the repository `first`
/// names: `Some(old owner/name)` if so.
pub fn moved_repo(first: &str, last: &str) -> Option<String> {
    let old = repo_of_path(first)?;
    match repo_of_path(last) {
        Some(new) if new == old => None,
        _ => Some(old),
    }
}

impl Transport {
    /// After a followed redirect chain: if it left the repository the request named, the
    /// configuration names the old one. Warn once per repository, naming the new one (a
    /// `/repositories/{id}` location costs one read to learn its name).
    pub(super) async fn note_move(&self, first: &str, last: &Hop, auth: Option<HeaderValue>) {
        if last.via == Via::Foreign {
            // A download sent to the storage host (a release asset, an artifact's zip): the
            // repository did not move.
            return;
        }
        let Some(old) = moved_repo(first, &last.uri) else {
            return;
        };
        if self.moved().contains_key(&old) {
            return;
        }
        let new = match (repo_of_path(&last.uri), repo_id_of_path(&last.uri)) {
            (Some(n), _) => n,
            (None, Some(id)) => self
                .name_of(id, auth)
                .await
                .unwrap_or(format!("repository id {id}")),
            _ => last.uri.clone(),
        };
        let first_time = locked(&self.moved)
            .insert(old.clone(), new.clone())
            .is_none();
        if first_time {
            tracing::warn!(
                target: "stackbot::forge::github",
                "GitHub redirects `{old}` to `{new}` (the repository was renamed or \
                 transferred): stackbot follows the redirect, but write `{new}` in \
                 stackbot.yaml (`forge.repository`, or the tenant's `repository`) before \
                 GitHub drops the redirect or someone reuses the old name"
            );
        }
    }

    /// `owner/name` of a repository id, if GitHub tells.
    async fn name_of(&self, id: u64, auth: Option<HeaderValue>) -> Option<String> {
        let req = Req::get(format!("/repositories/{id}"));
        let hop = Hop {
            via: Via::Api,
            uri: format!("{}/repositories/{id}", self.api_base_path),
            method: http::Method::GET,
            keep_body: false,
        };
        let r = self.send(&req, &hop, auth, None).await.ok()?;
        let v: serde_json::Value = serde_json::from_slice(&r.body).ok()?;
        r.status
            .is_success()
            .then(|| v["full_name"].as_str().map(str::to_string))
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origins() -> Origins {
        Origins {
            api: Origin::parse("https://ghe.example/api/v3").unwrap(),
            upload: Origin::parse("https://uploads.ghe.example").unwrap(),
        }
    }

    fn hop(status: u16, loc: &str, m: Method, foreign: bool) -> Option<Hop> {
        let o = origins();
        next_hop(
            &o,
            &o.api,
            StatusCode::from_u16(status).unwrap(),
            Some(loc),
            &m,
            foreign,
        )
    }

    #[test]
    fn same_origin_redirects_repeat_method_and_body() {
        let h = hop(
            307,
            "https://GHE.example:443/api/v3/repositories/7/releases",
            Method::POST,
            false,
        )
        .unwrap();
        assert_eq!(
            h,
            Hop {
                via: Via::Api,
                uri: "/api/v3/repositories/7/releases".into(),
                method: Method::POST,
                keep_body: true
            }
        );
        let h = hop(301, "/api/v3/repositories/7/git/refs", Method::PATCH, false).unwrap();
        assert_eq!(
            (h.via, h.method, h.keep_body),
            (Via::Api, Method::PATCH, true)
        );
        let h = hop(301, "/api/v3/repositories/7", Method::GET, false).unwrap();
        assert_eq!(h.method, Method::GET);
        let h = hop(
            307,
            "https://uploads.ghe.example/x?name=a",
            Method::POST,
            false,
        )
        .unwrap();
        assert_eq!((h.via, h.uri.as_str()), (Via::Upload, "/x?name=a"));
    }

    #[test]
    fn other_origins_only_for_reads_that_ask_and_never_plain_http() {
        assert_eq!(hop(307, "https://evil.example/x", Method::POST, true), None);
        assert_eq!(hop(301, "https://evil.example/x", Method::GET, false), None);
        let h = hop(302, "https://objects.example/a?sig=1", Method::GET, true).unwrap();
        assert_eq!(
            (h.via, h.uri.as_str()),
            (Via::Foreign, "https://objects.example/a?sig=1")
        );
        assert_eq!(
            hop(302, "http://objects.example/a", Method::GET, true),
            None
        );
        assert!(hop(302, "http://127.0.0.1:9/a", Method::GET, true).is_some());
    }

    #[test]
    fn see_other_is_a_get_for_reads_only_and_odd_answers_are_not_followed() {
        let h = hop(303, "/api/v3/x", Method::GET, false).unwrap();
        assert!(!h.keep_body);
        assert_eq!(hop(303, "/api/v3/x", Method::POST, false), None);
        assert_eq!(hop(304, "/api/v3/x", Method::GET, false), None);
        assert_eq!(hop(300, "/api/v3/x", Method::GET, false), None);
        let o = origins();
        assert_eq!(
            next_hop(
                &o,
                &o.api,
                StatusCode::MOVED_PERMANENTLY,
                None,
                &Method::GET,
                true
            ),
            None,
            "no Location"
        );
        assert_eq!(hop(301, "relative/path", Method::GET, false), None);
    }

    #[test]
    fn repository_paths_are_recognised_in_both_forms() {
        assert_eq!(
            repo_of_path("/api/v3/repos/Scs/Cluster-Stacks/releases?page=2").as_deref(),
            Some("scs/cluster-stacks")
        );
        assert_eq!(repo_of_path("/repositories/7/releases"), None);
        assert_eq!(
            repo_id_of_path("/api/v3/repositories/7/releases?x"),
            Some(7)
        );
        assert_eq!(
            moved_repo("/repos/a/b/pulls", "/repositories/7/pulls").as_deref(),
            Some("a/b")
        );
        assert_eq!(
            moved_repo("/repos/a/b/pulls", "/repos/c/b/pulls").as_deref(),
            Some("a/b")
        );
        assert_eq!(moved_repo("/repos/a/b/x", "/repos/A/B/x"), None);
        assert_eq!(moved_repo("/app/installations/1", "/x"), None);
    }
}
