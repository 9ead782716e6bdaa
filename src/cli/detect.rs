//! `stackbot detect`: what upstream has published, and what each stack × minor could release.

use std::path::PathBuf;

use super::{Format, Global};
use crate::error::{ExitStatus, InvalidInput};
use crate::upstream::DetectOptions;

const EXAMPLES: &str = "\
Exit status: 0 even when some minors are waiting or have upstream errors (that is a normal
state, reported in the output); 1 when upstream could not be read at all, a snapshot is
unusable, or a source an SCS 0210 verdict depends on could not be read (live, or marked so in
the snapshot replayed); 2 for an invalid configuration or arguments.

Examples:
  stackbot detect                                   # table of every stack × minor
  stackbot detect --format json --now 2026-05-01    # machine-readable, as of a date
  stackbot detect --save upstream.json              # record everything fetched
  stackbot detect --snapshot upstream.json          # replay it, no network
  stackbot detect --cache-dir .stackbot/cache       # conditional requests (ETag), cheap re-runs
  stackbot detect --mirror https://dl.k8s.io/release=http://127.0.0.1:8080/markers";

/// Detect upstream Kubernetes releases and resolve complete release sets.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Write everything fetched to FILE as an upstream snapshot (replay with `--snapshot`).
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
    /// Replay an upstream snapshot instead of using the network (overrides `upstream.snapshot`).
    #[arg(long, value_name = "FILE")]
    pub snapshot: Option<PathBuf>,
    /// Cache directory for conditional requests (overrides `upstream.cache_dir`).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Read the network even if the configuration sets `upstream.snapshot`.
    #[arg(long, conflicts_with = "snapshot")]
    pub live: bool,
    /// Fetch URLs starting with FROM from TO instead (`FROM=TO`, repeatable). Snapshots keep
    /// the configured URLs, so a snapshot recorded through a mirror replays with the real config.
    #[arg(long, value_name = "FROM=TO")]
    pub mirror: Vec<String>,
}

/// `--mirror FROM=TO` values as `(from, to)` URL prefix rewrites.
pub(super) fn parse_mirrors(values: &[String]) -> Result<Vec<(String, String)>, InvalidInput> {
    values
        .iter()
        .map(|m| {
            m.split_once('=')
                .map(|(from, to)| (from.to_string(), to.to_string()))
                .ok_or_else(|| {
                    InvalidInput(format!(
                        "--mirror `{m}`: expected `FROM=TO`, e.g. `https://dl.k8s.io/release=http://127.0.0.1:8080/markers`"
                    ))
                })
        })
        .collect()
}

/// Run detection and print the report.
pub fn run(a: &Args, g: &Global) -> anyhow::Result<ExitStatus> {
    let mut ctx = g.context()?;
    // The day follows the data read: `--live` is today, `--snapshot FILE` that file's day.
    if a.live {
        g.date(&mut ctx, None);
    } else if let Some(s) = &a.snapshot {
        g.date(&mut ctx, Some(s));
    }
    let opts = DetectOptions {
        save: a.save.clone(),
        mirrors: parse_mirrors(&a.mirror)?,
        live: a.live,
        ..crate::pipeline::detect::options(&ctx, a.snapshot.clone(), a.cache_dir.clone())
    };
    // An unusable snapshot is input (exit 2): `pipeline::exit` knows `UpstreamError::Snapshot`.
    let (mut report, data, stats) = crate::pipeline::detect::detect(&ctx, &opts)?;
    // On the local forge (no token, no network) the verdict is for what its base branch
    // records, as `status` sees it; elsewhere the checkout's `stackbot.lock` (in the hourly
    // workflow, a checkout of that very base branch) is.
    let inputs = crate::compliance::Inputs::from_data(&data);
    if let Some(lock) = local_base_lock(g, &ctx) {
        crate::pipeline::detect::assess_against(&mut report, &inputs, Some(&lock), ctx.today);
    }
    tracing::info!(
        "upstream requests: {} ({} conditional, {} not modified, {} retries)",
        stats.requests,
        stats.conditional,
        stats.not_modified,
        stats.retries
    );
    let out = match g.format {
        Format::Json => {
            // `sources[]` as `status --format json` gives it: the same readings, aged on the
            // same day.
            let sources = crate::compliance::aged(
                &crate::pipeline::detect::sources(&data, &inputs),
                ctx.today,
            );
            let mut v = serde_json::to_value(&report)?;
            v["sources"] = serde_json::to_value(sources)?;
            serde_json::to_string_pretty(&v)? + "\n"
        }
        Format::Text => crate::report::detect::text(&report),
        Format::Markdown => crate::report::detect::markdown(&report),
    };
    super::emit(&out)?;
    for w in &report.warnings {
        tracing::warn!("{w}");
    }
    // docs/operations.md: upstream that cannot be read is exit 1, and so is a verdict source
    // (releases, schedule, CVE feed or record): a verdict that cannot be decided is not a pass.
    if !report.unreadable.is_empty() {
        for u in &report.unreadable {
            tracing::error!("cannot read {u}");
        }
        return Ok(ExitStatus::Failure);
    }
    Ok(ExitStatus::Success)
}

/// `stackbot.lock` on the local forge's base branch, if the configuration names a local forge
/// that could be read: a base branch without one (nothing released yet) is an empty lock, so
/// `detect` and `status` both apply the minor window to a series never released.
fn local_base_lock(g: &Global, ctx: &crate::pipeline::Context) -> Option<crate::lock::Lock> {
    if ctx.loaded.config.forge.kind != crate::config::ForgeKind::Local {
        return None;
    }
    let forge = g.open_forge(ctx).ok()?;
    crate::pipeline::detect::base_lock_or_none(ctx, forge.as_ref()).map(Option::unwrap_or_default)
}
