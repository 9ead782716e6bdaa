//! The conformance gate (issue 30) through the real binary on the local demo: a gated release
//! is published as a candidate pre-release, tested by a real script (the configured command),
//! and only a passing candidate becomes the stable tag, byte for byte, before any tenant hears
//! of it. The script waits for a file the test writes, so "the test is running" is a state the
//! test controls, not a race.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::support::{copy_dir, root};

/// The test command: checks that the candidate is one CSO can consume, logs its call (and
/// the candidate's OCI reference and digest, `none` without them, to `gate-oci`), waits
/// for `gate-go`, then writes a JUnit result as `gate-mode` says (`pass`, `fail`, `cancel`).
/// The runner is detached by design (a later run reads its exit), so the script gives up once
/// its test's directory is gone (`gate-mode` with it): a test that never says `gate-go` must not
/// leave a loop behind that starts twenty `sleep`s a second for the rest of the suite.
pub(crate) const SCRIPT: &str = r#"#!/bin/sh
set -eu
test -f "$STACKBOT_CANDIDATE_DIR/metadata.yaml"
test -f "$STACKBOT_CANDIDATE_DIR/${STACKBOT_CANDIDATE%-v0-sha-*}-cluster-class-$STACKBOT_CANDIDATE_VERSION.tgz"
echo "$STACKBOT_CANDIDATE ${STACKBOT_CANDIDATE_OCI:-none} ${STACKBOT_CANDIDATE_OCI_DIGEST:-none}" >> gate-oci
echo "$STACKBOT_CANDIDATE $STACKBOT_STABLE_TAG $STACKBOT_GATE_ATTEMPT" >> gate-calls
while [ ! -f gate-go ]; do [ -f gate-mode ] || exit 3; sleep 0.05; done
mode=$(cat gate-mode)
if [ "$mode" = cancel ]; then kill -TERM $$; fi
failure=""
if [ "$mode" = fail ]; then failure='<failure message="timed out">deployment never became ready</failure>'; fi
cat > "$STACKBOT_RESULTS_DIR/junit_01.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="Kubernetes e2e suite" tests="3">
<testcase name="[sig-network] DNS should provide DNS for services [Conformance]" classname="Kubernetes e2e suite"></testcase>
<testcase name="[sig-apps] Deployment should run the rollout [Conformance]" classname="Kubernetes e2e suite">$failure</testcase>
<testcase name="[sig-storage] CSI volumes" classname="Kubernetes e2e suite"><skipped/></testcase>
</testsuite></testsuites>
EOF
[ "$mode" != fail ]
"#;

pub(crate) const STABLE: [&str; 2] = ["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"];

pub(crate) struct Demo {
    pub(crate) dir: tempfile::TempDir,
}

impl Demo {
    /// The local demo with `gate:` on its stack, the script in `mode`.
    pub(crate) fn gated(mode: &str) -> Demo {
        let d = Demo::plain();
        let cfg = d.local().join("stackbot.yaml");
        let text = std::fs::read_to_string(&cfg).unwrap();
        let text = text.replacen(
            "    node_image:\n",
            "    gate:\n      command: [sh, ./conformance.sh]\n    node_image:\n",
            1,
        );
        std::fs::write(&cfg, text).unwrap();
        std::fs::write(d.local().join("conformance.sh"), SCRIPT).unwrap();
        std::fs::write(d.local().join("gate-mode"), mode).unwrap();
        d
    }

    pub(crate) fn plain() -> Demo {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(
            &root().join("examples/local"),
            &dir.path().join("examples/local"),
        );
        copy_dir(&root().join("templates"), &dir.path().join("templates"));
        Demo { dir }
    }

    pub(crate) fn local(&self) -> PathBuf {
        self.dir.path().join("examples/local")
    }

    pub(crate) fn stackbot(&self, args: &[&str]) -> (i32, String, String) {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_stackbot"))
            .current_dir(self.dir.path())
            .args(["-c", "examples/local/stackbot.yaml", "--now", "2026-05-01"])
            .args(args)
            .env("NO_COLOR", "1")
            .env_remove("GITHUB_TOKEN")
            .env_remove("GITHUB_ACTIONS")
            .output()
            .unwrap();
        let (o, e) = (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        );
        assert!(!e.contains("panicked at"), "{e}");
        (out.status.code().unwrap_or(-1), o, e)
    }

    /// `release --format json`: exit code and the report.
    pub(crate) fn release(&self) -> (i32, Value, String) {
        let (code, out, err) = self.stackbot(&["release", "--format", "json"]);
        let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
        (code, v, err)
    }

    pub(crate) fn go(&self) {
        std::fs::write(self.local().join("gate-go"), "").unwrap();
    }

    /// The tests started from now on wait for [`Demo::go`] again. A test that may end while
    /// the run that started it still looks (a cancelled test ends at once) makes that run
    /// record it and start the next attempt, or not, as the machine's speed has it: tests
    /// that count attempts per run hold them until the run is over. Every world must `go`
    /// before it is dropped, or its waiting tests outlive it.
    pub(crate) fn hold(&self) {
        let _ = std::fs::remove_file(self.local().join("gate-go"));
    }

    /// The test command's calls, once every attempt the bot started has logged its call: the
    /// bot returns as soon as it has spawned a test, and on a loaded machine the spawned shell
    /// may not have written its line yet.
    pub(crate) fn calls(&self) -> Vec<String> {
        let gate = self.dir.path().join(".stackbot/forge/gate");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let calls: Vec<String> = std::fs::read_to_string(self.local().join("gate-calls"))
                .unwrap_or_default()
                .lines()
                .map(str::to_string)
                .collect();
            let mut started = Vec::new();
            attempt_dirs(&gate, &mut started);
            if calls.len() >= started.len() || Instant::now() >= deadline {
                return calls;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The attempt number of each call of the test command, in call order.
    pub(crate) fn attempts(&self) -> Vec<String> {
        self.calls()
            .iter()
            .map(|c| c.rsplit(' ').next().unwrap().to_string())
            .collect()
    }

    /// Whether the test command ran exactly once for each of the demo's two candidates, each
    /// as attempt 1 (what every crash point of a first run must end in).
    pub(crate) fn one_test_per_candidate_attempt_1(&self) -> bool {
        let calls = self.calls();
        let candidates: std::collections::BTreeSet<&str> =
            calls.iter().filter_map(|c| c.split(' ').next()).collect();
        calls.len() == 2 && candidates.len() == 2 && calls.iter().all(|c| c.ends_with(" 1"))
    }

    /// Wait until every started attempt has ended (its `exit` file is there).
    pub(crate) fn wait_for_tests(&self) {
        let gate = self.dir.path().join(".stackbot/forge/gate");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let mut dirs = Vec::new();
            attempt_dirs(&gate, &mut dirs);
            if !dirs.is_empty() && dirs.iter().all(|d| d.join("exit").exists()) {
                return;
            }
            assert!(Instant::now() < deadline, "the tests did not end: {dirs:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Every release of the cluster-stacks repository: tag → its manifest.
    pub(crate) fn releases(&self) -> Vec<Value> {
        let dir = self
            .dir
            .path()
            .join(".stackbot/forge/releases/scs/cluster-stacks");
        let mut out: Vec<Value> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("release.json")).ok())
            .map(|b| serde_json::from_slice(&b).unwrap())
            .collect();
        out.sort_by_key(|r| r["id"].as_u64());
        out
    }

    pub(crate) fn stable(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .releases()
            .iter()
            .filter(|r| r["draft"] == false && r["prerelease"] != true)
            .map(|r| r["tag"].as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    }

    pub(crate) fn candidates(&self) -> Vec<Value> {
        self.releases()
            .into_iter()
            .filter(|r| r["prerelease"] == true)
            .collect()
    }

    /// Asset name → sha256 of a release.
    pub(crate) fn assets(&self, r: &Value) -> BTreeMap<String, String> {
        let dir = self
            .dir
            .path()
            .join(".stackbot/forge/releases/scs/cluster-stacks")
            .join(r["id"].as_u64().unwrap().to_string())
            .join("assets");
        r["assets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                let name = a["name"].as_str().unwrap().to_string();
                let b = std::fs::read(dir.join(&name)).unwrap();
                (name, hex::encode(Sha256::digest(b)))
            })
            .collect()
    }

    pub(crate) fn release_of(&self, tag: &str) -> Value {
        self.releases()
            .into_iter()
            .find(|r| r["tag"] == tag && r["draft"] == false)
            .unwrap_or_else(|| panic!("no published {tag}"))
    }
}

fn attempt_dirs(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.join("pid").exists() || p.join("exit").exists() {
            out.push(p);
        } else if p.is_dir() {
            attempt_dirs(&p, out);
        }
    }
}

pub(crate) fn opened_tenant_pulls(report: &Value) -> Vec<String> {
    report["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["outcome"] == "opened" || t["outcome"] == "updated")
        .map(|t| t["tenant"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_passing_candidate_becomes_the_stable_release_byte_for_byte_and_only_then_reaches_tenants() {
    let d = Demo::gated("pass");

    // Run 1: each release is published as a candidate and its test starts; nothing stable.
    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    assert!(r["released"].as_array().unwrap().is_empty(), "{r}");
    assert!(d.stable().is_empty(), "{:?}", d.stable());
    assert!(opened_tenant_pulls(&r).is_empty(), "{r}");
    let cands = d.candidates();
    assert_eq!(cands.len(), 2, "{cands:?}");
    for c in &cands {
        let tag = c["tag"].as_str().unwrap();
        assert!(tag.contains("-v0-sha-"), "{tag}");
        assert_eq!(tag.split('-').count(), 7, "a name CSO parses: {tag}");
    }
    let skipped = r["skipped"].to_string();
    assert!(skipped.contains("in test since"), "{skipped}");
    assert_eq!(d.calls().len(), 2, "one test per candidate");

    // Run 2, the tests still running: nothing new starts, nothing is released.
    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    assert!(r["released"].as_array().unwrap().is_empty(), "{r}");
    assert_eq!(
        d.calls().len(),
        2,
        "no second start while running: {:?}",
        d.calls()
    );
    assert_eq!(d.candidates().len(), 2);
    let (code, status, _) = d.stackbot(&["status"]);
    assert_eq!(code, 0);
    assert!(status.contains("in test since"), "{status}");

    // The tests pass: run 3 promotes both, byte for byte, and the tenants get pull requests.
    d.go();
    d.wait_for_tests();
    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    let mut released: Vec<String> = r["released"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    released.sort();
    assert_eq!(released, STABLE, "{r}");
    assert_eq!(d.stable(), STABLE);
    assert_eq!(opened_tenant_pulls(&r).len(), 2, "{r}");
    for c in d.candidates() {
        let notes = c["body"].as_str().unwrap();
        let stable_tag = STABLE
            .iter()
            .find(|t| notes.contains(&format!("`{t}`")))
            .unwrap();
        let stable = d.release_of(stable_tag);
        let cand_assets = d.assets(&c);
        let stable_assets = d.assets(&stable);
        for (name, sha) in &stable_assets {
            assert_eq!(cand_assets.get(name), Some(sha), "{name} of {stable_tag}");
        }
        assert!(
            cand_assets.keys().any(|n| n.starts_with("conformance-1-")),
            "the evidence is on the candidate: {cand_assets:?}"
        );
        let vnotes = stable["body"].as_str().unwrap();
        assert!(
            vnotes.contains("**Conformance:** passed (2 passed, 0 failed, 1 skipped"),
            "{vnotes}"
        );
        assert!(vnotes.contains(c["tag"].as_str().unwrap()), "{vnotes}");
    }

    // Run 4: nothing left to do.
    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    assert!(r["released"].as_array().unwrap().is_empty(), "{r}");
    assert!(r["actions"].as_array().unwrap().is_empty(), "{r}");
    assert_eq!(d.calls().len(), 2);
}

#[test]
fn a_failing_candidate_never_reaches_a_tenant_and_the_dashboard_names_its_failed_tests() {
    let d = Demo::gated("fail");
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
        assert!(r["released"].as_array().unwrap().is_empty(), "{r}");
        assert!(opened_tenant_pulls(&r).is_empty(), "{r}");
        let skipped = r["skipped"].to_string();
        assert!(skipped.contains("failed conformance"), "{skipped}");
        assert!(
            skipped.contains("[sig-apps] Deployment should run the rollout [Conformance]"),
            "{skipped}"
        );
    }
    assert!(d.stable().is_empty());
    assert_eq!(d.calls().len(), 2, "a failed candidate is not retried");
    let (_, status, _) = d.stackbot(&["status"]);
    assert!(status.contains("failed conformance"), "{status}");
    let issues = d
        .dir
        .path()
        .join(".stackbot/forge/issues/scs/cluster-stacks");
    let dashboard: String = std::fs::read_dir(&issues)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert!(
        dashboard.contains("failed conformance")
            // Markdown escapes the brackets of the test's name.
            && dashboard.contains(r"\[sig-apps\] Deployment should run the rollout \[Conformance\]"),
        "the dashboard names the failed test: {dashboard}"
    );
}

#[test]
fn a_cancelled_test_is_retried_once_then_reported() {
    let d = Demo::gated("cancel");
    // Each run's tests are cancelled only once that run is over (see `Demo::hold`).
    let (code, _, err) = d.release();
    assert_eq!(code, 0, "{err}");
    d.go();
    d.wait_for_tests();
    d.hold();
    // Run 2 records the cancellation and starts attempt 2.
    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    assert!(r["released"].as_array().unwrap().is_empty(), "{r}");
    assert_eq!(d.attempts(), ["1", "1", "2", "2"], "{:?}", d.calls());
    d.go();
    d.wait_for_tests();
    // Run 3: cancelled twice, reported (exit 1), never released, not started again.
    let (code, r, err) = d.release();
    assert_eq!(code, 1, "{err}");
    assert!(r["released"].as_array().unwrap().is_empty(), "{r}");
    assert!(
        r["failed"].to_string().contains("did not finish 2 times"),
        "{r}"
    );
    assert_eq!(d.calls().len(), 4);
    assert!(d.stable().is_empty());
}

#[test]
fn without_a_gate_nothing_is_a_candidate() {
    let d = Demo::plain();
    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    let mut released: Vec<String> = r["released"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    released.sort();
    assert_eq!(released, STABLE);
    assert!(d.candidates().is_empty());
    assert!(!d.dir.path().join(".stackbot/forge/gate").exists());
    assert_eq!(opened_tenant_pulls(&r).len(), 2, "{r}");
}

#[test]
fn a_workflow_gate_on_the_local_forge_is_refused() {
    let d = Demo::plain();
    let cfg = d.local().join("stackbot.yaml");
    let text = std::fs::read_to_string(&cfg).unwrap().replacen(
        "    node_image:\n",
        "    gate:\n      workflow: conformance.yml\n    node_image:\n",
        1,
    );
    std::fs::write(&cfg, text).unwrap();
    let (code, _, err) = d.stackbot(&["release"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("needs `forge.kind: github`"), "{err}");
    assert!(d.releases().is_empty());
}

/// What a person sees of a world after a run: every release (tag, draft, pre-release, notes
/// with the folder's path and the candidates' pages left out, asset → sha256), and each
/// tenant's pull requests.
pub(crate) fn seen(d: &Demo) -> (Vec<String>, BTreeMap<String, usize>) {
    let path = d.dir.path().to_string_lossy().to_string();
    let mut releases: Vec<String> = d
        .releases()
        .iter()
        .map(|r| {
            format!(
                "{} draft={} pre={} notes={} assets={:?}",
                r["tag"],
                r["draft"],
                r["prerelease"] == true,
                r["body"].as_str().unwrap().replace(&path, "$DEMO"),
                // The gate's records carry the time they were written: compared by name.
                d.assets(r)
                    .into_iter()
                    .map(|(n, sha)| {
                        let sha = if n.starts_with("gate-") {
                            "record".into()
                        } else {
                            sha
                        };
                        (n, sha)
                    })
                    .collect::<BTreeMap<_, _>>()
            )
        })
        .collect();
    releases.sort();
    let mut pulls = BTreeMap::new();
    for t in ["acme/gitops", "globex/platform"] {
        let dir = d.dir.path().join(".stackbot/forge/pulls").join(t);
        pulls.insert(
            t.to_string(),
            std::fs::read_dir(dir).into_iter().flatten().count(),
        );
    }
    (releases, pulls)
}

/// A copy of `d` (the forge, the attempts' folders and all).
pub(crate) fn copy(d: &Demo) -> Demo {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(d.dir.path(), dir.path());
    Demo { dir }
}

/// The promotion run as the library runs it, on a forge that dies before its `k`-th write
/// (`0`: never): whether it died, and the writes that took effect, in order.
pub(crate) fn promote_dying_at(d: &Demo, k: u64) -> (bool, Vec<&'static str>) {
    release_dying_at(d, k, stackbot::forge::faulty::FaultMode::Before)
}

/// A release run as the library runs it, on a forge that dies at its `k`-th write (`0`:
/// never), before or right after performing it: whether it died, and the writes that took
/// effect, in order.
pub(crate) fn release_dying_at(
    d: &Demo,
    k: u64,
    mode: stackbot::forge::faulty::FaultMode,
) -> (bool, Vec<&'static str>) {
    use stackbot::forge::faulty::Faulty;
    let loaded = stackbot::config::load(&d.local().join("stackbot.yaml")).unwrap();
    let clock = std::sync::Arc::new(stackbot::clock::SystemClock);
    let ctx = stackbot::pipeline::Context::new(
        loaded.clone(),
        chrono::NaiveDate::from_ymd_opt(2026, 5, 1).unwrap(),
        stackbot::env::Env::default(),
        clock.clone(),
    );
    let forge = stackbot::forge::local::LocalForge::from_config(&loaded, clock).unwrap();
    let faulty = Faulty::new(forge, k, mode);
    let _ = stackbot::pipeline::release::release(
        &ctx,
        &faulty,
        &stackbot::pipeline::Selection::default(),
    );
    (faulty.tripped(), faulty.performed())
}

/// Where the sweep crashes a promotion whose writes are `writes` (1-based): before the first
/// write of every run of equal writes, so at every boundary between two steps (an upload and
/// the draft, the tag and its publication, …), and before the middle write of every longer run
/// (a step half done: some of a release's assets uploaded, one tenant's commit made). A crash
/// right after a write (`FaultMode::After`) leaves the forge as a crash before the next one
/// does (that write performed, none after it), so this one mode covers both.
pub(crate) fn crash_points(writes: &[&str]) -> Vec<u64> {
    let mut points = Vec::new();
    let mut start = 0;
    while start < writes.len() {
        let len = writes[start..]
            .iter()
            .take_while(|w| **w == writes[start])
            .count();
        points.push(start as u64 + 1);
        if len >= 2 {
            points.push((start + len / 2) as u64 + 1);
        }
        start += len;
    }
    points
}

#[test]
fn the_crash_points_are_every_step_boundary_and_the_middle_of_long_steps() {
    let writes = [
        "upload", "upload", "upload", "upload", "draft", "tag", "publish", "pull", "pull",
    ];
    assert_eq!(crash_points(&writes), vec![1, 3, 5, 6, 7, 8, 9]);
}

#[test]
fn a_crash_between_the_steps_of_a_promotion_resumes_it_without_duplicates() {
    // The tests have passed; the next run promotes. They go only once run 1 is over: a test
    // that ended during run 1 would be promoted by it (see `Demo::hold`).
    let ready = Demo::gated("pass");
    assert_eq!(ready.release().0, 0);
    ready.go();
    ready.wait_for_tests();
    let clean = copy(&ready);
    let (code, r, err) = clean.release();
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["released"].as_array().unwrap().len(), 2, "{r}");
    let want = seen(&clean);
    assert!(
        want.1.values().all(|n| *n == 1),
        "one pull request per tenant: {want:?}"
    );

    // The promotion's writes, from a run that does not crash: assets, drafts, tags,
    // publications, tenant pull requests, the dashboard.
    let (_, writes) = promote_dying_at(&copy(&ready), 0);
    assert!(writes.contains(&"publish_release"), "{writes:?}");
    for k in crash_points(&writes) {
        let before = writes[k as usize - 1];
        let w = copy(&ready);
        let (tripped, _) = promote_dying_at(&w, k);
        assert!(tripped, "k={k} ({before}): the promotion died there");
        let (code, _, err) = w.release();
        assert_eq!(code, 0, "k={k} ({before}): {err}");
        assert_eq!(
            seen(&w),
            want,
            "k={k}, before {before}: the resumed run ends where a clean one does"
        );
        assert_eq!(w.calls().len(), 2, "no test is started again");
    }
}

#[test]
fn a_run_that_died_between_claiming_an_attempt_and_starting_it_starts_that_attempt_next_time() {
    use stackbot::forge::faulty::FaultMode;
    let d = Demo::gated("cancel");
    d.go();
    // The first run's writes: the first candidate is published (tag, draft, assets, publish),
    // then its attempt is claimed, then the test would start.
    let (_, writes) = release_dying_at(&copy(&d), 0, FaultMode::Before);
    let publish = writes.iter().position(|w| *w == "publish_release").unwrap();
    assert_eq!(writes[publish + 1], "upload_asset", "{writes:?}");
    let claim = publish as u64 + 2;
    let (tripped, _) = release_dying_at(&d, claim, FaultMode::After);
    assert!(tripped);
    let claimed: Vec<Value> = d
        .candidates()
        .into_iter()
        .filter(|c| d.assets(c).contains_key("gate-attempt-1.json"))
        .collect();
    assert_eq!(claimed.len(), 1, "one attempt claimed");
    let crashed = claimed[0]["tag"].as_str().unwrap().to_string();
    assert!(d.calls().is_empty(), "and its test never started");
    d.hold();

    // The next run starts it under the same attempt (the local forge's run lock means no
    // other run is between the claim and the start), and the other release's first test.
    let (code, r, err) = d.release();
    assert_eq!(code, 0, "{err}");
    assert!(
        r["actions"]
            .to_string()
            .contains("the earlier one never began"),
        "{r}"
    );
    let calls = d.calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(
        calls.iter().all(|c| c.ends_with(" 1")),
        "attempt 1 each: {calls:?}"
    );
    assert!(
        calls.iter().any(|c| c.starts_with(&format!("{crashed} "))),
        "{calls:?}"
    );
    let cand = d.release_of(&crashed);
    assert!(d.assets(&cand).contains_key("gate-attempt-1-start-2.json"));

    // Both tests are cancelled: each gets its retry, which the crash did not use up.
    d.go();
    d.wait_for_tests();
    d.hold();
    let (code, _, err) = d.release();
    assert_eq!(code, 0, "{err}");
    assert_eq!(d.attempts(), ["1", "1", "2", "2"], "{:?}", d.calls());
    d.go();
    d.wait_for_tests();
}

#[test]
fn a_crash_at_any_write_of_the_first_run_still_ends_in_one_test_per_candidate_as_attempt_1() {
    use stackbot::forge::faulty::FaultMode;
    let fresh = Demo::gated("pass");
    // The tests end as soon as they start: none outlives its world.
    fresh.go();
    let (_, writes) = release_dying_at(&copy(&fresh), 0, FaultMode::Before);
    assert!(
        writes.iter().filter(|w| **w == "publish_release").count() == 2,
        "two candidates published: {writes:?}"
    );
    for mode in [FaultMode::Before, FaultMode::After] {
        for k in crash_points(&writes) {
            let w = copy(&fresh);
            let (tripped, _) = release_dying_at(&w, k, mode);
            assert!(tripped, "k={k} {mode:?}");
            let (code, _, err) = w.release();
            assert_eq!(code, 0, "k={k} {mode:?}: {err}");
            assert!(
                w.one_test_per_candidate_attempt_1(),
                "k={k} ({}) {mode:?}: one test per candidate, attempt 1: {:?}",
                writes[k as usize - 1],
                w.calls()
            );
            w.wait_for_tests();
        }
    }
    eprintln!(
        "gate on the local forge, the first run crashing at {} of its {} writes, before and after: all {} end in one test per candidate, attempt 1",
        crash_points(&writes).len(),
        writes.len(),
        2 * crash_points(&writes).len()
    );
}
