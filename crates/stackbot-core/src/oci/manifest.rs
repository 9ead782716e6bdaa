//! The OCI manifest of a release, built exactly as csctl (oras-go v2.5, `PackManifestVersion1_1`)
//! builds it, minus the creation timestamp.
//!
//! Pure: the manifest and its digest are a function of the release files, the Kubernetes
//! version and the clusterStack hash. Without `org.opencontainers.image.created` the bytes
//! are reproducible, so re-running a release computes the same digest and the registry
//! reconciliation can tell "already published" from "someone published something else".

use std::collections::BTreeMap;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::{OciError, sha256_digest};
use crate::model::{FileTree, KubeVersion};

/// `artifactType` of every cluster-stack release manifest (csctl `pkg/cmd/mediatype.go`).
pub const ARTIFACT_TYPE: &str = "application/vnd.scs.cluster-stacks.v1";
/// Media type of the manifest itself.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The OCI empty descriptor's media type, used for the config.
pub const EMPTY_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";
/// The empty config blob: `{}`.
pub const EMPTY_CONFIG: &[u8] = b"{}";
/// `sha256("{}")`, the digest of [`EMPTY_CONFIG`].
pub const EMPTY_DIGEST: &str =
    "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
/// Layer annotation naming the file: oras's file store (and so CSO) writes a layer to disk
/// only under this name.
pub const TITLE_ANNOTATION: &str = "org.opencontainers.image.title";
/// The creation timestamp oras adds by default; the bot adds it only when configured.
pub const CREATED_ANNOTATION: &str = "org.opencontainers.image.created";
/// Media type oras gives a file pushed with an empty media type.
pub const DEFAULT_LAYER_MEDIA_TYPE: &str = "application/vnd.oci.image.layer.v1.tar";
/// The checksum file the packager writes beside the assets.
pub use crate::package::SHA256SUMS;

/// csctl's media type for a release file (`pkg/cmd/utils.go getMediaType`), with oras's
/// default for the files csctl has no type for.
///
/// `SHA256SUMS` gets the default, like any other file csctl does not know: the goal is the
/// manifest csctl would push for the same directory, and consumers ignore media types.
pub fn media_type_for(file_name: &str) -> &'static str {
    match file_name {
        "clusteraddon.yaml" => "application/vnd.scs.cluster-addon.config.layer.v1+yaml",
        "metadata.yaml" => "application/vnd.scs.metadata.layer.v1+yaml",
        "node-images.yaml" => "application/vnd.scs.node-image.config.layer.v1+yaml",
        // sic: csctl labels the JSON file `+yaml`.
        "hashes.json" => "application/vnd.scs.hashes.layer.v1+yaml",
        n if n.ends_with(".tgz") && n.contains("cluster-addon") => {
            "application/vnd.scs.cluster-addon.layer.v1.tar+gzip"
        }
        n if n.ends_with(".tgz") && n.contains("cluster-class") => {
            "application/vnd.scs.cluster-class.v1.tar+gzip"
        }
        n if n.ends_with(".tgz") && n.contains("node-image") => {
            "application/vnd.scs.node-image.layer.v1.tar+gzip"
        }
        _ => DEFAULT_LAYER_MEDIA_TYPE,
    }
}

/// An OCI content descriptor, fields in the order Go's `ocispec.Descriptor` marshals them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    pub media_type: String,
    pub digest: String,
    pub size: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// Embedded content (base64), as oras embeds `{}` in the empty descriptor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
}

impl Descriptor {
    /// The file name a consumer writes this layer to, if any.
    pub fn title(&self) -> Option<&str> {
        self.annotations.get(TITLE_ANNOTATION).map(String::as_str)
    }
}

/// An OCI image manifest, fields in the order Go's `ocispec.Manifest` marshals them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub schema_version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
    pub config: Descriptor,
    #[serde(default)]
    pub layers: Vec<Descriptor>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// The two manifest annotations csctl sets, read from the release itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseFacts {
    /// `metadata.yaml` `versions.kubernetes` (the `kubernetesVersion` annotation).
    pub kubernetes: KubeVersion,
    /// The cleaned clusterStack hash (`hashes.json` `clusterStack`); the `hash` annotation
    /// is its first 7 characters.
    pub clean_hash: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HashesDoc {
    cluster_stack: String,
}

impl ReleaseFacts {
    /// Read the annotations' sources from a packaged release (`metadata.yaml`, `hashes.json`),
    /// so callers cannot pass values that disagree with the files being pushed.
    pub fn from_files(files: &FileTree) -> Result<Self, OciError> {
        let meta = files
            .get("metadata.yaml")
            .ok_or_else(|| OciError::Release("`metadata.yaml` is missing".into()))?;
        let kubernetes = crate::package::metadata::kubernetes(meta)
            .map_err(|e| OciError::Release(format!("`metadata.yaml`: {e}")))?;
        let hashes = files
            .get("hashes.json")
            .ok_or_else(|| OciError::Release("`hashes.json` is missing".into()))?;
        let hashes: HashesDoc = serde_json::from_slice(hashes)
            .map_err(|e| OciError::Release(format!("`hashes.json`: {e}")))?;
        Ok(ReleaseFacts {
            kubernetes,
            clean_hash: hashes.cluster_stack,
        })
    }

    /// csctl's `hash` annotation: the first 7 characters, or `""` when the hash is shorter.
    pub fn short_hash(&self) -> String {
        if self.clean_hash.chars().count() < 7 {
            String::new()
        } else {
            self.clean_hash.chars().take(7).collect()
        }
    }
}

/// A manifest ready to push: the exact bytes, their digest, and which blob is which file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltManifest {
    pub manifest: Manifest,
    /// The bytes that are pushed and hashed (compact JSON, Go's escaping).
    pub json: Vec<u8>,
    /// `sha256:<hex>` of [`BuiltManifest::json`].
    pub digest: String,
}

impl BuiltManifest {
    /// Every blob the manifest references, config first, each with its bytes taken from
    /// `files` (the config is the constant `{}`). Deduplicated by digest: two identical
    /// files are one blob.
    pub fn blobs<'a>(&'a self, files: &'a FileTree) -> Vec<(&'a str, &'a [u8])> {
        let mut out: Vec<(&str, &[u8])> = vec![(EMPTY_DIGEST, EMPTY_CONFIG)];
        for layer in &self.manifest.layers {
            if out.iter().any(|(d, _)| *d == layer.digest) {
                continue;
            }
            let title = layer.title().expect("built layers are titled");
            out.push((layer.digest.as_str(), files[title].as_slice()));
        }
        out
    }
}

/// Whether a file name can be a release asset: a plain name in a flat directory, something
/// every consumer can write to disk. Used for what we push and for titles we pull.
pub fn check_file_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name == "." || name == ".." {
        return Err(format!("`{name}` is not a file name"));
    }
    if name.contains('/') || name.contains('\\') {
        return Err(format!(
            "`{name}` is not in the top directory: a release is a flat directory"
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(format!(
            "`{}` contains control characters",
            name.escape_debug()
        ));
    }
    Ok(())
}

/// Build the manifest csctl would push for these release files, with `created` (RFC 3339)
/// only when the configuration asks for a timestamp.
pub fn build_manifest(
    files: &FileTree,
    facts: &ReleaseFacts,
    created: Option<&str>,
) -> Result<BuiltManifest, OciError> {
    if files.is_empty() {
        return Err(OciError::Release("the release has no files".into()));
    }
    let mut layers = Vec::with_capacity(files.len());
    // FileTree iterates in byte order, which is csctl's `os.ReadDir` order.
    for (name, bytes) in files {
        check_file_name(name).map_err(OciError::Release)?;
        layers.push(Descriptor {
            media_type: media_type_for(name).to_string(),
            digest: sha256_digest(bytes),
            size: bytes.len() as u64,
            annotations: BTreeMap::from([(TITLE_ANNOTATION.to_string(), name.clone())]),
            data: None,
        });
    }
    let mut annotations = BTreeMap::from([
        ("hash".to_string(), facts.short_hash()),
        (
            "kubernetesVersion".to_string(),
            facts.kubernetes.to_string(),
        ),
    ]);
    if let Some(created) = created {
        chrono::DateTime::parse_from_rfc3339(created).map_err(|e| {
            OciError::Release(format!(
                "creation time `{created}` is not RFC 3339 (e.g. `2026-05-01T00:00:00Z`): {e}"
            ))
        })?;
        annotations.insert(CREATED_ANNOTATION.to_string(), created.to_string());
    }
    let manifest = Manifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.to_string()),
        artifact_type: Some(ARTIFACT_TYPE.to_string()),
        config: Descriptor {
            media_type: EMPTY_MEDIA_TYPE.to_string(),
            digest: EMPTY_DIGEST.to_string(),
            size: EMPTY_CONFIG.len() as u64,
            annotations: BTreeMap::new(),
            data: Some(base64::engine::general_purpose::STANDARD.encode(EMPTY_CONFIG)),
        },
        layers,
        annotations,
    };
    let json = go_json(&manifest);
    let digest = sha256_digest(&json);
    Ok(BuiltManifest {
        manifest,
        json,
        digest,
    })
}

/// Whether the manifest already under a tag is this release, allowing only the creation
/// annotation to differ. With `created_annotation` on, a re-run on another day builds another
/// digest for the same content; that must still count as "already published", not as a
/// conflict. Without the annotation this reduces to digest equality.
pub fn same_release(existing_json: &[u8], built: &BuiltManifest) -> bool {
    if sha256_digest(existing_json) == built.digest {
        return true;
    }
    let Ok(mut existing) = serde_json::from_slice::<Manifest>(existing_json) else {
        return false;
    };
    let mut wanted = built.manifest.clone();
    existing.annotations.remove(CREATED_ANNOTATION);
    wanted.annotations.remove(CREATED_ANNOTATION);
    existing == wanted
}

/// The sha256 (hex, as the forge's asset digests are written) of each titled layer of the
/// manifest under a tag, by title: what the registry holds of a release, without its blobs.
/// A manifest that is not an OCI image manifest holds no layers.
pub fn layer_sha256s(manifest_json: &[u8]) -> BTreeMap<String, String> {
    let Ok(m) = serde_json::from_slice::<Manifest>(manifest_json) else {
        return BTreeMap::new();
    };
    m.layers
        .iter()
        .filter_map(|l| {
            let hex = l.digest.strip_prefix("sha256:")?;
            Some((l.title()?.to_string(), hex.to_string()))
        })
        .collect()
}

/// Compact JSON with Go `encoding/json`'s HTML-safe escaping, so a manifest with `<`, `>` or
/// `&` in a value hashes as the Go tools would hash it. These characters only ever occur
/// inside strings, so replacing them in the output is exact.
fn go_json(manifest: &Manifest) -> Vec<u8> {
    let text = serde_json::to_string(manifest).expect("manifest serializes");
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out.into_bytes()
}

/// One layer as `plan` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LayerDescription {
    pub file: String,
    pub media_type: String,
    pub digest: String,
    pub size: u64,
}

/// What pushing a release would do, for `plan` and `release --dry-run`: computed without
/// contacting the registry, so a plan needs no credentials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PushDescription {
    /// Full repository reference (`registry.scs.community/kaas/cluster-stacks`).
    pub target: String,
    pub tag: String,
    pub manifest_digest: String,
    pub artifact_type: String,
    pub annotations: BTreeMap<String, String>,
    pub layers: Vec<LayerDescription>,
}

/// Describe the push of `files` as `tag` to `target` (a full repository reference).
pub fn describe_push(
    target: &str,
    tag: &str,
    files: &FileTree,
    facts: &ReleaseFacts,
    created: Option<&str>,
) -> Result<PushDescription, OciError> {
    let built = build_manifest(files, facts, created)?;
    Ok(PushDescription {
        target: target.to_string(),
        tag: tag.to_string(),
        manifest_digest: built.digest,
        artifact_type: ARTIFACT_TYPE.to_string(),
        annotations: built.manifest.annotations,
        layers: built
            .manifest
            .layers
            .into_iter()
            .map(|l| LayerDescription {
                file: l.title().unwrap_or_default().to_string(),
                media_type: l.media_type,
                digest: l.digest,
                size: l.size,
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release() -> FileTree {
        let mut f = FileTree::new();
        f.insert(
            "metadata.yaml".into(),
            b"apiVersion: metadata.clusterstack.x-k8s.io/v1alpha1\nversions:\n    clusterStack: v2\n    kubernetes: v1.34.7\n    components:\n        clusterAddon: v2\n        nodeImage: v1\n".to_vec(),
        );
        f.insert(
            "hashes.json".into(),
            b"{\n  \"clusterStack\": \"azlfam7rgn823z07ougej26xmpzsohlj0tvr4s0njis\",\n  \"clusterAddonDir\": \"x\",\n  \"clusterAddonValues\": \"\"\n}".to_vec(),
        );
        f.insert(
            "openstack-scs2-1-34-cluster-class-v2.tgz".into(),
            b"class".to_vec(),
        );
        f.insert(
            "openstack-scs2-1-34-cluster-addon-v2.tgz".into(),
            b"addon".to_vec(),
        );
        f.insert("clusteraddon.yaml".into(), b"addonStages: {}\n".to_vec());
        f.insert("SHA256SUMS".into(), b"sums\n".to_vec());
        f
    }

    fn facts() -> ReleaseFacts {
        ReleaseFacts::from_files(&release()).unwrap()
    }

    #[test]
    fn media_types_follow_csctl() {
        assert_eq!(
            media_type_for("hashes.json"),
            "application/vnd.scs.hashes.layer.v1+yaml"
        );
        assert_eq!(
            media_type_for("openstack-scs2-1-34-cluster-class-v2.tgz"),
            "application/vnd.scs.cluster-class.v1.tar+gzip"
        );
        assert_eq!(
            media_type_for("openstack-scs2-1-34-cluster-addon-v2.tgz"),
            "application/vnd.scs.cluster-addon.layer.v1.tar+gzip"
        );
        assert_eq!(
            media_type_for("openstack-scs2-1-34-node-image-v1.tgz"),
            "application/vnd.scs.node-image.layer.v1.tar+gzip"
        );
        assert_eq!(
            media_type_for("node-images.yaml"),
            "application/vnd.scs.node-image.config.layer.v1+yaml"
        );
        // Not a tgz: csctl has no type, oras uses its default.
        assert_eq!(
            media_type_for("cluster-addon-values.yaml"),
            DEFAULT_LAYER_MEDIA_TYPE
        );
        assert_eq!(media_type_for(SHA256SUMS), DEFAULT_LAYER_MEDIA_TYPE);
    }

    #[test]
    fn empty_digest_is_the_digest_of_an_empty_object() {
        assert_eq!(sha256_digest(EMPTY_CONFIG), EMPTY_DIGEST);
    }

    #[test]
    fn facts_come_from_metadata_and_hashes() {
        let f = facts();
        assert_eq!(f.kubernetes.to_string(), "v1.34.7");
        assert_eq!(f.short_hash(), "azlfam7");
        let short = ReleaseFacts {
            clean_hash: "abc".into(),
            ..f
        };
        assert_eq!(short.short_hash(), "");
    }

    #[test]
    fn manifest_has_the_oras_layout_and_no_timestamp() {
        let built = build_manifest(&release(), &facts(), None).unwrap();
        let text = String::from_utf8(built.json.clone()).unwrap();
        assert!(
            text.starts_with(
                "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\
\"artifactType\":\"application/vnd.scs.cluster-stacks.v1\",\"config\":{\"mediaType\":\"application/vnd.oci.empty.v1+json\",\
\"digest\":\"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a\",\"size\":2,\"data\":\"e30=\"},\"layers\":["
            ),
            "{text}"
        );
        assert!(
            text.ends_with(
                "],\"annotations\":{\"hash\":\"azlfam7\",\"kubernetesVersion\":\"v1.34.7\"}}"
            ),
            "{text}"
        );
        assert!(!text.contains(CREATED_ANNOTATION));
        let titles: Vec<_> = built
            .manifest
            .layers
            .iter()
            .map(|l| l.title().unwrap())
            .collect();
        // Byte order: uppercase before lowercase, as Go's os.ReadDir sorts.
        assert_eq!(
            titles,
            [
                "SHA256SUMS",
                "clusteraddon.yaml",
                "hashes.json",
                "metadata.yaml",
                "openstack-scs2-1-34-cluster-addon-v2.tgz",
                "openstack-scs2-1-34-cluster-class-v2.tgz"
            ]
        );
        let class = &built.manifest.layers[5];
        assert_eq!(class.digest, sha256_digest(b"class"));
        assert_eq!(class.size, 5);
        assert_eq!(built.digest, sha256_digest(&built.json));
    }

    #[test]
    fn manifest_is_reproducible_and_sensitive_to_every_input() {
        let a = build_manifest(&release(), &facts(), None).unwrap();
        assert_eq!(a, build_manifest(&release(), &facts(), None).unwrap());
        let mut changed = release();
        changed.insert(
            "clusteraddon.yaml".into(),
            b"addonStages: {x: 1}\n".to_vec(),
        );
        assert_ne!(
            a.digest,
            build_manifest(&changed, &facts(), None).unwrap().digest
        );
        let stamped = build_manifest(&release(), &facts(), Some("2026-05-01T00:00:00Z")).unwrap();
        assert_ne!(a.digest, stamped.digest);
        assert_eq!(
            stamped.manifest.annotations[CREATED_ANNOTATION],
            "2026-05-01T00:00:00Z"
        );
        assert!(build_manifest(&release(), &facts(), Some("yesterday")).is_err());
    }

    #[test]
    fn the_layers_under_a_tag_are_the_files_sha256_by_name() {
        let files = release();
        let built = build_manifest(&files, &facts(), None).unwrap();
        let layers = layer_sha256s(&built.json);
        let want: BTreeMap<String, String> = files
            .iter()
            .map(|(n, b)| (n.clone(), sha256_digest(b)["sha256:".len()..].to_string()))
            .collect();
        assert_eq!(layers, want);
        assert!(layer_sha256s(b"{\"not\": \"a manifest\"}").is_empty());
    }

    #[test]
    fn only_the_creation_time_may_differ_for_the_same_release() {
        let plain = build_manifest(&release(), &facts(), None).unwrap();
        let monday = build_manifest(&release(), &facts(), Some("2026-05-04T00:00:00Z")).unwrap();
        let tuesday = build_manifest(&release(), &facts(), Some("2026-05-05T00:00:00Z")).unwrap();
        assert!(same_release(&plain.json, &plain));
        assert!(same_release(&monday.json, &tuesday));
        assert!(same_release(&plain.json, &tuesday));
        let mut changed = release();
        changed.insert("clusteraddon.yaml".into(), b"other\n".to_vec());
        let other = build_manifest(&changed, &facts(), Some("2026-05-05T00:00:00Z")).unwrap();
        assert!(!same_release(&monday.json, &other));
        assert!(!same_release(b"not json", &plain));
    }

    #[test]
    fn blobs_are_config_first_and_deduplicated() {
        let mut files = release();
        files.insert("copy.tgz".into(), b"class".to_vec());
        let built = build_manifest(&files, &facts(), None).unwrap();
        let blobs = built.blobs(&files);
        assert_eq!(blobs[0], (EMPTY_DIGEST, EMPTY_CONFIG));
        assert_eq!(blobs.len(), files.len()); // 7 files, one duplicate, plus the config
    }

    #[test]
    fn html_characters_are_escaped_like_go() {
        let mut files = FileTree::new();
        files.insert("a<b>&c".into(), vec![]);
        let built = build_manifest(&files, &facts(), None).unwrap();
        let text = String::from_utf8(built.json).unwrap();
        assert!(text.contains("a\\u003cb\\u003e\\u0026c"), "{text}");
        // Still valid JSON with the original value.
        let back: Manifest = serde_json::from_str(&text).unwrap();
        assert_eq!(back.layers[0].title(), Some("a<b>&c"));
    }

    #[test]
    fn unusable_file_names_are_refused() {
        for bad in ["", "..", "dir/file", "a\nb"] {
            let mut files = release();
            files.insert(bad.into(), vec![1]);
            assert!(
                matches!(
                    build_manifest(&files, &facts(), None),
                    Err(OciError::Release(_))
                ),
                "{bad:?}"
            );
        }
        assert!(build_manifest(&FileTree::new(), &facts(), None).is_err());
    }

    #[test]
    fn description_lists_target_tag_and_digests() {
        let d = describe_push(
            "registry.example/kaas/cluster-stacks",
            "openstack-scs2-1-34-v2",
            &release(),
            &facts(),
            None,
        )
        .unwrap();
        let built = build_manifest(&release(), &facts(), None).unwrap();
        assert_eq!(d.manifest_digest, built.digest);
        assert_eq!(d.layers.len(), 6);
        assert_eq!(d.layers[3].file, "metadata.yaml");
        assert_eq!(
            d.layers[3].digest,
            sha256_digest(&release()["metadata.yaml"])
        );
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json["tag"], "openstack-scs2-1-34-v2");
        assert_eq!(json["annotations"]["hash"], "azlfam7");
    }
}
