//! `stackbot render`: render every stack × minor of the lock (or of `--release-set`) into
//! its output directory, or with `--check` compare without writing (CI drift guard).

use std::path::PathBuf;

use super::{Format, Global};
use crate::error::ExitStatus;
use crate::model::{Minor, StackId};
use crate::pipeline::render::Outcome;

/// Render cluster-stack directories from the templates and release sets.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Release sets come from stackbot.lock (beside the config) unless --release-set is given;
--release-set renders those sets and records them in stackbot.lock. When the templates vendor a
chart (`charts/<chart>-<version>.tgz` beside a Chart.yaml) and a set pins a version they do not
hold, --release-set fetches its archive from the chart repository, checks it against the
index's digest (and the set's), and writes it into the templates with the set's digest and
locked_at recorded in the lock, so `render --check` needs no network afterwards.

Examples:
  stackbot render                                  # re-render every stack x minor in stackbot.lock
  stackbot render --check                          # CI: exit 1 and print a diff when the output is stale
  stackbot render --release-set sets.yaml          # render new release sets, update stackbot.lock
  stackbot render --stack openstack/scs2 --minor 1.34")]
pub struct Args {
    /// YAML or JSON file with one release set or a list of them (instead of stackbot.lock).
    #[arg(long, value_name = "FILE")]
    pub release_set: Option<PathBuf>,
    /// Write nothing; exit 1 and print a unified diff if the committed output differs.
    #[arg(long)]
    pub check: bool,
    /// Only this stack (`provider/name`).
    #[arg(long, value_name = "PROVIDER/NAME")]
    pub stack: Option<StackId>,
    /// Only this Kubernetes minor (e.g. `1.34`).
    #[arg(long, value_name = "MAJOR.MINOR")]
    pub minor: Option<Minor>,
    /// Fetch chart archives from a mirror: URLs starting with FROM are read from TO instead
    /// (repeatable), as `detect --mirror`.
    #[arg(long, value_name = "FROM=TO")]
    pub mirror: Vec<String>,
}

/// Render (or check) every selected set.
pub fn run(a: &Args, g: &Global) -> anyhow::Result<ExitStatus> {
    let ctx = g.context()?;
    let r = crate::pipeline::render::render(
        &ctx,
        &crate::pipeline::render::Request {
            release_set: a.release_set.clone(),
            check: a.check,
            stack: a.stack.clone(),
            minor: a.minor,
            mirrors: super::detect::parse_mirrors(&a.mirror)?,
        },
    )?;
    for f in &r.fetched {
        eprintln!("{f}");
    }
    report(&r.outcomes, r.lock_stale, &r.diff, g)?;
    Ok(if r.is_stale() {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    })
}

/// The per-directory results go to stdout with the diff (they are the command's result);
/// the advice on what to do about stale output goes to stderr with the logs.
fn report(outcomes: &[Outcome], lock_stale: bool, diff: &str, g: &Global) -> anyhow::Result<()> {
    match g.format {
        Format::Json => {
            println!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({
                    "stacks": outcomes,
                    "lock_stale": lock_stale,
                    "diff": diff,
                }))?
            );
        }
        Format::Text | Format::Markdown => {
            if !diff.is_empty() {
                print!("{diff}");
            }
            let md = g.format == Format::Markdown;
            if md {
                println!(
                    "| stack | minor | kubernetes | directory | status |\n|---|---|---|---|---|"
                );
            }
            for o in outcomes {
                if g.quiet && o.status == crate::pipeline::render::RenderStatus::Unchanged {
                    continue;
                }
                let files = if o.changed_files.is_empty() {
                    String::new()
                } else {
                    format!(" ({} files)", o.changed_files.len())
                };
                if md {
                    println!(
                        "| {} | {} | {} | `{}` | {}{} |",
                        o.stack, o.minor, o.kubernetes, o.dir, o.status, files
                    );
                } else {
                    println!(
                        "{} {} ({}) -> {}: {}{}",
                        o.stack, o.minor, o.kubernetes, o.dir, o.status, files
                    );
                }
            }
            if lock_stale {
                println!("stackbot.lock: stale (run without --check to record the release sets)");
            }
            if outcomes
                .iter()
                .any(|o| o.status == crate::pipeline::render::RenderStatus::Stale)
            {
                eprintln!("rendered output is stale: run `stackbot render` and commit the result");
            }
        }
    }
    Ok(())
}
