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
    /// Where each tracked series stands after the run: the `stacks[]` rows of `status` (what
    /// it waits for, `due`, `due_window`, `days_left`, `overdue`, the verdict).
    pub series: &'a [crate::status::StackStatus],
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
            series: &plan.series,
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

/// The step outputs a release run sets under GitHub Actions (the action passes them on):
/// `tags` and `pull-requests` one per line, `dashboard-url`, and `repository` (where the
/// releases are, for the attestation step). Always all four keys, empty when there is none.
pub fn outputs<D: Serialize>(
    json: &ReleaseJson<'_, D>,
    repository: &str,
) -> Vec<(&'static str, String)> {
    let dashboard = dashboard_url(json).unwrap_or_default();
    vec![
        ("tags", json.released.join("\n")),
        ("pull-requests", json.pull_requests.join("\n")),
        ("dashboard-url", dashboard),
        ("repository", repository.to_string()),
    ]
}

/// The dashboard issue's URL, when the run kept one.
fn dashboard_url<D: Serialize>(json: &ReleaseJson<'_, D>) -> Option<String> {
    json.dashboard
        .and_then(|d| serde_json::to_value(d).ok())
        .and_then(|v| v.get("url").and_then(|u| u.as_str()).map(str::to_string))
}

/// The job summary of a release run: what was released, the pull requests, what was skipped
/// or failed and why, the dashboard, and the whole JSON result folded at the end.
pub fn summary<D: Serialize>(json: &ReleaseJson<'_, D>) -> String {
    use super::markdown::{bullets, details, escape_inline, fence};
    use super::text::series_tail;
    let mut s = String::from("## stackbot release\n\n");
    if json.released.is_empty() {
        s.push_str("Nothing released.\n");
    } else {
        s.push_str("### Released\n\n");
        let released = json.released.iter();
        s.push_str(&bullets(
            released.map(|t| format!("{t}{}", series_tail(json.series, t))),
        ));
    }
    if !json.pull_requests.is_empty() {
        s.push_str("\n### Release pull requests\n\n");
        s.push_str(&bullets(json.pull_requests));
    }
    let problems: Vec<String> = json
        .failed
        .iter()
        .map(|f| format!("failed {}: {}", f.what, f.reason))
        .chain(json.degraded.iter().map(|d| d.to_string()))
        .chain(
            // Each series' line says where it stands as `status` does, as in the text summary.
            json.skipped.iter().map(|k| {
                let tail = series_tail(json.series, &k.what.to_string());
                format!("{}: {}{tail}", k.what, k.reason)
            }),
        )
        .collect();
    if !problems.is_empty() {
        s.push_str("\n### Not released\n\n");
        s.push_str(&bullets(&problems));
    }
    let tenants = super::tenants::counts(json.tenants);
    s.push_str(&format!("\n{}\n", escape_inline(&tenants)));
    if let Some(url) = dashboard_url(json) {
        s.push_str(&format!("\nStatus dashboard: {}\n", escape_inline(&url)));
    }
    let full = serde_json::to_string_pretty(json).expect("the release result serializes");
    s.push('\n');
    s.push_str(&details("Full result (JSON)", &fence(&full, "json")));
    s
}
