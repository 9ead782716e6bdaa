//! `stackbot hash`: the csctl-compatible clusterStack hash of a stack directory.

use std::path::PathBuf;

use anyhow::Context;

use super::Global;
use crate::error::ExitStatus;
use crate::package;

/// Print the cleaned clusterStack hash (what csctl's hash mode cuts `v0-sha.<7>` from).
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  stackbot hash cluster-stacks/openstack/scs2/1-34
      azlfam7rgn823z07ougej26xmpzsohlj0tvr4s0njis
  stackbot hash cluster-stacks/openstack/scs2/1-34 --json > hashes.json
      hashes.json exactly as csctl writes it (no trailing newline)")]
pub struct Args {
    /// The stack directory (the one holding csctl.yaml).
    #[arg(value_name = "STACK_DIR")]
    pub stack_dir: PathBuf,
    /// Print all four hashes as csctl's hashes.json instead.
    #[arg(long)]
    pub json: bool,
}

/// Hash the directory and print the result on stdout.
pub fn run(a: &Args, _g: &Global) -> anyhow::Result<ExitStatus> {
    let tree = package::read_stack_dir(&a.stack_dir)
        .map_err(anyhow::Error::new)
        .with_context(|| format!("cannot hash {}", a.stack_dir.display()))?;
    let h = package::hashes(&tree);
    if a.json {
        print!("{}", h.to_json());
    } else {
        println!("{}", h.cluster_stack);
    }
    Ok(ExitStatus::Success)
}
