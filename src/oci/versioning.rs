//! Release numbers as the registry sees them.
//!
//! When a release goes to the forge *and* to OCI, the next `v<N>` must be above every number
//! either of them holds, or the two would disagree about what `v3` is. This is the OCI half:
//! a pure function over the repository's full tag list (see `Registry::list_tags`).

use crate::model::{Minor, ReleaseName, StackId};

/// What a tag list says about one stack × minor.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TagScan {
    /// Highest stable `N` among tags `<provider>-<name>-<major>-<minor>-v<N>`.
    pub highest: Option<u64>,
    /// Tags CSO cannot parse (it skips them with a warning; so does the bot).
    pub unparsable: Vec<String>,
}

/// Scan tags for one stack and minor. Tags of other stacks or minors are ignored silently;
/// hash-mode tags (`v0-sha-…`) are not numbered and so do not count.
pub fn scan_tags(tags: &[String], stack: &StackId, minor: Minor) -> TagScan {
    let mut scan = TagScan::default();
    for tag in tags {
        match ReleaseName::parse(tag) {
            Ok(r) if &r.stack == stack && r.minor == minor && r.version.is_stable() => {
                scan.highest = scan.highest.max(Some(r.version.major));
            }
            Ok(_) => {}
            Err(_) => scan.unparsable.push(tag.clone()),
        }
    }
    scan
}

/// Highest stable release number of `stack` for `minor` among `tags`, logging a warning for
/// each tag CSO could not parse. The next release is `v<highest + 1>` (or `v1`).
pub fn highest_stable(tags: &[String], stack: &StackId, minor: Minor) -> Option<u64> {
    let scan = scan_tags(tags, stack, minor);
    for tag in &scan.unparsable {
        tracing::warn!(%tag, "skipping OCI tag that is not a cluster-stack release name");
    }
    scan.highest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn highest_counts_only_this_stack_minor_and_stable_channel() {
        let stack = StackId::new("openstack", "scs2").unwrap();
        let minor: Minor = "1.34".parse().unwrap();
        let all = tags(&[
            "openstack-scs2-1-34-v2",
            "openstack-scs2-1-34-v10",
            "openstack-scs2-1-34-v0-sha-azlfam7",
            "openstack-scs2-1-33-v99",
            "openstack-scs-1-34-v50",
            "latest",
            "openstack-scs2-1-34",
        ]);
        let scan = scan_tags(&all, &stack, minor);
        // Numeric, not lexical: v10 > v2.
        assert_eq!(scan.highest, Some(10));
        assert_eq!(scan.unparsable, tags(&["latest", "openstack-scs2-1-34"]));
        assert_eq!(highest_stable(&all, &stack, minor), Some(10));
        let other: Minor = "1.35".parse().unwrap();
        assert_eq!(highest_stable(&all, &stack, other), None);
        assert_eq!(highest_stable(&[], &stack, minor), None);
    }
}
