//! One world: a cluster-stacks repository released by the real pipeline, hour after hour, on
//! one forge, with upstream from the timeline and people acting between runs.
//!
//! Time is compressed by choosing which hours to simulate: the hour after every upstream change
//! (a release, an image, a chart) and after each tenant joining, some hours after those (the
//! reconcile and no-op runs), and quiet hours at random until the run budget is spent (with a
//! budget of 24 × days every hour runs). People act at their own times; the next simulated run
//! sees what they did. Faults are drawn per run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Duration, Timelike, Utc};
use stackbot::clock::{Clock as _, ManualClock};
use stackbot::config::Loaded;
use stackbot::model::KubeVersion;

use super::actors::{self, Agenda, Human};
use super::forge::{Backend, Files, MergeMethod, PrState, fake::Fake, local::Local};
use super::invariants::{self, Invariant, Violation};
use super::ledger::{Ledger, Published, RunRecord};
use super::observe::{self, Observation, STACKS};
use super::oci::Oci;
use super::read;
use super::tenants::{self, Tenant, UpgradeMode};
use super::timeline::{CCM, Timeline};
use super::upgrades::{self, EndOfLife};
use super::upstream::{Target, UpFault, Upstream};

/// Which forge a world lives on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForgeKind {
    Local,
    Github,
}

/// How a world is set up.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub forge: ForgeKind,
    /// Upstream over HTTP (the fixture server) instead of snapshots.
    pub http_upstream: bool,
    /// `publish: [oci]`: releases go to a real OCI registry only (no forge releases).
    pub oci_only: bool,
    /// `publish: [forge, oci]`: releases go to the forge and to a real OCI registry.
    pub oci_too: bool,
    /// `mode: pull-request`: the bot opens a release pull request per series on the
    /// cluster-stacks repository, a maintainer merges it, the next run publishes.
    pub pull_request: bool,
    /// Now and then a second `stackbot release` starts at the same moment as the scheduled
    /// one (a manual dispatch, a slow runner), both through the local forge's run lock.
    pub overlap: bool,
    pub seed: u64,
    pub start: DateTime<Utc>,
    pub days: i64,
    /// Runs to simulate (24 × days: every hour).
    pub runs: usize,
    /// Probability that a run sees an upstream fault.
    pub upstream_faults: f64,
    /// Probability that a run sees a forge fault (a crash; on GitHub also a flaky API).
    pub forge_faults: f64,
    /// A promise the harness itself breaks, where no mutation of the bot's source can
    /// (`None` in every world that tests the bot; see [`HarnessFault`]).
    pub harness_fault: Option<HarnessFault>,
    /// Every team, on seeing a bot pull request, first lands a commit on `main` that changes
    /// the ClusterStack file the bot edits, then presses "Update branch" (GitHub offers it only
    /// when the base moved). The branch then holds exactly the desired files under a bot commit
    /// whose trailer names the older base's content: the situation of the guard
    /// `tenants::branch::holds_files`, which the default worlds produce too rarely to test
    /// (docs/reliability.md, "Mutation check").
    pub update_after_main_moved: bool,
}

/// The harness doing, around a correct bot, what a bot without one of its guards would do:
/// for the two promises whose guard no source mutation can remove (cargo-mutants replaces
/// function bodies and operators; it cannot make an OS file lock shared, nor add requests), so
/// that the simulator still shows that their invariants can fail (docs/reliability.md,
/// "Mutation check"). The other guards are mutated in the source by cargo-mutants
/// (`.cargo/mutants.toml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HarnessFault {
    /// The second of two overlapping runs works without the run lock (`overlapping-runs-take-turns`).
    SecondRunWithoutLock,
    /// Every run also downloads every asset of every release in the history through the bot's
    /// forge, as a bot that reads history would (`cost-bounded-by-series-and-tenants`).
    ReadsHistory,
}

/// What a world did.
#[derive(Debug, Default)]
pub struct WorldReport {
    pub name: String,
    pub forge: String,
    pub upstream: String,
    pub seed: u64,
    pub start: Option<DateTime<Utc>>,
    pub days: i64,
    pub records: Vec<RunRecord>,
    pub humans: BTreeMap<String, usize>,
    pub faults: BTreeMap<String, usize>,
    pub violations: Vec<Violation>,
    /// Per invariant: runs in which its guarded situation occurred, and of those the runs in
    /// which it held (only invariants whose checks record their situation).
    pub coverage: BTreeMap<Invariant, (usize, usize)>,
    pub published: usize,
    pub withdrawn: usize,
    pub pulls_opened: usize,
    pub provenance: String,
    pub wall: std::time::Duration,
    /// Per release that upstream caused: minutes from the last piece of its release set
    /// appearing upstream (the Kubernetes tag, the node image's CHECKSUM, a chart version) to
    /// the start of the run that published it.
    pub latency: Vec<i64>,
    /// Releases upstream caused whose minor was off the explicit `minors:` list while they
    /// waited: not due for release, left out of `latency`.
    pub latency_excluded: usize,
    /// Every minor an opted-in (or, as a control, `ignore`) Cluster ran on whose end of life
    /// fell in the window, and when the Cluster left it.
    pub end_of_life: Vec<EndOfLife>,
    /// Cluster upgrade pull requests: opened, merged, declined by people; steps ticked.
    pub upgrade_pulls: (usize, usize, usize, usize),
}

pub struct World {
    sc: Scenario,
    dir: tempfile::TempDir,
    clock: Arc<ManualClock>,
    upstream: Upstream,
    backend: Box<dyn Backend>,
    oci: Option<Oci>,
    tenants: Vec<Tenant>,
    active: Vec<bool>,
    loaded: Loaded,
    ledger: Ledger,
    rng: fastrand::Rng,
    agenda: Agenda,
    handled: BTreeSet<(usize, u64)>,
    humans: BTreeMap<String, usize>,
    faults: BTreeMap<String, usize>,
    violations: Vec<Violation>,
    coverage: BTreeMap<Invariant, (usize, usize)>,
    pulls_seen: BTreeSet<(usize, u64)>,
    edits: u32,
    /// The acts added by issue 23 draw from their own generator, so the worlds that existed
    /// before keep their seeded sequence of people and faults.
    acts: fastrand::Rng,
    /// The next run's clock is behind by this many hours.
    clock_back: Option<i64>,
    /// Template edits, oldest first: the file and its text before the edit (for reverts).
    template_edits: Vec<(PathBuf, String)>,
    /// `minors:` as an explicit list (`None`: `supported`).
    minors: Option<Vec<u64>>,
    /// Tenants whose repository is taken away (deleted or archived) until restored.
    gone: BTreeSet<usize>,
    /// The people of the tenants with Cluster upgrades (issue 22) draw from their own
    /// generator, so the worlds keep the sequence of the older tenants' acts.
    up_rng: fastrand::Rng,
    /// Upgrade pull requests people have planned for, and the first declines done.
    upgrade_seen: BTreeSet<(usize, u64)>,
    declined_first: BTreeSet<(usize, String)>,
    /// Approval steps a person has planned to tick.
    tick_planned: BTreeSet<(usize, String)>,
    /// Every change of `minors:` (`None`: `supported`), oldest first.
    minors_history: Vec<(DateTime<Utc>, Option<Vec<u64>>)>,
}

use crate::support::root;

mod acts;
mod runs;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        let p = e.path();
        let dest = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).expect("copy");
        }
    }
}

/// A scratch directory for the world's forge, templates and snapshots: on a RAM file system
/// when the machine has one (`/dev/shm`), since a year of releases writes tens of thousands of
/// small files (git objects, assets) and that is most of a simulation's time on a disk.
fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if std::env::var_os("SIM_TMPDIR").is_none()
        && shm.is_dir()
        && let Ok(d) = tempfile::Builder::new()
            .prefix("stackbot-sim-")
            .tempdir_in(shm)
    {
        return d;
    }
    match std::env::var_os("SIM_TMPDIR") {
        Some(d) => tempfile::tempdir_in(d).expect("temp dir in SIM_TMPDIR"),
        None => tempfile::tempdir().expect("temp dir"),
    }
}

/// The hourly run slot at or after `t` (runs start at minute 17, like a cron `17 * * * *`).
fn slot_after(t: DateTime<Utc>) -> DateTime<Utc> {
    let hour = t
        .with_minute(17)
        .and_then(|x| x.with_second(0))
        .and_then(|x| x.with_nanosecond(0))
        .expect("time");
    if hour > t {
        hour
    } else {
        hour + Duration::hours(1)
    }
}

impl World {
    /// A world for `sc` (one that publishes to OCI starts a real registry, and fails without
    /// one: see `support::registry`).
    pub fn new(sc: Scenario) -> World {
        let dir = scratch();
        let clock = ManualClock::shared(sc.start);
        let timeline = Timeline::build(sc.start, sc.days, sc.seed);
        let upstream = if sc.http_upstream {
            Upstream::http(timeline)
        } else {
            Upstream::snapshots(timeline, dir.path())
        };
        let backend: Box<dyn Backend> = match sc.forge {
            ForgeKind::Local => Box::new(Local::new(&dir.path().join("forge"), clock.clone())),
            ForgeKind::Github => Box::new(Fake::start()),
        };
        copy_dir(
            &root().join("templates/openstack/scs2"),
            &dir.path().join("templates/openstack/scs2"),
        );
        backend.create_repo(
            STACKS,
            &Files::from([(
                "README.md".to_string(),
                b"# SCS cluster stacks\n\nReleased by stackbot.\n".to_vec(),
            )]),
        );
        let tenants = tenants::roster();
        let active: Vec<bool> = tenants.iter().map(|t| t.joins_on_day == 0).collect();
        for (t, a) in tenants.iter().zip(&active) {
            if *a {
                backend.create_repo(&t.repo, &t.initial_files());
            }
        }
        let oci = if sc.oci_only || sc.oci_too {
            Some(Oci::start())
        } else {
            None
        };
        let rng = fastrand::Rng::with_seed(sc.seed);
        let seed = sc.seed;
        let loaded = write_config(
            dir.path(),
            &sc,
            None,
            &upstream,
            backend.as_ref(),
            oci.as_ref(),
            &active_tenants(&tenants, &active),
        );
        World {
            loaded,
            oci,
            sc,
            dir,
            clock,
            upstream,
            backend,
            tenants,
            active,
            ledger: Ledger::default(),
            rng,
            agenda: Agenda::default(),
            handled: BTreeSet::new(),
            humans: BTreeMap::new(),
            faults: BTreeMap::new(),
            violations: Vec::new(),
            coverage: BTreeMap::new(),
            pulls_seen: BTreeSet::new(),
            edits: 0,
            acts: fastrand::Rng::with_seed(seed ^ 0x5eed_ac75),
            clock_back: None,
            template_edits: Vec::new(),
            minors: None,
            gone: BTreeSet::new(),
            up_rng: fastrand::Rng::with_seed(seed ^ 0x0c1a_57e2),
            upgrade_seen: BTreeSet::new(),
            declined_first: BTreeSet::new(),
            tick_planned: BTreeSet::new(),
            minors_history: Vec::new(),
        }
    }

    fn rewrite_config(&mut self) {
        self.loaded = write_config(
            self.dir.path(),
            &self.sc,
            self.minors.as_deref(),
            &self.upstream,
            self.backend.as_ref(),
            self.oci.as_ref(),
            &active_tenants(&self.tenants, &self.active),
        );
    }

    fn active_tenants(&self) -> Vec<&Tenant> {
        active_tenants(&self.tenants, &self.active)
    }

    fn observe(&self) -> Observation {
        let oci_tags = self.oci.as_ref().map(Oci::tags).unwrap_or_default();
        observe::observe(self.backend.as_ref(), &self.active_tenants(), oci_tags)
    }

    /// The hours to simulate.
    fn plan(&mut self) -> Vec<DateTime<Utc>> {
        let (start, end) = (self.sc.start, self.sc.start + Duration::days(self.sc.days));
        let mut must: BTreeSet<DateTime<Utc>> = BTreeSet::new();
        must.insert(slot_after(start));
        for c in self.upstream.timeline.changes() {
            must.insert(slot_after(c));
        }
        for t in &self.tenants {
            if t.joins_on_day > 0 && t.joins_on_day < self.sc.days {
                must.insert(slot_after(start + Duration::days(t.joins_on_day)));
            }
        }
        let follow: Vec<DateTime<Utc>> = must
            .iter()
            .filter(|_| self.rng.f64() < 0.35)
            .map(|t| *t + Duration::hours(1))
            .collect();
        must.extend(follow);
        must.retain(|t| *t < end);
        let mut chosen: Vec<DateTime<Utc>> = must.into_iter().collect();
        let budget = self.sc.runs.max(1);
        if chosen.len() > budget {
            let first = chosen[0];
            self.rng.shuffle(&mut chosen[1..]);
            chosen.truncate(budget);
            chosen[0] = first;
        }
        let mut set: BTreeSet<DateTime<Utc>> = chosen.into_iter().collect();
        let hours = (self.sc.days * 24).max(1);
        if budget as i64 >= hours {
            for h in 0..hours {
                set.insert(slot_after(start + Duration::hours(h)));
            }
        } else {
            let mut guard = 0;
            while set.len() < budget && guard < budget * 20 {
                guard += 1;
                set.insert(slot_after(start + Duration::hours(self.rng.i64(0..hours))));
            }
        }
        set.retain(|t| *t < end);
        set.into_iter().collect()
    }

    /// Run the world to its end.
    pub fn simulate(self) -> WorldReport {
        self.simulate_until(None)
    }

    /// Run the world to its end, or only until a run breaks `stop` (the mutation check's
    /// harness faults are caught as soon as their invariant fails once).
    pub fn simulate_until(mut self, stop: Option<Invariant>) -> WorldReport {
        let wall = Instant::now();
        let end = self.sc.start + Duration::days(self.sc.days);
        let runs = self.plan();
        for (i, t) in self.tenants.clone().iter().enumerate() {
            let from = self.sc.start + Duration::days(t.joins_on_day);
            if t.joins_on_day > 0 {
                self.agenda.at(from, Human::Join { tenant: i });
            }
            let rng = if t.upgrade.is_some() {
                &mut self.up_rng
            } else {
                &mut self.rng
            };
            actors::background(rng, &mut self.agenda, from, end, i, &t.persona);
        }
        actors::maintainers(&mut self.rng, &mut self.agenda, self.sc.start, end);
        // The acts of issue 23 happen to the tenants that existed then.
        let older = self.tenants.iter().filter(|t| t.upgrade.is_none()).count();
        actors::by_hand(&mut self.acts, &mut self.agenda, self.sc.start, end, older);
        for t in runs {
            for (at, h) in self.agenda.due(t) {
                self.clock.set(at);
                let who = h.tenant().map(|i| self.tenants[i].name).unwrap_or("");
                if let Some(label) = self.act(h) {
                    if std::env::var_os("SIM_TRACE").is_some() {
                        eprintln!("  {} {label} {who}", at.format("%Y-%m-%d %H:%M"));
                    }
                    *self.humans.entry(label).or_default() += 1;
                }
            }
            self.run(t);
            if stop.is_some_and(|s| self.violations.iter().any(|v| v.invariant == s)) {
                break;
            }
        }
        let (latency, latency_excluded) = self.latency();
        WorldReport {
            name: self.sc.name.clone(),
            forge: self.backend.kind().to_string(),
            upstream: if self.upstream.is_http() {
                "HTTP (fixture server, ETag cache)".into()
            } else {
                "snapshots".into()
            },
            seed: self.sc.seed,
            start: Some(self.sc.start),
            days: self.sc.days,
            published: self.ledger.published.len(),
            withdrawn: self
                .ledger
                .published
                .values()
                .filter(|p| p.withdrawn.is_some())
                .count(),
            pulls_opened: self.pulls_seen.len(),
            provenance: self.upstream.timeline.provenance(),
            latency,
            latency_excluded,
            end_of_life: upgrades::outcomes(
                &self.ledger,
                &self.active_tenants(),
                &self.eol(),
                self.sc.start,
                end,
            ),
            upgrade_pulls: (
                self.upgrade_seen.len(),
                self.ledger.upgrade_merged,
                self.ledger.upgrade_declined.len(),
                self.ledger.ticked.len(),
            ),
            records: std::mem::take(&mut self.ledger.runs),
            humans: self.humans,
            faults: self.faults,
            violations: self.violations,
            coverage: self.coverage,
            wall: wall.elapsed(),
        }
    }

    /// Whether minor `m` was off an explicit `minors:` list at some moment from `from` to `to`:
    /// then it was not due for release (the promise is to release it only once it is back).
    fn off_the_list(&self, m: u64, from: DateTime<Utc>, to: DateTime<Utc>) -> bool {
        let at_start = self
            .minors_history
            .iter()
            .rev()
            .find(|(at, _)| *at <= from)
            .map(|(_, l)| l);
        let during = self
            .minors_history
            .iter()
            .filter(|(at, _)| *at > from && *at <= to)
            .map(|(_, l)| l);
        at_start
            .into_iter()
            .chain(during)
            .any(|l| l.as_ref().is_some_and(|l| !l.contains(&m)))
    }

    /// Upstream-to-release delay of every release whose release set became complete upstream
    /// after the previous release of its series (the releases upstream caused; a template
    /// edit's or a revert's release is not one), read from the ledger and the timeline; and
    /// how many such releases were left out because their minor was off the explicit
    /// `minors:` list while it waited (not due for release: its delay is the maintainer's).
    fn latency(&self) -> (Vec<i64>, usize) {
        let tl = &self.upstream.timeline;
        let ready = |p: &Published| -> Option<DateTime<Utc>> {
            let k = p.kubernetes?;
            let tag = k.to_string();
            let ga = tl.kube.iter().find(|r| r.tag == tag)?.at;
            let image = tl
                .images
                .iter()
                .find(|(v, _)| v.to_string() == tag)
                .and_then(|(_, i)| i.at)?;
            let mut at = ga.max(image);
            for (chart, v) in &p.components {
                let version = v.to_string();
                if let Some(c) = tl
                    .charts
                    .iter()
                    .find(|c| &c.chart == chart && c.version == version)
                {
                    at = at.max(c.at);
                }
            }
            Some(at)
        };
        let mut by_series: BTreeMap<&str, Vec<&Published>> = BTreeMap::new();
        for p in self.ledger.published.values() {
            by_series.entry(p.series.as_str()).or_default().push(p);
        }
        let mut out = Vec::new();
        let mut excluded = 0;
        for list in by_series.values_mut() {
            list.sort_by_key(|p| p.n);
            for (i, p) in list.iter().enumerate() {
                let Some(r) = ready(p) else { continue };
                let after_previous = i == 0 || list[i - 1].at < r;
                if after_previous && r >= self.sc.start {
                    let minor = read::tag(&p.tag).map(|(_, m, _)| m);
                    if minor.is_some_and(|m| self.off_the_list(m, r, p.at)) {
                        excluded += 1;
                    } else {
                        out.push((p.at - r).num_minutes());
                    }
                }
            }
        }
        (out, excluded)
    }

    /// Minor → its end of life, from the timeline.
    fn eol(&self) -> BTreeMap<u64, chrono::NaiveDate> {
        self.upstream
            .timeline
            .minors
            .iter()
            .map(|m| (m.minor.minor, m.eol))
            .collect()
    }

    // ---- faults ----

    fn pick_fault(&mut self, t: DateTime<Utc>) -> Option<UpFault> {
        let latest: Vec<KubeVersion> = self
            .ledger
            .latest_per_series()
            .values()
            .filter_map(|p| p.kubernetes)
            .map(|k| KubeVersion {
                major: k.major,
                minor: k.minor,
                patch: k.patch,
            })
            .filter(|k| self.upstream.timeline.image_at(*k, t))
            .collect();
        let target_version = |rng: &mut fastrand::Rng| -> Option<KubeVersion> {
            (!latest.is_empty()).then(|| latest[rng.usize(0..latest.len())])
        };
        let roll = self.rng.u32(0..100);
        Some(match roll {
            0..=19 => UpFault::ChecksumError {
                version: target_version(&mut self.rng)?,
                status: if self.rng.bool() { 503 } else { 500 },
            },
            20..=34 => UpFault::ChecksumGone {
                version: target_version(&mut self.rng)?,
            },
            35..=49 => UpFault::ReleasesApiDown,
            50..=66 => {
                // Stale enough to lose the newest chart of some series.
                let newest = self
                    .upstream
                    .timeline
                    .charts_at(t)
                    .into_iter()
                    .filter(|c| c.chart == CCM && !c.version.contains('-'))
                    .map(|c| c.at)
                    .max();
                let days = match newest {
                    Some(at) if (t - at).num_days() < 120 => {
                        (t - at).num_days() + 1 + self.rng.i64(0..20)
                    }
                    _ => self.rng.i64(10..60),
                };
                UpFault::IndexStale { days }
            }
            67..=76 => UpFault::IndexDown,
            77..=91 => UpFault::Timeout(match self.rng.u32(0..4) {
                0 => Target::Releases,
                1 => Target::Index,
                2 => Target::Schedule,
                _ => Target::Checksum(target_version(&mut self.rng)?),
            }),
            _ => UpFault::ScheduleDown,
        })
    }

    // ---- people ----

    fn tenant_obs(&self, i: usize) -> Option<observe::TenantObs> {
        observe::tenant(self.backend.as_ref(), &self.tenants[i])
    }

    /// The tenant's repository, if pull request `pull` is still open (a person acts on an
    /// open pull request only; it may have been merged, closed or superseded meanwhile).
    fn tenant_obs_open(&self, i: usize, pull: u64) -> Option<observe::TenantObs> {
        let obs = self.tenant_obs(i)?;
        obs.pulls
            .iter()
            .any(|p| p.number == pull && p.state == PrState::Open)
            .then_some(obs)
    }

    /// The dashboard issue as a person sees it in the web UI: number, title, body (the issue
    /// that lists steps for approval).
    fn dashboard(&self) -> Option<(u64, String, String)> {
        let person = self.backend.person(&self.loaded, self.clock.clone());
        let issues = person.list_issues(&stacks_repo(), None).ok()?;
        issues
            .into_iter()
            .find(|i| !read::approvals(&i.body).is_empty())
            .map(|i| (i.number, i.title, i.body))
    }

    /// What a person does between runs: `Some(what)` when they did it (for the log and the
    /// counts), `None` when there was nothing to do or the forge refused. One method per kind
    /// of act (`world/acts.rs`).
    fn act(&mut self, h: Human) -> Option<String> {
        let label = self.act_label(&h);
        let now = self.clock.now();
        let runs = self.ledger.runs.len();
        match h {
            Human::Merge {
                tenant,
                pull,
                kind,
                delete_branch,
                attempt,
            } => self.act_merge(tenant, pull, kind, delete_branch, attempt, now),
            Human::UpdateBranch { tenant, pull } => self.act_update_branch(tenant, pull),
            Human::Decline { tenant, pull } => self.act_decline(tenant, pull, runs),
            Human::DeleteBranch { tenant } => self.act_delete_branch(tenant, runs),
            Human::CommitOnBranch { tenant, pull } => self.act_commit_on_branch(tenant, pull, now),
            Human::Renovate { tenant, same_file } => self.act_renovate(tenant, same_file, now),
            Human::Withdraw { delete_tag } => self.act_withdraw(delete_tag, runs),
            Human::EditTemplate => self.act_edit_template(now),
            Human::StacksCommit => self.act_stacks_commit(now),
            Human::MergeRelease {
                pull,
                kind,
                attempt,
            } => self.act_merge_release(pull, kind, attempt, now),
            Human::RepoGone { tenant, gone } => self.act_repo_gone(tenant, gone, now),
            Human::RebuildImage => self.act_rebuild_image(),
            Human::RevertTemplate => self.act_revert_template(),
            Human::ClockBack { hours } => self.act_clock_back(hours),
            Human::SetMinors { explicit } => self.act_set_minors(explicit, now),
            Human::ByHand { tenant, move_minor } => self.act_by_hand(tenant, move_minor),
            Human::MergeUpgrade {
                tenant,
                pull,
                kind,
                delete_branch,
                attempt,
            } => self.act_merge_upgrade(tenant, pull, kind, delete_branch, attempt, now),
            Human::DeclineUpgrade { tenant, pull } => {
                self.act_decline_upgrade(tenant, pull, now, runs)
            }
            Human::Tick { tenant, branch } => self.act_tick(tenant, branch, runs),
            Human::Join { tenant } => self.act_join(tenant),
        }?;
        Some(label)
    }

    // ---- runs ----

    /// Releases that appeared in this run (forge releases, OCI tags), with what they contain.
    fn new_publications(
        &self,
        before: &Observation,
        after: &Observation,
        run: usize,
        t: DateTime<Utc>,
    ) -> Vec<Published> {
        let was = before.published();
        let mut out: Vec<Published> = Vec::new();
        if let Some(oci) = &self.oci {
            for tag in after
                .oci_tags
                .iter()
                .filter(|x| !before.oci_tags.contains(x))
            {
                let Some((series, n)) = Ledger::parse(tag) else {
                    continue;
                };
                let files = oci.pull(tag).unwrap_or_default();
                let (kubernetes, components, content) = invariants::read_published(&files);
                out.push(Published {
                    tag: tag.to_string(),
                    series,
                    n,
                    content,
                    kubernetes,
                    components,
                    targets: BTreeSet::from(["oci"]),
                    run,
                    at: t,
                    withdrawn: None,
                    reissue_reported: false,
                });
            }
        }
        for (tag, rel) in after.published() {
            if let Some(p) = out.iter_mut().find(|p| p.tag == tag) {
                p.targets.insert("forge");
                continue;
            }
            if was.contains_key(tag) {
                continue;
            }
            let Some((series, n)) = Ledger::parse(tag) else {
                continue;
            };
            let files: Files = rel
                .assets
                .iter()
                .filter_map(|a| Some((a.clone(), self.backend.asset(STACKS, rel, a)?)))
                .collect();
            let (kubernetes, components, content) = invariants::read_published(&files);
            out.push(Published {
                tag: tag.to_string(),
                series,
                n,
                content,
                kubernetes,
                components,
                targets: BTreeSet::from(["forge"]),
                run,
                at: t,
                withdrawn: None,
                reissue_reported: false,
            });
        }
        out
    }

    /// Teams notice new bot pull requests and plan what they will do about them; in
    /// pull-request mode a maintainer plans to merge each new release pull request.
    fn react(&mut self, after: &Observation, now: DateTime<Utc>) {
        if self.sc.pull_request {
            for p in self.backend.pulls(STACKS) {
                if p.state == PrState::Open
                    && p.head.starts_with("stackbot/release/")
                    && self.handled.insert((usize::MAX, p.number))
                {
                    self.pulls_seen.insert((usize::MAX, p.number));
                    let kind = if self.rng.f64() < 0.7 {
                        MergeMethod::Merge
                    } else {
                        MergeMethod::Squash
                    };
                    let at = now + Duration::minutes(self.rng.i64(30..36 * 60));
                    self.agenda.at(
                        at,
                        Human::MergeRelease {
                            pull: p.number,
                            kind,
                            attempt: 0,
                        },
                    );
                }
            }
        }
        for (i, t) in self.tenants.iter().enumerate() {
            if !self.active[i] {
                continue;
            }
            let Some(obs) = after.tenants.get(t.name) else {
                continue;
            };
            for p in &obs.pulls {
                self.pulls_seen.insert((i, p.number));
            }
            if let Some(n) = actors::open_bot_pull(&obs.pulls)
                && self.handled.insert((i, n))
            {
                if self.sc.update_after_main_moved {
                    actors::update_after_main_moved(&mut self.agenda, now, i, n);
                    continue;
                }
                let rng = if t.upgrade.is_some() {
                    &mut self.up_rng
                } else {
                    &mut self.rng
                };
                actors::react(rng, &mut self.agenda, now, i, n, &t.persona);
            }
        }
        self.react_upgrades(after, now);
    }

    /// Teams with Cluster upgrades plan what they do about each new upgrade pull request
    /// (merge it some hours later; the first of a Cluster named `decline_first` is closed),
    /// and with `approval` a person ticks each step the dashboard lists, days later.
    fn react_upgrades(&mut self, after: &Observation, now: DateTime<Utc>) {
        let mut waiting_listed = None;
        for (i, t) in self.tenants.clone().iter().enumerate() {
            let Some(u) = t.upgrade.as_ref().filter(|_| self.active[i]) else {
                continue;
            };
            let Some(obs) = after.upgrades.get(t.name) else {
                continue;
            };
            for (p, _) in obs.open() {
                self.pulls_seen.insert((i, p.number));
                if !self.upgrade_seen.insert((i, p.number)) {
                    continue;
                }
                let cluster = read::upgrade_branch(&p.head)
                    .map(|(id, _)| id)
                    .unwrap_or_default();
                let first = u.decline_first.is_some_and(|c| {
                    cluster == format!("{}-{c}", tenants::CLUSTER_NAMESPACE)
                        && self.declined_first.insert((i, cluster.clone()))
                });
                let at = now + actors::hours(&mut self.up_rng, u.merge_hours.0, u.merge_hours.1);
                if first {
                    self.agenda.at(
                        at,
                        Human::DeclineUpgrade {
                            tenant: i,
                            pull: p.number,
                        },
                    );
                } else {
                    let kind = actors::weighted(&mut self.up_rng, t.persona.merge);
                    let delete_branch = self.up_rng.f64() < t.persona.delete_branch;
                    self.agenda.at(
                        at,
                        Human::MergeUpgrade {
                            tenant: i,
                            pull: p.number,
                            kind,
                            delete_branch,
                            attempt: 1,
                        },
                    );
                }
            }
            if u.mode != UpgradeMode::Approval {
                continue;
            }
            let listed = waiting_listed.get_or_insert_with(|| {
                self.dashboard()
                    .map(|(_, _, body)| read::approvals(&body))
                    .unwrap_or_default()
            });
            for (tenant, branch, ticked) in listed.iter() {
                if tenant != t.name || *ticked {
                    continue;
                }
                if self.tick_planned.insert((i, branch.clone())) {
                    let at = now + actors::hours(&mut self.up_rng, u.tick_hours.0, u.tick_hours.1);
                    self.agenda.at(
                        at,
                        Human::Tick {
                            tenant: i,
                            branch: branch.clone(),
                        },
                    );
                }
            }
        }
        if let Some(listed) = waiting_listed {
            self.ledger.waiting = listed
                .into_iter()
                .filter(|(_, _, ticked)| !ticked)
                .filter_map(|(tenant, branch, _)| {
                    let t = self.tenants.iter().find(|t| t.name == tenant)?;
                    Some((t.name, branch))
                })
                .collect();
        }
    }
}

/// What the second of two overlapping runs did: while it held the run lock, its writes, its
/// exit code.
struct Overlap {
    held: (Instant, Instant),
    writes: u64,
    exit: i32,
}

fn stacks_repo() -> stackbot::forge::RepoRef {
    stackbot::forge::RepoRef::parse(STACKS).expect("owner/name")
}

fn active_tenants<'a>(tenants: &'a [Tenant], on: &[bool]) -> Vec<&'a Tenant> {
    tenants
        .iter()
        .zip(on)
        .filter(|(_, a)| **a)
        .map(|(t, _)| t)
        .collect()
}

/// Write the world's `stackbot.yaml` (real upstream URLs or the fixture server, the real
/// scs2 templates, the forge, the active tenants) and load it as the CLI would.
#[allow(clippy::too_many_arguments)]
fn write_config(
    dir: &Path,
    sc: &Scenario,
    minors: Option<&[u64]>,
    upstream: &Upstream,
    backend: &dyn Backend,
    oci: Option<&Oci>,
    tenants: &[&Tenant],
) -> Loaded {
    let u = &upstream.urls;
    let mut y = upstream.upstream_yaml(dir);
    if let Some(o) = oci {
        y.push_str(&o.yaml(if sc.oci_too { "[forge, oci]" } else { "[oci]" }));
    }
    y.push_str(&format!(
        r#"stacks:
  - provider: openstack
    name: scs2
    templates: templates/openstack/scs2
    output: cluster-stacks/openstack/scs2
    minors: {minors}
    node_image:
      url: "{capi}/ubuntu-{{ubuntu}}-kube-v{{minor}}/ubuntu-{{ubuntu}}-kube-{{version}}.qcow2"
      name: "ubuntu-capi-image-{{version}}"
      vars_by_version:
        - since: v1.0.0
          vars: {{ ubuntu: "2204" }}
        - since: v1.33.4
          vars: {{ ubuntu: "2404" }}
    components:
      ccm:
        chart: openstack-cloud-controller-manager
        repository: {cpo}
        version: {{ series: "2.{{minor}}" }}
      csi:
        chart: openstack-cinder-csi
        repository: {cpo}
        version: {{ series: "2.{{minor}}" }}
      cni:
        chart: cilium
        repository: {cilium}
        version: {{ pin: 1.18.9 }}
      metrics-server:
        chart: metrics-server
        repository: {metrics}
        version: {{ pin: 3.13.0 }}
forge:
{forge}  repository: {STACKS}
  base_branch: main
  mode: {mode}
  committer:
    name: stackbot
    email: stackbot@users.noreply.github.com
tenants:
"#,
        capi = u.capi,
        cpo = u.cpo,
        cilium = u.cilium,
        metrics = u.metrics_server,
        forge = backend.forge_yaml(),
        minors = match minors {
            Some(list) => format!(
                "[{}]",
                list.iter()
                    .map(|m| format!("\"1.{m}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => "supported".to_string(),
        },
        mode = if sc.pull_request {
            "pull-request"
        } else {
            "direct"
        },
    ));
    for t in tenants {
        y.push_str(&t.config_yaml());
    }
    let path = dir.join("stackbot.yaml");
    std::fs::write(&path, y).expect("write stackbot.yaml");
    stackbot::config::load(&path)
        .unwrap_or_else(|e| panic!("the simulation's stackbot.yaml is valid: {e}"))
}
