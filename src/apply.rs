//! The imperative shell around [`crate::plan`]: `observe` reads the forge, `apply` executes a
//! plan, and every step first checks whether it is already done.
//!
//! Resumability rests on four facts: the tag is created only on a commit that holds exactly the
//! desired files (so a tag found later identifies an unfinished release to resume, see
//! [`observe`]); a release's assets are byte-reproducible (so an existing asset is kept when its
//! size and sha256 match and replaced otherwise); the canonical draft of a tag is the one with
//! the lowest id (so concurrent or repeated runs agree on which draft to fill and publish, and
//! delete the others); and publishing is the last step (so a release is never visible
//! half-uploaded).
//!
//! Concurrency guard: on the local forge `release` holds [`crate::forge::local::RunLock`] for the
//! whole observe → apply sequence, so a second run waits and then finds nothing to do. Without a
//! lock (GitHub), two runs still cannot publish twice: base-branch commits are compare-and-swap
//! (the loser gets `Conflict` and stops), tags are unique (`AlreadyExists` is checked against the
//! intended commit), and both runs fill and publish the same canonical draft.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::forge::{Forge, ForgeError, PullState, ReleaseInfo, RepoRef};
use crate::model::{FileTree, ReleaseName, StackVersion};
use crate::oci::{Publisher, PushOutcome};
use crate::package::{Metadata, ReleaseHashes};
use crate::plan::{
    self, Desired, Latest, Mode, Observed, Plan, PlannedRelease, SeriesObserved, Skipped, Step,
};

/// Why observing or applying failed. All variants are safe to re-run.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Forge(#[from] ForgeError),
    #[error("{0}")]
    Inconsistent(String),
    #[error(transparent)]
    Oci(#[from] crate::oci::OciError),
}

/// Read-only view of the forge for `plan`. Never writes; needs no token on the local forge.
///
/// Cost: one `list_releases`, then per series one `hashes.json` download from its latest
/// release. Only series that need a release cost more (metadata, base tree, tag probe).
pub fn observe(
    forge: &dyn Forge,
    repo: &RepoRef,
    base_branch: &str,
    desired: &[Desired],
    mode: Mode,
    lock_path: &str,
) -> Result<Observed, ApplyError> {
    let releases = forge.list_releases(repo)?;
    let (index, warnings) = plan::index_releases(&releases);
    let mut obs = Observed {
        base_branch: base_branch.to_string(),
        warnings,
        ..Observed::default()
    };
    obs.releases = releases.clone();
    // Lazily read: base head, its file list, the lock.
    let mut base: Option<(Option<String>, Vec<String>)> = None;
    for d in desired {
        let series = d.series();
        let empty = Vec::new();
        let rels = index.get(&series).unwrap_or(&empty);
        let mut so = SeriesObserved {
            highest_n: rels.iter().map(|r| r.n).max(),
            ..SeriesObserved::default()
        };
        let latest = plan::latest_published(rels);
        if let Some(l) = latest {
            let n = ReleaseName::parse(&l.tag)
                .map(|r| r.version.major)
                .unwrap_or(0);
            let hashes = read_asset(forge, repo, l, "hashes.json")?.and_then(|b| {
                ReleaseHashes::parse_json(&String::from_utf8_lossy(&b))
                    .map_err(|e| {
                        obs.warnings
                            .push(format!("release {}: hashes.json unreadable: {e}", l.tag))
                    })
                    .ok()
            });
            so.latest = Some(Latest {
                tag: l.tag.clone(),
                n,
                hashes,
                metadata: None,
                set: None,
            });
        }
        if plan::up_to_date(d, so.latest.as_ref()) {
            obs.series.insert(series, so);
            continue;
        }
        if let (Some(l), Some(lat)) = (latest, so.latest.as_mut()) {
            lat.metadata = read_asset(forge, repo, l, "metadata.yaml")?.and_then(|b| {
                Metadata::parse(&String::from_utf8_lossy(&b))
                    .map_err(|e| {
                        obs.warnings
                            .push(format!("release {}: metadata.yaml unreadable: {e}", l.tag))
                    })
                    .ok()
            });
            lat.set = released_set(forge, repo, &l.tag, d, lock_path)?;
        }
        if base.is_none() {
            let head = match forge.branch_head(repo, base_branch) {
                Ok(h) => h,
                Err(ForgeError::NotFound { .. }) => None,
                Err(e) => return Err(e.into()),
            };
            let files = match &head {
                Some(h) => forge.list_files(repo, h)?,
                None => Vec::new(),
            };
            if let Some(h) = &head
                && files.iter().any(|f| f == lock_path)
            {
                obs.base_lock = forge.read_file(repo, h, lock_path)?;
            }
            obs.base_head = head.clone();
            base = Some((head, files));
        }
        let (head, files) = base.as_ref().expect("just set");
        so.base_tree = Some(match head {
            Some(h) => read_subtree(forge, repo, h, files, &d.path)?,
            None => FileTree::new(),
        });
        // Probe tags above the latest published release: a tag on a commit that already holds
        // exactly the desired files is an unfinished release of an earlier run.
        let published_n = so.latest.as_ref().map(|l| l.n).unwrap_or(0);
        let mut k = published_n + 1;
        loop {
            let tag = ReleaseName {
                stack: d.stack.clone(),
                minor: d.minor,
                version: StackVersion::stable(k),
            }
            .to_string();
            match forge.tag_target(repo, &tag) {
                Ok(Some(commit)) => {
                    let files = forge.list_files(repo, &commit)?;
                    let tree = read_subtree(forge, repo, &commit, &files, &d.path)?;
                    if tree == d.rendered {
                        so.resume = Some((k, commit));
                        break;
                    }
                    so.highest_n = Some(so.highest_n.unwrap_or(0).max(k));
                }
                Ok(None) | Err(ForgeError::NotFound { .. }) => {
                    if k > so.highest_n.unwrap_or(0) {
                        break;
                    }
                }
                Err(e) => return Err(e.into()),
            }
            k += 1;
        }
        if mode == Mode::PullRequest {
            let branch = plan::release_branch(&series);
            let pulls = match forge.find_pulls(repo, &branch) {
                Ok(p) => p,
                Err(ForgeError::NotFound { .. }) => Vec::new(),
                Err(e) => return Err(e.into()),
            };
            obs.pulls.insert(branch, pulls);
        }
        obs.series.insert(series, so);
    }
    Ok(obs)
}

/// The release set a published release shipped: `stackbot.lock` at its tag's commit. `None`
/// when the tag, the lock or the entry is missing (the notes then show no "was").
fn released_set(
    forge: &dyn Forge,
    repo: &RepoRef,
    tag: &str,
    d: &Desired,
    lock_path: &str,
) -> Result<Option<crate::model::ReleaseSet>, ApplyError> {
    let commit = match forge.tag_target(repo, tag) {
        Ok(Some(c)) => c,
        Ok(None) | Err(ForgeError::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let Some(bytes) = forge.read_file(repo, &commit, lock_path)? else {
        return Ok(None);
    };
    Ok(
        crate::lock::Lock::parse(&String::from_utf8_lossy(&bytes), lock_path.as_ref())
            .ok()
            .and_then(|l| l.get(&d.stack, d.minor).cloned()),
    )
}

fn read_asset(
    forge: &dyn Forge,
    repo: &RepoRef,
    release: &ReleaseInfo,
    name: &str,
) -> Result<Option<Vec<u8>>, ApplyError> {
    match release.assets.iter().find(|a| a.name == name) {
        Some(a) => Ok(Some(forge.download_asset(repo, release.id, a)?)),
        None => Ok(None),
    }
}

fn read_subtree(
    forge: &dyn Forge,
    repo: &RepoRef,
    commit: &str,
    files: &[String],
    dir: &str,
) -> Result<FileTree, ApplyError> {
    let prefix = format!("{}/", dir.trim_end_matches('/'));
    let mut out = FileTree::new();
    for f in files.iter().filter(|f| f.starts_with(&prefix)) {
        if let Some(bytes) = forge.read_file(repo, commit, f)? {
            out.insert(f[prefix.len()..].to_string(), bytes);
        }
    }
    Ok(out)
}

/// What `apply` did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Outcome {
    /// Tags published by this run (including ones an earlier run had started).
    pub released: Vec<String>,
    pub skipped: Vec<Skipped>,
    /// Release pull requests opened or updated (pull-request mode).
    pub pull_requests: Vec<String>,
    /// Every write, in order, for the log.
    pub actions: Vec<String>,
    /// OCI publications (pushed or found already present), each verified.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub oci: Vec<crate::oci::Published>,
}

/// Execute a plan. Stops at the first error; the next run observes and finishes the job.
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
    let mut head = observed.base_head.clone();
    for step in &plan.cleanup {
        run_step(step, None, forge, repo, oci, &mut head, &mut None, &mut out)?;
    }
    for r in &plan.releases {
        let mut last_commit = None;
        for step in &r.steps {
            run_step(
                step,
                Some(r),
                forge,
                repo,
                oci,
                &mut head,
                &mut last_commit,
                &mut out,
            )?;
        }
        if r.steps
            .iter()
            .any(|s| matches!(s, Step::Publish { .. } | Step::OciPush { .. }))
        {
            out.released.push(r.tag.clone());
        }
    }
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn run_step(
    step: &Step,
    release: Option<&PlannedRelease>,
    forge: &dyn Forge,
    repo: &RepoRef,
    oci: Option<&Publisher>,
    head: &mut Option<String>,
    last_commit: &mut Option<String>,
    out: &mut Outcome,
) -> Result<(), ApplyError> {
    match step {
        Step::OciPush {
            tag,
            target,
            assets,
            ..
        } => {
            let Some(publisher) = oci else {
                return Err(ApplyError::Inconsistent(format!(
                    "the plan pushes {tag} to {target} but no OCI publisher was set up"
                )));
            };
            let published = publisher.publish(tag, assets)?;
            if let PushOutcome::Pushed { digest, .. } = &published.outcome {
                out.actions
                    .push(format!("push {tag} to {target} ({digest}), verified"));
            }
            out.oci.push(published);
        }
        Step::Commit {
            branch,
            message,
            changes,
            ..
        } => {
            let Some(parent) = head.clone() else {
                return Err(ApplyError::Inconsistent(format!(
                    "branch `{branch}` of {repo} does not exist: create it (with any first commit) and re-run"
                )));
            };
            let c = forge.commit(repo, branch, &parent, Some(&parent), changes, message)?;
            out.actions
                .push(format!("commit {} to {branch}", short(&c)));
            *head = Some(c.clone());
            *last_commit = Some(c);
        }
        Step::ReleasePull {
            branch,
            base,
            title,
            body,
            changes,
            ..
        } => {
            let Some(base_head) = head.clone() else {
                return Err(ApplyError::Inconsistent(format!(
                    "branch `{base}` of {repo} does not exist: create it and re-run"
                )));
            };
            let rel = release.expect("release pulls belong to a release");
            let current = forge.branch_head(repo, branch)?;
            let up_to_date = match &current {
                Some(c) => {
                    let files = forge.list_files(repo, c)?;
                    read_subtree(forge, repo, c, &files, &rel.path)? == rel.rendered
                }
                None => false,
            };
            if !up_to_date {
                let bot_only = match &current {
                    Some(c) => {
                        let commits = forge.commits_between(repo, &base_head, c)?;
                        commits.iter().all(|x| x.message.starts_with("Release "))
                    }
                    None => true,
                };
                if !bot_only {
                    return Err(ApplyError::Inconsistent(format!(
                        "release branch `{branch}` has commits not made by stackbot; merge or close its pull request, delete the branch, and re-run"
                    )));
                }
                if let Some(c) = &current {
                    forge.force_branch(repo, branch, &base_head)?;
                    out.actions
                        .push(format!("reset {branch} (was {})", short(c)));
                }
                let expected = current.as_ref().map(|_| base_head.as_str());
                let c = forge.commit(repo, branch, &base_head, expected, changes, title)?;
                out.actions
                    .push(format!("commit {} to {branch}", short(&c)));
            }
            let pulls = forge.find_pulls(repo, branch)?;
            match pulls.iter().find(|p| p.state == PullState::Open) {
                Some(p) if p.title == *title && p.body == *body => {
                    out.pull_requests.push(p.html_url.clone());
                }
                Some(p) => {
                    forge.update_pull(repo, p.number, title, body)?;
                    out.actions
                        .push(format!("update pull request #{}", p.number));
                    out.pull_requests.push(p.html_url.clone());
                }
                None => {
                    let p = forge.open_pull(repo, branch, base, title, body)?;
                    out.actions.push(format!("open pull request #{}", p.number));
                    out.pull_requests.push(p.html_url.clone());
                }
            }
        }
        Step::Tag {
            tag,
            commit,
            message,
        } => {
            let Some(target) = commit
                .clone()
                .or_else(|| last_commit.clone())
                .or_else(|| head.clone())
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
                    Ok(()) => out.actions.push(format!("tag {tag} at {}", short(&target))),
                    Err(ForgeError::AlreadyExists { .. })
                        if forge.tag_target(repo, tag)?.as_deref() == Some(target.as_str()) => {}
                    Err(e) => return Err(e.into()),
                },
            }
        }
        Step::Draft { tag } => {
            let rel = release.expect("drafts belong to a release");
            ensure_draft(forge, repo, rel, tag, out)?;
        }
        Step::Publish { tag } => {
            publish(forge, repo, tag, out)?;
        }
        Step::DeleteDraft { id, tag, reason } => match forge.delete_release(repo, *id) {
            Ok(()) | Err(ForgeError::NotFound { .. }) => {
                out.actions
                    .push(format!("delete draft {id} of {tag} ({reason})"));
            }
            Err(e) => return Err(e.into()),
        },
    }
    Ok(())
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
fn ensure_draft(
    forge: &dyn Forge,
    repo: &RepoRef,
    rel: &PlannedRelease,
    tag: &str,
    out: &mut Outcome,
) -> Result<(), ApplyError> {
    let mut all = forge.list_releases(repo)?;
    if of_tag(&all, tag).iter().any(|r| !r.draft) {
        return Ok(());
    }
    if of_tag(&all, tag).is_empty() {
        match forge.create_draft_release(repo, tag, tag, &rel.notes) {
            Ok(r) => out.actions.push(format!("create draft {} for {tag}", r.id)),
            Err(ForgeError::AlreadyExists { .. }) => return Ok(()), // published meanwhile
            Err(e) => return Err(e.into()),
        }
        // Re-list: another run may have created a draft at the same moment.
        all = forge.list_releases(repo)?;
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

fn fill_assets(
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

fn delete_quietly(
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
            Ok(())
        }
        Err(ForgeError::NotFound { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Publish the canonical (lowest-id) draft of `tag` unless the tag is published already, then
/// delete every other draft of it.
fn publish(
    forge: &dyn Forge,
    repo: &RepoRef,
    tag: &str,
    out: &mut Outcome,
) -> Result<(), ApplyError> {
    let all = forge.list_releases(repo)?;
    let rels = of_tag(&all, tag);
    let published = rels.iter().find(|r| !r.draft).copied();
    let keep = match published {
        Some(p) => p.id,
        None => {
            let Some(canon) = rels.first() else {
                return Err(ApplyError::Inconsistent(format!(
                    "no draft of {tag} to publish; re-run"
                )));
            };
            match forge.publish_release(repo, canon.id, true) {
                Ok(_) => out
                    .actions
                    .push(format!("publish {tag} (release {})", canon.id)),
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

/// Where and how to release: the cluster-stacks repository on the forge.
#[derive(Debug, Clone)]
pub struct Target {
    pub repo: RepoRef,
    pub base_branch: String,
    pub settings: plan::Settings,
    /// The OCI repository, when `publish` lists `oci` (see [`crate::oci::Publisher`]).
    pub oci: Option<std::sync::Arc<Publisher>>,
}

/// observe → plan: what a run would do right now. Read-only.
pub fn plan_release(
    forge: &dyn Forge,
    target: &Target,
    desired: &[Desired],
    package: &plan::Packager<'_>,
) -> anyhow::Result<(Plan, Observed)> {
    let observed = observe(
        forge,
        &target.repo,
        &target.base_branch,
        desired,
        target.settings.mode,
        &target.settings.lock_path,
    )?;
    let mut observed = observed;
    if let Some(oci) = &target.oci {
        let only = target.settings.oci.as_ref().is_some_and(|o| o.only);
        observe_oci(forge, &target.repo, oci, only, desired, &mut observed)?;
    }
    let p = plan::plan(desired, &observed, &target.settings, package)?;
    Ok((p, observed))
}

/// observe → plan → apply in one go (the caller holds any run lock).
pub fn release(
    forge: &dyn Forge,
    target: &Target,
    desired: &[Desired],
    package: &plan::Packager<'_>,
) -> anyhow::Result<(Plan, Outcome)> {
    let (p, observed) = plan_release(forge, target, desired, package)?;
    let outcome = apply_with_oci(&p, forge, &target.repo, &observed, target.oci.as_deref())?;
    Ok((p, outcome))
}

/// The OCI half of observing: every tag of the repository (so numbering accounts for them),
/// and the assets of each series' latest forge release that the registry does not have yet.
pub fn observe_oci(
    forge: &dyn Forge,
    repo: &RepoRef,
    oci: &Publisher,
    only: bool,
    desired: &[Desired],
    observed: &mut Observed,
) -> Result<(), ApplyError> {
    let tags = oci.tags()?;
    if only {
        latest_from_oci(oci, &tags, desired, observed)?;
        // The notes still diff against what the previous release shipped: the lock at its
        // git tag (the tag step runs for OCI-only releases too).
        for d in desired {
            if let Some(l) = observed
                .series
                .get_mut(&d.series())
                .and_then(|so| so.latest.as_mut())
                && !plan::up_to_date(d, Some(l))
            {
                l.set = released_set(forge, repo, &l.tag, d, crate::lock::LOCK_FILE)?;
            }
        }
        observed.oci_tags = Some(tags);
        return Ok(());
    }
    let mut unparsable: Vec<&String> = tags
        .iter()
        .filter(|t| ReleaseName::parse(t).is_err())
        .collect();
    unparsable.dedup();
    for t in unparsable {
        observed.warnings.push(format!(
            "OCI tag `{t}` skipped: not a cluster-stack release name CSO can parse"
        ));
    }
    for d in desired {
        let Some(so) = observed.series.get_mut(&d.series()) else {
            continue;
        };
        let Some(latest) = &so.latest else { continue };
        if tags.contains(&latest.tag) {
            continue;
        }
        let Some(release) = observed
            .releases
            .iter()
            .find(|r| r.tag == latest.tag && !r.draft)
        else {
            continue;
        };
        let mut assets = FileTree::new();
        for a in &release.assets {
            assets.insert(a.name.clone(), forge.download_asset(repo, release.id, a)?);
        }
        so.latest_assets = Some(assets);
    }
    observed.oci_tags = Some(tags);
    Ok(())
}

/// `publish: [oci]`: the registry is where releases live, so the latest release of each
/// series (its `hashes.json` and `metadata.yaml`) is read from there. An unfinished release
/// found by the tag probe at or below that number is already done.
fn latest_from_oci(
    oci: &Publisher,
    tags: &[String],
    desired: &[Desired],
    observed: &mut Observed,
) -> Result<(), ApplyError> {
    for d in desired {
        let Some(n) = crate::oci::versioning::scan_tags(tags, &d.stack, d.minor).highest else {
            continue;
        };
        let tag = ReleaseName {
            stack: d.stack.clone(),
            minor: d.minor,
            version: StackVersion::stable(n),
        }
        .to_string();
        let files = oci.registry().pull_release(&tag)?;
        let text = |name: &str| {
            files
                .get(name)
                .map(|b| String::from_utf8_lossy(b).into_owned())
        };
        let hashes = text("hashes.json").and_then(|t| {
            ReleaseHashes::parse_json(&t)
                .map_err(|e| {
                    observed
                        .warnings
                        .push(format!("OCI {tag}: hashes.json unreadable: {e}"))
                })
                .ok()
        });
        let metadata = text("metadata.yaml").and_then(|t| {
            Metadata::parse(&t)
                .map_err(|e| {
                    observed
                        .warnings
                        .push(format!("OCI {tag}: metadata.yaml unreadable: {e}"))
                })
                .ok()
        });
        let so = observed.series.entry(d.series()).or_default();
        so.highest_n = so.highest_n.max(Some(n));
        if so.resume.as_ref().is_some_and(|(k, _)| *k <= n) {
            so.resume = None;
        }
        so.latest = Some(Latest {
            tag,
            n,
            hashes,
            metadata,
            set: None,
        });
    }
    Ok(())
}
