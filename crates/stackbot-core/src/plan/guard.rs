//! No downgrades: a series never publishes a release whose Kubernetes patch or component
//! version is older than what its latest release shipped.
//!
//! Upstream flickers: a `CHECKSUM` answering 503 (or a 404 for a file that existed) makes the
//! newest *complete* set fall back to the previous patch, and a stale Helm index offers an
//! older chart. Releasing that would move every tenant backwards, and the next hour forwards
//! again. So the series stays where it is, `degraded`, naming what would regress; the pipeline
//! adds why upstream offered less (from detection) and whether that is an error (exit 1) or
//! something gone (exit 0 with a warning). `release --allow-downgrade` releases it anyway.
//!
//! The one home of no-downgrade: [`regressions`] is the rule (`detect` marks a stack × minor
//! with it against the checkout's lock, `plan` through [`check`] against the latest release),
//! and [`explain`] says whether a held-back series is transient trouble (exit 1) or something
//! gone (exit 0 with a warning), from the causes detection found.

use serde::Serialize;

use crate::lock::Lock;
use crate::model::ReleaseSet;

use super::{Desired, Latest};

/// A series kept at its latest release because the offered set is older.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Degraded {
    /// `<provider>-<name>-<major>-<minor>`.
    pub series: String,
    /// The release the series stays at.
    pub latest: String,
    /// What the offered set would move backwards, in words.
    pub regressions: Vec<String>,
    /// Why upstream offered an older set, when detection knows (e.g. the error of the newest
    /// patch's `CHECKSUM`); filled by the pipeline.
    pub cause: Vec<String>,
    /// The cause is an upstream error: the run exits 1 and the next run retries. Otherwise
    /// something that existed is gone (a 404, a stale index): exit 0 with a warning.
    pub transient: bool,
}

impl std::fmt::Display for Degraded {
    /// `degraded <series>: stays at <tag> (<regressions>) because <cause>`: one line for
    /// logs, text output and previews.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "degraded {}: stays at {} ({})",
            self.series,
            self.latest,
            self.regressions.join("; ")
        )?;
        if !self.cause.is_empty() {
            write!(f, " because {}", self.cause.join("; "))?;
        }
        Ok(())
    }
}

/// Why upstream offered an older set for one series, as detection found it.
#[derive(Debug, Clone, Default)]
pub struct Cause {
    /// An upstream error (the next run retries), rather than something gone.
    pub transient: bool,
    /// Detection's words for each reason; empty when it knows none.
    pub reasons: Vec<String>,
}

/// Say why each degraded series of `plan` was offered an older set (`cause_of` its series): an
/// upstream error is transient (the run exits 1), a 404 or a stale index is not (exit 0, with
/// a warning).
pub fn explain(plan: &mut super::Plan, cause_of: impl Fn(&str) -> Cause) {
    for d in &mut plan.degraded {
        let c = cause_of(&d.series);
        d.transient = c.transient;
        d.cause = c.reasons;
        if d.cause.is_empty() {
            d.cause
                .push("upstream offers only older versions (a stale Helm index?)".into());
        }
        if !d.transient {
            plan.warnings.push(d.to_string());
        }
    }
}

/// The set the latest release shipped: `stackbot.lock` at its tag, else the base branch's
/// entry when the lock there records that release (or no number at all: an older lock).
pub fn shipped<'a>(d: &Desired, latest: &'a Latest, base_lock: &'a Lock) -> Option<&'a ReleaseSet> {
    latest.set.as_ref().or_else(|| {
        base_lock
            .released_as(&d.stack, d.minor)
            .is_none_or(|n| n == latest.n)
            .then(|| base_lock.get(&d.stack, d.minor))
            .flatten()
    })
}

/// What `offered` would move backwards from `shipped`, in words (empty: nothing).
pub fn regressions(offered: &ReleaseSet, shipped: &ReleaseSet) -> Vec<String> {
    offered.regressions_since(shipped)
}

/// The degradation of `d` against its latest release, if the offered set is older.
pub fn check(d: &Desired, latest: Option<&Latest>, base_lock: &Lock) -> Option<Degraded> {
    let latest = latest?;
    let regressions = regressions(&d.set, shipped(d, latest, base_lock)?);
    (!regressions.is_empty()).then(|| Degraded {
        series: d.series(),
        latest: latest.tag.clone(),
        regressions,
        cause: Vec::new(),
        transient: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn degraded(series: &str) -> Degraded {
        Degraded {
            series: series.into(),
            latest: format!("{series}-v3"),
            regressions: vec!["Kubernetes v1.34.7 → v1.34.6".into()],
            cause: Vec::new(),
            transient: false,
        }
    }

    #[test]
    fn an_upstream_error_is_transient_and_something_gone_is_a_warning() {
        let mut plan = super::super::Plan {
            degraded: vec![
                degraded("openstack-scs2-1-34"),
                degraded("openstack-scs2-1-33"),
            ],
            ..Default::default()
        };
        explain(&mut plan, |series| Cause {
            transient: series.ends_with("1-34"),
            reasons: vec![format!("{series}: CHECKSUM answered 503")],
        });
        assert!(plan.degraded[0].transient);
        assert!(!plan.degraded[1].transient);
        assert_eq!(
            plan.warnings.len(),
            1,
            "only what is gone is a warning (an error fails the run)"
        );
        assert!(plan.warnings[0].contains("openstack-scs2-1-33"));
        assert!(plan.warnings[0].contains("because openstack-scs2-1-33: CHECKSUM answered 503"));
    }

    #[test]
    fn without_a_known_cause_a_stale_index_is_named() {
        let mut plan = super::super::Plan {
            degraded: vec![degraded("openstack-scs2-1-34")],
            ..Default::default()
        };
        explain(&mut plan, |_| Cause::default());
        assert_eq!(
            plan.degraded[0].cause,
            ["upstream offers only older versions (a stale Helm index?)"]
        );
    }
}
