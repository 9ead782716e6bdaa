//! Helm repository indexes: which chart versions are really published (a git tag is not a
//! chart; `helm dependency build` reads only `index.yaml`).
//!
//! Selection is by parsed semver, never by string prefix (`2.3.0` is not in the `2.33` series),
//! and pre-releases are skipped: the cloud-provider-openstack index carries `2.33.0-alpha.*`
//! charts whose `appVersion` is the *previous* Kubernetes minor.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::VersionRule;
use crate::model::Minor;

/// One published chart version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChartVersion {
    /// Parsed strictly, so ordering and series matching are numeric.
    pub version: semver::Version,
    /// sha256 of the chart archive, recorded in the release set.
    pub digest: Option<String>,
    /// When the chart was added to the index (`created`), if the index says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<chrono::DateTime<chrono::Utc>>,
    /// Marked `deprecated: true` by its maintainers: never chosen.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deprecated: bool,
}

/// Chart name → published versions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HelmIndex {
    /// Chart name → every published version with a semver version.
    pub charts: BTreeMap<String, Vec<ChartVersion>>,
}

/// The index URL of a repository.
pub fn index_url(repository: &str) -> String {
    format!("{}/index.yaml", repository.trim_end_matches('/'))
}

/// Parse `index.yaml` leniently: entries whose version is not semver are ignored (they can
/// never match a rule), but a document without `entries` is an error.
pub fn parse_index(text: &str) -> Result<HelmIndex, String> {
    let doc: yaml_serde::Value =
        yaml_serde::from_str(text).map_err(|e| format!("index.yaml is not valid YAML: {e}"))?;
    let entries = doc
        .get("entries")
        .and_then(|e| e.as_mapping())
        .ok_or("index.yaml has no `entries` map (not a Helm repository index?)")?;
    let mut charts = BTreeMap::new();
    for (name, list) in entries {
        let Some(name) = name.as_str() else { continue };
        let versions = list
            .as_sequence()
            .into_iter()
            .flatten()
            .filter_map(|e| {
                let v = e.get("version")?.as_str()?;
                Some(ChartVersion {
                    version: semver::Version::parse(v).ok()?,
                    digest: e.get("digest").and_then(|d| d.as_str()).map(str::to_string),
                    created: e
                        .get("created")
                        .and_then(|c| c.as_str())
                        .and_then(|c| chrono::DateTime::parse_from_rfc3339(c).ok())
                        .map(|c| c.with_timezone(&chrono::Utc)),
                    deprecated: e
                        .get("deprecated")
                        .and_then(|d| d.as_bool())
                        .unwrap_or(false),
                })
            })
            .collect();
        charts.insert(name.to_string(), versions);
    }
    Ok(HelmIndex { charts })
}

/// What a rule asks for, in words (for "waiting for …" messages).
pub fn describe_rule(rule: &VersionRule, minor: Minor) -> String {
    match rule {
        VersionRule::Series(p) => format!("{}.x", expand_series(p, minor)),
        VersionRule::Pin(v) => v.clone(),
        VersionRule::Range(r) => r.clone(),
    }
}

fn expand_series(pattern: &str, minor: Minor) -> String {
    pattern
        .replace("{minor}", &minor.minor.to_string())
        .replace("{major}", &minor.major.to_string())
}

/// The highest GA version of `chart` matching `rule` for Kubernetes `minor`, `Ok(None)` when
/// none is published yet. Errors only for a rule that cannot be interpreted. Deprecated
/// entries are never chosen; with `as_of`, neither are entries the index says were created
/// after that day (entries without `created` cannot be dated and count as published).
pub fn select(
    index: &HelmIndex,
    chart: &str,
    rule: &VersionRule,
    minor: Minor,
    as_of: Option<chrono::NaiveDate>,
) -> Result<Option<ChartVersion>, String> {
    let matches: Box<dyn Fn(&semver::Version) -> bool> = match rule {
        VersionRule::Series(p) => {
            let series = expand_series(p, minor);
            let nums: Vec<u64> = series
                .split('.')
                .map(|n| n.parse::<u64>())
                .collect::<Result<_, _>>()
                .map_err(|_| format!("series `{series}` is not `<major>.<minor>`"))?;
            let [maj, min] = nums[..] else {
                return Err(format!("series `{series}` is not `<major>.<minor>`"));
            };
            Box::new(move |v| v.major == maj && v.minor == min)
        }
        VersionRule::Pin(p) => {
            let pin = semver::Version::parse(p).map_err(|e| format!("pin `{p}`: {e}"))?;
            Box::new(move |v| *v == pin)
        }
        VersionRule::Range(r) => {
            let req = semver::VersionReq::parse(r).map_err(|e| format!("range `{r}`: {e}"))?;
            Box::new(move |v| req.matches(v))
        }
    };
    let is_pin = matches!(rule, VersionRule::Pin(_));
    Ok(index
        .charts
        .get(chart)
        .into_iter()
        .flatten()
        .filter(|c| (c.version.pre.is_empty() || is_pin) && matches(&c.version))
        .filter(|c| !c.deprecated)
        .filter(|c| as_of.is_none_or(|day| c.created.is_none_or(|t| t.date_naive() <= day)))
        .max_by(|a, b| a.version.cmp(&b.version))
        .cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> HelmIndex {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/upstream/helm-index-cpo.yaml"
        ))
        .unwrap();
        parse_index(&text).unwrap()
    }

    fn m(s: &str) -> Minor {
        s.parse().unwrap()
    }

    #[test]
    fn series_picks_highest_ga_by_semver_not_prefix() {
        let idx = fixture();
        let rule = VersionRule::Series("2.{minor}".into());
        let pick = |chart: &str, minor: &str| {
            select(&idx, chart, &rule, m(minor), None)
                .unwrap()
                .map(|c| c.version.to_string())
        };
        assert_eq!(
            pick("openstack-cinder-csi", "1.34").as_deref(),
            Some("2.34.3")
        );
        assert_eq!(
            pick("openstack-cinder-csi", "1.33").as_deref(),
            Some("2.33.1")
        );
        // 2.3.0 exists (legacy) but is not the 2.33 series, and not 1.3's either when asked for 1.36.
        assert_eq!(pick("openstack-cinder-csi", "1.36"), None);
        assert_eq!(pick("openstack-cloud-controller-manager", "1.36"), None);
        assert_eq!(
            pick("openstack-cinder-csi", "1.3").as_deref(),
            Some("2.3.0")
        );
        let d = select(&idx, "openstack-cinder-csi", &rule, m("1.35"), None)
            .unwrap()
            .unwrap();
        assert_eq!(
            d.digest.as_deref(),
            Some("f32351c3efabec9bf1d99024b2f4e03b44d830725d22ef5604afbe36c0746a0c")
        );
    }

    #[test]
    fn prereleases_are_skipped() {
        let mut idx = HelmIndex::default();
        idx.charts.insert(
            "c".into(),
            ["2.37.0-alpha.1", "2.36.0-rc.1"]
                .iter()
                .map(|v| ChartVersion {
                    version: semver::Version::parse(v).unwrap(),
                    digest: None,
                    created: None,
                    deprecated: false,
                })
                .collect(),
        );
        let rule = VersionRule::Series("2.{minor}".into());
        assert_eq!(select(&idx, "c", &rule, m("1.36"), None).unwrap(), None);
        let range = VersionRule::Range(">=2.0.0".into());
        assert_eq!(select(&idx, "c", &range, m("1.36"), None).unwrap(), None);
    }

    #[test]
    fn pin_and_range() {
        let idx = fixture();
        let pin = VersionRule::Pin("2.34.1".into());
        let got = select(&idx, "openstack-cinder-csi", &pin, m("1.36"), None)
            .unwrap()
            .unwrap();
        assert_eq!(got.version.to_string(), "2.34.1");
        let missing = VersionRule::Pin("2.34.2".into());
        assert_eq!(
            select(&idx, "openstack-cinder-csi", &missing, m("1.36"), None).unwrap(),
            None
        );
        let range = VersionRule::Range(">=2.32.0, <2.34.0".into());
        let got = select(&idx, "openstack-cinder-csi", &range, m("1.36"), None)
            .unwrap()
            .unwrap();
        assert_eq!(got.version.to_string(), "2.33.1");
    }

    #[test]
    fn deprecated_entries_are_never_chosen_and_as_of_skips_later_charts() {
        let idx = parse_index(
            "entries:\n  c:\n  - version: 2.34.3\n    deprecated: true\n    created: \"2026-04-20T10:00:00.123456789Z\"\n  - version: 2.34.2\n    created: \"2026-04-10T10:00:00Z\"\n  - version: 2.34.1\n    created: \"2026-03-01T10:00:00+02:00\"\n  - version: 2.34.0\n",
        )
        .unwrap();
        let rule = VersionRule::Series("2.{minor}".into());
        let pick = |as_of: Option<&str>| {
            select(
                &idx,
                "c",
                &rule,
                m("1.34"),
                as_of.map(|d| d.parse().unwrap()),
            )
            .unwrap()
            .map(|c| c.version.to_string())
        };
        assert_eq!(
            pick(None).as_deref(),
            Some("2.34.2"),
            "2.34.3 is deprecated"
        );
        assert_eq!(pick(Some("2026-04-10")).as_deref(), Some("2.34.2"));
        assert_eq!(pick(Some("2026-04-09")).as_deref(), Some("2.34.1"));
        // Undated entries cannot be filtered: they count as published.
        assert_eq!(pick(Some("2020-01-01")).as_deref(), Some("2.34.0"));
        let pin = VersionRule::Pin("2.34.3".into());
        assert_eq!(select(&idx, "c", &pin, m("1.34"), None).unwrap(), None);
    }

    #[test]
    fn non_index_documents_are_errors() {
        assert!(parse_index("<html></html>").is_err());
        assert!(parse_index("apiVersion: v1\n").is_err());
    }
}
