//! `stackbot schema`.

use super::Global;
use crate::error::ExitStatus;

/// Print the JSON Schema of `stackbot.yaml` (for editors and the configuration reference).
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  stackbot schema > stackbot.schema.json")]
pub struct Args {}

/// Print the schema.
pub fn run(_a: &Args, _g: &Global) -> anyhow::Result<ExitStatus> {
    println!(
        "{}",
        serde_json::to_string_pretty(&crate::config::json_schema())?
    );
    Ok(ExitStatus::Success)
}
