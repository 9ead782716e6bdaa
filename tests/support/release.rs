//! Release-test data: a deterministic packager, the repository and target of the release
//! tests, release sets and desired releases for one or two minors.

use std::collections::BTreeMap;

use stackbot::forge::RepoRef;
use stackbot::model::{Component, FileTree, NodeImage, ReleaseSet, StackId};
use stackbot::package::archive::{GzipHeader, TarEntry, gzip, tar};
use stackbot::package::{Metadata, Versions};
use stackbot::pipeline::release::Target;
use stackbot::plan::{Desired, Mode, Settings};

/// A deterministic packager with CSO's asset names: metadata.yaml, hashes.json, the
/// cluster-class and cluster-addon archives, and clusteraddon.yaml copied verbatim.
pub fn packager(tree: &FileTree, v: &Versions) -> Result<FileTree, String> {
    let csctl = stackbot::package::csctl::parse(&tree["csctl.yaml"]).map_err(|e| e.to_string())?;
    let prefix = stackbot::model::series_prefix(&csctl.stack, csctl.kubernetes.minor());
    let mut out = FileTree::new();
    let meta = Metadata {
        versions: v.clone(),
        kubernetes: csctl.kubernetes,
    };
    out.insert("metadata.yaml".into(), meta.to_yaml().into_bytes());
    out.insert(
        "hashes.json".into(),
        stackbot::package::hashes(tree).to_json().into_bytes(),
    );
    let part = |dir: &str| -> Vec<u8> {
        let entries: Vec<TarEntry<'_>> = tree
            .iter()
            .filter(|(k, _)| k.starts_with(dir))
            .map(|(k, b)| TarEntry::File(k, b))
            .collect();
        gzip(&tar(&entries).unwrap(), GzipHeader::default()).unwrap()
    };
    out.insert(
        format!("{prefix}-cluster-class-{}.tgz", v.cluster_stack.dot()),
        part("cluster-class/"),
    );
    out.insert(
        format!("{prefix}-cluster-addon-{}.tgz", v.cluster_addon.dot()),
        part("cluster-addon/"),
    );
    if let Some(c) = tree.get("clusteraddon.yaml") {
        out.insert("clusteraddon.yaml".into(), c.clone());
    }
    Ok(out)
}

// ---- the release scenario shared by the local and GitHub end-to-end tests ----

#[allow(dead_code)]
pub fn repo() -> RepoRef {
    RepoRef::parse("scs/cluster-stacks").unwrap()
}

#[allow(dead_code)]
pub fn target() -> Target {
    Target {
        repo: repo(),
        base_branch: "main".into(),
        settings: Settings {
            mode: Mode::Direct,
            lock_path: "stackbot.lock".into(),
            now: "2026-05-01".parse().unwrap(),
            oci: None,
            bot_email: "stackbot@example.org".into(),
            compliance: Default::default(),
            gate: Default::default(),
        },
        oci: None,
    }
}

#[allow(dead_code)]
pub fn set(k8s: &str, ccm: &str) -> ReleaseSet {
    let kubernetes = k8s.parse().unwrap();
    ReleaseSet {
        stack: StackId::new("openstack", "scs2").unwrap(),
        kubernetes,
        published_at: Some("2026-04-14T10:00:00Z".parse().unwrap()),
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
                version: ccm.into(),
                digest: None,
                locked_at: None,
            },
        )]),
    }
}

#[allow(dead_code)]
/// A small but complete stack tree, as `render` would produce it for `set`.
pub fn desired(k8s: &str, ccm: &str) -> Desired {
    let s = set(k8s, ccm);
    let minor = s.minor();
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
        "cluster-class/templates/cluster-class.yaml".into(),
        format!("kind: ClusterClass\n# image {}\n", s.node_image.name).into_bytes(),
    );
    t.insert(
        "cluster-addon/ccm/Chart.yaml".into(),
        format!("apiVersion: v2\nname: ccm\ndependencies:\n- name: openstack-cloud-controller-manager\n  version: {ccm}\n").into_bytes(),
    );
    t.insert(
        "clusteraddon.yaml".into(),
        b"apiVersion: clusteraddonconfig.x-k8s.io/v1alpha1\nclusterAddonVersion: clusteraddons.clusterstack.x-k8s.io/v1alpha1\naddonStages: {}\n".to_vec(),
    );
    Desired {
        stack: s.stack.clone(),
        minor,
        path: format!("providers/openstack/scs2/{}", minor.dashed()),
        set: s,
        rendered: t,
        stepped_over: Vec::new(),
        beside: Default::default(),
        renderer: None,
    }
}

#[allow(dead_code)]
pub fn two_minors() -> Vec<Desired> {
    vec![desired("v1.33.10", "2.33.1"), desired("v1.34.7", "2.34.2")]
}

/// The run's clock for the publisher, standing at midnight of `day`: a retry's wait moves it
/// instead of sleeping.
pub fn manual_clock(day: chrono::NaiveDate) -> stackbot::clock::SharedClock {
    std::sync::Arc::new(stackbot::clock::ManualClock::new(
        day.and_hms_opt(0, 0, 0).unwrap().and_utc(),
    ))
}
