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

/// The versions of the next stable release, or `None` when nothing changed.
///
/// `highest_n` is the highest `N` among existing `…-vN` tags of the series (which may be
/// higher than `previous`'s if its assets were lost); `clusterStack` becomes `v(N+1)`.
/// `clusterAddon` is bumped only when `clusterAddonDir` or `clusterAddonValues` changed and
/// `nodeImage` only when `nodeImageDir` changed, as csctl does; the first release is
/// `v1/v1/v1`. A previous non-stable component version restarts at `v1`.
pub fn next_stable(
    current: &ReleaseHashes,
    highest_n: Option<u64>,
    previous: Option<&Previous>,
) -> Option<Versions> {
    let Some(prev) = previous else {
        let n = highest_n.map_or(1, |n| n + 1);
        return Some(Versions {
            cluster_stack: StackVersion::stable(n),
            cluster_addon: StackVersion::stable(1),
            node_image: StackVersion::stable(1),
        });
    };
    if prev.hashes.cluster_stack == current.cluster_stack {
        return None;
    }
    let pv = &prev.metadata.versions;
    let n = highest_n.unwrap_or(0).max(if pv.cluster_stack.is_stable() {
        pv.cluster_stack.major
    } else {
        0
    });
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
    Some(Versions {
        cluster_stack: StackVersion::stable(n + 1),
        cluster_addon: bump(&pv.cluster_addon, addon_changed),
        node_image: bump(&pv.node_image, node_changed),
    })
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
        let v = next_stable(&h("a", "b"), None, None).unwrap();
        assert_eq!(dots(&v), ["v1", "v1", "v1"]);
    }

    #[test]
    fn unchanged_stack_needs_no_release() {
        let p = prev(1, 1, 1, h("a", "b"));
        assert_eq!(next_stable(&h("a", "b"), Some(1), Some(&p)), None);
    }

    #[test]
    fn k8s_patch_only_bumps_cluster_stack_unlike_csctl_refusing() {
        let p = prev(1, 1, 1, h("a", "b"));
        let v = next_stable(&h("changed", "b"), Some(1), Some(&p)).unwrap();
        assert_eq!(dots(&v), ["v2", "v1", "v1"]);
    }

    #[test]
    fn addon_change_bumps_addon_and_highest_tag_wins() {
        let p = prev(2, 1, 1, h("a", "b"));
        let v = next_stable(&h("c", "d"), Some(4), Some(&p)).unwrap();
        assert_eq!(dots(&v), ["v5", "v2", "v1"]);
    }
}
