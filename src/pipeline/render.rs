//! lock (or `--release-set`) → render → the committed output directories: `stackbot render`,
//! and `render --check`, the CI guard that the committed output is what the templates give.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config;
use crate::error::InvalidInput;
use crate::lock::{self, LOCK_FILE, Lock};
use crate::model::{FileTree, Minor, ReleaseSet, StackId};
use crate::render::{self, TemplateTree};

use super::{Context, Error};

/// What to render.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Render these sets (and record them in the lock) instead of the lock's.
    pub release_set: Option<PathBuf>,
    /// Write nothing; report what differs.
    pub check: bool,
    pub stack: Option<StackId>,
    pub minor: Option<Minor>,
    /// `(from, to)` URL prefix rewrites for fetching chart archives.
    pub mirrors: Vec<(String, String)>,
}

/// What `render` did with one stack × minor's directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RenderStatus {
    /// The directory already holds exactly the rendering.
    Unchanged,
    /// Written.
    Updated,
    /// `--check`: the committed directory differs from the rendering.
    Stale,
}

impl std::fmt::Display for RenderStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RenderStatus::Unchanged => "unchanged",
            RenderStatus::Updated => "updated",
            RenderStatus::Stale => "stale",
        })
    }
}

/// What happened to one stack × minor.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub stack: String,
    pub minor: String,
    pub kubernetes: String,
    pub dir: String,
    pub status: RenderStatus,
    pub changed_files: Vec<String>,
}

/// The result of a render run.
#[derive(Debug, Clone, Default)]
pub struct Rendered {
    pub outcomes: Vec<Outcome>,
    /// `--check` with `--release-set`: the lock does not record the sets yet.
    pub lock_stale: bool,
    /// `--check`: unified diff of everything stale.
    pub diff: String,
    /// Chart archives fetched into the templates, one line each.
    pub fetched: Vec<String>,
}

impl Rendered {
    /// Whether `--check` found anything stale.
    pub fn is_stale(&self) -> bool {
        self.lock_stale
            || self
                .outcomes
                .iter()
                .any(|o| o.status == RenderStatus::Stale)
    }
}

fn invalid(msg: String) -> Error {
    Error::Invalid(InvalidInput(msg))
}

/// `dir` relative to the config's directory when it is below it (stable in diffs and CI logs).
fn display_path(p: &Path, base: &Path) -> String {
    let shown = p.strip_prefix(base).unwrap_or(p);
    shown.to_string_lossy().trim_start_matches("./").to_string()
}

/// Render (or check) every selected set. Nothing is written unless every set renders.
pub fn render(ctx: &Context, req: &Request) -> Result<Rendered, Error> {
    let loaded = &ctx.loaded;
    let lock_path = loaded.base_dir.join(LOCK_FILE);
    let lock = lock::load(&lock_path).map_err(InvalidInput::from_display)?;
    let from_file = read_release_sets(req)?;
    let candidates: Vec<ReleaseSet> = from_file
        .clone()
        .unwrap_or_else(|| lock.release_sets.clone());
    let mut selected = select(req, candidates, &lock_path)?;
    let mut templates: BTreeMap<StackId, TemplateTree> = BTreeMap::new();
    let mut out = Rendered::default();
    // Archives fetched into the templates, written once every set has rendered.
    let mut archive_writes: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    // Content shared across minors renders from the lock as it will be after this run.
    let mut known = lock.clone();
    if from_file.is_some() {
        for set in &mut selected {
            let writes = &mut archive_writes;
            bring_archives(ctx, req, &lock, set, &mut templates, writes, &mut out)?;
            known.upsert(set.clone());
        }
    }
    // The other minors of the same stacks render too (their shared lists follow the lock after
    // this run; else `render --check` calls them stale). `--minor` gets that minor only.
    let shared_with = if from_file.is_some() && req.minor.is_none() {
        others_of_same_stacks(&known, &selected)
    } else {
        Vec::new()
    };
    let mut writes: Vec<(PathBuf, FileTree)> = Vec::new();
    let given = selected.len();
    for (i, set) in selected.iter().chain(&shared_with).enumerate() {
        let Some(stack) = configured(loaded, set, from_file.is_some() && i < given, &lock_path)?
        else {
            continue;
        };
        if !templates.contains_key(&set.stack) {
            let t = render::load_templates(&loaded.resolve(&stack.templates))?;
            templates.insert(set.stack.clone(), t);
        }
        let tree =
            render::render_stack(&templates[&set.stack], stack, set, &known).map_err(|e| {
                Error::from(e.under_root(&stack.templates))
                    .context(format!("rendering {} {}", set.stack, set.kubernetes))
            })?;
        let dir = render::output_dir(loaded, stack, set.minor());
        let label = display_path(&dir, &loaded.base_dir);
        let existing = render::read_tree(&dir)?;
        let changed_files = changed_files(&existing, &tree);
        let status = if changed_files.is_empty() {
            RenderStatus::Unchanged
        } else if req.check {
            out.diff
                .push_str(&render::diff_trees(&existing, &tree, &label));
            RenderStatus::Stale
        } else {
            // Written below, once every set has rendered: one bad set changes nothing.
            writes.push((dir, tree));
            RenderStatus::Updated
        };
        out.outcomes.push(Outcome {
            stack: set.stack.to_string(),
            minor: set.minor().to_string(),
            kubernetes: set.kubernetes.to_string(),
            dir: label,
            status,
            changed_files,
        });
    }

    write_archives(&archive_writes)?;
    for (dir, tree) in &writes {
        render::replace_dir(dir, tree).map_err(|source| Error::Io {
            what: format!("cannot write {}", dir.display()),
            source,
        })?;
    }

    // A --release-set run also records its sets, so the next plain `render` reproduces it.
    if from_file.is_some() {
        record_sets(loaded, req.check, &lock, &lock_path, &selected, &mut out)?;
    }
    Ok(out)
}

/// The sets of `lock` for the stacks of `selected`, at the minors `selected` does not hold.
fn others_of_same_stacks(lock: &Lock, selected: &[ReleaseSet]) -> Vec<ReleaseSet> {
    lock.release_sets
        .iter()
        .filter(|l| {
            selected.iter().any(|s| s.stack == l.stack)
                && !selected
                    .iter()
                    .any(|s| s.stack == l.stack && s.minor() == l.minor())
        })
        .cloned()
        .collect()
}

/// Write the fetched chart archives into the templates.
fn write_archives(archives: &[(PathBuf, Vec<u8>)]) -> Result<(), Error> {
    for (path, bytes) in archives {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| Error::Io {
                what: format!("cannot create {}", parent.display()),
                source,
            })?;
        }
        lock::write_atomic(path, bytes).map_err(|source| Error::Io {
            what: format!("cannot write {}", path.display()),
            source,
        })?;
    }
    Ok(())
}

/// A `--release-set` set before rendering: what the lock knows of its unchanged charts, and
/// (unless `--check`, which writes nothing and reads no network: rendering then names what is
/// missing) the chart archives it needs that the templates lack: `helm dependency update` for
/// one set ([`super::vendor::bring_archives`]), the archives put into the templates in memory
/// and queued for writing into the template directory.
fn bring_archives(
    ctx: &Context,
    req: &Request,
    lock: &Lock,
    set: &mut ReleaseSet,
    templates: &mut BTreeMap<StackId, TemplateTree>,
    writes: &mut Vec<(PathBuf, Vec<u8>)>,
    out: &mut Rendered,
) -> Result<(), Error> {
    let loaded = &ctx.loaded;
    lock.carry_chart_locks(set);
    let lock_path = loaded.base_dir.join(LOCK_FILE);
    let Some(stack) = configured(loaded, set, true, &lock_path)? else {
        return Ok(());
    };
    let root = loaded.resolve(&stack.templates);
    if !templates.contains_key(&set.stack) {
        templates.insert(set.stack.clone(), render::load_templates(&root)?);
    }
    if req.check {
        return Ok(());
    }
    let t = templates.get_mut(&set.stack).expect("loaded");
    for b in super::vendor::bring_archives(ctx, &req.mirrors, t, set)? {
        let path = root.join(&b.path);
        let shown = display_path(&path, &loaded.base_dir);
        out.fetched.push(format!("{} into {shown}", b.line));
        writes.push((path, b.bytes));
    }
    Ok(())
}

/// The sets of `--release-set`, if given. An unreadable file is a wrong argument, not a
/// transient failure.
fn read_release_sets(req: &Request) -> Result<Option<Vec<ReleaseSet>>, Error> {
    let Some(f) = &req.release_set else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(f).map_err(|e| {
        invalid(format!(
            "--release-set {}: cannot read it ({e}); pass an existing YAML or JSON file",
            f.display()
        ))
    })?;
    Ok(Some(
        lock::parse_release_sets(&text, f).map_err(InvalidInput::from_display)?,
    ))
}

/// The candidates `--stack`/`--minor` select; none is a wrong selection, answered with what
/// there is.
fn select(
    req: &Request,
    candidates: Vec<ReleaseSet>,
    lock_path: &Path,
) -> Result<Vec<ReleaseSet>, Error> {
    let available: Vec<String> = candidates
        .iter()
        .map(|s| format!("{} {}", s.stack, s.minor()))
        .collect();
    let selected: Vec<ReleaseSet> = candidates
        .into_iter()
        .filter(|s| req.stack.as_ref().is_none_or(|id| &s.stack == id))
        .filter(|s| req.minor.is_none_or(|m| s.minor() == m))
        .collect();
    if selected.is_empty() {
        return Err(invalid(format!(
            "nothing to render: no release set{}{} in {} (it has: {})\n  hint: select one it has, pass `--release-set FILE`, or run `stackbot release`",
            req.stack
                .as_ref()
                .map(|s| format!(" for {s}"))
                .unwrap_or_default(),
            req.minor.map(|m| format!(" {m}")).unwrap_or_default(),
            req.release_set.as_deref().unwrap_or(lock_path).display(),
            crate::error::listed(&available),
        )));
    }
    Ok(selected)
}

/// The configured stack of `set`, when the set is one the config renders (its stack
/// configured, its minor among the stack's `minors`). A set that is not is an error when the
/// user passed it (`--release-set`), and skipped with a warning when the lock holds it.
fn configured<'a>(
    loaded: &'a config::Loaded,
    set: &ReleaseSet,
    from_file: bool,
    lock_path: &Path,
) -> Result<Option<&'a config::StackConfig>, Error> {
    let Some(stack) = loaded.stack(&set.stack) else {
        if from_file {
            return Err(invalid(format!(
                "release set for `{}` {}: the stack is not configured in {}\n  hint: add it under `stacks:` or drop the set",
                set.stack,
                set.kubernetes,
                loaded.path.display()
            )));
        }
        tracing::warn!(
            "{}: skipping {} {}: the stack is not configured",
            lock_path.display(),
            set.stack,
            set.kubernetes
        );
        return Ok(None);
    };
    if let config::MinorSelection::List(list) = &stack.minors
        && !stack.renders(set.minor())
    {
        let msg = format!(
            "release set {} {}: minor {} is not in the stack's `minors` ({})",
            set.stack,
            set.kubernetes,
            set.minor(),
            list.join(", ")
        );
        if from_file {
            return Err(invalid(format!(
                "{msg}\n  hint: add \"{}\" to `minors` in {} or drop the set",
                set.minor(),
                loaded.path.display()
            )));
        }
        tracing::warn!("{}: skipping {msg}", lock_path.display());
        return Ok(None);
    }
    Ok(Some(stack))
}

/// The paths whose content differs between the directory and the rendering, sorted.
fn changed_files(existing: &FileTree, tree: &FileTree) -> Vec<String> {
    existing
        .keys()
        .chain(tree.keys())
        .filter(|p| existing.get(*p) != tree.get(*p))
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// Record the rendered `--release-set` sets (of configured stacks) in the lock; with
/// `--check`, only report that the lock does not hold them yet.
fn record_sets(
    loaded: &config::Loaded,
    check: bool,
    lock: &Lock,
    lock_path: &Path,
    selected: &[ReleaseSet],
    out: &mut Rendered,
) -> Result<(), Error> {
    let mut updated = lock.clone();
    for set in selected {
        if loaded.stack(&set.stack).is_some() {
            updated.upsert(set.clone());
        }
    }
    let on_disk = std::fs::read_to_string(lock_path).unwrap_or_default();
    let wanted = updated.to_yaml();
    if on_disk == wanted {
        return Ok(());
    }
    if check {
        out.lock_stale = true;
        let label = display_path(lock_path, &loaded.base_dir);
        let (a, b) = (format!("a/{label}"), format!("b/{label}"));
        let diff = crate::report::from_plan::unified(&a, &b, on_disk.as_bytes(), wanted.as_bytes());
        out.diff.push_str(&diff.unwrap_or_default());
    } else {
        lock::save(&updated, lock_path).map_err(|e| Error::Io {
            what: format!("cannot write {}", lock_path.display()),
            source: std::io::Error::other(e.to_string()),
        })?;
    }
    Ok(())
}
