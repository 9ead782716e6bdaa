//! `stackbot render`: render every stack × minor of the lock (or of `--release-set`) into
//! its output directory, or with `--check` compare without writing (CI drift guard).

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Context as _;
use serde::Serialize;

use super::{Format, Global};
use crate::config;
use crate::error::{ExitStatus, InvalidInput};
use crate::lock::{self, LOCK_FILE, Lock};
use crate::model::{Minor, ReleaseSet, StackId};
use crate::render::{self, RenderError, TemplateTree};

/// Render cluster-stack directories from the templates and release sets.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Release sets come from stackbot.lock (beside the config) unless --release-set is given;
--release-set renders those sets and records them in stackbot.lock.

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
}

/// What happened to one stack × minor.
#[derive(Debug, Serialize)]
struct Outcome {
    stack: String,
    minor: String,
    kubernetes: String,
    dir: String,
    /// `unchanged`, `updated` (written) or `stale` (`--check`).
    status: &'static str,
    changed_files: Vec<String>,
}

fn invalid(e: impl std::fmt::Display) -> anyhow::Error {
    InvalidInput::from_display(e).into()
}

/// Template and release-set problems are the user's (exit 2); I/O is the machine's (exit 1).
pub(crate) fn render_error(e: RenderError) -> anyhow::Error {
    if e.is_invalid_input() {
        invalid(e)
    } else {
        e.into()
    }
}

/// Render (or check) every selected set.
pub fn run(a: &Args, g: &Global) -> anyhow::Result<ExitStatus> {
    let loaded = config::load(&g.config)?;
    let lock_path = loaded.base_dir.join(LOCK_FILE);
    let lock = Lock::load(&lock_path).map_err(invalid)?;
    let from_file = match &a.release_set {
        Some(f) => {
            // An unreadable `--release-set` is a wrong argument, not a transient failure.
            let text = std::fs::read_to_string(f).map_err(|e| {
                invalid(format!(
                    "--release-set {}: cannot read it ({e}); pass an existing YAML or JSON file",
                    f.display()
                ))
            })?;
            Some(lock::parse_release_sets(&text, f).map_err(invalid)?)
        }
        None => None,
    };
    let candidates: Vec<ReleaseSet> = from_file
        .clone()
        .unwrap_or_else(|| lock.release_sets.clone());
    let selected: Vec<ReleaseSet> = candidates
        .into_iter()
        .filter(|s| a.stack.as_ref().is_none_or(|id| &s.stack == id))
        .filter(|s| a.minor.is_none_or(|m| s.minor() == m))
        .collect();
    if selected.is_empty() {
        return Err(invalid(format!(
            "nothing to render: no release set{}{} in {}\n  hint: pass `--release-set FILE` or run `stackbot release`",
            a.stack
                .as_ref()
                .map(|s| format!(" for {s}"))
                .unwrap_or_default(),
            a.minor.map(|m| format!(" {m}")).unwrap_or_default(),
            a.release_set.as_ref().unwrap_or(&lock_path).display(),
        )));
    }

    let mut templates: BTreeMap<StackId, TemplateTree> = BTreeMap::new();
    let mut outcomes = Vec::new();
    let mut diff = String::new();
    let mut writes = Vec::new();
    for set in &selected {
        let Some(stack) = loaded.stack(&set.stack) else {
            if from_file.is_some() {
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
            continue;
        };
        if let config::MinorSelection::List(list) = &stack.minors
            && !list
                .iter()
                .any(|m| m.parse::<Minor>().ok() == Some(set.minor()))
        {
            let msg = format!(
                "release set {} {}: minor {} is not in the stack's `minors` ({})",
                set.stack,
                set.kubernetes,
                set.minor(),
                list.join(", ")
            );
            if from_file.is_some() {
                return Err(invalid(format!(
                    "{msg}\n  hint: add \"{}\" to `minors` in {} or drop the set",
                    set.minor(),
                    loaded.path.display()
                )));
            }
            tracing::warn!("{}: skipping {msg}", lock_path.display());
            continue;
        }
        if !templates.contains_key(&set.stack) {
            let t =
                render::load_templates(&loaded.resolve(&stack.templates)).map_err(render_error)?;
            templates.insert(set.stack.clone(), t);
        }
        let tree = render::render_stack(&templates[&set.stack], stack, set).map_err(|e| {
            render_error(e.under_root(&stack.templates))
                .context(format!("rendering {} {}", set.stack, set.kubernetes))
        })?;
        let dir = render::output_dir(&loaded, stack, set.minor());
        let label = display_path(&dir, &loaded.base_dir);
        let existing = render::read_tree(&dir).map_err(render_error)?;
        let changed_files: Vec<String> = existing
            .keys()
            .chain(tree.keys())
            .filter(|p| existing.get(*p) != tree.get(*p))
            .cloned()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let status = if changed_files.is_empty() {
            "unchanged"
        } else if a.check {
            diff.push_str(&render::diff_trees(&existing, &tree, &label));
            "stale"
        } else {
            // Written below, once every set has rendered: one bad set changes nothing.
            writes.push((dir, tree));
            "updated"
        };
        outcomes.push(Outcome {
            stack: set.stack.to_string(),
            minor: set.minor().to_string(),
            kubernetes: set.kubernetes.to_string(),
            dir: label,
            status,
            changed_files,
        });
    }

    for (dir, tree) in &writes {
        render::replace_dir(dir, tree)
            .with_context(|| format!("cannot write {}", dir.display()))?;
    }

    // A --release-set run also records its sets, so the next plain `render` reproduces it.
    let mut lock_stale = false;
    if from_file.is_some() {
        let mut updated = lock.clone();
        for set in &selected {
            if loaded.stack(&set.stack).is_some() {
                updated.upsert(set.clone());
            }
        }
        let on_disk = std::fs::read_to_string(&lock_path).unwrap_or_default();
        let wanted = updated.to_yaml();
        if on_disk != wanted {
            if a.check {
                lock_stale = true;
                let label = display_path(&lock_path, &loaded.base_dir);
                let d = similar::TextDiff::from_lines(&on_disk, &wanted);
                diff.push_str(
                    &d.unified_diff()
                        .header(&format!("a/{label}"), &format!("b/{label}"))
                        .to_string(),
                );
            } else {
                updated
                    .save(&lock_path)
                    .with_context(|| format!("cannot write {}", lock_path.display()))?;
            }
        }
    }

    let stale = lock_stale || outcomes.iter().any(|o| o.status == "stale");
    report(&outcomes, lock_stale, &diff, g)?;
    Ok(if stale {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    })
}

/// `dir` relative to the config's directory when it is below it (stable in diffs and CI logs).
fn display_path(p: &std::path::Path, base: &std::path::Path) -> String {
    let shown = p.strip_prefix(base).unwrap_or(p);
    shown.to_string_lossy().trim_start_matches("./").to_string()
}

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
                eprintln!(
                    "| stack | minor | kubernetes | directory | status |\n|---|---|---|---|---|"
                );
            }
            for o in outcomes {
                if g.quiet && o.status == "unchanged" {
                    continue;
                }
                let files = if o.changed_files.is_empty() {
                    String::new()
                } else {
                    format!(" ({} files)", o.changed_files.len())
                };
                if md {
                    eprintln!(
                        "| {} | {} | {} | `{}` | {}{} |",
                        o.stack, o.minor, o.kubernetes, o.dir, o.status, files
                    );
                } else {
                    eprintln!(
                        "{} {} ({}) -> {}: {}{}",
                        o.stack, o.minor, o.kubernetes, o.dir, o.status, files
                    );
                }
            }
            if lock_stale {
                eprintln!("stackbot.lock: stale (run without --check to record the release sets)");
            }
            if outcomes.iter().any(|o| o.status == "stale") {
                eprintln!("rendered output is stale: run `stackbot render` and commit the result");
            }
        }
    }
    Ok(())
}
