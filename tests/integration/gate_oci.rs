//! The conformance gate of a stack published to OCI (issue 30), through the real binary on the
//! local demo and a real registry: the candidate is pushed under the tag CSO's OCI client lists
//! and pulls (`<prefix>-v0-sha-<7>`), tested by the configured command, and only a passing
//! candidate becomes `vN` in the registry, its layers the candidate's blob for blob, before any
//! tenant hears of it. The gate's records stay on the forge, where every run reads them.

use std::collections::BTreeMap;

use stackbot::model::{FileTree, ReleaseName};

use super::gate::{Demo, STABLE, copy, crash_points, opened_tenant_pulls, promote_dying_at, seen};
use super::gate_pull_request::{
    bodies, merge_all, release_pulls, tenant_pulls, to_pull_request_mode,
};
use crate::support::registry::TestRegistry;

/// The gated demo publishing as `publish` says (`[oci]`, `[forge, oci]`) to `reg`.
fn gated_to(mode: &str, publish: &str, reg: &TestRegistry) -> Demo {
    let d = Demo::gated(mode);
    point_at(&d, publish, reg);
    d
}

/// Make `d` publish as `publish` says to `reg` (replacing what its configuration said).
fn point_at(d: &Demo, publish: &str, reg: &TestRegistry) {
    let cfg = d.local().join("stackbot.yaml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let text = text
        .split("\n# stackbot-test-oci\n")
        .next()
        .unwrap()
        .to_string();
    std::fs::write(
        &cfg,
        format!(
            "{text}\n# stackbot-test-oci\npublish: {publish}\noci:\n  registry: \"{0}\"\n  repository: \"{0}/kaas/cluster-stacks\"\n  plain_http: true\n",
            reg.addr
        ),
    )
    .unwrap();
}

/// Every tag of the registry with its manifest's digest.
fn tags(reg: &TestRegistry) -> BTreeMap<String, String> {
    let r = reg.client();
    r.list_tags()
        .unwrap()
        .into_iter()
        .map(|t| {
            let digest = r.manifest(&t).unwrap().unwrap().1;
            (t, digest)
        })
        .collect()
}

fn candidate_tags(reg: &TestRegistry) -> Vec<String> {
    tags(reg)
        .into_keys()
        .filter(|t| t.contains("-v0-sha-"))
        .collect()
}

fn released(r: &serde_json::Value) -> Vec<String> {
    let mut v: Vec<String> = r["released"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

/// Each candidate tag with the OCI reference and digest its test was given.
fn given_references(d: &Demo) -> BTreeMap<String, String> {
    std::fs::read_to_string(d.local().join("gate-oci"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(c, r)| (c.to_string(), r.to_string()))
        .collect()
}

/// The message of the annotated tag `tag` in the demo's cluster-stacks repository.
fn tag_message(d: &Demo, tag: &str) -> String {
    let repo = d
        .dir
        .path()
        .join(".stackbot/forge/repos/scs/cluster-stacks.git");
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["tag", "-l", "--format=%(contents)", tag])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The release `tag` as CSO's OCI client pulls it: every titled layer as a file.
fn pulled(reg: &TestRegistry, tag: &str) -> FileTree {
    reg.client().pull_release(tag).unwrap()
}

/// The stable release of the candidate `cand` (the one of its minor).
fn stable_of(cand: &str) -> ReleaseName {
    let minor = ReleaseName::parse(cand).unwrap().minor;
    STABLE
        .iter()
        .map(|s| ReleaseName::parse(s).unwrap())
        .find(|s| s.minor == minor)
        .unwrap()
}

fn promotes_byte_for_byte(publish: &str) {
    let reg = TestRegistry::start();
    let d = gated_to("pass", publish, &reg);
    let cands = first_run_pushes_the_candidates(&d, &reg, publish);

    // Run 2, the tests still running: nothing new starts, nothing is released.
    let before = tags(&reg);
    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    assert!(released(&r).is_empty(), "{r}");
    assert_eq!(d.calls().len(), 2, "no second start: {:?}", d.calls());
    assert_eq!(tags(&reg), before);
    let (_, status, _) = d.stackbot(&["status"]);
    assert!(status.contains("in test since"), "{status}");

    // The tests pass: run 3 promotes both, and the tenants get pull requests.
    d.go();
    d.wait_for_tests();
    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    assert_eq!(released(&r), STABLE, "{r}");
    assert_eq!(opened_tenant_pulls(&r).len(), 2, "{r}");
    for c in &cands {
        promoted_byte_for_byte(&d, &reg, c);
    }

    // Run 4: nothing left to do.
    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    assert!(released(&r).is_empty(), "{r}");
    assert!(r["actions"].as_array().unwrap().is_empty(), "{r}");
    assert_eq!(d.calls().len(), 2);
}

/// Run 1: each release is pushed as a candidate (verified as one, given to its test by its
/// reference) and its test starts; nothing stable, no tenant hears of anything. The
/// candidates' tags.
fn first_run_pushes_the_candidates(d: &Demo, reg: &TestRegistry, publish: &str) -> Vec<String> {
    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    assert!(released(&r).is_empty(), "{r}");
    assert!(opened_tenant_pulls(&r).is_empty(), "{r}");
    let cands = candidate_tags(reg);
    assert_eq!(cands.len(), 2, "{:?}", tags(reg));
    assert_eq!(tags(reg).len(), 2, "no stable tag yet: {:?}", tags(reg));
    for c in &cands {
        assert_eq!(c.split('-').count(), 7, "a tag CSO parses: {c}");
        let files = pulled(reg, c);
        reg.client()
            .verify_candidate(c, &files, &stable_of(c))
            .unwrap_or_else(|e| panic!("{c}: {e}"));
    }
    assert_eq!(d.calls().len(), 2, "one test per candidate");
    let refs = given_references(d);
    for c in &cands {
        assert_eq!(
            refs.get(c),
            Some(&format!(
                "{}/kaas/cluster-stacks:{c} {}",
                reg.addr,
                tags(reg)[c]
            )),
            "the reference and the digest of the verified manifest: {refs:?}"
        );
    }
    // The gate's records are on the forge; its assets only where the forge is a target.
    let on_forge = publish.contains("forge");
    for c in d.candidates() {
        let names: Vec<String> = d.assets(&c).into_keys().collect();
        assert_eq!(
            names.iter().any(|n| n == "metadata.yaml"),
            on_forge,
            "{publish}: {names:?}"
        );
        assert!(
            names.iter().any(|n| n == "gate-attempt-1.json"),
            "{names:?}"
        );
    }
    cands
}

/// The stable release of candidate `c` is in the registry as `c`'s layers, blob for blob,
/// and its tag links the evidence.
fn promoted_byte_for_byte(d: &Demo, reg: &TestRegistry, c: &str) {
    let manifest_layers = |tag: &str| {
        let (json, _) = reg.client().manifest(tag).unwrap().unwrap();
        stackbot::oci::manifest::layer_sha256s(&json)
    };
    let stable = &stable_of(c).to_string();
    let (cand_layers, stable_layers) = (manifest_layers(c), manifest_layers(stable));
    for (file, sha) in &stable_layers {
        assert_eq!(cand_layers.get(file), Some(sha), "{file} of {stable}");
    }
    assert_eq!(
        cand_layers.len(),
        stable_layers.len() + 1,
        "the chart alias"
    );
    let (cand_files, stable_files) = (pulled(reg, c), pulled(reg, stable));
    for (file, bytes) in &stable_files {
        assert_eq!(cand_files.get(file), Some(bytes), "{file} byte for byte");
    }
    // The tag of `vN` links the evidence (with `oci` alone it has no release notes).
    let message = tag_message(d, stable);
    assert!(
        message.contains("**Conformance:** passed (2 passed, 0 failed, 1 skipped")
            && message.contains(c),
        "{message}"
    );
}

#[test]
fn with_oci_alone_a_passing_candidate_becomes_vn_layer_for_layer_and_only_then_reaches_tenants() {
    promotes_byte_for_byte("[oci]");
}

#[test]
fn with_forge_and_oci_a_passing_candidate_is_promoted_on_both_byte_for_byte() {
    promotes_byte_for_byte("[forge, oci]");
}

#[test]
fn a_failing_candidate_in_the_registry_never_reaches_a_tenant() {
    let reg = TestRegistry::start();
    let d = gated_to("fail", "[oci]", &reg);
    d.go();
    let (code, _, err) = d.release();
    assert_eq!(code, 0, "{err}");
    d.wait_for_tests();
    for _ in 0..2 {
        let (code, r, err) = d.release();
        assert_eq!(
            code, 0,
            "a failed test is reported, not a failed run: {err}"
        );
        assert!(released(&r).is_empty(), "{r}");
        assert!(opened_tenant_pulls(&r).is_empty(), "{r}");
        let skipped = r["skipped"].to_string();
        assert!(skipped.contains("failed conformance"), "{skipped}");
    }
    assert_eq!(
        tags(&reg)
            .keys()
            .filter(|t| !t.contains("-v0-sha-"))
            .count(),
        0,
        "no stable tag: {:?}",
        tags(&reg)
    );
    assert_eq!(d.calls().len(), 2, "a failed candidate is not retried");
    let (_, status, _) = d.stackbot(&["status"]);
    assert!(status.contains("failed conformance"), "{status}");
}

#[test]
fn a_cancelled_test_of_a_registry_candidate_is_retried_once_then_reported() {
    let reg = TestRegistry::start();
    let d = gated_to("cancel", "[oci]", &reg);
    // Each run's tests are cancelled only once that run is over (see `Demo::hold`).
    assert_eq!(d.release().0, 0);
    d.go();
    d.wait_for_tests();
    d.hold();
    // Run 2 records the cancellation and starts attempt 2, on the same candidate.
    let pushed = tags(&reg);
    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    assert!(released(&r).is_empty(), "{r}");
    assert_eq!(d.attempts(), ["1", "1", "2", "2"], "{:?}", d.calls());
    assert_eq!(tags(&reg), pushed, "the retry tests the same tag");
    d.go();
    d.wait_for_tests();
    // Run 3: cancelled twice, reported (exit 1), never released, not started again.
    let (code, r, err) = d.release();
    assert_eq!(code, 1, "{err}");
    assert!(
        r["failed"].to_string().contains("did not finish 2 times"),
        "{r}"
    );
    assert_eq!(d.calls().len(), 4);
    assert_eq!(tags(&reg), pushed, "no stable tag");
    assert!(opened_tenant_pulls(&r).is_empty(), "{r}");
}

/// Delete the manifest `digest` from the demo repository of `reg`, as a person would
/// (`DELETE /v2/<name>/manifests/<digest>`; the test registry allows deletes): the tags that
/// pointed at it are gone.
fn delete_manifest(reg: &TestRegistry, digest: &str) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(&reg.addr).unwrap();
    write!(
        s,
        "DELETE /v2/kaas/cluster-stacks/manifests/{digest} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        reg.addr
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 202"), "{answer}");
}

#[test]
fn a_candidate_tag_deleted_from_the_registry_is_pushed_again_and_its_test_not_restarted() {
    let reg = TestRegistry::start();
    let d = gated_to("pass", "[oci]", &reg);
    assert_eq!(d.release().0, 0);
    let before = tags(&reg);
    let cand = candidate_tags(&reg)
        .into_iter()
        .find(|t| t.starts_with("openstack-scs2-1-34-"))
        .unwrap();
    delete_manifest(&reg, &before[&cand]);
    assert!(!tags(&reg).contains_key(&cand), "{:?}", tags(&reg));

    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    let actions = r["actions"].to_string();
    assert!(
        actions.contains(&format!("push candidate {cand}")),
        "{actions}"
    );
    assert_eq!(tags(&reg), before, "the same bytes under the same tag");
    assert_eq!(d.calls().len(), 2, "the test is not started again");
    assert!(released(&r).is_empty(), "{r}");
}

/// A release the registry could hold under a candidate's tag: valid, but not the candidate.
fn other_release() -> FileTree {
    let mut f = FileTree::new();
    f.insert(
        "metadata.yaml".into(),
        b"versions:\n    clusterStack: v1\n    kubernetes: v1.34.7\n    components:\n        clusterAddon: v1\n        nodeImage: v1\n".to_vec(),
    );
    f.insert(
        "hashes.json".into(),
        br#"{"clusterStack": "someoneelse"}"#.to_vec(),
    );
    f
}

#[test]
fn a_candidate_tag_holding_other_bytes_is_refused_and_never_tested_or_overwritten() {
    let reg = TestRegistry::start();
    let d = gated_to("pass", "[oci]", &reg);
    // The plan names the candidates; someone pushes other bytes under the 1.34 one first.
    let (code, plan, err) = d.stackbot(&["plan", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let at = plan
        .find("openstack-scs2-1-34-v0-sha-")
        .unwrap_or_else(|| panic!("{plan}"));
    let cand = &plan[at..at + "openstack-scs2-1-34-v0-sha-".len() + 7];
    let files = other_release();
    let facts = stackbot::oci::ReleaseFacts::from_files(&files).unwrap();
    reg.client()
        .push_release(cand, &files, &facts, None)
        .unwrap();
    let theirs = tags(&reg)[cand].clone();

    let (code, r, err) = d.release();
    assert_eq!(code, 1, "{err}");
    let failed = r["failed"].to_string();
    assert!(
        failed.contains(cand) && failed.contains("never overwritten"),
        "{failed}"
    );
    assert_eq!(tags(&reg)[cand], theirs, "the tag is left as it was");
    let calls = d.calls();
    assert_eq!(
        calls.len(),
        1,
        "only the 1.33 candidate is tested: {calls:?}"
    );
    assert!(calls[0].starts_with("openstack-scs2-1-33-"), "{calls:?}");
    assert!(
        d.candidates().iter().all(|c| c["tag"] != cand),
        "no pre-release for the refused candidate"
    );
    assert!(opened_tenant_pulls(&r).is_empty(), "{r}");
}

/// A copy of `d` publishing as `publish` says to a copy of `reg`: the world as it stands, to
/// run on once more.
fn fork(d: &Demo, reg: &TestRegistry, publish: &str) -> (Demo, TestRegistry) {
    let reg = reg.fork();
    let w = copy(d);
    point_at(&w, publish, &reg);
    (w, reg)
}

#[test]
fn a_crash_between_the_steps_of_an_oci_promotion_resumes_it_without_duplicates() {
    crash_sweep(
        "[oci]",
        &["upload_asset", "commit", "create_tag", "open_pull"],
    );
}

#[test]
fn a_crash_between_the_steps_of_a_forge_and_oci_promotion_resumes_it_without_duplicates() {
    crash_sweep(
        "[forge, oci]",
        &[
            "upload_asset",
            "commit",
            "create_tag",
            "publish_release",
            "open_pull",
        ],
    );
}

/// Crash the promotion run before each of its forge writes in turn (`writes` must be among
/// them); the next run must end where a run that did not crash ends, registry included.
fn crash_sweep(publish: &str, writes_among: &[&str]) {
    // The tests have passed; the next run records it and promotes.
    let reg = TestRegistry::start();
    let ready = gated_to("pass", publish, &reg);
    // The tests go only once run 1 is over: a test that ended during run 1 would be recorded
    // (and promoted) by it, and the world to crash in would depend on the machine's speed.
    assert_eq!(ready.release().0, 0);
    assert_eq!(ready.calls().len(), 2);
    ready.go();
    ready.wait_for_tests();
    sweep_promotion(&ready, &reg, publish, writes_among, &STABLE);
}

/// Crash the next run of `ready` (whose tests passed) before each of its forge writes in
/// turn; each must end where a run that did not crash ends (which releases `want_released`),
/// registry included, with no test started again.
fn sweep_promotion(
    ready: &Demo,
    reg: &TestRegistry,
    publish: &str,
    writes_among: &[&str],
    want_released: &[&str],
) {
    let (clean, clean_reg) = fork(ready, reg, publish);
    let (code, r, err) = clean.release();
    assert_eq!(code, 0, "{err}");
    assert_eq!(released(&r), want_released, "{r}");
    let want = (seen(&clean), tags(&clean_reg));

    // The promotion's forge writes, from a run that does not crash; the registry's pushes
    // come before the commit and the tag of each release.
    let (counted, counted_reg) = fork(ready, reg, publish);
    let (_, writes) = promote_dying_at(&counted, 0);
    drop(counted_reg);
    for w in writes_among {
        assert!(writes.contains(w), "{w}: {writes:?}");
    }
    for k in crash_points(&writes) {
        let before = writes[k as usize - 1];
        let (w, w_reg) = fork(ready, reg, publish);
        let (tripped, _) = promote_dying_at(&w, k);
        assert!(tripped, "k={k} ({before}): the promotion died there");
        let (code, _, err) = w.release();
        assert_eq!(code, 0, "k={k} ({before}): {err}");
        assert_eq!(
            (seen(&w), tags(&w_reg)),
            want,
            "k={k}, before {before}: the resumed run ends where a clean one does"
        );
        assert_eq!(
            w.calls().len(),
            2,
            "k={k} ({before}): no test is started again: {:?}",
            w.calls()
        );
    }
    eprintln!(
        "gate with `publish: {publish}`: the promotion run crashing before {} of its {} forge writes resumes each time where a clean run ends",
        crash_points(&writes).len(),
        writes.len()
    );
}

#[test]
fn on_github_the_dispatched_test_of_a_registry_candidate_promotes_it_layer_for_layer() {
    use super::gate_github::World;
    let reg = TestRegistry::start();
    let w = World::with(|c| c.oci(&["oci"], &reg.addr));
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    let runs = w.attempt(1);
    assert_eq!(runs.len(), 2, "one run per gated release: {runs:?}");
    let cands = candidate_tags(&reg);
    for r in runs.values() {
        let cand = &r.inputs["candidate"];
        assert!(cands.contains(cand), "{r:?} in {cands:?}");
        // Where the workflow pulls it from: the tag, and the digest of the verified manifest.
        assert_eq!(
            r.inputs["candidate_oci"],
            format!("{}/kaas/cluster-stacks:{cand}", reg.addr),
            "{r:?}"
        );
        assert_eq!(r.inputs["candidate_oci_digest"], tags(&reg)[cand], "{r:?}");
    }
    // With `oci` alone the pre-releases hold the gate's records, the registry the bytes.
    for c in w
        .repo()
        .releases
        .iter()
        .filter(|r| r.tag.contains("-v0-sha-"))
    {
        assert!(
            c.assets.keys().all(|n| n.starts_with("gate-")),
            "{}: {:?}",
            c.tag,
            c.assets.keys()
        );
    }
    assert_eq!(w.tenant_pulls(), 0);

    for r in runs.values() {
        w.finish(r, "success", Some(false));
    }
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    let layers = |tag: &str| {
        let (json, _) = reg.client().manifest(tag).unwrap().unwrap();
        stackbot::oci::manifest::layer_sha256s(&json)
    };
    for (stable, r) in &runs {
        let cand = layers(&r.inputs["candidate"]);
        let promoted = layers(stable);
        assert!(!promoted.is_empty(), "{stable} is in the registry");
        for (file, sha) in &promoted {
            assert_eq!(cand.get(file), Some(sha), "{stable}: {file}");
        }
    }
    assert!(w.tenant_pulls() >= 2, "every tenant gets its pull request");
}

/// A workflow written before the registry inputs existed declares neither `candidate_oci` nor
/// `candidate_oci_digest`: GitHub refuses the dispatch carrying them (422), so the test is
/// dispatched once more without them, the run says why in a warning (the job summary), and
/// the gate goes on as before: no run twice, a passing candidate promoted.
#[test]
fn on_github_a_workflow_without_the_registry_inputs_is_dispatched_without_them_and_warned_of() {
    use super::gate_github::World;
    let reg = TestRegistry::start();
    let w = World::with(|c| {
        c.oci(&["oci"], &reg.addr)
            .gate(serde_json::json!({"workflow": "conformance-v1.yml"}))
    });
    w.fake.add_documented_conformance_workflow_without(
        crate::support::fake_github::demo::STACKS_REPO,
        "conformance-v1.yml",
        &["candidate_oci", "candidate_oci_digest"],
    );
    let (code, out) = w.release();
    assert_eq!(
        code, 0,
        "a workflow missing the optional inputs is no error: {out}"
    );
    assert!(
        out.contains("does not declare the inputs `candidate_oci` and `candidate_oci_digest`"),
        "the run warns of it: {out}"
    );
    let runs = w.attempt(1);
    assert_eq!(
        runs.len(),
        2,
        "one run per gated release, none twice: {runs:?}"
    );
    for r in runs.values() {
        assert_eq!(r.workflow, "conformance-v1.yml", "{r:?}");
        assert!(
            !r.inputs.contains_key("candidate_oci")
                && !r.inputs.contains_key("candidate_oci_digest"),
            "dispatched without the registry inputs: {r:?}"
        );
        assert!(
            candidate_tags(&reg).contains(&r.inputs["candidate"]),
            "{r:?}"
        );
    }

    for r in runs.values() {
        w.finish(r, "success", Some(false));
    }
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    assert_eq!(w.attempt(1).len(), 2, "no test started again");
    for stable in runs.keys() {
        assert!(tags(&reg).contains_key(stable), "{stable} promoted: {out}");
    }
    assert!(w.tenant_pulls() >= 2, "every tenant gets its pull request");
}

/// Pull-request mode with the registry as a target: the release pull request's candidate is
/// pushed and tested while it is open, nothing is pushed as `vN` before the merge, and after
/// it `vN` is the candidate's layers, blob for blob, before any tenant hears of it.
fn in_pull_request_mode_promotes_byte_for_byte(publish: &str) {
    let reg = TestRegistry::start();
    let d = gated_to("pass", publish, &reg);
    to_pull_request_mode(&d);
    let cands = first_run_pushes_the_candidates(&d, &reg, publish);
    let open = release_pulls(&d)
        .into_iter()
        .filter(|p| p["state"] == "open")
        .count();
    assert_eq!(
        open, 2,
        "the release pull requests are opened as without a gate"
    );
    for b in bodies(&d) {
        assert!(b.contains("**Conformance:** in test since"), "{b}");
    }

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
    assert_eq!(tags(&reg).len(), 2, "nothing stable before the merge: {r}");
    assert_eq!(tenant_pulls(&d), 0);

    let r = merge_all(&d);
    let stable: Vec<String> = tags(&reg)
        .into_keys()
        .filter(|t| !t.contains("-v0-sha-"))
        .collect();
    assert_eq!(stable, STABLE, "{r}");
    for c in &cands {
        promoted_byte_for_byte(&d, &reg, c);
    }
    assert!(tenant_pulls(&d) >= 2, "every tenant gets its pull request");
    assert_eq!(d.calls().len(), 2, "the merged bytes are the tested ones");
    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    assert!(r["actions"].as_array().unwrap().is_empty(), "{r}");
}

#[test]
fn in_pull_request_mode_with_oci_alone_the_merged_candidate_becomes_vn_layer_for_layer() {
    in_pull_request_mode_promotes_byte_for_byte("[oci]");
}

#[test]
fn in_pull_request_mode_with_forge_and_oci_the_merged_candidate_is_promoted_on_both() {
    in_pull_request_mode_promotes_byte_for_byte("[forge, oci]");
}

#[test]
fn in_pull_request_mode_a_crash_between_the_steps_of_an_oci_promotion_resumes_it() {
    for publish in ["[oci]", "[forge, oci]"] {
        let reg = TestRegistry::start();
        let ready = gated_to("pass", publish, &reg);
        to_pull_request_mode(&ready);
        assert_eq!(ready.release().0, 0);
        ready.go();
        ready.wait_for_tests();
        assert_eq!(ready.release().0, 0, "the bodies say passed");
        // The 1.33 pull request is merged; the next run promotes it (and rebuilds the 1.34
        // branch on the new base).
        let number = release_pulls(&ready)
            .into_iter()
            .find(|p| p["state"] == "open" && p["head"].as_str().unwrap().ends_with("1-33"))
            .unwrap()["number"]
            .as_u64()
            .unwrap();
        let loaded = stackbot::config::load(&ready.local().join("stackbot.yaml")).unwrap();
        let clock = std::sync::Arc::new(stackbot::clock::SystemClock);
        stackbot::forge::local::LocalForge::from_config(&loaded, clock)
            .unwrap()
            .merge_pull(
                &stackbot::forge::RepoRef::parse("scs/cluster-stacks").unwrap(),
                number,
            )
            .unwrap();
        sweep_promotion(
            &ready,
            &reg,
            publish,
            &["commit", "create_tag", "open_pull"],
            &["openstack-scs2-1-33-v1"],
        );
    }
}

#[test]
fn in_pull_request_mode_a_crash_at_any_write_of_the_first_run_ends_in_one_test_per_candidate() {
    use stackbot::forge::faulty::FaultMode;
    let publish = "[oci]";
    let reg = TestRegistry::start();
    let fresh = gated_to("pass", publish, &reg);
    to_pull_request_mode(&fresh);
    // The tests end as soon as they start: none outlives its world.
    fresh.go();
    let (counted, counted_reg) = fork(&fresh, &reg, publish);
    let (_, writes) = super::gate::release_dying_at(&counted, 0, FaultMode::Before);
    drop(counted_reg);
    for w in ["open_pull", "publish_release", "upload_asset"] {
        assert!(writes.contains(&w), "{w}: {writes:?}");
    }
    let points = crash_points(&writes);
    for &k in &points {
        let at = format!("k={k} ({})", writes[k as usize - 1]);
        let (w, w_reg) = fork(&fresh, &reg, publish);
        let (tripped, _) = super::gate::release_dying_at(&w, k, FaultMode::Before);
        assert!(tripped, "{at}");
        let (code, _, err) = w.release();
        assert_eq!(code, 0, "{at}: {err}");
        assert!(
            w.one_test_per_candidate_attempt_1(),
            "{at}: one test per candidate, attempt 1: {:?}",
            w.calls()
        );
        let cands = candidate_tags(&w_reg);
        assert_eq!(cands.len(), 2, "{at}: {:?}", tags(&w_reg));
        assert_eq!(
            tags(&w_reg).len(),
            2,
            "{at}: nothing stable before the merge"
        );
        for c in &cands {
            w_reg
                .client()
                .verify_candidate(c, &pulled(&w_reg, c), &stable_of(c))
                .unwrap_or_else(|e| panic!("{at}: {c}: {e}"));
        }
        let open = release_pulls(&w)
            .into_iter()
            .filter(|p| p["state"] == "open")
            .count();
        assert_eq!(open, 2, "{at}: one release pull request per release");
        assert_eq!(tenant_pulls(&w), 0, "{at}");
        w.wait_for_tests();
    }
    eprintln!(
        "gate in pull-request mode with `publish: [oci]`, the first run crashing before {} of its {} forge writes: all end in one pull request, one verified registry candidate and one test per release",
        points.len(),
        writes.len()
    );
}
