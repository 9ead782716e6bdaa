//! The cluster-addon asset (§2.7) in both conventions.
//!
//! New (multi-stage, `clusteraddon.yaml` present): a plain tar of `cluster-addon/` with no
//! prefix, directory entries without a trailing slash, `filepath.Walk` order; every stage
//! named in `clusteraddon.yaml` needs its directory (CSO would silently skip it otherwise).
//! Old (no `clusteraddon.yaml`): `cluster-addon/` is one Helm chart, packaged like the
//! cluster class and named `<prefix>-cluster-addon`.

use super::PackageError;
use super::archive::{self, GzipHeader, TarEntry};
use super::chart::{self, walk_cmp};
use super::validate::helm_version;
use crate::FileTree;

/// The subtree under `dir/`, with paths relative to it.
pub fn subtree(tree: &FileTree, dir: &str) -> FileTree {
    let prefix = format!("{dir}/");
    tree.range(prefix.clone()..)
        .take_while(|(k, _)| k.starts_with(&prefix))
        .map(|(k, v)| (k[prefix.len()..].to_string(), v.clone()))
        .collect()
}

/// Stage names of a `clusteraddon.yaml`, in first-appearance order.
pub fn stage_names(bytes: &[u8]) -> Result<Vec<String>, PackageError> {
    const FILE: &str = "clusteraddon.yaml";
    let doc: yaml_serde::Value = yaml_serde::from_slice(bytes)
        .map_err(|e| PackageError::invalid(FILE, format!("is not valid YAML: {e}")))?;
    let Some(stages) = doc.get("addonStages").and_then(|s| s.as_mapping()) else {
        return Err(PackageError::field(
            FILE,
            "addonStages",
            "is missing or not a map of hook → stages",
        ));
    };
    let mut names: Vec<String> = Vec::new();
    for (hook, list) in stages {
        let hook = hook.as_str().unwrap_or("?");
        let Some(list) = list.as_sequence() else {
            return Err(PackageError::field(
                FILE,
                &format!("addonStages.{hook}"),
                "must be a list of stages",
            ));
        };
        for (i, st) in list.iter().enumerate() {
            let Some(name) = st
                .get("name")
                .and_then(|n| n.as_str())
                .filter(|n| !n.is_empty())
            else {
                return Err(PackageError::field(
                    FILE,
                    &format!("addonStages.{hook}[{i}].name"),
                    "is missing: every stage names a directory under cluster-addon/",
                ));
            };
            if name.contains('/') || name == "." || name == ".." {
                return Err(PackageError::field(
                    FILE,
                    &format!("addonStages.{hook}[{i}].name"),
                    format!("`{name}` must be a plain directory name"),
                ));
            }
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
    }
    Ok(names)
}

/// New convention: validate stages against `addon` (the templated `cluster-addon/` subtree)
/// and return the `.tgz` bytes.
pub fn multi_stage_tgz(addon: &FileTree, stages: &[String]) -> Result<Vec<u8>, PackageError> {
    for s in stages {
        let prefix = format!("{s}/");
        if !addon.keys().any(|k| k.starts_with(&prefix)) {
            return Err(PackageError::invalid(
                "clusteraddon.yaml",
                format!(
                    "stage `{s}` has no directory `cluster-addon/{s}/`: create it or remove the stage"
                ),
            ));
        }
        // CSO runs `helm template` on each stage directory, which loads and validates it.
        if let Some(c) = addon.get(&format!("{s}/Chart.yaml")) {
            let file = format!("cluster-addon/{s}/Chart.yaml");
            let doc: yaml_serde::Value = yaml_serde::from_slice(c)
                .map_err(|e| PackageError::invalid(&file, format!("is not valid YAML: {e}")))?;
            let v = match doc.get("version") {
                Some(yaml_serde::Value::String(s)) => s.clone(),
                Some(yaml_serde::Value::Number(n)) => n.to_string(),
                _ => String::new(),
            };
            helm_version(&v).map_err(|e| PackageError::field(&file, "version", e))?;
        }
    }
    let mut paths: Vec<&String> = addon.keys().collect();
    paths.sort_by(|a, b| walk_cmp(a, b));
    let mut entries: Vec<TarEntry<'_>> = Vec::new();
    let mut last_dirs: Vec<&str> = Vec::new();
    for p in &paths {
        let comps: Vec<&str> = p.split('/').collect();
        let dirs = &comps[..comps.len() - 1];
        for n in 1..=dirs.len() {
            let d = &p[..dirs[..n].iter().map(|c| c.len() + 1).sum::<usize>() - 1];
            if last_dirs.len() < n || last_dirs[n - 1] != d {
                last_dirs.truncate(n - 1);
                last_dirs.push(d);
                entries.push(TarEntry::Dir(d));
            }
        }
        last_dirs.truncate(dirs.len());
        entries.push(TarEntry::File(p, &addon[p.as_str()]));
    }
    let io =
        |e: std::io::Error| PackageError::invalid("cluster-addon", format!("cannot archive: {e}"));
    archive::gzip(&archive::tar(&entries).map_err(io)?, GzipHeader::default()).map_err(io)
}

/// Old convention: helm-package `cluster-addon/` as chart `<prefix>-cluster-addon`.
pub fn single_chart(
    addon: &FileTree,
    expected_name: &str,
    version: &str,
) -> Result<chart::Packaged, PackageError> {
    const FILE: &str = "cluster-addon/Chart.yaml";
    let Some(c) = addon.get("Chart.yaml") else {
        return Err(PackageError::invalid(
            FILE,
            "is missing: without clusteraddon.yaml, cluster-addon/ must be one Helm chart",
        ));
    };
    let name = chart::chart_name(c, FILE)?;
    if name != expected_name {
        return Err(PackageError::field(
            FILE,
            "name",
            format!(
                "is `{name}`, expected `{expected_name}` (CSO finds the addon chart by this name)"
            ),
        ));
    }
    chart::helm_package(addon, "cluster-addon", version)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> FileTree {
        files
            .iter()
            .map(|k| (k.to_string(), b"x".to_vec()))
            .collect()
    }

    #[test]
    fn multi_stage_tar_has_dir_entries_in_walk_order() {
        let t = tree(&[
            "cni/values.yaml",
            "cni/a.yaml",
            "ccm/sub/a",
            "ccm/b",
            "ccm-x/c",
            ".helmignore",
        ]);
        let tgz = multi_stage_tgz(&t, &["ccm".into(), "cni".into()]).unwrap();
        let got: Vec<(String, bool)> = archive::read_tgz(&tgz)
            .unwrap()
            .into_iter()
            .map(|e| (e.name, e.kind.is_dir()))
            .collect();
        let want = [
            (".helmignore", false),
            ("ccm", true),
            ("ccm/b", false),
            ("ccm/sub", true),
            ("ccm/sub/a", false),
            ("ccm-x", true),
            ("ccm-x/c", false),
            ("cni", true),
            ("cni/a.yaml", false),
            ("cni/values.yaml", false),
        ];
        let want: Vec<(String, bool)> = want.iter().map(|(a, b)| (a.to_string(), *b)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_stage_without_a_directory_is_refused() {
        let t = tree(&["cni/values.yaml"]);
        let e = multi_stage_tgz(&t, &["cni".into(), "csi".into()])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("clusteraddon.yaml") && e.contains("cluster-addon/csi/"),
            "{e}"
        );
    }

    #[test]
    fn stage_names_are_collected_across_hooks() {
        let y = b"addonStages:\n  A:\n    - name: cni\n    - name: csi\n  B:\n    - name: cni\n";
        assert_eq!(stage_names(y).unwrap(), ["cni", "csi"]);
        assert!(stage_names(b"addonStages:\n  A:\n    - action: apply\n").is_err());
    }
}
