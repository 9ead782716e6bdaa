//! `stackbot plan` (being built).

use super::Global;
use crate::error::ExitStatus;

/// Placeholder arguments, replaced by the command's owner.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Not built yet.
pub fn run(_a: &Args, _g: &Global) -> anyhow::Result<ExitStatus> {
    anyhow::bail!("`stackbot plan` is not built yet")
}
