//! `stackbot release`: parse the arguments, run [`crate::pipeline::release`], print.

use std::path::PathBuf;

use anyhow::Context as _;

use super::{Format, Global};
use crate::error::{ExitStatus, InvalidInput};
use crate::model::{Minor, ReleaseName, StackId};
use crate::pipeline::{self, Selection as PipelineSelection};
use crate::plan::{Overrides, Plan};
use crate::report::github::ActionsFiles;

const EXAMPLES: &str = "\
Examples:
  stackbot -c examples/local/stackbot.yaml release          # the local demo: no network, no token
  stackbot release --dry-run                                 # the plan plus unified diffs, no side effects
  stackbot release --stack openstack/scs2 --minor 1.34 --format json
  stackbot release --release-set sets.yaml                   # release exactly these sets
  stackbot release --allow-downgrade                         # release a set older than the latest
  stackbot release --republish openstack-scs2-1-34-v3        # publish withdrawn content again

Exit status: 1 also when a series could not go on (listed under `failed`) or was kept at its
latest release by an upstream error (`degraded`, transient); the other series and the tenants
are still processed. The worst problem decides: 2, then 1, then 3.

Concurrency: on the local forge a run holds `<forge>/run.lock` from observing to the last write,
so a second run waits and then finds nothing to do. On GitHub, base-branch commits are
compare-and-swap, tags are unique and every run fills and publishes the same (oldest) draft,
so two runs cannot publish a tag twice.";

/// Which stacks, minors and release sets to work on; shared by `plan` and `release`.
#[derive(Debug, Clone, clap::Args)]
pub struct Selection {
    /// Only this stack (`provider/name`).
    #[arg(long, value_name = "P/N")]
    pub stack: Option<String>,
    /// Only this Kubernetes minor (`1.34`).
    #[arg(long, value_name = "1.X")]
    pub minor: Option<String>,
    /// Release these sets (YAML or JSON: one set or a list) instead of detecting upstream.
    #[arg(long, value_name = "FILE")]
    pub release_set: Option<PathBuf>,
    /// Replay this upstream snapshot (overrides `upstream.snapshot`).
    #[arg(long, value_name = "FILE")]
    pub snapshot: Option<PathBuf>,
    /// Cache directory for conditional upstream and GitHub requests (overrides
    /// `upstream.cache_dir`; the GitHub forge caches under its `github/`).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Release a series even when its release set is older than its latest release (a
    /// deliberate downgrade; without it such a series stays where it is, `degraded`).
    #[arg(long)]
    pub allow_downgrade: bool,
    /// Publish again, under a new number, the content of a release that was withdrawn (its
    /// release deleted), e.g. `--republish openstack-scs2-1-34-v3`. Repeatable.
    #[arg(long, value_name = "TAG")]
    pub republish: Vec<String>,
    /// Fetch chart archives a release set needs from a mirror: URLs starting with FROM are
    /// read from TO instead (repeatable), as `render --mirror`.
    #[arg(long, value_name = "FROM=TO")]
    pub mirror: Vec<String>,
}

impl Selection {
    /// The run's context with `--cache-dir` applied: it overrides `upstream.cache_dir` for the
    /// whole run, so the upstream ETag cache and the GitHub forge's cache (by default `github/`
    /// inside it) both live there.
    pub fn context(&self, g: &Global) -> anyhow::Result<crate::pipeline::Context> {
        let mut ctx = g.context()?;
        if let Some(s) = &self.snapshot {
            g.date(&mut ctx, Some(s));
        }
        if let Some(dir) = &self.cache_dir {
            ctx.loaded.config.upstream.cache_dir = Some(std::path::absolute(dir)?);
        }
        Ok(ctx)
    }

    /// The pipeline's selection; a malformed `--stack`/`--minor` is invalid input, with the
    /// configured stack it probably means (`scs2` → `openstack/scs2`).
    pub fn parse(&self, ctx: &crate::pipeline::Context) -> Result<PipelineSelection, InvalidInput> {
        let configured: Vec<String> = ctx
            .loaded
            .config
            .stacks
            .iter()
            .map(|s| s.id().to_string())
            .collect();
        let stack = self
            .stack
            .as_deref()
            .map(|s| {
                s.parse::<StackId>().map_err(|e| {
                    let same_name = configured
                        .iter()
                        .find(|c| c.split_once('/').is_some_and(|(_, n)| n == s));
                    let hint = same_name
                        .map(|c| format!("\n  hint: did you mean `--stack {c}`?"))
                        .unwrap_or_default();
                    InvalidInput(format!("--stack: {e}{hint}"))
                })
            })
            .transpose()?;
        let minor = self
            .minor
            .as_deref()
            .map(|m| {
                m.parse::<Minor>()
                    .map_err(|e| InvalidInput(format!("--minor: {e}")))
            })
            .transpose()?;
        for t in &self.republish {
            let name =
                ReleaseName::parse(t).map_err(|e| InvalidInput(format!("--republish: {e}")))?;
            if !name.version.is_stable() {
                return Err(InvalidInput(format!(
                    "--republish {t}: only stable releases (`…-v<N>`) are numbered and withdrawn"
                )));
            }
        }
        Ok(PipelineSelection {
            stack,
            minor,
            release_set: self.release_set.clone(),
            snapshot: self.snapshot.clone(),
            cache_dir: self.cache_dir.clone(),
            overrides: Overrides {
                allow_downgrade: self.allow_downgrade,
                republish: self.republish.clone(),
            },
            mirrors: super::detect::parse_mirrors(&self.mirror)?,
            skip_tenants: false,
        })
    }
}

/// Render, package, tag and publish releases.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(flatten)]
    pub sel: Selection,
    /// Print the plan and the unified diffs of the rendered and tenant files; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Leave the tenant pull requests to `stackbot tenants` runs (e.g. a CI matrix of
    /// `--shard I/N` jobs after this one, see `stackbot init --tenant-shards`).
    #[arg(long)]
    pub skip_tenants: bool,
}

/// Print a plan in the global format. `with_diffs` adds the unified diffs (dry run, markdown).
/// Under GitHub Actions the full preview also goes to the job summary (the comment's
/// truncation note links it) and the comment-sized one to the step output `preview`.
pub fn print_plan(p: &Plan, g: &Global, with_diffs: bool) -> anyhow::Result<()> {
    let actions = g.actions();
    let preview = crate::report::from_plan::preview(p, None);
    let (full, comment) = crate::report::preview::emitted(&preview, &actions);
    if let Some(full) = full {
        actions.append_summary(&full)?;
    }
    actions.set_output("preview", &comment)?;
    match g.format {
        Format::Json => {
            let mut v = serde_json::to_value(p)?;
            // Each series' state, deadline and waiting cause, as `status` gives them.
            v["series"] = serde_json::to_value(&p.series)?;
            if with_diffs {
                v["diffs"] = serde_json::to_value(crate::report::text::release_diffs(p))?;
            }
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        Format::Markdown => print!("{comment}"),
        Format::Text => {
            print!("{}", crate::report::text::plan_text(p));
            if with_diffs {
                print!("{}", crate::report::text::plan_diffs(p));
            }
        }
    }
    Ok(())
}

/// Run the command.
pub fn run(a: &Args, g: &Global) -> anyhow::Result<ExitStatus> {
    let ctx = a.sel.context(g)?;
    let mut sel = a.sel.parse(&ctx)?;
    sel.skip_tenants = a.skip_tenants;
    // A first run on the local forge that ends in input a person must fix (exit 2) leaves no
    // forge folder behind (repositories, run.lock): "nothing was changed" holds on disk too.
    let created = (ctx.loaded.config.forge.kind == crate::config::ForgeKind::Local)
        .then(|| first_missing(&ctx.loaded.resolve(&ctx.loaded.config.forge.local.path)))
        .flatten();
    let result = release_and_print(a, g, &ctx, &sel);
    if let (Err(e), Some(dir)) = (&result, &created)
        && super::classify(e) == ExitStatus::Invalid
    {
        let _ = std::fs::remove_dir_all(dir);
    }
    result
}

/// The outermost folder of `path` that does not exist yet (what a run would create).
fn first_missing(path: &std::path::Path) -> Option<PathBuf> {
    let path = std::path::absolute(path).ok()?;
    let missing = path.ancestors().take_while(|a| !a.exists()).last();
    missing.map(std::path::Path::to_path_buf)
}

fn release_and_print(
    a: &Args,
    g: &Global,
    ctx: &crate::pipeline::Context,
    sel: &PipelineSelection,
) -> anyhow::Result<ExitStatus> {
    let forge = g.open_forge(ctx)?;
    if a.dry_run {
        let planned = pipeline::release::preview(ctx, forge.as_ref(), sel)?;
        print_plan(&planned.plan, g, true)?;
        return Ok(ExitStatus::Success);
    }
    // The local forge's concurrency guard, held from observing to the last write.
    let _guard = g
        .run_lock(ctx)
        .context("taking the local forge's run lock")?;
    let r = pipeline::release::release(ctx, forge.as_ref(), sel)?;
    let json = crate::report::release::ReleaseJson::new(
        &r.outcome,
        &r.plan,
        &r.tenants,
        r.dashboard.as_ref(),
        &r.failed,
    );
    match g.format {
        Format::Json => print!("{}", json.render()),
        Format::Text | Format::Markdown => {
            print!(
                "{}",
                crate::report::release::release_text(
                    &r.outcome,
                    &r.plan,
                    &r.tenants,
                    &r.failed,
                    r.dashboard.as_ref().map(|d| d as &dyn std::fmt::Display),
                )
            );
        }
    }
    // Under GitHub Actions the run reports itself: step outputs and the job summary.
    let actions = g.actions();
    let repository = &ctx.loaded.config.forge.repository;
    for (key, value) in crate::report::release::outputs(&json, repository) {
        actions.set_output(key, &value)?;
    }
    actions.append_summary(&crate::report::release::summary(&json))?;
    for d in r.plan.degraded.iter().filter(|d| d.transient) {
        tracing::error!("{d}");
    }
    super::tenants::warn_blocked(&r.tenants, g);
    Ok(pipeline::exit::of_released(&r))
}
