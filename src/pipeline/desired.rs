//! Release sets → rendered trees: what every selected stack × minor should look like.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path};

use crate::config::Loaded;
use crate::error::InvalidInput;
use crate::model::{Minor, ReleaseSet, StackId};
use crate::plan::{Desired, Skipped};
use crate::resolve::HeldBack;

use super::{Context, Error, Selection};

/// The repository path of a stack × minor's rendered directory: the stack's `output` (relative
/// to `stackbot.yaml`, which sits at the repository root) plus `<major>-<minor>`.
pub fn repo_path(loaded: &Loaded, output: &Path, minor: Minor) -> Result<String, InvalidInput> {
    let mut parts = repo_relative(loaded, "output", output)?;
    parts.push(minor.dashed());
    Ok(parts.join("/"))
}

/// The components of a configured directory (`key`: `output`, `templates`) as a path inside
/// the repository (relative to `stackbot.yaml`, which sits at its root).
fn repo_relative(loaded: &Loaded, key: &str, dir: &Path) -> Result<Vec<String>, InvalidInput> {
    let mut parts = Vec::new();
    for c in dir.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::CurDir => {}
            _ => {
                return Err(InvalidInput(format!(
                    "{}: stack `{key}: {}` must be a relative path inside the repository (no `..`, not absolute)",
                    loaded.path.display(),
                    dir.display()
                )));
            }
        }
    }
    Ok(parts)
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
    /// Why upstream offered what it did, by series prefix: every error (transient) and gap
    /// that kept the release set below the newest patch (from detection; empty with
    /// `--release-set`).
    pub held_back: BTreeMap<String, HeldBack>,
    /// Series that could not be rendered because upstream data is missing (transient: the next
    /// run retries; the other series go on).
    pub failed: Vec<Skipped>,
    /// The checkout's `stackbot.lock` ([`super::detect::checkout_lock`]), read once for the run:
    /// detection, the shared content and the other minors' directories all render from it.
    pub checkout: Option<crate::lock::Lock>,
}

/// The complete release sets to release: from `--release-set`, else from upstream detection.
pub fn offered(ctx: &Context, sel: &Selection) -> Result<Offered, Error> {
    let checkout = super::detect::checkout_lock(ctx);
    match &sel.release_set {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| InvalidInput(format!("{}: {e}", path.display())))?;
            let sets =
                crate::lock::parse_release_sets(&text, path).map_err(InvalidInput::from_display)?;
            Ok(Offered {
                sets,
                checkout,
                ..Offered::default()
            })
        }
        None => {
            let opts = super::detect::options(ctx, sel.snapshot.clone(), sel.cache_dir.clone());
            // The dashboard shows end-of-life dates: read the schedule for it too.
            let schedule = ctx.loaded.config.dashboard.enabled;
            let (report, data, _) =
                super::detect::detect_knowing(ctx, &opts, schedule, checkout.as_ref())?;
            let warnings = report.warnings.clone();
            let detected = super::detect::Detected::new(report.clone(), &data);
            let held_back = report
                .minors
                .iter()
                .map(|m| {
                    (
                        crate::model::series_prefix(&m.stack, m.minor),
                        m.held_back.clone(),
                    )
                })
                .collect();
            let (sets, skipped) = super::detect::complete_sets(report);
            Ok(Offered {
                sets,
                skipped,
                warnings,
                detected: Some(detected),
                held_back,
                failed: Vec::new(),
                checkout,
            })
        }
    }
}

/// Release sets → rendered trees, filtered by the selection. Sorted by stack and minor.
pub fn desired(ctx: &Context, sel: &Selection) -> Result<(Vec<Desired>, Offered), Error> {
    desired_recorded(ctx, sel, |checkout| Ok(checkout.cloned()))
}

/// Whether a skipped line is about what the selection names: the subject's stack and minor,
/// compared (`--stack openstack/scs` is not `openstack/scs2`).
fn selected(sel: &Selection, what: &crate::plan::Subject) -> bool {
    match what.stack_minor() {
        Some((stack, minor)) => {
            sel.stack.as_ref().is_none_or(|x| x == stack) && sel.minor.is_none_or(|m| m == minor)
        }
        None => true,
    }
}

/// [`desired`], where `recorded` gives the lock that says what was last released (asked only
/// when a set lacks its publication date: the releases API is down and markers carry none;
/// given the checkout's lock as the run read it). The patch the lock recorded keeps its date,
/// so an outage does not change the rendering and cause a release.
pub fn desired_recorded(
    ctx: &Context,
    sel: &Selection,
    recorded: impl FnOnce(Option<&crate::lock::Lock>) -> Result<Option<crate::lock::Lock>, Error>,
) -> Result<(Vec<Desired>, Offered), Error> {
    let loaded = &ctx.loaded;
    check_stack(loaded, sel)?;
    let mut offered = offered(ctx, sel)?;
    if let Some(m) = sel.minor {
        check_minor(m, sel.stack.as_ref(), &offered)?;
    }
    offered.skipped.retain(|s| selected(sel, &s.what));
    let mut out = Vec::new();
    let mut templates = BTreeMap::new();
    let recorded = if offered.sets.iter().any(|s| s.published_at.is_none()) {
        recorded(offered.checkout.as_ref())?
    } else {
        None
    };
    // The releases API is down and markers carry no dates: the patch the lock already
    // recorded keeps its publication date, so the rendering does not change for it.
    for set in offered.sets.iter_mut() {
        if set.published_at.is_none()
            && let Some(r) = recorded
                .as_ref()
                .and_then(|l| l.get(&set.stack, set.minor()))
                .filter(|r| r.kubernetes == set.kubernetes)
        {
            set.published_at = r.published_at;
        }
    }
    let checkout = offered.checkout.clone().unwrap_or_default();
    let mut known = known_after(ctx, &checkout, &mut offered.sets, offered.detected.as_ref());
    let sets = std::mem::take(&mut offered.sets);
    for mut set in sets {
        let minor = set.minor();
        if sel.stack.as_ref().is_some_and(|s| s != &set.stack)
            || sel.minor.is_some_and(|m| m != minor)
        {
            offered.sets.push(set);
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
            templates.insert(
                set.stack.clone(),
                std::sync::Arc::new(crate::render::load_templates(&dir)?),
            );
        }
        let beside = match vendor(ctx, sel, stack, &mut templates, &mut set) {
            Ok(v) => v,
            Err(failed) => {
                offered.failed.push(*failed);
                offered.sets.push(set);
                continue;
            }
        };
        if !beside.is_empty() {
            known.upsert(set.clone());
        }
        let t = &templates[&set.stack];
        let rendered = match crate::render::render_stack(t, stack, &set, &known) {
            Ok(r) => r,
            // Missing data or chart archives: this series waits, the others go on.
            Err(e) => {
                offered
                    .failed
                    .push(cannot_render(e, t, stack, &set, &known)?);
                offered.sets.push(set);
                continue;
            }
        };
        out.push(Desired {
            stack: set.stack.clone(),
            minor,
            path: repo_path(loaded, &stack.output, minor)?,
            set: set.clone(),
            rendered,
            stepped_over: stepped_over(&offered, &set),
            beside,
            renderer: Some(crate::plan::Renderer {
                templates: templates[&set.stack].clone(),
                stack: stack.clone(),
            }),
        });
        offered.sets.push(set);
    }
    out.sort_by(|a, b| (&a.stack, a.minor).cmp(&(&b.stack, b.minor)));
    with_other_minors(ctx, (&checkout, &known), &templates, &mut out);
    Ok((out, offered))
}

/// A render failure that data upstream may fill later (a missing chart archive, a date, a
/// digest) as the series' failure, the others going on; any other is the templates' (exit 2).
fn cannot_render(
    e: crate::render::RenderError,
    templates: &crate::render::TemplateTree,
    stack: &crate::config::StackConfig,
    set: &ReleaseSet,
    known: &crate::lock::Lock,
) -> Result<Skipped, Error> {
    let what = match &e {
        crate::render::RenderError::MissingArchives { .. } => {
            Some("the chart archives the release set pins".to_string())
        }
        _ => missing_data(templates, stack, set, known),
    };
    let Some(what) = what else {
        return Err(e.into());
    };
    let error = e.to_string();
    let reason = crate::plan::SkipReason::CannotRender { what, error };
    Ok(Skipped::stack_minor(&set.stack, set.minor(), reason))
}

/// Every release commit also brings the directories of its stack's other minors up to date:
/// the lists shared across minors (the image list, the version table) follow the lock the
/// commit writes, and a minor whose own facts this run leaves as the checkout's lock has them
/// makes no release of its own ([`crate::plan::up_to_date`]), so without this the tree after
/// a release is not what its lock renders and `render --check` calls those minors stale. Only
/// the files that differ from the checkout are written. A minor that changes in this run is
/// written by its own release.
fn with_other_minors(
    ctx: &Context,
    (checkout, known): (&crate::lock::Lock, &crate::lock::Lock),
    templates: &BTreeMap<StackId, std::sync::Arc<crate::render::TemplateTree>>,
    out: &mut [Desired],
) {
    // Nothing is released: nothing to bring along (and no minor to render again).
    if out.is_empty() {
        return;
    }
    let loaded = &ctx.loaded;
    let mut others: Vec<(StackId, Minor, crate::model::FileTree)> = Vec::new();
    for set in &known.release_sets {
        let (Some(stack), Some(t)) = (loaded.stack(&set.stack), templates.get(&set.stack)) else {
            continue;
        };
        if checkout.get(&set.stack, set.minor()) != Some(set) || !stack.renders(set.minor()) {
            continue;
        }
        let (Ok(tree), Ok(path)) = (
            crate::render::render_stack(t, stack, set, known),
            repo_path(loaded, &stack.output, set.minor()),
        ) else {
            continue; // `render --check` names what keeps it from rendering
        };
        let dir = crate::render::output_dir(loaded, stack, set.minor());
        let existing = crate::render::read_tree(&dir).unwrap_or_default();
        let changed = tree
            .into_iter()
            .filter(|(p, b)| existing.get(p) != Some(b))
            .map(|(p, b)| (format!("{path}/{p}"), b))
            .collect();
        others.push((set.stack.clone(), set.minor(), changed));
    }
    for d in out.iter_mut() {
        for (stack, minor, files) in &others {
            if stack == &d.stack && *minor != d.minor {
                d.beside.extend(files.clone());
            }
        }
    }
}

/// The chart archives `set` pins that its stack's templates vendor in another version only,
/// brought as `render --release-set` brings them ([`super::vendor::bring_archives`]): into the
/// templates the set renders from, and as the files its release commit adds to the template
/// directory in the repository (with the lock recording their digests, `render --check` then
/// needs no network). A series whose archive cannot be brought waits, said with the chart and
/// what to do; the other series go on.
fn vendor(
    ctx: &Context,
    sel: &Selection,
    stack: &crate::config::StackConfig,
    templates: &mut BTreeMap<StackId, std::sync::Arc<crate::render::TemplateTree>>,
    set: &mut ReleaseSet,
) -> Result<crate::model::FileTree, Box<Skipped>> {
    let t = templates.get_mut(&set.stack).expect("loaded");
    if crate::render::archives_to_fetch(t, set).is_empty() {
        return Ok(Default::default());
    }
    let (id, minor) = (set.stack.clone(), set.minor());
    let failed = |error: String| {
        let why = format!("cannot render without the chart archives the release set pins: {error}");
        Box::new(Skipped::stack_minor(
            &id,
            minor,
            crate::plan::SkipReason::Said(why),
        ))
    };
    // The commit writes into the repository: the templates must be inside it.
    let mut root = repo_relative(&ctx.loaded, "templates", &stack.templates)
        .map_err(|e| failed(format!("{e} (the fetched archives are committed there)")))?;
    let brought =
        super::vendor::bring_archives(ctx, &sel.mirrors, std::sync::Arc::make_mut(t), set)
            .map_err(|e| {
                let retry = match e.class() {
                    crate::error::Class::Transient => "; the next run retries",
                    _ => "",
                };
                failed(format!("{}{retry}", chain(&e)))
            })?;
    Ok(brought
        .into_iter()
        .map(|b| {
            tracing::info!("{}", b.line);
            root.push(b.path);
            let path = root.join("/");
            root.pop();
            (path, b.bytes)
        })
        .collect())
}

/// An error with the contexts it was wrapped in, outermost first, on one line.
fn chain(e: &Error) -> String {
    match e {
        Error::Context { context, source } => format!("{context}: {}", chain(source)),
        e => e.to_string(),
    }
}

/// `--stack` must name a configured stack.
fn check_stack(loaded: &crate::config::Loaded, sel: &Selection) -> Result<(), Error> {
    if let Some(s) = &sel.stack
        && loaded.stack(s).is_none()
    {
        let configured: Vec<String> = loaded
            .config
            .stacks
            .iter()
            .map(|c| c.id().to_string())
            .collect();
        return Err(InvalidInput(format!(
            "--stack {s}: not configured in {}; configured: {}",
            loaded.path.display(),
            configured.join(", ")
        ))
        .into());
    }
    Ok(())
}

/// What content shared across minors (the image list, the version table) renders from: the
/// checkout's lock as it is after this run records every offered set, so the minors of one
/// run agree with each other and with `render --check` afterwards.
///
/// A node image the lock has no build date for is dated with the day its Kubernetes patch was
/// published. Upstream's generator writes the day a person ran it (usually a day or two after
/// the patch); the run's own day would be closer to that, but it changes from run to run
/// until the release is merged, so every run would render a different lock, an open release
/// pull request would be rewritten daily, and a merged one would not be recognised by its
/// content. A fact of upstream renders the same on every run. Once released, the lock keeps
/// the date; with no publication date either (the releases API down), the image stays undated
/// and a template that needs the date cannot render (said, exit 1: the next run reads again).
fn known_after(
    ctx: &Context,
    checkout: &crate::lock::Lock,
    sets: &mut [ReleaseSet],
    detected: Option<&super::detect::Detected>,
) -> crate::lock::Lock {
    let mut known = checkout.clone();
    for set in sets.iter_mut() {
        known.carry_chart_locks(set);
        if !set.node_image.is_none() && set.node_image.build_date.is_none() {
            set.node_image.build_date = known
                .build_date_of(&set.stack, &set.node_image)
                .or(set.published_at.map(|t| t.date_naive()));
        }
    }
    for set in sets.iter() {
        known.upsert(set.clone());
    }
    // The version table's window, as the release commit's lock will record it (`plan`).
    if let Some(d) = detected {
        known.retire_rows(&d.compliance.lifecycles, ctx.today);
    }
    known
}

/// The patches detection stepped over to reach `set` (said in its release notes).
fn stepped_over(offered: &Offered, set: &ReleaseSet) -> Vec<crate::model::SteppedOver> {
    offered
        .held_back
        .get(&crate::model::series_prefix(&set.stack, set.minor()))
        .map(|h| h.skipped().to_vec())
        .unwrap_or_default()
}

/// `--minor` must name a minor the (selected) stacks track on the run's date: the minors
/// upstream offered a release set for, or that detection listed as waiting. A minor nothing
/// tracks would otherwise plan nothing and look like "nothing to release" (exit 0).
fn check_minor(minor: Minor, stack: Option<&StackId>, offered: &Offered) -> Result<(), Error> {
    let in_stack = |s: &StackId| stack.is_none_or(|x| x == s);
    let mut tracked: BTreeSet<Minor> = offered
        .sets
        .iter()
        .filter(|set| in_stack(&set.stack))
        .map(|set| set.minor())
        .collect();
    for s in &offered.skipped {
        if let Some((id, m)) = s.what.stack_minor()
            && in_stack(id)
        {
            tracked.insert(m);
        }
    }
    if tracked.contains(&minor) {
        return Ok(());
    }
    let list: Vec<String> = tracked.iter().map(ToString::to_string).collect();
    Err(InvalidInput(format!(
        "--minor {minor}: no {} tracks it on this date; tracked minors: {}",
        stack.map_or_else(
            || "configured stack".to_string(),
            |s| format!("stack `{s}`")
        ),
        crate::error::listed(&list)
    ))
    .into())
}

/// A render failure caused by data upstream may leave out (a publication date: the markers
/// fallback has none; a chart digest: some indexes carry none) rather than by the templates:
/// the set renders once that data is filled with a placeholder. Then the failure is transient
/// (exit 1) and names what was missing; otherwise it is the templates' (exit 2).
fn missing_data(
    templates: &crate::render::TemplateTree,
    stack: &crate::config::StackConfig,
    set: &ReleaseSet,
    known: &crate::lock::Lock,
) -> Option<String> {
    let date = set.published_at.is_none();
    let digests: Vec<&String> = set
        .components
        .iter()
        .filter(|(_, c)| c.digest.is_none())
        .map(|(k, _)| k)
        .collect();
    // The smallest fill that renders names what was missing.
    let fills = [(true, false), (false, true), (true, true)];
    fills
        .into_iter()
        .filter(|(d, g)| (!d || date) && (!g || !digests.is_empty()))
        .find(|&(d, g)| {
            let mut filled = set.clone();
            if d {
                filled.published_at = Some(chrono::DateTime::UNIX_EPOCH);
            }
            if g {
                for c in filled
                    .components
                    .values_mut()
                    .filter(|c| c.digest.is_none())
                {
                    c.digest = Some("0".repeat(64));
                }
            }
            crate::render::render_stack(templates, stack, &filled, known).is_ok()
        })
        .map(|(d, g)| {
            let mut what = Vec::new();
            if d {
                what.push("the Kubernetes publication date (`published_at`)".to_string());
            }
            if g {
                what.push(format!(
                    "the chart digest of {}",
                    digests
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            what.join(" and ")
        })
}
