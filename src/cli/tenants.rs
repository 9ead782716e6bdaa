//! `stackbot tenants`: open or update one pull request per tenant repository and stack for
//! the releases that exist on the forge.

use super::{Format, Global};
use crate::error::{ExitStatus, InvalidInput};
use crate::report::github::ActionsFiles;
use crate::tenants::{self, Options, Outcome, TenantReport};

const EXAMPLES: &str = "\
Examples:
  stackbot -c examples/local/stackbot.yaml tenants --dry-run   # the demo: what would change, with diffs
  stackbot tenants                                              # open/update/close the tenant PRs
  stackbot tenants --tenant acme --format json                  # one tenant, machine-readable
  stackbot tenants --shard 2/4                                  # a quarter of the tenants (CI matrix)

Text output: one line per tenant and stack under a header (tenant, repository, branch, action,
outcome, files, note); with --dry-run the unified diff of each change follows its line. Exit 3
when some tenant failed (the others were processed).";

/// Arguments of `stackbot tenants`.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Show what would change, with the unified diff of each tenant file; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Only this tenant (its `name` in stackbot.yaml).
    #[arg(long, value_name = "NAME")]
    pub tenant: Option<String>,
    /// Only shard I of N (1-based; by a stable hash of the tenant name), for CI matrices.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Tenants processed at the same time.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub jobs: usize,
    /// Cache directory for conditional GitHub requests (overrides `upstream.cache_dir`; the
    /// GitHub forge caches under its `github/`).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<std::path::PathBuf>,
}

/// Options from the arguments. Write pacing is left to the forge (the GitHub forge spaces
/// content-creating requests itself and honours `Retry-After`).
pub fn options_for(a: &Args) -> anyhow::Result<Options> {
    let shard = a
        .shard
        .as_deref()
        .map(tenants::run::parse_shard)
        .transpose()
        .map_err(InvalidInput)?;
    Ok(Options {
        dry_run: a.dry_run,
        tenant: a.tenant.clone(),
        shard,
        // The activity line shows the fan-out's progress (crate::cli::activity).
        concurrency: a.jobs.max(1),
    })
}

/// Run the command.
pub fn run(a: &Args, g: &Global) -> anyhow::Result<ExitStatus> {
    let mut ctx = g.context()?;
    if let Some(dir) = &a.cache_dir {
        ctx.loaded.config.upstream.cache_dir = Some(std::path::absolute(dir)?);
    }
    let forge = g.open_forge(&ctx)?;
    let opts = options_for(a)?;
    let reports = crate::pipeline::tenants::run(&ctx, forge.as_ref(), &opts)?;
    print_reports(&reports, g, a.dry_run)?;
    warn_blocked(&reports, g);
    Ok(crate::pipeline::exit::of_tenants(&reports))
}

/// One warning line per blocked tenant on stderr (and a `::warning` annotation under GitHub
/// Actions), whatever the format and `--quiet`: a blocked tenant receives no updates until a
/// person acts, so it must be seen, but it is a person's decision, not a failure of the run
/// (see `docs/operations.md`, "Exit codes").
pub fn warn_blocked(reports: &[TenantReport], g: &Global) {
    for r in reports.iter().filter(|r| r.outcome == Outcome::Blocked) {
        let message = format!(
            "tenant `{}` ({}) is blocked: {}",
            r.tenant,
            r.repository,
            r.note
                .as_deref()
                .unwrap_or("the bot branch has commits by someone else")
        );
        eprintln!("warning: {message}");
        g.actions().annotate(&crate::report::github::Annotation {
            level: crate::report::github::Level::Warning,
            file: None,
            line: None,
            title: Some("stackbot: tenant blocked".into()),
            message,
        });
    }
}

/// Print the per-tenant summary in the requested format (rendered by
/// [`crate::report::tenants`]); the counts line goes to stderr unless `--quiet`.
pub fn print_reports(reports: &[TenantReport], g: &Global, diffs: bool) -> anyhow::Result<()> {
    let out = match g.format {
        Format::Json => serde_json::to_string_pretty(&reports)? + "\n",
        Format::Text => crate::report::tenants::text(reports, diffs),
        Format::Markdown => crate::report::tenants::markdown(reports, diffs),
    };
    crate::cli::activity::finish();
    print!("{out}");
    if g.format == Format::Text {
        if !g.quiet {
            eprintln!("{}", crate::report::tenants::counts(reports));
        }
    } else {
        tracing::info!("{}", crate::report::tenants::counts(reports));
    }
    Ok(())
}
