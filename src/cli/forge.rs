//! `stackbot forge merge|close|checks-pass|list`: the other side of the demo. On GitHub a person merges
//! or closes the bot's pull requests in the web UI; on the local forge these commands do the
//! same to its pull requests (real git merges, squashes and rebases), so the loop release →
//! merge → `status` → next release can be played without editing the forge folder by hand.

use super::{Format, Global};
use crate::config::ForgeKind;
use crate::error::{ExitStatus, InvalidInput};
use crate::forge::local::{LocalForge, MergeMethod};
use crate::forge::{ForgeError, PullState, RepoRef};

const EXAMPLES: &str = "\
Examples (the local demo; REPO is a tenant name or `owner/name`):
  stackbot -c examples/local/stackbot.yaml forge list                 # every pull request of every repository
  stackbot -c examples/local/stackbot.yaml forge list acme            # those of tenant acme's repository
  stackbot -c examples/local/stackbot.yaml forge merge acme 5         # \"Create a merge commit\"
  stackbot -c examples/local/stackbot.yaml forge merge globex/platform 6 --squash
  stackbot -c examples/local/stackbot.yaml forge close acme 5         # close without merging
  stackbot -c examples/local/stackbot.yaml forge checks-pass acme 5   # CI passed: auto-merge merges

Only for `forge.kind: local`: on GitHub, merge and close in the web UI or with `gh pr merge`.
A pull request that is not open, or a merge with conflicts, is refused with exit 2.";

/// Merge, close or list pull requests on the local forge, as a person on GitHub would.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

/// What to do to the local forge.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Merge an open pull request into its base branch (GitHub's merge buttons).
    #[command(after_help = EXAMPLES)]
    Merge(MergeArgs),
    /// Close an open pull request without merging it.
    #[command(after_help = EXAMPLES)]
    Close(PullArgs),
    /// The pull request's required checks passed: merge it if auto-merge was requested (as
    /// GitHub's native auto-merge does), else nothing happens.
    #[command(after_help = EXAMPLES)]
    ChecksPass(PullArgs),
    /// List pull requests: of one repository, or of the cluster-stacks repository and every tenant.
    #[command(after_help = EXAMPLES)]
    List(ListArgs),
}

/// One pull request.
#[derive(Debug, clap::Args)]
pub struct PullArgs {
    /// A tenant name from stackbot.yaml, or a repository as `owner/name`.
    #[arg(value_name = "TENANT|REPO")]
    pub repo: String,
    /// The pull request number (see `stackbot forge list`).
    #[arg(value_name = "NUMBER")]
    pub number: u64,
}

/// `forge merge`.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    #[command(flatten)]
    pub pull: PullArgs,
    /// "Squash and merge": one new commit on the base.
    #[arg(long, conflicts_with = "rebase")]
    pub squash: bool,
    /// "Rebase and merge": the pull request's commits replayed on the base.
    #[arg(long)]
    pub rebase: bool,
}

/// `forge list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// A tenant name or `owner/name`; every configured repository when left out.
    #[arg(value_name = "TENANT|REPO")]
    pub repo: Option<String>,
}

/// Run the command.
pub fn run(a: &Args, g: &Global) -> anyhow::Result<ExitStatus> {
    let ctx = g.context()?;
    let loaded = &ctx.loaded;
    if loaded.config.forge.kind != ForgeKind::Local {
        return Err(InvalidInput(format!(
            "{}: `stackbot forge` acts on the local forge only, and this configuration's forge \
             is `github` ({})\n  hint: merge or close the pull request on GitHub (web UI or \
             `gh pr merge`), or pass the demo's configuration with `-c`",
            loaded.path.display(),
            loaded.config.forge.repository
        ))
        .into());
    }
    let forge = LocalForge::from_config(loaded, ctx.clock.clone())?;
    match &a.action {
        Action::Merge(m) => {
            let repo = repository(loaded, &m.pull.repo)?;
            let method = if m.squash {
                MergeMethod::Squash
            } else if m.rebase {
                MergeMethod::Rebase
            } else {
                MergeMethod::Merge
            };
            let head = forge
                .merge_pull_with(&repo, m.pull.number, method)
                .map_err(|e| refused(e, &repo, m.pull.number))?;
            super::emit(&format!(
                "merged pull request #{} of {repo} ({}); {} is now at {}\n",
                m.pull.number,
                match method {
                    MergeMethod::Merge => "merge commit",
                    MergeMethod::Squash => "squashed",
                    MergeMethod::Rebase => "rebased",
                },
                base_of(&forge, &repo, m.pull.number),
                &head[..head.len().min(12)]
            ))?;
        }
        Action::Close(p) => {
            let repo = repository(loaded, &p.repo)?;
            forge
                .close_pull_by_hand(&repo, p.number)
                .map_err(|e| refused(e, &repo, p.number))?;
            super::emit(&format!(
                "closed pull request #{} of {repo} without merging\n",
                p.number
            ))?;
        }
        Action::ChecksPass(p) => {
            let repo = repository(loaded, &p.repo)?;
            let merged = forge
                .checks_passed(&repo, p.number)
                .map_err(|e| refused(e, &repo, p.number))?;
            super::emit(&match merged {
                Some(head) => format!(
                    "checks of pull request #{} of {repo} passed; auto-merge merged it ({} is now at {})\n",
                    p.number,
                    base_of(&forge, &repo, p.number),
                    &head[..head.len().min(12)]
                ),
                None => match pull_of(&forge, &repo, p.number).map(|p| p.state) {
                    Some(PullState::Open) | None => format!(
                        "checks of pull request #{} of {repo} passed; auto-merge is not requested, so it stays open\n",
                        p.number
                    ),
                    Some(other) => format!(
                        "pull request #{} of {repo} is already {}: its checks change nothing\n",
                        p.number,
                        crate::forge::local::state_word(other)
                    ),
                },
            })?;
        }
        Action::List(l) => {
            let repos = match &l.repo {
                Some(r) => vec![repository(loaded, r)?],
                None => configured_repositories(loaded),
            };
            let mut rows = Vec::new();
            for repo in repos {
                match forge.pulls(&repo) {
                    Ok(pulls) => rows.extend(pulls.into_iter().map(|p| (repo.clone(), p))),
                    // Not created yet (before the first release): nothing to list.
                    Err(ForgeError::NotFound { .. }) if l.repo.is_none() => {}
                    Err(e) => return Err(refused_list(e, &repo)),
                }
            }
            print_list(&rows, g)?;
        }
    }
    Ok(ExitStatus::Success)
}

/// A tenant name (its `repository`) or an `owner/name`; anything else names what exists.
fn repository(loaded: &crate::config::Loaded, s: &str) -> Result<RepoRef, InvalidInput> {
    let c = &loaded.config;
    if let Some(t) = c.tenants.iter().find(|t| t.name == s) {
        return RepoRef::parse(&t.repository).ok_or_else(|| {
            InvalidInput(format!(
                "tenant `{s}`: repository `{}` is not `owner/name`",
                t.repository
            ))
        });
    }
    if let Some(r) = RepoRef::parse(s) {
        return Ok(r);
    }
    let names: Vec<&str> = c.tenants.iter().map(|t| t.name.as_str()).collect();
    let hint = crate::error::did_you_mean(s, &names)
        .map(|n| format!("did you mean `{n}`? "))
        .unwrap_or_default();
    Err(InvalidInput(format!(
        "`{s}` is neither a tenant of {} nor an `owner/name` repository\n  hint: {hint}tenants: {}",
        loaded.path.display(),
        crate::error::listed(&names)
    )))
}

/// The cluster-stacks repository and every tenant repository, each once.
fn configured_repositories(loaded: &crate::config::Loaded) -> Vec<RepoRef> {
    let c = &loaded.config;
    let mut out: Vec<RepoRef> = RepoRef::parse(&c.forge.repository).into_iter().collect();
    for t in &c.tenants {
        if let Some(r) = RepoRef::parse(&t.repository)
            && !out.contains(&r)
        {
            out.push(r);
        }
    }
    out
}

/// A pull request, when the forge has it.
fn pull_of(forge: &LocalForge, repo: &RepoRef, number: u64) -> Option<crate::forge::PullInfo> {
    forge
        .pulls(repo)
        .ok()?
        .into_iter()
        .find(|p| p.number == number)
}

fn base_of(forge: &LocalForge, repo: &RepoRef, number: u64) -> String {
    pull_of(forge, repo, number).map_or_else(|| "the base branch".into(), |p| p.base)
}

/// What a person asked for that the forge refuses (no such pull request, not open, a
/// conflict) is theirs to change: exit 2. The file system's trouble stays what it is.
fn refused(e: ForgeError, repo: &RepoRef, number: u64) -> anyhow::Error {
    match e {
        ForgeError::NotFound { what } => InvalidInput(format!(
            "{what} not found\n  hint: `stackbot forge list {repo}` shows the pull requests of {repo}; #{number} is not one of them"
        ))
        .into(),
        ForgeError::Rejected { what, reason } => {
            InvalidInput(format!("{what} was refused: {reason}")).into()
        }
        other => other.into(),
    }
}

fn refused_list(e: ForgeError, repo: &RepoRef) -> anyhow::Error {
    match e {
        ForgeError::NotFound { .. } => InvalidInput(format!(
            "repository {repo} does not exist on the local forge (yet: the first `release` creates the configured ones)"
        ))
        .into(),
        other => other.into(),
    }
}

fn print_list(rows: &[(RepoRef, crate::forge::PullInfo)], g: &Global) -> anyhow::Result<()> {
    if g.format == Format::Json {
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|(repo, p)| {
                serde_json::json!({
                    "repository": repo.to_string(),
                    "number": p.number,
                    "state": crate::forge::local::state_word(p.state),
                    "head": p.head,
                    "base": p.base,
                    "title": p.title,
                    "url": p.html_url,
                })
            })
            .collect();
        return super::emit(&format!("{}\n", serde_json::to_string_pretty(&v)?));
    }
    if rows.is_empty() {
        return super::emit("no pull requests\n");
    }
    // Aligned columns, as docs/quickstart.md shows them; scripts use `--format json`.
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|(repo, p)| {
            vec![
                repo.to_string(),
                format!("#{}", p.number),
                crate::forge::local::state_word(p.state).to_string(),
                format!("{} -> {}", p.head, p.base),
                p.title.clone(),
            ]
        })
        .collect();
    let out = crate::report::text::columns(
        &["repository", "number", "state", "head -> base", "title"],
        &table,
    );
    let open = rows
        .iter()
        .filter(|(_, p)| p.state == PullState::Open)
        .count();
    if open > 0 && !g.quiet {
        eprintln!("merge one with: stackbot forge merge REPO NUMBER [--squash|--rebase]");
    }
    super::emit(&out)
}
