//! End-to-end release against the fake GitHub, the same scenario as on the local forge: the
//! first run publishes, the second makes no write request, and a run interrupted at any write
//! (before or after it took effect, at the trait level and at the HTTP level) is finished by
//! the next run in exactly the state of an uninterrupted run.

use crate::support;

use std::time::Duration;

use crate::support::release::*;
use stackbot::apply;
use stackbot::config::GithubForgeConfig;
use stackbot::forge::Forge;
use stackbot::forge::faulty::{FaultMode, Faulty};
use stackbot::forge::github::{GithubForge, RetryPolicy};
use support::fake_github::{FakeGithub, FakeOptions, Fault, Faults, RandomFaults, Snapshot};

const TOKEN: &str = "ghp_STACKBOTreleaseTOKEN_0123456789";
const REPO: &str = "scs/cluster-stacks";

fn fake() -> FakeGithub {
    let f = FakeGithub::start_with(FakeOptions::default().with_token(TOKEN));
    f.create_repo(REPO, "main", &[("README.md", b"# cluster stacks\n")]);
    f
}

fn github(fake: &FakeGithub, retries: u32) -> GithubForge {
    let cfg = GithubForgeConfig {
        api_url: fake.api_url(),
        upload_url: Some(fake.upload_url()),
        token_env: "STACKBOT_TEST_GITHUB_TOKEN".into(),
        ..GithubForgeConfig::default()
    };
    GithubForge::new(
        &cfg,
        Some(TOKEN.into()),
        std::sync::Arc::new(stackbot::clock::SystemClock),
    )
    .unwrap()
    .with_retry_policy(RetryPolicy {
        max_retries: retries,
        base_delay: Duration::from_millis(2),
        max_delay: Duration::from_millis(20),
        max_rate_limit_wait: Duration::from_secs(5),
    })
}

fn run(f: &dyn Forge) -> anyhow::Result<(stackbot::plan::Plan, apply::Outcome)> {
    Ok(stackbot::pipeline::release::release_desired(
        f,
        &target(),
        &two_minors(),
        &packager,
    )?)
}

/// The state of an uninterrupted first run, and its ordered HTTP writes.
fn clean() -> (Snapshot, usize) {
    let fake = fake();
    run(&github(&fake, 0)).unwrap();
    (comparable(fake.snapshot()), fake.counts().writes)
}

/// The state compared across runs: files, history, tags, releases, assets and release notes
/// must match byte for byte (notes diff against the previous release, so a resumed run writes
/// the same notes as an uninterrupted one).
fn comparable(s: Snapshot) -> Snapshot {
    s
}

fn assert_no_duplicates(s: &Snapshot) {
    let r = &s.repos[REPO];
    assert!(
        r.releases.iter().all(|r| !r.draft),
        "no draft left: {:#?}",
        r.releases
    );
    let mut tags: Vec<&str> = r.releases.iter().map(|r| r.tag.as_str()).collect();
    tags.dedup();
    assert_eq!(tags.len(), r.releases.len(), "one release per tag");
}

#[test]
fn first_run_publishes_and_second_run_makes_no_write_request() {
    let fake = fake();
    let f = github(&fake, 6);
    let (_, out) = run(&f).unwrap();
    assert_eq!(
        out.released,
        vec!["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"]
    );
    let snap = fake.snapshot();
    let r = &snap.repos[REPO];
    assert_eq!(r.releases.len(), 2);
    for rel in &r.releases {
        assert!(!rel.draft);
        assert_eq!(rel.name.as_deref(), Some(rel.tag.as_str()));
        assert!(rel.assets.contains_key("SHA256SUMS") && rel.assets.contains_key("metadata.yaml"));
        assert!(r.tags[&rel.tag].annotated, "annotated tag {}", rel.tag);
    }
    assert!(r.branches["main"].files.contains_key("stackbot.lock"));
    let first = fake.counts();

    fake.reset_counts();
    let (plan, out) = run(&github(&fake, 6)).unwrap();
    assert!(plan.is_noop() && out.released.is_empty());
    let c = fake.counts();
    assert_eq!(c.writes, 0, "a no-op run writes nothing: {c:?}");
    assert_eq!(fake.snapshot(), snap);
    eprintln!(
        "release on the fake GitHub: first run {} requests ({} writes); no-op run {} requests: {:?}",
        first.total(),
        first.writes,
        c.total(),
        c.by_route
    );
}

#[test]
fn an_interruption_at_any_forge_write_is_finished_by_the_next_run() {
    let (want, _) = clean();
    let total = {
        let fake = fake();
        let f = Faulty::new(github(&fake, 0), u64::MAX, FaultMode::Before);
        run(&f).unwrap();
        f.writes()
    };
    assert!(
        total >= 14,
        "two releases need at least 14 writes, saw {total}"
    );
    let mut recovered = 0;
    for mode in [FaultMode::Before, FaultMode::After] {
        for k in 1..=total {
            let fake = fake();
            let faulty = Faulty::new(github(&fake, 0), k, mode);
            assert!(
                run(&faulty).is_err(),
                "write {k} ({mode:?}) must fail the run"
            );
            run(&github(&fake, 0))
                .unwrap_or_else(|e| panic!("resume after write {k} ({mode:?}): {e:#}"));
            let got = comparable(fake.snapshot());
            assert_no_duplicates(&got);
            assert_eq!(got, want, "state after interrupting write {k} ({mode:?})");
            recovered += 1;
        }
    }
    eprintln!(
        "fake GitHub, trait level: {recovered} of {} interruption points recover",
        2 * total
    );
}

#[test]
fn a_failure_at_any_http_write_is_finished_by_the_next_run() {
    let (want, total) = clean();
    let mut recovered = 0;
    for fault in [
        Fault::Status(500),
        Fault::AfterSuccess(502),
        Fault::DropAfterSuccess,
    ] {
        for k in 1..=total {
            let fake = fake();
            fake.set_faults(Faults::write(k, fault.clone()));
            // No retries: the failure reaches the run (unless the lookup after an ambiguous
            // answer already proves the write took effect).
            let _ = run(&github(&fake, 0));
            fake.clear_faults();
            run(&github(&fake, 0))
                .unwrap_or_else(|e| panic!("resume after HTTP write {k} ({fault:?}): {e:#}"));
            let got = comparable(fake.snapshot());
            assert_no_duplicates(&got);
            assert_eq!(got, want, "state after HTTP write {k} failed ({fault:?})");
            recovered += 1;
        }
    }
    eprintln!(
        "fake GitHub, HTTP level: {recovered} of {} interruption points recover",
        3 * total
    );
}

#[test]
fn a_flaky_github_release_run_ends_in_the_clean_state() {
    let (want, _) = clean();
    let clean_requests = {
        let fake = fake();
        run(&github(&fake, 0)).unwrap();
        fake.counts().total()
    };
    for seed in [11u64, 12] {
        let fake = fake();
        let mut r = RandomFaults::flaky(seed);
        r.rate_limit = 0.01;
        fake.set_faults(Faults::random(r));
        let f = github(&fake, 8);
        run(&f).unwrap_or_else(|e| panic!("seed {seed}: {e:#}"));
        fake.clear_faults();
        assert_eq!(comparable(fake.snapshot()), want, "seed {seed}");
        let (sent, retries) = f.request_counts();
        eprintln!(
            "flaky release (seed {seed}): {sent} requests vs {clean_requests} clean (+{}), {retries} retries",
            sent as usize - clean_requests
        );
    }
}
