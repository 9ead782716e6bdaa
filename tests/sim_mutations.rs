//! The mutation check of the world simulator (issue 23): each guard the bot keeps a promise
//! with is disabled in turn (`stackbot::mutation`, a test-only switch), and the short world
//! the seed of `cargo test` simulates must catch it — the invariant that states the promise
//! fails. An invariant that stays green with its guard gone proves nothing.
//!
//! Its own test binary: the switch is global to the process, so the worlds run one after
//! another here, apart from the unmutated worlds of `tests/world_sim.rs`.

#[path = "support/registry.rs"]
mod registry;
mod sim;
mod support;
#[path = "support/upstream_server.rs"]
mod upstream_server;

use sim::Settings;
use sim::invariants::Invariant;
use sim::world::{ForgeKind, World};

/// Disable `guard`, simulate a world of `cargo test` until its invariant fails, and say in
/// which run it did (`None`: never, within the budget). The local world, except for the guards
/// that need a registry: OCI-only releases (the world published to OCI alone) and both
/// targets (the world published to the fake GitHub and OCI); overlapping runs happen in the
/// pull-request world.
fn caught(guard: &'static str) -> Option<(usize, String)> {
    let inv = Invariant::by_name(guard).expect("a mutation is named after its invariant");
    let settings = Settings::from_env();
    let scenario = match inv {
        Invariant::FollowEveryTarget => settings.oci_scenario(0),
        Invariant::EveryTarget => settings.both_scenario(0),
        Invariant::RunsTakeTurns => settings.pull_request_scenario(0),
        _ => settings.scenario(ForgeKind::Local, 0),
    };
    let Some(world) = World::new(scenario) else {
        return Some((0, "skipped: no registry (STACKBOT_SKIP_REGISTRY=1)".into()));
    };
    stackbot::mutation::set(Some(guard));
    let report = world.simulate_until(Some(inv));
    stackbot::mutation::set(None);
    report
        .violations
        .iter()
        .find(|v| v.invariant == inv)
        .map(|v| (v.run, v.to_string()))
}

#[test]
fn every_guard_disabled_in_turn_is_caught_by_its_invariant_within_the_short_run() {
    let mut missed = Vec::new();
    for guard in stackbot::mutation::NAMES {
        match caught(guard) {
            Some((run, v)) => eprintln!("{guard}: caught in run {run}: {v}"),
            None => missed.push(*guard),
        }
    }
    assert!(
        missed.is_empty(),
        "with these guards disabled the short local world stayed green, so their invariants \
         test nothing: {missed:?}"
    );
}
