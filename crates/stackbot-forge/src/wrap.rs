//! One delegation body for forge wrappers ([`Counting`](super::counting::Counting),
//! [`Faulty`](super::faulty::Faulty)): every trait method is passed to the wrapped forge
//! through the wrapper's `intercept(method, is_write, call)`, so a wrapper states only what it
//! does around a call, and a new trait method is added here once.

/// Implement [`Forge`](super::Forge) for `$ty<F>` (a struct with a field `inner: F`) by routing
/// each call through `self.intercept(name, is_write, || call)`. `ensure_repo` and
/// `seed_preview` count as reads: on GitHub they only check.
macro_rules! forge_wrapper {
    ($ty:ident) => {
        impl<F: $crate::Forge> $crate::Forge for $ty<F> {
            fn kind(&self) -> &'static str {
                self.inner.kind()
            }
            fn seed_preview(&self, repo: &RepoRef) -> ForgeResult<Option<$crate::model::FileTree>> {
                self.intercept("seed_preview", false, || self.inner.seed_preview(repo))
            }
            fn ensure_repo(&self, repo: &RepoRef, default_branch: &str) -> ForgeResult<()> {
                self.intercept("ensure_repo", false, || {
                    self.inner.ensure_repo(repo, default_branch)
                })
            }
            fn branch_head(&self, repo: &RepoRef, branch: &str) -> ForgeResult<Option<String>> {
                self.intercept("branch_head", false, || {
                    self.inner.branch_head(repo, branch)
                })
            }
            fn tag_target(&self, repo: &RepoRef, tag: &str) -> ForgeResult<Option<String>> {
                self.intercept("tag_target", false, || self.inner.tag_target(repo, tag))
            }
            fn list_files(&self, repo: &RepoRef, commit: &str) -> ForgeResult<Vec<String>> {
                self.intercept("list_files", false, || self.inner.list_files(repo, commit))
            }
            fn read_file(
                &self,
                repo: &RepoRef,
                commit: &str,
                path: &str,
            ) -> ForgeResult<Option<Vec<u8>>> {
                self.intercept("read_file", false, || {
                    self.inner.read_file(repo, commit, path)
                })
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
                self.intercept("commit", true, || {
                    self.inner
                        .commit(repo, branch, parent, expected_head, changes, message)
                })
            }
            fn force_branch(&self, repo: &RepoRef, branch: &str, commit: &str) -> ForgeResult<()> {
                self.intercept("force_branch", true, || {
                    self.inner.force_branch(repo, branch, commit)
                })
            }
            fn commits_between(
                &self,
                repo: &RepoRef,
                base: &str,
                head: &str,
            ) -> ForgeResult<Vec<CommitInfo>> {
                self.intercept("commits_between", false, || {
                    self.inner.commits_between(repo, base, head)
                })
            }
            fn create_tag(
                &self,
                repo: &RepoRef,
                tag: &str,
                commit: &str,
                message: &str,
            ) -> ForgeResult<()> {
                self.intercept("create_tag", true, || {
                    self.inner.create_tag(repo, tag, commit, message)
                })
            }
            fn list_releases(&self, repo: &RepoRef) -> ForgeResult<Vec<ReleaseInfo>> {
                self.intercept("list_releases", false, || self.inner.list_releases(repo))
            }
            fn create_draft_release(
                &self,
                repo: &RepoRef,
                tag: &str,
                name: &str,
                body: &str,
            ) -> ForgeResult<ReleaseInfo> {
                self.intercept("create_draft_release", true, || {
                    self.inner.create_draft_release(repo, tag, name, body)
                })
            }
            fn create_draft_prerelease(
                &self,
                repo: &RepoRef,
                tag: &str,
                name: &str,
                body: &str,
            ) -> ForgeResult<ReleaseInfo> {
                self.intercept("create_draft_prerelease", true, || {
                    self.inner.create_draft_prerelease(repo, tag, name, body)
                })
            }
            fn upload_asset(
                &self,
                repo: &RepoRef,
                release_id: u64,
                name: &str,
                bytes: &[u8],
            ) -> ForgeResult<AssetInfo> {
                self.intercept("upload_asset", true, || {
                    self.inner.upload_asset(repo, release_id, name, bytes)
                })
            }
            fn download_asset(
                &self,
                repo: &RepoRef,
                release_id: u64,
                asset: &AssetInfo,
            ) -> ForgeResult<Vec<u8>> {
                self.intercept("download_asset", false, || {
                    self.inner.download_asset(repo, release_id, asset)
                })
            }
            fn delete_asset(
                &self,
                repo: &RepoRef,
                release_id: u64,
                asset_id: u64,
            ) -> ForgeResult<()> {
                self.intercept("delete_asset", true, || {
                    self.inner.delete_asset(repo, release_id, asset_id)
                })
            }
            fn publish_release(
                &self,
                repo: &RepoRef,
                release_id: u64,
                make_latest: bool,
            ) -> ForgeResult<ReleaseInfo> {
                self.intercept("publish_release", true, || {
                    self.inner.publish_release(repo, release_id, make_latest)
                })
            }
            fn latest_release(&self, repo: &RepoRef) -> ForgeResult<Option<ReleaseInfo>> {
                self.intercept("latest_release", false, || self.inner.latest_release(repo))
            }
            fn delete_release(&self, repo: &RepoRef, release_id: u64) -> ForgeResult<()> {
                self.intercept("delete_release", true, || {
                    self.inner.delete_release(repo, release_id)
                })
            }
            fn find_pulls(&self, repo: &RepoRef, head: &str) -> ForgeResult<Vec<PullInfo>> {
                self.intercept("find_pulls", false, || self.inner.find_pulls(repo, head))
            }
            fn open_pull(
                &self,
                repo: &RepoRef,
                head: &str,
                base: &str,
                title: &str,
                body: &str,
            ) -> ForgeResult<PullInfo> {
                self.intercept("open_pull", true, || {
                    self.inner.open_pull(repo, head, base, title, body)
                })
            }
            fn update_pull(
                &self,
                repo: &RepoRef,
                number: u64,
                title: &str,
                body: &str,
            ) -> ForgeResult<()> {
                self.intercept("update_pull", true, || {
                    self.inner.update_pull(repo, number, title, body)
                })
            }
            fn close_pull(&self, repo: &RepoRef, number: u64) -> ForgeResult<()> {
                self.intercept("close_pull", true, || self.inner.close_pull(repo, number))
            }
            fn enable_auto_merge(
                &self,
                repo: &RepoRef,
                number: u64,
            ) -> ForgeResult<crate::AutoMerge> {
                self.intercept("enable_auto_merge", true, || {
                    self.inner.enable_auto_merge(repo, number)
                })
            }
            fn add_labels(
                &self,
                repo: &RepoRef,
                number: u64,
                labels: &[String],
            ) -> ForgeResult<()> {
                self.intercept("add_labels", true, || {
                    self.inner.add_labels(repo, number, labels)
                })
            }
            fn list_comments(&self, repo: &RepoRef, number: u64) -> ForgeResult<Vec<CommentInfo>> {
                self.intercept("list_comments", false, || {
                    self.inner.list_comments(repo, number)
                })
            }
            fn create_comment(
                &self,
                repo: &RepoRef,
                number: u64,
                body: &str,
            ) -> ForgeResult<CommentInfo> {
                self.intercept("create_comment", true, || {
                    self.inner.create_comment(repo, number, body)
                })
            }
            fn update_comment(
                &self,
                repo: &RepoRef,
                comment_id: u64,
                body: &str,
            ) -> ForgeResult<()> {
                self.intercept("update_comment", true, || {
                    self.inner.update_comment(repo, comment_id, body)
                })
            }
            fn list_issues(
                &self,
                repo: &RepoRef,
                label: Option<&str>,
            ) -> ForgeResult<Vec<$crate::IssueInfo>> {
                self.intercept("list_issues", false, || self.inner.list_issues(repo, label))
            }
            fn create_issue(
                &self,
                repo: &RepoRef,
                title: &str,
                body: &str,
                labels: &[String],
            ) -> ForgeResult<$crate::IssueInfo> {
                self.intercept("create_issue", true, || {
                    self.inner.create_issue(repo, title, body, labels)
                })
            }
            fn update_issue(
                &self,
                repo: &RepoRef,
                number: u64,
                title: &str,
                body: &str,
            ) -> ForgeResult<()> {
                self.intercept("update_issue", true, || {
                    self.inner.update_issue(repo, number, title, body)
                })
            }
            fn dispatch_workflow(
                &self,
                repo: &RepoRef,
                workflow: &str,
                git_ref: &str,
                inputs: &std::collections::BTreeMap<String, String>,
                send_by: chrono::DateTime<chrono::Utc>,
            ) -> ForgeResult<Option<u64>> {
                self.intercept("dispatch_workflow", true, || {
                    self.inner
                        .dispatch_workflow(repo, workflow, git_ref, inputs, send_by)
                })
            }
            fn workflow_runs(
                &self,
                repo: &RepoRef,
                workflow: &str,
            ) -> ForgeResult<Vec<$crate::WorkflowRun>> {
                self.intercept("workflow_runs", false, || {
                    self.inner.workflow_runs(repo, workflow)
                })
            }
            fn workflow_run(
                &self,
                repo: &RepoRef,
                run_id: u64,
            ) -> ForgeResult<Option<$crate::WorkflowRun>> {
                self.intercept("workflow_run", false, || {
                    self.inner.workflow_run(repo, run_id)
                })
            }
            fn run_artifacts(
                &self,
                repo: &RepoRef,
                run_id: u64,
            ) -> ForgeResult<Vec<$crate::ArtifactInfo>> {
                self.intercept("run_artifacts", false, || {
                    self.inner.run_artifacts(repo, run_id)
                })
            }
            fn download_artifact(
                &self,
                repo: &RepoRef,
                artifact: &$crate::ArtifactInfo,
                max_bytes: u64,
            ) -> ForgeResult<Vec<u8>> {
                self.intercept("download_artifact", false, || {
                    self.inner.download_artifact(repo, artifact, max_bytes)
                })
            }
            fn cancel_workflow_run(&self, repo: &RepoRef, run_id: u64) -> ForgeResult<()> {
                self.intercept("cancel_workflow_run", true, || {
                    self.inner.cancel_workflow_run(repo, run_id)
                })
            }
        }
    };
}

pub(crate) use forge_wrapper;
