//! `stackbot adopt <STACK_DIR> --into <DIR>`: turn an existing csctl stack directory into a
//! stackbot setup (`DIR/stackbot.yaml`, `DIR/stackbot.lock`, the template directory) that
//! renders the very same stack. The work is [`crate::pipeline::adopt`]; this parses and prints.

use std::path::PathBuf;

use super::{Format, Global};
use crate::error::ExitStatus;
use crate::lock::LOCK_FILE;

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

/// Adopt, then report.
pub fn run(a: &Args, g: &Global) -> anyhow::Result<ExitStatus> {
    let r = crate::pipeline::adopt::adopt(&crate::pipeline::adopt::Request {
        stack_dir: a.stack_dir.clone(),
        into: a.into.clone(),
        dry_run: a.dry_run,
    })?;
    let minor = r.adoption.kubernetes.minor();
    if g.format == Format::Json {
        let v = serde_json::json!({
            "stack": r.adoption.stack.to_string(),
            "kubernetes": r.adoption.kubernetes.to_string(),
            "into": a.into,
            "config": a.into.join("stackbot.yaml"),
            "lock": a.into.join(LOCK_FILE),
            "templates": a.into.join(&r.layout.templates),
            "output": r.output,
            "added_minor": r.added_minor,
            "dry_run": a.dry_run,
            "release_set": r.adoption.release_set,
            "templated": r.adoption.files,
            "verbatim": r.adoption.verbatim,
            "notes": r.notes,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else if !g.quiet {
        let verb = if a.dry_run { "would adopt" } else { "adopted" };
        println!(
            "{verb} {} {} from {}: {} files templated, {} copied byte for byte",
            r.adoption.stack,
            r.adoption.kubernetes,
            a.stack_dir.display(),
            r.adoption.files.len(),
            r.adoption.verbatim
        );
        for f in &r.adoption.files {
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
        for n in &r.notes {
            println!("note: {n}");
        }
        if r.added_minor {
            println!(
                "the templates in {} already fit: added the {minor} release set to {}",
                a.into.join(&r.layout.templates).display(),
                a.into.join(LOCK_FILE).display()
            );
        }
        let cfg = a.into.join("stackbot.yaml");
        println!(
            "next: stackbot -c {} render   # writes {}, byte for byte the same as {}",
            cfg.display(),
            r.output.display(),
            a.stack_dir.display()
        );
    }
    Ok(ExitStatus::Success)
}
