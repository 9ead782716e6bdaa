//! Tenant propagation on the fake GitHub (real HTTP on loopback): a patch release, a new
//! minor, a tenant already current, a human commit on the bot branch, a malformed file among
//! good tenants, and re-runs that send zero write requests.

use crate::support;

use std::time::Duration;

use stackbot::config::{self, GithubForgeConfig, Loaded};
use stackbot::forge::github::{GithubForge, RetryPolicy};
use stackbot::forge::{Forge, PullState, RepoRef};
use stackbot::tenants::{Action, Options, Outcome, TenantReport};
use support::fake_github::{FakeGithub, FakeOptions};

const TOKEN: &str = "ghp_TENANTStestTOKEN0123456789SECRET";

fn repo(s: &str) -> RepoRef {
    RepoRef::parse(s).unwrap()
}

fn stack_doc(minor: &str, versions: &str) -> String {
    format!(
        "# production stacks\napiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: openstack-scs2-{} # one per minor\n  namespace: cluster\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"{minor}\"\n  autoSubscribe: false\n  noProvider: true\n  versions: {versions}  # pinned\n",
        minor.replace('.', "-")
    )
}

/// `(name, repository, files as (path, text))`.
type Tenant<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);

struct World {
    _dir: tempfile::TempDir,
    fake: FakeGithub,
    forge: GithubForge,
    loaded: Loaded,
}

impl World {
    fn new(tenants: &[Tenant]) -> World {
        let fake = FakeGithub::start_with(FakeOptions::default().with_token(TOKEN));
        fake.create_repo("scs/cluster-stacks", "main", &[("README.md", b"stacks\n")]);
        let mut yaml = format!(
            "stacks:\n  - provider: openstack\n    name: scs2\n    templates: t\n    output: o\n    minors: [\"1.33\"]\n    node_image: {{url: \"https://img/{{version}}.qcow2\", name: \"ubuntu-capi-image-{{version}}\"}}\nforge:\n  kind: github\n  repository: scs/cluster-stacks\n  github: {{api_url: \"{}\", upload_url: \"{}\"}}\ntenants:\n",
            fake.api_url(),
            fake.upload_url()
        );
        for (name, r, files) in tenants {
            let list: Vec<(&str, &[u8])> = files.iter().map(|(p, t)| (*p, t.as_bytes())).collect();
            fake.create_repo(r, "main", &list);
            yaml.push_str(&format!(
                "  - name: {name}\n    repository: {r}\n    files: [\"clusterstacks/*.yaml\"]\n    stacks: [openstack/scs2]\n"
            ));
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stackbot.yaml");
        std::fs::write(&path, yaml).unwrap();
        let loaded = config::load(&path).unwrap();
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
        World {
            _dir: dir,
            fake,
            forge,
            loaded,
        }
    }

    fn publish(&self, tag: &str, kubernetes: &str) {
        let stacks = repo("scs/cluster-stacks");
        let head = self.forge.branch_head(&stacks, "main").unwrap().unwrap();
        self.forge.create_tag(&stacks, tag, &head, tag).unwrap();
        let r = self
            .forge
            .create_draft_release(&stacks, tag, tag, &format!("Kubernetes {kubernetes}"))
            .unwrap();
        let meta = format!(
            "apiVersion: metadata.clusterstack.x-k8s.io/v1alpha1\nversions:\n    clusterStack: v1\n    kubernetes: {kubernetes}\n    components:\n        clusterAddon: v1\n        nodeImage: v1\n"
        );
        self.forge
            .upload_asset(&stacks, r.id, "metadata.yaml", meta.as_bytes())
            .unwrap();
        self.forge.publish_release(&stacks, r.id, true).unwrap();
    }

    fn run(&self) -> Vec<TenantReport> {
        self.fake.reset_counts();
        stackbot::pipeline::tenants::run(
            &stackbot::pipeline::Context::fixed(self.loaded.clone(), "2026-05-01".parse().unwrap()),
            &self.forge,
            &Options::default(),
        )
        .unwrap()
    }

    fn file_on(&self, r: &str, branch: &str, path: &str) -> String {
        let head = self.forge.branch_head(&repo(r), branch).unwrap().unwrap();
        String::from_utf8(
            self.forge
                .read_file(&repo(r), &head, path)
                .unwrap()
                .unwrap(),
        )
        .unwrap()
    }
}

fn outcome<'a>(reports: &'a [TenantReport], tenant: &str) -> &'a TenantReport {
    reports.iter().find(|r| r.tenant == tenant).unwrap()
}

const BRANCH: &str = "stackbot/openstack-scs2";

#[test]
fn patch_then_minor_then_human_commit_on_the_fake_github() {
    let acme_file = stack_doc("1.33", "[v1, v2]");
    let w = World::new(&[
        (
            "acme",
            "acme/gitops",
            &[("clusterstacks/prod.yaml", &acme_file)],
        ),
        (
            "beta",
            "beta/gitops",
            &[("clusterstacks/a.yaml", &stack_doc("1.33", "[v2, v3]"))],
        ),
    ]);
    w.publish("openstack-scs2-1-33-v3", "v1.33.5");

    // Patch release: acme gets a PR, beta is already current.
    let r = w.run();
    assert_eq!(outcome(&r, "acme").outcome, Outcome::Opened, "{r:?}");
    assert_eq!(
        (outcome(&r, "beta").action, &outcome(&r, "beta").outcome),
        (Action::None, &Outcome::Unchanged)
    );
    assert_eq!(
        w.file_on("acme/gitops", BRANCH, "clusterstacks/prod.yaml"),
        acme_file.replace("[v1, v2]", "[v2, v3]")
    );
    assert_eq!(
        w.forge.branch_head(&repo("beta/gitops"), BRANCH).unwrap(),
        None
    );

    // Re-run: zero write requests on the wire.
    w.run();
    assert_eq!(w.fake.counts().writes, 0, "{:?}", w.fake.counts().by_route);

    // New minor: the same PR is updated with a copied document.
    w.publish("openstack-scs2-1-34-v1", "v1.34.2");
    let r = w.run();
    assert_eq!(outcome(&r, "acme").outcome, Outcome::Updated, "{r:?}");
    assert_eq!(
        w.file_on("acme/gitops", BRANCH, "clusterstacks/prod.yaml"),
        format!(
            "{}---\n{}",
            acme_file.replace("[v1, v2]", "[v2, v3]"),
            stack_doc("1.34", "[v1]")
        )
    );
    let pulls = w.forge.find_pulls(&repo("acme/gitops"), BRANCH).unwrap();
    assert_eq!(pulls.len(), 1);
    w.run();
    assert_eq!(w.fake.counts().writes, 0, "{:?}", w.fake.counts().by_route);

    // A human pushes to the bot branch: the bot comments once and never pushes over it.
    let human = w.fake.push_commit(
        "acme/gitops",
        BRANCH,
        &[("clusterstacks/notes.txt", Some(b"tested\n".as_slice()))],
        "note",
        ("Jane Operator", "jane@example.org"),
    );
    w.publish("openstack-scs2-1-33-v4", "v1.33.6");
    let r = w.run();
    assert_eq!(outcome(&r, "acme").outcome, Outcome::Blocked, "{r:?}");
    assert_eq!(
        w.forge
            .branch_head(&repo("acme/gitops"), BRANCH)
            .unwrap()
            .as_deref(),
        Some(human.as_str())
    );
    let pr = &w.forge.find_pulls(&repo("acme/gitops"), BRANCH).unwrap()[0];
    assert_eq!(pr.state, PullState::Open);
    assert_eq!(
        w.forge
            .list_comments(&repo("acme/gitops"), pr.number)
            .unwrap()
            .len(),
        1
    );
    w.run();
    assert_eq!(w.fake.counts().writes, 0, "{:?}", w.fake.counts().by_route);
}

#[test]
fn a_malformed_tenant_file_fails_only_its_tenant_on_the_fake_github() {
    let good = stack_doc("1.33", "[v2]");
    let w = World::new(&[
        ("good", "good/gitops", &[("clusterstacks/a.yaml", &good)]),
        (
            "broken",
            "broken/gitops",
            &[("clusterstacks/a.yaml", "kind: [\n")],
        ),
    ]);
    w.publish("openstack-scs2-1-33-v3", "v1.33.5");
    let r = w.run();
    assert_eq!(outcome(&r, "good").outcome, Outcome::Opened);
    assert_eq!(outcome(&r, "broken").outcome, Outcome::Failed);
    assert!(
        outcome(&r, "broken")
            .error
            .as_deref()
            .unwrap()
            .contains("clusterstacks/a.yaml")
    );
    assert!(
        w.forge
            .find_pulls(&repo("broken/gitops"), BRANCH)
            .unwrap()
            .is_empty()
    );
}

/// Issue 15, defect 1: GitHub answers `307` to writes on a renamed repository and does not
/// perform them. A tenant must never be reported opened/updated when nothing happened.
#[test]
fn a_renamed_tenant_repository_is_never_reported_updated_when_nothing_changed() {
    let w = World::new(&[(
        "acme",
        "acme/gitops",
        &[("clusterstacks/prod.yaml", &stack_doc("1.33", "[v1, v2]"))],
    )]);
    w.publish("openstack-scs2-1-33-v3", "v1.33.5");
    w.fake.rename_repo("acme/gitops", "platform");
    let r = w.run();
    let acme = outcome(&r, "acme");
    match &acme.outcome {
        Outcome::Failed => {
            let e = acme
                .error
                .as_deref()
                .unwrap_or_default()
                .to_ascii_lowercase();
            assert!(
                e.contains("moved") || e.contains("renamed") || e.contains("redirect"),
                "unclear error: {e}"
            );
        }
        Outcome::Opened => {
            let pulls = w.forge.find_pulls(&repo("acme/platform"), BRANCH).unwrap();
            assert_eq!(pulls.len(), 1, "reported opened, GitHub has {pulls:?}");
        }
        other => panic!("{other:?}: {r:?}"),
    }
}
