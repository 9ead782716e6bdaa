//! `stackbot validate`: check the configuration and test-render every template tree in
//! memory, so a broken template fails in CI before a release needs it.

use super::{Format, Global};
use crate::config;
use crate::error::{ExitStatus, InvalidInput};
use crate::lock::{LOCK_FILE, Lock};
use crate::render;

/// Check stackbot.yaml, stackbot.lock and every stack's templates without writing anything.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Each stack's templates are rendered in memory against its release sets in stackbot.lock, or
against a sample set built from the config when the lock has none. Nothing is written.

Examples:
  stackbot validate
  stackbot -c other/stackbot.yaml validate
  stackbot validate --format json")]
pub struct Args {}

/// Validate and report.
pub fn run(_a: &Args, g: &Global) -> anyhow::Result<ExitStatus> {
    let loaded = config::load(&g.config)?;
    let lock_path = loaded.base_dir.join(LOCK_FILE);
    let lock = Lock::load(&lock_path).map_err(InvalidInput::from_display)?;
    for set in &lock.release_sets {
        if loaded.stack(&set.stack).is_none() {
            return Err(InvalidInput(format!(
                "{}: release set for `{}` {}: the stack is not configured in {}\n  hint: add the stack or remove the set",
                lock_path.display(),
                set.stack,
                set.kubernetes,
                loaded.path.display()
            ))
            .into());
        }
    }
    let mut report = Vec::new();
    for stack in &loaded.config.stacks {
        let id = stack.id();
        let dir = loaded.resolve(&stack.templates);
        let templates = render::load_templates(&dir).map_err(super::render::render_error)?;
        let mut sets: Vec<_> = lock
            .release_sets
            .iter()
            .filter(|s| s.stack == id)
            .cloned()
            .collect();
        let source = if sets.is_empty() {
            sets.push(render::sample_release_set(stack));
            "a sample release set"
        } else {
            "stackbot.lock"
        };
        for set in &sets {
            render::render_stack(&templates, stack, set).map_err(|e| {
                super::render::render_error(e.under_root(&stack.templates))
                    .context(format!("test-rendering {id} {}", set.kubernetes))
            })?;
        }
        report.push(serde_json::json!({
            "stack": id.to_string(),
            "templates": stack.templates,
            "files": templates.files.len(),
            "release_sets": sets.iter().map(|s| s.kubernetes.to_string()).collect::<Vec<_>>(),
            "source": source,
        }));
        if g.format != Format::Json && !g.quiet {
            println!(
                "ok {id}: {} files in {} render against {} ({})",
                templates.files.len(),
                stack.templates.display(),
                source,
                sets.iter()
                    .map(|s| s.kubernetes.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    if g.format == Format::Json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "config": loaded.path,
                "valid": true,
                "stacks": report,
            }))?
        );
    } else if !g.quiet {
        println!("ok {}", loaded.path.display());
    }
    Ok(ExitStatus::Success)
}
