//! A faithful fake of the GitHub REST API on loopback, for tests and benchmarks.
//!
//! It keeps real state (git objects, refs, releases with assets, pull requests, comments) and
//! reproduces the behaviour the bot depends on: `Link` pagination (default 30, up to 100 per
//! page), `422` with `already_exists` for duplicate refs, assets and published releases (drafts
//! may duplicate, as on GitHub), drafts visible only with a valid token, the `upload_url`
//! template on a separate `/uploads` path, 404 for unknown objects, rate-limit headers, a
//! secondary rate limit `403` with `Retry-After`, and fault injection chosen per test (5xx
//! before or *after* applying a write, dropped connections, slow answers, seeded random faults).
//! It counts requests per route and logs every write in order, and [`FakeGithub::snapshot`]
//! returns the state in a form two runs can be compared with.
//!
//! Plain module, no test macros: usable from any test file (`mod support;`) and from benches.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State as AxState};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde::Serialize;
use serde_json::{Value, json};
use sha2::Digest as _;

// ============================================================================ public API

/// How the fake is set up.
#[derive(Debug, Clone)]
pub struct FakeOptions {
    /// The token the fake accepts. Requests with another token get `401 Bad credentials`;
    /// writes without a token get `401 Requires authentication`; reads without one see no drafts.
    /// `None`: any token is accepted.
    pub token: Option<String>,
    /// Path prefix of the API (`""` like api.github.com, `"/api/v3"` like GitHub Enterprise).
    pub api_prefix: String,
    /// Path prefix of asset uploads (`"/uploads"`; `"/api/uploads"` like GitHub Enterprise).
    pub upload_prefix: String,
}

impl Default for FakeOptions {
    fn default() -> Self {
        FakeOptions {
            token: None,
            api_prefix: String::new(),
            upload_prefix: "/uploads".into(),
        }
    }
}

impl FakeOptions {
    /// GitHub Enterprise paths (`/api/v3`, `/api/uploads`).
    pub fn enterprise(mut self) -> Self {
        self.api_prefix = "/api/v3".into();
        self.upload_prefix = "/api/uploads".into();
        self
    }

    pub fn with_token(mut self, token: &str) -> Self {
        self.token = Some(token.into());
        self
    }
}

/// One injected failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Answer this status without applying the request.
    Status(u16),
    /// Apply the request, then answer this status (the nasty case: it *did* happen).
    AfterSuccess(u16),
    /// Drop the connection without applying.
    Drop,
    /// Apply, then drop the connection before the answer is complete.
    DropAfterSuccess,
    /// Answer normally, but only after this delay.
    Delay(Duration),
    /// `403` secondary rate limit with `Retry-After: secs`, not applied.
    SecondaryRateLimit(u64),
}

/// A fault on the n-th request (1-based) of one route, e.g. `POST /repos/{owner}/{repo}/releases`.
#[derive(Debug, Clone)]
pub struct RouteFault {
    pub method: Method,
    pub route: String,
    pub nth: usize,
    pub fault: Fault,
}

/// Seeded random faults over every request.
#[derive(Debug, Clone)]
pub struct RandomFaults {
    pub seed: u64,
    /// Probability of a 500/502/503 answer.
    pub server_error: f64,
    /// Probability of a dropped connection.
    pub drop: f64,
    /// Probability of a secondary rate limit (`403` + `Retry-After`).
    pub rate_limit: f64,
    /// For writes hit by a 5xx or drop: probability that the write was applied first.
    pub after_success: f64,
    /// `Retry-After` seconds of injected rate limits.
    pub retry_after: u64,
}

impl RandomFaults {
    /// 10 % 5xx, 3 % dropped connections, 1 % secondary rate limit; half the failed writes applied.
    pub fn flaky(seed: u64) -> Self {
        RandomFaults {
            seed,
            server_error: 0.10,
            drop: 0.03,
            rate_limit: 0.01,
            after_success: 0.5,
            retry_after: 1,
        }
    }
}

/// Fault injection, replaced as a whole per test with [`FakeGithub::set_faults`].
#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// Keyed by the 1-based index of the write (POST/PATCH/PUT/DELETE) since the last reset.
    pub on_write: BTreeMap<usize, Fault>,
    /// Faults on the n-th request of a route.
    pub on_route: Vec<RouteFault>,
    pub random: Option<RandomFaults>,
    /// Added to every answer (GitHub-like latency for benchmarks).
    pub latency: Duration,
}

impl Faults {
    pub fn write(k: usize, fault: Fault) -> Self {
        Faults {
            on_write: [(k, fault)].into(),
            ..Faults::default()
        }
    }

    pub fn route(method: Method, route: &str, nth: usize, fault: Fault) -> Self {
        Faults {
            on_route: vec![RouteFault {
                method,
                route: route.into(),
                nth,
                fault,
            }],
            ..Faults::default()
        }
    }

    pub fn random(r: RandomFaults) -> Self {
        Faults {
            random: Some(r),
            ..Faults::default()
        }
    }
}

/// One write request as the fake saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WriteRecord {
    /// 1-based index among writes since the last reset (what [`Faults::on_write`] keys on).
    pub index: usize,
    pub method: String,
    /// Route template, e.g. `POST /repos/{owner}/{repo}/git/refs`.
    pub route: String,
    /// Concrete path without the API/upload prefix.
    pub path: String,
    /// The status answered (0: connection dropped).
    pub status: u16,
    /// Whether the write changed state.
    pub applied: bool,
    /// The injected fault, if any.
    pub fault: Option<String>,
    /// Milliseconds since the fake started.
    pub at_ms: u64,
}

/// Request counters since the last reset.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub reads: usize,
    pub writes: usize,
    /// `METHOD /route/{template}` → requests.
    pub by_route: BTreeMap<String, usize>,
}

impl Counts {
    pub fn total(&self) -> usize {
        self.reads + self.writes
    }
}

/// The comparable state of every repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    pub repos: BTreeMap<String, RepoSnapshot>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RepoSnapshot {
    pub branches: BTreeMap<String, BranchSnapshot>,
    pub tags: BTreeMap<String, TagSnapshot>,
    /// Sorted by tag, then draft, then name, then body.
    pub releases: Vec<ReleaseSnapshot>,
    /// In number order.
    pub pulls: Vec<PullSnapshot>,
    /// In creation order.
    pub comments: Vec<CommentSnapshot>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BranchSnapshot {
    /// Every file at the branch head.
    pub files: BTreeMap<String, Vec<u8>>,
    /// First-parent history, newest first (commit messages).
    pub history: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TagSnapshot {
    pub annotated: bool,
    /// Tag message (empty for a lightweight tag).
    pub message: String,
    /// Message of the tagged commit.
    pub commit_message: String,
    /// sha256 of every file of the tagged commit.
    pub files: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReleaseSnapshot {
    pub tag: String,
    pub name: Option<String>,
    pub draft: bool,
    pub body: String,
    /// Asset name → sha256 of its bytes.
    pub assets: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PullSnapshot {
    pub number: u64,
    pub head: String,
    pub base: String,
    pub title: String,
    pub body: String,
    /// `open`, `closed` or `merged`.
    pub state: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommentSnapshot {
    pub issue: u64,
    pub body: String,
}

/// A running fake. Dropping it stops the server.
pub struct FakeGithub {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl FakeGithub {
    /// Start with default options (no token required, api.github.com paths).
    pub fn start() -> Self {
        Self::start_with(FakeOptions::default())
    }

    /// Start on 127.0.0.1 with an ephemeral port, in its own thread and runtime.
    pub fn start_with(opts: FakeOptions) -> Self {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let shared_slot: Arc<Mutex<Option<Arc<Shared>>>> = Arc::new(Mutex::new(None));
        let slot = shared_slot.clone();
        std::thread::Builder::new()
            .name("fake-github".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("fake github runtime");
                rt.block_on(async move {
                    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                        .await
                        .expect("bind 127.0.0.1:0");
                    let addr = listener.local_addr().expect("local addr");
                    let shared = Arc::new(Shared::new(addr, opts));
                    *slot.lock().unwrap() = Some(shared.clone());
                    let app = axum::Router::new().fallback(handle).with_state(shared);
                    addr_tx.send(addr).expect("report address");
                    let server = axum::serve(listener, app);
                    tokio::select! {
                        _ = server => {}
                        _ = stop_rx => {}
                    }
                });
            })
            .expect("spawn fake github");
        let addr = addr_rx.recv().expect("fake github started");
        let shared = shared_slot.lock().unwrap().take().expect("shared state");
        FakeGithub {
            addr,
            shared,
            stop: Some(stop_tx),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The API base URL to configure (`forge.github.api_url`).
    pub fn api_url(&self) -> String {
        format!("http://{}{}", self.addr, self.shared.api_prefix)
    }

    /// The upload base URL (`forge.github.upload_url`).
    pub fn upload_url(&self) -> String {
        format!("http://{}{}", self.addr, self.shared.upload_prefix)
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
        let mut repo = Repo::new(default_branch);
        if !files.is_empty() {
            let mut flat = BTreeMap::new();
            for (p, b) in files {
                flat.insert(p.clone(), repo.put_blob(b.clone()));
            }
            let tree = repo.write_tree(&flat);
            st.seq += 1;
            let c = repo.put_commit(
                tree,
                vec![],
                "Initial commit",
                person("Seed", "seed@example.com", st.seq),
                st.seq,
            );
            repo.refs.insert(format!("refs/heads/{default_branch}"), c);
        }
        st.repos.insert(full.to_string(), repo);
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

    /// Merge an open pull request (a merge commit on the base branch with the head's tree).
    pub fn merge_pull(&self, full: &str, number: u64) -> String {
        let mut st = self.shared.state.lock().unwrap();
        st.seq += 1;
        let seq = st.seq;
        let repo = st.repos.get_mut(full).expect("repo exists");
        let (head, base) = {
            let p = repo
                .pulls
                .iter()
                .find(|p| p.number == number)
                .expect("pull exists");
            assert_eq!(p.state, "open", "only open pulls can be merged");
            (p.head.clone(), p.base.clone())
        };
        let head_sha = repo.refs[&format!("refs/heads/{head}")].clone();
        let base_sha = repo.refs[&format!("refs/heads/{base}")].clone();
        let tree = repo.commit(&head_sha).unwrap().tree.clone();
        let c = repo.put_commit(
            tree,
            vec![base_sha, head_sha],
            &format!("Merge pull request #{number} from {head}"),
            person("Maintainer", "maintainer@example.com", seq),
            seq,
        );
        repo.refs.insert(format!("refs/heads/{base}"), c.clone());
        let p = repo.pulls.iter_mut().find(|p| p.number == number).unwrap();
        p.state = "closed".into();
        p.merged = true;
        c
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

    /// A file's bytes at a branch head.
    pub fn file(&self, full: &str, branch: &str, path: &str) -> Option<Vec<u8>> {
        let st = self.shared.state.lock().unwrap();
        let repo = st.repos.get(full)?;
        let head = repo.refs.get(&format!("refs/heads/{branch}"))?;
        let flat = repo.flatten(&repo.commit(head)?.tree);
        repo.blob(flat.get(path)?).cloned()
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
        *self.shared.stats.lock().unwrap() = Stats::default();
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
}

impl Drop for FakeGithub {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

// ============================================================================ state

#[derive(Debug, Clone)]
struct Person {
    name: String,
    email: String,
    date: String,
}

fn person(name: &str, email: &str, seq: u64) -> Person {
    Person {
        name: name.into(),
        email: email.into(),
        date: date_of(seq),
    }
}

/// A deterministic, increasing timestamp per sequence number.
fn date_of(seq: u64) -> String {
    let t = chrono::DateTime::from_timestamp(1_780_000_000 + seq as i64, 0).unwrap();
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn person_json(p: &Person) -> Value {
    json!({"name": p.name, "email": p.email, "date": p.date})
}

#[derive(Debug, Clone)]
struct CommitObj {
    tree: String,
    parents: Vec<String>,
    message: String,
    author: Person,
    committer: Person,
    seq: u64,
}

#[derive(Debug, Clone)]
struct TagObj {
    tag: String,
    message: String,
    object: String,
    kind: String,
    tagger: Person,
}

#[derive(Debug, Clone)]
enum Obj {
    Blob(Vec<u8>),
    /// name → (mode, type, sha)
    Tree(BTreeMap<String, (String, String, String)>),
    Commit(CommitObj),
    Tag(TagObj),
}

#[derive(Debug, Clone)]
struct Asset {
    id: u64,
    name: String,
    label: String,
    content_type: String,
    bytes: Vec<u8>,
}

#[derive(Debug, Clone)]
struct Rel {
    id: u64,
    tag: String,
    target: String,
    name: Option<String>,
    body: Option<String>,
    draft: bool,
    prerelease: bool,
    assets: Vec<Asset>,
    seq: u64,
}

#[derive(Debug, Clone)]
struct Pull {
    number: u64,
    id: u64,
    head: String,
    base: String,
    title: String,
    body: String,
    state: String,
    merged: bool,
}

#[derive(Debug, Clone)]
struct Comment {
    id: u64,
    issue: u64,
    body: String,
}

#[derive(Debug, Clone)]
struct Repo {
    default_branch: String,
    objects: HashMap<String, Obj>,
    refs: BTreeMap<String, String>,
    releases: Vec<Rel>,
    pulls: Vec<Pull>,
    comments: Vec<Comment>,
    next_number: u64,
}

fn hash_hex(kind: &str, parts: &[&[u8]]) -> String {
    let mut h = sha2::Sha256::new();
    h.update(kind.as_bytes());
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    hex::encode(h.finalize())[..40].to_string()
}

fn sha256_hex(b: &[u8]) -> String {
    hex::encode(sha2::Sha256::digest(b))
}

impl Repo {
    fn new(default_branch: &str) -> Self {
        Repo {
            default_branch: default_branch.into(),
            objects: HashMap::new(),
            refs: BTreeMap::new(),
            releases: Vec::new(),
            pulls: Vec::new(),
            comments: Vec::new(),
            next_number: 1,
        }
    }

    fn put_blob(&mut self, b: Vec<u8>) -> String {
        let sha = hash_hex("blob", &[&b]);
        self.objects.insert(sha.clone(), Obj::Blob(b));
        sha
    }

    fn blob(&self, sha: &str) -> Option<&Vec<u8>> {
        match self.objects.get(sha)? {
            Obj::Blob(b) => Some(b),
            _ => None,
        }
    }

    fn commit(&self, sha: &str) -> Option<&CommitObj> {
        match self.objects.get(sha)? {
            Obj::Commit(c) => Some(c),
            _ => None,
        }
    }

    fn put_commit(
        &mut self,
        tree: String,
        parents: Vec<String>,
        message: &str,
        who: Person,
        seq: u64,
    ) -> String {
        let sha = hash_hex(
            "commit",
            &[
                tree.as_bytes(),
                parents.join(",").as_bytes(),
                message.as_bytes(),
                who.name.as_bytes(),
                &seq.to_le_bytes(),
            ],
        );
        self.objects.insert(
            sha.clone(),
            Obj::Commit(CommitObj {
                tree,
                parents,
                message: message.into(),
                author: who.clone(),
                committer: who,
                seq,
            }),
        );
        sha
    }

    /// Store a hierarchy of trees for a flat path → blob map; returns the root tree.
    fn write_tree(&mut self, flat: &BTreeMap<String, String>) -> String {
        let mut entries: BTreeMap<String, (String, String, String)> = BTreeMap::new();
        let mut dirs: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (p, sha) in flat {
            match p.split_once('/') {
                Some((d, rest)) => {
                    dirs.entry(d.to_string())
                        .or_default()
                        .insert(rest.to_string(), sha.clone());
                }
                None => {
                    entries.insert(p.clone(), ("100644".into(), "blob".into(), sha.clone()));
                }
            }
        }
        for (d, sub) in dirs {
            let s = self.write_tree(&sub);
            entries.insert(d, ("040000".into(), "tree".into(), s));
        }
        let ser: String = entries
            .iter()
            .map(|(n, (m, t, s))| format!("{m} {t} {s} {n}\n"))
            .collect();
        let sha = hash_hex("tree", &[ser.as_bytes()]);
        self.objects.insert(sha.clone(), Obj::Tree(entries));
        sha
    }

    /// path → blob sha of every file under a tree.
    fn flatten(&self, tree: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        self.flatten_into(tree, "", &mut out);
        out
    }

    fn flatten_into(&self, tree: &str, prefix: &str, out: &mut BTreeMap<String, String>) {
        if let Some(Obj::Tree(entries)) = self.objects.get(tree) {
            for (n, (_, t, s)) in entries {
                let p = format!("{prefix}{n}");
                if t == "tree" {
                    self.flatten_into(s, &format!("{p}/"), out);
                } else {
                    out.insert(p, s.clone());
                }
            }
        }
    }

    /// Peel a ref target (tag objects) to a commit.
    fn peel(&self, mut sha: String) -> Option<String> {
        for _ in 0..10 {
            match self.objects.get(&sha)? {
                Obj::Tag(t) => sha = t.object.clone(),
                Obj::Commit(_) => return Some(sha),
                _ => return None,
            }
        }
        None
    }

    /// A commit-ish: sha, branch or tag name.
    fn resolve(&self, r: &str) -> Option<String> {
        if self.commit(r).is_some() {
            return Some(r.to_string());
        }
        if let Some(s) = self.refs.get(&format!("refs/heads/{r}")) {
            return Some(s.clone());
        }
        if let Some(s) = self.refs.get(&format!("refs/tags/{r}")) {
            return self.peel(s.clone());
        }
        if let Some(s) = r.strip_prefix("refs/").and_then(|_| self.refs.get(r)) {
            return self.peel(s.clone());
        }
        None
    }

    fn ancestors(&self, sha: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![sha.to_string()];
        while let Some(s) = stack.pop() {
            if seen.insert(s.clone())
                && let Some(c) = self.commit(&s)
            {
                stack.extend(c.parents.iter().cloned());
            }
        }
        seen
    }

    fn snapshot(&self) -> RepoSnapshot {
        let mut branches = BTreeMap::new();
        let mut tags = BTreeMap::new();
        for (r, sha) in &self.refs {
            if let Some(b) = r.strip_prefix("refs/heads/") {
                let Some(c) = self.commit(sha) else { continue };
                let files = self
                    .flatten(&c.tree)
                    .into_iter()
                    .map(|(p, s)| (p, self.blob(&s).cloned().unwrap_or_default()))
                    .collect();
                let mut history = Vec::new();
                let mut cur = Some(sha.clone());
                while let Some(s) = cur {
                    let Some(c) = self.commit(&s) else { break };
                    history.push(c.message.clone());
                    cur = c.parents.first().cloned();
                    if history.len() > 10_000 {
                        break;
                    }
                }
                branches.insert(b.to_string(), BranchSnapshot { files, history });
            } else if let Some(t) = r.strip_prefix("refs/tags/") {
                let (annotated, message) = match self.objects.get(sha) {
                    Some(Obj::Tag(o)) => (true, o.message.clone()),
                    _ => (false, String::new()),
                };
                let commit = self
                    .peel(sha.clone())
                    .and_then(|c| self.commit(&c).cloned());
                let (commit_message, files) = match commit {
                    Some(c) => (
                        c.message.clone(),
                        self.flatten(&c.tree)
                            .into_iter()
                            .map(|(p, s)| {
                                (
                                    p,
                                    sha256_hex(self.blob(&s).map(|b| b.as_slice()).unwrap_or(&[])),
                                )
                            })
                            .collect(),
                    ),
                    None => (String::new(), BTreeMap::new()),
                };
                tags.insert(
                    t.to_string(),
                    TagSnapshot {
                        annotated,
                        message,
                        commit_message,
                        files,
                    },
                );
            }
        }
        let mut releases: Vec<ReleaseSnapshot> = self
            .releases
            .iter()
            .map(|r| ReleaseSnapshot {
                tag: r.tag.clone(),
                name: r.name.clone(),
                draft: r.draft,
                body: r.body.clone().unwrap_or_default(),
                assets: r
                    .assets
                    .iter()
                    .map(|a| (a.name.clone(), sha256_hex(&a.bytes)))
                    .collect(),
            })
            .collect();
        releases.sort_by(|a, b| {
            (&a.tag, a.draft, &a.name, &a.body).cmp(&(&b.tag, b.draft, &b.name, &b.body))
        });
        let mut pulls: Vec<PullSnapshot> = self
            .pulls
            .iter()
            .map(|p| PullSnapshot {
                number: p.number,
                head: p.head.clone(),
                base: p.base.clone(),
                title: p.title.clone(),
                body: p.body.clone(),
                state: if p.merged {
                    "merged".into()
                } else {
                    p.state.clone()
                },
            })
            .collect();
        pulls.sort_by_key(|p| p.number);
        let comments = self
            .comments
            .iter()
            .map(|c| CommentSnapshot {
                issue: c.issue,
                body: c.body.clone(),
            })
            .collect();
        RepoSnapshot {
            branches,
            tags,
            releases,
            pulls,
            comments,
        }
    }
}

#[derive(Debug, Default)]
struct World {
    repos: BTreeMap<String, Repo>,
    next_id: u64,
    seq: u64,
}

#[derive(Debug, Default)]
struct FaultState {
    plan: Faults,
    rng: Option<fastrand::Rng>,
    writes_seen: usize,
    route_seen: HashMap<String, usize>,
}

#[derive(Debug, Default)]
struct Stats {
    counts: Counts,
    writes: Vec<WriteRecord>,
}

struct Shared {
    origin: String,
    api_prefix: String,
    upload_prefix: String,
    token: Option<String>,
    started: Instant,
    state: Mutex<World>,
    faults: Mutex<FaultState>,
    stats: Mutex<Stats>,
}

impl Shared {
    fn new(addr: SocketAddr, o: FakeOptions) -> Self {
        Shared {
            origin: format!("http://{addr}"),
            api_prefix: o.api_prefix.trim_end_matches('/').to_string(),
            upload_prefix: o.upload_prefix.trim_end_matches('/').to_string(),
            token: o.token,
            started: Instant::now(),
            state: Mutex::new(World {
                next_id: 1000,
                ..World::default()
            }),
            faults: Mutex::new(FaultState::default()),
            stats: Mutex::new(Stats::default()),
        }
    }

    fn api(&self) -> String {
        format!("{}{}", self.origin, self.api_prefix)
    }

    /// Decide this request's fault (and count it for write/route indices).
    fn pick_fault(&self, method: &Method, route: &str, write: bool) -> (usize, Option<Fault>) {
        let mut f = self.faults.lock().unwrap();
        let key = format!("{method} {route}");
        let nth = {
            let n = f.route_seen.entry(key.clone()).or_insert(0);
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

// ============================================================================ HTTP plumbing

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

/// An answer before it becomes HTTP.
struct Ans {
    status: u16,
    json: Option<Value>,
    raw: Option<(Vec<u8>, String)>,
    link: Option<String>,
    location: Option<String>,
    retry_after: Option<u64>,
}

impl Ans {
    fn json(status: u16, v: Value) -> Self {
        Ans {
            status,
            json: Some(v),
            raw: None,
            link: None,
            location: None,
            retry_after: None,
        }
    }
    fn empty(status: u16) -> Self {
        Ans {
            status,
            json: None,
            raw: None,
            link: None,
            location: None,
            retry_after: None,
        }
    }
    fn msg(status: u16, m: &str) -> Self {
        Self::json(
            status,
            json!({"message": m, "documentation_url": "https://docs.github.com/rest", "status": status.to_string()}),
        )
    }
    fn not_found() -> Self {
        Self::msg(404, "Not Found")
    }
    fn invalid(resource: &str, code: &str, field: &str) -> Self {
        Self::json(
            422,
            json!({"message": "Validation Failed",
                   "errors": [{"resource": resource, "code": code, "field": field}],
                   "documentation_url": "https://docs.github.com/rest", "status": "422"}),
        )
    }
    fn ok(&self) -> bool {
        (200..400).contains(&self.status)
    }
}

fn pct_decode(s: &str, plus_is_space: bool) -> String {
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

fn parse_query(q: Option<&str>) -> BTreeMap<String, String> {
    q.unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (pct_decode(k, true), pct_decode(v, true)),
            None => (pct_decode(p, true), String::new()),
        })
        .collect()
}

fn is_num(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// The route template of a request (for counting and route faults).
fn route_of(segs: &[String], upload: bool) -> String {
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
        ["repos", _, _, "issues", "comments", _] => {
            "/repos/{owner}/{repo}/issues/comments/{id}".into()
        }
        ["repos", _, _, "issues", _, "comments"] => {
            "/repos/{owner}/{repo}/issues/{number}/comments".into()
        }
        _ => format!("/{}", s.join("/")),
    }
}

async fn handle(AxState(sh): AxState<Arc<Shared>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let method = parts.method.clone();
    let path = parts.uri.path().to_string();
    let query = parse_query(parts.uri.query());
    let body = axum::body::to_bytes(body, 512 * 1024 * 1024)
        .await
        .unwrap_or_default()
        .to_vec();

    // Which surface: API, upload or download.
    let (rest, upload) =
        if !sh.upload_prefix.is_empty() && path.starts_with(&format!("{}/", sh.upload_prefix)) {
            (path[sh.upload_prefix.len()..].to_string(), true)
        } else if !sh.api_prefix.is_empty()
            && !path.starts_with("/downloads/")
            && let Some(r) = path.strip_prefix(&sh.api_prefix)
        {
            (r.to_string(), false)
        } else {
            (path.clone(), false)
        };
    let segs: Vec<String> = rest
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| pct_decode(s, false))
        .collect();
    let route = route_of(&segs, upload);
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

    // Faults that stop the request before it is applied.
    match &fault {
        Some(Fault::Status(s)) => {
            log(*s, false);
            return finish(&sh, Ans::msg(*s, "Server Error (injected)"));
        }
        Some(Fault::Drop) => {
            log(0, false);
            return dropped();
        }
        Some(Fault::SecondaryRateLimit(secs)) => {
            log(403, false);
            let mut a = Ans::msg(
                403,
                "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
            );
            a.retry_after = Some(*secs);
            return finish(&sh, a);
        }
        Some(Fault::Delay(d)) => tokio::time::sleep(*d).await,
        _ => {}
    }

    // Authentication.
    let presented = parts
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.trim_start_matches("Bearer ")
                .trim_start_matches("token ")
                .to_string()
        });
    let authed = match (&sh.token, &presented) {
        (Some(expected), Some(p)) if p != expected => {
            log(401, false);
            return finish(&sh, Ans::msg(401, "Bad credentials"));
        }
        (_, Some(_)) => true,
        (_, None) => false,
    };
    if write && !authed {
        log(401, false);
        return finish(&sh, Ans::msg(401, "Requires authentication"));
    }
    let accept = parts
        .headers
        .get("accept")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let ans = {
        let mut w = sh.state.lock().unwrap();
        let ctx = Ctx {
            sh: &sh,
            authed,
            accept: &accept,
            query: &query,
            upload,
        };
        dispatch(&mut w, &ctx, &method, &segs, &body)
    };
    let applied = write && ans.ok();
    match &fault {
        Some(Fault::AfterSuccess(s)) => {
            log(*s, applied);
            finish(&sh, Ans::msg(*s, "Server Error (injected after success)"))
        }
        Some(Fault::DropAfterSuccess) => {
            log(0, applied);
            dropped()
        }
        _ => {
            log(ans.status, applied);
            finish(&sh, ans)
        }
    }
}

fn finish(sh: &Shared, a: Ans) -> Response {
    let mut h = HeaderMap::new();
    let used = sh.stats.lock().unwrap().counts.total();
    let reset = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() + 3600)
        .unwrap_or(0);
    h.insert("x-ratelimit-limit", HeaderValue::from(5000));
    h.insert(
        "x-ratelimit-remaining",
        HeaderValue::from(5000usize.saturating_sub(used).max(1)),
    );
    h.insert("x-ratelimit-used", HeaderValue::from(used));
    h.insert("x-ratelimit-reset", HeaderValue::from(reset));
    h.insert("x-ratelimit-resource", HeaderValue::from_static("core"));
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
    match (a.json, a.raw) {
        (Some(v), _) => {
            h.insert(
                "content-type",
                HeaderValue::from_static("application/json; charset=utf-8"),
            );
            (status, h, v.to_string()).into_response()
        }
        (None, Some((b, ct))) => {
            h.insert("content-type", HeaderValue::from_str(&ct).unwrap());
            (status, h, b).into_response()
        }
        _ => (status, h).into_response(),
    }
}

// ============================================================================ the API

struct Ctx<'a> {
    sh: &'a Shared,
    authed: bool,
    accept: &'a str,
    query: &'a BTreeMap<String, String>,
    upload: bool,
}

impl Ctx<'_> {
    /// Slice a list into the requested page and build the `Link` header.
    fn page(&self, path: &str, items: Vec<Value>) -> Ans {
        let per = self
            .query
            .get("per_page")
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(30)
            .clamp(1, 100);
        let page = self
            .query
            .get("page")
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(1)
            .max(1);
        let last = items.len().div_ceil(per).max(1);
        let slice: Vec<Value> = items.into_iter().skip((page - 1) * per).take(per).collect();
        let mut a = Ans::json(200, Value::Array(slice));
        a.link = self.link(path, page, last, per);
        a
    }

    fn link(&self, path: &str, page: usize, last: usize, per: usize) -> Option<String> {
        let url = |p: usize| {
            let mut q = self.query.clone();
            q.insert("per_page".into(), per.to_string());
            q.insert("page".into(), p.to_string());
            let qs: Vec<String> = q.iter().map(|(k, v)| format!("{k}={}", enc_q(v))).collect();
            format!("<{}{path}?{}>", self.sh.api(), qs.join("&"))
        };
        let mut links = Vec::new();
        if page > 1 {
            links.push(format!("{}; rel=\"prev\"", url(page - 1)));
        }
        if page < last {
            links.push(format!("{}; rel=\"next\"", url(page + 1)));
            links.push(format!("{}; rel=\"last\"", url(last)));
        }
        if page > 1 {
            links.push(format!("{}; rel=\"first\"", url(1)));
        }
        (!links.is_empty()).then(|| links.join(", "))
    }
}

fn enc_q(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn dispatch(w: &mut World, cx: &Ctx, m: &Method, segs: &[String], raw: &[u8]) -> Ans {
    let s: Vec<&str> = segs.iter().map(|s| s.as_str()).collect();
    if let ["downloads", id, ..] = s.as_slice() {
        return download(w, id);
    }
    if s.as_slice() == ["rate_limit"] {
        return Ans::json(
            200,
            json!({"resources": {"core": {"limit": 5000, "remaining": 4999}}}),
        );
    }
    let ["repos", owner, name, rest @ ..] = s.as_slice() else {
        return Ans::not_found();
    };
    let full = format!("{owner}/{name}");
    let body: Value = if raw.is_empty() || cx.upload {
        Value::Null
    } else {
        match serde_json::from_slice(raw) {
            Ok(v) => v,
            Err(_) => return Ans::msg(400, "Problems parsing JSON"),
        }
    };
    w.seq += 1;
    let seq = w.seq;
    let id = {
        w.next_id += 1;
        w.next_id
    };
    let Some(repo) = w.repos.get_mut(&full) else {
        return Ans::not_found();
    };
    let base = format!("/repos/{full}");
    let api = cx.sh.api();
    let rj = |r: &Rel| release_json(cx.sh, &full, r);
    match (m.clone(), rest) {
        (Method::GET, []) => Ans::json(
            200,
            json!({"id": 1, "name": name, "full_name": full, "default_branch": repo.default_branch,
                   "private": false, "html_url": format!("{}/{full}", cx.sh.origin)}),
        ),
        // ---------------------------------------------------------------- refs
        (Method::GET, ["git", "ref", r @ ..]) => {
            if repo.refs.is_empty() {
                return Ans::msg(409, "Git Repository is empty.");
            }
            let full_ref = format!("refs/{}", r.join("/"));
            match repo.refs.get(&full_ref) {
                Some(sha) => Ans::json(200, ref_json(repo, &api, &full, &full_ref, sha)),
                None => Ans::not_found(),
            }
        }
        (Method::POST, ["git", "refs"]) => {
            let r = body["ref"].as_str().unwrap_or("").to_string();
            let sha = body["sha"].as_str().unwrap_or("").to_string();
            if !r.starts_with("refs/") || r.matches('/').count() < 2 {
                return Ans::msg(
                    422,
                    "Reference name must start with 'refs/' and have at least two slashes.",
                );
            }
            if !repo.objects.contains_key(&sha) {
                return Ans::msg(422, "Object does not exist");
            }
            if repo.refs.contains_key(&r) {
                return Ans::msg(422, "Reference already exists");
            }
            repo.refs.insert(r.clone(), sha.clone());
            Ans::json(201, ref_json(repo, &api, &full, &r, &sha))
        }
        (Method::PATCH, ["git", "refs", r @ ..]) => {
            let full_ref = format!("refs/{}", r.join("/"));
            let sha = body["sha"].as_str().unwrap_or("").to_string();
            let force = body["force"].as_bool().unwrap_or(false);
            let Some(cur) = repo.refs.get(&full_ref).cloned() else {
                return Ans::msg(422, "Reference does not exist");
            };
            if !repo.objects.contains_key(&sha) {
                return Ans::msg(422, "Object does not exist");
            }
            if !force && !repo.ancestors(&sha).contains(&cur) {
                return Ans::msg(422, "Update is not a fast forward");
            }
            repo.refs.insert(full_ref.clone(), sha.clone());
            Ans::json(200, ref_json(repo, &api, &full, &full_ref, &sha))
        }
        (Method::DELETE, ["git", "refs", r @ ..]) => {
            let full_ref = format!("refs/{}", r.join("/"));
            match repo.refs.remove(&full_ref) {
                Some(_) => Ans::empty(204),
                None => Ans::msg(422, "Reference does not exist"),
            }
        }
        // ---------------------------------------------------------------- objects
        (Method::POST, ["git", "blobs"]) => {
            let content = body["content"].as_str().unwrap_or("");
            let bytes = if body["encoding"].as_str() == Some("base64") {
                match b64_decode(content) {
                    Some(b) => b,
                    None => return Ans::invalid("Blob", "invalid", "content"),
                }
            } else {
                content.as_bytes().to_vec()
            };
            let sha = repo.put_blob(bytes);
            Ans::json(
                201,
                json!({"sha": sha, "url": format!("{api}{base}/git/blobs/{sha}")}),
            )
        }
        (Method::GET, ["git", "blobs", sha]) => match repo.blob(sha) {
            Some(b) => Ans::json(
                200,
                json!({"sha": sha, "size": b.len(), "encoding": "base64", "content": b64_lines(b),
                       "url": format!("{api}{base}/git/blobs/{sha}")}),
            ),
            None => Ans::not_found(),
        },
        (Method::POST, ["git", "trees"]) => post_tree(repo, &api, &base, &body),
        (Method::GET, ["git", "trees", sha]) => {
            let Some(Obj::Tree(_)) = repo.objects.get(*sha) else {
                return Ans::not_found();
            };
            let recursive = cx
                .query
                .get("recursive")
                .is_some_and(|v| !v.is_empty() && v != "0" && v != "false");
            Ans::json(200, tree_json(repo, &api, &base, sha, recursive))
        }
        (Method::POST, ["git", "commits"]) => {
            let tree = body["tree"].as_str().unwrap_or("").to_string();
            if !matches!(repo.objects.get(&tree), Some(Obj::Tree(_))) {
                return Ans::msg(422, "Tree SHA does not exist");
            }
            let parents: Vec<String> = body["parents"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|p| p.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            if parents.iter().any(|p| repo.commit(p).is_none()) {
                return Ans::msg(422, "Parent SHA does not exist or is not a commit object");
            }
            let who = |v: &Value| {
                person(
                    v["name"].as_str().unwrap_or("ghost"),
                    v["email"].as_str().unwrap_or("ghost@example.com"),
                    seq,
                )
            };
            let author = if body["author"].is_object() {
                who(&body["author"])
            } else {
                person("Token owner", "owner@example.com", seq)
            };
            let committer = if body["committer"].is_object() {
                who(&body["committer"])
            } else {
                author.clone()
            };
            let message = body["message"].as_str().unwrap_or("").to_string();
            let sha = repo.put_commit(tree, parents, &message, author, seq);
            if let Some(Obj::Commit(c)) = repo.objects.get_mut(&sha) {
                c.committer = committer;
            }
            Ans::json(201, commit_json(repo, &api, &base, &sha))
        }
        (Method::GET, ["git", "commits", sha]) => match repo.commit(sha) {
            Some(_) => Ans::json(200, commit_json(repo, &api, &base, sha)),
            None => Ans::not_found(),
        },
        (Method::POST, ["git", "tags"]) => {
            let object = body["object"].as_str().unwrap_or("").to_string();
            if !repo.objects.contains_key(&object) {
                return Ans::msg(422, "Object does not exist");
            }
            let t = TagObj {
                tag: body["tag"].as_str().unwrap_or("").into(),
                message: body["message"].as_str().unwrap_or("").into(),
                object: object.clone(),
                kind: body["type"].as_str().unwrap_or("commit").into(),
                tagger: person(
                    body["tagger"]["name"].as_str().unwrap_or("ghost"),
                    body["tagger"]["email"]
                        .as_str()
                        .unwrap_or("ghost@example.com"),
                    seq,
                ),
            };
            let sha = hash_hex(
                "tag",
                &[
                    t.tag.as_bytes(),
                    t.message.as_bytes(),
                    object.as_bytes(),
                    &seq.to_le_bytes(),
                ],
            );
            repo.objects.insert(sha.clone(), Obj::Tag(t));
            Ans::json(201, tag_json(repo, &api, &base, &sha))
        }
        (Method::GET, ["git", "tags", sha]) => match repo.objects.get(*sha) {
            Some(Obj::Tag(_)) => Ans::json(200, tag_json(repo, &api, &base, sha)),
            _ => Ans::not_found(),
        },
        // ---------------------------------------------------------------- contents, compare
        (Method::GET, ["contents", p @ ..]) => {
            let r = cx
                .query
                .get("ref")
                .cloned()
                .unwrap_or_else(|| repo.default_branch.clone());
            let Some(c) = repo.resolve(&r) else {
                return Ans::msg(404, &format!("No commit found for the ref {r}"));
            };
            let path = p.join("/");
            let flat = repo.flatten(&repo.commit(&c).unwrap().tree.clone());
            if let Some(sha) = flat.get(&path) {
                let b = repo.blob(sha).cloned().unwrap_or_default();
                let big = b.len() > 1024 * 1024;
                return Ans::json(
                    200,
                    json!({"type": "file", "name": p.last().copied().unwrap_or(""), "path": path,
                           "sha": sha, "size": b.len(),
                           "encoding": if big { "none" } else { "base64" },
                           "content": if big { String::new() } else { b64_lines(&b) }}),
                );
            }
            let prefix = if path.is_empty() {
                String::new()
            } else {
                format!("{path}/")
            };
            let mut names = BTreeMap::new();
            for (fp, sha) in &flat {
                if let Some(rest) = fp.strip_prefix(&prefix) {
                    match rest.split_once('/') {
                        Some((d, _)) => names.insert(d.to_string(), ("dir", String::new())),
                        None => names.insert(rest.to_string(), ("file", sha.clone())),
                    };
                }
            }
            if names.is_empty() {
                return Ans::not_found();
            }
            let list: Vec<Value> = names
                .into_iter()
                .map(|(n, (t, sha))| json!({"type": t, "name": n, "path": format!("{prefix}{n}"), "sha": sha}))
                .collect();
            Ans::json(200, Value::Array(list))
        }
        (Method::GET, ["compare", spec]) => {
            let Some((b, h)) = spec.split_once("...") else {
                return Ans::not_found();
            };
            let (Some(bs), Some(hs)) = (repo.resolve(b), repo.resolve(h)) else {
                return Ans::not_found();
            };
            let base_anc = repo.ancestors(&bs);
            let head_anc = repo.ancestors(&hs);
            let mut commits: Vec<(u64, String)> = head_anc
                .iter()
                .filter(|c| !base_anc.contains(*c))
                .map(|c| (repo.commit(c).unwrap().seq, c.clone()))
                .collect();
            commits.sort();
            let behind = base_anc.iter().filter(|c| !head_anc.contains(*c)).count();
            let all: Vec<Value> = commits
                .iter()
                .map(|(_, c)| commit_json(repo, &api, &base, c))
                .collect();
            let total = all.len();
            let paged = cx.query.contains_key("per_page") || cx.query.contains_key("page");
            let (list, link) = if paged {
                let a = cx.page(&format!("{base}/compare/{spec}"), all);
                (a.json.unwrap(), a.link)
            } else {
                (Value::Array(all.into_iter().take(250).collect()), None)
            };
            let status = match (total, behind) {
                (0, 0) => "identical",
                (_, 0) => "ahead",
                (0, _) => "behind",
                _ => "diverged",
            };
            let mut a = Ans::json(
                200,
                json!({"status": status, "ahead_by": total, "behind_by": behind,
                       "total_commits": total, "commits": list}),
            );
            a.link = link;
            a
        }
        // ---------------------------------------------------------------- releases
        (Method::GET, ["releases"]) => {
            let mut rels: Vec<&Rel> = repo
                .releases
                .iter()
                .filter(|r| cx.authed || !r.draft)
                .collect();
            rels.sort_by_key(|r| std::cmp::Reverse(r.seq));
            let items = rels.into_iter().map(&rj).collect();
            cx.page(&format!("{base}/releases"), items)
        }
        (Method::POST, ["releases"]) => {
            let tag = body["tag_name"].as_str().unwrap_or("").to_string();
            if tag.is_empty() {
                return Ans::invalid("Release", "missing_field", "tag_name");
            }
            let draft = body["draft"].as_bool().unwrap_or(false);
            if !draft && repo.releases.iter().any(|r| r.tag == tag && !r.draft) {
                return Ans::invalid("Release", "already_exists", "tag_name");
            }
            let target = body["target_commitish"]
                .as_str()
                .unwrap_or(&repo.default_branch)
                .to_string();
            if !draft && !repo.refs.contains_key(&format!("refs/tags/{tag}")) {
                let Some(c) = repo.resolve(&target) else {
                    return Ans::invalid("Release", "invalid", "target_commitish");
                };
                repo.refs.insert(format!("refs/tags/{tag}"), c);
            }
            let r = Rel {
                id,
                tag,
                target,
                name: body["name"].as_str().map(str::to_string),
                body: body["body"].as_str().map(str::to_string),
                draft,
                prerelease: body["prerelease"].as_bool().unwrap_or(false),
                assets: vec![],
                seq,
            };
            let j = rj(&r);
            repo.releases.push(r);
            Ans::json(201, j)
        }
        (Method::GET, ["releases", "tags", tag]) => {
            match repo
                .releases
                .iter()
                .filter(|r| r.tag == *tag && !r.draft)
                .max_by_key(|r| r.seq)
            {
                Some(r) => Ans::json(200, rj(r)),
                None => Ans::not_found(),
            }
        }
        (Method::GET, ["releases", "assets", aid]) => {
            let Some((r, a)) = find_asset(repo, aid) else {
                return Ans::not_found();
            };
            if r.draft && !cx.authed {
                return Ans::not_found();
            }
            if cx.accept.contains("application/octet-stream") {
                let mut ans = Ans::empty(302);
                ans.location = Some(format!("{}/downloads/{}/{}", cx.sh.origin, a.id, a.name));
                return ans;
            }
            Ans::json(200, asset_json(cx.sh, &full, r, a))
        }
        (Method::DELETE, ["releases", "assets", aid]) => {
            let aid: u64 = aid.parse().unwrap_or(0);
            for r in &mut repo.releases {
                if let Some(i) = r.assets.iter().position(|a| a.id == aid) {
                    r.assets.remove(i);
                    return Ans::empty(204);
                }
            }
            Ans::not_found()
        }
        (Method::GET, ["releases", rid]) if is_num(rid) => match find_rel(repo, rid) {
            Some(r) if cx.authed || !r.draft => Ans::json(200, rj(r)),
            _ => Ans::not_found(),
        },
        (Method::PATCH, ["releases", rid]) if is_num(rid) => {
            let Some(idx) = repo.releases.iter().position(|r| r.id.to_string() == *rid) else {
                return Ans::not_found();
            };
            let mut r = repo.releases[idx].clone();
            if let Some(t) = body["tag_name"].as_str() {
                r.tag = t.into();
            }
            if let Some(n) = body["name"].as_str() {
                r.name = Some(n.into());
            }
            if let Some(b) = body["body"].as_str() {
                r.body = Some(b.into());
            }
            if let Some(p) = body["prerelease"].as_bool() {
                r.prerelease = p;
            }
            if let Some(d) = body["draft"].as_bool() {
                r.draft = d;
            }
            if !r.draft {
                if repo
                    .releases
                    .iter()
                    .any(|o| o.id != r.id && o.tag == r.tag && !o.draft)
                {
                    return Ans::invalid("Release", "already_exists", "tag_name");
                }
                if !repo.refs.contains_key(&format!("refs/tags/{}", r.tag)) {
                    let Some(c) = repo.resolve(&r.target) else {
                        return Ans::invalid("Release", "invalid", "target_commitish");
                    };
                    repo.refs.insert(format!("refs/tags/{}", r.tag), c);
                }
            }
            repo.releases[idx] = r;
            Ans::json(200, rj(&repo.releases[idx]))
        }
        (Method::DELETE, ["releases", rid]) if is_num(rid) => {
            match repo.releases.iter().position(|r| r.id.to_string() == *rid) {
                Some(i) => {
                    repo.releases.remove(i);
                    Ans::empty(204)
                }
                None => Ans::not_found(),
            }
        }
        (Method::GET, ["releases", rid, "assets"]) if !cx.upload => match find_rel(repo, rid) {
            Some(r) if cx.authed || !r.draft => {
                let items = r
                    .assets
                    .iter()
                    .map(|a| asset_json(cx.sh, &full, r, a))
                    .collect();
                cx.page(&format!("{base}/releases/{rid}/assets"), items)
            }
            _ => Ans::not_found(),
        },
        (Method::POST, ["releases", rid, "assets"]) if cx.upload => {
            let Some(name) = cx.query.get("name").cloned().filter(|n| !n.is_empty()) else {
                return Ans::invalid("ReleaseAsset", "missing_field", "name");
            };
            let Some(r) = repo.releases.iter_mut().find(|r| r.id.to_string() == *rid) else {
                return Ans::not_found();
            };
            if r.assets.iter().any(|a| a.name == name) {
                return Ans::invalid("ReleaseAsset", "already_exists", "name");
            }
            let a = Asset {
                id,
                name,
                label: cx.query.get("label").cloned().unwrap_or_default(),
                content_type: "application/octet-stream".into(),
                bytes: raw.to_vec(),
            };
            r.assets.push(a);
            let r = r.clone();
            Ans::json(201, asset_json(cx.sh, &full, &r, r.assets.last().unwrap()))
        }
        // ---------------------------------------------------------------- pulls
        (Method::GET, ["pulls"]) => {
            let state = cx.query.get("state").map(String::as_str).unwrap_or("open");
            let head = cx.query.get("head").cloned();
            let basef = cx.query.get("base").cloned();
            let mut ps: Vec<&Pull> = repo
                .pulls
                .iter()
                .filter(|p| state == "all" || p.state == state)
                .filter(|p| {
                    head.as_ref()
                        .is_none_or(|h| *h == format!("{owner}:{}", p.head) || *h == p.head)
                })
                .filter(|p| basef.as_ref().is_none_or(|b| *b == p.base))
                .collect();
            ps.sort_by_key(|p| std::cmp::Reverse(p.number));
            let items = ps
                .into_iter()
                .map(|p| pull_json(cx.sh, repo, &full, owner, p, false))
                .collect();
            cx.page(&format!("{base}/pulls"), items)
        }
        (Method::POST, ["pulls"]) => {
            let head_raw = body["head"].as_str().unwrap_or("");
            let head = head_raw
                .rsplit_once(':')
                .map(|(_, b)| b)
                .unwrap_or(head_raw)
                .to_string();
            let basebr = body["base"].as_str().unwrap_or("").to_string();
            let (Some(hs), Some(bs)) = (
                repo.refs.get(&format!("refs/heads/{head}")).cloned(),
                repo.refs.get(&format!("refs/heads/{basebr}")).cloned(),
            ) else {
                return Ans::invalid("PullRequest", "invalid", "head");
            };
            if repo
                .pulls
                .iter()
                .any(|p| p.head == head && p.base == basebr && p.state == "open")
            {
                return Ans::json(
                    422,
                    json!({"message": "Validation Failed",
                           "errors": [{"resource": "PullRequest", "code": "custom",
                                       "message": format!("A pull request already exists for {owner}:{head}.")}]}),
                );
            }
            if repo.ancestors(&bs).contains(&hs) {
                return Ans::json(
                    422,
                    json!({"message": "Validation Failed",
                           "errors": [{"resource": "PullRequest", "code": "custom",
                                       "message": format!("No commits between {basebr} and {head}")}]}),
                );
            }
            let number = repo.next_number;
            repo.next_number += 1;
            let p = Pull {
                number,
                id,
                head,
                base: basebr,
                title: body["title"].as_str().unwrap_or("").into(),
                body: body["body"].as_str().unwrap_or("").into(),
                state: "open".into(),
                merged: false,
            };
            let j = pull_json(cx.sh, repo, &full, owner, &p, true);
            repo.pulls.push(p);
            Ans::json(201, j)
        }
        (Method::GET, ["pulls", n]) => match repo.pulls.iter().find(|p| p.number.to_string() == *n)
        {
            Some(p) => Ans::json(200, pull_json(cx.sh, repo, &full, owner, p, true)),
            None => Ans::not_found(),
        },
        (Method::PATCH, ["pulls", n]) => {
            let Some(i) = repo.pulls.iter().position(|p| p.number.to_string() == *n) else {
                return Ans::not_found();
            };
            let p = &mut repo.pulls[i];
            if let Some(t) = body["title"].as_str() {
                p.title = t.into();
            }
            if let Some(b) = body["body"].as_str() {
                p.body = b.into();
            }
            if let Some(b) = body["base"].as_str() {
                p.base = b.into();
            }
            if let Some(s) = body["state"].as_str()
                && !p.merged
                && (s == "open" || s == "closed")
            {
                p.state = s.into();
            }
            let p = repo.pulls[i].clone();
            Ans::json(200, pull_json(cx.sh, repo, &full, owner, &p, true))
        }
        // ---------------------------------------------------------------- comments
        (Method::GET, ["issues", n, "comments"]) if is_num(n) => {
            let n: u64 = n.parse().unwrap();
            if !repo.pulls.iter().any(|p| p.number == n) {
                return Ans::not_found();
            }
            let items = repo
                .comments
                .iter()
                .filter(|c| c.issue == n)
                .map(|c| comment_json(cx.sh, &full, c))
                .collect();
            cx.page(&format!("{base}/issues/{n}/comments"), items)
        }
        (Method::POST, ["issues", n, "comments"]) if is_num(n) => {
            let n: u64 = n.parse().unwrap();
            if !repo.pulls.iter().any(|p| p.number == n) {
                return Ans::not_found();
            }
            let Some(b) = body["body"].as_str() else {
                return Ans::invalid("IssueComment", "missing_field", "body");
            };
            let c = Comment {
                id,
                issue: n,
                body: b.into(),
            };
            let j = comment_json(cx.sh, &full, &c);
            repo.comments.push(c);
            Ans::json(201, j)
        }
        (Method::GET, ["issues", "comments", cid]) => {
            match repo.comments.iter().find(|c| c.id.to_string() == *cid) {
                Some(c) => Ans::json(200, comment_json(cx.sh, &full, c)),
                None => Ans::not_found(),
            }
        }
        // GitHub accepts POST for PATCH here (octocrab's update_comment sends POST).
        (Method::PATCH | Method::POST, ["issues", "comments", cid]) => {
            let Some(c) = repo.comments.iter_mut().find(|c| c.id.to_string() == *cid) else {
                return Ans::not_found();
            };
            let Some(b) = body["body"].as_str() else {
                return Ans::invalid("IssueComment", "missing_field", "body");
            };
            c.body = b.into();
            let c = c.clone();
            Ans::json(200, comment_json(cx.sh, &full, &c))
        }
        (Method::DELETE, ["issues", "comments", cid]) => {
            match repo.comments.iter().position(|c| c.id.to_string() == *cid) {
                Some(i) => {
                    repo.comments.remove(i);
                    Ans::empty(204)
                }
                None => Ans::not_found(),
            }
        }
        _ => Ans::not_found(),
    }
}

fn download(w: &World, id: &str) -> Ans {
    for repo in w.repos.values() {
        for r in &repo.releases {
            if let Some(a) = r.assets.iter().find(|a| a.id.to_string() == id) {
                return Ans {
                    raw: Some((a.bytes.clone(), a.content_type.clone())),
                    ..Ans::empty(200)
                };
            }
        }
    }
    Ans::not_found()
}

fn find_rel<'a>(repo: &'a Repo, rid: &str) -> Option<&'a Rel> {
    repo.releases.iter().find(|r| r.id.to_string() == rid)
}

fn find_asset<'a>(repo: &'a Repo, aid: &str) -> Option<(&'a Rel, &'a Asset)> {
    repo.releases.iter().find_map(|r| {
        r.assets
            .iter()
            .find(|a| a.id.to_string() == aid)
            .map(|a| (r, a))
    })
}

fn b64_lines(b: &[u8]) -> String {
    let s = base64::engine::general_purpose::STANDARD.encode(b);
    let mut out = String::with_capacity(s.len() + s.len() / 60 + 1);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && i % 60 == 0 {
            out.push('\n');
        }
        out.push(ch);
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

fn b64_decode(s: &str) -> Option<Vec<u8>> {
    let clean: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD.decode(clean).ok()
}

fn ref_json(repo: &Repo, api: &str, full: &str, r: &str, sha: &str) -> Value {
    let kind = match repo.objects.get(sha) {
        Some(Obj::Tag(_)) => "tag",
        Some(Obj::Tree(_)) => "tree",
        Some(Obj::Blob(_)) => "blob",
        _ => "commit",
    };
    json!({"ref": r, "node_id": format!("REF_{sha}"), "url": format!("{api}/repos/{full}/git/{r}"),
           "object": {"sha": sha, "type": kind, "url": format!("{api}/repos/{full}/git/{kind}s/{sha}")}})
}

fn commit_json(repo: &Repo, api: &str, base: &str, sha: &str) -> Value {
    let c = repo.commit(sha).unwrap();
    json!({
        "sha": sha, "node_id": format!("C_{sha}"), "url": format!("{api}{base}/git/commits/{sha}"),
        "html_url": format!("{api}{base}/commit/{sha}"),
        "author": person_json(&c.author), "committer": person_json(&c.committer),
        "message": c.message, "tree": {"sha": c.tree, "url": format!("{api}{base}/git/trees/{}", c.tree)},
        "parents": c.parents.iter().map(|p| json!({"sha": p, "url": format!("{api}{base}/git/commits/{p}")})).collect::<Vec<_>>(),
        // The compare and commits APIs nest the git commit under `commit`.
        "commit": {"author": person_json(&c.author), "committer": person_json(&c.committer),
                   "message": c.message, "tree": {"sha": c.tree}},
    })
}

fn tag_json(repo: &Repo, api: &str, base: &str, sha: &str) -> Value {
    let Some(Obj::Tag(t)) = repo.objects.get(sha) else {
        return Value::Null;
    };
    json!({"sha": sha, "node_id": format!("T_{sha}"), "url": format!("{api}{base}/git/tags/{sha}"),
           "tag": t.tag, "message": t.message, "tagger": person_json(&t.tagger),
           "object": {"sha": t.object, "type": t.kind, "url": format!("{api}{base}/git/{}s/{}", t.kind, t.object)},
           "verification": {"verified": false, "reason": "unsigned"}})
}

fn tree_json(repo: &Repo, api: &str, base: &str, sha: &str, recursive: bool) -> Value {
    let mut entries = Vec::new();
    fn walk(repo: &Repo, sha: &str, prefix: &str, recursive: bool, out: &mut Vec<Value>) {
        if let Some(Obj::Tree(es)) = repo.objects.get(sha) {
            for (n, (mode, t, s)) in es {
                let p = format!("{prefix}{n}");
                let size = repo.blob(s).map(|b| b.len());
                let mut e = json!({"path": p, "mode": mode, "type": t, "sha": s});
                if let Some(size) = size {
                    e["size"] = json!(size);
                }
                out.push(e);
                if recursive && t == "tree" {
                    walk(repo, s, &format!("{p}/"), recursive, out);
                }
            }
        }
    }
    walk(repo, sha, "", recursive, &mut entries);
    json!({"sha": sha, "url": format!("{api}{base}/git/trees/{sha}"), "tree": entries, "truncated": false})
}

fn post_tree(repo: &mut Repo, api: &str, base: &str, body: &Value) -> Ans {
    let mut flat = match body["base_tree"].as_str() {
        Some(bt) => {
            if !matches!(repo.objects.get(bt), Some(Obj::Tree(_))) {
                return Ans::msg(422, "base_tree is not a valid tree oid");
            }
            repo.flatten(bt)
        }
        None => BTreeMap::new(),
    };
    let Some(entries) = body["tree"].as_array() else {
        return Ans::invalid("Tree", "missing_field", "tree");
    };
    for e in entries {
        let path = e["path"]
            .as_str()
            .unwrap_or("")
            .trim_matches('/')
            .to_string();
        if path.is_empty() {
            return Ans::invalid("Tree", "invalid", "tree.path");
        }
        let kind = e["type"].as_str().unwrap_or("blob");
        if let Some(content) = e["content"].as_str() {
            let s = repo.put_blob(content.as_bytes().to_vec());
            flat.insert(path, s);
        } else if e["sha"].is_null() {
            let prefix = format!("{path}/");
            let before = flat.len();
            flat.retain(|p, _| *p != path && !p.starts_with(&prefix));
            if flat.len() == before {
                return Ans::msg(422, "GitRPC::BadObjectState");
            }
        } else {
            let sha = e["sha"].as_str().unwrap_or("").to_string();
            match (kind, repo.objects.get(&sha)) {
                ("blob", Some(Obj::Blob(_))) => {
                    flat.insert(path, sha);
                }
                ("tree", Some(Obj::Tree(_))) => {
                    let prefix = format!("{path}/");
                    flat.retain(|p, _| !p.starts_with(&prefix));
                    for (p, s) in repo.flatten(&sha) {
                        flat.insert(format!("{prefix}{p}"), s);
                    }
                }
                _ => return Ans::msg(422, &format!("tree.sha {sha} is not a valid {kind}")),
            }
        }
    }
    let sha = repo.write_tree(&flat);
    Ans::json(201, tree_json(repo, api, base, &sha, false))
}

fn release_json(sh: &Shared, full: &str, r: &Rel) -> Value {
    let api = sh.api();
    json!({
        "url": format!("{api}/repos/{full}/releases/{}", r.id),
        "html_url": if r.draft { format!("{}/{full}/releases/edit/untagged-{}", sh.origin, r.id) }
                    else { format!("{}/{full}/releases/tag/{}", sh.origin, r.tag) },
        "assets_url": format!("{api}/repos/{full}/releases/{}/assets", r.id),
        "upload_url": format!("{}{}/repos/{full}/releases/{}/assets{{?name,label}}", sh.origin, sh.upload_prefix, r.id),
        "tarball_url": null, "zipball_url": null,
        "id": r.id, "node_id": format!("RE_{}", r.id),
        "tag_name": r.tag, "target_commitish": r.target, "name": r.name, "body": r.body,
        "draft": r.draft, "prerelease": r.prerelease, "immutable": false,
        "created_at": date_of(r.seq), "published_at": if r.draft { Value::Null } else { json!(date_of(r.seq)) },
        "author": null,
        "assets": r.assets.iter().map(|a| asset_json(sh, full, r, a)).collect::<Vec<_>>(),
    })
}

fn asset_json(sh: &Shared, full: &str, r: &Rel, a: &Asset) -> Value {
    json!({
        "url": format!("{}/repos/{full}/releases/assets/{}", sh.api(), a.id),
        "browser_download_url": format!("{}/{full}/releases/download/{}/{}", sh.origin, r.tag, a.name),
        "id": a.id, "node_id": format!("RA_{}", a.id), "name": a.name, "label": a.label,
        "state": "uploaded", "content_type": a.content_type, "size": a.bytes.len(),
        "digest": format!("sha256:{}", sha256_hex(&a.bytes)),
        "download_count": 0, "created_at": date_of(0), "updated_at": date_of(0), "uploader": null,
    })
}

fn pull_json(sh: &Shared, repo: &Repo, full: &str, owner: &str, p: &Pull, single: bool) -> Value {
    let sha = |b: &str| repo.refs.get(&format!("refs/heads/{b}")).cloned();
    let mut v = json!({
        "url": format!("{}/repos/{full}/pulls/{}", sh.api(), p.number),
        "html_url": format!("{}/{full}/pull/{}", sh.origin, p.number),
        "id": p.id, "number": p.number, "state": p.state, "title": p.title, "body": p.body,
        "draft": false, "user": null,
        "merged_at": if p.merged { json!(date_of(p.id)) } else { Value::Null },
        "head": {"ref": p.head, "sha": sha(&p.head), "label": format!("{owner}:{}", p.head)},
        "base": {"ref": p.base, "sha": sha(&p.base), "label": format!("{owner}:{}", p.base)},
    });
    if single {
        v["merged"] = json!(p.merged);
    }
    v
}

fn comment_json(sh: &Shared, full: &str, c: &Comment) -> Value {
    json!({"id": c.id, "node_id": format!("IC_{}", c.id), "body": c.body, "user": null,
           "url": format!("{}/repos/{full}/issues/comments/{}", sh.api(), c.id),
           "html_url": format!("{}/{full}/issues/{}#issuecomment-{}", sh.origin, c.issue, c.id),
           "issue_url": format!("{}/repos/{full}/issues/{}", sh.api(), c.issue)})
}
