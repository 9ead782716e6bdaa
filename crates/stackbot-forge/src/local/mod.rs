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
//! name is [`ForgeError::AlreadyExists`](super::ForgeError::AlreadyExists), a branch update that is not the expected
//! compare-and-swap is [`ForgeError::Conflict`](super::ForgeError::Conflict), several drafts may carry the same tag (that is
//! how duplicate drafts happen on GitHub, and `apply` must clean them), but a second *published*
//! release of a tag is refused.
//!
//! Crash safety: every file is written to a temporary name in the same directory and renamed
//! into place, and a new release directory is built under a temporary name and renamed whole,
//! so a process killed at any instant leaves either the old or the new state, never a torn one.
//! Locks are `flock`-style OS locks (`std::fs::File::lock`), released by the OS when a process
//! dies, so a crash never leaves a stale lock behind.
//!
//! The code, by resource, like `forge/github/`: `repos` (creating and opening repositories),
//! `git` (reading refs, trees, files and commits), `commits` (writing commits, branches,
//! tags), `releases` (releases and assets), `pulls` (pull requests), `comments`,
//! `issues` (the dashboard issue) and `human` (what people do on the web UI); the machinery
//! below them: `lock` (run and repository locks), `ids` (the id counter) and `files`
//! (crash-safe writes, I/O errors). The [`Forge`] implementation below only delegates.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::clock::SharedClock;

mod comments;
mod commits;
mod files;
mod git;
mod human;
mod ids;
mod issues;
mod lock;
mod pulls;
mod releases;
mod repos;
#[cfg(test)]
mod tests;

pub use files::{is_denied, write_atomic};
pub use human::{MergeMethod, state_word};
pub use lock::RunLock;

use super::{
    AssetInfo, AutoMerge, CommentInfo, CommitInfo, FileChanges, Forge, ForgeResult, IssueInfo,
    PullInfo, ReleaseInfo, RepoRef,
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

/// The system clock of [`LocalForge::new`], a convenience for tests and benchmarks (behind
/// the `test-doubles` feature, never shipped). The program's one system clock is the binary's
/// `stackbot::clock::SystemClock`, above this crate in the crate graph, so it cannot be named
/// here; the program always passes the run's clock.
#[cfg(any(test, feature = "test-doubles"))]
#[derive(Debug)]
struct WallClock;

#[cfg(any(test, feature = "test-doubles"))]
impl crate::clock::Clock for WallClock {
    fn now(&self) -> chrono::DateTime<chrono::Utc> {
        chrono::Utc::now()
    }
    fn instant(&self) -> std::time::Instant {
        std::time::Instant::now()
    }
    fn sleep(&self, d: std::time::Duration) {
        std::thread::sleep(d);
    }
}

impl LocalForge {
    /// A local forge at `root` (created on first write) whose commits and tags the committer
    /// signs and `clock` dates (the run's clock: the CLI's, or a test's manual one).
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
            std::sync::Arc::new(WallClock),
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

/// Trait methods passed to the inherent `*_impl` bodies of the resource modules (repos, git,
/// releases, pulls, issues: a trait impl cannot span files), one line each.
macro_rules! to_impl {
    ($($name:ident => $body:ident($($arg:ident: $t:ty),*) -> $ret:ty;)*) => {
        $(fn $name(&self, $($arg: $t),*) -> ForgeResult<$ret> {
            self.$body($($arg),*)
        })*
    };
}

impl Forge for LocalForge {
    fn kind(&self) -> &'static str {
        "local"
    }

    to_impl! {
        ensure_repo => ensure_repo_impl(repo: &RepoRef, default_branch: &str) -> ();
        seed_preview => seed_preview_impl(repo: &RepoRef) -> Option<crate::model::FileTree>;
        branch_head => branch_head_impl(repo: &RepoRef, branch: &str) -> Option<String>;
        tag_target => tag_target_impl(repo: &RepoRef, tag: &str) -> Option<String>;
        list_files => list_files_impl(repo: &RepoRef, commit: &str) -> Vec<String>;
        read_file => read_file_impl(repo: &RepoRef, commit: &str, path: &str) -> Option<Vec<u8>>;
        commit => commit_impl(repo: &RepoRef, branch: &str, parent: &str,
            expected_head: Option<&str>, changes: &FileChanges, message: &str) -> String;
        force_branch => force_branch_impl(repo: &RepoRef, branch: &str, commit: &str) -> ();
        commits_between => commits_between_impl(repo: &RepoRef, base: &str, head: &str)
            -> Vec<CommitInfo>;
        create_tag => create_tag_impl(repo: &RepoRef, tag: &str, commit: &str, message: &str)
            -> ();
        list_releases => list_releases_impl(repo: &RepoRef) -> Vec<ReleaseInfo>;
        upload_asset => upload_asset_impl(repo: &RepoRef, release_id: u64, name: &str,
            bytes: &[u8]) -> AssetInfo;
        download_asset => download_asset_impl(repo: &RepoRef, release_id: u64, asset: &AssetInfo)
            -> Vec<u8>;
        delete_asset => delete_asset_impl(repo: &RepoRef, release_id: u64, asset_id: u64) -> ();
        publish_release => publish_release_impl(repo: &RepoRef, release_id: u64,
            make_latest: bool) -> ReleaseInfo;
        latest_release => latest_release_impl(repo: &RepoRef) -> Option<ReleaseInfo>;
        delete_release => delete_release_impl(repo: &RepoRef, release_id: u64) -> ();
        find_pulls => find_pulls_impl(repo: &RepoRef, head: &str) -> Vec<PullInfo>;
        add_labels => add_labels_impl(repo: &RepoRef, number: u64, labels: &[String]) -> ();
        enable_auto_merge => enable_auto_merge_impl(repo: &RepoRef, number: u64) -> AutoMerge;
        close_pull => close_pull_impl(repo: &RepoRef, number: u64) -> ();
        list_comments => list_comments_impl(repo: &RepoRef, number: u64) -> Vec<CommentInfo>;
        list_issues => list_issues_impl(repo: &RepoRef, label: Option<&str>) -> Vec<IssueInfo>;
    }

    fn create_draft_release(
        &self,
        repo: &RepoRef,
        tag: &str,
        name: &str,
        body: &str,
    ) -> ForgeResult<ReleaseInfo> {
        self.create_draft_release_impl(repo, tag, name, body, false)
    }

    fn create_draft_prerelease(
        &self,
        repo: &RepoRef,
        tag: &str,
        name: &str,
        body: &str,
    ) -> ForgeResult<ReleaseInfo> {
        self.create_draft_release_impl(repo, tag, name, body, true)
    }

    // Writes of a text GitHub limits: refused alike here (`refuse_long`).

    fn open_pull(
        &self,
        repo: &RepoRef,
        head: &str,
        base: &str,
        title: &str,
        body: &str,
    ) -> ForgeResult<PullInfo> {
        refuse_long("pull request body", body)?;
        self.open_pull_impl(repo, head, base, title, body)
    }

    fn update_pull(&self, repo: &RepoRef, number: u64, title: &str, body: &str) -> ForgeResult<()> {
        refuse_long("pull request body", body)?;
        self.update_pull_impl(repo, number, title, body)
    }

    fn create_comment(&self, repo: &RepoRef, number: u64, body: &str) -> ForgeResult<CommentInfo> {
        refuse_long("comment", body)?;
        self.create_comment_impl(repo, number, body)
    }

    fn update_comment(&self, repo: &RepoRef, comment_id: u64, body: &str) -> ForgeResult<()> {
        refuse_long("comment", body)?;
        self.update_comment_impl(repo, comment_id, body)
    }

    fn create_issue(
        &self,
        repo: &RepoRef,
        title: &str,
        body: &str,
        labels: &[String],
    ) -> ForgeResult<IssueInfo> {
        refuse_long("issue body", body)?;
        self.create_issue_impl(repo, title, body, labels)
    }

    fn update_issue(
        &self,
        repo: &RepoRef,
        number: u64,
        title: &str,
        body: &str,
    ) -> ForgeResult<()> {
        refuse_long("issue body", body)?;
        self.update_issue_impl(repo, number, title, body)
    }
}

/// GitHub refuses a body or comment of 65,536 characters or more; the local forge refuses it
/// alike, so every run on it proves the bodies fit ([`stackbot_core::body::fit_body`]).
fn refuse_long(what: &str, body: &str) -> ForgeResult<()> {
    let n = body.chars().count();
    if n > stackbot_core::body::BODY_MAX {
        return Err(crate::ForgeError::Rejected {
            what: what.to_string(),
            reason: format!("body is too long ({n} characters; GitHub takes fewer than 65,536)"),
        });
    }
    Ok(())
}
