//! What the conformance gate needs to know: the candidate pre-release on the forge (its
//! record, the sha256 of its assets, the attempts started and the results read), and where the
//! local test runner of an attempt is. Facts only; [`crate::gate::decide`] decides.
//!
//! The local runner keeps one directory per attempt under the local forge's folder,
//! `<forge>/gate/<owner>/<name>/<candidate>/<attempt>/`: `candidate/` (the assets the test
//! reads), `results/` (what it writes), `launched` (written just before the command is
//! spawned), `pid` (written by the wrapper before it runs the command), `exit` (written by
//! the wrapper when the command ends) and `log`. It is the runner's working state; what the next run decides on is
//! copied to the candidate on the forge when the attempt ends.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::forge::{AssetInfo, Forge, ForgeError, ReleaseInfo, RepoRef};
use crate::gate::{
    self, Attempt, Candidate, CandidateRecord, Concluded, Finished, RunRecord, Runner, Summary,
    junit,
};

/// The most result files of one attempt that are read.
pub const MAX_RESULT_FILES: usize = 50;

/// What one run downloaded of candidate pre-releases, by asset id: the gate's records (their
/// bytes) and the sha256 of the candidate's other assets. Why: the gate looks at a candidate
/// again after each of its writes, and the status at the end of a release run reads the
/// records the gate read; each downloaded them anew. An asset's bytes never change (a record
/// is added as a new asset, a replaced one gets a new id), so one run reads each once.
#[derive(Debug, Default)]
pub struct Records {
    bytes: super::Memo<u64, Vec<u8>>,
    digests: super::Memo<u64, String>,
}

impl Records {
    /// The bytes of asset `a` of release `r`, downloaded the first time only.
    fn bytes(
        &self,
        forge: &dyn Forge,
        repo: &RepoRef,
        r: &ReleaseInfo,
        a: &AssetInfo,
    ) -> Result<Vec<u8>, ForgeError> {
        self.bytes
            .get_or(a.id, || forge.download_asset(repo, r.id, a))
    }

    /// The sha256 (hex) of asset `a` of release `r`: the forge's when it says (GitHub's
    /// `digest`), else of its bytes, downloaded the first time only (and not kept).
    fn digest(
        &self,
        forge: &dyn Forge,
        repo: &RepoRef,
        r: &ReleaseInfo,
        a: &AssetInfo,
    ) -> Result<String, ForgeError> {
        if let Some(sha) = &a.sha256 {
            return Ok(sha.clone());
        }
        self.digests.get_or(a.id, || {
            Ok(hex::encode(Sha256::digest(
                forge.download_asset(repo, r.id, a)?,
            )))
        })
    }
}

/// The candidate release of `tag`: the published one, else the lowest-id draft; `None` when
/// there is neither. Lists the releases (after the gate wrote to the candidate); the first look
/// of a run is [`candidate_in`] its release index.
pub fn candidate(
    forge: &dyn Forge,
    repo: &RepoRef,
    tag: &str,
    records: &Records,
) -> Result<Option<(Candidate, ReleaseInfo)>, ForgeError> {
    candidate_in(forge, repo, tag, &forge.list_releases(repo)?, records)
}

/// [`candidate`] among releases listed already (`all`, the run's index): only the candidate's
/// records are downloaded, each once per run (`records`).
pub fn candidate_in(
    forge: &dyn Forge,
    repo: &RepoRef,
    tag: &str,
    all: &[ReleaseInfo],
    records: &Records,
) -> Result<Option<(Candidate, ReleaseInfo)>, ForgeError> {
    let of_tag = || all.iter().filter(|r| r.tag == tag);
    let chosen = of_tag()
        .find(|r| !r.draft)
        .or_else(|| of_tag().min_by_key(|r| r.id));
    let Some(r) = chosen else {
        return Ok(None);
    };
    let mut c = Candidate {
        tag: tag.to_string(),
        published: !r.draft,
        html_url: r.html_url.clone(),
        record: CandidateRecord::parse(&r.body),
        ..Candidate::default()
    };
    for a in &r.assets {
        if a.name.starts_with("conformance-") {
            // Evidence: kept for people, never read back (it can be large).
            continue;
        }
        if !gate::is_gate_asset(&a.name) {
            c.assets
                .insert(a.name.clone(), records.digest(forge, repo, r, a)?);
            continue;
        }
        note_record(&mut c, &a.name, &records.bytes(forge, repo, r, a)?);
    }
    Ok(Some((c, r.clone())))
}

/// Keep the gate record `name` (an attempt, a result, a run, a dispatch) in `c`; one that does
/// not parse is left out.
fn note_record(c: &mut Candidate, name: &str, bytes: &[u8]) {
    if name.starts_with("gate-attempt-") {
        c.attempts.extend(serde_json::from_slice(bytes).ok());
    } else if name.starts_with("gate-result-") {
        c.results.extend(serde_json::from_slice(bytes).ok());
    } else if name.starts_with("gate-run-") {
        c.runs.extend(serde_json::from_slice(bytes).ok());
    } else if name.starts_with("gate-dispatch-") {
        c.dispatches.extend(serde_json::from_slice(bytes).ok());
    }
}

/// The folder of attempt `attempt` of `candidate` under the local forge's folder.
pub fn attempt_dir(forge_root: &Path, repo: &RepoRef, candidate: &str, attempt: u32) -> PathBuf {
    forge_root
        .join("gate")
        .join(&repo.owner)
        .join(&repo.name)
        .join(candidate)
        .join(attempt.to_string())
}

/// The marker the local runner writes just before it spawns the test command: without it
/// (and without `pid` or `exit`), the command provably never started.
pub const LAUNCHED: &str = "launched";

/// Where the local runner of an attempt is: ended (its exit code and result), running, gone
/// (no process and no exit code: the machine restarted, or someone removed its folder), or
/// never started (the folder the start prepared, without the launch marker: the run that
/// claimed the attempt stopped before spawning the command). A launch marker without a
/// `pid` is gone, not never started: the command may have been spawned.
pub fn runner(dir: &Path) -> Runner {
    if let Some(done) = finished(dir) {
        return done;
    }
    let pid = std::fs::read_to_string(dir.join("pid"))
        .ok()
        .and_then(|p| p.trim().parse::<u32>().ok());
    match pid {
        Some(pid) if alive(pid) => Runner::Running,
        // It may have ended between the two looks: the wrapper writes `exit` before it ends,
        // so a test that is gone without one now is gone without an exit code.
        Some(_) => finished(dir).unwrap_or(Runner::Gone),
        None if dir.join(LAUNCHED).exists() || !dir.is_dir() => Runner::Gone,
        None => Runner::NotStarted,
    }
}

/// The attempt's end as its `exit` file says, if it is there.
fn finished(dir: &Path) -> Option<Runner> {
    let text = std::fs::read_to_string(dir.join("exit")).ok()?;
    Some(Runner::Finished(Finished {
        exit_code: text.trim().parse::<i32>().ok(),
        signal: None,
        result: results(&dir.join("results")).0,
    }))
}

/// Whether process `pid` runs (a zombie does not). Without `/proc` it cannot be told, and
/// counts as running: the gate's timeout ends the wait.
fn alive(pid: u32) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // `pid (comm) S ...`: the state is the first field after the last `)`.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Result files as the test wrote them: (file name, bytes).
pub type Evidence = Vec<(String, Vec<u8>)>;

/// The results an attempt wrote: the summary of every JUnit XML file in `dir` (and in every
/// sonobuoy results tarball there), and the files themselves as evidence, by name. `None`
/// when there is no result file at all; an unreadable one makes the result an error.
pub fn results(dir: &Path) -> (Option<Result<Summary, String>>, Evidence) {
    let mut names: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file() && is_result_file(p))
            .collect(),
        Err(_) => return (None, Vec::new()),
    };
    names.sort();
    names.truncate(MAX_RESULT_FILES);
    let mut files = Vec::new();
    for p in &names {
        let file = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        match read_bounded(p) {
            Ok(b) => files.push((file, b)),
            Err(e) => return (Some(Err(format!("{file}: {e}"))), Vec::new()),
        }
    }
    summed(files)
}

/// The summary of result files (JUnit XML, sonobuoy tarballs), and the files as evidence.
fn summed(files: Evidence) -> (Option<Result<Summary, String>>, Evidence) {
    if files.is_empty() {
        return (None, Vec::new());
    }
    let mut sum = Summary::default();
    let mut evidence = Vec::new();
    for (file, bytes) in files {
        let parsed = if file.ends_with(".xml") {
            junit::parse(&bytes).map_err(|e| e.to_string())
        } else {
            sonobuoy(&bytes)
        };
        match parsed {
            Ok(s) => sum.merge(s),
            Err(e) => return (Some(Err(format!("{file}: {e}"))), evidence),
        }
        evidence.push((file, bytes));
    }
    (Some(Ok(sum)), evidence)
}

fn is_result_file(p: &Path) -> bool {
    is_result_name(&p.file_name().unwrap_or_default().to_string_lossy())
}

fn is_result_name(name: &str) -> bool {
    name.ends_with(".xml") || name.ends_with(".tar.gz") || name.ends_with(".tgz")
}

/// The most bytes of a workflow run's artifact (the zip) that are downloaded.
pub const MAX_ARTIFACT_BYTES: u64 = junit::MAX_BYTES;

/// The result files in an artifact's zip (`*.xml`, `*.tar.gz`, `*.tgz` at any depth), by
/// their path in it (`/` written `_`, as asset names cannot hold it), bounded like the
/// local runner's.
pub fn artifact_results(zip: &[u8]) -> (Option<Result<Summary, String>>, Evidence) {
    let wanted = |path: &str| is_result_name(path.rsplit('/').next().unwrap_or(path));
    match super::zip::entries(zip, wanted, MAX_RESULT_FILES, junit::MAX_BYTES) {
        Ok(files) => {
            let files = files
                .into_iter()
                .map(|(path, b)| (path.trim_start_matches("./").replace('/', "_"), b))
                .collect();
            summed(files)
        }
        Err(e) => (Some(Err(e)), Vec::new()),
    }
}

/// What the runner of one attempt shows: the local runner's folder or the GitHub workflow run.
pub struct RunnerSeen {
    pub runner: Runner,
    /// The result files of its artifact, once the run completed.
    pub evidence: Evidence,
    /// The run, when it was found among the workflow's runs rather than by a recorded id
    /// (the release run records it, so later runs read it directly).
    pub found: Option<RunRecord>,
    /// The run's id, when known.
    pub run_id: Option<u64>,
}

/// Where the workflow run of attempt `attempt` of `candidate` is: by the run id recorded on
/// the candidate (one request), else found among the workflow's `workflow_dispatch` runs by
/// [`gate::correlate`] (one request). A completed run's artifact named `artifact` is read
/// (two more requests and the download).
pub fn workflow_runner(
    forge: &dyn Forge,
    repo: &RepoRef,
    workflow: &str,
    artifact: &str,
    candidate: &Candidate,
    attempt: &Attempt,
) -> Result<RunnerSeen, ForgeError> {
    let mut seen = RunnerSeen {
        runner: Runner::Unseen {
            dispatched: candidate.dispatched(attempt.attempt),
        },
        evidence: Vec::new(),
        found: None,
        run_id: None,
    };
    let recorded = candidate.runs.iter().find(|r| r.attempt == attempt.attempt);
    let run = match recorded {
        Some(r) => match forge.workflow_run(repo, r.run_id)? {
            Some(run) => run,
            None => {
                seen.runner = Runner::Gone;
                return Ok(seen);
            }
        },
        None => {
            let runs = forge.workflow_runs(repo, workflow)?;
            let id = gate::gate_id(&candidate.tag, attempt.attempt);
            let since = candidate
                .first_started(attempt.attempt)
                .unwrap_or(attempt.started_at);
            let Some(run) = gate::correlate(&runs, &id, since) else {
                return Ok(seen);
            };
            seen.found = Some(RunRecord {
                attempt: attempt.attempt,
                run_id: run.id,
                html_url: run.html_url.clone(),
            });
            run.clone()
        }
    };
    seen.run_id = Some(run.id);
    if run.status != "completed" {
        seen.runner = Runner::Running;
        return Ok(seen);
    }
    let arts = forge.run_artifacts(repo, run.id)?;
    let result = match arts.iter().find(|a| a.name == artifact) {
        None => None,
        Some(a) if a.expired => Some(Err(format!("the artifact `{artifact}` has expired"))),
        Some(a) => match forge.download_artifact(repo, a, MAX_ARTIFACT_BYTES) {
            Ok(zip) => {
                let (result, evidence) = artifact_results(&zip);
                seen.evidence = evidence;
                Some(result.unwrap_or_else(|| {
                    Err(format!(
                        "the artifact `{artifact}` holds no *.xml or sonobuoy tarball"
                    ))
                }))
            }
            Err(ForgeError::Rejected { reason, .. }) => {
                Some(Err(format!("the artifact `{artifact}`: {reason}")))
            }
            Err(e) => return Err(e),
        },
    };
    seen.runner = Runner::Concluded(Concluded {
        conclusion: run.conclusion.clone(),
        url: run.html_url.clone(),
        result,
    });
    Ok(seen)
}

/// At most [`junit::MAX_BYTES`] of a file; a longer one is refused rather than cut.
fn read_bounded(p: &Path) -> Result<Vec<u8>, String> {
    let f = std::fs::File::open(p).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    f.take(junit::MAX_BYTES + 1)
        .read_to_end(&mut out)
        .map_err(|e| e.to_string())?;
    if out.len() as u64 > junit::MAX_BYTES {
        return Err(format!("larger than {} bytes", junit::MAX_BYTES));
    }
    Ok(out)
}

/// The JUnit XML files of a sonobuoy results tarball (`sonobuoy retrieve`):
/// `plugins/<plugin>/results/<node>/*.xml`, each bounded, summed.
fn sonobuoy(tgz: &[u8]) -> Result<Summary, String> {
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(tgz));
    let mut sum = Summary::default();
    let mut seen = 0usize;
    for entry in ar.entries().map_err(|e| format!("not a tarball: {e}"))? {
        let mut entry = entry.map_err(|e| format!("tarball: {e}"))?;
        let path = entry
            .path()
            .map_err(|e| format!("tarball: {e}"))?
            .to_string_lossy()
            .to_string();
        let is_junit = path.trim_start_matches("./").starts_with("plugins/")
            && path.contains("/results/")
            && path.ends_with(".xml");
        if !is_junit || entry.size() > junit::MAX_BYTES {
            continue;
        }
        let mut bytes = Vec::new();
        (&mut entry)
            .take(junit::MAX_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{path}: {e}"))?;
        sum.merge(junit::parse(&bytes).map_err(|e| format!("{path}: {e}"))?);
        seen += 1;
        if seen >= MAX_RESULT_FILES {
            break;
        }
    }
    if seen == 0 {
        return Err("no plugins/*/results/**/*.xml in it: not a sonobuoy results tarball".into());
    }
    Ok(sum)
}

/// For the status report: the newest published candidate of each series whose stable tag is
/// not published (yet), with where its test stands. Only the gate's own records are read, and
/// not those this run's gate read already (`records`).
pub fn status_facts(
    forge: &dyn Forge,
    repo: &RepoRef,
    index: &crate::index::ReleaseIndex,
    records: &Records,
) -> Result<Vec<crate::status::GateFact>, ForgeError> {
    use std::collections::BTreeSet;
    let listed = index.listed();
    // A stable release is out when the forge published it or the registry holds its tag
    // (with `publish: [oci]` alone, only the registry does).
    let published: BTreeSet<&str> = listed
        .iter()
        .filter(|r| !r.draft && !r.prerelease)
        .map(|r| r.tag.as_str())
        .chain(index.oci_tags().into_iter().flatten().map(String::as_str))
        .collect();
    let mut newest: BTreeMap<String, (&ReleaseInfo, CandidateRecord, crate::model::ReleaseName)> =
        BTreeMap::new();
    for r in listed.iter().filter(|r| !r.draft && r.prerelease) {
        let Some(rec) = CandidateRecord::parse(&r.body) else {
            continue;
        };
        let Ok(name) = crate::model::ReleaseName::parse(&rec.stable) else {
            continue;
        };
        if published.contains(rec.stable.as_str()) {
            continue;
        }
        let series = name.prefix();
        if newest.get(&series).is_none_or(|(o, _, _)| o.id < r.id) {
            newest.insert(series, (r, rec, name));
        }
    }
    let mut out = Vec::new();
    for (r, rec, name) in newest.into_values() {
        let mut c = Candidate::default();
        let read = |n: &str| n.starts_with("gate-attempt-") || n.starts_with("gate-result-");
        for a in r.assets.iter().filter(|a| read(&a.name)) {
            note_record(&mut c, &a.name, &records.bytes(forge, repo, r, a)?);
        }
        let (attempts, results) = (c.attempts, c.results);
        let last = attempts.iter().map(|a| a.attempt).max();
        out.push(crate::status::GateFact {
            stack: name.stack,
            minor: name.minor,
            stable: rec.stable,
            candidate: r.tag.clone(),
            url: r.html_url.clone(),
            since: attempts.iter().map(|a| a.started_at).min(),
            attempt: last,
            result: results.into_iter().find(|x| Some(x.attempt) == last),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSING: &str = r#"<testsuites><testsuite><testcase name="a"/><testcase name="b"><skipped/></testcase></testsuite></testsuites>"#;
    const FAILING: &str =
        r#"<testsuite><testcase name="c" classname="e2e"><failure/></testcase></testsuite>"#;

    fn tarball(files: &[(&str, &str)]) -> Vec<u8> {
        let mut b = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        for (path, text) in files {
            let mut h = tar::Header::new_gnu();
            h.set_size(text.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            b.append_data(&mut h, path, text.as_bytes()).unwrap();
        }
        b.into_inner().unwrap().finish().unwrap()
    }

    #[test]
    fn junit_files_and_sonobuoy_tarballs_are_summed_and_kept_as_evidence() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("junit_01.xml"), PASSING).unwrap();
        let tgz = tarball(&[
            ("plugins/e2e/results/global/junit_01.xml", FAILING),
            ("plugins/e2e/sonobuoy_results.yaml", "not junit"),
            ("meta/config.json", "{}"),
        ]);
        std::fs::write(dir.path().join("202612020400_sonobuoy_x.tar.gz"), &tgz).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
        let (sum, evidence) = results(dir.path());
        let sum = sum.unwrap().unwrap();
        assert_eq!((sum.passed, sum.failed, sum.skipped), (1, 1, 1));
        assert_eq!(sum.failed_tests, ["e2e c"]);
        let names: Vec<&str> = evidence.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["202612020400_sonobuoy_x.tar.gz", "junit_01.xml"]);
    }

    #[test]
    fn no_result_file_is_none_and_a_broken_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(results(dir.path()).0, None);
        assert_eq!(results(&dir.path().join("missing")).0, None);
        std::fs::write(dir.path().join("r.tar.gz"), tarball(&[("x.txt", "x")])).unwrap();
        let e = results(dir.path()).0.unwrap().unwrap_err();
        assert!(e.contains("not a sonobuoy results tarball"), "{e}");
    }

    #[test]
    fn a_runner_is_finished_by_its_exit_file_running_by_its_process_and_else_gone() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            runner(&dir.path().join("removed")),
            Runner::Gone,
            "a claimed attempt's folder exists: without it, someone removed it"
        );
        assert_eq!(
            runner(dir.path()),
            Runner::NotStarted,
            "prepared, never launched"
        );
        std::fs::write(dir.path().join(LAUNCHED), "").unwrap();
        assert_eq!(
            runner(dir.path()),
            Runner::Gone,
            "launched without a pid may have run"
        );
        std::fs::write(dir.path().join("pid"), "999999999").unwrap();
        assert_eq!(runner(dir.path()), Runner::Gone, "no such process");
        std::fs::write(dir.path().join("pid"), std::process::id().to_string()).unwrap();
        assert_eq!(runner(dir.path()), Runner::Running, "this process runs");
        std::fs::write(dir.path().join("exit"), "3\n").unwrap();
        assert_eq!(
            runner(dir.path()),
            Runner::Finished(Finished {
                exit_code: Some(3),
                signal: None,
                result: None
            })
        );
    }
}
