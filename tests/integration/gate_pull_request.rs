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
    to_pull_request_mode(&d);
    d
}

/// Switch `d` to `forge.mode: pull-request`.
pub(crate) fn to_pull_request_mode(d: &Demo) {
    let cfg = d.local().join("stackbot.yaml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    assert!(text.contains("  mode: direct\n"));
    std::fs::write(
        &cfg,
        text.replacen("  mode: direct\n", "  mode: pull-request\n", 1),
    )
    .unwrap();
}

/// The release pull requests of the cluster-stacks repository.
pub(crate) fn release_pulls(d: &Demo) -> Vec<Value> {
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
pub(crate) fn merge_all(d: &Demo) -> Value {
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
pub(crate) fn tenant_pulls(d: &Demo) -> usize {
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

pub(crate) fn bodies(d: &Demo) -> Vec<String> {
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

/// The candidates' tags.
fn candidate_tags(d: &Demo) -> std::collections::BTreeSet<String> {
    d.candidates()
        .iter()
        .map(|c| c["tag"].as_str().unwrap().to_string())
        .collect()
}

/// The candidate pre-release of `stable` whose tag is among `among`.
fn candidate_of(d: &Demo, stable: &str, among: &std::collections::BTreeSet<String>) -> Value {
    d.candidates()
        .into_iter()
        .find(|c| {
            among.contains(c["tag"].as_str().unwrap())
                && c["body"].as_str().unwrap().contains(&format!("`{stable}`"))
        })
        .unwrap_or_else(|| panic!("no candidate of {stable} among {among:?}"))
}

/// Run until the release pull requests' candidates have passed: what the bodies then say.
fn passed_while_open(d: &Demo) -> std::collections::BTreeSet<String> {
    d.go();
    let (code, _, err) = d.release();
    assert_eq!(code, 0, "{err}");
    d.wait_for_tests();
    let (code, _, err) = d.release();
    assert_eq!(code, 0, "{err}");
    for b in bodies(d) {
        assert!(b.contains("**Conformance:** passed"), "{b}");
    }
    let tested = candidate_tags(d);
    assert_eq!(tested.len(), 2);
    tested
}

#[test]
fn content_that_changes_after_its_test_passed_is_a_new_candidate_and_vn_waits_for_its_pass() {
    let d = gated("pass");
    let old = passed_while_open(&d);

    // The stack's templates change (a commit to the cluster-stacks repository the run is
    // checked out from): the rendered result, so the merge's bytes, are not the tested ones.
    // The next tests hold until the test says.
    std::fs::remove_file(d.local().join("gate-go")).unwrap();
    let values = d
        .dir
        .path()
        .join("templates/openstack/scs2/cluster-class/values.yaml");
    let mut text = std::fs::read_to_string(&values).unwrap();
    text.push_str("# tuned by a maintainer\n");
    std::fs::write(&values, text).unwrap();
    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    let new: std::collections::BTreeSet<String> =
        candidate_tags(&d).difference(&old).cloned().collect();
    assert_eq!(new.len(), 2, "a new candidate per release: {r}");
    assert_eq!(d.calls().len(), 4, "each new candidate is tested");
    for b in bodies(&d) {
        assert!(
            b.contains("**Conformance:** in test since")
                && new.iter().any(|c| b.contains(c))
                && !old.iter().any(|c| b.contains(c)),
            "the body follows the new candidate: {b}"
        );
    }

    // Merged while the new candidates are in test: the old evidence promotes nothing.
    let r = merge_all(&d);
    assert!(d.stable().is_empty(), "{r}");
    assert_eq!(tenant_pulls(&d), 0, "{r}");
    assert!(r["skipped"].to_string().contains("in test since"), "{r}");
    assert_eq!(
        d.calls().len(),
        4,
        "nothing is tested again: {:?}",
        d.calls()
    );

    // The new candidates pass: `vN` is made of their bytes, not of the old ones.
    d.go();
    d.wait_for_tests();
    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    assert_eq!(d.stable(), STABLE, "{r}");
    assert!(tenant_pulls(&d) >= 2, "{r}");
    for tag in STABLE {
        let stable = d.assets(&d.release_of(tag));
        let tested = d.assets(&candidate_of(&d, tag, &new));
        let stale = d.assets(&candidate_of(&d, tag, &old));
        for (name, sha) in &stable {
            assert_eq!(tested.get(name), Some(sha), "{name} of {tag}");
        }
        assert!(
            stable
                .iter()
                .any(|(name, sha)| stale.get(name) != Some(sha)),
            "{tag} is not the old candidate's bytes"
        );
    }
    assert_eq!(d.calls().len(), 4);
}

#[test]
fn a_release_branch_edited_by_hand_after_its_test_passed_is_never_published_as_merged() {
    use stackbot::forge::{FileChanges, Forge, RepoRef};
    let d = gated("pass");
    passed_while_open(&d);

    // A maintainer commits to the 1.34 release branch after its test passed, and merges it.
    let human = stackbot::forge::local::LocalForge::new(
        d.dir.path().join(".stackbot/forge"),
        "A Maintainer",
        "maintainer@example.com",
    );
    let repo = RepoRef::parse("scs/cluster-stacks").unwrap();
    let branch = "stackbot/release/openstack-scs2-1-34";
    let head = human.branch_head(&repo, branch).unwrap().unwrap();
    let path = human
        .list_files(&repo, &head)
        .unwrap()
        .into_iter()
        .find(|p| p.contains("1-34/") && p.ends_with("cluster-class/values.yaml"))
        .unwrap();
    let rendered = human.read_file(&repo, &head, &path).unwrap().unwrap();
    let mut edited = rendered.clone();
    edited.extend_from_slice(b"# tuned by hand\n");
    human
        .commit(
            &repo,
            branch,
            &head,
            Some(&head),
            &FileChanges::from([(path.clone(), Some(edited))]),
            "Tune the cluster class",
        )
        .unwrap();
    let number = release_pulls(&d)
        .into_iter()
        .find(|p| p["head"] == branch && p["state"] == "open")
        .unwrap()["number"]
        .as_u64()
        .unwrap();
    human.merge_pull(&repo, number).unwrap();

    // What was merged is not what was tested: nothing is published, no tenant hears of it,
    // and the bot proposes the tested bytes again (no new test: they passed).
    for _ in 0..2 {
        let (code, r, err) = d.release();
        assert_eq!(code, 0, "{err}");
        assert!(d.stable().is_empty(), "{r}");
        assert_eq!(tenant_pulls(&d), 0, "{r}");
    }
    let again = release_pulls(&d)
        .into_iter()
        .find(|p| p["head"] == branch && p["state"] == "open")
        .expect("a new release pull request for 1.34");
    assert!(
        again["body"]
            .as_str()
            .unwrap()
            .contains("**Conformance:** passed"),
        "{again}"
    );
    assert_eq!(d.calls().len(), 2);

    // Merged: `vN` is the tested bytes, and its tag holds what the bot rendered.
    let r = merge_all(&d);
    assert_eq!(d.stable(), STABLE, "{r}");
    let tag = "openstack-scs2-1-34-v1";
    let tested = d.assets(&candidate_of(&d, tag, &candidate_tags(&d)));
    for (name, sha) in d.assets(&d.release_of(tag)) {
        assert_eq!(tested.get(&name), Some(&sha), "{name} of {tag}");
    }
    let tagged = human.tag_target(&repo, tag).unwrap().unwrap();
    assert_eq!(
        human.read_file(&repo, &tagged, &path).unwrap().unwrap(),
        rendered,
        "the tag holds the tested content, not the hand edit"
    );
    assert_eq!(d.calls().len(), 2);
}
