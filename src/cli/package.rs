//! `stackbot package`: csctl-compatible, byte-reproducible release assets for a stack dir.

use std::path::PathBuf;

use anyhow::Context;
use sha2::{Digest, Sha256};

use super::{Format, Global};
use crate::error::{ExitStatus, InvalidInput};
use crate::model::StackVersion;
use crate::package::{self, VersionSelection, Versions};

/// How versions are chosen when not derived from the hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// csctl's hash mode: `v0-sha.<first 7 of the clusterStack hash>` for all three versions.
    Hash,
}

/// Write `<OUT>/<release-name>/` with the files csctl writes, plus SHA256SUMS.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:
  stackbot package cluster-stacks/openstack/scs2/1-34 --out .release --mode hash
      writes .release/openstack-scs2-1-34-v0-sha-<7>/
  stackbot package cluster-stacks/openstack/scs2/1-34 --out .release --version v2 --addon-version v2 --node-image-version v1
      writes .release/openstack-scs2-1-34-v2/ (clusterStack v2, clusterAddon v2, nodeImage v1)
  stackbot --format json package STACK_DIR --out .release --mode hash
      prints {\"release\", \"dir\", \"files\": [{\"name\", \"sha256\", \"size\"}]}

With only --version, the addon and node-image versions default to the same value.
The same inputs always give byte-identical files. Invalid stacks exit 2 and write nothing.",
    disable_version_flag = true
)]
pub struct Args {
    /// The stack directory (the one holding csctl.yaml).
    #[arg(value_name = "STACK_DIR")]
    pub stack_dir: PathBuf,
    /// Output directory; the release is written to <OUT>/<release-name>/.
    #[arg(long, short, value_name = "DIR")]
    pub out: PathBuf,
    /// Version selection mode.
    #[arg(
        long,
        value_enum,
        conflicts_with = "stack_version",
        required_unless_present = "stack_version"
    )]
    pub mode: Option<Mode>,
    /// clusterStack version (dot form, e.g. `v2` or `v0-custom.pr12`).
    #[arg(long = "version", id = "stack_version", value_name = "vN", value_parser = parse_version)]
    pub stack_version: Option<StackVersion>,
    /// clusterAddon version (default: --version).
    #[arg(long, value_name = "vM", value_parser = parse_version, requires = "stack_version")]
    pub addon_version: Option<StackVersion>,
    /// nodeImage version (default: --version).
    #[arg(long, value_name = "vK", value_parser = parse_version, requires = "stack_version")]
    pub node_image_version: Option<StackVersion>,
}

/// Lexically resolve `.` and `..` (the output dir may not exist yet, so no canonicalize).
fn normalize(p: &std::path::Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn parse_version(s: &str) -> Result<StackVersion, String> {
    StackVersion::parse_dot(s).map_err(|e| e.to_string())
}

impl Args {
    /// The version selection these flags describe.
    pub fn selection(&self) -> VersionSelection {
        match &self.stack_version {
            None => VersionSelection::Hash,
            Some(v) => VersionSelection::Explicit(Versions {
                cluster_stack: v.clone(),
                cluster_addon: self.addon_version.clone().unwrap_or_else(|| v.clone()),
                node_image: self.node_image_version.clone().unwrap_or_else(|| v.clone()),
            }),
        }
    }
}

/// Read, package, write, report.
pub fn run(a: &Args, g: &Global) -> anyhow::Result<ExitStatus> {
    let ctx = || format!("cannot package {}", a.stack_dir.display());
    let tree = package::read_stack_dir(&a.stack_dir)
        .map_err(anyhow::Error::new)
        .with_context(ctx)?;
    let release = package::package(&tree, &a.selection())
        .map_err(anyhow::Error::new)
        .with_context(ctx)?;
    if let (Ok(stack), Ok(out)) = (
        std::path::absolute(&a.stack_dir),
        std::path::absolute(&a.out),
    ) && normalize(&out).starts_with(normalize(&stack))
    {
        return Err(InvalidInput(format!(
            "--out {} is inside the stack directory {}: the release files would become part of the next run's clusterStack hash; write it elsewhere",
            a.out.display(),
            a.stack_dir.display()
        ))
        .into());
    }
    if a.out.exists() && !a.out.is_dir() {
        return Err(InvalidInput(format!(
            "--out {}: exists and is not a directory",
            a.out.display()
        ))
        .into());
    }
    let dir = package::write_release(&release, &a.out)
        .with_context(|| format!("cannot write the release under {}", a.out.display()))?;
    match g.format {
        Format::Json => {
            let files: Vec<serde_json::Value> = release
                .files
                .iter()
                .map(|(n, b)| {
                    serde_json::json!({
                        "name": n,
                        "sha256": hex::encode(Sha256::digest(b)),
                        "size": b.len(),
                    })
                })
                .collect();
            let v = serde_json::json!({
                "release": release.name.to_string(),
                "dir": dir.display().to_string(),
                "files": files,
            });
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        Format::Text | Format::Markdown => {
            if !g.quiet {
                println!("{}", dir.display());
                for (n, b) in &release.files {
                    println!("  {n} ({} bytes)", b.len());
                }
            }
        }
    }
    Ok(ExitStatus::Success)
}
