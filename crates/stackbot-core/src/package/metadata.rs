//! `metadata.yaml`: the one file CSO reads to learn a release's versions (§2.8).

use super::PackageError;
use crate::model::{KubeVersion, StackVersion};

const FILE: &str = "metadata.yaml";
/// The only `apiVersion` csctl writes (CSO ignores it).
pub const API_VERSION: &str = "metadata.clusterstack.x-k8s.io/v1alpha1";

/// The three component versions of a release. CSO requires all three, `nodeImage` included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versions {
    pub cluster_stack: StackVersion,
    pub cluster_addon: StackVersion,
    pub node_image: StackVersion,
}

impl Versions {
    /// The same version for all three components (csctl hash mode; our `--version` default).
    pub fn all(v: StackVersion) -> Self {
        Versions {
            cluster_stack: v.clone(),
            cluster_addon: v.clone(),
            node_image: v,
        }
    }
}

/// How the versions of a package are chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionSelection {
    /// csctl `--mode hash`: `v0-sha.<first 7 of the clusterStack hash>` for all three.
    Hash,
    /// Versions decided by the caller (e.g. [`super::versions::for_release`] or `--version`).
    Explicit(Versions),
}

/// The content of `metadata.yaml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    pub versions: Versions,
    pub kubernetes: KubeVersion,
}

impl Metadata {
    /// Serialise exactly as csctl's yaml.v3 `Marshal` does: fixed key order, 4-space indent,
    /// trailing newline. The values are restricted to `[A-Za-z0-9_.-]`, so never quoted.
    pub fn to_yaml(&self) -> String {
        format!(
            "apiVersion: {API_VERSION}\nversions:\n    clusterStack: {}\n    kubernetes: {}\n    components:\n        clusterAddon: {}\n        nodeImage: {}\n",
            self.versions.cluster_stack.dot(),
            self.kubernetes,
            self.versions.cluster_addon.dot(),
            self.versions.node_image.dot(),
        )
    }

    /// Parse a `metadata.yaml` of an existing release (any indent), validating like CSO's
    /// `ensureMetadata`: all three versions present and in dot form, kubernetes `vX.Y.Z`.
    pub fn parse(text: &str) -> Result<Self, PackageError> {
        let doc = document(text)?;
        let ver = |field: &str| {
            StackVersion::parse_dot(text_field(&doc, field)?)
                .map_err(|e| PackageError::field(FILE, field, e))
        };
        let kubernetes = kubernetes_field(&doc)?;
        Ok(Metadata {
            versions: Versions {
                cluster_stack: ver("versions.clusterStack")?,
                cluster_addon: ver("versions.components.clusterAddon")?,
                node_image: ver("versions.components.nodeImage")?,
            },
            kubernetes,
        })
    }
}

/// `versions.kubernetes` of a release's `metadata.yaml`, or what is wrong with the file (not
/// YAML, over a limit, no such field, not a Kubernetes version). Only this field is asked
/// for, so a release whose other versions CSO would refuse still says which Kubernetes it is
/// for; the field is read as [`Metadata::parse`] reads it.
pub fn kubernetes(metadata: &[u8]) -> Result<KubeVersion, String> {
    let text = std::str::from_utf8(metadata).map_err(|_| format!("{FILE}: is not UTF-8 text"))?;
    document(text)
        .and_then(|doc| kubernetes_field(&doc))
        .map_err(|e| e.to_string())
}

/// The bounds `metadata.yaml` is read within: it is a release asset anyone with write access
/// to the forge or the registry could replace. Built in, not configured: csctl and stackbot
/// write it as seven lines, about 250 bytes and ten nodes, nesting three deep, so a file
/// anywhere near these bounds is not one they wrote and no setting should let it through.
const LIMITS: crate::yaml::Limits = crate::yaml::Limits {
    max_bytes: 64 * 1024,
    max_depth: 16,
    max_nodes: 10_000,
    setting: None,
};

/// The file as YAML, read within [`LIMITS`].
fn document(text: &str) -> Result<yaml_serde::Value, PackageError> {
    crate::yaml::from_str(text, FILE, &LIMITS).map_err(|e| match e.limit {
        Some(_) => PackageError::invalid(FILE, e.message),
        None => PackageError::invalid(FILE, format!("is {}", e.message)),
    })
}

/// The non-empty string at `field`, a dotted path (as messages name it).
fn text_field<'a>(doc: &'a yaml_serde::Value, field: &str) -> Result<&'a str, PackageError> {
    crate::yaml::get_str(doc, &field.split('.').collect::<Vec<_>>())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| PackageError::field(FILE, field, "is missing or not a string"))
}

fn kubernetes_field(doc: &yaml_serde::Value) -> Result<KubeVersion, PackageError> {
    const FIELD: &str = "versions.kubernetes";
    text_field(doc, FIELD)?
        .parse()
        .map_err(|e| PackageError::field(FILE, FIELD, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_matches_csctl_bytes_and_round_trips() {
        let m = Metadata {
            versions: Versions::all(StackVersion::hash_mode("azlfam7rgn")),
            kubernetes: "v1.34.7".parse().unwrap(),
        };
        let expected = "apiVersion: metadata.clusterstack.x-k8s.io/v1alpha1\nversions:\n    clusterStack: v0-sha.azlfam7\n    kubernetes: v1.34.7\n    components:\n        clusterAddon: v0-sha.azlfam7\n        nodeImage: v0-sha.azlfam7\n";
        assert_eq!(m.to_yaml(), expected);
        assert_eq!(Metadata::parse(expected).unwrap(), m);
    }

    #[test]
    fn a_metadata_file_whose_aliases_expand_past_the_limits_is_refused_unbuilt() {
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for (i, prev) in ["b", "c", "d", "e", "f", "g"]
            .iter()
            .zip(["a", "b", "c", "d", "e", "f"])
        {
            bomb.push_str(&format!("{i}: &{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
        }
        let e = Metadata::parse(&bomb).unwrap_err().to_string();
        assert!(e.contains("built-in limit `max_nodes` (10000)"), "{e}");
        assert!(!e.contains("stackbot.yaml"), "no setting governs it: {e}");
        let big = format!(
            "versions:\n  kubernetes: v1.34.7\n#{}\n",
            "x".repeat(64 * 1024)
        );
        let e = kubernetes(big.as_bytes()).unwrap_err();
        assert!(e.contains("built-in limit `max_bytes` (65536)"), "{e}");
        let e = Metadata::parse("versions: [").unwrap_err().to_string();
        assert!(e.contains("is not valid YAML"), "{e}");
    }

    #[test]
    fn the_kubernetes_version_alone_is_read_as_the_whole_file_reads_it() {
        let only = "versions:\n  kubernetes: v1.34.6\n";
        assert_eq!(kubernetes(only.as_bytes()), Ok("v1.34.6".parse().unwrap()));
        for wrong in [
            "versions:\n  kubernetes: 1.34\n",
            "versions:\n  other: 1\n",
            "versions: [",
        ] {
            let alone = kubernetes(wrong.as_bytes()).unwrap_err();
            assert_eq!(alone, Metadata::parse(wrong).unwrap_err().to_string());
            assert!(alone.contains("metadata.yaml"), "{alone}");
        }
        assert!(kubernetes(b"\xff").unwrap_err().contains("UTF-8"));
    }

    #[test]
    fn parse_requires_node_image_like_cso() {
        let y = "versions:\n  clusterStack: v2\n  kubernetes: v1.34.7\n  components:\n    clusterAddon: v2\n";
        let e = Metadata::parse(y).unwrap_err().to_string();
        assert!(e.contains("versions.components.nodeImage"), "{e}");
    }
}
