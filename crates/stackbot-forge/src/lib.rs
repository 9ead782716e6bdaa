//! The forge: where the cluster-stacks repository, its releases and the tenant repositories live.
//!
//! The trait is deliberately small, synchronous and shaped around *idempotent reconciliation*:
//! every write has a matching read so that `apply` can ask "is this already done?" before doing
//! it, and no method retries a non-idempotent write on its own (octocrab retries POSTs by
//! default; a retried `create release` after a 502 is how duplicate drafts are born).
//! Implementations: [`local`] (bare git repositories + release folders, the embedded default)
//! and `github` (REST API via octocrab).
//!
//! The crate is everything that writes to the world the bot publishes to: the `Forge` trait
//! and [`ForgeError`], the local and GitHub forges, the OCI registry adapter ([`oci`]: the
//! registry client, the target and its credentials, the publisher), and, behind the
//! `test-doubles` feature (never shipped), the counting and faulty wrappers. The forge's data
//! types (releases, commits, pull requests, issues) are vocabulary the pure stages read, so
//! they live in `stackbot_core::forge` and are re-exported here.

// The core modules this crate's code names as `crate::model`, `crate::config`, ...: the paths
// the code had when the forge was a module of one crate, kept so the split moved files only.
use stackbot_core::{clock, config, env, error, model};
use stackbot_net::net;

#[cfg(any(test, feature = "test-doubles"))]
pub mod counting;
#[cfg(any(test, feature = "test-doubles"))]
pub mod faulty;
pub mod github;
pub mod local;
pub mod oci;
#[doc(hidden)]
#[cfg(any(test, feature = "test-doubles"))]
pub mod wrap;

pub use stackbot_core::forge::*;

use std::collections::BTreeMap;

/// Why a forge call failed. Messages never contain credentials.
#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    #[error("{what} not found")]
    NotFound { what: String },
    #[error("{what} already exists")]
    AlreadyExists { what: String },
    #[error(
        "authentication failed for {what}: check that the token in `{token_env}` is valid and has access"
    )]
    Unauthorized { what: String, token_env: String },
    #[error("{what} was rejected: {reason}")]
    Rejected { what: String, reason: String },
    #[error(
        "{what} is not a fast-forward of the expected parent: someone else changed it; re-run to reconcile"
    )]
    Conflict { what: String },
    #[error(
        "{what}: GitHub answered that it moved (to `{to}`), and stackbot does not follow that \
         redirect (another host, or too many hops); if the repository was renamed or \
         transferred, write its new `owner/name` in stackbot.yaml (`forge.repository`, or the \
         tenant's `repository`)"
    )]
    Moved { what: String, to: String },
    #[error("transient forge failure on {what}: {reason} (safe to re-run)")]
    Transient { what: String, reason: String },
    /// A transient failure of a write that GitHub definitely did not perform: it was refused
    /// before anything was sent (the name did not resolve, the connection was refused, TLS
    /// failed) or given up while waiting out a rate limit. Unlike [`ForgeError::Transient`]
    /// after a send, nothing can have happened, so sending it again later starts nothing twice.
    #[error("transient forge failure on {what}: {reason}; it was not sent (safe to re-run)")]
    NotSent { what: String, reason: String },
    #[error("forge I/O error on {what}: {reason}")]
    Io { what: String, reason: String },
    /// The file system refuses the local forge access (permission denied, read-only): a
    /// person must fix the permissions or the path, so re-running alone never helps.
    #[error("{what}: {reason}")]
    Denied { what: String, reason: String },
}

/// Largest file of a release read back whole (a GitHub asset, a layer of `pull_release`): a
/// release's archives are a few hundred KiB, so a file declared larger is not one a packager
/// wrote, and is refused before it is downloaded, on either forge.
pub const RELEASE_FILE_CEILING: u64 = 64 << 20;

/// Result alias for forge calls.
pub type ForgeResult<T> = Result<T, ForgeError>;

/// What the bot needs from a forge. All methods are idempotent-friendly: creators fail with
/// [`ForgeError::AlreadyExists`] rather than duplicating, and every creator has a reader.
pub trait Forge: Send + Sync {
    /// A short name for logs (`local`, `github`).
    fn kind(&self) -> &'static str;

    // ---- repositories and git ----

    /// Make sure a repository exists (the local forge creates it, GitHub only checks).
    fn ensure_repo(&self, repo: &RepoRef, default_branch: &str) -> ForgeResult<()>;
    /// The files `ensure_repo` would create a missing repository with (the local forge's
    /// seed; an empty tree for an unseeded one), so dry runs plan against a repository they
    /// must not create. `None` when the repository exists or the forge never creates one.
    fn seed_preview(&self, _repo: &RepoRef) -> ForgeResult<Option<crate::model::FileTree>> {
        Ok(None)
    }
    /// The commit a branch points to, `None` if the branch does not exist.
    fn branch_head(&self, repo: &RepoRef, branch: &str) -> ForgeResult<Option<String>>;
    /// The commit a tag points to (peeled), `None` if the tag does not exist.
    fn tag_target(&self, repo: &RepoRef, tag: &str) -> ForgeResult<Option<String>>;
    /// All file paths at a commit.
    fn list_files(&self, repo: &RepoRef, commit: &str) -> ForgeResult<Vec<String>>;
    /// One file at a commit, `None` if absent.
    fn read_file(&self, repo: &RepoRef, commit: &str, path: &str) -> ForgeResult<Option<Vec<u8>>>;
    /// Create a commit on top of `parent` with `changes` and move `branch` to it, but only if
    /// `branch` currently points to `expected_head` (`None`: the branch must not exist yet).
    /// Never forces: a moved branch is [`ForgeError::Conflict`]. Returns the new commit.
    fn commit(
        &self,
        repo: &RepoRef,
        branch: &str,
        parent: &str,
        expected_head: Option<&str>,
        changes: &FileChanges,
        message: &str,
    ) -> ForgeResult<String>;
    /// Reset a bot-owned branch to `commit` (only used on branches the bot alone has written).
    fn force_branch(&self, repo: &RepoRef, branch: &str, commit: &str) -> ForgeResult<()>;
    /// Commits reachable from `head` but not from `base` (oldest first).
    fn commits_between(
        &self,
        repo: &RepoRef,
        base: &str,
        head: &str,
    ) -> ForgeResult<Vec<CommitInfo>>;
    /// Create an annotated tag on a commit; `AlreadyExists` if the tag exists.
    fn create_tag(&self, repo: &RepoRef, tag: &str, commit: &str, message: &str)
    -> ForgeResult<()>;

    // ---- releases ----

    /// Every release (all pages), drafts included when the credentials can see them.
    fn list_releases(&self, repo: &RepoRef) -> ForgeResult<Vec<ReleaseInfo>>;
    /// Create a draft release for an existing tag.
    fn create_draft_release(
        &self,
        repo: &RepoRef,
        tag: &str,
        name: &str,
        body: &str,
    ) -> ForgeResult<ReleaseInfo>;
    /// Create a draft pre-release for a tag (a conformance candidate): like
    /// [`Forge::create_draft_release`], but once published it is a pre-release, which is never
    /// the *Latest* release. A forge without pre-releases refuses.
    fn create_draft_prerelease(
        &self,
        repo: &RepoRef,
        tag: &str,
        _name: &str,
        _body: &str,
    ) -> ForgeResult<ReleaseInfo> {
        Err(ForgeError::Rejected {
            what: format!("pre-release {tag} in {repo}"),
            reason: format!("the {} forge has no pre-releases", self.kind()),
        })
    }
    /// Upload one asset to a (draft) release; `AlreadyExists` if an asset of that name exists.
    fn upload_asset(
        &self,
        repo: &RepoRef,
        release_id: u64,
        name: &str,
        bytes: &[u8],
    ) -> ForgeResult<AssetInfo>;
    /// Download an asset's bytes.
    fn download_asset(
        &self,
        repo: &RepoRef,
        release_id: u64,
        asset: &AssetInfo,
    ) -> ForgeResult<Vec<u8>>;
    /// Delete an asset (used to replace a partial upload).
    fn delete_asset(&self, repo: &RepoRef, release_id: u64, asset_id: u64) -> ForgeResult<()>;
    /// Publish a draft (or re-apply `make_latest` to a published release). `make_latest` is
    /// always said out loud: GitHub otherwise marks whatever was published last as *Latest*,
    /// even an older minor's patch. `true` makes this release the Latest one; `false` leaves
    /// the current Latest release as it is.
    fn publish_release(
        &self,
        repo: &RepoRef,
        release_id: u64,
        make_latest: bool,
    ) -> ForgeResult<ReleaseInfo>;
    /// The release the forge shows as *Latest*, if any (GitHub: `GET /releases/latest`;
    /// published, non-prerelease releases only).
    fn latest_release(&self, repo: &RepoRef) -> ForgeResult<Option<ReleaseInfo>>;
    /// Delete a release (orphan or duplicate drafts only).
    fn delete_release(&self, repo: &RepoRef, release_id: u64) -> ForgeResult<()>;

    // ---- pull requests and comments ----

    /// Pull requests whose head branch is `head` (any state), newest first: at most the
    /// newest [`PULLS_WINDOW`]. Every decision reads the newest ones only (a tenant's current
    /// pull request; merged release pull requests above the latest release), so one request
    /// answers it however many pull requests the branch has had over the years.
    fn find_pulls(&self, repo: &RepoRef, head: &str) -> ForgeResult<Vec<PullInfo>>;
    /// Open a pull request.
    fn open_pull(
        &self,
        repo: &RepoRef,
        head: &str,
        base: &str,
        title: &str,
        body: &str,
    ) -> ForgeResult<PullInfo>;
    /// Update title and body.
    fn update_pull(&self, repo: &RepoRef, number: u64, title: &str, body: &str) -> ForgeResult<()>;
    /// Close without merging.
    fn close_pull(&self, repo: &RepoRef, number: u64) -> ForgeResult<()>;
    /// Add `labels` to pull request `number` (created in the repository when missing); the
    /// labels it already carries stay. Adding a label it has is no change, so a repeated call
    /// is harmless.
    fn add_labels(&self, repo: &RepoRef, number: u64, labels: &[String]) -> ForgeResult<()>;
    /// Ask the forge to merge pull request `number` once its required checks pass (GitHub's
    /// native auto-merge). Asking again while it is requested changes nothing.
    fn enable_auto_merge(&self, repo: &RepoRef, number: u64) -> ForgeResult<AutoMerge>;
    /// Comments on an issue or PR, oldest first.
    fn list_comments(&self, repo: &RepoRef, number: u64) -> ForgeResult<Vec<CommentInfo>>;
    /// Add a comment.
    fn create_comment(&self, repo: &RepoRef, number: u64, body: &str) -> ForgeResult<CommentInfo>;
    /// Replace a comment's body.
    fn update_comment(&self, repo: &RepoRef, comment_id: u64, body: &str) -> ForgeResult<()>;

    // ---- issues ----

    /// Issues (pull requests excluded) in any state, oldest first; only those carrying `label`
    /// when one is given. Finding the bot's own issue is the caller's business (by a hidden
    /// marker in the body: labels can be removed by anyone).
    fn list_issues(&self, repo: &RepoRef, label: Option<&str>) -> ForgeResult<Vec<IssueInfo>>;
    /// Open an issue with `labels` (created on the forge when missing).
    fn create_issue(
        &self,
        repo: &RepoRef,
        title: &str,
        body: &str,
        labels: &[String],
    ) -> ForgeResult<IssueInfo>;
    /// Replace an issue's title and body (its state and labels are left alone).
    fn update_issue(&self, repo: &RepoRef, number: u64, title: &str, body: &str)
    -> ForgeResult<()>;

    // ---- workflows (the conformance gate on GitHub) ----
    //
    // A forge without workflows refuses each of these; only GitHub has them.

    /// Dispatch `workflow` (a file name in `.github/workflows/` or an id) on `git_ref` with
    /// `inputs` (`workflow_dispatch`). Returns the id of the run it started when the forge says
    /// (GitHub's `return_run_details`); `None` when it does not, and the run must be found
    /// among the workflow's runs. Never repeated after an ambiguous failure (that could start
    /// a second run): it fails as transient instead. Not sent after `send_by` (its waiting
    /// for a rate limit ends there): it fails as [`ForgeError::NotSent`], as it does whenever
    /// GitHub definitely did not receive it.
    fn dispatch_workflow(
        &self,
        repo: &RepoRef,
        workflow: &str,
        _git_ref: &str,
        _inputs: &BTreeMap<String, String>,
        _send_by: chrono::DateTime<chrono::Utc>,
    ) -> ForgeResult<Option<u64>> {
        Err(no_workflows(self.kind(), repo, workflow))
    }
    /// The newest runs of `workflow` triggered by `workflow_dispatch`: one page (at most 100),
    /// newest first.
    fn workflow_runs(&self, repo: &RepoRef, workflow: &str) -> ForgeResult<Vec<WorkflowRun>> {
        Err(no_workflows(self.kind(), repo, workflow))
    }
    /// One workflow run; `None` when it does not exist (deleted).
    fn workflow_run(&self, repo: &RepoRef, run_id: u64) -> ForgeResult<Option<WorkflowRun>> {
        Err(no_workflows(self.kind(), repo, &format!("run {run_id}")))
    }
    /// The artifacts of a workflow run (at most 100).
    fn run_artifacts(&self, repo: &RepoRef, run_id: u64) -> ForgeResult<Vec<ArtifactInfo>> {
        Err(no_workflows(self.kind(), repo, &format!("run {run_id}")))
    }
    /// An artifact's zip archive, refused when larger than `max_bytes`.
    fn download_artifact(
        &self,
        repo: &RepoRef,
        artifact: &ArtifactInfo,
        _max_bytes: u64,
    ) -> ForgeResult<Vec<u8>> {
        Err(no_workflows(
            self.kind(),
            repo,
            &format!("artifact {}", artifact.name),
        ))
    }
    /// Ask a workflow run to stop (one that overran the gate's timeout). A run that already
    /// completed is left as it is.
    fn cancel_workflow_run(&self, repo: &RepoRef, run_id: u64) -> ForgeResult<()> {
        Err(no_workflows(self.kind(), repo, &format!("run {run_id}")))
    }
}

/// The refusal of a forge without workflows.
fn no_workflows(kind: &str, repo: &RepoRef, what: &str) -> ForgeError {
    ForgeError::Rejected {
        what: format!("workflow {what} in {repo}"),
        reason: format!("the {kind} forge has no workflows"),
    }
}

/// The files under `dir/` at `commit` (of the listing `files` at that commit), relative to
/// `dir`: a rendered stack directory as it is on a branch or a tag.
pub fn read_subtree(
    forge: &dyn Forge,
    repo: &RepoRef,
    commit: &str,
    files: &[String],
    dir: &str,
) -> ForgeResult<crate::model::FileTree> {
    let prefix = format!("{}/", dir.trim_end_matches('/'));
    let mut out = crate::model::FileTree::new();
    for f in files.iter().filter(|f| f.starts_with(&prefix)) {
        if let Some(bytes) = forge.read_file(repo, commit, f)? {
            out.insert(f[prefix.len()..].to_string(), bytes);
        }
    }
    Ok(out)
}

/// Keep exactly one comment carrying `marker` (a hidden HTML comment) on an issue or PR:
/// update it in place if present, create it otherwise, and never write when it is unchanged.
pub fn upsert_comment(
    forge: &dyn Forge,
    repo: &RepoRef,
    number: u64,
    marker: &str,
    body: &str,
) -> ForgeResult<()> {
    let full = if body.contains(marker) {
        body.to_string()
    } else {
        format!("{marker}\n{body}")
    };
    let existing = forge.list_comments(repo, number)?;
    match marked(&existing, marker) {
        Some(c) if c.body == full => Ok(()),
        Some(c) => forge.update_comment(repo, c.id, &full),
        None => forge.create_comment(repo, number, &full).map(|_| ()),
    }
}

/// The comment among `comments` that carries `marker`: the one [`upsert_comment`] keeps. Its
/// own function so that the mutation check (`.cargo/mutants.toml`, docs/reliability.md) can
/// replace it.
fn marked<'a>(comments: &'a [CommentInfo], marker: &str) -> Option<&'a CommentInfo> {
    comments.iter().find(|c| c.body.contains(marker))
}

/// `f` with the GitHub answer cache the configuration names (`forge.github.cache_dir`, else
/// `github/` in `upstream.cache_dir`; none: answers are kept for the run only), as [`open`]
/// gives the command line. Public so that a client built elsewhere (the world simulator's)
/// gets the same cache.
pub fn with_cache(f: github::GithubForge, loaded: &crate::config::Loaded) -> github::GithubForge {
    let c = &loaded.config;
    let dir = c
        .forge
        .github
        .cache_dir
        .as_ref()
        .map(|d| loaded.resolve(d))
        .or_else(|| {
            c.upstream
                .cache_dir
                .as_ref()
                .map(|d| loaded.resolve(d).join("github"))
        });
    match dir {
        Some(d) => f.with_cache_dir(d),
        None => f,
    }
}

/// The local forge writes to the disk of whatever machine runs it. On a GitHub runner that
/// disk is thrown away after the job, so a "release" there would report tags that exist
/// nowhere and exit 0: refused (exit 2) unless the configuration says it is meant
/// (`forge.local.allow_in_ci: true`, e.g. a workflow testing the demo).
pub fn refuse_local_in_ci(
    loaded: &crate::config::Loaded,
    env: &crate::env::Env,
) -> Result<(), crate::error::InvalidInput> {
    let c = &loaded.config.forge;
    if c.kind == crate::config::ForgeKind::Local
        && !c.local.allow_in_ci
        && env.get("GITHUB_ACTIONS") == Some("true")
    {
        return Err(crate::error::InvalidInput(format!(
            "{}: forge.kind is `local` (the default when there is no `forge:` section), but this \
             runs under GitHub Actions (GITHUB_ACTIONS=true): releases would go to the runner's \
             disk and vanish with it\n  hint: set `forge.kind: github` and `forge.repository` \
             (docs/github-setup.md), or set `forge.local.allow_in_ci: true` if a local forge in \
             CI is what you mean",
            loaded.path.display()
        )));
    }
    Ok(())
}

/// Open the forge `stackbot.yaml` configures: the local forge (with its seeds) or GitHub, whose
/// token is the variable named in `forge.github.token_env`, looked up in `env` (the CLI reads
/// the process environment once and hands it down). Without that variable GitHub is read-only
/// (drafts are invisible, writes fail as unauthorized), which is all `plan` needs. `clock`
/// dates commits and tags and paces the GitHub client. Configuration mistakes are
/// [`crate::error::InvalidInput`] (exit 2).
pub fn open(
    loaded: &crate::config::Loaded,
    env: &crate::env::Env,
    clock: crate::clock::SharedClock,
) -> anyhow::Result<Box<dyn Forge>> {
    use crate::config::ForgeKind;
    use crate::error::InvalidInput;
    let c = &loaded.config.forge;
    match c.kind {
        ForgeKind::Local => {
            refuse_local_in_ci(loaded, env)?;
            Ok(Box::new(local::LocalForge::from_config(loaded, clock)?))
        }
        ForgeKind::Github if c.github.app.is_some() => {
            let app = c.github.app.as_ref().expect("checked");
            let bad = |e: String| {
                InvalidInput(format!("{}: forge.github.app: {e}", loaded.path.display()))
            };
            let pem = match (&app.private_key_env, &app.private_key_file) {
                (Some(var), _) => env.non_empty(var),
                (None, Some(file)) => {
                    let path = loaded.resolve(file);
                    Some(std::fs::read_to_string(&path).map_err(|e| {
                        bad(format!(
                            "cannot read the private key file {}: {e}",
                            path.display()
                        ))
                    })?)
                }
                (None, None) => None,
            };
            let f = match pem {
                Some(pem) => {
                    let creds = github::AppCredentials::from_pem(app.id, &pem).map_err(bad)?;
                    let f = github::GithubForge::new_app(&c.github, creds, clock);
                    let gated = loaded
                        .config
                        .stacks
                        .iter()
                        .any(|s| s.gate.as_ref().is_some_and(|g| g.workflow.is_some()));
                    match RepoRef::parse(&c.repository) {
                        Some(r) => f.map(|f| {
                            let f = if loaded.config.dashboard.enabled {
                                f.with_issues_on(&r)
                            } else {
                                f
                            };
                            if gated { f.with_actions_on(&r) } else { f }
                        }),
                        None => f,
                    }
                }
                None => {
                    tracing::warn!(
                        "`{}` is not set: GitHub is read-only (no drafts visible, no writes)",
                        app.private_key_env.as_deref().unwrap_or("private_key_env")
                    );
                    github::GithubForge::new(&c.github, None, clock)
                }
            }
            .map_err(|e| InvalidInput(format!("{}: forge.github: {e}", loaded.path.display())))?;
            Ok(Box::new(with_cache(f, loaded).with_committer(&c.committer)))
        }
        ForgeKind::Github => {
            let token = env.non_empty(&c.github.token_env);
            if token.is_none() {
                tracing::warn!(
                    "`{}` is not set: GitHub is read-only (no drafts visible, no writes)",
                    c.github.token_env
                );
            }
            let f = github::GithubForge::new(&c.github, token, clock).map_err(|e| {
                InvalidInput(format!("{}: forge.github: {e}", loaded.path.display()))
            })?;
            Ok(Box::new(with_cache(f, loaded).with_committer(&c.committer)))
        }
    }
}
