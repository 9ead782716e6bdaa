//! config + lock → render in memory: `stackbot validate`, so a broken template fails in CI
//! before a release needs it. Writes nothing.

use serde::Serialize;

use crate::error::InvalidInput;
use crate::lock::{LOCK_FILE, Lock};
use crate::render;

use super::{Context, Error};

/// One stack's check.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    pub stack: String,
    pub templates: std::path::PathBuf,
    /// Template files.
    pub files: usize,
    /// The Kubernetes versions of the sets rendered.
    pub release_sets: Vec<String>,
    /// `stackbot.lock`, or `a sample release set` when the lock has none for the stack.
    pub source: &'static str,
    /// What validating could not check or found doubtful (e.g. a listed minor with no
    /// upstream data to check it against).
    pub warnings: Vec<String>,
}

/// Refuse listed minors that upstream data shows cannot be released (they do not exist or
/// are past end of life); warn when there is no data (`upstream.snapshot`) to tell.
fn check_minors(ctx: &Context) -> Result<Vec<(crate::model::StackId, String)>, Error> {
    let loaded = &ctx.loaded;
    let listed = loaded
        .config
        .stacks
        .iter()
        .any(|s| matches!(s.minors, crate::config::MinorSelection::List(_)));
    if !listed {
        return Ok(Vec::new());
    }
    let replay = match &loaded.config.upstream.snapshot {
        Some(p) => Some(
            crate::upstream::snapshot::opened_or_open(ctx.replay.as_ref(), &loaded.resolve(p))
                .map_err(InvalidInput::from_display)?,
        ),
        None => None,
    };
    let none = crate::upstream::UpstreamData::default();
    let data = replay.as_deref().map_or(&none, |r| r.data());
    let mut warnings = Vec::new();
    for (stack, minor, verdict) in crate::resolve::check_listed(&loaded.config, data, ctx.today) {
        match verdict {
            crate::resolve::ListedMinor::Releasable => {}
            crate::resolve::ListedMinor::Upcoming(w) => warnings.push((stack, w)),
            crate::resolve::ListedMinor::Unknown => warnings.push((
                stack,
                format!(
                    "minor {minor} not checked against upstream (no `upstream.snapshot` holding the Kubernetes schedule or releases that know it): a minor that does not exist or is past its end of life is never released"
                ),
            )),
            crate::resolve::ListedMinor::Refused(why) => {
                return Err(InvalidInput(format!(
                    "{}: stack `{stack}` lists minor {minor} in `minors`: {why}\n  hint: list only released minors not past their end of life, or use `minors: supported`",
                    loaded.path.display()
                ))
                .into());
            }
        }
    }
    Ok(warnings)
}

/// Check the lock against the configuration and test-render every stack's templates against
/// its release sets in the lock (or a sample set built from the configuration).
pub fn validate(ctx: &Context) -> Result<Vec<Checked>, Error> {
    let loaded = &ctx.loaded;
    let lock_path = loaded.base_dir.join(LOCK_FILE);
    let lock = crate::lock::load(&lock_path).map_err(InvalidInput::from_display)?;
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
    let minor_warnings = check_minors(ctx)?;
    let mut out = Vec::new();
    for stack in &loaded.config.stacks {
        let id = stack.id();
        let templates = render::load_templates(&loaded.resolve(&stack.templates))?;
        let mut sets: Vec<_> = lock
            .release_sets
            .iter()
            .filter(|s| s.stack == id)
            .cloned()
            .collect();
        let source = if sets.is_empty() {
            "a sample release set from the configuration"
        } else {
            "stackbot.lock and a sample release set from the configuration"
        };
        for set in &sets {
            render::render_stack(&templates, stack, set, &lock).map_err(|e| {
                Error::from(e.under_root(&stack.templates)).context(format!(
                    "test-rendering {id} {} from {LOCK_FILE}",
                    set.kubernetes
                ))
            })?;
        }
        // The configuration too: what a release resolves has exactly its components and
        // node image rules, so "ok" means a release would render (the lock may hold sets
        // written for another configuration). Rendered on its own: placeholders are no
        // images the lock knows.
        let sample = render::sample_release_set(stack);
        render::render_stack(&templates, stack, &sample, &Lock::default()).map_err(|e| {
            Error::from(e.under_root(&stack.templates)).context(format!(
                "test-rendering {id} with a release set made from {}'s `components` and `node_image` (what `release` resolves)",
                loaded.path.display()
            ))
        })?;
        sets.push(sample);
        out.push(Checked {
            stack: id.to_string(),
            templates: stack.templates.clone(),
            files: templates.files.len(),
            release_sets: sets.iter().map(|s| s.kubernetes.to_string()).collect(),
            source,
            warnings: minor_warnings
                .iter()
                .filter(|(s, _)| s == &id)
                .map(|(_, w)| w.clone())
                .collect(),
        });
    }
    Ok(out)
}
