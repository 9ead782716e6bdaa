//! `stackbot tenants` as text and Markdown (its JSON is the reports as serde writes them): one
//! row per tenant × stack, and the diff of every change (`none` shows none: the tenant already
//! has it).

use crate::tenants::{Action, Outcome, TenantReport};

fn outcome_words(r: &TenantReport) -> String {
    match (&r.outcome, &r.error) {
        (Outcome::Failed, Some(e)) => format!("failed ({e})"),
        (o, _) => serde_json::to_value(o)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
    }
}

fn or_dash(s: &str) -> String {
    if s.is_empty() {
        "-".to_string()
    } else {
        s.to_string()
    }
}

/// Tab-separated rows under a header line, each followed by its diff when `diffs`.
pub fn text(reports: &[TenantReport], diffs: bool) -> String {
    let mut out = String::new();
    if !reports.is_empty() {
        out.push_str("tenant\trepository\tbranch\taction\toutcome\tfiles\tnote\n");
    }
    for r in reports {
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
            r.tenant,
            r.repository,
            r.branch.as_deref().unwrap_or("-"),
            r.action,
            outcome_words(r),
            or_dash(&r.files.join(", ")),
            or_dash(r.note.as_deref().unwrap_or("")),
        ));
        if diffs && !r.diff.is_empty() && r.action != Action::None {
            out.push_str(&r.diff);
        }
    }
    out
}

/// A Markdown table, each row followed by its diff in a fence when `diffs`.
pub fn markdown(reports: &[TenantReport], diffs: bool) -> String {
    let mut out = String::from(
        "| tenant | repository | branch | action | outcome | files | note |\n|---|---|---|---|---|---|---|\n",
    );
    for r in reports {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            r.tenant,
            r.repository,
            r.branch.as_deref().unwrap_or("-"),
            r.action,
            outcome_words(r),
            r.files.join(", "),
            r.note.as_deref().unwrap_or(""),
        ));
        if diffs && !r.diff.is_empty() && r.action != Action::None {
            out.push_str(&format!("\n```diff\n{}```\n\n", r.diff));
        }
    }
    out
}

/// `tenants: 1 opened, 0 updated, …`: the run in one line.
pub fn counts(reports: &[TenantReport]) -> String {
    let count = |o: Outcome| reports.iter().filter(|r| r.outcome == o).count();
    format!(
        "tenants: {} opened, {} updated, {} unchanged, {} closed, {} blocked, {} planned, {} failed",
        count(Outcome::Opened),
        count(Outcome::Updated),
        count(Outcome::Unchanged),
        count(Outcome::Closed),
        count(Outcome::Blocked),
        count(Outcome::Planned),
        count(Outcome::Failed)
    )
}
