//! The state of the world as the checks see it, read right before and right after each run
//! (never through the bot's metered forge).

use std::collections::BTreeMap;

use super::forge::{Backend, Commit, Files, PrState, Pull, Release, commits_between};
use super::tenants::{BRANCH, Proposal, Tenant};

pub const STACKS: &str = "scs/cluster-stacks";

/// One tenant repository.
#[derive(Debug, Clone)]
pub struct TenantObs {
    pub main: String,
    /// The tenant's ClusterStack and Cluster files on `main`.
    pub main_files: Files,
    pub branch: Option<String>,
    /// The same files at the bot branch's head.
    pub branch_files: Option<Files>,
    /// Commits on the bot branch that `main` does not have, oldest first.
    pub branch_commits: Vec<Commit>,
    /// Pull requests of the bot branch, in number order.
    pub pulls: Vec<Pull>,
    /// Comments on the three newest of those pull requests: number → `(id, body)`.
    pub comments: BTreeMap<u64, Vec<(u64, String)>>,
}

impl TenantObs {
    pub fn main_proposal(&self) -> Proposal {
        Proposal::of(&self.main_files)
    }

    pub fn branch_proposal(&self) -> Option<Proposal> {
        self.branch_files.as_ref().map(Proposal::of)
    }

    pub fn open_pull(&self) -> Option<&Pull> {
        self.pulls.iter().rev().find(|p| p.state == PrState::Open)
    }

    pub fn latest_pull(&self) -> Option<&Pull> {
        self.pulls.last()
    }
}

/// The whole world.
#[derive(Debug, Clone, Default)]
pub struct Observation {
    /// Tags of the cluster-stacks repository → commit.
    pub tags: BTreeMap<String, String>,
    pub releases: Vec<Release>,
    /// Tags of the OCI repository (when it is a target).
    pub oci_tags: Vec<String>,
    pub tenants: BTreeMap<&'static str, TenantObs>,
}

impl Observation {
    /// Published (not draft) releases by tag.
    pub fn published(&self) -> BTreeMap<&str, &Release> {
        self.releases
            .iter()
            .filter(|r| !r.draft)
            .map(|r| (r.tag.as_str(), r))
            .collect()
    }
}

/// Read a tenant repository.
pub fn tenant(b: &dyn Backend, t: &Tenant) -> Option<TenantObs> {
    let main = b.head(&t.repo, "main")?;
    let main_files = t.managed(&b.files_at(&t.repo, &main));
    let branch = b.head(&t.repo, BRANCH);
    let branch_files = branch.as_ref().map(|h| t.managed(&b.files_at(&t.repo, h)));
    let branch_commits = branch
        .as_ref()
        .map(|h| commits_between(b, &t.repo, &main, h))
        .unwrap_or_default();
    let pulls: Vec<Pull> = b
        .pulls(&t.repo)
        .into_iter()
        .filter(|p| p.head == BRANCH)
        .collect();
    // Comments of the newest pull requests only: older ones are settled, and reading every
    // comment of every pull request twice per run would dominate the simulation's cost.
    let comments = pulls
        .iter()
        .rev()
        .take(3)
        .map(|p| (p.number, b.comments(&t.repo, p.number)))
        .collect();
    Some(TenantObs {
        main,
        main_files,
        branch,
        branch_files,
        branch_commits,
        pulls,
        comments,
    })
}

/// Read everything.
pub fn observe(b: &dyn Backend, tenants: &[&Tenant], oci_tags: Vec<String>) -> Observation {
    Observation {
        tags: b.tags(STACKS),
        releases: b.releases(STACKS),
        oci_tags,
        tenants: tenants
            .iter()
            .filter_map(|t| Some((t.name, tenant(b, t)?)))
            .collect(),
    }
}
