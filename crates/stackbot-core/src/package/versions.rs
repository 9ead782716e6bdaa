//! Stable-mode version numbering (csctl §2.2), with csctl's `validateHash` flaw fixed: a
//! release is due whenever the clusterStack hash changed (a k8s patch bump included), not
//! only when the addon or node-image hashes did.

use super::{Metadata, ReleaseHashes, Versions};
use crate::model::StackVersion;

/// The latest existing stable release of a series: its `hashes.json` and `metadata.yaml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Previous {
    pub hashes: ReleaseHashes,
    pub metadata: Metadata,
}

/// The component versions of stable release `n` (its clusterStack version is `vN`).
///
/// Which `N` comes next, and whether a release is due at all, are the plan's decisions
/// ([`crate::plan`]: one more than the highest number the series ever used; nothing when the
/// clusterStack hash is what the latest release shipped). Here only csctl's component rule:
/// `clusterAddon` is bumped when `clusterAddonDir` or `clusterAddonValues` changed and
/// `nodeImage` when `nodeImageDir` changed; the first release is `v1` for both; a previous
/// non-stable component version restarts at `v1`. The same content as `previous` (an
/// unfinished release being finished) keeps `previous`'s component versions as they are.
pub fn for_release(n: u64, current: &ReleaseHashes, previous: Option<&Previous>) -> Versions {
    let cluster_stack = StackVersion::stable(n);
    let Some(prev) = previous else {
        return Versions {
            cluster_stack,
            cluster_addon: StackVersion::stable(1),
            node_image: StackVersion::stable(1),
        };
    };
    let pv = &prev.metadata.versions;
    if prev.hashes.cluster_stack == current.cluster_stack {
        return Versions {
            cluster_stack,
            cluster_addon: pv.cluster_addon.clone(),
            node_image: pv.node_image.clone(),
        };
    }
    let bump = |v: &StackVersion, changed: bool| {
        if !v.is_stable() {
            StackVersion::stable(1)
        } else if changed {
            v.next_stable()
        } else {
            v.clone()
        }
    };
    let addon_changed = prev.hashes.cluster_addon_dir != current.cluster_addon_dir
        || prev.hashes.cluster_addon_values != current.cluster_addon_values;
    let node_changed = prev.hashes.node_image_dir != current.node_image_dir;
    Versions {
        cluster_stack,
        cluster_addon: bump(&pv.cluster_addon, addon_changed),
        node_image: bump(&pv.node_image, node_changed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(cs: &str, addon: &str) -> ReleaseHashes {
        ReleaseHashes {
            cluster_stack: cs.into(),
            cluster_addon_dir: addon.into(),
            ..Default::default()
        }
    }

    fn prev(cs: u64, ca: u64, ni: u64, hashes: ReleaseHashes) -> Previous {
        Previous {
            hashes,
            metadata: Metadata {
                versions: Versions {
                    cluster_stack: StackVersion::stable(cs),
                    cluster_addon: StackVersion::stable(ca),
                    node_image: StackVersion::stable(ni),
                },
                kubernetes: "v1.34.3".parse().unwrap(),
            },
        }
    }

    fn dots(v: &Versions) -> [String; 3] {
        [
            v.cluster_stack.dot(),
            v.cluster_addon.dot(),
            v.node_image.dot(),
        ]
    }

    #[test]
    fn first_release_is_v1_everywhere() {
        let v = for_release(1, &h("a", "b"), None);
        assert_eq!(dots(&v), ["v1", "v1", "v1"]);
    }

    #[test]
    fn finishing_the_same_content_keeps_the_component_versions() {
        let p = prev(1, 3, 2, h("a", "b"));
        assert_eq!(
            dots(&for_release(2, &h("a", "b"), Some(&p))),
            ["v2", "v3", "v2"]
        );
    }

    #[test]
    fn k8s_patch_only_bumps_cluster_stack_unlike_csctl_refusing() {
        let p = prev(1, 1, 1, h("a", "b"));
        let v = for_release(2, &h("changed", "b"), Some(&p));
        assert_eq!(dots(&v), ["v2", "v1", "v1"]);
    }

    #[test]
    fn addon_change_bumps_addon_whatever_number_the_plan_chose() {
        let p = prev(2, 1, 1, h("a", "b"));
        let v = for_release(5, &h("c", "d"), Some(&p));
        assert_eq!(dots(&v), ["v5", "v2", "v1"]);
    }
}
