//! The tenants of a world: their GitOps repositories, how each team treats the bot's pull
//! requests (its persona), and what a tenant file *proposes* — the versions its ClusterStack
//! resources list and the classes its Clusters use — read with a real YAML parser, so the
//! checks compare meaning, not bytes.

use std::collections::BTreeMap;

use super::forge::{Files, MergeMethod};
use super::read;

/// A Kubernetes minor of the stack (`1.33` → 33): the simulator keys tenant proposals by it.
pub type Minor = u64;

/// How a team handles the bot's pull requests.
#[derive(Debug, Clone)]
pub struct Persona {
    /// Merge buttons this team uses, with weights.
    pub merge: &'static [(MergeMethod, u32)],
    /// Hours from a pull request being opened to the team acting on it.
    pub delay_hours: (i64, i64),
    /// Probability of pressing "Update branch" before merging.
    pub update_branch: f64,
    /// Probability of deleting the branch after merging (GitHub's auto-delete setting).
    pub delete_branch: f64,
    /// Probability of declining (closing) a pull request.
    pub decline: f64,
    /// Probability of pushing an own commit to the bot's branch before merging.
    pub human_commit: f64,
    /// Mean days between unrelated commits on `main` (Renovate, Flux, people).
    pub renovate_days: f64,
    /// Share of those commits that touch the tenant's ClusterStack file elsewhere.
    pub renovate_same_file: f64,
}

/// A tenant repository and its team.
#[derive(Debug, Clone)]
pub struct Tenant {
    pub name: &'static str,
    pub repo: String,
    /// The file holding the ClusterStack resources.
    pub stack_file: &'static str,
    /// `files:` glob of the configuration.
    pub files_glob: &'static str,
    /// A file with `Cluster` resources (`clusters:` opt-in), if the team uses it.
    pub cluster_file: Option<&'static str>,
    /// `policy.minor: ignore`.
    pub ignore_minors: bool,
    /// The minors its ClusterStack resources name at first.
    pub minors: &'static [u64],
    pub persona: Persona,
    /// Day of the simulation the tenant is added on (0: from the start).
    pub joins_on_day: i64,
    /// `policy.upgrade` (issue 22): the tenant's Clusters, on old minors, that the bot may move
    /// one minor at a time. Tenants with it draw their people from their own generator, so the
    /// tenants before them keep their seeded sequence.
    pub upgrade: Option<Upgrades>,
}

/// `policy.upgrade.clusters`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpgradeMode {
    PullRequest,
    Approval,
    Ignore,
}

impl UpgradeMode {
    pub fn yaml(self) -> &'static str {
        match self {
            UpgradeMode::PullRequest => "pull-request",
            UpgradeMode::Approval => "approval",
            UpgradeMode::Ignore => "ignore",
        }
    }
}

/// A tenant's Cluster upgrades: its policy, its Clusters and how its team treats the steps.
#[derive(Debug, Clone)]
pub struct Upgrades {
    pub mode: UpgradeMode,
    /// `before_end_of_life_days` (unset: a step as soon as the next minor has a release).
    pub before_eol_days: Option<u32>,
    /// The Clusters of `cluster_file` at first (namespace `cluster`): name → minor.
    pub clusters: &'static [(&'static str, u64)],
    /// Hours from an upgrade pull request opening to the team merging it.
    pub merge_hours: (i64, i64),
    /// Hours from a step appearing on the dashboard to a person ticking it (`approval`).
    pub tick_hours: (i64, i64),
    /// The team declines the first upgrade pull request of this Cluster (it waits for the next
    /// release of the minor), and merges the ones after it.
    pub decline_first: Option<&'static str>,
}

/// The namespace of the simulated Clusters.
pub const CLUSTER_NAMESPACE: &str = "cluster";
/// Branches of Cluster upgrade steps start with this.
pub const UPGRADE_BRANCH: &str = "stackbot/upgrade-";

pub const STACK: &str = "openstack/scs2";
pub const BRANCH: &str = "stackbot/openstack-scs2";

/// The tenants of every world: the five who follow releases (three from the start, two joining
/// during the year), then the three whose Clusters run old minors (issue 22). In this order:
/// a tenant's index seeds its acts, so the later ones come after the earlier ones.
pub fn roster() -> Vec<Tenant> {
    let mut all = release_tenants();
    all.extend(joining_tenants());
    all.extend(upgrade_tenants());
    all
}

/// Tenants who follow releases from the start.
fn release_tenants() -> Vec<Tenant> {
    use MergeMethod::*;
    vec![
        Tenant {
            name: "acme",
            repo: "acme/gitops".into(),
            stack_file: "clusters/clusterstack.yaml",
            files_glob: "clusters/*.yaml",
            cluster_file: None,
            ignore_minors: false,
            minors: &[33],
            persona: Persona {
                merge: &[(Squash, 8), (Merge, 1)],
                delay_hours: (2, 30),
                update_branch: 0.1,
                delete_branch: 0.8,
                decline: 0.05,
                human_commit: 0.05,
                renovate_days: 9.0,
                renovate_same_file: 0.1,
            },
            joins_on_day: 0,
            upgrade: None,
        },
        Tenant {
            name: "globex",
            repo: "globex/platform".into(),
            stack_file: "clusterstacks/prod/scs2.yaml",
            files_glob: "clusterstacks/**/*.yaml",
            cluster_file: None,
            ignore_minors: true,
            minors: &[32, 33],
            persona: Persona {
                merge: &[(Merge, 6), (Squash, 1)],
                delay_hours: (24, 150),
                update_branch: 0.5,
                delete_branch: 0.2,
                decline: 0.1,
                human_commit: 0.1,
                renovate_days: 6.0,
                renovate_same_file: 0.2,
            },
            joins_on_day: 0,
            upgrade: None,
        },
        Tenant {
            name: "initech",
            repo: "initech/fleet".into(),
            stack_file: "platform/clusterstacks.yaml",
            files_glob: "platform/clusterstacks.yaml",
            cluster_file: Some("platform/clusters/prod.yaml"),
            ignore_minors: false,
            minors: &[33],
            persona: Persona {
                merge: &[(Rebase, 6), (Squash, 1)],
                delay_hours: (2, 72),
                update_branch: 0.2,
                delete_branch: 0.5,
                decline: 0.15,
                human_commit: 0.15,
                renovate_days: 4.0,
                renovate_same_file: 0.3,
            },
            joins_on_day: 0,
            upgrade: None,
        },
    ]
}

/// Tenants who follow releases and join during the year.
fn joining_tenants() -> Vec<Tenant> {
    use MergeMethod::*;
    vec![
        Tenant {
            name: "umbrella",
            repo: "umbrella/gitops".into(),
            stack_file: "gitops/cs.yaml",
            files_glob: "gitops/*.yaml",
            cluster_file: None,
            ignore_minors: false,
            minors: &[34],
            persona: Persona {
                merge: &[(Squash, 3), (Rebase, 1), (Merge, 1)],
                delay_hours: (4, 96),
                update_branch: 0.3,
                delete_branch: 0.0,
                decline: 0.1,
                human_commit: 0.1,
                renovate_days: 7.0,
                renovate_same_file: 0.2,
            },
            joins_on_day: 100,
            upgrade: None,
        },
        Tenant {
            name: "hooli",
            repo: "hooli/k8s".into(),
            stack_file: "k8s/cs.yaml",
            files_glob: "k8s/cs.yaml",
            cluster_file: None,
            ignore_minors: true,
            minors: &[34],
            persona: Persona {
                merge: &[(Merge, 2), (Rebase, 1)],
                delay_hours: (12, 200),
                update_branch: 0.4,
                delete_branch: 0.5,
                decline: 0.25,
                human_commit: 0.05,
                renovate_days: 5.0,
                renovate_same_file: 0.1,
            },
            joins_on_day: 220,
            upgrade: None,
        },
    ]
}

/// Tenants whose Clusters run old minors and get upgrade steps (issue 22): by pull request,
/// after a person's approval on the dashboard, or not at all.
fn upgrade_tenants() -> Vec<Tenant> {
    use MergeMethod::*;
    vec![
        Tenant {
            name: "stark",
            repo: "stark/clusters".into(),
            stack_file: "stacks/scs2.yaml",
            files_glob: "stacks/*.yaml",
            cluster_file: Some("clusters/fleet.yaml"),
            ignore_minors: true,
            minors: &[31, 32],
            persona: Persona {
                merge: &[(Squash, 3), (Merge, 1)],
                delay_hours: (4, 72),
                update_branch: 0.1,
                delete_branch: 0.5,
                decline: 0.0,
                human_commit: 0.0,
                renovate_days: 10.0,
                renovate_same_file: 0.1,
            },
            joins_on_day: 0,
            upgrade: Some(Upgrades {
                mode: UpgradeMode::PullRequest,
                before_eol_days: Some(60),
                clusters: &[("prod", 31), ("edge", 32)],
                merge_hours: (6, 120),
                tick_hours: (0, 0),
                decline_first: Some("edge"),
            }),
        },
        Tenant {
            name: "tyrell",
            repo: "tyrell/platform".into(),
            stack_file: "gitops/clusterstacks.yaml",
            files_glob: "gitops/clusterstacks.yaml",
            cluster_file: Some("gitops/clusters.yaml"),
            ignore_minors: true,
            minors: &[32],
            persona: Persona {
                merge: &[(Merge, 2), (Rebase, 1)],
                delay_hours: (12, 96),
                update_branch: 0.2,
                delete_branch: 0.3,
                decline: 0.0,
                human_commit: 0.0,
                renovate_days: 8.0,
                renovate_same_file: 0.1,
            },
            joins_on_day: 0,
            upgrade: Some(Upgrades {
                mode: UpgradeMode::Approval,
                before_eol_days: Some(90),
                clusters: &[("prod", 32)],
                merge_hours: (12, 96),
                tick_hours: (24, 192),
                decline_first: None,
            }),
        },
        Tenant {
            name: "wonka",
            repo: "wonka/infra".into(),
            stack_file: "cs.yaml",
            files_glob: "cs.yaml",
            cluster_file: Some("clusters.yaml"),
            ignore_minors: true,
            minors: &[31],
            persona: Persona {
                merge: &[(Squash, 1)],
                delay_hours: (6, 72),
                update_branch: 0.0,
                delete_branch: 1.0,
                decline: 0.0,
                human_commit: 0.0,
                renovate_days: 15.0,
                renovate_same_file: 0.0,
            },
            joins_on_day: 0,
            upgrade: Some(Upgrades {
                mode: UpgradeMode::Ignore,
                before_eol_days: None,
                clusters: &[("prod", 31)],
                merge_hours: (6, 72),
                tick_hours: (0, 0),
                decline_first: None,
            }),
        },
    ]
}

/// A Cluster of the simulated stack on `1.<minor>`, at the first release of the minor.
fn cluster_doc(name: &str, minor: u64) -> String {
    format!(
        "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: {name}\n  namespace: {CLUSTER_NAMESPACE}\nspec:\n  topology:\n    class: openstack-scs2-1-{minor}-v1\n    version: v1.{minor}.0\n"
    )
}

fn stack_doc(minor: u64, header: &str) -> String {
    stack_doc_with(minor, header, &[])
}

/// A ClusterStack resource for `1.<minor>` listing `versions` (`v3`, …).
fn stack_doc_with(minor: u64, header: &str, versions: &[u64]) -> String {
    let list = versions
        .iter()
        .map(|n| format!("\"v{n}\""))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{header}apiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: openstack-scs2-1-{minor}\n  namespace: cluster\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"1.{minor}\"\n  channel: stable\n  autoSubscribe: false\n  noProvider: true\n  versions: [{list}]\n"
    )
}

impl Tenant {
    /// The repository's files when the tenant joins.
    pub fn initial_files(&self) -> Files {
        let mut f = Files::new();
        let mut text = format!(
            "# {} follows openstack/scs2; stackbot proposes new releases here.\n",
            self.name
        );
        for (i, m) in self.minors.iter().enumerate() {
            if i > 0 {
                text.push_str("---\n");
            }
            text.push_str(&stack_doc(*m, ""));
        }
        f.insert(self.stack_file.into(), text.into_bytes());
        if let (Some(c), Some(u)) = (self.cluster_file, &self.upgrade) {
            let docs: Vec<String> = u
                .clusters
                .iter()
                .map(|(name, m)| cluster_doc(name, *m))
                .collect();
            f.insert(c.into(), docs.join("---\n").into_bytes());
        } else if let Some(c) = self.cluster_file {
            let m = self.minors[0];
            f.insert(
                c.into(),
                format!(
                    "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: prod-1\n  namespace: cluster\nspec:\n  topology:\n    class: openstack-scs2-1-{m}-v1\n    version: v1.{m}.0\n"
                )
                .into_bytes(),
            );
        }
        f.insert(
            "README.md".into(),
            format!("# {} GitOps\n", self.name).into_bytes(),
        );
        f.insert(
            "apps/podinfo.yaml".into(),
            b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: podinfo\nspec:\n  template:\n    spec:\n      containers:\n      - name: podinfo\n        image: ghcr.io/stefanprodan/podinfo:6.7.0\n".to_vec(),
        );
        f
    }

    /// The tenant's ClusterStack file as a person writes it by hand: one resource per minor,
    /// listing exactly `stacks` (pinning back, moving to another minor).
    pub fn stack_file_by_hand(&self, stacks: &BTreeMap<Minor, Vec<u64>>) -> String {
        let mut text = format!("# {} follows openstack/scs2; edited by hand.\n", self.name);
        for (i, (m, versions)) in stacks.iter().enumerate() {
            if i > 0 {
                text.push_str("---\n");
            }
            text.push_str(&stack_doc_with(*m, "", versions));
        }
        text
    }

    /// The tenant's entry in `stackbot.yaml`.
    pub fn config_yaml(&self) -> String {
        let mut s = format!(
            "  - name: {}\n    repository: {}\n    files: [\"{}\"]\n    stacks: [{STACK}]\n",
            self.name, self.repo, self.files_glob
        );
        if let Some(c) = self.cluster_file {
            s.push_str(&format!("    clusters: [\"{c}\"]\n"));
        }
        if self.ignore_minors || self.upgrade.is_some() {
            s.push_str("    policy:\n");
        }
        if self.ignore_minors {
            s.push_str("      minor: ignore\n");
        }
        if let Some(u) = &self.upgrade {
            s.push_str(&format!(
                "      upgrade:\n        clusters: {}\n",
                u.mode.yaml()
            ));
            if let Some(d) = u.before_eol_days {
                s.push_str(&format!("        before_end_of_life_days: {d}\n"));
            }
        }
        s
    }

    /// The files a proposal is read from.
    pub fn managed(&self, files: &Files) -> Files {
        files
            .iter()
            .filter(|(p, _)| {
                p.as_str() == self.stack_file
                    || Some(p.as_str()) == self.cluster_file
                    || (p.ends_with(".yaml") && glob_match(self.files_glob, p))
            })
            .map(|(p, b)| (p.clone(), b.clone()))
            .collect()
    }
}

/// Compiled once per glob and thread: every observation asks about every file of every
/// tenant, and compiling a glob (a regular expression) costs more than the rest of reading.
fn glob_match(glob: &str, path: &str) -> bool {
    thread_local! {
        static COMPILED: std::cell::RefCell<BTreeMap<String, Option<globset::GlobMatcher>>> =
            Default::default();
    }
    COMPILED.with_borrow_mut(|c| {
        c.entry(glob.to_string())
            .or_insert_with(|| globset::Glob::new(glob).ok().map(|g| g.compile_matcher()))
            .as_ref()
            .is_some_and(|m| m.is_match(path))
    })
}

/// What a tenant's files say: per minor, the stable versions its ClusterStack lists; per
/// Cluster, its class.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Proposal {
    pub stacks: BTreeMap<Minor, Vec<u64>>,
    pub clusters: BTreeMap<String, String>,
}

impl Proposal {
    /// Read every ClusterStack of openstack/scs2 and every Cluster in `files`.
    pub fn of(files: &Files) -> Proposal {
        let mut p = Proposal::default();
        for (path, bytes) in files {
            let text = String::from_utf8_lossy(bytes);
            for doc in text.split("\n---\n") {
                let Ok(v) = yaml_serde::from_str::<yaml_serde::Value>(doc) else {
                    continue;
                };
                match v.get("kind").and_then(|k| k.as_str()) {
                    Some("ClusterStack") => {
                        let spec = &v["spec"];
                        if spec["name"].as_str() != Some("scs2") {
                            continue;
                        }
                        let Some(minor) = spec["kubernetesVersion"].as_str().and_then(read::minor)
                        else {
                            continue;
                        };
                        let mut list: Vec<u64> = spec["versions"]
                            .as_sequence()
                            .into_iter()
                            .flatten()
                            .filter_map(|x| x.as_str())
                            .filter_map(read::stable)
                            .collect();
                        list.sort();
                        p.stacks.entry(minor).or_default().extend(list);
                    }
                    Some("Cluster") => {
                        let name = v["metadata"]["name"].as_str().unwrap_or_default();
                        let class = v["spec"]["topology"]["class"].as_str().unwrap_or_default();
                        p.clusters
                            .insert(format!("{path}:{name}"), class.to_string());
                    }
                    _ => {}
                }
            }
        }
        p
    }

    /// The newest stable release number the tenant lists for `minor`.
    pub fn newest(&self, minor: Minor) -> Option<u64> {
        self.stacks
            .get(&minor)
            .and_then(|l| l.iter().max().copied())
    }

    /// The release a Cluster's class names (`openstack-scs2-1-33-v2` → minor 33, number 2).
    pub fn cluster_release(class: &str) -> Option<(Minor, u64)> {
        read::tag(class).map(|(_, m, n)| (m, n))
    }

    /// Whether this proposal lists at least what `other` lists, minor by minor and cluster by
    /// cluster (a pull request that brings `other` is done once the base says this).
    pub fn covers(&self, other: &Proposal) -> bool {
        other.stacks.iter().all(|(m, l)| {
            l.iter()
                .max()
                .is_none_or(|want| self.newest(*m).is_some_and(|have| have >= *want))
        }) && other.clusters.iter().all(|(k, c)| {
            let want = Self::cluster_release(c).map(|r| r.1);
            let have = self
                .clusters
                .get(k)
                .and_then(|c| Self::cluster_release(c))
                .map(|r| r.1);
            match (want, have) {
                (Some(w), Some(h)) => h >= w,
                (None, _) => true,
                (Some(_), None) => false,
            }
        })
    }

    /// A short description (`1.33 [v2, v3]; prod-1 → …-v3`).
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .stacks
            .iter()
            .map(|(m, l)| {
                format!(
                    "1.{m} [{}]",
                    l.iter()
                        .map(|n| format!("v{n}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
            .collect();
        for (k, c) in &self.clusters {
            parts.push(format!("{} → {c}", k.rsplit(':').next().unwrap_or(k)));
        }
        parts.join("; ")
    }
}
