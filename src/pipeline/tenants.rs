//! Published releases (forge, OCI, or both) → tenant pull requests: `stackbot tenants`, the
//! last stage of `stackbot release`, and the tenant lines of every preview.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::detect::Detected;
use crate::config::{Config, TenantConfig};
use crate::forge::Forge;
use crate::observe::{ForgeReleases, ObserveError};
use crate::plan::{Plan, Step};
use crate::tenants::plan::Observed;
use crate::tenants::{
    self, AvailableRelease, Facts, Observations, Options, Outcome, TenantReport, TenantsError,
};

use super::run::Run;
use super::{Context, Error};

/// How `release` propagates: all tenants; the progress is the activity line's (drawn only on
/// a terminal, see [`crate::cli::activity`]). Pacing is the forge's business.
pub fn options(dry_run: bool) -> Options {
    Options {
        dry_run,
        ..Default::default()
    }
}

/// The published releases tenants can move to (newest per stack × minor they follow), from
/// every target `publish` lists: the forge's releases, the OCI repository's tags, or both.
/// With `publish: [oci]` alone the forge's release list is not read at all.
fn published(run: &Run<'_>) -> Result<Vec<AvailableRelease>, Error> {
    let (ctx, forge, repo) = (run.ctx, run.forge, &run.target.repo);
    let config = &ctx.loaded.config;
    let followed = tenants::run::followed_stacks(config);
    let oci = run.target.oci.as_deref();
    let on_forge = config.publishes_on_forge();
    // The run's index: listed once, with what this run published folded in.
    let index = run
        .published(ForgeReleases::Required)
        .map_err(|e| match e {
            ObserveError::Forge(source) => TenantsError::Releases {
                repo: repo.to_string(),
                source: Box::new(source),
            }
            .into(),
            ObserveError::Oci(e) => Error::Oci(e),
        })?;
    let mut out = Vec::new();
    if on_forge {
        let known = (&index, &run.forge_versions);
        out = crate::observe::tenants::available_releases(forge, repo, known, &followed)?;
    }
    if let Some(oci) = oci {
        let reads = (oci.registry(), &run.oci_reads);
        let more = crate::observe::tenants::oci_releases(reads, &index, &followed, &out)?;
        out = tenants::releases::newest(out, more);
    }
    Ok(out)
}

/// What the tenant plans know of upstream: the day, and what detection read for the SCS 0210
/// verdicts (end of life, critical CVEs), or nothing when this run did not detect; and the
/// approvals ticked on the dashboard.
fn facts(run: &Run<'_>, detected: Option<&Detected>) -> Result<Facts, Error> {
    let ctx = run.ctx;
    Ok(Facts {
        today: ctx.today,
        inputs: detected.map(|d| d.compliance.clone()).unwrap_or_default(),
        approvals: approvals(run)?,
        limits: ctx.loaded.config.limits.tenant_files(),
        waits: detected.map(|d| waits(ctx, d)).unwrap_or_default(),
    })
}

/// What each unreleased patch of a stack waits for, as detection found it: the reason a
/// release stepped over it, or what the newest patch lacks (its missing image or chart, or the
/// upstream error); and for a patch of a minor the stack does not track on the run's day
/// (detection's one answer: not among its minors), that no release will ship it, and why (past
/// its end of life, the day itself included, or not configured). Without that a tenant pull
/// request said "the next release run ships it" of a minor no run releases any more.
fn waits(
    ctx: &Context,
    d: &Detected,
) -> std::collections::BTreeMap<(crate::model::StackId, crate::model::KubeVersion), String> {
    let mut out = std::collections::BTreeMap::new();
    let patches = d.compliance.releases.as_deref().unwrap_or_default();
    for stack in ctx.loaded.config.stacks.iter().map(|s| s.id()) {
        let tracks = |m| {
            d.report
                .minors
                .iter()
                .any(|t| t.stack == stack && t.minor == m)
        };
        for p in patches.iter().filter(|p| !tracks(p.version.minor())) {
            let minor = p.version.minor();
            let why = match d.end_of_life.get(&minor) {
                Some(eol) if crate::model::scs::past_end_of_life(*eol, ctx.today) => {
                    format!("no release: {stack} no longer tracks {minor} (end of life {eol})")
                }
                _ => format!("no release: {stack} does not track {minor}"),
            };
            out.insert((stack.clone(), p.version), why);
        }
    }
    for m in &d.report.minors {
        for s in m.held_back.skipped() {
            out.insert((m.stack.clone(), s.patch), s.reason.clone());
        }
        if let Some(newest) = m.kubernetes
            && m.release_set
                .as_ref()
                .is_none_or(|s| s.kubernetes != newest)
        {
            let why: Vec<&str> = m
                .errors
                .iter()
                .chain(&m.missing)
                .map(String::as_str)
                .collect();
            if !why.is_empty() {
                out.entry((m.stack.clone(), newest))
                    .or_insert_with(|| why.join("; "));
            }
        }
    }
    out
}

/// Whether some tenant waits for approvals on the dashboard (then, and only then, the run
/// reads the dashboard issue).
fn uses_approval(ctx: &Context) -> bool {
    let c = &ctx.loaded.config;
    c.dashboard.enabled
        && c.tenants
            .iter()
            .any(|t| t.policy.upgrade.clusters == crate::config::UpgradeAction::Approval)
}

/// The steps listed on the dashboard, with whether each is ticked. A dashboard that cannot be
/// read fails the run (transient): planning without the ticks would withdraw every approved
/// pull request.
fn approvals(run: &Run<'_>) -> Result<std::collections::BTreeMap<(String, String), bool>, Error> {
    if !uses_approval(run.ctx) {
        return Ok(Default::default());
    }
    Ok(super::dashboard::find(run)?
        .map(|i| tenants::approval::read(&i.body))
        .unwrap_or_default())
}

/// After a run that wrote: the approvals section lists the steps waiting now.
fn list_approvals(run: &Run<'_>, reports: &[TenantReport]) -> Result<(), Error> {
    if !uses_approval(run.ctx) {
        return Ok(());
    }
    let items: Vec<_> = reports.iter().filter_map(|r| r.approval.clone()).collect();
    // Tenants that failed before planning keep their lines.
    let planned = reports
        .iter()
        .filter(|r| r.branch.is_some())
        .map(|r| r.tenant.clone())
        .collect();
    super::dashboard::update_approvals(run, &items, &planned)
}

/// Open, update or close tenant pull requests for the releases published to every target.
/// Without detection no pull request claims a CVE fix, and a Cluster upgrade waiting for an
/// end-of-life window is not proposed (the `release` run, which detects, does both).
pub fn run(ctx: &Context, forge: &dyn Forge, opts: &Options) -> Result<Vec<TenantReport>, Error> {
    run_observed(ctx, forge, opts, None).map(|(reports, _)| reports)
}

/// [`run`] with what detection read (`None`: nothing), also returning what was read of the
/// tenants it left unchanged (for the status report that ends a `release` run).
pub fn run_observed(
    ctx: &Context,
    forge: &dyn Forge,
    opts: &Options,
    detected: Option<&Detected>,
) -> Result<(Vec<TenantReport>, Observations), Error> {
    run_in(&Run::new(ctx, forge)?, opts, detected)
}

/// [`run_observed`] as a stage of `run` (the release run's last stage reads the index the
/// release stage listed and updated).
pub fn run_in(
    run: &Run<'_>,
    opts: &Options,
    detected: Option<&Detected>,
) -> Result<(Vec<TenantReport>, Observations), Error> {
    let (ctx, forge) = (run.ctx, run.forge);
    let releases = published(run)?;
    let facts = facts(run, detected)?;
    let (reports, observed) = propagate_observed(
        (forge, &run.contents),
        &ctx.loaded.config,
        &releases,
        &facts,
        opts,
    )
    .map_err(|m| Error::from(TenantsError::Config(m)))?;
    if !opts.dry_run
        && let Err(e) = list_approvals(run, &reports)
    {
        // The pull requests are done; the next run lists the steps again.
        tracing::warn!("the approvals on the dashboard were not updated: {e}");
    }
    Ok((reports, observed))
}

/// One tenant: its reports, and what was read of it when the run did not change it.
fn one_tenant(
    (forge, contents): (&dyn Forge, &crate::observe::contents::Contents),
    t: &TenantConfig,
    releases: &[AvailableRelease],
    facts: &Facts,
    bot_email: &str,
    opts: &Options,
) -> (Vec<TenantReport>, Option<Observed>) {
    let observed =
        match crate::observe::tenants::tenant((forge, contents), t, opts.dry_run, &facts.limits) {
            Ok(o) => o,
            Err(e) => return (vec![TenantReport::failed(t, e)], None),
        };
    let plans = match tenants::plan::plan_tenant(t, releases, &observed, facts, bot_email) {
        Ok(p) => p,
        Err(e) => return (vec![TenantReport::failed(t, e.to_string())], None),
    };
    let reports: Vec<TenantReport> = plans
        .iter()
        .map(|p| {
            if opts.dry_run {
                return TenantReport::from_plan(p, Outcome::Planned);
            }
            match crate::apply::tenants::execute(forge, p) {
                Ok(o) => {
                    if !matches!(o, Outcome::Unchanged) {
                        tracing::debug!(
                            target: "stackbot::done", // cli::journal::TARGET
                            "tenant {} ({}): pull request {}",
                            t.name,
                            t.repository,
                            serde_json::to_value(&o)
                                .ok()
                                .and_then(|v| v.as_str().map(str::to_string))
                                .unwrap_or_default()
                        );
                    }
                    TenantReport::from_plan(p, o)
                }
                Err(e) => {
                    let mut r = TenantReport::from_plan(p, Outcome::Failed);
                    r.error = Some(e.to_string());
                    r
                }
            }
        })
        .collect();
    // A blocked tenant got at most a comment: its branches, files and pull requests are as read.
    let untouched = !opts.dry_run
        && reports
            .iter()
            .all(|r| matches!(r.outcome, Outcome::Unchanged | Outcome::Blocked));
    (reports, untouched.then_some(observed))
}

/// Propagate `releases` to every selected tenant, concurrently. Never fails as a whole: each
/// tenant's failure is in its report. With `dry_run`, nothing is written.
pub fn propagate(
    forge: (&dyn Forge, &crate::observe::contents::Contents),
    config: &Config,
    releases: &[AvailableRelease],
    facts: &Facts,
    opts: &Options,
) -> Result<Vec<TenantReport>, String> {
    propagate_observed(forge, config, releases, facts, opts).map(|(reports, _)| reports)
}

/// [`propagate`], also returning what was read of the tenants the run left unchanged.
pub fn propagate_observed(
    forge: (&dyn Forge, &crate::observe::contents::Contents),
    config: &Config,
    releases: &[AvailableRelease],
    facts: &Facts,
    opts: &Options,
) -> Result<(Vec<TenantReport>, Observations), String> {
    let tenants = tenants::run::selected(config, opts)?;
    let bot = &config.forge.committer.email;
    let finished = AtomicUsize::new(0);
    let total = tenants.len();
    let all = crate::fan_out::fan_out(&tenants, opts.concurrency, |t| {
        tracing::debug!(
            target: "stackbot::activity", // cli::activity::TARGET
            "tenants {}/{total}: {}",
            finished.load(Ordering::SeqCst),
            t.name
        );
        let r = one_tenant(forge, t, releases, facts, bot, opts);
        finished.fetch_add(1, Ordering::SeqCst);
        r
    });
    let mut reports = Vec::new();
    let mut observations = Observations::new();
    for (t, (r, observed)) in tenants.iter().zip(all) {
        reports.extend(r);
        if let Some(o) = observed {
            observations.insert(t.name.clone(), o);
        }
    }
    Ok((reports, observations))
}

/// The releases a plan would publish, as the tenant planner sees published releases: tag,
/// Kubernetes version and notes. Releases waiting for a release pull request are left out
/// (they are published only after it is merged).
pub fn planned_releases(p: &Plan) -> Vec<AvailableRelease> {
    p.releases
        .iter()
        .filter(|r| r.steps.iter().any(|s| matches!(s, Step::Publish { .. })))
        .filter_map(|r| {
            Some(AvailableRelease {
                name: crate::model::ReleaseName::parse(&r.tag).ok()?,
                kubernetes: r.kubernetes.parse().ok()?,
                html_url: String::new(),
                body: r.notes.clone(),
                earlier: Default::default(),
            })
        })
        .collect()
}

/// What `run` would do once `planned` releases are published too, without a single write:
/// `plan`, `release --dry-run` and the PR preview show the tenant PRs that would follow the
/// releases they plan. A planned release replaces the published one of its stack × minor when
/// newer.
pub fn plan_after(
    run: &Run<'_>,
    opts: &Options,
    planned: &[AvailableRelease],
    detected: Option<&Detected>,
) -> Result<Vec<TenantReport>, Error> {
    let (ctx, forge) = (run.ctx, run.forge);
    let opts = Options {
        dry_run: true,
        ..opts.clone()
    };
    let followed = tenants::run::followed_stacks(&ctx.loaded.config);
    let releases = tenants::with_planned(published(run)?, planned, &followed);
    let facts = facts(run, detected)?;
    propagate(
        (forge, &run.contents),
        &ctx.loaded.config,
        &releases,
        &facts,
        &opts,
    )
    .map_err(|m| TenantsError::Config(m).into())
}

/// The tenant lines of a release preview (JSON objects as `plan --format json` prints them).
pub fn preview(
    run: &Run<'_>,
    p: &Plan,
    detected: Option<&Detected>,
) -> Result<Vec<serde_json::Value>, Error> {
    if run.ctx.loaded.config.tenants.is_empty() {
        return Ok(Vec::new());
    }
    let reports = plan_after(run, &options(true), &planned_releases(p), detected)?;
    // The diff is not part of a tenant report's JSON (a run's result); a preview shows it.
    Ok(reports
        .iter()
        .map(|r| {
            let mut v = serde_json::to_value(r).expect("reports serialize");
            if r.action != crate::tenants::Action::None && !r.diff.is_empty() {
                v["diff"] = r.diff.clone().into();
            }
            v
        })
        .collect())
}
