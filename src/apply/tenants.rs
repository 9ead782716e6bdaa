//! Executing a tenant plan: push the tenant branch, then open, update or close its pull
//! request, exactly as the plan decided (a plan the branch's human commits block gets at most
//! a comment). Writes are paced by the forge itself (the GitHub transport spaces remote writes
//! and keeps an hourly budget), so a large fan-out stays inside GitHub's secondary rate limits
//! without a second pacer here.

use crate::body::{self, Block};
use crate::forge::{AutoMerge, FileChanges, Forge, ForgeError, RepoRef, upsert_comment};
use crate::tenants::Outcome;
use crate::tenants::plan::{self, Action, TenantPlan, commit_message};

const HUMAN_MARKER: &str = "<!-- stackbot:human-commits -->";
const CLOSE_MARKER: &str = "<!-- stackbot:closed-up-to-date -->";

/// The comment on a pull request a person's commits block, through the one body fitter: the
/// commits are listed as far as GitHub's limit allows.
fn human_comment(p: &TenantPlan) -> String {
    let head = format!(
        "{HUMAN_MARKER}\nstackbot did not update this pull request: `{}` has commits by someone else, and the bot never pushes over them. It would now propose: {}.\n\nTo let the bot take over again, merge this pull request as it is, or close it (and delete the branch): the bot then opens a fresh pull request for any release this one did not propose.\n",
        p.branch,
        p.releases.join(", ")
    );
    let commits = p
        .human_commits
        .iter()
        .map(|s| format!("`{}`", &s[..s.len().min(12)]))
        .collect();
    let blocks = [Block::List {
        title: "\nCommits by someone else:\n\n".into(),
        items: commits,
    }];
    body::fit_body(
        &head,
        &blocks,
        "",
        body::BODY_MAX,
        "the pull request's *Commits* tab",
    )
    .text
}

/// Execute one tenant plan; returns what happened.
pub fn execute(forge: &dyn Forge, p: &TenantPlan) -> Result<Outcome, ForgeError> {
    let repo = RepoRef::parse(&p.repository).expect("checked by observe");
    if p.blocked() {
        if let Some(n) = p.pull {
            upsert_comment(forge, &repo, n, HUMAN_MARKER, &human_comment(p))?;
        }
        return Ok(Outcome::Blocked);
    }
    if p.push {
        let changes: FileChanges = p
            .files
            .iter()
            .map(|f| (f.path.clone(), Some(f.after.clone())))
            .collect();
        forge.commit(
            &repo,
            &p.branch,
            &p.base_head,
            p.branch_head.as_deref(),
            &changes,
            &commit_message(p),
        )?;
    }
    match p.action {
        Action::None => Ok(Outcome::Unchanged),
        Action::Open => {
            let pull = forge.open_pull(&repo, &p.branch, &p.base_branch, &p.title, &p.body)?;
            // A crash between the two is finished by the next run: the open pull request
            // lacks the label, so the plan updates it.
            if !p.labels.is_empty() {
                forge.add_labels(&repo, pull.number, &p.labels)?;
            }
            auto_merge(forge, &repo, p, pull.number)?;
            Ok(Outcome::Opened)
        }
        Action::Update => {
            let n = p.pull.expect("update has a pull request");
            if p.pull_stale {
                forge.update_pull(&repo, n, &p.title, &p.body)?;
            }
            if !p.labels.is_empty() {
                forge.add_labels(&repo, n, &p.labels)?;
            }
            auto_merge(forge, &repo, p, n)?;
            Ok(Outcome::Updated)
        }
        Action::Close => {
            let n = p.pull.expect("close has a pull request");
            // Marked first: a pull request the bot closed was not declined by a human, so the
            // same releases may be proposed again if the tenant goes back.
            if p.pull_stale {
                forge.update_pull(&repo, n, &p.title, &p.body)?;
            }
            let text = p.close_comment.as_deref().unwrap_or(
                "The tenant repository already holds what this pull request proposes (the newest releases, or the upgrade made another way), so it is no longer needed. Closing it.",
            );
            let body = body::fit_body(
                &format!("{CLOSE_MARKER}\n"),
                &[Block::Text(text.to_string())],
                "",
                body::BODY_MAX,
                "the tenant repository",
            );
            upsert_comment(forge, &repo, n, CLOSE_MARKER, &body.text)?;
            forge.close_pull(&repo, n)?;
            Ok(Outcome::Closed)
        }
    }
}

/// Ask for auto-merge when the plan says so; a refusal is written into the body once (the
/// next runs read it there and do not ask again for this content).
fn auto_merge(forge: &dyn Forge, repo: &RepoRef, p: &TenantPlan, n: u64) -> Result<(), ForgeError> {
    if !p.automerge {
        return Ok(());
    }
    match forge.enable_auto_merge(repo, n)? {
        AutoMerge::Enabled => Ok(()),
        AutoMerge::Unavailable(why) => {
            tracing::warn!("{repo}#{n}: auto-merge is not available: {why}");
            forge.update_pull(repo, n, &p.title, &plan::with_automerge_note(&p.body, &why))
        }
    }
}
