//! Pull-request mode: what to do with a series' release branch and pull request, decided from
//! what `observe` read (the branch's head, rendered tree, lock and foreign commits, and the
//! series' pull requests). `apply` only executes the decision.
//!
//! - The branch is written only when it does not hold this content yet (tree and lock): it is
//!   created, or rebuilt on the base head when only the bot wrote to it. A base that moved
//!   while the branch already holds the content is not a reason to rewrite it, unless the base
//!   lock changed (then the branch's lock would conflict with the base).
//! - Commits by anyone else on a branch whose pull request is open (or that has none) stop
//!   this series only: it is reported as failed, the other series and the tenants go on.
//! - A release pull request closed without merging, for this very content, was declined: it
//!   is not reopened; a newer content opens a new one.

use serde::Serialize;

use crate::forge::{FileChanges, PullInfo, PullState};
use crate::model::FileTree;

use super::Step;

/// A series' release branch as observed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReleaseBranch {
    /// Its head commit; `None` when the branch does not exist.
    pub head: Option<String>,
    /// Files under the series' rendered path at the head.
    pub tree: FileTree,
    /// `stackbot.lock` at the head.
    pub lock: Option<Vec<u8>>,
    /// Commits on the branch and not on the base, authored by someone other than the bot.
    pub foreign: Vec<String>,
}

/// How the release branch gets the content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum BranchPush {
    /// It already holds it.
    Keep,
    /// Create the branch with one commit on the base head.
    Create,
    /// Reset the branch (only the bot's commits on it) to the base head, then commit.
    Reset { from: String },
}

/// What happens to the release pull request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum PullAction {
    Open,
    Update { number: u64, url: String },
    Keep { number: u64, url: String },
}

/// A closed, unmerged release pull request for content `hash`, when no pull request of the
/// branch is open: the content was declined.
pub fn declined(pulls: &[PullInfo], hash: &str) -> Option<u64> {
    if pulls.iter().any(|p| p.state == PullState::Open) {
        return None;
    }
    pulls
        .iter()
        .filter(|p| p.state == PullState::Closed)
        .find(|p| super::marker::parse(&p.body).is_some_and(|m| m.hash == hash))
        .map(|p| p.number)
}

/// What the release pull request of one release needs.
pub struct Wanted<'a> {
    pub branch: String,
    pub base: &'a str,
    pub title: String,
    pub body: String,
    pub rendered: &'a FileTree,
    /// The lock the branch must hold (the base lock plus this series' entry only).
    pub lock_text: &'a str,
    pub changes: FileChanges,
}

/// The `ReleasePull` step, or why the series is stuck.
pub fn step(
    w: Wanted<'_>,
    branch: Option<&ReleaseBranch>,
    pulls: &[PullInfo],
) -> Result<Step, String> {
    let open = pulls.iter().find(|p| p.state == PullState::Open);
    let has_content = branch.is_some_and(|b| {
        b.head.is_some()
            && &b.tree == w.rendered
            && b.lock.as_deref() == Some(w.lock_text.as_bytes())
    });
    let push = match branch.and_then(|b| b.head.clone().map(|h| (b, h))) {
        _ if has_content => BranchPush::Keep,
        None => BranchPush::Create,
        Some((b, head)) => {
            if !b.foreign.is_empty() && (open.is_some() || pulls.is_empty()) {
                return Err(format!(
                    "release branch `{}` has commits not made by stackbot ({}); merge or close its pull request and delete the branch to let the bot start over",
                    w.branch,
                    b.foreign
                        .iter()
                        .map(|s| format!("`{}`", &s[..s.len().min(12)]))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            BranchPush::Reset { from: head }
        }
    };
    let pull = match open {
        Some(p) if p.title == w.title && p.body == w.body => PullAction::Keep {
            number: p.number,
            url: p.html_url.clone(),
        },
        Some(p) => PullAction::Update {
            number: p.number,
            url: p.html_url.clone(),
        },
        None => PullAction::Open,
    };
    Ok(Step::ReleasePull {
        files: w.changes.keys().cloned().collect(),
        branch: w.branch,
        base: w.base.to_string(),
        title: w.title,
        body: w.body,
        changes: w.changes,
        push,
        pull,
    })
}
