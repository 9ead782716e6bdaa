//! `stackbot status` for a terminal: the headline, two aligned tables, then the details a
//! table cannot hold (what exactly is missing, why a tenant PR is blocked).

use std::fmt::Write as _;

use super::{deadline_words, headline, lists_words, pull_words, waiting_short};
use crate::report::text::columns;
use crate::status::{StackState, Status};

fn dash<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |x| x.to_string())
}

/// The text form.
pub fn text(s: &Status) -> String {
    let mut out = format!("{}\n\n", headline(s));
    let rows: Vec<Vec<String>> = s
        .stacks
        .iter()
        .map(|r| {
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
                deadline_words(r).unwrap_or_else(|| "-".into()),
                dash(r.end_of_life),
                r.scs0210.verdict.word().to_string(),
            ]
        })
        .collect();
    out.push_str(&columns(
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
    ));
    for r in &s.stacks {
        for w in &r.waiting_for {
            let _ = writeln!(
                out,
                "  {} {} waits for {}: {}",
                r.stack,
                r.minor,
                waiting_short(w),
                w.detail
            );
        }
        for e in &r.errors {
            let _ = writeln!(out, "  {} {} error: {e}", r.stack, r.minor);
        }
        if r.scs0210.verdict != crate::compliance::Verdict::Pass {
            for line in crate::report::verdict_lines(&r.scs0210, Some(s.as_of)) {
                let _ = writeln!(out, "  {} {} SCS 0210 {line}", r.stack, r.minor);
            }
        }
        for c in &r.cves {
            let _ = writeln!(
                out,
                "  {} {} critical {} (CVSS {}) affects the latest release; fixed in {}",
                r.stack,
                r.minor,
                c.id,
                dash(c.score),
                dash(c.fixed_in)
            );
        }
        if r.past_end_of_life && r.state != StackState::Untracked {
            let _ = writeln!(
                out,
                "  {} {} is past its end of life ({}): SCS recommends no longer offering it",
                r.stack,
                r.minor,
                dash(r.end_of_life)
            );
        }
    }
    if !s.tenants.is_empty() {
        out.push('\n');
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
        out.push_str(&columns(
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
        ));
        for t in &s.tenants {
            let blocked = t.pull.as_ref().and_then(|p| p.blocked.as_ref());
            for line in [t.error.as_ref(), blocked, t.note.as_ref()]
                .into_iter()
                .flatten()
            {
                let _ = writeln!(out, "  {}: {line}", t.tenant);
            }
            if t.scs0210.verdict != crate::compliance::Verdict::Pass {
                for line in crate::report::verdict_lines(&t.scs0210, Some(s.as_of)) {
                    let _ = writeln!(out, "  {}: SCS 0210 {line}", t.tenant);
                }
            }
            for c in &t.clusters {
                let _ = writeln!(out, "  {}: {}", t.tenant, super::cluster_words(c));
            }
        }
    }
    for w in &s.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}
