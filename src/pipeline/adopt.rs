//! an existing stack directory → a stackbot setup: `stackbot adopt`. The decisions are
//! [`crate::adopt`]'s (pure); this reads the tree, checks what is already in the target
//! directory and writes.

use std::path::{Path, PathBuf};

use crate::adopt::{self, Adoption, Layout};
use crate::config;
use crate::error::InvalidInput;
use crate::lock::{self, LOCK_FILE};
use crate::render;

use super::Error;

/// What to adopt, and where.
#[derive(Debug, Clone)]
pub struct Request {
    /// The csctl stack directory (the one holding csctl.yaml).
    pub stack_dir: PathBuf,
    /// Directory of the new setup.
    pub into: PathBuf,
    /// Write nothing.
    pub dry_run: bool,
}

/// What adopting did (or would do).
#[derive(Debug)]
pub struct Adopted {
    pub adoption: Adoption,
    pub layout: Layout,
    /// Notes for the user (values kept as written, empty directories, …).
    pub notes: Vec<String>,
    /// Whether the setup existed and only gained this minor's release set.
    pub added_minor: bool,
    /// Where `render` will write the stack.
    pub output: PathBuf,
}

fn invalid(msg: impl std::fmt::Display) -> Error {
    Error::Invalid(InvalidInput::from_display(msg))
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io { what, source }
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
    a: &Request,
    adoption: &Adoption,
    layout: &Layout,
    tree: &crate::model::FileTree,
) -> Result<Target, Error> {
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
        let templates = render::load_templates(&loaded.resolve(&stack.templates))?;
        let lock = lock::load(&a.into.join(LOCK_FILE)).map_err(invalid)?;
        let mut known = lock.clone();
        adoption.add_to(&mut known);
        let rendered = render::render_stack(&templates, stack, &adoption.release_set, &known);
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

/// Adopt `req.stack_dir`, check what is already in `req.into`, write (unless a dry run).
pub fn adopt(a: &Request) -> Result<Adopted, Error> {
    let why = match std::fs::metadata(&a.stack_dir) {
        Ok(m) if m.is_dir() => None,
        Ok(_) => Some("is not a directory".to_string()),
        Err(e) => Some(format!("cannot read it ({e})")),
    };
    if let Some(why) = why {
        return Err(invalid(format!(
            "{}: {why}\n  hint: pass the csctl stack directory (the one holding csctl.yaml)",
            a.stack_dir.display()
        )));
    }
    let tree = render::read_tree(&a.stack_dir)?;
    let source = a.stack_dir.display().to_string();
    // Classified where every error is (`exit::class_of_chain`), not remapped here.
    let adoption =
        adopt::adopt(&tree, |id| Layout::conventional(id, &source)).map_err(|inner| {
            Error::Adopt {
                dir: a.stack_dir.display().to_string(),
                inner: Box::new(inner),
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
        std::fs::create_dir_all(&a.into).map_err(io(format!("creating {}", a.into.display())))?;
        let lock_path = a.into.join(LOCK_FILE);
        match kind {
            Target::Fresh => {
                render::replace_dir(&a.into.join(&layout.templates), &adoption.templates)
                    .map_err(io(format!("writing {}", layout.templates.display())))?;
                lock::save(&adoption.lock(), &lock_path).map_err(invalid)?;
                lock::write_atomic(&a.into.join("stackbot.yaml"), adoption.config.as_bytes())
                    .map_err(io(format!("writing {}/stackbot.yaml", a.into.display())))?;
            }
            Target::AddMinor => {
                let mut known = lock::load(&lock_path).map_err(invalid)?;
                adoption.add_to(&mut known);
                lock::save(&known, &lock_path).map_err(invalid)?;
            }
        }
    }
    Ok(Adopted {
        adoption,
        layout,
        notes,
        added_minor: matches!(kind, Target::AddMinor),
        output,
    })
}
