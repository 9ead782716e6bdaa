//! `stackbot validate`: check the configuration and test-render every template tree in
//! memory, so a broken template fails in CI before a release needs it. It also says where a
//! run would publish and as whom, because a configuration can be valid and still point at the
//! wrong place (a missing `forge:` section means the local forge).

use serde::Serialize;

use super::{Format, Global};
use crate::config::{ForgeKind, Loaded};
use crate::env::Env;
use crate::error::ExitStatus;

/// Check stackbot.yaml, stackbot.lock and every stack's templates without writing anything.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Each stack's templates are rendered in memory against its release sets in stackbot.lock, or
against a sample set built from the config when the lock has none. Nothing is written.

The last lines say where a run would publish (forge, repository, mode, OCI repository) and
with which identity (a token from an environment variable, a GitHub App, or none), from the
environment this command runs in. Secret values are never printed, only whether they are set.

Examples:
  stackbot validate
  stackbot -c other/stackbot.yaml validate
  stackbot validate --format json      # `publishing` holds the target and identity")]
pub struct Args {}

/// Where a run would publish, and with which credentials (names and presence only).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Publishing {
    /// `local` or `github`.
    pub forge: String,
    /// `owner/name` of the cluster-stacks repository.
    pub repository: String,
    /// The GitHub API or the local forge folder.
    pub location: String,
    /// `direct` or `pull-request`, and the base branch.
    pub mode: String,
    pub base_branch: String,
    /// Who the forge requests are made as.
    pub identity: String,
    /// Whether writes are possible with that identity.
    pub can_write: bool,
    /// The OCI repository releases are pushed to, when `publish` lists `oci`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oci: Option<String>,
    /// Something that would stop or weaken a run here (e.g. the local forge under Actions).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Where and as whom a run of `loaded` in `env` would publish. Pure: names variables, never
/// reads out their values.
pub fn publishing(loaded: &Loaded, env: &Env) -> Publishing {
    let c = &loaded.config;
    let fc = &c.forge;
    let set = |var: &str| env.non_empty(var).is_some();
    let mut warnings = Vec::new();
    let (forge, location, identity, can_write) = match fc.kind {
        ForgeKind::Local => {
            if env.get("GITHUB_ACTIONS") == Some("true") && !fc.local.allow_in_ci {
                warnings.push(
                    "the local forge is refused under GitHub Actions (set `forge.kind: github`, \
                     or `forge.local.allow_in_ci: true`)"
                        .to_string(),
                );
            }
            (
                "local",
                loaded.resolve(&fc.local.path).display().to_string(),
                "none needed (a folder on this machine)".to_string(),
                true,
            )
        }
        ForgeKind::Github => {
            let (identity, can_write) = match &fc.github.app {
                Some(app) => match (&app.private_key_env, &app.private_key_file) {
                    (Some(var), _) if set(var) => (
                        format!("GitHub App {} (private key from ${var}: set)", app.id),
                        true,
                    ),
                    (Some(var), _) => (
                        format!(
                            "none: GitHub App {} but ${var} is not set (read-only)",
                            app.id
                        ),
                        false,
                    ),
                    (None, Some(file)) => (
                        format!(
                            "GitHub App {} (private key file {})",
                            app.id,
                            loaded.resolve(file).display()
                        ),
                        true,
                    ),
                    (None, None) => ("none (read-only)".to_string(), false),
                },
                None if set(&fc.github.token_env) => {
                    (format!("token from ${}: set", fc.github.token_env), true)
                }
                None => (
                    format!(
                        "none: ${} is not set (read-only: `plan` works, `release` cannot write)",
                        fc.github.token_env
                    ),
                    false,
                ),
            };
            ("github", fc.github.api_url.clone(), identity, can_write)
        }
    };
    let oci = c.publishes_on_oci().then(|| {
        let o = c.oci.as_ref();
        let repository = o
            .and_then(|o| o.repository.clone())
            .or_else(|| env.non_empty("OCI_REPOSITORY"))
            .unwrap_or_else(|| "(no repository: set `oci.repository` or $OCI_REPOSITORY)".into());
        let creds = match o {
            Some(o) if set(&o.access_token_env) => format!("token from ${}", o.access_token_env),
            Some(o) if set(&o.username_env) && set(&o.password_env) => {
                format!("user from ${} and ${}", o.username_env, o.password_env)
            }
            _ => "anonymous".to_string(),
        };
        format!("{repository} ({creds})")
    });
    Publishing {
        forge: forge.to_string(),
        repository: fc.repository.clone(),
        location,
        mode: match fc.mode {
            crate::config::ReleaseMode::Direct => "direct".into(),
            crate::config::ReleaseMode::PullRequest => "pull-request".into(),
        },
        base_branch: fc.base_branch.clone(),
        identity,
        can_write,
        oci: if c.publishes_on_forge() || oci.is_none() {
            oci
        } else {
            oci.map(|o| format!("{o}; forge releases off (`publish: [oci]`)"))
        },
        warnings,
    }
}

/// Validate and report.
pub fn run(_a: &Args, g: &Global) -> anyhow::Result<ExitStatus> {
    let ctx = g.context()?;
    let checked = crate::pipeline::validate::validate(&ctx)?;
    let publishing = publishing(&ctx.loaded, &g.env);
    if g.format == Format::Json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "config": ctx.loaded.path,
                "valid": true,
                "stacks": checked,
                "publishing": publishing,
            }))?
        );
    } else if !g.quiet {
        for c in &checked {
            println!(
                "ok {}: {} files in {} render against {} ({})",
                c.stack,
                c.files,
                c.templates.display(),
                c.source,
                c.release_sets.join(", ")
            );
            for w in &c.warnings {
                println!("warning: {}: {w}", c.stack);
            }
        }
        println!("ok {}", ctx.loaded.path.display());
        let p = &publishing;
        println!(
            "publishes to: {} forge, repository {} at {}, mode {} on {}",
            p.forge, p.repository, p.location, p.mode, p.base_branch
        );
        if let Some(oci) = &p.oci {
            println!("publishes to OCI: {oci}");
        }
        println!("identity: {}", p.identity);
        for w in &p.warnings {
            println!("warning: {w}");
        }
    }
    Ok(ExitStatus::Success)
}
