//! The request and response values the transport sends and classifies: fully buffered, so a
//! request can be re-sent intact (retries, and `307` redirects, which repeat the body).

use std::time::Duration;

use http::{HeaderMap, Method, StatusCode};

use super::redirects::{Via, repo_of_path};
use crate::ForgeError;
pub use crate::net::GITHUB_JSON;

/// The most bytes of an API answer read. GitHub's largest is its blob API's: a file of its
/// 100 MB limit is 134 MB in base64. An answer past this is not one GitHub sends, and holding
/// it whole is how a misbehaving proxy or server would take the run's memory.
pub const API_ANSWER_CEILING: u64 = 192 << 20;

/// How long an answer may be. Past the bound it is refused before the rest is held; a
/// listed one shorter than listed is cut, and asked again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    /// At most this many bytes: [`API_ANSWER_CEILING`], or a caller's bound.
    AtMost(u64),
    /// Exactly this many: GitHub listed the size (an asset, a blob).
    Listed(u64),
}

impl Length {
    /// The most bytes read.
    pub fn max(self) -> u64 {
        match self {
            Length::AtMost(n) | Length::Listed(n) => n,
        }
    }
}

/// One request, fully buffered so it can be re-sent intact.
#[derive(Debug, Clone)]
pub struct Req {
    pub method: Method,
    /// Path and query, relative to the target's base URI (or already carrying its base path).
    pub path: String,
    pub body: Option<(Vec<u8>, &'static str)>,
    pub accept: &'static str,
    /// Which client sends it: the API one or the upload one (a separate base URI, which also
    /// sidesteps octocrab's GHE upload-path rewriting bug); never [`Via::Foreign`].
    pub target: Via,
    /// Follow a redirect to another origin (without the token): asset downloads only.
    pub follow_foreign: bool,
    /// How long the answer may be (after redirects, the final answer's).
    pub length: Length,
    /// The repository (`owner/name`, lower-case) whose credentials the request needs: a
    /// GitHub App uses one installation token per repository. Taken from the path; pages of
    /// a list keep the scope of the first page (GitHub links them as `/repositories/{id}`).
    pub scope: Option<String>,
}

/// The credential scope of a repository (see [`Req::scope`]).
pub fn scope_of(repo: &crate::RepoRef) -> String {
    format!("{}/{}", repo.owner, repo.name).to_ascii_lowercase()
}

impl Req {
    pub fn get(path: impl Into<String>) -> Self {
        let path = path.into();
        Req {
            method: Method::GET,
            scope: repo_of_path(&path),
            path,
            body: None,
            accept: GITHUB_JSON,
            target: Via::Api,
            follow_foreign: false,
            length: Length::AtMost(API_ANSWER_CEILING),
        }
    }

    pub fn json(method: Method, path: impl Into<String>, body: &serde_json::Value) -> Self {
        Req {
            method,
            body: Some((body.to_string().into_bytes(), "application/json")),
            ..Req::get(path)
        }
    }

    /// A release asset's bytes: GitHub redirects these to a storage host.
    pub fn download(path: impl Into<String>) -> Self {
        Req {
            accept: "application/octet-stream",
            follow_foreign: true,
            ..Req::get(path)
        }
    }

    pub fn delete(path: impl Into<String>) -> Self {
        Req {
            method: Method::DELETE,
            ..Req::get(path)
        }
    }

    /// Mutating requests are paced and never retried blindly (the one policy's rule).
    pub fn is_write(&self) -> bool {
        !stackbot_net::retry::transport_may_retry(&self.method)
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
    /// 5xx or a transport failure: the request may or may not have taken effect. A transport
    /// failure carries its cause, so that giving up on it lists the host among those the run
    /// could not reach ([`crate::net::failure::record`]), as a DNS or TLS failure is at once.
    Ambiguous(String, Option<crate::net::failure::Cause>),
    /// Any other status: a definite answer (401, 403, 404, 409, 422, ...).
    Refused(Resp),
    /// The request could not be sent, for a reason already mapped to the trait's error
    /// (credentials: the GitHub App is not installed on the repository, ...).
    Failed(ForgeError),
}

/// Percent-encode a path (keeping `/`) or a query value (`/` encoded too).
pub fn enc(s: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            b'/' if keep_slash => out.push('/'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

pub fn is_sha(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

pub fn str_of(v: &serde_json::Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// An RFC 3339 timestamp GitHub sends (`published_at`, `created_at`, `merged_at`); `None` for
/// `null` or anything unparsable (dates are for reports, never for decisions about writes).
pub fn time_of(v: &serde_json::Value) -> Option<chrono::DateTime<chrono::Utc>> {
    v.as_str()
        .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
        .map(|t| t.with_timezone(&chrono::Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_queries_are_percent_encoded() {
        assert_eq!(enc("release/a b", true), "release/a%20b");
        assert_eq!(enc("o:release/x", false), "o%3Arelease%2Fx");
    }
}
