//! Release sets → rendered trees: what every selected stack × minor should look like.

use std::collections::BTreeMap;
use std::path::{Component, Path};

use crate::config::Loaded;
use crate::error::InvalidInput;
use crate::model::{Minor, ReleaseSet};
use crate::plan::{Desired, Skipped};

use super::{Context, Error, Selection};

/// The repository path of a stack × minor's rendered directory: the stack's `output` (relative
/// to `stackbot.yaml`, which sits at the repository root) plus `<major>-<minor>`.
pub fn repo_path(loaded: &Loaded, output: &Path, minor: Minor) -> Result<String, InvalidInput> {
    let mut parts = Vec::new();
    for c in output.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::CurDir => {}
            _ => {
                return Err(InvalidInput(format!(
                    "{}: stack `output: {}` must be a relative path inside the repository (no `..`, not absolute)",
                    loaded.path.display(),
                    output.display()
                )));
            }
        }
    }
    parts.push(minor.dashed());
    Ok(parts.join("/"))
}

/// What the detection (or `--release-set`) offered, before rendering.
#[derive(Debug, Default)]
pub struct Offered {
    pub sets: Vec<ReleaseSet>,
    /// Stack × minors without a complete release set, with what is missing.
    pub skipped: Vec<Skipped>,
    pub warnings: Vec<String>,
    /// The detection behind the sets (`None` with `--release-set`), for the status report.
    pub detected: Option<super::detect::Detected>,
}

/// The complete release sets to release: from `--release-set`, else from upstream detection.
pub fn offered(ctx: &Context, sel: &Selection) -> Result<Offered, Error> {
    match &sel.release_set {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| InvalidInput(format!("{}: {e}", path.display())))?;
            let sets =
                crate::lock::parse_release_sets(&text, path).map_err(InvalidInput::from_display)?;
            Ok(Offered {
                sets,
                ..Offered::default()
            })
        }
        None => {
            let opts = super::detect::options(ctx, sel.snapshot.clone(), sel.cache_dir.clone());
            // The dashboard shows end-of-life dates: read the schedule for it too.
            let schedule = ctx.loaded.config.dashboard.enabled;
            let (report, data, _) = super::detect::detect_with(ctx, &opts, schedule)?;
            let warnings = report.warnings.clone();
            let detected = super::detect::Detected::new(report.clone(), &data);
            let (sets, skipped) = super::detect::complete_sets(report);
            Ok(Offered {
                sets,
                skipped,
                warnings,
                detected: Some(detected),
            })
        }
    }
}

/// Release sets → rendered trees, filtered by the selection. Sorted by stack and minor.
pub fn desired(ctx: &Context, sel: &Selection) -> Result<(Vec<Desired>, Offered), Error> {
    let loaded = &ctx.loaded;
    if let Some(s) = &sel.stack
        && loaded.stack(s).is_none()
    {
        return Err(InvalidInput(format!(
            "--stack {s}: not configured in {}",
            loaded.path.display()
        ))
        .into());
    }
    let mut offered = offered(ctx, sel)?;
    let selected = |what: &str| {
        sel.stack
            .as_ref()
            .is_none_or(|x| what.starts_with(&x.to_string()))
            && sel.minor.is_none_or(|m| what.ends_with(&format!(" {m}")))
    };
    offered.skipped.retain(|s| selected(&s.what));
    let mut out = Vec::new();
    let mut templates = BTreeMap::new();
    for set in &offered.sets {
        let minor = set.minor();
        if sel.stack.as_ref().is_some_and(|s| s != &set.stack)
            || sel.minor.is_some_and(|m| m != minor)
        {
            continue;
        }
        let stack = loaded.stack(&set.stack).ok_or_else(|| {
            InvalidInput(format!(
                "release set for `{}` names a stack that is not configured in {}",
                set.stack,
                loaded.path.display()
            ))
        })?;
        if !templates.contains_key(&set.stack) {
            let dir = loaded.resolve(&stack.templates);
            templates.insert(set.stack.clone(), crate::render::load_templates(&dir)?);
        }
        let rendered = crate::render::render_stack(&templates[&set.stack], stack, set)?;
        out.push(Desired {
            stack: set.stack.clone(),
            minor,
            path: repo_path(loaded, &stack.output, minor)?,
            set: set.clone(),
            rendered,
        });
    }
    out.sort_by(|a, b| (&a.stack, a.minor).cmp(&(&b.stack, b.minor)));
    Ok((out, offered))
}
