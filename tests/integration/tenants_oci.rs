//! Tenants follow releases from every publish target (issue 12, item 5): with `publish:
//! [oci]` alone the releases come from the OCI repository (a real registry on loopback), with
//! `[forge, oci]` the newest of both; the Kubernetes version comes from the release's
//! `metadata.yaml`; the cost is one tag listing plus one manifest and one blob per series,
//! never a read of an older tag (their blobs are deleted from the registry's storage here, so
//! reading one would fail the run).

use crate::support;
use crate::support::registry as registry_support;

use registry_support::TestRegistry;
use stackbot::forge::Forge;
use stackbot::forge::counting::Counting;
use stackbot::forge::local::LocalForge;
use stackbot::model::FileTree;
use stackbot::oci::{Credentials, OciTarget, Registry, ReleaseFacts};
use stackbot::tenants::{Action, Options, Outcome, TenantReport};
use support::tenant_world::{BOT, BRANCH, repo, report, stack_doc};

const ACME: &str = "acme/gitops";
const FILE: &str = "clusterstacks/prod.yaml";

struct World {
    _dir: tempfile::TempDir,
    forge: Counting<LocalForge>,
    registry: Registry,
    reg: TestRegistry,
    loaded: stackbot::config::Loaded,
}

impl World {
    fn new(reg: TestRegistry, publish: &str) -> World {
        let dir = tempfile::tempdir().unwrap();
        let seed = dir.path().join("seed/acme");
        std::fs::create_dir_all(seed.join("clusterstacks")).unwrap();
        std::fs::write(seed.join(FILE), stack_doc("1.33", "[v1, v2]")).unwrap();
        let stacks_seed = dir.path().join("seed/stacks");
        std::fs::create_dir_all(&stacks_seed).unwrap();
        std::fs::write(stacks_seed.join("README.md"), "stacks\n").unwrap();
        let forge = LocalForge::new(dir.path().join("forge"), BOT.0, BOT.1)
            .with_seed(repo(ACME), &seed)
            .with_seed(repo("scs/cluster-stacks"), &stacks_seed);
        forge
            .ensure_repo(&repo("scs/cluster-stacks"), "main")
            .unwrap();
        let yaml = format!(
            "stacks:\n  - provider: openstack\n    name: scs2\n    templates: t\n    output: o\n    minors: [\"1.33\"]\n    node_image: {{url: \"https://img/{{version}}.qcow2\", name: \"ubuntu-capi-image-{{version}}\"}}\nforge:\n  repository: scs/cluster-stacks\n  committer: {{name: {}, email: {}}}\npublish: {publish}\noci:\n  registry: \"{addr}\"\n  repository: \"{addr}/kaas/cluster-stacks\"\n  plain_http: true\ntenants:\n  - name: acme\n    repository: {ACME}\n    files: [\"clusterstacks/*.yaml\"]\n    stacks: [openstack/scs2]\n",
            BOT.0,
            BOT.1,
            addr = reg.addr
        );
        let path = dir.path().join("stackbot.yaml");
        std::fs::write(&path, yaml).unwrap();
        let loaded = stackbot::config::load(&path).unwrap();
        let target = OciTarget::new(
            &reg.addr,
            &format!("{}/kaas/cluster-stacks", reg.addr),
            true,
            Credentials::Anonymous,
        )
        .unwrap();
        World {
            _dir: dir,
            forge: Counting::new(forge),
            registry: Registry::connect(target).unwrap(),
            reg,
            loaded,
        }
    }

    /// Push a release to the registry as the release stage does; returns its metadata bytes.
    fn push_oci(&self, tag: &str, kubernetes: &str) -> Vec<u8> {
        let meta = metadata(tag, kubernetes);
        let mut files = FileTree::new();
        files.insert("metadata.yaml".into(), meta.clone());
        files.insert(
            "hashes.json".into(),
            format!("{{\"clusterStack\":\"{}\"}}", "c".repeat(64)).into_bytes(),
        );
        let facts = ReleaseFacts::from_files(&files).unwrap();
        self.registry
            .push_release(tag, &files, &facts, None)
            .unwrap();
        meta
    }

    /// Make a blob unreadable: any attempt to read it fails the run.
    fn delete_blob(&self, bytes: &[u8]) {
        let hex = stackbot::oci::sha256_digest(bytes)
            .trim_start_matches("sha256:")
            .to_string();
        let path = self
            .reg
            .storage()
            .join("docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(&hex)
            .join("data");
        std::fs::remove_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }

    fn publish_forge(&self, tag: &str, kubernetes: &str) {
        let f = self.forge.inner();
        let stacks = repo("scs/cluster-stacks");
        let head = f.branch_head(&stacks, "main").unwrap().unwrap();
        f.create_tag(&stacks, tag, &head, tag).unwrap();
        let r = f
            .create_draft_release(&stacks, tag, tag, &format!("Kubernetes {kubernetes}"))
            .unwrap();
        f.upload_asset(&stacks, r.id, "metadata.yaml", &metadata(tag, kubernetes))
            .unwrap();
        f.publish_release(&stacks, r.id, true).unwrap();
    }

    fn run(&self) -> Vec<TenantReport> {
        self.forge.reset();
        let ctx =
            stackbot::pipeline::Context::fixed(self.loaded.clone(), "2026-05-01".parse().unwrap());
        stackbot::pipeline::tenants::run(&ctx, &self.forge, &Options::default()).unwrap()
    }

    fn file_on_branch(&self) -> String {
        let f = self.forge.inner();
        let head = f.branch_head(&repo(ACME), BRANCH).unwrap().unwrap();
        String::from_utf8(f.read_file(&repo(ACME), &head, FILE).unwrap().unwrap()).unwrap()
    }
}

fn metadata(tag: &str, kubernetes: &str) -> Vec<u8> {
    format!(
        "apiVersion: metadata.clusterstack.x-k8s.io/v1alpha1\nversions:\n    clusterStack: {}\n    kubernetes: {kubernetes}\n    components:\n        clusterAddon: v1\n        nodeImage: v1\n",
        tag.rsplit('-').next().unwrap()
    )
    .into_bytes()
}

#[test]
fn with_publish_oci_alone_tenants_follow_the_registry() {
    let reg = TestRegistry::start();
    let w = World::new(reg, "[oci]");
    let old1 = w.push_oci("openstack-scs2-1-33-v1", "v1.33.2");
    let old2 = w.push_oci("openstack-scs2-1-33-v2", "v1.33.4");
    w.push_oci("openstack-scs2-1-33-v3", "v1.33.5");
    // Only the newest tag of a series is ever read.
    w.delete_blob(&old1);
    w.delete_blob(&old2);

    let r = w.run();
    let acme = report(&r, "acme");
    assert_eq!(
        (acme.action, &acme.outcome),
        (Action::Open, &Outcome::Opened),
        "{r:?}"
    );
    assert_eq!(acme.releases, ["openstack-scs2-1-33-v3"]);
    assert_eq!(
        w.file_on_branch(),
        stack_doc("1.33", "[v1, v2]").replace("[v1, v2]", "[v2, v3]")
    );
    let pr = &w.forge.inner().find_pulls(&repo(ACME), BRANCH).unwrap()[0];
    assert!(
        pr.body.contains("| `openstack-scs2-1-33-v3` | v1.33.5 |"),
        "{}",
        pr.body
    );
    assert!(
        pr.body
            .contains("/kaas/cluster-stacks:openstack-scs2-1-33-v3"),
        "{}",
        pr.body
    );
    assert_eq!(
        w.forge.by_method().get("list_releases"),
        None,
        "the forge's releases are not read when nothing is published there"
    );

    // The open pull request is current, not "up to date and closed".
    let r = w.run();
    assert_eq!(report(&r, "acme").outcome, Outcome::Unchanged, "{r:?}");
    assert_eq!(w.forge.writes(), 0, "{:?}", w.forge.by_method());
    assert_eq!(
        w.forge.inner().find_pulls(&repo(ACME), BRANCH).unwrap()[0].state,
        stackbot::forge::PullState::Open
    );

    // A newer release in the registry updates it.
    w.push_oci("openstack-scs2-1-33-v4", "v1.33.6");
    let r = w.run();
    assert_eq!(report(&r, "acme").outcome, Outcome::Updated, "{r:?}");
    assert_eq!(
        w.file_on_branch(),
        stack_doc("1.33", "[v1, v2]").replace("[v1, v2]", "[v2, v4]")
    );
}

#[test]
fn with_forge_and_oci_tenants_get_the_newest_of_both() {
    let reg = TestRegistry::start();
    let w = World::new(reg, "[forge, oci]");
    w.publish_forge("openstack-scs2-1-33-v3", "v1.33.5");
    let v3 = w.push_oci("openstack-scs2-1-33-v3", "v1.33.5");
    // The forge has v3 already: the registry's copy is never read.
    w.delete_blob(&v3);
    let r = w.run();
    let acme = report(&r, "acme");
    assert_eq!(acme.outcome, Outcome::Opened, "{r:?}");
    let pr = &w.forge.inner().find_pulls(&repo(ACME), BRANCH).unwrap()[0];
    assert!(
        pr.body.contains("| [openstack-scs2-1-33-v3](file://"),
        "the forge release, with its page: {}",
        pr.body
    );

    // v4 reached the registry only (the forge publication is behind): tenants get v4.
    w.push_oci("openstack-scs2-1-33-v4", "v1.33.6");
    let r = w.run();
    let acme = report(&r, "acme");
    assert_eq!(acme.outcome, Outcome::Updated, "{r:?}");
    assert_eq!(acme.releases, ["openstack-scs2-1-33-v4"]);
    assert_eq!(
        w.file_on_branch(),
        stack_doc("1.33", "[v1, v2]").replace("[v1, v2]", "[v2, v4]")
    );
}

#[test]
fn an_empty_registry_never_closes_an_open_pull_request() {
    let reg = TestRegistry::start();
    // Forge publishing first, then the config moves to OCI alone before anything was pushed.
    let forge_world = World::new(reg, "[forge]");
    forge_world.publish_forge("openstack-scs2-1-33-v3", "v1.33.5");
    assert_eq!(report(&forge_world.run(), "acme").outcome, Outcome::Opened);
    let oci_yaml = std::fs::read_to_string(&forge_world.loaded.path)
        .unwrap()
        .replace("publish: [forge]", "publish: [oci]");
    std::fs::write(&forge_world.loaded.path, oci_yaml).unwrap();
    let w = World {
        loaded: stackbot::config::load(&forge_world.loaded.path).unwrap(),
        ..forge_world
    };
    let r = w.run();
    let acme = report(&r, "acme");
    assert_eq!(
        (acme.action, &acme.outcome),
        (Action::None, &Outcome::Unchanged),
        "{r:?}"
    );
    assert!(
        acme.note.as_deref().unwrap().contains("no release"),
        "{acme:?}"
    );
    assert_eq!(w.forge.writes(), 0, "{:?}", w.forge.by_method());
}

/// An OCI release's Kubernetes version has one home (issue 29): its `metadata.yaml`, read by
/// `tenants::releases::kubernetes_of`. A release pushed by hand whose manifest annotation
/// says another version (`kubernetesVersion: v1.33.4`, `metadata.yaml`: v1.33.5) is v1.33.5
/// for the status (and so for the `release` summary, which reads it from the same rule) as
/// for the tenants; the annotation is never consulted.
#[test]
fn an_oci_release_has_the_kubernetes_version_of_its_metadata_for_status_and_tenants_alike() {
    let reg = TestRegistry::start();
    let w = World::new(reg, "[oci]");
    let tag = "openstack-scs2-1-33-v1";
    let mut files = FileTree::new();
    files.insert("metadata.yaml".into(), metadata(tag, "v1.33.5"));
    files.insert(
        "hashes.json".into(),
        format!("{{\"clusterStack\":\"{}\"}}", "c".repeat(64)).into_bytes(),
    );
    let mut facts = ReleaseFacts::from_files(&files).unwrap();
    facts.kubernetes = "v1.33.4".parse().unwrap();
    w.registry.push_release(tag, &files, &facts, None).unwrap();

    let index =
        stackbot::index::ReleaseIndex::new(Vec::new(), Some(w.registry.list_tags().unwrap()));
    let stacks = std::collections::BTreeSet::from(["openstack/scs2".parse().unwrap()]);
    // Each reader on its own (a run shares one `OciReads`: read once).
    let (tenants_read, status_read) = Default::default();
    let tenants = stackbot::observe::tenants::oci_releases(
        (&w.registry, &tenants_read),
        &index,
        &stacks,
        &[],
    )
    .unwrap();
    let mut warnings = Vec::new();
    let status = stackbot::observe::status::oci_releases(
        (&w.registry, &status_read),
        &index,
        &[],
        &std::collections::BTreeSet::from([tag.to_string()]),
        &mut warnings,
    )
    .unwrap();
    assert_eq!(tenants.len(), 1, "{tenants:?}");
    assert_eq!(tenants[0].kubernetes.to_string(), "v1.33.5");
    assert_eq!(status.len(), 1, "{status:?}");
    assert_eq!(
        status[0].kubernetes.map(|k| k.to_string()).as_deref(),
        Some("v1.33.5"),
        "status reads metadata.yaml as the tenants do, not the annotation: {warnings:?}"
    );
}
