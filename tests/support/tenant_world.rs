//! One tenant world, two forges: the same multi-run scenarios (releases published, people
//! merging, closing and editing between runs) against the local forge (real bare git) and the
//! fake GitHub (real HTTP). The bot talks through a [`Counting`] wrapper so every scenario can
//! say how many writes a run made; the people act through [`Humans`], the way each forge's
//! web UI would.

#![allow(dead_code)]

use std::rc::Rc;
use std::time::Duration;

use stackbot::config::{self, GithubForgeConfig, Loaded};
use stackbot::forge::counting::Counting;
use stackbot::forge::github::{GithubForge, RetryPolicy};
use stackbot::forge::local::{LocalForge, MergeMethod};
use stackbot::forge::{FileChanges, Forge, PullInfo, RepoRef};
use stackbot::tenants::{Options, TenantReport};

use super::fake_github::{FakeGithub, FakeOptions};

pub const BOT: (&str, &str) = ("stackbot", "stackbot@users.noreply.github.com");
pub const JANE: (&str, &str) = ("Jane Operator", "jane@example.org");
pub const STACKS: &str = "scs/cluster-stacks";
pub const BRANCH: &str = "stackbot/openstack-scs2";
const TOKEN: &str = "ghp_TENANTRUNStestTOKEN0123456789SECRET";

/// `(name, repository, files as (path, text))`.
pub type Tenant<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);

pub fn repo(s: &str) -> RepoRef {
    RepoRef::parse(s).unwrap()
}

/// A `ClusterStack` document as tenants write them (a comment, a trailing comment, flow list).
pub fn stack_doc(minor: &str, versions: &str) -> String {
    format!(
        "# production stacks\napiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: openstack-scs2-{} # one per minor\n  namespace: cluster\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"{minor}\"\n  channel: stable\n  autoSubscribe: false\n  noProvider: true\n  versions: {versions}  # pinned\n",
        minor.replace('.', "-")
    )
}

/// What people do between runs, on whichever forge the world runs on.
pub trait Humans {
    /// Jane commits `changes` on `branch` (created from the default branch if missing).
    fn commit(&self, r: &str, branch: &str, changes: &[(&str, Option<&str>)], msg: &str) -> String;
    /// A maintainer merges pull request `number` with one of the three buttons.
    fn merge(&self, r: &str, number: u64, method: MergeMethod) -> String;
    /// Jane presses "Update branch" on pull request `number`.
    fn update_branch(&self, r: &str, number: u64) -> String;
    /// Jane deletes a branch.
    fn delete_branch(&self, r: &str, branch: &str);
    /// Jane closes pull request `number` without merging.
    fn close(&self, r: &str, number: u64);
    /// The required checks of pull request `number` pass; returns whether auto-merge merged it.
    fn checks_pass(&self, r: &str, number: u64) -> bool;
}

/// The tenant world on one forge: `bot` is what stackbot talks to.
pub struct World<F: Forge> {
    pub bot: Counting<F>,
    pub humans: Box<dyn Humans>,
    pub loaded: Loaded,
    pub fake: Option<Rc<FakeGithub>>,
    _dir: tempfile::TempDir,
}

fn config_yaml(forge: &str, tenants: &[Tenant], extra: &str) -> String {
    let mut yaml = format!(
        "stacks:\n  - provider: openstack\n    name: scs2\n    templates: t\n    output: o\n    minors: [\"1.33\"]\n    node_image: {{url: \"https://img/{{version}}.qcow2\", name: \"ubuntu-capi-image-{{version}}\"}}\nforge:\n  repository: {STACKS}\n  committer: {{name: {}, email: {}}}\n{forge}tenants:\n",
        BOT.0, BOT.1
    );
    for (name, r, _) in tenants {
        yaml.push_str(&format!(
            "  - name: {name}\n    repository: {r}\n    files: [\"clusterstacks/*.yaml\"]\n    stacks: [openstack/scs2]\n{extra}"
        ));
    }
    yaml
}

fn load(dir: &tempfile::TempDir, yaml: &str) -> Loaded {
    let path = dir.path().join("stackbot.yaml");
    std::fs::write(&path, yaml).unwrap();
    config::load(&path).unwrap()
}

/// The people on the local forge: Jane's own identity on the same forge folder.
struct LocalHumans {
    jane: LocalForge,
    maintainer: LocalForge,
}

impl Humans for LocalHumans {
    fn commit(&self, r: &str, branch: &str, changes: &[(&str, Option<&str>)], msg: &str) -> String {
        let j = &self.jane;
        let head = j.branch_head(&repo(r), branch).unwrap();
        let parent = match &head {
            Some(h) => h.clone(),
            None => j.branch_head(&repo(r), "main").unwrap().unwrap(),
        };
        let c: FileChanges = changes
            .iter()
            .map(|(p, t)| (p.to_string(), t.map(|t| t.as_bytes().to_vec())))
            .collect();
        j.commit(&repo(r), branch, &parent, head.as_deref(), &c, msg)
            .unwrap()
    }

    fn merge(&self, r: &str, number: u64, method: MergeMethod) -> String {
        self.maintainer
            .merge_pull_with(&repo(r), number, method)
            .unwrap()
    }

    fn update_branch(&self, r: &str, number: u64) -> String {
        self.jane.update_pull_branch(&repo(r), number).unwrap()
    }

    fn delete_branch(&self, r: &str, branch: &str) {
        self.jane.delete_branch(&repo(r), branch).unwrap()
    }

    fn close(&self, r: &str, number: u64) {
        self.jane.close_pull(&repo(r), number).unwrap()
    }

    fn checks_pass(&self, r: &str, number: u64) -> bool {
        self.maintainer
            .checks_passed(&repo(r), number)
            .unwrap()
            .is_some()
    }
}

/// The people on the fake GitHub: its web UI.
struct GithubHumans(Rc<FakeGithub>);

impl Humans for GithubHumans {
    fn commit(&self, r: &str, branch: &str, changes: &[(&str, Option<&str>)], msg: &str) -> String {
        let c: Vec<(&str, Option<&[u8]>)> = changes
            .iter()
            .map(|(p, t)| (*p, t.map(str::as_bytes)))
            .collect();
        self.0.push_commit(r, branch, &c, msg, JANE)
    }

    fn merge(&self, r: &str, number: u64, method: MergeMethod) -> String {
        self.0.merge_pull_with(r, number, method)
    }

    fn update_branch(&self, r: &str, number: u64) -> String {
        self.0.update_branch(r, number, JANE)
    }

    fn delete_branch(&self, r: &str, branch: &str) {
        self.0.delete_branch(r, branch)
    }

    fn close(&self, r: &str, number: u64) {
        self.0.close_pull(r, number)
    }

    fn checks_pass(&self, r: &str, number: u64) -> bool {
        self.0.checks_pass(r, number)
    }
}

impl World<LocalForge> {
    /// Tenants on the local forge; each repository is seeded with its files.
    pub fn local(tenants: &[Tenant]) -> Self {
        Self::local_with(tenants, "")
    }

    /// [`World::local`], with `extra` YAML lines added to every tenant's entry.
    pub fn local_with(tenants: &[Tenant], extra: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("forge");
        let mut forge = LocalForge::new(&root, BOT.0, BOT.1);
        for (name, r, files) in tenants {
            let seed = dir.path().join("seed").join(name);
            for (p, text) in *files {
                let f = seed.join(p);
                std::fs::create_dir_all(f.parent().unwrap()).unwrap();
                std::fs::write(f, text).unwrap();
            }
            forge = forge.with_seed(repo(r), &seed);
            forge.ensure_repo(&repo(r), "main").unwrap();
        }
        let stacks_seed = dir.path().join("seed/stacks");
        std::fs::create_dir_all(&stacks_seed).unwrap();
        std::fs::write(stacks_seed.join("README.md"), "stacks\n").unwrap();
        let forge = forge.with_seed(repo(STACKS), &stacks_seed);
        forge.ensure_repo(&repo(STACKS), "main").unwrap();
        let loaded = load(&dir, &config_yaml("", tenants, extra));
        World {
            bot: Counting::new(forge),
            humans: Box::new(LocalHumans {
                jane: LocalForge::new(&root, JANE.0, JANE.1),
                maintainer: LocalForge::new(&root, "Maintainer", "maintainer@example.com"),
            }),
            loaded,
            fake: None,
            _dir: dir,
        }
    }
}

impl World<GithubForge> {
    /// Tenants on the fake GitHub.
    pub fn github(tenants: &[Tenant]) -> Self {
        Self::github_with(tenants, "")
    }

    /// [`World::github`], with `extra` YAML lines added to every tenant's entry.
    pub fn github_with(tenants: &[Tenant], extra: &str) -> Self {
        let fake = FakeGithub::start_with(FakeOptions::default().with_token(TOKEN));
        fake.create_repo(STACKS, "main", &[("README.md", b"stacks\n")]);
        for (_, r, files) in tenants {
            let list: Vec<(&str, &[u8])> = files.iter().map(|(p, t)| (*p, t.as_bytes())).collect();
            fake.create_repo(r, "main", &list);
        }
        let dir = tempfile::tempdir().unwrap();
        let forge_yaml = format!(
            "  kind: github\n  github: {{api_url: \"{}\", upload_url: \"{}\"}}\n",
            fake.api_url(),
            fake.upload_url()
        );
        let loaded = load(&dir, &config_yaml(&forge_yaml, tenants, extra));
        let cfg = GithubForgeConfig {
            api_url: fake.api_url(),
            upload_url: Some(fake.upload_url()),
            ..GithubForgeConfig::default()
        };
        let forge = GithubForge::new(
            &cfg,
            Some(TOKEN.into()),
            std::sync::Arc::new(stackbot::clock::SystemClock),
        )
        .unwrap()
        .with_committer(&loaded.config.forge.committer)
        .with_retry_policy(RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(20),
            max_rate_limit_wait: Duration::from_secs(1),
        });
        let fake = Rc::new(fake);
        World {
            bot: Counting::new(forge),
            humans: Box::new(GithubHumans(fake.clone())),
            loaded,
            fake: Some(fake),
            _dir: dir,
        }
    }
}

impl<F: Forge> World<F> {
    /// Publish a release of the cluster stacks the way `release` leaves it: tag, notes
    /// naming the Kubernetes version, `metadata.yaml`.
    pub fn publish(&self, tag: &str, kubernetes: &str) {
        let f = self.bot.inner();
        let stacks = repo(STACKS);
        let head = f.branch_head(&stacks, "main").unwrap().unwrap();
        f.create_tag(&stacks, tag, &head, tag).unwrap();
        let r = f
            .create_draft_release(&stacks, tag, tag, &format!("Kubernetes {kubernetes}"))
            .unwrap();
        let meta = format!(
            "apiVersion: metadata.clusterstack.x-k8s.io/v1alpha1\nversions:\n    clusterStack: {}\n    kubernetes: {kubernetes}\n    components:\n        clusterAddon: v1\n        nodeImage: v1\n",
            tag.rsplit('-').next().unwrap()
        );
        f.upload_asset(&stacks, r.id, "metadata.yaml", meta.as_bytes())
            .unwrap();
        f.publish_release(&stacks, r.id, true).unwrap();
    }

    pub fn ctx(&self) -> stackbot::pipeline::Context {
        stackbot::pipeline::Context::fixed(self.loaded.clone(), "2026-05-01".parse().unwrap())
    }

    /// One `stackbot tenants` run; the counters then hold what it cost.
    pub fn run(&self) -> Vec<TenantReport> {
        self.bot.reset();
        if let Some(f) = &self.fake {
            f.reset_counts();
        }
        stackbot::pipeline::tenants::run(&self.ctx(), &self.bot, &Options::default()).unwrap()
    }

    /// One run with what detection read (end of life, critical CVEs), as `release` runs it.
    pub fn run_with(&self, inputs: &stackbot::compliance::Inputs) -> Vec<TenantReport> {
        self.bot.reset();
        if let Some(f) = &self.fake {
            f.reset_counts();
        }
        // A detection that read these verdict inputs and found no stack × minor to report.
        let detected = stackbot::pipeline::detect::Detected {
            report: stackbot::resolve::Report {
                minors: Vec::new(),
                new_minors: Vec::new(),
                warnings: Vec::new(),
                unreadable: Vec::new(),
                snapshot: None,
            },
            end_of_life: Default::default(),
            compliance: inputs.clone(),
            last_known: None,
            sources: Vec::new(),
        };
        stackbot::pipeline::tenants::run_observed(
            &self.ctx(),
            &self.bot,
            &Options::default(),
            Some(&detected),
        )
        .unwrap()
        .0
    }

    /// Pull requests of any branch.
    pub fn pulls_of(&self, r: &str, branch: &str) -> Vec<PullInfo> {
        self.bot.inner().find_pulls(&repo(r), branch).unwrap()
    }

    /// Writes of the last run, with the per-method tally for messages.
    pub fn writes(&self) -> (u64, String) {
        (self.bot.writes(), format!("{:?}", self.bot.by_method()))
    }

    /// What the last run cost, for the record: forge calls, and HTTP requests on GitHub.
    pub fn cost(&self) -> String {
        let mut s = format!(
            "{}: {} forge calls ({} writes)",
            self.bot.inner().kind(),
            self.bot.total(),
            self.bot.writes()
        );
        if let Some(f) = &self.fake {
            let c = f.counts();
            s.push_str(&format!(
                ", {} HTTP requests ({} writes)",
                c.total(),
                c.writes
            ));
        }
        s
    }

    pub fn pulls(&self, r: &str) -> Vec<PullInfo> {
        self.bot.inner().find_pulls(&repo(r), BRANCH).unwrap()
    }

    pub fn head(&self, r: &str, branch: &str) -> Option<String> {
        self.bot.inner().branch_head(&repo(r), branch).unwrap()
    }

    pub fn file(&self, r: &str, branch: &str, path: &str) -> String {
        let f = self.bot.inner();
        let head = f.branch_head(&repo(r), branch).unwrap().unwrap();
        String::from_utf8(f.read_file(&repo(r), &head, path).unwrap().unwrap()).unwrap()
    }

    pub fn comments(&self, r: &str, number: u64) -> Vec<String> {
        self.bot
            .inner()
            .list_comments(&repo(r), number)
            .unwrap()
            .into_iter()
            .map(|c| c.body)
            .collect()
    }
}

/// The report line of a tenant.
pub fn report<'a>(reports: &'a [TenantReport], tenant: &str) -> &'a TenantReport {
    reports
        .iter()
        .find(|r| r.tenant == tenant)
        .unwrap_or_else(|| panic!("no report for {tenant}: {reports:?}"))
}
