//! The rule, case by case, in the standard's words.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};

use super::*;
use crate::upstream::UpstreamData;
use crate::upstream::cve::{Version, VersionRange};
use crate::upstream::kubernetes::KubeRelease;

fn day(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

fn kv(s: &str) -> KubeVersion {
    s.parse().unwrap()
}

fn at(s: &str) -> Option<DateTime<Utc>> {
    Some(format!("{s}T15:49:00Z").parse().unwrap())
}

fn inputs(releases: &[(&str, &str)], cves: Vec<Cve>) -> Inputs {
    Inputs {
        odd_tags: Vec::new(),
        releases: Ok(releases
            .iter()
            .map(|(v, d)| KubeRelease {
                version: kv(v),
                published_at: at(d),
            })
            .collect()),
        lifecycles: Lifecycles::Known(BTreeMap::from([
            ("1.33".parse().unwrap(), day("2026-06-28")),
            ("1.34".parse().unwrap(), day("2026-10-27")),
            ("1.35".parse().unwrap(), day("2027-02-28")),
        ])),
        security: Security::Known {
            cves,
            unreadable: Vec::new(),
        },
    }
}

fn critical(id: &str, lower: (i64, i64, i64), below: (i64, i64, i64)) -> Cve {
    Cve {
        id: id.into(),
        score: Some(8.8),
        critical: true,
        affected: vec![VersionRange {
            lower: Version(lower.0, lower.1, lower.2),
            upper: Some(Version(below.0, below.1, below.2)),
            inclusive: false,
        }],
    }
}

const RELEASES: &[(&str, &str)] = &[("v1.34.6", "2026-03-18"), ("v1.34.7", "2026-04-15")];

#[test]
fn the_newest_patch_passes() {
    let s = evaluate(kv("v1.34.7"), &inputs(RELEASES, vec![]), day("2026-06-01"));
    assert_eq!(s.verdict, Verdict::Pass);
    assert!(s.reasons.is_empty());
}

#[test]
fn a_newer_patch_fails_the_day_after_its_31_days() {
    let i = inputs(RELEASES, vec![]);
    let last_day = evaluate(kv("v1.34.6"), &i, day("2026-05-16"));
    assert_eq!(last_day.verdict, Verdict::Pass);
    assert_eq!(last_day.deadline, Some(day("2026-05-16")));
    assert_eq!(last_day.reasons[0].state, ReasonState::Pending);
    let after = evaluate(kv("v1.34.6"), &i, day("2026-05-17"));
    assert_eq!(after.verdict, Verdict::Fail);
    assert_eq!(after.reasons[0].rule, Rule::Patch);
    assert_eq!(after.reasons[0].since, Some(day("2026-04-15")));
}

#[test]
fn a_critical_cve_warns_after_two_days_and_fails_after_fourteen() {
    let i = inputs(
        RELEASES,
        vec![critical("CVE-2026-1", (1, 34, 0), (1, 34, 7))],
    );
    let v = kv("v1.34.6");
    assert_eq!(evaluate(v, &i, day("2026-04-17")).verdict, Verdict::Pass);
    let warn = evaluate(v, &i, day("2026-04-18"));
    assert_eq!(warn.verdict, Verdict::Warn);
    let r = warn.critical_cve().unwrap();
    assert_eq!(
        (r.since, r.deadline),
        (Some(day("2026-04-15")), Some(day("2026-04-29")))
    );
    assert_eq!(r.cves, ["CVE-2026-1"]);
    assert_eq!(
        warn.deadline,
        Some(day("2026-04-29")),
        "the earliest deadline applies"
    );
    assert_eq!(evaluate(v, &i, day("2026-04-29")).verdict, Verdict::Warn);
    assert_eq!(evaluate(v, &i, day("2026-04-30")).verdict, Verdict::Fail);
}

#[test]
fn a_cve_that_does_not_affect_the_version_changes_nothing() {
    let i = inputs(
        RELEASES,
        vec![critical("CVE-2026-1", (1, 33, 0), (1, 33, 9))],
    );
    assert_eq!(
        evaluate(kv("v1.34.6"), &i, day("2026-05-01")).verdict,
        Verdict::Pass
    );
}

#[test]
fn the_tests_blind_spot_is_kept_and_noted() {
    // The record says v1.34.7 is still affected; the test counts it as the fix anyway.
    let i = inputs(
        RELEASES,
        vec![critical("CVE-2026-1", (1, 34, 0), (1, 34, 9))],
    );
    let s = evaluate(kv("v1.34.6"), &i, day("2026-05-01"));
    assert_eq!(s.verdict, Verdict::Fail);
    assert!(
        s.critical_cve()
            .unwrap()
            .note
            .as_deref()
            .unwrap()
            .contains("still affected")
    );
}

#[test]
fn end_of_life_fails_on_its_day() {
    let i = inputs(&[("v1.33.11", "2026-04-15")], vec![]);
    let v = kv("v1.33.11");
    assert_eq!(evaluate(v, &i, day("2026-06-27")).verdict, Verdict::Pass);
    let s = evaluate(v, &i, day("2026-06-28"));
    assert_eq!(s.verdict, Verdict::Fail);
    assert_eq!(s.reasons[0].rule, Rule::EndOfLife);
    // A minor the schedule does not list is unsupported for the test.
    assert_eq!(
        evaluate(kv("v1.31.0"), &i, day("2026-05-01")).verdict,
        Verdict::Fail
    );
}

#[test]
fn missing_data_is_never_compliance() {
    let mut i = inputs(RELEASES, vec![]);
    i.security = Security::Unknown("HTTP 503".into());
    let s = evaluate(kv("v1.34.6"), &i, day("2026-05-01"));
    assert_eq!(s.verdict, Verdict::Unknown);
    assert!(s.unknown[0].contains("HTTP 503"));
    // ... unless the facts at hand already fail it,
    assert_eq!(
        evaluate(kv("v1.34.6"), &i, day("2026-06-01")).verdict,
        Verdict::Fail
    );
    // ... or nothing the missing source says could matter (no newer patch).
    assert_eq!(
        evaluate(kv("v1.34.7"), &i, day("2026-05-01")).verdict,
        Verdict::Pass
    );
    let mut i = inputs(RELEASES, vec![]);
    i.security = Security::Known {
        cves: vec![],
        unreadable: vec![("CVE-2026-2".into(), "HTTP 503".into())],
    };
    assert_eq!(
        evaluate(kv("v1.34.6"), &i, day("2026-05-01")).verdict,
        Verdict::Unknown
    );
    i.lifecycles = Lifecycles::Unknown("not read".into());
    assert_eq!(
        evaluate(kv("v1.34.7"), &i, day("2026-05-01")).verdict,
        Verdict::Unknown
    );
}

#[test]
fn a_minor_never_offered_gets_120_days() {
    let i = inputs(&[("v1.35.0", "2025-12-17")], vec![]);
    let patches = i.releases.clone().unwrap();
    let s = evaluate_series(None, &patches, &i, day("2026-04-16"));
    assert_eq!(
        (s.verdict, s.deadline),
        (Verdict::Pass, Some(day("2026-04-16")))
    );
    let s = evaluate_series(None, &patches, &i, day("2026-04-17"));
    assert_eq!(s.verdict, Verdict::Fail);
    assert_eq!(s.reasons[0].rule, Rule::Minor);
}

#[test]
fn a_series_is_never_judged_on_a_releases_list_that_was_not_read() {
    // The releases API answered 403 and no marker was read: the list of patches is not
    // empty, it is unknown. Neither a minor never released nor a released one may pass,
    // whatever slice of patches the caller holds.
    let mut i = inputs(RELEASES, vec![]);
    let patches = i.releases.clone().unwrap();
    i.releases = Err("https://api.github.com/…/releases: HTTP 403 (rate limited)".into());
    for offered in [None, Some(kv("v1.34.7")), Some(kv("v1.34.6"))] {
        for slice in [&[][..], &patches[..]] {
            let s = evaluate_series(offered, slice, &i, day("2026-05-01"));
            assert_eq!(s.verdict, Verdict::Unknown, "{offered:?} {slice:?}");
            assert!(
                s.unknown
                    .iter()
                    .any(|u| u.contains(RELEASES_SOURCE) && u.contains("HTTP 403")),
                "the verdict names the source and the cause: {:?}",
                s.unknown
            );
        }
    }
    // Read, and the minor has no GA patch yet: nothing is due, which is a pass.
    let read = inputs(RELEASES, vec![]);
    assert_eq!(
        evaluate_series(None, &[], &read, day("2026-05-01")).verdict,
        Verdict::Pass
    );
}

#[test]
fn fixed_cves_are_those_of_the_old_version_only() {
    let i = inputs(
        RELEASES,
        vec![critical("CVE-2026-1", (1, 34, 0), (1, 34, 7))],
    );
    let fixed = fixed_between(Some(kv("v1.34.6")), kv("v1.34.7"), &i);
    assert_eq!(fixed.len(), 1);
    assert_eq!(fixed[0].id, "CVE-2026-1");
    assert!(fixed_between(Some(kv("v1.34.7")), kv("v1.34.7"), &i).is_empty());
    let facts = critical_cves(kv("v1.34.6"), &i);
    assert_eq!(facts[0].fixed_in, Some(kv("v1.34.7")));
}

/// The feed and records as a run stores them.
fn data_with(feed: serde_json::Value, records: &[(&str, serde_json::Value)]) -> UpstreamData {
    let mut d = UpstreamData::default();
    let ok = |body: String| crate::upstream::Fetched::Ok { body };
    d.insert(&crate::upstream::Key::CveFeed, ok(feed.to_string()));
    for (id, r) in records {
        d.insert(
            &crate::upstream::Key::CveRecord(id.to_string()),
            ok(r.to_string()),
        );
    }
    d
}

#[test]
fn malformed_feed_items_are_unreadable_never_no_cve() {
    use serde_json::json;
    for item in [
        json!({"url": "https://kubernetes.io/…"}),
        json!({"id": "cve-2026-0001"}),
    ] {
        let feed = json!({"version": "https://jsonfeed.org/version/1.1", "items": [item]});
        let i = Inputs::from_data(&data_with(feed, &[]));
        let Security::Known { cves, unreadable } = &i.security else {
            panic!("the feed itself was read: {:?}", i.security);
        };
        assert!(cves.is_empty());
        assert_eq!(unreadable.len(), 1, "{item}: {unreadable:?}");
        assert!(
            i.problems().iter().any(|p| p.contains("CVE feed item")),
            "{:?}",
            i.problems()
        );
        // Where a CVE could matter (a newer patch out for more than 2 days), unknown.
        let with = Inputs {
            security: i.security.clone(),
            ..inputs(RELEASES, vec![])
        };
        assert_eq!(
            evaluate(kv("v1.34.6"), &with, day("2026-05-01")).verdict,
            Verdict::Unknown,
            "{item}"
        );
    }
}

/// A release flagged GA whose tag is not `vX.Y.Z` is no release, but the standard's test counts
/// it: the latest release's verdict (a stack × minor's, through `evaluate_series`) is `unknown`
/// where the test would differ, naming the release, and unchanged where it would not.
#[test]
fn a_ga_flagged_tag_that_is_not_a_version_makes_the_verdict_unknown_only_where_it_matters() {
    use crate::upstream::kubernetes::OddTag;
    let odd = |tag: &str, counted: Option<(&str, &str)>| OddTag {
        tag: tag.into(),
        counted_as: counted.map(|(v, d)| KubeRelease {
            version: kv(v),
            published_at: at(d),
        }),
    };
    let with = |tags: Vec<OddTag>| Inputs {
        odd_tags: tags,
        ..inputs(RELEASES, vec![])
    };
    let patches = match &inputs(RELEASES, vec![]).releases {
        Ok(r) => r.clone(),
        Err(_) => unreachable!(),
    };
    let rc = with(vec![odd("v1.34.8-rc.1", Some(("v1.34.8", "2026-03-01")))]);
    // v1.34.7 is the newest GA; the rc, 61 days old, would fail it in the test.
    let got = evaluate_series(Some(kv("v1.34.7")), &patches, &rc, day("2026-05-01"));
    assert_eq!(got.verdict, Verdict::Unknown, "{got:?}");
    assert!(got.unknown.iter().any(|u| u.contains("v1.34.8-rc.1")));
    // 10 days after the rc the test still passes: nothing depends on it.
    let got = evaluate_series(Some(kv("v1.34.7")), &patches, &rc, day("2026-03-11"));
    assert_eq!(got.verdict, Verdict::Pass, "{got:?}");
    // Another minor's rc changes nothing.
    let other = with(vec![odd("v1.33.9-rc.1", Some(("v1.33.9", "2026-03-01")))]);
    let got = evaluate_series(Some(kv("v1.34.7")), &patches, &other, day("2026-05-01"));
    assert_eq!(got.verdict, Verdict::Pass, "{got:?}");
    // A failure stays a failure; a tag the test cannot read leaves no verdict to agree with.
    let unreadable = with(vec![odd("kubernetes-1.35.4", None)]);
    let got = evaluate_series(
        Some(kv("v1.34.6")),
        &patches,
        &unreadable,
        day("2026-06-01"),
    );
    assert_eq!(got.verdict, Verdict::Fail, "{got:?}");
    let got = evaluate_series(
        Some(kv("v1.34.7")),
        &patches,
        &unreadable,
        day("2026-05-01"),
    );
    assert_eq!(got.verdict, Verdict::Unknown, "{got:?}");
}
