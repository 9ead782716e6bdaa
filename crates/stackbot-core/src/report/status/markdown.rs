//! `stackbot status --format markdown`, the job summary and the dashboard issue's body.
//!
//! Built from [`Block`]s in order of importance (headline, stacks, tenants row by row,
//! timeline, how to read it), so when the dashboard must stay under GitHub's 65,536-character
//! limit [`fit`] keeps what fits in that order, drops the rest and says where the full report
//! is.

use chrono::{DateTime, Utc};

use super::{gantt, headline, lists_words, pull_words, waiting_short};
use crate::compliance::{ReasonState, Scs0210, Verdict};
use crate::report::markdown::{BODY_MAX, Block, bullets, escape_inline, fit, fit_body, table};
use crate::report::verdict::cve_link;
use crate::status::dashboard::{FOOTER, MARKER};
use crate::status::{StackState, StackStatus, Status, TenantState, TenantStatus};

fn icon(s: &StackStatus) -> &'static str {
    if s.overdue {
        return "🔴";
    }
    match s.state {
        StackState::Current => "🟢",
        StackState::Releasable => "🔵",
        StackState::ReleasePullRequest | StackState::Waiting | StackState::InTest => "🟡",
        StackState::Error | StackState::FailedConformance => "🔴",
        StackState::Untracked => "⚪",
        StackState::Unknown => "❔",
    }
}

fn tenant_icon(t: &TenantStatus) -> &'static str {
    match t.state {
        TenantState::Current => "🟢",
        TenantState::PullRequestOpen => "🟡",
        TenantState::Behind => "🟠",
        TenantState::Blocked | TenantState::Error => "🔴",
    }
}

/// `[text](url)` for web links, plain text otherwise (local forge paths are not links).
fn link(text: &str, url: Option<&str>) -> String {
    match url {
        Some(u) if (u.starts_with("https://") || u.starts_with("http://")) && !u.contains(')') => {
            format!("[{}]({u})", escape_inline(text))
        }
        _ => escape_inline(text),
    }
}

fn date<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "—".to_string(), |d| d.to_string())
}

fn stack_row(r: &StackStatus) -> Vec<String> {
    let upstream = r.upstream.as_ref().map_or("—".into(), |u| {
        format!(
            "{} ({})",
            u.kubernetes,
            date(u.published_at.map(|p| p.date_naive()))
        )
    });
    let latest = r.latest_release.as_ref().map_or("—".into(), |l| {
        format!(
            "{} ({}, {})",
            link(&l.tag, l.url.as_deref()),
            date(l.kubernetes),
            date(l.published_at.map(|p| p.date_naive()))
        )
    });
    let waiting: Vec<String> = r
        .waiting_for
        .iter()
        .map(|w| escape_inline(&waiting_short(w)))
        .chain(
            r.errors
                .iter()
                .map(|e| format!("error: {}", escape_inline(e))),
        )
        .chain(
            r.stepped_over
                .iter()
                .map(|s| format!("steps over {}: {}", s.patch, escape_inline(&s.reason))),
        )
        .collect();
    let deadline = match r.deadlines.words() {
        Some(d) if r.overdue => format!("**{}**", escape_inline(&d)),
        Some(d) => escape_inline(&d),
        None => "—".into(),
    };
    let eol = match (r.end_of_life, r.past_end_of_life) {
        (Some(e), true) => format!("{e} (passed)"),
        (e, _) => date(e),
    };
    vec![
        escape_inline(&r.stack.to_string()),
        r.minor.to_string(),
        upstream,
        latest,
        format!("{} {}", icon(r), r.state.word()),
        if waiting.is_empty() {
            "—".into()
        } else {
            waiting.join("; ")
        },
        deadline,
        eol,
        verdict_cell(&r.scs0210, r.cves.iter().map(|c| c.id.as_str())),
    ]
}

/// `❌ fail: critical CVE [CVE-…](…)`: the verdict, its failing or warning rules, the CVEs
/// linked.
fn verdict_cell<'a>(v: &Scs0210, cves: impl Iterator<Item = &'a str>) -> String {
    let mut rules: Vec<String> = v
        .reasons
        .iter()
        .filter(|r| matches!(r.state, ReasonState::Fail | ReasonState::Warn))
        .map(|r| r.rule.words().to_string())
        .collect();
    rules.dedup();
    if v.verdict == Verdict::Unknown {
        rules.push("a source could not be read".into());
    }
    let links: Vec<String> = cves.map(cve_link).collect();
    let mut out = format!("{} {}", v.verdict.icon(), v.verdict.word());
    if !rules.is_empty() {
        out.push_str(&format!(": {}", rules.join(", ")));
    }
    if !links.is_empty() {
        out.push_str(&format!(" ({})", links.join(", ")));
    }
    if let Some(stale) = &v.last_known {
        out.push_str(&format!(
            "; last known {} {} ({}, stale)",
            stale.verdict.icon(),
            stale.verdict.word(),
            crate::report::verdict::stale_age(stale, None)
        ));
    }
    out
}

/// A pull request's words with its number linked; `—` without one.
fn pull_cell(p: Option<&crate::status::TenantPull>) -> String {
    p.map_or("—".into(), |p| {
        let words = pull_words(p);
        let number = format!("#{}", p.number);
        words.replacen(&number, &link(&number, Some(&p.url)), 1)
    })
}

fn tenant_row(t: &TenantStatus) -> Vec<String> {
    let pull = pull_cell(t.pull.as_ref());
    let mut state = format!("{} {}", tenant_icon(t), t.state.word());
    for extra in [
        t.error.as_ref(),
        t.pull.as_ref().and_then(|p| p.blocked.as_ref()),
        t.note.as_ref(),
    ]
    .into_iter()
    .flatten()
    {
        state.push_str(&format!(": {}", escape_inline(extra)));
    }
    vec![
        escape_inline(&t.tenant),
        t.stack
            .as_ref()
            .map_or("—".into(), |s| escape_inline(&s.to_string())),
        escape_inline(&lists_words(t)),
        t.behind.words(),
        pull,
        state,
        verdict_cell(&t.scs0210, reason_cves(&t.scs0210)),
    ]
}

fn cluster_row(tenant: &str, c: &crate::status::ClusterStatus) -> Vec<String> {
    let upgrade = pull_cell(c.upgrade.as_ref());
    vec![
        escape_inline(tenant),
        escape_inline(&c.cluster),
        escape_inline(&format!("{} ({})", c.version, c.class)),
        date(c.end_of_life),
        c.next.as_deref().map_or("—".into(), escape_inline),
        upgrade,
        verdict_cell(&c.scs0210, reason_cves(&c.scs0210)),
    ]
}

/// The CVEs a verdict's reasons name.
fn reason_cves(v: &Scs0210) -> impl Iterator<Item = &str> {
    v.reasons
        .iter()
        .flat_map(|r| r.cves.iter().map(String::as_str))
}

const HOW_TO_READ: &str = "<details>\n<summary>How to read this</summary>\n\n\
- **SCS 0210** is what the standard's own conformance test says of a cluster at the latest \
release's version (a tenant: at the versions it lists and its Clusters run): ✅ pass, ⚠️ warn (a \
critical-CVE fix is out for more than the recommended 2 days), ❌ fail, ❔ unknown (a source it \
depends on could not be read: missing data is never compliance).\n\
- **Deadline** is the earliest SCS 0210 date that applies now: 31 days from the first \
Kubernetes patch newer than the latest release, 14 days when that patch fixes a critical CVE \
(CVSS >= 8), the end of life of the minor, or 120 days from the first GA patch of a minor never \
released. It turns **bold** and 🔴 the day after it passes.\n\
- **State** of a stack minor: 🟢 current (newest patch released), 🔵 releasable (the next \
release run ships it), 🟡 waiting (for the node image, a chart series or a release PR merge), \
🔴 error or overdue, ⚪ a new minor nobody tracks yet.\n\
- **Behind** counts what a tenant could list and does not: newer Kubernetes patches of its \
minors, released minors newer than its newest.\n\
- The timeline shows upstream GA → release → first tenant merge for recent patches; the \
milestone is the deadline.\n\n</details>\n";

/// The critical CVEs affecting a latest release, each linked, with its fix.
fn cve_block(s: &Status) -> Option<String> {
    let rows: Vec<Vec<String>> = s
        .stacks
        .iter()
        .flat_map(|r| {
            r.cves.iter().map(move |c| {
                vec![
                    cve_link(&c.id),
                    c.score.map_or("—".into(), |x| x.to_string()),
                    escape_inline(&format!("{} {}", r.stack, r.minor)),
                    escape_inline(
                        &c.affected
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(", "),
                    ),
                    date(c.fixed_in),
                ]
            })
        })
        .collect();
    let header = ["CVE", "CVSS", "Stack", "Affected", "Fixed in"];
    (!rows.is_empty()).then(|| format!("### Critical CVEs\n\n{}\n", table(&header, &rows)))
}

/// The report as blocks, most important first.
pub fn blocks(s: &Status) -> Vec<Block> {
    let mut out = vec![Block::Text(head(s))];
    out.extend(unreadable(s).map(Block::Text));
    out.extend(stacks(s).map(Block::Text));
    out.extend(tenants(s));
    out.extend(clusters(s));
    out.extend(cve_block(s).map(Block::Text));
    out.push(Block::Text(format!(
        "### Timeline\n\n{}\n",
        gantt::chart(s)
    )));
    out.extend(warnings(s).map(Block::Text));
    out.push(Block::Text(HOW_TO_READ.to_string()));
    out
}

/// The title with the overall verdict's icon and the headline.
fn head(s: &Status) -> String {
    let icon = if s.compliant {
        s.scs0210.verdict.icon()
    } else if s.scs0210.verdict == Verdict::Unknown {
        "❔"
    } else {
        "❌"
    };
    format!(
        "## Cluster stacks: SCS 0210 status\n\n{icon} {}\n\n",
        escape_inline(&headline(s))
    )
}

/// The sources that could not be read, right under the headline: they make verdicts unknown.
fn unreadable(s: &Status) -> Option<String> {
    if s.scs0210.unreadable.is_empty() {
        return None;
    }
    let list = bullets(&s.scs0210.unreadable);
    Some(format!(
        "**Verdicts are unknown where they depend on a source that could not be read:**\n\n{list}\n"
    ))
}

/// The stack table, one row per stack minor (kept whole: it is the report's core).
fn stacks(s: &Status) -> Option<String> {
    if s.stacks.is_empty() {
        return None;
    }
    let rows: Vec<Vec<String>> = s.stacks.iter().map(stack_row).collect();
    Some(format!(
        "### Stacks\n\n{}\n",
        table(
            &[
                "Stack",
                "Minor",
                "Newest upstream",
                "Latest release",
                "State",
                "Waiting for",
                "Deadline",
                "End of life",
                "SCS 0210",
            ],
            &rows,
        )
    ))
}

/// A `###` table as one block per row: a long list is cut between rows, not dropped whole.
/// Absent without rows.
fn row_blocks(title: &str, header: &[&str], rows: Vec<Vec<String>>) -> Vec<Block> {
    if rows.is_empty() {
        return Vec::new();
    }
    let head = Block::Text(format!("### {title}\n\n{}", table(header, &[])));
    let rows = rows
        .iter()
        .map(|r| Block::Text(format!("| {} |\n", r.join(" | "))));
    std::iter::once(head)
        .chain(rows)
        .chain([Block::Text("\n".into())])
        .collect()
}

/// The tenant table, one block per row.
fn tenants(s: &Status) -> Vec<Block> {
    let header = [
        "Tenant",
        "Stack",
        "Lists",
        "Behind",
        "Pull request",
        "State",
        "SCS 0210",
    ];
    row_blocks(
        "Tenants",
        &header,
        s.tenants.iter().map(tenant_row).collect(),
    )
}

/// The cluster table, one block per row; absent when no tenant reports a cluster.
fn clusters(s: &Status) -> Vec<Block> {
    let header = [
        "Tenant",
        "Cluster",
        "Runs",
        "End of life",
        "Next minor",
        "Upgrade",
        "SCS 0210",
    ];
    let rows = s
        .tenants
        .iter()
        .flat_map(|t| t.clusters.iter().map(|c| cluster_row(&t.tenant, c)));
    row_blocks("Clusters", &header, rows.collect())
}

/// The run's warnings, after the timeline.
fn warnings(s: &Status) -> Option<String> {
    if s.warnings.is_empty() {
        return None;
    }
    Some(format!("### Warnings\n\n{}\n", bullets(&s.warnings)))
}

/// The whole report (job summary, `status --format markdown`).
pub fn markdown(s: &Status) -> String {
    fit(&blocks(s), usize::MAX, "").text
}

/// The dashboard issue's body: the marker, the report cut to fit GitHub's limit (with a link
/// to the job summary holding all of it), then the footer, which comparisons ignore. `keep`
/// bytes are left for the approvals section the tenant stage splices in (never cut: a step
/// missing from it would read as unticked), so the body stays under the limit with it.
pub fn dashboard_body(
    s: &Status,
    run_url: Option<&str>,
    changed_at: DateTime<Utc>,
    keep: usize,
) -> String {
    let footer = format!(
        "\n{FOOTER}\n---\n_Kept current by stackbot's release run: edited when something changes \
         (last change {}{}). Edits by hand are overwritten; opt out with `dashboard: {{enabled: \
         false}}` in stackbot.yaml._\n",
        changed_at.format("%Y-%m-%d %H:%M UTC"),
        run_url.map_or(String::new(), |u| format!(", {}", link("run", Some(u)))),
    );
    let whole = match run_url {
        Some(u) => link("job summary", Some(u)),
        None => "the output of `stackbot status --format markdown`".to_string(),
    };
    let head = format!("{MARKER}\n");
    let limit = BODY_MAX.saturating_sub(keep);
    fit_body(&head, &blocks(s), &footer, limit, &whole).text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::{Behind, TenantState, TenantStatus};

    fn big(tenants: usize) -> Status {
        let mut s = crate::status::compute(&crate::status::Facts {
            today: "2026-05-01".parse().unwrap(),
            ..Default::default()
        });
        for i in 0..tenants {
            s.tenants.push(TenantStatus {
                clusters: Vec::new(),
                tenant: format!("tenant-{i:05}-with-a-rather-long-name"),
                repository: format!("org/tenant-{i}"),
                stack: Some("openstack/scs2".parse().unwrap()),
                state: TenantState::Behind,
                patch_policy: crate::config::PolicyAction::PullRequest,
                minor_policy: crate::config::PolicyAction::PullRequest,
                releases: vec!["openstack-scs2-1-33-v1".into()],
                minors: Vec::new(),
                behind: Behind {
                    patches: 1,
                    minors: 1,
                    releases: 1,
                },
                pull: None,
                note: None,
                error: None,
                scs0210: crate::compliance::Scs0210::unknown("not read"),
            });
        }
        s
    }

    #[test]
    fn the_dashboard_stays_under_githubs_limit_and_links_the_whole_report() {
        let s = big(2_000);
        let at = "2026-05-01T10:00:00Z".parse().unwrap();
        let url = "https://github.com/scs/cluster-stacks/actions/runs/42";
        let body = dashboard_body(&s, Some(url), at, 0);
        assert!(body.chars().count() < 65_536, "{}", body.len());
        assert!(body.starts_with(MARKER));
        assert!(
            body.contains(&format!("[job summary]({url})")),
            "the note links the run"
        );
        assert!(body.contains(FOOTER), "the footer survives the cut");
        // The whole report (job summary) is not cut.
        assert!(markdown(&s).contains("tenant-01999"));
        let small = dashboard_body(&big(2), None, at, 0);
        assert!(!small.contains("Cut to stay under"));
    }

    #[test]
    fn hostile_tenant_names_cannot_break_the_table_or_ping_anyone() {
        let mut s = big(1);
        s.tenants[0].tenant = "evil | @everyone <img src=x>".into();
        let md = markdown(&s);
        let row = md.lines().find(|l| l.contains("evil")).unwrap();
        assert!(!row.contains("<img"), "{row}");
        assert!(row.contains("@&#8203;everyone"), "{row}");
        assert_eq!(row.matches(" | ").count(), 6, "seven columns: {row}");
    }
}
