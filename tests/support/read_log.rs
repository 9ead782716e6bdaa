//! A forge that logs every call with what it asked for (method and arguments), so a test can
//! say "no run reads the same thing twice" of each fact, not only of each method: which commit's
//! file list, which file at which commit, which tag, which asset. [`Counting`] counts per
//! method; this one tells two reads of the same file from reads of two files.
//!
//! A repeated read is one whose key was read before with no write of the run in between
//! ([`ReadLog::repeated`]): after a write, reading again is how a writer checks what it did
//! (and a branch head or a listing may have changed). Reads of content a commit id names
//! (`list_files`, `read_file`) can never change, so [`ReadLog::reread_content`] counts them
//! over the whole run, writes or not.
//!
//! [`Counting`]: stackbot::forge::counting::Counting

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use stackbot::forge::{
    ArtifactInfo, AssetInfo, CommentInfo, CommitInfo, FileChanges, Forge, ForgeResult, IssueInfo,
    PullInfo, ReleaseInfo, RepoRef, WorkflowRun,
};
use stackbot::model::FileTree;

/// One call: the method, whether it writes, and (for a read) what it asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub method: &'static str,
    pub write: bool,
    /// `repo` and the arguments that name the thing read (empty for a write).
    pub key: String,
}

/// A forge that logs each call before passing it on.
pub struct ReadLog<F> {
    inner: F,
    log: Mutex<Vec<Call>>,
}

impl<F> ReadLog<F> {
    pub fn new(inner: F) -> Self {
        ReadLog {
            inner,
            log: Mutex::new(Vec::new()),
        }
    }

    fn note(&self, method: &'static str, write: bool, key: String) {
        self.log
            .lock()
            .expect("log")
            .push(Call { method, write, key });
    }

    /// The wrapped forge (to look at it without a log entry).
    pub fn inner(&self) -> &F {
        &self.inner
    }

    /// Every call so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.log.lock().expect("log").clone()
    }

    /// Forget the calls so far.
    pub fn clear(&self) {
        self.log.lock().expect("log").clear();
    }

    /// Calls that change the forge.
    pub fn writes(&self) -> usize {
        self.calls().iter().filter(|c| c.write).count()
    }

    /// The reads that asked again for what the run had read since its last write
    /// (`method key` → how many times more).
    pub fn repeated(&self) -> BTreeMap<String, usize> {
        let mut seen = BTreeSet::new();
        let mut out = BTreeMap::new();
        for c in self.calls() {
            if c.write {
                seen.clear();
                continue;
            }
            let k = format!("{} {}", c.method, c.key);
            if !seen.insert(k.clone()) {
                *out.entry(k).or_default() += 1;
            }
        }
        out
    }

    /// The reads of a commit's file list or of a file at a commit made more than once in the
    /// whole run (`method key` → reads): what a commit holds never changes.
    pub fn reread_content(&self) -> BTreeMap<String, usize> {
        let mut n: BTreeMap<String, usize> = BTreeMap::new();
        for c in self.calls() {
            if matches!(c.method, "list_files" | "read_file") {
                *n.entry(format!("{} {}", c.method, c.key)).or_default() += 1;
            }
        }
        n.retain(|_, v| *v > 1);
        n
    }

    /// How many times `method` was called with `key`.
    pub fn reads_of(&self, method: &str, key: &str) -> usize {
        self.calls()
            .iter()
            .filter(|c| c.method == method && c.key == key)
            .count()
    }
}

impl<F: Forge> Forge for ReadLog<F> {
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
    fn ensure_repo(&self, repo: &RepoRef, default_branch: &str) -> ForgeResult<()> {
        // Checks on GitHub; creates only a repository that does not exist yet.
        self.note("ensure_repo", false, format!("{repo} {default_branch}"));
        self.inner.ensure_repo(repo, default_branch)
    }
    fn seed_preview(&self, repo: &RepoRef) -> ForgeResult<Option<FileTree>> {
        self.note("seed_preview", false, repo.to_string());
        self.inner.seed_preview(repo)
    }
    fn branch_head(&self, repo: &RepoRef, branch: &str) -> ForgeResult<Option<String>> {
        self.note("branch_head", false, format!("{repo} {branch}"));
        self.inner.branch_head(repo, branch)
    }
    fn tag_target(&self, repo: &RepoRef, tag: &str) -> ForgeResult<Option<String>> {
        self.note("tag_target", false, format!("{repo} {tag}"));
        self.inner.tag_target(repo, tag)
    }
    fn list_files(&self, repo: &RepoRef, commit: &str) -> ForgeResult<Vec<String>> {
        self.note("list_files", false, format!("{repo} {commit}"));
        self.inner.list_files(repo, commit)
    }
    fn read_file(&self, repo: &RepoRef, commit: &str, path: &str) -> ForgeResult<Option<Vec<u8>>> {
        self.note("read_file", false, format!("{repo} {commit} {path}"));
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
        self.note("commit", true, String::new());
        self.inner
            .commit(repo, branch, parent, expected_head, changes, message)
    }
    fn force_branch(&self, repo: &RepoRef, branch: &str, commit: &str) -> ForgeResult<()> {
        self.note("force_branch", true, String::new());
        self.inner.force_branch(repo, branch, commit)
    }
    fn commits_between(
        &self,
        repo: &RepoRef,
        base: &str,
        head: &str,
    ) -> ForgeResult<Vec<CommitInfo>> {
        self.note("commits_between", false, format!("{repo} {base}..{head}"));
        self.inner.commits_between(repo, base, head)
    }
    fn create_tag(
        &self,
        repo: &RepoRef,
        tag: &str,
        commit: &str,
        message: &str,
    ) -> ForgeResult<()> {
        self.note("create_tag", true, String::new());
        self.inner.create_tag(repo, tag, commit, message)
    }
    fn list_releases(&self, repo: &RepoRef) -> ForgeResult<Vec<ReleaseInfo>> {
        self.note("list_releases", false, repo.to_string());
        self.inner.list_releases(repo)
    }
    fn create_draft_release(
        &self,
        repo: &RepoRef,
        tag: &str,
        name: &str,
        body: &str,
    ) -> ForgeResult<ReleaseInfo> {
        self.note("create_draft_release", true, String::new());
        self.inner.create_draft_release(repo, tag, name, body)
    }
    fn create_draft_prerelease(
        &self,
        repo: &RepoRef,
        tag: &str,
        name: &str,
        body: &str,
    ) -> ForgeResult<ReleaseInfo> {
        self.note("create_draft_prerelease", true, String::new());
        self.inner.create_draft_prerelease(repo, tag, name, body)
    }
    fn upload_asset(
        &self,
        repo: &RepoRef,
        release_id: u64,
        name: &str,
        bytes: &[u8],
    ) -> ForgeResult<AssetInfo> {
        self.note("upload_asset", true, String::new());
        self.inner.upload_asset(repo, release_id, name, bytes)
    }
    fn download_asset(
        &self,
        repo: &RepoRef,
        release_id: u64,
        asset: &AssetInfo,
    ) -> ForgeResult<Vec<u8>> {
        self.note(
            "download_asset",
            false,
            format!("{repo} {release_id} {} {}", asset.id, asset.name),
        );
        self.inner.download_asset(repo, release_id, asset)
    }
    fn delete_asset(&self, repo: &RepoRef, release_id: u64, asset_id: u64) -> ForgeResult<()> {
        self.note("delete_asset", true, String::new());
        self.inner.delete_asset(repo, release_id, asset_id)
    }
    fn publish_release(
        &self,
        repo: &RepoRef,
        release_id: u64,
        make_latest: bool,
    ) -> ForgeResult<ReleaseInfo> {
        self.note("publish_release", true, String::new());
        self.inner.publish_release(repo, release_id, make_latest)
    }
    fn latest_release(&self, repo: &RepoRef) -> ForgeResult<Option<ReleaseInfo>> {
        self.note("latest_release", false, repo.to_string());
        self.inner.latest_release(repo)
    }
    fn delete_release(&self, repo: &RepoRef, release_id: u64) -> ForgeResult<()> {
        self.note("delete_release", true, String::new());
        self.inner.delete_release(repo, release_id)
    }
    fn find_pulls(&self, repo: &RepoRef, head: &str) -> ForgeResult<Vec<PullInfo>> {
        self.note("find_pulls", false, format!("{repo} {head}"));
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
        self.note("open_pull", true, String::new());
        self.inner.open_pull(repo, head, base, title, body)
    }
    fn update_pull(&self, repo: &RepoRef, number: u64, title: &str, body: &str) -> ForgeResult<()> {
        self.note("update_pull", true, String::new());
        self.inner.update_pull(repo, number, title, body)
    }
    fn close_pull(&self, repo: &RepoRef, number: u64) -> ForgeResult<()> {
        self.note("close_pull", true, String::new());
        self.inner.close_pull(repo, number)
    }
    fn add_labels(&self, repo: &RepoRef, number: u64, labels: &[String]) -> ForgeResult<()> {
        self.note("add_labels", true, String::new());
        self.inner.add_labels(repo, number, labels)
    }
    fn enable_auto_merge(
        &self,
        repo: &RepoRef,
        number: u64,
    ) -> ForgeResult<stackbot::forge::AutoMerge> {
        self.note("enable_auto_merge", true, String::new());
        self.inner.enable_auto_merge(repo, number)
    }
    fn list_comments(&self, repo: &RepoRef, number: u64) -> ForgeResult<Vec<CommentInfo>> {
        self.note("list_comments", false, format!("{repo} {number}"));
        self.inner.list_comments(repo, number)
    }
    fn create_comment(&self, repo: &RepoRef, number: u64, body: &str) -> ForgeResult<CommentInfo> {
        self.note("create_comment", true, String::new());
        self.inner.create_comment(repo, number, body)
    }
    fn update_comment(&self, repo: &RepoRef, comment_id: u64, body: &str) -> ForgeResult<()> {
        self.note("update_comment", true, String::new());
        self.inner.update_comment(repo, comment_id, body)
    }
    fn list_issues(&self, repo: &RepoRef, label: Option<&str>) -> ForgeResult<Vec<IssueInfo>> {
        self.note("list_issues", false, format!("{repo} {label:?}"));
        self.inner.list_issues(repo, label)
    }
    fn create_issue(
        &self,
        repo: &RepoRef,
        title: &str,
        body: &str,
        labels: &[String],
    ) -> ForgeResult<IssueInfo> {
        self.note("create_issue", true, String::new());
        self.inner.create_issue(repo, title, body, labels)
    }
    fn update_issue(
        &self,
        repo: &RepoRef,
        number: u64,
        title: &str,
        body: &str,
    ) -> ForgeResult<()> {
        self.note("update_issue", true, String::new());
        self.inner.update_issue(repo, number, title, body)
    }

    fn dispatch_workflow(
        &self,
        repo: &RepoRef,
        workflow: &str,
        git_ref: &str,
        inputs: &BTreeMap<String, String>,
        send_by: chrono::DateTime<chrono::Utc>,
    ) -> ForgeResult<Option<u64>> {
        self.note("dispatch_workflow", true, String::new());
        self.inner
            .dispatch_workflow(repo, workflow, git_ref, inputs, send_by)
    }
    fn workflow_runs(&self, repo: &RepoRef, workflow: &str) -> ForgeResult<Vec<WorkflowRun>> {
        self.note("workflow_runs", false, format!("{repo} {workflow}"));
        self.inner.workflow_runs(repo, workflow)
    }
    fn workflow_run(&self, repo: &RepoRef, run_id: u64) -> ForgeResult<Option<WorkflowRun>> {
        self.note("workflow_run", false, format!("{repo} {run_id}"));
        self.inner.workflow_run(repo, run_id)
    }
    fn run_artifacts(&self, repo: &RepoRef, run_id: u64) -> ForgeResult<Vec<ArtifactInfo>> {
        self.note("run_artifacts", false, format!("{repo} {run_id}"));
        self.inner.run_artifacts(repo, run_id)
    }
    fn download_artifact(
        &self,
        repo: &RepoRef,
        artifact: &ArtifactInfo,
        max_bytes: u64,
    ) -> ForgeResult<Vec<u8>> {
        self.note(
            "download_artifact",
            false,
            format!("{repo} {}", artifact.name),
        );
        self.inner.download_artifact(repo, artifact, max_bytes)
    }
    fn cancel_workflow_run(&self, repo: &RepoRef, run_id: u64) -> ForgeResult<()> {
        self.note("cancel_workflow_run", true, String::new());
        self.inner.cancel_workflow_run(repo, run_id)
    }
}
