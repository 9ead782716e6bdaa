//! SCS 0210, the Kubernetes version policy, as vocabulary: the deadline rule and what a
//! stack × minor can be waiting for.
//!
//! This is the one home of "31 days for a patch, 120 for a minor" (the windows the SCS
//! conformance test uses, `k8s_version_policy.py`): detection, the release notes and the
//! status report all ask here, so they can never disagree about a date.

use std::fmt;

use chrono::{DateTime, Days, NaiveDate, Utc};
use serde::Serialize;

use super::{KubeVersion, Minor};

/// A new patch must be offered within 31 days of its publication.
pub const PATCH_DAYS: u64 = 31;
/// A new minor must be offered within 4 months (the SCS test counts 120 days).
pub const MINOR_DAYS: u64 = 120;

/// The days SCS 0210 gives for offering `version`: a new minor (`x.y.0`) gets
/// [`MINOR_DAYS`], every later patch [`PATCH_DAYS`].
pub fn window_days(version: KubeVersion) -> u64 {
    if version.patch == 0 {
        MINOR_DAYS
    } else {
        PATCH_DAYS
    }
}

/// The last day `version`, published at `published_at`, may go unoffered. `None` without a
/// publication date (upstream known only from a `stable-1.NN.txt` marker).
pub fn deadline(version: KubeVersion, published_at: Option<DateTime<Utc>>) -> Option<NaiveDate> {
    published_at.and_then(|p| {
        p.date_naive()
            .checked_add_days(Days::new(window_days(version)))
    })
}

/// Whether `today` is still in time for `deadline`: the deadline's own day is. The one home
/// of that question (SCS 0210 gives "31 days"; the standard's test fails a patch once it is
/// *older than* the window at midnight of the day it checks, so the last day of the window
/// still passes). Every "overdue", "fail" and "met" asks here.
pub fn in_time(deadline: NaiveDate, today: NaiveDate) -> bool {
    today <= deadline
}

/// Whether `deadline` has passed on `today` (the negation of [`in_time`]).
pub fn past(deadline: NaiveDate, today: NaiveDate) -> bool {
    !in_time(deadline, today)
}

/// Whether a Kubernetes minor released on `release_date` and ending on `end_of_life` is
/// supported on `today`: from its release day, up to but **not including** its end-of-life
/// day. The one home of "is minor M supported (and so tracked, and not past end of life) on
/// day D": the standard's test (`K8sBranchInfo.is_supported`: `now < eol`, with `eol` at
/// midnight) already fails a cluster on the end-of-life day, so `minors: supported` stops
/// tracking the minor that day and `status` shows it past its end of life that day. A date
/// that is not known does not limit.
pub fn supported_on(
    release_date: Option<NaiveDate>,
    end_of_life: Option<NaiveDate>,
    today: NaiveDate,
) -> bool {
    release_date.is_none_or(|d| d <= today) && end_of_life.is_none_or(|e| today < e)
}

/// Whether a minor ending on `end_of_life` is past it on `today` (the end-of-life day itself
/// is): [`supported_on`]'s end.
pub fn past_end_of_life(end_of_life: NaiveDate, today: NaiveDate) -> bool {
    !supported_on(None, Some(end_of_life), today)
}

/// Something upstream has not published yet that the newest patch of a stack × minor needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Waiting {
    /// No GA release of the minor exists yet.
    Kubernetes { minor: Minor },
    /// No chart version matching the rule (e.g. `2.36.x`) is in the repository's index yet.
    Chart {
        chart: String,
        rule: String,
        index: String,
    },
    /// The node image's `CHECKSUM` is not published yet.
    NodeImage { name: String, checksum: String },
}

impl fmt::Display for Waiting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Waiting::Kubernetes { minor } => write!(f, "Kubernetes {minor}: no GA release found"),
            Waiting::Chart { chart, rule, index } => {
                write!(f, "{chart} {rule} (not yet in {index})")
            }
            Waiting::NodeImage { name, checksum } => {
                write!(f, "node image {name} ({checksum} not published yet)")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Option<DateTime<Utc>> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn a_patch_gets_31_days_and_a_new_minor_120() {
        let patch: KubeVersion = "v1.34.7".parse().unwrap();
        let minor: KubeVersion = "v1.36.0".parse().unwrap();
        assert_eq!(
            deadline(patch, at("2026-04-15T15:49:00Z"))
                .unwrap()
                .to_string(),
            "2026-05-16"
        );
        assert_eq!(
            deadline(minor, at("2026-04-22T10:00:00Z"))
                .unwrap()
                .to_string(),
            "2026-08-20",
            "v1.36.0 published 2026-04-22 must be offered by 2026-08-20"
        );
        assert_eq!(deadline(patch, None), None, "no date, no deadline");
    }

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn a_deadline_s_own_day_is_still_in_time_the_next_is_not() {
        let d = day("2026-05-16");
        assert!(in_time(d, day("2026-05-15")));
        assert!(in_time(d, day("2026-05-16")), "the last day of the window");
        assert!(past(d, day("2026-05-17")));
    }

    #[test]
    fn a_minor_is_supported_from_its_release_day_until_the_day_before_its_end_of_life() {
        let (rel, eol) = (Some(day("2025-04-23")), Some(day("2026-06-28")));
        assert!(!supported_on(rel, eol, day("2025-04-22")), "before release");
        assert!(supported_on(rel, eol, day("2025-04-23")));
        assert!(supported_on(rel, eol, day("2026-06-27")));
        assert!(
            !supported_on(rel, eol, day("2026-06-28")),
            "the end-of-life day itself is not (the standard's test: now < eol)"
        );
        assert!(past_end_of_life(day("2026-06-28"), day("2026-06-28")));
        assert!(!past_end_of_life(day("2026-06-28"), day("2026-06-27")));
        assert!(
            supported_on(None, None, day("2026-06-28")),
            "unknown dates do not limit"
        );
    }
}
