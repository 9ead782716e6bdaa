//! Kubernetes security facts: the official CVE feed and each CVE's record.
//!
//! SCS 0210 shortens the patch window to 2 weeks when the patch addresses a *critical* CVE
//! (CVSS base score >= 8), and its conformance test (`k8s_version_policy.py`) decides which
//! versions that concerns from two sources: the official Kubernetes CVE feed (JSON Feed 1.1,
//! one item per CVE) and each CVE's record (CVE JSON 5.x, as the CVE Services API serves
//! `/api/cve/{id}`). stackbot's verdicts must agree with that test, so the reading here is
//! the test's reading, quirks included, and each quirk is named where it is reproduced:
//!
//! - only the CNA container counts (`containers.cna`), never ADP enrichments;
//! - a record is critical when *any* metric whose key looks like `cvssV3_1`, `cvssV4_0`,
//!   `cvssV3_0` (the test's pattern `[cC][vV][sS]{1,2}V\d`, so `cvssV2_0` too) has a
//!   `baseScore` of at least 8;
//! - ranges come from `affected[]` entries whose `product` is exactly `Kubernetes`, and from
//!   their `versions[]` whose `status` is `affected`: `version` (lower bound, `0` or garbage
//!   meaning "from the beginning") with `lessThan` (exclusive) or `lessThanOrEqual`; a bare
//!   `version` is that one version; the loose forms `1.30.x` and `1.30.0 - 1.30.5` are read
//!   as the test reads them (`1.30.x` becomes the *empty* range `[1.30.0, 1.30.0)`, and
//!   `a - b` excludes `b`);
//! - a record without `metrics` or `affected` is not critical (the test skips it).
//!
//! A record the test could not read at all (its parser would raise) is an *error* here, and
//! an error is never "no CVE": [`crate::compliance`] turns it into an `unknown` verdict
//! wherever it could change the answer.

use std::fmt;
use std::sync::LazyLock;

use regex::Regex;

use serde::Serialize;

use crate::model::KubeVersion;

/// The official feed's default address.
pub const DEFAULT_FEED_URL: &str =
    "https://kubernetes.io/docs/reference/issues-security/official-cve-feed/index.json";
/// The CVE Services record address; `{id}` is replaced by the CVE id.
pub const DEFAULT_RECORD_URL: &str = "https://cveawg.mitre.org/api/cve/{id}";
/// The CVSS base score from which a CVE is critical (SCS 0210, `CVE_SEVERITY`).
pub const CRITICAL_SCORE: f64 = 8.0;

/// A version as the conformance test compares them: three integers, ordered as a tuple.
/// Signed, because Python's `int()` accepts a sign and the comparison must stay the test's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Version(pub i64, pub i64, pub i64);

impl Version {
    /// The test's `K8sVersion.MINIMUM`.
    pub const MINIMUM: Version = Version(0, 0, 0);

    /// A Kubernetes version in the test's terms.
    pub fn of(v: KubeVersion) -> Version {
        let c = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        Version(c(v.major), c(v.minor), c(v.patch))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// An affected range, the test's `VersionRange`: `[lower, upper)`, `[lower, upper]` when
/// `inclusive`, or exactly `lower` without `upper`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VersionRange {
    pub lower: Version,
    pub upper: Option<Version>,
    pub inclusive: bool,
}

impl VersionRange {
    /// Whether `v` lies in the range (the test's `__contains__`).
    pub fn contains(&self, v: Version) -> bool {
        match self.upper {
            None => self.lower == v,
            Some(u) if self.inclusive => self.lower <= v && v <= u,
            Some(u) => self.lower <= v && v < u,
        }
    }
}

impl fmt::Display for VersionRange {
    /// `>=1.34.0 <1.34.7`, `>=1.34.0 <=1.34.6`, `=1.30.0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.upper {
            None => write!(f, "={}", self.lower),
            Some(u) => {
                let op = if self.inclusive { "<=" } else { "<" };
                if self.lower == Version::MINIMUM {
                    write!(f, "{op}{u}")
                } else {
                    write!(f, ">={} {op}{u}", self.lower)
                }
            }
        }
    }
}

impl Serialize for VersionRange {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One CVE as its record describes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cve {
    /// `CVE-2024-10220`.
    pub id: String,
    /// The highest CVSS base score among the CNA's metrics (`None`: no CVSS metric).
    pub score: Option<f64>,
    /// Some CVSS metric has a base score of at least [`CRITICAL_SCORE`].
    pub critical: bool,
    /// The affected ranges of the product `Kubernetes`.
    pub affected: Vec<VersionRange>,
}

impl Cve {
    /// Whether the record says `v` is affected.
    pub fn affects(&self, v: KubeVersion) -> bool {
        let v = Version::of(v);
        self.affected.iter().any(|r| r.contains(v))
    }

    /// The record's page for people.
    pub fn url(&self) -> String {
        format!("https://www.cve.org/CVERecord?id={}", self.id)
    }
}

/// Whether `id` is a CVE id (`CVE-YYYY-NNNN…`). The feed is untrusted input and the id goes
/// into a URL: anything else is refused, never requested.
pub fn is_cve_id(id: &str) -> bool {
    let mut parts = id.split('-');
    matches!(
        (parts.next(), parts.next(), parts.next(), parts.next()),
        (Some("CVE"), Some(y), Some(n), None)
            if y.len() == 4
                && y.bytes().all(|b| b.is_ascii_digit())
                && (4..=19).contains(&n.len())
                && n.bytes().all(|b| b.is_ascii_digit())
    )
}

/// The record URL of `id` from the configured pattern.
pub fn record_url(pattern: &str, id: &str) -> String {
    pattern.replace("{id}", id)
}

/// The CVE ids the feed lists, in feed order, deduplicated. Items without an id that is a
/// CVE id are returned apart, so they can be reported (and never requested).
pub fn parse_feed(body: &str) -> Result<(Vec<String>, Vec<String>), String> {
    let v: serde_json::Value = serde_json::from_str(body).map_err(|e| {
        format!(
            "CVE feed is {}: {e}",
            super::kubernetes::describe_body(body)
        )
    })?;
    let items = v
        .get("items")
        .and_then(|i| i.as_array())
        .ok_or("CVE feed has no `items` list (not a JSON Feed)")?;
    let mut ids = Vec::new();
    // A set beside the list: a hostile feed of a million ids stays linear.
    let mut seen = std::collections::HashSet::new();
    let mut refused = Vec::new();
    for item in items {
        match item.get("id").and_then(|i| i.as_str()) {
            Some(id) if is_cve_id(id) => {
                if seen.insert(id) {
                    ids.push(id.to_string());
                }
            }
            Some(other) => refused.push(other.to_string()),
            None => refused.push(item.to_string().chars().take(80).collect()),
        }
    }
    Ok((ids, refused))
}

/// Read one CVE record (CVE JSON 5.x) the way the conformance test does. `Err` where the
/// test's own parser would raise: such a record is unknown, never harmless.
pub fn parse_record(id: &str, body: &str) -> Result<Cve, String> {
    let v: serde_json::Value = serde_json::from_str(body).map_err(|e| {
        format!(
            "CVE record {id} is {}: {e}",
            super::kubernetes::describe_body(body)
        )
    })?;
    let not_critical = Cve {
        id: id.to_string(),
        score: None,
        critical: false,
        affected: Vec::new(),
    };
    // The test skips records whose CNA container lacks `metrics` or `affected`.
    let cna = &v["containers"]["cna"];
    let (Some(metrics), Some(affected)) = (cna.get("metrics"), cna.get("affected")) else {
        if v.get("containers").is_none() && v.get("cveMetadata").is_none() {
            return Err(format!(
                "CVE record {id} is not a CVE JSON 5 record (no `containers`)"
            ));
        }
        return Ok(not_critical);
    };
    let bad = |what: &str| format!("CVE record {id}: {what}");
    let metrics = metrics
        .as_array()
        .ok_or_else(|| bad("`metrics` is not a list"))?;
    let mut score: Option<f64> = None;
    for m in metrics {
        let Some(obj) = m.as_object() else {
            return Err(bad("a metric is not an object"));
        };
        for (key, value) in obj {
            if !is_cvss_key(key) {
                continue;
            }
            let s = value
                .get("baseScore")
                .and_then(|b| b.as_f64())
                .ok_or_else(|| bad(&format!("metric `{key}` has no numeric `baseScore`")))?;
            score = Some(score.map_or(s, |x: f64| x.max(s)));
        }
    }
    let critical = score.is_some_and(|s| s >= CRITICAL_SCORE);
    let mut ranges = Vec::new();
    // The test reads the ranges of critical records only; a non-critical record is not
    // asked to have well-formed ones.
    if critical {
        let affected = affected
            .as_array()
            .ok_or_else(|| bad("`affected` is not a list"))?;
        for a in affected {
            if a.get("product").and_then(|p| p.as_str()) != Some("Kubernetes") {
                if a.get("product").is_none() {
                    return Err(bad("an `affected` entry has no `product`"));
                }
                continue;
            }
            let versions = a
                .get("versions")
                .and_then(|x| x.as_array())
                .ok_or_else(|| bad("the Kubernetes `affected` entry has no `versions` list"))?;
            for vi in versions {
                // The test reads `version_info['status']`: an entry without one makes it
                // raise, so the record is unreadable, never "not affected".
                let Some(status) = vi.get("status") else {
                    return Err(bad("a Kubernetes `versions` entry has no `status`"));
                };
                if status.as_str() != Some("affected") {
                    continue;
                }
                ranges.push(parse_version_info(vi).map_err(|e| bad(&e))?);
            }
        }
        ranges.sort();
        ranges.dedup();
    }
    Ok(Cve {
        id: id.to_string(),
        score,
        critical,
        affected: ranges,
    })
}

/// The test's metric-key pattern `[cC][vV][sS]{1,2}V\d`, anywhere in the key.
fn is_cvss_key(key: &str) -> bool {
    static RE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[cC][vV][sS]{1,2}V\d").expect("static regex"));
    RE.is_match(key)
}

/// Python's `int()` on a string: surrounding whitespace, an optional sign, digits with single
/// underscores between them.
fn py_int(s: &str) -> Option<i64> {
    let t = s.trim();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    {
        return None;
    }
    let n: i64 = digits.replace('_', "").parse().ok()?;
    Some(if neg { -n } else { n })
}

/// The test's `parse_version`: strip, drop a leading `v` and any `+build`, three integers.
fn parse_version(s: &str) -> Option<Version> {
    let t = s.trim();
    let t = t.strip_prefix('v').unwrap_or(t);
    let t = t.split('+').next().unwrap_or("");
    let parts: Vec<&str> = t.split('.').collect();
    let [a, b, c] = parts.as_slice() else {
        return None;
    };
    Some(Version(py_int(a)?, py_int(b)?, py_int(c)?))
}

/// The test's `parse_cve_version_information`. `Err` where it would raise.
fn parse_version_info(vi: &serde_json::Value) -> Result<VersionRange, String> {
    let version = vi.get("version").and_then(|v| v.as_str());
    let Some(version) = version else {
        return Err("an affected version has no `version` string".into());
    };
    let mut lower = parse_version(version);
    let mut upper = None;
    let mut inclusive = false;
    let bound = |k: &str| -> Result<Option<Version>, String> {
        match vi.get(k) {
            None => Ok(None),
            Some(x) => x
                .as_str()
                .and_then(parse_version)
                .map(Some)
                .ok_or_else(|| format!("`{k}: {x}` is not a version")),
        }
    };
    if let Some(u) = bound("lessThanOrEqual")? {
        upper = Some(u);
        inclusive = true;
    } else if let Some(u) = bound("lessThan")? {
        upper = Some(u);
    }
    if lower.is_none() && upper.is_none() {
        if loose_x(version) {
            // `1.30.x`: the test sets both bounds to `1.30.0`, exclusive: an empty range.
            let stripped = version.trim_matches('v');
            let d: Vec<&str> = stripped.split('.').collect();
            let (Some(a), Some(b)) = (
                d.first().and_then(|x| py_int(x)),
                d.get(1).and_then(|x| py_int(x)),
            ) else {
                return Err(format!("`{version}` is not a version"));
            };
            lower = Some(Version(a, b, 0));
            upper = Some(Version(a, b, 0));
        }
        if loose_dash(version) {
            let d: Vec<&str> = version.split('-').collect();
            let a = d.first().and_then(|x| parse_version(x));
            let b = d.get(1).and_then(|x| parse_version(x));
            let (Some(a), Some(b)) = (a, b) else {
                return Err(format!("`{version}` is not a version range"));
            };
            lower = Some(a);
            upper = Some(b);
        }
    }
    let lower = lower.unwrap_or(Version::MINIMUM);
    if upper.is_some_and(|u| u < lower) {
        return Err(format!("`{version}`: the upper bound is below the lower"));
    }
    Ok(VersionRange {
        lower,
        upper,
        inclusive,
    })
}

/// `v?\d+\.\d+\.x` anywhere.
fn loose_x(s: &str) -> bool {
    static RE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"v?\d+\.\d+\.x").expect("static regex"));
    RE.is_match(s)
}

/// `v?\d+\.\d+\.\d+\s+-\s+v?\d+\.\d+\.\d+` anywhere.
fn loose_dash(s: &str) -> bool {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"v?\d+\.\d+\.\d+\s+-\s+v?\d+\.\d+\.\d+").expect("static regex")
    });
    RE.is_match(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn range(vi: serde_json::Value) -> VersionRange {
        parse_version_info(&vi).unwrap()
    }

    fn v(s: &str) -> Version {
        parse_version(s).unwrap()
    }

    #[test]
    fn less_than_excludes_and_less_than_or_equal_includes_the_bound() {
        let r = range(json!({"version": "1.30.0", "lessThan": "1.30.3", "status": "affected"}));
        assert!(r.contains(v("1.30.2")) && !r.contains(v("1.30.3")));
        let r = range(json!({"version": "v1.30.0", "lessThanOrEqual": "v1.30.3"}));
        assert!(r.contains(v("1.30.3")) && !r.contains(v("1.30.4")));
        assert!(!r.contains(v("1.29.9")));
    }

    #[test]
    fn an_unparsable_lower_bound_means_from_the_beginning() {
        for lower in ["0", "unspecified", "n/a", "< 1.30.3"] {
            let r = range(json!({"version": lower, "lessThan": "1.30.3"}));
            assert_eq!(r.lower, Version::MINIMUM, "{lower}");
            assert!(r.contains(v("1.2.3")));
        }
    }

    #[test]
    fn a_bare_version_is_exactly_that_version() {
        let r = range(json!({"version": "1.31.1"}));
        assert!(r.contains(v("1.31.1")) && !r.contains(v("1.31.2")));
    }

    #[test]
    fn the_loose_forms_are_read_as_the_test_reads_them() {
        // `1.30.x` becomes [1.30.0, 1.30.0): the test's range matches nothing.
        let r = range(json!({"version": "1.30.x"}));
        assert_eq!(r.upper, Some(Version(1, 30, 0)));
        assert!(!r.contains(v("1.30.0")) && !r.contains(v("1.30.5")));
        // `a - b` is [a, b).
        let r = range(json!({"version": "1.30.0 - 1.30.5"}));
        assert!(r.contains(v("1.30.0")) && r.contains(v("1.30.4")) && !r.contains(v("1.30.5")));
        let r = range(json!({"version": "v1.29.0 - v1.29.7"}));
        assert!(r.contains(v("1.29.6")));
    }

    #[test]
    fn what_the_test_cannot_parse_is_an_error_never_no_cve() {
        assert!(parse_version_info(&json!({"version": "1.30.0", "lessThan": "soon"})).is_err());
        assert!(parse_version_info(&json!({"lessThan": "1.30.1"})).is_err());
        assert!(parse_version_info(&json!({"version": "1.30.5", "lessThan": "1.30.1"})).is_err());
    }

    #[test]
    fn python_int_semantics() {
        assert_eq!(py_int(" 7 "), Some(7));
        assert_eq!(py_int("1_0"), Some(10));
        assert_eq!(py_int("+3"), Some(3));
        assert_eq!(py_int("x"), None);
        assert_eq!(py_int(""), None);
        assert_eq!(parse_version("v1.30.2+k3s1"), Some(Version(1, 30, 2)));
        assert_eq!(parse_version("1.30"), None);
    }

    #[test]
    fn cvss_keys_follow_the_tests_pattern() {
        for k in [
            "cvssV3_1", "cvssV3_0", "cvssV4_0", "cvssV2_0", "CVSSV3", "cvsV3", "xcvssV31",
        ] {
            assert!(is_cvss_key(k), "{k}");
        }
        for k in ["other", "cvssv3_1", "cvssV", "cvV3", "cvsssV3"] {
            assert!(!is_cvss_key(k), "{k}");
        }
    }

    fn record(metrics: serde_json::Value, affected: serde_json::Value) -> String {
        json!({"dataType": "CVE_RECORD", "cveMetadata": {"cveId": "CVE-2024-10220"},
            "containers": {"cna": {"metrics": metrics, "affected": affected},
                "adp": [{"metrics": [{"cvssV3_1": {"baseScore": 9.9}}]}]}})
        .to_string()
    }

    #[test]
    fn a_record_is_critical_by_any_cna_cvss_metric_and_keeps_kubernetes_ranges_only() {
        let body = record(
            json!([{"cvssV3_1": {"baseScore": 7.2}}, {"cvssV4_0": {"baseScore": 8.1}},
                {"other": {"type": "ssvc"}}]),
            json!([
                {"product": "Kubernetes", "versions": [
                    {"version": "1.30.0", "lessThan": "1.30.3", "status": "affected"},
                    {"version": "1.30.3", "status": "unaffected"}]},
                {"product": "ingress-nginx", "versions": [
                    {"version": "0", "lessThan": "1.11.5", "status": "affected"}]}
            ]),
        );
        let c = parse_record("CVE-2024-10220", &body).unwrap();
        assert!(c.critical);
        assert_eq!(c.score, Some(8.1));
        assert_eq!(c.affected.len(), 1);
        assert!(c.affects("v1.30.2".parse().unwrap()));
        assert!(!c.affects("v1.30.3".parse().unwrap()));
        assert_eq!(c.affected[0].to_string(), ">=1.30.0 <1.30.3");
    }

    #[test]
    fn adp_scores_do_not_count_and_a_record_without_metrics_is_not_critical() {
        let body = record(json!([{"cvssV3_1": {"baseScore": 6.5}}]), json!([]));
        assert!(!parse_record("CVE-2024-10220", &body).unwrap().critical);
        let body = json!({"containers": {"cna": {"affected": []}}}).to_string();
        let c = parse_record("CVE-2024-10220", &body).unwrap();
        assert!(!c.critical && c.score.is_none());
    }

    #[test]
    fn unreadable_records_are_errors() {
        assert!(parse_record("CVE-2024-1", "<html>busy</html>").is_err());
        assert!(parse_record("CVE-2024-1", "{\"message\": \"not found\"}").is_err());
        let body = record(json!([{"cvssV3_1": {"score": 9}}]), json!([]));
        assert!(parse_record("CVE-2024-1", &body).is_err());
    }

    #[test]
    fn a_versions_entry_without_status_makes_the_record_unreadable() {
        // The test reads `version_info['status']` and raises: not "not affected".
        let body = record(
            json!([{"cvssV3_1": {"baseScore": 9.8}}]),
            json!([{"product": "Kubernetes", "versions": [
                {"version": "1.33.0", "lessThan": "1.33.11"}]}]),
        );
        let e = parse_record("CVE-2026-0001", &body).unwrap_err();
        assert!(e.contains("CVE-2026-0001") && e.contains("status"), "{e}");
    }

    #[test]
    fn the_feed_lists_cve_ids_and_refuses_anything_else() {
        let body = json!({"version": "https://jsonfeed.org/version/1.1",
            "items": [{"id": "CVE-2024-10220"}, {"id": "CVE-2024-10220"},
                {"id": "../../etc/passwd"}, {"id": "CVE-2025-1974"}]})
        .to_string();
        let (ids, refused) = parse_feed(&body).unwrap();
        assert_eq!(ids, ["CVE-2024-10220", "CVE-2025-1974"]);
        assert_eq!(refused, ["../../etc/passwd"]);
        assert!(parse_feed("[]").is_err());
        assert_eq!(
            record_url(DEFAULT_RECORD_URL, "CVE-2025-1974"),
            "https://cveawg.mitre.org/api/cve/CVE-2025-1974"
        );
    }
}
