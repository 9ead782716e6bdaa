//! `stackbot status` for a terminal: the headline, two aligned tables, then the details a
//! table cannot hold (what exactly is missing, why a tenant PR is blocked).

use std::fmt::Write as _;

use chrono::NaiveDate;

use super::{headline, lists_words, pull_words, waiting_short};
use crate::report::text::{columns, dash};
use crate::status::{StackState, StackStatus, Status, TenantStatus};

/// The text form: the headline, then each section in order.
pub fn text(s: &Status) -> String {
    let mut out = format!("{}\n\n", headline(s));
    out.push_str(&stack_table(s));
    for r in &s.stacks {
        stack_details(&mut out, r, s.as_of);
    }
    if !s.tenants.is_empty() {
        out.push('\n');
        out.push_str(&tenant_table(s));
        for t in &s.tenants {
            tenant_details(&mut out, t, s.as_of);
        }
    }
    for w in &s.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

/// One aligned row per stack minor; what does not fit a cell follows in [`stack_details`].
fn stack_table(s: &Status) -> String {
    let rows: Vec<Vec<String>> = s.stacks.iter().map(stack_row).collect();
    columns(
        &[
            "STACK",
            "MINOR",
            "UPSTREAM",
            "LATEST RELEASE",
            "STATE",
            "DEADLINE",
            "END OF LIFE",
            "SCS 0210",
        ],
        &rows,
    )
}

fn stack_row(r: &StackStatus) -> Vec<String> {
    let state = if r.overdue {
        format!("{} OVERDUE", r.state.word())
    } else {
        r.state.word().to_string()
    };
    vec![
        r.stack.to_string(),
        r.minor.to_string(),
        r.upstream.as_ref().map_or("-".into(), |u| {
            format!(
                "{} {}",
                u.kubernetes,
                dash(u.published_at.map(|p| p.date_naive()))
            )
        }),
        r.latest_release.as_ref().map_or("-".into(), |l| {
            format!(
                "{} ({}, {})",
                l.tag,
                dash(l.kubernetes),
                dash(l.published_at.map(|p| p.date_naive()))
            )
        }),
        state,
        r.deadlines.words().unwrap_or_else(|| "-".into()),
        dash(r.end_of_life),
        r.scs0210.verdict.word().to_string(),
    ]
}

/// The lines under the stack table for one stack minor: what it waits for, its errors, why
/// it is not compliant, its critical CVEs, an end of life passed.
fn stack_details(out: &mut String, r: &StackStatus, as_of: NaiveDate) {
    let mut say = |line: String| {
        let _ = writeln!(out, "  {} {} {line}", r.stack, r.minor);
    };
    for w in &r.waiting_for {
        say(format!("waits for {}: {}", waiting_short(w), w.detail));
    }
    for e in &r.errors {
        say(format!("error: {e}"));
    }
    for s in &r.stepped_over {
        say(format!("steps over {}: {}", s.patch, s.reason));
    }
    if r.scs0210.verdict != crate::compliance::Verdict::Pass {
        for line in crate::report::verdict_lines(&r.scs0210, Some(as_of)) {
            say(format!("SCS 0210 {line}"));
        }
    }
    for c in &r.cves {
        let (score, fixed) = (dash(c.score), dash(c.fixed_in));
        say(format!(
            "critical {} (CVSS {score}) affects the latest release; fixed in {fixed}",
            c.id
        ));
    }
    if r.past_end_of_life && r.state != StackState::Untracked {
        let eol = dash(r.end_of_life);
        say(format!(
            "is past its end of life ({eol}): SCS recommends no longer offering it"
        ));
    }
}

/// One aligned row per tenant; what does not fit a cell follows in [`tenant_details`].
fn tenant_table(s: &Status) -> String {
    let rows: Vec<Vec<String>> = s
        .tenants
        .iter()
        .map(|t| {
            vec![
                t.tenant.clone(),
                dash(t.stack.as_ref()),
                lists_words(t),
                t.behind.words(),
                t.pull.as_ref().map_or("-".into(), pull_words),
                t.state.word().to_string(),
                t.scs0210.verdict.word().to_string(),
            ]
        })
        .collect();
    columns(
        &[
            "TENANT",
            "STACK",
            "LISTS",
            "BEHIND",
            "PULL REQUEST",
            "STATE",
            "SCS 0210",
        ],
        &rows,
    )
}

/// The lines under the tenant table for one tenant: its error, why its pull request is
/// blocked, its note, why it is not compliant, its clusters.
fn tenant_details(out: &mut String, t: &TenantStatus, as_of: NaiveDate) {
    let mut say = |line: &str| {
        let _ = writeln!(out, "  {}: {line}", t.tenant);
    };
    let blocked = t.pull.as_ref().and_then(|p| p.blocked.as_ref());
    for line in [t.error.as_ref(), blocked, t.note.as_ref()]
        .into_iter()
        .flatten()
    {
        say(line);
    }
    if t.scs0210.verdict != crate::compliance::Verdict::Pass {
        for line in crate::report::verdict_lines(&t.scs0210, Some(as_of)) {
            say(&format!("SCS 0210 {line}"));
        }
    }
    for c in &t.clusters {
        say(&super::cluster_words(c));
    }
}
