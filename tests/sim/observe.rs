//! The state of the world as the checks see it, read right before and right after each run
//! (never through the bot's metered forge).

use std::collections::BTreeMap;

use super::forge::{Backend, Commit, Files, PrState, Pull, Release, commits_between};
use super::read;
use super::tenants::{BRANCH, Proposal, Tenant, UPGRADE_BRANCH};

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

/// A tenant's Clusters and the bot's upgrade steps for them (issue 22).
#[derive(Debug, Clone, Default)]
pub struct UpgradeObs {
    /// The Clusters on `main`, read from the cluster file's bytes.
    pub clusters: Vec<read::Cluster>,
    /// Pull requests of upgrade branches, in number order, with the tenant's files at the
    /// branch head for the open ones.
    pub pulls: Vec<(Pull, Option<Files>)>,
}

impl UpgradeObs {
    /// The open upgrade pull requests.
    pub fn open(&self) -> impl Iterator<Item = &(Pull, Option<Files>)> {
        self.pulls.iter().filter(|(p, _)| p.state == PrState::Open)
    }

    /// The Cluster `namespace-name` (as an upgrade branch names it).
    pub fn cluster(&self, id: &str) -> Option<&read::Cluster> {
        self.clusters
            .iter()
            .find(|c| format!("{}-{}", c.namespace, c.name) == id)
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
    /// Tenants with `policy.upgrade` → their Clusters and upgrade pull requests.
    pub upgrades: BTreeMap<&'static str, UpgradeObs>,
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

/// Read a tenant's Clusters and upgrade pull requests.
pub fn upgrades(b: &dyn Backend, t: &Tenant) -> Option<UpgradeObs> {
    let file = t.cluster_file?;
    let main = b.head(&t.repo, "main")?;
    let clusters = read::clusters(&b.file_at(&t.repo, &main, file).unwrap_or_default());
    let pulls = b
        .pulls(&t.repo)
        .into_iter()
        .filter(|p| p.head.starts_with(UPGRADE_BRANCH))
        .map(|p| {
            let files = (p.state == PrState::Open)
                .then(|| b.head(&t.repo, &p.head))
                .flatten()
                .map(|h| t.managed(&b.files_at(&t.repo, &h)));
            (p, files)
        })
        .collect();
    Some(UpgradeObs { clusters, pulls })
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
        upgrades: tenants
            .iter()
            .filter(|t| t.upgrade.is_some())
            .filter_map(|t| Some((t.name, upgrades(b, t)?)))
            .collect(),
    }
}
