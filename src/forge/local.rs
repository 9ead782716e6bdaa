//! The local forge: the embedded default, no network and no token.
//!
//! Layout under the forge folder:
//!
//! ```text
//! <forge>/run.lock                                  held for a whole `release` run (see [`LocalForge::lock_run`])
//! <forge>/ids                                       the id counter (releases, assets, pulls, issues, comments)
//! <forge>/repos/<owner>/<name>.git                  real bare git repositories (git2)
//! <forge>/repos/<owner>/<name>.lock                 per-repository lock for ref, release and pull updates
//! <forge>/releases/<owner>/<name>/<id>/release.json a release manifest (the source of truth)
//! <forge>/releases/<owner>/<name>/<id>/assets/<f>   its assets, one file each
//! <forge>/pulls/<owner>/<name>/<number>.json        pull requests
//! <forge>/issues/<owner>/<name>/<number>.json       issues (the status dashboard)
//! <forge>/comments/<owner>/<name>/<id>.json         issue and PR comments
//! ```
//!
//! It behaves like GitHub where the bot's correctness depends on it: a duplicate tag or asset
//! name is [`ForgeError::AlreadyExists`], a branch update that is not the expected
//! compare-and-swap is [`ForgeError::Conflict`], several drafts may carry the same tag (that is
//! how duplicate drafts happen on GitHub, and `apply` must clean them), but a second *published*
//! release of a tag is refused.
//!
//! Crash safety: every file is written to a temporary name in the same directory and renamed
//! into place, and a new release directory is built under a temporary name and renamed whole,
//! so a process killed at any instant leaves either the old or the new state, never a torn one.
//! Locks are `flock`-style OS locks (`std::fs::File::lock`), released by the OS when a process
//! dies, so a crash never leaves a stale lock behind.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Repository, Signature};
use serde::{Deserialize, Serialize};

use crate::clock::SharedClock;

mod human;
pub use human::{MergeMethod, state_word};
mod issues;

use super::{
    AssetInfo, AutoMerge, CommentInfo, CommitInfo, FileChanges, Forge, ForgeError, ForgeResult,
    IssueInfo, IssueState, PullInfo, PullState, ReleaseInfo, RepoRef,
};

/// A forge living in a folder: bare repositories plus release, pull and comment files.
#[derive(Debug, Clone)]
pub struct LocalForge {
    root: PathBuf,
    committer_name: String,
    committer_email: String,
    /// `owner/name` → directory whose files become the first commit of a new repository.
    seeds: BTreeMap<RepoRef, PathBuf>,
    /// The only repositories [`Forge::ensure_repo`] may create (`None`: any, for tests that
    /// build a forge by hand). From a configuration: `forge.repository` and the seeds, so a
    /// misspelt tenant repository is reported missing instead of being created empty.
    creatable: Option<std::collections::BTreeSet<RepoRef>>,
    /// Dates commits and tags.
    clock: SharedClock,
}

/// Held while a `release` run works on the forge; dropping it releases the lock.
///
/// This is the local forge's concurrency guard: two `stackbot release` processes on the same
/// forge folder are serialised, so the second one observes the first one's result and finds
/// nothing left to do. (On GitHub, where no such lock exists, `apply` relies on unique tags,
/// compare-and-swap branch updates and a canonical draft per tag instead.)
#[derive(Debug)]
pub struct RunLock {
    _lock: FileLock,
}

/// The manifest of one release, stored as `release.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Manifest {
    id: u64,
    tag: String,
    name: Option<String>,
    draft: bool,
    body: String,
    assets: Vec<AssetInfo>,
    /// Set when published (absent in manifests written before the forge kept it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    published_at: Option<chrono::DateTime<chrono::Utc>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredComment {
    id: u64,
    issue: u64,
    body: String,
}

fn io_err(what: impl Into<String>, e: impl std::fmt::Display) -> ForgeError {
    ForgeError::Io {
        what: what.into(),
        reason: e.to_string(),
    }
}

/// [`io_err`] for a file-system call: a refusal (permission denied, read-only file system)
/// becomes [`ForgeError::Denied`], which a person must fix, instead of transient I/O trouble.
fn fs_err(what: impl Into<String>, e: std::io::Error) -> ForgeError {
    if is_denied(&e) {
        ForgeError::Denied {
            what: what.into(),
            reason: e.to_string(),
        }
    } else {
        io_err(what, e)
    }
}

/// Whether an I/O error is the file system refusing access rather than trouble that passes.
pub fn is_denied(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
    )
}

fn git_err(what: impl Into<String>, e: git2::Error) -> ForgeError {
    io_err(what, e.message())
}

/// Write `bytes` to `path` crash-safely: temp file in the same directory, fsync, rename.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.tmp.{}.{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("file"),
        std::process::id(),
        fastrand::u64(..)
    ));
    {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

/// An exclusive OS lock on a file, released on drop (and by the OS if the process dies).
#[derive(Debug)]
struct FileLock(File);

impl FileLock {
    fn acquire(path: &Path) -> ForgeResult<FileLock> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(|e| fs_err(path.display().to_string(), e))?;
        }
        let f = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| fs_err(path.display().to_string(), e))?;
        f.lock()
            .map_err(|e| fs_err(format!("lock {}", path.display()), e))?;
        Ok(FileLock(f))
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

impl LocalForge {
    /// A forge rooted at `root` (created on first write). `committer` signs commits and tags.
    /// A local forge at `root` whose commits and tags are dated by `clock` (the run's clock:
    /// the CLI's, or a test's manual one).
    pub fn on_clock(
        root: impl Into<PathBuf>,
        committer_name: &str,
        committer_email: &str,
        clock: SharedClock,
    ) -> Self {
        LocalForge {
            root: normalize(root.into()),
            committer_name: committer_name.into(),
            committer_email: committer_email.into(),
            seeds: BTreeMap::new(),
            creatable: None,
            clock,
        }
    }

    /// [`LocalForge::on_clock`] on the system clock: a convenience for tests and benchmarks
    /// (behind the `test-doubles` feature; the program passes the run's clock).
    #[cfg(any(test, feature = "test-doubles"))]
    pub fn new(root: impl Into<PathBuf>, committer_name: &str, committer_email: &str) -> Self {
        Self::on_clock(
            root,
            committer_name,
            committer_email,
            std::sync::Arc::new(crate::clock::SystemClock),
        )
    }

    /// The local forge `stackbot.yaml` configures: `forge.local.path` and its seeds (paths
    /// relative to the configuration file), signed by `forge.committer`, dated by `clock`.
    /// A seed key that is not `owner/name` is [`InvalidInput`](crate::error::InvalidInput).
    pub fn from_config(
        loaded: &crate::config::Loaded,
        clock: SharedClock,
    ) -> Result<Self, crate::error::InvalidInput> {
        let fc = &loaded.config.forge;
        let mut f = LocalForge::on_clock(
            loaded.resolve(&fc.local.path),
            &fc.committer.name,
            &fc.committer.email,
            clock,
        );
        for (repo, dir) in &fc.local.seed {
            let r = RepoRef::parse(repo).ok_or_else(|| {
                crate::error::InvalidInput(format!(
                    "{}: forge.local.seed key `{repo}` is not `owner/name`",
                    loaded.path.display()
                ))
            })?;
            f = f.with_seed(r, loaded.resolve(dir));
        }
        let mut creatable: std::collections::BTreeSet<RepoRef> = f.seeds.keys().cloned().collect();
        // An unparsable `forge.repository` is reported by the pipeline that needs it.
        creatable.extend(RepoRef::parse(&fc.repository));
        f.creatable = Some(creatable);
        Ok(f)
    }

    /// Date commits and tags by `clock`.
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }

    /// Seed `repo` from the files of `dir` when [`Forge::ensure_repo`] creates it.
    pub fn with_seed(mut self, repo: RepoRef, dir: impl Into<PathBuf>) -> Self {
        self.seeds.insert(repo, dir.into());
        self
    }

    /// Whether [`Forge::ensure_repo`] creates `repo` when it is missing.
    fn may_create(&self, repo: &RepoRef) -> bool {
        self.creatable.as_ref().is_none_or(|c| c.contains(repo))
    }

    /// The forge folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Take the forge-wide run lock, waiting for another run to finish. Hold the guard for the
    /// whole observe → plan → apply sequence.
    pub fn lock_run(&self) -> ForgeResult<RunLock> {
        let path = if crate::mutation::active("overlapping-runs-take-turns") {
            // Mutated: every caller locks a file of its own, so nobody waits.
            self.root
                .join(format!("run.lock.{:?}", std::thread::current().id()))
        } else {
            self.root.join("run.lock")
        };
        Ok(RunLock {
            _lock: FileLock::acquire(&path)?,
        })
    }

    /// Try to take the run lock without waiting; `None` if another run holds it.
    pub fn try_lock_run(&self) -> ForgeResult<Option<RunLock>> {
        let path = self.root.join("run.lock");
        fs::create_dir_all(&self.root).map_err(|e| fs_err(self.root.display().to_string(), e))?;
        let f = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| fs_err(path.display().to_string(), e))?;
        match f.try_lock() {
            Ok(()) => Ok(Some(RunLock { _lock: FileLock(f) })),
            Err(fs::TryLockError::WouldBlock) => Ok(None),
            Err(fs::TryLockError::Error(e)) => Err(fs_err(path.display().to_string(), e)),
        }
    }

    /// The bare repository's path.
    pub fn repo_path(&self, repo: &RepoRef) -> PathBuf {
        self.root
            .join("repos")
            .join(&repo.owner)
            .join(format!("{}.git", repo.name))
    }

    fn repo_lock(&self, repo: &RepoRef) -> ForgeResult<FileLock> {
        FileLock::acquire(
            &self
                .root
                .join("repos")
                .join(&repo.owner)
                .join(format!("{}.lock", repo.name)),
        )
    }

    fn releases_dir(&self, repo: &RepoRef) -> PathBuf {
        self.root
            .join("releases")
            .join(&repo.owner)
            .join(&repo.name)
    }

    fn pulls_dir(&self, repo: &RepoRef) -> PathBuf {
        self.root.join("pulls").join(&repo.owner).join(&repo.name)
    }

    fn issues_dir(&self, repo: &RepoRef) -> PathBuf {
        self.root.join("issues").join(&repo.owner).join(&repo.name)
    }

    fn comments_dir(&self, repo: &RepoRef) -> PathBuf {
        self.root
            .join("comments")
            .join(&repo.owner)
            .join(&repo.name)
    }

    fn open(&self, repo: &RepoRef) -> ForgeResult<Repository> {
        let p = self.repo_path(repo);
        if !p.exists() {
            return Err(ForgeError::NotFound {
                what: format!("repository {repo}"),
            });
        }
        Repository::open_bare(&p).map_err(|e| git_err(format!("repository {repo}"), e))
    }

    fn signature(&self) -> ForgeResult<Signature<'static>> {
        let at = git2::Time::new(self.clock.now().timestamp(), 0);
        Signature::new(&self.committer_name, &self.committer_email, &at)
            .map_err(|e| git_err("committer signature", e))
    }

    /// Next id from the forge-wide counter (crash-safe; an id is never handed out twice).
    fn next_id(&self) -> ForgeResult<u64> {
        let _g = FileLock::acquire(&self.root.join("ids.lock"))?;
        let path = self.root.join("ids");
        let cur = match fs::read_to_string(&path) {
            Ok(s) => s.trim().parse::<u64>().map_err(|e| io_err("ids", e))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(e) => return Err(fs_err("ids", e)),
        };
        let next = cur + 1;
        write_atomic(&path, format!("{next}\n").as_bytes()).map_err(|e| fs_err("ids", e))?;
        Ok(next)
    }

    fn read_manifest(&self, repo: &RepoRef, id: u64) -> ForgeResult<Manifest> {
        let path = self
            .releases_dir(repo)
            .join(id.to_string())
            .join("release.json");
        let bytes = fs::read(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                ForgeError::NotFound {
                    what: format!("release {id} of {repo}"),
                }
            } else {
                fs_err(path.display().to_string(), e)
            }
        })?;
        serde_json::from_slice(&bytes).map_err(|e| io_err(path.display().to_string(), e))
    }

    fn write_manifest(&self, repo: &RepoRef, m: &Manifest) -> ForgeResult<()> {
        let path = self
            .releases_dir(repo)
            .join(m.id.to_string())
            .join("release.json");
        let bytes = serde_json::to_vec_pretty(m).expect("manifest serializes");
        write_atomic(&path, &bytes).map_err(|e| fs_err(path.display().to_string(), e))
    }

    fn manifests(&self, repo: &RepoRef) -> ForgeResult<Vec<Manifest>> {
        let dir = self.releases_dir(repo);
        let mut out = Vec::new();
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(fs_err(dir.display().to_string(), e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| fs_err(dir.display().to_string(), e))?;
            let Some(id) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u64>().ok())
            else {
                continue; // temporary directories of interrupted creations
            };
            out.push(self.read_manifest(repo, id)?);
        }
        // Newest first, like GitHub.
        out.sort_by_key(|m| std::cmp::Reverse(m.id));
        Ok(out)
    }

    fn info(&self, repo: &RepoRef, m: &Manifest) -> ReleaseInfo {
        ReleaseInfo {
            id: m.id,
            tag: m.tag.clone(),
            name: m.name.clone(),
            draft: m.draft,
            body: m.body.clone(),
            assets: m.assets.clone(),
            html_url: format!(
                "file://{}",
                self.releases_dir(repo).join(m.id.to_string()).display()
            ),
            published_at: m.published_at,
        }
    }

    /// `<releases>/latest`: the release pinned as *Latest* (`none`: explicitly none). Without
    /// the file, like GitHub's legacy rule, the newest published release is Latest.
    fn latest_pin_path(&self, repo: &RepoRef) -> PathBuf {
        self.releases_dir(repo).join("latest")
    }

    /// The *Latest* release id, ignoring `except` when falling back to the newest.
    fn latest_of(
        &self,
        repo: &RepoRef,
        ms: &[Manifest],
        except: Option<u64>,
    ) -> ForgeResult<Option<u64>> {
        let published = |id: u64| ms.iter().any(|m| m.id == id && !m.draft);
        let newest = || {
            ms.iter()
                .filter(|m| !m.draft && Some(m.id) != except)
                .map(|m| m.id)
                .max()
        };
        let path = self.latest_pin_path(repo);
        match fs::read_to_string(&path) {
            Ok(s) if s.trim() == "none" => Ok(None),
            Ok(s) => match s.trim().parse::<u64>() {
                Ok(id) if published(id) && Some(id) != except => Ok(Some(id)),
                _ => Ok(newest()),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(newest()),
            Err(e) => Err(fs_err(path.display().to_string(), e)),
        }
    }

    /// Apply `make_latest` for a just-published release (caller holds the repository lock):
    /// `true` pins it; `false` pins whatever else is Latest now, so it cannot become Latest.
    fn pin_latest(&self, repo: &RepoRef, id: u64, make_latest: bool) -> ForgeResult<()> {
        let pin = if make_latest {
            Some(id)
        } else {
            self.latest_of(repo, &self.manifests(repo)?, Some(id))?
        };
        let text = pin.map_or_else(|| "none".to_string(), |id| id.to_string());
        let path = self.latest_pin_path(repo);
        write_atomic(&path, format!("{text}\n").as_bytes())
            .map_err(|e| fs_err(path.display().to_string(), e))
    }

    fn pull_path(&self, repo: &RepoRef, number: u64) -> PathBuf {
        self.pulls_dir(repo).join(format!("{number}.json"))
    }

    fn read_pull(&self, repo: &RepoRef, number: u64) -> ForgeResult<PullInfo> {
        let path = self.pull_path(repo, number);
        let bytes = fs::read(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                ForgeError::NotFound {
                    what: format!("pull request #{number} of {repo}"),
                }
            } else {
                fs_err(path.display().to_string(), e)
            }
        })?;
        serde_json::from_slice(&bytes).map_err(|e| io_err(path.display().to_string(), e))
    }

    fn write_pull(&self, repo: &RepoRef, p: &PullInfo) -> ForgeResult<()> {
        let path = self.pull_path(repo, p.number);
        write_atomic(
            &path,
            &serde_json::to_vec_pretty(p).expect("pull serializes"),
        )
        .map_err(|e| fs_err(path.display().to_string(), e))
    }

    fn all_pulls(&self, repo: &RepoRef) -> ForgeResult<Vec<PullInfo>> {
        let mut out = numbered_records(&self.pulls_dir(repo))?
            .into_iter()
            .map(|n| self.read_pull(repo, n))
            .collect::<ForgeResult<Vec<_>>>()?;
        out.sort_by_key(|p| std::cmp::Reverse(p.number));
        Ok(out)
    }

    /// Delete a tag, as a maintainer would (withdrawing a release). The local forge's stand-in
    /// for the human step; used by tests.
    pub fn delete_tag(&self, repo: &RepoRef, tag: &str) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let r = self.open(repo)?;
        let what = format!("delete tag {tag} of {repo}");
        let mut reference = r
            .find_reference(&format!("refs/tags/{tag}"))
            .map_err(|_| ForgeError::NotFound { what: what.clone() })?;
        reference.delete().map_err(|e| git_err(&what, e))
    }

    fn initial_commit(&self, r: &Repository, branch: &str) -> ForgeResult<()> {
        let what = "initial commit";
        let tree = r
            .treebuilder(None)
            .and_then(|b| b.write())
            .and_then(|oid| r.find_tree(oid))
            .map_err(|e| git_err(what, e))?;
        let sig = self.signature()?;
        r.commit(
            Some(&format!("refs/heads/{branch}")),
            &sig,
            &sig,
            "Initial commit",
            &tree,
            &[],
        )
        .map_err(|e| git_err(what, e))?;
        Ok(())
    }

    fn seed_commit(&self, r: &Repository, dir: &Path, branch: &str) -> ForgeResult<()> {
        let what = format!("seed from {}", dir.display());
        let mut files = Vec::new();
        collect_files(dir, dir, &mut files).map_err(|e| fs_err(&what, e))?;
        let mut changes = FileChanges::new();
        for (rel, abs) in files {
            let bytes = fs::read(&abs).map_err(|e| fs_err(abs.display().to_string(), e))?;
            changes.insert(rel, Some(bytes));
        }
        let tree = build_tree(r, None, &changes).map_err(|e| git_err(&what, e))?;
        let tree = r.find_tree(tree).map_err(|e| git_err(&what, e))?;
        let sig = self.signature()?;
        r.commit(
            Some(&format!("refs/heads/{branch}")),
            &sig,
            &sig,
            "Initial commit",
            &tree,
            &[],
        )
        .map_err(|e| git_err(&what, e))?;
        Ok(())
    }
}

/// The numbers of the `<number>.json` records in `dir` (pulls, issues); none when the folder
/// does not exist yet. Temporary files of interrupted writes start with a dot and are skipped.
fn numbered_records(dir: &Path) -> ForgeResult<Vec<u64>> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(fs_err(dir.display().to_string(), e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| fs_err(dir.display().to_string(), e))?;
        if let Some(n) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.strip_suffix(".json"))
            .and_then(|s| s.parse::<u64>().ok())
        {
            out.push(n);
        }
    }
    Ok(out)
}

/// Absolute and free of `.`/`..`, so URLs and messages name the forge the same way however
/// the configuration spelled the path (PR bodies quote release URLs; a different spelling
/// must not count as a change).
fn normalize(p: PathBuf) -> PathBuf {
    let abs = std::path::absolute(&p).unwrap_or(p);
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> std::io::Result<()> {
    let mut entries: Vec<_> = fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        if e.file_type()?.is_dir() {
            collect_files(root, &p, out)?;
        } else {
            let rel = p
                .strip_prefix(root)
                .expect("under root")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            out.push((rel, p));
        }
    }
    Ok(())
}

/// Apply `changes` to `base` (or an empty tree) and write the resulting tree.
fn build_tree(
    r: &Repository,
    base: Option<&git2::Tree>,
    changes: &FileChanges,
) -> Result<Oid, git2::Error> {
    let mut b = git2::build::TreeUpdateBuilder::new();
    for (path, change) in changes {
        match change {
            Some(bytes) => {
                let oid = r.blob(bytes)?;
                b.upsert(path.as_str(), oid, git2::FileMode::Blob);
            }
            None => {
                b.remove(path.as_str());
            }
        }
    }
    let empty;
    let base = match base {
        Some(t) => t,
        None => {
            let oid = r.treebuilder(None)?.write()?;
            empty = r.find_tree(oid)?;
            &empty
        }
    };
    b.create_updated(r, base)
}

fn parse_oid(what: &str, s: &str) -> ForgeResult<Oid> {
    Oid::from_str(s).map_err(|_| ForgeError::NotFound {
        what: format!("{what} `{s}`"),
    })
}

fn find_commit<'r>(r: &'r Repository, repo: &RepoRef, sha: &str) -> ForgeResult<git2::Commit<'r>> {
    let oid = parse_oid("commit", sha)?;
    r.find_commit(oid).map_err(|_| ForgeError::NotFound {
        what: format!("commit {sha} in {repo}"),
    })
}

impl Forge for LocalForge {
    fn kind(&self) -> &'static str {
        "local"
    }

    fn ensure_repo(&self, repo: &RepoRef, default_branch: &str) -> ForgeResult<()> {
        let path = self.repo_path(repo);
        if path.exists() {
            return Ok(());
        }
        if !self.may_create(repo) {
            return Err(ForgeError::NotFound {
                what: format!("repository {repo}"),
            });
        }
        let _g = self.repo_lock(repo)?;
        if path.exists() {
            return Ok(());
        }
        let what = format!("create repository {repo}");
        let parent = path.parent().expect("repo path has a parent");
        fs::create_dir_all(parent).map_err(|e| fs_err(&what, e))?;
        // Build under a temporary name and rename: a crash never leaves a half-made repository.
        let tmp = parent.join(format!(".{}.tmp.{}", repo.name, std::process::id()));
        let _ = fs::remove_dir_all(&tmp);
        {
            let r = Repository::init_bare(&tmp).map_err(|e| git_err(&what, e))?;
            r.set_head(&format!("refs/heads/{default_branch}"))
                .map_err(|e| git_err(&what, e))?;
            // Like a GitHub repository created with "initialize with a README": the default
            // branch always exists, so the first release has a parent to commit on.
            match self.seeds.get(repo) {
                Some(dir) => self.seed_commit(&r, dir, default_branch)?,
                None => self.initial_commit(&r, default_branch)?,
            }
        }
        fs::rename(&tmp, &path).map_err(|e| fs_err(&what, e))
    }

    fn seed_preview(&self, repo: &RepoRef) -> ForgeResult<Option<crate::model::FileTree>> {
        if self.repo_path(repo).exists() || !self.may_create(repo) {
            return Ok(None);
        }
        let Some(dir) = self.seeds.get(repo) else {
            return Ok(Some(crate::model::FileTree::new()));
        };
        let what = format!("seed from {}", dir.display());
        let mut files = Vec::new();
        collect_files(dir, dir, &mut files).map_err(|e| fs_err(&what, e))?;
        let mut tree = crate::model::FileTree::new();
        for (rel, abs) in files {
            let bytes = fs::read(&abs).map_err(|e| fs_err(abs.display().to_string(), e))?;
            tree.insert(rel, bytes);
        }
        Ok(Some(tree))
    }

    fn branch_head(&self, repo: &RepoRef, branch: &str) -> ForgeResult<Option<String>> {
        let r = self.open(repo)?;
        match r.refname_to_id(&format!("refs/heads/{branch}")) {
            Ok(oid) => Ok(Some(oid.to_string())),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(git_err(format!("branch {branch} of {repo}"), e)),
        }
    }

    fn tag_target(&self, repo: &RepoRef, tag: &str) -> ForgeResult<Option<String>> {
        let r = self.open(repo)?;
        let what = format!("tag {tag} of {repo}");
        match r.find_reference(&format!("refs/tags/{tag}")) {
            Ok(reference) => {
                let commit = reference
                    .peel(ObjectType::Commit)
                    .map_err(|e| git_err(&what, e))?;
                Ok(Some(commit.id().to_string()))
            }
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(git_err(&what, e)),
        }
    }

    fn list_files(&self, repo: &RepoRef, commit: &str) -> ForgeResult<Vec<String>> {
        let r = self.open(repo)?;
        let c = find_commit(&r, repo, commit)?;
        let tree = c.tree().map_err(|e| git_err("tree", e))?;
        let mut out = Vec::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(ObjectType::Blob) {
                out.push(format!("{dir}{}", entry.name().unwrap_or_default()));
            }
            git2::TreeWalkResult::Ok
        })
        .map_err(|e| git_err("tree walk", e))?;
        out.sort();
        Ok(out)
    }

    fn read_file(&self, repo: &RepoRef, commit: &str, path: &str) -> ForgeResult<Option<Vec<u8>>> {
        let r = self.open(repo)?;
        let c = find_commit(&r, repo, commit)?;
        let tree = c.tree().map_err(|e| git_err("tree", e))?;
        let entry = match tree.get_path(Path::new(path)) {
            Ok(e) => e,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(git_err(path, e)),
        };
        if entry.kind() != Some(ObjectType::Blob) {
            return Ok(None);
        }
        let blob = r.find_blob(entry.id()).map_err(|e| git_err(path, e))?;
        Ok(Some(blob.content().to_vec()))
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
        let _g = self.repo_lock(repo)?;
        let r = self.open(repo)?;
        let what = format!("push to {branch} of {repo}");
        let parent_commit = find_commit(&r, repo, parent)?;
        let refname = format!("refs/heads/{branch}");
        let current = match r.refname_to_id(&refname) {
            Ok(oid) => Some(oid),
            Err(e) if e.code() == git2::ErrorCode::NotFound => None,
            Err(e) => return Err(git_err(&what, e)),
        };
        let expected = expected_head.map(|s| parse_oid("commit", s)).transpose()?;
        if current != expected {
            return Err(ForgeError::Conflict { what });
        }
        let base_tree = parent_commit.tree().map_err(|e| git_err(&what, e))?;
        let tree_id = build_tree(&r, Some(&base_tree), changes).map_err(|e| git_err(&what, e))?;
        let tree = r.find_tree(tree_id).map_err(|e| git_err(&what, e))?;
        let sig = self.signature()?;
        let oid = r
            .commit(None, &sig, &sig, message, &tree, &[&parent_commit])
            .map_err(|e| git_err(&what, e))?;
        // Compare-and-swap of the branch ref (the repo lock makes it atomic across processes;
        // `reference_matching` makes it atomic against anything else writing the repository).
        let res = match current {
            Some(cur) => r.reference_matching(&refname, oid, true, cur, message),
            None => r.reference(&refname, oid, false, message),
        };
        match res {
            Ok(_) => Ok(oid.to_string()),
            Err(_) => Err(ForgeError::Conflict { what }),
        }
    }

    fn force_branch(&self, repo: &RepoRef, branch: &str, commit: &str) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let r = self.open(repo)?;
        let c = find_commit(&r, repo, commit)?;
        r.reference(&format!("refs/heads/{branch}"), c.id(), true, "force")
            .map_err(|e| git_err(format!("branch {branch} of {repo}"), e))?;
        Ok(())
    }

    fn commits_between(
        &self,
        repo: &RepoRef,
        base: &str,
        head: &str,
    ) -> ForgeResult<Vec<CommitInfo>> {
        let r = self.open(repo)?;
        let what = format!("commits {base}..{head} of {repo}");
        let head = find_commit(&r, repo, head)?.id();
        let base = find_commit(&r, repo, base)?.id();
        let mut walk = r.revwalk().map_err(|e| git_err(&what, e))?;
        walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)
            .map_err(|e| git_err(&what, e))?;
        walk.push(head).map_err(|e| git_err(&what, e))?;
        walk.hide(base).map_err(|e| git_err(&what, e))?;
        let mut out = Vec::new();
        for oid in walk {
            let oid = oid.map_err(|e| git_err(&what, e))?;
            let c = r.find_commit(oid).map_err(|e| git_err(&what, e))?;
            out.push(CommitInfo {
                sha: oid.to_string(),
                author_name: c.author().name().unwrap_or_default().to_string(),
                author_email: c.author().email().unwrap_or_default().to_string(),
                message: c.message().unwrap_or_default().to_string(),
                parents: c.parent_ids().map(|p| p.to_string()).collect(),
            });
        }
        Ok(out)
    }

    fn create_tag(
        &self,
        repo: &RepoRef,
        tag: &str,
        commit: &str,
        message: &str,
    ) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let r = self.open(repo)?;
        let what = format!("tag {tag} of {repo}");
        if r.find_reference(&format!("refs/tags/{tag}")).is_ok() {
            return Err(ForgeError::AlreadyExists { what });
        }
        let c = find_commit(&r, repo, commit)?;
        let sig = self.signature()?;
        r.tag(tag, c.as_object(), &sig, message, false)
            .map_err(|e| {
                if e.code() == git2::ErrorCode::Exists {
                    ForgeError::AlreadyExists { what: what.clone() }
                } else {
                    git_err(&what, e)
                }
            })?;
        Ok(())
    }

    fn list_releases(&self, repo: &RepoRef) -> ForgeResult<Vec<ReleaseInfo>> {
        Ok(self
            .manifests(repo)?
            .iter()
            .map(|m| self.info(repo, m))
            .collect())
    }

    fn create_draft_release(
        &self,
        repo: &RepoRef,
        tag: &str,
        name: &str,
        body: &str,
    ) -> ForgeResult<ReleaseInfo> {
        let _g = self.repo_lock(repo)?;
        if self
            .manifests(repo)?
            .iter()
            .any(|m| m.tag == tag && !m.draft)
        {
            return Err(ForgeError::AlreadyExists {
                what: format!("a published release of tag {tag} in {repo}"),
            });
        }
        let id = self.next_id()?;
        let m = Manifest {
            id,
            tag: tag.into(),
            name: Some(name.into()),
            draft: true,
            body: body.into(),
            assets: Vec::new(),
            published_at: None,
        };
        let dir = self.releases_dir(repo);
        let what = format!("create release {tag} of {repo}");
        let tmp = dir.join(format!(".{id}.tmp"));
        let _ = fs::remove_dir_all(&tmp);
        fs::create_dir_all(tmp.join("assets")).map_err(|e| fs_err(&what, e))?;
        write_atomic(
            &tmp.join("release.json"),
            &serde_json::to_vec_pretty(&m).expect("manifest serializes"),
        )
        .map_err(|e| fs_err(&what, e))?;
        fs::rename(&tmp, dir.join(id.to_string())).map_err(|e| fs_err(&what, e))?;
        Ok(self.info(repo, &m))
    }

    fn upload_asset(
        &self,
        repo: &RepoRef,
        release_id: u64,
        name: &str,
        bytes: &[u8],
    ) -> ForgeResult<AssetInfo> {
        let _g = self.repo_lock(repo)?;
        let mut m = self.read_manifest(repo, release_id)?;
        let what = format!("asset {name} of release {} in {repo}", m.tag);
        if name.is_empty() || name.contains('/') || name.starts_with('.') {
            return Err(ForgeError::Rejected {
                what,
                reason: "asset names must be plain file names".into(),
            });
        }
        if m.assets.iter().any(|a| a.name == name) {
            return Err(ForgeError::AlreadyExists { what });
        }
        let id = self.next_id()?;
        let path = self
            .releases_dir(repo)
            .join(release_id.to_string())
            .join("assets")
            .join(name);
        write_atomic(&path, bytes).map_err(|e| fs_err(&what, e))?;
        let asset = AssetInfo {
            id,
            name: name.into(),
            size: bytes.len() as u64,
        };
        m.assets.push(asset.clone());
        self.write_manifest(repo, &m)?;
        Ok(asset)
    }

    fn download_asset(
        &self,
        repo: &RepoRef,
        release_id: u64,
        asset: &AssetInfo,
    ) -> ForgeResult<Vec<u8>> {
        let m = self.read_manifest(repo, release_id)?;
        let Some(a) = m.assets.iter().find(|a| a.id == asset.id) else {
            return Err(ForgeError::NotFound {
                what: format!("asset {} of release {}", asset.name, m.tag),
            });
        };
        let path = self
            .releases_dir(repo)
            .join(release_id.to_string())
            .join("assets")
            .join(&a.name);
        fs::read(&path).map_err(|e| fs_err(path.display().to_string(), e))
    }

    fn delete_asset(&self, repo: &RepoRef, release_id: u64, asset_id: u64) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let mut m = self.read_manifest(repo, release_id)?;
        let Some(pos) = m.assets.iter().position(|a| a.id == asset_id) else {
            return Err(ForgeError::NotFound {
                what: format!("asset {asset_id} of release {}", m.tag),
            });
        };
        let a = m.assets.remove(pos);
        self.write_manifest(repo, &m)?;
        let _ = fs::remove_file(
            self.releases_dir(repo)
                .join(release_id.to_string())
                .join("assets")
                .join(&a.name),
        );
        Ok(())
    }

    fn publish_release(
        &self,
        repo: &RepoRef,
        release_id: u64,
        make_latest: bool,
    ) -> ForgeResult<ReleaseInfo> {
        let _g = self.repo_lock(repo)?;
        let mut m = self.read_manifest(repo, release_id)?;
        if !m.draft {
            self.pin_latest(repo, release_id, make_latest)?;
            return Ok(self.info(repo, &m));
        }
        if self
            .manifests(repo)?
            .iter()
            .any(|o| o.tag == m.tag && !o.draft && o.id != m.id)
        {
            return Err(ForgeError::AlreadyExists {
                what: format!("a published release of tag {} in {repo}", m.tag),
            });
        }
        m.draft = false;
        m.published_at = Some(self.clock.now());
        self.write_manifest(repo, &m)?;
        self.pin_latest(repo, release_id, make_latest)?;
        Ok(self.info(repo, &m))
    }

    fn latest_release(&self, repo: &RepoRef) -> ForgeResult<Option<ReleaseInfo>> {
        let ms = self.manifests(repo)?;
        let id = self.latest_of(repo, &ms, None)?;
        Ok(ms
            .iter()
            .find(|m| Some(m.id) == id)
            .map(|m| self.info(repo, m)))
    }

    fn delete_release(&self, repo: &RepoRef, release_id: u64) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let dir = self.releases_dir(repo);
        let path = dir.join(release_id.to_string());
        if !path.exists() {
            return Err(ForgeError::NotFound {
                what: format!("release {release_id} of {repo}"),
            });
        }
        // Rename first (atomic disappearance), then remove the files at leisure.
        let trash = dir.join(format!(".{release_id}.deleted.{}", fastrand::u64(..)));
        fs::rename(&path, &trash).map_err(|e| fs_err(format!("delete release {release_id}"), e))?;
        let _ = fs::remove_dir_all(&trash);
        Ok(())
    }

    fn find_pulls(&self, repo: &RepoRef, head: &str) -> ForgeResult<Vec<PullInfo>> {
        Ok(self
            .all_pulls(repo)?
            .into_iter()
            .filter(|p| p.head == head)
            .take(super::PULLS_WINDOW)
            .collect())
    }

    fn open_pull(
        &self,
        repo: &RepoRef,
        head: &str,
        base: &str,
        title: &str,
        body: &str,
    ) -> ForgeResult<PullInfo> {
        let _g = self.repo_lock(repo)?;
        let what = format!("pull request {head} → {base} in {repo}");
        if self
            .all_pulls(repo)?
            .iter()
            .any(|p| p.head == head && p.base == base && p.state == PullState::Open)
        {
            return Err(ForgeError::AlreadyExists { what });
        }
        if self.branch_head(repo, head)?.is_none() {
            return Err(ForgeError::Rejected {
                what,
                reason: format!("branch {head} does not exist"),
            });
        }
        let number = self.next_id()?;
        let p = PullInfo {
            number,
            head: head.into(),
            base: base.into(),
            title: title.into(),
            body: body.into(),
            state: PullState::Open,
            html_url: format!("file://{}", self.pull_path(repo, number).display()),
            created_at: Some(self.clock.now()),
            merged_at: None,
            labels: Vec::new(),
            auto_merge: false,
        };
        self.write_pull(repo, &p)?;
        Ok(p)
    }

    fn update_pull(&self, repo: &RepoRef, number: u64, title: &str, body: &str) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let mut p = self.read_pull(repo, number)?;
        p.title = title.into();
        p.body = body.into();
        self.write_pull(repo, &p)
    }

    fn add_labels(&self, repo: &RepoRef, number: u64, labels: &[String]) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let mut p = self.read_pull(repo, number)?;
        let before = p.labels.len();
        for l in labels {
            if !p.labels.iter().any(|x| x.eq_ignore_ascii_case(l)) {
                p.labels.push(l.clone());
            }
        }
        if p.labels.len() == before {
            return Ok(());
        }
        self.write_pull(repo, &p)
    }

    /// Recorded in the pull request (`auto_merge: true`); `stackbot forge checks-pass` plays the
    /// checks passing, and merges it.
    fn enable_auto_merge(&self, repo: &RepoRef, number: u64) -> ForgeResult<AutoMerge> {
        let _g = self.repo_lock(repo)?;
        let mut p = self.read_pull(repo, number)?;
        if p.state != PullState::Open {
            return Err(ForgeError::Rejected {
                what: format!("auto-merge of pull request #{number} of {repo}"),
                reason: "the pull request is not open".into(),
            });
        }
        if !p.auto_merge {
            p.auto_merge = true;
            self.write_pull(repo, &p)?;
        }
        Ok(AutoMerge::Enabled)
    }

    fn close_pull(&self, repo: &RepoRef, number: u64) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let mut p = self.read_pull(repo, number)?;
        if p.state == PullState::Open {
            p.state = PullState::Closed;
            self.write_pull(repo, &p)?;
        }
        Ok(())
    }

    fn list_comments(&self, repo: &RepoRef, number: u64) -> ForgeResult<Vec<CommentInfo>> {
        let dir = self.comments_dir(repo);
        let mut out: Vec<StoredComment> = Vec::new();
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(fs_err(dir.display().to_string(), e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| fs_err(dir.display().to_string(), e))?;
            if !entry.file_name().to_string_lossy().ends_with(".json")
                || entry.file_name().to_string_lossy().starts_with('.')
            {
                continue;
            }
            let bytes = fs::read(entry.path()).map_err(|e| fs_err("comment", e))?;
            let c: StoredComment =
                serde_json::from_slice(&bytes).map_err(|e| io_err("comment", e))?;
            if c.issue == number {
                out.push(c);
            }
        }
        out.sort_by_key(|c| c.id);
        Ok(out
            .into_iter()
            .map(|c| CommentInfo {
                id: c.id,
                body: c.body,
            })
            .collect())
    }

    fn create_comment(&self, repo: &RepoRef, number: u64, body: &str) -> ForgeResult<CommentInfo> {
        let _g = self.repo_lock(repo)?;
        let id = self.next_id()?;
        let c = StoredComment {
            id,
            issue: number,
            body: body.into(),
        };
        let path = self.comments_dir(repo).join(format!("{id}.json"));
        write_atomic(
            &path,
            &serde_json::to_vec_pretty(&c).expect("comment serializes"),
        )
        .map_err(|e| fs_err(path.display().to_string(), e))?;
        Ok(CommentInfo {
            id,
            body: body.into(),
        })
    }

    fn update_comment(&self, repo: &RepoRef, comment_id: u64, body: &str) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let path = self.comments_dir(repo).join(format!("{comment_id}.json"));
        let bytes = fs::read(&path).map_err(|_| ForgeError::NotFound {
            what: format!("comment {comment_id} of {repo}"),
        })?;
        let mut c: StoredComment =
            serde_json::from_slice(&bytes).map_err(|e| io_err("comment", e))?;
        c.body = body.into();
        write_atomic(
            &path,
            &serde_json::to_vec_pretty(&c).expect("comment serializes"),
        )
        .map_err(|e| fs_err(path.display().to_string(), e))
    }

    fn list_issues(&self, repo: &RepoRef, label: Option<&str>) -> ForgeResult<Vec<IssueInfo>> {
        Ok(self
            .all_issues(repo)?
            .into_iter()
            .filter(|i| label.is_none_or(|l| i.labels.iter().any(|x| x.eq_ignore_ascii_case(l))))
            .collect())
    }

    fn create_issue(
        &self,
        repo: &RepoRef,
        title: &str,
        body: &str,
        labels: &[String],
    ) -> ForgeResult<IssueInfo> {
        let _g = self.repo_lock(repo)?;
        let number = self.next_id()?;
        let issue = IssueInfo {
            number,
            title: title.into(),
            body: body.into(),
            state: IssueState::Open,
            labels: labels.to_vec(),
            html_url: format!("file://{}", self.issue_path(repo, number).display()),
        };
        self.write_issue(repo, &issue)?;
        Ok(issue)
    }

    fn update_issue(
        &self,
        repo: &RepoRef,
        number: u64,
        title: &str,
        body: &str,
    ) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let mut issue = self.read_issue(repo, number)?;
        issue.title = title.into();
        issue.body = body.into();
        self.write_issue(repo, &issue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> RepoRef {
        RepoRef::parse("scs/cluster-stacks").unwrap()
    }

    fn forge(dir: &Path) -> LocalForge {
        LocalForge::new(dir.join("forge"), "stackbot", "bot@example.org")
    }

    fn changes(files: &[(&str, &str)]) -> FileChanges {
        files
            .iter()
            .map(|(p, c)| (p.to_string(), Some(c.as_bytes().to_vec())))
            .collect()
    }

    #[test]
    fn seeded_repository_starts_with_the_seed_files() {
        let tmp = tempfile::tempdir().unwrap();
        let seed = tmp.path().join("seed");
        fs::create_dir_all(seed.join("clusters")).unwrap();
        fs::write(seed.join("clusters/stack.yaml"), "kind: ClusterStack\n").unwrap();
        fs::write(seed.join("README.md"), "tenant\n").unwrap();
        let f = forge(tmp.path()).with_seed(repo(), &seed);
        f.ensure_repo(&repo(), "main").unwrap();
        f.ensure_repo(&repo(), "main").unwrap(); // idempotent
        let head = f.branch_head(&repo(), "main").unwrap().unwrap();
        assert_eq!(
            f.list_files(&repo(), &head).unwrap(),
            vec!["README.md", "clusters/stack.yaml"]
        );
        assert_eq!(
            f.read_file(&repo(), &head, "clusters/stack.yaml").unwrap(),
            Some(b"kind: ClusterStack\n".to_vec())
        );
        assert_eq!(f.read_file(&repo(), &head, "missing").unwrap(), None);
    }

    #[test]
    fn unseeded_repository_starts_with_an_empty_initial_commit() {
        let tmp = tempfile::tempdir().unwrap();
        let f = forge(tmp.path());
        f.ensure_repo(&repo(), "main").unwrap();
        let root = f.branch_head(&repo(), "main").unwrap().unwrap();
        assert!(f.list_files(&repo(), &root).unwrap().is_empty());
        let c = f
            .commit(
                &repo(),
                "main",
                &root,
                Some(&root),
                &changes(&[("a/b.txt", "x")]),
                "add",
            )
            .unwrap();
        assert_eq!(f.branch_head(&repo(), "main").unwrap(), Some(c.clone()));
        assert_eq!(f.list_files(&repo(), &c).unwrap(), vec!["a/b.txt"]);
    }

    #[test]
    fn commit_is_a_compare_and_swap_of_the_branch() {
        let tmp = tempfile::tempdir().unwrap();
        let seed = tmp.path().join("seed");
        fs::create_dir_all(&seed).unwrap();
        fs::write(seed.join("README.md"), "x\n").unwrap();
        let f = forge(tmp.path()).with_seed(repo(), &seed);
        f.ensure_repo(&repo(), "main").unwrap();
        let h0 = f.branch_head(&repo(), "main").unwrap().unwrap();
        let c1 = f
            .commit(
                &repo(),
                "main",
                &h0,
                Some(&h0),
                &changes(&[("x/1", "1")]),
                "one",
            )
            .unwrap();
        // A second writer that still believes the head is h0 loses.
        let err = f
            .commit(
                &repo(),
                "main",
                &h0,
                Some(&h0),
                &changes(&[("x/2", "2")]),
                "two",
            )
            .unwrap_err();
        assert!(matches!(err, ForgeError::Conflict { .. }), "{err}");
        assert_eq!(f.branch_head(&repo(), "main").unwrap(), Some(c1.clone()));
        // Creating a branch that already exists is a conflict too.
        let err = f
            .commit(&repo(), "main", &c1, None, &changes(&[]), "again")
            .unwrap_err();
        assert!(matches!(err, ForgeError::Conflict { .. }));
        // Deletions remove files.
        let mut del = FileChanges::new();
        del.insert("x/1".into(), None);
        let c2 = f
            .commit(&repo(), "main", &c1, Some(&c1), &del, "rm")
            .unwrap();
        assert_eq!(f.list_files(&repo(), &c2).unwrap(), vec!["README.md"]);
        let between = f.commits_between(&repo(), &h0, &c2).unwrap();
        assert_eq!(
            between
                .iter()
                .map(|c| c.message.as_str())
                .collect::<Vec<_>>(),
            vec!["one", "rm"]
        );
        assert_eq!(between[0].author_name, "stackbot");
    }

    #[test]
    fn tags_are_annotated_unique_and_peel_to_their_commit() {
        let tmp = tempfile::tempdir().unwrap();
        let seed = tmp.path().join("seed");
        fs::create_dir_all(&seed).unwrap();
        fs::write(seed.join("f"), "x").unwrap();
        let f = forge(tmp.path()).with_seed(repo(), &seed);
        f.ensure_repo(&repo(), "main").unwrap();
        let head = f.branch_head(&repo(), "main").unwrap().unwrap();
        assert_eq!(
            f.tag_target(&repo(), "openstack-scs2-1-34-v1").unwrap(),
            None
        );
        f.create_tag(&repo(), "openstack-scs2-1-34-v1", &head, "Release")
            .unwrap();
        assert_eq!(
            f.tag_target(&repo(), "openstack-scs2-1-34-v1").unwrap(),
            Some(head.clone())
        );
        let r = Repository::open_bare(f.repo_path(&repo())).unwrap();
        let tag_ref = r
            .find_reference("refs/tags/openstack-scs2-1-34-v1")
            .unwrap();
        assert!(tag_ref.peel_to_tag().is_ok(), "tag must be annotated");
        let err = f
            .create_tag(&repo(), "openstack-scs2-1-34-v1", &head, "Release")
            .unwrap_err();
        assert!(matches!(err, ForgeError::AlreadyExists { .. }));
    }

    #[test]
    fn releases_go_from_draft_to_published_once() {
        let tmp = tempfile::tempdir().unwrap();
        let f = forge(tmp.path());
        let tag = "openstack-scs2-1-34-v1";
        let d1 = f.create_draft_release(&repo(), tag, tag, "notes").unwrap();
        let d2 = f.create_draft_release(&repo(), tag, tag, "notes").unwrap();
        assert!(
            d1.draft && d2.id > d1.id,
            "duplicate drafts are possible, as on GitHub"
        );
        let a = f
            .upload_asset(&repo(), d1.id, "metadata.yaml", b"abc")
            .unwrap();
        assert_eq!(a.size, 3);
        let err = f
            .upload_asset(&repo(), d1.id, "metadata.yaml", b"abc")
            .unwrap_err();
        assert!(matches!(err, ForgeError::AlreadyExists { .. }));
        assert_eq!(f.download_asset(&repo(), d1.id, &a).unwrap(), b"abc");
        let p = f.publish_release(&repo(), d1.id, true).unwrap();
        assert!(!p.draft);
        // A second published release of the same tag is refused, and so is a new draft.
        assert!(matches!(
            f.publish_release(&repo(), d2.id, true).unwrap_err(),
            ForgeError::AlreadyExists { .. }
        ));
        assert!(matches!(
            f.create_draft_release(&repo(), tag, tag, "").unwrap_err(),
            ForgeError::AlreadyExists { .. }
        ));
        f.delete_release(&repo(), d2.id).unwrap();
        let all = f.list_releases(&repo()).unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].assets, vec![a.clone()]);
        f.delete_asset(&repo(), d1.id, a.id).unwrap();
        assert!(f.list_releases(&repo()).unwrap()[0].assets.is_empty());
        // A fresh handle on the same folder sees the same state (it is all on disk).
        assert_eq!(forge(tmp.path()).list_releases(&repo()).unwrap().len(), 1);
    }

    #[test]
    fn pulls_and_comments_round_trip_and_merge() {
        let tmp = tempfile::tempdir().unwrap();
        let seed = tmp.path().join("seed");
        fs::create_dir_all(&seed).unwrap();
        fs::write(seed.join("f"), "x").unwrap();
        let f = forge(tmp.path()).with_seed(repo(), &seed);
        f.ensure_repo(&repo(), "main").unwrap();
        let head = f.branch_head(&repo(), "main").unwrap().unwrap();
        f.commit(&repo(), "bot/x", &head, None, &changes(&[("g", "y")]), "g")
            .unwrap();
        let p = f.open_pull(&repo(), "bot/x", "main", "T", "B").unwrap();
        assert!(matches!(
            f.open_pull(&repo(), "bot/x", "main", "T", "B").unwrap_err(),
            ForgeError::AlreadyExists { .. }
        ));
        f.update_pull(&repo(), p.number, "T2", "B2").unwrap();
        let found = f.find_pulls(&repo(), "bot/x").unwrap();
        assert_eq!(
            (found[0].title.as_str(), found[0].state),
            ("T2", PullState::Open)
        );
        super::super::upsert_comment(&f, &repo(), p.number, "<!-- m -->", "hello").unwrap();
        super::super::upsert_comment(&f, &repo(), p.number, "<!-- m -->", "hello2").unwrap();
        let cs = f.list_comments(&repo(), p.number).unwrap();
        assert_eq!(cs.len(), 1);
        assert!(cs[0].body.ends_with("hello2"));
        let merged = f.merge_pull(&repo(), p.number).unwrap();
        assert_eq!(
            f.branch_head(&repo(), "main").unwrap(),
            Some(merged.clone())
        );
        assert_eq!(
            f.read_file(&repo(), &merged, "g").unwrap(),
            Some(b"y".to_vec())
        );
        assert_eq!(
            f.find_pulls(&repo(), "bot/x").unwrap()[0].state,
            PullState::Merged
        );
    }

    #[test]
    fn the_run_lock_excludes_a_second_run_until_released() {
        let tmp = tempfile::tempdir().unwrap();
        let f = forge(tmp.path());
        let g = f.lock_run().unwrap();
        assert!(forge(tmp.path()).try_lock_run().unwrap().is_none());
        drop(g);
        assert!(forge(tmp.path()).try_lock_run().unwrap().is_some());
    }
}
