//! The conformance gate (`gate:` of a stack): a release is first published as a *candidate*,
//! tested, and only a passing candidate becomes the stable `vN`, with the same bytes.
//!
//! Everything here decides from observed facts; the binary's `observe::gate` reads them and
//! `apply::gate` carries the decisions out.
//!
//! - **The candidate's name** is csctl's hash-mode form, `<prefix>-v0-sha-<7>`: a version on a
//!   channel other than `stable` that CSO parses (5 or 7 dash parts, `^v\d+(-\w+-\w+)?$`) and
//!   a `ClusterStack` with `channel: custom` and `versions: [v0-sha.<7>]` consumes, exactly as
//!   the SCS stacks consume hash releases. Its seven characters come from the digest of the
//!   release's assets ([`content_digest`]), so the name says which bytes were tested: the same
//!   content always gets the same candidate, a change gets a new one. Stable numbering ignores
//!   it (`v0` on a non-stable channel, see [`crate::index`]).
//! - **The candidate's assets** are the release's assets byte for byte, plus one more name for
//!   the cluster-class chart (the same bytes again), because CSO looks the chart up by the
//!   *tag's* version (`<prefix>-cluster-class-v0-sha.<7>`).
//! - **Where the candidate goes**: wherever the stack publishes. With `publish` listing `oci`
//!   its assets are pushed to the registry under the candidate's tag (the form CSO's OCI client
//!   lists and pulls, the same as on the forge), before the pre-release is published; with
//!   `forge` the pre-release holds them too. A registry tag holding other bytes is refused
//!   ([`InRegistry`]), never overwritten.
//! - **The state lives on the forge**, on the candidate pre-release (with `publish: [oci]`
//!   alone too, where it holds only the records: the forge is where every run reads and writes
//!   already, and its uploads are create-once, which the registry's tags are not): its notes carry the record
//!   ([`CandidateRecord`]: the stable tag it is for and the content digest), and every step of
//!   the test is one more asset: `gate-attempt-<n>.json` when attempt `n` is started (written
//!   before the test starts, so a crash never starts a second one unseen),
//!   `gate-result-<n>.json` when its result is read, with the evidence
//!   (`conformance-<n>.xml`) beside it. On GitHub, the workflow run an attempt started is
//!   recorded as `gate-run-<n>.json` once it is known, and a dispatch GitHub answered without
//!   a run id as `gate-dispatch-<n>.json`.
//! - **Starting is resumable.** The claim (`gate-attempt-<n>.json`) comes before the test
//!   starts, so a crash between the two leaves a claimed attempt that never ran. Such an
//!   attempt is not a lost test: when it provably never started ([`Runner::NotStarted`]
//!   locally; on GitHub no acknowledged dispatch and no run within [`DISPATCH_GRACE`]) it is
//!   started again *under the same attempt* (`gate-attempt-<n>-start-<k>.json`), at most
//!   [`MAX_STARTS`] times, so a crash loop cannot start tests forever and the one retry stays
//!   for a test that really ran and was cancelled or lost.
//! - **The test on GitHub** is a `workflow_dispatch` of the configured workflow. Its run is
//!   found by the id GitHub returns for the dispatch (`return_run_details`) or, where GitHub
//!   returns none (older servers, or a crash before the id was recorded), by [`correlate`]:
//!   the newest page of the workflow's `workflow_dispatch` runs, created since the attempt
//!   started (less [`CLOCK_SKEW`]), whose title names the attempt's [`gate_id`] (the
//!   workflow's `run-name` echoes the `gate_id` input).

pub mod junit;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::model::{FileTree, ReleaseName, StackVersion};

/// The hidden line that makes a release notes body a candidate's record.
pub const MARKER: &str = "<!-- stackbot:candidate ";

/// How many times a test is started for one candidate: once, and once more when the first
/// run was cancelled or lost.
pub const MAX_ATTEMPTS: u32 = 2;

/// How many times one attempt is started when its earlier starts provably never began (the
/// run stopped between the claim and the test): enough for a crash or two, few enough that
/// a run that always dies there ends as a lost attempt, reported, instead of trying forever.
pub const MAX_STARTS: u32 = 3;

/// The digest of a release's assets: sha256 over `<name> <sha256 of its bytes>\n`, by name.
pub fn content_digest(assets: &FileTree) -> String {
    let mut h = Sha256::new();
    for (name, bytes) in assets {
        h.update(format!("{name} {}\n", hex::encode(Sha256::digest(bytes))));
    }
    hex::encode(h.finalize())
}

/// The candidate of `stable` with these assets: `<prefix>-v0-sha-<first 7 of the digest>`.
pub fn candidate_name(stable: &ReleaseName, assets: &FileTree) -> ReleaseName {
    ReleaseName {
        stack: stable.stack.clone(),
        minor: stable.minor,
        version: StackVersion::hash_mode(&content_digest(assets)),
    }
}

/// The assets of the candidate: `assets` unchanged, and the cluster-class chart once more
/// under the name CSO looks for with the candidate's tag.
pub fn candidate_assets(stable: &ReleaseName, assets: &FileTree) -> FileTree {
    let mut out = assets.clone();
    let (alias, chart) = chart_alias(stable, &candidate_name(stable, assets));
    if let Some(bytes) = assets.get(&chart) {
        out.insert(alias, bytes.clone());
    }
    out
}

/// The cluster-class chart's second name on a candidate, and the name it is a copy of:
/// `(<prefix>-cluster-class-<candidate version>.tgz, <prefix>-cluster-class-<stable version>.tgz)`.
/// CSO finds the chart by the version of the tag it downloaded (`pkg/release/release.go`,
/// `clusterClassChartName`), so a candidate needs it under its own version; `SHA256SUMS` (vN's,
/// byte for byte) lists it under the stable name only.
pub fn chart_alias(stable: &ReleaseName, candidate: &ReleaseName) -> (String, String) {
    let name = |r: &ReleaseName| format!("{}-{}.tgz", r.cluster_class_chart(), r.version.dot());
    (name(candidate), name(stable))
}

/// What the candidate's notes record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CandidateRecord {
    /// The stable tag it becomes when it passes.
    pub stable: String,
    /// [`content_digest`] of the stable release's assets.
    pub digest: String,
}

impl CandidateRecord {
    /// The candidate's release notes: the record, then what it is for people. `oci` is the
    /// registry reference of the candidate (`<registry>/<repository>:<candidate>`) when the
    /// stack publishes to OCI; `assets_here` says whether this pre-release holds the assets
    /// too (`publish` lists `forge`) or only the gate's records (`publish: [oci]`).
    pub fn notes(&self, candidate: &str, oci: Option<&str>, assets_here: bool) -> String {
        let version = ReleaseName::parse(candidate)
            .map(|n| n.version.dot())
            .unwrap_or_else(|_| candidate.to_string());
        let stable = &self.stable;
        let here = if assets_here {
            "here"
        } else {
            "in the OCI registry"
        };
        let mut notes = format!(
            "{MARKER}{} -->\nCandidate of `{stable}` in the conformance gate: the same assets as \
             `{stable}` will have, published {here} first to be tested (CSO: `channel: custom`, \
             `versions: [{version}]`). It becomes `{stable}` only when its test passes; the \
             evidence is attached below.\n",
            serde_json::to_string(self).expect("record serializes"),
        );
        match (oci, assets_here) {
            (Some(reference), true) => notes.push_str(&format!(
                "\nThe assets are here and in the OCI registry: `{reference}`.\n"
            )),
            (Some(reference), false) => notes.push_str(&format!(
                "\nThe assets are in the OCI registry: `{reference}`; this pre-release holds \
                 the gate's records.\n"
            )),
            (None, _) => {}
        }
        notes
    }

    /// The record in a release's notes, if they are a candidate's.
    pub fn parse(notes: &str) -> Option<Self> {
        let at = notes.find(MARKER)? + MARKER.len();
        let end = notes[at..].find(" -->")?;
        serde_json::from_str(&notes[at..at + end]).ok()
    }
}

/// The name of the record of start `start` of attempt `n`: `gate-attempt-<n>.json` for the
/// first (the name records had before starts were resumable), `gate-attempt-<n>-start-<k>.json`
/// for a start again of an attempt that never began.
pub fn attempt_asset(n: u32, start: u32) -> String {
    if start <= 1 {
        format!("gate-attempt-{n}.json")
    } else {
        format!("gate-attempt-{n}-start-{start}.json")
    }
}

/// The name of the record that attempt `n`'s dispatch was sent (GitHub, when its answer named
/// no run; a recorded run says the same).
pub fn dispatch_asset(n: u32) -> String {
    format!("gate-dispatch-{n}.json")
}

/// The name of the record of the workflow run attempt `n` started (GitHub).
pub fn run_asset(n: u32) -> String {
    format!("gate-run-{n}.json")
}

/// The name of attempt `n`'s result record.
pub fn result_asset(n: u32) -> String {
    format!("gate-result-{n}.json")
}

/// The name of attempt `n`'s evidence file `file` (a result file as the test wrote it).
pub fn evidence_asset(n: u32, file: &str) -> String {
    format!("conformance-{n}-{file}")
}

/// Whether `name` is one of the gate's own assets (not part of the release).
pub fn is_gate_asset(name: &str) -> bool {
    (name.starts_with("gate-attempt-")
        || name.starts_with("gate-result-")
        || name.starts_with("gate-run-")
        || name.starts_with("gate-dispatch-"))
        && name.ends_with(".json")
        || name.starts_with("conformance-")
}

/// Counts of a conformance result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
    /// The failed tests' names (at most [`junit::MAX_FAILED_NAMES`]).
    #[serde(default)]
    pub failed_tests: Vec<String>,
}

impl Summary {
    /// `12 passed, 1 failed, 3 skipped`.
    pub fn counts(&self) -> String {
        format!(
            "{} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        )
    }
}

/// The start record of one attempt (one per start, see [`MAX_STARTS`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    pub attempt: u32,
    pub started_at: DateTime<Utc>,
    /// Which start of the attempt this is (records written before starts were resumable have
    /// none: they are the first).
    #[serde(default = "first_start")]
    pub start: u32,
}

fn first_start() -> u32 {
    1
}

/// The record that an attempt's dispatch was sent: written after GitHub accepted it (when it
/// named no run), and after a dispatch whose answer was lost, which may have started a run,
/// so that it is never sent again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DispatchRecord {
    pub attempt: u32,
    pub start: u32,
    /// Why it is unknown whether the dispatch started a run (its answer was lost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unanswered: Option<String>,
}

/// How a test attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It ran and its result says no test failed.
    Passed,
    /// It ran and tests failed, or it gave no usable result.
    Failed,
    /// Someone or something stopped it (a signal, a cancelled workflow run).
    Cancelled,
    /// It disappeared without a result, or overran the gate's timeout.
    Lost,
}

impl Outcome {
    /// Whether the attempt says nothing about the candidate (so it is worth retrying).
    pub fn is_retryable(self) -> bool {
        matches!(self, Outcome::Cancelled | Outcome::Lost)
    }
}

/// The result record of one attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptResult {
    pub attempt: u32,
    pub finished_at: DateTime<Utc>,
    pub outcome: Outcome,
    /// The counts, when a result file was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
    /// What the runner said (`exited 1`, `killed by signal 15`, `no result file`, ...).
    pub detail: String,
    /// The evidence assets (the result files as the test wrote them), by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// The page of the test run, when it has one (a GitHub workflow run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

impl AttemptResult {
    /// `passed (412 passed, 0 failed, 5 skipped)` and the like.
    pub fn line(&self) -> String {
        let word = match self.outcome {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Cancelled => "cancelled",
            Outcome::Lost => "lost",
        };
        match &self.summary {
            Some(s) => format!("{word} ({}; {})", s.counts(), self.detail),
            None => format!("{word} ({})", self.detail),
        }
    }

    /// `; failed tests: a, b, c`, or nothing when no failed test is named.
    pub fn failed_names(&self) -> String {
        match &self.summary {
            Some(s) if !s.failed_tests.is_empty() => {
                format!("; failed tests: {}", s.failed_tests.join(", "))
            }
            _ => String::new(),
        }
    }
}

/// What a finished test left behind, as the runner reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    /// The exit code (`None`: killed by a signal).
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// The result the test wrote: its summary, or why it is no evidence (`None`: no file).
    pub result: Option<Result<Summary, String>>,
}

/// A workflow run that completed, as GitHub reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Concluded {
    /// GitHub's conclusion (`success`, `failure`, `cancelled`, `timed_out`, ...).
    pub conclusion: Option<String>,
    /// The run's page.
    pub url: String,
    /// The result in its conformance artifact: its summary, or why it is no evidence
    /// (`None`: no such artifact).
    pub result: Option<Result<Summary, String>>,
}

/// Where a started attempt's test is, as its runner reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runner {
    /// Still running (a workflow run queued or in progress).
    Running,
    /// Ended: what it left.
    Finished(Finished),
    /// A workflow run completed: its conclusion and artifact.
    Concluded(Concluded),
    /// No run of the attempt is visible (yet): GitHub starts a run a few seconds after the
    /// dispatch. `dispatched`: the dispatch was acknowledged (a dispatch or run record, or
    /// locally the launch marker), so a run that never appears within [`DISPATCH_GRACE`] is
    /// lost. Without it, the run that claimed the attempt stopped before the dispatch, or is
    /// still dispatching (runs on GitHub may overlap): after the grace, it never started.
    Unseen { dispatched: bool },
    /// The test provably never started: the local runner's folder has no launch marker, which
    /// is written before the command is spawned (and local runs are serialized by the run
    /// lock, so no other run is between the two).
    NotStarted,
    /// Nothing runs and nothing was left (the machine restarted, the run was deleted).
    Gone,
}

/// How long a dispatched workflow may stay invisible before its attempt counts as lost, and
/// how long an unacknowledged one may before it counts as never started.
pub const DISPATCH_GRACE: chrono::Duration = chrono::Duration::minutes(15);

/// How long after its claim (`started_at`) an attempt's dispatch may still be sent. The
/// dispatch's own waiting (write pacing, rate-limit waits, retries of a connection that was
/// refused) ends there, and it fails as not sent ([`dispatch_deadline`]). It stays well
/// below [`DISPATCH_GRACE`] less [`CLOCK_SKEW`]: an overlapping run (by its own clock) reads
/// an unacknowledged claim older than the grace as never begun and starts it again, so a
/// dispatch still on its way then would start a second test of the same attempt.
pub const DISPATCH_SEND_WITHIN: chrono::Duration = chrono::Duration::minutes(5);

const _: () = assert!(
    DISPATCH_SEND_WITHIN.num_seconds() + CLOCK_SKEW.num_seconds() < DISPATCH_GRACE.num_seconds(),
    "a dispatch must be sent (or given up) before an overlapping run may start it again"
);

/// The time by which the dispatch of an attempt claimed at `started_at` is sent or given up
/// ([`DISPATCH_SEND_WITHIN`]).
pub fn dispatch_deadline(started_at: DateTime<Utc>) -> DateTime<Utc> {
    started_at + DISPATCH_SEND_WITHIN
}

/// How much earlier than the attempt's start (by this machine's clock) a run may be stamped
/// by GitHub's and still be the attempt's.
pub const CLOCK_SKEW: chrono::Duration = chrono::Duration::minutes(5);

/// The identifier of attempt `attempt` of `candidate`: the `gate_id` input of its dispatch,
/// which the workflow's `run-name` echoes (`openstack-scs2-1-34-v0-sha-15e670f#1`).
pub fn gate_id(candidate: &str, attempt: u32) -> String {
    format!("{candidate}#{attempt}")
}

/// Whether a run's title names `id` (not merely a longer one: `…#1` is not `…#12`).
pub fn names_attempt(title: &str, id: &str) -> bool {
    title.match_indices(id).any(|(i, m)| {
        !title[i + m.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
    })
}

/// The run attempt `id` started, among the runs of its workflow: a `workflow_dispatch` run,
/// created no earlier than `since` less [`CLOCK_SKEW`] (a run without a creation time is
/// judged by its title alone), whose title names `id`; of several (a dispatch repeated by a
/// person), the first.
pub fn correlate<'r>(
    runs: &'r [crate::forge::WorkflowRun],
    id: &str,
    since: DateTime<Utc>,
) -> Option<&'r crate::forge::WorkflowRun> {
    runs.iter()
        .filter(|r| r.event == "workflow_dispatch")
        .filter(|r| r.created_at.is_none_or(|c| c >= since - CLOCK_SKEW))
        .filter(|r| names_attempt(&r.display_title, id))
        .min_by_key(|r| r.id)
}

/// How a completed workflow run ended: passed only when it concluded `success` and its
/// artifact has test cases, none failed; `failure` is a failed test (with whatever its
/// artifact says); `cancelled` a cancellation; any other conclusion (`timed_out`, `stale`,
/// `startup_failure`, `skipped`, ...) says nothing about the candidate and counts as lost.
pub fn conclusion_outcome(c: &Concluded) -> (Outcome, String) {
    let word = c.conclusion.as_deref().unwrap_or("none");
    let how = format!("the workflow run concluded `{word}`");
    match word {
        "success" | "failure" => {}
        "cancelled" => return (Outcome::Cancelled, how),
        _ => return (Outcome::Lost, how),
    }
    match &c.result {
        None => (Outcome::Failed, format!("{how}, no conformance artifact")),
        Some(Err(e)) => (Outcome::Failed, format!("{how}, artifact unreadable: {e}")),
        Some(Ok(s)) if word == "success" && s.failed == 0 && s.passed > 0 => (Outcome::Passed, how),
        Some(Ok(_)) => (Outcome::Failed, how),
    }
}

/// The record of the workflow run an attempt started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    pub attempt: u32,
    pub run_id: u64,
    #[serde(default)]
    pub html_url: String,
}

/// How a finished test ended: passed only with a result that has cases, none failed, and an
/// exit code of 0. A signal is a cancellation (an exit code of 128 + n is the shell's way of
/// saying "killed by signal n").
pub fn outcome_of(f: &Finished) -> (Outcome, String) {
    let how = match (f.exit_code, f.signal) {
        (_, Some(s)) => return (Outcome::Cancelled, format!("killed by signal {s}")),
        (Some(c @ 129..=192), _) => {
            return (
                Outcome::Cancelled,
                format!("exited {c} (killed by signal {})", c - 128),
            );
        }
        (Some(c), _) => format!("exited {c}"),
        (None, None) => "ended without an exit code".to_string(),
    };
    match (&f.result, f.exit_code) {
        (None, _) => (Outcome::Failed, format!("{how}, no result file")),
        (Some(Err(e)), _) => (Outcome::Failed, format!("{how}, result unreadable: {e}")),
        (Some(Ok(s)), Some(0)) if s.failed == 0 => (Outcome::Passed, how),
        (Some(Ok(_)), _) => (Outcome::Failed, how),
    }
}

/// The candidate as observed on the forge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Candidate {
    pub tag: String,
    /// Published (a pre-release, not a draft).
    pub published: bool,
    pub html_url: String,
    /// The record its notes carry (`None`: the tag belongs to something else).
    pub record: Option<CandidateRecord>,
    /// The sha256 of each of its release assets (gate records excluded).
    pub assets: BTreeMap<String, String>,
    pub attempts: Vec<Attempt>,
    pub results: Vec<AttemptResult>,
    /// The workflow runs attempts started, where known (GitHub).
    pub runs: Vec<RunRecord>,
    /// The dispatches that were sent without naming their run (GitHub).
    pub dispatches: Vec<DispatchRecord>,
}

impl Candidate {
    /// The newest start of the newest attempt, and the attempt's result, if read.
    pub fn last(&self) -> Option<(&Attempt, Option<&AttemptResult>)> {
        let a = self.attempts.iter().max_by_key(|a| (a.attempt, a.start))?;
        Some((a, self.results.iter().find(|r| r.attempt == a.attempt)))
    }

    /// When attempt `n` was first started: its run is looked for since then, whichever start
    /// sent it.
    pub fn first_started(&self, n: u32) -> Option<DateTime<Utc>> {
        self.attempts
            .iter()
            .filter(|a| a.attempt == n)
            .map(|a| a.started_at)
            .min()
    }

    /// Whether attempt `n`'s dispatch is known to have been sent (a dispatch or run record).
    pub fn dispatched(&self, n: u32) -> bool {
        self.dispatches.iter().any(|d| d.attempt == n) || self.runs.iter().any(|r| r.attempt == n)
    }

    /// When the test of this candidate started first.
    pub fn since(&self) -> Option<DateTime<Utc>> {
        self.attempts.iter().map(|a| a.started_at).min()
    }
}

/// What to do about one gated release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Publish (or finish publishing) the candidate pre-release with these assets.
    Publish,
    /// Start attempt `attempt` of the test (`start`: 1, or more when the earlier starts of
    /// this attempt never began).
    Start { attempt: u32, start: u32 },
    /// The runner of attempt `n` is done (or gone): record this result, then decide again.
    Record(AttemptResult),
    /// The test is running: start nothing, release nothing.
    Wait { since: DateTime<Utc>, attempt: u32 },
    /// It passed: promote it to the stable tag.
    Promote(AttemptResult),
    /// It failed: never promoted; the next change makes a new candidate.
    Rejected(AttemptResult),
    /// Every attempt was cancelled or lost: a person must look at the test.
    GaveUp(Vec<AttemptResult>),
    /// The candidate's tag holds something else than these assets: refuse.
    Conflict(String),
}

/// The candidate in the OCI registry, for a stack that publishes there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InRegistry<'a> {
    /// `publish` does not list `oci`: the forge pre-release alone is the candidate.
    NotATarget,
    /// Nothing is under the candidate's tag (yet).
    Missing,
    /// The sha256 of each layer under the candidate's tag, by file name (its title).
    Layers(&'a BTreeMap<String, String>),
}

/// What the gate knows about one gated release.
pub struct Facts<'a> {
    /// The stable release the candidate is for.
    pub stable: &'a str,
    /// Its assets as planned (byte-reproducible, so the same every run).
    pub assets: &'a FileTree,
    /// The candidate on the forge, if there is one: the gate's records, and with `publish`
    /// listing `forge` the candidate's assets.
    pub candidate: Option<&'a Candidate>,
    /// Whether the forge pre-release holds the candidate's assets (`publish` lists `forge`);
    /// with `publish: [oci]` alone it holds only the gate's records.
    pub on_forge: bool,
    /// The candidate in the OCI registry.
    pub registry: InRegistry<'a>,
    /// The runner's word on the newest attempt without a result (`None`: not asked).
    pub runner: Option<&'a Runner>,
    pub now: DateTime<Utc>,
    /// How long an attempt may run before it counts as lost.
    pub timeout: chrono::Duration,
}

/// The one decision about a gated release, from what is observed.
pub fn decide(f: &Facts<'_>) -> Decision {
    let cand = candidate_name_of(f);
    // A registry tag is never overwritten: whatever it holds now is what CSO pulls under it.
    if let InRegistry::Layers(layers) = f.registry
        && let Some(name) = differing(f.assets, layers)
    {
        return Decision::Conflict(format!(
            "the candidate tag {cand} in the OCI registry does not hold {name} as planned (sha256 \
             differs or it is missing): its test says nothing about these bytes, and a tag is never \
             overwritten; delete the tag in the registry (and the candidate pre-release) to test anew"
        ));
    }
    let Some(c) = f.candidate else {
        return Decision::Publish;
    };
    let digest = content_digest(f.assets);
    match &c.record {
        Some(r) if r.stable == f.stable && r.digest == digest => {}
        Some(r) => {
            return Decision::Conflict(format!(
                "candidate {} records {} with content {}, not {} with {}",
                c.tag,
                r.stable,
                short(&r.digest),
                f.stable,
                short(&digest)
            ));
        }
        None => {
            return Decision::Conflict(format!(
                "{} exists but is not a stackbot candidate (its notes carry no record)",
                c.tag
            ));
        }
    }
    // The pre-release is published last, after the registry holds the candidate: a tag
    // missing from the registry (never pushed, or deleted since) is pushed again, the same
    // bytes (the candidate's name is their digest).
    if !c.published || f.registry == InRegistry::Missing {
        return Decision::Publish;
    }
    // Published is tested (or about to be): its bytes are never "fixed" afterwards.
    if f.on_forge
        && let Some(n) = differing(f.assets, &c.assets)
    {
        return Decision::Conflict(format!(
            "the published candidate {} does not hold {n} as planned (sha256 differs or it is missing): \
             its test says nothing about these bytes; delete the candidate to test anew",
            c.tag
        ));
    }
    decide_attempts(f, c)
}

/// The first planned asset that `held` (name → sha256) lacks or holds other bytes of. The
/// candidate may hold more (the chart's second name, the gate's records); `vN` is made of
/// exactly the planned assets, so these are what must be the tested bytes.
fn differing(planned: &FileTree, held: &BTreeMap<String, String>) -> Option<String> {
    planned
        .iter()
        .find(|(n, b)| held.get(*n) != Some(&hex::encode(Sha256::digest(b))))
        .map(|(n, _)| n.clone())
}

/// The candidate's tag, for messages.
fn candidate_name_of(f: &Facts<'_>) -> String {
    match ReleaseName::parse(f.stable) {
        Ok(stable) => candidate_name(&stable, f.assets).to_string(),
        Err(_) => f.stable.to_string(),
    }
}

fn decide_attempts(f: &Facts<'_>, c: &Candidate) -> Decision {
    let Some((last, result)) = c.last() else {
        return Decision::Start {
            attempt: 1,
            start: 1,
        };
    };
    match result {
        Some(r) if r.outcome == Outcome::Passed => Decision::Promote(r.clone()),
        Some(r) if r.outcome == Outcome::Failed => Decision::Rejected(r.clone()),
        Some(_) if last.attempt < MAX_ATTEMPTS => Decision::Start {
            attempt: last.attempt + 1,
            start: 1,
        },
        Some(_) => Decision::GaveUp(c.results.clone()),
        None => running(f, last),
    }
}

/// The newest attempt has no result yet: what its runner says.
fn running(f: &Facts<'_>, last: &Attempt) -> Decision {
    let result = |outcome, detail: String, summary| {
        Decision::Record(AttemptResult {
            attempt: last.attempt,
            finished_at: f.now,
            outcome,
            summary,
            detail,
            evidence: Vec::new(),
            url: None,
        })
    };
    match f.runner {
        Some(Runner::Finished(fin)) => {
            let (outcome, detail) = outcome_of(fin);
            let summary = fin.result.clone().and_then(Result::ok);
            result(outcome, detail, summary)
        }
        Some(Runner::Concluded(c)) => {
            let (outcome, detail) = conclusion_outcome(c);
            Decision::Record(AttemptResult {
                attempt: last.attempt,
                finished_at: f.now,
                outcome,
                summary: c.result.clone().and_then(Result::ok),
                detail,
                evidence: Vec::new(),
                url: Some(c.url.clone()),
            })
        }
        Some(Runner::NotStarted) => start_again(last, result),
        Some(Runner::Unseen { dispatched: false }) if f.now - last.started_at > DISPATCH_GRACE => {
            start_again(last, result)
        }
        Some(Runner::Unseen { dispatched: true }) if f.now - last.started_at > DISPATCH_GRACE => {
            result(
                Outcome::Lost,
                format!(
                    "no run of the dispatched workflow appeared within {} minutes (is it still \
                 dispatchable on the base branch, and does its `run-name` contain \
                 `${{{{ inputs.gate_id }}}}`?)",
                    DISPATCH_GRACE.num_minutes()
                ),
                None,
            )
        }
        Some(Runner::Gone) => result(
            Outcome::Lost,
            "the test run is gone without a result".into(),
            None,
        ),
        _ if f.now - last.started_at > f.timeout => result(
            Outcome::Lost,
            format!(
                "no result after {} minutes (the gate's timeout)",
                f.timeout.num_minutes()
            ),
            None,
        ),
        _ => Decision::Wait {
            since: last.started_at,
            attempt: last.attempt,
        },
    }
}

/// An attempt whose test never began: started again under the same attempt, or, after
/// [`MAX_STARTS`] starts, lost (which uses up the retry like any lost test).
fn start_again(
    last: &Attempt,
    result: impl Fn(Outcome, String, Option<Summary>) -> Decision,
) -> Decision {
    if last.start < MAX_STARTS {
        return Decision::Start {
            attempt: last.attempt,
            start: last.start + 1,
        };
    }
    result(
        Outcome::Lost,
        format!(
            "its test never began in {MAX_STARTS} starts (each start was recorded, then the \
             release run stopped, or the forge refused to start the test: look at the runs' \
             errors)"
        ),
        None,
    )
}

fn short(s: &str) -> &str {
    &s[..s.len().min(12)]
}

#[cfg(test)]
mod oci_tests;
#[cfg(test)]
mod tests;
