//! One delegation body for forge wrappers ([`Counting`](super::counting::Counting),
//! [`Faulty`](super::faulty::Faulty), the tests' read log): every trait method is passed to the
//! wrapped forge through the wrapper's `intercept(method, is_write, key, call)`, so a wrapper
//! states only what it does around a call, and a new trait method is added here once.

// The types the expansion names, at a path public to crates that use the macro.
#[doc(hidden)]
pub use chrono::{DateTime, Utc};
#[doc(hidden)]
pub use stackbot_core::model::FileTree;

/// Implement [`Forge`](crate::Forge) for `$ty<F>` (a struct with a field `inner: F`) by routing
/// each call through `self.intercept(name, is_write, key, || call)`. `key` says what a read
/// asked for: `repo` and the arguments that name the thing read (empty for a write).
/// `ensure_repo` and `seed_preview` count as reads: on GitHub they only check.
#[macro_export]
macro_rules! forge_wrapper {
    ($ty:ident) => {
        $crate::forge_wrapper! { @impl $ty;
            ensure_repo(repo: &RepoRef, default_branch: &str) -> (); read "{repo} {default_branch}";
            seed_preview(repo: &RepoRef) -> Option<FileTree>; read "{repo}";
            branch_head(repo: &RepoRef, branch: &str) -> Option<String>; read "{repo} {branch}";
            tag_target(repo: &RepoRef, tag: &str) -> Option<String>; read "{repo} {tag}";
            list_files(repo: &RepoRef, commit: &str) -> Vec<String>; read "{repo} {commit}";
            read_file(repo: &RepoRef, commit: &str, path: &str) -> Option<Vec<u8>>;
                read "{repo} {commit} {path}";
            commit(repo: &RepoRef, branch: &str, parent: &str, expected_head: Option<&str>,
                changes: &FileChanges, message: &str) -> String; write "";
            force_branch(repo: &RepoRef, branch: &str, commit: &str) -> (); write "";
            commits_between(repo: &RepoRef, base: &str, head: &str) -> Vec<CommitInfo>;
                read "{repo} {base}..{head}";
            create_tag(repo: &RepoRef, tag: &str, commit: &str, message: &str) -> (); write "";
            list_releases(repo: &RepoRef) -> Vec<ReleaseInfo>; read "{repo}";
            create_draft_release(repo: &RepoRef, tag: &str, name: &str, body: &str)
                -> ReleaseInfo; write "";
            create_draft_prerelease(repo: &RepoRef, tag: &str, name: &str, body: &str)
                -> ReleaseInfo; write "";
            upload_asset(repo: &RepoRef, release_id: u64, name: &str, bytes: &[u8]) -> AssetInfo;
                write "";
            download_asset(repo: &RepoRef, release_id: u64, asset: &AssetInfo) -> Vec<u8>;
                read "{repo} {release_id} {} {}", asset.id, asset.name;
            delete_asset(repo: &RepoRef, release_id: u64, asset_id: u64) -> (); write "";
            publish_release(repo: &RepoRef, release_id: u64, make_latest: bool) -> ReleaseInfo;
                write "";
            latest_release(repo: &RepoRef) -> Option<ReleaseInfo>; read "{repo}";
            delete_release(repo: &RepoRef, release_id: u64) -> (); write "";
            find_pulls(repo: &RepoRef, head: &str) -> Vec<PullInfo>; read "{repo} {head}";
            open_pull(repo: &RepoRef, head: &str, base: &str, title: &str, body: &str)
                -> PullInfo; write "";
            update_pull(repo: &RepoRef, number: u64, title: &str, body: &str) -> (); write "";
            close_pull(repo: &RepoRef, number: u64) -> (); write "";
            add_labels(repo: &RepoRef, number: u64, labels: &[String]) -> (); write "";
            enable_auto_merge(repo: &RepoRef, number: u64) -> AutoMerge; write "";
            list_comments(repo: &RepoRef, number: u64) -> Vec<CommentInfo>; read "{repo} {number}";
            create_comment(repo: &RepoRef, number: u64, body: &str) -> CommentInfo; write "";
            update_comment(repo: &RepoRef, comment_id: u64, body: &str) -> (); write "";
            list_issues(repo: &RepoRef, label: Option<&str>) -> Vec<IssueInfo>;
                read "{repo} {label:?}";
            create_issue(repo: &RepoRef, title: &str, body: &str, labels: &[String]) -> IssueInfo;
                write "";
            update_issue(repo: &RepoRef, number: u64, title: &str, body: &str) -> (); write "";
            dispatch_workflow(repo: &RepoRef, workflow: &str, git_ref: &str,
                inputs: &BTreeMap<String, String>, send_by: DateTime<Utc>) -> Option<u64>;
                write "";
            workflow_runs(repo: &RepoRef, workflow: &str) -> Vec<WorkflowRun>;
                read "{repo} {workflow}";
            workflow_run(repo: &RepoRef, run_id: u64) -> Option<WorkflowRun>; read "{repo} {run_id}";
            run_artifacts(repo: &RepoRef, run_id: u64) -> Vec<ArtifactInfo>; read "{repo} {run_id}";
            download_artifact(repo: &RepoRef, artifact: &ArtifactInfo, max_bytes: u64) -> Vec<u8>;
                read "{repo} {}", artifact.name;
            cancel_workflow_run(repo: &RepoRef, run_id: u64) -> (); write "";
        }
    };
    (@impl $ty:ident; $($name:ident($($arg:ident: $t:ty),*) -> $ret:ty;
        $rw:ident $key:literal $(, $k:expr)*;)*) => {
        const _: () = {
            use std::collections::BTreeMap;
            use $crate::wrap::{DateTime, FileTree, Utc};
            use $crate::{
                ArtifactInfo, AssetInfo, AutoMerge, CommentInfo, CommitInfo, FileChanges,
                ForgeResult, IssueInfo, PullInfo, ReleaseInfo, RepoRef, WorkflowRun,
            };
            impl<F: $crate::Forge> $crate::Forge for $ty<F> {
                fn kind(&self) -> &'static str {
                    self.inner.kind()
                }
                $(fn $name(&self, $($arg: $t),*) -> ForgeResult<$ret> {
                    let write = $crate::forge_wrapper!(@write $rw);
                    self.intercept(stringify!($name), write, format_args!($key $(, $k)*), || {
                        self.inner.$name($($arg),*)
                    })
                })*
            }
        };
    };
    (@write read) => { false };
    (@write write) => { true };
}
