//! Is what the registry holds the release we packaged, and can CSO use it?
//!
//! Pure: given the manifest pulled back for a tag and the packaged files, list every problem.
//! Layer digests are checked against the local bytes *and* against `SHA256SUMS` (the
//! checksums users see), and the file set is checked the way CSO checks a downloaded release
//! (`pkg/release/release.go`, spec §5.4), so a push CSO would reject is caught by the bot.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use super::manifest::{ARTIFACT_TYPE, EMPTY_MEDIA_TYPE, Manifest, SHA256SUMS, check_file_name};
use super::sha256_digest;
use crate::model::{FileTree, KubeVersion, ReleaseName, StackVersion};

/// Parse `sha256sum` output: `<64 hex>  <name>` (or ` *<name>` for binary mode).
pub fn parse_sha256sums(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = || format!("{SHA256SUMS} line {}: expected `<sha256>  <file>`", i + 1);
        let (hex, rest) = line.split_at_checked(64).ok_or_else(bad)?;
        let name = rest
            .strip_prefix("  ")
            .or_else(|| rest.strip_prefix(" *"))
            .ok_or_else(bad)?;
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        out.insert(name.to_string(), hex.to_ascii_lowercase());
    }
    Ok(out)
}

#[derive(Deserialize)]
struct Metadata {
    versions: Versions,
}
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Versions {
    #[serde(default)]
    cluster_stack: String,
    #[serde(default)]
    kubernetes: String,
    #[serde(default)]
    components: Components,
}
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Components {
    #[serde(default)]
    cluster_addon: String,
    #[serde(default)]
    node_image: String,
}

/// Problems CSO would have with a release directory holding `names`, released as `tag`,
/// whose `metadata.yaml` has the given bytes (spec §5.4). `of` is the stable release a
/// candidate carries (see [`check_candidate`]): its `metadata.yaml` says that release's version,
/// not the tag's. CSO finds the cluster-class chart by the tag's version either way
/// (`pkg/release/release.go`, `clusterClassChartName`).
pub fn cso_problems(
    tag: &str,
    names: &BTreeSet<&str>,
    metadata: Option<&[u8]>,
    of: Option<&ReleaseName>,
) -> Vec<String> {
    let mut problems = Vec::new();
    let release = match ReleaseName::parse(tag) {
        Ok(r) => r,
        Err(e) => return vec![e.to_string()],
    };
    let Some(metadata) = metadata else {
        return vec!["`metadata.yaml` is missing".into()];
    };
    let limits = crate::config::UpstreamLimits::default().yaml();
    let meta: Metadata = match crate::yaml::from_slice(metadata, "metadata.yaml", &limits) {
        Ok(m) => m,
        Err(e) => return vec![format!("`metadata.yaml` does not parse: {e}")],
    };
    let v = &meta.versions;
    let mut version = |field: &str, value: &str| -> Option<StackVersion> {
        match StackVersion::parse_dot(value) {
            Ok(v) => Some(v),
            Err(e) => {
                problems.push(format!("`metadata.yaml` `{field}`: {e}"));
                None
            }
        }
    };
    let stack_version = version("versions.clusterStack", &v.cluster_stack);
    let addon_version = version(
        "versions.components.clusterAddon",
        &v.components.cluster_addon,
    );
    version("versions.components.nodeImage", &v.components.node_image);
    if let Err(e) = v.kubernetes.parse::<KubeVersion>() {
        problems.push(format!("`metadata.yaml` `versions.kubernetes`: {e}"));
    }
    let (expected, carried) = match of {
        Some(stable) => (&stable.version, format!("the candidate is of `{stable}`")),
        None => (&release.version, format!("the tag is `{tag}`")),
    };
    if let Some(sv) = &stack_version
        && sv != expected
    {
        problems.push(format!(
            "`metadata.yaml` says clusterStack `{}` but {carried}",
            sv.dot()
        ));
    }
    let mut need_tgz = |kind: &str, version: Option<StackVersion>| {
        if let Some(version) = version {
            let needle = format!("{}-{kind}-{}", release.prefix(), version.dot());
            if !names
                .iter()
                .any(|n| n.ends_with(".tgz") && n.contains(&needle))
            {
                problems.push(format!(
                    "no `*.tgz` whose name contains `{needle}`: CSO cannot find the {kind} chart"
                ));
            }
        }
    };
    need_tgz("cluster-class", Some(release.version.clone()));
    need_tgz("cluster-addon", addon_version);
    if !names.contains("clusteraddon.yaml") && !names.contains("cluster-addon-values.yaml") {
        problems.push(
            "neither `clusteraddon.yaml` nor `cluster-addon-values.yaml`: CSO cannot apply the cluster addon"
                .into(),
        );
    }
    problems
}

/// Every problem with `manifest_json` (pulled back for `tag`) as the publication of `files`.
/// Empty means verified.
pub fn check(tag: &str, manifest_json: &[u8], files: &FileTree) -> Vec<String> {
    check_as(tag, manifest_json, files, None)
}

/// [`check`] for the candidate `tag` of the stable release `stable` (the conformance gate):
/// `files` are `stable`'s assets byte for byte, so `metadata.yaml` says `stable`'s version and
/// `SHA256SUMS` is `stable`'s, plus the cluster-class chart once more under the candidate's
/// version ([`crate::gate::chart_alias`]), which `SHA256SUMS` lists under the stable name: its
/// layer is checked against that line.
pub fn check_candidate(
    tag: &str,
    manifest_json: &[u8],
    files: &FileTree,
    stable: &ReleaseName,
) -> Vec<String> {
    check_as(tag, manifest_json, files, Some(stable))
}

fn check_as(
    tag: &str,
    manifest_json: &[u8],
    files: &FileTree,
    of: Option<&ReleaseName>,
) -> Vec<String> {
    let manifest: Manifest = match serde_json::from_slice(manifest_json) {
        Ok(m) => m,
        Err(e) => return vec![format!("the manifest is not an OCI image manifest: {e}")],
    };
    let mut problems = Vec::new();
    if manifest.artifact_type.as_deref() != Some(ARTIFACT_TYPE) {
        problems.push(format!(
            "artifactType is {:?}, expected `{ARTIFACT_TYPE}`",
            manifest.artifact_type
        ));
    }
    if manifest.config.media_type != EMPTY_MEDIA_TYPE {
        problems.push(format!(
            "config media type is `{}`, expected `{EMPTY_MEDIA_TYPE}`",
            manifest.config.media_type
        ));
    }
    let sums = match files
        .get(SHA256SUMS)
        .map(|b| parse_sha256sums(&String::from_utf8_lossy(b)))
    {
        Some(Ok(s)) => Some(s),
        Some(Err(e)) => {
            problems.push(e);
            None
        }
        None => {
            problems.push(format!("the release has no `{SHA256SUMS}`"));
            None
        }
    };
    let mut titles = BTreeSet::new();
    for layer in &manifest.layers {
        let Some(title) = layer.title() else {
            problems.push(format!(
                "layer {} has no title: consumers would not write it to disk",
                layer.digest
            ));
            continue;
        };
        if let Err(e) = check_file_name(title) {
            problems.push(format!("layer {}: {e}", layer.digest));
            continue;
        }
        if !titles.insert(title) {
            problems.push(format!("two layers are titled `{title}`"));
        }
        match files.get(title) {
            None => problems.push(format!("layer `{title}` is not a file of the release")),
            Some(bytes) => {
                let local = sha256_digest(bytes);
                if layer.digest != local || layer.size != bytes.len() as u64 {
                    problems.push(format!(
                        "layer `{title}` is {} ({} bytes), the packaged file is {local} ({} bytes)",
                        layer.digest,
                        layer.size,
                        bytes.len()
                    ));
                }
            }
        }
        if let Some(sums) = &sums
            && title != SHA256SUMS
        {
            problems.extend(sums_problem(
                sums,
                &layer.digest,
                title,
                &sums_name(tag, of, title),
            ));
        }
    }
    for name in files.keys() {
        if !titles.contains(name.as_str()) {
            problems.push(format!("file `{name}` was not pushed"));
        }
    }
    if let Some(sums) = &sums {
        for name in sums.keys() {
            if !titles.contains(name.as_str()) {
                problems.push(format!("{SHA256SUMS} lists `{name}`, which has no layer"));
            }
        }
    }
    problems.extend(cso_problems(
        tag,
        &titles,
        files.get("metadata.yaml").map(Vec::as_slice),
        of,
    ));
    problems
}

/// The name `SHA256SUMS` lists the bytes of layer `title` under: its own, except the chart's
/// second name on a candidate of `of`, listed under the stable chart's name.
fn sums_name(tag: &str, of: Option<&ReleaseName>, title: &str) -> String {
    match (of, ReleaseName::parse(tag)) {
        (Some(stable), Ok(cand)) => match crate::gate::chart_alias(stable, &cand) {
            (alias, original) if alias == title => original,
            _ => title.to_string(),
        },
        _ => title.to_string(),
    }
}

/// What is wrong with layer `title` (of `digest`) by `SHA256SUMS`, where it is `listed`.
fn sums_problem(
    sums: &BTreeMap<String, String>,
    digest: &str,
    title: &str,
    listed: &str,
) -> Option<String> {
    match sums.get(listed) {
        None => Some(format!("layer `{title}` is not listed in {SHA256SUMS}")),
        Some(hex) if digest != format!("sha256:{hex}") => Some(format!(
            "layer `{title}` is {digest}, {SHA256SUMS} says sha256:{hex} for `{listed}`"
        )),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::manifest::{ReleaseFacts, build_manifest};
    use super::*;

    const TAG: &str = "openstack-scs2-1-34-v2";

    fn release() -> FileTree {
        let mut f = FileTree::new();
        f.insert(
            "metadata.yaml".into(),
            b"versions:\n    clusterStack: v2\n    kubernetes: v1.34.7\n    components:\n        clusterAddon: v1\n        nodeImage: v1\n".to_vec(),
        );
        f.insert(
            "hashes.json".into(),
            br#"{"clusterStack": "abcdefghij"}"#.to_vec(),
        );
        f.insert(
            "openstack-scs2-1-34-cluster-class-v2.tgz".into(),
            b"c".to_vec(),
        );
        f.insert(
            "openstack-scs2-1-34-cluster-addon-v1.tgz".into(),
            b"a".to_vec(),
        );
        f.insert("clusteraddon.yaml".into(), b"x: 1\n".to_vec());
        let sums = crate::package::sha256sums(&f);
        f.insert(SHA256SUMS.into(), sums);
        f
    }

    fn manifest_of(files: &FileTree) -> Vec<u8> {
        let facts = ReleaseFacts::from_files(files).unwrap();
        build_manifest(files, &facts, None).unwrap().json
    }

    #[test]
    fn a_faithful_push_verifies() {
        let files = release();
        assert_eq!(
            check(TAG, &manifest_of(&files), &files),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_layer_that_differs_from_the_package_and_sums_is_reported() {
        let files = release();
        let mut tampered = files.clone();
        tampered.insert("clusteraddon.yaml".into(), b"x: 2\n".to_vec());
        let problems = check(TAG, &manifest_of(&tampered), &files);
        assert!(
            problems
                .iter()
                .any(|p| p.contains("layer `clusteraddon.yaml` is sha256:")
                    && p.contains("the packaged file is")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|p| p.contains("SHA256SUMS says")),
            "{problems:?}"
        );
    }

    #[test]
    fn missing_and_extra_files_are_reported() {
        let files = release();
        let mut fewer = files.clone();
        fewer.remove("clusteraddon.yaml");
        let problems = check(TAG, &manifest_of(&fewer), &files);
        assert!(problems.contains(&"file `clusteraddon.yaml` was not pushed".to_string()));
        assert!(problems.iter().any(|p| p.contains("CSO cannot apply")));
        let mut more = files.clone();
        more.insert("extra.txt".into(), b"!".to_vec());
        let problems = check(TAG, &manifest_of(&more), &files);
        assert!(problems.contains(&"layer `extra.txt` is not a file of the release".to_string()));
    }

    #[test]
    fn cso_requirements_follow_the_operator() {
        let files = release();
        let names: BTreeSet<&str> = files.keys().map(String::as_str).collect();
        let meta = files.get("metadata.yaml").map(Vec::as_slice);
        assert!(cso_problems(TAG, &names, meta, None).is_empty());
        // Wrong tag version vs metadata, unparsable tag, empty nodeImage.
        assert!(
            cso_problems("openstack-scs2-1-34-v3", &names, meta, None)[0].contains("the tag is")
        );
        assert_eq!(cso_problems("latest", &names, meta, None).len(), 1);
        let empty_node = b"versions:\n    clusterStack: v2\n    kubernetes: v1.34.7\n    components:\n        clusterAddon: v1\n        nodeImage: \"\"\n";
        let p = cso_problems(TAG, &names, Some(empty_node), None);
        assert!(p.iter().any(|p| p.contains("nodeImage")), "{p:?}");
        // The class chart must carry the clusterStack version in its name.
        let mut wrong = names.clone();
        wrong.remove("openstack-scs2-1-34-cluster-class-v2.tgz");
        wrong.insert("openstack-scs2-1-34-cluster-class-v1.tgz");
        let p = cso_problems(TAG, &wrong, meta, None);
        assert!(p.iter().any(|p| p.contains("cluster-class-v2")), "{p:?}");
    }

    #[test]
    fn a_candidate_verifies_as_the_stable_release_it_carries() {
        let files = release();
        let stable = ReleaseName::parse(TAG).unwrap();
        let cand = crate::gate::candidate_name(&stable, &files).to_string();
        let cand_files = crate::gate::candidate_assets(&stable, &files);
        let json = manifest_of(&cand_files);
        assert_eq!(
            check_candidate(&cand, &json, &cand_files, &stable),
            Vec::<String>::new()
        );
        // As a release of its own, the candidate's metadata names another version, and
        // SHA256SUMS does not list the chart's second name.
        let as_release = check(&cand, &json, &cand_files);
        assert!(
            as_release.iter().any(|p| p.contains("but the tag is")),
            "{as_release:?}"
        );
        assert!(
            as_release
                .iter()
                .any(|p| p.contains("-cluster-class-v0-sha.")
                    && p.contains("not listed in SHA256SUMS")),
            "{as_release:?}"
        );
        // The second name must be the very bytes SHA256SUMS lists under the stable name.
        let (alias, _) = crate::gate::chart_alias(&stable, &ReleaseName::parse(&cand).unwrap());
        let mut other = cand_files.clone();
        other.insert(alias.clone(), b"other chart".to_vec());
        let problems = check_candidate(&cand, &manifest_of(&other), &other, &stable);
        assert!(
            problems
                .iter()
                .any(|p| p.contains(&alias) && p.contains("SHA256SUMS says")),
            "{problems:?}"
        );
        // Without the second name CSO cannot find the chart for the candidate's tag.
        let mut without = cand_files.clone();
        without.remove(&alias);
        let problems = check_candidate(&cand, &manifest_of(&without), &without, &stable);
        assert!(
            problems
                .iter()
                .any(|p| p.contains("CSO cannot find the cluster-class chart")),
            "{problems:?}"
        );
        // Metadata of another stable release is not this candidate's.
        let v3 = ReleaseName::parse("openstack-scs2-1-34-v3").unwrap();
        let problems = check_candidate(&cand, &json, &cand_files, &v3);
        assert!(
            problems
                .iter()
                .any(|p| p.contains("the candidate is of `openstack-scs2-1-34-v3`")),
            "{problems:?}"
        );
    }

    #[test]
    fn sha256sums_parsing() {
        let hex = "a".repeat(64);
        let sums = parse_sha256sums(&format!("{hex}  x.tgz\n{hex} *y\n\n")).unwrap();
        assert_eq!(sums.len(), 2);
        assert!(parse_sha256sums("short x").is_err());
        assert!(parse_sha256sums(&format!("{}  x", "g".repeat(64))).is_err());
    }
}
