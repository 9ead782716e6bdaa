//! What a stack directory pins: the stack and Kubernetes version (`csctl.yaml`), the node
//! image and the Helm chart components. These become the release set of the adopted setup,
//! and every place they appear becomes a template expression.
//!
//! Only formats with a documented meaning are read (csctl.yaml, Helm `Chart.yaml`
//! dependencies, ORC `Image`, the csctl OpenStack plugin's `node-images/config.yaml`, the
//! openstack-image-manager list); anything else is text, never guessed at.

use std::collections::BTreeMap;

use super::AdoptError;
use crate::model::{FileTree, KubeVersion, NodeImage, StackId, is_sha256};
use crate::yaml::{get, get_str};

/// A Helm chart dependency the stack pins to an exact version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundComponent {
    /// Key in `stackbot.yaml` and the templates (the addon stage, e.g. `ccm`).
    pub key: String,
    pub chart: String,
    pub repository: String,
    /// The version exactly as written (the literal that gets templated).
    pub version: String,
    /// The `Chart.yaml` that declares it.
    pub file: String,
    /// The chart archive is vendored under `charts/` (as `helm dependency update` leaves it).
    pub vendored: bool,
    /// The vendored archive's sha256 (hex), as a Helm index's `digest` gives it.
    pub archive_digest: Option<String>,
    /// `generated:` of the `Chart.lock` locking this version, as written.
    pub locked_at: Option<String>,
}

impl FoundComponent {
    /// The stage directory the component belongs to (`cluster-addon/<stage>/...`), if any.
    pub fn stage_dir(&self) -> Option<&str> {
        self.file
            .strip_suffix("/Chart.yaml")
            .filter(|d| d.starts_with("cluster-addon/") && d.matches('/').count() == 1)
    }
}

/// The node image found in the tree, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundImage {
    pub image: NodeImage,
    /// Described by an ORC `Image` or the plugin config, not only as an image-list entry.
    pub primary: bool,
    /// The Kubernetes version the image is built for, read from its name or URL.
    pub version: Option<KubeVersion>,
    /// Files that describe it.
    pub files: Vec<String>,
}

/// Everything the tree pins.
#[derive(Debug, Clone)]
pub struct StackFacts {
    pub stack: StackId,
    pub kubernetes: KubeVersion,
    pub node_image: Option<FoundImage>,
    pub components: Vec<FoundComponent>,
    /// Things a maintainer should know (not errors).
    pub notes: Vec<String>,
}

fn yaml_docs(bytes: &[u8]) -> Vec<yaml_serde::Value> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for doc in yaml_serde::Deserializer::from_str(text) {
        match serde::Deserialize::deserialize(doc) {
            Ok(v) => out.push(v),
            Err(_) => return Vec::new(),
        }
    }
    out
}

pub(crate) fn is_yaml(path: &str) -> bool {
    path.ends_with(".yaml") || path.ends_with(".yml")
}

/// The first `v<maj>.<min>.<patch>` in `s`.
pub fn find_kube_version(s: &str) -> Option<KubeVersion> {
    let b = s.as_bytes();
    for (i, _) in s.match_indices('v') {
        let rest = &s[i + 1..];
        let len = rest
            .bytes()
            .take_while(|c| c.is_ascii_digit() || *c == b'.')
            .count();
        let mut cand = rest[..len].trim_end_matches('.');
        // `v1.34.7.qcow2` → `1.34.7`: keep three numeric parts.
        let parts: Vec<&str> = cand.split('.').collect();
        if parts.len() > 3 {
            let keep = parts[..3].iter().map(|p| p.len()).sum::<usize>() + 2;
            cand = &cand[..keep];
        }
        // `kube-v1.34.7` is a version; `dev1.2.3` is not.
        if i > 0 && b[i - 1].is_ascii_alphanumeric() {
            continue;
        }
        if let Ok(v) = format!("v{cand}").parse::<KubeVersion>() {
            return Some(v);
        }
    }
    None
}

/// A node image description from one file.
#[derive(Debug, Clone)]
struct ImageCandidate {
    /// Describes the image a stack uses (ORC `Image`, plugin config), as opposed to an entry
    /// of an image list that also holds other versions.
    primary: bool,
    name: Option<String>,
    url: String,
    sha256: Option<String>,
    file: String,
}

fn image_candidates(tree: &FileTree) -> Vec<ImageCandidate> {
    let mut out = Vec::new();
    for (path, bytes) in tree.iter().filter(|(p, _)| is_yaml(p)) {
        for doc in yaml_docs(bytes) {
            // ORC `Image` (openstack-resource-controller), as scs and scs2 ship it.
            if get_str(&doc, &["apiVersion"])
                .is_some_and(|a| a.starts_with("openstack.k-orc.cloud/"))
                && get_str(&doc, &["kind"]) == Some("Image")
            {
                let download = get(&doc, &["spec", "resource", "content", "download"]);
                if let Some(url) = download.and_then(|d| get_str(d, &["url"])) {
                    let sha = download
                        .filter(|d| {
                            get_str(d, &["hash", "algorithm"]).is_none_or(|a| a == "sha256")
                        })
                        .and_then(|d| get_str(d, &["hash", "value"]))
                        .filter(|s| is_sha256(s));
                    out.push(ImageCandidate {
                        primary: true,
                        name: get_str(&doc, &["metadata", "name"])
                            .filter(|n| !n.contains("{{"))
                            .map(str::to_string),
                        url: url.to_string(),
                        sha256: sha.map(str::to_string),
                        file: path.clone(),
                    });
                }
            }
            // csctl-openstack plugin input (`node-images/config.yaml`).
            if let Some(list) = get(&doc, &["openStackNodeImages"]).and_then(|l| l.as_sequence()) {
                for img in list {
                    if let Some(url) = get_str(img, &["url"]).filter(|u| !u.is_empty()) {
                        out.push(ImageCandidate {
                            primary: true,
                            name: get_str(img, &["createOpts", "name"]).map(str::to_string),
                            url: url.to_string(),
                            sha256: None,
                            file: path.clone(),
                        });
                    }
                }
            }
            // openstack-image-manager image list (scs2 `kubernetes.yaml`).
            if let Some(list) = get(&doc, &["images"]).and_then(|l| l.as_sequence()) {
                for img in list {
                    let base = get_str(img, &["name"]);
                    let sep = get_str(img, &["separator"]).unwrap_or("-");
                    let Some(versions) = get(img, &["versions"]).and_then(|v| v.as_sequence())
                    else {
                        continue;
                    };
                    for v in versions {
                        let (Some(version), Some(url)) =
                            (get_str(v, &["version"]), get_str(v, &["url"]))
                        else {
                            continue;
                        };
                        let sha = get_str(v, &["checksum"])
                            .and_then(|c| c.strip_prefix("sha256:"))
                            .filter(|s| is_sha256(s));
                        out.push(ImageCandidate {
                            primary: false,
                            name: base.map(|b| format!("{b}{sep}{version}")),
                            url: url.to_string(),
                            sha256: sha.map(str::to_string),
                            file: path.clone(),
                        });
                    }
                }
            }
        }
    }
    out
}

/// Merge the candidates describing one URL; two different checksums for one image is a
/// contradiction a human must resolve.
fn merge(url: &str, cands: &[&ImageCandidate]) -> Result<FoundImage, AdoptError> {
    let mut image = NodeImage {
        name: String::new(),
        url: url.to_string(),
        sha256: String::new(),
        build_date: None,
    };
    let mut files: Vec<String> = Vec::new();
    let mut sha_from = String::new();
    for c in cands {
        if image.name.is_empty()
            && let Some(n) = &c.name
        {
            image.name = n.clone();
        }
        if let Some(s) = &c.sha256 {
            if image.sha256.is_empty() {
                image.sha256 = s.clone();
                sha_from = c.file.clone();
            } else if &image.sha256 != s {
                return Err(AdoptError::refused(
                    &c.file,
                    None,
                    None,
                    format!(
                        "node image {url} has sha256 {s} here but {} in {sha_from}",
                        image.sha256
                    ),
                    "one image has one checksum: correct the wrong one, then adopt again",
                ));
            }
        }
        if !files.contains(&c.file) {
            files.push(c.file.clone());
        }
    }
    let version = find_kube_version(&image.name).or_else(|| find_kube_version(url));
    Ok(FoundImage {
        image,
        primary: cands.iter().any(|c| c.primary),
        version,
        files,
    })
}

/// When no description names the image (scs: the ORC `Image` takes its name from Helm
/// values), the value of a `name:` field elsewhere ending in the image's version is its name.
fn name_from_values(tree: &FileTree, version: KubeVersion) -> Option<String> {
    let suffix = version.to_string();
    let mut found: Vec<String> = Vec::new();
    for (_, bytes) in tree.iter().filter(|(p, _)| is_yaml(p)) {
        let Ok(text) = std::str::from_utf8(bytes) else {
            continue;
        };
        for line in text.lines() {
            let t = line.trim_start().trim_start_matches("- ");
            if let Some(v) = t.strip_prefix("name:") {
                let v = v.trim().trim_matches(['"', '\'']);
                if v.len() > suffix.len()
                    && v.ends_with(&suffix)
                    && !v.contains(['{', ' ', '/', ':'])
                    && !found.iter().any(|f| f == v)
                {
                    found.push(v.to_string());
                }
            }
        }
    }
    (found.len() == 1).then(|| found.remove(0))
}

fn node_image(
    tree: &FileTree,
    kubernetes: KubeVersion,
    notes: &mut Vec<String>,
) -> Result<Option<FoundImage>, AdoptError> {
    let cands = image_candidates(tree);
    let mut by_url: BTreeMap<&str, Vec<&ImageCandidate>> = BTreeMap::new();
    for c in &cands {
        by_url.entry(c.url.as_str()).or_default().push(c);
    }
    let mut images = Vec::new();
    for (url, cs) in &by_url {
        images.push(merge(url, cs)?);
    }
    let (current, other): (Vec<FoundImage>, Vec<FoundImage>) = images
        .into_iter()
        .partition(|i| i.version == Some(kubernetes));
    let mut chosen = match (current.len(), other.len()) {
        (1, _) => {
            for o in other.iter().filter(|o| o.primary) {
                notes.push(format!(
                    "{}: describes node image `{}` for {}, not the stack's {kubernetes}: kept as written",
                    o.files.join(", "),
                    o.image.name,
                    o.version.map_or("an unknown version".into(), |v| v.to_string()),
                ));
            }
            current.into_iter().next()
        }
        (0, 0) => None,
        (0, 1) => {
            let img = other.into_iter().next().expect("one");
            notes.push(format!(
                "node image `{}` ({}) is for {} but the stack is for {kubernetes}: it is pinned as it is; the next release uses the image of its own version",
                img.image.name,
                img.files.join(", "),
                img.version.map_or("an unknown version".into(), |v| v.to_string()),
            ));
            Some(img)
        }
        (0, n) => {
            notes.push(format!(
                "{n} node images are described, none for {kubernetes}: none is pinned and they stay as written"
            ));
            None
        }
        (_, _) => {
            let files: Vec<String> = current.iter().flat_map(|i| i.files.clone()).collect();
            let urls: Vec<&str> = current.iter().map(|i| i.image.url.as_str()).collect();
            return Err(AdoptError::refused(
                &files[0],
                None,
                None,
                format!(
                    "several node images are described for {kubernetes} ({}): a release set pins one",
                    urls.join(", ")
                ),
                "keep one node image per stack, then adopt again",
            ));
        }
    };
    if let Some(img) = chosen.as_mut()
        && img.image.name.is_empty()
    {
        match img.version.and_then(|v| name_from_values(tree, v)) {
            Some(n) => img.image.name = n,
            None => {
                let stem = img
                    .image
                    .url
                    .rsplit('/')
                    .next()
                    .unwrap_or_default()
                    .split('.')
                    .next()
                    .unwrap_or_default()
                    .to_string();
                notes.push(format!(
                    "node image {}: no file names it; the lock records `{stem}` (edit `node_image.name` in stackbot.yaml if Glance knows it by another name)",
                    img.image.url
                ));
                img.image.name = stem;
            }
        }
    }
    if let Some(img) = &chosen
        && img.image.sha256.is_empty()
    {
        notes.push(format!(
            "node image {}: no sha256 in the tree, so the lock has none; the next release verifies one from `<url>.CHECKSUM`",
            img.image.url
        ));
    }
    Ok(chosen)
}

fn components(tree: &FileTree, notes: &mut Vec<String>) -> Vec<FoundComponent> {
    let mut found: Vec<FoundComponent> = Vec::new();
    let charts: Vec<&String> = tree
        .keys()
        .filter(|p| {
            p.starts_with("cluster-addon/")
                && p.ends_with("/Chart.yaml")
                && p.matches('/').count() <= 2
        })
        .collect();
    for path in charts {
        let Some(doc) = yaml_docs(&tree[path]).into_iter().next() else {
            notes.push(format!(
                "{path}: not valid YAML, its dependencies are not read"
            ));
            continue;
        };
        let dir = path.strip_suffix("/Chart.yaml").expect("filtered");
        let stage = dir.strip_prefix("cluster-addon/");
        let deps: Vec<&yaml_serde::Value> = get(&doc, &["dependencies"])
            .and_then(|d| d.as_sequence())
            .map(|s| s.iter().collect())
            .unwrap_or_default();
        let mut here = Vec::new();
        for d in deps {
            let (Some(chart), Some(version)) = (get_str(d, &["name"]), get(d, &["version"])) else {
                continue;
            };
            let Some(version) = crate::yaml::scalar_text(version) else {
                continue;
            };
            let repository = get_str(d, &["repository"]).unwrap_or_default();
            if !(repository.starts_with("https://")
                || repository.starts_with("http://")
                || repository.starts_with("oci://"))
            {
                notes.push(format!(
                    "{path}: dependency `{chart}` comes from `{repository}`, not a chart repository: kept as written"
                ));
                continue;
            }
            if !crate::render::exact_version(&version) {
                notes.push(format!(
                    "{path}: dependency `{chart}` asks for `{version}`, a range Helm resolves: kept as written"
                ));
                continue;
            }
            let alias = get_str(d, &["alias"]).unwrap_or(chart);
            let archive = tree.get(&format!("{dir}/charts/{chart}-{version}.tgz"));
            let locked_at = archive.and_then(|_| locked_at(tree, dir, chart, &version));
            let digest = archive.map(|b| crate::render::archive_digest(b));
            here.push((
                alias.to_string(),
                chart,
                repository,
                version,
                digest,
                locked_at,
            ));
        }
        let single = here.len() == 1;
        for (alias, chart, repository, version, archive_digest, locked_at) in here {
            let vendored = archive_digest.is_some();
            let key = match stage {
                Some(s) if single => s.to_string(),
                Some(s) => format!("{s}-{alias}"),
                None => alias,
            };
            let mut unique = key.clone();
            let mut n = 2;
            while found.iter().any(|c| c.key == unique) {
                unique = format!("{key}-{n}");
                n += 1;
            }
            if vendored {
                notes.push(format!(
                    "{dir}/charts/{chart}-{version}.tgz is vendored (component `{unique}`): the templates keep it; rendering a set that pins another version takes that version's archive, which `render --release-set` fetches from {repository} (checked against the index's digest) into the templates"
                ));
            }
            found.push(FoundComponent {
                key: unique,
                chart: chart.to_string(),
                repository: repository.to_string(),
                version,
                file: path.clone(),
                vendored,
                archive_digest,
                locked_at,
            });
        }
    }
    found
}

/// The `generated:` of `<dir>/Chart.lock` when it locks `chart` at `version`.
fn locked_at(tree: &FileTree, dir: &str, chart: &str, version: &str) -> Option<String> {
    let bytes = tree.get(&format!("{dir}/Chart.lock"))?;
    let locks = stackbot_package::chartlock::locked(bytes, "Chart.lock").ok()?;
    if !locks
        .iter()
        .any(|l| l.name == chart && l.version == version)
    {
        return None;
    }
    let doc: yaml_serde::Value = yaml_serde::from_slice(bytes).ok()?;
    doc.get("generated")?.as_str().map(str::to_string)
}

/// Upstream's per-minor source layout (SCS cluster-stacks PR #259: `providers/<p>/<stack>/1-XX/`
/// with a `stack.yaml` beside a `csctl.yaml` naming the minor only) is `hack/build.sh`'s input,
/// not a release: the patch is in `stack.yaml`, and the build rewrites charts and image names.
/// Refused naming both lines, with the way on (docs/adopt.md says what supporting it takes).
fn per_minor_source_layout(tree: &FileTree, csctl: &[u8]) -> Option<AdoptError> {
    let stack = tree.get("stack.yaml")?;
    let line_of = |text: &[u8]| {
        String::from_utf8_lossy(text)
            .lines()
            .enumerate()
            .find(|(_, l)| l.trim_start().starts_with("kubernetesVersion:"))
            .map(|(i, l)| (i + 1, l.trim().to_string()))
    };
    let (line, written) = line_of(csctl)?;
    let version = written.trim_start_matches("kubernetesVersion:").trim();
    if version.trim_start_matches('v').split('.').count() != 2 {
        return None;
    }
    let patch = line_of(stack)
        .map(|(l, w)| format!(" (stack.yaml:{l}: `{w}`)"))
        .unwrap_or_default();
    Some(AdoptError::refused(
        "csctl.yaml",
        Some(line),
        Some("config.kubernetesVersion".into()),
        format!(
            "`{version}` names a minor only, and stack.yaml beside it holds the patch{patch}: this is upstream's per-minor source layout (SCS cluster-stacks PR #259), the input of `hack/build.sh`, not a release tree"
        ),
        "adopt a release tree (what `hack/build.sh` writes, with the patch in csctl.yaml) or a released tag's `providers/<provider>/<stack>/`; docs/adopt.md, \"Upstream's per-minor layout\", says what reading this layout takes",
    ))
}

/// Read what the tree pins. Fails (naming the file and field) when `csctl.yaml` is missing or
/// invalid, or when the node image descriptions contradict each other.
pub fn discover(tree: &FileTree) -> Result<StackFacts, AdoptError> {
    let Some(csctl) = tree.get("csctl.yaml") else {
        return Err(AdoptError::refused(
            "csctl.yaml",
            None,
            None,
            "is missing: a csctl stack directory has csctl.yaml at its root".into(),
            "pass the stack directory itself (the one holding csctl.yaml)",
        ));
    };
    if let Some(refusal) = per_minor_source_layout(tree, csctl) {
        return Err(refusal);
    }
    let cfg = crate::package::csctl::parse(csctl).map_err(|e| {
        let text = e.to_string();
        let (file, message) = text
            .split_once(": ")
            .map(|(f, m)| (f.to_string(), m.to_string()))
            .unwrap_or(("csctl.yaml".into(), text));
        AdoptError::refused(
            &file,
            None,
            None,
            message,
            "fix csctl.yaml so csctl itself accepts it, then adopt again",
        )
    })?;
    let mut notes = Vec::new();
    let node_image = node_image(tree, cfg.kubernetes, &mut notes)?;
    let components = components(tree, &mut notes);
    Ok(StackFacts {
        stack: cfg.stack,
        kubernetes: cfg.kubernetes,
        node_image,
        components,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_versions_are_found_in_names_and_urls() {
        let v = |s: &str| find_kube_version(s).map(|v| v.to_string());
        assert_eq!(v("ubuntu-capi-image-v1.34.7").as_deref(), Some("v1.34.7"));
        assert_eq!(
            v("https://x/ubuntu-2404-kube-v1.34/ubuntu-2404-kube-v1.34.7.qcow2").as_deref(),
            Some("v1.34.7")
        );
        assert_eq!(v("kindest/node:v1.30.10").as_deref(), Some("v1.30.10"));
        assert_eq!(v("nothing here"), None);
    }
}
