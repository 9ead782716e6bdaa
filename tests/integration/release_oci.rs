//! The release sequence with `publish: [forge, oci]`: local forge + a real OCI registry on
//! loopback. The forge release comes first, then the OCI push; numbering accounts for the
//! registry's tags; a run that stopped before the push is completed; re-runs are no-ops.

use crate::support::copy_dir;
use crate::support::registry as registry_support;

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::release::packager;
use registry_support::TestRegistry;
use stackbot::forge::local::LocalForge;
use stackbot::forge::{Forge, RepoRef};
use stackbot::model::{Component, FileTree, NodeImage, ReleaseSet, StackId};
use stackbot::oci::{Credentials, OciTarget, PushOutcome, Registry};
use stackbot::pipeline::release::Target;
use stackbot::plan::{Desired, Mode, Settings, Step};

fn repo() -> RepoRef {
    RepoRef::parse("scs/cluster-stacks").unwrap()
}

fn desired(k8s: &str) -> Desired {
    let kubernetes: stackbot::model::KubeVersion = k8s.parse().unwrap();
    let set = ReleaseSet {
        stack: StackId::new("openstack", "scs2").unwrap(),
        kubernetes,
        published_at: None,
        node_image: NodeImage {
            name: format!("ubuntu-capi-image-{k8s}"),
            url: format!("https://images.example/ubuntu-2404-kube-{k8s}.qcow2"),
            sha256: "ab".repeat(32),
            build_date: None,
        },
        components: BTreeMap::from([(
            "ccm".to_string(),
            Component {
                chart: "openstack-cloud-controller-manager".into(),
                repository: "https://kubernetes.github.io/cloud-provider-openstack".into(),
                version: "2.34.2".into(),
                digest: None,
                locked_at: None,
            },
        )]),
    };
    let minor = set.minor();
    let prefix = format!("openstack-scs2-{}", minor.dashed());
    let mut t = FileTree::new();
    t.insert(
        "csctl.yaml".into(),
        format!("apiVersion: csctl.clusterstack.x-k8s.io/v1alpha1\nconfig:\n  kubernetesVersion: {k8s}\n  clusterStackName: scs2\n  provider:\n    type: openstack\n    apiVersion: openstack.csctl.clusterstack.x-k8s.io/v1alpha1\n").into_bytes(),
    );
    t.insert(
        "cluster-class/Chart.yaml".into(),
        format!("apiVersion: v2\nname: {prefix}-cluster-class\nversion: v1\n").into_bytes(),
    );
    t.insert(
        "cluster-addon/ccm/Chart.yaml".into(),
        b"apiVersion: v2\nname: ccm\n".to_vec(),
    );
    t.insert(
        "clusteraddon.yaml".into(),
        b"apiVersion: clusteraddonconfig.x-k8s.io/v1alpha1\naddonStages: {}\n".to_vec(),
    );
    Desired {
        stack: set.stack.clone(),
        minor,
        path: format!("providers/openstack/scs2/{}", minor.dashed()),
        set,
        rendered: t,
        stepped_over: Vec::new(),
        beside: Default::default(),
        renderer: None,
    }
}

fn forge(dir: &Path) -> LocalForge {
    let f = LocalForge::new(dir.join("forge"), "stackbot", "stackbot@example.org");
    f.ensure_repo(&repo(), "main").unwrap();
    f
}

fn oci_target(reg: &TestRegistry) -> OciTarget {
    OciTarget::new(
        &reg.addr,
        &format!("{}/kaas/cluster-stacks", reg.addr),
        true,
        Credentials::Anonymous,
    )
    .unwrap()
}

fn target(reg: Option<&TestRegistry>) -> Target {
    target_publishing(reg, "[forge, oci]")
}

fn target_publishing(reg: Option<&TestRegistry>, publish: &str) -> Target {
    let config = reg.map(|r| {
        yaml_serde::from_str::<stackbot::config::Config>(&format!(
            "stacks: []\npublish: {publish}\noci:\n  registry: \"{0}\"\n  repository: \"{0}/kaas/cluster-stacks\"\n  plain_http: true\n",
            r.addr,
            publish = publish
        ))
        .unwrap()
    });
    let now = chrono::NaiveDate::from_ymd_opt(2026, 5, 1).unwrap();
    let (oci_settings, publisher) = match &config {
        Some(c) => stackbot::oci::publish::for_run(
            c,
            now,
            crate::support::release::manual_clock(now),
            |_| None,
        )
        .unwrap(),
        None => (None, None),
    };
    Target {
        repo: repo(),
        base_branch: "main".into(),
        settings: Settings {
            mode: Mode::Direct,
            lock_path: "stackbot.lock".into(),
            now,
            oci: oci_settings,
            bot_email: "stackbot@example.org".into(),
            compliance: Default::default(),
            gate: Default::default(),
        },
        oci: publisher,
    }
}

fn forge_assets(f: &LocalForge, tag: &str) -> FileTree {
    let r = f
        .list_releases(&repo())
        .unwrap()
        .into_iter()
        .find(|r| r.tag == tag && !r.draft)
        .unwrap_or_else(|| panic!("no published release {tag}"));
    r.assets
        .iter()
        .map(|a| (a.name.clone(), f.download_asset(&repo(), r.id, a).unwrap()))
        .collect()
}

#[test]
fn a_release_goes_to_the_forge_then_oci_and_a_re_run_does_nothing() {
    let reg = TestRegistry::start();
    let tmp = tempfile::tempdir().unwrap();
    let f = forge(tmp.path());
    let t = target(Some(&reg));
    let d = vec![desired("v1.34.7")];

    let (plan, out) = stackbot::pipeline::release::release_desired(&f, &t, &d, &packager).unwrap();
    let tag = "openstack-scs2-1-34-v1";
    assert_eq!(out.released, vec![tag]);
    // Plan shows the OCI target, tag and digest, after the forge publication.
    let steps = &plan.releases[0].steps;
    let publish_at = steps
        .iter()
        .position(|s| matches!(s, Step::Publish { .. }))
        .unwrap();
    let Step::OciPush {
        tag: oci_tag,
        target: oci_ref,
        manifest_digest,
        layers,
        ..
    } = &steps[publish_at + 1]
    else {
        panic!("expected the OCI push right after the forge publication: {steps:?}");
    };
    assert_eq!(oci_tag, tag);
    assert_eq!(oci_ref, &format!("{}/kaas/cluster-stacks", reg.addr));
    assert!(layers.iter().any(|l| l.file == "SHA256SUMS"));
    let json = serde_json::to_value(&plan).unwrap();
    assert_eq!(
        json["releases"][0]["steps"][publish_at + 1]["manifest_digest"],
        manifest_digest.as_str()
    );

    // The registry holds exactly the forge release's assets, under the planned digest.
    assert_eq!(out.oci.len(), 1);
    assert_eq!(out.oci[0].outcome.digest(), manifest_digest);
    let registry = Registry::connect(oci_target(&reg)).unwrap();
    assert_eq!(registry.pull_release(tag).unwrap(), forge_assets(&f, tag));

    // Re-run: nothing to do anywhere.
    let (plan2, out2) =
        stackbot::pipeline::release::release_desired(&f, &t, &d, &packager).unwrap();
    assert!(plan2.is_noop(), "{plan2:?}");
    assert!(out2.actions.is_empty(), "{:?}", out2.actions);
}

#[test]
fn a_run_that_stopped_before_the_oci_push_is_completed_and_numbers_follow_the_registry() {
    let reg = TestRegistry::start();
    let tmp = tempfile::tempdir().unwrap();
    let f = forge(tmp.path());
    let d = vec![desired("v1.34.7")];
    // A forge-only run: the state a crash between the forge release and the push leaves.
    let (_, out) =
        stackbot::pipeline::release::release_desired(&f, &target(None), &d, &packager).unwrap();
    assert_eq!(out.released, vec!["openstack-scs2-1-34-v1"]);

    let t = target(Some(&reg));
    let (plan, out) = stackbot::pipeline::release::release_desired(&f, &t, &d, &packager).unwrap();
    assert!(plan.releases.is_empty(), "nothing new to release");
    assert!(
        matches!(&plan.cleanup[..], [Step::OciPush { tag, .. }] if tag == "openstack-scs2-1-34-v1"),
        "{:?}",
        plan.cleanup
    );
    assert!(matches!(out.oci[0].outcome, PushOutcome::Pushed { .. }));
    let registry = Registry::connect(oci_target(&reg)).unwrap();
    assert_eq!(
        registry.pull_release("openstack-scs2-1-34-v1").unwrap(),
        forge_assets(&f, "openstack-scs2-1-34-v1")
    );
    assert!(
        stackbot::pipeline::release::release_desired(&f, &t, &d, &packager)
            .unwrap()
            .0
            .is_noop()
    );

    // Someone pushed v5 to the registry by hand: the next release is v6 on both sides.
    let v1 = forge_assets(&f, "openstack-scs2-1-34-v1");
    let facts = stackbot::oci::ReleaseFacts::from_files(&v1).unwrap();
    let built = stackbot::oci::build_manifest(&v1, &facts, None).unwrap();
    registry
        .push_built("openstack-scs2-1-34-v5", &v1, &built)
        .unwrap();
    let (_, out) =
        stackbot::pipeline::release::release_desired(&f, &t, &[desired("v1.34.8")], &packager)
            .unwrap();
    assert_eq!(out.released, vec!["openstack-scs2-1-34-v6"]);
    let mut tags = registry.list_tags().unwrap();
    tags.sort();
    assert_eq!(
        tags,
        [
            "openstack-scs2-1-34-v1",
            "openstack-scs2-1-34-v5",
            "openstack-scs2-1-34-v6"
        ]
    );
}

#[test]
fn publishing_only_to_oci_reads_the_latest_release_from_the_registry() {
    let reg = TestRegistry::start();
    let tmp = tempfile::tempdir().unwrap();
    let f = forge(tmp.path());
    let t = target_publishing(Some(&reg), "[oci]");
    let (plan, out) =
        stackbot::pipeline::release::release_desired(&f, &t, &[desired("v1.34.7")], &packager)
            .unwrap();
    assert_eq!(out.released, vec!["openstack-scs2-1-34-v1"]);
    assert!(
        !plan.releases[0]
            .steps
            .iter()
            .any(|s| matches!(s, Step::Draft { .. } | Step::Publish { .. })),
        "no forge release when publishing only to OCI"
    );
    assert!(f.list_releases(&repo()).unwrap().is_empty());
    // The tag still marks the released commit in the repository.
    assert!(
        f.tag_target(&repo(), "openstack-scs2-1-34-v1")
            .unwrap()
            .is_some()
    );

    // Nothing new: a no-op, decided from the registry's hashes.json.
    let (plan, out) =
        stackbot::pipeline::release::release_desired(&f, &t, &[desired("v1.34.7")], &packager)
            .unwrap();
    assert!(plan.is_noop(), "{plan:?}");
    assert!(out.actions.is_empty());

    // A new patch: v2, numbered from the registry.
    let (_, out) =
        stackbot::pipeline::release::release_desired(&f, &t, &[desired("v1.34.8")], &packager)
            .unwrap();
    assert_eq!(out.released, vec!["openstack-scs2-1-34-v2"]);
    let registry = Registry::connect(oci_target(&reg)).unwrap();
    let v2 = registry.pull_release("openstack-scs2-1-34-v2").unwrap();
    assert!(String::from_utf8_lossy(&v2["metadata.yaml"]).contains("kubernetes: v1.34.8"));
}

#[test]
fn the_demo_publishes_to_a_local_registry_with_basic_auth_and_never_prints_the_password() {
    const PASSWORD: &str = "demo-registry-password-42";
    let reg = TestRegistry::start_with_basic_auth("bot", PASSWORD);
    let root = &crate::support::root();
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(
        &root.join("examples/local"),
        &tmp.path().join("examples/local"),
    );
    copy_dir(&root.join("templates"), &tmp.path().join("templates"));
    // The demo's commented `oci:` block, switched on and pointed at the test registry.
    let config = tmp.path().join("examples/local/stackbot.yaml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.contains("# publish: [forge, oci]"),
        "the demo documents the OCI block"
    );
    text.push_str(&format!(
        "publish: [forge, oci]\noci:\n  registry: \"{0}\"\n  repository: \"{0}/kaas/cluster-stacks\"\n  plain_http: true\n",
        reg.addr
    ));
    std::fs::write(&config, text).unwrap();
    let stackbot = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_stackbot"))
            .current_dir(tmp.path())
            .args(["-c", "examples/local/stackbot.yaml", "-v"])
            .args(args)
            .env("NO_COLOR", "1")
            .env_remove("GITHUB_TOKEN")
            // The local forge is refused under GitHub Actions: the demo runs as on a laptop.
            .env_remove("GITHUB_ACTIONS")
            .env_remove("OCI_ACCESS_TOKEN")
            .env("OCI_USERNAME", "bot")
            .env("OCI_PASSWORD", PASSWORD)
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        );
        assert!(
            !stdout.contains(PASSWORD) && !stderr.contains(PASSWORD),
            "the password leaked:\n{stdout}\n{stderr}"
        );
        assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
        stdout
    };

    let plan: serde_json::Value =
        serde_json::from_str(&stackbot(&["plan", "--format", "json"])).unwrap();
    let push = plan["releases"][1]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["action"] == "oci-push")
        .expect("plan shows the OCI push")
        .clone();
    assert_eq!(push["tag"], "openstack-scs2-1-34-v1");
    assert_eq!(push["target"], format!("{}/kaas/cluster-stacks", reg.addr));
    let digest = push["manifest_digest"].as_str().unwrap().to_string();
    assert!(digest.starts_with("sha256:"));

    let out = stackbot(&["release"]);
    assert!(out.contains("released openstack-scs2-1-34-v1"), "{out}");
    assert!(
        out.contains("OCI: openstack-scs2-1-34-v1 pushed") && out.contains(&digest),
        "{out}"
    );

    // What a consumer pulls equals the forge release, file for file.
    let registry = Registry::connect(
        OciTarget::new(
            &reg.addr,
            &format!("{}/kaas/cluster-stacks", reg.addr),
            true,
            Credentials::Basic {
                username: "bot".into(),
                password: stackbot::oci::target::Secret::new(PASSWORD),
            },
        )
        .unwrap(),
    )
    .unwrap();
    let mut tags = registry.list_tags().unwrap();
    tags.sort();
    assert_eq!(tags, ["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"]);
    let forge = LocalForge::new(tmp.path().join(".stackbot/forge"), "x", "x@example.org");
    assert_eq!(
        registry.pull_release("openstack-scs2-1-34-v1").unwrap(),
        forge_assets(&forge, "openstack-scs2-1-34-v1")
    );

    let again: serde_json::Value =
        serde_json::from_str(&stackbot(&["release", "--format", "json"])).unwrap();
    assert_eq!(again["released"], serde_json::json!([]));
    assert!(again["actions"].as_array().unwrap().is_empty(), "{again}");
    assert_eq!(again["dashboard"]["action"], "unchanged", "{again}");

    // The status sees each release on both targets (the registry's from its manifest).
    let status: serde_json::Value =
        serde_json::from_str(&stackbot(&["status", "--format", "json"])).unwrap();
    let row = status["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["minor"] == "1.34")
        .unwrap();
    assert_eq!(
        row["latest_release"]["targets"],
        serde_json::json!(["forge", "oci"])
    );
    assert_eq!(row["latest_release"]["kubernetes"], "v1.34.7");
    assert_eq!(row["state"], "current");
}
