//! A faithful fake of the GitHub REST API on loopback, for tests and benchmarks.
//!
//! It keeps real state (git objects, refs, releases with assets, issues and pull requests,
//! comments) and behaves as GitHub documents and as recorded api.github.com traffic shows
//! (`tests/fixtures/github/octokit-fixtures/`, replayed by `tests/integration/github_recordings.rs`):
//!
//! - three hosts, like GitHub: the API (`/api/v3` for Enterprise), an upload host that the
//!   `upload_url` templates point at (uploads.github.com; Enterprise: `/api/uploads` on the API
//!   host), and a download host asset downloads are redirected to with a pre-signed URL (a
//!   token sent there is a violation: credentials must not follow a redirect to another host);
//! - `Link` pagination in GitHub's `/repositories/{id}/…` form (default 30, up to 100 a page);
//! - renamed or transferred repositories: the old path answers `301` (GET) or `307` (other
//!   methods) to `/repositories/{id}/…`, and a write sent there is *not* performed;
//! - the primary rate limit: `x-ratelimit-*` on every answer, one unit per counted request,
//!   `403` (or `429`) once spent until the window resets; `304`s are free; secondary limits
//!   (`403`/`429` with `retry-after`) by fault injection;
//! - "Latest" release semantics (`make_latest`, `GET /releases/latest`, the legacy default);
//! - weak `ETag`s and `If-None-Match` → `304` on unchanged representations;
//! - GitHub's error bodies (`message`, `documentation_url` of the operation, `status`,
//!   `errors[]` with `resource`/`field`/`code`);
//! - GitHub Apps: RS256 JWTs verified with the app's key, installations per account,
//!   installation tokens that expire and reach only their account, the repositories they were
//!   minted for and the permissions they carry ([`FakeGithub::register_app`]);
//! - `422` for duplicate refs, assets and published releases (drafts may duplicate), drafts
//!   visible only with a valid token, 404 for unknown objects;
//! - fault injection chosen per test (5xx before or *after* applying a write, dropped
//!   connections, slow answers, secondary rate limits, seeded random faults).
//!
//! **Conformance.** Every request is checked against GitHub's OpenAPI description of the
//! operations stackbot uses (`tests/fixtures/github/openapi.json`): the operation must exist,
//! parameters and JSON body must be valid (an invalid body is refused with GitHub's `422
//! Invalid request`). Every answer is checked too (status declared, body valid). Violations are
//! collected; dropping the fake panics with the list, so the test that caused them fails.
//!
//! It counts requests per route and rate-limit units, logs every write in order, and
//! [`FakeGithub::snapshot`] returns the state in a form two runs can be compared with.
//!
//! Plain module, no test macros: usable from any test file (`mod support;`) and from benches.
// Each test file uses a part of the fake.
#![allow(dead_code, unused_imports)]

pub mod actions;
mod answer;
pub mod app;
pub mod demo;
pub mod humans;
pub mod merge;
pub mod openapi;
mod options;
mod ratelimit;
mod report;
mod repr;
mod routes;
mod server;
mod state;
pub mod views;
mod wire;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

pub use options::{Conformance, FakeOptions, Fault, Faults, RandomFaults, RouteFault};
pub use ratelimit::{RateLimitOptions, RateLimitStatus};
pub use report::{
    BranchSnapshot, CommentSnapshot, Counts, IssueSnapshot, PullSnapshot, ReleaseSnapshot,
    RepoSnapshot, Snapshot, TagSnapshot, WriteRecord,
};
use repr::Urls;
use server::{Shared, Surface};
use state::{Lookup, Repo, person};

/// A running fake. Dropping it stops the server, and fails the test with the list of
/// conformance violations if there were any.
pub struct FakeGithub {
    addr: SocketAddr,
    upload_addr: Option<SocketAddr>,
    objects_addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl FakeGithub {
    /// Start with default options (no token required, api.github.com paths).
    pub fn start() -> Self {
        Self::start_with(FakeOptions::default())
    }

    /// Start on 127.0.0.1 with ephemeral ports, in its own thread and runtime.
    pub fn start_with(opts: FakeOptions) -> Self {
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("fake-github".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("fake github runtime");
                rt.block_on(async move {
                    let bind = || async {
                        tokio::net::TcpListener::bind("127.0.0.1:0")
                            .await
                            .expect("bind 127.0.0.1:0")
                    };
                    let api = bind().await;
                    let uploads = match opts.upload_prefix {
                        None => Some(bind().await),
                        Some(_) => None,
                    };
                    let objects = bind().await;
                    let addr = api.local_addr().unwrap();
                    let upload_addr = uploads.as_ref().map(|l| l.local_addr().unwrap());
                    let objects_addr = objects.local_addr().unwrap();
                    let spelled = |a: SocketAddr| format!("http://{}:{}", opts.url_host, a.port());
                    let prefix = opts.api_prefix.trim_end_matches('/').to_string();
                    let upload_prefix = opts
                        .upload_prefix
                        .as_ref()
                        .map(|p| p.trim_end_matches('/').to_string());
                    let urls = Urls {
                        api: format!("{}{prefix}", spelled(addr)),
                        // html_url links use the listener's own address (runs compare them).
                        web: format!("http://{addr}"),
                        uploads: match (&upload_prefix, upload_addr) {
                            (Some(p), _) => format!("{}{p}", spelled(addr)),
                            (None, Some(u)) => spelled(u),
                            (None, None) => unreachable!(),
                        },
                        objects: spelled(objects_addr),
                    };
                    let shared = Arc::new(Shared::new(
                        urls,
                        prefix,
                        upload_prefix,
                        opts.token,
                        opts.conformance,
                        opts.rate_limit,
                    ));
                    let serve = |l: tokio::net::TcpListener, s: Surface| {
                        let app = axum::Router::new()
                            .fallback(server::handle)
                            .with_state((shared.clone(), s));
                        async move {
                            let _ = axum::serve(l, app).await;
                        }
                    };
                    let api_server = serve(api, Surface::Api);
                    let objects_server = serve(objects, Surface::Objects);
                    let upload_server = uploads.map(|l| serve(l, Surface::Uploads));
                    tx.send((addr, upload_addr, objects_addr, shared.clone()))
                        .expect("report addresses");
                    let uploads = async move {
                        match upload_server {
                            Some(s) => s.await,
                            None => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        _ = api_server => {}
                        _ = objects_server => {}
                        _ = uploads => {}
                        _ = stop_rx => {}
                    }
                });
            })
            .expect("spawn fake github");
        let (addr, upload_addr, objects_addr, shared) = rx.recv().expect("fake github started");
        FakeGithub {
            addr,
            upload_addr,
            objects_addr,
            shared,
            stop: Some(stop_tx),
        }
    }

    /// The API listener (also the web origin of `html_url`s).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The API base URL to configure (`forge.github.api_url`).
    pub fn api_url(&self) -> String {
        format!("http://{}{}", self.addr, self.shared.api_prefix)
    }

    /// The upload host to configure (`forge.github.upload_url`): a separate listener like
    /// uploads.github.com, or the API host for Enterprise (`…/api/uploads`).
    pub fn upload_url(&self) -> String {
        match (&self.shared.upload_prefix, self.upload_addr) {
            (Some(p), _) => format!("http://{}{p}", self.addr),
            (None, Some(u)) => format!("http://{u}"),
            (None, None) => unreachable!(),
        }
    }

    /// Where asset downloads are redirected to.
    pub fn objects_addr(&self) -> SocketAddr {
        self.objects_addr
    }

    /// Create a repository; with files, an initial commit on `default_branch`.
    pub fn create_repo(&self, full: &str, default_branch: &str, files: &[(&str, &[u8])]) {
        let tree: BTreeMap<String, Vec<u8>> = files
            .iter()
            .map(|(p, b)| (p.to_string(), b.to_vec()))
            .collect();
        self.create_repo_tree(full, default_branch, &tree);
    }

    /// Create a repository from a path → bytes map (a `model::FileTree`).
    pub fn create_repo_tree(
        &self,
        full: &str,
        default_branch: &str,
        files: &BTreeMap<String, Vec<u8>>,
    ) {
        let mut st = self.shared.state.lock().unwrap();
        st.seq += 1;
        let seq = st.seq;
        let id = st.next_id();
        let mut repo = Repo::new(id, default_branch, seq);
        if !files.is_empty() {
            let mut flat = BTreeMap::new();
            for (p, b) in files {
                flat.insert(p.clone(), repo.put_blob(b.clone()));
            }
            let tree = repo.write_tree(&flat);
            let c = repo.put_commit(
                tree,
                vec![],
                "Initial commit",
                person("Seed", "seed@example.com", seq),
                seq,
            );
            repo.refs.insert(format!("refs/heads/{default_branch}"), c);
        }
        st.moved.remove(&full.to_ascii_lowercase());
        st.repos.insert(full.to_string(), repo);
    }

    /// GitHub's numeric id of a repository (`/repositories/{id}`).
    pub fn repo_id(&self, full: &str) -> Option<u64> {
        let st = self.shared.state.lock().unwrap();
        match st.lookup_full(full) {
            Lookup::Found(f) => Some(st.repos[&f].id),
            _ => None,
        }
    }

    /// Rename a repository as its owner would in the settings: `owner/new_name` from now on;
    /// requests to the old path are redirected (and writes there are not performed).
    pub fn rename_repo(&self, full: &str, new_name: &str) {
        let owner = full.split_once('/').expect("owner/name").0;
        self.move_repo(full, &format!("{owner}/{new_name}"));
    }

    /// Transfer a repository to another owner (keeping its name); the old path redirects.
    pub fn transfer_repo(&self, full: &str, new_owner: &str) {
        let name = full.split_once('/').expect("owner/name").1;
        self.move_repo(full, &format!("{new_owner}/{name}"));
    }

    fn move_repo(&self, from: &str, to: &str) {
        let mut st = self.shared.state.lock().unwrap();
        st.move_repo(from, to)
            .unwrap_or_else(|e| panic!("fake github: cannot move {from} to {to}: {e}"));
    }

    /// Register a GitHub App: JWTs with `iss: app_id` signed by this key (PEM, PKCS#1 as
    /// GitHub hands it out, or PKCS#8) are accepted on the app's endpoints.
    pub fn register_app(&self, app_id: u64, private_key_pem: &str) {
        let public_key = app::rsa_public_key(private_key_pem)
            .unwrap_or_else(|e| panic!("fake github: app {app_id}: {e}"));
        let mut st = self.shared.state.lock().unwrap();
        st.apps.apps.retain(|a| a.id != app_id);
        st.apps.apps.push(app::App {
            id: app_id,
            slug: format!("app-{app_id}"),
            public_key,
        });
    }

    /// Install an app on an account with the permissions stackbot needs (contents, pull
    /// requests and issues: write; metadata: read). Returns the installation id.
    pub fn install_app(&self, app_id: u64, account: &str) -> u64 {
        self.install_app_with(
            app_id,
            account,
            &[
                ("contents", "write"),
                ("pull_requests", "write"),
                ("issues", "write"),
                ("metadata", "read"),
            ],
        )
    }

    /// Install an app on an account with these permissions (`("contents", "read")`, …).
    pub fn install_app_with(
        &self,
        app_id: u64,
        account: &str,
        permissions: &[(&str, &str)],
    ) -> u64 {
        let mut st = self.shared.state.lock().unwrap();
        st.seq += 1;
        let seq = st.seq;
        let id = st.next_id();
        st.apps.installations.push(app::Installation {
            id,
            app_id,
            account: account.to_string(),
            permissions: permissions
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            seq,
        });
        id
    }

    /// How long installation tokens minted from now on live (GitHub: one hour).
    pub fn set_installation_token_lifetime(&self, lifetime: Duration) {
        self.shared.state.lock().unwrap().apps.lifetime = lifetime;
    }

    /// Expire every installation token minted so far (a run outliving its token).
    pub fn expire_installation_tokens(&self) {
        let now = std::time::SystemTime::now();
        for t in self.shared.state.lock().unwrap().apps.tokens.values_mut() {
            t.expires = now;
        }
    }

    /// Installation tokens minted so far (a client should cache them, not mint per request).
    pub fn installation_tokens_minted(&self) -> usize {
        self.shared.state.lock().unwrap().apps.minted
    }

    /// Commit as a human would (changes: `Some` writes, `None` deletes) on `branch`, creating
    /// the branch from the default branch if needed. Returns the new commit.
    pub fn push_commit(
        &self,
        full: &str,
        branch: &str,
        changes: &[(&str, Option<&[u8]>)],
        message: &str,
        author: (&str, &str),
    ) -> String {
        let mut st = self.shared.state.lock().unwrap();
        st.seq += 1;
        let seq = st.seq;
        let repo = st.repos.get_mut(full).expect("repo exists");
        let key = format!("refs/heads/{branch}");
        let parent = repo
            .refs
            .get(&key)
            .or_else(|| {
                repo.refs
                    .get(&format!("refs/heads/{}", repo.default_branch))
            })
            .cloned();
        let mut flat = match &parent {
            Some(p) => repo.flatten(&repo.commit(p).unwrap().tree.clone()),
            None => BTreeMap::new(),
        };
        for (p, c) in changes {
            match c {
                Some(b) => {
                    let s = repo.put_blob(b.to_vec());
                    flat.insert(p.to_string(), s);
                }
                None => {
                    flat.remove(*p);
                }
            }
        }
        let tree = repo.write_tree(&flat);
        let c = repo.put_commit(
            tree,
            parent.into_iter().collect(),
            message,
            person(author.0, author.1, seq),
            seq,
        );
        repo.refs.insert(key, c.clone());
        c
    }

    /// Merge an open pull request with a merge commit, as the maintainer would (see
    /// [`FakeGithub::merge_pull_with`] for squash and rebase).
    pub fn merge_pull(&self, full: &str, number: u64) -> String {
        self.merge_pull_with(full, number, humans::MergeMethod::Merge)
    }

    /// The commit a branch points to.
    pub fn branch_head(&self, full: &str, branch: &str) -> Option<String> {
        let st = self.shared.state.lock().unwrap();
        st.repos
            .get(full)?
            .refs
            .get(&format!("refs/heads/{branch}"))
            .cloned()
    }

    /// A commit's author and `verification` as `GET /repos/{full}/git/commits/{sha}` answers
    /// them: `((name, email), verification)`.
    pub fn commit_signature(
        &self,
        full: &str,
        sha: &str,
    ) -> Option<((String, String), serde_json::Value)> {
        let st = self.shared.state.lock().unwrap();
        let repo = st.repos.get(full)?;
        let urls = repr::Urls {
            api: String::new(),
            web: String::new(),
            uploads: String::new(),
            objects: String::new(),
        };
        let v = repr::git_commit(&urls, repo, full, sha);
        let c = repo.commit(sha)?;
        Some((
            (c.author.name.clone(), c.author.email.clone()),
            v["verification"].clone(),
        ))
    }

    /// A file's bytes at a branch head.
    pub fn file(&self, full: &str, branch: &str, path: &str) -> Option<Vec<u8>> {
        let st = self.shared.state.lock().unwrap();
        let repo = st.repos.get(full)?;
        let head = repo.refs.get(&format!("refs/heads/{branch}"))?;
        let flat = repo.flatten(&repo.commit(head)?.tree);
        repo.blob(flat.get(path)?).cloned()
    }

    /// The tag of the release GitHub shows as "Latest" (`GET /releases/latest`).
    pub fn latest_release(&self, full: &str) -> Option<String> {
        let st = self.shared.state.lock().unwrap();
        st.repos.get(full)?.latest_release().map(|r| r.tag.clone())
    }

    /// The rate-limit budget of a token (`None`: anonymous requests).
    pub fn rate_limit(&self, token: Option<&str>) -> RateLimitStatus {
        self.shared.limits.lock().unwrap().status(&identity(token))
    }

    /// Set what a token has spent in the current window (e.g. start a test at exhaustion).
    pub fn set_rate_limit_used(&self, token: Option<&str>, used: u64) {
        self.shared
            .limits
            .lock()
            .unwrap()
            .set_used(&identity(token), used);
    }

    /// Start a new rate-limit window for everyone (what waiting for `x-ratelimit-reset` does).
    pub fn reset_rate_limit(&self) {
        self.shared.limits.lock().unwrap().reset_windows();
    }

    /// Replace the fault plan (and restart its route/write counters and random sequence).
    pub fn set_faults(&self, faults: Faults) {
        let mut f = self.shared.faults.lock().unwrap();
        f.rng = faults
            .random
            .as_ref()
            .map(|r| fastrand::Rng::with_seed(r.seed));
        f.plan = faults;
        f.route_seen.clear();
        f.writes_seen = 0;
    }

    pub fn clear_faults(&self) {
        self.set_faults(Faults::default());
    }

    /// Counters since the last reset.
    pub fn counts(&self) -> Counts {
        self.shared.stats.lock().unwrap().counts.clone()
    }

    /// Every write since the last reset, in arrival order.
    pub fn write_log(&self) -> Vec<WriteRecord> {
        self.shared.stats.lock().unwrap().writes.clone()
    }

    /// Reset counters, the write log and the write index used by [`Faults::on_write`].
    pub fn reset_counts(&self) {
        *self.shared.stats.lock().unwrap() = server::Stats::default();
        let mut f = self.shared.faults.lock().unwrap();
        f.writes_seen = 0;
        f.route_seen.clear();
    }

    /// The largest number of writes inside any 60-second window since the last reset
    /// (GitHub's secondary limit allows about 80 content-creating requests per minute).
    pub fn peak_writes_per_minute(&self) -> usize {
        let log = self.write_log();
        let mut best = 0;
        let mut lo = 0;
        for hi in 0..log.len() {
            while log[hi].at_ms - log[lo].at_ms >= 60_000 {
                lo += 1;
            }
            best = best.max(hi - lo + 1);
        }
        best
    }

    /// The comparable state of every repository.
    pub fn snapshot(&self) -> Snapshot {
        let st = self.shared.state.lock().unwrap();
        Snapshot {
            repos: st
                .repos
                .iter()
                .map(|(k, r)| (k.clone(), r.snapshot()))
                .collect(),
        }
    }

    /// Conformance violations so far (requests or answers that disagree with GitHub's
    /// OpenAPI description, tokens sent to the download host).
    pub fn violations(&self) -> Vec<String> {
        self.shared.violations.lock().unwrap().clone()
    }

    /// Take the violations (a test that provokes them on purpose inspects and clears them).
    pub fn take_violations(&self) -> Vec<String> {
        std::mem::take(&mut *self.shared.violations.lock().unwrap())
    }

    /// `METHOD /path/template` of every operation of GitHub's description that requests
    /// were checked against (what the conformance checks covered).
    pub fn operations_seen(&self) -> std::collections::BTreeSet<String> {
        self.shared.operations_seen.lock().unwrap().clone()
    }

    /// Panic with the violations, if any.
    pub fn assert_conformant(&self) {
        let v = self.take_violations();
        assert!(v.is_empty(), "{}", violation_report(&v));
    }
}

fn identity(token: Option<&str>) -> String {
    match token {
        Some(t) => format!("token:{}", state::sha256_hex(t.as_bytes())),
        None => "anonymous:127.0.0.1".into(),
    }
}

fn violation_report(v: &[String]) -> String {
    format!(
        "fake GitHub: {} conformance violation(s) against GitHub's OpenAPI description \
         (tests/fixtures/github/openapi.json):\n  - {}",
        v.len(),
        v.join("\n  - ")
    )
}

impl Drop for FakeGithub {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        let v = self.take_violations();
        if !v.is_empty() && !std::thread::panicking() {
            panic!("{}", violation_report(&v));
        }
    }
}
