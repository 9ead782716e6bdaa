//! The status report in three forms: text for a terminal, JSON for scripts (the documented
//! interface, `docs/status.md`), Markdown for the job summary and the dashboard issue (with a
//! Mermaid `gantt` timeline GitHub draws).
//!
//! The words shared by the forms (how a deadline or a pull request is described) live here,
//! so the terminal and the dashboard never say different things about the same fact.

mod gantt;
pub mod markdown;
pub mod text;

use crate::status::{Status, TenantPull, TenantStatus, WaitingFor, WaitingKind};

pub use markdown::{dashboard_body, markdown};
pub use text::text;

/// The JSON form: `Status` as serde writes it, pretty, with a final newline.
pub fn json(s: &Status) -> String {
    serde_json::to_string_pretty(s).expect("the status serializes") + "\n"
}

/// The step outputs of `stackbot status` under GitHub Actions: `compliant` is `true` or
/// `false` as [`Status::compliant`] says, and `unknown` when a source the verdict depends on
/// could not be read and nothing fails; `verdict` is the headline's word.
pub fn outputs(s: &Status) -> [(&'static str, &'static str); 2] {
    use crate::compliance::Verdict;
    let verdict = s.scs0210.verdict;
    let compliant = match (verdict, s.compliant) {
        (Verdict::Unknown, _) => "unknown",
        (_, true) => "true",
        (_, false) => "false",
    };
    [("compliant", compliant), ("verdict", verdict.word())]
}

/// What one waiting item is, briefly (the detail says where to look).
pub fn waiting_short(w: &WaitingFor) -> String {
    let short = waiting_kind_short(w);
    match &w.urgency {
        Some(u) => format!("{short} ({u})"),
        None => short,
    }
}

fn waiting_kind_short(w: &WaitingFor) -> String {
    match w.kind {
        WaitingKind::NodeImage => format!("node image {}", w.what),
        WaitingKind::Chart => format!("chart {}", w.what),
        WaitingKind::Kubernetes => w.what.clone(),
        WaitingKind::ReleaseRun => format!("the next release run ({})", w.what),
        WaitingKind::ReleasePullRequest => format!("merge of {}", w.what),
        WaitingKind::Gate => format!("the conformance gate ({})", w.what),
        WaitingKind::Configuration => "configuration: add the minor".to_string(),
    }
}

/// One `Cluster` of a tenant in words: `Cluster team-a/prod runs v1.33.5
/// (openstack-scs2-1-33-v2), end of life 2026-06-28, SCS 0210 pass; next minor:
/// openstack-scs2-1-34-v1; upgrade: #12 open, 3 days`.
pub fn cluster_words(c: &crate::status::ClusterStatus) -> String {
    let mut out = format!("Cluster {} runs {} ({})", c.cluster, c.version, c.class);
    if let Some(eol) = c.end_of_life {
        out.push_str(&format!(", end of life {eol}"));
    }
    out.push_str(&format!(", SCS 0210 {}", c.scs0210.verdict.word()));
    if let Some(next) = &c.next {
        out.push_str(&format!("; next minor: {next}"));
        if let Some(p) = &c.upgrade {
            out.push_str(&format!("; upgrade: {}", pull_words(p)));
        }
    }
    out
}

/// `#15 open, 3 days` / `#15 merged` / `#15 closed`.
pub fn pull_words(p: &TenantPull) -> String {
    let state = match p.state {
        crate::forge::PullState::Open => "open",
        crate::forge::PullState::Closed => "closed",
        crate::forge::PullState::Merged => "merged",
    };
    match (p.state, p.age_days) {
        (crate::forge::PullState::Open, Some(1)) => format!("#{} {state}, 1 day", p.number),
        (crate::forge::PullState::Open, Some(d)) => format!("#{} {state}, {d} days", p.number),
        _ => format!("#{} {state}", p.number),
    }
}

/// What a tenant's resources list, per minor: `openstack-scs2-1-34-v1`, `1.34: none`,
/// `1.34: autoSubscribe`.
pub fn lists_words(t: &TenantStatus) -> String {
    let parts: Vec<String> = t
        .minors
        .iter()
        .map(|m| {
            if m.auto_subscribe {
                format!("{}: autoSubscribe", m.minor)
            } else if m.releases.is_empty() {
                format!("{}: none", m.minor)
            } else {
                m.releases.join(", ")
            }
        })
        .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join("; ")
    }
}

/// The first line of every form.
pub fn headline(s: &Status) -> String {
    let n = &s.summary;
    let count = |n: usize, one: &str, many: &str| {
        (n > 0).then(|| format!("{n} {}", if n == 1 { one } else { many }))
    };
    let soon = format!("due within {} days", crate::status::DUE_SOON_DAYS);
    let parts: Vec<String> = [
        count(n.overdue, "overdue", "overdue"),
        count(n.due_soon, &soon, &soon),
        count(n.waiting, "waiting", "waiting"),
        count(n.current, "current", "current"),
        count(
            n.tenants_behind,
            "tenant stack behind",
            "tenant stacks behind",
        ),
        count(n.tenants_blocked, "blocked tenant PR", "blocked tenant PRs"),
        count(n.tenant_errors, "unreadable tenant", "unreadable tenants"),
    ]
    .into_iter()
    .flatten()
    .collect();
    let verdict = if s.compliant {
        "compliant"
    } else {
        "NOT compliant"
    };
    let h = &s.scs0210;
    let counts = |c: &crate::status::VerdictCounts| {
        [
            count(c.fail, "fail", "fail"),
            count(c.unknown, "unknown", "unknown"),
            count(c.warn, "warn", "warn"),
            count(c.pass, "pass", "pass"),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ")
    };
    let mut tests = format!("stacks {}", counts(&h.stacks));
    if !s.tenants.is_empty() {
        tests.push_str(&format!("; tenants {}", counts(&h.tenants)));
    }
    format!(
        "SCS 0210 status as of {} ({}): {verdict}, conformance verdict {} ({}) ({})",
        s.as_of,
        s.upstream_data.words(),
        h.verdict.word(),
        if h.stacks == crate::status::VerdictCounts::default() {
            "nothing tracked".to_string()
        } else {
            tests
        },
        if parts.is_empty() {
            "nothing tracked".to_string()
        } else {
            parts.join(", ")
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compliance::Scs0210;
    use crate::status::ClusterStatus;

    #[test]
    fn a_cluster_reads_as_what_it_runs_until_when_and_its_next_step() {
        let mut c = ClusterStatus {
            cluster: "team-a/prod".into(),
            file: "clusters/prod.yaml".into(),
            line: 1,
            class: "openstack-scs2-1-33-v2".into(),
            version: "v1.33.11".into(),
            end_of_life: "2026-06-28".parse().ok(),
            next: Some("openstack-scs2-1-34-v2".into()),
            upgrade: Some(TenantPull {
                number: 12,
                url: "https://example.org/pull/12".into(),
                state: crate::forge::PullState::Open,
                created_at: None,
                age_days: Some(3),
                merged_at: None,
                releases: vec!["openstack-scs2-1-34-v2".into()],
                blocked: None,
            }),
            scs0210: Scs0210::unknown("not read"),
        };
        assert_eq!(
            cluster_words(&c),
            "Cluster team-a/prod runs v1.33.11 (openstack-scs2-1-33-v2), end of life 2026-06-28, SCS 0210 unknown; next minor: openstack-scs2-1-34-v2; upgrade: #12 open, 3 days"
        );
        c.next = None;
        c.end_of_life = None;
        assert_eq!(
            cluster_words(&c),
            "Cluster team-a/prod runs v1.33.11 (openstack-scs2-1-33-v2), SCS 0210 unknown"
        );
    }
}
