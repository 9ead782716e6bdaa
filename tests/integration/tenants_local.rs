//! Tenant propagation scenarios on the local forge (real bare git repositories): a patch
//! release, a new minor, a tenant already current, a human commit on the bot branch, a
//! malformed tenant file among good ones, a PR that became unnecessary, and re-runs that
//! must make zero write requests.

use std::path::Path;

use stackbot::config::{self, Loaded};
use stackbot::forge::counting::Counting;
use stackbot::forge::local::LocalForge;
use stackbot::forge::{FileChanges, Forge, PullState, RepoRef};
use stackbot::tenants::{Action, Options, Outcome, TenantReport};

const BOT: (&str, &str) = ("stackbot", "stackbot@users.noreply.github.com");

fn stack_doc(minor: &str, versions: &str) -> String {
    format!(
        "# production stacks\napiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: openstack-scs2-{} # one per minor\n  namespace: cluster\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"{minor}\"\n  channel: stable\n  autoSubscribe: false\n  noProvider: true\n  versions: {versions}  # pinned\n",
        minor.replace('.', "-")
    )
}

/// `(name, repository, files as (path, text))`.
type Tenant<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);

struct World {
    _dir: tempfile::TempDir,
    forge: Counting<LocalForge>,
    root: std::path::PathBuf,
    loaded: Loaded,
}

fn repo(s: &str) -> RepoRef {
    RepoRef::parse(s).unwrap()
}

impl World {
    /// Tenants: `(name, repository, files)`; each repository is seeded with its files.
    fn new(tenants: &[Tenant]) -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("forge");
        let mut forge = LocalForge::new(&root, BOT.0, BOT.1);
        let mut yaml = String::from(
            "stacks:\n  - provider: openstack\n    name: scs2\n    templates: t\n    output: o\n    minors: [\"1.33\"]\n    node_image: {url: \"https://img/{version}.qcow2\", name: \"ubuntu-capi-image-{version}\"}\nforge:\n  repository: scs/cluster-stacks\ntenants:\n",
        );
        for (name, r, files) in tenants {
            let seed = dir.path().join("seed").join(name);
            for (p, text) in *files {
                let f = seed.join(p);
                std::fs::create_dir_all(f.parent().unwrap()).unwrap();
                std::fs::write(f, text).unwrap();
            }
            forge = forge.with_seed(repo(r), &seed);
            yaml.push_str(&format!(
                "  - name: {name}\n    repository: {r}\n    files: [\"clusterstacks/*.yaml\"]\n    stacks: [openstack/scs2]\n"
            ));
        }
        // The stacks repository needs a commit to tag releases on.
        let stacks_seed = dir.path().join("seed/stacks");
        std::fs::create_dir_all(&stacks_seed).unwrap();
        std::fs::write(stacks_seed.join("README.md"), "stacks\n").unwrap();
        let forge = forge.with_seed(repo("scs/cluster-stacks"), &stacks_seed);
        forge
            .ensure_repo(&repo("scs/cluster-stacks"), "main")
            .unwrap();
        let path = dir.path().join("stackbot.yaml");
        std::fs::write(&path, &yaml).unwrap();
        let loaded = config::load(&path).unwrap();
        let forge = Counting::new(forge);
        World {
            _dir: dir,
            forge,
            root,
            loaded,
        }
    }

    fn publish(&self, tag: &str, kubernetes: &str) {
        let f = self.forge.inner();
        let stacks = repo("scs/cluster-stacks");
        let head = f.branch_head(&stacks, "main").unwrap().unwrap();
        f.create_tag(&stacks, tag, &head, tag).unwrap();
        let r = f
            .create_draft_release(
                &stacks,
                tag,
                tag,
                &format!(
                    "Kubernetes {kubernetes}\n\nnode image sha256: {}",
                    "ab".repeat(32)
                ),
            )
            .unwrap();
        let meta = format!(
            "apiVersion: metadata.clusterstack.x-k8s.io/v1alpha1\nversions:\n    clusterStack: {}\n    kubernetes: {kubernetes}\n    components:\n        clusterAddon: v1\n        nodeImage: v1\n",
            tag.rsplit('-').next().unwrap()
        );
        f.upload_asset(&stacks, r.id, "metadata.yaml", meta.as_bytes())
            .unwrap();
        f.publish_release(&stacks, r.id, true).unwrap();
    }

    fn run(&self) -> Vec<TenantReport> {
        self.forge.reset();
        stackbot::pipeline::tenants::run(&self.ctx(), &self.forge, &Options::default()).unwrap()
    }

    fn ctx(&self) -> stackbot::pipeline::Context {
        stackbot::pipeline::Context::fixed(self.loaded.clone(), "2026-05-01".parse().unwrap())
    }

    fn file_on(&self, r: &str, branch: &str, path: &str) -> String {
        let f = self.forge.inner();
        let head = f.branch_head(&repo(r), branch).unwrap().unwrap();
        String::from_utf8(f.read_file(&repo(r), &head, path).unwrap().unwrap()).unwrap()
    }

    /// Someone else, with their own identity, on the same forge.
    fn human(&self) -> LocalForge {
        LocalForge::new(&self.root, "Jane Operator", "jane@example.org")
    }
}

fn outcome<'a>(reports: &'a [TenantReport], tenant: &str) -> &'a TenantReport {
    reports.iter().find(|r| r.tenant == tenant).unwrap()
}

const ACME: &str = "acme/gitops";

#[test]
fn a_patch_release_opens_one_pull_request_and_a_rerun_writes_nothing() {
    let acme_file = stack_doc("1.33", "[v1, v2]");
    let w = World::new(&[("acme", ACME, &[("clusterstacks/prod.yaml", &acme_file)])]);
    w.publish("openstack-scs2-1-33-v2", "v1.33.4");
    w.publish("openstack-scs2-1-33-v3", "v1.33.5");

    let r = w.run();
    let acme = outcome(&r, "acme");
    assert_eq!(
        (acme.action, &acme.outcome),
        (Action::Open, &Outcome::Opened),
        "{acme:?}"
    );
    assert_eq!(acme.branch.as_deref(), Some("stackbot/openstack-scs2"));
    assert_eq!(acme.files, ["clusterstacks/prod.yaml"]);
    assert_eq!(
        w.file_on(ACME, "stackbot/openstack-scs2", "clusterstacks/prod.yaml"),
        acme_file.replace("[v1, v2]", "[v2, v3]")
    );
    let pulls = w
        .forge
        .inner()
        .find_pulls(&repo(ACME), "stackbot/openstack-scs2")
        .unwrap();
    assert_eq!(pulls.len(), 1);
    assert_eq!(pulls[0].state, PullState::Open);
    assert!(pulls[0].body.contains("openstack-scs2-1-33-v3"));
    assert!(pulls[0].body.contains("v1.33.5"));
    assert!(
        pulls[0].body.contains(&"ab".repeat(32)),
        "the image sha256 from the release notes"
    );
    assert!(pulls[0].body.contains("+  versions: [v2, v3]  # pinned"));

    let again = w.run();
    assert_eq!(w.forge.writes(), 0, "{:?}", w.forge.by_method());
    let reads = w.forge.by_method();
    assert_eq!(
        reads.get("read_file"),
        Some(&1),
        "one read per tenant file: {reads:?}"
    );
    assert_eq!(outcome(&again, "acme").outcome, Outcome::Unchanged);
    assert_eq!(outcome(&again, "acme").action, Action::None);
}

#[test]
fn a_new_minor_updates_the_same_pull_request_with_a_copied_document() {
    let acme_file = stack_doc("1.33", "[v2]");
    let w = World::new(&[("acme", ACME, &[("clusterstacks/prod.yaml", &acme_file)])]);
    w.publish("openstack-scs2-1-33-v3", "v1.33.5");
    assert_eq!(outcome(&w.run(), "acme").outcome, Outcome::Opened);

    w.publish("openstack-scs2-1-34-v1", "v1.34.2");
    let r = w.run();
    let acme = outcome(&r, "acme");
    assert_eq!(
        (acme.action, &acme.outcome),
        (Action::Update, &Outcome::Updated),
        "{acme:?}"
    );
    let want = format!(
        "{}---\n{}",
        acme_file.replace("[v2]", "[v2, v3]"),
        stack_doc("1.34", "[v1]")
    );
    assert_eq!(
        w.file_on(ACME, "stackbot/openstack-scs2", "clusterstacks/prod.yaml"),
        want
    );
    let pulls = w
        .forge
        .inner()
        .find_pulls(&repo(ACME), "stackbot/openstack-scs2")
        .unwrap();
    assert_eq!(
        pulls.len(),
        1,
        "one PR per branch, updated rather than duplicated"
    );
    assert!(
        pulls[0].title.contains("openstack-scs2-1-34-v1"),
        "{}",
        pulls[0].title
    );

    w.run();
    assert_eq!(w.forge.writes(), 0, "{:?}", w.forge.by_method());
}

#[test]
fn a_tenant_already_current_gets_no_branch_and_no_pull_request() {
    let w = World::new(&[(
        "beta",
        "beta/gitops",
        &[("clusterstacks/a.yaml", &stack_doc("1.33", "[v2, v3]"))],
    )]);
    w.publish("openstack-scs2-1-33-v3", "v1.33.5");
    let r = w.run();
    assert_eq!(
        (outcome(&r, "beta").action, &outcome(&r, "beta").outcome),
        (Action::None, &Outcome::Unchanged)
    );
    assert_eq!(w.forge.writes(), 0);
    let f = w.forge.inner();
    assert_eq!(
        f.branch_head(&repo("beta/gitops"), "stackbot/openstack-scs2")
            .unwrap(),
        None
    );
    assert!(
        f.find_pulls(&repo("beta/gitops"), "stackbot/openstack-scs2")
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_human_commit_on_the_bot_branch_is_never_pushed_over() {
    let w = World::new(&[(
        "acme",
        ACME,
        &[("clusterstacks/prod.yaml", &stack_doc("1.33", "[v2]"))],
    )]);
    w.publish("openstack-scs2-1-33-v3", "v1.33.5");
    w.run();
    let jane = w.human();
    let head = jane
        .branch_head(&repo(ACME), "stackbot/openstack-scs2")
        .unwrap()
        .unwrap();
    let mut c = FileChanges::new();
    c.insert(
        "clusterstacks/notes.txt".into(),
        Some(b"tested on staging\n".to_vec()),
    );
    let human = jane
        .commit(
            &repo(ACME),
            "stackbot/openstack-scs2",
            &head,
            Some(&head),
            &c,
            "note",
        )
        .unwrap();

    w.publish("openstack-scs2-1-33-v4", "v1.33.6");
    let r = w.run();
    let acme = outcome(&r, "acme");
    assert_eq!(acme.outcome, Outcome::Blocked, "{acme:?}");
    let f = w.forge.inner();
    assert_eq!(
        f.branch_head(&repo(ACME), "stackbot/openstack-scs2")
            .unwrap()
            .as_deref(),
        Some(human.as_str())
    );
    let pr = &f
        .find_pulls(&repo(ACME), "stackbot/openstack-scs2")
        .unwrap()[0];
    assert_eq!(pr.state, PullState::Open);
    let comments = f.list_comments(&repo(ACME), pr.number).unwrap();
    assert_eq!(comments.len(), 1);
    assert!(
        comments[0].body.contains(&human[..12]),
        "{}",
        comments[0].body
    );

    w.run();
    assert_eq!(
        w.forge.writes(),
        0,
        "the comment is not repeated: {:?}",
        w.forge.by_method()
    );
}

#[test]
fn a_malformed_tenant_file_fails_only_its_tenant() {
    let good = stack_doc("1.33", "[v2]");
    let w = World::new(&[
        ("good", "good/gitops", &[("clusterstacks/a.yaml", &good)]),
        (
            "broken",
            "broken/gitops",
            &[
                ("clusterstacks/a.yaml", &good),
                ("clusterstacks/b.yaml", "spec: [unclosed\n"),
            ],
        ),
        ("other", "other/gitops", &[("clusterstacks/a.yaml", &good)]),
    ]);
    w.publish("openstack-scs2-1-33-v3", "v1.33.5");
    let r = w.run();
    assert_eq!(outcome(&r, "good").outcome, Outcome::Opened);
    assert_eq!(outcome(&r, "other").outcome, Outcome::Opened);
    let broken = outcome(&r, "broken");
    assert_eq!(broken.outcome, Outcome::Failed);
    let e = broken.error.as_deref().unwrap();
    assert!(
        e.contains("clusterstacks/b.yaml:") && e.contains("not valid YAML"),
        "{e}"
    );
    assert!(
        w.forge
            .inner()
            .find_pulls(&repo("broken/gitops"), "stackbot/openstack-scs2")
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        stackbot::pipeline::exit::of_tenants(&r),
        stackbot::error::ExitStatus::Partial
    );
}

#[test]
fn a_pull_request_that_became_unnecessary_is_closed_with_a_comment() {
    let file = stack_doc("1.33", "[v2]");
    let w = World::new(&[("acme", ACME, &[("clusterstacks/prod.yaml", &file)])]);
    w.publish("openstack-scs2-1-33-v3", "v1.33.5");
    w.run();
    // A human updates main by hand.
    let jane = w.human();
    let main = jane.branch_head(&repo(ACME), "main").unwrap().unwrap();
    let mut c = FileChanges::new();
    c.insert(
        "clusterstacks/prod.yaml".into(),
        Some(file.replace("[v2]", "[v3]").into_bytes()),
    );
    jane.commit(&repo(ACME), "main", &main, Some(&main), &c, "bump by hand")
        .unwrap();

    let r = w.run();
    assert_eq!(
        (outcome(&r, "acme").action, &outcome(&r, "acme").outcome),
        (Action::Close, &Outcome::Closed)
    );
    let f = w.forge.inner();
    let pr = &f
        .find_pulls(&repo(ACME), "stackbot/openstack-scs2")
        .unwrap()[0];
    assert_eq!(pr.state, PullState::Closed);
    assert!(
        f.list_comments(&repo(ACME), pr.number).unwrap()[0]
            .body
            .contains("no longer needed")
    );
    w.run();
    assert_eq!(w.forge.writes(), 0);
}

#[test]
fn a_dry_run_writes_nothing_and_shows_the_diff() {
    let w = World::new(&[(
        "acme",
        ACME,
        &[("clusterstacks/prod.yaml", &stack_doc("1.33", "[v2]"))],
    )]);
    w.publish("openstack-scs2-1-33-v3", "v1.33.5");
    w.forge.reset();
    let ctx = w.ctx();
    let run = stackbot::pipeline::run::Run::new(&ctx, &w.forge).unwrap();
    let r = stackbot::pipeline::tenants::plan_after(&run, &Options::default(), &[], None).unwrap();
    assert_eq!(w.forge.writes(), 0);
    let acme = outcome(&r, "acme");
    assert_eq!(
        (acme.action, &acme.outcome),
        (Action::Open, &Outcome::Planned)
    );
    assert!(
        acme.diff
            .contains("-  versions: [v2]  # pinned\n+  versions: [v2, v3]  # pinned\n"),
        "{}",
        acme.diff
    );
    assert!(Path::new(&w.root).exists());
}
