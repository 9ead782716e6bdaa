//! The gate of a stack that publishes to OCI: the registry's candidate tag is part of the
//! candidate, and it is never overwritten.

use super::tests::{assets, candidate, decide_in, decide_where, stable};
use super::*;

const NOW: &str = "2026-12-01T10:00:00Z";

/// What a faithful push of the candidate leaves under its tag: every candidate asset's sha256.
fn pushed() -> BTreeMap<String, String> {
    candidate_assets(&stable(), &assets())
        .iter()
        .map(|(n, b)| (n.clone(), hex::encode(Sha256::digest(b))))
        .collect()
}

#[test]
fn the_registry_gets_the_candidate_before_it_is_published_and_tested() {
    let layers = pushed();
    assert_eq!(
        decide_in(None, None, NOW, InRegistry::Missing),
        Decision::Publish
    );
    assert_eq!(
        decide_in(None, None, NOW, InRegistry::Layers(&layers)),
        Decision::Publish,
        "pushed, the pre-release not made yet: it is finished"
    );
    let fresh = candidate(&[], &[]);
    assert_eq!(
        decide_in(Some(&fresh), None, NOW, InRegistry::Missing),
        Decision::Publish,
        "a published pre-release without its registry tag gets the tag (the same bytes)"
    );
    assert_eq!(
        decide_in(Some(&fresh), None, NOW, InRegistry::Layers(&layers)),
        Decision::Start {
            attempt: 1,
            start: 1
        }
    );
    let passed = candidate(&[(1, NOW)], &[(1, Outcome::Passed)]);
    assert!(matches!(
        decide_in(Some(&passed), None, NOW, InRegistry::Layers(&layers)),
        Decision::Promote(_)
    ));
}

#[test]
fn a_registry_tag_holding_other_bytes_is_refused_whatever_the_forge_says() {
    let mut other = pushed();
    other.insert("metadata.yaml".into(), "00".repeat(32));
    let passed = candidate(&[(1, NOW)], &[(1, Outcome::Passed)]);
    for c in [None, Some(&passed)] {
        let d = decide_in(c, None, NOW, InRegistry::Layers(&other));
        assert!(
            matches!(&d, Decision::Conflict(m) if m.contains("metadata.yaml") && m.contains("never overwritten")),
            "{d:?}"
        );
    }
    let mut fewer = pushed();
    fewer.remove("openstack-scs2-1-34-cluster-class-v3.tgz");
    assert!(matches!(
        decide_in(Some(&passed), None, NOW, InRegistry::Layers(&fewer)),
        Decision::Conflict(m) if m.contains("cluster-class-v3.tgz")
    ));
}

#[test]
fn with_oci_alone_the_pre_release_holds_records_and_the_registry_the_bytes() {
    let layers = pushed();
    // The records-only pre-release: no release asset on the forge.
    let mut records = candidate(&[(1, NOW)], &[(1, Outcome::Passed)]);
    records.assets.clear();
    assert!(matches!(
        decide_where(
            Some(&records),
            None,
            NOW,
            false,
            InRegistry::Layers(&layers)
        ),
        Decision::Promote(_)
    ));
    // With the forge a target too, the same pre-release would be missing its assets.
    assert!(matches!(
        decide_where(Some(&records), None, NOW, true, InRegistry::Layers(&layers)),
        Decision::Conflict(_)
    ));
}

#[test]
fn the_chart_alias_is_the_name_cso_looks_up_for_the_candidate_tag() {
    let cand = candidate_name(&stable(), &assets());
    let (alias, of) = chart_alias(&stable(), &cand);
    assert_eq!(of, "openstack-scs2-1-34-cluster-class-v3.tgz");
    // CSO: `<provider>-<name>-<k8s>-cluster-class-<tag version, dot form>`.
    assert_eq!(
        alias,
        format!(
            "openstack-scs2-1-34-cluster-class-{}.tgz",
            cand.version.dot()
        )
    );
    assert!(alias.contains("-cluster-class-v0-sha."), "{alias}");
}
