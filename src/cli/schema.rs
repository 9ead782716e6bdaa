//! `stackbot schema`.

use super::{Format, Global};
use crate::error::ExitStatus;

/// Print the JSON Schema of `stackbot.yaml` (for editors), or with `--format markdown` the
/// configuration reference generated from it (`docs/configuration.md`).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  stackbot schema > stackbot.schema.json\n  stackbot schema --format markdown > docs/configuration.md"
)]
pub struct Args {}

/// Print the schema or its Markdown reference.
pub fn run(_a: &Args, g: &Global) -> anyhow::Result<ExitStatus> {
    let schema = crate::config::json_schema();
    match g.format {
        Format::Markdown => print!("{}", crate::report::schema_doc::reference(&schema)),
        Format::Text | Format::Json => println!("{}", serde_json::to_string_pretty(&schema)?),
    }
    Ok(ExitStatus::Success)
}
