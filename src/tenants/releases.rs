//! Which releases tenants can move to: the newest stable release per stack × minor of the
//! run's [`ReleaseIndex`] (the forge's releases, the OCI repository's tags, or both, as the
//! configuration publishes), with the Kubernetes version each one ships.
//!
//! Cost is bounded by the number of series, never by history: the forge is one release
//! listing plus one `metadata.yaml` per series; OCI is one tag listing plus, per series whose
//! newest release the forge does not already have, one manifest and one blob.

use std::collections::{BTreeMap, BTreeSet};

use super::plan::AvailableRelease;
use crate::forge::{Forge, ForgeError, RepoRef};
use crate::index::{Rank, ReleaseIndex};
use crate::model::{KubeVersion, Minor, ReleaseName, StackId};
use crate::oci::{OciError, Registry};

/// The Kubernetes version of a release: `versions.kubernetes` of its `metadata.yaml`, else
/// the first `vX.Y.Z` of the minor in its notes.
pub fn kubernetes_of(
    name: &ReleaseName,
    metadata: Option<&[u8]>,
    body: &str,
) -> Option<KubeVersion> {
    #[derive(serde::Deserialize)]
    struct Meta {
        versions: MetaVersions,
    }
    #[derive(serde::Deserialize)]
    struct MetaVersions {
        kubernetes: KubeVersion,
    }
    if let Some(m) = metadata.and_then(|b| yaml_serde::from_slice::<Meta>(b).ok()) {
        return Some(m.versions.kubernetes);
    }
    let re = regex::Regex::new(r"v\d+\.\d+\.\d+").expect("valid regex");
    re.find_iter(body)
        .filter_map(|m| m.as_str().parse::<KubeVersion>().ok())
        .find(|k| k.minor() == name.minor)
}

/// The newest published forge release of each series of `stacks` in `index`, with its
/// Kubernetes version (one `metadata.yaml` download each, when it has one) and the versions
/// its earlier releases ship, as their notes say.
pub fn available_releases(
    forge: &dyn Forge,
    repo: &RepoRef,
    index: &ReleaseIndex,
    stacks: &BTreeSet<StackId>,
) -> Result<Vec<AvailableRelease>, ForgeError> {
    if crate::mutation::active("cost-bounded-by-series-and-tenants") {
        // Mutated: walk the whole history, every asset of every release.
        for r in index.listed().iter().filter(|r| !r.draft) {
            if ReleaseName::parse(&r.tag).is_ok() {
                for a in &r.assets {
                    forge.download_asset(repo, r.id, a)?;
                }
            }
        }
    }
    let mut out = Vec::new();
    for ((stack, minor), releases) in index.forge_series() {
        if !stacks.contains(stack) {
            continue;
        }
        let Some(r) = index.newest_on_forge(stack, *minor) else {
            continue;
        };
        let name = ReleaseName::parse(&r.tag).expect("indexed by its name");
        let meta = match r.assets.iter().find(|a| a.name == "metadata.yaml") {
            Some(a) => Some(forge.download_asset(repo, r.id, a)?),
            None => None,
        };
        let Some(kubernetes) = kubernetes_of(&name, meta.as_deref(), &r.body) else {
            tracing::warn!("release {name} names no Kubernetes version; skipped");
            continue;
        };
        // What each older release ships, as its notes say: no request beyond the listing.
        let earlier = releases
            .iter()
            .filter(|o| !o.release.draft && o.n < name.version.major)
            .filter_map(|o| {
                let n = ReleaseName::parse(&o.release.tag).ok()?;
                Some((o.n, kubernetes_of(&n, None, &o.release.body)?))
            })
            .collect();
        out.push(AvailableRelease {
            name,
            kubernetes,
            html_url: r.html_url.clone(),
            body: r.body.clone(),
            earlier,
        });
    }
    Ok(out)
}

/// The newest stable release per stack × minor among the OCI repository's tags in `index`,
/// for the series where it is newer than every release in `known` (read from the forge
/// already): for each such series the manifest and `metadata.yaml` of its newest tag only. A
/// release without a readable Kubernetes version is skipped with a warning.
pub fn oci_releases(
    registry: &Registry,
    index: &ReleaseIndex,
    stacks: &BTreeSet<StackId>,
    known: &[AvailableRelease],
) -> Result<Vec<AvailableRelease>, OciError> {
    if crate::mutation::active("tenants-follow-every-target") {
        return Ok(Vec::new()); // mutated: tenants see forge releases only
    }
    let reference = registry.target().reference();
    let mut out = Vec::new();
    for ((stack, minor), n) in index.oci_series() {
        if !stacks.contains(stack) {
            continue;
        }
        let name = crate::index::name_of(stack, *minor, n);
        let covered = known.iter().any(|k| {
            k.name.stack == name.stack
                && k.name.minor == name.minor
                && !Rank::oci(n).replaces(Rank::forge(k.name.version.major, 0))
        });
        if covered {
            continue;
        }
        let tag = name.to_string();
        let meta = registry.pull_file(&tag, "metadata.yaml")?;
        let Some(kubernetes) = kubernetes_of(&name, meta.as_deref(), "") else {
            tracing::warn!(
                "OCI release {reference}:{tag} names no Kubernetes version in its metadata.yaml; skipped"
            );
            continue;
        };
        out.push(AvailableRelease {
            body: format!("Published to the OCI repository as `{reference}:{tag}`."),
            name,
            kubernetes,
            html_url: String::new(),
            earlier: BTreeMap::new(),
        });
    }
    Ok(out)
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
