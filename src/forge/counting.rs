//! A [`Forge`] wrapper that counts requests, so tests and benchmarks can assert API cost
//! (a no-op run must make zero writes) without depending on a particular forge.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{
    AssetInfo, CommentInfo, CommitInfo, FileChanges, Forge, ForgeResult, PullInfo, ReleaseInfo,
    RepoRef,
};

/// Counts every call to the wrapped forge, split into reads and writes, plus a per-method tally.
///
/// `ensure_repo` counts as a read: on GitHub it only checks, and on the local forge it writes
/// only the first time a repository is used.
#[derive(Debug)]
pub struct Counting<F: Forge> {
    inner: F,
    reads: AtomicU64,
    writes: AtomicU64,
    by_method: Mutex<BTreeMap<&'static str, u64>>,
}

impl<F: Forge> Counting<F> {
    /// Wrap a forge with all counters at zero.
    pub fn new(inner: F) -> Self {
        Counting {
            inner,
            reads: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            by_method: Mutex::new(BTreeMap::new()),
        }
    }

    /// The wrapped forge.
    pub fn inner(&self) -> &F {
        &self.inner
    }

    /// Read requests so far.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::SeqCst)
    }

    /// Write requests so far.
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::SeqCst)
    }

    /// All requests so far.
    pub fn total(&self) -> u64 {
        self.reads() + self.writes()
    }

    /// Calls per method name.
    pub fn by_method(&self) -> BTreeMap<&'static str, u64> {
        self.by_method.lock().expect("counter lock").clone()
    }

    /// Reset every counter to zero.
    pub fn reset(&self) {
        self.reads.store(0, Ordering::SeqCst);
        self.writes.store(0, Ordering::SeqCst);
        self.by_method.lock().expect("counter lock").clear();
    }

    fn note(&self, method: &'static str, write: bool) {
        if write {
            self.writes.fetch_add(1, Ordering::SeqCst);
        } else {
            self.reads.fetch_add(1, Ordering::SeqCst);
        }
        *self
            .by_method
            .lock()
            .expect("counter lock")
            .entry(method)
            .or_default() += 1;
    }
}

impl<F: Forge> Forge for Counting<F> {
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    fn seed_preview(&self, repo: &RepoRef) -> ForgeResult<Option<crate::model::FileTree>> {
        self.note("seed_preview", false);
        self.inner.seed_preview(repo)
    }

    fn ensure_repo(&self, repo: &RepoRef, default_branch: &str) -> ForgeResult<()> {
        self.note("ensure_repo", false);
        self.inner.ensure_repo(repo, default_branch)
    }

    fn branch_head(&self, repo: &RepoRef, branch: &str) -> ForgeResult<Option<String>> {
        self.note("branch_head", false);
        self.inner.branch_head(repo, branch)
    }

    fn tag_target(&self, repo: &RepoRef, tag: &str) -> ForgeResult<Option<String>> {
        self.note("tag_target", false);
        self.inner.tag_target(repo, tag)
    }

    fn list_files(&self, repo: &RepoRef, commit: &str) -> ForgeResult<Vec<String>> {
        self.note("list_files", false);
        self.inner.list_files(repo, commit)
    }

    fn read_file(&self, repo: &RepoRef, commit: &str, path: &str) -> ForgeResult<Option<Vec<u8>>> {
        self.note("read_file", false);
        self.inner.read_file(repo, commit, path)
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
        self.note("commit", true);
        self.inner
            .commit(repo, branch, parent, expected_head, changes, message)
    }

    fn force_branch(&self, repo: &RepoRef, branch: &str, commit: &str) -> ForgeResult<()> {
        self.note("force_branch", true);
        self.inner.force_branch(repo, branch, commit)
    }

    fn commits_between(
        &self,
        repo: &RepoRef,
        base: &str,
        head: &str,
    ) -> ForgeResult<Vec<CommitInfo>> {
        self.note("commits_between", false);
        self.inner.commits_between(repo, base, head)
    }

    fn create_tag(
        &self,
        repo: &RepoRef,
        tag: &str,
        commit: &str,
        message: &str,
    ) -> ForgeResult<()> {
        self.note("create_tag", true);
        self.inner.create_tag(repo, tag, commit, message)
    }

    fn list_releases(&self, repo: &RepoRef) -> ForgeResult<Vec<ReleaseInfo>> {
        self.note("list_releases", false);
        self.inner.list_releases(repo)
    }

    fn create_draft_release(
        &self,
        repo: &RepoRef,
        tag: &str,
        name: &str,
        body: &str,
    ) -> ForgeResult<ReleaseInfo> {
        self.note("create_draft_release", true);
        self.inner.create_draft_release(repo, tag, name, body)
    }

    fn upload_asset(
        &self,
        repo: &RepoRef,
        release_id: u64,
        name: &str,
        bytes: &[u8],
    ) -> ForgeResult<AssetInfo> {
        self.note("upload_asset", true);
        self.inner.upload_asset(repo, release_id, name, bytes)
    }

    fn download_asset(
        &self,
        repo: &RepoRef,
        release_id: u64,
        asset: &AssetInfo,
    ) -> ForgeResult<Vec<u8>> {
        self.note("download_asset", false);
        self.inner.download_asset(repo, release_id, asset)
    }

    fn delete_asset(&self, repo: &RepoRef, release_id: u64, asset_id: u64) -> ForgeResult<()> {
        self.note("delete_asset", true);
        self.inner.delete_asset(repo, release_id, asset_id)
    }

    fn publish_release(&self, repo: &RepoRef, release_id: u64) -> ForgeResult<ReleaseInfo> {
        self.note("publish_release", true);
        self.inner.publish_release(repo, release_id)
    }

    fn delete_release(&self, repo: &RepoRef, release_id: u64) -> ForgeResult<()> {
        self.note("delete_release", true);
        self.inner.delete_release(repo, release_id)
    }

    fn find_pulls(&self, repo: &RepoRef, head: &str) -> ForgeResult<Vec<PullInfo>> {
        self.note("find_pulls", false);
        self.inner.find_pulls(repo, head)
    }

    fn open_pull(
        &self,
        repo: &RepoRef,
        head: &str,
        base: &str,
        title: &str,
        body: &str,
    ) -> ForgeResult<PullInfo> {
        self.note("open_pull", true);
        self.inner.open_pull(repo, head, base, title, body)
    }

    fn update_pull(&self, repo: &RepoRef, number: u64, title: &str, body: &str) -> ForgeResult<()> {
        self.note("update_pull", true);
        self.inner.update_pull(repo, number, title, body)
    }

    fn close_pull(&self, repo: &RepoRef, number: u64) -> ForgeResult<()> {
        self.note("close_pull", true);
        self.inner.close_pull(repo, number)
    }

    fn list_comments(&self, repo: &RepoRef, number: u64) -> ForgeResult<Vec<CommentInfo>> {
        self.note("list_comments", false);
        self.inner.list_comments(repo, number)
    }

    fn create_comment(&self, repo: &RepoRef, number: u64, body: &str) -> ForgeResult<CommentInfo> {
        self.note("create_comment", true);
        self.inner.create_comment(repo, number, body)
    }

    fn update_comment(&self, repo: &RepoRef, comment_id: u64, body: &str) -> ForgeResult<()> {
        self.note("update_comment", true);
        self.inner.update_comment(repo, comment_id, body)
    }
}
