//! The one deadline model of a stack × minor on a day.
//!
//! Every surface that states a deadline (`detect`, `status`, the `release` summary, release
//! notes, tenant pull requests) renders a [`Deadlines`] computed here, so they cannot disagree:
//!
//! - [`Deadlines::rules`]: every SCS 0210 rule that applies (`patch`, `critical-cve`, `minor`,
//!   `end-of-life`), each with its start (`since`), its deadline and its state;
//! - [`Deadlines::governing`]: the rule that governs (a failed rule first, the earliest
//!   deadline among those; else the earliest deadline still ahead) and, from it, `due`,
//!   `due_for`, `days_left` and `overdue`;
//! - [`Deadlines::newest_unreleased`]: the newest GA patch not yet offered, and the day it must
//!   be released by on its own clock.
//!
//! What is offered decides which rules apply: a release at a version (the standard's test for
//! a cluster at that version), nothing yet (the minor window from the minor's first GA patch),
//! or not known (a release naming no Kubernetes version, no `stackbot.lock` to read): then no
//! rule can be evaluated and the model says so instead of guessing.

use chrono::NaiveDate;
use serde::Serialize;

use super::{Inputs, Reason, ReasonState, Rule, Scs0210, evaluate_series, fixed_between};
use crate::model::KubeVersion;
use crate::upstream::kubernetes::KubeRelease;

/// What a stack × minor offers today, as far as is known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Offered {
    /// Nothing was released: the minor window applies.
    Nothing,
    /// The latest release ships this Kubernetes patch.
    Version { kubernetes: KubeVersion },
    /// What is released is not known (the cause says why): no rule can be evaluated.
    Unknown { cause: String },
}

impl Offered {
    /// The offered version, when one is known.
    pub fn version(&self) -> Option<KubeVersion> {
        match self {
            Offered::Version { kubernetes } => Some(*kubernetes),
            _ => None,
        }
    }
}

/// The newest GA patch not yet offered, and when it must be released on its own clock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewestUnreleased {
    pub kubernetes: KubeVersion,
    /// Its publication day (`None`: known only from a version marker).
    pub published: Option<NaiveDate>,
    /// The rule of its own clock: `patch` (31 days), `critical-cve` (14 days: the offered
    /// version is affected by a critical CVE, or, not knowing what is offered, it fixes one the
    /// patch before it has), `minor` (a minor never offered: 120 days from the first GA patch).
    pub rule: Rule,
    /// The last day in time to release it (`None` without a publication date).
    pub release_by: Option<NaiveDate>,
}

/// The deadlines of one stack × minor on one day.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Deadlines {
    /// What the rules were evaluated for.
    pub offered: Offered,
    /// Every rule that applies, with its start, deadline and state.
    pub rules: Vec<Reason>,
    /// The rule that governs: what `due` comes from.
    pub governing: Option<Rule>,
    /// The governing rule's deadline.
    pub due: Option<NaiveDate>,
    /// The patch whose publication started the governing clock (the minor's first GA patch for
    /// the minor window).
    pub due_for: Option<KubeVersion>,
    /// Days from the day of the model to `due` (negative: days overdue).
    pub days_left: Option<i64>,
    /// The governing rule has failed.
    pub overdue: bool,
    /// The critical CVEs of the governing `critical-cve` rule (empty otherwise).
    pub critical_cves: Vec<String>,
    /// The newest GA patch not yet offered, and when it must be released.
    pub newest_unreleased: Option<NewestUnreleased>,
    /// The standard's verdict these rules come from.
    #[serde(skip)]
    pub scs0210: Scs0210,
}

impl Deadlines {
    /// `2026-05-16 (15 days left, for v1.34.7)`, `2026-04-29 (2 days overdue, critical CVE,
    /// for v1.34.7)`, `2025-12-25 (127 days overdue, 1.34 minor window)`: the governing
    /// deadline in the words every surface uses (`status`, the `release` summary, release
    /// notes); `None` when no dated rule governs.
    pub fn words(&self) -> Option<String> {
        let due = self.due?;
        let when = self
            .days_left
            .map(crate::status::days_words)
            .unwrap_or_default();
        let minor = self
            .due_for
            .map(|v| v.minor())
            .or_else(|| self.rules.iter().find_map(|r| r.version.map(|v| v.minor())));
        let why = match (self.governing, self.due_for, minor) {
            (Some(Rule::Minor), _, Some(m)) => format!(", {m} minor window"),
            (Some(Rule::EndOfLife), _, Some(m)) => format!(", {m} end of life"),
            (Some(Rule::CriticalCve), Some(v), _) => format!(", critical CVE, for {v}"),
            (_, Some(v), _) => format!(", for {v}"),
            _ => String::new(),
        };
        Some(format!("{due} ({when}{why})"))
    }
}

/// The rule that governs: a failed rule first (the earliest deadline among those, one without
/// a date last), else the earliest deadline of a rule not yet passed.
fn governing(rules: &[Reason]) -> Option<&Reason> {
    let failed = rules
        .iter()
        .filter(|r| r.state == ReasonState::Fail)
        .min_by_key(|r| (r.deadline.is_none(), r.deadline));
    failed.or_else(|| {
        rules
            .iter()
            .filter(|r| r.deadline.is_some())
            .min_by_key(|r| r.deadline)
    })
}

/// The deadline model of a stack × minor offering `offered` on `today`, from the GA patches of
/// its minor the caller holds (`patches`, any order: the detection's list) and the verdict
/// inputs (which say whether that list was read). Pure; the one computation every surface
/// renders.
pub fn deadlines(
    offered: Offered,
    patches: &[KubeRelease],
    inputs: &Inputs,
    today: NaiveDate,
) -> Deadlines {
    // Patches published after the day did not exist yet (undated ones are used as read).
    let mut known: Vec<KubeRelease> = patches
        .iter()
        .filter(|p| p.published_at.is_none_or(|d| d.date_naive() <= today))
        .cloned()
        .collect();
    known.sort_by_key(|p| p.version);
    let dated: Vec<&KubeRelease> = known.iter().collect();
    let scs0210 = match &offered {
        Offered::Nothing => evaluate_series(None, &known, inputs, today),
        Offered::Version { kubernetes } => {
            evaluate_series(Some(*kubernetes), &known, inputs, today)
        }
        Offered::Unknown { cause } => Scs0210::unknown(cause.clone()),
    };
    let rules = scs0210.reasons.clone();
    let gov = governing(&rules).cloned();
    let newest = dated
        .last()
        .copied()
        .filter(|n| offered.version().is_none_or(|o| n.version > o));
    let newest_unreleased = newest.map(|n| {
        let published = n.published_at.map(|p| p.date_naive());
        let plus = |days: u64| published.and_then(|p| p.checked_add_days(chrono::Days::new(days)));
        let (rule, release_by) = match &offered {
            Offered::Nothing => {
                let minor = rules.iter().find(|r| r.rule == Rule::Minor);
                (Rule::Minor, minor.and_then(|r| r.deadline))
            }
            Offered::Version { .. } => {
                if rules.iter().any(|r| r.rule == Rule::CriticalCve) {
                    (Rule::CriticalCve, plus(super::CVE_DAYS))
                } else {
                    (Rule::Patch, plus(super::PATCH_DAYS))
                }
            }
            Offered::Unknown { .. } => {
                // Its own clock alone: 14 days when it fixes a critical CVE the patch before
                // it has, 120 for a new minor's `x.y.0`, else 31.
                let previous = dated
                    .iter()
                    .rev()
                    .find(|p| p.version < n.version)
                    .map(|p| p.version);
                if !fixed_between(previous, n.version, inputs).is_empty() {
                    (Rule::CriticalCve, plus(super::CVE_DAYS))
                } else if n.version.patch == 0 {
                    (Rule::Minor, plus(super::MINOR_DAYS))
                } else {
                    (Rule::Patch, plus(super::PATCH_DAYS))
                }
            }
        };
        NewestUnreleased {
            kubernetes: n.version,
            published,
            rule,
            release_by,
        }
    });
    let due = gov.as_ref().and_then(|r| r.deadline);
    Deadlines {
        offered,
        governing: gov.as_ref().map(|r| r.rule),
        due,
        due_for: gov.as_ref().and_then(|r| r.newer),
        days_left: due.map(|d| (d - today).num_days()),
        overdue: gov.as_ref().is_some_and(|r| r.state == ReasonState::Fail),
        critical_cves: gov
            .as_ref()
            .filter(|r| r.rule == Rule::CriticalCve)
            .map(|r| r.cves.clone())
            .unwrap_or_default(),
        rules,
        newest_unreleased,
        scs0210,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compliance::{Lifecycles, Security};
    use crate::upstream::cve::{Cve, Version, VersionRange};

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn kv(s: &str) -> KubeVersion {
        s.parse().unwrap()
    }

    fn patch(v: &str, d: &str) -> KubeRelease {
        KubeRelease {
            version: kv(v),
            published_at: Some(format!("{d}T12:00:00Z").parse().unwrap()),
        }
    }

    /// 1.34 as the demo has it: v1.34.0 of 2025-08-27, v1.34.6 of 2026-03-18 and v1.34.7 of
    /// 2026-04-15, which fixes a critical CVE affecting every 1.34 patch before it.
    fn demo_1_34(cve: bool) -> (Vec<KubeRelease>, Inputs) {
        let patches = vec![
            patch("v1.34.0", "2025-08-27"),
            patch("v1.34.6", "2026-03-18"),
            patch("v1.34.7", "2026-04-15"),
        ];
        let cves = if cve {
            vec![Cve {
                id: "CVE-2026-0001".into(),
                score: Some(9.8),
                critical: true,
                affected: vec![VersionRange {
                    lower: Version(1, 34, 0),
                    upper: Some(Version(1, 34, 7)),
                    inclusive: false,
                }],
            }]
        } else {
            Vec::new()
        };
        let inputs = Inputs {
            odd_tags: Vec::new(),
            releases: Ok(patches.clone()),
            lifecycles: Lifecycles::Known([(kv("v1.34.0").minor(), day("2026-10-27"))].into()),
            security: Security::Known {
                cves,
                unreadable: Vec::new(),
            },
        };
        (patches, inputs)
    }

    #[test]
    fn a_minor_never_offered_is_governed_by_the_minor_window() {
        let (patches, inputs) = demo_1_34(true);
        let d = deadlines(Offered::Nothing, &patches, &inputs, day("2026-05-01"));
        assert_eq!(d.governing, Some(Rule::Minor));
        assert_eq!(d.due, Some(day("2025-12-25")), "v1.34.0 + 120 days");
        assert_eq!(d.due_for, Some(kv("v1.34.0")));
        assert!(d.overdue);
        assert_eq!(d.days_left, Some(-127));
        let n = d.newest_unreleased.clone().unwrap();
        assert_eq!((n.kubernetes, n.rule), (kv("v1.34.7"), Rule::Minor));
        assert_eq!(n.release_by, Some(day("2025-12-25")));
    }

    #[test]
    fn a_version_affected_by_a_critical_cve_is_governed_by_the_cve_window() {
        let (patches, inputs) = demo_1_34(true);
        let offered = Offered::Version {
            kubernetes: kv("v1.34.6"),
        };
        let d = deadlines(offered, &patches, &inputs, day("2026-05-01"));
        assert_eq!(d.governing, Some(Rule::CriticalCve));
        assert_eq!(d.due, Some(day("2026-04-29")), "v1.34.7 + 14 days");
        assert_eq!(d.critical_cves, ["CVE-2026-0001"]);
        assert!(d.overdue, "2026-04-29 has passed on 2026-05-01");
        assert_eq!(d.days_left, Some(-2));
        let rules: Vec<Rule> = d.rules.iter().map(|r| r.rule).collect();
        assert_eq!(
            rules,
            [Rule::Patch, Rule::CriticalCve],
            "every rule that applies"
        );
        let n = d.newest_unreleased.clone().unwrap();
        assert_eq!(n.rule, Rule::CriticalCve);
        assert_eq!(n.release_by, Some(day("2026-04-29")));
        assert_eq!(
            d.words().unwrap(),
            "2026-04-29 (2 days overdue, critical CVE, for v1.34.7)"
        );
    }

    #[test]
    fn without_a_cve_the_patch_window_governs_and_its_last_day_is_in_time() {
        let (patches, inputs) = demo_1_34(false);
        let offered = Offered::Version {
            kubernetes: kv("v1.34.6"),
        };
        let d = deadlines(offered, &patches, &inputs, day("2026-05-16"));
        assert_eq!(d.governing, Some(Rule::Patch));
        assert_eq!(d.due, Some(day("2026-05-16")));
        assert_eq!(d.due_for, Some(kv("v1.34.7")));
        assert!(!d.overdue);
        assert_eq!(d.days_left, Some(0));
    }

    #[test]
    fn the_newest_patch_offered_has_no_deadline() {
        let (patches, inputs) = demo_1_34(true);
        let offered = Offered::Version {
            kubernetes: kv("v1.34.7"),
        };
        let d = deadlines(offered, &patches, &inputs, day("2026-05-01"));
        assert_eq!((d.governing, d.due, d.overdue), (None, None, false));
        assert!(d.newest_unreleased.is_none());
    }

    #[test]
    fn not_knowing_what_is_offered_evaluates_no_rule_but_the_newest_patch_clock() {
        let (patches, inputs) = demo_1_34(true);
        let offered = Offered::Unknown {
            cause: "no stackbot.lock".into(),
        };
        let d = deadlines(offered, &patches, &inputs, day("2026-05-01"));
        assert_eq!((d.governing, d.due, d.overdue), (None, None, false));
        assert_eq!(d.scs0210.verdict, crate::compliance::Verdict::Unknown);
        let n = d.newest_unreleased.clone().unwrap();
        assert_eq!(n.rule, Rule::CriticalCve, "it fixes the CVE v1.34.6 has");
        assert_eq!(n.release_by, Some(day("2026-04-29")));
    }

    #[test]
    fn patches_published_after_the_day_do_not_exist_yet() {
        let (patches, inputs) = demo_1_34(true);
        let offered = Offered::Version {
            kubernetes: kv("v1.34.6"),
        };
        let d = deadlines(offered, &patches, &inputs, day("2026-04-01"));
        assert_eq!(d.governing, None);
        assert!(d.newest_unreleased.is_none());
    }
}
