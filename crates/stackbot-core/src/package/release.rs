//! The whole release: [`package`], a pure function of the stack's tree (the binary writes it:
//! `stackbot::package::write_release`).

use sha2::{Digest, Sha256};

use super::{
    PackageError, ReleaseHashes, VersionSelection, Versions, addon, chart, csctl, hashes,
    metadata::Metadata, template, tree,
};
use crate::model::{FileTree, KubeVersion, ReleaseName, StackVersion};

/// A packaged release: the flat directory csctl would write, plus `SHA256SUMS`.
#[derive(Debug, Clone)]
pub struct Release {
    pub name: ReleaseName,
    pub kubernetes: KubeVersion,
    pub hashes: ReleaseHashes,
    pub metadata: Metadata,
    /// Asset file name → bytes, including `SHA256SUMS`.
    pub files: FileTree,
}

/// Name of the checksum file we add (csctl has none): `<hex>  <name>\n`, sorted by name,
/// in `sha256sum -c` format.
pub const SHA256SUMS: &str = "SHA256SUMS";

/// `SHA256SUMS` over `assets` (`sha256sum -c` format, sorted by name), leaving out an existing
/// `SHA256SUMS`. The one builder of that file: packaging, planning and the OCI checks use it.
pub fn sha256sums(assets: &FileTree) -> Vec<u8> {
    let mut out = String::new();
    for (name, bytes) in assets.iter().filter(|(n, _)| n.as_str() != SHA256SUMS) {
        out.push_str(&format!("{}  {name}\n", hex::encode(Sha256::digest(bytes))));
    }
    out.into_bytes()
}

/// Package a stack tree (the csctl stack directory's files). Pure: no I/O.
///
/// Order follows csctl `create`: validate csctl.yaml, hash the un-templated source, choose
/// versions, template every file with `<< .X >>`, set chart versions, package. Adds the
/// checks csctl lacks (chart name, stage directories, Helm-valid versions, `-` in names).
pub fn package(tree: &FileTree, sel: &VersionSelection) -> Result<Release, PackageError> {
    tree::check_tree(tree)?;
    let Some(cfg_bytes) = tree.get("csctl.yaml") else {
        return Err(PackageError::invalid(
            "csctl.yaml",
            "is missing: a stack directory needs csctl.yaml at its root",
        ));
    };
    let cfg = csctl::parse(cfg_bytes)?;
    let hashes = hashes(tree);
    let versions = match sel {
        VersionSelection::Hash => Versions::all(StackVersion::hash_mode(&hashes.cluster_stack)),
        VersionSelection::Explicit(v) => v.clone(),
    };
    let name = ReleaseName {
        stack: cfg.stack.clone(),
        minor: cfg.kubernetes.minor(),
        version: versions.cluster_stack.clone(),
    };
    check_versions(&versions)?;
    let templated = template_tree(tree, &versions)?;
    let mut files = FileTree::new();
    cluster_class(&templated, &name, &versions, &mut files)?;
    cluster_addon(tree, &templated, &name, &versions, &mut files)?;

    // Node images (the OpenStack plugin's `get`: a verbatim copy).
    if let Some(ni) = tree.get("node-images/config.yaml") {
        files.insert("node-images.yaml".into(), ni.clone());
    }

    let metadata = Metadata {
        versions,
        kubernetes: cfg.kubernetes,
    };
    files.insert("metadata.yaml".into(), metadata.to_yaml().into_bytes());
    files.insert("hashes.json".into(), hashes.to_json().into_bytes());
    let sums = sha256sums(&files);
    files.insert(SHA256SUMS.into(), sums);

    Ok(Release {
        name,
        kubernetes: cfg.kubernetes,
        hashes,
        metadata,
        files,
    })
}

/// Every chosen version reads back as CSO reads it: CSO parses each with version.New, and a
/// malformed one breaks it.
fn check_versions(versions: &Versions) -> Result<(), PackageError> {
    for (what, v) in [
        ("clusterStack", &versions.cluster_stack),
        ("clusterAddon", &versions.cluster_addon),
        ("nodeImage", &versions.node_image),
    ] {
        StackVersion::parse_dot(&v.dot()).map_err(|e| {
            PackageError::invalid("(version selection)", format!("{what} version: {e}"))
        })?;
    }
    Ok(())
}

/// Template every file exactly as csctl does (so errors surface in any file).
fn template_tree(tree: &FileTree, versions: &Versions) -> Result<FileTree, PackageError> {
    let vals = template::values(versions);
    let mut templated = FileTree::new();
    for (p, bytes) in tree {
        templated.insert(p.clone(), template::render(p, bytes, &vals)?);
    }
    Ok(templated)
}

/// The cluster-class chart, packaged at the cluster stack version; its name must be the one
/// CSO looks the class up by.
fn cluster_class(
    templated: &FileTree,
    name: &ReleaseName,
    versions: &Versions,
    files: &mut FileTree,
) -> Result<(), PackageError> {
    let cc = addon::subtree(templated, "cluster-class");
    let cc_file = "cluster-class/Chart.yaml";
    let Some(cc_chart) = cc.get("Chart.yaml") else {
        return Err(PackageError::invalid(
            cc_file,
            "is missing: the stack needs a cluster-class/ Helm chart",
        ));
    };
    let expected = name.cluster_class_chart();
    let found = chart::chart_name(cc_chart, cc_file)?;
    if found != expected {
        return Err(PackageError::field(
            cc_file,
            "name",
            format!(
                "is `{found}`, expected `{expected}` (`<provider>-<name>-<major>-<minor>-cluster-class` from csctl.yaml; CSO cannot find the class otherwise): set `name: {expected}`"
            ),
        ));
    }
    let cc_pkg = chart::helm_package(&cc, "cluster-class", &versions.cluster_stack.dot())?;
    files.insert(cc_pkg.file_name, cc_pkg.tgz);
    Ok(())
}

/// The cluster addon at the cluster addon version: one archive of the stages with
/// `clusteraddon.yaml` beside it, or (without `clusteraddon.yaml`) one chart with
/// `cluster-addon-values.yaml`.
fn cluster_addon(
    tree: &FileTree,
    templated: &FileTree,
    name: &ReleaseName,
    versions: &Versions,
    files: &mut FileTree,
) -> Result<(), PackageError> {
    let prefix = name.prefix();
    let ca = addon::subtree(templated, "cluster-addon");
    if ca.is_empty() {
        return Err(PackageError::invalid(
            "cluster-addon",
            "is missing or empty: CSO requires a cluster-addon asset",
        ));
    }
    let ca_version = versions.cluster_addon.dot();
    if let Some(ca_yaml) = tree.get("clusteraddon.yaml") {
        let stages = addon::stage_names(ca_yaml)?;
        let tgz = addon::multi_stage_tgz(&ca, &stages)?;
        files.insert(format!("{prefix}-cluster-addon-{ca_version}.tgz"), tgz);
        files.insert("clusteraddon.yaml".into(), ca_yaml.clone());
    } else {
        let pkg = addon::single_chart(&ca, &format!("{prefix}-cluster-addon"), &ca_version)?;
        files.insert(pkg.file_name, pkg.tgz);
        let Some(values) = templated.get("cluster-addon-values.yaml") else {
            return Err(PackageError::invalid(
                "cluster-addon-values.yaml",
                "is missing: without clusteraddon.yaml, csctl releases carry cluster-addon-values.yaml",
            ));
        };
        files.insert("cluster-addon-values.yaml".into(), values.clone());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack() -> FileTree {
        let files: &[(&str, &str)] = &[
            (
                "csctl.yaml",
                "apiVersion: csctl.clusterstack.x-k8s.io/v1alpha1\nconfig:\n  kubernetesVersion: v1.34.7\n  clusterStackName: scs2\n  provider:\n    type: openstack\n",
            ),
            (
                "clusteraddon.yaml",
                "addonStages:\n  AfterControlPlaneInitialized:\n    - name: cni\n      action: apply\n",
            ),
            (
                "cluster-addon/cni/Chart.yaml",
                "apiVersion: v2\nname: cni\nversion: v1\n",
            ),
            (
                "cluster-addon/cni/values.yaml",
                "tag: << .ClusterAddonVersion >>\n",
            ),
            (
                "cluster-class/Chart.yaml",
                "apiVersion: v2\nname: openstack-scs2-1-34-cluster-class\nversion: v1\n",
            ),
            (
                "cluster-class/templates/cc.yaml",
                "v: << .ClusterClassVersion >>\n",
            ),
        ];
        files
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
            .collect()
    }

    fn explicit(cs: u64, ca: u64, ni: u64) -> VersionSelection {
        VersionSelection::Explicit(Versions {
            cluster_stack: StackVersion::stable(cs),
            cluster_addon: StackVersion::stable(ca),
            node_image: StackVersion::stable(ni),
        })
    }

    #[test]
    fn packages_the_csctl_file_set_with_templating() {
        let r = package(&stack(), &explicit(3, 2, 1)).unwrap();
        assert_eq!(r.name.to_string(), "openstack-scs2-1-34-v3");
        assert_eq!(
            r.files.keys().collect::<Vec<_>>(),
            [
                "SHA256SUMS",
                "clusteraddon.yaml",
                "hashes.json",
                "metadata.yaml",
                "openstack-scs2-1-34-cluster-addon-v2.tgz",
                "openstack-scs2-1-34-cluster-class-v3.tgz",
            ]
        );
        let addon =
            super::super::archive::read_tgz(&r.files["openstack-scs2-1-34-cluster-addon-v2.tgz"])
                .unwrap();
        let values = addon.iter().find(|e| e.name == "cni/values.yaml").unwrap();
        assert_eq!(values.data.as_deref(), Some(b"tag: v2\n".as_slice()));
        let cc =
            super::super::archive::read_tgz(&r.files["openstack-scs2-1-34-cluster-class-v3.tgz"])
                .unwrap();
        assert_eq!(
            cc[1].name,
            "openstack-scs2-1-34-cluster-class/templates/cc.yaml"
        );
        assert_eq!(cc[1].data.as_deref(), Some(b"v: v3\n".as_slice()));
        let sums = String::from_utf8(r.files["SHA256SUMS"].clone()).unwrap();
        assert_eq!(sums.lines().count(), 5);
        assert!(sums.lines().all(|l| l.len() > 66 && &l[64..66] == "  "));
    }

    #[test]
    fn wrong_cluster_class_name_is_refused_with_expected_value() {
        let mut t = stack();
        t.insert(
            "cluster-class/Chart.yaml".into(),
            b"apiVersion: v2\nname: openstack-scs2-1-33-cluster-class\nversion: v1\n".to_vec(),
        );
        let e = package(&t, &VersionSelection::Hash)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cluster-class/Chart.yaml"), "{e}");
        assert!(
            e.contains("`name`") && e.contains("openstack-scs2-1-34-cluster-class"),
            "{e}"
        );
    }

    #[test]
    fn old_convention_packages_addon_as_a_chart_with_values() {
        let mut t = stack();
        t.retain(|k, _| !k.starts_with("cluster-addon") && k != "clusteraddon.yaml");
        t.insert(
            "cluster-addon/Chart.yaml".into(),
            b"apiVersion: v2\nname: openstack-scs2-1-34-cluster-addon\nversion: v1\n".to_vec(),
        );
        t.insert(
            "cluster-addon-values.yaml".into(),
            b"v: << .ClusterAddonVersion >>\n".to_vec(),
        );
        let r = package(&t, &explicit(2, 2, 1)).unwrap();
        assert!(
            r.files
                .contains_key("openstack-scs2-1-34-cluster-addon-v2.tgz")
        );
        assert_eq!(r.files["cluster-addon-values.yaml"], b"v: v2\n");
        assert!(!r.hashes.cluster_addon_values.is_empty());
    }
}
