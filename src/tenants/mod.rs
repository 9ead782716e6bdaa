//! Propagating releases to tenants: one format-preserving pull request per tenant repository
//! and stack.
//!
//! `scan` and `edit` change YAML bytes without re-serialising; `plan` decides, purely, what
//! each tenant should get; `apply` is the only part that talks to the forge.

pub mod apply;
pub mod edit;
pub mod plan;
pub mod scan;

use crate::config::Loaded;
use crate::forge::{Forge, RepoRef};

pub use apply::{Options, Outcome, TenantReport};
pub use plan::{Action, AvailableRelease, FileEdit, TenantPlan};

/// Why propagation could not start at all (per-tenant failures are in the reports instead).
#[derive(Debug, thiserror::Error)]
pub enum TenantsError {
    #[error("{0}")]
    Config(String),
    #[error("cannot list the releases of {repo}: {source}")]
    Releases {
        repo: String,
        source: crate::forge::ForgeError,
    },
}

/// Open or update tenant pull requests for the releases that exist on the forge. `stackbot
/// tenants` and `stackbot release` (after publishing) both call this.
pub fn run_tenants(
    forge: &dyn Forge,
    loaded: &Loaded,
    opts: &Options,
) -> Result<Vec<TenantReport>, TenantsError> {
    let c = &loaded.config;
    let repo = RepoRef::parse(&c.forge.repository).ok_or_else(|| {
        TenantsError::Config(format!(
            "{}: forge.repository `{}` is not `owner/name`",
            loaded.path.display(),
            c.forge.repository
        ))
    })?;
    let releases =
        apply::available_releases(forge, &repo, &apply::followed_stacks(c)).map_err(|source| {
            TenantsError::Releases {
                repo: repo.to_string(),
                source,
            }
        })?;
    apply::propagate(forge, c, &releases, opts).map_err(TenantsError::Config)
}

/// What `run_tenants` would do, without a single write: for `plan --format json` and
/// `tenants --dry-run`. Each report's `action` is `open`, `update`, `close` or `none`.
pub fn plan_tenants(
    forge: &dyn Forge,
    loaded: &Loaded,
    opts: &Options,
) -> Result<Vec<TenantReport>, TenantsError> {
    plan_tenants_after(forge, loaded, opts, &[])
}

/// What `run_tenants` would do once `planned` releases are published too: `plan`,
/// `release --dry-run` and the PR preview show the tenant PRs that would follow the releases
/// they plan. A planned release replaces the published one of its stack × minor when newer.
/// Without a single write.
pub fn plan_tenants_after(
    forge: &dyn Forge,
    loaded: &Loaded,
    opts: &Options,
    planned: &[AvailableRelease],
) -> Result<Vec<TenantReport>, TenantsError> {
    let opts = Options {
        dry_run: true,
        ..opts.clone()
    };
    let c = &loaded.config;
    let repo = RepoRef::parse(&c.forge.repository).ok_or_else(|| {
        TenantsError::Config(format!(
            "{}: forge.repository `{}` is not `owner/name`",
            loaded.path.display(),
            c.forge.repository
        ))
    })?;
    let followed = apply::followed_stacks(c);
    let published = apply::available_releases(forge, &repo, &followed).map_err(|source| {
        TenantsError::Releases {
            repo: repo.to_string(),
            source,
        }
    })?;
    let releases = with_planned(published, planned, &followed);
    apply::propagate(forge, c, &releases, &opts).map_err(TenantsError::Config)
}

/// The newest release per stack × minor once `planned` are published (stacks nobody follows
/// are left out). Pure.
pub fn with_planned(
    published: Vec<AvailableRelease>,
    planned: &[AvailableRelease],
    followed: &std::collections::BTreeSet<crate::model::StackId>,
) -> Vec<AvailableRelease> {
    let mut out = published;
    for p in planned.iter().filter(|p| followed.contains(&p.name.stack)) {
        match out
            .iter_mut()
            .find(|r| r.name.stack == p.name.stack && r.name.minor == p.name.minor)
        {
            Some(r) if r.name.version.major < p.name.version.major => *r = p.clone(),
            Some(_) => {}
            None => out.push(p.clone()),
        }
    }
    out.sort_by(|a, b| (&a.name.stack, a.name.minor).cmp(&(&b.name.stack, b.name.minor)));
    out
}
