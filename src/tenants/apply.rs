//! The imperative shell of tenant propagation: observe each tenant repository, plan (pure,
//! see `plan.rs`), then do only the difference. Tenants run concurrently under a bound and
//! fail independently. Writes are paced by the forge itself (the GitHub transport spaces remote
//! writes and keeps an hourly budget), so a large fan-out stays inside GitHub's secondary rate
//! limits without a second pacer here.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;

use super::plan::{
    self, Action, AvailableRelease, BranchState, Facts, Observed, TenantPlan, branch_name,
    commit_message, match_globs,
};
use crate::config::{Config, TenantConfig, UpgradeAction};
use crate::forge::{AutoMerge, FileChanges, Forge, ForgeError, PullState, RepoRef, upsert_comment};
use crate::model::StackId;

/// How a run behaves.
#[derive(Debug, Clone)]
pub struct Options {
    /// Plan only: no write request at all.
    pub dry_run: bool,
    /// Only this tenant.
    pub tenant: Option<String>,
    /// `(i, n)`, 1-based: only tenants whose name hashes into shard `i` of `n`.
    pub shard: Option<(u32, u32)>,
    /// Tenants processed at the same time.
    pub concurrency: usize,
    /// Shows the fan-out's progress (hidden unless the edge gives a visible bar).
    pub progress: indicatif::ProgressBar,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            dry_run: false,
            tenant: None,
            shard: None,
            concurrency: 8,
            progress: indicatif::ProgressBar::hidden(),
        }
    }
}

/// What happened to one tenant stack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Opened,
    Updated,
    Unchanged,
    Closed,
    /// Human commits on the bot branch: nothing pushed, a comment left.
    Blocked,
    /// Dry run: what would happen is in `action`.
    Planned,
    Failed,
}

/// One line of the summary: a tenant and stack (or a tenant that failed before its stacks).
#[derive(Debug, Clone, Serialize)]
pub struct TenantReport {
    pub tenant: String,
    pub repository: String,
    pub branch: Option<String>,
    pub stack: Option<String>,
    /// Paths of the files the PR changes.
    pub files: Vec<String>,
    pub action: Action,
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pull: Option<u64>,
    pub releases: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Unified diff of every changed file (shown by `--dry-run`).
    #[serde(skip)]
    pub diff: String,
    /// A step waiting for (or opened by) approval on the dashboard.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<super::approval::Approval>,
}

impl TenantReport {
    fn failed(t: &TenantConfig, reason: String) -> Self {
        TenantReport {
            tenant: t.name.clone(),
            repository: t.repository.clone(),
            branch: None,
            stack: None,
            files: Vec::new(),
            action: Action::None,
            outcome: Outcome::Failed,
            pull: None,
            releases: Vec::new(),
            note: None,
            error: Some(reason),
            diff: String::new(),
            approval: None,
        }
    }

    fn from_plan(p: &TenantPlan, outcome: Outcome) -> Self {
        TenantReport {
            tenant: p.tenant.clone(),
            repository: p.repository.clone(),
            branch: Some(p.branch.clone()),
            stack: Some(p.stack.to_string()),
            files: p.files.iter().map(|f| f.path.clone()).collect(),
            action: p.action,
            outcome,
            pull: p.pull,
            releases: p.releases.clone(),
            note: p.note.clone(),
            error: None,
            diff: p.files.iter().map(plan::unified_diff).collect(),
            approval: p.approval.clone(),
        }
    }
}

/// Whether a tenant belongs to shard `i` of `n` (1-based): a stable hash of its name, so the
/// split does not move when tenants are added.
pub fn in_shard(name: &str, i: u32, n: u32) -> bool {
    use sha2::{Digest, Sha256};
    let h = Sha256::digest(name.as_bytes());
    let v = u64::from_be_bytes(h[..8].try_into().expect("8 bytes"));
    (v % u64::from(n.max(1))) as u32 == i.saturating_sub(1)
}

/// Parse `I/N` (1 ≤ I ≤ N).
pub fn parse_shard(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("`--shard {s}`: expected I/N with 1 ≤ I ≤ N, e.g. `--shard 2/4`");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u32, u32) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if i == 0 || n == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

pub use super::releases::{available_releases, kubernetes_of};

/// The base head a dry run plans against when the repository does not exist yet.
pub const TO_BE_CREATED: &str = "(repository to be created)";

/// The tenant's repository and followed stacks, or what is wrong with how they are written.
fn identify(t: &TenantConfig) -> Result<(RepoRef, Vec<StackId>), String> {
    let repo = RepoRef::parse(&t.repository)
        .ok_or_else(|| format!("repository `{}` is not `owner/name`", t.repository))?;
    let stacks = t
        .stacks
        .iter()
        .map(|s| {
            s.parse::<StackId>()
                .map_err(|x| format!("stack `{s}` of tenant `{}`: {x}", t.name))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((repo, stacks))
}

/// Read what the plan needs from one tenant repository: one `read_file` per matched file.
/// A dry run never creates the repository: a missing one is planned against the files
/// `ensure_repo` would seed it with (base head [`TO_BE_CREATED`], no bot branches).
pub fn observe(forge: &dyn Forge, t: &TenantConfig, dry_run: bool) -> Result<Observed, String> {
    let (repo, stacks) = identify(t)?;
    let e = |e: ForgeError| e.to_string();
    let in_repo = |m: String| format!("{}: {m}", t.repository);
    if dry_run {
        if let Some(seed) = forge.seed_preview(&repo).map_err(e)? {
            let paths: Vec<String> = seed.keys().cloned().collect();
            let pick = |globs: &[String]| -> Result<BTreeMap<String, Vec<u8>>, String> {
                Ok(match_globs(globs, &paths)
                    .map_err(in_repo)?
                    .into_iter()
                    .map(|p| {
                        let b = seed[&p].clone();
                        (p, b)
                    })
                    .collect())
            };
            return Ok(Observed {
                base_head: TO_BE_CREATED.to_string(),
                stack_files: pick(&t.files)?,
                cluster_files: pick(&t.clusters)?,
                branches: stacks
                    .into_iter()
                    .map(|s| (s, BranchState::default()))
                    .collect(),
                upgrades: BTreeMap::new(),
            });
        }
    } else {
        match forge.ensure_repo(&repo, &t.base_branch) {
            Ok(()) => {}
            Err(ForgeError::NotFound { .. }) => return Err(not_found(t)),
            Err(other) => return Err(other.to_string()),
        }
    }
    read(forge, t)
}

/// A tenant repository that does not exist: said as such, never created empty (an empty
/// repository would only fail later with "matches no file", pointing away from the cause).
fn not_found(t: &TenantConfig) -> String {
    format!(
        "{}: no such repository (create it, or check that the token can see it; the local \
         forge creates only `forge.repository` and the repositories `forge.local.seed` names, in \
         the first release run)",
        t.repository
    )
}

/// Read one tenant repository as it is: base branch, matched files, and per followed stack
/// the bot branch with its commits and pull requests. Never writes, never seeds: the one
/// reading of a tenant, for the plan ([`observe`]) and the status report alike.
pub fn read(forge: &dyn Forge, t: &TenantConfig) -> Result<Observed, String> {
    let (repo, stacks) = identify(t)?;
    let e = |e: ForgeError| e.to_string();
    let in_repo = |m: String| format!("{}: {m}", t.repository);
    let base_head = match forge.branch_head(&repo, &t.base_branch) {
        Ok(Some(h)) => h,
        Ok(None) => {
            return Err(format!(
                "{}: base branch `{}` does not exist",
                t.repository, t.base_branch
            ));
        }
        Err(ForgeError::NotFound { .. }) => return Err(not_found(t)),
        Err(other) => return Err(other.to_string()),
    };
    let paths = forge.list_files(&repo, &base_head).map_err(e)?;
    let read = |list: Vec<String>| -> Result<BTreeMap<String, Vec<u8>>, String> {
        list.into_iter()
            .map(|p| match forge.read_file(&repo, &base_head, &p) {
                Ok(Some(b)) => Ok((p, b)),
                Ok(None) => Err(format!("{}: `{p}` vanished while reading", t.repository)),
                Err(err) => Err(err.to_string()),
            })
            .collect()
    };
    let stack_files = read(match_globs(&t.files, &paths).map_err(in_repo)?)?;
    let cluster_files = read(match_globs(&t.clusters, &paths).map_err(in_repo)?)?;
    let paths: Vec<&String> = stack_files.keys().chain(cluster_files.keys()).collect();
    let branch = |name: &str| read_branch(forge, &repo, &base_head, name, &paths).map_err(e);
    let mut branches = BTreeMap::new();
    for stack in &stacks {
        branches.insert(stack.clone(), branch(&branch_name(stack))?);
    }
    let mut upgrades = BTreeMap::new();
    if t.policy.upgrade.clusters != UpgradeAction::Ignore {
        // A file that does not parse fails the tenant in the plan, with its line.
        for name in super::upgrade::branches(&stacks, &cluster_files).unwrap_or_default() {
            let state = branch(&name)?;
            upgrades.insert(name, state);
        }
    }
    Ok(Observed {
        base_head,
        stack_files,
        cluster_files,
        branches,
        upgrades,
    })
}

/// One bot branch: its head, the commits the base lacks, its pull requests, and (only when it
/// holds a merge of the base) its versions of the tenant's files.
fn read_branch(
    forge: &dyn Forge,
    repo: &RepoRef,
    base_head: &str,
    branch: &str,
    paths: &[&String],
) -> Result<BranchState, ForgeError> {
    let head = forge.branch_head(repo, branch)?;
    let mut state = BranchState {
        pulls: forge.find_pulls(repo, branch)?,
        ..BranchState::default()
    };
    if let Some(h) = &head {
        state.commits = forge.commits_between(repo, base_head, h)?;
        // A branch with a merge of the base may hold content its bot commit does not
        // name: its files are read (a few reads, only in that case).
        if state.commits.iter().any(|c| c.parents.len() > 1) {
            let mut files = BTreeMap::new();
            for p in paths {
                if let Some(b) = forge.read_file(repo, h, p)? {
                    files.insert((*p).clone(), b);
                }
            }
            state.files = Some(files);
        }
    }
    state.head = head;
    Ok(state)
}

const HUMAN_MARKER: &str = "<!-- stackbot:human-commits -->";
const CLOSE_MARKER: &str = "<!-- stackbot:closed-up-to-date -->";

fn execute(forge: &dyn Forge, p: &TenantPlan) -> Result<Outcome, ForgeError> {
    let repo = RepoRef::parse(&p.repository).expect("checked by observe");
    if !p.human_commits.is_empty() {
        if let Some(n) = p.pull {
            let body = format!(
                "stackbot did not update this pull request: `{}` has commits by someone else ({}), and the bot never pushes over them. It would now propose: {}.\n\nTo let the bot take over again, merge this pull request as it is, or close it (and delete the branch): the bot then opens a fresh pull request for any release this one did not propose.",
                p.branch,
                p.human_commits
                    .iter()
                    .map(|s| format!("`{}`", &s[..s.len().min(12)]))
                    .collect::<Vec<_>>()
                    .join(", "),
                p.releases.join(", ")
            );
            upsert_comment(forge, &repo, n, HUMAN_MARKER, &body)?;
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
            upsert_comment(
                forge,
                &repo,
                n,
                CLOSE_MARKER,
                p.close_comment.as_deref().unwrap_or(
                    "The tenant repository already holds what this pull request proposes (the newest releases, or the upgrade made another way), so it is no longer needed. Closing it.",
                ),
            )?;
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

fn selected<'a>(config: &'a Config, opts: &Options) -> Result<Vec<&'a TenantConfig>, String> {
    if let Some(name) = &opts.tenant
        && !config.tenants.iter().any(|t| &t.name == name)
    {
        let names: Vec<&str> = config.tenants.iter().map(|t| t.name.as_str()).collect();
        return Err(format!(
            "--tenant {name}: no tenant of that name in the configuration; tenants: {}",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    }
    Ok(config
        .tenants
        .iter()
        .filter(|t| opts.tenant.as_ref().is_none_or(|n| n == &t.name))
        .filter(|t| opts.shard.is_none_or(|(i, n)| in_shard(&t.name, i, n)))
        .collect())
}

/// What a run read of each tenant it left exactly as it found it (by tenant name): still the
/// truth after the run, so the status report at the end of `release` reuses it instead of
/// reading those repositories a second time.
pub type Observations = BTreeMap<String, Observed>;

/// One tenant: its reports, and what was read of it when the run did not change it.
fn one_tenant(
    forge: &dyn Forge,
    t: &TenantConfig,
    releases: &[AvailableRelease],
    facts: &Facts,
    bot_email: &str,
    opts: &Options,
) -> (Vec<TenantReport>, Option<Observed>) {
    let observed = match observe(forge, t, opts.dry_run) {
        Ok(o) => o,
        Err(e) => return (vec![TenantReport::failed(t, e)], None),
    };
    let plans = match plan::plan_tenant(t, releases, &observed, facts, bot_email) {
        Ok(p) => p,
        Err(e) => return (vec![TenantReport::failed(t, e.to_string())], None),
    };
    let reports: Vec<TenantReport> = plans
        .iter()
        .map(|p| {
            if opts.dry_run {
                return TenantReport::from_plan(p, Outcome::Planned);
            }
            match execute(forge, p) {
                Ok(o) => TenantReport::from_plan(p, o),
                Err(e) => {
                    let mut r = TenantReport::from_plan(p, Outcome::Failed);
                    r.error = Some(e.to_string());
                    r
                }
            }
        })
        .collect();
    // A blocked tenant got at most a comment: its branches, files and pull requests are as read.
    let untouched = !opts.dry_run
        && reports
            .iter()
            .all(|r| matches!(r.outcome, Outcome::Unchanged | Outcome::Blocked));
    (reports, untouched.then_some(observed))
}

/// Propagate `releases` to every selected tenant, concurrently. Never fails as a whole: each
/// tenant's failure is in its report. With `dry_run`, nothing is written.
pub fn propagate(
    forge: &dyn Forge,
    config: &Config,
    releases: &[AvailableRelease],
    facts: &Facts,
    opts: &Options,
) -> Result<Vec<TenantReport>, String> {
    propagate_observed(forge, config, releases, facts, opts).map(|(reports, _)| reports)
}

/// [`propagate`], also returning what was read of the tenants the run left unchanged.
pub fn propagate_observed(
    forge: &dyn Forge,
    config: &Config,
    releases: &[AvailableRelease],
    facts: &Facts,
    opts: &Options,
) -> Result<(Vec<TenantReport>, Observations), String> {
    let tenants = selected(config, opts)?;
    let bot = &config.forge.committer.email;
    let next = AtomicUsize::new(0);
    type Done = (Vec<TenantReport>, Option<Observed>);
    let results: Mutex<Vec<(usize, Done)>> = Mutex::new(Vec::new());
    let workers = opts.concurrency.clamp(1, tenants.len().max(1));
    let bar = &opts.progress;
    bar.set_length(tenants.len() as u64);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(t) = tenants.get(i) else { break };
                    bar.set_message(t.name.clone());
                    let r = one_tenant(forge, t, releases, facts, bot, opts);
                    results.lock().expect("results lock").push((i, r));
                    bar.inc(1);
                }
            });
        }
    });
    bar.finish_and_clear();
    let mut all = results.into_inner().expect("results lock");
    all.sort_by_key(|(i, _)| *i);
    let mut reports = Vec::new();
    let mut observations = Observations::new();
    for (i, (r, observed)) in all {
        reports.extend(r);
        if let Some(o) = observed {
            observations.insert(tenants[i].name.clone(), o);
        }
    }
    Ok((reports, observations))
}

/// The stacks any tenant follows.
pub fn followed_stacks(config: &Config) -> BTreeSet<StackId> {
    config
        .tenants
        .iter()
        .flat_map(|t| t.stacks.iter().filter_map(|s| s.parse().ok()))
        .collect()
}

/// Whether a pull request is open (for reports).
pub fn is_open(p: &crate::forge::PullInfo) -> bool {
    p.state == PullState::Open
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_every_tenant_exactly_once() {
        for name in ["a", "acme", "tenant-17", "zz"] {
            let hits = (1..=4).filter(|i| in_shard(name, *i, 4)).count();
            assert_eq!(hits, 1, "{name}");
        }
        assert_eq!(parse_shard("2/4"), Ok((2, 4)));
        for bad in ["0/4", "5/4", "2", "a/b", "1/0"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }
}
