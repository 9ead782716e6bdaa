//! Propagating releases to tenants: one format-preserving pull request per tenant repository
//! and stack.
//!
//! `scan` and `edit` change YAML bytes without re-serialising; `plan` decides, purely, what
//! each tenant should get; the reading is `stackbot::observe::tenants`, the
//! writing `stackbot::apply::tenants`, and the run itself (which releases, which tenants,
//! concurrently) is `stackbot::pipeline::tenants`.

pub mod approval;
pub mod branch;
pub mod edit;
pub mod plan;
pub mod releases;
pub mod run;
pub mod scan;
pub mod upgrade;

use crate::index::Rank;

pub use plan::{Action, AvailableRelease, Facts, FileEdit, TenantPlan};
pub use run::{Observations, Options, Outcome, TenantReport};

/// Why propagation could not start at all (per-tenant failures are in the reports instead).
#[derive(Debug, thiserror::Error)]
pub enum TenantsError {
    #[error("{0}")]
    Config(String),
    #[error("cannot list the releases of {repo}: {source}")]
    Releases {
        repo: String,
        /// The forge's error: `stackbot_forge::ForgeError`, above core in the crate graph, so
        /// boxed here; it is still the `source` of the chain the exit code is classified by.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The Kubernetes version of the newest release of a series cannot be read (its notes name
    /// none and its `metadata.yaml` does not download, or downloads but names no version): no
    /// tenant is offered anything rather than a plan made without that release
    /// (docs/status.md). Classified by its source: the forge's error when the download failed
    /// (transient, or a refusal), an [`crate::error::InvalidInput`] (a file a person must fix)
    /// when the file says no version.
    #[error(
        "release {release}: metadata.yaml could not be read ({source}); no tenant is proposed anything until it can be"
    )]
    Metadata {
        release: String,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// The newest release per stack × minor once `planned` are published (stacks nobody follows
/// are left out), by the release index's tie-break (a planned release replaces a published
/// one only with a higher number). Pure.
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
            Some(r)
                if Rank::of_number(p.name.version.major)
                    .replaces(Rank::of_number(r.name.version.major)) =>
            {
                let mut earlier = std::mem::take(&mut r.earlier);
                earlier.insert(r.name.version.major, r.kubernetes);
                *r = AvailableRelease {
                    earlier,
                    ..p.clone()
                };
            }
            Some(_) => {}
            None => out.push(p.clone()),
        }
    }
    out.sort_by(|a, b| (&a.name.stack, a.name.minor).cmp(&(&b.name.stack, b.name.minor)));
    out
}
