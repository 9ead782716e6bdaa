//! `plan(desired, observed) -> Plan`: what `release` will do, decided without any I/O.
//!
//! Being pure is what makes `stackbot plan` and `release --dry-run` trustworthy (they print the
//! very `Plan` that `apply` executes) and what makes the reconcile fixpoint testable: after
//! applying a plan, observing again and planning again yields no release.
//!
//! `plan` is the only place that decides. `stackbot::observe` reads facts (releases, tags and
//! the trees they point at, OCI tags, the base branch) and never concludes anything from them;
//! [`series`] turns the facts of one series into "the latest release", "the highest number
//! ever used" and "the unfinished release to finish", for the forge and the OCI registry alike;
//! `stackbot::apply` executes the steps.
//!
//! Versioning (stable channel only): the next `N` is one more than the highest `N` used by any
//! release, draft, tag or OCI tag of `<provider>-<name>-<major>-<minor>`, or recorded in
//! `stackbot.lock` (see [`series`]); there is no release when the rendered stack's clusterStack
//! hash equals the latest release's `hashes.json` (a Kubernetes patch changes `csctl.yaml`, so
//! it changes the hash and does release, unlike csctl); `clusterAddon` and `nodeImage` follow
//! csctl's rule via [`crate::package::versions::for_release`]. An unfinished release of an
//! earlier run is finished under its number; a withdrawn one is never reissued.
//!
//! Step order (the evidence of a release precedes its commit, so "withdrawn" and "unfinished"
//! can be told apart): with forge releases *draft (every asset) → commit → tag → publish →
//! OCI push*; with `publish: [oci]` alone *OCI push → commit → tag*. In pull-request mode the
//! draft is made when the release pull request is opened or updated, and tag, publish and push
//! follow the merge. A series whose offered set is older than its latest release is kept where
//! it is ([`guard`]).

pub mod guard;
pub mod marker;
mod notes;
pub mod pull;
pub mod series;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::forge::{FileChanges, PullInfo, PullState};
use crate::index::{Numbered, ReleaseIndex};
use crate::lock::Lock;
use crate::model::{FileTree, Minor, ReleaseName, ReleaseSet, StackId, series_prefix};
use crate::oci::manifest::LayerDescription;
use crate::oci::publish::OciPlanSettings;
use crate::package::versions::{Previous, for_release};
use crate::package::{Metadata, ReleaseHashes, SHA256SUMS, Versions, sha256sums};

mod skipped;
pub use guard::Degraded;
use notes::commit_summary;
pub use notes::release_notes;
pub use pull::{BranchPush, PullAction, ReleaseBranch};

/// What one stack × minor should look like: a complete release set and its rendering.
#[derive(Debug, Clone)]
pub struct Desired {
    pub stack: StackId,
    pub minor: Minor,
    pub set: ReleaseSet,
    /// Repository-relative directory of the rendered stack (e.g. `providers/openstack/scs2/1-34`).
    pub path: String,
    /// The rendered stack tree (csctl's input directory), paths relative to `path`.
    pub rendered: FileTree,
    /// Newer patches detection stepped over to reach `set`, and why (said in the notes).
    pub stepped_over: Vec<crate::model::SteppedOver>,
    /// Files the release commit writes besides the rendered directory and the lock
    /// (repository path → bytes; docs/adopt.md): the chart archives `set` pins that the
    /// templates lacked, fetched for this run, and the files of the stack's other minors'
    /// directories that the lists shared across minors change (their own facts unchanged, so
    /// they make no release of their own), so that the tree the commit leaves is what its lock
    /// renders (`render --check` is clean, offline). Usually empty.
    pub beside: FileTree,
    /// What rendered `rendered`, to render `set` again with the lists shared across minors
    /// as another lock gives them ([`up_to_date`]); `None` when not rendered from templates.
    pub renderer: Option<Renderer>,
}

/// The templates and stack configuration a [`Desired`] was rendered from.
#[derive(Debug, Clone)]
pub struct Renderer {
    pub templates: std::sync::Arc<crate::render::TemplateTree>,
    pub stack: crate::config::StackConfig,
}

impl Desired {
    /// `<provider>-<name>-<major>-<minor>`.
    pub fn series(&self) -> String {
        series_prefix(&self.stack, self.minor)
    }

    /// The series as a skipped or failed line names it, and why.
    fn skipped(&self, reason: SkipReason) -> Skipped {
        let (stack, minor) = (self.stack.clone(), self.minor);
        Skipped {
            what: Subject::Series { stack, minor },
            reason,
        }
    }
}

/// A published release of a series and what it recorded (on the forge or in the registry).
#[derive(Debug, Clone, Default)]
pub struct Latest {
    pub tag: String,
    pub n: u64,
    /// Parsed `hashes.json`; `None` if the release has none (then the series always releases).
    pub hashes: Option<ReleaseHashes>,
    /// Parsed `metadata.yaml`; only read when a new release is needed.
    pub metadata: Option<Metadata>,
    /// The Kubernetes version the release ships, by the one rule
    /// ([`crate::tenants::releases::kubernetes_of`]), when its files were pulled (an OCI
    /// release; a forge release's is read from the release index by the status). The
    /// `release` summary reads it here, so it says what `status` says.
    pub kubernetes: Option<crate::model::KubeVersion>,
    /// When an OCI release's manifest says it was created (`oci.created_annotation`), when its
    /// files were pulled: the date `status` shows, kept so the run does not read it again.
    pub created: Option<chrono::DateTime<chrono::Utc>>,
    /// The release set this release shipped: `stackbot.lock` at the commit its tag points at.
    /// Release notes diff against this, never against the base branch, so they are the same
    /// whether or not an interrupted run already committed the new lock.
    pub set: Option<ReleaseSet>,
    /// The whole `stackbot.lock` at that commit: the lists shared across minors as they were
    /// when this release was made ([`up_to_date`]).
    pub lock: Option<crate::lock::Lock>,
}

/// A tag of the series found above its latest release: the commit it points at and the files
/// under the series' rendered path at that commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaggedTree {
    pub commit: String,
    pub tree: FileTree,
}

/// What was read about one series. Facts only: which of them counts is [`series`]' decision.
#[derive(Debug, Clone, Default)]
pub struct SeriesObserved {
    /// The latest published forge release of the series.
    pub forge_latest: Option<Latest>,
    /// The highest release of the series in the OCI repository, when it is not the forge's
    /// latest (always the case with `publish: [oci]` alone).
    pub oci_latest: Option<Latest>,
    /// Tags `…-v<N>` above the latest release, probed upwards until the first gap past every
    /// number known from releases and OCI tags.
    pub tags: BTreeMap<u64, TaggedTree>,
    /// Files under the desired path at the base branch head; `None` when not read (up to date).
    pub base_tree: Option<FileTree>,
    /// Assets of the latest published forge release, read only when OCI is a target and lacks
    /// its tag (a run that stopped between the forge release and the OCI push).
    pub latest_assets: Option<FileTree>,
    /// The version `stackbot.lock` on the base branch records for the series (`release:`).
    pub base_released: Option<u64>,
    /// The version `stackbot.lock` at the latest release's tag records for the series.
    pub latest_released: Option<u64>,
    /// With `publish: [oci]` alone: whether the latest release (an OCI tag) has its git tag.
    pub latest_tagged: Option<bool>,
    /// Pull-request mode: the series' release branch (read only when a release is needed).
    pub release_branch: Option<ReleaseBranch>,
    /// Pull-request mode: merged release pull requests (by number) that already carry the
    /// bot's "published" comment (read only for those naming a number above the latest).
    pub announced: std::collections::BTreeSet<u64>,
}

/// Everything `observe` read from the forge and the OCI repository.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    pub base_branch: String,
    pub base_head: Option<String>,
    /// Every release of the cluster-stacks repository (drafts included) and, when `publish`
    /// lists `oci`, every tag of the OCI repository.
    pub index: ReleaseIndex,
    /// `stackbot.lock` at the base head.
    pub base_lock: Option<Vec<u8>>,
    /// By series prefix.
    pub series: BTreeMap<String, SeriesObserved>,
    /// Release pull requests by head branch (pull-request mode only).
    pub pulls: BTreeMap<String, Vec<PullInfo>>,
    pub warnings: Vec<String>,
}

/// How rendered stacks reach the base branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Direct,
    PullRequest,
}

/// Inputs that are neither desired nor observed state.
#[derive(Debug, Clone)]
pub struct Settings {
    pub mode: Mode,
    /// Repository path of `stackbot.lock`.
    pub lock_path: String,
    /// "Today", for the SCS deadline line of the release notes.
    pub now: chrono::NaiveDate,
    /// The OCI target when `publish` lists `oci` (resolved at the CLI edge).
    pub oci: Option<OciPlanSettings>,
    /// The bot's committer e-mail (`forge.committer.email`): how its commits are told apart.
    pub bot_email: String,
    /// What the SCS 0210 rule reads (the run's detection): release notes name the critical
    /// CVEs a release fixes and their 14-day deadline.
    pub compliance: crate::compliance::Inputs,
    /// Pull-request mode: what the conformance gate says of each release (stable tag → its
    /// line), for the body of its release pull request. Empty without a gate.
    pub gate: std::collections::BTreeMap<String, String>,
}

/// One side effect. `apply` checks before each whether it is already done.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum Step {
    /// Commit the rendered directory (and `stackbot.lock`) to `branch`.
    Commit {
        branch: String,
        message: String,
        /// Changed paths (for reports); the bytes are in `changes`.
        files: Vec<String>,
        #[serde(skip)]
        changes: FileChanges,
    },
    /// Pull-request mode: push the rendering to a release branch and open or update its PR,
    /// as decided by [`pull`].
    ReleasePull {
        branch: String,
        base: String,
        title: String,
        files: Vec<String>,
        #[serde(skip)]
        body: String,
        #[serde(skip)]
        changes: FileChanges,
        push: BranchPush,
        pull: PullAction,
    },
    /// Annotated tag on `commit` (`None`: the commit made by the preceding `Commit` step).
    Tag {
        tag: String,
        commit: Option<String>,
        message: String,
    },
    /// Make sure exactly one draft (or the published release) carries the tag, the release
    /// notes (with the release marker) and all assets. The tag need not exist yet.
    Draft { tag: String },
    /// Publish the canonical draft of the tag.
    Publish {
        tag: String,
        /// Whether this release becomes the repository's *Latest* release (see
        /// [`crate::index::latest_of_repository`]); said out loud to the forge either way.
        latest: bool,
    },
    /// Push the release's assets to the OCI repository as csctl pushes them (after the forge
    /// release; first, as the publication, with `oci` alone), then verify them. A no-op when
    /// the tag already holds this manifest.
    OciPush {
        tag: String,
        /// Full repository reference.
        target: String,
        manifest_digest: String,
        layers: Vec<LayerDescription>,
        #[serde(skip)]
        assets: FileTree,
    },
    /// Pull-request mode: say on the merged release pull request that its release is being
    /// published (one comment), right after the draft (or the push) that now carries the
    /// evidence: from then on a missing release of that number means a human withdrew it.
    Announce { number: u64, tag: String },
    /// Delete a draft nobody will publish (a duplicate of a published tag, or an old leftover).
    DeleteDraft {
        id: u64,
        tag: String,
        reason: String,
    },
}

/// A release asset as planned.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedAsset {
    pub name: String,
    pub size: u64,
    pub sha256: String,
}

/// The three component versions, dot form.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedVersions {
    pub cluster_stack: String,
    pub cluster_addon: String,
    pub node_image: String,
}

/// A release `apply` will create (or finish).
#[derive(Debug, Clone, Serialize)]
pub struct PlannedRelease {
    pub tag: String,
    pub stack: String,
    pub minor: String,
    pub kubernetes: String,
    /// clusterStack version, dot form (`v3`).
    pub version: String,
    pub versions: PlannedVersions,
    pub assets: Vec<PlannedAsset>,
    /// An earlier run got this far and the release is being finished.
    pub resumed: bool,
    pub notes: String,
    pub steps: Vec<Step>,
    #[serde(skip)]
    pub asset_bytes: FileTree,
    /// Repository path of the rendered directory.
    pub path: String,
    /// Files under `path` on the base branch before this release (for `--dry-run` diffs).
    #[serde(skip)]
    pub base_files: FileTree,
    #[serde(skip)]
    pub rendered: FileTree,
}

pub use skipped::{Reason as SkipReason, Skipped, Subject};

/// Everything `release` will do.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Plan {
    pub releases: Vec<PlannedRelease>,
    pub skipped: Vec<Skipped>,
    /// Cleanups not tied to a new release (duplicate or stale drafts of released tags).
    pub cleanup: Vec<Step>,
    /// Tenant pull requests (filled by the tenants planner).
    pub tenants: Vec<serde_json::Value>,
    pub warnings: Vec<String>,
    /// Series kept at their latest release because the offered set is older ([`guard`]).
    pub degraded: Vec<Degraded>,
    /// Series that cannot go on until something is fixed (a release branch with a human's
    /// commits, a render that lacks upstream data): the run reports them and exits 1, the
    /// other series and the tenants go on.
    pub failed: Vec<Skipped>,
    /// Where each tracked series stands, as `status` computes it (what it waits for, the
    /// governing deadline, days overdue): filled by the pipeline before any write (what `plan`
    /// shows) and again after `apply` (what the `release` summary shows).
    #[serde(skip)]
    pub series: Vec<crate::status::StackStatus>,
}

impl Plan {
    /// Whether applying this plan writes nothing.
    pub fn is_noop(&self) -> bool {
        self.releases.iter().all(|r| r.steps.is_empty()) && self.cleanup.is_empty()
    }
}

/// Decisions a human takes explicitly, never the bot on its own.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--allow-downgrade`: release a series even when its set is older than its latest release.
    pub allow_downgrade: bool,
    /// `--republish <tag>`: publish again (under a new number) the content of these withdrawn
    /// releases.
    pub republish: Vec<String>,
}

/// Why a plan could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("{series}: {message}")]
    Package { series: String, message: String },
    /// The base branch's `stackbot.lock` cannot be read (a merge conflict, a hand edit): it is
    /// never replaced by an empty lock, which would drop every other series from it.
    #[error("{0}\n  (read from the base branch of the cluster-stacks repository)")]
    Lock(#[from] crate::lock::LockError),
    /// The series' numbers are exhausted (a tag `…-v18446744073709551615`).
    #[error(
        "{series}: no release number follows v{highest}; delete the tag or release numbered v{highest} (stackbot never makes one) and re-run"
    )]
    Exhausted { series: String, highest: u64 },
    /// `--republish TAG` names no withdrawn release of the planned series: ignoring it would
    /// report "nothing to release" for a request that was never understood.
    #[error(
        "--republish {tag}: no withdrawn release of the planned series has this tag; withdrawn: {}\n  hint: name a release whose forge release was deleted (see `stackbot status`), and select its series if you pass --stack or --minor",
        crate::error::listed(withdrawn)
    )]
    Republish { tag: String, withdrawn: Vec<String> },
    #[error("{tag}: {source}")]
    Oci {
        tag: String,
        source: crate::oci::OciError,
    },
}

impl PlanError {
    /// Packaging refuses what the rendered stack contains (a chart named for another minor, a
    /// bad version): the templates or release set must be fixed, so exit 2. An OCI setting
    /// problem is the configuration's when the OCI error says so.
    pub fn is_invalid_input(&self) -> bool {
        match self {
            PlanError::Package { .. }
            | PlanError::Lock(_)
            | PlanError::Exhausted { .. }
            | PlanError::Republish { .. } => true,
            PlanError::Oci { source, .. } => source.is_invalid_input(),
        }
    }
}

/// The OCI push step for `assets` as `tag`.
/// The push of a forge release's assets to OCI, when OCI is a target (none otherwise): every
/// configured target gets every release. Its own function so that the mutation check
/// (`.cargo/mutants.toml`, docs/reliability.md) can replace it.
fn oci_steps(
    oci: Option<&OciPlanSettings>,
    tag: &str,
    assets: &FileTree,
) -> Result<Vec<Step>, PlanError> {
    oci.map(|oci| oci_step(oci, tag, assets))
        .into_iter()
        .collect()
}

fn oci_step(oci: &OciPlanSettings, tag: &str, assets: &FileTree) -> Result<Step, PlanError> {
    let d = oci.describe(tag, assets).map_err(|source| PlanError::Oci {
        tag: tag.to_string(),
        source,
    })?;
    Ok(Step::OciPush {
        tag: d.tag,
        target: d.target,
        manifest_digest: d.manifest_digest,
        layers: d.layers,
        assets: assets.clone(),
    })
}

/// Whether the rendered tree is what the latest release already shipped, the lists shared
/// across minors aside (docs/adopt.md): a series releases for its own facts or its templates,
/// and then carries the shared lists as they are.
pub fn up_to_date(desired: &Desired, latest: Option<&Latest>) -> bool {
    let Some((latest, released)) = latest.and_then(|l| l.hashes.as_ref().map(|h| (l, h))) else {
        return false;
    };
    let same =
        |tree: &FileTree| crate::package::hashes(tree).cluster_stack == released.cluster_stack;
    if same(&desired.rendered) {
        return true;
    }
    // Content shared across minors alone makes no release: the series is unchanged when its
    // own facts and its templates, rendered with the shared lists as the lock at its latest
    // release gave them, reproduce that release.
    match (&desired.renderer, &latest.lock) {
        (Some(r), Some(lock)) => {
            crate::render::render_stack(&r.templates, &r.stack, &desired.set, lock)
                .is_ok_and(|t| same(&t))
        }
        _ => false,
    }
}

/// The changes turning `base` (under `path`) into `want`.
pub fn tree_changes(path: &str, base: &FileTree, want: &FileTree) -> FileChanges {
    let mut ch = FileChanges::new();
    for (k, v) in want {
        if base.get(k) != Some(v) {
            ch.insert(format!("{path}/{k}"), Some(v.clone()));
        }
    }
    for k in base.keys() {
        if !want.contains_key(k) {
            ch.insert(format!("{path}/{k}"), None);
        }
    }
    ch
}

/// The branch a release PR of a series lives on.
pub fn release_branch(series: &str) -> String {
    format!("stackbot/release/{series}")
}

/// Packages a rendered tree with chosen versions into release assets (name → bytes).
pub type Packager<'a> = dyn Fn(&FileTree, &Versions) -> Result<FileTree, String> + 'a;

/// Decide everything. Pure: the same inputs always give the same plan.
pub fn plan(
    desired: &[Desired],
    observed: &Observed,
    settings: &Settings,
    package: &Packager<'_>,
) -> Result<Plan, PlanError> {
    plan_with(desired, observed, settings, &Overrides::default(), package)
}

/// [`plan`] with a human's explicit overrides (`--allow-downgrade`, `--republish`).
pub fn plan_with(
    desired: &[Desired],
    observed: &Observed,
    settings: &Settings,
    overrides: &Overrides,
    package: &Packager<'_>,
) -> Result<Plan, PlanError> {
    let base_lock = match &observed.base_lock {
        Some(b) => Lock::parse(&String::from_utf8_lossy(b), settings.lock_path.as_ref())?,
        None => Lock::default(),
    };
    let mut run = Run {
        observed,
        settings,
        overrides,
        package,
        committed_lock: base_lock.clone(),
        base_lock,
        oci_only: settings.oci.as_ref().is_some_and(|o| o.only),
        withdrawn_tags: BTreeSet::new(),
        plan: Plan {
            warnings: observed.warnings.clone(),
            ..Plan::default()
        },
    };
    for d in desired {
        run.series(d)?;
    }
    let Run {
        mut plan,
        withdrawn_tags,
        ..
    } = run;
    if let Some(tag) = overrides
        .republish
        .iter()
        .find(|t| !withdrawn_tags.contains(*t))
    {
        return Err(PlanError::Republish {
            tag: tag.clone(),
            withdrawn: withdrawn_tags.into_iter().collect(),
        });
    }
    series::mark_latest(&mut plan, &observed.index);
    Ok(plan)
}

/// One planning run over the desired series: the inputs, and what it has decided so far.
struct Run<'a> {
    observed: &'a Observed,
    settings: &'a Settings,
    overrides: &'a Overrides,
    package: &'a Packager<'a>,
    base_lock: Lock,
    /// Direct mode: each release commit builds on the one before, so its lock carries the
    /// entries committed before it (and only those). Pull-request mode: every release branch
    /// starts from the base, so its lock is the base lock plus its own entry.
    committed_lock: Lock,
    oci_only: bool,
    withdrawn_tags: BTreeSet<String>,
    plan: Plan,
}

/// What one series' facts say, as the steps of its release read them.
struct SeriesInput<'a> {
    d: &'a Desired,
    series: String,
    so: SeriesObserved,
    pulls: &'a [PullInfo],
    releases: &'a [Numbered],
    /// The newest published forge release's number (drafts below it are stale).
    published_n: Option<u64>,
}

/// A release's number, files and words, before its steps.
struct Release {
    n: u64,
    resumed_commit: Option<String>,
    versions: Versions,
    tag: String,
    assets: FileTree,
    words: String,
    release_marker: String,
    notes: String,
}

impl Run<'_> {
    /// Plan one series: finish what an earlier run left, then release, hold back or skip it.
    fn series(&mut self, d: &Desired) -> Result<(), PlanError> {
        let observed = self.observed;
        let index = &observed.index;
        let series = d.series();
        let releases = index.forge(&d.stack, d.minor);
        let so = observed.series.get(&series).cloned().unwrap_or_default();
        let pulls = observed
            .pulls
            .get(&release_branch(&series))
            .map_or(&[][..], Vec::as_slice);
        let published_n = releases
            .iter()
            .filter(|r| !r.release.draft)
            .map(|r| r.n)
            .max();
        let input = SeriesInput {
            d,
            series,
            so,
            pulls,
            releases,
            published_n,
        };
        let state = series::decide(
            d,
            &series::Facts {
                observed: &input.so,
                index,
                pulls,
                oci_only: self.oci_only,
            },
        );
        self.withdrawn_tags
            .extend(state.withdrawn.iter().map(|w| w.tag.clone()));
        self.catch_up_oci(&input)?;
        if self.held(&input, &state) {
            return Ok(());
        }
        let release = self.release(&input, &state)?;
        self.steps(&input, &state, release)
    }

    /// The latest forge release is missing from OCI (OCI newly enabled, or a run stopped
    /// between the forge release and the push): push it as published.
    fn catch_up_oci(&mut self, input: &SeriesInput<'_>) -> Result<(), PlanError> {
        if let (Some(latest), Some(assets)) = (
            input.so.forge_latest.as_ref(),
            input.so.latest_assets.as_ref(),
        ) && !self.observed.index.in_oci(&latest.tag)
        {
            let push = oci_steps(self.settings.oci.as_ref(), &latest.tag, assets)?;
            self.plan.cleanup.extend(push);
        }
        Ok(())
    }

    /// Whether the series gets no release this run: it is up to date, its set would move it
    /// backwards ([`guard`]), its content was withdrawn, or its release pull request was
    /// declined. Says why in the plan.
    fn held(&mut self, input: &SeriesInput<'_>, state: &series::SeriesState<'_>) -> bool {
        let (d, series) = (input.d, &input.series);
        let stale_below = |limit: Option<u64>| stale_drafts(input.releases, limit);
        if state.resume.is_some() {
            return false; // an unfinished release is finished whatever it holds
        }
        if up_to_date(d, state.latest) {
            let tag = state.latest.map(|l| l.tag.clone()).unwrap_or_default();
            self.plan
                .skipped
                .push(d.skipped(SkipReason::Unchanged { tag }));
            self.plan.cleanup.extend(stale_below(input.published_n));
            return true;
        }
        if let Some(deg) = guard::check(d, state.latest, &self.base_lock) {
            if !self.overrides.allow_downgrade {
                self.plan.degraded.push(deg);
                self.plan.cleanup.extend(stale_below(input.published_n));
                return true;
            }
            self.plan.warnings.push(format!(
                "{series}: releasing a downgrade from {} as asked (--allow-downgrade): {}",
                deg.latest,
                deg.regressions.join("; ")
            ));
        }
        if let Some(w) = state
            .withdrawn
            .iter()
            .find(|w| w.same_content && !self.overrides.republish.contains(&w.tag))
        {
            self.plan
                .skipped
                .push(d.skipped(SkipReason::Withdrawn { tag: w.tag.clone() }));
            self.plan.cleanup.extend(stale_below(input.published_n));
            return true;
        }
        let hash = crate::package::hashes(&d.rendered).cluster_stack;
        if self.settings.mode == Mode::PullRequest
            && let Some(number) = pull::declined(input.pulls, &hash)
        {
            self.plan
                .skipped
                .push(d.skipped(SkipReason::Declined { number }));
            return true;
        }
        false
    }

    /// The release's number, component versions, assets and notes.
    fn release(
        &self,
        input: &SeriesInput<'_>,
        state: &series::SeriesState<'_>,
    ) -> Result<Release, PlanError> {
        let (d, series) = (input.d, &input.series);
        let hashes = crate::package::hashes(&d.rendered);
        let previous = state.latest.and_then(|l| match (&l.hashes, &l.metadata) {
            (Some(h), Some(m)) => Some(Previous {
                hashes: h.clone(),
                metadata: m.clone(),
            }),
            _ => None,
        });
        let (n, resumed_commit) = release_number(state, self.settings.mode, series)?;
        // The number is decided above; the component versions follow csctl's rule.
        let versions = for_release(n, &hashes, previous.as_ref());
        let tag = ReleaseName {
            stack: d.stack.clone(),
            minor: d.minor,
            version: versions.cluster_stack.clone(),
        }
        .to_string();
        let mut assets =
            (self.package)(&d.rendered, &versions).map_err(|message| PlanError::Package {
                series: series.clone(),
                message,
            })?;
        if !assets.contains_key(SHA256SUMS) {
            let sums = sha256sums(&assets);
            assets.insert(SHA256SUMS.to_string(), sums);
        }
        let previous_set = state.latest.and_then(|l| l.set.clone());
        let fixed = crate::compliance::fixed_between(
            previous_set.as_ref().map(|p| p.kubernetes),
            d.set.kubernetes,
            &self.settings.compliance,
        );
        // What the series offered before this release decides the governing rule, as it did
        // for `detect` and `status` that day: from the set the previous release shipped (not
        // the base branch, so a resumed run writes the same notes).
        let offered = match (state.latest, &previous_set) {
            (None, _) => crate::compliance::Offered::Nothing,
            (Some(_), Some(p)) => crate::compliance::Offered::Version {
                kubernetes: p.kubernetes,
            },
            (Some(l), None) => crate::compliance::Offered::Unknown {
                cause: format!("{} records no release set", l.tag),
            },
        };
        // The GA patches of the minor, from the run's detection (the notes' own read of them).
        let patches: Vec<crate::upstream::kubernetes::KubeRelease> = self
            .settings
            .compliance
            .releases
            .as_deref()
            .unwrap_or_default()
            .iter()
            .filter(|r| r.version.minor() == d.minor)
            .cloned()
            .collect();
        let deadline = crate::compliance::deadlines(
            offered,
            &patches,
            &self.settings.compliance,
            self.settings.now,
        );
        let words = release_notes(
            &tag,
            d,
            previous_set.as_ref(),
            &versions,
            &fixed,
            &deadline,
            self.settings.now,
        );
        let release_marker = marker::line(&tag, &hashes.cluster_stack);
        let notes = format!("{words}\n{release_marker}\n");
        Ok(Release {
            n,
            resumed_commit,
            versions,
            tag,
            assets,
            words,
            release_marker,
            notes,
        })
    }

    /// The release's commit (the rendered tree and the lock), then its steps: in pull-request
    /// mode the release branch and pull request until the merge, else draft (or push), commit,
    /// tag and publish.
    fn steps(
        &mut self,
        input: &SeriesInput<'_>,
        state: &series::SeriesState<'_>,
        r: Release,
    ) -> Result<(), PlanError> {
        let d = input.d;
        let mut series_lock = match self.settings.mode {
            Mode::Direct => self.committed_lock.clone(),
            Mode::PullRequest => self.base_lock.clone(),
        };
        series_lock.upsert(d.set.clone());
        series_lock.retire_rows(&self.settings.compliance.lifecycles, self.settings.now);
        series_lock.record_release(&d.stack, d.minor, r.n);
        let lock_text = series_lock.to_yaml();
        let entry_done = self.base_lock.get(&d.stack, d.minor) == Some(&d.set)
            && self
                .base_lock
                .released_as(&d.stack, d.minor)
                .is_some_and(|x| x >= r.n);
        let base_files = input.so.base_tree.clone().unwrap_or_default();
        let mut changes = tree_changes(&d.path, &base_files, &d.rendered);
        let needs_commit = r.resumed_commit.is_none() && (!changes.is_empty() || !entry_done);
        if needs_commit {
            changes.insert(
                self.settings.lock_path.clone(),
                Some(lock_text.clone().into_bytes()),
            );
            for (path, bytes) in &d.beside {
                changes.insert(path.clone(), Some(bytes.clone()));
            }
        }
        let steps = if self.settings.mode == Mode::PullRequest && needs_commit {
            let Some(steps) = self.pull_request_steps(input, &r, &lock_text, changes) else {
                return Ok(());
            };
            steps
        } else {
            let commit = needs_commit.then_some(changes);
            let steps = self.publish_steps(input, &r, commit)?;
            if needs_commit {
                self.committed_lock = series_lock;
            }
            steps
        };
        let resumed = state.resume.is_some();
        let planned = planned_release(r, d, resumed, steps, base_files);
        self.plan.releases.push(planned);
        Ok(())
    }

    /// Pull-request mode, before the merge: only the branch and its pull request. The merged
    /// pull request (with its release marker) is the evidence until the release is announced.
    /// `None` when the branch cannot be updated (said in the plan's failures).
    fn pull_request_steps(
        &mut self,
        input: &SeriesInput<'_>,
        r: &Release,
        lock_text: &str,
        changes: FileChanges,
    ) -> Option<Vec<Step>> {
        let (d, tag) = (input.d, &r.tag);
        let wanted = pull::Wanted {
            branch: release_branch(&input.series),
            base: &self.observed.base_branch,
            title: format!("Release {tag}"),
            // The release marker is what later runs find the pull request by: kept whole.
            body: crate::body::fit_body(
                "",
                &[crate::body::Block::Section {
                    label: "the release notes".into(),
                    text: format!("{}\n", r.words),
                }],
                &match self.settings.gate.get(tag) {
                    None => format!(
                        "Merging this pull request publishes `{tag}`.\n\n{}\n",
                        r.release_marker
                    ),
                    Some(line) => format!(
                        "Merging this pull request publishes `{tag}` once its conformance \
                         candidate has passed.\n\n**Conformance:** {line}\n\n{}\n",
                        r.release_marker
                    ),
                },
                crate::body::BODY_MAX,
                "the release notes of the draft release",
            )
            .text,
            rendered: &d.rendered,
            lock_text,
            changes,
        };
        let step = match pull::step(wanted, input.so.release_branch.as_ref(), input.pulls) {
            Ok(step) => step,
            Err(reason) => {
                self.plan
                    .failed
                    .push(input.d.skipped(SkipReason::Said(reason)));
                return None;
            }
        };
        let open = input.pulls.iter().any(|p| p.state == PullState::Open);
        self.plan.skipped.push(Skipped {
            what: Subject::Tag {
                stack: input.d.stack.clone(),
                minor: input.d.minor,
                tag: tag.clone(),
            },
            reason: SkipReason::ReleasePullRequest { open },
        });
        Some(vec![step])
    }

    /// Draft (or, with `oci` alone, the push), announce a merged pull request, commit (when
    /// `commit` holds the changes), tag, publish and push; then the drafts it supersedes.
    fn publish_steps(
        &self,
        input: &SeriesInput<'_>,
        r: &Release,
        commit: Option<FileChanges>,
    ) -> Result<Vec<Step>, PlanError> {
        let (d, tag) = (input.d, &r.tag);
        let forge_target = !self.oci_only;
        let mut steps = Vec::new();
        if forge_target {
            steps.push(Step::Draft { tag: tag.clone() });
        } else {
            // `oci` alone: the push is the publication, and the evidence the commit needs.
            let oci = self.settings.oci.as_ref().expect("oci only");
            steps.push(oci_step(oci, tag, &r.assets)?);
        }
        // Pull-request mode: once the draft (or the push) holds the evidence, the merged
        // pull request stops being it.
        if self.settings.mode == Mode::PullRequest
            && let Some(p) = input.pulls.iter().find(|p| {
                p.state == PullState::Merged
                    && !input.so.announced.contains(&p.number)
                    && marker::parse(&p.body).is_some_and(|m| &m.tag == tag)
            })
        {
            steps.push(Step::Announce {
                number: p.number,
                tag: tag.clone(),
            });
        }
        let mut tag_commit = r.resumed_commit.clone();
        match commit {
            Some(changes) => steps.push(Step::Commit {
                branch: self.observed.base_branch.clone(),
                message: format!("Release {tag}\n\n{}", commit_summary(d)),
                files: changes.keys().cloned().collect(),
                changes,
            }),
            None if tag_commit.is_none() => tag_commit = self.observed.base_head.clone(),
            None => {}
        }
        steps.push(Step::Tag {
            tag: tag.clone(),
            commit: tag_commit,
            message: format!("Release {tag}"),
        });
        if forge_target {
            steps.push(Step::Publish {
                tag: tag.clone(),
                latest: false, // decided once every release is planned
            });
            steps.extend(oci_steps(self.settings.oci.as_ref(), tag, &r.assets)?);
        }
        steps.extend(stale_drafts(input.releases, Some(r.n)));
        Ok(steps)
    }
}

/// Drafts nobody will publish: duplicates of a published tag, or older than `limit` (the latest
/// published release, or the release about to be made).
fn stale_drafts(releases: &[Numbered], limit: Option<u64>) -> Vec<Step> {
    releases
        .iter()
        .filter(|r| r.release.draft)
        .filter_map(|r| {
            let dup = releases
                .iter()
                .any(|o| !o.release.draft && o.release.tag == r.release.tag);
            let old = limit.is_some_and(|p| r.n < p);
            (dup || old).then(|| Step::DeleteDraft {
                id: r.release.id,
                tag: r.release.tag.clone(),
                reason: if dup {
                    "duplicate draft of a published release".into()
                } else {
                    "draft superseded by a newer release".into()
                },
            })
        })
        .collect()
}

/// The number of the series' next release and, when an unfinished one is resumed, its commit:
/// the unfinished release's own number, else (pull-request mode) the number its open pull
/// request carries, else one more than the highest number the series ever used.
fn release_number(
    state: &series::SeriesState<'_>,
    mode: Mode,
    series: &str,
) -> Result<(u64, Option<String>), PlanError> {
    Ok(match &state.resume {
        Some(r) => (r.n, r.commit.clone()),
        None => match state.pending.filter(|_| mode == Mode::PullRequest) {
            Some(k) => (k, None),
            None => {
                let highest = state.highest.unwrap_or(0);
                let Some(n) = highest.checked_add(1) else {
                    return Err(PlanError::Exhausted {
                        series: series.to_string(),
                        highest,
                    });
                };
                (n, None)
            }
        },
    })
}

/// The planned release as reports and `apply` see it.
fn planned_release(
    r: Release,
    d: &Desired,
    resumed: bool,
    steps: Vec<Step>,
    base_files: FileTree,
) -> PlannedRelease {
    let (versions, assets) = (&r.versions, r.assets);
    let planned_assets = assets
        .iter()
        .map(|(name, bytes)| PlannedAsset {
            name: name.clone(),
            size: bytes.len() as u64,
            sha256: hex::encode(Sha256::digest(bytes)),
        })
        .collect();
    PlannedRelease {
        tag: r.tag,
        stack: d.stack.to_string(),
        minor: d.minor.to_string(),
        kubernetes: d.set.kubernetes.to_string(),
        version: versions.cluster_stack.dot(),
        versions: PlannedVersions {
            cluster_stack: versions.cluster_stack.dot(),
            cluster_addon: versions.cluster_addon.dot(),
            node_image: versions.node_image.dot(),
        },
        assets: planned_assets,
        resumed,
        notes: r.notes,
        steps,
        asset_bytes: assets,
        path: d.path.clone(),
        base_files,
        rendered: d.rendered.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forge::ReleaseInfo;

    fn rel(id: u64, tag: &str, draft: bool) -> ReleaseInfo {
        ReleaseInfo {
            id,
            tag: tag.into(),
            name: Some(tag.into()),
            draft,
            prerelease: false,
            body: String::new(),
            assets: Vec::new(),
            html_url: String::new(),
            published_at: None,
        }
    }

    fn desired(k8s: &str) -> Desired {
        let set = ReleaseSet {
            stack: StackId::new("openstack", "scs2").unwrap(),
            kubernetes: k8s.parse().unwrap(),
            published_at: None,
            node_image: crate::model::NodeImage {
                name: "img".into(),
                url: "https://x/img.qcow2".into(),
                sha256: "0".repeat(64),
                build_date: None,
            },
            components: BTreeMap::new(),
        };
        let rendered = FileTree::from([(
            "csctl.yaml".to_string(),
            format!("kubernetesVersion: {k8s}\n").into_bytes(),
        )]);
        Desired {
            stack: set.stack.clone(),
            minor: set.minor(),
            path: "stacks/1-34".into(),
            set,
            rendered,
            stepped_over: Vec::new(),
            beside: Default::default(),
            renderer: None,
        }
    }

    fn settings() -> Settings {
        Settings {
            mode: Mode::Direct,
            lock_path: "stackbot.lock".into(),
            now: "2026-05-01".parse().unwrap(),
            oci: None,
            bot_email: "stackbot@example.invalid".into(),
            compliance: Default::default(),
            gate: Default::default(),
        }
    }

    fn pkg(tree: &FileTree, v: &Versions) -> Result<FileTree, String> {
        Ok(FileTree::from([
            (
                "hashes.json".to_string(),
                crate::package::hashes(tree).to_json().into_bytes(),
            ),
            (
                "metadata.yaml".to_string(),
                v.cluster_stack.dot().into_bytes(),
            ),
        ]))
    }

    #[test]
    fn oci_tags_count_for_numbering_and_the_push_follows_the_forge_release() {
        let d = vec![desired("v1.34.7")];
        let obs = Observed {
            base_branch: "main".into(),
            base_head: Some("abc".into()),
            // The forge's numbers reach v3.
            index: ReleaseIndex::new(
                vec![rel(9, "openstack-scs2-1-34-v3", false)],
                Some(vec![
                    "openstack-scs2-1-34-v7".into(),
                    "openstack-scs2-1-33-v9".into(),
                    "latest".into(),
                ]),
            ),
            series: BTreeMap::from([(
                "openstack-scs2-1-34".to_string(),
                SeriesObserved {
                    base_tree: Some(FileTree::new()),
                    ..Default::default()
                },
            )]),
            ..Default::default()
        };
        let oci = OciPlanSettings {
            target: "registry.example/kaas/cluster-stacks".into(),
            created: None,
            only: false,
        };
        let oci_pkg = |tree: &FileTree, v: &Versions| -> Result<FileTree, String> {
            let mut f = pkg(tree, v)?;
            f.insert(
                "metadata.yaml".into(),
                format!(
                    "versions:\n    clusterStack: {}\n    kubernetes: v1.34.7\n",
                    v.cluster_stack.dot()
                )
                .into_bytes(),
            );
            Ok(f)
        };
        let with_oci = Settings {
            oci: Some(oci.clone()),
            ..settings()
        };
        let p = plan(&d, &obs, &with_oci, &oci_pkg).unwrap();
        let r = &p.releases[0];
        // Above the forge's v3 and the registry's v7.
        assert_eq!(r.tag, "openstack-scs2-1-34-v8");
        let kinds: Vec<_> = r
            .steps
            .iter()
            .map(|s| serde_json::to_value(s).unwrap()["action"].clone())
            .collect();
        // The draft (every asset) is the evidence that precedes the commit.
        assert_eq!(kinds, ["draft", "commit", "tag", "publish", "oci-push"]);
        let Some(Step::OciPush {
            manifest_digest, ..
        }) = r.steps.last()
        else {
            unreachable!()
        };
        let described = oci.describe(&r.tag, &r.asset_bytes).unwrap();
        assert_eq!(manifest_digest, &described.manifest_digest);

        // `publish: [oci]` alone: no forge release; the push is the publication and the
        // evidence, then the commit and the tag.
        let only = Settings {
            oci: Some(OciPlanSettings { only: true, ..oci }),
            ..settings()
        };
        let p = plan(&d, &obs, &only, &oci_pkg).unwrap();
        let kinds: Vec<_> = p.releases[0]
            .steps
            .iter()
            .map(|s| serde_json::to_value(s).unwrap()["action"].clone())
            .collect();
        assert_eq!(kinds, ["oci-push", "commit", "tag"]);
    }

    #[test]
    fn next_number_counts_drafts_and_the_plan_is_deterministic() {
        let d = vec![desired("v1.34.7")];
        let obs = Observed {
            base_branch: "main".into(),
            base_head: Some("abc".into()),
            index: ReleaseIndex::new(vec![rel(7, "openstack-scs2-1-34-v3", true)], None),
            series: BTreeMap::from([(
                "openstack-scs2-1-34".to_string(),
                SeriesObserved {
                    base_tree: Some(FileTree::new()),
                    ..Default::default()
                },
            )]),
            ..Default::default()
        };
        let a = plan(&d, &obs, &settings(), &pkg).unwrap();
        let b = plan(&d, &obs, &settings(), &pkg).unwrap();
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap()
        );
        let r = &a.releases[0];
        assert_eq!(r.tag, "openstack-scs2-1-34-v4");
        let names: Vec<_> = r.assets.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["SHA256SUMS", "hashes.json", "metadata.yaml"]);
        // The superseded draft v3 is cleaned after publishing.
        assert!(matches!(
            r.steps.last(),
            Some(Step::DeleteDraft { id: 7, .. })
        ));
        assert!(matches!(&r.steps[0], Step::Draft { .. }));
        assert!(
            matches!(&r.steps[1], Step::Commit { files, .. } if files.contains(&"stackbot.lock".to_string()))
        );
    }

    #[test]
    fn same_hash_as_the_latest_release_means_nothing_to_do() {
        let d = vec![desired("v1.34.7")];
        let latest = Latest {
            tag: "openstack-scs2-1-34-v2".into(),
            n: 2,
            hashes: Some(crate::package::hashes(&d[0].rendered)),
            metadata: None,
            kubernetes: None,
            created: None,
            set: None,
            lock: None,
        };
        let obs = Observed {
            index: ReleaseIndex::new(vec![rel(1, "openstack-scs2-1-34-v2", false)], None),
            series: BTreeMap::from([(
                "openstack-scs2-1-34".to_string(),
                SeriesObserved {
                    forge_latest: Some(latest),
                    ..Default::default()
                },
            )]),
            ..Default::default()
        };
        let p = plan(&d, &obs, &settings(), &pkg).unwrap();
        assert!(p.is_noop() && p.releases.is_empty());
        assert_eq!(
            p.skipped[0].reason,
            SkipReason::Unchanged {
                tag: "openstack-scs2-1-34-v2".into()
            }
        );
        // A Kubernetes patch changes the rendered tree, so it releases.
        let p = plan(&[desired("v1.34.8")], &obs, &settings(), &pkg).unwrap();
        assert_eq!(p.releases[0].tag, "openstack-scs2-1-34-v3");
    }

    #[test]
    fn notes_diff_against_the_previous_release_not_the_committed_lock() {
        let old = desired("v1.34.7");
        let new = desired("v1.34.8");
        // An interrupted run already committed the new set to `stackbot.lock` on main.
        let mut committed = Lock::default();
        committed.upsert(new.set.clone());
        let lock_text = committed.to_yaml().into_bytes();
        let previous = Latest {
            tag: "openstack-scs2-1-34-v2".into(),
            n: 2,
            hashes: Some(crate::package::hashes(&old.rendered)),
            metadata: None,
            kubernetes: None,
            created: None,
            set: Some(old.set.clone()),
            lock: None,
        };
        let observed = |base_lock: Option<Vec<u8>>| Observed {
            base_branch: "main".into(),
            base_head: Some("abc".into()),
            index: ReleaseIndex::new(vec![rel(1, "openstack-scs2-1-34-v2", false)], None),
            base_lock,
            series: BTreeMap::from([(
                "openstack-scs2-1-34".to_string(),
                SeriesObserved {
                    forge_latest: Some(previous.clone()),
                    base_tree: Some(FileTree::new()),
                    ..Default::default()
                },
            )]),
            ..Default::default()
        };
        let d = [new.clone()];
        let resumed = plan(&d, &observed(Some(lock_text)), &settings(), &pkg).unwrap();
        let fresh = plan(&d, &observed(None), &settings(), &pkg).unwrap();
        let notes = &resumed.releases[0].notes;
        assert!(notes.contains("**v1.34.8** (was v1.34.7)"), "{notes}");
        assert_eq!(notes, &fresh.releases[0].notes);
        // Without a previous release there is nothing to compare, whatever main holds.
        let mut first = observed(Some(committed.to_yaml().into_bytes()));
        first.index = ReleaseIndex::default();
        first
            .series
            .get_mut("openstack-scs2-1-34")
            .unwrap()
            .forge_latest = None;
        let p = plan(&d, &first, &settings(), &pkg).unwrap();
        assert!(
            !p.releases[0].notes.contains("unchanged"),
            "{}",
            p.releases[0].notes
        );
    }

    #[test]
    fn latest_goes_to_the_newest_minors_newest_release_never_to_an_older_minors_patch() {
        let latest_flags = |p: &Plan| -> Vec<(String, bool)> {
            p.releases
                .iter()
                .flat_map(|r| &r.steps)
                .filter_map(|s| match s {
                    Step::Publish { tag, latest } => Some((tag.clone(), *latest)),
                    _ => None,
                })
                .collect()
        };
        let mut d33 = desired("v1.33.10");
        d33.minor = "1.33".parse().unwrap();
        d33.set.kubernetes = "v1.33.10".parse().unwrap();
        let obs = |releases: Vec<ReleaseInfo>| Observed {
            base_branch: "main".into(),
            base_head: Some("abc".into()),
            index: ReleaseIndex::new(releases, None),
            ..Default::default()
        };
        // Both minors in one run: 1.34 is the Latest.
        let p = plan(
            &[d33.clone(), desired("v1.34.7")],
            &obs(vec![]),
            &settings(),
            &pkg,
        )
        .unwrap();
        assert_eq!(
            latest_flags(&p),
            [
                ("openstack-scs2-1-33-v1".to_string(), false),
                ("openstack-scs2-1-34-v1".to_string(), true)
            ]
        );
        // A patch of 1.33 after 1.34-v1 is out stays out of the badge.
        let p = plan(
            &[d33],
            &obs(vec![rel(5, "openstack-scs2-1-34-v1", false)]),
            &settings(),
            &pkg,
        )
        .unwrap();
        assert_eq!(
            latest_flags(&p),
            [("openstack-scs2-1-33-v1".to_string(), false)]
        );
        assert_eq!(
            crate::index::latest_of_repository([
                "openstack-scs2-1-34-v9",
                "openstack-scs2-1-35-v1"
            ]),
            Some("openstack-scs2-1-35-v1".to_string())
        );
    }

    #[test]
    fn a_draft_carrying_the_release_marker_is_finished_under_its_number() {
        let d = vec![desired("v1.34.8")];
        let hash = crate::package::hashes(&d[0].rendered).cluster_stack;
        let old = desired("v1.34.7");
        let latest = Latest {
            tag: "openstack-scs2-1-34-v1".into(),
            n: 1,
            hashes: Some(crate::package::hashes(&old.rendered)),
            metadata: None,
            kubernetes: None,
            created: None,
            set: Some(old.set.clone()),
            lock: None,
        };
        let observed = |draft_body: String| Observed {
            base_branch: "main".into(),
            base_head: Some("abc".into()),
            index: ReleaseIndex::new(
                vec![
                    rel(1, "openstack-scs2-1-34-v1", false),
                    ReleaseInfo {
                        body: draft_body,
                        ..rel(2, "openstack-scs2-1-34-v2", true)
                    },
                ],
                None,
            ),
            series: BTreeMap::from([(
                "openstack-scs2-1-34".to_string(),
                SeriesObserved {
                    forge_latest: Some(latest.clone()),
                    base_tree: Some(FileTree::new()),
                    ..Default::default()
                },
            )]),
            ..Default::default()
        };
        // A run stopped after creating the draft (before any asset): finished as v2.
        let ours = format!("notes\n{}\n", marker::line("openstack-scs2-1-34-v2", &hash));
        let p = plan(&d, &observed(ours), &settings(), &pkg).unwrap();
        let r = &p.releases[0];
        assert_eq!(
            (r.tag.as_str(), r.resumed),
            ("openstack-scs2-1-34-v2", true)
        );
        assert!(
            r.notes
                .ends_with(&format!("{}\n", marker::line(&r.tag, &hash)))
        );
        // A draft for other content (or by hand) only takes its number: v3, and it goes.
        let p = plan(&d, &observed("by hand".into()), &settings(), &pkg).unwrap();
        let r = &p.releases[0];
        assert_eq!(
            (r.tag.as_str(), r.resumed),
            ("openstack-scs2-1-34-v3", false)
        );
        assert!(matches!(
            r.steps.last(),
            Some(Step::DeleteDraft { id: 2, .. })
        ));
    }

    #[test]
    fn a_number_recorded_in_the_lock_is_above_every_release_and_a_package_error_is_input() {
        let d = vec![desired("v1.34.8")];
        let mut lock = Lock::default();
        lock.upsert(desired("v1.34.7").set);
        lock.record_release(&d[0].stack, d[0].minor, 5);
        let obs = Observed {
            base_branch: "main".into(),
            base_head: Some("abc".into()),
            base_lock: Some(lock.to_yaml().into_bytes()),
            index: ReleaseIndex::new(vec![rel(1, "openstack-scs2-1-34-v2", false)], None),
            series: BTreeMap::from([(
                "openstack-scs2-1-34".to_string(),
                SeriesObserved {
                    base_tree: Some(FileTree::new()),
                    base_released: Some(5),
                    ..Default::default()
                },
            )]),
            ..Default::default()
        };
        let p = plan(&d, &obs, &settings(), &pkg).unwrap();
        assert_eq!(p.releases[0].tag, "openstack-scs2-1-34-v6");
        let Some(Step::Commit { changes, .. }) = p.releases[0].steps.get(1) else {
            unreachable!()
        };
        let committed = Lock::parse(
            std::str::from_utf8(changes["stackbot.lock"].as_ref().unwrap()).unwrap(),
            "l".as_ref(),
        )
        .unwrap();
        assert_eq!(committed.released_as(&d[0].stack, d[0].minor), Some(6));
        // Stack content the packager refuses is the templates' or the set's fault: exit 2.
        let refuse = |_: &FileTree, _: &Versions| -> Result<FileTree, String> {
            Err("chart `x` is named for another minor".into())
        };
        let err = plan(&d, &obs, &settings(), &refuse).unwrap_err();
        assert!(err.is_invalid_input(), "{err}");
    }

    #[test]
    fn changes_write_new_files_and_delete_vanished_ones() {
        let base = FileTree::from([
            ("a".to_string(), b"1".to_vec()),
            ("gone".to_string(), b"x".to_vec()),
        ]);
        let want = FileTree::from([
            ("a".to_string(), b"1".to_vec()),
            ("b/c".to_string(), b"2".to_vec()),
        ]);
        let ch = tree_changes("p", &base, &want);
        assert_eq!(ch.len(), 2);
        assert_eq!(ch["p/b/c"], Some(b"2".to_vec()));
        assert_eq!(ch["p/gone"], None);
        let sums = String::from_utf8(sha256sums(&want)).unwrap();
        assert_eq!(sums.lines().count(), 2);
        assert!(sums.ends_with("  b/c\n"));
    }
}
