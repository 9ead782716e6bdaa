//! `stackbot release`: render, package, commit, tag and publish, idempotently.
//!
//! Also home of the pipeline `plan` shares (release sets → rendered trees → observed forge →
//! plan), so that `plan`, `release --dry-run` and `release` print and execute the same `Plan`.

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use anyhow::Context;

use super::{Format, Global};
use crate::apply::{self, Outcome, Target};
use crate::config::{ForgeKind, Loaded, ReleaseMode};
use crate::error::{ExitStatus, InvalidInput};
use crate::forge::local::LocalForge;
use crate::forge::{Forge, RepoRef};
use crate::model::{FileTree, Minor, ReleaseSet, StackId};
use crate::plan::{self, Desired, Mode, Plan, Settings};

const EXAMPLES: &str = "\
Examples:
  stackbot -c examples/local/stackbot.yaml release          # the local demo: no network, no token
  stackbot release --dry-run                                 # the plan plus unified diffs, no side effects
  stackbot release --stack openstack/scs2 --minor 1.34 --format json
  stackbot release --release-set sets.yaml                   # release exactly these sets

Concurrency: on the local forge a run holds `<forge>/run.lock` from observing to the last write,
so a second run waits and then finds nothing to do. On GitHub, base-branch commits are
compare-and-swap, tags are unique and every run fills and publishes the same (oldest) draft,
so two runs cannot publish a tag twice.";

/// Which stacks, minors and release sets to work on; shared by `plan` and `release`.
#[derive(Debug, Clone, clap::Args)]
pub struct Selection {
    /// Only this stack (`provider/name`).
    #[arg(long, value_name = "P/N")]
    pub stack: Option<String>,
    /// Only this Kubernetes minor (`1.34`).
    #[arg(long, value_name = "1.X")]
    pub minor: Option<String>,
    /// Release these sets (YAML or JSON: one set or a list) instead of detecting upstream.
    #[arg(long, value_name = "FILE")]
    pub release_set: Option<PathBuf>,
    /// Replay this upstream snapshot (overrides `upstream.snapshot`).
    #[arg(long, value_name = "FILE")]
    pub snapshot: Option<PathBuf>,
    /// Cache directory for conditional upstream requests (overrides `upstream.cache_dir`).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// Render, package, tag and publish releases.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(flatten)]
    pub sel: Selection,
    /// Print the plan and the unified diffs of the rendered files; change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// The repository path of a stack × minor's rendered directory: the stack's `output` (relative
/// to `stackbot.yaml`, which sits at the repository root) plus `<major>-<minor>`.
pub fn repo_path(loaded: &Loaded, output: &Path, minor: Minor) -> anyhow::Result<String> {
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
                ))
                .into());
            }
        }
    }
    parts.push(minor.dashed());
    Ok(parts.join("/"))
}

fn parse_selection(sel: &Selection) -> anyhow::Result<(Option<StackId>, Option<Minor>)> {
    let stack = sel
        .stack
        .as_deref()
        .map(|s| {
            s.parse::<StackId>()
                .map_err(|e| InvalidInput(format!("--stack: {e}")))
        })
        .transpose()?;
    let minor = sel
        .minor
        .as_deref()
        .map(|m| {
            m.parse::<Minor>()
                .map_err(|e| InvalidInput(format!("--minor: {e}")))
        })
        .transpose()?;
    Ok((stack, minor))
}

/// The complete release sets to release: from `--release-set`, else from upstream detection.
fn release_sets(
    loaded: &Loaded,
    sel: &Selection,
    g: &Global,
) -> anyhow::Result<(Vec<ReleaseSet>, Vec<plan::Skipped>, Vec<String>)> {
    let mut skipped = Vec::new();
    let mut warnings = Vec::new();
    let sets = match &sel.release_set {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| InvalidInput(format!("{}: {e}", path.display())))?;
            crate::lock::parse_release_sets(&text, path).map_err(InvalidInput::from_display)?
        }
        None => {
            let token = std::env::var(&loaded.config.upstream.token_env)
                .ok()
                .filter(|t| !t.trim().is_empty());
            let opts = crate::upstream::DetectOptions {
                snapshot: sel.snapshot.clone(),
                cache_dir: sel.cache_dir.clone(),
                token,
                ..Default::default()
            };
            let report = crate::upstream::detect(loaded, &opts, g.now)?;
            warnings.extend(report.warnings.iter().cloned());
            let mut sets = Vec::new();
            for m in report.minors {
                match m.release_set {
                    Some(s) => sets.push(s),
                    None => skipped.push(plan::Skipped {
                        what: format!("{} {}", m.stack, m.minor),
                        reason: if m.missing.is_empty() {
                            "no complete release set".into()
                        } else {
                            format!("no complete release set: {}", m.missing.join("; "))
                        },
                    }),
                }
            }
            sets
        }
    };
    Ok((sets, skipped, warnings))
}

/// Release sets → rendered trees, filtered by `--stack`/`--minor`.
pub fn desired(
    loaded: &Loaded,
    sel: &Selection,
    g: &Global,
) -> anyhow::Result<(Vec<Desired>, Vec<plan::Skipped>, Vec<String>)> {
    let (only_stack, only_minor) = parse_selection(sel)?;
    if let Some(s) = &only_stack
        && loaded.stack(s).is_none()
    {
        return Err(InvalidInput(format!(
            "--stack {s}: not configured in {}",
            loaded.path.display()
        ))
        .into());
    }
    let (sets, mut skipped, warnings) = release_sets(loaded, sel, g)?;
    skipped.retain(|s| {
        only_stack
            .as_ref()
            .is_none_or(|x| s.what.starts_with(&x.to_string()))
            && only_minor.is_none_or(|m| s.what.ends_with(&format!(" {m}")))
    });
    let mut out = Vec::new();
    let mut templates = std::collections::BTreeMap::new();
    for set in sets {
        let minor = set.minor();
        if only_stack.as_ref().is_some_and(|s| s != &set.stack)
            || only_minor.is_some_and(|m| m != minor)
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
            let t = crate::render::load_templates(&dir).map_err(|e| {
                if e.is_invalid_input() {
                    anyhow::Error::new(InvalidInput::from_display(&e))
                } else {
                    anyhow::Error::new(e)
                }
            })?;
            templates.insert(set.stack.clone(), t);
        }
        let rendered = crate::render::render_stack(&templates[&set.stack], stack, &set)
            .map_err(InvalidInput::from_display)?;
        out.push(Desired {
            stack: set.stack.clone(),
            minor,
            path: repo_path(loaded, &stack.output, minor)?,
            set,
            rendered,
        });
    }
    out.sort_by(|a, b| (&a.stack, a.minor).cmp(&(&b.stack, b.minor)));
    Ok((out, skipped, warnings))
}

/// The forge named by `forge.kind` (see [`crate::forge::open`]); `plan` works without a token.
pub fn open_forge(loaded: &Loaded) -> anyhow::Result<Box<dyn Forge>> {
    crate::forge::open(loaded, &crate::env::Env::from_process(), super::clock())
}

/// The local forge of the configuration, with its seeds resolved.
pub fn local_forge(loaded: &Loaded) -> anyhow::Result<LocalForge> {
    Ok(LocalForge::from_config(loaded, super::clock())?)
}

/// Where releases go.
pub fn target(loaded: &Loaded, g: &Global) -> anyhow::Result<Target> {
    let fc = &loaded.config.forge;
    let repo = RepoRef::parse(&fc.repository).ok_or_else(|| {
        InvalidInput(format!(
            "{}: forge.repository `{}` is not `owner/name`",
            loaded.path.display(),
            fc.repository
        ))
    })?;
    // The OCI target (when `publish` lists `oci`): credentials are read here, at the edge.
    let (oci_settings, oci) =
        crate::oci::publish::for_run(&loaded.config, g.now, |k| std::env::var(k).ok()).map_err(
            |e| {
                if e.is_invalid_input() {
                    anyhow::Error::new(InvalidInput(format!("{}: {e}", loaded.path.display())))
                } else {
                    anyhow::Error::new(e)
                }
            },
        )?;
    Ok(Target {
        repo,
        base_branch: fc.base_branch.clone(),
        settings: Settings {
            mode: match fc.mode {
                ReleaseMode::Direct => Mode::Direct,
                ReleaseMode::PullRequest => Mode::PullRequest,
            },
            lock_path: crate::lock::LOCK_FILE.to_string(),
            now: g.now,
            oci: oci_settings,
        },
        oci,
    })
}

/// The real packager: csctl-compatible, byte-reproducible assets for chosen versions.
pub fn packager(tree: &FileTree, v: &crate::package::Versions) -> Result<FileTree, String> {
    crate::package::package(tree, &crate::package::VersionSelection::Explicit(v.clone()))
        .map(|r| r.files)
        .map_err(|e| e.to_string())
}

/// Unified diffs of the rendered files of every planned release (base branch → rendered).
pub fn diffs(p: &Plan) -> Vec<crate::report::preview::StackDiff> {
    let mut out = Vec::new();
    for r in &p.releases {
        let mut files = Vec::new();
        let paths: std::collections::BTreeSet<&String> =
            r.base_files.keys().chain(r.rendered.keys()).collect();
        for path in paths {
            let old = r.base_files.get(path);
            let new = r.rendered.get(path);
            if old == new {
                continue;
            }
            let text = |b: Option<&Vec<u8>>| {
                b.map(|b| std::str::from_utf8(b).map(str::to_string))
                    .unwrap_or(Ok(String::new()))
            };
            let full = format!("{}/{path}", r.path);
            let unified = match (text(old), text(new)) {
                (Ok(a), Ok(b)) => similar::TextDiff::from_lines(&a, &b)
                    .unified_diff()
                    .context_radius(3)
                    .header(
                        &if old.is_some() {
                            format!("a/{full}")
                        } else {
                            "/dev/null".into()
                        },
                        &if new.is_some() {
                            format!("b/{full}")
                        } else {
                            "/dev/null".into()
                        },
                    )
                    .to_string(),
                _ => String::new(),
            };
            files.push(crate::report::preview::FileDiff {
                path: full,
                unified,
            });
        }
        out.push(crate::report::preview::StackDiff {
            stack: r.stack.clone(),
            minor: r.minor.clone(),
            files,
        });
    }
    out
}

/// Everything `plan` computes: the plan plus skips from detection.
pub struct Planned {
    pub plan: Plan,
    pub target: Target,
    pub observed: plan::Observed,
}

/// detect → render → observe → plan. Read-only; needs no token on the local forge.
pub fn compute(
    loaded: &Loaded,
    sel: &Selection,
    g: &Global,
    forge: &dyn Forge,
) -> anyhow::Result<Planned> {
    let (desired, skipped, warnings) = desired(loaded, sel, g)?;
    let target = target(loaded, g)?;
    let (mut p, observed) = apply::plan_release(forge, &target, &desired, &packager)?;
    p.skipped.extend(skipped);
    p.warnings.extend(warnings);
    for w in &p.warnings {
        tracing::warn!("{w}");
    }
    Ok(Planned {
        plan: p,
        target,
        observed,
    })
}

/// Tenant options of a release run. Write pacing is the forge's (the GitHub transport spaces
/// remote writes itself), so none is added here.
fn tenant_options(dry_run: bool) -> crate::tenants::Options {
    crate::tenants::Options {
        dry_run,
        ..Default::default()
    }
}

/// The releases a plan would publish, as the tenant planner sees published releases: tag,
/// Kubernetes version and notes. Releases waiting for a release pull request are left out
/// (they are published only after it is merged).
pub fn planned_releases(p: &Plan) -> Vec<crate::tenants::AvailableRelease> {
    p.releases
        .iter()
        .filter(|r| {
            r.steps
                .iter()
                .any(|s| matches!(s, plan::Step::Publish { .. }))
        })
        .filter_map(|r| {
            Some(crate::tenants::AvailableRelease {
                name: crate::model::ReleaseName::parse(&r.tag).ok()?,
                kubernetes: r.kubernetes.parse().ok()?,
                html_url: String::new(),
                body: r.notes.clone(),
            })
        })
        .collect()
}

/// The tenant pull requests that would follow the releases that exist now plus the ones `p`
/// would publish (no writes).
pub fn plan_tenants(
    loaded: &Loaded,
    forge: &dyn Forge,
    p: &Plan,
) -> anyhow::Result<Vec<serde_json::Value>> {
    if loaded.config.tenants.is_empty() {
        return Ok(Vec::new());
    }
    let reports = crate::tenants::plan_tenants_after(
        forge,
        loaded,
        &tenant_options(true),
        &planned_releases(p),
    )?;
    Ok(reports
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()?)
}

/// Human-readable plan.
pub fn plan_text(p: &Plan) -> String {
    let mut s = String::new();
    if p.releases.is_empty() {
        s.push_str("Nothing to release.\n");
    }
    for r in &p.releases {
        let _ = writeln!(
            s,
            "release {} ({} {}, Kubernetes {}, clusterAddon {}, nodeImage {}){}",
            r.tag,
            r.stack,
            r.minor,
            r.kubernetes,
            r.versions.cluster_addon,
            r.versions.node_image,
            if r.resumed {
                " — finishing an interrupted run"
            } else {
                ""
            }
        );
        for step in &r.steps {
            let _ = writeln!(s, "  - {}", describe(step));
        }
        for a in &r.assets {
            let _ = writeln!(
                s,
                "    asset {} ({} bytes, sha256 {})",
                a.name,
                a.size,
                &a.sha256[..12]
            );
        }
    }
    for step in &p.cleanup {
        let _ = writeln!(s, "cleanup: {}", describe(step));
    }
    for k in &p.skipped {
        let _ = writeln!(s, "skip {}: {}", k.what, k.reason);
    }
    for t in p
        .tenants
        .iter()
        .filter_map(crate::report::from_plan::tenant_from_json)
        .filter(|t| t.action != "none")
    {
        let _ = writeln!(
            s,
            "tenant {} ({}, {}): {} pull request changing {}",
            t.tenant,
            t.repository,
            t.branch,
            t.action,
            t.files.join(", ")
        );
    }
    s
}

fn describe(step: &plan::Step) -> String {
    match step {
        plan::Step::Commit { branch, files, .. } => {
            format!("commit {} file(s) to {branch}", files.len())
        }
        plan::Step::ReleasePull {
            branch,
            base,
            files,
            ..
        } => {
            format!(
                "push {} file(s) to {branch} and open/update a pull request into {base}",
                files.len()
            )
        }
        plan::Step::Tag { tag, commit, .. } => match commit {
            Some(c) => format!("tag {tag} at {}", &c[..c.len().min(12)]),
            None => format!("tag {tag} on that commit"),
        },
        plan::Step::Draft { tag } => format!("draft release {tag} with every asset"),
        plan::Step::Publish { tag } => format!("publish {tag}"),
        plan::Step::DeleteDraft { id, tag, reason } => {
            format!("delete draft {id} of {tag} ({reason})")
        }
        plan::Step::OciPush {
            tag,
            target,
            manifest_digest,
            layers,
            ..
        } => {
            let mut s = format!("push {tag} to OCI {target} (manifest {manifest_digest})");
            for l in layers {
                let _ = write!(
                    s,
                    "\n      layer {} {} ({})",
                    l.file, l.digest, l.media_type
                );
            }
            s
        }
    }
}

/// Print a plan in the global format. `with_diffs` adds the unified diffs (dry run, markdown).
pub fn print_plan(p: &Plan, g: &Global, with_diffs: bool) -> anyhow::Result<()> {
    match g.format {
        Format::Json => {
            let mut v = serde_json::to_value(p)?;
            if with_diffs {
                v["diffs"] = serde_json::to_value(diffs(p))?;
            }
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        Format::Markdown => {
            // The comment-sized preview on stdout; under GitHub Actions the full one also goes
            // to the job summary, which the truncation note links to.
            let preview = crate::report::from_plan::preview(p, None);
            let actions = crate::report::github::Actions::from_env();
            print!("{}", crate::report::preview::emit(&preview, &actions)?);
        }
        Format::Text => {
            print!("{}", plan_text(p));
            if with_diffs {
                for d in diffs(p) {
                    for f in d.files {
                        if f.unified.is_empty() {
                            println!("(binary or empty) {}", f.path);
                        } else {
                            print!("{}", f.unified);
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

fn print_outcome(
    out: &Outcome,
    p: &Plan,
    tenants: &[crate::tenants::TenantReport],
    g: &Global,
) -> anyhow::Result<()> {
    match g.format {
        Format::Json => {
            let v = serde_json::json!({
                "released": out.released,
                "skipped": out.skipped,
                "pull_requests": out.pull_requests,
                "actions": out.actions,
                "oci": out.oci,
                "tenants": tenants,
                "warnings": p.warnings,
            });
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        Format::Text | Format::Markdown => {
            let oci_pushed = out
                .oci
                .iter()
                .any(|o| matches!(o.outcome, crate::oci::PushOutcome::Pushed { .. }));
            if out.released.is_empty() && out.pull_requests.is_empty() && !oci_pushed {
                println!("Nothing to release: every stack × minor is up to date.");
            }
            for t in &out.released {
                let r = p.releases.iter().find(|r| &r.tag == t);
                match r {
                    Some(r) => println!(
                        "released {t} (Kubernetes {}, {} assets)",
                        r.kubernetes,
                        r.assets.len()
                    ),
                    None => println!("released {t}"),
                }
            }
            for o in &out.oci {
                let what = match &o.outcome {
                    crate::oci::PushOutcome::Pushed { .. } => "pushed",
                    crate::oci::PushOutcome::AlreadyPresent { .. } => "already in",
                };
                println!(
                    "OCI: {} {what} {} ({}, verified)",
                    o.tag,
                    o.reference,
                    o.outcome.digest()
                );
            }
            for u in &out.pull_requests {
                println!("release pull request: {u}");
            }
            for k in &out.skipped {
                println!("skipped {}: {}", k.what, k.reason);
            }
            for t in tenants {
                use crate::tenants::apply::Outcome as T;
                let pr = t.pull.map(|n| format!(" #{n}")).unwrap_or_default();
                let what = match t.outcome {
                    T::Opened => format!("opened pull request{pr}"),
                    T::Updated => format!("updated pull request{pr}"),
                    T::Unchanged => format!("pull request{pr} already up to date"),
                    T::Closed => format!("closed pull request{pr}"),
                    T::Blocked => format!("pull request{pr} has human commits; left a comment"),
                    T::Planned => "planned".to_string(),
                    T::Failed => format!("failed: {}", t.error.as_deref().unwrap_or("?")),
                };
                if t.outcome == T::Unchanged && t.pull.is_none() {
                    continue; // nothing to propose
                }
                println!(
                    "tenant {} ({}{}): {what}{}",
                    t.tenant,
                    t.repository,
                    t.branch
                        .as_deref()
                        .map(|b| format!(", {b}"))
                        .unwrap_or_default(),
                    if t.releases.is_empty() {
                        String::new()
                    } else {
                        format!(" for {}", t.releases.join(", "))
                    }
                );
            }
        }
    }
    Ok(())
}

/// Run the command.
pub fn run(a: &Args, g: &Global) -> anyhow::Result<ExitStatus> {
    let loaded = crate::config::load(&g.config)?;
    if a.dry_run {
        let forge = open_forge(&loaded)?;
        let mut planned = compute(&loaded, &a.sel, g, forge.as_ref())?;
        planned.plan.tenants = plan_tenants(&loaded, forge.as_ref(), &planned.plan)?;
        print_plan(&planned.plan, g, true)?;
        return Ok(ExitStatus::Success);
    }
    let forge = open_forge(&loaded)?;
    let target = target(&loaded, g)?;
    // The local forge's concurrency guard, held from observing to the last write.
    let _guard = match loaded.config.forge.kind {
        ForgeKind::Local => Some(
            local_forge(&loaded)?
                .lock_run()
                .context("taking the local forge's run lock")?,
        ),
        ForgeKind::Github => None,
    };
    forge
        .ensure_repo(&target.repo, &target.base_branch)
        .with_context(|| format!("preparing repository {}", target.repo))?;
    let planned = compute(&loaded, &a.sel, g, forge.as_ref())?;
    let out = apply::apply_with_oci(
        &planned.plan,
        forge.as_ref(),
        &planned.target.repo,
        &planned.observed,
        planned.target.oci.as_deref(),
    )
    .context("releasing (safe to re-run: the next run finishes what this one started)")?;
    // Then propagate every published release to the tenants.
    let reports = if loaded.config.tenants.is_empty() {
        Vec::new()
    } else {
        crate::tenants::run_tenants(forge.as_ref(), &loaded, &tenant_options(false)).map_err(
            |e| match e {
                crate::tenants::TenantsError::Config(m) => anyhow::Error::new(InvalidInput(m)),
                other => anyhow::Error::new(other),
            },
        )?
    };
    print_outcome(&out, &planned.plan, &reports, g)?;
    Ok(super::tenants::status_of(&reports))
}
