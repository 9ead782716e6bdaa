//! Carry out the conformance gate's decisions: publish the candidate pre-release, start a test
//! attempt, record an attempt's result. Each step first checks whether it is done already, and
//! each writes its record to the candidate on the forge, so the next run (after a crash, or
//! while the test runs) reads where things stand.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::forge::{Forge, ForgeError, ReleaseInfo, RepoRef};
use crate::gate::{self, Attempt, AttemptResult};
use crate::model::{FileTree, ReleaseName};
use crate::oci::{Publisher, PushOutcome};

use super::{ApplyError, Outcome};

/// Make `tag` a published pre-release with exactly `assets` and `notes`: tag the base head
/// when the tag is missing, fill the lowest-id draft (made when there is none), publish it
/// (never as *Latest*). A published candidate is left as it is.
pub fn publish_candidate(
    forge: &dyn Forge,
    repo: &RepoRef,
    base_head: &str,
    tag: &str,
    notes: &str,
    assets: &FileTree,
    out: &mut Outcome,
) -> Result<(), ApplyError> {
    if forge.tag_target(repo, tag)?.is_none() {
        match forge.create_tag(
            repo,
            tag,
            base_head,
            &format!("Conformance candidate {tag}"),
        ) {
            Ok(()) => out.actions.push(format!("tag candidate {tag}")),
            Err(ForgeError::AlreadyExists { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let of_tag = |all: &[ReleaseInfo]| -> Vec<ReleaseInfo> {
        super::of_tag(all, tag).into_iter().cloned().collect()
    };
    let mut rels = of_tag(&forge.list_releases(repo)?);
    if let Some(published) = rels.iter().find(|r| !r.draft) {
        out.index_changes.wrote(published.clone());
        return Ok(());
    }
    for stale in rels.iter().filter(|r| r.body != notes) {
        super::delete_quietly(forge, repo, stale, "candidate draft with other notes", out)?;
    }
    rels.retain(|r| r.body == notes);
    if rels.is_empty() {
        let r = forge.create_draft_prerelease(repo, tag, tag, notes)?;
        out.actions
            .push(format!("create candidate draft {} for {tag}", r.id));
        out.index_changes.wrote(r);
        rels = of_tag(&forge.list_releases(repo)?);
    }
    let Some(canon) = rels.first() else {
        return Err(ApplyError::Inconsistent(format!(
            "the draft of candidate {tag} disappeared; re-run"
        )));
    };
    super::fill_assets(forge, repo, canon, assets, out)?;
    let published = forge.publish_release(repo, canon.id, false)?;
    out.index_changes.wrote(published);
    out.actions.push(format!(
        "publish candidate {tag} (pre-release {})",
        canon.id
    ));
    for dup in rels.iter().skip(1) {
        super::delete_quietly(forge, repo, dup, "duplicate candidate draft", out)?;
    }
    Ok(())
}

/// Push the candidate `tag` of `stable` to the OCI registry (a no-op when the tag holds it
/// already; a tag holding anything else is refused, never overwritten) and verify it as a
/// candidate: `stable`'s assets byte for byte, and the chart under the candidate's version.
pub fn push_candidate(
    oci: &Publisher,
    tag: &str,
    assets: &FileTree,
    stable: &ReleaseName,
    out: &mut Outcome,
) -> Result<(), ApplyError> {
    let published = oci.publish_candidate(tag, assets, stable)?;
    if let PushOutcome::Pushed { digest, .. } = &published.outcome {
        out.actions.push(format!(
            "push candidate {tag} to {} ({digest}), verified",
            published.reference
        ));
    }
    Ok(())
}

/// The candidate in the OCI registry, as its test is told: the reference CSO and `oras pull`
/// use (`<repository>:<tag>`) and the digest of the manifest this run checked against the
/// planned assets, which pins those bytes whatever the tag holds later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InOci {
    pub reference: String,
    pub digest: String,
}

/// One test attempt to start on the local runner.
pub struct Start<'a> {
    pub candidate: &'a ReleaseInfo,
    pub stable: &'a str,
    pub attempt: Attempt,
    /// The attempt's folder ([`crate::observe::gate::attempt_dir`]).
    pub dir: PathBuf,
    /// The configured command and its arguments.
    pub command: &'a [String],
    /// Where it runs (the configuration's folder).
    pub cwd: &'a Path,
    /// The candidate's assets, written to `<dir>/candidate/` for the test to read.
    pub assets: &'a FileTree,
    /// The candidate in the OCI registry, when the stack publishes there:
    /// `STACKBOT_CANDIDATE_OCI` and `STACKBOT_CANDIDATE_OCI_DIGEST`, for a test that pulls
    /// what CSO pulls.
    pub oci: Option<&'a InOci>,
}

/// Start an attempt: its folder and the candidate's files first, then its record on the
/// forge (before the test starts, so that no crash can start a second test unseen), then the
/// launch marker (so that a start without it provably never ran, and is started again
/// rather than counted as lost), then the command, in the background, in its own process
/// group, through a wrapper that writes its pid before it runs the command (so even a crash
/// right after the spawn leaves the running test findable) and its exit code to `<dir>/exit`
/// when it ends.
pub fn start(
    forge: &dyn Forge,
    repo: &RepoRef,
    s: &Start<'_>,
    out: &mut Outcome,
) -> Result<(), ApplyError> {
    let io = |what: &str, e: std::io::Error| {
        ApplyError::Inconsistent(format!("gate: {what} {}: {e}", s.dir.display()))
    };
    let files = s.dir.join("candidate");
    let results = s.dir.join("results");
    std::fs::create_dir_all(&files).map_err(|e| io("cannot create", e))?;
    std::fs::create_dir_all(&results).map_err(|e| io("cannot create", e))?;
    for (name, bytes) in s.assets {
        std::fs::write(files.join(name), bytes).map_err(|e| io("cannot write to", e))?;
    }
    if !claim(forge, repo, s.candidate, &s.attempt, out)? {
        return Ok(());
    }
    std::fs::write(s.dir.join(crate::observe::gate::LAUNCHED), "")
        .map_err(|e| io("cannot write to", e))?;
    let version = crate::model::ReleaseName::parse(&s.candidate.tag)
        .map(|n| n.version.dot())
        .unwrap_or_default();
    let log =
        std::fs::File::create(s.dir.join("log")).map_err(|e| io("cannot create the log in", e))?;
    let err_log = log
        .try_clone()
        .map_err(|e| io("cannot open the log in", e))?;
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(WRAPPER)
        .arg("stackbot-gate")
        .args(s.command)
        .current_dir(s.cwd)
        .env("STACKBOT_CANDIDATE", &s.candidate.tag)
        .env("STACKBOT_CANDIDATE_VERSION", version)
        .env("STACKBOT_CANDIDATE_DIR", &files)
        .env("STACKBOT_CANDIDATE_URL", &s.candidate.html_url)
        .env("STACKBOT_STABLE_TAG", s.stable)
        .env("STACKBOT_GATE_ATTEMPT", s.attempt.attempt.to_string())
        .env("STACKBOT_RESULTS_DIR", &results)
        .env("STACKBOT_GATE_DIR", &s.dir)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err_log);
    if let Some(oci) = s.oci {
        cmd.env("STACKBOT_CANDIDATE_OCI", &oci.reference)
            .env("STACKBOT_CANDIDATE_OCI_DIGEST", &oci.digest);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let child = cmd
        .spawn()
        .map_err(|e| io("cannot start the test command in", e))?;
    // The wrapper writes the same pid first thing; written here too so that this run's next
    // look (right after the spawn, before the shell may have run) finds the test running.
    let tmp = s.dir.join("pid.spawn");
    std::fs::write(&tmp, format!("{}\n", child.id()))
        .and_then(|()| std::fs::rename(&tmp, s.dir.join("pid")))
        .map_err(|e| io("cannot write to", e))?;
    // Not waited for: the next run reads `exit`. The child outlives this process.
    drop(child);
    out.actions.push(format!(
        "start conformance test attempt {} of {}{} ({})",
        s.attempt.attempt,
        s.candidate.tag,
        again(&s.attempt),
        s.command.join(" ")
    ));
    Ok(())
}

/// Claim a start of an attempt: its record on the candidate, written before the test starts.
/// `false` when another run claimed it (it is starting or running that test).
fn claim(
    forge: &dyn Forge,
    repo: &RepoRef,
    candidate: &ReleaseInfo,
    attempt: &Attempt,
    out: &mut Outcome,
) -> Result<bool, ApplyError> {
    let record = serde_json::to_vec_pretty(attempt).expect("attempt serializes");
    let name = gate::attempt_asset(attempt.attempt, attempt.start);
    upload_once(forge, repo, candidate, &name, &record, out)
}

/// Upload the asset `name` to the candidate unless it is there already (a record is written
/// once, whichever run comes first): `true` when this run wrote it.
fn upload_once(
    forge: &dyn Forge,
    repo: &RepoRef,
    candidate: &ReleaseInfo,
    name: &str,
    bytes: &[u8],
    out: &mut Outcome,
) -> Result<bool, ApplyError> {
    match forge.upload_asset(repo, candidate.id, name, bytes) {
        Ok(a) => {
            out.index_changes.uploaded(candidate, a);
            Ok(true)
        }
        Err(ForgeError::AlreadyExists { .. }) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// ` (start 2: the earlier one never began)` for a start again, else nothing.
fn again(a: &Attempt) -> String {
    if a.start > 1 {
        format!(" (start {}: the earlier one never began)", a.start)
    } else {
        String::new()
    }
}

/// Writes its pid, then runs the test command (`"$@"`), then writes its exit code where the
/// next run reads it (each atomically: a half-written `pid` or `exit` is never read). The
/// pid is the shell's, the leader of the test's process group. When the pid cannot be
/// written (a full disk), the test is not run and no `exit` is written: the wrapper exits
/// with [`NO_PID`], and the attempt reads as lost (launched, no process, no exit code), not
/// as a failed test that would reject a good candidate.
const WRAPPER: &str = r#"if printf '%s\n' "$$" > "$STACKBOT_GATE_DIR/pid.tmp" && mv "$STACKBOT_GATE_DIR/pid.tmp" "$STACKBOT_GATE_DIR/pid"; then "$@"; rc=$?; printf '%s\n' "$rc" > "$STACKBOT_GATE_DIR/exit.tmp" && mv "$STACKBOT_GATE_DIR/exit.tmp" "$STACKBOT_GATE_DIR/exit"; else exit 125; fi"#;

/// The wrapper's exit status when it could not write the pid (and so did not run the test).
pub const NO_PID: i32 = 125;

/// Record an attempt's result on the candidate: the evidence files first, the result record
/// last (the record is what the next run decides on, so it comes only once its evidence is
/// there). An evidence file already there is kept.
pub fn record(
    forge: &dyn Forge,
    repo: &RepoRef,
    candidate: &ReleaseInfo,
    result: &AttemptResult,
    evidence: &[(String, Vec<u8>)],
    out: &mut Outcome,
) -> Result<(), ApplyError> {
    let mut result = result.clone();
    for (file, bytes) in evidence {
        let name = gate::evidence_asset(result.attempt, file);
        upload_once(forge, repo, candidate, &name, bytes, out)?;
        result.evidence.push(name);
    }
    let bytes = serde_json::to_vec_pretty(&result).expect("result serializes");
    let name = gate::result_asset(result.attempt);
    upload_once(forge, repo, candidate, &name, &bytes, out)?;
    out.actions.push(format!(
        "record conformance attempt {} of {}: {}",
        result.attempt,
        candidate.tag,
        result.line()
    ));
    Ok(())
}

/// End an attempt that overran the gate's timeout: its process group, by the id it was
/// started with (`pid` in its folder), so a hanging test does not run on beside its retry.
pub fn stop(dir: &Path) {
    let Some(pid) = std::fs::read_to_string(dir.join("pid"))
        .ok()
        .and_then(|p| p.trim().parse::<u32>().ok())
    else {
        return;
    };
    let _ = Command::new("kill")
        .args(["-TERM", "--", &format!("-{pid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// One test attempt to start as a GitHub workflow run.
pub struct Dispatch<'a> {
    pub candidate: &'a ReleaseInfo,
    pub stable: &'a str,
    pub attempt: Attempt,
    /// The workflow (file name or id) and the ref it runs on (the base branch).
    pub workflow: &'a str,
    pub git_ref: &'a str,
    /// The candidate in the OCI registry, when the stack publishes there.
    pub oci: Option<&'a InOci>,
}

impl Dispatch<'_> {
    /// The dispatch's inputs: what the workflow tests, and the attempt's [`gate::gate_id`],
    /// which its `run-name` echoes so the run can be found when GitHub does not return it.
    /// With the registry as a target (`oci`: the candidate's, else none), also where the
    /// candidate is there (`candidate_oci`, `candidate_oci_digest`); sent only then, so a
    /// workflow of a stack that does not publish to OCI need not declare them.
    fn inputs_with(&self, oci: Option<&InOci>) -> std::collections::BTreeMap<String, String> {
        let version = crate::model::ReleaseName::parse(&self.candidate.tag)
            .map(|n| n.version.dot())
            .unwrap_or_default();
        [
            ("candidate", self.candidate.tag.clone()),
            ("candidate_version", version),
            ("stable_tag", self.stable.to_string()),
            ("attempt", self.attempt.attempt.to_string()),
            (
                "gate_id",
                gate::gate_id(&self.candidate.tag, self.attempt.attempt),
            ),
        ]
        .into_iter()
        .chain(oci.into_iter().flat_map(|o| {
            [
                ("candidate_oci", o.reference.clone()),
                ("candidate_oci_digest", o.digest.clone()),
            ]
        }))
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// Start an attempt on GitHub: its record on the candidate first (so that no crash can start
/// a second run unseen), then the `workflow_dispatch`, then its acknowledgement: when GitHub
/// says which run it started, that run's record (`gate-run-<n>.json`, so later runs read it
/// directly), else the dispatch record (`gate-dispatch-<n>.json`). A claimed start without
/// either, and without a run, never dispatched (the run stopped in between) and is started
/// again. A dispatch whose answer was lost (a transient failure after it went out: it may
/// have started a run) is recorded as sent all the same, so it is never sent again; that
/// record is written on a best-effort basis, as GitHub is failing just then. One GitHub
/// definitely did not receive ([`ForgeError::NotSent`]: refused before sending, a rate limit
/// given up) is not recorded: the claim stays unacknowledged and is started again after the
/// grace, without using up the attempt. The dispatch is sent by [`gate::dispatch_deadline`]
/// or not at all, so it never goes out after an overlapping run may have started it again.
///
/// A workflow written before the registry inputs existed does not declare `candidate_oci`
/// and `candidate_oci_digest`, and GitHub refuses a dispatch carrying them (422 `Unexpected
/// inputs provided`): that dispatch is sent once more without them, and the warning returned
/// (for the plan, so the job summary shows it) says to declare them. Any other refusal fails
/// as before.
pub fn dispatch(
    forge: &dyn Forge,
    repo: &RepoRef,
    d: &Dispatch<'_>,
    out: &mut Outcome,
) -> Result<Option<String>, ApplyError> {
    if !claim(forge, repo, d.candidate, &d.attempt, out)? {
        // Another run dispatched this start: its run is found by its gate_id.
        return Ok(None);
    }
    let sent = |unanswered: Option<String>| gate::DispatchRecord {
        attempt: d.attempt.attempt,
        start: d.attempt.start,
        unanswered,
    };
    let send_by = gate::dispatch_deadline(d.attempt.started_at);
    let send = |oci: Option<&InOci>| {
        forge.dispatch_workflow(repo, d.workflow, d.git_ref, &d.inputs_with(oci), send_by)
    };
    let mut warning = None;
    let answer = match send(d.oci) {
        Err(ForgeError::Rejected { reason, .. })
            if d.oci.is_some() && only_registry_inputs_refused(&reason) =>
        {
            // GitHub validates the inputs before it starts anything: a 422 means no run was
            // started (like `NotSent`), so this second dispatch cannot start a second run.
            let w = format!(
                "workflow `{}` of {repo} does not declare the inputs `candidate_oci` and \
                 `candidate_oci_digest`, so the test of {} was dispatched without the \
                 candidate's registry reference; declare them in its `workflow_dispatch` \
                 (optional inputs, see docs/github-setup.md)",
                d.workflow, d.candidate.tag
            );
            warning = Some(w);
            send(None)
        }
        other => other,
    };
    let run = match answer {
        Ok(run) => run,
        Err(e @ ForgeError::Transient { .. }) => {
            let why = "the dispatch's answer was lost (a transient failure): it may have \
                       started a run, so it is not sent again";
            let _ = record_dispatch(forge, repo, d.candidate, &sent(Some(why.into())), out);
            return Err(e.into());
        }
        Err(e) => return Err(e.into()),
    };
    out.actions.push(format!(
        "dispatch workflow {} on {} for conformance test attempt {} of {}{}{}{}",
        d.workflow,
        d.git_ref,
        d.attempt.attempt,
        d.candidate.tag,
        again(&d.attempt),
        run.map(|id| format!(" (run {id})")).unwrap_or_default(),
        if warning.is_some() {
            " without the registry inputs (the workflow does not declare them)"
        } else {
            ""
        }
    ));
    let Some(run_id) = run else {
        return record_dispatch(forge, repo, d.candidate, &sent(None), out).map(|()| warning);
    };
    let run = gate::RunRecord {
        attempt: d.attempt.attempt,
        run_id,
        html_url: String::new(),
    };
    // The run's record failed to upload: the dispatch record still acknowledges the dispatch
    // (best effort), so a run that is not found later is lost rather than started again.
    record_run(forge, repo, d.candidate, &run, out)
        .inspect_err(|_| {
            let _ = record_dispatch(forge, repo, d.candidate, &sent(None), out);
        })
        .map(|()| warning)
}

/// The registry's inputs, which a workflow predating them may not declare.
const REGISTRY_INPUTS: [&str; 2] = ["candidate_oci", "candidate_oci_digest"];

/// Whether a refused dispatch's `reason` is GitHub's 422 `Unexpected inputs provided:
/// ["candidate_oci", ...]` naming only [`REGISTRY_INPUTS`]: then the dispatch without them
/// is what the workflow accepts. Any other input refused is another mistake, not fixed here.
fn only_registry_inputs_refused(reason: &str) -> bool {
    let Some(listed) = reason
        .contains("answered 422")
        .then(|| reason.split_once("Unexpected inputs provided: ["))
        .flatten()
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(listed, _)| listed)
    else {
        return false;
    };
    let names: Vec<&str> = listed
        .split(',')
        .map(|n| n.trim().trim_matches('"'))
        .filter(|n| !n.is_empty())
        .collect();
    !names.is_empty() && names.iter().all(|n| REGISTRY_INPUTS.contains(n))
}

/// Record that an attempt's dispatch was sent (kept when already recorded).
fn record_dispatch(
    forge: &dyn Forge,
    repo: &RepoRef,
    candidate: &ReleaseInfo,
    sent: &gate::DispatchRecord,
    out: &mut Outcome,
) -> Result<(), ApplyError> {
    let bytes = serde_json::to_vec_pretty(sent).expect("dispatch record serializes");
    let name = gate::dispatch_asset(sent.attempt);
    upload_once(forge, repo, candidate, &name, &bytes, out).map(drop)
}

/// Record which workflow run an attempt started (kept when already recorded).
pub fn record_run(
    forge: &dyn Forge,
    repo: &RepoRef,
    candidate: &ReleaseInfo,
    run: &gate::RunRecord,
    out: &mut Outcome,
) -> Result<(), ApplyError> {
    let bytes = serde_json::to_vec_pretty(run).expect("run record serializes");
    if upload_once(
        forge,
        repo,
        candidate,
        &gate::run_asset(run.attempt),
        &bytes,
        out,
    )? {
        out.actions.push(format!(
            "record workflow run {} as conformance test attempt {} of {}",
            run.run_id, run.attempt, candidate.tag
        ));
    }
    Ok(())
}

/// End a workflow run that overran the gate's timeout, so it does not run on beside its retry
/// (one that completed meanwhile is left as it is).
pub fn cancel_run(forge: &dyn Forge, repo: &RepoRef, run_id: u64) -> Result<(), ApplyError> {
    Ok(forge.cancel_workflow_run(repo, run_id)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only GitHub's 422 naming nothing but the registry inputs is retried without them.
    #[test]
    fn only_a_refusal_of_the_registry_inputs_alone_is_sent_again_without_them() {
        let answered = |m: &str| format!("GitHub answered 422 Unprocessable Entity: {m} ");
        for yes in [
            r#"Unexpected inputs provided: ["candidate_oci", "candidate_oci_digest"]"#,
            r#"Unexpected inputs provided: ["candidate_oci_digest"]"#,
        ] {
            assert!(only_registry_inputs_refused(&answered(yes)), "{yes}");
        }
        for no in [
            answered(r#"Unexpected inputs provided: ["candidate_oci", "gate_id"]"#),
            answered(r#"Unexpected inputs provided: []"#),
            answered("Required input 'candidate_oci' not provided"),
            answered("No ref found for: main"),
            r#"GitHub answered 400 Bad Request: Unexpected inputs provided: ["candidate_oci"]"#
                .to_string(),
        ] {
            assert!(!only_registry_inputs_refused(&no), "{no}");
        }
    }

    /// A pid that cannot be written: the test does not run, and the attempt is not read as a
    /// failed test (no `exit`) but as gone, so it counts as lost.
    #[test]
    fn the_wrapper_runs_no_test_when_its_pid_cannot_be_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(crate::observe::gate::LAUNCHED), "").unwrap();
        // `pid.tmp` a folder: the write fails as on a full disk.
        std::fs::create_dir(dir.path().join("pid.tmp")).unwrap();
        let ran = dir.path().join("ran");
        let status = Command::new("sh")
            .arg("-c")
            .arg(WRAPPER)
            .arg("stackbot-gate")
            .args(["touch", ran.to_str().unwrap()])
            .env("STACKBOT_GATE_DIR", dir.path())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(NO_PID));
        assert!(!ran.exists(), "the test did not run");
        assert!(
            !dir.path().join("exit").exists(),
            "no exit code to read as failed"
        );
        assert_eq!(
            crate::observe::gate::runner(dir.path()),
            crate::gate::Runner::Gone
        );
    }
}
