//! `stackbot init`: run in a checkout of the cluster-stacks repository, write what makes it an
//! hourly bot: `stackbot.yaml` (by way of `adopt` for every csctl stack under `providers/`),
//! `stackbot.lock`, the templates and their rendering, the release and preview workflows
//! (calling the reusable action pinned by commit) and a `.gitignore` line for the answer
//! cache. The decisions are [`crate::init`]'s; this reads the checkout, adopts and writes.
//!
//! Running it again is a fixpoint: an existing `stackbot.yaml` means the setup is the
//! maintainers' now (no second adoption); the workflows are compared with what this stackbot
//! would write, and a difference is shown as a diff and written only with `--update`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Format, Global};
use crate::error::{ExitStatus, InvalidInput};
use crate::init::{self, ActionPin, Change, FileChange, Setup, workflows};

/// The commit of the stackbot release this binary was built from: `binaries.yml` sets it for
/// the build of a version tag (`scripts/package-binary`), so `init` pins the action of the
/// very release that is running. A build from anything else has none, and `init` then needs
/// `--action-ref`.
pub const RELEASE_COMMIT: Option<&str> = option_env!("STACKBOT_RELEASE_COMMIT");

const EXAMPLES: &str = "\
Examples:
  stackbot init                                  # in a clone of SovereignCloudStack/cluster-stacks
  stackbot init --dry-run                        # every file it would write, with diffs
  stackbot init --tenant-shards 4                # the tenant fan-out as a matrix of 4 jobs
  stackbot init --action-ref 0123…(40 hex) --action-version v0.1.0

Writes (only what is missing): stackbot.yaml, stackbot.lock, templates/<provider>/<name>/ and
cluster-stacks/<provider>/<name>/<major>-<minor>/ from every providers/<provider>/<name>/ that
holds a csctl.yaml (adopted byte for byte, see `stackbot adopt --help`), then
.github/workflows/stackbot-release.yml and stackbot-preview.yml and a .gitignore line for
.stackbot/. When stackbot.yaml exists the setup is yours: nothing is adopted again. A workflow
that differs from what this stackbot writes is shown as a diff and written only with --update.
Next steps: docs/github-setup.md.";

/// Write the stackbot setup of a cluster-stacks repository.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The cluster-stacks checkout.
    #[arg(value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Adopt this csctl stack directory (relative to DIR; repeatable) instead of every
    /// `providers/<provider>/<name>/` holding a csctl.yaml.
    #[arg(long = "stack-dir", value_name = "PATH")]
    pub stack_dirs: Vec<PathBuf>,
    /// `owner/name` of this repository on GitHub (default: read from the `origin` remote).
    #[arg(long, value_name = "OWNER/NAME")]
    pub repository: Option<String>,
    /// The branch releases are made from (default: origin's HEAD, else `main`).
    #[arg(long, value_name = "BRANCH")]
    pub base_branch: Option<String>,
    /// The GitHub API of a GitHub Enterprise server (default: api.github.com).
    #[arg(long, value_name = "URL")]
    pub api_url: Option<String>,
    /// Full commit SHA of the stackbot release the workflows pin (default: the release this
    /// stackbot was built from).
    #[arg(long, value_name = "SHA")]
    pub action_ref: Option<String>,
    /// The version that commit is, for the pin's comment (default: this stackbot's).
    #[arg(long, value_name = "vX.Y.Z")]
    pub action_version: Option<String>,
    /// `owner/name` of stackbot's repository, for a fork or mirror (default: Cargo.toml's).
    #[arg(long, value_name = "OWNER/NAME")]
    pub action_repo: Option<String>,
    /// Run the tenant pull requests after the release job as a matrix of N jobs
    /// (`tenants --shard I/N`); 2 to 256.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub tenant_shards: u32,
    /// Also write the files that exist and differ (their diff is shown either way).
    #[arg(long)]
    pub update: bool,
    /// Show what would be written, with diffs; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

fn invalid(msg: impl Into<String>) -> anyhow::Error {
    InvalidInput(msg.into()).into()
}

/// `owner/name` from a GitHub remote URL (`https://github.com/o/n(.git)`,
/// `git@github.com:o/n.git`, `ssh://git@github.com/o/n`), or `None`.
pub fn repository_from_remote(url: &str) -> Option<String> {
    let url = url.trim().trim_end_matches('/');
    let path = url
        .split_once("://")
        .map(|(_, rest)| rest.split_once('/').map_or("", |(_, p)| p))
        .or_else(|| url.split_once(':').map(|(_, p)| p))?;
    let repo = path.trim_end_matches(".git");
    init::is_repository(repo).then(|| repo.to_string())
}

/// The `origin` remote's repository and default branch, when DIR is a git checkout.
fn from_git(dir: &Path) -> (Option<String>, Option<String>) {
    let Ok(repo) = git2::Repository::discover(dir) else {
        return (None, None);
    };
    let remote = repo
        .find_remote("origin")
        .ok()
        .and_then(|r| r.url().ok().and_then(repository_from_remote));
    let branch = repo
        .find_reference("refs/remotes/origin/HEAD")
        .ok()
        .and_then(|r| r.symbolic_target().ok().flatten().map(str::to_string))
        .and_then(|t| t.strip_prefix("refs/remotes/origin/").map(str::to_string));
    (remote, branch)
}

/// The action to pin: the flags, else the release this binary was built from.
fn pin(a: &Args) -> anyhow::Result<ActionPin> {
    let repository = match &a.action_repo {
        Some(r) => r.clone(),
        None => env!("CARGO_PKG_REPOSITORY")
            .trim_start_matches("https://github.com/")
            .trim_end_matches(".git")
            .to_string(),
    };
    let commit = match (&a.action_ref, RELEASE_COMMIT) {
        (Some(c), _) => c.clone(),
        (None, Some(c)) if !c.is_empty() => c.to_string(),
        _ => {
            return Err(invalid(format!(
                "this stackbot was not built from a release, so it does not know which commit of {repository} to pin\n  \
                 hint: pass --action-ref with the full commit SHA of a stackbot release tag, e.g. \
                 `git ls-remote https://github.com/{repository} 'refs/tags/v{v}^{{}}'`, and --action-version v{v}; \
                 or run `init` with a released stackbot (scripts/install-stackbot)",
                v = env!("CARGO_PKG_VERSION")
            )));
        }
    };
    let version = a
        .action_version
        .clone()
        .unwrap_or_else(|| format!("v{}", env!("CARGO_PKG_VERSION")));
    ActionPin::new(&repository, &commit, &version).map_err(|e| invalid(e.to_string()))
}

fn setup(a: &Args, g: &Global) -> anyhow::Result<Setup> {
    let (remote, branch) = from_git(&a.dir);
    let repository = match a.repository.clone().or(remote) {
        Some(r) if init::is_repository(&r) => r,
        Some(r) => return Err(invalid(format!("--repository `{r}` is not `owner/name`"))),
        None => {
            return Err(invalid(format!(
                "{}: cannot tell which GitHub repository this is (no `origin` remote on github)\n  \
                 hint: pass --repository OWNER/NAME, e.g. --repository SovereignCloudStack/cluster-stacks",
                a.dir.display()
            )));
        }
    };
    let s = Setup {
        pin: pin(a)?,
        stackbot_version: env!("CARGO_PKG_VERSION").to_string(),
        repository,
        base_branch: a
            .base_branch
            .clone()
            .or(branch)
            .unwrap_or_else(|| "main".into()),
        api_url: a.api_url.clone(),
        config: g.config.to_string_lossy().replace('\\', "/"),
        tenant_shards: a.tenant_shards,
        cron_minute: 17,
        dispatches_gate: false,
    };
    s.check().map_err(|e| invalid(e.to_string()))?;
    Ok(s)
}

/// The csctl stack directories to adopt, relative to DIR, sorted.
fn stack_dirs(a: &Args) -> anyhow::Result<Vec<PathBuf>> {
    if !a.stack_dirs.is_empty() {
        return Ok(a.stack_dirs.clone());
    }
    let mut out = Vec::new();
    let providers = a.dir.join("providers");
    for p in read_dirs(&providers) {
        for s in read_dirs(&p) {
            if s.join("csctl.yaml").is_file() {
                out.push(s.strip_prefix(&a.dir).unwrap_or(&s).to_path_buf());
            }
        }
    }
    out.sort();
    Ok(out)
}

fn read_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Adopt every stack: the seed files of a new setup (config, lock, templates, rendering).
fn adopted_files(
    a: &Args,
    setup: &Setup,
    files: &mut BTreeMap<String, Vec<u8>>,
) -> anyhow::Result<Vec<String>> {
    let dirs = stack_dirs(a)?;
    if dirs.is_empty() {
        return Err(invalid(format!(
            "{}: no csctl stack under providers/<provider>/<name>/ (a directory holding csctl.yaml), and no stackbot.yaml\n  \
             hint: pass --stack-dir DIR for a stack elsewhere, or write stackbot.yaml by hand (docs/quickstart.md, step 4) and run init again for the workflows",
            a.dir.display()
        )));
    }
    let mut entries = Vec::new();
    let mut lock = crate::lock::Lock::default();
    let mut notes = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for rel in &dirs {
        let label = rel.to_string_lossy().replace('\\', "/");
        let tree = crate::render::read_tree(&a.dir.join(rel))
            .map_err(|e| anyhow::Error::new(e).context(format!("reading {label}")))?;
        let adoption =
            crate::adopt::adopt(&tree, |id| crate::adopt::Layout::conventional(id, &label))
                // Classified where every error is (`exit::class_of_chain`), not remapped here.
                .map_err(|inner| crate::pipeline::Error::Adopt {
                    dir: label.clone(),
                    inner: Box::new(inner),
                })?;
        if !seen.insert(adoption.stack.clone()) {
            return Err(invalid(format!(
                "{label}: a second directory of stack `{}`\n  hint: init adopts one directory per stack; adopt the other minor afterwards with `stackbot adopt {label} --into .`",
                adoption.stack
            )));
        }
        let layout = crate::adopt::Layout::conventional(&adoption.stack, &label);
        let entry = init::stack_entries(&adoption.config).ok_or_else(|| {
            anyhow::anyhow!("adopting {label} wrote no `stacks:` list (a stackbot bug)")
        })?;
        entries.push(entry);
        insert_tree(files, &layout.templates, &adoption.templates);
        let templates = crate::render::TemplateTree {
            root: layout.templates.clone(),
            files: adoption.templates.clone(),
        };
        let rendered = crate::render::render_stack(
            &templates,
            &adoption.stack_config,
            &adoption.release_set,
            &adoption.lock(),
        )?;
        let out = layout.output.join(adoption.kubernetes.minor().dashed());
        insert_tree(files, &out, &rendered);
        adoption.add_to(&mut lock);
        notes.extend(adoption.notes.iter().map(|n| format!("{label}: {n}")));
    }
    files.insert(
        setup.config.clone(),
        init::config_text(&entries, setup).into_bytes(),
    );
    files.insert(
        crate::lock::LOCK_FILE.to_string(),
        lock.to_yaml().into_bytes(),
    );
    Ok(notes)
}

fn insert_tree(files: &mut BTreeMap<String, Vec<u8>>, dir: &Path, tree: &crate::model::FileTree) {
    let dir = dir.to_string_lossy().replace('\\', "/");
    for (path, bytes) in tree {
        files.insert(format!("{dir}/{path}"), bytes.clone());
    }
}

/// Repository-relative path → bytes.
type Files = BTreeMap<String, Vec<u8>>;

/// Every file `init` manages, with the bytes this stackbot would write, and notes for the
/// maintainer.
fn desired(a: &Args, setup: &Setup) -> anyhow::Result<(Files, Vec<String>)> {
    let mut files = BTreeMap::new();
    let config = a.dir.join(&setup.config);
    let mut notes = Vec::new();
    let mut setup = setup.clone();
    if config.exists() {
        // The setup exists: it is the maintainers' now. It must still load.
        let loaded = crate::config::load(&config)?;
        setup.dispatches_gate = loaded
            .config
            .stacks
            .iter()
            .any(|s| s.gate.as_ref().is_some_and(|g| g.workflow.is_some()));
        notes.push(format!(
            "{}: exists, kept as it is (nothing adopted again)",
            setup.config
        ));
        if setup.tenant_shards >= 2 {
            notes.push(format!(
                "with {n} tenant shards sharing one token, set `forge.github.writes_per_hour: {w}` in {c}",
                n = setup.tenant_shards,
                w = 450 / setup.tenant_shards,
                c = setup.config
            ));
        }
    } else {
        notes.extend(adopted_files(a, &setup, &mut files)?);
    }
    let gitignore = std::fs::read_to_string(a.dir.join(".gitignore")).ok();
    files.extend(
        [
            (workflows::RELEASE_PATH, workflows::release(&setup)),
            (workflows::PREVIEW_PATH, workflows::preview(&setup)),
            (".gitignore", init::gitignore(gitignore.as_deref())),
        ]
        .map(|(path, text)| (path.to_string(), text.into_bytes())),
    );
    Ok((files, notes))
}

/// Write the changes the flags allow; returns the paths written.
fn write(dir: &Path, changes: &[FileChange], update: bool) -> anyhow::Result<Vec<String>> {
    let mut written = Vec::new();
    for c in changes {
        let go = match c.change {
            Change::Create => true,
            Change::Update { .. } => update,
            Change::Unchanged => false,
        };
        if !go {
            continue;
        }
        let path = dir.join(&c.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| anyhow::anyhow!("creating {}: {e}", parent.display()))?;
        }
        crate::lock::write_atomic(&path, &c.bytes)
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
        written.push(c.path.clone());
    }
    Ok(written)
}

/// Run the command.
pub fn run(a: &Args, g: &Global) -> anyhow::Result<ExitStatus> {
    if !a.dir.is_dir() {
        return Err(invalid(format!(
            "{}: is not a directory\n  hint: run init in (or pass) a checkout of the cluster-stacks repository",
            a.dir.display()
        )));
    }
    let setup = setup(a, g)?;
    let (files, notes) = desired(a, &setup)?;
    let changes = init::compare(&files, |p| std::fs::read(a.dir.join(p)).ok());
    let written = if a.dry_run {
        Vec::new()
    } else {
        write(&a.dir, &changes, a.update)?
    };
    let report = crate::report::init::Report {
        changes: &changes,
        written: &written,
        notes: &notes,
        dry_run: a.dry_run,
        update: a.update,
        pin: &setup.pin,
    };
    super::emit(&match g.format {
        Format::Json => report.json(),
        Format::Text | Format::Markdown => report.text(),
    })?;
    Ok(ExitStatus::Success)
}
