//! The forge's vocabulary: releases, commits, pull requests and issues as the forge reports
//! them. They are data the pure stages decide on (the release index reads [`ReleaseInfo`],
//! `plan` reads [`PullInfo`] and [`FileChanges`], `tenants` reads [`CommitInfo`], `status`
//! reads [`IssueInfo`]), so they live with the model in core; the `Forge` trait, its
//! implementations and its error type are the `stackbot-forge` crate, which re-exports all of
//! this under `stackbot_forge::` (and so `stackbot::forge::`).

use std::collections::BTreeMap;

pub use crate::model::RepoRef;

/// A release as the forge reports it (drafts included when visible).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReleaseInfo {
    pub id: u64,
    pub tag: String,
    /// The release name; CSO lists by name and downloads by tag, so the bot keeps them equal.
    pub name: Option<String>,
    pub draft: bool,
    /// A pre-release (the conformance gate's candidates): never the *Latest* release, never a
    /// stable one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prerelease: bool,
    pub body: String,
    pub assets: Vec<AssetInfo>,
    /// Browser URL, for links in PR bodies and reports.
    pub html_url: String,
    /// When the release was published (`None` for drafts, and for releases recorded before
    /// the forge kept the date): the "released" point of `stackbot status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// A release asset.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AssetInfo {
    pub id: u64,
    pub name: String,
    pub size: u64,
    /// The sha256 of its bytes (hex) as the forge reports it (GitHub's `digest`), so its
    /// content can be known without a download; `None` where the forge does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// One file change of a commit: `Some(bytes)` writes, `None` deletes.
pub type FileChanges = BTreeMap<String, Option<Vec<u8>>>;

/// A commit on a branch, enough to tell the bot's commits from a human's.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CommitInfo {
    pub sha: String,
    pub author_name: String,
    pub author_email: String,
    pub message: String,
    /// Parent commits, first parent first: a commit with two parents is a merge (for example
    /// GitHub's "Update branch", which merges the base into a pull request branch).
    #[serde(default)]
    pub parents: Vec<String>,
    /// Authored by the GitHub App the forge authenticates as: GitHub's bot account for the App
    /// (`<slug>[bot]`), which authors, and signs, the commits the bot makes as an App.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_app: bool,
}

impl CommitInfo {
    /// Whether the commit is the bot's: authored by `email` (the bot's
    /// `forge.committer.email`), or by the bot's own GitHub App (commits GitHub signed for it).
    /// The one rule for telling the bot's commits from a human's: by author, never by message.
    pub fn is_by(&self, email: &str) -> bool {
        self.by_app || self.author_email.eq_ignore_ascii_case(email)
    }
}

/// Pull request state as the bot needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PullState {
    Open,
    Closed,
    Merged,
}

/// A pull request.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PullInfo {
    pub number: u64,
    pub head: String,
    pub base: String,
    pub title: String,
    pub body: String,
    pub state: PullState,
    pub html_url: String,
    /// When it was opened (`None` where the forge did not record it): the PR's age.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<chrono::DateTime<chrono::Utc>>,
    /// When it was merged: the "first tenant merge" point of `stackbot status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Its labels' names (the security label of a tenant pull request fixing a critical CVE).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// Auto-merge is requested: the forge merges it once the required checks pass.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub auto_merge: bool,
}

/// What became of a request to merge a pull request once its checks pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AutoMerge {
    /// Requested: the forge merges it when the required checks pass.
    Enabled,
    /// The forge refused for a reason a person must change (auto-merge not allowed in the
    /// repository, no required check so nothing to wait for, no permission): said once in the
    /// pull request, not retried until its content changes.
    Unavailable(String),
}

/// Issue state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IssueState {
    Open,
    Closed,
}

/// An issue (never a pull request): the dashboard the release run keeps current.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IssueInfo {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub state: IssueState,
    pub labels: Vec<String>,
    pub html_url: String,
}

/// An issue or PR comment.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CommentInfo {
    pub id: u64,
    pub body: String,
}

/// How many pull requests of one head branch `Forge::find_pulls` returns: one page of
/// GitHub's list, so the cost of a run does not grow with the history of the branch.
pub const PULLS_WINDOW: usize = 100;

/// A workflow run as the forge reports it (GitHub Actions): the conformance gate's test on
/// GitHub. `status` and `conclusion` are GitHub's words (`queued`, `in_progress`,
/// `completed`; `success`, `failure`, `cancelled`, `timed_out`, ...), kept as text: the gate
/// decides what each means ([`crate::gate::conclusion_outcome`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WorkflowRun {
    pub id: u64,
    /// The run's title: the workflow's `run-name` with its inputs filled in.
    pub display_title: String,
    /// What triggered it (`workflow_dispatch`).
    pub event: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub created_at: Option<chrono::DateTime<chrono::Utc>>,
    pub html_url: String,
}

/// An artifact of a workflow run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArtifactInfo {
    pub id: u64,
    pub name: String,
    /// The zip archive's size.
    pub size: u64,
    /// Past its retention: it can no longer be downloaded.
    pub expired: bool,
}
