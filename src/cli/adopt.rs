//! `stackbot adopt <STACK_DIR> --into <DIR>`: turn an existing csctl stack directory into a
//! stackbot setup (`DIR/stackbot.yaml`, `DIR/stackbot.lock`, the template directory) that
//! renders the very same stack. The work is [`crate::adopt`]; this reads and writes.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::{Format, Global};
use crate::adopt::{self, Adoption, Layout};
use crate::config;
use crate::error::{ExitStatus, InvalidInput};
use crate::lock::{self, LOCK_FILE, Lock};
use crate::render;

/// Adopt an existing csctl stack directory as a stackbot setup.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Every version-bearing value of the stack (the Kubernetes version in all its spellings, the node
image name, URL and sha256, chart versions, chart names carrying the minor) becomes a template
expression; everything else is copied byte for byte. The result is checked before anything is
written: rendering it reproduces STACK_DIR exactly. Values that could mean two things are
refused (exit 2) with the file, line and field.

Writes DIR/stackbot.yaml, DIR/stackbot.lock and DIR/templates/<provider>/<name>/. Adopting
another minor of the same stack into the same DIR adds its release set to the lock when the
setup's templates render that tree exactly.

Examples:
  stackbot adopt providers/openstack/scs2 --into .
  stackbot -c stackbot.yaml render          # writes cluster-stacks/openstack/scs2/1-34/
  stackbot adopt old/1-33 --into . --dry-run")]
pub struct Args {
    /// The csctl stack directory (the one holding csctl.yaml).
    #[arg(value_name = "STACK_DIR")]
    pub stack_dir: PathBuf,
    /// Directory of the new setup (created if missing).
    #[arg(long, value_name = "DIR")]
    pub into: PathBuf,
    /// Show what would be written; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

fn invalid(msg: impl std::fmt::Display) -> anyhow::Error {
    InvalidInput::from_display(msg).into()
}

/// Empty directories cannot be reproduced from files; csctl would package them.
fn empty_dirs(dir: &Path, rel: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut any = false;
    for e in entries.flatten() {
        any = true;
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            let name = e.file_name().to_string_lossy().into_owned();
            let sub = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            empty_dirs(&e.path(), &sub, out);
        }
    }
    if !any && !rel.is_empty() {
        out.push(rel.to_string());
    }
}

/// What is already in DIR decides whether this adoption starts a setup or extends one.
enum Target {
    Fresh,
    /// Same stack, and its templates render this tree: only the release set is added.
    AddMinor,
}

fn target(
    a: &Args,
    adoption: &Adoption,
    layout: &Layout,
    tree: &crate::model::FileTree,
) -> anyhow::Result<Target> {
    let cfg_path = a.into.join("stackbot.yaml");
    let templates_dir = a.into.join(&layout.templates);
    if cfg_path.exists() {
        let loaded = config::load(&cfg_path)?;
        let Some(stack) = loaded.stack(&adoption.stack) else {
            return Err(invalid(format!(
                "{}: already configures other stacks, not `{}`\n  hint: adopt into a new directory and copy its `stacks:` entry into this file",
                cfg_path.display(),
                adoption.stack
            )));
        };
        // The setup's templates must render this tree from its release set: then the two
        // stacks differ only in what the release sets pin.
        let templates = render::load_templates(&loaded.resolve(&stack.templates))
            .map_err(super::render::render_error)?;
        let rendered = render::render_stack(&templates, stack, &adoption.release_set);
        let differs = match &rendered {
            Ok(out) => out
                .keys()
                .chain(tree.keys())
                .find(|p| out.get(*p) != tree.get(*p))
                .cloned(),
            Err(e) => Some(e.to_string()),
        };
        if let Some(what) = differs {
            return Err(invalid(format!(
                "{}: the templates of `{}` do not render {} from its release set (first difference: {what})\n  hint: the stacks differ in more than version-bearing values; adopt into a new directory and compare",
                cfg_path.display(),
                adoption.stack,
                a.stack_dir.display()
            )));
        }
        let lock = Lock::load(&a.into.join(LOCK_FILE)).map_err(invalid)?;
        if let Some(old) = lock.get(&adoption.stack, adoption.kubernetes.minor())
            && old != &adoption.release_set
        {
            return Err(invalid(format!(
                "{}: already holds a different release set for {} {} ({})\n  hint: adopt into a new directory, or remove that set first",
                a.into.join(LOCK_FILE).display(),
                adoption.stack,
                adoption.kubernetes.minor(),
                old.kubernetes
            )));
        }
        return Ok(Target::AddMinor);
    }
    if templates_dir.exists() {
        return Err(invalid(format!(
            "{}: exists but there is no stackbot.yaml beside it\n  hint: adopt into an empty directory",
            templates_dir.display()
        )));
    }
    Ok(Target::Fresh)
}

/// Adopt, check the target, write.
pub fn run(a: &Args, g: &Global) -> anyhow::Result<ExitStatus> {
    let meta = std::fs::metadata(&a.stack_dir).map_err(|e| {
        invalid(format!(
            "{}: cannot read it ({e})\n  hint: pass the csctl stack directory (the one holding csctl.yaml)",
            a.stack_dir.display()
        ))
    })?;
    if !meta.is_dir() {
        return Err(invalid(format!(
            "{}: is not a directory\n  hint: pass the csctl stack directory (the one holding csctl.yaml)",
            a.stack_dir.display()
        )));
    }
    let tree = render::read_tree(&a.stack_dir).map_err(super::render::render_error)?;
    let source = a.stack_dir.display().to_string();
    let adoption = adopt::adopt(&tree, |id| Layout::conventional(id, &source)).map_err(|e| {
        let label = a.stack_dir.display().to_string();
        let msg = format!("{}/{e}", label.trim_end_matches('/'));
        if e.is_invalid_input() {
            invalid(msg)
        } else {
            anyhow::anyhow!(msg)
        }
    })?;
    let mut notes = adoption.notes.clone();
    let mut empty = Vec::new();
    empty_dirs(&a.stack_dir, "", &mut empty);
    for d in empty {
        notes.push(format!(
            "{d}/: empty directory, not reproduced (templates hold files only)"
        ));
    }
    let layout = Layout::conventional(&adoption.stack, &source);
    let kind = target(a, &adoption, &layout, &tree)?;
    let minor = adoption.kubernetes.minor();
    let output = a.into.join(&layout.output).join(minor.dashed());

    if !a.dry_run {
        std::fs::create_dir_all(&a.into)
            .with_context(|| format!("creating {}", a.into.display()))?;
        let lock_path = a.into.join(LOCK_FILE);
        match kind {
            Target::Fresh => {
                render::replace_dir(&a.into.join(&layout.templates), &adoption.templates)
                    .with_context(|| format!("writing {}", layout.templates.display()))?;
                adoption
                    .lock()
                    .save(&lock_path)
                    .map_err(anyhow::Error::from)?;
                lock::write_atomic(&a.into.join("stackbot.yaml"), adoption.config.as_bytes())
                    .with_context(|| format!("writing {}/stackbot.yaml", a.into.display()))?;
            }
            Target::AddMinor => {
                let mut lock = Lock::load(&lock_path).map_err(invalid)?;
                lock.upsert(adoption.release_set.clone());
                lock.save(&lock_path).map_err(anyhow::Error::from)?;
            }
        }
    }

    if g.format == Format::Json {
        let v = serde_json::json!({
            "stack": adoption.stack.to_string(),
            "kubernetes": adoption.kubernetes.to_string(),
            "into": a.into,
            "config": a.into.join("stackbot.yaml"),
            "lock": a.into.join(LOCK_FILE),
            "templates": a.into.join(&layout.templates),
            "output": output,
            "added_minor": matches!(kind, Target::AddMinor),
            "dry_run": a.dry_run,
            "release_set": adoption.release_set,
            "templated": adoption.files,
            "verbatim": adoption.verbatim,
            "notes": notes,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else if !g.quiet {
        let verb = if a.dry_run { "would adopt" } else { "adopted" };
        println!(
            "{verb} {} {} from {}: {} files templated, {} copied byte for byte",
            adoption.stack,
            adoption.kubernetes,
            a.stack_dir.display(),
            adoption.files.len(),
            adoption.verbatim
        );
        for f in &adoption.files {
            println!("  {}", f.template);
            for r in &f.replacements {
                let field = if r.field.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", r.field)
                };
                println!(
                    "    line {}{field}: {} -> {}",
                    r.line, r.literal, r.expression
                );
            }
        }
        for n in &notes {
            println!("note: {n}");
        }
        if matches!(kind, Target::AddMinor) {
            println!(
                "the templates in {} already fit: added the {minor} release set to {}",
                a.into.join(&layout.templates).display(),
                a.into.join(LOCK_FILE).display()
            );
        }
        let cfg = a.into.join("stackbot.yaml");
        println!(
            "next: stackbot -c {} render   # writes {}, byte for byte the same as {}",
            cfg.display(),
            output.display(),
            a.stack_dir.display()
        );
    }
    Ok(ExitStatus::Success)
}
