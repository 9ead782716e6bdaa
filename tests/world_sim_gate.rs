//! The world simulator's conformance gate (issue 30): hourly `stackbot release` runs (the real
//! binary) on the fake GitHub with a gated stack and two tenants, while a CI runner gives each
//! dispatched workflow run a seeded fate — it passes, fails, is cancelled, succeeds without
//! evidence, or hangs past the gate's timeout — a maintainer now and then edits a template (a
//! new candidate), some runs crash at a write that took effect, and now and then GitHub refuses
//! a dispatch (the workflow was briefly not dispatchable), leaving an attempt claimed whose test
//! never began, as a run that died between the claim and the dispatch does. After every run the gate's
//! promises are checked against the runner's own record of what it did, never against what
//! the bot wrote about it:
//!
//! - `passing-evidence`: every stable release is byte for byte a candidate one of whose runs
//!   the runner passed (success with a passing artifact);
//! - `failing-never-reaches-a-tenant`: a tenant pull request names only such releases, and no
//!   candidate the runner failed is ever promoted;
//! - `one-run-per-attempt`: never two runs of one attempt (crashes included), at most two
//!   attempts per candidate;
//! - `retried-once`: a cancelled or hung run's candidate gets exactly one more run;
//! - `never-began-is-no-lost-test`: an attempt the bot records as lost had a run (or a
//!   dispatch GitHub acknowledged), unless all 3 of its starts never began: one whose test
//!   never began is started again as the same attempt, and does not use up the retry.
//!
//! The same world publishing to a real OCI registry alone (`publish: [oci]`): the stable
//! releases and the candidates' bytes are then the registry's tags, and `passing-evidence`
//! compares their layers.
//!
//! And the same world in `forge.mode: pull-request`: a maintainer merges the release pull
//! requests now and then, whatever their test says, and now and then first commits to the
//! release branch by hand, so what is merged is not always what was tested (nor what the
//! templates render by then); the promises are the same.
//!
//! Knobs: `SIM_SEED` (default 2026), `SIM_GATE_RUNS` (default 40), `SIM_TRACE=1` (`2`: and
//! the output of every run that failed).

use stackbot_testkit as support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::json;
use support::config::DemoConfig;
use support::fake_github::actions::RunView;
use support::fake_github::{FakeGithub, Fault, Faults, RouteFault, demo};
use support::{copy_dir, root};

const TOKEN: &str = "ghp_gateSIMtoken_0123456789";
const TOKEN_ENV: &str = "STACKBOT_GATE_SIM_TOKEN";
const REPO: &str = "scs/cluster-stacks";
const TENANTS: [&str; 2] = ["acme/gitops", "globex/gitops"];

/// What the CI runner does with a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fate {
    Pass,
    Fail,
    Cancel,
    NoEvidence,
    Hang,
}

fn junit(fail: bool) -> Vec<u8> {
    let failure = if fail {
        "<failure>not ready</failure>"
    } else {
        ""
    };
    format!(
        "<testsuite><testcase name=\"[sig-network] DNS [Conformance]\"/>\
         <testcase name=\"[sig-apps] Deployment [Conformance]\">{failure}</testcase></testsuite>"
    )
    .into_bytes()
}

struct Sim {
    fake: FakeGithub,
    dir: tempfile::TempDir,
    cfg: PathBuf,
    templates: PathBuf,
    rng: fastrand::Rng,
    /// Rolls the refused dispatches (its own generator, so the other actors' rolls are those
    /// of the seed as before).
    refusals: fastrand::Rng,
    /// (candidate, attempt/starts) claimed without a run → the step it was first seen.
    unstarted: BTreeMap<(String, String), usize>,
    /// Run id → its fate, and the step it was given.
    fates: BTreeMap<u64, (Fate, usize)>,
    /// Situations that occurred, by name.
    occurred: BTreeMap<&'static str, usize>,
    violations: Vec<String>,
    /// The registry, when the world publishes to OCI alone.
    registry: Option<support::registry::TestRegistry>,
    /// `forge.mode: pull-request`: the maintainer merges release pull requests.
    pull_request: bool,
    /// The steps whose run had its first dispatch refused.
    refused: BTreeSet<usize>,
}

impl Sim {
    fn new(
        seed: u64,
        registry: Option<support::registry::TestRegistry>,
        pull_request: bool,
    ) -> Sim {
        let fake = demo::start(TOKEN, &TENANTS, demo::PINNED_CLUSTERSTACK);
        fake.add_documented_conformance_workflow(REPO);
        let dir = tempfile::tempdir().unwrap();
        let templates = dir.path().join("templates/openstack/scs2");
        copy_dir(&root().join("templates/openstack/scs2"), &templates);
        let mut cfg = DemoConfig::new()
            .on_github(&fake.api_url(), &fake.upload_url(), TOKEN_ENV)
            .max_retries(0)
            .tenant("acme")
            .tenant("globex")
            .templates(&templates)
            .gate(json!({"workflow": "conformance.yml"}));
        if let Some(r) = &registry {
            cfg = cfg.oci(&["oci"], &r.addr);
        }
        if pull_request {
            cfg = cfg.pull_request_mode();
        }
        let cfg = cfg.write(dir.path());
        Sim {
            fake,
            dir,
            cfg,
            templates,
            rng: fastrand::Rng::with_seed(seed),
            refusals: fastrand::Rng::with_seed(seed ^ 0x5ca1ab1e),
            unstarted: BTreeMap::new(),
            fates: BTreeMap::new(),
            occurred: BTreeMap::new(),
            violations: Vec::new(),
            registry,
            pull_request,
            refused: BTreeSet::new(),
        }
    }

    fn saw(&mut self, what: &'static str) {
        *self.occurred.entry(what).or_default() += 1;
    }

    fn release(&self) -> (i32, String) {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_stackbot"))
            .current_dir(self.dir.path())
            .env(TOKEN_ENV, TOKEN)
            .env("NO_COLOR", "1")
            .env_remove("GITHUB_ACTIONS")
            .args([
                "-c",
                self.cfg.to_str().unwrap(),
                "--now",
                "2026-05-01",
                "release",
            ])
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), text)
    }

    /// The CI runner: every run it has not decided yet gets its fate; a run hanging since an
    /// earlier step has by now been running for longer than the gate's timeout (its attempt's
    /// start moves back 7 hours: the clock the bot reads is the wall clock).
    fn runner(&mut self, step: usize) {
        for r in self.fake.runs(REPO) {
            match self.fates.get(&r.id) {
                Some((Fate::Hang, at)) if *at + 1 == step && r.status != "completed" => {
                    let attempt: u32 = r.inputs["attempt"].parse().unwrap();
                    self.started_ago(&r.inputs["candidate"], attempt, 7 * 60);
                }
                Some(_) => {}
                None => {
                    let fate = [
                        (Fate::Pass, 40),
                        (Fate::Fail, 15),
                        (Fate::Cancel, 20),
                        (Fate::NoEvidence, 5),
                        (Fate::Hang, 20),
                    ];
                    let total: u32 = fate.iter().map(|f| f.1).sum();
                    let mut x = self.rng.u32(0..total);
                    let fate = fate
                        .iter()
                        .find(|(_, w)| {
                            if x < *w {
                                true
                            } else {
                                x -= w;
                                false
                            }
                        })
                        .unwrap()
                        .0;
                    self.fates.insert(r.id, (fate, step));
                    self.fake.set_run_status(REPO, r.id, "in_progress");
                    let art = |fail| vec![("results/junit.xml", junit(fail))];
                    match fate {
                        Fate::Pass | Fate::Fail => {
                            let files = art(fate == Fate::Fail);
                            let files: Vec<(&str, &[u8])> =
                                files.iter().map(|(n, b)| (*n, b.as_slice())).collect();
                            self.fake.upload_artifact(REPO, r.id, "conformance", &files);
                            let c = if fate == Fate::Pass {
                                "success"
                            } else {
                                "failure"
                            };
                            self.fake.complete_run(REPO, r.id, c);
                        }
                        Fate::Cancel => self.fake.complete_run(REPO, r.id, "cancelled"),
                        Fate::NoEvidence => self.fake.complete_run(REPO, r.id, "success"),
                        Fate::Hang => {}
                    }
                }
            }
        }
    }

    /// Move the newest start of attempt `attempt` of `candidate` back by `minutes` (the clock
    /// the bot reads is the wall clock).
    fn started_ago(&self, candidate: &str, attempt: u32, minutes: i64) {
        let snap = self.fake.snapshot();
        let Some(c) = snap.repos[REPO]
            .releases
            .iter()
            .find(|r| r.tag == candidate && !r.draft)
        else {
            return;
        };
        let (start, name) = (1..=3)
            .rev()
            .map(|k| (k, start_record(attempt, k)))
            .find(|(_, n)| c.assets.contains_key(n))
            .unwrap_or_else(|| panic!("{candidate} has no start of attempt {attempt}"));
        let started = chrono::Utc::now() - chrono::Duration::minutes(minutes);
        let record = json!({"attempt": attempt, "start": start, "started_at": started});
        self.fake
            .replace_asset(REPO, candidate, &name, record.to_string().as_bytes());
    }

    /// An attempt claimed without a dispatch (its dispatch was refused): by the next step, the
    /// hour since has passed the dispatch grace, so its start moves back an hour.
    fn unstarted_claims(&mut self, step: usize) {
        let snap = self.fake.snapshot();
        let runs = self.fake.runs(REPO);
        for c in snap.repos[REPO]
            .releases
            .iter()
            .filter(|r| r.tag.contains("-v0-sha-") && !r.draft)
        {
            for attempt in 1..=2u32 {
                let starts = (1..=3)
                    .filter(|k| c.assets.contains_key(&start_record(attempt, *k)))
                    .count();
                let ran = runs.iter().any(|r| {
                    r.inputs["candidate"] == c.tag && r.inputs["attempt"] == attempt.to_string()
                });
                if starts == 0 || acknowledged(c, attempt) || ran {
                    continue;
                }
                let key = (c.tag.clone(), format!("{attempt}/{starts}"));
                match self.unstarted.get(&key) {
                    None => {
                        self.unstarted.insert(key, step);
                    }
                    Some(at) if at + 1 == step => self.started_ago(&c.tag, attempt, 60),
                    Some(_) => {}
                }
            }
        }
    }

    /// A maintainer changes a template: the next releases are new content, new candidates.
    fn maintainer(&mut self, step: usize) {
        if self.rng.u32(0..100) < 12 {
            let values = self.templates.join("cluster-class/values.yaml");
            let mut text = std::fs::read_to_string(&values).unwrap();
            text.push_str(&format!("# edited at step {step}\n"));
            std::fs::write(&values, text).unwrap();
            self.saw("template-edited");
        }
    }

    /// Pull-request mode: the maintainer merges each open release pull request now and then,
    /// whatever its test says (a merge GitHub refuses, a conflict, waits for a later step),
    /// and now and then first commits to its branch by hand.
    fn merger(&mut self, step: usize) {
        use support::fake_github::humans::{MAINTAINER, MergeMethod};
        if !self.pull_request {
            return;
        }
        let open: Vec<(u64, String, String)> = self.fake.snapshot().repos[REPO]
            .pulls
            .iter()
            .filter(|p| p.state == "open" && p.head.starts_with("stackbot/release/"))
            .map(|p| (p.number, p.head.clone(), p.body.clone()))
            .collect();
        for (number, branch, body) in open {
            if self.rng.u32(0..100) >= 30 {
                continue;
            }
            if self.rng.u32(0..100) < 25 {
                self.hand_edit(&branch, step);
            }
            if self
                .fake
                .try_merge_pull(REPO, number, MergeMethod::Merge, MAINTAINER)
                .is_err()
            {
                self.saw("merge-refused");
                continue;
            }
            // What the body said of the candidate when it was merged.
            self.saw(if body.contains("**Conformance:** passed") {
                "merged-after-pass"
            } else if body.contains("**Conformance:** in test since") {
                "merged-in-test"
            } else if body.contains("merging this does not publish it") {
                "merged-after-fail"
            } else {
                "merged-otherwise"
            });
        }
    }

    /// A maintainer commits a change of the rendered cluster class to a release branch.
    fn hand_edit(&mut self, branch: &str, step: usize) {
        let Some(head) = self.fake.branch_head(REPO, branch) else {
            return;
        };
        // `stackbot/release/openstack-scs2-1-34` renders into `…/1-34/`.
        let minor = &branch[branch.len() - 4..];
        let files = self.fake.files_at(REPO, &head);
        let Some((path, bytes)) = files.iter().find(|(p, _)| {
            p.contains(&format!("/{minor}/")) && p.ends_with("cluster-class/values.yaml")
        }) else {
            return;
        };
        let mut edited = bytes.clone();
        edited.extend_from_slice(format!("# tuned by hand at step {step}\n").as_bytes());
        self.fake.push_commit(
            REPO,
            branch,
            &[(path.as_str(), Some(edited.as_slice()))],
            "Tune the cluster class",
            ("A Maintainer", "maintainer@example.com"),
        );
        self.saw("hand-edited");
    }

    /// Now and then a write takes effect but its answer is lost: the run fails, the next
    /// one must finish the job without a duplicate.
    ///
    /// And now and then GitHub refuses the run's first dispatch (`404`: not performed), which
    /// leaves a claimed attempt whose test never began.
    fn faults(&mut self, step: usize) -> bool {
        let mut faults = Faults::default();
        if self.refusals.u32(0..100) < 10 {
            self.refused.insert(step);
            faults.on_route.push(RouteFault {
                method: axum::http::Method::POST,
                route: "/repos/{owner}/{repo}/actions/workflows/conformance.yml/dispatches".into(),
                nth: 1,
                fault: Fault::Status(404),
            });
        }
        let write_fault = self.rng.u32(0..100) < 25;
        if write_fault {
            let k = self.rng.usize(1..6);
            let f = if self.rng.bool() {
                Fault::AfterSuccess(502)
            } else {
                Fault::DropAfterSuccess
            };
            faults.on_write.insert(k, f);
        }
        let faulted = write_fault || !faults.on_route.is_empty();
        self.fake.set_faults(faults);
        faulted
    }

    fn check(&mut self, step: usize) {
        let runs = self.fake.runs(REPO);
        let mut by_candidate: BTreeMap<String, Vec<&RunView>> = BTreeMap::new();
        for r in &runs {
            by_candidate
                .entry(r.inputs["candidate"].clone())
                .or_default()
                .push(r);
        }
        let mut v = one_run_per_attempt(&by_candidate);
        let passed_stable = self.passing_evidence(&by_candidate, &mut v);
        v.extend(tenants_hear_of(&self.fake.snapshot(), &passed_stable));
        v.extend(self.retried_once(step, &runs, &by_candidate));
        v.extend(self.never_began_is_no_lost_test(&by_candidate));
        for x in v {
            self.violations.push(format!("step {step}: {x}"));
        }
        self.occurred.insert("promoted", passed_stable.len());
        let started_again = self.fake.snapshot().repos[REPO]
            .releases
            .iter()
            .filter(|r| r.assets.keys().any(|n| n.contains("-start-")))
            .count();
        self.occurred.insert("started-again", started_again);
    }

    /// Every published release (stable and candidates) with the sha256 of each of its files:
    /// the forge's releases, or the registry's tags when the world publishes there.
    fn published(&self) -> Vec<(String, BTreeMap<String, String>)> {
        if let Some(r) = &self.registry {
            let registry = stackbot::oci::Registry::connect(
                stackbot::oci::OciTarget::new(
                    &r.addr,
                    &format!("{}/kaas/cluster-stacks", r.addr),
                    true,
                    stackbot::oci::Credentials::Anonymous,
                )
                .unwrap(),
            )
            .unwrap();
            return registry
                .list_tags()
                .unwrap()
                .into_iter()
                .map(|t| {
                    let (json, _) = registry.manifest(&t).unwrap().unwrap();
                    (t, stackbot::oci::manifest::layer_sha256s(&json))
                })
                .collect();
        }
        let snap = self.fake.snapshot();
        snap.repos[REPO]
            .releases
            .iter()
            .filter(|r| !r.draft)
            .map(|r| (r.tag.clone(), r.assets.clone()))
            .collect()
    }

    /// passing-evidence, and no failed candidate promoted: the stable releases that hold.
    fn passing_evidence(
        &self,
        by_candidate: &BTreeMap<String, Vec<&RunView>>,
        v: &mut Vec<String>,
    ) -> BTreeSet<String> {
        let fate_of = |r: &RunView| self.fates.get(&r.id).map(|f| f.0);
        let published = self.published();
        let mut passed_stable = BTreeSet::new();
        for (tag, assets) in published.iter().filter(|(t, _)| !t.contains("-v0-sha-")) {
            let cand = published.iter().find(|(c, held)| {
                c.contains("-v0-sha-") && assets.iter().all(|(n, sha)| held.get(n) == Some(sha))
            });
            let Some((cand, _)) = cand else {
                v.push(format!("passing-evidence: {tag} is no candidate's bytes"));
                continue;
            };
            let fates: Vec<Fate> = by_candidate
                .get(cand)
                .into_iter()
                .flatten()
                .filter_map(|r| fate_of(r))
                .collect();
            if !fates.contains(&Fate::Pass) {
                v.push(format!(
                    "passing-evidence: {tag} promoted from {cand} whose runs were {fates:?}"
                ));
            } else if fates.contains(&Fate::Fail) {
                v.push(format!(
                    "failing-never-reaches-a-tenant: {cand} failed and was promoted"
                ));
            } else {
                passed_stable.insert(tag.clone());
            }
        }
        passed_stable
    }

    /// never-began-is-no-lost-test: every attempt recorded as lost had a run or an
    /// acknowledged dispatch, or all its starts never began.
    fn never_began_is_no_lost_test(
        &self,
        by_candidate: &BTreeMap<String, Vec<&RunView>>,
    ) -> Vec<String> {
        let snap = self.fake.snapshot();
        let mut v = Vec::new();
        for c in snap.repos[REPO]
            .releases
            .iter()
            .filter(|r| r.tag.contains("-v0-sha-") && !r.draft)
        {
            for attempt in 1..=2u32 {
                let name = format!("gate-result-{attempt}.json");
                let Some(bytes) = c
                    .assets
                    .contains_key(&name)
                    .then(|| self.fake.asset_bytes(REPO, &c.tag, &name))
                    .flatten()
                else {
                    continue;
                };
                let result: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
                let ran = by_candidate.get(&c.tag).is_some_and(|rs| {
                    rs.iter()
                        .any(|r| r.inputs["attempt"] == attempt.to_string())
                });
                let exhausted = c.assets.contains_key(&start_record(attempt, 3));
                if result["outcome"] == "lost" && !ran && !acknowledged(c, attempt) && !exhausted {
                    v.push(format!(
                        "never-began-is-no-lost-test: attempt {attempt} of {} is recorded lost, \
                         but its test never began: {}",
                        c.tag, result["detail"]
                    ));
                }
            }
        }
        v
    }

    /// retried-once: a cancelled or hung first run gets its second run within two steps,
    /// unless a change made a newer candidate of its release meanwhile (then that one is
    /// tested instead).
    fn retried_once(
        &self,
        step: usize,
        runs: &[RunView],
        by_candidate: &BTreeMap<String, Vec<&RunView>>,
    ) -> Vec<String> {
        let mut v = Vec::new();
        let series = |r: &RunView| {
            let s = &r.inputs["stable_tag"];
            s[..s.rfind("-v").unwrap_or(s.len())].to_string()
        };
        for rs in by_candidate.values() {
            let first = rs.iter().find(|r| r.inputs["attempt"] == "1");
            let second = rs.iter().any(|r| r.inputs["attempt"] == "2");
            let superseded = |f: &RunView| {
                runs.iter().any(|o| {
                    o.id > f.id
                        && series(o) == series(f)
                        && o.inputs["candidate"] != f.inputs["candidate"]
                })
            };
            // A refused dispatch leaves the retry claimed and not begun: it is started again
            // a step or two later (`never-began-is-no-lost-test`'s matter), so each refusal
            // since gives it two more steps.
            let due = |at: usize| {
                at + 3 + 2 * self.refused.range(at + 1..).filter(|s| **s <= step).count()
            };
            if let Some(f) = first
                && let Some((fate @ (Fate::Cancel | Fate::Hang), at)) = self.fates.get(&f.id)
                && step >= due(*at)
                && !second
                && !superseded(f)
            {
                v.push(format!(
                    "retried-once: {} was {fate:?} at step {at} and has no second run",
                    f.inputs["candidate"]
                ));
            }
        }
        v
    }
}

/// The name of the record of start `k` of attempt `attempt`.
fn start_record(attempt: u32, k: u32) -> String {
    if k == 1 {
        format!("gate-attempt-{attempt}.json")
    } else {
        format!("gate-attempt-{attempt}-start-{k}.json")
    }
}

/// Whether the candidate records attempt `attempt`'s dispatch as sent (GitHub acknowledged it,
/// or its answer was lost).
fn acknowledged(c: &support::fake_github::ReleaseSnapshot, attempt: u32) -> bool {
    c.assets
        .contains_key(&format!("gate-dispatch-{attempt}.json"))
        || c.assets.contains_key(&format!("gate-run-{attempt}.json"))
}

/// one-run-per-attempt: never two runs of one attempt, attempts 1 and 2 only.
fn one_run_per_attempt(by_candidate: &BTreeMap<String, Vec<&RunView>>) -> Vec<String> {
    let mut v = Vec::new();
    for (c, rs) in by_candidate {
        let attempts: Vec<&str> = rs.iter().map(|r| r.inputs["attempt"].as_str()).collect();
        let distinct: BTreeSet<&str> = attempts.iter().copied().collect();
        if distinct.len() != attempts.len() || distinct.iter().any(|a| !["1", "2"].contains(a)) {
            v.push(format!(
                "one-run-per-attempt: {c} has runs of attempts {attempts:?}"
            ));
        }
    }
    v
}

/// failing-never-reaches-a-tenant: tenants hear only of releases with passing evidence.
fn tenants_hear_of(
    snap: &support::fake_github::Snapshot,
    passed_stable: &BTreeSet<String>,
) -> Vec<String> {
    let mut v = Vec::new();
    let tag = regex::Regex::new(r"openstack-scs2-1-\d+-v\d+\b").unwrap();
    for t in TENANTS {
        for p in &snap.repos[t].pulls {
            let text = format!("{}\n{}", p.title, p.body);
            for m in tag.find_iter(&text) {
                let after = &text[m.end()..];
                if after.starts_with("-sha") || m.as_str().ends_with("-v0") {
                    continue;
                }
                if !passed_stable.contains(m.as_str()) {
                    v.push(format!(
                        "failing-never-reaches-a-tenant: {t}#{} names {} without passing evidence",
                        p.number,
                        m.as_str()
                    ));
                }
            }
        }
    }
    v
}

#[test]
fn a_gate_that_passes_fails_hangs_or_is_cancelled_never_lets_a_failing_candidate_reach_a_tenant() {
    world(None, false);
}

#[test]
fn the_same_gate_publishing_to_oci_alone_never_lets_a_failing_candidate_reach_a_tenant() {
    world(Some(support::registry::TestRegistry::start()), false);
}

#[test]
fn in_pull_request_mode_a_merge_never_publishes_what_no_passing_run_tested() {
    world(None, true);
}

fn world(registry: Option<support::registry::TestRegistry>, pull_request: bool) {
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let seed = env("SIM_SEED").unwrap_or(2026);
    let steps = env("SIM_GATE_RUNS").unwrap_or(40) as usize;
    let defaults = env("SIM_SEED").is_none() && env("SIM_GATE_RUNS").is_none();
    let mut sim = Sim::new(seed, registry, pull_request);
    for step in 1..=steps {
        sim.runner(step);
        sim.unstarted_claims(step);
        sim.maintainer(step);
        sim.merger(step);
        let faulted = sim.faults(step);
        // Each run is an hour after the last: GitHub's rate-limit window has reset.
        sim.fake.reset_rate_limit();
        let (code, out) = sim.release();
        sim.fake.clear_faults();
        if faulted && code != 0 {
            sim.saw("crashed-run");
        }
        if let Some(trace) = std::env::var_os("SIM_TRACE") {
            eprintln!(
                "step {step}: exit {code}{}",
                if faulted { " (fault)" } else { "" }
            );
            // `SIM_TRACE=2`: what a failed run said.
            if trace == "2" && code != 0 {
                eprintln!("{out}");
            }
        }
        assert!(!out.contains("panicked at"), "step {step}: {out}");
        assert!(
            [0, 1].contains(&code),
            "step {step}: a run of the gate exits 0 or 1 (transient, a test gave up): {code}\n{out}"
        );
        sim.check(step);
    }
    let fates: BTreeMap<Fate, usize> = sim.fates.values().fold(BTreeMap::new(), |mut m, (f, _)| {
        *m.entry(*f).or_default() += 1;
        m
    });
    let retried = sim
        .fake
        .runs(REPO)
        .iter()
        .filter(|r| r.inputs["attempt"] == "2")
        .count();
    let hung_cancelled = sim
        .fake
        .runs(REPO)
        .iter()
        .filter(|r| {
            sim.fates.get(&r.id).map(|f| f.0) == Some(Fate::Hang)
                && r.conclusion.as_deref() == Some("cancelled")
        })
        .count();
    eprintln!(
        "gate world (seed {seed}, {steps} runs): fates {fates:?}, {retried} retries, \
         {hung_cancelled} hung runs cancelled, {:?}",
        sim.occurred
    );
    assert!(sim.violations.is_empty(), "{:#?}", sim.violations);
    if defaults {
        sim.situations_occurred(&fates, (retried, hung_cancelled));
    }
}

impl Sim {
    /// The situations the promises are about occurred (with the default seed): a promise
    /// whose situation never arises is not tested. In pull-request mode, the merges are; the
    /// retries are the other worlds' matter.
    fn situations_occurred(
        &self,
        fates: &BTreeMap<Fate, usize>,
        (retried, hung_cancelled): (usize, usize),
    ) {
        let pull_request_situations: &[&str] = if self.pull_request {
            &[
                "merged-after-pass",
                "merged-in-test",
                "merged-after-fail",
                "hand-edited",
            ]
        } else {
            for f in [Fate::Cancel, Fate::Hang] {
                assert!(fates.contains_key(&f), "no run was {f:?}: {fates:?}");
            }
            assert!(
                retried > 0 && hung_cancelled > 0,
                "{retried} {hung_cancelled}"
            );
            &[]
        };
        for f in [Fate::Pass, Fate::Fail] {
            assert!(fates.contains_key(&f), "no run was {f:?}: {fates:?}");
        }
        for s in [
            "promoted",
            "template-edited",
            "crashed-run",
            "started-again",
        ]
        .iter()
        .chain(pull_request_situations)
        {
            assert!(
                self.occurred.get(s).is_some_and(|n| *n > 0),
                "{s}: {:?}",
                self.occurred
            );
        }
    }
}
