//! Kubernetes GA releases: the GitHub releases API (primary, has publication dates) and the
//! `stable-1.NN.txt` markers on dl.k8s.io (fallback, no dates, no rate limit).
//!
//! The API lists drafts and pre-releases and is not ordered by date, so everything is parsed
//! strictly and sorted by version here; nothing downstream trusts list order.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::model::{KubeVersion, Minor};

/// One GA Kubernetes patch release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KubeRelease {
    /// The GA version (`v1.34.7`).
    pub version: KubeVersion,
    /// `None` when known only from a version marker.
    pub published_at: Option<DateTime<Utc>>,
}

/// Most pages followed; 20 × 100 releases reach back years, far beyond any supported minor.
pub const MAX_PAGES: usize = 20;

/// The fields kept from each API object. Snapshots store only these, so they stay small and
/// carry no release notes. Public (its fields are not) because the fetcher of
/// `stackbot_net::upstream` stores exactly these.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ApiRelease {
    tag_name: String,
    #[serde(default)]
    draft: bool,
    #[serde(default)]
    prerelease: bool,
    #[serde(default)]
    published_at: Option<String>,
}

/// What a body that failed to parse looks like, for the error message.
pub fn describe_body(body: &str) -> &'static str {
    let t = body.trim_start();
    if t.is_empty() {
        "empty body"
    } else if t.starts_with('<') {
        "an HTML page"
    } else {
        "malformed or truncated"
    }
}

/// Parse the stored release list: drop drafts and pre-releases by flag *and* by the strict
/// `^v1\.(\d+)\.(\d+)$` tag grammar, sort by version, deduplicate.
pub fn parse_releases(body: &str) -> Result<Vec<KubeRelease>, String> {
    parse_listing(body).map(|(releases, _)| releases)
}

/// A release the API flags GA (neither draft nor prerelease) whose tag is not `vX.Y.Z`
/// (`v1.34.2-rc.1`, `kubernetes-1.35.4`). stackbot never counts it as a release; the standard's
/// test does: it cuts the tag at its first `-` and reads the rest as a version, and raises on
/// one it cannot read. A verdict the test would give differently because of it is `unknown`
/// ([`crate::compliance`]): never more favourable than the standard's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OddTag {
    pub tag: String,
    /// The release as the standard's test reads it (`v1.34.2-rc.1` → v1.34.2, with its date);
    /// `None` when the test cannot read its tag or date and raises: then no verdict of the
    /// test comes at all.
    pub counted_as: Option<KubeRelease>,
}

/// [`parse_releases`], with the GA-flagged releases whose tags are not `vX.Y.Z` ([`OddTag`]).
pub fn parse_listing(body: &str) -> Result<(Vec<KubeRelease>, Vec<OddTag>), String> {
    let list: Vec<ApiRelease> = serde_json::from_str(body)
        .map_err(|e| format!("release list is {}: {e}", describe_body(body)))?;
    let mut odd = Vec::new();
    let mut out: Vec<KubeRelease> = Vec::new();
    for r in list.into_iter().filter(|r| !r.draft && !r.prerelease) {
        let published_at = r
            .published_at
            .as_deref()
            .and_then(|p| DateTime::parse_from_rfc3339(p).ok())
            .map(|d| d.with_timezone(&Utc));
        match r.tag_name.parse::<KubeVersion>() {
            Ok(version) if version.major == 1 => out.push(KubeRelease {
                version,
                published_at,
            }),
            // Another major: neither stackbot nor the test's branches (1.x) count it.
            Ok(_) => {}
            Err(_) => odd.push(OddTag {
                counted_as: as_the_test_reads(&r.tag_name).and_then(|version| {
                    Some(KubeRelease {
                        version,
                        published_at: Some(published_at?),
                    })
                }),
                tag: r.tag_name,
            }),
        }
    }
    out.sort_by_key(|a| a.version);
    out.dedup_by(|a, b| a.version == b.version);
    Ok((out, odd))
}

/// A tag as the standard's test reads it (`parse_github_release_data`): cut at the first `-`,
/// then `parse_version` (whitespace and a leading `v` dropped, build info after `+` dropped,
/// three integers). `None` where the test raises.
fn as_the_test_reads(tag: &str) -> Option<KubeVersion> {
    let head = tag.split('-').next().unwrap_or_default().trim();
    let cleansed = head.strip_prefix('v').unwrap_or(head);
    let cleansed = cleansed.split('+').next().unwrap_or_default();
    let parts: Vec<&str> = cleansed.split('.').collect();
    let [major, minor, patch] = parts.as_slice() else {
        return None;
    };
    let int = |s: &str| s.trim().parse::<u64>().ok();
    Some(KubeVersion {
        major: int(major)?,
        minor: int(minor)?,
        patch: int(patch)?,
    })
}

/// The marker URL for a minor.
pub fn marker_url(base: &str, minor: Minor) -> String {
    format!("{}/stable-{minor}.txt", base.trim_end_matches('/'))
}

/// Parse a `stable-1.NN.txt` body (no trailing newline upstream; trimmed anyway). Anything that
/// is not a GA version of the requested minor is "absent".
pub fn parse_marker(body: &str, minor: Minor) -> Option<KubeVersion> {
    let v: KubeVersion = body.trim().parse().ok()?;
    (v.minor() == minor).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(tag: &str, draft: bool, pre: bool) -> serde_json::Value {
        serde_json::json!({"tag_name": tag, "draft": draft, "prerelease": pre,
            "published_at": "2026-04-15T16:28:00Z", "body": "ignored"})
    }

    #[test]
    fn drafts_prereleases_and_odd_tags_are_dropped_and_result_is_sorted() {
        let body = serde_json::to_string(&vec![
            rel("v1.34.7", false, false),
            rel("v1.36.1", true, false),
            rel("v1.36.0-rc.1", false, true),
            rel("v1.36.0-rc.2", false, false), // flag wrong, tag still rejects it
            rel("v1.33.11", false, false),
            rel("v1.35.4", false, false),
            rel("kubernetes-1.35.4", false, false),
            rel("v2.0.0", false, false),
            rel("v1.34.10", false, false),
        ])
        .unwrap();
        let got: Vec<String> = parse_releases(&body)
            .unwrap()
            .iter()
            .map(|r| r.version.to_string())
            .collect();
        assert_eq!(got, ["v1.33.11", "v1.34.7", "v1.34.10", "v1.35.4"]);
    }

    #[test]
    fn ga_flagged_tags_that_are_not_versions_are_read_as_the_standards_test_reads_them() {
        let body = serde_json::to_string(&vec![
            rel("v1.34.7", false, false),
            rel("v1.34.8-rc.1", false, false),
            rel("v1.34.9+build.1", false, false),
            rel("kubernetes-1.35.4", false, false),
            rel("v1.36.0-rc.0", false, true),
            rel("v1.36.1-rc.0", true, false),
        ])
        .unwrap();
        let (releases, odd) = parse_listing(&body).unwrap();
        let versions: Vec<String> = releases.iter().map(|r| r.version.to_string()).collect();
        assert_eq!(versions, ["v1.34.7"], "only vX.Y.Z tags are releases");
        let read: Vec<(&str, Option<String>)> = odd
            .iter()
            .map(|o| {
                (
                    o.tag.as_str(),
                    o.counted_as.as_ref().map(|r| r.version.to_string()),
                )
            })
            .collect();
        assert_eq!(
            read,
            [
                ("v1.34.8-rc.1", Some("v1.34.8".to_string())),
                ("v1.34.9+build.1", Some("v1.34.9".to_string())),
                // The test raises on it.
                ("kubernetes-1.35.4", None),
            ],
            "drafts and prereleases are nobody's releases"
        );
    }

    #[test]
    fn truncated_or_html_bodies_are_errors_that_say_so() {
        assert!(
            parse_releases("[{\"tag_name\": \"v1.3")
                .unwrap_err()
                .contains("malformed or truncated")
        );
        assert!(
            parse_releases("<html>rate limit</html>")
                .unwrap_err()
                .contains("HTML")
        );
    }

    #[test]
    fn markers_are_trimmed_and_checked_against_their_minor() {
        let m: Minor = "1.33".parse().unwrap();
        assert_eq!(parse_marker("v1.33.11", m).unwrap().to_string(), "v1.33.11");
        assert_eq!(
            parse_marker("v1.33.11\n", m).unwrap().to_string(),
            "v1.33.11"
        );
        assert_eq!(parse_marker("v1.34.1", m), None);
        assert_eq!(parse_marker("v1.33.12-rc.0", m), None);
        assert_eq!(parse_marker("<Error>NoSuchKey</Error>", m), None);
    }
}
