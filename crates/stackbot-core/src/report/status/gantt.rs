//! The timeline as a Mermaid `gantt` chart GitHub draws in issues and job summaries: per
//! stack × minor, each recent patch's bars upstream GA → release → first tenant merge, and
//! its SCS deadline as a milestone, so latency is seen rather than read.

use std::fmt::Write as _;

use chrono::NaiveDate;

use crate::report::markdown::fence;
use crate::status::{Status, TimelineEntry};

/// Mermaid ends a task name at `:` and a statement at `;` or `#`: keep names to safe text.
fn name(s: &str) -> String {
    s.chars()
        .map(|c| if matches!(c, ':' | ';' | '#') { ' ' } else { c })
        .filter(|c| !c.is_control())
        .collect()
}

/// `start, Nd` with at least one day, so same-day steps stay visible.
fn span(from: NaiveDate, to: NaiveDate) -> String {
    format!("{from}, {}d", (to - from).num_days().max(1))
}

fn bars(out: &mut String, e: &TimelineEntry, today: NaiveDate) {
    let v = e.kubernetes;
    let late = e.met == Some(false);
    match e.released_at {
        Some(r) => {
            let days = (r - e.upstream_at).num_days();
            let tag = if late { "crit, done" } else { "done" };
            let _ = writeln!(
                out,
                "    {v} GA to release ({days} d) :{tag}, {}",
                span(e.upstream_at, r)
            );
            match e.first_tenant_merge_at {
                Some(m) => {
                    let _ = writeln!(
                        out,
                        "    {v} release to first tenant merge ({} d) :done, {}",
                        (m - r).num_days(),
                        span(r, m)
                    );
                }
                None if today > r => {
                    let _ = writeln!(
                        out,
                        "    {v} waiting for a tenant merge :active, {}",
                        span(r, today)
                    );
                }
                None => {}
            }
        }
        // Released, but when is unknown (an OCI release without a creation date).
        None if e.release.is_some() => {}
        None => {
            let tag = if late { "crit, active" } else { "active" };
            let _ = writeln!(
                out,
                "    {v} not released yet ({} d) :{tag}, {}",
                (today - e.upstream_at).num_days(),
                span(e.upstream_at, today.max(e.upstream_at))
            );
        }
    }
    if let Some(d) = e.due {
        let what = if e.critical_cves.is_empty() {
            "SCS deadline".to_string()
        } else {
            format!(
                "critical-CVE deadline ({})",
                name(&e.critical_cves.join(" "))
            )
        };
        let _ = writeln!(out, "    {v} {what} :milestone, crit, {d}, 0d");
    }
}

/// The chart in a `mermaid` fence, or a sentence when there is nothing recent.
pub fn chart(s: &Status) -> String {
    if s.timeline.is_empty() {
        return "No Kubernetes patch of a tracked minor was published in the last 180 days.\n"
            .into();
    }
    let mut out = String::from(
        "gantt\n    title Upstream GA → release → first tenant merge (milestone: SCS deadline)\n    \
         dateFormat YYYY-MM-DD\n    axisFormat %b %d\n",
    );
    let mut section = None;
    for e in &s.timeline {
        let this = format!("{} {}", e.stack, e.minor);
        if section.as_ref() != Some(&this) {
            let _ = writeln!(out, "    section {}", name(&this));
            section = Some(this);
        }
        bars(&mut out, e, s.as_of);
    }
    fence(&out, "mermaid")
}
