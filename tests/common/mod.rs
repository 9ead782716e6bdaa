//! Test helpers shared by the release tests.

use stackbot::model::FileTree;
use stackbot::package::archive::{GzipHeader, TarEntry, gzip, tar};
use stackbot::package::{Metadata, Versions};

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
