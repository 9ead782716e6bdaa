//! The world simulator (issue 12): a year of hourly `stackbot release` runs on the local forge
//! and on the fake GitHub, with upstream from the real Kubernetes GA dates, flaky answers and
//! people acting between runs; every promise of issue 12 is checked after every run. See
//! `tests/sim/mod.rs` for the design and the knobs (`SIM_SEED`, `SIM_RUNS`, …) and
//! `benches/sim_year.rs` for the report.

mod sim;
use stackbot_testkit as support;
use support::{registry, upstream_server};

use sim::Settings;
use sim::invariants::Invariant;
use sim::report::Summary;
use sim::world::{ForgeKind, HarnessFault, Scenario, World};

/// Simulate the worlds `scenario` makes and fail on any violation; with the default seed and
/// budget also when a situation in `guaranteed` never occurred: a promise whose situation
/// does not arise is not tested, however green the run (a change to the simulator's faults or
/// people must not silently stop testing it).
fn year_of(scenario: impl Fn(&Settings, u64) -> sim::world::Scenario, guaranteed: &[Invariant]) {
    let settings = Settings::from_env();
    let worlds: Vec<_> = (0..settings.seeds)
        .map(|i| World::new(scenario(&settings, i)).simulate())
        .collect();
    let summary = Summary { worlds: &worlds };
    eprintln!("{}", summary.markdown());
    if Settings::defaults() {
        let never: Vec<&str> = guaranteed
            .iter()
            .filter(|i| summary.coverage(**i).0 == 0)
            .map(|i| i.name())
            .collect();
        assert!(
            never.is_empty(),
            "the situation these invariants guard never occurred with the default seed and \
             budget, so they went untested: {never:?}"
        );
    }
    let findings = summary.findings();
    if findings.is_empty() || Settings::report_only() {
        return;
    }
    let mut msg = format!(
        "{} invariant violation(s) in {} runs, {} distinct; reproduce one with its SIM_SEED and \
         SIM_RUNS and SIM_TRACE=1 (a line per run, human event and violation), e.g. \
         `SIM_SEED={} SIM_RUNS={} SIM_TRACE=1 cargo test --test world_sim -- {} --nocapture`:\n",
        summary.violations().len(),
        summary.runs(),
        findings.len(),
        findings[0].0.seed,
        findings[0].0.budget,
        test_filter(&findings[0].0.world),
    );
    for (v, repeats) in findings.iter().take(40) {
        let again = if *repeats > 1 {
            format!(" (and {} more runs)", repeats - 1)
        } else {
            String::new()
        };
        msg.push_str(&format!("  {v}{again}\n"));
    }
    panic!("{msg}");
}

/// The situations each world produces with the default seed (2026) and budget, measured
/// (the report's "occurred / held" column). Only situations the seed fixes: upstream faults
/// and people are seeded; which write a forge crash hits can vary with the tenants'
/// concurrency, so situations that follow from a forge fault (`failure-exits-1`,
/// `no-duplicates`: a run resuming after one) are required only on the local forge, whose
/// crashes are the only forge fault and occur several times.
const LOCAL: [Invariant; 18] = [
    Invariant::OnlyConfiguredMinors,
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
    Invariant::ClusterOneMinorPerStep,
    Invariant::ClusterWaitsForApproval,
    Invariant::ClusterSupportedAtEndOfLife,
];
const GITHUB: [Invariant; 12] = [
    Invariant::OnlyConfiguredMinors,
    Invariant::NoDowngrade,
    Invariant::NumberNeverReused,
    Invariant::NoRewriteOnBaseMove,
    Invariant::DeclinedStaysClosed,
    Invariant::MergesByContent,
    Invariant::FollowEveryTarget,
    Invariant::BoundedCost,
    Invariant::TransientNotExit2,
    Invariant::MergedGetsNext,
    Invariant::UpstreamErrorExits1,
    Invariant::GoneExits0,
];
/// Published only to OCI, every tenant follows an OCI-only release: `tenants-follow-every-target`
/// stands for `merged-tenant-gets-next-release` there.
const OCI: [Invariant; 10] = [
    Invariant::OnlyConfiguredMinors,
    Invariant::NoDowngrade,
    Invariant::NumberNeverReused,
    Invariant::NoRewriteOnBaseMove,
    Invariant::DeclinedStaysClosed,
    Invariant::MergesByContent,
    Invariant::FollowEveryTarget,
    Invariant::BoundedCost,
    Invariant::TransientNotExit2,
    Invariant::GoneExits0,
];

/// The test that simulates a world.
fn test_filter(world: &str) -> &'static str {
    match world {
        "local" => "local_forge",
        "github" => "a_year_on_the_fake_github",
        "github+oci" => "forge_and_oci",
        "local-pr" => "pull_request_mode",
        _ => "only_to_oci",
    }
}

#[test]
fn a_year_on_the_local_forge_keeps_every_promise() {
    year_of(|s, i| s.scenario(ForgeKind::Local, i), &LOCAL);
}

#[test]
fn a_year_on_the_fake_github_keeps_every_promise() {
    year_of(|s, i| s.scenario(ForgeKind::Github, i), &GITHUB);
}

#[test]
fn a_year_published_only_to_oci_keeps_every_promise() {
    year_of(|s, i| s.oci_scenario(i), &OCI);
}

/// Measured with the default seed and budget (25 runs, fake GitHub, HTTP upstream).
const BOTH: [Invariant; 11] = [
    Invariant::OnlyConfiguredMinors,
    Invariant::EveryTarget,
    Invariant::NoDowngrade,
    Invariant::NumberNeverReused,
    Invariant::NoRewriteOnBaseMove,
    Invariant::DeclinedStaysClosed,
    Invariant::MergesByContent,
    Invariant::FollowEveryTarget,
    Invariant::BoundedCost,
    Invariant::TransientNotExit2,
    Invariant::MergedGetsNext,
];

#[test]
fn a_year_published_to_forge_and_oci_on_the_fake_github_keeps_every_promise() {
    year_of(|s, i| s.both_scenario(i), &BOTH);
}

/// Measured with the default seed and budget (40 runs, local forge, release pull requests
/// merged by a maintainer hours after they open; now and then a second run at the same time).
const PULL_REQUEST: [Invariant; 11] = [
    Invariant::OnlyConfiguredMinors,
    Invariant::RunsTakeTurns,
    Invariant::NoDowngrade,
    Invariant::NumberNeverReused,
    Invariant::NoRewriteOnBaseMove,
    Invariant::DeclinedStaysClosed,
    Invariant::MergesByContent,
    Invariant::FollowEveryTarget,
    Invariant::BoundedCost,
    Invariant::TransientNotExit2,
    Invariant::MergedGetsNext,
];

#[test]
fn a_year_in_pull_request_mode_keeps_every_promise() {
    year_of(|s, i| s.pull_request_scenario(i), &PULL_REQUEST);
}

/// The mutation check's two harness faults (`HarnessFault`; every other guard is removed from
/// the source by cargo-mutants, `.cargo/mutants.toml`, with this file as its test): the
/// world, its harness breaking `inv`'s promise around a correct bot, catches it, and says in
/// which run.
fn caught_in(scenario: Scenario, inv: Invariant) -> usize {
    let report = World::new(scenario).simulate_until(Some(inv));
    let v = report
        .violations
        .iter()
        .find(|v| v.invariant == inv)
        .unwrap_or_else(|| panic!("{}: the short world stayed green", inv.name()));
    eprintln!("{}: caught in run {}: {v}", inv.name(), v.run);
    v.run
}

#[test]
fn a_second_run_without_the_run_lock_is_caught_by_overlapping_runs_take_turns() {
    let s = Settings::from_env();
    let scenario = Scenario {
        harness_fault: Some(HarnessFault::SecondRunWithoutLock),
        ..s.pull_request_scenario(0)
    };
    caught_in(scenario, Invariant::RunsTakeTurns);
}

#[test]
fn a_bot_that_reads_the_whole_history_is_caught_by_the_cost_bound() {
    let s = Settings::from_env();
    let scenario = Scenario {
        harness_fault: Some(HarnessFault::ReadsHistory),
        ..s.scenario(ForgeKind::Local, 0)
    };
    caught_in(scenario, Invariant::BoundedCost);
}

/// A team that lands a change to the ClusterStack file on `main` and then presses "Update
/// branch" leaves the bot's branch holding exactly the desired files, under a bot commit whose
/// trailer names the older base's content: the bot must recognise the branch by its files
/// (`tenants::branch::holds_files`) and leave the person's merge alone. The default worlds
/// produce this only with other seeds (docs/reliability.md), so this world produces it by
/// construction, every hour for two days, without faults; the mutation check removes the guard
/// and needs this test to fail.
#[test]
fn a_branch_a_person_updated_after_main_changed_the_edited_file_is_not_rewritten() {
    let s = Settings::from_env();
    let report = World::new(Scenario {
        name: "local-update-branch".into(),
        days: 2,
        runs: 48,
        upstream_faults: 0.0,
        forge_faults: 0.0,
        update_after_main_moved: true,
        ..s.scenario(ForgeKind::Local, 0)
    })
    .simulate();
    let done = |h: sim::actors::Human| report.humans.get(&h.label()).copied().unwrap_or(0);
    let changed = done(sim::actors::Human::Renovate {
        tenant: 0,
        same_file: true,
    });
    let updated = done(sim::actors::Human::UpdateBranch { tenant: 0, pull: 0 });
    assert!(
        changed > 0 && updated > 0,
        "the world must produce the situation: {changed} same-file commit(s) on main, \
         {updated} \"Update branch\" merge(s); people: {:?}",
        report.humans
    );
    let (occurred, _) = report
        .coverage
        .get(&Invariant::NoRewriteOnBaseMove)
        .copied()
        .unwrap_or_default();
    assert!(occurred > 0, "no run saw a branch behind a moved base");
    let broken: Vec<String> = report.violations.iter().map(|v| v.to_string()).collect();
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn the_timeline_keeps_the_real_dates_and_extends_them_plausibly() {
    use sim::timeline::{Timeline, second_tuesday};
    let start = "2025-08-01T00:00:00Z".parse().unwrap();
    let t = Timeline::build(start, 365, 1);
    let ga = |tag: &str| t.kube.iter().find(|r| r.tag == tag).map(|r| (r.at, r.real));
    // Real: tag dates of the fixture.
    assert_eq!(
        ga("v1.34.0").unwrap(),
        ("2025-08-27T15:00:00Z".parse().unwrap(), true)
    );
    assert_eq!(
        ga("v1.36.0").unwrap().0.to_rfc3339(),
        "2026-04-22T17:00:00+00:00"
    );
    // Synthetic: the second Tuesday of May 2026 is the real target date of v1.36.1.
    assert_eq!(second_tuesday(2026, 5).to_string(), "2026-05-12");
    let (at, real) = ga("v1.36.1").unwrap();
    assert!(!real && (at.date_naive() - second_tuesday(2026, 5)).num_days() <= 1);
    // No patch after end of life; 1.33 ends 2026-06-28.
    assert!(
        t.kube
            .iter()
            .filter_map(|r| r.ga.filter(|g| g.minor == 33).map(|_| r.at))
            .all(|a| a.date_naive() <= "2026-06-28".parse().unwrap())
    );
    // Charts: real publication times (2.34.0 on 2025-10-13), nothing before.
    let at_day = |d: &str| format!("{d}T00:00:00Z").parse().unwrap();
    let has = |d: &str, v: &str| t.charts_at(at_day(d)).iter().any(|c| c.version == v);
    assert!(!has("2025-10-12", "2.34.0") && has("2025-10-14", "2.34.0"));
    assert!(has("2026-05-14", "2.36.0"));
    // Every synthetic minor gets its charts after its GA.
    let minors = t.supported_at(at_day("2026-07-31"));
    assert!(minors.iter().any(|m| m.minor == 36), "{minors:?}");
}
