//! SCS 0210 verdicts in words: one line per reason, the same in `detect`, `status`, the
//! dashboard and the job summary.

use chrono::NaiveDate;

use crate::compliance::{ReasonState, Rule, Scs0210};

/// One line per reason (and per unknown source): `fail: critical CVE CVE-2026-0001 (v1.33.10
/// is affected; v1.33.11 is out since 2026-04-15), deadline 2026-04-29 (2 days overdue)`.
/// With `today`, deadlines are also counted in days.
pub fn verdict_lines(v: &Scs0210, today: Option<NaiveDate>) -> Vec<String> {
    let mut out = Vec::new();
    for r in &v.reasons {
        let state = match r.state {
            ReasonState::Pending => "pending",
            ReasonState::Warn => "warn",
            ReasonState::Fail => "fail",
            ReasonState::Unknown => "unknown",
        };
        let what = match r.rule {
            Rule::CriticalCve => format!("critical CVE {}", r.cves.join(", ")),
            rule => rule.words().to_string(),
        };
        let context = match (r.rule, r.version, r.newer, r.since) {
            (Rule::EndOfLife, Some(v), _, _) => format!(" ({} runs {v})", v.minor()),
            (Rule::Minor, _, Some(n), Some(s)) => format!(" ({n} GA since {s}, never released)"),
            (Rule::CriticalCve, Some(v), Some(n), Some(s)) => {
                format!(" ({v} is affected; {n} is out since {s})")
            }
            (_, Some(v), Some(n), Some(s)) => format!(" ({v} offered; {n} is out since {s})"),
            _ => String::new(),
        };
        let deadline = match (r.deadline, today) {
            (Some(d), Some(t)) => format!(", deadline {d} ({})", days(d, t)),
            (Some(d), None) => format!(", deadline {d}"),
            (None, _) => String::new(),
        };
        let note = r
            .note
            .as_ref()
            .map(|n| format!("; note: {n}"))
            .unwrap_or_default();
        out.push(format!("{state}: {what}{context}{deadline}{note}"));
    }
    out.extend(v.unknown.iter().map(|u| format!("unknown: {u}")));
    if let Some(stale) = &v.last_known {
        out.push(format!(
            "last known: {} ({}, stale)",
            stale.verdict.word(),
            stale_age(stale, today)
        ));
    }
    out
}

/// `facts of 2026-05-01, 3 days old` (the oldest last known answer).
pub fn stale_age(stale: &crate::compliance::Stale, today: Option<NaiveDate>) -> String {
    match (stale.facts_from.map(|d| d.date_naive()), today) {
        (Some(d), Some(t)) => {
            let n = (t - d).num_days();
            format!("facts of {d}, {n} day{} old", if n == 1 { "" } else { "s" })
        }
        (Some(d), None) => format!("facts of {d}"),
        (None, _) => "facts of an unrecorded day".into(),
    }
}

/// `3 days left`, `due today`, `2 days overdue` ([`crate::status::days_words`]).
pub fn days(deadline: NaiveDate, today: NaiveDate) -> String {
    crate::status::days_words((deadline - today).num_days())
}

/// A Markdown link to a CVE's record page.
pub fn cve_link(id: &str) -> String {
    format!("[{id}](https://www.cve.org/CVERecord?id={id})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_counted_both_ways() {
        let d: NaiveDate = "2026-05-16".parse().unwrap();
        assert_eq!(days(d, "2026-05-07".parse().unwrap()), "9 days left");
        assert_eq!(days(d, d), "due today");
        assert_eq!(days(d, "2026-05-18".parse().unwrap()), "2 days overdue");
    }

    #[test]
    fn a_cve_links_to_its_record() {
        assert_eq!(
            cve_link("CVE-2024-10220"),
            "[CVE-2024-10220](https://www.cve.org/CVERecord?id=CVE-2024-10220)"
        );
    }
}
