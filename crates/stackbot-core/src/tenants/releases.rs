//! Which releases tenants can move to: the newest stable release per stack × minor of the
//! run's [`ReleaseIndex`] (the forge's releases, the OCI repository's tags, or both, as the
//! configuration publishes), with the Kubernetes version each one ships.
//!
//! Reading them is `stackbot::observe::tenants::releases`; here are the pure rules (the
//! Kubernetes version of a release, the newest of the forge's and the registry's).

use std::collections::BTreeMap;

use super::plan::AvailableRelease;
use crate::index::Rank;
use crate::model::{KubeVersion, Minor, ReleaseName, StackId};

/// The Kubernetes version of a release: `versions.kubernetes` of its `metadata.yaml`, else
/// the first `vX.Y.Z` of the minor in its notes.
pub fn kubernetes_of(
    name: &ReleaseName,
    metadata: Option<&[u8]>,
    body: &str,
) -> Option<KubeVersion> {
    if let Some(k) = metadata.and_then(|b| crate::package::metadata::kubernetes(b).ok()) {
        return Some(k);
    }
    // Compiled once: asked about every release's notes for every tenant in every run.
    static VERSION: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"v\d+\.\d+\.\d+").expect("valid regex"));
    VERSION
        .find_iter(body)
        .filter_map(|m| m.as_str().parse::<KubeVersion>().ok())
        .find(|k| k.minor() == name.minor)
}

/// The newest release per stack × minor of the forge's and the OCI repository's, by the
/// index's one tie-break ([`Rank`]: at an equal number the forge's release, which has a web
/// page and notes). Pure.
pub fn newest(forge: Vec<AvailableRelease>, oci: Vec<AvailableRelease>) -> Vec<AvailableRelease> {
    let ranked = forge
        .into_iter()
        .map(|r| (Rank::forge(r.name.version.major, 0), r))
        .chain(
            oci.into_iter()
                .map(|r| (Rank::oci(r.name.version.major), r)),
        );
    let mut out: BTreeMap<(StackId, Minor), (Rank, AvailableRelease)> = BTreeMap::new();
    for (rank, r) in ranked {
        let key = (r.name.stack.clone(), r.name.minor);
        match out.get_mut(&key) {
            Some((current, o)) if rank.replaces(*current) => {
                let mut earlier = std::mem::take(&mut o.earlier);
                earlier.extend(r.earlier.clone());
                earlier.insert(o.name.version.major, o.kubernetes);
                earlier.retain(|major, _| *major < r.name.version.major);
                *o = AvailableRelease { earlier, ..r };
                *current = rank;
            }
            Some(_) => {}
            None => {
                out.insert(key, (rank, r));
            }
        }
    }
    out.into_values().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(name: &str, url: &str) -> AvailableRelease {
        AvailableRelease {
            name: ReleaseName::parse(name).unwrap(),
            kubernetes: "v1.33.5".parse().unwrap(),
            html_url: url.into(),
            body: String::new(),
            earlier: BTreeMap::new(),
        }
    }

    #[test]
    fn the_newest_per_series_wins_and_a_tie_keeps_the_forge_release() {
        let forge = vec![
            rel("openstack-scs2-1-33-v3", "f"),
            rel("openstack-scs2-1-34-v1", "f"),
        ];
        let oci = vec![
            rel("openstack-scs2-1-33-v3", "o"),
            rel("openstack-scs2-1-34-v2", "o"),
            rel("openstack-scs2-1-35-v1", "o"),
        ];
        let got: Vec<(String, String)> = newest(forge, oci)
            .into_iter()
            .map(|r| (r.name.to_string(), r.html_url))
            .collect();
        assert_eq!(
            got,
            [
                ("openstack-scs2-1-33-v3".to_string(), "f".to_string()),
                ("openstack-scs2-1-34-v2".into(), "o".into()),
                ("openstack-scs2-1-35-v1".into(), "o".into()),
            ]
        );
    }

    #[test]
    fn the_kubernetes_version_comes_from_metadata_then_notes() {
        let n = ReleaseName::parse("openstack-scs2-1-34-v2").unwrap();
        let meta = b"versions:\n    clusterStack: v2\n    kubernetes: v1.34.7\n";
        assert_eq!(
            kubernetes_of(&n, Some(meta), "").unwrap().to_string(),
            "v1.34.7"
        );
        assert_eq!(
            kubernetes_of(&n, None, "built with v1.33.9 tools for v1.34.3")
                .unwrap()
                .to_string(),
            "v1.34.3"
        );
        assert_eq!(kubernetes_of(&n, None, "nothing"), None);
    }
}
