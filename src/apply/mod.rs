//! Execute a [`Plan`] step by step; every step first checks whether it is already done.
//! Deciding is [`crate::plan`]'s job and reading the world [`crate::observe`]'s: `apply` only
//! carries out the steps, in order (the next run observes and finishes whatever a failure left).
//!
//! Resumability rests on five facts: the evidence of a release precedes its commit (the draft
//! carrying the release marker, or with `oci` alone the push), so a later run tells an
//! unfinished release from a withdrawn one (see [`crate::plan::series`]); the tag is created
//! only on a commit that holds exactly the desired files; a release's assets are
//! byte-reproducible (so an existing asset is kept when its size and sha256 match and replaced
//! otherwise); the canonical draft of a tag is the one with the lowest id and the planned notes
//! (so concurrent or repeated runs agree on which draft to fill and publish, and delete the
//! others); and publishing is the last forge step (so a release is never visible half-uploaded).
//!
//! A release that fails for a reason of its own ([`ApplyError::Inconsistent`]) is reported in
//! [`Outcome::failed`] and the others go on (except those whose commit was planned on top of
//! it); a failing forge or registry stops the run, and the next run finishes the job.
//!
//! Concurrency guard: on the local forge `release` holds [`crate::forge::local::RunLock`] for the
//! whole observe → apply sequence, so a second run waits and then finds nothing to do. Without a
//! lock (GitHub), two runs still cannot publish twice: base-branch commits are compare-and-swap
//! (the loser gets `Conflict` and stops), tags are unique (`AlreadyExists` is checked against the
//! intended commit), and both runs fill and publish the same canonical draft.

pub mod gate;
pub mod tenants;

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::forge::{
    FileChanges, Forge, ForgeError, PullInfo, PullState, ReleaseInfo, RepoRef, upsert_comment,
};
use crate::model::FileTree;
use crate::oci::{Publisher, PushOutcome};
use crate::plan::{BranchPush, Observed, Plan, PlannedRelease, PullAction, Skipped, Step};

/// What `apply` did: data the report formats, so it is core's (`stackbot_core::outcome`).
pub use stackbot_core::outcome::Outcome;

/// Why applying failed. All variants are safe to re-run.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Forge(#[from] ForgeError),
    #[error("{0}")]
    Inconsistent(String),
    #[error(transparent)]
    Oci(#[from] crate::oci::OciError),
}

/// What a completed step did, in a word or two (the journal of an interrupted run).
fn step_word(step: &Step) -> &'static str {
    match step {
        Step::Commit { .. } => "committed",
        Step::ReleasePull { .. } => "release pull request opened or updated",
        Step::Tag { .. } => "tagged",
        Step::Draft { .. } => "draft with its assets uploaded",
        Step::Publish { .. } => "published",
        Step::OciPush { .. } => "pushed to the OCI registry",
        Step::Announce { .. } => "announced on its pull request",
        Step::DeleteDraft { .. } => "stale draft deleted",
    }
}

/// Create the cluster-stacks repository with its base branch when it does not exist yet (the
/// first release run); a no-op afterwards. A write, so it is apply's.
pub fn ensure_repository(
    forge: &dyn Forge,
    repo: &RepoRef,
    base_branch: &str,
) -> Result<(), crate::forge::ForgeError> {
    forge.ensure_repo(repo, base_branch)
}

/// Execute a plan. Stops at the first forge or registry error; the next run observes and
/// finishes the job.
pub fn apply(
    plan: &Plan,
    forge: &dyn Forge,
    repo: &RepoRef,
    observed: &Observed,
) -> Result<Outcome, ApplyError> {
    apply_with_oci(plan, forge, repo, observed, None)
}

/// [`apply`] with the OCI publisher that executes the plan's `OciPush` steps (a plan with
/// such steps fails without one, rather than silently skipping the registry).
pub fn apply_with_oci(
    plan: &Plan,
    forge: &dyn Forge,
    repo: &RepoRef,
    observed: &Observed,
    oci: Option<&Publisher>,
) -> Result<Outcome, ApplyError> {
    let mut out = Outcome {
        skipped: plan.skipped.clone(),
        ..Outcome::default()
    };
    let mut run = Run {
        forge,
        repo,
        oci,
        index: &observed.index,
        head: observed.base_head.clone(),
        last_commit: None,
        out: &mut out,
    };
    for step in &plan.cleanup {
        run.last_commit = None;
        run.step(step, None)?;
    }
    let mut earlier_failed = false;
    for r in &plan.releases {
        let commits = r.steps.iter().any(|s| matches!(s, Step::Commit { .. }));
        if earlier_failed && commits {
            // Its commit was planned on top of the failed release's (and its lock entry).
            run.out.failed.push(Skipped {
                what: crate::plan::Subject::tag(&r.tag),
                reason: crate::plan::SkipReason::NotAttempted,
            });
            continue;
        }
        run.last_commit = None;
        let done = r.steps.iter().try_for_each(|step| {
            run.step(step, Some(r))?;
            // The journal an interrupted run prints (cli::journal::TARGET).
            tracing::debug!(target: "stackbot::done", "{}: {}", r.tag, step_word(step));
            Ok(())
        });
        match done {
            Ok(()) => {
                if r.steps
                    .iter()
                    .any(|s| matches!(s, Step::Publish { .. } | Step::OciPush { .. }))
                {
                    run.out.released.push(r.tag.clone());
                }
            }
            // A problem of this release only: report it, go on with the others.
            Err(ApplyError::Inconsistent(reason)) => {
                run.out.failed.push(Skipped {
                    what: crate::plan::Subject::tag(&r.tag),
                    reason: crate::plan::SkipReason::Said(reason),
                });
                earlier_failed = true;
            }
            // The forge or the registry is in trouble: stop; the next run finishes the job.
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// One execution of a plan: where it writes, the base branch head as the run moves it, and
/// what it did. Each step checks whether it is already done before writing (a resumed run
/// finishes the job without duplicates); a step that finds the world inconsistent with the
/// plan fails its release alone ([`ApplyError::Inconsistent`]).
struct Run<'a> {
    forge: &'a dyn Forge,
    repo: &'a RepoRef,
    oci: Option<&'a Publisher>,
    /// The run's release index, as the plan observed it: a step's first "is it done already"
    /// reads it (with this apply's own writes folded in) instead of listing again.
    index: &'a crate::index::ReleaseIndex,
    /// The base branch's head, moved by each direct-mode commit.
    head: Option<String>,
    /// The commit the current release made (what its tag points at).
    last_commit: Option<String>,
    out: &'a mut Outcome,
}

impl Run<'_> {
    /// Execute one step of `release` (`None`: a cleanup step).
    fn step(&mut self, step: &Step, release: Option<&PlannedRelease>) -> Result<(), ApplyError> {
        let (forge, repo) = (self.forge, self.repo);
        match step {
            Step::OciPush {
                tag,
                target,
                assets,
                ..
            } => self.oci_push(tag, target, assets),
            Step::Commit {
                branch,
                message,
                changes,
                ..
            } => self.commit(branch, message, changes),
            Step::ReleasePull {
                branch,
                base,
                title,
                body,
                changes,
                push,
                pull,
                ..
            } => self.release_pull(branch, base, title, body, changes, push, pull),
            Step::Tag {
                tag,
                commit,
                message,
            } => self.tag(tag, commit.as_deref(), message),
            Step::Draft { tag } => {
                let rel = release.expect("drafts belong to a release");
                let known = self.index.with_changes(&self.out.index_changes, &[]);
                ensure_draft(forge, repo, (rel, known.listed()), tag, self.out)
            }
            Step::Publish { tag, latest } => publish(forge, repo, tag, *latest, self.out),
            Step::Announce { number, tag } => {
                let body = crate::body::fit_body(
                    &format!("{}\n", crate::plan::marker::PUBLISHED),
                    &[crate::body::Block::Text(format!(
                        "Publishing this as `{tag}`."
                    ))],
                    "",
                    crate::body::BODY_MAX,
                    "the release",
                );
                upsert_comment(
                    forge,
                    repo,
                    *number,
                    crate::plan::marker::PUBLISHED,
                    &body.text,
                )?;
                self.out.actions.push(format!(
                    "comment on pull request #{number}: {tag} published"
                ));
                Ok(())
            }
            Step::DeleteDraft { id, tag, reason } => match forge.delete_release(repo, *id) {
                Ok(()) | Err(ForgeError::NotFound { .. }) => {
                    self.out.index_changes.deleted(*id);
                    self.out
                        .actions
                        .push(format!("delete draft {id} of {tag} ({reason})"));
                    Ok(())
                }
                Err(e) => Err(e.into()),
            },
        }
    }

    /// Push (or find already pushed, and verify) the release's OCI artifact.
    fn oci_push(&mut self, tag: &str, target: &str, assets: &FileTree) -> Result<(), ApplyError> {
        let Some(publisher) = self.oci else {
            return Err(ApplyError::Inconsistent(format!(
                "the plan pushes {tag} to {target} but no OCI publisher was set up"
            )));
        };
        let published = publisher.publish(tag, assets)?;
        if let PushOutcome::Pushed { digest, .. } = &published.outcome {
            self.out
                .actions
                .push(format!("push {tag} to {target} ({digest}), verified"));
        }
        self.out.oci.push(published);
        Ok(())
    }

    /// Direct mode: commit the rendering on top of the base head (compare-and-swap).
    fn commit(
        &mut self,
        branch: &str,
        message: &str,
        changes: &FileChanges,
    ) -> Result<(), ApplyError> {
        let Some(parent) = self.head.clone() else {
            return Err(ApplyError::Inconsistent(format!(
                "branch `{branch}` of {} does not exist: create it (with any first commit) and re-run",
                self.repo
            )));
        };
        let c = self
            .forge
            .commit(self.repo, branch, &parent, Some(&parent), changes, message)?;
        self.out
            .actions
            .push(format!("commit {} to {branch}", short(&c)));
        self.head = Some(c.clone());
        self.last_commit = Some(c);
        Ok(())
    }

    /// Pull-request mode: bring the release branch to the rendering and open or update its
    /// pull request.
    #[allow(clippy::too_many_arguments)]
    fn release_pull(
        &mut self,
        branch: &str,
        base: &str,
        title: &str,
        body: &str,
        changes: &FileChanges,
        push: &BranchPush,
        pull: &PullAction,
    ) -> Result<(), ApplyError> {
        let (forge, repo) = (self.forge, self.repo);
        let Some(base_head) = self.head.clone() else {
            return Err(ApplyError::Inconsistent(format!(
                "branch `{base}` of {repo} does not exist: create it and re-run"
            )));
        };
        // The branch's head the commit goes on (`None`: a new branch).
        let expected = match push {
            BranchPush::Keep => None,
            BranchPush::Create => Some(None),
            BranchPush::Reset { from } => {
                forge.force_branch(repo, branch, &base_head)?;
                let reset = format!("reset {branch} (was {})", short(from));
                self.out.actions.push(reset);
                Some(Some(base_head.as_str()))
            }
        };
        if let Some(expected) = expected {
            let c = forge.commit(repo, branch, &base_head, expected, changes, title)?;
            self.out
                .actions
                .push(format!("commit {} to {branch}", short(&c)));
        }
        let open = |number: u64, url: &str| PullInfo {
            number,
            head: branch.to_string(),
            base: base.to_string(),
            title: title.to_string(),
            body: body.to_string(),
            state: PullState::Open,
            html_url: url.to_string(),
            created_at: None,
            merged_at: None,
            labels: Vec::new(),
            auto_merge: false,
        };
        let pull = match pull {
            PullAction::Keep { number, url } => open(*number, url),
            PullAction::Update { number, url } => {
                forge.update_pull(repo, *number, title, body)?;
                self.out
                    .actions
                    .push(format!("update pull request #{number}"));
                open(*number, url)
            }
            PullAction::Open => {
                let p = forge.open_pull(repo, branch, base, title, body)?;
                self.out
                    .actions
                    .push(format!("open pull request #{}", p.number));
                open(p.number, &p.html_url)
            }
        };
        self.out.pull_requests.push(pull.html_url.clone());
        self.out.release_pulls.push(pull);
        // The plan said "to be opened"; the summary says what is true after the run.
        for k in &mut self.out.skipped {
            if let (
                crate::plan::Subject::Tag { stack, minor, .. },
                crate::plan::SkipReason::ReleasePullRequest { open },
            ) = (&k.what, &mut k.reason)
                && crate::plan::release_branch(&crate::model::series_prefix(stack, *minor))
                    == branch
            {
                *open = true;
            }
        }
        Ok(())
    }

    /// Tag the release's commit (or the one the plan names); a tag already there is done,
    /// one pointing elsewhere means another run got there first.
    fn tag(&mut self, tag: &str, commit: Option<&str>, message: &str) -> Result<(), ApplyError> {
        let (forge, repo) = (self.forge, self.repo);
        let Some(target) = commit
            .map(str::to_string)
            .or_else(|| self.last_commit.clone())
            .or_else(|| self.head.clone())
        else {
            return Err(ApplyError::Inconsistent(format!(
                "no commit to tag {tag} on"
            )));
        };
        match forge.tag_target(repo, tag)? {
            Some(t) if t == target => {}
            Some(t) => {
                return Err(ApplyError::Inconsistent(format!(
                    "tag {tag} already points at {} instead of {}; another release run got there first — re-run to reconcile",
                    short(&t),
                    short(&target)
                )));
            }
            None => match forge.create_tag(repo, tag, &target, message) {
                Ok(()) => self
                    .out
                    .actions
                    .push(format!("tag {tag} at {}", short(&target))),
                Err(ForgeError::AlreadyExists { .. })
                    if forge.tag_target(repo, tag)?.as_deref() == Some(target.as_str()) => {}
                Err(e) => return Err(e.into()),
            },
        }
        Ok(())
    }
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

fn of_tag<'a>(all: &'a [ReleaseInfo], tag: &str) -> Vec<&'a ReleaseInfo> {
    let mut v: Vec<_> = all.iter().filter(|r| r.tag == tag).collect();
    v.sort_by_key(|r| r.id);
    v
}

/// Exactly one draft of `tag` with exactly the planned assets (or the tag is already published).
/// The first look is `known`, the run's index (listed once per run): a run that crashed left
/// its drafts there for the next run to find. Every write is followed by a fresh listing, the
/// guard against a concurrent run: its draft (the lowest id stays canonical, the others are
/// deleted) or its published release (then the publish step keeps that one).
fn ensure_draft(
    forge: &dyn Forge,
    repo: &RepoRef,
    (rel, known): (&PlannedRelease, &[ReleaseInfo]),
    tag: &str,
    out: &mut Outcome,
) -> Result<(), ApplyError> {
    let mut all = known.to_vec();
    if of_tag(&all, tag).iter().any(|r| !r.draft) {
        return Ok(());
    }
    // A draft with other notes (an earlier content of a release pull request, or notes
    // written on another day) is replaced: drafts are invisible, and the notes are published
    // as they are.
    let stale: Vec<ReleaseInfo> = of_tag(&all, tag)
        .into_iter()
        .filter(|r| r.body != rel.notes)
        .cloned()
        .collect();
    if !stale.is_empty() {
        for r in &stale {
            delete_quietly(forge, repo, r, "draft with outdated notes", out)?;
        }
        all = forge.list_releases(repo)?;
    }
    if of_tag(&all, tag).is_empty() {
        match forge.create_draft_release(repo, tag, tag, &rel.notes) {
            Ok(r) => {
                out.actions.push(format!("create draft {} for {tag}", r.id));
                out.index_changes.wrote(r);
            }
            Err(ForgeError::AlreadyExists { .. }) => return Ok(()), // published meanwhile
            Err(e) => return Err(e.into()),
        }
        // Re-list: another run may have created a draft at the same moment.
        all = forge.list_releases(repo)?;
    }
    // Published by another run meanwhile: the publish step keeps that release and deletes
    // the drafts.
    if of_tag(&all, tag).iter().any(|r| !r.draft) {
        return Ok(());
    }
    let drafts = of_tag(&all, tag);
    let Some(canon) = drafts.first().copied() else {
        return Err(ApplyError::Inconsistent(format!(
            "the draft of {tag} disappeared; re-run"
        )));
    };
    fill_assets(forge, repo, canon, &rel.asset_bytes, out)?;
    for dup in drafts.iter().skip(1) {
        delete_quietly(forge, repo, dup, "duplicate draft", out)?;
    }
    Ok(())
}

pub(crate) fn fill_assets(
    forge: &dyn Forge,
    repo: &RepoRef,
    canon: &ReleaseInfo,
    want: &FileTree,
    out: &mut Outcome,
) -> Result<(), ApplyError> {
    let by_name: BTreeMap<&str, _> = canon.assets.iter().map(|a| (a.name.as_str(), a)).collect();
    for a in &canon.assets {
        if !want.contains_key(&a.name) {
            forge.delete_asset(repo, canon.id, a.id)?;
            out.actions.push(format!(
                "delete unexpected asset {} of {}",
                a.name, canon.tag
            ));
        }
    }
    for (name, bytes) in want {
        if let Some(a) = by_name.get(name.as_str()) {
            if a.size == bytes.len() as u64 {
                let have = forge.download_asset(repo, canon.id, a)?;
                if Sha256::digest(&have) == Sha256::digest(bytes) {
                    continue;
                }
            }
            forge.delete_asset(repo, canon.id, a.id)?;
            out.actions
                .push(format!("delete mismatching asset {name} of {}", canon.tag));
        }
        match forge.upload_asset(repo, canon.id, name, bytes) {
            Ok(_) => out.actions.push(format!("upload {name} to {}", canon.tag)),
            Err(ForgeError::AlreadyExists { .. }) => {
                // Another run uploaded it meanwhile: verify it rather than trust it.
                let fresh = forge.list_releases(repo)?;
                let a = fresh
                    .iter()
                    .find(|r| r.id == canon.id)
                    .and_then(|r| r.assets.iter().find(|a| &a.name == name))
                    .cloned();
                let ok = match a {
                    Some(a) => forge.download_asset(repo, canon.id, &a)? == *bytes,
                    None => false,
                };
                if !ok {
                    return Err(ApplyError::Inconsistent(format!(
                        "asset {name} of {} was replaced concurrently with different bytes; re-run",
                        canon.tag
                    )));
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

pub(crate) fn delete_quietly(
    forge: &dyn Forge,
    repo: &RepoRef,
    r: &ReleaseInfo,
    why: &str,
    out: &mut Outcome,
) -> Result<(), ApplyError> {
    match forge.delete_release(repo, r.id) {
        Ok(()) => {
            out.actions
                .push(format!("delete {why} {} of {}", r.id, r.tag));
            out.index_changes.deleted(r.id);
            Ok(())
        }
        Err(ForgeError::NotFound { .. }) => {
            out.index_changes.deleted(r.id);
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}

/// Publish the canonical (lowest-id) draft of `tag` unless the tag is published already, then
/// delete every other draft of it.
fn publish(
    forge: &dyn Forge,
    repo: &RepoRef,
    tag: &str,
    latest: bool,
    out: &mut Outcome,
) -> Result<(), ApplyError> {
    let all = forge.list_releases(repo)?;
    let rels = of_tag(&all, tag);
    let published = rels.iter().find(|r| !r.draft).copied();
    let keep = match published {
        Some(p) => {
            out.index_changes.wrote(p.clone());
            p.id
        }
        None => {
            let Some(canon) = rels.first() else {
                return Err(ApplyError::Inconsistent(format!(
                    "no draft of {tag} to publish; re-run"
                )));
            };
            match forge.publish_release(repo, canon.id, latest) {
                Ok(r) => {
                    out.actions
                        .push(format!("publish {tag} (release {})", canon.id));
                    out.index_changes.wrote(r);
                }
                Err(ForgeError::AlreadyExists { .. }) => {}
                Err(e) => return Err(e.into()),
            }
            canon.id
        }
    };
    for r in rels.iter().filter(|r| r.id != keep && r.draft) {
        delete_quietly(forge, repo, r, "duplicate draft", out)?;
    }
    Ok(())
}
