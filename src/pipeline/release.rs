//! desired → observe → plan → apply → tenants: `stackbot plan`, `release --dry-run` and
//! `release` are this file's three entry points, so what is previewed is what is executed.

use std::sync::Arc;

use crate::apply::{self, Outcome};
use crate::config::ReleaseMode;
use crate::error::InvalidInput;
use crate::forge::{Forge, RepoRef};
use crate::model::FileTree;
use crate::observe::{self, Scope};
use crate::oci::Publisher;
use crate::plan::{self, Desired, Mode, Observed, Overrides, Plan, Settings, Skipped};
use crate::tenants::TenantReport;

use super::run::Run;
use super::{Context, Error, Selection};

/// Where and how to release: the cluster-stacks repository on the forge, and the OCI
/// repository when `publish` lists `oci`.
#[derive(Debug, Clone)]
pub struct Target {
    pub repo: RepoRef,
    pub base_branch: String,
    pub settings: Settings,
    /// The OCI repository, when `publish` lists `oci` (see [`crate::oci::Publisher`]).
    pub oci: Option<Arc<Publisher>>,
}

impl Target {
    pub(crate) fn scope(&self) -> Scope<'_> {
        Scope {
            repo: &self.repo,
            base_branch: &self.base_branch,
            mode: self.settings.mode,
            lock_path: &self.settings.lock_path,
            bot_email: &self.settings.bot_email,
            oci_only: self.settings.oci.as_ref().is_some_and(|o| o.only),
        }
    }
}

/// The target the configuration names. OCI credentials come from the context's environment.
pub fn target(ctx: &Context) -> Result<Target, Error> {
    let loaded = &ctx.loaded;
    let fc = &loaded.config.forge;
    let repo = RepoRef::parse(&fc.repository).ok_or_else(|| {
        InvalidInput(format!(
            "{}: forge.repository `{}` is not `owner/name`",
            loaded.path.display(),
            fc.repository
        ))
    })?;
    let (oci_settings, oci) =
        crate::oci::publish::for_run(&loaded.config, ctx.today, ctx.clock.clone(), |k| {
            ctx.env.get(k).map(str::to_string)
        })
        .map_err(|e| Error::InConfig {
            path: loaded.path.display().to_string(),
            inner: Box::new(Error::Oci(e)),
        })?;
    Ok(Target {
        repo,
        base_branch: fc.base_branch.clone(),
        settings: Settings {
            mode: match fc.mode {
                ReleaseMode::Direct => Mode::Direct,
                ReleaseMode::PullRequest => Mode::PullRequest,
            },
            lock_path: crate::lock::LOCK_FILE.to_string(),
            now: ctx.today,
            oci: oci_settings,
            bot_email: fc.committer.email.clone(),
            compliance: Default::default(),
            gate: Default::default(),
        },
        oci,
    })
}

/// The real packager: csctl-compatible, byte-reproducible assets for chosen versions.
pub fn packager(tree: &FileTree, v: &crate::package::Versions) -> Result<FileTree, String> {
    crate::package::package(tree, &crate::package::VersionSelection::Explicit(v.clone()))
        .map(|r| r.files)
        .map_err(|e| e.to_string())
}

/// observe → plan for rendered trees: what a run would do right now. Read-only.
pub fn plan_desired(
    forge: &dyn Forge,
    target: &Target,
    desired: &[Desired],
    package: &plan::Packager<'_>,
) -> Result<(Plan, Observed), Error> {
    plan_desired_with(forge, target, desired, &Overrides::default(), package)
}

/// [`plan_desired`] with a human's explicit overrides (`--allow-downgrade`, `--republish`).
pub fn plan_desired_with(
    forge: &dyn Forge,
    target: &Target,
    desired: &[Desired],
    overrides: &Overrides,
    package: &plan::Packager<'_>,
) -> Result<(Plan, Observed), Error> {
    let observed = observe::observe(forge, target.oci.as_deref(), target.scope(), desired)?;
    let p = plan::plan_with(desired, &observed, &target.settings, overrides, package)?;
    Ok((p, observed))
}

/// observe → plan → apply for rendered trees (the caller holds any run lock).
pub fn release_desired(
    forge: &dyn Forge,
    target: &Target,
    desired: &[Desired],
    package: &plan::Packager<'_>,
) -> Result<(Plan, Outcome), Error> {
    let (p, observed) = plan_desired(forge, target, desired, package)?;
    let outcome = apply::apply_with_oci(&p, forge, &target.repo, &observed, target.oci.as_deref())?;
    Ok((p, outcome))
}

/// Everything `plan` computes: the plan (with the skips and warnings of detection), where it
/// goes and what it was planned against.
pub struct Planned {
    pub plan: Plan,
    pub target: Target,
    pub observed: Observed,
    /// The detection behind the plan (`None` with `--release-set`), for the status report.
    pub detected: Option<super::detect::Detected>,
}

/// detect → render → observe → plan. Read-only; needs no token on the local forge.
pub fn plan(ctx: &Context, forge: &dyn Forge, sel: &Selection) -> Result<Planned, Error> {
    plan_gated(&Run::new(ctx, forge)?, sel, None)
}

/// observe → plan for `desired` against the run's release index (listed once per run), reading
/// only what `reads` does not hold yet.
fn plan_in(
    run: &Run<'_>,
    target: &Target,
    (desired, reads): (&[Desired], &mut observe::Reads),
    overrides: &Overrides,
) -> Result<(Plan, Observed), Error> {
    let observed = observe::observe_indexed(
        run.forge,
        target.oci.as_deref(),
        target.scope(),
        desired,
        run.index()?,
        reads,
    )?;
    run.note_observed(&observed);
    let p = plan::plan_with(desired, &observed, &target.settings, overrides, &packager)?;
    Ok((p, observed))
}

/// [`plan`], with the conformance gate of gated stacks carried out when `act` is given (a
/// release run: candidates published, tests started, results recorded, its actions noted
/// there). The releases the gate holds back are planned as if they were not offered, so
/// nothing else of the plan (a commit, the lock) builds on them.
///
/// The forge is read once for both plans: the base lock asked before rendering, the
/// observation and the plan after the gate share one [`observe::Reads`] (the gate writes only
/// its candidates, and the second plan reads the index as those writes left it).
fn plan_gated(
    run: &Run<'_>,
    sel: &Selection,
    mut act: Option<&mut Outcome>,
) -> Result<Planned, Error> {
    let (ctx, forge) = (run.ctx, run.forge);
    let mut target = run.target.clone();
    let mut reads = observe::Reads::default();
    let (desired, offered) = super::desired::desired_recorded(ctx, sel, |checkout| {
        // What the base branch records (the checkout's lock when the base has none).
        Ok(reads
            .base_lock(forge, target.scope())?
            .or_else(|| checkout.cloned()))
    })?;
    if let Some(d) = &offered.detected {
        target.settings.compliance = d.compliance.clone();
    }
    let (mut p, mut observed) = plan_in(run, &target, (&desired, &mut reads), &sel.overrides)?;
    let gated = super::gate::evaluate(
        ctx,
        (forge, &observed.index, &run.gate_records),
        &target,
        observed.base_head.as_deref(),
        &p.releases,
        act.as_deref_mut(),
    )?;
    // What the gate wrote (candidates published, records uploaded) is in the index now.
    if let Some(out) = act {
        run.record(out);
    }
    let held = super::gate::held(&gated);
    target.settings.gate = super::gate::pull_lines(&gated);
    if !held.is_empty() || !target.settings.gate.is_empty() {
        let kept: Vec<Desired> = desired
            .into_iter()
            .filter(|d| !held.contains(&d.series()))
            .collect();
        (p, observed) = plan_in(run, &target, (&kept, &mut reads), &sel.overrides)?;
    }
    super::gate::annotate(&mut p, &gated);
    // Where each series stands before this run writes anything, as `status` says it (the one
    // deadline model): `plan` renders it, and a release run replaces it after `apply`.
    if let Some(d) = &offered.detected {
        p.series = super::status::series_after_run(
            run,
            (&observed, d),
            (&p, &crate::outcome::Outcome::default()),
        );
    }
    explain_degraded(&mut p, &offered.held_back);
    p.warnings
        .extend(stepped_over(&offered.held_back, &p.releases));
    p.skipped.extend(offered.skipped);
    p.warnings.extend(offered.warnings);
    p.failed.extend(offered.failed);
    for w in &p.warnings {
        tracing::warn!("{w}");
    }
    tracing::info!(
        "plan: {} release{} to make; {} series already released as rendered, {} skipped, {} held back, {} failed (forge {})",
        p.releases.len(),
        if p.releases.len() == 1 { "" } else { "s" },
        p.skipped.iter().filter(|k| k.reason.is_unchanged()).count(),
        p.skipped
            .iter()
            .filter(|k| !k.reason.is_unchanged())
            .count(),
        p.degraded.len(),
        p.failed.len(),
        target.repo,
    );
    Ok(Planned {
        plan: p,
        target,
        observed,
        detected: offered.detected,
    })
}

/// [`plan`] plus the tenant pull requests that would follow (`plan`, `release --dry-run` and the
/// PR preview). Writes nothing.
pub fn preview(ctx: &Context, forge: &dyn Forge, sel: &Selection) -> Result<Planned, Error> {
    let run = Run::new(ctx, forge)?;
    let mut planned = plan_gated(&run, sel, None)?;
    if sel.skip_tenants {
        return Ok(planned);
    }
    planned.plan.tenants = super::tenants::preview(&run, &planned.plan, planned.detected.as_ref())?;
    Ok(planned)
}

/// Each degraded series' cause, from everything detection found kept it back
/// ([`crate::resolve::HeldBack`], whichever patch each reason belongs to); the rule is
/// [`crate::plan::guard::explain`]'s.
fn explain_degraded(
    p: &mut Plan,
    held_back: &std::collections::BTreeMap<String, crate::resolve::HeldBack>,
) {
    crate::plan::guard::explain(p, |series| {
        let h = held_back.get(series).cloned().unwrap_or_default();
        crate::plan::guard::Cause {
            transient: h.is_transient(),
            reasons: h.reasons().cloned().collect(),
        }
    });
}

/// One line per series this run releases below its newest patch, saying which patches the
/// release steps over and why ([`crate::resolve::HeldBack::skipped`]). A series that is not
/// being released now warns of nothing: its wait is the status report's to show (and an hourly
/// no-op run stays quiet), the release that does step over a patch says so in its notes.
fn stepped_over(
    held_back: &std::collections::BTreeMap<String, crate::resolve::HeldBack>,
    releases: &[crate::plan::PlannedRelease],
) -> Vec<String> {
    let releasing = |series: &str| {
        releases.iter().any(|r| {
            !r.steps.is_empty()
                && r.tag
                    .strip_prefix(series)
                    .is_some_and(|rest| rest.starts_with("-v"))
        })
    };
    held_back
        .iter()
        .filter(|(series, h)| !h.skipped().is_empty() && releasing(series))
        .map(|(series, h)| {
            let each: Vec<String> = h.skipped().iter().map(ToString::to_string).collect();
            format!("{series}: {}", each.join("; "))
        })
        .collect()
}

/// Series that upstream errors keep below their newest patch (a CHECKSUM answering 503 or
/// over its limit, a Helm index that cannot be read), degraded or not: transient trouble for
/// those series alone (exit 1), the rest of the run went on. Degraded series say it already.
fn held_back_by_errors(report: &crate::resolve::Report, plan: &Plan) -> Vec<Skipped> {
    report
        .minors
        .iter()
        .filter(|m| m.held_back.is_transient())
        .filter(|m| {
            let series = crate::model::series_prefix(&m.stack, m.minor);
            !plan.degraded.iter().any(|d| d.series == series)
        })
        .map(|m| {
            let errors = m.held_back.errors.clone();
            let reason = crate::plan::SkipReason::UpstreamErrors { errors };
            Skipped::stack_minor(&m.stack, m.minor, reason)
        })
        .collect()
}

/// A verdict that could not be decided is transient trouble: the releases went on, and the
/// next run reads the sources again. That is an upstream source, or what a series' latest
/// release ships (its notes name no version and its `metadata.yaml` could not be read or names
/// none): the summary's line says `unknown` as `status` does, and the run exits 1
/// (docs/status.md) rather than 0 as if the verdict were known.
fn verdicts_unknown(detected: Option<&super::detect::Detected>, plan: &Plan) -> Option<Skipped> {
    let mut unknown: Vec<String> = detected
        .iter()
        .flat_map(|d| d.report.unreadable.iter().cloned())
        .collect();
    unknown.extend(
        plan.series
            .iter()
            .filter_map(|s| match &s.deadlines.offered {
                crate::compliance::Offered::Unknown { cause } => Some(cause.clone()),
                _ => None,
            }),
    );
    (!unknown.is_empty()).then_some(Skipped {
        what: crate::plan::Subject::Verdicts,
        reason: crate::plan::SkipReason::VerdictsUnknown { sources: unknown },
    })
}

/// What a release run did.
pub struct Released {
    pub plan: Plan,
    pub outcome: Outcome,
    pub tenants: Vec<TenantReport>,
    /// What did not work out and makes the run exit 1 while the rest went on: series that
    /// could not be released (a stuck release branch, missing upstream data, a release that
    /// could not be finished) and a release stage that failed before any write (the tenants
    /// were still served).
    pub failed: Vec<Skipped>,
    /// What happened to the dashboard issue (`None`: `dashboard.enabled` is off).
    pub dashboard: Option<super::dashboard::Dashboard>,
}

impl Released {
    /// Whether the run must exit 1: a failure above, or a series kept back by an upstream
    /// error (degraded and transient).
    pub fn is_failure(&self) -> bool {
        !self.failed.is_empty() || self.plan.degraded.iter().any(|d| d.transient)
    }
}

/// The whole run: make sure the repository exists, plan, apply, propagate every published
/// release to the tenants, then show the resulting status on the dashboard issue. The caller
/// holds any run lock (the local forge's).
///
/// A transient failure while planning (upstream, reading the forge) does not keep the tenants
/// from the releases that already exist: they are still propagated and the failure is
/// reported (exit 1). Input a human must fix stops the run (exit 2), and so does a failing
/// write: the forge is in trouble and the next run finishes the job.
pub fn release(ctx: &Context, forge: &dyn Forge, sel: &Selection) -> Result<Released, Error> {
    let run = Run::new(ctx, forge)?;
    let t = &run.target;
    apply::ensure_repository(forge, &t.repo, &t.base_branch)?;
    let mut failed = Vec::new();
    let mut gate_steps = Outcome::default();
    let (plan, outcome, detected) = match plan_gated(&run, sel, Some(&mut gate_steps)) {
        Ok(planned) => {
            let mut outcome = apply::apply_with_oci(
                &planned.plan,
                forge,
                &planned.target.repo,
                &planned.observed,
                planned.target.oci.as_deref(),
            )?;
            // The stages below read the index and the release pull requests as this run's
            // writes left them.
            run.record(&outcome);
            run.record_release_pulls(&planned.observed.pulls, &outcome);
            // The gate's steps came first.
            gate_steps.actions.append(&mut outcome.actions);
            outcome.actions = gate_steps.actions;
            let mut plan = planned.plan;
            // Each series' line in the summary says where it stands as `status` does.
            if let Some(d) = &planned.detected {
                plan.series = super::status::series_after_run(
                    &run,
                    (&planned.observed, d),
                    (&plan, &outcome),
                );
            }
            (plan, outcome, planned.detected)
        }
        Err(e)
            if e.class() == super::exit::Class::Transient
                && !ctx.loaded.config.tenants.is_empty() =>
        {
            tracing::error!("release stage: {e}");
            failed.push(Skipped {
                what: crate::plan::Subject::ReleaseStage,
                reason: crate::plan::SkipReason::StageFailed {
                    error: e.to_string(),
                },
            });
            (Plan::default(), Outcome::default(), None)
        }
        Err(e) => return Err(e),
    };
    failed.extend(plan.failed.iter().cloned());
    failed.extend(outcome.failed.iter().cloned());
    // `--allow-downgrade` takes what upstream offers now, as asked: no failure for it.
    if let Some(d) = &detected
        && !sel.overrides.allow_downgrade
    {
        failed.extend(held_back_by_errors(&d.report, &plan));
    }
    failed.extend(verdicts_unknown(detected.as_ref(), &plan));
    let (tenants, known) = if ctx.loaded.config.tenants.is_empty() {
        Default::default()
    } else if sel.skip_tenants {
        tracing::info!("tenants: left to the `tenants` runs (--skip-tenants)");
        Default::default()
    } else {
        super::tenants::run_in(&run, &super::tenants::options(false), detected.as_ref())?
    };
    if !tenants.is_empty() {
        tracing::info!("{}", crate::report::tenants::counts(&tenants));
    }
    let dashboard = super::dashboard::dashboard_after_release(&run, detected.as_ref(), &known);
    if let Some(d) = &dashboard {
        tracing::info!("{d}");
    }
    Ok(Released {
        plan,
        outcome,
        tenants,
        failed,
        dashboard,
    })
}
