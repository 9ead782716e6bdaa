//! The pipeline: detect → resolve → render → plan → apply → tenants, in one place.
//!
//! `stackbot release`, `plan` and `tenants` are three views of the same loop, so the loop lives
//! here once and the CLI only parses arguments, builds a [`Context`] and prints what comes back.
//! Each function says which stages it runs; the stages themselves are the pure modules
//! (`resolve`, `render`, `package`, `plan`, `tenants::plan`) and the shells that read and write
//! (`upstream`, `observe`, `apply`, `tenants::apply`).
//!
//! | function | stages |
//! |---|---|
//! | [`detect::detect`] | upstream → resolve |
//! | [`render::render`] | lock (or release sets) → render → the output directories |
//! | [`validate::validate`] | config + lock → render in memory |
//! | [`vendor::bring_archives`] | release set → chart repository → the templates' archives |
//! | [`desired::desired`] | (release sets from `--release-set` or detect) → render |
//! | [`release::plan`] | desired → observe → plan (read-only, no token) |
//! | [`release::release`] | plan → apply → tenants |
//! | [`tenants::run`] / [`tenants::preview`] | observe tenants → plan → apply (or not) |
//! | [`status::status`] | detect → releases, tenants → status (read-only) |
//! | [`dashboard::update_dashboard`] | status → the dashboard issue (the last stage of `release`) |
//!
//! A command builds one [`run::Run`] (target, forge, the release index listed once) and passes
//! it to every stage it runs.

pub mod adopt;
pub mod dashboard;
pub mod desired;
pub mod detect;
pub mod exit;
pub mod gate;
pub mod release;
pub mod render;
pub mod run;
pub mod status;
pub mod tenants;
pub mod validate;
pub mod vendor;

use std::path::PathBuf;

use chrono::NaiveDate;

use crate::clock::SharedClock;
use crate::config::Loaded;
use crate::env::Env;
use crate::model::{Minor, StackId};

/// Everything a run knows about its world that is not in the configuration: the date it
/// evaluates as of, the environment and the clock. Built once, at the edge.
#[derive(Debug, Clone)]
pub struct Context {
    pub loaded: Loaded,
    /// "Today" for lifecycle, deadlines and what upstream had published (`--now`).
    pub today: NaiveDate,
    /// The process environment (tokens are read from here, by the names the config gives).
    pub env: Env,
    /// Wall and monotonic time for pacing, retries and dates.
    pub clock: SharedClock,
    /// The snapshot `today` was read from (`Global::date`), replayed by the run as it was
    /// read: one read of the file for both.
    pub replay: Option<std::sync::Arc<crate::upstream::snapshot::Replay>>,
}

impl Context {
    /// A context for `loaded`.
    pub fn new(loaded: Loaded, today: NaiveDate, env: Env, clock: SharedClock) -> Self {
        Context {
            loaded,
            today,
            env,
            clock,
            replay: None,
        }
    }

    /// A context detached from the process: an empty environment (no tokens) and a manual
    /// clock standing at midnight UTC of `today`. For tests, simulations and examples.
    pub fn fixed(loaded: Loaded, today: NaiveDate) -> Self {
        let midnight = today
            .and_hms_opt(0, 0, 0)
            .expect("midnight exists")
            .and_utc();
        Context::new(
            loaded,
            today,
            Env::default(),
            std::sync::Arc::new(crate::clock::ManualClock::new(midnight)),
        )
    }
}

/// Which stacks, minors and release sets a run works on (`--stack`, `--minor`,
/// `--release-set`, `--snapshot`, `--cache-dir`).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub stack: Option<StackId>,
    pub minor: Option<Minor>,
    /// Release exactly these sets (a YAML or JSON file) instead of detecting upstream.
    pub release_set: Option<PathBuf>,
    /// Replay this upstream snapshot (overrides `upstream.snapshot`).
    pub snapshot: Option<PathBuf>,
    /// Cache directory for conditional upstream requests (overrides `upstream.cache_dir`).
    pub cache_dir: Option<PathBuf>,
    /// A human's explicit decisions (`--allow-downgrade`, `--republish`).
    pub overrides: crate::plan::Overrides,
    /// `(from, to)` URL prefix rewrites for fetching chart archives (`--mirror`).
    pub mirrors: Vec<(String, String)>,
    /// `release --skip-tenants`: the tenant pull requests are left to `tenants` runs (the
    /// shards of a CI matrix), so the release run neither previews nor opens them.
    pub skip_tenants: bool,
}

/// Why a pipeline run stopped. [`Error::class`] says whether it is input a human must fix, a
/// refusal of the file system, or transient; the exit code and the hint follow from that
/// ([`exit`]: 2 "fix the input, nothing was changed", else 1 "transient, re-run").
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Invalid(#[from] crate::error::InvalidInput),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Upstream(#[from] crate::upstream::UpstreamError),
    #[error(transparent)]
    Render(#[from] crate::render::RenderError),
    #[error(transparent)]
    Chart(#[from] Box<crate::charts::FetchError>),
    #[error(transparent)]
    Plan(#[from] crate::plan::PlanError),
    #[error(transparent)]
    Observe(#[from] crate::observe::ObserveError),
    #[error("releasing (safe to re-run: the next run finishes what this one started): {0}")]
    Apply(#[from] crate::apply::ApplyError),
    #[error(transparent)]
    Oci(#[from] crate::oci::OciError),
    #[error(transparent)]
    Forge(#[from] crate::forge::ForgeError),
    #[error(transparent)]
    Tenants(#[from] crate::tenants::TenantsError),
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// Adopting a csctl stack directory failed (`adopt`, `init`): the directory, then the
    /// adoption's error, which starts with the file it concerns. The class is `inner`'s
    /// ([`exit::class_of_error`]): a refusal is input, a round trip that failed is a bug.
    #[error("{}/{inner}", dir.trim_end_matches('/'))]
    Adopt {
        dir: String,
        inner: Box<crate::adopt::AdoptError>,
    },
    /// An error in what a configuration file says, named with the file (`stackbot.yaml: oci.…`).
    /// The class is `inner`'s; `inner` is part of this message, not a cause of its own.
    #[error("{path}: {inner}")]
    InConfig { path: String, inner: Box<Error> },
    /// What the pipeline was doing when `source` happened (`rendering openstack/scs2 v1.34.7`).
    #[error("{context}")]
    Context {
        context: String,
        #[source]
        source: Box<Error>,
    },
}

impl Error {
    /// Wrap with what was being done; the exit code stays the inner error's.
    pub fn context(self, context: impl Into<String>) -> Error {
        Error::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }

    /// Whether a human must fix the input, the file system refused access, or it is the
    /// world's trouble: [`exit::class_of_error`], the one classification.
    pub fn class(&self) -> exit::Class {
        exit::class_of_error(self)
    }
}
