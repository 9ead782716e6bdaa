//! Short property versions of the fuzz targets in `fuzz/` (issue 7, item 5) that are not
//! covered elsewhere: release names have one spelling and round-trip, and the Helm index
//! reader returns exactly the strict-semver versions of a generated index. (The YAML editor's
//! properties are in `tenant_edit_props.rs`, the CHECKSUM parser's in `upstream::robustness`.)

use proptest::prelude::*;
use stackbot::model::ReleaseName;
use stackbot::upstream::helm::parse_index;

fn word() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9]{0,8}"
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof!["0", "[1-9][0-9]{0,3}"]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Every well-formed name parses, and formats back to exactly itself.
    #[test]
    fn release_names_round_trip(
        provider in word(), name in word(), major in number(), minor in number(),
        v in number(), pre in proptest::option::of((word(), "[a-z0-9]{1,8}")),
    ) {
        let tag = match &pre {
            None => format!("{provider}-{name}-{major}-{minor}-v{v}"),
            Some((c, p)) => format!("{provider}-{name}-{major}-{minor}-v{v}-{c}-{p}"),
        };
        let r = ReleaseName::parse(&tag).unwrap();
        prop_assert_eq!(r.to_string(), tag.clone());
        prop_assert_eq!(ReleaseName::parse(&r.to_string()).unwrap(), r);
    }

    /// Arbitrary strings: an error, or a name whose only spelling is the input.
    #[test]
    fn release_name_parsing_has_one_spelling(s in "[a-z0-9v.-]{0,40}") {
        if let Ok(r) = ReleaseName::parse(&s) {
            prop_assert_eq!(r.to_string(), s);
        }
    }

    /// A generated index: the reader keeps exactly the versions that are semver, pre-releases
    /// included (selection skips them later), and ignores the rest.
    #[test]
    fn helm_index_keeps_exactly_the_semver_versions(
        versions in proptest::collection::vec(
            prop_oneof![
                "[0-9]{1,2}\\.[0-9]{1,2}\\.[0-9]{1,2}",
                "[0-9]{1,2}\\.[0-9]{1,2}\\.[0-9]{1,2}-(alpha|rc)\\.[0-9]",
                "v?[0-9]{1,2}\\.[0-9]{1,2}",
                "[a-z]{1,5}",
            ],
            0..12,
        ),
    ) {
        let mut text = String::from("apiVersion: v1\nentries:\n  chart:");
        text.push_str(if versions.is_empty() { " []\n" } else { "\n" });
        for v in &versions {
            text.push_str(&format!("  - name: chart\n    version: \"{v}\"\n    digest: d{v}\n"));
        }
        let index = parse_index(&text).unwrap();
        let got: Vec<String> = index.charts["chart"].iter().map(|c| c.version.to_string()).collect();
        let want: Vec<String> = versions
            .iter()
            .filter_map(|v| semver::Version::parse(v).ok())
            .map(|v| v.to_string())
            .collect();
        prop_assert_eq!(got, want);
        for c in &index.charts["chart"] {
            prop_assert_eq!(c.digest.clone(), Some(format!("d{}", c.version)));
        }
    }
}
