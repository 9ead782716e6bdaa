//! No downgrades: a series never publishes a release whose Kubernetes patch or component
//! version is older than what its latest release shipped.
//!
//! Upstream flickers: a `CHECKSUM` answering 503 (or a 404 for a file that existed) makes the
//! newest *complete* set fall back to the previous patch, and a stale Helm index offers an
//! older chart. Releasing that would move every tenant backwards, and the next hour forwards
//! again. So the series stays where it is, `degraded`, naming what would regress; the pipeline
//! adds why upstream offered less (from detection) and whether that is an error (exit 1) or
//! something gone (exit 0 with a warning). `release --allow-downgrade` releases it anyway.

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

/// The degradation of `d` against its latest release, if the offered set is older.
pub fn check(d: &Desired, latest: Option<&Latest>, base_lock: &Lock) -> Option<Degraded> {
    let latest = latest?;
    let regressions = d.set.regressions_since(shipped(d, latest, base_lock)?);
    (!regressions.is_empty()).then(|| Degraded {
        series: d.series(),
        latest: latest.tag.clone(),
        regressions,
        cause: Vec::new(),
        transient: false,
    })
}
