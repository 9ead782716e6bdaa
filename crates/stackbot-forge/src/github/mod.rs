//! The GitHub (and GitHub Enterprise) forge, over the REST API with octocrab as the HTTP client.
//!
//! Requests are built by hand (paths and JSON bodies) and sent through octocrab's client with its
//! retry layer off; [`transport`] classifies every answer. That keeps three things in our hands
//! that the typed octocrab builders hide: pagination `Link` headers, `Retry-After` on secondary
//! rate limits, and the decision whether a failed POST may be repeated. Answers are read as
//! `serde_json::Value` (the `*_of` functions), not as octocrab's models: a mapping into core's
//! types stays either way, and the models refuse a whole listing over one field GitHub
//! documents as nullable (`models::Author::gravatar_id`, a release's `author`, is a `String`).
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
//! run continues. Pacing, backoff and rate-limit waits run on the injected clock. Plain
//! `http://` is refused for anything but loopback, and TLS verification has no off switch.
//!
//! Layout, by resource: [`git`] (reading refs, trees, files), [`commits`] (writing commits,
//! branches, tags), [`releases`] (releases and assets), [`pulls`] (pull requests, comments),
//! [`issues`] (the dashboard issue);
//! the machinery below them: [`requests`] (read and write strategies), [`errors`] (status →
//! [`ForgeError`]), [`transport`] (one attempt, classified) and [`pacing`]; the retry policy is
//! `stackbot_net::retry`, shared with upstream.

mod actions;
mod app;
mod auth;
mod cache;
mod commits;
mod errors;
mod git;
mod issues;
mod pacing;
mod pulls;
mod redirects;
mod releases;
mod requests;
mod settings;
mod transport;
mod wire;

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::json;

use self::app::AppAuth;
pub use self::app::AppCredentials;
use self::auth::Auth;
use self::settings::Settings;
use self::transport::Transport;
use crate::clock::SharedClock;
use crate::config::{Committer, GithubForgeConfig};
use crate::net::Origin;
use crate::{
    ArtifactInfo, AssetInfo, CommentInfo, CommitInfo, FileChanges, Forge, ForgeError, ForgeResult,
    IssueInfo, PullInfo, ReleaseInfo, RepoRef, WorkflowRun,
};
pub use stackbot_net::retry::RetryPolicy;

/// The GitHub forge. Synchronous on the outside (the [`Forge`] trait), async inside on the process's
/// one runtime; safe to call from several threads at once.
pub struct GithubForge {
    /// The process's one runtime (stackbot_net::runtime), shared with OCI.
    rt: &'static tokio::runtime::Runtime,
    t: Transport,
    api_url: String,
    api_origin: Origin,
    upload_origin: Origin,
    /// Where the credentials come from, for error messages (`GITHUB_TOKEN`, `forge.github.app`).
    token_env: String,
    committer: Committer,
    /// Release id → its `upload_url` template, learnt from every release we read.
    upload_urls: Mutex<HashMap<u64, String>>,
}

impl std::fmt::Debug for GithubForge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GithubForge")
            .field("api_url", &self.api_url)
            .field("upload_origin", &self.upload_origin.to_string())
            .field("token_env", &self.token_env)
            .field(
                "token",
                &match &self.t.auth {
                    Auth::Token(Some(_)) | Auth::App(_) => "<redacted>",
                    Auth::Token(None) => "<none>",
                },
            )
            .finish()
    }
}

pub(super) use self::wire::{enc, is_sha, str_of, time_of};

/// The guard of `m`, also after a thread panicked holding it: what is kept under these locks
/// (caches, counters, secrets) is whole between statements.
fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl GithubForge {
    /// Build a client for `cfg`. `token` is read by the caller from the variable named in
    /// `cfg.token_env`; without one only public data is visible (no drafts) and writes fail
    /// with [`ForgeError::Unauthorized`]. `clock` paces writes and times backoff, rate-limit
    /// waits and tag dates.
    pub fn new(
        cfg: &GithubForgeConfig,
        token: Option<String>,
        clock: SharedClock,
    ) -> Result<Self, ForgeError> {
        let token = token.filter(|t| !t.trim().is_empty());
        Self::build(cfg, Auth::Token(token), cfg.token_env.clone(), clock)
    }

    /// Build a client that authenticates as the GitHub App `app` (`forge.github.app`): one
    /// installation token per repository, minted when first needed.
    pub fn new_app(
        cfg: &GithubForgeConfig,
        app: AppCredentials,
        clock: SharedClock,
    ) -> Result<Self, ForgeError> {
        let hint = format!("forge.github.app (App {})", app.app_id);
        Self::build(cfg, Auth::App(Box::new(AppAuth::new(app))), hint, clock)
    }

    /// With App authentication, also ask for `issues: write` on `repo` (the cluster-stacks
    /// repository, where the status dashboard issue lives). A no-op with a plain token.
    pub fn with_issues_on(mut self, repo: &RepoRef) -> Self {
        if let Auth::App(app) = &mut self.t.auth {
            app.issue_writers
                .push(repo.to_string().to_ascii_lowercase());
        }
        self
    }

    /// With App authentication, also ask for `actions: write` on `repo` (the cluster-stacks
    /// repository, whose workflow the conformance gate dispatches). A no-op with a plain token.
    pub fn with_actions_on(mut self, repo: &RepoRef) -> Self {
        if let Auth::App(app) = &mut self.t.auth {
            app.actions_writers
                .push(repo.to_string().to_ascii_lowercase());
        }
        self
    }

    fn build(
        cfg: &GithubForgeConfig,
        auth: Auth,
        token_env: String,
        clock: SharedClock,
    ) -> Result<Self, ForgeError> {
        let set = Settings::from_config(cfg)?;
        let rt = stackbot_net::runtime::runtime().map_err(|e| ForgeError::Io {
            what: "GitHub client runtime".into(),
            reason: e.to_string(),
        })?;
        let t = {
            let _g = rt.enter();
            Transport::new(&set, auth, clock).map_err(|reason| ForgeError::Rejected {
                what: "forge.github".into(),
                reason,
            })?
        };
        Ok(GithubForge {
            rt,
            t,
            api_origin: set.api_origin,
            api_url: set.api_url,
            upload_origin: set.upload_origin,
            token_env,
            committer: Committer::default(),
            upload_urls: Mutex::new(HashMap::new()),
        })
    }

    /// Author and committer of commits and tags (the config's `forge.committer`).
    pub fn with_committer(mut self, committer: &Committer) -> Self {
        self.committer = committer.clone();
        self
    }

    /// Keep GitHub's answers under `dir` across runs (ETags to revalidate for free, immutable
    /// objects never fetched twice). Without it they are kept for this run only.
    pub fn with_cache_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.t.cache = cache::Cache::new(Some(dir.into()));
        self
    }

    /// Reads answered `304 Not Modified` and reads served from the cache without a request.
    pub fn cache_counts(&self) -> (u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        (
            self.t.stats.not_modified.load(Relaxed),
            self.t.stats.cache_hits.load(Relaxed),
        )
    }

    /// Override the retry policy (tests and benchmarks).
    pub fn with_retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.t.policy = policy;
        self
    }

    /// Repositories GitHub redirected away from during this run (`old owner/name` → new),
    /// renamed or transferred: the configuration still names the old ones.
    pub fn moved_repositories(&self) -> std::collections::BTreeMap<String, String> {
        self.t.moved()
    }

    /// Requests sent so far (every attempt counts) and how many of them were retries.
    pub fn request_counts(&self) -> (u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        (
            self.t.stats.requests.load(Relaxed),
            self.t.stats.retries.load(Relaxed),
        )
    }

    /// Whether GitHub signs the commits this forge creates: only for a GitHub App, and only
    /// when the commit names no author or committer (GitHub then authors it as the App's bot
    /// account and marks it Verified). A token's commits are never signed.
    pub(super) fn commits_signed_by_github(&self) -> bool {
        matches!(self.t.auth, Auth::App(_))
    }

    /// The App's bot account (`<slug>[bot]`), the author of the commits GitHub signed for
    /// this forge; `None` with a token, or before any repository was looked up.
    pub(super) fn app_bot_login(&self) -> Option<String> {
        match &self.t.auth {
            Auth::App(app) => app.bot_login(),
            Auth::Token(_) => None,
        }
    }

    pub(super) fn repo_path(repo: &RepoRef) -> String {
        format!(
            "/repos/{}/{}",
            enc(&repo.owner, false),
            enc(&repo.name, false)
        )
    }
}

/// Trait methods run on the forge's runtime: each is its async body (`*_a`, in the resource
/// modules) driven to completion, one line each.
macro_rules! on_runtime {
    ($($name:ident => $body:ident($($arg:ident: $t:ty),*) -> $ret:ty;)*) => {
        $(fn $name(&self, $($arg: $t),*) -> ForgeResult<$ret> {
            self.rt.block_on(self.$body($($arg),*))
        })*
    };
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

    fn create_draft_release(
        &self,
        repo: &RepoRef,
        tag: &str,
        name: &str,
        body: &str,
    ) -> ForgeResult<ReleaseInfo> {
        self.rt
            .block_on(self.create_draft_a(repo, tag, name, body, false))
    }

    fn create_draft_prerelease(
        &self,
        repo: &RepoRef,
        tag: &str,
        name: &str,
        body: &str,
    ) -> ForgeResult<ReleaseInfo> {
        self.rt
            .block_on(self.create_draft_a(repo, tag, name, body, true))
    }

    fn download_asset(
        &self,
        repo: &RepoRef,
        _release_id: u64,
        asset: &AssetInfo,
    ) -> ForgeResult<Vec<u8>> {
        self.rt.block_on(self.download_asset_a(repo, asset))
    }

    fn update_pull(&self, repo: &RepoRef, number: u64, title: &str, body: &str) -> ForgeResult<()> {
        self.rt
            .block_on(self.patch_pull(repo, number, json!({"title": title, "body": body})))
    }

    fn close_pull(&self, repo: &RepoRef, number: u64) -> ForgeResult<()> {
        self.rt
            .block_on(self.patch_pull(repo, number, json!({"state": "closed"})))
    }

    on_runtime! {
        branch_head => branch_head_a(repo: &RepoRef, branch: &str) -> Option<String>;
        tag_target => tag_target_a(repo: &RepoRef, tag: &str) -> Option<String>;
        list_files => list_files_a(repo: &RepoRef, commit: &str) -> Vec<String>;
        read_file => read_file_a(repo: &RepoRef, commit: &str, path: &str) -> Option<Vec<u8>>;
        commit => commit_a(repo: &RepoRef, branch: &str, parent: &str,
            expected_head: Option<&str>, changes: &FileChanges, message: &str) -> String;
        force_branch => force_branch_a(repo: &RepoRef, branch: &str, commit: &str) -> ();
        commits_between => commits_between_a(repo: &RepoRef, base: &str, head: &str)
            -> Vec<CommitInfo>;
        create_tag => create_tag_a(repo: &RepoRef, tag: &str, commit: &str, message: &str) -> ();
        list_releases => list_releases_a(repo: &RepoRef) -> Vec<ReleaseInfo>;
        upload_asset => upload_asset_a(repo: &RepoRef, release_id: u64, name: &str,
            bytes: &[u8]) -> AssetInfo;
        delete_asset => delete_asset_a(repo: &RepoRef, release_id: u64, asset_id: u64) -> ();
        publish_release => publish_a(repo: &RepoRef, release_id: u64, make_latest: bool)
            -> ReleaseInfo;
        latest_release => latest_release_a(repo: &RepoRef) -> Option<ReleaseInfo>;
        delete_release => delete_release_a(repo: &RepoRef, release_id: u64) -> ();
        find_pulls => find_pulls_a(repo: &RepoRef, head: &str) -> Vec<PullInfo>;
        open_pull => open_pull_a(repo: &RepoRef, head: &str, base: &str, title: &str,
            body: &str) -> PullInfo;
        enable_auto_merge => enable_auto_merge_a(repo: &RepoRef, number: u64)
            -> crate::AutoMerge;
        add_labels => add_labels_a(repo: &RepoRef, number: u64, labels: &[String]) -> ();
        list_comments => list_comments_a(repo: &RepoRef, number: u64) -> Vec<CommentInfo>;
        create_comment => create_comment_a(repo: &RepoRef, number: u64, body: &str)
            -> CommentInfo;
        update_comment => update_comment_a(repo: &RepoRef, comment_id: u64, body: &str) -> ();
        list_issues => list_issues_a(repo: &RepoRef, label: Option<&str>) -> Vec<IssueInfo>;
        create_issue => create_issue_a(repo: &RepoRef, title: &str, body: &str,
            labels: &[String]) -> IssueInfo;
        update_issue => update_issue_a(repo: &RepoRef, number: u64, title: &str, body: &str)
            -> ();
        dispatch_workflow => dispatch_workflow_a(repo: &RepoRef, workflow: &str, git_ref: &str,
            inputs: &std::collections::BTreeMap<String, String>,
            send_by: chrono::DateTime<chrono::Utc>) -> Option<u64>;
        workflow_runs => workflow_runs_a(repo: &RepoRef, workflow: &str) -> Vec<WorkflowRun>;
        workflow_run => workflow_run_a(repo: &RepoRef, run_id: u64) -> Option<WorkflowRun>;
        run_artifacts => run_artifacts_a(repo: &RepoRef, run_id: u64) -> Vec<ArtifactInfo>;
        download_artifact => download_artifact_a(repo: &RepoRef, artifact: &ArtifactInfo,
            max_bytes: u64) -> Vec<u8>;
        cancel_workflow_run => cancel_workflow_run_a(repo: &RepoRef, run_id: u64) -> ();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock() -> SharedClock {
        std::sync::Arc::new(crate::clock::ManualClock::new(
            "2026-05-01T12:00:00Z".parse().unwrap(),
        ))
    }

    #[test]
    fn debug_output_redacts_the_token() {
        let cfg = GithubForgeConfig {
            api_url: "http://127.0.0.1:9".into(),
            ..GithubForgeConfig::default()
        };
        let f = GithubForge::new(&cfg, Some("ghp_SECRETSECRET".into()), clock()).unwrap();
        let d = format!("{f:?}");
        assert!(
            !d.contains("SECRETSECRET") && d.contains("<redacted>"),
            "{d}"
        );
    }
}
