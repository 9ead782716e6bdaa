//! Published releases (forge, OCI, or both) → tenant pull requests: `stackbot tenants`, the
//! last stage of `stackbot release`, and the tenant lines of every preview.

use crate::compliance::Inputs;
use crate::config::PublishTarget;
use crate::error::InvalidInput;
use crate::forge::{Forge, RepoRef};
use crate::observe::ObserveError;
use crate::plan::{Plan, Step};
use crate::tenants::{
    self, AvailableRelease, Facts, Observations, Options, TenantReport, TenantsError,
};

use super::{Context, Error};

/// How `release` propagates: all tenants, with a progress bar (drawn only on a terminal: CI
/// logs get the summary, people get a live bar). Pacing is the forge's business.
pub fn options(dry_run: bool) -> Options {
    Options {
        dry_run,
        progress: crate::report::progress(0, "tenants"),
        ..Default::default()
    }
}

fn cluster_stacks_repo(ctx: &Context) -> Result<RepoRef, Error> {
    let c = &ctx.loaded.config;
    RepoRef::parse(&c.forge.repository).ok_or_else(|| {
        InvalidInput(format!(
            "{}: forge.repository `{}` is not `owner/name`",
            ctx.loaded.path.display(),
            c.forge.repository
        ))
        .into()
    })
}

/// The published releases tenants can move to (newest per stack × minor they follow), from
/// every target `publish` lists: the forge's releases, the OCI repository's tags, or both.
/// With `publish: [oci]` alone the forge's release list is not read at all.
fn published(ctx: &Context, forge: &dyn Forge) -> Result<Vec<AvailableRelease>, Error> {
    let config = &ctx.loaded.config;
    let repo = cluster_stacks_repo(ctx)?;
    let followed = tenants::apply::followed_stacks(config);
    let oci = crate::oci::Publisher::from_config(config, ctx.today, |k| {
        ctx.env.get(k).map(str::to_string)
    })
    .map_err(|e| oci_error(ctx, e))?;
    let on_forge = config.publish.contains(&PublishTarget::Forge);
    let index =
        crate::observe::published(forge, &repo, on_forge, oci.as_ref()).map_err(|e| match e {
            ObserveError::Forge(source) => TenantsError::Releases {
                repo: repo.to_string(),
                source,
            }
            .into(),
            ObserveError::Oci(e) => oci_error(ctx, e),
        })?;
    let mut out = Vec::new();
    if on_forge {
        out = tenants::releases::available_releases(forge, &repo, &index, &followed).map_err(
            |source| TenantsError::Releases {
                repo: repo.to_string(),
                source,
            },
        )?;
    }
    if let Some(oci) = oci {
        let more = tenants::releases::oci_releases(oci.registry(), &index, &followed, &out)
            .map_err(|e| oci_error(ctx, e))?;
        out = tenants::releases::newest(out, more);
    }
    Ok(out)
}

/// A misconfigured `oci:` section is the user's to fix (exit 2); a registry that fails is
/// transient (exit 1).
fn oci_error(ctx: &Context, e: crate::oci::OciError) -> Error {
    if e.is_invalid_input() {
        InvalidInput(format!("{}: {e}", ctx.loaded.path.display())).into()
    } else {
        Error::Oci(e)
    }
}

/// What the tenant plans know of upstream: the day, and what detection read for the SCS 0210
/// verdicts (end of life, critical CVEs), or nothing when this run did not detect.
fn facts(ctx: &Context, inputs: Option<&Inputs>) -> Facts {
    Facts {
        today: ctx.today,
        inputs: inputs.cloned().unwrap_or_default(),
        approvals: Default::default(),
    }
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

/// The steps ticked on the dashboard. A dashboard that cannot be read fails the run
/// (transient): planning without the ticks would withdraw every approved pull request.
fn approvals(
    ctx: &Context,
    forge: &dyn Forge,
) -> Result<std::collections::BTreeSet<(String, String)>, Error> {
    if !uses_approval(ctx) {
        return Ok(Default::default());
    }
    Ok(super::dashboard::find(ctx, forge)?
        .map(|i| tenants::approval::ticked(&i.body))
        .unwrap_or_default())
}

/// After a run that wrote: the approvals section lists the steps waiting now.
fn list_approvals(ctx: &Context, forge: &dyn Forge, reports: &[TenantReport]) -> Result<(), Error> {
    if !uses_approval(ctx) {
        return Ok(());
    }
    let items: Vec<_> = reports.iter().filter_map(|r| r.approval.clone()).collect();
    // Tenants that failed before planning keep their lines.
    let planned = reports
        .iter()
        .filter(|r| r.branch.is_some())
        .map(|r| r.tenant.clone())
        .collect();
    super::dashboard::update_approvals(ctx, forge, &items, &planned)
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
    inputs: Option<&Inputs>,
) -> Result<(Vec<TenantReport>, Observations), Error> {
    let releases = published(ctx, forge)?;
    let facts = Facts {
        approvals: approvals(ctx, forge)?,
        ..facts(ctx, inputs)
    };
    let (reports, observed) =
        tenants::apply::propagate_observed(forge, &ctx.loaded.config, &releases, &facts, opts)
            .map_err(|m| Error::from(TenantsError::Config(m)))?;
    if !opts.dry_run
        && let Err(e) = list_approvals(ctx, forge, &reports)
    {
        // The pull requests are done; the next run lists the steps again.
        tracing::warn!("the approvals on the dashboard were not updated: {e}");
    }
    Ok((reports, observed))
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
    ctx: &Context,
    forge: &dyn Forge,
    opts: &Options,
    planned: &[AvailableRelease],
    inputs: Option<&Inputs>,
) -> Result<Vec<TenantReport>, Error> {
    let opts = Options {
        dry_run: true,
        ..opts.clone()
    };
    let followed = tenants::apply::followed_stacks(&ctx.loaded.config);
    let releases = tenants::with_planned(published(ctx, forge)?, planned, &followed);
    let facts = Facts {
        approvals: approvals(ctx, forge)?,
        ..facts(ctx, inputs)
    };
    tenants::apply::propagate(forge, &ctx.loaded.config, &releases, &facts, &opts)
        .map_err(|m| TenantsError::Config(m).into())
}

/// The tenant lines of a release preview (JSON objects as `plan --format json` prints them).
pub fn preview(
    ctx: &Context,
    forge: &dyn Forge,
    p: &Plan,
    inputs: Option<&Inputs>,
) -> Result<Vec<serde_json::Value>, Error> {
    if ctx.loaded.config.tenants.is_empty() {
        return Ok(Vec::new());
    }
    let reports = plan_after(ctx, forge, &options(true), &planned_releases(p), inputs)?;
    Ok(reports
        .iter()
        .map(|r| serde_json::to_value(r).expect("reports serialize"))
        .collect())
}
