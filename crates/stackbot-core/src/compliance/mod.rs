//! SCS 0210 (the Kubernetes version policy) as one pure rule: a verdict for a Kubernetes
//! version on a day, equal to what the standard's own conformance test says.
//!
//! The conformance test (`Tests/kaas/scs_0210_version_policy/k8s_version_policy.py` of
//! SovereignCloudStack/standards) checks one cluster: its minor must not be past end of life,
//! no newer patch of its minor may be older than 31 days, and when the cluster's version lies
//! in the affected range of a critical CVE (CVSS >= 8), no newer patch may be older than 14
//! days (a warning from day 2). stackbot gives every stack × minor (its latest release) and
//! every tenant (the releases it lists, the versions its `Cluster`s run) the verdict that test
//! would give a cluster at that version on that day; `tests/integration/scs0210_oracle.rs` asks the test's
//! own functions and compares.
//!
//! Two rules the test cannot check on one cluster are the provider's: a new minor must be
//! offered within 120 days ([`Rule::Minor`], for a stack × minor never released), and the
//! deadlines *before* they pass (a reason with state `pending`), so the dashboard can warn.
//!
//! Days, not instants: the report is "as of" a date, which the test would see as that day's
//! midnight (UTC). "Older than 31 days at midnight of `today`" is exactly "today is after the
//! publication day + 31", so every comparison here is on dates and agrees with the test's
//! `timedelta` arithmetic for any publication time.
//!
//! Missing data is never compliance: when a source the answer depends on could not be read
//! (the releases API, the schedule, the CVE feed or one record), the verdict is
//! [`Verdict::Unknown`] with the cause, unless the facts at hand already make it a failure,
//! or the missing source cannot change the answer (no newer patch: no CVE can matter).

mod deadlines;
mod inputs;
mod provenance;

use chrono::{Days, NaiveDate};
use serde::Serialize;

use crate::model::KubeVersion;
use crate::model::scs;
use crate::upstream::cve::Cve;
use crate::upstream::kubernetes::KubeRelease;

pub use deadlines::{Deadlines, NewestUnreleased, Offered, deadlines};
pub use inputs::{Inputs, Lifecycles, Security, last_known, needed};
pub use provenance::{Read, SourceReading, aged, sources};

/// The standard's windows, in days (`k8s_version_policy.py`).
pub const PATCH_DAYS: u64 = crate::model::scs::PATCH_DAYS;
/// `CVE_VERSION_CADENCE`: two weeks for a patch that addresses a critical CVE.
pub const CVE_DAYS: u64 = 14;
/// `CVE_VERSION_CADENCE_WARN`: the RECOMMENDED two days; the test warns after them.
pub const CVE_WARN_DAYS: u64 = 2;
/// The minor window (not checked by the test, which sees one cluster).
pub const MINOR_DAYS: u64 = crate::model::scs::MINOR_DAYS;
/// How a verdict names the GitHub releases list of Kubernetes when it could not be read.
pub const RELEASES_SOURCE: &str = "Kubernetes releases list (GitHub releases API)";
/// An end of life this close (in days) is shown as a pending reason.
pub const END_OF_LIFE_NOTICE_DAYS: i64 = 31;

/// The verdict, worst last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The test passes.
    Pass,
    /// The test passes with a warning (a critical-CVE fix older than 2 days is not offered).
    Warn,
    /// A source the answer depends on could not be read.
    Unknown,
    /// The test fails.
    Fail,
}

impl Verdict {
    /// The worse of two verdicts (fail > unknown > warn > pass).
    pub fn worst(self, other: Verdict) -> Verdict {
        self.max(other)
    }

    /// The word of the text and Markdown forms.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Warn => "warn",
            Verdict::Unknown => "unknown",
            Verdict::Fail => "fail",
        }
    }

    /// The sign of the Markdown form.
    pub fn icon(self) -> &'static str {
        match self {
            Verdict::Pass => "✅",
            Verdict::Warn => "⚠️",
            Verdict::Unknown => "❔",
            Verdict::Fail => "❌",
        }
    }
}

/// Which rule of SCS 0210 a reason comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// A newer patch must be offered within 31 days.
    Patch,
    /// Within 14 days (2 recommended) when the version is affected by a critical CVE.
    CriticalCve,
    /// A new minor within 120 days.
    Minor,
    /// A minor past its end of life fails.
    EndOfLife,
}

impl Rule {
    /// Words for people.
    pub fn words(self) -> &'static str {
        match self {
            Rule::Patch => "patch window",
            Rule::CriticalCve => "critical CVE",
            Rule::Minor => "minor window",
            Rule::EndOfLife => "end of life",
        }
    }
}

/// Where one reason stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasonState {
    /// The deadline has not passed.
    Pending,
    /// Past the recommended 2 days of a critical-CVE fix: the test warns.
    Warn,
    /// Past the deadline: the test fails.
    Fail,
    /// The facts to decide it could not be read.
    Unknown,
}

/// One rule that applies, with its clock.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reason {
    pub rule: Rule,
    /// The day the clock started (publication of the newer patch, first GA of the minor, or
    /// the end-of-life day).
    pub since: Option<NaiveDate>,
    /// The last day in time (for end of life: the day it ends).
    pub deadline: Option<NaiveDate>,
    /// The critical CVEs involved (`critical-cve`).
    pub cves: Vec<String>,
    pub state: ReasonState,
    /// The version evaluated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<KubeVersion>,
    /// The newer patch that started the clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newer: Option<KubeVersion>,
    /// What else to know: the test's blind spot, or the cause of `unknown`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Reason {
    fn new(rule: Rule, since: Option<NaiveDate>, deadline: Option<NaiveDate>) -> Reason {
        Reason {
            rule,
            since,
            deadline,
            cves: Vec::new(),
            state: ReasonState::Pending,
            version: None,
            newer: None,
            note: None,
        }
    }
}

/// A critical CVE affecting a version.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CveFact {
    pub id: String,
    pub score: Option<f64>,
    /// The record's affected Kubernetes ranges.
    pub affected: Vec<crate::upstream::cve::VersionRange>,
    /// The oldest GA patch of the same minor the record does not list as affected.
    pub fixed_in: Option<KubeVersion>,
    /// Its page on cve.org.
    pub url: String,
}

/// The verdict for one subject, with every reason and what could not be known.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scs0210 {
    pub verdict: Verdict,
    pub reasons: Vec<Reason>,
    /// The earliest deadline of a reason not yet passed (what to act on next).
    pub deadline: Option<NaiveDate>,
    /// Why the verdict is `unknown`: the sources that could not be read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<String>,
    /// For an `unknown` verdict: what the last known facts said (stale, for people only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_known: Option<Box<Stale>>,
}

/// A verdict from the last known answers of sources that fail now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stale {
    pub verdict: Verdict,
    pub reasons: Vec<Reason>,
    /// When the oldest of those answers was read.
    pub facts_from: Option<chrono::DateTime<chrono::Utc>>,
}

impl Scs0210 {
    /// The verdict of a subject with nothing to evaluate (`unknown`, with the cause).
    pub fn unknown(cause: impl Into<String>) -> Scs0210 {
        Scs0210 {
            verdict: Verdict::Unknown,
            reasons: Vec::new(),
            deadline: None,
            unknown: vec![cause.into()],
            last_known: None,
        }
    }

    /// Several subjects as one (a tenant's versions): the worst verdict, every reason.
    pub fn combine(all: impl IntoIterator<Item = Scs0210>) -> Option<Scs0210> {
        let mut out: Option<Scs0210> = None;
        for s in all {
            out = Some(match out {
                None => s,
                Some(mut o) => {
                    o.verdict = o.verdict.worst(s.verdict);
                    for r in s.reasons {
                        if !o.reasons.contains(&r) {
                            o.reasons.push(r);
                        }
                    }
                    for u in s.unknown {
                        if !o.unknown.contains(&u) {
                            o.unknown.push(u);
                        }
                    }
                    o.deadline = o.deadline.into_iter().chain(s.deadline).min();
                    o
                }
            });
        }
        out
    }

    /// The critical-CVE reason, when one applies.
    pub fn critical_cve(&self) -> Option<&Reason> {
        self.reasons.iter().find(|r| r.rule == Rule::CriticalCve)
    }

    fn finish(mut self) -> Scs0210 {
        let failed = self.reasons.iter().any(|r| r.state == ReasonState::Fail);
        let warned = self.reasons.iter().any(|r| r.state == ReasonState::Warn);
        self.verdict = if failed {
            Verdict::Fail
        } else if !self.unknown.is_empty() {
            Verdict::Unknown
        } else if warned {
            Verdict::Warn
        } else {
            Verdict::Pass
        };
        self.deadline = self
            .reasons
            .iter()
            .filter(|r| matches!(r.state, ReasonState::Pending | ReasonState::Warn))
            .filter_map(|r| r.deadline)
            .min();
        self
    }
}

fn plus(day: NaiveDate, days: u64) -> NaiveDate {
    day.checked_add_days(Days::new(days))
        .unwrap_or(NaiveDate::MAX)
}

/// The last day `version`, published at `published`, may go unoffered: 14 days when it fixes
/// a critical CVE, else the window of [`crate::model::scs::deadline`] (31 days a patch, 120 a
/// new minor). `None` without a publication date.
pub fn offer_deadline(
    version: KubeVersion,
    published: Option<chrono::DateTime<chrono::Utc>>,
    fixes_critical: bool,
) -> Option<NaiveDate> {
    if fixes_critical {
        published.map(|p| plus(p.date_naive(), CVE_DAYS))
    } else {
        crate::model::scs::deadline(version, published)
    }
}

/// The verdict of the conformance test for a cluster at `version` on `today`, with the GA
/// releases of `inputs`.
///
/// Every fact comes out of `inputs`, where each source is read or unknown with its cause:
/// there is no way to hand a verdict a list that was not read (an empty list of patches
/// because the releases API answered 403 is not "no newer patch"), so a verdict can only be
/// `pass` when every source it needed was read.
pub fn evaluate(version: KubeVersion, inputs: &Inputs, today: NaiveDate) -> Scs0210 {
    let releases = inputs.releases.as_deref().map_err(String::as_str);
    evaluate_on(version, releases, inputs, today)
}

/// [`evaluate`] against the releases `inputs` holds (or the cause they could not be read).
///
/// The one home of a deviation from the standard's test (docs/status.md): a release flagged GA
/// whose tag is not `vX.Y.Z` ([`crate::upstream::kubernetes::OddTag`]) is no release for
/// stackbot, but the test counts it (`v1.34.2-rc.1` as v1.34.2) or raises on it. Where the
/// test's verdict would differ because of it, or the test would give none, the verdict is
/// `unknown` naming the release: never more favourable than the standard's.
fn evaluate_on(
    version: KubeVersion,
    releases: Result<&[KubeRelease], &str>,
    inputs: &Inputs,
    today: NaiveDate,
) -> Scs0210 {
    let mut out = judge(version, releases, inputs, today);
    let Ok(listed) = releases else {
        return out;
    };
    let mut unknown: Vec<String> = inputs
        .odd_tags
        .iter()
        .filter(|o| o.counted_as.is_none())
        .map(|o| {
            format!(
                "{RELEASES_SOURCE}: release `{}` is flagged GA but its tag is not a version: the standard's test cannot read it and gives no verdict",
                o.tag
            )
        })
        .collect();
    let counted: Vec<(&str, &KubeRelease)> = inputs
        .odd_tags
        .iter()
        .filter_map(|o| Some((o.tag.as_str(), o.counted_as.as_ref()?)))
        .filter(|(_, r)| r.version.minor() == version.minor() && r.version.patch > version.patch)
        .collect();
    if !counted.is_empty() {
        let mut as_the_test_has_them = listed.to_vec();
        as_the_test_has_them.extend(counted.iter().map(|(_, r)| (*r).clone()));
        let theirs = judge(version, Ok(&as_the_test_has_them), inputs, today).verdict;
        if theirs != out.verdict {
            unknown.extend(counted.iter().map(|(tag, r)| {
                format!(
                    "{RELEASES_SOURCE}: release `{tag}` is flagged GA but its tag is not `vX.Y.Z`: stackbot does not count it, the standard's test counts it as {} and says {} for {version}",
                    r.version,
                    theirs.word()
                )
            }));
        }
    }
    if !unknown.is_empty() {
        out.unknown.extend(unknown);
        out = out.finish();
    }
    out
}

/// The verdict on the releases given, as the standard's test judges a cluster at `version`.
fn judge(
    version: KubeVersion,
    releases: Result<&[KubeRelease], &str>,
    inputs: &Inputs,
    today: NaiveDate,
) -> Scs0210 {
    let mut out = Scs0210 {
        verdict: Verdict::Pass,
        reasons: Vec::new(),
        deadline: None,
        unknown: Vec::new(),
        last_known: None,
    };
    let minor = version.minor();
    // End of life: the test fails a minor not (or no longer) supported on the day.
    match &inputs.lifecycles {
        Lifecycles::Unknown(cause) => out.unknown.push(format!("end of life: {cause}")),
        Lifecycles::Known(map) => match map.get(&minor) {
            Some(eol) => {
                let days = (*eol - today).num_days();
                if days <= END_OF_LIFE_NOTICE_DAYS {
                    let mut r = Reason::new(Rule::EndOfLife, Some(*eol), Some(*eol));
                    r.version = Some(version);
                    // The test's branch is supported while `now < end-of-life` (midnight):
                    // the end-of-life day itself fails ([`scs::past_end_of_life`]).
                    r.state = if scs::past_end_of_life(*eol, today) {
                        ReasonState::Fail
                    } else {
                        ReasonState::Pending
                    };
                    out.reasons.push(r);
                }
            }
            None => {
                let mut r = Reason::new(Rule::EndOfLife, None, None);
                r.version = Some(version);
                r.state = ReasonState::Fail;
                r.note = Some(format!(
                    "{minor} is not in the Kubernetes schedule: the standard's test counts an unlisted minor as unsupported"
                ));
                out.reasons.push(r);
            }
        },
    }
    let releases = match releases {
        Ok(r) => r,
        Err(cause) => {
            out.unknown.push(format!("{RELEASES_SOURCE}: {cause}"));
            return out.finish();
        }
    };
    // A newer patch known only from a version marker has no date: its clock cannot be read.
    if let Some(undated) = releases.iter().find(|r| {
        r.version.minor() == minor && r.version.patch > version.patch && r.published_at.is_none()
    }) {
        out.unknown.push(format!(
            "{} has no publication date (the releases API could not be read)",
            undated.version
        ));
    }
    // Newer GA patches of the same minor, oldest publication first.
    let mut newer: Vec<(NaiveDate, KubeVersion)> = releases
        .iter()
        .filter(|r| r.version.minor() == minor && r.version.patch > version.patch)
        .filter_map(|r| Some((r.published_at?.date_naive(), r.version)))
        .filter(|(d, _)| *d <= today)
        .collect();
    newer.sort();
    let Some(&(first_day, first)) = newer.first() else {
        return out.finish();
    };
    let mut patch = Reason::new(
        Rule::Patch,
        Some(first_day),
        Some(plus(first_day, PATCH_DAYS)),
    );
    patch.version = Some(version);
    patch.newer = Some(first);
    if scs::past(plus(first_day, PATCH_DAYS), today) {
        patch.state = ReasonState::Fail;
    }
    out.reasons.push(patch);
    // Critical CVEs matter once the newer patch is older than the two recommended days.
    let cve_relevant = scs::past(plus(first_day, CVE_WARN_DAYS), today);
    match &inputs.security {
        Security::Unknown(cause) => {
            if cve_relevant {
                out.unknown.push(format!("CVE feed: {cause}"));
            }
        }
        Security::Known { cves, unreadable } => {
            if cve_relevant {
                out.unknown.extend(
                    unreadable
                        .iter()
                        .map(|(id, cause)| format!("{id}: {cause}")),
                );
            }
            let hits: Vec<&Cve> = cves
                .iter()
                .filter(|c| c.critical && c.affects(version))
                .collect();
            if !hits.is_empty() {
                let mut r = Reason::new(
                    Rule::CriticalCve,
                    Some(first_day),
                    Some(plus(first_day, CVE_DAYS)),
                );
                r.version = Some(version);
                r.newer = Some(first);
                r.cves = hits.iter().map(|c| c.id.clone()).collect();
                r.state = if scs::past(plus(first_day, CVE_DAYS), today) {
                    ReasonState::Fail
                } else if cve_relevant {
                    ReasonState::Warn
                } else {
                    ReasonState::Pending
                };
                // The test's FIXME: any newer patch counts as the fix, even one the record
                // still lists as affected.
                let newest = newer.iter().map(|(_, v)| *v).max().unwrap_or(first);
                let still: Vec<&str> = hits
                    .iter()
                    .filter(|c| c.affects(newest))
                    .map(|c| c.id.as_str())
                    .collect();
                if !still.is_empty() {
                    r.note = Some(format!(
                        "{newest} is still affected by {} according to the record; the standard's test counts any newer patch as the fix",
                        still.join(", ")
                    ));
                }
                out.reasons.push(r);
            }
        }
    }
    out.finish()
}

/// The verdict of a stack × minor: its latest release's version (`offered`), or, never
/// released, the minor window from the minor's first GA patch, over the minor's GA `patches`
/// the caller holds (the detection's list, read from the same data as `inputs`).
///
/// Whether those patches were read is `inputs`' to say, not the slice's: when the releases
/// list could not be read the verdict is `unknown` naming it, whatever the slice holds. An
/// empty slice then means "not known", never "nothing released upstream, nothing due", so a
/// verdict can be `pass` only when the releases were read.
pub fn evaluate_series(
    offered: Option<KubeVersion>,
    patches: &[KubeRelease],
    inputs: &Inputs,
    today: NaiveDate,
) -> Scs0210 {
    let mut out = series(offered, patches, inputs, today);
    if let Err(cause) = &inputs.releases {
        let unread = format!("{RELEASES_SOURCE}: {cause}");
        if !out.unknown.contains(&unread) {
            out.unknown.push(unread);
        }
        out = out.finish();
    }
    out
}

/// [`evaluate_series`] on the slice alone.
fn series(
    offered: Option<KubeVersion>,
    patches: &[KubeRelease],
    inputs: &Inputs,
    today: NaiveDate,
) -> Scs0210 {
    if let Some(v) = offered {
        return evaluate_on(v, Ok(patches), inputs, today);
    }
    let first_ga = patches
        .iter()
        .min_by_key(|p| p.version)
        .map(|p| (p.version, p.published_at.map(|d| d.date_naive())));
    let Some((first, day)) = first_ga else {
        // No GA release of the minor: nothing is due yet.
        return Scs0210 {
            verdict: Verdict::Pass,
            reasons: Vec::new(),
            deadline: None,
            unknown: Vec::new(),
            last_known: None,
        }
        .finish();
    };
    let mut out = Scs0210 {
        verdict: Verdict::Pass,
        reasons: Vec::new(),
        deadline: None,
        unknown: Vec::new(),
        last_known: None,
    };
    let Some(day) = day else {
        out.unknown.push(format!(
            "{} has no publication date (Kubernetes releases known from version markers only)",
            first
        ));
        return out.finish();
    };
    let mut r = Reason::new(Rule::Minor, Some(day), Some(plus(day, MINOR_DAYS)));
    r.newer = Some(first);
    if scs::past(plus(day, MINOR_DAYS), today) {
        r.state = ReasonState::Fail;
    }
    out.reasons.push(r);
    out.finish()
}

/// The critical CVEs affecting `version`, with the first patch of its minor that the record
/// no longer lists.
pub fn critical_cves(version: KubeVersion, inputs: &Inputs) -> Vec<CveFact> {
    let Security::Known { cves, .. } = &inputs.security else {
        return Vec::new();
    };
    let patches: Vec<KubeVersion> = match &inputs.releases {
        Ok(r) => r
            .iter()
            .map(|r| r.version)
            .filter(|v| v.minor() == version.minor() && v.patch > version.patch)
            .collect(),
        Err(_) => Vec::new(),
    };
    cves.iter()
        .filter(|c| c.critical && c.affects(version))
        .map(|c| CveFact {
            id: c.id.clone(),
            score: c.score,
            affected: c.affected.clone(),
            fixed_in: patches.iter().copied().filter(|p| !c.affects(*p)).min(),
            url: c.url(),
        })
        .collect()
}

/// The critical CVEs a release at `to` fixes compared with one at `from` (release notes, tenant
/// pull requests): affecting `from`, not `to`.
pub fn fixed_between(from: Option<KubeVersion>, to: KubeVersion, inputs: &Inputs) -> Vec<CveFact> {
    let Some(from) = from else {
        return Vec::new();
    };
    if from >= to {
        return Vec::new();
    }
    let Security::Known { cves, .. } = &inputs.security else {
        return Vec::new();
    };
    cves.iter()
        .filter(|c| c.critical && c.affects(from) && !c.affects(to))
        .map(|c| CveFact {
            id: c.id.clone(),
            score: c.score,
            affected: c.affected.clone(),
            fixed_in: Some(to),
            url: c.url(),
        })
        .collect()
}

#[cfg(test)]
mod tests;
