//! status → the dashboard issue: the last stage of `release`.
//!
//! [`update_dashboard`] is the only writer of issues: it finds the issue carrying the marker
//! (by label first, one request; then among all issues), and creates it, edits it, or leaves
//! it alone when its content is unchanged (which issue and whether to edit are decided by the
//! pure [`crate::status::dashboard`]).

use serde::Serialize;

use crate::forge::IssueInfo;
use crate::status::{Status, dashboard};
use crate::tenants::Observations;

use super::detect::Detected;
use super::run::Run;
use super::status::{detect, status_knowing};
use super::{Error, Selection};

/// What the release run did to the dashboard issue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "lowercase")]
pub enum Dashboard {
    Created {
        number: u64,
        url: String,
    },
    Updated {
        number: u64,
        url: String,
    },
    Unchanged {
        number: u64,
        url: String,
    },
    /// The run went on; the next one tries again.
    Failed {
        error: String,
    },
}

impl std::fmt::Display for Dashboard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dashboard::Created { number, .. } => write!(f, "dashboard: opened issue #{number}"),
            Dashboard::Updated { number, .. } => write!(f, "dashboard: updated issue #{number}"),
            Dashboard::Unchanged { number, .. } => {
                write!(f, "dashboard: issue #{number} is up to date")
            }
            Dashboard::Failed { error } => write!(f, "dashboard: not updated: {error}"),
        }
    }
}

/// The dashboard issue as it is now: among the issues with the dashboard label (one request),
/// else among all issues.
pub fn find(run: &Run<'_>) -> Result<Option<IssueInfo>, Error> {
    let (forge, repo) = (run.forge, &run.target.repo);
    let cfg = &run.ctx.loaded.config.dashboard;
    let labelled = forge.list_issues(repo, Some(&cfg.label))?;
    if let Some(i) = dashboard::find(&labelled) {
        return Ok(Some(i.clone()));
    }
    let all = forge.list_issues(repo, None)?;
    Ok(dashboard::find(&all).cloned())
}

/// Keep the approvals section of the dashboard listing `items` (the steps of the tenants in
/// `planned`), with the ticks as people left them: read again right before writing, written
/// only when the section changes. Creates the dashboard when there is none yet (the next
/// `release` fills in the status).
pub fn update_approvals(
    run: &Run<'_>,
    items: &[crate::tenants::approval::Approval],
    planned: &std::collections::BTreeSet<String>,
) -> Result<(), Error> {
    use crate::tenants::approval;
    let (forge, repo) = (run.forge, &run.target.repo);
    let cfg = &run.ctx.loaded.config.dashboard;
    match find(run)? {
        Some(i) => {
            let section = approval::render(&i.body, items, planned);
            let body = fit_approvals(approval::splice(&i.body, &section, dashboard::FOOTER));
            if body != i.body {
                forge.update_issue(repo, i.number, &i.title, &body)?;
            }
        }
        None => {
            let section = approval::render("", items, planned);
            if !section.is_empty() {
                let body = format!("{}\n{section}", dashboard::MARKER);
                forge.create_issue(repo, &cfg.title, &body, std::slice::from_ref(&cfg.label))?;
            }
        }
    }
    Ok(())
}

/// A dashboard body grown past GitHub's limit by a longer section: the status report between
/// the marker and the section gives way (the next release run writes it back within the room
/// left); the section and the footer stay whole.
fn fit_approvals(body: String) -> String {
    use crate::body::BODY_MAX;
    use crate::status::dashboard::{FOOTER, MARKER};
    if body.chars().count() <= BODY_MAX {
        return body;
    }
    let kept = crate::tenants::approval::section(&body);
    let footer = body.find(FOOTER).map_or("", |at| &body[at..]);
    let out = format!(
        "{MARKER}\n\n_The status report returns with the next release run: the approvals below took its room._\n\n{kept}\n\n{footer}"
    );
    crate::body::truncate_str(&out, BODY_MAX).to_string()
}

/// Keep the dashboard issue showing `status`: create it once, edit it when its content
/// differs, otherwise write nothing. `None` when `dashboard.enabled` is off.
pub fn update_dashboard(
    ctx: &super::Context,
    forge: &dyn crate::forge::Forge,
    status: &Status,
) -> Result<Option<Dashboard>, Error> {
    update_dashboard_in(&Run::new(ctx, forge)?, status)
}

/// [`update_dashboard`] as the last stage of a run.
pub fn update_dashboard_in(run: &Run<'_>, status: &Status) -> Result<Option<Dashboard>, Error> {
    let (ctx, forge, repo) = (run.ctx, run.forge, &run.target.repo);
    let cfg = &ctx.loaded.config.dashboard;
    if !cfg.enabled {
        return Ok(None);
    }
    let found = find(run)?;
    let found = found.as_ref();
    let run_url =
        crate::report::github::Actions::from_lookup(|k| ctx.env.get(k).map(str::to_string)).run_url;
    // The approvals section carried over below is counted: the report leaves it room.
    let keep = found.map_or(0, |i| crate::tenants::approval::section_len(&i.body));
    let body =
        crate::report::status::dashboard_body(status, run_url.as_deref(), ctx.clock.now(), keep);
    // The approvals section is the tenant stage's: carried over as people left it.
    let body =
        crate::tenants::approval::carry(found.map(|i| i.body.as_str()), &body, dashboard::FOOTER);
    let url = |n: u64| {
        found
            .filter(|i| i.number == n)
            .map(|i| i.html_url.clone())
            .unwrap_or_default()
    };
    Ok(Some(match dashboard::decide(found, &cfg.title, &body) {
        dashboard::Action::Create => {
            let i =
                forge.create_issue(repo, &cfg.title, &body, std::slice::from_ref(&cfg.label))?;
            Dashboard::Created {
                number: i.number,
                url: i.html_url,
            }
        }
        dashboard::Action::Update { number } => {
            forge.update_issue(repo, number, &cfg.title, &body)?;
            Dashboard::Updated {
                number,
                url: url(number),
            }
        }
        dashboard::Action::Unchanged { number } => Dashboard::Unchanged {
            number,
            url: url(number),
        },
    }))
}

/// The last stage of `release`: the status after the run, on the dashboard. Never fails the
/// run (the releases and tenant PRs are what matter): trouble is reported and retried by the
/// next run. `detected` is the run's own detection (`None` with `--release-set`).
pub fn dashboard_after_release(
    run: &Run<'_>,
    detected: Option<&Detected>,
    known: &Observations,
) -> Option<Dashboard> {
    let ctx = run.ctx;
    if !ctx.loaded.config.dashboard.enabled {
        return None;
    }
    let run = || -> Result<Option<Dashboard>, Error> {
        let fresh;
        let detected = match detected {
            Some(d) => d,
            None => {
                fresh = detect(ctx, &Selection::default())?;
                &fresh
            }
        };
        let status = status_knowing(run, detected, known)?;
        update_dashboard_in(run, &status)
    };
    match run() {
        Ok(d) => d,
        Err(e) => {
            let mut error = e.to_string();
            let mut cause = std::error::Error::source(&e);
            while let Some(c) = cause {
                error.push_str(&format!(": {c}"));
                cause = c.source();
            }
            tracing::warn!("dashboard not updated (the next run tries again): {error}");
            Some(Dashboard::Failed { error })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::dashboard::{FOOTER, MARKER};
    use crate::tenants::approval::{END, START};

    #[test]
    fn a_longer_approvals_section_pushes_the_report_out_never_past_the_limit() {
        let section = format!("{START}\n- [x] `acme`: step\n{END}\n");
        let fits = format!("{MARKER}\nreport\n{section}\n{FOOTER}\nfooter\n");
        assert_eq!(
            fit_approvals(fits.clone()),
            fits,
            "a body that fits is left alone"
        );
        let report = "r".repeat(70_000);
        let over = format!("{MARKER}\n{report}\n{section}\n{FOOTER}\nfooter\n");
        let out = fit_approvals(over);
        assert!(out.chars().count() <= crate::body::BODY_MAX);
        assert!(out.starts_with(MARKER) && !out.contains("rrrr"));
        assert!(out.contains("- [x] `acme`: step"), "the ticks stay: {out}");
        assert!(out.contains(&format!("{FOOTER}\nfooter\n")));
    }
}
