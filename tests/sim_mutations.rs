//! The mutation check of the world simulator (issue 23): each guard the bot keeps a promise
//! with is disabled in turn (`stackbot::mutation`, a test-only switch), and the short world
//! the seed of `cargo test` simulates must catch it — the invariant that states the promise
//! fails. An invariant that stays green with its guard gone proves nothing.
//!
//! Its own test binary: the switch is global to the process, so each mutated world runs in a
//! child process of this binary, apart from the unmutated worlds of `tests/world_sim.rs`.

mod sim;
mod support;
use support::{registry, upstream_server};

use sim::Settings;
use sim::invariants::Invariant;
use sim::world::{ForgeKind, Scenario, World};

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
        // Promises about a run the forge stopped: the local world's first crash that stops a
        // run comes late (run 77 of 100), so these two get a forge that crashes in 30 % of
        // the runs; the short horizon keeps the mutation check within the test budget.
        Invariant::TransientNotExit2 | Invariant::FailureExits1 => Scenario {
            forge_faults: 0.3,
            ..settings.scenario(ForgeKind::Local, 0)
        },
        _ => settings.scenario(ForgeKind::Local, 0),
    };
    let world = World::new(scenario);
    stackbot::mutation::set(Some(guard));
    let report = world.simulate_until(Some(inv));
    stackbot::mutation::set(None);
    report
        .violations
        .iter()
        .find(|v| v.invariant == inv)
        .map(|v| (v.run, v.to_string()))
}

/// The test below runs each mutation in a child process of this test binary (the switch is
/// global to a process), as many at a time as the machine has cores.
const CHILD: &str = "SIM_MUTATION";
const TEST: &str = "every_guard_disabled_in_turn_is_caught_by_its_invariant_within_the_short_run";

#[test]
fn every_guard_disabled_in_turn_is_caught_by_its_invariant_within_the_short_run() {
    if let Ok(guard) = std::env::var(CHILD) {
        let guard = stackbot::mutation::NAMES
            .iter()
            .find(|n| **n == guard)
            .expect("a known mutation");
        match caught(guard) {
            Some((run, v)) => println!("caught in run {run}: {v}"),
            None => panic!("{guard}: not caught"),
        }
        return;
    }
    let exe = std::env::current_exe().expect("test binary");
    let spawn = |guard: &str| {
        std::process::Command::new(&exe)
            .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
            .env(CHILD, guard)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn a child test")
    };
    // A pool as wide as the machine: a child starts as soon as another ends (the worlds take
    // from 1 to 60 runs to catch their mutation, so fixed batches would wait for the slowest).
    let width = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    let mut queue = stackbot::mutation::NAMES.iter().copied();
    let mut running: Vec<(&str, std::process::Child)> = Vec::new();
    let mut missed = Vec::new();
    loop {
        while running.len() < width
            && let Some(g) = queue.next()
        {
            running.push((g, spawn(g)));
        }
        if running.is_empty() {
            break;
        }
        let Some(done) = running
            .iter_mut()
            .position(|(_, c)| c.try_wait().expect("child test").is_some())
        else {
            std::thread::sleep(std::time::Duration::from_millis(20));
            continue;
        };
        let (guard, child) = running.swap_remove(done);
        let out = child.wait_with_output().expect("child test");
        let stdout = String::from_utf8_lossy(&out.stdout);
        // libtest prints `test <name> ... ` before the child's own line.
        match stdout
            .lines()
            .find_map(|l| l.find("caught in run").map(|i| &l[i..]))
        {
            Some(line) if out.status.success() => eprintln!("{guard}: {line}"),
            _ => missed.push(guard),
        }
    }
    assert!(
        missed.is_empty(),
        "with these guards disabled the short worlds stayed green, so their invariants test \
         nothing: {missed:?}"
    );
}
