//! The conformance gate on GitHub (issue 30) through the real binary against the fake GitHub:
//! a gated release is published as a candidate pre-release, tested by a `workflow_dispatch` of
//! the configured workflow, and only a candidate whose run concluded `success` with a passing
//! conformance artifact becomes the stable tag, byte for byte, before any tenant hears of it.
//! The fake's runs move only when the test says (as a runner would), so "the test is running"
//! is a state the test holds, never a race; every request and answer is checked against
//! GitHub's OpenAPI description.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Output;

use assert_cmd::Command;
use serde_json::json;

use crate::support::config::DemoConfig;
use crate::support::fake_github::actions::RunView;
use crate::support::fake_github::{FakeGithub, RepoSnapshot, demo};

const TOKEN: &str = "ghp_gateGITHUBtoken_0123456789";
const TOKEN_ENV: &str = "STACKBOT_GATE_GH_TOKEN";
const REPO: &str = demo::STACKS_REPO;
const STABLE: [&str; 2] = ["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"];

const FAILED_TEST: &str = "[sig-apps] Deployment should run the rollout [Conformance]";

/// A JUnit result as the e2e suite writes it; `fail` fails one test case.
fn junit(fail: bool) -> Vec<u8> {
    let failure = if fail {
        r#"<failure message="timed out">deployment never became ready</failure>"#
    } else {
        ""
    };
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="Kubernetes e2e suite" tests="3">
<testcase name="[sig-network] DNS should provide DNS for services [Conformance]" classname="Kubernetes e2e suite"></testcase>
<testcase name="{}" classname="Kubernetes e2e suite">{failure}</testcase>
<testcase name="[sig-storage] CSI volumes" classname="Kubernetes e2e suite"><skipped/></testcase>
</testsuite></testsuites>
"#,
        FAILED_TEST
    )
    .into_bytes()
}

pub(crate) struct World {
    pub(crate) fake: FakeGithub,
    dir: tempfile::TempDir,
    cfg: PathBuf,
}

impl World {
    /// The demo on the fake GitHub with two tenants and `gate: {workflow: conformance.yml}`;
    /// the repository has that workflow as docs/github-setup.md shows it (its inputs, its
    /// `run-name` echoing `gate_id`).
    fn new() -> World {
        World::with(|c| c)
    }

    /// [`World::new`] with the configuration changed by `edit`.
    pub(crate) fn with(edit: impl FnOnce(DemoConfig) -> DemoConfig) -> World {
        let fake = demo::start(
            TOKEN,
            &["acme/gitops", "globex/gitops"],
            demo::PINNED_CLUSTERSTACK,
        );
        fake.add_documented_conformance_workflow(REPO);
        let dir = tempfile::tempdir().unwrap();
        let cfg = edit(
            DemoConfig::new()
                .on_github(&fake.api_url(), &fake.upload_url(), TOKEN_ENV)
                .max_retries(0)
                .tenant("acme")
                .tenant("globex")
                .gate(json!({"workflow": "conformance.yml"})),
        )
        .write(dir.path());
        World { fake, dir, cfg }
    }

    fn stackbot_on(&self, day: &str, args: &[&str]) -> (i32, String) {
        let out: Output = Command::cargo_bin("stackbot")
            .unwrap()
            .current_dir(self.dir.path())
            .env(TOKEN_ENV, TOKEN)
            .env("NO_COLOR", "1")
            .env_remove("GITHUB_ACTIONS")
            .args(["-c", self.cfg.to_str().unwrap(), "--now", day])
            .args(args)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!text.contains("panicked at"), "{text}");
        assert!(!text.contains(TOKEN), "the token leaked");
        (out.status.code().unwrap_or(-1), text)
    }

    pub(crate) fn release(&self) -> (i32, String) {
        self.stackbot_on("2026-05-01", &["release"])
    }

    pub(crate) fn repo(&self) -> RepoSnapshot {
        self.fake.snapshot().repos[REPO].clone()
    }

    fn runs(&self) -> Vec<RunView> {
        self.fake.runs(REPO)
    }

    /// Every run of attempt `n`, by the stable tag it tests.
    pub(crate) fn attempt(&self, n: u32) -> BTreeMap<String, RunView> {
        self.runs()
            .into_iter()
            .filter(|r| r.inputs["attempt"] == n.to_string())
            .map(|r| (r.inputs["stable_tag"].clone(), r))
            .collect()
    }

    /// A runner finishes the run: uploads the artifact (unless `None`), then concludes.
    pub(crate) fn finish(&self, run: &RunView, conclusion: &str, fail: Option<bool>) {
        self.fake.set_run_status(REPO, run.id, "in_progress");
        if let Some(fail) = fail {
            self.fake.upload_artifact(
                REPO,
                run.id,
                "conformance",
                &[("results/junit_01.xml", &junit(fail))],
            );
        }
        self.fake.complete_run(REPO, run.id, conclusion);
    }

    fn stable_tags(&self) -> Vec<String> {
        self.repo()
            .releases
            .iter()
            .filter(|r| !r.draft && !r.tag.contains("-v0-sha-"))
            .map(|r| r.tag.clone())
            .collect()
    }

    pub(crate) fn tenant_pulls(&self) -> usize {
        let snap = self.fake.snapshot();
        ["acme/gitops", "globex/gitops"]
            .iter()
            .map(|t| snap.repos[*t].pulls.len())
            .sum()
    }
}

/// Every candidate dispatched once per attempt, on the base branch, with inputs that name it.
fn assert_dispatched(runs: &BTreeMap<String, RunView>, attempt: u32) {
    assert_eq!(
        runs.keys().map(String::as_str).collect::<Vec<_>>(),
        STABLE,
        "one run per gated release"
    );
    for (stable, r) in runs {
        let cand = &r.inputs["candidate"];
        assert!(cand.starts_with(&stable[..stable.len() - 3]), "{r:?}");
        assert!(cand.contains("-v0-sha-"), "{r:?}");
        assert_eq!(
            r.inputs["candidate_version"],
            format!("v0-sha.{}", &cand[cand.len() - 7..])
        );
        assert_eq!(r.inputs["gate_id"], format!("{cand}#{attempt}"));
        assert_eq!(
            r.inputs.keys().map(String::as_str).collect::<Vec<_>>(),
            [
                "attempt",
                "candidate",
                "candidate_version",
                "gate_id",
                "stable_tag"
            ],
            "without `oci` as a target, no registry inputs"
        );
        assert_eq!(r.display_title, format!("Conformance {cand}#{attempt}"));
        assert_eq!(
            (r.event.as_str(), r.head_branch.as_str()),
            ("workflow_dispatch", "main")
        );
    }
}

#[test]
fn a_passing_run_promotes_the_candidate_byte_for_byte_then_tenants_get_pull_requests() {
    let w = World::new();
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    let runs = w.attempt(1);
    assert_dispatched(&runs, 1);
    assert!(w.stable_tags().is_empty(), "nothing stable before the test");
    let candidates: Vec<_> = w
        .repo()
        .releases
        .into_iter()
        .filter(|r| r.tag.contains("-v0-sha-"))
        .collect();
    assert_eq!(candidates.len(), 2);
    for c in &candidates {
        assert!(!c.draft, "{}", c.tag);
        assert!(
            c.assets.contains_key("gate-attempt-1.json")
                && c.assets.contains_key("gate-run-1.json"),
            "the attempt and the run GitHub returned are recorded: {:?}",
            c.assets.keys()
        );
    }
    assert_eq!(w.tenant_pulls(), 0);

    // The runs are picked up; the hourly run starts nothing and writes nothing.
    for r in runs.values() {
        w.fake.set_run_status(REPO, r.id, "in_progress");
    }
    w.fake.reset_counts();
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    let c = w.fake.counts();
    assert_eq!(
        c.writes, 0,
        "a run while the test runs writes nothing: {c:?}"
    );
    assert_eq!(w.runs().len(), 2, "and dispatches nothing");
    let run_reads = c
        .by_route
        .iter()
        .filter(|(k, _)| k.contains("/actions/"))
        .map(|(_, n)| n)
        .sum::<usize>();
    assert_eq!(run_reads, 2, "one read of each run: {:?}", c.by_route);
    eprintln!(
        "a release run while 2 gated releases are in test on GitHub: {} units ({:?})",
        c.units, c.by_route
    );
    let (_, status) = w.stackbot_on("2026-05-01", &["status"]);
    assert!(status.contains("in test since"), "{status}");

    for r in runs.values() {
        w.finish(r, "success", Some(false));
    }
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    assert_eq!(w.stable_tags(), STABLE);
    let repo = w.repo();
    for stable in STABLE {
        let s = repo.releases.iter().find(|r| r.tag == stable).unwrap();
        let cand_tag = &runs[stable].inputs["candidate"];
        let cand = repo.releases.iter().find(|r| &r.tag == cand_tag).unwrap();
        for (name, sha) in &s.assets {
            assert_eq!(
                cand.assets.get(name),
                Some(sha),
                "{stable}: {name} is the candidate's"
            );
        }
        assert!(
            s.body
                .contains("**Conformance:** passed (2 passed, 0 failed, 1 skipped"),
            "{}",
            s.body
        );
        assert!(
            s.body
                .contains(&format!("/actions/runs/{}", runs[stable].id)),
            "the notes link the test run: {}",
            s.body
        );
        assert!(
            cand.assets
                .contains_key("conformance-1-results_junit_01.xml"),
            "{:?}",
            cand.assets.keys()
        );
    }
    assert!(w.tenant_pulls() >= 2, "every tenant gets its pull request");

    w.fake.reset_counts();
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        w.fake.counts().writes,
        0,
        "after the promotion nothing is left to do"
    );
    assert_eq!(w.runs().len(), 2);
}

#[test]
fn a_failing_run_is_never_promoted_and_never_retried() {
    let w = World::new();
    assert_eq!(w.release().0, 0);
    for r in w.attempt(1).values() {
        w.finish(r, "failure", Some(true));
    }
    let (code, out) = w.release();
    assert_eq!(
        code, 0,
        "a failed candidate is reported, not an error: {out}"
    );
    assert!(
        out.contains("failed conformance") && out.contains(FAILED_TEST),
        "{out}"
    );
    let (_, status) = w.stackbot_on("2026-05-01", &["status"]);
    assert!(status.contains(FAILED_TEST), "{status}");
    for _ in 0..2 {
        let (code, out) = w.release();
        assert_eq!(code, 0, "{out}");
    }
    assert!(w.stable_tags().is_empty(), "never promoted");
    assert_eq!(w.tenant_pulls(), 0, "no tenant hears of it");
    assert_eq!(w.runs().len(), 2, "not retried");
}

#[test]
fn success_without_evidence_is_no_pass() {
    let w = World::new();
    assert_eq!(w.release().0, 0);
    for r in w.attempt(1).values() {
        w.finish(r, "success", None);
    }
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no conformance artifact"), "{out}");
    assert!(w.stable_tags().is_empty());
    assert_eq!(w.tenant_pulls(), 0);
}

#[test]
fn a_cancelled_run_is_retried_once_then_reported() {
    let w = World::new();
    assert_eq!(w.release().0, 0);
    for r in w.attempt(1).values() {
        w.finish(r, "cancelled", None);
    }
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    assert_dispatched(&w.attempt(2), 2);
    for r in w.attempt(2).values() {
        w.finish(r, "cancelled", None);
    }
    let (code, out) = w.release();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("did not finish 2 times"), "{out}");
    assert_eq!(w.runs().len(), 4, "retried once, not again");
    assert!(w.stable_tags().is_empty());
    assert_eq!(w.tenant_pulls(), 0);
}

#[test]
fn without_the_run_id_each_candidate_finds_its_own_run_by_its_gate_id() {
    let w = World::new();
    w.fake.set_dispatch_returns_run(REPO, false);
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    let runs = w.attempt(1);
    assert_dispatched(&runs, 1);
    // GitHub said no run id: each run is found among the workflow's runs, which are of one
    // workflow and told apart only by the gate_id in their titles, and recorded.
    let repo = w.repo();
    for r in runs.values() {
        let cand = repo
            .releases
            .iter()
            .find(|x| x.tag == r.inputs["candidate"])
            .unwrap();
        assert!(
            cand.assets.contains_key("gate-run-1.json"),
            "{:?}",
            cand.assets.keys()
        );
    }
    let (pass, fail) = (&runs[STABLE[0]], &runs[STABLE[1]]);
    w.finish(pass, "success", Some(false));
    w.finish(fail, "failure", Some(true));
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    assert_eq!(w.stable_tags(), [STABLE[0]], "{out}");
}

#[test]
fn a_run_past_the_timeout_is_cancelled_and_retried() {
    let w = World::new();
    assert_eq!(w.release().0, 0);
    let first = w.attempt(1);
    for r in first.values() {
        w.fake.set_run_status(REPO, r.id, "in_progress");
        // The attempt started 7 hours ago (the default timeout is 6 hours).
        let started = chrono::Utc::now() - chrono::Duration::hours(7);
        let record = json!({"attempt": 1, "started_at": started});
        w.fake.replace_asset(
            REPO,
            &r.inputs["candidate"],
            "gate-attempt-1.json",
            record.to_string().as_bytes(),
        );
    }
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    for r in first.values() {
        let now = w.runs().into_iter().find(|x| x.id == r.id).unwrap();
        assert_eq!(
            now.conclusion.as_deref(),
            Some("cancelled"),
            "the hanging run is ended: {now:?}"
        );
    }
    assert_dispatched(&w.attempt(2), 2);
}

/// The first release run as the library runs it, on a GitHub the process dies on just before
/// its `k`-th write (`0`: never): the writes that took effect, in order.
fn release_dying_before(w: &World, k: u64) -> Vec<&'static str> {
    release_dying_at(w, k, stackbot::forge::faulty::FaultMode::Before)
}

/// A release run as the library runs it, on a GitHub the process dies on at its `k`-th write
/// (`0`: never), before or right after performing it: the writes that took effect, in order.
fn release_dying_at(
    w: &World,
    k: u64,
    mode: stackbot::forge::faulty::FaultMode,
) -> Vec<&'static str> {
    use stackbot::forge::faulty::Faulty;
    let loaded = stackbot::config::load(&w.cfg).unwrap();
    let clock = std::sync::Arc::new(stackbot::clock::SystemClock);
    let ctx = stackbot::pipeline::Context::new(
        loaded.clone(),
        chrono::NaiveDate::from_ymd_opt(2026, 5, 1).unwrap(),
        stackbot::env::Env::default(),
        clock.clone(),
    );
    let github = stackbot::forge::github::GithubForge::new(
        &loaded.config.forge.github,
        Some(TOKEN.into()),
        clock,
    )
    .unwrap();
    let faulty = Faulty::new(github, k, mode);
    let _ = stackbot::pipeline::release::release(
        &ctx,
        &faulty,
        &stackbot::pipeline::Selection::default(),
    );
    faulty.performed()
}

/// The candidates holding `asset`.
fn holding(w: &World, asset: &str) -> Vec<String> {
    w.repo()
        .releases
        .into_iter()
        .filter(|r| r.tag.contains("-v0-sha-") && r.assets.contains_key(asset))
        .map(|r| r.tag)
        .collect()
}

/// Move the start of attempt 1 of `candidate` back by `minutes`, as the next hourly run sees it.
fn started_minutes_ago(w: &World, candidate: &str, minutes: i64) {
    let started = chrono::Utc::now() - chrono::Duration::minutes(minutes);
    let record = json!({"attempt": 1, "started_at": started});
    w.fake.replace_asset(
        REPO,
        candidate,
        "gate-attempt-1.json",
        record.to_string().as_bytes(),
    );
}

#[test]
fn a_run_that_died_between_claiming_an_attempt_and_dispatching_it_is_dispatched_as_that_attempt() {
    let writes = release_dying_before(&World::new(), 0);
    let k = writes
        .iter()
        .position(|w| *w == "dispatch_workflow")
        .expect("the first run dispatches") as u64
        + 1;
    let w = World::new();
    let performed = release_dying_before(&w, k);
    assert_eq!(performed.last(), Some(&"upload_asset"), "{performed:?}");
    assert!(w.runs().is_empty(), "it died before the dispatch");
    let claimed = holding(&w, "gate-attempt-1.json");
    assert_eq!(claimed.len(), 1, "one attempt claimed, never dispatched");
    let crashed = &claimed[0];

    // The next run soon after: the claim may be an overlapping run still dispatching, so it
    // is waited for (the other release's test starts as usual).
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    assert!(
        w.runs().iter().all(|r| &r.inputs["candidate"] != crashed),
        "not dispatched while it may be on its way"
    );

    // An hour later no run of it has appeared: it never started, and is dispatched under the
    // same attempt, not as the retry.
    started_minutes_ago(&w, crashed, 60);
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    assert_dispatched(&w.attempt(1), 1);
    assert!(w.attempt(2).is_empty(), "no attempt was used up");
    assert_eq!(
        holding(&w, "gate-attempt-1-start-2.json"),
        std::slice::from_ref(crashed),
        "the second start is recorded"
    );
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    assert_eq!(w.runs().len(), 2, "a running test is not dispatched again");

    // The retry is still there for a test that really ran and was cancelled.
    for r in w.attempt(1).values() {
        w.finish(r, "cancelled", None);
    }
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    assert_dispatched(&w.attempt(2), 2);
}

#[test]
fn a_dispatch_whose_answer_was_lost_is_never_sent_again() {
    use crate::support::fake_github::{Fault, Faults};
    let w = World::new();
    // The first dispatch gets a 502 (GitHub did not start it, but stackbot cannot know).
    w.fake.set_faults(Faults::route(
        axum::http::Method::POST,
        "/repos/{owner}/{repo}/actions/workflows/conformance.yml/dispatches",
        1,
        Fault::Status(502),
    ));
    let (code, out) = w.release();
    assert_eq!(code, 1, "a transient failure: {out}");
    w.fake.clear_faults();
    let unanswered = holding(&w, "gate-dispatch-1.json");
    assert_eq!(unanswered.len(), 1, "recorded as sent");
    let lost = &unanswered[0];
    started_minutes_ago(&w, lost, 60);
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    let of_lost: Vec<String> = w
        .runs()
        .iter()
        .filter(|r| &r.inputs["candidate"] == lost)
        .map(|r| r.inputs["attempt"].clone())
        .collect();
    assert_eq!(
        of_lost,
        ["2"],
        "attempt 1 was not dispatched again: it is lost, and the retry is attempt 2"
    );
}

#[test]
fn a_crash_at_any_write_of_the_first_run_still_ends_in_one_run_per_candidate_as_attempt_1() {
    use stackbot::forge::faulty::FaultMode;
    let writes = release_dying_before(&World::new(), 0);
    assert!(writes.contains(&"dispatch_workflow"), "{writes:?}");
    let mut recovered = 0;
    for mode in [FaultMode::Before, FaultMode::After] {
        for k in 1..=writes.len() as u64 {
            let w = World::new();
            release_dying_at(&w, k, mode);
            let (code, out) = w.release();
            assert!(code == 0 || code == 1, "k={k} {mode:?}: {out}");
            // An hour later, as the next hourly run sees it: a claim that never dispatched is
            // past the grace.
            for c in holding(&w, "gate-attempt-1.json") {
                if w.runs().iter().all(|r| r.inputs["candidate"] != c) {
                    started_minutes_ago(&w, &c, 60);
                }
            }
            let (code, out) = w.release();
            assert_eq!(code, 0, "k={k} {mode:?}: {out}");
            let runs = w.runs();
            let per_candidate: BTreeMap<&str, Vec<&str>> =
                runs.iter().fold(BTreeMap::new(), |mut m, r| {
                    m.entry(r.inputs["candidate"].as_str())
                        .or_default()
                        .push(r.inputs["attempt"].as_str());
                    m
                });
            assert!(
                per_candidate.len() == 2 && per_candidate.values().all(|a| a == &["1"]),
                "k={k} ({}) {mode:?}: one run per candidate, attempt 1: {per_candidate:?}",
                writes[k as usize - 1]
            );
            recovered += 1;
        }
    }
    eprintln!(
        "gate on GitHub, the first run crashing at each of its {} writes, before and after: {recovered} of {} end in one run per candidate, attempt 1",
        writes.len(),
        2 * writes.len()
    );
}

#[test]
fn in_pull_request_mode_the_release_pull_request_is_tested_while_open_and_merged_bytes_promoted() {
    let w = World::with(DemoConfig::pull_request_mode);
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    let runs = w.attempt(1);
    assert_dispatched(&runs, 1);
    let open = |w: &World| -> Vec<(u64, String)> {
        w.repo()
            .pulls
            .iter()
            .filter(|p| p.state == "open")
            .map(|p| (p.number, p.body.clone()))
            .collect()
    };
    assert_eq!(
        open(&w).len(),
        2,
        "the release pull requests are opened as without a gate"
    );
    assert!(
        open(&w)
            .iter()
            .all(|(_, b)| b.contains("**Conformance:** in test since")),
        "{:?}",
        open(&w)
    );
    for r in runs.values() {
        w.finish(r, "success", Some(false));
    }
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    assert!(
        open(&w)
            .iter()
            .all(|(_, b)| b.contains("**Conformance:** passed") && b.contains("/actions/runs/")),
        "the body links the test run: {:?}",
        open(&w)
    );
    assert!(w.stable_tags().is_empty(), "nothing before the merge");
    while let Some((number, _)) = open(&w).into_iter().next() {
        w.fake.merge_pull(REPO, number);
        let (code, out) = w.release();
        assert_eq!(code, 0, "{out}");
    }
    assert_eq!(w.stable_tags(), STABLE);
    assert_eq!(w.runs().len(), 2, "the merged bytes are the tested ones");
    assert!(w.tenant_pulls() >= 2, "every tenant gets its pull request");
}

#[test]
fn a_dispatch_github_refused_is_started_again_without_using_up_the_attempt() {
    use crate::support::fake_github::{Fault, Faults};
    let w = World::new();
    // The first dispatch is rate limited and not waited out (no retries): GitHub did nothing.
    w.fake.set_faults(Faults::route(
        axum::http::Method::POST,
        "/repos/{owner}/{repo}/actions/workflows/conformance.yml/dispatches",
        1,
        Fault::TooManyRequests(1),
    ));
    let (code, out) = w.release();
    assert_eq!(code, 1, "a transient failure: {out}");
    w.fake.clear_faults();
    assert!(
        holding(&w, "gate-dispatch-1.json").is_empty(),
        "not recorded as a dispatch that may have started a run"
    );
    let claimed = holding(&w, "gate-attempt-1.json");
    let refused: Vec<&String> = claimed
        .iter()
        .filter(|c| w.runs().iter().all(|r| &r.inputs["candidate"] != *c))
        .collect();
    assert_eq!(refused.len(), 1, "one claimed attempt was never dispatched");
    let refused = refused[0].clone();
    started_minutes_ago(&w, &refused, 60);
    let (code, out) = w.release();
    assert_eq!(code, 0, "{out}");
    let of_refused: Vec<String> = w
        .runs()
        .iter()
        .filter(|r| r.inputs["candidate"] == refused)
        .map(|r| r.inputs["attempt"].clone())
        .collect();
    assert_eq!(
        of_refused,
        ["1"],
        "started again as attempt 1, the retry kept"
    );
    assert_eq!(
        holding(&w, "gate-attempt-1-start-2.json"),
        [refused],
        "its second start is recorded"
    );
}
