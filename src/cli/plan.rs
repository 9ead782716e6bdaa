//! `stackbot plan`: everything `release` would do, with no side effects and no token.

use super::Global;
use super::release::{Selection, print_plan};
use crate::error::ExitStatus;

const EXAMPLES: &str = "\
Examples:
  stackbot -c examples/local/stackbot.yaml plan
  stackbot plan --stack openstack/scs2 --minor 1.34 --format json
  stackbot plan --format markdown      # the PR preview comment, with unified diffs

The JSON has `releases` (each with `tag`, `stack`, `minor`, `kubernetes`, `version`, `assets`
and the `steps` `release` will take), `skipped` (with reasons), `cleanup`, `tenants`,
`degraded` (series kept at their latest release because the offered set is older, with
`regressions`, `cause` and `transient`) and `failed` (series that cannot go on, with reasons).";

/// Show what `release` would do.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(flatten)]
    pub sel: Selection,
}

/// Compute and print the plan. Reads the forge, writes nothing.
pub fn run(a: &Args, g: &Global) -> anyhow::Result<ExitStatus> {
    let ctx = a.sel.context(g)?;
    let sel = a.sel.parse(&ctx)?;
    let forge = g.open_forge(&ctx)?;
    let planned = crate::pipeline::release::preview(&ctx, forge.as_ref(), &sel)?;
    print_plan(
        &planned.plan,
        g,
        matches!(g.format, super::Format::Markdown),
    )?;
    Ok(ExitStatus::Success)
}
