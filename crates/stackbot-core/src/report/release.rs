//! `stackbot release`'s result: the JSON object scripts read and the text people read, from
//! the same typed values, so the two forms can never list different things.

use std::fmt::Display;

use serde::Serialize;

use crate::outcome::Outcome;
use crate::plan::{Degraded, Plan, Skipped};
use crate::tenants::TenantReport;

/// The JSON form of a release run (a documented interface: fields are only ever added).
#[derive(Debug, Serialize)]
pub struct ReleaseJson<'a, D: Serialize> {
    pub released: &'a [String],
    pub skipped: &'a [Skipped],
    pub pull_requests: &'a [String],
    pub actions: &'a [String],
    pub oci: &'a [crate::oci::Published],
    pub tenants: &'a [TenantReport],
    /// What happened to the dashboard issue (`null`: `dashboard.enabled` is off).
    pub dashboard: Option<&'a D>,
    pub warnings: &'a [String],
    pub degraded: &'a [Degraded],
    /// What makes the run exit 1 while the rest went on.
    pub failed: &'a [Skipped],
}

impl<'a, D: Serialize> ReleaseJson<'a, D> {
    /// The result of a run.
    pub fn new(
        outcome: &'a Outcome,
        plan: &'a Plan,
        tenants: &'a [TenantReport],
        dashboard: Option<&'a D>,
        failed: &'a [Skipped],
    ) -> Self {
        ReleaseJson {
            released: &outcome.released,
            skipped: &outcome.skipped,
            pull_requests: &outcome.pull_requests,
            actions: &outcome.actions,
            oci: &outcome.oci,
            tenants,
            dashboard,
            warnings: &plan.warnings,
            degraded: &plan.degraded,
            failed,
        }
    }

    /// Pretty JSON with a final newline.
    pub fn render(&self) -> String {
        serde_json::to_string_pretty(self).expect("the release result serializes") + "\n"
    }
}

/// The text form: what was released and skipped, the tenants, the failures the outcome and
/// the plan do not already name, and the dashboard line.
pub fn release_text(
    outcome: &Outcome,
    plan: &Plan,
    tenants: &[TenantReport],
    failed: &[Skipped],
    dashboard: Option<&dyn Display>,
) -> String {
    let mut s = super::text::outcome_text(outcome, plan, tenants);
    for f in failed {
        if !outcome.failed.contains(f) && !plan.failed.contains(f) {
            s.push_str(&format!("failed {}: {}\n", f.what, f.reason));
        }
    }
    if let Some(d) = dashboard {
        s.push_str(&format!("{d}\n"));
    }
    s
}
