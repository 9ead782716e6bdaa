//! Where every stack, minor and tenant stands against the SCS version policy, decided purely.
//!
//! The question a platform team asks every morning is "are we compliant, and if not, why and
//! since when". The answer needs facts from four places (upstream detection, the releases on
//! the forge and in the registry, the tenants' `ClusterStack` resources, the bot's pull
//! requests); `stackbot::pipeline::status` reads them into [`Facts`] and [`compute`] turns them
//! into a [`Status`], here, without I/O or a clock: the same facts on the same day give the
//! same report, so the dashboard issue changes only when the world (or the date) does.
//!
//! - [`stacks`]: per stack × minor, the SCS deadline that applies (the earliest unreleased
//!   patch starts the clock, a never-offered minor gets the minor window) and what it waits for;
//! - [`tenants`]: per tenant × stack, what its resources list and how far behind that is;
//! - [`timeline`]: upstream GA → release → first tenant merge for recent patches;
//! - [`dashboard`]: which issue is the dashboard and whether it needs an edit.
//!
//! The JSON form of [`Status`] is a documented interface (`docs/status.md`): fields are only
//! ever added.

pub mod dashboard;
pub mod stacks;
pub mod tenants;
pub mod timeline;

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;

use crate::compliance::{Inputs, Verdict};
use crate::config::PolicyAction;
use crate::forge::PullInfo;
use crate::model::scs::Waiting;
use crate::model::{KubeVersion, Minor, ReleaseName, StackId};

pub use stacks::{StackState, StackStatus, WaitingFor, WaitingKind, Window};
pub use tenants::{Behind, ClusterStatus, TenantMinor, TenantPull, TenantState, TenantStatus};
pub use timeline::TimelineEntry;

/// A deadline this close (in days) counts as "due soon" in the summary.
pub const DUE_SOON_DAYS: i64 = 7;

/// Everything the status is computed from (read by `pipeline::status`, never written).
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// The day the report is for (`--now`).
    pub today: NaiveDate,
    /// Per configured stack × tracked minor (configuration order), then the GA minors newer
    /// than every minor a stack tracks.
    pub minors: Vec<UpstreamMinor>,
    /// Every stable release of a configured stack: one entry per target it is published to.
    pub releases: Vec<Release>,
    /// Open release pull requests (`forge.mode: pull-request`).
    pub release_pulls: Vec<ReleasePull>,
    /// The newest conformance candidate of each gated series whose stable tag is not
    /// published yet (empty without `gate:`).
    pub gates: Vec<GateFact>,
    /// Every configured tenant.
    pub tenants: Vec<TenantFacts>,
    /// Degraded sources, unreadable releases.
    pub warnings: Vec<String>,
    /// What the SCS 0210 verdicts read: release dates, end of life, critical CVEs.
    pub compliance: Inputs,
    /// Upstream came from a snapshot (`Some`), recorded for that day when it says.
    pub snapshot: Option<crate::upstream::snapshot::SnapshotInfo>,
    /// The verdict inputs as the failing sources last answered, and when (reports only).
    pub last_known: Option<(Inputs, Option<DateTime<Utc>>)>,
    /// Where each verdict source came from ([`crate::compliance::sources`]).
    pub sources: Vec<crate::compliance::SourceReading>,
}

/// What upstream published for one stack × minor.
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamMinor {
    pub stack: StackId,
    pub minor: Minor,
    /// Tracked by the configuration; `false` for a GA minor newer than every tracked one.
    pub tracked: bool,
    /// Every GA patch of the minor, oldest first.
    pub patches: Vec<Patch>,
    /// What the newest patch still waits for (empty when a release can ship it).
    pub waiting: Vec<Waiting>,
    /// Invalid upstream data (malformed CHECKSUM, broken index).
    pub errors: Vec<String>,
    /// The newest patch a release could ship now (the detection's complete release set).
    pub releasable: Option<KubeVersion>,
    /// End of life of the minor (Kubernetes schedule), when known.
    pub end_of_life: Option<NaiveDate>,
    /// Patches newer than `releasable` that a release steps over, and why
    /// ([`crate::resolve::HeldBack::skipped`]).
    pub stepped_over: Vec<crate::model::SteppedOver>,
}

impl UpstreamMinor {
    /// Whether an open release pull request (`forge.mode: pull-request`) counts for this stack
    /// × minor: a tracked one with a complete release set. `status` reads them for these, the
    /// `release` summary takes them from the run.
    pub fn may_have_release_pull(&self) -> bool {
        self.tracked && self.releasable.is_some()
    }
}

/// A GA Kubernetes patch and when it was published (`None`: known only from a marker), as
/// upstream's reading gives it.
pub use crate::upstream::kubernetes::KubeRelease as Patch;

use crate::index::Rank;
pub use crate::index::Target;

/// One published release on one target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    pub name: ReleaseName,
    pub target: Target,
    /// The Kubernetes version it ships (`None` when neither notes nor metadata say, or when
    /// what would say could not be read: then `unread`).
    pub kubernetes: Option<KubeVersion>,
    pub published_at: Option<DateTime<Utc>>,
    /// Browser URL (forge) or reference (OCI).
    pub url: Option<String>,
    /// Why the Kubernetes version is not known although the release may name one: the file
    /// that could not be read and the cause (`release openstack-scs2-1-33-v1: metadata.yaml
    /// could not be read (…)`). The verdict that depends on it is `unknown` and names this.
    pub unread: Option<String>,
}

/// An open release pull request: a complete release set waiting for a maintainer's merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleasePull {
    pub stack: StackId,
    pub minor: Minor,
    pub pull: PullInfo,
}

/// A release in the conformance gate: its candidate, and where its test stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GateFact {
    pub stack: StackId,
    pub minor: Minor,
    /// The stable tag it becomes when it passes.
    pub stable: String,
    pub candidate: String,
    pub url: String,
    /// When its first test attempt started (`None`: not started yet).
    pub since: Option<DateTime<Utc>>,
    /// The newest attempt, and its result when read.
    pub attempt: Option<u32>,
    pub result: Option<crate::gate::AttemptResult>,
}

impl GateFact {
    /// Whether the candidate failed (or its test could not finish): it is never promoted.
    pub fn failed(&self) -> bool {
        self.result.as_ref().is_some_and(|r| {
            r.outcome == crate::gate::Outcome::Failed
                || (r.outcome.is_retryable() && r.attempt >= crate::gate::MAX_ATTEMPTS)
        })
    }

    /// `in test since 2026-05-01 10:00 UTC (attempt 1)`, `failed conformance: …`.
    pub fn words(&self) -> String {
        let since = self
            .since
            .map(|s| s.format("%Y-%m-%d %H:%M UTC").to_string());
        match (&self.result, since) {
            (Some(r), _) if self.failed() => format!(
                "candidate {} {}{}; never promoted, the next change makes a new candidate",
                self.candidate,
                r.line(),
                r.failed_names()
            ),
            (Some(r), _) if r.outcome == crate::gate::Outcome::Passed => format!(
                "candidate {} passed; the next release run promotes it",
                self.candidate
            ),
            (_, Some(since)) => format!(
                "in test since {since} (candidate {}, attempt {})",
                self.candidate,
                self.attempt.unwrap_or(1)
            ),
            (_, None) => format!(
                "candidate {} published; its test starts with the next release run",
                self.candidate
            ),
        }
    }
}

/// One tenant as read from its repository.
#[derive(Debug, Clone, PartialEq)]
pub struct TenantFacts {
    pub name: String,
    pub repository: String,
    pub patch_policy: PolicyAction,
    pub minor_policy: PolicyAction,
    /// Per followed stack, in configuration order.
    pub stacks: Vec<TenantStackFacts>,
    /// The repository could not be read at all.
    pub error: Option<String>,
}

/// One followed stack of a tenant.
#[derive(Debug, Clone, PartialEq)]
pub struct TenantStackFacts {
    pub stack: StackId,
    /// The `ClusterStack` resources of this stack (channel `stable`) at the base branch.
    pub resources: Vec<StackResource>,
    /// Pull requests of the bot's branch, newest first, any state.
    pub pulls: Vec<PullInfo>,
    /// Commits on the bot's branch by someone else (short ids): the bot leaves the PR alone.
    pub human_commits: Vec<String>,
    /// The `Cluster` resources of this stack in the tenant's `clusters` files.
    pub clusters: Vec<ClusterVersion>,
    /// The tenant's `clusters` files that could not be read (invalid YAML, over a limit), each
    /// with the file and why: whatever `Cluster` they hold cannot be judged, so the verdict is
    /// `unknown`, never `pass`.
    pub unjudged: Vec<String>,
    /// The stack's files could not be read or parsed.
    pub error: Option<String>,
}

/// A Cluster API `Cluster` of a tenant: the Kubernetes version it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClusterVersion {
    /// `namespace/name` (`name` alone without a namespace).
    pub cluster: String,
    pub file: String,
    pub line: usize,
    /// `spec.topology.class`.
    pub class: String,
    /// `spec.topology.version` as written.
    pub version: String,
    /// The newest pull request of the bot's step moving it to the next minor, if any
    /// (`policy.upgrade.clusters`).
    #[serde(skip)]
    pub upgrade: Option<PullInfo>,
}

/// A `ClusterStack` resource as a tenant wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackResource {
    pub file: String,
    pub line: usize,
    pub minor: Minor,
    /// `spec.versions` (`None` when absent).
    pub versions: Option<Vec<String>>,
    /// `spec.autoSubscribe`: CSO follows the newest release by itself.
    pub auto_subscribe: bool,
}

impl StackResource {
    /// The releases of `stack` its `spec.versions` list (what is not a version is left out).
    pub fn releases<'a>(&'a self, stack: &'a StackId) -> impl Iterator<Item = ReleaseName> + 'a {
        self.versions.iter().flatten().filter_map(move |v| {
            let version = crate::model::StackVersion::parse_dot(v).ok()?;
            let (stack, minor) = (stack.clone(), self.minor);
            Some(ReleaseName {
                stack,
                minor,
                version,
            })
        })
    }
}

/// The report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Status {
    /// The day it was computed for.
    pub as_of: NaiveDate,
    /// Every source the verdicts depend on was read, no tracked (or new) minor is past its
    /// SCS deadline, and every stack × minor's and every tenant's verdict is `pass`.
    pub compliant: bool,
    /// The headline: the worst verdict of the stacks, and how many of each.
    pub scs0210: Headline,
    /// Where the upstream facts come from: `live` (read now), or `snapshot` with the day it
    /// was recorded for and its age in days on `as_of`.
    pub upstream_data: UpstreamData,
    pub summary: Summary,
    /// One row per stack × minor: tracked minors, then new minors no stack tracks yet.
    pub stacks: Vec<StackStatus>,
    /// One row per tenant × followed stack.
    pub tenants: Vec<TenantStatus>,
    /// Recent patches: upstream GA → release → first tenant merge.
    pub timeline: Vec<TimelineEntry>,
    pub warnings: Vec<String>,
    /// Every source the verdicts depend on, with where it came from: read now (URL, when),
    /// from a snapshot (its day and age), or unreadable (why, and the age of the last answer
    /// the cache kept). Ages as of `as_of`.
    pub sources: Vec<crate::compliance::SourceReading>,
}

/// The age of the upstream facts a report stands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "source", rename_all = "lowercase")]
pub enum UpstreamData {
    /// Read during this run.
    Live,
    /// Replayed from a snapshot.
    Snapshot {
        recorded_for: Option<NaiveDate>,
        age_days: Option<i64>,
    },
}

impl UpstreamData {
    fn of(
        snapshot: Option<crate::upstream::snapshot::SnapshotInfo>,
        today: NaiveDate,
    ) -> UpstreamData {
        match snapshot {
            None => UpstreamData::Live,
            Some(s) => UpstreamData::Snapshot {
                recorded_for: s.as_of,
                age_days: s.as_of.map(|d| days_between(d, today)),
            },
        }
    }

    /// `upstream data read now`, `upstream snapshot of 2026-05-01 (214 days old)`.
    pub fn words(&self) -> String {
        match self {
            UpstreamData::Live => "upstream data read now".into(),
            UpstreamData::Snapshot {
                recorded_for: Some(d),
                age_days: Some(0),
            } => format!("upstream snapshot of {d}"),
            UpstreamData::Snapshot {
                recorded_for: Some(d),
                age_days: Some(n),
            } => format!("upstream snapshot of {d}, {n} days old"),
            UpstreamData::Snapshot { .. } => "upstream snapshot of an unrecorded day".into(),
        }
    }
}

/// The dashboard's headline verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Headline {
    /// The worst verdict of every stack × minor (`pass` when there is none).
    pub verdict: Verdict,
    /// Stack × minors by verdict.
    pub stacks: VerdictCounts,
    /// Tenant × stacks by verdict.
    pub tenants: VerdictCounts,
    /// Sources the verdicts depend on that could not be read, with the cause.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
}

/// How many subjects have each verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct VerdictCounts {
    pub pass: usize,
    pub warn: usize,
    pub fail: usize,
    pub unknown: usize,
}

impl VerdictCounts {
    fn count(verdicts: impl Iterator<Item = Verdict>) -> VerdictCounts {
        let mut c = VerdictCounts::default();
        for v in verdicts {
            match v {
                Verdict::Pass => c.pass += 1,
                Verdict::Warn => c.warn += 1,
                Verdict::Fail => c.fail += 1,
                Verdict::Unknown => c.unknown += 1,
            }
        }
        c
    }
}

impl Headline {
    fn of(stacks: &[StackStatus], tenants: &[TenantStatus], inputs: &Inputs) -> Headline {
        let unreadable = inputs.problems();
        // Nothing tracked because nothing could be read is not "compliant (nothing tracked)".
        let empty = if stacks.is_empty() && !unreadable.is_empty() {
            Verdict::Unknown
        } else {
            Verdict::Pass
        };
        Headline {
            verdict: stacks
                .iter()
                .map(|s| s.scs0210.verdict)
                .fold(empty, Verdict::worst),
            stacks: VerdictCounts::count(stacks.iter().map(|s| s.scs0210.verdict)),
            tenants: VerdictCounts::count(tenants.iter().map(|t| t.scs0210.verdict)),
            unreadable,
        }
    }
}

/// Counts for the first line of every rendering.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Stack × minors past their deadline.
    pub overdue: usize,
    /// Stack × minors due within [`DUE_SOON_DAYS`] days.
    pub due_soon: usize,
    /// Stack × minors whose newest patch waits for upstream (image, charts) or a merge.
    pub waiting: usize,
    /// Stack × minors whose newest patch is released.
    pub current: usize,
    /// Tenant × stacks behind the newest releases.
    pub tenants_behind: usize,
    /// Tenant × stacks whose bot pull request has commits by someone else.
    pub tenants_blocked: usize,
    /// Tenants (or tenant stacks) that could not be read.
    pub tenant_errors: usize,
}

/// The stack and tenant rows for `inputs`.
fn rows(f: &Facts, inputs: &Inputs) -> (Vec<StackStatus>, Vec<TenantStatus>) {
    let stacks = f
        .minors
        .iter()
        .map(|m| {
            let mut s = stacks::status(m, &f.releases, &f.release_pulls, inputs, f.today);
            stacks::in_gate(&mut s, &f.gates);
            s
        })
        .collect();
    let tenants = f
        .tenants
        .iter()
        .flat_map(|t| tenants::status(t, &f.releases, inputs, f.today))
        .collect();
    (stacks, tenants)
}

/// An `unknown` verdict keeps what the last known facts said, marked stale with their date.
fn keep_last_known(
    now: &mut crate::compliance::Scs0210,
    then: &crate::compliance::Scs0210,
    from: Option<DateTime<Utc>>,
) {
    if now.verdict == Verdict::Unknown && then.verdict != Verdict::Unknown {
        now.last_known = Some(Box::new(crate::compliance::Stale {
            verdict: then.verdict,
            reasons: then.reasons.clone(),
            facts_from: from,
        }));
    }
}

/// Compute the report. Pure.
pub fn compute(f: &Facts) -> Status {
    let (mut stacks, mut tenants) = rows(f, &f.compliance);
    if let Some((inputs, from)) = &f.last_known {
        let (old_stacks, old_tenants) = rows(f, inputs);
        for (now, then) in stacks.iter_mut().zip(&old_stacks) {
            keep_last_known(&mut now.scs0210, &then.scs0210, *from);
        }
        for (now, then) in tenants.iter_mut().zip(&old_tenants) {
            keep_last_known(&mut now.scs0210, &then.scs0210, *from);
        }
    }
    let timeline = timeline::entries(f, &stacks);
    let of_stacks = |f: fn(&StackStatus) -> bool| stacks.iter().filter(|s| f(s)).count();
    let of_tenants = |f: fn(&TenantStatus) -> bool| tenants.iter().filter(|t| f(t)).count();
    let summary = Summary {
        overdue: of_stacks(|s| s.overdue),
        due_soon: of_stacks(|s| !s.overdue && s.days_left.is_some_and(|d| d <= DUE_SOON_DAYS)),
        waiting: of_stacks(|s| {
            matches!(
                s.state,
                StackState::Waiting
                    | StackState::ReleasePullRequest
                    | StackState::Error
                    | StackState::InTest
                    | StackState::FailedConformance
            )
        }),
        current: of_stacks(|s| s.state == StackState::Current),
        tenants_behind: of_tenants(|t| t.behind.any()),
        tenants_blocked: of_tenants(|t| t.state == TenantState::Blocked),
        tenant_errors: of_tenants(|t| t.state == TenantState::Error),
    };
    let mut warnings = f.warnings.clone();
    warnings.dedup();
    let scs0210 = Headline::of(&stacks, &tenants, &f.compliance);
    Status {
        as_of: f.today,
        compliant: compliant(&summary, &scs0210, &stacks, &tenants),
        scs0210,
        upstream_data: UpstreamData::of(f.snapshot, f.today),
        summary,
        stacks,
        tenants,
        timeline,
        warnings,
        sources: crate::compliance::aged(&f.sources, f.today),
    }
}

/// Missing data is never compliance: compliant only when every source the verdicts depend on
/// was read, nothing is overdue, and every stack × minor and every tenant verdict is `pass`
/// (`warn`, `unknown` and `fail` are not).
fn compliant(
    summary: &Summary,
    headline: &Headline,
    stacks: &[StackStatus],
    tenants: &[TenantStatus],
) -> bool {
    summary.overdue == 0
        && headline.unreadable.is_empty()
        && headline.verdict == Verdict::Pass
        && stacks.iter().all(|s| s.scs0210.verdict == Verdict::Pass)
        && tenants.iter().all(|t| t.scs0210.verdict == Verdict::Pass)
}

/// Whole days from `today` to `day` (negative when `day` is past).
pub fn days_between(today: NaiveDate, day: NaiveDate) -> i64 {
    (day - today).num_days()
}

/// `9 days left`, `1 day left`, `due today`, `1 day overdue`, `2 days overdue`: the words of
/// every form for days until a deadline.
pub fn days_words(days_left: i64) -> String {
    match days_left {
        0 => "due today".into(),
        1 => "1 day left".into(),
        n if n > 1 => format!("{n} days left"),
        -1 => "1 day overdue".into(),
        n => format!("{} days overdue", -n),
    }
}

/// The releases of one stack × minor, deduplicated across targets (a release on the forge and
/// in the registry is one release), newest first by the release index's tie-break
/// ([`crate::index::Rank`]: at an equal number the forge's record comes first). A date or
/// Kubernetes version known on one target only is kept.
pub fn releases_of(releases: &[Release], stack: &StackId, minor: Minor) -> Vec<Release> {
    let mut out: Vec<Release> = Vec::new();
    let mut of: Vec<&Release> = releases
        .iter()
        .filter(|r| &r.name.stack == stack && r.name.minor == minor && r.name.version.is_stable())
        .collect();
    of.sort_by_key(|r| std::cmp::Reverse(rank(r)));
    for r in of {
        match out.iter_mut().find(|o| o.name == r.name) {
            Some(o) => {
                o.kubernetes = o.kubernetes.or(r.kubernetes);
                // Read on one target: known, whatever the other could not read.
                o.unread = match o.kubernetes {
                    Some(_) => None,
                    None => o.unread.clone().or_else(|| r.unread.clone()),
                };
                o.published_at = o.published_at.into_iter().chain(r.published_at).min();
                o.url = o.url.clone().or_else(|| r.url.clone());
            }
            None => out.push(r.clone()),
        }
    }
    out
}

/// A release record's rank among its series' (the forge's id is not part of a status record).
fn rank(r: &Release) -> Rank {
    Rank {
        number: r.name.version.major,
        target: r.target,
        id: 0,
    }
}

/// The targets a release is published to, in order.
pub fn targets_of(releases: &[Release], name: &ReleaseName) -> Vec<Target> {
    let mut t: Vec<Target> = releases
        .iter()
        .filter(|r| &r.name == name)
        .map(|r| r.target)
        .collect();
    t.sort();
    t.dedup();
    t
}

/// The releases a bot pull request proposes, read from its title
/// (`Update ClusterStack openstack/scs2 to openstack-scs2-1-34-v2, …`).
pub fn proposed_releases(pull: &PullInfo) -> Vec<ReleaseName> {
    pull.title
        .split([' ', ','])
        .filter_map(|w| ReleaseName::parse(w.trim()).ok())
        .collect()
}

#[cfg(test)]
pub(crate) mod testing {
    //! Builders for the unit tests of the status modules.
    use super::*;
    use crate::forge::PullState;

    pub fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    pub fn at(s: &str) -> Option<DateTime<Utc>> {
        Some(format!("{s}T12:00:00Z").parse().unwrap())
    }

    pub fn kv(s: &str) -> KubeVersion {
        s.parse().unwrap()
    }

    pub fn stack() -> StackId {
        "openstack/scs2".parse().unwrap()
    }

    pub fn minor(s: &str) -> Minor {
        s.parse().unwrap()
    }

    /// The verdict inputs a test's upstream minor implies: its patches dated, its end of life
    /// (far away when not set), no CVE.
    pub fn inputs_for(m: &UpstreamMinor) -> Inputs {
        inputs_of(std::slice::from_ref(m))
    }

    /// Nothing known: every verdict that needs a source is `unknown`.
    pub fn inputs_none() -> Inputs {
        Inputs::default()
    }

    /// [`inputs_for`] over several minors.
    pub fn inputs_of(ms: &[UpstreamMinor]) -> Inputs {
        use crate::compliance::{Lifecycles, Security};
        Inputs {
            odd_tags: Vec::new(),
            releases: Ok(ms
                .iter()
                .flat_map(|m| &m.patches)
                .map(|p| crate::upstream::kubernetes::KubeRelease {
                    version: p.version,
                    published_at: p.published_at,
                })
                .collect()),
            lifecycles: Lifecycles::Known(
                ms.iter()
                    .map(|m| (m.minor, m.end_of_life.unwrap_or(day("2099-01-01"))))
                    .collect(),
            ),
            security: Security::Known {
                cves: Vec::new(),
                unreadable: Vec::new(),
            },
        }
    }

    pub fn upstream(m: &str, patches: &[(&str, &str)]) -> UpstreamMinor {
        UpstreamMinor {
            stack: stack(),
            minor: minor(m),
            tracked: true,
            patches: patches
                .iter()
                .map(|(v, d)| Patch {
                    version: kv(v),
                    published_at: at(d),
                })
                .collect(),
            waiting: Vec::new(),
            errors: Vec::new(),
            releasable: patches.last().map(|(v, _)| kv(v)),
            end_of_life: None,
            stepped_over: Vec::new(),
        }
    }

    pub fn release(tag: &str, k8s: &str, date: &str) -> Release {
        Release {
            name: ReleaseName::parse(tag).unwrap(),
            target: Target::Forge,
            kubernetes: Some(kv(k8s)),
            published_at: at(date),
            url: Some(format!("https://example.org/{tag}")),
            unread: None,
        }
    }

    pub fn pull(number: u64, title: &str, state: PullState, created: &str) -> PullInfo {
        PullInfo {
            number,
            head: "stackbot/openstack-scs2".into(),
            base: "main".into(),
            title: title.into(),
            body: String::new(),
            state,
            html_url: format!("https://example.org/pull/{number}"),
            created_at: at(created),
            merged_at: None,
            labels: Vec::new(),
            auto_merge: false,
        }
    }

    pub fn resource(m: &str, versions: &[&str]) -> StackResource {
        StackResource {
            file: "clusters/stack.yaml".into(),
            line: 1,
            minor: minor(m),
            versions: Some(versions.iter().map(|v| v.to_string()).collect()),
            auto_subscribe: false,
        }
    }

    pub fn tenant(name: &str, resources: Vec<StackResource>, pulls: Vec<PullInfo>) -> TenantFacts {
        TenantFacts {
            name: name.into(),
            repository: format!("{name}/gitops"),
            patch_policy: PolicyAction::PullRequest,
            minor_policy: PolicyAction::PullRequest,
            stacks: vec![TenantStackFacts {
                stack: stack(),
                resources,
                pulls,
                human_commits: Vec::new(),
                clusters: Vec::new(),
                unjudged: Vec::new(),
                error: None,
            }],
            error: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    #[test]
    fn the_same_release_on_two_targets_is_one_release() {
        let mut oci = release("openstack-scs2-1-34-v2", "v1.34.7", "2026-05-02");
        oci.target = Target::Oci;
        oci.url = None;
        let forge = Release {
            kubernetes: None,
            ..release("openstack-scs2-1-34-v2", "v1.34.7", "2026-05-01")
        };
        let old = release("openstack-scs2-1-34-v1", "v1.34.6", "2026-04-01");
        let all = [oci, forge, old];
        let rs = releases_of(&all, &stack(), minor("1.34"));
        assert_eq!(rs.len(), 2);
        assert_eq!(
            rs[0].name.to_string(),
            "openstack-scs2-1-34-v2",
            "newest first"
        );
        assert_eq!(rs[0].kubernetes, Some(kv("v1.34.7")), "known on one target");
        assert_eq!(
            rs[0].published_at,
            at("2026-05-01"),
            "the first publication"
        );
        assert!(rs[0].url.is_some());
        assert_eq!(targets_of(&all, &rs[0].name), [Target::Forge, Target::Oci]);
    }

    #[test]
    fn the_proposed_releases_are_read_from_the_pull_request_title() {
        let p = pull(
            7,
            "Update ClusterStack openstack/scs2 to openstack-scs2-1-33-v2, openstack-scs2-1-34-v3",
            crate::forge::PullState::Open,
            "2026-05-01",
        );
        let names: Vec<String> = proposed_releases(&p)
            .iter()
            .map(|n| n.to_string())
            .collect();
        assert_eq!(names, ["openstack-scs2-1-33-v2", "openstack-scs2-1-34-v3"]);
    }
}
