//! The conformance gate in `forge.mode: pull-request` (issue 30) through the real binary on
//! the local demo: the release pull request is opened as without a gate, its candidate (the
//! bytes the merge produces) is tested while it is open, its body says what the test found,
//! and after the merge `vN` follows only from a passed candidate of the merged bytes.

use serde_json::Value;

use super::gate::{Demo, copy, crash_points, opened_tenant_pulls, release_dying_at};

const STABLE: [&str; 2] = ["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"];

/// The gated demo in pull-request mode.
fn gated(mode: &str) -> Demo {
    let d = Demo::gated(mode);
    let cfg = d.local().join("stackbot.yaml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    assert!(text.contains("  mode: direct\n"));
    std::fs::write(
        &cfg,
        text.replacen("  mode: direct\n", "  mode: pull-request\n", 1),
    )
    .unwrap();
    d
}

/// The release pull requests of the cluster-stacks repository.
fn release_pulls(d: &Demo) -> Vec<Value> {
    let dir = d
        .dir
        .path()
        .join(".stackbot/forge/pulls/scs/cluster-stacks");
    let mut out: Vec<Value> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read(e.path()).ok())
        .map(|b| serde_json::from_slice(&b).unwrap())
        .collect();
    out.sort_by_key(|p| p["number"].as_u64());
    out
}

/// A maintainer merges every open release pull request, one a run: each release run rebuilds
/// the other branches on the new base, as it does without a gate. The last run's report.
fn merge_all(d: &Demo) -> Value {
    let loaded = stackbot::config::load(&d.local().join("stackbot.yaml")).unwrap();
    let clock = std::sync::Arc::new(stackbot::clock::SystemClock);
    let forge = stackbot::forge::local::LocalForge::from_config(&loaded, clock).unwrap();
    let repo = stackbot::forge::RepoRef::parse("scs/cluster-stacks").unwrap();
    let mut report = Value::Null;
    while let Some(p) = release_pulls(d).into_iter().find(|p| p["state"] == "open") {
        forge
            .merge_pull(&repo, p["number"].as_u64().unwrap())
            .unwrap();
        let (code, r, err) = d.release();
        assert_eq!(code, 0, "{err}");
        report = r;
    }
    report
}

/// How many pull requests the tenants got.
fn tenant_pulls(d: &Demo) -> usize {
    ["acme/gitops", "globex/platform"]
        .iter()
        .map(|t| {
            std::fs::read_dir(d.dir.path().join(".stackbot/forge/pulls").join(t))
                .into_iter()
                .flatten()
                .count()
        })
        .sum()
}

fn bodies(d: &Demo) -> Vec<String> {
    release_pulls(d)
        .iter()
        .map(|p| p["body"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_release_pull_request_is_tested_while_open_and_its_merge_publishes_only_a_passed_candidate() {
    let d = gated("pass");
    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    assert_eq!(release_pulls(&d).len(), 2, "{r}");
    assert_eq!(
        d.candidates().len(),
        2,
        "tested while the pull request is open"
    );
    assert_eq!(d.calls().len(), 2);
    for b in bodies(&d) {
        assert!(
            b.contains("once its conformance candidate has passed")
                && b.contains("**Conformance:** in test since"),
            "{b}"
        );
    }
    assert!(d.stable().is_empty());

    // The tests pass: the bodies say so, nothing is published before the merge.
    d.go();
    d.wait_for_tests();
    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    for b in bodies(&d) {
        assert!(
            b.contains("**Conformance:** passed (2 passed, 0 failed, 1 skipped"),
            "{b}"
        );
    }
    assert!(d.stable().is_empty(), "{r}");
    assert!(opened_tenant_pulls(&r).is_empty(), "{r}");
    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    assert!(
        r["actions"].as_array().unwrap().is_empty(),
        "a run with nothing new writes nothing: {r}"
    );

    // The merge publishes the tested bytes, and the tenants hear of it.
    let r = merge_all(&d);
    assert_eq!(d.stable(), STABLE, "{r}");
    assert!(tenant_pulls(&d) >= 2, "{r}");
    assert_eq!(
        d.calls().len(),
        2,
        "the merged bytes are the tested ones: no new test"
    );
    for c in d.candidates() {
        let notes = c["body"].as_str().unwrap();
        let tag = STABLE
            .iter()
            .find(|t| notes.contains(&format!("`{t}`")))
            .unwrap();
        let stable = d.release_of(tag);
        let cand = d.assets(&c);
        for (name, sha) in d.assets(&stable) {
            assert_eq!(cand.get(&name), Some(&sha), "{name} of {tag}");
        }
        assert!(
            stable["body"]
                .as_str()
                .unwrap()
                .contains("**Conformance:** passed"),
            "{stable}"
        );
    }
}

#[test]
fn a_merged_release_pull_request_whose_candidate_failed_is_never_published() {
    let d = gated("fail");
    d.go();
    let (code, _, err) = d.release();
    assert_eq!(code, 0, "{err}");
    d.wait_for_tests();
    let (code, _, err) = d.release();
    assert_eq!(code, 0, "{err}");
    for b in bodies(&d) {
        assert!(
            b.contains("**Conformance:** candidate")
                && b.contains("[sig-apps] Deployment should run the rollout")
                && b.contains("merging this does not publish it"),
            "{b}"
        );
    }
    // Merged anyway: never published, never proposed to a tenant.
    merge_all(&d);
    for _ in 0..2 {
        let (code, r, err) = d.release();
        assert_eq!(code, 0, "{err}");
        assert!(d.stable().is_empty(), "{r}");
        assert!(opened_tenant_pulls(&r).is_empty(), "{r}");
        assert!(
            r["skipped"].to_string().contains("failed conformance"),
            "{r}"
        );
    }
    assert_eq!(tenant_pulls(&d), 0, "no tenant hears of it");
    assert_eq!(d.calls().len(), 2, "a failed candidate is not tested again");
}

#[test]
fn a_crash_at_any_write_of_the_first_run_ends_in_one_pull_request_and_one_test_per_release() {
    use stackbot::forge::faulty::FaultMode;
    let fresh = gated("pass");
    // The tests end as soon as they start: none outlives its world.
    fresh.go();
    let (_, writes) = release_dying_at(&copy(&fresh), 0, FaultMode::Before);
    let points = crash_points(&writes);
    for mode in [FaultMode::Before, FaultMode::After] {
        for &k in &points {
            let w = copy(&fresh);
            let (tripped, _) = release_dying_at(&w, k, mode);
            assert!(tripped, "k={k} {mode:?}");
            let (code, _, err) = w.release();
            assert_eq!(code, 0, "k={k} {mode:?}: {err}");
            let at = format!("k={k} ({}) {mode:?}", writes[k as usize - 1]);
            assert!(
                w.one_test_per_candidate_attempt_1(),
                "{at}: one test per candidate, attempt 1: {:?}",
                w.calls()
            );
            let open: Vec<Value> = release_pulls(&w)
                .into_iter()
                .filter(|p| p["state"] == "open")
                .collect();
            assert_eq!(open.len(), 2, "{at}: one release pull request per release");
            assert!(
                open.iter()
                    .all(|p| p["body"].as_str().unwrap().contains("**Conformance:**")),
                "{at}: {open:?}"
            );
            w.wait_for_tests();
        }
    }
    eprintln!(
        "gate in pull-request mode on the local forge, the first run crashing at {} of its {} writes, before and after: {} of {} end in one pull request and one test per release",
        points.len(),
        writes.len(),
        2 * points.len(),
        2 * points.len()
    );
}
