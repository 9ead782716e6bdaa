//! One hourly run of the simulated world, in its phases: the faults it gets, the release run
//! itself (now and then with a second run started at the same moment), what it returned in the
//! invariants' terms, the checks on what it left behind, and the record of it.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use chrono::{DateTime, Duration, Utc};
use stackbot::forge::faulty::FaultMode;
use stackbot::pipeline::release::Released;
use stackbot::pipeline::{Context, Selection};

use super::super::forge::{Crash, HttpCost};
use super::super::invariants::{self, RunFacts, Violation};
use super::super::ledger::RunRecord;
use super::super::observe::Observation;
use super::super::read;
use super::super::tenants::UpgradeMode;
use super::super::upgrades;
use super::super::upstream::{Target, UpFault};
use super::{ForgeKind, HarnessFault, Overlap, World, active_tenants};

/// The faults one run gets: upstream's, and at most one of a forge that crashes at its k-th
/// write or a flaky GitHub (seeded by the value).
struct Faults {
    upstream: Vec<UpFault>,
    crash: Option<Crash>,
    flaky: Option<u64>,
}

/// What the release run did, read before anything else looks at the world.
struct Ran {
    result: Result<Released, stackbot::pipeline::Error>,
    /// When the run held the run lock, and what the second run did (when there was one).
    overlap: Option<((Instant, Instant), Overlap)>,
    millis: u128,
    http: Option<HttpCost>,
    upstream_requests: usize,
    reads: u64,
    writes: u64,
    by_method: BTreeMap<&'static str, u64>,
}

/// What the run returned, in the terms of the invariants.
struct Returned {
    /// The exit code users would see: the command line's own mapping.
    exit: i32,
    error: Option<String>,
    returned: bool,
    outcomes: BTreeMap<String, String>,
    degraded: Vec<(String, bool, Vec<String>)>,
    failed: Vec<String>,
    warnings: Vec<String>,
}

impl World {
    /// The run at `t`: inject its faults, run `stackbot release` as the scheduled job would,
    /// check every invariant on what it left, record it, and let the people react.
    pub(super) fn run(&mut self, t: DateTime<Utc>) {
        // The runner's clock (and so "today") may be behind; upstream is fed as of `t`.
        let skew = self.clock_back.take().map(Duration::hours);
        let runner_now = t - skew.unwrap_or_else(Duration::zero);
        self.clock.set(t);
        let index = self.ledger.runs.len() + 1;
        let faults = self.faults_of_run(t);
        let image = self.loaded.config.stacks[0].node_image.clone();
        let t0 = Instant::now();
        self.upstream.feed(t, &image, &faults.upstream);
        let _ = self.upstream.take_requests();
        let before = self.observe();
        let prep_ms = t0.elapsed().as_millis();
        let history = self.ledger.history();
        let ran = self.release_run(runner_now, &faults);
        let crashed = faults.crash.is_some_and(|c| ran.writes >= c.at_write);
        let fault_labels = self.count_faults(&faults, crashed);
        trace_plan(&ran);
        let (checksum_error, gone) = upstream_errors(&faults.upstream);
        let Ran {
            result,
            overlap,
            millis,
            http,
            upstream_requests,
            reads,
            writes,
            by_method,
        } = ran;
        let r = returned(result);

        let t1 = Instant::now();
        self.clock.set(t);
        let after = self.observe();
        let new_tags = after
            .tags
            .keys()
            .filter(|k| !before.tags.contains_key(*k))
            .count();
        let world = self.sc.name.clone();
        let facts = RunFacts {
            world: &world,
            seed: self.sc.seed,
            budget: self.sc.runs,
            run: index,
            at: t,
            exit: r.exit,
            error: r.error.as_deref(),
            returned: r.returned,
            degraded: r.degraded,
            failed: r.failed,
            warnings: r.warnings,
            checksum_error,
            gone,
            occurred: Default::default(),
            forge_clean: faults.flaky.is_none() && !crashed,
            resumes: self.resumes(),
            faults: &fault_labels,
            tenant_outcomes: r.outcomes,
            forge_calls: reads + writes,
            http_requests: http.as_ref().map(|h| h.requests),
            series: self.upstream.timeline.supported_at(t).len(),
            tenants: self.active.iter().filter(|a| **a).count(),
            new_tags,
            history,
            oci_only: self.sc.oci_only,
            both_targets: self.sc.oci_too,
            excluded: self.excluded(runner_now),
            overlap: overlap.as_ref().map(|(held, second)| invariants::Overlap {
                first: *held,
                second: second.held,
                second_writes: second.writes,
                second_exit: second.exit,
            }),
        };
        let v = self.check_run(&facts, &before, &after, index, t);
        let check_ms = t1.elapsed().as_millis();
        let record = RunRecord {
            index,
            at: Some(t),
            exit: r.exit,
            reads,
            writes,
            by_method,
            http,
            upstream_requests,
            series: facts.series,
            tenants: facts.tenants,
            history,
            new_tags,
            faults: fault_labels.clone(),
            millis,
            error: r.error.clone(),
        };
        drop(facts);
        self.finish_run(record, v, &after, t, (prep_ms, millis, check_ms));
    }

    /// Keep the run's record and violations (and trace them with `SIM_TRACE`), then let the
    /// people react to what the run left.
    fn finish_run(
        &mut self,
        record: RunRecord,
        v: Vec<Violation>,
        after: &Observation,
        t: DateTime<Utc>,
        ms: (u128, u128, u128),
    ) {
        if std::env::var_os("SIM_TRACE").is_some() {
            trace_run(&record, t, ms, &v);
        }
        self.violations.extend(v);
        self.ledger.runs.push(record);
        self.react(after, t);
    }

    /// The faults of the run at `t`, drawn from the world's seed.
    fn faults_of_run(&mut self, t: DateTime<Utc>) -> Faults {
        let mut upstream = Vec::new();
        if self.rng.f64() < self.sc.upstream_faults
            && let Some(f) = self.pick_fault(t)
        {
            upstream.push(f);
        }
        if self.upstream.is_http() && self.rng.f64() < 0.25 {
            upstream.push(UpFault::Blip(match self.rng.u32(0..3) {
                0 => Target::Releases,
                1 => Target::Index,
                _ => Target::Schedule,
            }));
        }
        let mut crash = None;
        let mut flaky = None;
        if self.rng.f64() < self.sc.forge_faults {
            if self.sc.forge == ForgeKind::Github && self.rng.bool() {
                flaky = Some(self.rng.u64(..));
            } else {
                crash = Some(Crash {
                    at_write: self.rng.u64(1..=10),
                    mode: if self.rng.bool() {
                        FaultMode::Before
                    } else {
                        FaultMode::After
                    },
                });
            }
        }
        Faults {
            upstream,
            crash,
            flaky,
        }
    }

    /// `stackbot release` on the runner's clock, through the bot's forge with the run's faults;
    /// now and then (`Scenario::overlap`) a second run starts at the same moment on its own
    /// thread, through the same run lock as the command line (`LocalForge::lock_run`).
    fn release_run(&mut self, runner_now: DateTime<Utc>, faults: &Faults) -> Ran {
        self.backend.begin_run(faults.flaky);
        self.clock.set(runner_now);
        let bot = self
            .backend
            .bot(&self.loaded, self.clock.clone(), faults.crash);
        let ctx = Context::new(
            self.loaded.clone(),
            runner_now.date_naive(),
            self.backend.env(),
            self.clock.clone(),
        );
        let sel = Selection {
            snapshot: self.upstream.snapshot_path(),
            ..Selection::default()
        };
        let overlap =
            (self.sc.overlap && self.acts.f64() < 0.15).then(|| self.second_run(&ctx, &sel));
        let started = Instant::now();
        let (result, held) = {
            let lock = overlap.as_ref().map(|_| run_lock(&ctx));
            let start = Instant::now();
            let forge: &dyn stackbot::forge::Forge = &*bot;
            let r = stackbot::pipeline::release::release(&ctx, forge, &sel);
            if self.sc.harness_fault == Some(HarnessFault::ReadsHistory) {
                read_history(forge);
            }
            let held = (start, Instant::now());
            drop(lock);
            (r, held)
        };
        let overlap = overlap.map(|h| (held, h.join().expect("second run")));
        let millis = started.elapsed().as_millis();
        let http = self.backend.end_run();
        if overlap.is_some() {
            *self
                .humans
                .entry("a second run started at the same time".into())
                .or_default() += 1;
        }
        Ran {
            result,
            overlap,
            millis,
            http,
            upstream_requests: self.upstream.take_requests(),
            reads: bot.reads(),
            writes: bot.writes(),
            by_method: bot.by_method(),
        }
    }

    /// A second `stackbot release` started at the same moment, on its own thread.
    fn second_run(&self, ctx: &Context, sel: &Selection) -> std::thread::JoinHandle<Overlap> {
        let bot = self.backend.bot(&self.loaded, self.clock.clone(), None);
        let ctx = ctx.clone();
        let sel = sel.clone();
        let locks = self.sc.harness_fault != Some(HarnessFault::SecondRunWithoutLock);
        std::thread::spawn(move || {
            let lock = locks.then(|| run_lock(&ctx));
            let start = Instant::now();
            let r = stackbot::pipeline::release::release(&ctx, &*bot, &sel);
            let end = Instant::now();
            drop(lock);
            Overlap {
                held: (start, end),
                writes: bot.writes(),
                exit: stackbot::pipeline::exit::of_release(&r) as i32,
            }
        })
    }

    /// The run's faults by label (what the report counts), counted into the world's totals.
    fn count_faults(&mut self, faults: &Faults, crashed: bool) -> Vec<String> {
        let mut labels: Vec<String> = faults
            .upstream
            .iter()
            .map(|f| f.label().to_string())
            .collect();
        if let Some(c) = faults.crash.filter(|_| crashed) {
            labels.push(match c.mode {
                FaultMode::Before => "forge crash before a write".into(),
                FaultMode::After => "forge crash after a write".into(),
            });
        }
        if faults.flaky.is_some() {
            labels.push("flaky GitHub API (5xx, dropped connections, rate limits)".into());
        }
        for l in &labels {
            *self.faults.entry(l.clone()).or_default() += 1;
        }
        labels
    }

    /// Whether this run follows one the forge stopped (a crash or a flaky GitHub): it has an
    /// unfinished release to finish.
    fn resumes(&self) -> bool {
        self.ledger.runs.last().is_some_and(|r| {
            r.faults
                .iter()
                .any(|f| f.starts_with("forge crash") || f.starts_with("flaky"))
        })
    }

    /// What the run's `minors:` excludes on the runner's day: every minor past its end of life
    /// (a day of slack for the boundary), and with an explicit list every supported minor not
    /// on it.
    fn excluded(&self, runner_now: DateTime<Utc>) -> BTreeMap<u64, String> {
        let today = runner_now.date_naive();
        let tl = &self.upstream.timeline;
        let mut out: BTreeMap<u64, String> = tl
            .minors
            .iter()
            // The bot's rule (`scs::past_end_of_life`: the end-of-life day is past it), a day
            // later for the boundary.
            .filter(|m| stackbot::model::scs::past_end_of_life(m.eol + Duration::days(1), today))
            .map(|m| (m.minor.minor, format!("past its end of life ({})", m.eol)))
            .collect();
        if let Some(list) = &self.minors {
            for m in tl.supported_at(runner_now).into_iter().map(|m| m.minor) {
                if !list.contains(&m) {
                    out.insert(m, "not in the explicit `minors:` list".into());
                }
            }
        }
        out
    }

    /// Every invariant on what the run left, and which situations they saw (coverage).
    fn check_run(
        &mut self,
        facts: &RunFacts,
        before: &Observation,
        after: &Observation,
        index: usize,
        t: DateTime<Utc>,
    ) -> Vec<Violation> {
        let published = self.new_publications(before, after, index, t);
        let tenants = active_tenants(&self.tenants, &self.active);
        let mut v = invariants::check_publications(facts, &mut self.ledger, published);
        v.extend(invariants::check_tags(
            facts,
            &mut self.ledger,
            before,
            after,
        ));
        v.extend(invariants::check_exit(facts));
        v.extend(invariants::check_cost(facts));
        v.extend(invariants::check_duplicates(facts, &self.ledger, after));
        v.extend(invariants::check_tenants(
            facts,
            &self.ledger,
            self.backend.as_ref(),
            &tenants,
            before,
            after,
        ));
        v.extend(invariants::check_targets(facts, &self.ledger, after));
        v.extend(invariants::check_overlap(facts));
        v.extend(invariants::check_minors(facts, &self.ledger));
        v.extend(invariants::check_blocked(
            facts,
            &self.ledger,
            &tenants,
            after,
        ));
        let unticked_after = self.unticked_after(&tenants);
        v.extend(upgrades::check_upgrades(
            facts,
            &self.ledger,
            &tenants,
            before,
            after,
            &self.eol(),
            &unticked_after,
        ));
        drop(tenants);
        for inv in facts.occurred.borrow().iter() {
            let c = self.coverage.entry(*inv).or_default();
            c.0 += 1;
            if !v.iter().any(|x| x.invariant == *inv) {
                c.1 += 1;
            }
        }
        v
    }

    /// The steps the dashboard lists unticked after the run (only when some tenant asks for
    /// approval: a read of the issues).
    fn unticked_after(&self, tenants: &[&super::Tenant]) -> BTreeSet<(String, String)> {
        let approval = tenants.iter().any(|t| {
            t.upgrade
                .as_ref()
                .is_some_and(|u| u.mode == UpgradeMode::Approval)
        });
        if !approval {
            return BTreeSet::new();
        }
        self.dashboard()
            .map(|(_, _, body)| read::approvals(&body))
            .unwrap_or_default()
            .into_iter()
            .filter(|(_, _, ticked)| !ticked)
            .map(|(t, b, _)| (t, b))
            .collect()
    }
}

/// [`HarnessFault::ReadsHistory`]: every asset of every release, downloaded through `forge`.
fn read_history(forge: &dyn stackbot::forge::Forge) {
    let repo = super::stacks_repo();
    for r in forge.list_releases(&repo).unwrap_or_default() {
        for a in &r.assets {
            let _ = forge.download_asset(&repo, r.id, a);
        }
    }
}

/// The run lock the command line takes on the local forge (`LocalForge::lock_run`).
fn run_lock(ctx: &Context) -> stackbot::forge::local::RunLock {
    stackbot::forge::local::LocalForge::from_config(&ctx.loaded, ctx.clock.clone())
        .expect("local forge")
        .lock_run()
        .expect("run lock")
}

/// Whether the run's upstream faults were an error on a CHECKSUM (`.0`), and whether one made
/// something gone (a CHECKSUM or a chart version withdrawn) with no error injected (`.1`).
fn upstream_errors(faults: &[UpFault]) -> (bool, bool) {
    let checksum_error = faults.iter().any(|f| {
        matches!(
            f,
            UpFault::ChecksumError { .. } | UpFault::Timeout(Target::Checksum(_))
        )
    });
    let errors_injected = faults.iter().any(|f| {
        matches!(
            f,
            UpFault::ChecksumError { .. }
                | UpFault::IndexDown
                | UpFault::Timeout(_)
                | UpFault::ScheduleDown
                | UpFault::ReleasesApiDown
        )
    });
    let gone = !errors_injected
        && faults
            .iter()
            .any(|f| matches!(f, UpFault::ChecksumGone { .. } | UpFault::IndexStale { .. }));
    (checksum_error, gone)
}

/// What `result` says, in the invariants' terms; the result itself is dropped here, before
/// the world is observed again.
fn returned(result: Result<Released, stackbot::pipeline::Error>) -> Returned {
    let exit = stackbot::pipeline::exit::of_release(&result) as i32;
    match &result {
        Ok(r) => {
            let outcomes: BTreeMap<String, String> = r
                .tenants
                .iter()
                .map(|x| {
                    (
                        x.tenant.clone(),
                        serde_json::to_value(&x.outcome)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default(),
                    )
                })
                .collect();
            let tenant_errors: Vec<String> = r
                .tenants
                .iter()
                .filter_map(|x| Some(format!("{}: {}", x.tenant, x.error.as_ref()?)))
                .collect();
            Returned {
                exit,
                error: (!tenant_errors.is_empty()).then(|| tenant_errors.join("; ")),
                returned: true,
                outcomes,
                degraded: r
                    .plan
                    .degraded
                    .iter()
                    .map(|d| (d.series.clone(), d.transient, d.cause.clone()))
                    .collect(),
                failed: r
                    .failed
                    .iter()
                    .map(|f| format!("{}: {}", f.what, f.reason))
                    .collect(),
                warnings: r.plan.warnings.clone(),
            }
        }
        Err(e) => {
            let mut msg = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(s) = src {
                msg.push_str(&format!(": {s}"));
                src = s.source();
            }
            Returned {
                exit,
                error: Some(msg),
                returned: false,
                outcomes: BTreeMap::new(),
                degraded: Vec::new(),
                failed: Vec::new(),
                warnings: Vec::new(),
            }
        }
    }
}

/// `SIM_TRACE=2`: the run's skipped series, warnings, forge calls and every tenant's action.
fn trace_plan(ran: &Ran) {
    if std::env::var_os("SIM_TRACE").is_none_or(|v| v != "2") {
        return;
    }
    let Ok(r) = &ran.result else { return };
    for sk in &r.plan.skipped {
        eprintln!("    skipped {}: {}", sk.what, sk.reason);
    }
    for w in &r.plan.warnings {
        eprintln!("    warning {w}");
    }
    eprintln!("    calls {:?}", ran.by_method);
    for x in &r.tenants {
        eprintln!(
            "    tenant {}: {} {:?} pull {:?} releases {:?}{}",
            x.tenant,
            x.action,
            x.outcome,
            x.pull,
            x.releases,
            x.note
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        );
    }
}

/// `SIM_TRACE=1`: a line per run (and one per violation).
fn trace_run(r: &RunRecord, t: DateTime<Utc>, ms: (u128, u128, u128), v: &[Violation]) {
    let (prep_ms, millis, check_ms) = ms;
    eprintln!(
        "run {} {} exit {} reads {} writes {} tags+{} ({prep_ms} + {millis} + {check_ms} ms) {:?}{}",
        r.index,
        t.format("%Y-%m-%d %H:%M"),
        r.exit,
        r.reads,
        r.writes,
        r.new_tags,
        r.faults,
        r.error
            .as_deref()
            .map(|e| format!(" error: {e}"))
            .unwrap_or_default()
    );
    for x in v {
        eprintln!("  {x}");
    }
}
