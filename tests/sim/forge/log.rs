//! The world's own request log at the forge's door: every call the bot makes to its forge,
//! in order, with whether the world counts it as a write (it changes what the forge holds).
//! The cost checks and the crash detection read this log, not the bot's `Counting` wrapper,
//! so a miscount in the bot cannot hide a run that walks its history. On the fake GitHub the
//! server's own log of HTTP requests is kept as well (`HttpCost`).

use std::collections::BTreeMap;
use std::sync::Mutex;

use stackbot::forge::{
    AssetInfo, CommentInfo, CommitInfo, FileChanges, Forge, ForgeResult, IssueInfo, PullInfo,
    ReleaseInfo, RepoRef,
};
use stackbot::model::FileTree;

/// A forge that logs each call before passing it on.
pub struct Logged<F> {
    inner: F,
    log: Mutex<Vec<(&'static str, bool)>>,
}

impl<F> Logged<F> {
    pub fn new(inner: F) -> Self {
        Logged {
            inner,
            log: Mutex::new(Vec::new()),
        }
    }

    fn note(&self, method: &'static str, write: bool) {
        self.log.lock().expect("log").push((method, write));
    }

    /// Calls that only read.
    pub fn reads(&self) -> u64 {
        self.log
            .lock()
            .expect("log")
            .iter()
            .filter(|c| !c.1)
            .count() as u64
    }

    /// Calls that change the forge (attempted: a crash before a write still counts it).
    pub fn writes(&self) -> u64 {
        self.log.lock().expect("log").iter().filter(|c| c.1).count() as u64
    }

    /// Calls per method.
    pub fn by_method(&self) -> BTreeMap<&'static str, u64> {
        let mut out = BTreeMap::new();
        for (m, _) in self.log.lock().expect("log").iter() {
            *out.entry(*m).or_default() += 1;
        }
        out
    }
}

impl<F: Forge> Forge for Logged<F> {
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
    fn ensure_repo(&self, repo: &RepoRef, default_branch: &str) -> ForgeResult<()> {
        // Checks on GitHub; creates only a repository that does not exist yet.
        self.note("ensure_repo", false);
        self.inner.ensure_repo(repo, default_branch)
    }
    fn seed_preview(&self, repo: &RepoRef) -> ForgeResult<Option<FileTree>> {
        self.note("seed_preview", false);
        self.inner.seed_preview(repo)
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
    fn create_draft_prerelease(
        &self,
        repo: &RepoRef,
        tag: &str,
        name: &str,
        body: &str,
    ) -> ForgeResult<ReleaseInfo> {
        self.note("create_draft_prerelease", true);
        self.inner.create_draft_prerelease(repo, tag, name, body)
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
    fn publish_release(
        &self,
        repo: &RepoRef,
        release_id: u64,
        make_latest: bool,
    ) -> ForgeResult<ReleaseInfo> {
        self.note("publish_release", true);
        self.inner.publish_release(repo, release_id, make_latest)
    }
    fn latest_release(&self, repo: &RepoRef) -> ForgeResult<Option<ReleaseInfo>> {
        self.note("latest_release", false);
        self.inner.latest_release(repo)
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
    fn add_labels(&self, repo: &RepoRef, number: u64, labels: &[String]) -> ForgeResult<()> {
        self.note("add_labels", true);
        self.inner.add_labels(repo, number, labels)
    }
    fn enable_auto_merge(
        &self,
        repo: &RepoRef,
        number: u64,
    ) -> ForgeResult<stackbot::forge::AutoMerge> {
        self.note("enable_auto_merge", true);
        self.inner.enable_auto_merge(repo, number)
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
    fn list_issues(&self, repo: &RepoRef, label: Option<&str>) -> ForgeResult<Vec<IssueInfo>> {
        self.note("list_issues", false);
        self.inner.list_issues(repo, label)
    }
    fn create_issue(
        &self,
        repo: &RepoRef,
        title: &str,
        body: &str,
        labels: &[String],
    ) -> ForgeResult<IssueInfo> {
        self.note("create_issue", true);
        self.inner.create_issue(repo, title, body, labels)
    }
    fn update_issue(
        &self,
        repo: &RepoRef,
        number: u64,
        title: &str,
        body: &str,
    ) -> ForgeResult<()> {
        self.note("update_issue", true);
        self.inner.update_issue(repo, number, title, body)
    }
}
