//! Command-line interface: clap definitions and the wiring of each command.
//!
//! Each command lives in its own file with its `Args` and `run`, so commands can grow
//! independently; this file only holds the global options and the dispatch.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::clock::{SharedClock, SystemClock};
use crate::env::Env;
use crate::error::ExitStatus;
use crate::forge::Forge;
use crate::pipeline::Context;
use crate::report::github::ActionsFiles;

pub mod activity;
pub mod adopt;
pub mod completions;
pub mod detect;
pub mod forge;
pub mod hash;
pub mod init;
pub mod journal;
pub mod package;
pub mod plan;
pub mod release;
pub mod render;
pub mod schema;
pub mod status;
pub mod tenants;
pub mod validate;

/// Output format of commands whose output matters to scripts and pull requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
    Markdown,
}

/// The `--help` heading of the options every command takes, so a command's own options stand
/// apart from them.
const GLOBAL: &str = "Global options";

/// stackbot: detect Kubernetes releases, render and package SCS cluster stacks, publish them,
/// and open pull requests in tenant repositories.
#[derive(Debug, Parser)]
#[command(name = "stackbot", version, propagate_version = true, after_help = EXIT_CODES)]
pub struct Cli {
    /// Configuration file.
    #[arg(
        short,
        long,
        global = true,
        default_value = "stackbot.yaml",
        value_name = "FILE",
        help_heading = GLOBAL
    )]
    pub config: PathBuf,
    /// Output format.
    #[arg(long, global = true, value_enum, default_value_t = Format::Text, help_heading = GLOBAL)]
    pub format: Format,
    /// Evaluate as of this date (YYYY-MM-DD): lifecycle, deadlines. Default: today (UTC).
    #[arg(long, global = true, value_name = "YYYY-MM-DD", value_parser = parse_date, help_heading = GLOBAL)]
    pub now: Option<chrono::NaiveDate>,
    /// More log output (repeat for more).
    #[arg(short, long, global = true, action = clap::ArgAction::Count, help_heading = GLOBAL)]
    pub verbose: u8,
    /// Only errors.
    #[arg(short, long, global = true, conflicts_with = "verbose", help_heading = GLOBAL)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// A date written exactly `YYYY-MM-DD`. chrono alone also takes `2026-5-1`; one spelling
/// keeps scripts, docs and the dashboard's dates alike, and the error says what is expected.
pub fn parse_date(s: &str) -> Result<chrono::NaiveDate, String> {
    let b = s.as_bytes();
    let shaped = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    let date = shaped
        .then(|| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").ok())
        .flatten();
    date.ok_or_else(|| {
        format!("`{s}` is not a date written YYYY-MM-DD (a real date, e.g. 2026-05-01)")
    })
}

const EXIT_CODES: &str = "Exit codes: 0 success or nothing to do, 1 runtime failure (safe to re-run), \
2 invalid input (arguments, config, templates; nothing changed), 3 some tenants failed.";

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the csctl-compatible clusterStack hash of a stack directory.
    Hash(hash::Args),
    /// Write csctl-compatible, byte-reproducible release assets for a stack directory.
    Package(package::Args),
    /// Render every configured stack × minor into its output directory.
    Render(render::Args),
    /// Check the configuration and templates without writing anything.
    Validate(validate::Args),
    /// Print the JSON Schema of stackbot.yaml.
    Schema(schema::Args),
    /// Detect upstream Kubernetes releases and resolve complete release sets.
    Detect(detect::Args),
    /// Show what `release` would do, without side effects and without a token.
    Plan(plan::Args),
    /// Render, package, tag and publish releases, then propagate them to tenants.
    Release(release::Args),
    /// Open or update tenant pull requests for the releases that exist.
    Tenants(tenants::Args),
    /// Where every stack, minor and tenant stands against the SCS version policy.
    Status(status::Args),
    /// Turn an existing csctl stack directory into templates, a lock and a config.
    Adopt(adopt::Args),
    /// Make a cluster-stacks checkout an hourly bot: stackbot.yaml (by adopting its stacks),
    /// the release and preview workflows.
    Init(init::Args),
    /// Merge, close or list pull requests on the local forge, as a person on GitHub would.
    Forge(forge::Args),
    /// Print a shell completion script.
    Completions(completions::Args),
}

/// Options every command sees, resolved once, and the edge of the world: the environment and
/// the clock are read here and nowhere below.
#[derive(Debug, Clone)]
pub struct Global {
    pub config: PathBuf,
    pub format: Format,
    pub now: chrono::NaiveDate,
    /// `--now` was given (else a replayed snapshot's own day is the run's day).
    pub now_given: bool,
    pub verbose: u8,
    pub quiet: bool,
    /// The process environment, read once.
    pub env: Env,
    /// The real clock.
    pub clock: SharedClock,
}

impl Global {
    /// The options of `cli` for a process: the real environment and clock.
    pub fn for_process(cli: &Cli) -> Self {
        let clock: SharedClock = std::sync::Arc::new(SystemClock);
        Global {
            config: cli.config.clone(),
            format: cli.format,
            now: cli.now.unwrap_or_else(|| clock.now().date_naive()),
            now_given: cli.now.is_some(),
            verbose: cli.verbose,
            quiet: cli.quiet,
            env: crate::env::from_process(),
            clock,
        }
    }

    /// Load the configuration and build the pipeline's context.
    pub fn context(&self) -> anyhow::Result<Context> {
        let loaded = crate::config::load(&self.config)?;
        let snapshot = loaded
            .config
            .upstream
            .snapshot
            .as_ref()
            .map(|p| loaded.resolve(p));
        let mut ctx = Context::new(loaded, self.now, self.env.clone(), self.clock.clone());
        self.date(&mut ctx, snapshot.as_deref());
        Ok(ctx)
    }

    /// Set the run's day: `--now`, else the day the replayed `snapshot` was recorded for (a
    /// replay is "as of" its data: the demo's snapshot of 2026-05-01 is judged on that day,
    /// not on the machine's date), else today. The snapshot read for its day is kept in the
    /// context and replayed as read. One that cannot be read is left for the run to read,
    /// which reports why.
    pub fn date(&self, ctx: &mut Context, snapshot: Option<&std::path::Path>) {
        ctx.replay = snapshot
            .and_then(|p| crate::upstream::snapshot::open(p).ok())
            .map(std::sync::Arc::new);
        ctx.today = match (&ctx.replay, self.now_given) {
            (Some(replay), false) => replay.as_of().unwrap_or(self.now),
            _ => self.now,
        };
    }

    /// The forge the configuration names (see [`crate::forge::open`]).
    /// The local forge dates what it writes on the run's day (`--now`): one clock for the
    /// releases and the report that judges them. GitHub keeps the real clock (token expiry and
    /// rate-limit resets are real time).
    pub fn open_forge(&self, ctx: &Context) -> anyhow::Result<Box<dyn Forge>> {
        let clock = match ctx.loaded.config.forge.kind {
            crate::config::ForgeKind::Local => crate::clock::on_day(ctx.clock.clone(), ctx.today),
            _ => ctx.clock.clone(),
        };
        crate::forge::open(&ctx.loaded, &ctx.env, clock)
    }

    /// The local forge's run lock (held from observing to the last write, so a second run
    /// waits and then finds nothing to do); `None` on GitHub, where writes are
    /// compare-and-swap instead.
    pub fn run_lock(&self, ctx: &Context) -> anyhow::Result<Option<crate::forge::local::RunLock>> {
        let fc = &ctx.loaded.config.forge;
        match fc.kind {
            crate::config::ForgeKind::Github => Ok(None),
            crate::config::ForgeKind::Local => {
                crate::forge::refuse_local_in_ci(&ctx.loaded, &ctx.env)?;
                Ok(Some(
                    crate::forge::local::LocalForge::from_config(&ctx.loaded, ctx.clock.clone())?
                        .lock_run()?,
                ))
            }
        }
    }

    /// GitHub Actions' environment (summary file, outputs), as read at the edge.
    pub fn actions(&self) -> crate::report::github::Actions {
        crate::report::github::Actions::from_lookup(|k| self.env.get(k).map(str::to_string))
    }
}

/// Write a command's result to stdout; a closed pipe (`stackbot detect | head`) is not an error.
/// The activity line is cleared first: the run is done.
pub(crate) fn emit(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    crate::cli::activity::finish();
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Decide the exit status of a failed command from its error chain: 2 when any cause is the
/// user's input or a refusal, 1 otherwise ([`crate::pipeline::exit::of_error_chain`], the rule
/// the world simulator judges too).
pub fn classify(err: &anyhow::Error) -> ExitStatus {
    crate::pipeline::exit::of_error_chain(err.chain())
}

/// Parse the process arguments, run, and return the exit code. Errors are printed here.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitStatus::Invalid as i32
            } else {
                0
            };
        }
    };
    let global = Global::for_process(&cli);
    let terminal = crate::report::Terminal::new(
        global.quiet,
        global.env.get("NO_COLOR"),
        global.env.get("TERM"),
        std::io::IsTerminal::is_terminal(&std::io::stderr()),
    );
    init_tracing(&global, terminal);
    let result = run(&cli.command, &global);
    crate::cli::activity::finish();
    // Every host the run could not reach, once, whatever the command made of it.
    let unreached = crate::net::failure::take_unreached();
    let listed = (!unreached.is_empty()).then(|| crate::net::failure::report(&unreached));
    match result {
        Ok(status) => {
            if let Some(text) = listed.filter(|_| !global.quiet) {
                eprint!("warning: {text}");
            }
            status as i32
        }
        Err(err) => {
            report_error(&err, &global);
            if let Some(text) = listed {
                eprint!("{text}");
            }
            classify(&err) as i32
        }
    }
}

fn init_tracing(g: &Global, terminal: crate::report::Terminal) {
    use crate::cli::{activity, journal};
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let level = if g.quiet {
        "error"
    } else {
        match g.verbose {
            0 => "warn",
            1 => "info",
            2 => "debug",
            _ => "trace",
        }
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("STACKBOT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("stackbot={level}")));
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(activity::Writer)
        .with_target(false)
        .with_ansi(terminal.use_color())
        .with_filter(filter);
    // The activity line and the journal see their events whatever the log level.
    let _ = tracing_subscriber::registry()
        .with(logs)
        .with(activity::messages(activity::TARGET, |m| activity::set(&m)))
        .with(activity::messages(journal::TARGET, journal::record))
        .try_init();
    activity::start(terminal.progress_visible());
    journal::watch_signals();
}

/// Print a failed command's error chain with what to do next; under GitHub Actions also as an
/// `::error` annotation, attached to the file and line when the error knows them (a bad
/// `stackbot.yaml` key shows up on that line of the pull request).
fn report_error(err: &anyhow::Error, g: &Global) {
    let mut msg = format!("error: {err}");
    for cause in err.chain().skip(1) {
        msg.push_str(&format!("\n  caused by: {cause}"));
    }
    if !msg.contains("hint:") {
        // The same classification as the exit code's.
        let class = crate::pipeline::exit::class_of_chain(err.chain());
        msg.push_str(&format!("\n  hint: {}", class.hint()));
    }
    eprintln!("{msg}");
    let actions = g.actions();
    actions.annotate(&crate::report::github::error_annotation(
        err,
        actions.workspace.as_deref(),
    ));
}

fn run(cmd: &Command, g: &Global) -> anyhow::Result<ExitStatus> {
    match cmd {
        Command::Hash(a) => hash::run(a, g),
        Command::Package(a) => package::run(a, g),
        Command::Render(a) => render::run(a, g),
        Command::Validate(a) => validate::run(a, g),
        Command::Schema(a) => schema::run(a, g),
        Command::Detect(a) => detect::run(a, g),
        Command::Plan(a) => plan::run(a, g),
        Command::Release(a) => release::run(a, g),
        Command::Tenants(a) => tenants::run(a, g),
        Command::Status(a) => status::run(a, g),
        Command::Adopt(a) => adopt::run(a, g),
        Command::Init(a) => init::run(a, g),
        Command::Forge(a) => forge::run(a, g),
        Command::Completions(a) => completions::run(a, g),
    }
}
