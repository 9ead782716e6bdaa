//! `stackbot validate`: check the configuration and test-render every template tree in
//! memory, so a broken template fails in CI before a release needs it.

use super::{Format, Global};
use crate::error::ExitStatus;

/// Check stackbot.yaml, stackbot.lock and every stack's templates without writing anything.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Each stack's templates are rendered in memory against its release sets in stackbot.lock, or
against a sample set built from the config when the lock has none. Nothing is written.

Examples:
  stackbot validate
  stackbot -c other/stackbot.yaml validate
  stackbot validate --format json")]
pub struct Args {}

/// Validate and report.
pub fn run(_a: &Args, g: &Global) -> anyhow::Result<ExitStatus> {
    let ctx = g.context()?;
    let checked = crate::pipeline::validate::validate(&ctx)?;
    if g.format == Format::Json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "config": ctx.loaded.path,
                "valid": true,
                "stacks": checked,
            }))?
        );
    } else if !g.quiet {
        for c in &checked {
            println!(
                "ok {}: {} files in {} render against {} ({})",
                c.stack,
                c.files,
                c.templates.display(),
                c.source,
                c.release_sets.join(", ")
            );
        }
        println!("ok {}", ctx.loaded.path.display());
    }
    Ok(ExitStatus::Success)
}
