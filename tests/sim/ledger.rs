//! What the world remembers that the forge may forget: every release number ever published
//! (with what it contained, even after a human deleted it), every pull request a human declined
//! or merged, the commits humans pushed to the bot's branches, and what every run cost.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use super::forge::{Commit, HttpCost, MergeMethod};
use super::read::{self, Kube};
use super::tenants::Proposal;

/// A release number as it was first published.
#[derive(Debug, Clone)]
pub struct Published {
    pub tag: String,
    pub series: String,
    pub n: u64,
    /// sha256 of its `hashes.json` (the content identity of a cluster-stack release).
    pub content: String,
    pub kubernetes: Option<Kube>,
    /// Chart name → version.
    pub components: BTreeMap<String, semver::Version>,
    /// Where it was seen: `forge`, `oci`.
    pub targets: BTreeSet<&'static str>,
    pub run: usize,
    pub at: DateTime<Utc>,
    /// A human deleted it (run after which, and whether the tag went too).
    pub withdrawn: Option<Withdrawal>,
    /// The violation about it being issued again was reported.
    pub reissue_reported: bool,
}

#[derive(Debug, Clone, Copy)]
pub struct Withdrawal {
    pub after_run: usize,
    pub tag_deleted: bool,
}

impl Published {
    /// `v1.34.7, ccm 2.34.2, csi 2.34.3`.
    pub fn describe(&self) -> String {
        let mut s = self
            .kubernetes
            .map_or("Kubernetes ?".to_string(), |k| k.to_string());
        for (c, v) in &self.components {
            s.push_str(&format!(", {c} {v}"));
        }
        s
    }
}

/// A pull request a human closed without merging (or whose branch they deleted).
#[derive(Debug, Clone)]
pub struct Declined {
    pub tenant: &'static str,
    pub pull: u64,
    pub proposal: Proposal,
    pub after_run: usize,
    pub how: &'static str,
}

/// A bot pull request a human merged.
#[derive(Debug, Clone)]
pub struct Merged {
    pub tenant: &'static str,
    pub pull: u64,
    pub kind: MergeMethod,
    pub after_run: usize,
    pub branch_kept: bool,
}

/// What one run was and cost.
#[derive(Debug, Clone, Default)]
pub struct RunRecord {
    pub index: usize,
    pub at: Option<DateTime<Utc>>,
    pub exit: i32,
    /// Forge calls of the bot (the forge trait: the same unit on both forges).
    pub reads: u64,
    pub writes: u64,
    pub by_method: BTreeMap<&'static str, u64>,
    /// The fake GitHub's own count of HTTP requests.
    pub http: Option<HttpCost>,
    /// Upstream HTTP requests (HTTP feed only).
    pub upstream_requests: usize,
    /// Series the run tracks, tenants configured, releases published before it.
    pub series: usize,
    pub tenants: usize,
    pub history: usize,
    /// Tags created by the run.
    pub new_tags: usize,
    pub faults: Vec<String>,
    pub millis: u128,
    pub error: Option<String>,
}

/// A Cluster upgrade pull request a human declined (closed without merging).
#[derive(Debug, Clone)]
pub struct UpgradeDeclined {
    pub tenant: &'static str,
    pub pull: u64,
    pub branch: String,
    /// The class the step proposed (the release it moved the Cluster to).
    pub class: String,
    pub at: DateTime<Utc>,
    pub after_run: usize,
}

/// A Cluster moved to another minor on its tenant's `main` (an upgrade step merged).
#[derive(Debug, Clone)]
pub struct ClusterMove {
    pub tenant: &'static str,
    /// `namespace-name`.
    pub cluster: String,
    pub from: u64,
    pub to: u64,
    pub at: DateTime<Utc>,
}

#[derive(Debug, Default)]
pub struct Ledger {
    pub published: BTreeMap<String, Published>,
    pub declined: Vec<Declined>,
    pub merged: Vec<Merged>,
    /// Tenant → commits humans pushed to its bot branch (content edits, not merges).
    pub human_commits: BTreeMap<&'static str, BTreeSet<String>>,
    pub runs: Vec<RunRecord>,
    pub upgrade_declined: Vec<UpgradeDeclined>,
    pub upgrade_merged: usize,
    pub cluster_moves: Vec<ClusterMove>,
    /// `(tenant, branch)` of the steps a person ticked on the dashboard → the run after which.
    pub ticked: BTreeMap<(&'static str, String), usize>,
    /// `(tenant, branch)` of the steps the dashboard listed without a tick after the latest run.
    pub waiting: BTreeSet<(&'static str, String)>,
}

impl Ledger {
    /// The commits of `on_branch` that people of `tenant` pushed (content edits, not merges).
    pub fn human_commits_on<'a>(&self, tenant: &str, on_branch: &'a [Commit]) -> Vec<&'a str> {
        on_branch
            .iter()
            .filter(|c| {
                self.human_commits
                    .get(tenant)
                    .is_some_and(|s| s.contains(&c.sha))
            })
            .map(|c| c.sha.as_str())
            .collect()
    }

    /// The newest release of `series` that is still published (not withdrawn).
    pub fn latest(&self, series: &str) -> Option<&Published> {
        self.published
            .values()
            .filter(|p| p.series == series && p.withdrawn.is_none())
            .max_by_key(|p| p.n)
    }

    /// Newest live release per series.
    pub fn latest_per_series(&self) -> BTreeMap<String, &Published> {
        let mut out: BTreeMap<String, &Published> = BTreeMap::new();
        for p in self.published.values().filter(|p| p.withdrawn.is_none()) {
            let e = out.entry(p.series.clone()).or_insert(p);
            if p.n > e.n {
                *e = p;
            }
        }
        out
    }

    /// Releases ever published.
    pub fn history(&self) -> usize {
        self.published.len()
    }

    /// The series prefix and number of a stable tag (the simulator's own reader).
    pub fn parse(tag: &str) -> Option<(String, u64)> {
        read::tag(tag).map(|(series, _, n)| (series, n))
    }

    /// The last merge of a tenant's bot pull request, if any.
    pub fn last_merge(&self, tenant: &str) -> Option<&Merged> {
        self.merged.iter().rev().find(|m| m.tenant == tenant)
    }
}
