//! The GitHub (and GitHub Enterprise) forge, over the REST API with octocrab as the HTTP client.
//!
//! Requests are built by hand (paths and JSON bodies) and sent through octocrab's client with its
//! retry layer off; [`transport`] classifies every answer. That keeps three things in our hands
//! that the typed octocrab builders hide: pagination `Link` headers, `Retry-After` on secondary
//! rate limits, and the decision whether a failed POST may be repeated.
//!
//! Write safety, per kind of write:
//! - content-addressed or idempotent writes (blobs, trees, commit objects, tag objects, PATCH,
//!   DELETE) are retried as they are;
//! - creating writes (ref, release, asset, pull request, comment) are retried only after looking
//!   up whether the ambiguous attempt (5xx, dropped connection) took effect, so a 502 that GitHub
//!   had already acted on never yields a duplicate.
//!
//! Mutating requests are paced (default 1 s apart for a remote host, GitHub's advice for staying
//! inside the secondary rate limits), and capped per rolling hour (`writes_per_hour`, default
//! 450 for a remote host): a write over the cap is not sent but fails as transient, so the next
//! run continues. Plain `http://` is refused for anything but loopback, and
//! TLS verification has no off switch.

mod transport;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Duration;

use base64::Engine as _;
use http::{Method, StatusCode};
use serde_json::{Value, json};

pub use self::transport::RetryPolicy;
use self::transport::{Outcome, Req, Resp, Target, Transport};
use crate::config::{Committer, GithubForgeConfig};
use crate::forge::{
    AssetInfo, CommentInfo, CommitInfo, FileChanges, Forge, ForgeError, ForgeResult, PullInfo,
    PullState, ReleaseInfo, RepoRef,
};

/// The GitHub forge. Synchronous on the outside (the [`Forge`] trait), async inside on its own
/// runtime; safe to call from several threads at once.
pub struct GithubForge {
    rt: tokio::runtime::Runtime,
    t: Transport,
    api_url: String,
    api_origin: String,
    upload_origin: String,
    token_env: String,
    has_token: bool,
    committer: Committer,
    /// Release id → its `upload_url` template, learnt from every release we read.
    upload_urls: Mutex<HashMap<u64, String>>,
}

impl std::fmt::Debug for GithubForge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GithubForge")
            .field("api_url", &self.api_url)
            .field("upload_origin", &self.upload_origin)
            .field("token_env", &self.token_env)
            .field(
                "token",
                &if self.has_token {
                    "<redacted>"
                } else {
                    "<none>"
                },
            )
            .finish()
    }
}

/// `scheme://authority` of a validated URL.
fn origin(u: &http::Uri) -> String {
    format!(
        "{}://{}",
        u.scheme_str().unwrap_or("https"),
        u.authority().map(|a| a.as_str()).unwrap_or("")
    )
}

/// Whether a host is loopback (127.0.0.0/8, ::1, localhost).
fn is_loopback(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost")
        || h.parse::<IpAddr>()
            .map(|ip| ip.is_loopback())
            .unwrap_or(false)
}

/// Parse a configured URL; plain `http://` only for loopback hosts, because the token would
/// otherwise cross the network unencrypted.
fn check_url(field: &str, url: &str) -> ForgeResult<http::Uri> {
    let reject = |reason: String| ForgeError::Rejected {
        what: format!("`{field}` (`{url}`)"),
        reason,
    };
    let u: http::Uri = url.parse().map_err(|e| {
        reject(format!(
            "not a URL: {e}; write e.g. `https://api.github.com`"
        ))
    })?;
    let host = u
        .host()
        .ok_or_else(|| reject("the URL has no host".into()))?;
    match u.scheme_str() {
        Some("https") => Ok(u),
        Some("http") if is_loopback(host) => Ok(u),
        Some("http") => Err(reject(
            "plain http:// is only allowed for loopback hosts (127.0.0.0/8, ::1, localhost); \
             use https:// (TLS is always verified)"
                .into(),
        )),
        _ => Err(reject("the URL must start with https://".into())),
    }
}

/// Percent-encode a path (keeping `/`) or a query value (`/` encoded too).
fn enc(s: &str, keep_slash: bool) -> String {
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

/// The `rel="next"` target of a `Link` header.
fn next_link(headers: &http::HeaderMap) -> Option<String> {
    let link = headers.get(http::header::LINK)?.to_str().ok()?;
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        let is_next = params
            .split(';')
            .any(|p| p.trim().replace(' ', "") == "rel=\"next\"");
        is_next.then(|| {
            url.trim()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_string()
        })
    })
}

fn is_sha(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn str_of(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

impl GithubForge {
    /// Build a client for `cfg`. `token` is read by the caller from the variable named in
    /// `cfg.token_env`; without one only public data is visible (no drafts) and writes fail
    /// with [`ForgeError::Unauthorized`].
    pub fn new(cfg: &GithubForgeConfig, token: Option<String>) -> Result<Self, ForgeError> {
        let token = token.filter(|t| !t.trim().is_empty());
        let api = check_url("forge.github.api_url", cfg.api_url.trim_end_matches('/'))?;
        let api_host = api.host().unwrap_or_default().to_string();
        let upload_origin = match &cfg.upload_url {
            Some(u) => origin(&check_url("forge.github.upload_url", u)?),
            None if api_host.eq_ignore_ascii_case("api.github.com") => {
                "https://uploads.github.com".to_string()
            }
            // GitHub Enterprise serves uploads on the API host (`/api/uploads`); a fake too.
            None => origin(&api),
        };
        let loopback = is_loopback(&api_host);
        let policy = {
            let mut p = RetryPolicy::for_host(loopback);
            if let Some(n) = cfg.max_retries {
                p.max_retries = n;
            }
            p
        };
        let interval =
            Duration::from_millis(
                cfg.write_interval_ms
                    .unwrap_or(if loopback { 0 } else { 1000 }),
            );
        let writes_per_hour = match cfg.writes_per_hour {
            Some(0) => {
                return Err(ForgeError::Rejected {
                    what: "forge.github.writes_per_hour".into(),
                    reason: "must be at least 1 (leave it out for the default: 450 for a \
                             remote host, unlimited for loopback)"
                        .into(),
                });
            }
            Some(n) => Some(n),
            None if loopback => None,
            None => Some(450),
        };
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("stackbot-github")
            .enable_all()
            .build()
            .map_err(|e| ForgeError::Io {
                what: "GitHub client runtime".into(),
                reason: e.to_string(),
            })?;
        let api_url = cfg.api_url.trim_end_matches('/').to_string();
        let has_token = token.is_some();
        let t = {
            let _g = rt.enter();
            Transport::new(
                &api_url,
                &upload_origin,
                token,
                policy,
                interval,
                writes_per_hour,
            )
            .map_err(|reason| ForgeError::Rejected {
                what: "forge.github".into(),
                reason,
            })?
        };
        Ok(GithubForge {
            rt,
            t,
            api_origin: origin(&api),
            api_url,
            upload_origin,
            token_env: cfg.token_env.clone(),
            has_token,
            committer: Committer::default(),
            upload_urls: Mutex::new(HashMap::new()),
        })
    }

    /// Author and committer of commits and tags (the config's `forge.committer`).
    pub fn with_committer(mut self, committer: &Committer) -> Self {
        self.committer = committer.clone();
        self
    }

    /// Override the retry policy (tests and benchmarks).
    pub fn with_retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.t.policy = policy;
        self
    }

    /// Requests sent so far (every attempt counts) and how many of them were retries.
    pub fn request_counts(&self) -> (u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        (
            self.t.stats.requests.load(Relaxed),
            self.t.stats.retries.load(Relaxed),
        )
    }

    fn repo_path(repo: &RepoRef) -> String {
        format!(
            "/repos/{}/{}",
            enc(&repo.owner, false),
            enc(&repo.name, false)
        )
    }

    /// Map a definite refusal to the error the trait promises.
    fn refusal(&self, what: &str, r: &Resp) -> ForgeError {
        let (msg, codes) = r.message();
        let msg = self.t.scrub(msg);
        let what = what.to_string();
        let all = format!("{msg} {}", codes.join(" ")).to_ascii_lowercase();
        match r.status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => ForgeError::Unauthorized {
                what: if msg.is_empty() {
                    what
                } else {
                    format!("{what} (GitHub: {msg})")
                },
                token_env: self.token_env.clone(),
            },
            StatusCode::NOT_FOUND => ForgeError::NotFound { what },
            StatusCode::UNPROCESSABLE_ENTITY if all.contains("fast forward") => {
                ForgeError::Conflict { what }
            }
            StatusCode::UNPROCESSABLE_ENTITY
                if all.contains("already_exists") || all.contains("already exists") =>
            {
                ForgeError::AlreadyExists { what }
            }
            s => ForgeError::Rejected {
                what,
                reason: self
                    .t
                    .scrub(format!("GitHub answered {s}: {msg} {}", codes.join("; "))),
            },
        }
    }

    // ---------------------------------------------------------------- request helpers

    /// GET that must succeed.
    async fn get(&self, what: &str, path: &str) -> ForgeResult<Resp> {
        match self.t.read(what, &Req::get(path)).await? {
            Ok(r) => Ok(r),
            Err(r) => Err(self.refusal(what, &r)),
        }
    }

    /// GET where 404 (or 409 "repository is empty") means "absent".
    async fn get_opt(&self, what: &str, path: &str) -> ForgeResult<Option<Resp>> {
        match self.t.read(what, &Req::get(path)).await? {
            Ok(r) => Ok(Some(r)),
            Err(r) if r.status == StatusCode::NOT_FOUND || r.status == StatusCode::CONFLICT => {
                Ok(None)
            }
            Err(r) => Err(self.refusal(what, &r)),
        }
    }

    /// Every page of a list endpoint, following `Link: rel="next"`. `items` picks the array
    /// out of each page (the page itself for plain lists).
    async fn get_all(
        &self,
        what: &str,
        first: String,
        items: impl Fn(Value) -> Vec<Value>,
    ) -> ForgeResult<Vec<Value>> {
        let mut out = Vec::new();
        let mut next = Some(first);
        let mut pages = 0;
        while let Some(path) = next.take() {
            pages += 1;
            if pages > 10_000 {
                return Err(ForgeError::Io {
                    what: what.into(),
                    reason: "more than 10000 pages; the Link headers loop".into(),
                });
            }
            let r = self.get(what, &path).await?;
            out.extend(items(r.json(what)?));
            if let Some(url) = next_link(&r.headers) {
                next = Some(self.api_path_of(what, &url)?);
            }
        }
        Ok(out)
    }

    /// Turn an absolute URL GitHub gave us into a path for the API client, refusing any host
    /// but the API's own (the token must not follow a link elsewhere).
    fn api_path_of(&self, what: &str, url: &str) -> ForgeResult<String> {
        let u: http::Uri = url.parse().map_err(|_| ForgeError::Io {
            what: what.into(),
            reason: format!("GitHub returned an unparsable link `{url}`"),
        })?;
        if u.authority().is_some() && origin(&u) != self.api_origin {
            return Err(ForgeError::Io {
                what: what.into(),
                reason: format!(
                    "GitHub linked to `{}`, not the configured API host `{}`",
                    origin(&u),
                    self.api_origin
                ),
            });
        }
        Ok(u.path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/")
            .to_string())
    }

    /// Take one attempt from the hourly write budget; every attempt counts, since GitHub
    /// counts every request that reaches it.
    fn spend_write(&self, what: &str) -> ForgeResult<()> {
        self.t
            .budget
            .spend()
            .map_err(|reason| ForgeError::Transient {
                what: what.into(),
                reason,
            })
    }

    /// A write that may simply be repeated (PATCH with the full desired state, DELETE,
    /// content-addressed objects). Returns the final answer and whether an earlier attempt
    /// was ambiguous (so a 404 on DELETE means "already gone").
    async fn write_idem(&self, what: &str, req: &Req) -> ForgeResult<(Result<Resp, Resp>, bool)> {
        let mut ambiguous = false;
        let mut n = 0;
        loop {
            self.spend_write(what)?;
            match self.t.attempt(req).await {
                Outcome::Ok(r) => return Ok((Ok(r), ambiguous)),
                Outcome::Refused(r) => return Ok((Err(r), ambiguous)),
                other => {
                    ambiguous |= matches!(other, Outcome::Ambiguous(_));
                    self.t.pause(what, n, &other).await.map_err(|reason| {
                        ForgeError::Transient {
                            what: what.into(),
                            reason,
                        }
                    })?;
                }
            }
            n += 1;
        }
    }

    /// An idempotent write whose answer must be 2xx.
    async fn write_ok(&self, what: &str, req: &Req) -> ForgeResult<Resp> {
        match self.write_idem(what, req).await?.0 {
            Ok(r) => Ok(r),
            Err(r) => Err(self.refusal(what, &r)),
        }
    }

    /// A creating write. After an ambiguous attempt, `lookup` decides whether it took effect
    /// (`Some`: done, return that) before anything is sent again.
    async fn write_checked<T>(
        &self,
        what: &str,
        req: &Req,
        parse: impl Fn(&Resp) -> ForgeResult<T>,
        lookup: impl AsyncFn() -> ForgeResult<Option<T>>,
    ) -> ForgeResult<T> {
        let mut ambiguous = false;
        let mut n = 0;
        loop {
            self.spend_write(what)?;
            match self.t.attempt(req).await {
                Outcome::Ok(r) => return parse(&r),
                Outcome::Refused(r) => {
                    if ambiguous && let Some(done) = lookup().await? {
                        tracing::warn!(
                            target: "stackbot::forge::github",
                            "{what}: an earlier failed attempt had taken effect; using it"
                        );
                        return Ok(done);
                    }
                    return Err(self.refusal(what, &r));
                }
                other => {
                    let was_ambiguous = matches!(other, Outcome::Ambiguous(_));
                    ambiguous |= was_ambiguous;
                    let paused = self.t.pause(what, n, &other).await;
                    if was_ambiguous && let Some(done) = lookup().await? {
                        tracing::warn!(
                            target: "stackbot::forge::github",
                            "{what}: the failed attempt had taken effect; not repeating it"
                        );
                        return Ok(done);
                    }
                    paused.map_err(|reason| ForgeError::Transient {
                        what: what.into(),
                        reason,
                    })?;
                }
            }
            n += 1;
        }
    }

    // ---------------------------------------------------------------- conversions

    fn release_of(&self, v: &Value) -> ReleaseInfo {
        let id = v["id"].as_u64().unwrap_or_default();
        if let Some(u) = v["upload_url"].as_str() {
            self.upload_urls
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(id, u.to_string());
        }
        ReleaseInfo {
            id,
            tag: str_of(&v["tag_name"]),
            name: v["name"].as_str().map(str::to_string),
            draft: v["draft"].as_bool().unwrap_or(false),
            body: str_of(&v["body"]),
            assets: v["assets"]
                .as_array()
                .map(|a| a.iter().map(asset_of).collect())
                .unwrap_or_default(),
            html_url: str_of(&v["html_url"]),
        }
    }

    // ---------------------------------------------------------------- async operations

    async fn branch_head_a(&self, repo: &RepoRef, branch: &str) -> ForgeResult<Option<String>> {
        let what = format!("branch `{branch}` of {repo}");
        let path = format!(
            "{}/git/ref/heads/{}",
            Self::repo_path(repo),
            enc(branch, true)
        );
        Ok(self
            .get_opt(&what, &path)
            .await?
            .map(|r| r.json::<Value>(&what))
            .transpose()?
            .and_then(|v| v["object"]["sha"].as_str().map(str::to_string)))
    }

    async fn tag_target_a(&self, repo: &RepoRef, tag: &str) -> ForgeResult<Option<String>> {
        let what = format!("tag `{tag}` of {repo}");
        let path = format!("{}/git/ref/tags/{}", Self::repo_path(repo), enc(tag, true));
        let Some(r) = self.get_opt(&what, &path).await? else {
            return Ok(None);
        };
        let v: Value = r.json(&what)?;
        let (mut kind, mut sha) = (str_of(&v["object"]["type"]), str_of(&v["object"]["sha"]));
        // Peel annotated tags (possibly nested) down to the commit.
        for _ in 0..8 {
            if kind != "tag" {
                break;
            }
            let t: Value = self
                .get(&what, &format!("{}/git/tags/{sha}", Self::repo_path(repo)))
                .await?
                .json(&what)?;
            kind = str_of(&t["object"]["type"]);
            sha = str_of(&t["object"]["sha"]);
        }
        Ok(Some(sha))
    }

    /// Resolve a commit-ish (sha, branch or tag) to a commit sha.
    async fn resolve_commit(&self, repo: &RepoRef, commit: &str) -> ForgeResult<String> {
        if is_sha(commit) {
            return Ok(commit.to_ascii_lowercase());
        }
        if let Some(c) = self.branch_head_a(repo, commit).await? {
            return Ok(c);
        }
        if let Some(c) = self.tag_target_a(repo, commit).await? {
            return Ok(c);
        }
        Err(ForgeError::NotFound {
            what: format!("commit `{commit}` in {repo}"),
        })
    }

    async fn commit_tree(&self, repo: &RepoRef, commit: &str) -> ForgeResult<String> {
        let what = format!("commit {commit} of {repo}");
        let v: Value = self
            .get(
                &what,
                &format!("{}/git/commits/{commit}", Self::repo_path(repo)),
            )
            .await?
            .json(&what)?;
        Ok(str_of(&v["tree"]["sha"]))
    }

    async fn list_files_a(&self, repo: &RepoRef, commit: &str) -> ForgeResult<Vec<String>> {
        let commit = self.resolve_commit(repo, commit).await?;
        let tree = self.commit_tree(repo, &commit).await?;
        let what = format!("files of {commit} in {repo}");
        let v: Value = self
            .get(
                &what,
                &format!("{}/git/trees/{tree}?recursive=1", Self::repo_path(repo)),
            )
            .await?
            .json(&what)?;
        let mut files = Vec::new();
        if v["truncated"].as_bool().unwrap_or(false) {
            // Too big for one recursive answer: walk the tree level by level.
            let mut stack = vec![(String::new(), tree)];
            while let Some((prefix, sha)) = stack.pop() {
                let t: Value = self
                    .get(&what, &format!("{}/git/trees/{sha}", Self::repo_path(repo)))
                    .await?
                    .json(&what)?;
                for e in t["tree"].as_array().into_iter().flatten() {
                    let p = format!("{prefix}{}", str_of(&e["path"]));
                    match e["type"].as_str() {
                        Some("blob") => files.push(p),
                        Some("tree") => stack.push((format!("{p}/"), str_of(&e["sha"]))),
                        _ => {}
                    }
                }
            }
        } else {
            for e in v["tree"].as_array().into_iter().flatten() {
                if e["type"].as_str() == Some("blob") {
                    files.push(str_of(&e["path"]));
                }
            }
        }
        files.sort();
        Ok(files)
    }

    async fn read_file_a(
        &self,
        repo: &RepoRef,
        commit: &str,
        path: &str,
    ) -> ForgeResult<Option<Vec<u8>>> {
        let what = format!("`{path}` at {commit} in {repo}");
        let url = format!(
            "{}/contents/{}?ref={}",
            Self::repo_path(repo),
            enc(path.trim_start_matches('/'), true),
            enc(commit, false)
        );
        let Some(r) = self.get_opt(&what, &url).await? else {
            return Ok(None);
        };
        let v: Value = r.json(&what)?;
        if v["type"].as_str() != Some("file") {
            return Ok(None); // a directory (array), symlink or submodule is not a file
        }
        let size = v["size"].as_u64().unwrap_or(0);
        let content = str_of(&v["content"]);
        let b64 = if v["encoding"].as_str() == Some("base64") && (!content.is_empty() || size == 0)
        {
            content
        } else {
            // Over 1 MiB the contents API omits the content; the blobs API has it.
            let b: Value = self
                .get(
                    &what,
                    &format!("{}/git/blobs/{}", Self::repo_path(repo), str_of(&v["sha"])),
                )
                .await?
                .json(&what)?;
            str_of(&b["content"])
        };
        decode_b64(&what, &b64).map(Some)
    }

    async fn commit_a(
        &self,
        repo: &RepoRef,
        branch: &str,
        parent: &str,
        expected_head: Option<&str>,
        changes: &FileChanges,
        message: &str,
    ) -> ForgeResult<String> {
        let what = format!("branch `{branch}` of {repo}");
        let rp = Self::repo_path(repo);
        let current = self.branch_head_a(repo, branch).await?;
        if current.as_deref() != expected_head {
            return Err(ForgeError::Conflict { what });
        }
        let base_tree = self.commit_tree(repo, parent).await?;
        let existing: Option<Vec<String>> = if changes.values().any(Option::is_none) {
            Some(self.list_files_a(repo, parent).await?)
        } else {
            None
        };
        let mut entries = Vec::new();
        for (path, change) in changes {
            match change {
                Some(bytes) => match std::str::from_utf8(bytes) {
                    Ok(text) if !bytes.contains(&0) => entries.push(
                        json!({"path": path, "mode": "100644", "type": "blob", "content": text}),
                    ),
                    _ => {
                        let body = json!({
                            "content": base64::engine::general_purpose::STANDARD.encode(bytes),
                            "encoding": "base64",
                        });
                        let r = self
                            .write_ok(
                                &format!("blob for `{path}` in {repo}"),
                                &Req::json(Method::POST, format!("{rp}/git/blobs"), &body),
                            )
                            .await?;
                        let sha = str_of(&r.json::<Value>(&what)?["sha"]);
                        entries.push(
                            json!({"path": path, "mode": "100644", "type": "blob", "sha": sha}),
                        );
                    }
                },
                None => {
                    if existing.as_ref().is_some_and(|e| e.contains(path)) {
                        entries.push(
                            json!({"path": path, "mode": "100644", "type": "blob", "sha": null}),
                        );
                    }
                }
            }
        }
        let tree = self
            .write_ok(
                &format!("tree for {what}"),
                &Req::json(
                    Method::POST,
                    format!("{rp}/git/trees"),
                    &json!({"base_tree": base_tree, "tree": entries}),
                ),
            )
            .await?;
        let tree = str_of(&tree.json::<Value>(&what)?["sha"]);
        let who = json!({"name": self.committer.name, "email": self.committer.email});
        // A repeated commit POST only leaves an unreferenced object behind: safe to retry.
        let c = self
            .write_ok(
                &format!("commit for {what}"),
                &Req::json(
                    Method::POST,
                    format!("{rp}/git/commits"),
                    &json!({"message": message, "tree": tree, "parents": [parent],
                            "author": who, "committer": who}),
                ),
            )
            .await?;
        let sha = str_of(&c.json::<Value>(&what)?["sha"]);
        let done = async || -> ForgeResult<Option<String>> {
            let now = self.branch_head_a(repo, branch).await?;
            if now.as_deref() == Some(sha.as_str()) {
                Ok(Some(sha.clone()))
            } else if now.as_deref() == expected_head {
                Ok(None)
            } else {
                Err(ForgeError::Conflict { what: what.clone() })
            }
        };
        let result = match expected_head {
            None => {
                let req = Req::json(
                    Method::POST,
                    format!("{rp}/git/refs"),
                    &json!({"ref": format!("refs/heads/{branch}"), "sha": sha}),
                );
                self.write_checked(&what, &req, |_| Ok(sha.clone()), done)
                    .await
            }
            Some(exp) => {
                // With the parent as expected head, `force: false` makes GitHub check atomically
                // that nobody moved the branch. Otherwise (rebuilding a bot branch on a new
                // base) the pre-check above is the guard and the update must force.
                let req = Req::json(
                    Method::PATCH,
                    format!("{rp}/git/refs/heads/{}", enc(branch, true)),
                    &json!({"sha": sha, "force": exp != parent}),
                );
                self.write_checked(&what, &req, |_| Ok(sha.clone()), done)
                    .await
            }
        };
        match result {
            // A ref that appeared meanwhile, or "not a fast forward": someone else moved it.
            Err(ForgeError::AlreadyExists { what }) => Err(ForgeError::Conflict { what }),
            Err(ForgeError::Rejected { what, reason })
                if reason.to_ascii_lowercase().contains("reference") =>
            {
                let _ = reason;
                Err(ForgeError::Conflict { what })
            }
            other => other,
        }
    }

    async fn force_branch_a(&self, repo: &RepoRef, branch: &str, commit: &str) -> ForgeResult<()> {
        let what = format!("branch `{branch}` of {repo}");
        let rp = Self::repo_path(repo);
        if self.branch_head_a(repo, branch).await?.is_some() {
            let req = Req::json(
                Method::PATCH,
                format!("{rp}/git/refs/heads/{}", enc(branch, true)),
                &json!({"sha": commit, "force": true}),
            );
            self.write_ok(&what, &req).await.map(|_| ())
        } else {
            let req = Req::json(
                Method::POST,
                format!("{rp}/git/refs"),
                &json!({"ref": format!("refs/heads/{branch}"), "sha": commit}),
            );
            self.write_checked(
                &what,
                &req,
                |_| Ok(()),
                async || {
                    Ok(
                        (self.branch_head_a(repo, branch).await?.as_deref() == Some(commit))
                            .then_some(()),
                    )
                },
            )
            .await
        }
    }

    async fn commits_between_a(
        &self,
        repo: &RepoRef,
        base: &str,
        head: &str,
    ) -> ForgeResult<Vec<CommitInfo>> {
        let what = format!("commits {base}...{head} in {repo}");
        let path = format!(
            "{}/compare/{}...{}?per_page=100",
            Self::repo_path(repo),
            enc(base, false),
            enc(head, false)
        );
        let commits = self
            .get_all(&what, path, |mut v| {
                v["commits"].take().as_array().cloned().unwrap_or_default()
            })
            .await?;
        Ok(commits
            .iter()
            .map(|c| CommitInfo {
                sha: str_of(&c["sha"]),
                author_name: str_of(&c["commit"]["author"]["name"]),
                author_email: str_of(&c["commit"]["author"]["email"]),
                message: str_of(&c["commit"]["message"]),
            })
            .collect())
    }

    async fn create_tag_a(
        &self,
        repo: &RepoRef,
        tag: &str,
        commit: &str,
        message: &str,
    ) -> ForgeResult<()> {
        let what = format!("tag `{tag}` in {repo}");
        let rp = Self::repo_path(repo);
        let tagger = json!({
            "name": self.committer.name,
            "email": self.committer.email,
            "date": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        });
        // The tag object is unreferenced until the ref exists: repeating it is harmless.
        let obj = self
            .write_ok(
                &format!("tag object for {what}"),
                &Req::json(
                    Method::POST,
                    format!("{rp}/git/tags"),
                    &json!({"tag": tag, "message": message, "object": commit,
                            "type": "commit", "tagger": tagger}),
                ),
            )
            .await?;
        let obj = str_of(&obj.json::<Value>(&what)?["sha"]);
        let req = Req::json(
            Method::POST,
            format!("{rp}/git/refs"),
            &json!({"ref": format!("refs/tags/{tag}"), "sha": obj}),
        );
        self.write_checked(
            &what,
            &req,
            |_| Ok(()),
            async || match self.tag_target_a(repo, tag).await? {
                Some(c) if c.eq_ignore_ascii_case(commit) => Ok(Some(())),
                Some(_) => Err(ForgeError::AlreadyExists { what: what.clone() }),
                None => Ok(None),
            },
        )
        .await
    }

    async fn list_releases_a(&self, repo: &RepoRef) -> ForgeResult<Vec<ReleaseInfo>> {
        let what = format!("releases of {repo}");
        let all = self
            .get_all(
                &what,
                format!("{}/releases?per_page=100", Self::repo_path(repo)),
                |v| v.as_array().cloned().unwrap_or_default(),
            )
            .await?;
        Ok(all.iter().map(|v| self.release_of(v)).collect())
    }

    async fn create_draft_a(
        &self,
        repo: &RepoRef,
        tag: &str,
        name: &str,
        body: &str,
    ) -> ForgeResult<ReleaseInfo> {
        let what = format!("draft release `{tag}` in {repo}");
        let req = Req::json(
            Method::POST,
            format!("{}/releases", Self::repo_path(repo)),
            &json!({"tag_name": tag, "name": name, "body": body, "draft": true,
                    "prerelease": false}),
        );
        self.write_checked(
            &what,
            &req,
            |r| Ok(self.release_of(&r.json(&what)?)),
            async || {
                // Drafts are invisible to get-by-tag: list and take the newest matching draft.
                let mut found: Vec<ReleaseInfo> = self
                    .list_releases_a(repo)
                    .await?
                    .into_iter()
                    .filter(|r| {
                        r.draft && r.tag == tag && r.name.as_deref() == Some(name) && r.body == body
                    })
                    .collect();
                found.sort_by_key(|r| r.id);
                Ok(found.pop())
            },
        )
        .await
    }

    async fn upload_target(
        &self,
        repo: &RepoRef,
        release_id: u64,
    ) -> ForgeResult<(Target, String)> {
        let what = format!("release {release_id} of {repo}");
        let cached = self
            .upload_urls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&release_id)
            .cloned();
        let template = match cached {
            Some(t) => t,
            None => {
                let v: Value = self
                    .get(
                        &what,
                        &format!("{}/releases/{release_id}", Self::repo_path(repo)),
                    )
                    .await?
                    .json(&what)?;
                self.release_of(&v);
                str_of(&v["upload_url"])
            }
        };
        let url = template.split('{').next().unwrap_or_default();
        let u: http::Uri = url.parse().map_err(|_| ForgeError::Io {
            what: what.clone(),
            reason: format!("GitHub returned an unparsable upload_url `{template}`"),
        })?;
        let o = origin(&u);
        let path = u.path().to_string();
        if o == self.upload_origin {
            Ok((Target::Upload, path))
        } else if o == self.api_origin && u.authority().is_some() {
            Ok((Target::Api, self.api_path_of(&what, url)?))
        } else {
            Err(ForgeError::Rejected {
                what,
                reason: format!(
                    "its upload_url points at `{o}`, which is neither the API host nor \
                     `forge.github.upload_url` (`{}`); set `forge.github.upload_url` to that host",
                    self.upload_origin
                ),
            })
        }
    }

    async fn release_assets(&self, repo: &RepoRef, release_id: u64) -> ForgeResult<Vec<Value>> {
        let what = format!("assets of release {release_id} in {repo}");
        self.get_all(
            &what,
            format!(
                "{}/releases/{release_id}/assets?per_page=100",
                Self::repo_path(repo)
            ),
            |v| v.as_array().cloned().unwrap_or_default(),
        )
        .await
    }

    async fn upload_asset_a(
        &self,
        repo: &RepoRef,
        release_id: u64,
        name: &str,
        bytes: &[u8],
    ) -> ForgeResult<AssetInfo> {
        let what = format!("asset `{name}` of release {release_id} in {repo}");
        let (target, path) = self.upload_target(repo, release_id).await?;
        let req = Req {
            method: Method::POST,
            path: format!("{path}?name={}", enc(name, false)),
            body: Some((bytes.to_vec(), "application/octet-stream")),
            accept: "application/vnd.github+json",
            target,
        };
        self.write_checked(
            &what,
            &req,
            |r| Ok(asset_of(&r.json(&what)?)),
            async || {
                let assets = self.release_assets(repo, release_id).await?;
                let Some(a) = assets.iter().find(|a| a["name"].as_str() == Some(name)) else {
                    return Ok(None);
                };
                let complete = a["size"].as_u64() == Some(bytes.len() as u64)
                    && a["state"].as_str().is_none_or(|s| s == "uploaded");
                if complete {
                    return Ok(Some(asset_of(a)));
                }
                // A partial upload blocks the name: remove it, then upload again.
                let id = a["id"].as_u64().unwrap_or_default();
                self.delete_asset_a(repo, release_id, id).await?;
                Ok(None)
            },
        )
        .await
    }

    async fn download_asset_a(&self, repo: &RepoRef, asset: &AssetInfo) -> ForgeResult<Vec<u8>> {
        let what = format!("asset `{}` in {repo}", asset.name);
        let req = Req {
            accept: "application/octet-stream",
            ..Req::get(format!(
                "{}/releases/assets/{}",
                Self::repo_path(repo),
                asset.id
            ))
        };
        match self.t.read(&what, &req).await? {
            Ok(r) => Ok(r.body),
            Err(r) => Err(self.refusal(&what, &r)),
        }
    }

    async fn delete_asset_a(&self, repo: &RepoRef, _release: u64, id: u64) -> ForgeResult<()> {
        let what = format!("asset {id} in {repo}");
        let req = Req::delete(format!("{}/releases/assets/{id}", Self::repo_path(repo)));
        match self.write_idem(&what, &req).await? {
            (Ok(_), _) => Ok(()),
            (Err(r), true) if r.status == StatusCode::NOT_FOUND => Ok(()),
            (Err(r), _) => Err(self.refusal(&what, &r)),
        }
    }

    async fn publish_a(&self, repo: &RepoRef, id: u64) -> ForgeResult<ReleaseInfo> {
        let what = format!("release {id} of {repo}");
        let req = Req::json(
            Method::PATCH,
            format!("{}/releases/{id}", Self::repo_path(repo)),
            &json!({"draft": false}),
        );
        let r = self.write_ok(&what, &req).await?;
        Ok(self.release_of(&r.json(&what)?))
    }

    async fn delete_release_a(&self, repo: &RepoRef, id: u64) -> ForgeResult<()> {
        let what = format!("release {id} of {repo}");
        let req = Req::delete(format!("{}/releases/{id}", Self::repo_path(repo)));
        match self.write_idem(&what, &req).await? {
            (Ok(_), _) => Ok(()),
            (Err(r), true) if r.status == StatusCode::NOT_FOUND => Ok(()),
            (Err(r), _) => Err(self.refusal(&what, &r)),
        }
    }

    async fn find_pulls_a(&self, repo: &RepoRef, head: &str) -> ForgeResult<Vec<PullInfo>> {
        let what = format!("pull requests from `{head}` in {repo}");
        let path = format!(
            "{}/pulls?state=all&head={}&per_page=100",
            Self::repo_path(repo),
            enc(&format!("{}:{head}", repo.owner), false)
        );
        let all = self
            .get_all(&what, path, |v| v.as_array().cloned().unwrap_or_default())
            .await?;
        let mut pulls: Vec<PullInfo> = all.iter().map(pull_of).filter(|p| p.head == head).collect();
        pulls.sort_by_key(|p| std::cmp::Reverse(p.number));
        Ok(pulls)
    }

    async fn open_pull_a(
        &self,
        repo: &RepoRef,
        head: &str,
        base: &str,
        title: &str,
        body: &str,
    ) -> ForgeResult<PullInfo> {
        let what = format!("pull request `{head}` → `{base}` in {repo}");
        let req = Req::json(
            Method::POST,
            format!("{}/pulls", Self::repo_path(repo)),
            &json!({"head": head, "base": base, "title": title, "body": body}),
        );
        self.write_checked(
            &what,
            &req,
            |r| Ok(pull_of(&r.json(&what)?)),
            async || {
                Ok(self
                    .find_pulls_a(repo, head)
                    .await?
                    .into_iter()
                    .find(|p| p.state == PullState::Open && p.base == base))
            },
        )
        .await
    }

    async fn patch_pull(&self, repo: &RepoRef, number: u64, body: Value) -> ForgeResult<()> {
        let what = format!("pull request #{number} of {repo}");
        let req = Req::json(
            Method::PATCH,
            format!("{}/pulls/{number}", Self::repo_path(repo)),
            &body,
        );
        self.write_ok(&what, &req).await.map(|_| ())
    }

    async fn list_comments_a(&self, repo: &RepoRef, number: u64) -> ForgeResult<Vec<CommentInfo>> {
        let what = format!("comments of #{number} in {repo}");
        let all = self
            .get_all(
                &what,
                format!(
                    "{}/issues/{number}/comments?per_page=100",
                    Self::repo_path(repo)
                ),
                |v| v.as_array().cloned().unwrap_or_default(),
            )
            .await?;
        let mut out: Vec<CommentInfo> = all.iter().map(comment_of).collect();
        out.sort_by_key(|c| c.id);
        Ok(out)
    }

    async fn create_comment_a(
        &self,
        repo: &RepoRef,
        number: u64,
        body: &str,
    ) -> ForgeResult<CommentInfo> {
        let what = format!("comment on #{number} in {repo}");
        let req = Req::json(
            Method::POST,
            format!("{}/issues/{number}/comments", Self::repo_path(repo)),
            &json!({"body": body}),
        );
        self.write_checked(
            &what,
            &req,
            |r| Ok(comment_of(&r.json(&what)?)),
            // The bot's comments carry a unique marker, so an identical body is ours.
            async || {
                Ok(self
                    .list_comments_a(repo, number)
                    .await?
                    .into_iter()
                    .rev()
                    .find(|c| c.body == body))
            },
        )
        .await
    }
}

fn decode_b64(what: &str, s: &str) -> ForgeResult<Vec<u8>> {
    let clean: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(clean)
        .map_err(|e| ForgeError::Io {
            what: what.into(),
            reason: format!("GitHub sent invalid base64: {e}"),
        })
}

fn asset_of(v: &Value) -> AssetInfo {
    AssetInfo {
        id: v["id"].as_u64().unwrap_or_default(),
        name: str_of(&v["name"]),
        size: v["size"].as_u64().unwrap_or_default(),
    }
}

fn pull_of(v: &Value) -> PullInfo {
    let state = if !v["merged_at"].is_null() || v["merged"].as_bool() == Some(true) {
        PullState::Merged
    } else if v["state"].as_str() == Some("open") {
        PullState::Open
    } else {
        PullState::Closed
    };
    PullInfo {
        number: v["number"].as_u64().unwrap_or_default(),
        head: str_of(&v["head"]["ref"]),
        base: str_of(&v["base"]["ref"]),
        title: str_of(&v["title"]),
        body: str_of(&v["body"]),
        state,
        html_url: str_of(&v["html_url"]),
    }
}

fn comment_of(v: &Value) -> CommentInfo {
    CommentInfo {
        id: v["id"].as_u64().unwrap_or_default(),
        body: str_of(&v["body"]),
    }
}

impl Forge for GithubForge {
    fn kind(&self) -> &'static str {
        "github"
    }

    fn ensure_repo(&self, repo: &RepoRef, _default_branch: &str) -> ForgeResult<()> {
        let what = format!(
            "repository {repo} on {} (create it on GitHub, or check the token can see it)",
            self.api_url
        );
        self.rt
            .block_on(self.get(&what, &Self::repo_path(repo)))
            .map(|_| ())
    }

    fn branch_head(&self, repo: &RepoRef, branch: &str) -> ForgeResult<Option<String>> {
        self.rt.block_on(self.branch_head_a(repo, branch))
    }

    fn tag_target(&self, repo: &RepoRef, tag: &str) -> ForgeResult<Option<String>> {
        self.rt.block_on(self.tag_target_a(repo, tag))
    }

    fn list_files(&self, repo: &RepoRef, commit: &str) -> ForgeResult<Vec<String>> {
        self.rt.block_on(self.list_files_a(repo, commit))
    }

    fn read_file(&self, repo: &RepoRef, commit: &str, path: &str) -> ForgeResult<Option<Vec<u8>>> {
        self.rt.block_on(self.read_file_a(repo, commit, path))
    }

    fn commit(
        &self,
        repo: &RepoRef,
        branch: &str,
        parent: &str,
        expected_head: Option<&str>,
        changes: &FileChanges,
        message: &str,
    ) -> ForgeResult<String> {
        self.rt
            .block_on(self.commit_a(repo, branch, parent, expected_head, changes, message))
    }

    fn force_branch(&self, repo: &RepoRef, branch: &str, commit: &str) -> ForgeResult<()> {
        self.rt.block_on(self.force_branch_a(repo, branch, commit))
    }

    fn commits_between(
        &self,
        repo: &RepoRef,
        base: &str,
        head: &str,
    ) -> ForgeResult<Vec<CommitInfo>> {
        self.rt.block_on(self.commits_between_a(repo, base, head))
    }

    fn create_tag(
        &self,
        repo: &RepoRef,
        tag: &str,
        commit: &str,
        message: &str,
    ) -> ForgeResult<()> {
        self.rt
            .block_on(self.create_tag_a(repo, tag, commit, message))
    }

    fn list_releases(&self, repo: &RepoRef) -> ForgeResult<Vec<ReleaseInfo>> {
        self.rt.block_on(self.list_releases_a(repo))
    }

    fn create_draft_release(
        &self,
        repo: &RepoRef,
        tag: &str,
        name: &str,
        body: &str,
    ) -> ForgeResult<ReleaseInfo> {
        self.rt.block_on(self.create_draft_a(repo, tag, name, body))
    }

    fn upload_asset(
        &self,
        repo: &RepoRef,
        release_id: u64,
        name: &str,
        bytes: &[u8],
    ) -> ForgeResult<AssetInfo> {
        self.rt
            .block_on(self.upload_asset_a(repo, release_id, name, bytes))
    }

    fn download_asset(
        &self,
        repo: &RepoRef,
        _release_id: u64,
        asset: &AssetInfo,
    ) -> ForgeResult<Vec<u8>> {
        self.rt.block_on(self.download_asset_a(repo, asset))
    }

    fn delete_asset(&self, repo: &RepoRef, release_id: u64, asset_id: u64) -> ForgeResult<()> {
        self.rt
            .block_on(self.delete_asset_a(repo, release_id, asset_id))
    }

    fn publish_release(&self, repo: &RepoRef, release_id: u64) -> ForgeResult<ReleaseInfo> {
        self.rt.block_on(self.publish_a(repo, release_id))
    }

    fn delete_release(&self, repo: &RepoRef, release_id: u64) -> ForgeResult<()> {
        self.rt.block_on(self.delete_release_a(repo, release_id))
    }

    fn find_pulls(&self, repo: &RepoRef, head: &str) -> ForgeResult<Vec<PullInfo>> {
        self.rt.block_on(self.find_pulls_a(repo, head))
    }

    fn open_pull(
        &self,
        repo: &RepoRef,
        head: &str,
        base: &str,
        title: &str,
        body: &str,
    ) -> ForgeResult<PullInfo> {
        self.rt
            .block_on(self.open_pull_a(repo, head, base, title, body))
    }

    fn update_pull(&self, repo: &RepoRef, number: u64, title: &str, body: &str) -> ForgeResult<()> {
        self.rt
            .block_on(self.patch_pull(repo, number, json!({"title": title, "body": body})))
    }

    fn close_pull(&self, repo: &RepoRef, number: u64) -> ForgeResult<()> {
        self.rt
            .block_on(self.patch_pull(repo, number, json!({"state": "closed"})))
    }

    fn list_comments(&self, repo: &RepoRef, number: u64) -> ForgeResult<Vec<CommentInfo>> {
        self.rt.block_on(self.list_comments_a(repo, number))
    }

    fn create_comment(&self, repo: &RepoRef, number: u64, body: &str) -> ForgeResult<CommentInfo> {
        self.rt.block_on(self.create_comment_a(repo, number, body))
    }

    fn update_comment(&self, repo: &RepoRef, comment_id: u64, body: &str) -> ForgeResult<()> {
        let what = format!("comment {comment_id} in {repo}");
        let req = Req::json(
            Method::PATCH,
            format!("{}/issues/comments/{comment_id}", Self::repo_path(repo)),
            &json!({"body": body}),
        );
        self.rt.block_on(self.write_ok(&what, &req)).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_is_only_accepted_for_loopback() {
        assert!(check_url("f", "http://127.0.0.1:8080").is_ok());
        assert!(check_url("f", "http://127.8.9.10:80/api/v3").is_ok());
        assert!(check_url("f", "http://localhost:1").is_ok());
        assert!(check_url("f", "http://[::1]:1").is_ok());
        assert!(check_url("f", "https://ghe.example.com/api/v3").is_ok());
        let e = check_url("forge.github.api_url", "http://ghe.example.com/api/v3")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("forge.github.api_url") && e.contains("https://"),
            "{e}"
        );
        assert!(check_url("f", "http://128.0.0.1").is_err());
        assert!(check_url("f", "ftp://127.0.0.1").is_err());
    }

    #[test]
    fn link_header_next_is_found_among_others() {
        let mut h = http::HeaderMap::new();
        h.insert(
            http::header::LINK,
            "<https://api.github.com/repos/o/r/releases?page=1>; rel=\"prev\", \
             <https://api.github.com/repos/o/r/releases?page=3>; rel=\"next\""
                .parse()
                .unwrap(),
        );
        assert_eq!(
            next_link(&h).as_deref(),
            Some("https://api.github.com/repos/o/r/releases?page=3")
        );
        h.insert(http::header::LINK, "<x>; rel=\"last\"".parse().unwrap());
        assert_eq!(next_link(&h), None);
    }

    #[test]
    fn paths_and_queries_are_percent_encoded() {
        assert_eq!(enc("release/a b", true), "release/a%20b");
        assert_eq!(enc("o:release/x", false), "o%3Arelease%2Fx");
    }

    #[test]
    fn debug_output_redacts_the_token() {
        let cfg = GithubForgeConfig {
            api_url: "http://127.0.0.1:9".into(),
            ..GithubForgeConfig::default()
        };
        let f = GithubForge::new(&cfg, Some("ghp_SECRETSECRET".into())).unwrap();
        let d = format!("{f:?}");
        assert!(
            !d.contains("SECRETSECRET") && d.contains("<redacted>"),
            "{d}"
        );
    }

    #[test]
    fn remote_hosts_get_paced_writes_and_default_upload_host() {
        let f = GithubForge::new(&GithubForgeConfig::default(), None).unwrap();
        assert_eq!(f.upload_origin, "https://uploads.github.com");
        let ghe = GithubForgeConfig {
            api_url: "https://ghe.example.com/api/v3".into(),
            ..GithubForgeConfig::default()
        };
        let f = GithubForge::new(&ghe, None).unwrap();
        assert_eq!(f.upload_origin, "https://ghe.example.com");
        assert_eq!(
            f.t.budget.per_hour,
            Some(450),
            "remote hosts get an hourly budget"
        );
        let local = GithubForgeConfig {
            api_url: "http://127.0.0.1:9/api".into(),
            ..GithubForgeConfig::default()
        };
        let f = GithubForge::new(&local, None).unwrap();
        assert_eq!(
            f.t.budget.per_hour, None,
            "loopback is unlimited unless set"
        );
        let zero = GithubForgeConfig {
            writes_per_hour: Some(0),
            ..local
        };
        let err = GithubForge::new(&zero, None).unwrap_err().to_string();
        assert!(err.contains("writes_per_hour"), "{err}");
    }
}
