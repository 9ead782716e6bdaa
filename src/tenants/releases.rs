//! Which releases tenants can move to: the newest stable release per stack × minor, read
//! from every target the configuration publishes to (the forge's releases, the OCI
//! repository's tags, or both), with the Kubernetes version each one ships.
//!
//! Cost is bounded by the number of series, never by history: the forge is one release
//! listing plus one `metadata.yaml` per series; OCI is one tag listing plus, per series whose
//! newest release the forge does not already have, one manifest and one blob.

use std::collections::{BTreeMap, BTreeSet};

use super::plan::AvailableRelease;
use crate::forge::{Forge, ForgeError, RepoRef};
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
    // Compiled once: asked about every release's notes for every tenant in every run.
    static VERSION: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"v\d+\.\d+\.\d+").expect("valid regex"));
    VERSION
        .find_iter(body)
        .filter_map(|m| m.as_str().parse::<KubeVersion>().ok())
        .find(|k| k.minor() == name.minor)
}

/// The published stable forge releases of `stacks` (newest per minor), with their Kubernetes
/// versions.
pub fn available_releases(
    forge: &dyn Forge,
    repo: &RepoRef,
    stacks: &BTreeSet<StackId>,
) -> Result<Vec<AvailableRelease>, ForgeError> {
    let releases: Vec<(ReleaseName, crate::forge::ReleaseInfo)> = forge
        .list_releases(repo)?
        .into_iter()
        .filter(|r| !r.draft)
        .filter_map(|r| Some((ReleaseName::parse(&r.tag).ok()?, r)))
        .collect();
    if crate::mutation::active("cost-bounded-by-series-and-tenants") {
        // Mutated: walk the whole history, every asset of every release.
        for (_, r) in &releases {
            for a in &r.assets {
                forge.download_asset(repo, r.id, a)?;
            }
        }
    }
    // What each older release ships, as its notes say: no request beyond the listing.
    let mut earlier: BTreeMap<(StackId, Minor), BTreeMap<u64, KubeVersion>> = BTreeMap::new();
    for (name, r) in &releases {
        if let Some(k) = kubernetes_of(name, None, &r.body) {
            earlier
                .entry((name.stack.clone(), name.minor))
                .or_default()
                .insert(name.version.major, k);
        }
    }
    let newest = newest_per_series(stacks, releases.into_iter());
    let mut out = Vec::new();
    for (name, r) in newest {
        let meta = match r.assets.iter().find(|a| a.name == "metadata.yaml") {
            Some(a) => Some(forge.download_asset(repo, r.id, a)?),
            None => None,
        };
        let Some(kubernetes) = kubernetes_of(&name, meta.as_deref(), &r.body) else {
            tracing::warn!("release {name} names no Kubernetes version; skipped");
            continue;
        };
        let mut earlier = earlier
            .remove(&(name.stack.clone(), name.minor))
            .unwrap_or_default();
        earlier.retain(|major, _| *major < name.version.major);
        out.push(AvailableRelease {
            name,
            kubernetes,
            html_url: r.html_url,
            body: r.body,
            earlier,
        });
    }
    Ok(out)
}

/// The newest stable release per stack × minor among the OCI repository's tags, for the
/// series where it is newer than every release in `known` (read from the forge already).
/// One tag listing, then for each such series the manifest and `metadata.yaml` of its newest
/// tag only. A release without a readable Kubernetes version is skipped with a warning.
pub fn oci_releases(
    registry: &Registry,
    stacks: &BTreeSet<StackId>,
    known: &[AvailableRelease],
) -> Result<Vec<AvailableRelease>, OciError> {
    if crate::mutation::active("tenants-follow-every-target") {
        return Ok(Vec::new()); // mutated: tenants see forge releases only
    }
    let tags = registry
        .list_tags()?
        .into_iter()
        .filter_map(|t| Some((ReleaseName::parse(&t).ok()?, ())));
    let newest = newest_per_series(stacks, tags);
    let reference = registry.target().reference();
    let mut out = Vec::new();
    for (name, ()) in newest {
        let covered = known.iter().any(|k| {
            k.name.stack == name.stack
                && k.name.minor == name.minor
                && k.name.version.major >= name.version.major
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

/// The newest stable release per stack × minor of `stacks` among `releases` (names that are
/// not releases are left out before), in series order. Pure.
fn newest_per_series<T>(
    stacks: &BTreeSet<StackId>,
    releases: impl Iterator<Item = (ReleaseName, T)>,
) -> Vec<(ReleaseName, T)> {
    let mut newest: BTreeMap<(StackId, Minor), (ReleaseName, T)> = BTreeMap::new();
    for (name, r) in releases {
        if !stacks.contains(&name.stack) || !name.version.is_stable() {
            continue;
        }
        let key = (name.stack.clone(), name.minor);
        if newest
            .get(&key)
            .is_none_or(|(n, _)| n.version.major < name.version.major)
        {
            newest.insert(key, (name, r));
        }
    }
    newest.into_values().collect()
}

/// The newest release per stack × minor of both lists (on a tie, the first list's: a forge
/// release has a web page and notes). Pure.
pub fn newest(
    first: Vec<AvailableRelease>,
    second: Vec<AvailableRelease>,
) -> Vec<AvailableRelease> {
    let mut out: BTreeMap<(StackId, Minor), AvailableRelease> = BTreeMap::new();
    for r in first.into_iter().chain(second) {
        let key = (r.name.stack.clone(), r.name.minor);
        match out.get_mut(&key) {
            Some(o) if o.name.version.major >= r.name.version.major => {}
            Some(o) => {
                let mut earlier = std::mem::take(&mut o.earlier);
                earlier.extend(r.earlier.clone());
                earlier.insert(o.name.version.major, o.kubernetes);
                earlier.retain(|major, _| *major < r.name.version.major);
                *o = AvailableRelease { earlier, ..r };
            }
            None => {
                out.insert(key, r);
            }
        }
    }
    out.into_values().collect()
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
