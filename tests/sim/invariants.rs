//! The promises of issue 12, checked after every run against what the world looked like right
//! before and right after it, and against the ledger of everything that ever happened. A
//! violation names the world, the seed, the run, the invariant and the evidence.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use super::forge::{Backend, PrState};
use super::ledger::{Ledger, Published};
use super::observe::{Observation, TenantObs};
use super::read::{self, Kube};
use super::tenants::{Minor, Proposal, Tenant};
use crate::support::fake_github::merge;

/// The promises, as issue 12 lists them, plus the two the simulator adds from its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Invariant {
    NoDowngrade,
    NumberNeverReused,
    NoRewriteOnBaseMove,
    DeclinedStaysClosed,
    MergesByContent,
    FollowEveryTarget,
    BoundedCost,
    TransientNotExit2,
    NoDuplicates,
    MergedGetsNext,
    UpstreamErrorExits1,
    GoneExits0,
    FailureExits1,
    TenantFailureExits3,
    EveryTarget,
    RunsTakeTurns,
    OnlyConfiguredMinors,
    ClusterOneMinorPerStep,
    ClusterWaitsForApproval,
    ClusterSupportedAtEndOfLife,
}

impl Invariant {
    pub const ALL: [Invariant; 20] = [
        Invariant::NoDowngrade,
        Invariant::NumberNeverReused,
        Invariant::NoRewriteOnBaseMove,
        Invariant::DeclinedStaysClosed,
        Invariant::MergesByContent,
        Invariant::FollowEveryTarget,
        Invariant::BoundedCost,
        Invariant::TransientNotExit2,
        Invariant::NoDuplicates,
        Invariant::MergedGetsNext,
        Invariant::UpstreamErrorExits1,
        Invariant::GoneExits0,
        Invariant::FailureExits1,
        Invariant::TenantFailureExits3,
        Invariant::EveryTarget,
        Invariant::RunsTakeTurns,
        Invariant::OnlyConfiguredMinors,
        Invariant::ClusterOneMinorPerStep,
        Invariant::ClusterWaitsForApproval,
        Invariant::ClusterSupportedAtEndOfLife,
    ];

    /// The invariant called `name` (its [`Invariant::name`]).
    pub fn by_name(name: &str) -> Option<Invariant> {
        Invariant::ALL.into_iter().find(|i| i.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Invariant::NoDowngrade => "no-downgrade",
            Invariant::NumberNeverReused => "number-never-reused",
            Invariant::NoRewriteOnBaseMove => "no-rewrite-on-base-move",
            Invariant::DeclinedStaysClosed => "declined-stays-closed",
            Invariant::MergesByContent => "merges-recognised-by-content",
            Invariant::FollowEveryTarget => "tenants-follow-every-target",
            Invariant::BoundedCost => "cost-bounded-by-series-and-tenants",
            Invariant::TransientNotExit2 => "transient-never-exit-2",
            Invariant::NoDuplicates => "no-duplicates",
            Invariant::MergedGetsNext => "merged-tenant-gets-next-release",
            Invariant::UpstreamErrorExits1 => "upstream-error-exits-1",
            Invariant::GoneExits0 => "gone-exits-0-with-a-warning",
            Invariant::FailureExits1 => "failure-exits-1",
            Invariant::TenantFailureExits3 => "tenant-failure-exits-3",
            Invariant::EveryTarget => "every-target-gets-the-latest-release",
            Invariant::RunsTakeTurns => "overlapping-runs-take-turns",
            Invariant::OnlyConfiguredMinors => "only-configured-minors-released",
            Invariant::ClusterOneMinorPerStep => "cluster-upgrade-one-minor-per-step",
            Invariant::ClusterWaitsForApproval => "cluster-upgrade-waits-for-approval",
            Invariant::ClusterSupportedAtEndOfLife => {
                "clusters-on-a-supported-minor-at-end-of-life"
            }
        }
    }

    /// The promise in words (docs/reliability.md).
    pub fn promise(self) -> &'static str {
        match self {
            Invariant::NoDowngrade => {
                "never a release whose Kubernetes patch or component version is older than the latest published release of its series"
            }
            Invariant::NumberNeverReused => {
                "a version number once published (forge or OCI) is never issued again, even after its release and tag were deleted"
            }
            Invariant::NoRewriteOnBaseMove => {
                "a tenant branch is rewritten only when its desired content changes or it conflicts with the base, never because the base moved"
            }
            Invariant::DeclinedStaysClosed => {
                "a pull request closed by a human is not reopened for the same content"
            }
            Invariant::MergesByContent => {
                "merge-commit, squash and rebase merges are recognised by content: a base that holds the desired files is done"
            }
            Invariant::FollowEveryTarget => "tenants follow releases from every publish target",
            Invariant::BoundedCost => {
                "the request cost of a run is bounded by the number of series and tenants, not by history"
            }
            Invariant::TransientNotExit2 => {
                "transient upstream failures never exit 2 (every input of the simulation is valid)"
            }
            Invariant::NoDuplicates => "no duplicate release, tag, pull request or comment",
            Invariant::MergedGetsNext => {
                "a tenant whose pull request was merged gets the next release"
            }
            Invariant::UpstreamErrorExits1 => {
                "a series kept at its latest release by an upstream error exits 1 and is `transient`, whichever patch the error belonged to"
            }
            Invariant::GoneExits0 => {
                "a series kept at its latest release because something that existed is gone (a 404, a stale index) is no failure: exit 0 with a warning"
            }
            Invariant::FailureExits1 => {
                "a series that could not go on (`failed`) or a run the forge stopped exits 1; a run exits 1 only for such a failure or an upstream error"
            }
            Invariant::TenantFailureExits3 => {
                "failed tenants alone exit 3, after every release-stage failure (1); a blocked tenant is no failure"
            }
            Invariant::EveryTarget => {
                "with `publish: [forge, oci]` the latest release of each series is on both targets after a run without forge faults (a run stopped between them leaves the next to finish)"
            }
            Invariant::RunsTakeTurns => {
                "two runs started at once on the local forge take turns through the run lock; after a first run that finished cleanly the second writes nothing and exits as the first"
            }
            Invariant::OnlyConfiguredMinors => {
                "no new release of a minor past its end of life (with `minors: supported`, by the runner's date) or left out of an explicit `minors:` list; its releases stay, tenants listing it keep them"
            }
            Invariant::ClusterOneMinorPerStep => {
                "an upgrade pull request moves one Cluster of a tenant that opted in from the minor its `main` runs to the next one (class and Kubernetes version together, the ClusterStack listing the release), one open step per Cluster, never stacked on an unmerged one"
            }
            Invariant::ClusterWaitsForApproval => {
                "with `clusters: approval` no upgrade pull request opens before a person ticked its step on the dashboard"
            }
            Invariant::ClusterSupportedAtEndOfLife => {
                "a Cluster of a tenant that opted in runs a supported minor when its old minor reaches end of life, unless no newer minor has a release, its team declined the step, or the bot's first run after the step was due left the team less than its longest delay"
            }
        }
    }

    /// The situation whose occurrence the coverage column counts: a run in which the promise
    /// could have been broken. A promise whose situation never arises is not tested, however
    /// many runs pass.
    pub fn situation(self) -> &'static str {
        match self {
            Invariant::NoDowngrade => {
                "a release published in a series with a live release before it (both read from their own bytes)"
            }
            Invariant::NumberNeverReused => {
                "a release published in a series one of whose numbers a human withdrew"
            }
            Invariant::NoRewriteOnBaseMove => {
                "a bot branch that existed before the run while `main` had commits the branch lacks"
            }
            Invariant::DeclinedStaysClosed => {
                "a tenant with a declined pull request and none open before the run"
            }
            Invariant::MergesByContent => {
                "the first clean run after a human merged a bot pull request (any button)"
            }
            Invariant::FollowEveryTarget => {
                "a tenant behind the newest live release, never merged before (or behind an OCI-only release)"
            }
            Invariant::BoundedCost => "a run without forge faults after a release history exists",
            Invariant::TransientNotExit2 => "a run with an injected fault or that stopped",
            Invariant::NoDuplicates => {
                "the first clean run after a run a forge fault interrupted (its work resumed)"
            }
            Invariant::MergedGetsNext => {
                "a tenant behind the newest live release after one of its pull requests was merged"
            }
            Invariant::UpstreamErrorExits1 => {
                "a series kept back while a CHECKSUM answered 5xx or timed out"
            }
            Invariant::GoneExits0 => "a series kept back while only something was gone",
            Invariant::FailureExits1 => "a run that listed a failure or stopped",
            Invariant::TenantFailureExits3 => "a run with a failed or blocked tenant",
            Invariant::EveryTarget => {
                "a clean run publishing to the forge and OCI, with a live release"
            }
            Invariant::RunsTakeTurns => {
                "a second run started at the same moment as the scheduled one"
            }
            Invariant::OnlyConfiguredMinors => {
                "a run while a minor with releases is excluded (past end of life, or not in the list)"
            }
            Invariant::ClusterOneMinorPerStep => {
                "a clean run after which an upgrade pull request is open"
            }
            Invariant::ClusterWaitsForApproval => {
                "a run while a step of an `approval` tenant was listed on the dashboard and not ticked"
            }
            Invariant::ClusterSupportedAtEndOfLife => {
                "a run after the end of life of a minor an opted-in Cluster ran on"
            }
        }
    }

    /// Where the rule lives in `src/`: the one place a fix belongs.
    pub fn home(self) -> &'static str {
        match self {
            Invariant::NoDowngrade | Invariant::NumberNeverReused => "`plan/series.rs`",
            Invariant::NoRewriteOnBaseMove
            | Invariant::DeclinedStaysClosed
            | Invariant::MergesByContent
            | Invariant::FollowEveryTarget
            | Invariant::MergedGetsNext => "`tenants/plan.rs`",
            Invariant::BoundedCost => "`observe.rs`, `tenants/apply.rs`",
            Invariant::TransientNotExit2 => "`pipeline::exit::class_of_chain`",
            Invariant::UpstreamErrorExits1 | Invariant::GoneExits0 => {
                "`resolve::HeldBack`, `pipeline::exit`"
            }
            Invariant::FailureExits1 | Invariant::TenantFailureExits3 => "`pipeline::exit`",
            Invariant::NoDuplicates => "`plan/series.rs`, `apply.rs`, `tenants/apply.rs`",
            Invariant::EveryTarget => "`plan/mod.rs`",
            Invariant::RunsTakeTurns => "`forge::local::LocalForge::lock_run`",
            Invariant::OnlyConfiguredMinors => "`resolve::tracked`",
            Invariant::ClusterOneMinorPerStep
            | Invariant::ClusterWaitsForApproval
            | Invariant::ClusterSupportedAtEndOfLife => "`tenants/upgrade.rs`",
        }
    }
}

/// One broken promise.
#[derive(Debug, Clone)]
pub struct Violation {
    pub world: String,
    pub seed: u64,
    /// The world's run budget (`SIM_RUNS`): with the seed, what reproduces the run.
    pub budget: usize,
    pub run: usize,
    pub at: DateTime<Utc>,
    pub invariant: Invariant,
    /// What it is about (a tag, a tenant, the run): repeated violations about one subject are
    /// one finding.
    pub subject: String,
    pub evidence: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "[{} SIM_SEED={} SIM_RUNS={} run {} at {}] {}: {}",
            self.world,
            self.seed,
            self.budget,
            self.run,
            self.at.format("%Y-%m-%d %H:%M"),
            self.invariant.name(),
            self.evidence
        )
    }
}

/// What a run was, for the checks.
pub struct RunFacts<'a> {
    pub world: &'a str,
    pub seed: u64,
    pub budget: usize,
    pub run: usize,
    pub at: DateTime<Utc>,
    /// The exit code users see (`stackbot::pipeline::exit::of_release`, as the command line).
    pub exit: i32,
    pub error: Option<&'a str>,
    /// The pipeline returned (its tenant stage ran); otherwise it stopped with `error`.
    pub returned: bool,
    /// Series the run kept at their latest release: series, `transient`, cause.
    pub degraded: Vec<(String, bool, Vec<String>)>,
    /// What the run listed under `failed` (`what: reason`).
    pub failed: Vec<String>,
    /// The run's warnings.
    pub warnings: Vec<String>,
    /// An upstream error on a node image's `CHECKSUM` was injected (5xx, no answer in time):
    /// the only injected error that can keep a series at its latest release.
    pub checksum_error: bool,
    /// Something that existed was gone this run (a `CHECKSUM` 404, a stale Helm index), and
    /// no upstream error was injected.
    pub gone: bool,
    /// The invariants whose guarded situation occurred in this run (coverage).
    pub occurred: std::cell::RefCell<BTreeSet<Invariant>>,
    /// No forge fault was injected (a flaky forge or a crash may leave work for the next run).
    pub forge_clean: bool,
    /// The previous run had a forge fault: this run resumes its interrupted work.
    pub resumes: bool,
    /// Labels of the faults injected.
    pub faults: &'a [String],
    /// Tenant → outcome (`blocked`, `failed`, …) reported by the run.
    pub tenant_outcomes: BTreeMap<String, String>,
    /// Forge calls of the bot (reads + writes) and, on GitHub, HTTP requests.
    pub forge_calls: u64,
    pub http_requests: Option<usize>,
    pub series: usize,
    pub tenants: usize,
    /// Tags the run created or re-created.
    pub new_tags: usize,
    /// Releases published before the run.
    pub history: usize,
    /// OCI is the only publish target (tenants must follow it).
    pub oci_only: bool,
    /// The forge and OCI are both publish targets.
    pub both_targets: bool,
    /// A second run started at the same moment (this run's facts are the scheduled one's).
    pub overlap: Option<Overlap>,
    /// Minors the run's configuration excludes, with why (end of life, not in the list).
    pub excluded: BTreeMap<u64, String>,
}

impl RunFacts<'_> {
    /// The run ran its tenant stage to the end without an injected forge fault.
    pub(super) fn tenants_clean(&self) -> bool {
        self.forge_clean && self.returned
    }

    /// The situation `invariant` guards occurred in this run.
    pub(super) fn occurred(&self, invariant: Invariant) {
        self.occurred.borrow_mut().insert(invariant);
    }
}

pub(super) struct Out<'a> {
    pub(super) f: &'a RunFacts<'a>,
    pub(super) v: Vec<Violation>,
}

impl Out<'_> {
    pub(super) fn push(&mut self, invariant: Invariant, subject: &str, evidence: String) {
        self.v.push(Violation {
            world: self.f.world.to_string(),
            seed: self.f.seed,
            budget: self.f.budget,
            run: self.f.run,
            at: self.f.at,
            invariant,
            subject: subject.to_string(),
            evidence,
        });
    }

    fn faults(&self) -> String {
        if self.f.faults.is_empty() {
            "no fault injected".into()
        } else {
            format!("faults this run: {}", self.f.faults.join(", "))
        }
    }
}

/// What a published release shipped, read from its own bytes as CSO would get them: the
/// Kubernetes version of its `metadata.yaml`, the charts of its cluster-addon archive, and the
/// sha256 of its `hashes.json` (its content identity). `files` are the release's files (forge
/// assets or the OCI artifact's layers) by name.
pub fn read_published(
    files: &BTreeMap<String, Vec<u8>>,
) -> (Option<Kube>, BTreeMap<String, semver::Version>, String) {
    use sha2::Digest as _;
    let content = files
        .get("hashes.json")
        .map(|h| hex::encode(sha2::Sha256::digest(h)))
        .unwrap_or_else(|| "(no hashes.json)".to_string());
    let kubernetes = files
        .get("metadata.yaml")
        .and_then(|m| read::metadata_kubernetes(m));
    let components = read::addon_archive(files.keys())
        .map(|a| read::addon_charts(&files[a]))
        .unwrap_or_default();
    (kubernetes, components, content)
}

/// How two releases of one number differ, in words.
fn changed(new: &Published, old: &Published) -> String {
    if new.describe() == old.describe() {
        format!(
            "same versions ({}), different files: hashes.json {} instead of {}",
            new.describe(),
            &new.content[..new.content.len().min(12)],
            &old.content[..old.content.len().min(12)]
        )
    } else {
        format!("{} instead of {}", new.describe(), old.describe())
    }
}

/// Compare a new release with the latest one of its series before it.
fn downgrade(new: &Published, old: &Published) -> Option<String> {
    let mut what = Vec::new();
    if let (Some(n), Some(o)) = (new.kubernetes, old.kubernetes)
        && n < o
    {
        what.push(format!("Kubernetes {n} < {o}"));
    }
    for (chart, v) in &new.components {
        if let Some(o) = old.components.get(chart)
            && v < o
        {
            what.push(format!("{chart} {v} < {o}"));
        }
    }
    (!what.is_empty()).then(|| what.join(", "))
}

/// Record what the run published and check numbering and downgrades. `new` are the tags that
/// appeared (forge releases or OCI tags), with what they contain.
pub fn check_publications(
    f: &RunFacts,
    ledger: &mut Ledger,
    new: Vec<Published>,
) -> Vec<Violation> {
    let mut out = Out { f, v: Vec::new() };
    let mut new = new;
    new.sort_by_key(|p| (p.series.clone(), p.n));
    for p in new {
        match ledger.published.get_mut(&p.tag) {
            Some(old) => {
                if let Some(w) = old.withdrawn
                    && !old.reissue_reported
                {
                    old.reissue_reported = true;
                    let content = if old.content == p.content {
                        "the withdrawn content again".to_string()
                    } else {
                        format!("different content ({})", changed(&p, old))
                    };
                    out.push(
                        Invariant::NumberNeverReused,
                        &p.tag,
                        format!(
                            "{} was published in run {} and withdrawn by a human after run {} (release deleted{}); it is published again with {content}",
                            p.tag,
                            old.run,
                            w.after_run,
                            if w.tag_deleted { ", tag deleted" } else { ", tag kept" }
                        ),
                    );
                } else if old.withdrawn.is_none() && old.content != p.content {
                    out.push(
                        Invariant::NumberNeverReused,
                        &p.tag,
                        format!(
                            "{} is published with different content than in run {} ({})",
                            p.tag,
                            old.run,
                            changed(&p, old)
                        ),
                    );
                    old.content = p.content.clone();
                }
                old.targets.extend(p.targets.iter().copied());
            }
            None => {
                if ledger
                    .published
                    .values()
                    .any(|o| o.series == p.series && o.withdrawn.is_some())
                {
                    f.occurred(Invariant::NumberNeverReused);
                }
                let complete = |x: &Published| x.kubernetes.is_some() && !x.components.is_empty();
                if let Some(prev) = ledger.latest(&p.series)
                    && prev.n < p.n
                    && complete(prev)
                    && complete(&p)
                {
                    f.occurred(Invariant::NoDowngrade);
                }
                if let Some(prev) = ledger.latest(&p.series)
                    && prev.n < p.n
                    && let Some(d) = downgrade(&p, prev)
                {
                    out.push(
                        Invariant::NoDowngrade,
                        &p.tag,
                        format!(
                            "{} ({}) is older than {} ({}): {d}; {}",
                            p.tag,
                            p.describe(),
                            prev.tag,
                            prev.describe(),
                            out.faults()
                        ),
                    );
                }
                ledger.published.insert(p.tag.clone(), p);
            }
        }
    }
    out.v
}

/// Tags a human deleted that the bot created again.
pub fn check_tags(
    f: &RunFacts,
    ledger: &mut Ledger,
    before: &Observation,
    after: &Observation,
) -> Vec<Violation> {
    let mut out = Out { f, v: Vec::new() };
    for tag in after.tags.keys() {
        if before.tags.contains_key(tag) {
            continue;
        }
        if let Some(p) = ledger.published.get_mut(tag)
            && let Some(w) = p.withdrawn
            && w.tag_deleted
            && !p.reissue_reported
        {
            p.reissue_reported = true;
            out.push(
                Invariant::NumberNeverReused,
                tag,
                format!(
                    "tag {tag} (published in run {}, release and tag deleted by a human after run {}) was created again",
                    p.run, w.after_run
                ),
            );
        }
    }
    out.v
}

/// Exit 2 is for input a human must fix; the simulation's input is always valid.
/// The exit code users see, against every promise docs/reliability.md and docs/operations.md
/// make about it, judged from what happened (the faults injected, whether the pipeline
/// returned) and what the run reported.
pub fn check_exit(f: &RunFacts) -> Vec<Violation> {
    let mut out = Out { f, v: Vec::new() };
    exit_never_2(&mut out);
    exit_of_a_series_kept_back(&mut out);
    exit_of_a_failure(&mut out);
    exit_of_failed_tenants(&mut out);
    out.v
}

/// Exit 2 with valid input (the simulation's input always is).
fn exit_never_2(out: &mut Out) {
    let f = out.f;
    // Every input of the simulation is valid: whatever went wrong is the world's, never 2.
    if !f.faults.is_empty() || !f.returned {
        f.occurred(Invariant::TransientNotExit2);
    }
    if f.exit == 2 {
        out.push(
            Invariant::TransientNotExit2,
            "exit 2",
            format!(
                "the run exited 2 (\"fix the input\") with valid input: {}; {}",
                f.error.unwrap_or("?"),
                out.faults()
            ),
        );
    }
}

/// Exit 1 (transient) for a series kept back by an upstream error; 0 with a warning for one
/// kept back by something gone.
fn exit_of_a_series_kept_back(out: &mut Out) {
    let f = out.f;
    let transient = f.degraded.iter().any(|(_, t, _)| *t);
    let degraded = || {
        f.degraded
            .iter()
            .map(|(s, t, c)| format!("{s} (transient: {t}; cause: {})", c.join("; ")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // A series kept back by an upstream error: 1 and transient; by something gone: 0 and a
    // warning.
    if f.returned && !f.degraded.is_empty() && f.checksum_error {
        f.occurred(Invariant::UpstreamErrorExits1);
        if f.exit != 1 || !transient {
            out.push(
                Invariant::UpstreamErrorExits1,
                "upstream error",
                format!(
                    "exit {} after an upstream error kept a series back: {}; {}",
                    f.exit,
                    degraded(),
                    out.faults()
                ),
            );
        }
    } else if f.returned && !f.degraded.is_empty() && f.gone {
        f.occurred(Invariant::GoneExits0);
        let unwarned: Vec<&String> = f
            .degraded
            .iter()
            .map(|(s, _, _)| s)
            .filter(|s| {
                !f.warnings
                    .iter()
                    .any(|w| w.starts_with(&format!("degraded {s}:")))
            })
            .collect();
        if transient || (f.exit == 1 && f.failed.is_empty()) || !unwarned.is_empty() {
            out.push(
                Invariant::GoneExits0,
                "gone",
                format!(
                    "exit {} after something gone kept a series back (expected 0 with a warning; no warning for {unwarned:?}): {}; {}",
                    f.exit,
                    degraded(),
                    out.faults()
                ),
            );
        }
    }
}

/// Exit 1 for a series that could not go on or a stopped run, and never 1 without either.
fn exit_of_a_failure(out: &mut Out) {
    let f = out.f;
    let transient = f.degraded.iter().any(|(_, t, _)| *t);
    // A series that could not go on, or a stopped run: 1 (2 is judged above).
    if !f.returned || !f.failed.is_empty() {
        f.occurred(Invariant::FailureExits1);
        if f.exit != 1 && f.exit != 2 {
            out.push(
                Invariant::FailureExits1,
                "failed",
                format!(
                    "exit {} although {}; {}",
                    f.exit,
                    if f.returned {
                        format!("the run listed under `failed`: {}", f.failed.join("; "))
                    } else {
                        format!("the run stopped: {}", f.error.unwrap_or("?"))
                    },
                    out.faults()
                ),
            );
        }
    } else if f.exit == 1 && !transient {
        out.push(
            Invariant::FailureExits1,
            "exit 1 without a failure",
            format!(
                "exit 1 with nothing under `failed` and no series kept back by an upstream error; {}",
                out.faults()
            ),
        );
    }
}

/// Exit 3 for failed tenants (unless the release stage already makes it 1).
fn exit_of_failed_tenants(out: &mut Out) {
    let f = out.f;
    let transient = f.degraded.iter().any(|(_, t, _)| *t);
    let tenant_failed = f.tenant_outcomes.values().any(|o| o == "failed");
    // Failed tenants: 3, unless the release stage already makes it 1. Blocked is no failure.
    let blocked = f.tenant_outcomes.values().any(|o| o == "blocked");
    if f.returned && (tenant_failed || blocked) {
        f.occurred(Invariant::TenantFailureExits3);
        let want = if !f.failed.is_empty() || transient {
            1
        } else if tenant_failed {
            3
        } else {
            0
        };
        if f.exit != want {
            out.push(
                Invariant::TenantFailureExits3,
                "tenants",
                format!(
                    "exit {} (expected {want}) with tenant outcomes {:?}, failed {:?}",
                    f.exit, f.tenant_outcomes, f.failed
                ),
            );
        }
    } else if f.returned && f.exit == 3 {
        out.push(
            Invariant::TenantFailureExits3,
            "exit 3 without a failed tenant",
            format!("exit 3 with tenant outcomes {:?}", f.tenant_outcomes),
        );
    }
}

/// Cost bound: what a run that releases every series and updates every tenant may cost,
/// whatever happened before — a full release of a series (its hashes, metadata, base tree of
/// about 40 files, commit, tag, draft, assets, publish) is under 70 forge calls, a tenant
/// under 25. Nothing here grows with the number of releases in the history, so a run that
/// walks history (every tag, every tree) breaks it within months.
pub fn cost_bound(series: usize, tenants: usize) -> u64 {
    (20 + 70 * series + 25 * tenants) as u64
}

pub fn check_cost(f: &RunFacts) -> Vec<Violation> {
    let mut out = Out { f, v: Vec::new() };
    // A flaky forge costs retries; a crash stops early: only clean runs are measured.
    if !f.forge_clean {
        return out.v;
    }
    if f.history > 0 {
        f.occurred(Invariant::BoundedCost);
    }
    let bound = cost_bound(f.series, f.tenants);
    let http_bound = bound * 2;
    if f.forge_calls > bound {
        out.push(
            Invariant::BoundedCost,
            "forge calls",
            format!(
                "{} forge calls for {} series and {} tenants (bound {bound}; {} releases in the history, {} tags made by the run)",
                f.forge_calls, f.series, f.tenants, f.history, f.new_tags
            ),
        );
    } else if let Some(h) = f.http_requests
        && h as u64 > http_bound
    {
        out.push(
            Invariant::BoundedCost,
            "HTTP requests",
            format!(
                "{h} HTTP requests for {} series and {} tenants (bound {http_bound}; {} releases in the history, {} tags made by the run)",
                f.series, f.tenants, f.history, f.new_tags
            ),
        );
    }
    out.v
}

/// No duplicate release, tag, pull request or comment (after a run without forge faults).
pub fn check_duplicates(f: &RunFacts, ledger: &Ledger, after: &Observation) -> Vec<Violation> {
    let mut out = Out { f, v: Vec::new() };
    if !f.tenants_clean() {
        return out.v;
    }
    if f.resumes {
        f.occurred(Invariant::NoDuplicates);
    }
    let mut by_tag: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for r in &after.releases {
        let e = by_tag.entry(r.tag.as_str()).or_default();
        if r.draft {
            e.1 += 1;
        } else {
            e.0 += 1;
        }
    }
    for (tag, (published, drafts)) in by_tag {
        if published > 1 || (published == 1 && drafts > 0) {
            out.push(
                Invariant::NoDuplicates,
                tag,
                format!("{tag}: {published} published release(s) and {drafts} draft(s)"),
            );
        }
    }
    // Two consecutive live releases of a series with the same content.
    let mut series: BTreeMap<&str, Vec<&Published>> = BTreeMap::new();
    for p in ledger.published.values().filter(|p| p.withdrawn.is_none()) {
        series.entry(p.series.as_str()).or_default().push(p);
    }
    for list in series.values_mut() {
        list.sort_by_key(|p| p.n);
        for w in list.windows(2) {
            if w[0].content == w[1].content && w[1].run == f.run {
                out.push(
                    Invariant::NoDuplicates,
                    &w[1].tag,
                    format!(
                        "{} has the same content as {} ({})",
                        w[1].tag,
                        w[0].tag,
                        w[1].describe()
                    ),
                );
            }
        }
    }
    for (name, t) in &after.tenants {
        let open = t.pulls.iter().filter(|p| p.state == PrState::Open).count();
        if open > 1 {
            out.push(
                Invariant::NoDuplicates,
                name,
                format!("{name}: {open} open pull requests from the bot branch"),
            );
        }
        for (n, comments) in &t.comments {
            let mut seen: BTreeSet<&str> = BTreeSet::new();
            let mut markers: BTreeSet<&str> = BTreeSet::new();
            for (_, body) in comments {
                if !seen.insert(body.as_str()) {
                    out.push(
                        Invariant::NoDuplicates,
                        name,
                        format!("{name} #{n}: the same comment twice: {}", first_line(body)),
                    );
                }
                if let Some(m) = marker(body)
                    && !markers.insert(m)
                {
                    out.push(
                        Invariant::NoDuplicates,
                        name,
                        format!("{name} #{n}: two comments with the marker {m}"),
                    );
                }
            }
        }
    }
    out.v
}

fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| !l.trim().is_empty() && !l.starts_with("<!--"))
        .unwrap_or("")
        .chars()
        .take(100)
        .collect()
}

fn marker(body: &str) -> Option<&str> {
    let start = body.find("<!-- stackbot:")?;
    let end = body[start..].find("-->")? + start + 3;
    Some(&body[start..end])
}

/// The newest live release number per minor of the stack, and whether it exists only in OCI.
pub fn available(ledger: &Ledger) -> BTreeMap<Minor, (u64, String, bool)> {
    let mut out = BTreeMap::new();
    for p in ledger.latest_per_series().values() {
        if let Some((_, minor, _)) = read::tag(&p.tag) {
            out.insert(minor, (p.n, p.tag.clone(), !p.targets.contains("forge")));
        }
    }
    out
}

/// What a tenant's main should list to be current with `avail`: per followed minor the newest
/// number, the next minors (unless the tenant ignores minors), and its Clusters' classes.
pub fn required(
    t: &Tenant,
    main: &Proposal,
    avail: &BTreeMap<Minor, (u64, String, bool)>,
) -> Proposal {
    let mut want = Proposal::default();
    for m in main.stacks.keys() {
        if let Some((n, _, _)) = avail.get(m) {
            want.stacks.insert(*m, vec![*n]);
        }
    }
    if !t.ignore_minors
        && let Some(top) = main.stacks.keys().max()
    {
        for (m, (n, _, _)) in avail.range(*top..).filter(|(m, _)| *m > top) {
            want.stacks.insert(*m, vec![*n]);
        }
    }
    for (k, class) in &main.clusters {
        if let Some((minor, have)) = Proposal::cluster_release(class)
            && let Some((n, tag, _)) = avail.get(&minor)
            && *n > have
        {
            want.clusters.insert(k.clone(), tag.clone());
        }
    }
    want
}

/// Tenant-side promises, per tenant: no force-push without reason, declined stays closed,
/// merges recognised, and every tenant offered the newest releases.
pub fn check_tenants(
    f: &RunFacts,
    ledger: &Ledger,
    b: &dyn Backend,
    tenants: &[&Tenant],
    before: &Observation,
    after: &Observation,
) -> Vec<Violation> {
    let mut out = Out { f, v: Vec::new() };
    let avail = available(ledger);
    for t in tenants {
        let (Some(pre), Some(post)) = (before.tenants.get(t.name), after.tenants.get(t.name))
        else {
            continue;
        };
        rewrites(&mut out, b, t, pre, post);
        reopened(&mut out, ledger, t, pre, post);
        if f.tenants_clean() && f.tenant_outcomes.get(t.name).is_none_or(|o| o != "failed") {
            merged_and_following(&mut out, ledger, t, post, &avail);
        }
    }
    out.v
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(8)]
}

fn rewrites(out: &mut Out, b: &dyn Backend, t: &Tenant, pre: &TenantObs, post: &TenantObs) {
    let (Some(h0), Some(h1)) = (&pre.branch, &post.branch) else {
        return;
    };
    if !b.is_ancestor(&t.repo, &post.main, h0) {
        out.f.occurred(Invariant::NoRewriteOnBaseMove);
    }
    if h0 == h1 || b.is_ancestor(&t.repo, h0, h1) {
        return; // untouched, or extended (never a rewrite)
    }
    let (p0, p1) = (pre.branch_proposal(), post.branch_proposal());
    if p0 != p1 {
        return; // the desired content changed
    }
    // Same content: only a conflict with the base justifies rewriting.
    let Some(base) = b.merge_base(&t.repo, h0, &post.main) else {
        return;
    };
    let at_base = b.files_at(&t.repo, &base);
    let (base_managed, old_managed) = (t.managed(&at_base), t.managed(&b.files_at(&t.repo, h0)));
    if merge::merge_trees(&base_managed, &old_managed, &post.main_files).is_err() {
        return;
    }
    // The desired content is the files the bot edits, as the base has them plus its edits: a
    // base commit that changes one of those files changes the desired content (the bot then
    // rebuilds the branch from the new file; docs/reliability.md). Only a move of the base
    // elsewhere must leave the branch alone.
    let edited: BTreeSet<&String> = old_managed
        .keys()
        .chain(base_managed.keys())
        .filter(|p| old_managed.get(*p) != base_managed.get(*p))
        .collect();
    if edited
        .iter()
        .any(|p| post.main_files.get(*p) != base_managed.get(*p))
    {
        return;
    }
    let now = b.files_at(&t.repo, &post.main);
    let changed: Vec<&String> = now
        .keys()
        .chain(at_base.keys())
        .filter(|p| now.get(*p) != at_base.get(*p))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let moved = if changed.is_empty() {
        "main did not change since the branch was made".to_string()
    } else {
        format!(
            "since the branch was made, main changed {}",
            changed
                .iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    out.push(
        Invariant::NoRewriteOnBaseMove,
        t.name,
        format!(
            "{}: {} rewritten {} → {} with the same content ({}); {moved}, and the old branch merges into main without conflict",
            t.name,
            super::tenants::BRANCH,
            short(h0),
            short(h1),
            p1.map(|p| p.describe()).unwrap_or_default()
        ),
    );
}

fn reopened(out: &mut Out, ledger: &Ledger, t: &Tenant, pre: &TenantObs, post: &TenantObs) {
    let was_open: BTreeSet<u64> = pre
        .pulls
        .iter()
        .filter(|p| p.state == PrState::Open)
        .map(|p| p.number)
        .collect();
    // Guarded: a person declined a pull request of this tenant, and the bot was free to open
    // one (none was open before the run).
    if was_open.is_empty() && ledger.declined.iter().any(|d| d.tenant == t.name) {
        out.f.occurred(Invariant::DeclinedStaysClosed);
    }
    let Some(p) = post.open_pull() else { return };
    if was_open.contains(&p.number) {
        return;
    }
    let Some(now) = post.branch_proposal() else {
        return;
    };
    if let Some(d) = ledger
        .declined
        .iter()
        .rev()
        .find(|d| d.tenant == t.name && d.proposal == now)
    {
        out.push(
            Invariant::DeclinedStaysClosed,
            t.name,
            format!(
                "{}: #{} opened for {} — the content of #{} that a human {} after run {}",
                t.name,
                p.number,
                now.describe(),
                d.pull,
                d.how,
                d.after_run
            ),
        );
    }
}

fn merged_and_following(
    out: &mut Out,
    ledger: &Ledger,
    t: &Tenant,
    post: &TenantObs,
    avail: &BTreeMap<Minor, (u64, String, bool)>,
) {
    let main = post.main_proposal();
    let want = required(t, &main, avail);
    let outcome = out
        .f
        .tenant_outcomes
        .get(t.name)
        .cloned()
        .unwrap_or_default();
    let open = post.open_pull();
    let behind = !main.covers(&want);
    if ledger
        .last_merge(t.name)
        .is_some_and(|m| m.after_run + 1 == out.f.run)
    {
        out.f.occurred(Invariant::MergesByContent);
    }
    let oci_only = want
        .stacks
        .keys()
        .any(|m| avail.get(m).is_some_and(|a| a.2));
    if behind {
        out.f
            .occurred(if oci_only || ledger.last_merge(t.name).is_none() {
                Invariant::FollowEveryTarget
            } else {
                Invariant::MergedGetsNext
            });
    }
    if !behind {
        reopened_what_main_has(out, ledger, t, post, &main);
        return;
    }
    if let Some(p) = open
        && post.branch_proposal().is_some_and(|bp| bp.covers(&want))
    {
        let _ = p;
        return; // offered
    }
    if not_offered_for_a_reason(ledger, t, post, &main, &want) {
        return;
    }
    let evidence = not_offered_evidence(t, post, &main, &want, &outcome);
    if oci_only {
        out.push(
            Invariant::FollowEveryTarget,
            t.name,
            format!("{evidence} (published only to OCI)"),
        );
    } else if let Some(m) = ledger.last_merge(t.name) {
        out.push(
            Invariant::MergedGetsNext,
            t.name,
            format!(
                "{evidence}; last merge: {:?} of #{} after run {}, branch {}",
                m.kind,
                m.pull,
                m.after_run,
                if m.branch_kept { "kept" } else { "deleted" }
            ),
        );
    } else {
        out.push(Invariant::FollowEveryTarget, t.name, evidence);
    }
}

/// Up to date: a new pull request for what main already has is a merge not recognised.
fn reopened_what_main_has(
    out: &mut Out,
    ledger: &Ledger,
    t: &Tenant,
    post: &TenantObs,
    main: &Proposal,
) {
    let open = post.open_pull();
    // Up to date: a new pull request for what main already has is a merge not recognised.
    if let Some(p) = open
        && let Some(bp) = post.branch_proposal()
        && main.covers(&bp)
    {
        out.push(
            Invariant::MergesByContent,
            t.name,
            format!(
                "{}: #{} is open for {}, which main already has{}",
                t.name,
                p.number,
                bp.describe(),
                ledger
                    .last_merge(t.name)
                    .map(|m| format!(" (last merge: {:?} of #{})", m.kind, m.pull))
                    .unwrap_or_default()
            ),
        );
    }
}

/// Legitimately not offered: a human declined every release the bot would propose now
/// (also when that pull request proposed more, e.g. a release withdrawn since: nothing in the
/// proposal is newer than what was declined), or is working on the branch.
fn not_offered_for_a_reason(
    ledger: &Ledger,
    t: &Tenant,
    post: &TenantObs,
    main: &Proposal,
    want: &Proposal,
) -> bool {
    let declined = ledger.declined.iter().any(|d| {
        d.tenant == t.name
            && want
                .stacks
                .iter()
                .filter(|(m, l)| main.newest(**m) < l.iter().max().copied())
                .all(|(m, l)| d.proposal.newest(*m) == l.iter().max().copied())
            && want
                .clusters
                .iter()
                .filter(|(k, c)| main.clusters.get(*k) != Some(*c))
                .all(|(k, c)| d.proposal.clusters.get(k) == Some(c))
    });
    if declined {
        return true;
    }
    let merged = post
        .latest_pull()
        .is_some_and(|p| p.state == PrState::Merged);
    // A human's commits on the branch of a pull request that was not merged: the bot never
    // pushes over them (it says so on an open pull request).
    let human_on_branch = ledger.human_commits_on(t.name, &post.branch_commits);
    !human_on_branch.is_empty() && !merged
}

/// What a tenant that was not offered what it should be sees: what main lists, what is
/// published, its pull request or branch, and the run's outcome for it.
fn not_offered_evidence(
    t: &Tenant,
    post: &TenantObs,
    main: &Proposal,
    want: &Proposal,
    outcome: &str,
) -> String {
    let open = post.open_pull();
    let missing: Vec<String> = want
        .stacks
        .iter()
        .filter(|(m, l)| main.newest(**m) < l.iter().max().copied())
        .map(|(m, l)| format!("1.{m} v{}", l[0]))
        .chain(
            want.clusters
                .iter()
                .filter(|(k, c)| main.clusters.get(*k) != Some(*c))
                .map(|(k, c)| format!("{} → {c}", k.rsplit(':').next().unwrap_or(k))),
        )
        .collect();
    let state = match (open, &post.branch) {
        (Some(p), _) => format!(
            "#{} is open for {}",
            p.number,
            post.branch_proposal()
                .map(|p| p.describe())
                .unwrap_or_default()
        ),
        (None, Some(_)) => format!(
            "no open pull request; the branch holds {} commit(s) main lacks ({} by humans)",
            post.branch_commits.len(),
            post.branch_commits
                .iter()
                .filter(|c| !c.author_email.contains("stackbot"))
                .count()
        ),
        (None, None) => "no open pull request and no branch".into(),
    };
    format!(
        "{}: main lists {}; published: {}; {state}; tenant outcome `{}`",
        t.name,
        main.describe(),
        missing.join(", "),
        if outcome.is_empty() { "none" } else { &outcome }
    )
}

/// A tenant reported `blocked` although every commit on its branch that main lacks is the
/// bot's or a merge of main into it ("Update branch"), or the branch's pull request was merged.
pub fn check_blocked(
    f: &RunFacts,
    ledger: &Ledger,
    tenants: &[&Tenant],
    after: &Observation,
) -> Vec<Violation> {
    let mut out = Out { f, v: Vec::new() };
    for t in tenants {
        if f.tenant_outcomes.get(t.name).map(String::as_str) != Some("blocked") {
            continue;
        }
        let Some(post) = after.tenants.get(t.name) else {
            continue;
        };
        let genuine = ledger.human_commits_on(t.name, &post.branch_commits);
        let merged = post
            .latest_pull()
            .is_some_and(|p| p.state == PrState::Merged);
        if genuine.is_empty() || merged {
            let merges = post
                .branch_commits
                .iter()
                .filter(|c| c.parents.len() > 1)
                .count();
            out.push(
                Invariant::MergesByContent,
                t.name,
                format!(
                    "{}: blocked ({} commit(s) on the branch main lacks: {} merge commit(s) from \"Update branch\", {} content commit(s) by humans{})",
                    t.name,
                    post.branch_commits.len(),
                    merges,
                    genuine.len(),
                    if merged {
                        format!(
                            "; its pull request #{} was merged",
                            post.latest_pull().map(|p| p.number).unwrap_or(0)
                        )
                    } else {
                        String::new()
                    }
                ),
            );
        }
    }
    out.v
}

/// With two publish targets, the latest live release of each series is on both after a run
/// that returned without a forge fault: a run stopped between the forge release and the push
/// leaves the next one to finish it.
pub fn check_targets(f: &RunFacts, ledger: &Ledger, after: &Observation) -> Vec<Violation> {
    let mut out = Out { f, v: Vec::new() };
    if !f.both_targets || !f.tenants_clean() {
        return out.v;
    }
    let latest = ledger.latest_per_series();
    if !latest.is_empty() {
        f.occurred(Invariant::EveryTarget);
    }
    let forge = after.published();
    for p in latest.values() {
        let (on_forge, on_oci) = (
            forge.contains_key(p.tag.as_str()),
            after.oci_tags.contains(&p.tag),
        );
        if !(on_forge && on_oci) {
            out.push(
                Invariant::EveryTarget,
                &p.tag,
                format!(
                    "{} (published in run {}) is {} after a clean run; {}",
                    p.tag,
                    p.run,
                    if on_forge {
                        "on the forge but not in the OCI registry"
                    } else {
                        "in the OCI registry but not on the forge"
                    },
                    out.faults()
                ),
            );
        }
    }
    out.v
}

/// Two runs started at the same moment: when each held the run lock, and what the other one
/// (not the scheduled run) did.
pub struct Overlap {
    pub first: (std::time::Instant, std::time::Instant),
    pub second: (std::time::Instant, std::time::Instant),
    pub second_writes: u64,
    pub second_exit: i32,
}

/// Overlapping runs take turns: the spans during which each held the run lock do not overlap,
/// and when the scheduled run went first and finished without a forge fault, the other finds
/// nothing left to do (no write) and sees the same world (the same exit code).
pub fn check_overlap(f: &RunFacts) -> Vec<Violation> {
    let mut out = Out { f, v: Vec::new() };
    let Some(o) = &f.overlap else {
        return out.v;
    };
    f.occurred(Invariant::RunsTakeTurns);
    let (a, b) = (o.first, o.second);
    if a.0 < b.1 && b.0 < a.1 {
        out.push(
            Invariant::RunsTakeTurns,
            "run lock",
            format!(
                "two runs worked at the same time: the scheduled one for {} ms, the other for {} ms, overlapping by {} ms",
                (a.1 - a.0).as_millis(),
                (b.1 - b.0).as_millis(),
                (a.1.min(b.1) - a.0.max(b.0)).as_millis()
            ),
        );
    } else if a.1 <= b.0 && f.forge_clean && f.returned && o.second_writes > 0 {
        out.push(
            Invariant::RunsTakeTurns,
            "second run",
            format!(
                "the second of two overlapping runs made {} write(s) after the first finished cleanly (exit {})",
                o.second_writes, f.exit
            ),
        );
    } else if a.1 <= b.0 && f.forge_clean && f.returned && o.second_exit != f.exit {
        out.push(
            Invariant::RunsTakeTurns,
            "second run",
            format!(
                "the second of two overlapping runs exited {} after the first exited {} in the same world",
                o.second_exit, f.exit
            ),
        );
    }
    out.v
}

/// A minor left out (past its end of life, or not in an explicit `minors:` list) gets no new
/// release. When the Kubernetes schedule could not be read the bot tracks the newest minors
/// instead (a documented fallback with a warning), so such runs are not judged.
pub fn check_minors(f: &RunFacts, ledger: &Ledger) -> Vec<Violation> {
    let mut out = Out { f, v: Vec::new() };
    if f.warnings
        .iter()
        .any(|w| w.contains("without lifecycle data"))
    {
        return out.v;
    }
    let minor_of = |tag: &str| read::tag(tag).map(|(_, m, _)| m);
    if ledger
        .published
        .keys()
        .any(|tag| minor_of(tag).is_some_and(|m| f.excluded.contains_key(&m)))
    {
        f.occurred(Invariant::OnlyConfiguredMinors);
    }
    for p in ledger.published.values().filter(|p| p.run == f.run) {
        if let Some(m) = minor_of(&p.tag)
            && let Some(why) = f.excluded.get(&m)
        {
            out.push(
                Invariant::OnlyConfiguredMinors,
                &p.tag,
                format!("{} was published although 1.{m} is {why}", p.tag),
            );
        }
    }
    out.v
}
