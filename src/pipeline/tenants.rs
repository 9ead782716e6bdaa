//! Releases on the forge → tenant pull requests: `stackbot tenants`, the last stage of
//! `stackbot release`, and the tenant lines of every preview.

use crate::error::InvalidInput;
use crate::forge::{Forge, RepoRef};
use crate::plan::{Plan, Step};
use crate::tenants::{self, AvailableRelease, Options, TenantReport, TenantsError};

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

/// The published releases tenants can move to (newest per stack × minor they follow).
fn published(ctx: &Context, forge: &dyn Forge) -> Result<Vec<AvailableRelease>, Error> {
    let repo = cluster_stacks_repo(ctx)?;
    let followed = tenants::apply::followed_stacks(&ctx.loaded.config);
    tenants::apply::available_releases(forge, &repo, &followed).map_err(|source| {
        TenantsError::Releases {
            repo: repo.to_string(),
            source,
        }
        .into()
    })
}

/// Open, update or close tenant pull requests for the releases that exist on the forge.
pub fn run(ctx: &Context, forge: &dyn Forge, opts: &Options) -> Result<Vec<TenantReport>, Error> {
    let releases = published(ctx, forge)?;
    tenants::apply::propagate(forge, &ctx.loaded.config, &releases, opts)
        .map_err(|m| TenantsError::Config(m).into())
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
) -> Result<Vec<TenantReport>, Error> {
    let opts = Options {
        dry_run: true,
        ..opts.clone()
    };
    let followed = tenants::apply::followed_stacks(&ctx.loaded.config);
    let releases = tenants::with_planned(published(ctx, forge)?, planned, &followed);
    tenants::apply::propagate(forge, &ctx.loaded.config, &releases, &opts)
        .map_err(|m| TenantsError::Config(m).into())
}

/// The tenant lines of a release preview (JSON objects as `plan --format json` prints them).
pub fn preview(
    ctx: &Context,
    forge: &dyn Forge,
    p: &Plan,
) -> Result<Vec<serde_json::Value>, Error> {
    if ctx.loaded.config.tenants.is_empty() {
        return Ok(Vec::new());
    }
    let reports = plan_after(ctx, forge, &options(true), &planned_releases(p))?;
    Ok(reports
        .iter()
        .map(|r| serde_json::to_value(r).expect("reports serialize"))
        .collect())
}
