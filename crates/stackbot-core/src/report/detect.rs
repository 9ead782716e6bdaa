//! `stackbot detect` as text and Markdown (its JSON is [`Report`] as serde writes it): one row
//! per stack × minor with its SCS 0210 verdict, then what each is missing and why.

use std::fmt::Write as _;

use crate::report::text::dash;
use crate::resolve::{Report, Status};

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Complete => "complete",
        Status::Waiting => "waiting",
        Status::Error => "error",
    }
}

/// One row per stack × minor, then details (what is missing, release-set fallbacks).
pub fn text(r: &Report) -> String {
    let header = [
        "STACK",
        "MINOR",
        "KUBERNETES",
        "PUBLISHED",
        "STATUS",
        "DUE",
        "RELEASE SET",
        "SCS 0210",
    ];
    let rows: Vec<Vec<String>> = r
        .minors
        .iter()
        .map(|m| {
            let due = match (m.due, m.overdue) {
                (Some(d), true) => format!("{d} OVERDUE"),
                (d, _) => dash(d),
            };
            vec![
                m.stack.to_string(),
                m.minor.to_string(),
                dash(m.kubernetes),
                dash(m.published_at.map(|p| p.date_naive())),
                if m.degraded.is_empty() {
                    status_word(m.status).to_string()
                } else {
                    "degraded".to_string()
                },
                due,
                dash(m.release_set.as_ref().map(|s| s.kubernetes)),
                m.scs0210
                    .as_ref()
                    .map_or("-".to_string(), |v| v.verdict.word().to_string()),
            ]
        })
        .collect();
    let mut out = crate::report::text::columns(&header, &rows);
    for m in &r.minors {
        let mut say = |line: String| {
            let _ = writeln!(out, "{} {}: {line}", m.stack, m.minor);
        };
        for x in &m.missing {
            say(format!("waiting for {x}"));
        }
        for x in &m.errors {
            say(format!("error: {x}"));
        }
        for line in m
            .scs0210
            .iter()
            .flat_map(|v| crate::report::verdict_lines(v, None))
        {
            say(format!("SCS 0210 {line}"));
        }
        if !m.degraded.is_empty() {
            say(format!(
                "degraded: the release set is older than stackbot.lock's ({}); `release` keeps the series where it is",
                m.degraded.join("; ")
            ));
        }
    }
    for n in &r.new_minors {
        let _ = writeln!(
            out,
            "{}: new minor {} available ({}), offer it by {}{}",
            n.stack,
            n.minor,
            n.kubernetes,
            dash(n.due),
            if n.overdue { " (OVERDUE)" } else { "" }
        );
    }
    out
}

pub fn markdown(r: &Report) -> String {
    let mut out = String::from(
        "| stack | minor | kubernetes | published | status | due | release set | SCS 0210 | missing |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for m in &r.minors {
        let mut notes: Vec<String> = m.missing.clone();
        notes.extend(m.errors.iter().map(|e| format!("error: {e}")));
        notes.extend(m.degraded.iter().map(|e| format!("degraded: {e}")));
        if let Some(v) = &m.scs0210 {
            notes.extend(crate::report::verdict_lines(v, None));
        }
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {}{} | {} | {} | {} |",
            m.stack,
            m.minor,
            dash(m.kubernetes),
            dash(m.published_at.map(|p| p.date_naive())),
            status_word(m.status),
            dash(m.due),
            if m.overdue { " **overdue**" } else { "" },
            dash(m.release_set.as_ref().map(|s| s.kubernetes)),
            m.scs0210.as_ref().map_or("-", |v| v.verdict.word()),
            notes.join("; ").replace('|', "\\|")
        );
    }
    for n in &r.new_minors {
        let _ = writeln!(
            out,
            "\nNew minor **{}** for {} ({}), due {}.",
            n.minor,
            n.stack,
            n.kubernetes,
            dash(n.due)
        );
    }
    out
}

/// `6 stack × minor series (2 complete, 3 waiting, 1 failing)`: what a detection checked, for
/// the `-v` log of every command that detects.
pub fn checked_words(r: &crate::resolve::Report) -> String {
    let n = r.minors.len();
    let complete = r.minors.iter().filter(|m| m.release_set.is_some()).count();
    format!(
        "{n} stack × minor series ({complete} with a complete release set, {} waiting or failing)",
        n - complete
    )
}
