//! What a tenant run is asked (`Options`: dry run, one tenant, a shard, concurrency), which
//! tenants it covers, and what it reports per tenant × stack. Pure: the run itself is
//! `stackbot::pipeline::tenants` (observe → plan → apply per tenant, concurrently).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::plan::{self, Action, Observed, TenantPlan};
use crate::config::{Config, TenantConfig};
use crate::model::StackId;

/// How a run behaves.
#[derive(Debug, Clone)]
pub struct Options {
    /// Plan only: no write request at all.
    pub dry_run: bool,
    /// Only this tenant.
    pub tenant: Option<String>,
    /// `(i, n)`, 1-based: only tenants whose name hashes into shard `i` of `n`.
    pub shard: Option<(u32, u32)>,
    /// Tenants processed at the same time.
    pub concurrency: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            dry_run: false,
            tenant: None,
            shard: None,
            concurrency: 8,
        }
    }
}

/// What happened to one tenant stack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Opened,
    Updated,
    Unchanged,
    Closed,
    /// Human commits on the bot branch: nothing pushed, a comment left.
    Blocked,
    /// Dry run: what would happen is in `action`.
    Planned,
    Failed,
}

/// One line of the summary: a tenant and stack (or a tenant that failed before its stacks).
#[derive(Debug, Clone, Serialize)]
pub struct TenantReport {
    pub tenant: String,
    pub repository: String,
    pub branch: Option<String>,
    pub stack: Option<String>,
    /// Paths of the files the PR changes.
    pub files: Vec<String>,
    pub action: Action,
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pull: Option<u64>,
    pub releases: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Unified diff of every changed file (shown by `--dry-run`).
    #[serde(skip)]
    pub diff: String,
    /// A step waiting for (or opened by) approval on the dashboard.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<super::approval::Approval>,
}

impl TenantReport {
    pub fn failed(t: &TenantConfig, reason: String) -> Self {
        TenantReport {
            tenant: t.name.clone(),
            repository: t.repository.clone(),
            branch: None,
            stack: None,
            files: Vec::new(),
            action: Action::None,
            outcome: Outcome::Failed,
            pull: None,
            releases: Vec::new(),
            note: None,
            error: Some(reason),
            diff: String::new(),
            approval: None,
        }
    }

    pub fn from_plan(p: &TenantPlan, outcome: Outcome) -> Self {
        TenantReport {
            tenant: p.tenant.clone(),
            repository: p.repository.clone(),
            branch: Some(p.branch.clone()),
            stack: Some(p.stack.to_string()),
            files: p.files.iter().map(|f| f.path.clone()).collect(),
            action: p.action,
            outcome,
            pull: p.pull,
            releases: p.releases.clone(),
            note: p.note.clone(),
            error: None,
            diff: p.files.iter().map(plan::unified_diff).collect(),
            approval: p.approval.clone(),
        }
    }
}

/// Whether a tenant belongs to shard `i` of `n` (1-based): a stable hash of its name, so the
/// split does not move when tenants are added.
pub fn in_shard(name: &str, i: u32, n: u32) -> bool {
    use sha2::{Digest, Sha256};
    let h = Sha256::digest(name.as_bytes());
    let v = u64::from_be_bytes(h[..8].try_into().expect("8 bytes"));
    (v % u64::from(n.max(1))) as u32 == i.saturating_sub(1)
}

/// Parse `I/N` (1 ≤ I ≤ N).
pub fn parse_shard(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("`--shard {s}`: expected I/N with 1 ≤ I ≤ N, e.g. `--shard 2/4`");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u32, u32) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if i == 0 || n == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

/// The tenants `opts` selects (one by name, or a shard), in configuration order.
pub fn selected<'a>(config: &'a Config, opts: &Options) -> Result<Vec<&'a TenantConfig>, String> {
    if let Some(name) = &opts.tenant
        && !config.tenants.iter().any(|t| &t.name == name)
    {
        let names: Vec<&str> = config.tenants.iter().map(|t| t.name.as_str()).collect();
        let hint = crate::error::did_you_mean(name, &names)
            .map(|n| format!(" (did you mean `{n}`?)"))
            .unwrap_or_default();
        return Err(format!(
            "--tenant {name}: no tenant of that name in the configuration{hint}; tenants: {}",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    }
    Ok(config
        .tenants
        .iter()
        .filter(|t| opts.tenant.as_ref().is_none_or(|n| n == &t.name))
        .filter(|t| opts.shard.is_none_or(|(i, n)| in_shard(&t.name, i, n)))
        .collect())
}

/// What a run read of each tenant it left exactly as it found it (by tenant name): still the
/// truth after the run, so the status report at the end of `release` reuses it instead of
/// reading those repositories a second time.
pub type Observations = BTreeMap<String, Observed>;

/// The stacks any tenant follows.
pub fn followed_stacks(config: &Config) -> BTreeSet<StackId> {
    config
        .tenants
        .iter()
        .flat_map(|t| t.stacks.iter().filter_map(|s| s.parse().ok()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_every_tenant_exactly_once() {
        for name in ["a", "acme", "tenant-17", "zz"] {
            let hits = (1..=4).filter(|i| in_shard(name, *i, 4)).count();
            assert_eq!(hits, 1, "{name}");
        }
        assert_eq!(parse_shard("2/4"), Ok((2, 4)));
        for bad in ["0/4", "5/4", "2", "a/b", "1/0"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }
}
