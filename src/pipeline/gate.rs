//! The conformance gate in a release run: for every planned release of a stack with `gate:`,
//! observe its candidate, let [`crate::gate::decide`] say what comes next and (in a release
//! run) carry it out, until the gate waits or has its answer. Only a release whose candidate
//! passed stays in the plan (its notes then link the evidence); the others are held back and
//! said why. Without `gate:` nothing here reads or writes anything.
//!
//! In pull-request mode the release pull request is the proposal, never held back: its
//! candidate (the planned assets, the bytes the merge produces) is published and tested while
//! it is open, and what the gate says goes into its body ([`pull_lines`]). After the merge the
//! release is gated as in direct mode: `vN` only from a passed candidate of the merged bytes.

use chrono::{DateTime, Utc};

use crate::apply::{self, Outcome};
use crate::forge::{Forge, ReleaseInfo};
use crate::gate::{self, Decision, Facts, InRegistry, Runner};
use crate::model::{FileTree, ReleaseName};
use crate::observe;
use crate::oci::Publisher;
use crate::plan::{Plan, PlannedRelease, Skipped};

use super::release::Target;
use super::{Context, Error};

/// The most decide → act rounds for one release in one run (publish, start, record, start
/// again: the longest path to a decision that waits or is final).
const ROUNDS: usize = 6;

/// Where one gated release stands after this run's gate.
#[derive(Debug, Clone)]
pub struct Gated {
    /// The stable tag.
    pub stable: String,
    /// Its series prefix.
    pub series: String,
    pub candidate: String,
    /// The candidate's page, when it exists.
    pub url: Option<String>,
    pub decision: Decision,
    /// The planned release is the release pull request, before the merge (pull-request
    /// mode): tested while it is open, never held back.
    pub proposal: bool,
    /// What this run's gate warns of (a workflow refusing the registry inputs), for the plan.
    pub warnings: Vec<String>,
}

impl Gated {
    /// Whether the release goes on to its stable tag in this run.
    pub fn promoted(&self) -> bool {
        matches!(self.decision, Decision::Promote(_))
    }
}

/// The gate of every planned release of a gated stack. With `act` (a release run) the
/// decisions are carried out, their actions noted in `act`; without (`plan`, `--dry-run`)
/// nothing is written and what would happen is said. What it downloads of the candidates is
/// kept in `records`, the run's (each read once per run).
pub fn evaluate(
    ctx: &Context,
    (forge, index, records): (
        &dyn Forge,
        &crate::index::ReleaseIndex,
        &observe::gate::Records,
    ),
    target: &Target,
    base_head: Option<&str>,
    releases: &[PlannedRelease],
    mut act: Option<&mut Outcome>,
) -> Result<Vec<Gated>, Error> {
    let mut out = Vec::new();
    for r in releases.iter().filter(|r| !r.steps.is_empty()) {
        let Ok(stable) = ReleaseName::parse(&r.tag) else {
            continue;
        };
        let Some(cfg) = ctx
            .loaded
            .stack(&stable.stack)
            .and_then(|s| s.gate.as_ref())
        else {
            continue;
        };
        let proposal = r
            .steps
            .iter()
            .all(|s| matches!(s, crate::plan::Step::ReleasePull { .. }));
        let one = One {
            ctx,
            forge,
            listed: index.listed(),
            records,
            target,
            oci: target.oci.as_deref(),
            on_forge: !target.settings.oci.as_ref().is_some_and(|o| o.only),
            base_head,
            cfg,
            stable: &stable,
            assets: &r.asset_bytes,
        };
        let mut gated = one.run(act.as_deref_mut())?;
        gated.proposal = proposal;
        out.push(gated);
    }
    Ok(out)
}

/// What one round observed of a candidate, for acting on its decision.
struct Round<'r> {
    /// The candidate's pre-release.
    rel: Option<&'r ReleaseInfo>,
    /// The runner of its newest attempt without a result.
    seen: Option<&'r observe::gate::RunnerSeen>,
    /// Where it is in the registry (the manifest this round compared with the planned
    /// assets), when `publish` lists `oci` and the tag is there.
    ///
    /// `None` with the registry as a target (the tag is not there) starts a test without the
    /// registry inputs, which would test nothing pullable. That never happens: [`gate::decide`]
    /// answers [`Decision::Publish`] (push it again) while the registry is
    /// [`InRegistry::Missing`], never [`Decision::Start`]; the start site asserts it.
    oci: Option<apply::gate::InOci>,
    now: DateTime<Utc>,
}

/// One gated release.
struct One<'a> {
    ctx: &'a Context,
    forge: &'a dyn Forge,
    /// The run's release index: the first look at the candidate (after a write, it is listed).
    listed: &'a [ReleaseInfo],
    records: &'a observe::gate::Records,
    target: &'a Target,
    /// The registry, when `publish` lists `oci`: the candidate is pushed there too.
    oci: Option<&'a Publisher>,
    /// Whether the forge pre-release holds the candidate's assets (`publish` lists `forge`).
    on_forge: bool,
    base_head: Option<&'a str>,
    cfg: &'a crate::config::GateConfig,
    stable: &'a ReleaseName,
    assets: &'a FileTree,
}

impl One<'_> {
    fn run(&self, mut act: Option<&mut Outcome>) -> Result<Gated, Error> {
        let cand = gate::candidate_name(self.stable, self.assets).to_string();
        let mut gated = Gated {
            stable: self.stable.to_string(),
            series: self.stable.prefix(),
            candidate: cand.clone(),
            url: None,
            decision: Decision::Publish,
            proposal: false,
            warnings: Vec::new(),
        };
        for round in 0..ROUNDS {
            let repo = &self.target.repo;
            let observed = if round == 0 {
                observe::gate::candidate_in(self.forge, repo, &cand, self.listed, self.records)?
            } else {
                observe::gate::candidate(self.forge, repo, &cand, self.records)?
            };
            let seen = match &observed {
                Some((c, _)) => match c.last() {
                    Some((a, None)) => Some(self.observe_runner(c, a)?),
                    _ => None,
                },
                None => None,
            };
            let runner = seen.as_ref().map(|s| s.runner.clone());
            let held = match self.oci {
                Some(oci) => Some(oci.held(&cand)?),
                None => None,
            };
            let now = self.ctx.clock.now();
            let stable = self.stable.to_string();
            let decision = gate::decide(&Facts {
                stable: &stable,
                assets: self.assets,
                candidate: observed.as_ref().map(|(c, _)| c),
                on_forge: self.on_forge,
                registry: match &held {
                    None => InRegistry::NotATarget,
                    Some(None) => InRegistry::Missing,
                    Some(Some(h)) => InRegistry::Layers(&h.layers),
                },
                runner: runner.as_ref(),
                now,
                timeout: chrono::Duration::minutes(self.cfg.timeout_minutes as i64),
            });
            gated.url = observed.as_ref().map(|(c, _)| c.html_url.clone());
            gated.decision = decision.clone();
            let Some(out) = act.as_deref_mut() else {
                break;
            };
            let rel = observed.as_ref().map(|(_, r)| r);
            if let (Some(rel), Some(found)) = (rel, seen.as_ref().and_then(|s| s.found.as_ref())) {
                apply::gate::record_run(self.forge, &self.target.repo, rel, found, out)?;
            }
            let round = Round {
                rel,
                seen: seen.as_ref(),
                oci: self
                    .oci
                    .zip(held.flatten())
                    .map(|(o, h)| apply::gate::InOci {
                        reference: o.reference_of(&cand),
                        digest: h.digest,
                    }),
                now,
            };
            if !self.act(&cand, &decision, &round, (out, &mut gated.warnings))? {
                break;
            }
        }
        Ok(gated)
    }

    /// Where the test of attempt `a` is: the local runner's folder, or the GitHub workflow run.
    fn observe_runner(
        &self,
        c: &gate::Candidate,
        a: &gate::Attempt,
    ) -> Result<observe::gate::RunnerSeen, Error> {
        match &self.cfg.workflow {
            Some(workflow) => Ok(observe::gate::workflow_runner(
                self.forge,
                &self.target.repo,
                workflow,
                &self.cfg.artifact,
                c,
                a,
            )?),
            None => Ok(observe::gate::RunnerSeen {
                runner: observe::gate::runner(&self.dir(&c.tag, a.attempt)),
                evidence: Vec::new(),
                found: None,
                run_id: None,
            }),
        }
    }

    /// Start attempt `attempt`: dispatch the workflow, or run the command. What the plan
    /// should warn of (a workflow that does not declare the registry inputs).
    fn start(
        &self,
        cand: &str,
        (rel, oci): (&ReleaseInfo, Option<&apply::gate::InOci>),
        attempt: gate::Attempt,
        out: &mut Outcome,
    ) -> Result<Option<String>, Error> {
        let (forge, repo) = (self.forge, &self.target.repo);
        let stable = self.stable.to_string();
        if let Some(workflow) = &self.cfg.workflow {
            let d = apply::gate::Dispatch {
                candidate: rel,
                stable: &stable,
                attempt,
                workflow,
                git_ref: &self.target.base_branch,
                oci,
            };
            return Ok(apply::gate::dispatch(forge, repo, &d, out)?);
        }
        let command = self.cfg.command.as_deref().unwrap_or_default();
        let n = attempt.attempt;
        apply::gate::start(
            forge,
            repo,
            &apply::gate::Start {
                candidate: rel,
                stable: &stable,
                attempt,
                dir: self.dir(cand, n),
                command,
                cwd: &std::path::absolute(&self.ctx.loaded.base_dir)
                    .unwrap_or_else(|_| self.ctx.loaded.base_dir.clone()),
                assets: &gate::candidate_assets(self.stable, self.assets),
                oci,
            },
            out,
        )?;
        Ok(None)
    }

    /// The evidence of an ended attempt; an attempt that overran the timeout is stopped first.
    fn evidence(
        &self,
        cand: &str,
        attempt: u32,
        seen: Option<&observe::gate::RunnerSeen>,
    ) -> Result<observe::gate::Evidence, Error> {
        let runner = seen.map(|s| &s.runner);
        if self.cfg.workflow.is_some() {
            let seen = seen.expect("a workflow attempt is recorded from what was seen");
            if let (Some(Runner::Running), Some(id)) = (runner, seen.run_id) {
                apply::gate::cancel_run(self.forge, &self.target.repo, id)?;
            }
            return Ok(seen.evidence.clone());
        }
        let dir = self.dir(cand, attempt);
        Ok(match runner {
            Some(Runner::Finished(_)) => observe::gate::results(&dir.join("results")).1,
            Some(Runner::Running) => {
                // Overran the timeout: end it before it is retried.
                apply::gate::stop(&dir);
                Vec::new()
            }
            _ => Vec::new(),
        })
    }

    /// Publish the candidate wherever the stack publishes: the registry first (pushed and
    /// verified as a candidate), then the forge pre-release, published last (with its assets,
    /// or with `publish: [oci]` alone as the gate's record), so a published pre-release says
    /// the whole candidate is out.
    fn publish(&self, cand: &str, out: &mut Outcome) -> Result<(), Error> {
        let repo = &self.target.repo;
        let Some(head) = self.base_head else {
            return Err(Error::Apply(apply::ApplyError::Inconsistent(format!(
                "branch `{}` of {repo} does not exist: nothing to tag the candidate {cand} on",
                self.target.base_branch
            ))));
        };
        let assets = gate::candidate_assets(self.stable, self.assets);
        if let Some(oci) = self.oci {
            apply::gate::push_candidate(oci, cand, &assets, self.stable, out)?;
        }
        let record = gate::CandidateRecord {
            stable: self.stable.to_string(),
            digest: gate::content_digest(self.assets),
        };
        let reference = self.oci.map(|o| o.reference_of(cand));
        let on_forge = if self.on_forge {
            assets
        } else {
            FileTree::new()
        };
        apply::gate::publish_candidate(
            self.forge,
            repo,
            head,
            cand,
            &record.notes(cand, reference.as_deref(), self.on_forge),
            &on_forge,
            out,
        )?;
        Ok(())
    }

    /// Carry out `decision`; `false` when there is nothing to do (it waits or is final).
    /// What the plan should warn of is added to `warnings`.
    fn act(
        &self,
        cand: &str,
        decision: &Decision,
        round: &Round<'_>,
        (out, warnings): (&mut Outcome, &mut Vec<String>),
    ) -> Result<bool, Error> {
        let Round { rel, seen, now, .. } = *round;
        let (forge, repo) = (self.forge, &self.target.repo);
        let missing = || {
            Error::Apply(apply::ApplyError::Inconsistent(format!(
                "candidate {cand} disappeared during the run; re-run"
            )))
        };
        match decision {
            Decision::Publish => self.publish(cand, out)?,
            Decision::Start { attempt, start } => {
                // `decide` never starts a test while the registry lacks the candidate (see
                // `Round::oci`), so a target registry always gives the test its inputs.
                debug_assert!(
                    self.oci.is_none() || round.oci.is_some(),
                    "a test of {cand} starts while the registry does not hold it"
                );
                let rel = rel.ok_or_else(missing)?;
                let attempt = gate::Attempt {
                    attempt: *attempt,
                    started_at: now,
                    start: *start,
                };
                warnings.extend(self.start(cand, (rel, round.oci.as_ref()), attempt, out)?);
            }
            Decision::Record(result) => {
                let rel = rel.ok_or_else(missing)?;
                let evidence = self.evidence(cand, result.attempt, seen)?;
                apply::gate::record(forge, repo, rel, result, &evidence, out)?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn dir(&self, cand: &str, attempt: u32) -> std::path::PathBuf {
        let loaded = &self.ctx.loaded;
        let root = loaded.resolve(&loaded.config.forge.local.path);
        // Absolute: the test runs in the configuration's folder, not in this process's.
        let root = std::path::absolute(&root).unwrap_or(root);
        observe::gate::attempt_dir(&root, &self.target.repo, cand, attempt)
    }
}

/// The series the gate holds back in this run (never a release pull request: it is how the
/// release is proposed, and tested).
pub fn held(gated: &[Gated]) -> std::collections::BTreeSet<String> {
    gated
        .iter()
        .filter(|g| !g.promoted() && !g.proposal)
        .map(|g| g.series.clone())
        .collect()
}

/// What the gate says of each release pull request (stable tag → its line), for its body.
pub fn pull_lines(gated: &[Gated]) -> std::collections::BTreeMap<String, String> {
    gated
        .iter()
        .filter(|g| g.proposal)
        .map(|g| (g.stable.clone(), pull_line(g)))
        .collect()
}

/// `passed (…) as candidate `…` (<url>)`, `in test since …`, `failed (…); failed tests: …`.
fn pull_line(g: &Gated) -> String {
    let url = g.url.as_deref().unwrap_or("");
    let cand = &g.candidate;
    match &g.decision {
        Decision::Promote(r) => format!(
            "{} as candidate `{cand}` ({url}){}",
            r.line(),
            r.url
                .as_deref()
                .map(|u| format!("; test run: {u}"))
                .unwrap_or_default()
        ),
        Decision::Rejected(r) => format!(
            "candidate `{cand}` {}{} ({url}): merging this does not publish it; the next \
             change makes a new candidate",
            r.line(),
            r.failed_names()
        ),
        Decision::Wait { since, attempt } => format!(
            "in test since {} (candidate `{cand}`, attempt {attempt}; {url})",
            since.format("%Y-%m-%d %H:%M UTC")
        ),
        Decision::Publish | Decision::Start { .. } | Decision::Record(_) => {
            format!("candidate `{cand}` is published and tested by the release run")
        }
        Decision::GaveUp(results) => format!(
            "the test of candidate `{cand}` did not finish {} times: a person must look \
             ({url})",
            results.len()
        ),
        Decision::Conflict(why) => format!("refused: {why}"),
    }
}

/// Say in the plan where each gated release stands, and link the evidence in the notes of
/// those that go on to their stable tag. A release pull request says it in its body
/// ([`pull_lines`]); the plan names only what needs a person.
pub fn annotate(plan: &mut Plan, gated: &[Gated]) {
    for g in gated {
        plan.warnings
            .extend(g.warnings.iter().map(|w| format!("{}: {w}", g.stable)));
        if g.proposal
            && !matches!(
                g.decision,
                Decision::Rejected(_) | Decision::GaveUp(_) | Decision::Conflict(_)
            )
        {
            continue;
        }
        let url = g.url.as_deref().unwrap_or("");
        let skip = |reason: String| Skipped {
            what: crate::plan::Subject::tag(&g.stable),
            reason: crate::plan::SkipReason::InGate(reason),
        };
        match &g.decision {
            Decision::Promote(result) => {
                if let Some(r) = plan.releases.iter_mut().find(|r| r.tag == g.stable) {
                    let evidence = evidence_notes(g, result);
                    r.notes.push_str(&evidence);
                    // With `publish: [oci]` alone `vN` has no release notes: its tag says it.
                    for step in &mut r.steps {
                        if let crate::plan::Step::Tag { message, .. } = step {
                            message.push_str(&evidence);
                        }
                    }
                }
            }
            Decision::Publish => plan.skipped.push(skip(format!(
                "in the conformance gate: published first as the candidate {}, then tested",
                g.candidate
            ))),
            Decision::Start { attempt, start } => plan.skipped.push(skip(format!(
                "in the conformance gate: the test of candidate {} starts (attempt {attempt}{})",
                g.candidate,
                if *start > 1 {
                    format!(", start {start}: the earlier one never began")
                } else {
                    String::new()
                }
            ))),
            Decision::Record(r) => plan.skipped.push(skip(format!(
                "in the conformance gate: the test of candidate {} ended, {} (recorded by the release run)",
                g.candidate,
                r.line()
            ))),
            Decision::Wait { since, attempt } => plan.skipped.push(skip(format!(
                "in test since {} (candidate {}, attempt {attempt}; {url})",
                since.format("%Y-%m-%d %H:%M UTC"),
                g.candidate
            ))),
            Decision::Rejected(r) => {
                let reason = format!(
                    "candidate {} failed conformance, never promoted: {}{} ({url}); the next change makes a new candidate",
                    g.candidate,
                    r.line(),
                    r.failed_names()
                );
                plan.warnings.push(format!("{}: {reason}", g.stable));
                plan.skipped.push(skip(reason));
            }
            Decision::GaveUp(results) => plan.failed.push(skip(format!(
                "the conformance test of candidate {} did not finish {} times ({}): look at the test, then delete the candidate pre-release to test anew ({url})",
                g.candidate,
                results.len(),
                results.iter().map(|r| r.line()).collect::<Vec<_>>().join("; ")
            ))),
            Decision::Conflict(why) => plan.failed.push(skip(format!(
                "conformance gate: {why}"
            ))),
        }
    }
}

/// The notes' paragraph on the evidence of a promoted release.
fn evidence_notes(g: &Gated, r: &gate::AttemptResult) -> String {
    let url = g.url.as_deref().unwrap_or("");
    let files = if r.evidence.is_empty() {
        String::new()
    } else {
        format!(
            "; evidence: {}",
            r.evidence
                .iter()
                .map(|e| format!("`{e}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let run = r
        .url
        .as_deref()
        .map(|u| format!("; test run: {u}"))
        .unwrap_or_default();
    format!(
        "\n\n**Conformance:** {} as candidate `{}` ({url}){run}{files}. These assets are the candidate's, byte for byte.\n",
        r.line(),
        g.candidate
    )
}
