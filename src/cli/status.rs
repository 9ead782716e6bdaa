//! `stackbot status`: where every stack, minor and tenant stands against SCS 0210. Parses the
//! arguments, runs [`crate::pipeline::status::status`], prints.

use std::path::PathBuf;

use super::{Format, Global};
use crate::error::ExitStatus;
use crate::pipeline::Selection;
use crate::report::github::ActionsFiles;

const EXAMPLES: &str = "\
Reads only (no token needed on the local forge): upstream, the releases on the forge and in the
OCI registry, the tenants' ClusterStack resources on their base branch and the bot's pull
requests. The release run keeps the same report in the dashboard issue.

Examples:
  stackbot -c examples/local/stackbot.yaml status              # the demo, after `release`
  stackbot status --format json | jq '.stacks[] | select(.overdue)'
  stackbot status --format markdown >> \"$GITHUB_STEP_SUMMARY\"
  stackbot status --now 2026-06-01                              # deadlines as of a day

JSON: `stacks[]` (per stack × minor: `state`, `upstream`, `latest_release`, `waiting_for`,
`due`, `days_left`, `overdue`, `end_of_life`), `tenants[]` (per tenant × stack: `releases`,
`behind` {patches, minors, releases}, `pull`), `timeline[]`, `summary`; see docs/status.md.";

/// Report SCS 0210 compliance per stack × minor and per tenant.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Replay this upstream snapshot (overrides `upstream.snapshot`).
    #[arg(long, value_name = "FILE")]
    pub snapshot: Option<PathBuf>,
    /// Cache directory for conditional upstream requests (overrides `upstream.cache_dir`).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// Compute and print the status. Exit 0 whatever it says (it is a report, not a check).
pub fn run(a: &Args, g: &Global) -> anyhow::Result<ExitStatus> {
    let mut ctx = g.context()?;
    if let Some(s) = &a.snapshot {
        g.date(&mut ctx, Some(s));
    }
    let forge = g.open_forge(&ctx)?;
    let sel = Selection {
        snapshot: a.snapshot.clone(),
        cache_dir: a.cache_dir.clone(),
        ..Selection::default()
    };
    let status = crate::pipeline::status::status(&ctx, forge.as_ref(), &sel)?;
    let out = match g.format {
        Format::Json => crate::report::status::json(&status),
        Format::Markdown => crate::report::status::markdown(&status),
        Format::Text => crate::report::status::text(&status),
    };
    super::emit(&out)?;
    // Under GitHub Actions: the step output the action passes on as `compliant`.
    let actions = g.actions();
    for (key, value) in crate::report::status::outputs(&status) {
        actions.set_output(key, value)?;
    }
    for w in &status.warnings {
        tracing::warn!("{w}");
    }
    Ok(ExitStatus::Success)
}
