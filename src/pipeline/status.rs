//! detect → releases (forge, OCI) → tenants → status, and the dashboard issue.
//!
//! `stackbot status` and the end of every `release` run read the facts here and hand them to
//! the pure [`crate::status::compute`]. Reads only, no token needed on the local forge: one
//! release listing (plus a `metadata.yaml` for a release whose notes name no Kubernetes
//! version), one manifest per OCI series, and per tenant its base branch, listing, matched
//! files, and per followed stack the bot branch's pull requests, head and commits.
//! The dashboard issue that shows it is [`super::dashboard`]'s.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::config::{PublishTarget, ReleaseMode, TenantConfig};
use crate::forge::{Forge, ForgeError, PullState, RepoRef};
use crate::index::ReleaseIndex;
use crate::model::{KubeVersion, ReleaseName, StackId};
use crate::status::{
    self, ClusterVersion, Facts, Patch, Release, ReleasePull, StackResource, Status, Target,
    TenantFacts, TenantStackFacts, UpstreamMinor,
};
use crate::tenants::Observations;
use crate::tenants::edit::TenantFile;
use crate::tenants::plan::{BranchState, Observed};

use super::detect::Detected;
use super::{Context, Error, Selection};

/// Tenants read at the same time.
const CONCURRENCY: usize = 8;

/// Detect (with the schedule, for end-of-life dates), then [`status_from`].
pub fn status(ctx: &Context, forge: &dyn Forge, sel: &Selection) -> Result<Status, Error> {
    let detected = detect(ctx, sel)?;
    status_from(ctx, forge, &detected)
}

/// Upstream as `--snapshot`/`--cache-dir` say, with the schedule.
pub fn detect(ctx: &Context, sel: &Selection) -> Result<Detected, Error> {
    let opts = super::detect::options(ctx, sel.snapshot.clone(), sel.cache_dir.clone());
    let (report, data, _) = super::detect::detect_with(ctx, &opts, true)?;
    Ok(Detected::new(report, &data))
}

/// The status for what `detected` found and what the forge, the registry and the tenants
/// hold now.
pub fn status_from(ctx: &Context, forge: &dyn Forge, detected: &Detected) -> Result<Status, Error> {
    status_knowing(ctx, forge, detected, &Observations::new())
}

/// [`status_from`], reading only the tenants not in `known` (what this run already read of
/// the tenants it left unchanged).
pub fn status_knowing(
    ctx: &Context,
    forge: &dyn Forge,
    detected: &Detected,
    known: &Observations,
) -> Result<Status, Error> {
    Ok(status::compute(&gather(ctx, forge, detected, known)?))
}

/// Read every fact the status needs, reusing `known` tenant readings. Read-only.
pub fn gather(
    ctx: &Context,
    forge: &dyn Forge,
    detected: &Detected,
    known: &Observations,
) -> Result<Facts, Error> {
    let config = &ctx.loaded.config;
    let target = super::release::target(ctx)?;
    let repo = target.repo.clone();
    let stacks: BTreeSet<StackId> = config.stacks.iter().map(|s| s.id()).collect();
    let mut warnings = detected.report.warnings.clone();
    let minors = upstream_minors(detected);
    let tenants = tenants(forge, ctx, known);
    let on_forge = config.publish.contains(&PublishTarget::Forge);
    let oci = target
        .oci
        .as_deref()
        .filter(|_| config.publish.contains(&PublishTarget::Oci));
    let index = crate::observe::published_if_any(forge, &repo, on_forge, oci)?;
    let mut releases = forge_releases(forge, &repo, &index, &stacks, &mut warnings)?;
    if let Some(oci) = oci {
        let listed: BTreeSet<String> = tenants
            .iter()
            .flat_map(|t| &t.stacks)
            .flat_map(listed_names)
            .map(|n| n.to_string())
            .collect();
        releases.extend(oci_releases(oci, &index, &minors, &listed, &mut warnings)?);
    }
    let release_pulls = if config.forge.mode == ReleaseMode::PullRequest {
        release_pulls(forge, &repo, &minors)?
    } else {
        Vec::new()
    };
    Ok(Facts {
        today: ctx.today,
        minors,
        releases,
        release_pulls,
        tenants,
        warnings,
        compliance: detected.compliance.clone(),
        snapshot: detected.report.snapshot,
        last_known: detected.last_known.clone(),
    })
}

fn patches(list: &[crate::upstream::kubernetes::KubeRelease]) -> Vec<Patch> {
    list.iter()
        .map(|r| Patch {
            version: r.version,
            published_at: r.published_at,
        })
        .collect()
}

/// The detection's stack × minors (tracked first, then new ones), as the status sees them.
fn upstream_minors(d: &Detected) -> Vec<UpstreamMinor> {
    let tracked = d.report.minors.iter().map(|m| UpstreamMinor {
        stack: m.stack.clone(),
        minor: m.minor,
        tracked: true,
        patches: patches(&m.patches),
        waiting: m.waiting.clone(),
        errors: m.errors.clone(),
        releasable: m.release_set.as_ref().map(|s| s.kubernetes),
        end_of_life: d.end_of_life.get(&m.minor).copied(),
    });
    let new = d.report.new_minors.iter().map(|n| UpstreamMinor {
        stack: n.stack.clone(),
        minor: n.minor,
        tracked: false,
        patches: patches(&n.patches),
        waiting: Vec::new(),
        errors: Vec::new(),
        releasable: None,
        end_of_life: d.end_of_life.get(&n.minor).copied(),
    });
    tracked.chain(new).collect()
}

/// The published stable releases of the configured stacks on the forge. The Kubernetes
/// version comes from the notes (no request), else from `metadata.yaml` (one download).
fn forge_releases(
    forge: &dyn Forge,
    repo: &RepoRef,
    index: &ReleaseIndex,
    stacks: &BTreeSet<StackId>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Release>, Error> {
    let mut out = Vec::new();
    for r in index.listed().iter().filter(|r| !r.draft) {
        let Ok(name) = ReleaseName::parse(&r.tag) else {
            continue;
        };
        if !stacks.contains(&name.stack) || !name.version.is_stable() {
            continue;
        }
        let mut kubernetes = crate::tenants::apply::kubernetes_of(&name, None, &r.body);
        if kubernetes.is_none()
            && let Some(a) = r.assets.iter().find(|a| a.name == "metadata.yaml")
        {
            let meta = forge.download_asset(repo, r.id, a)?;
            kubernetes = crate::tenants::apply::kubernetes_of(&name, Some(&meta), &r.body);
        }
        if kubernetes.is_none() {
            warnings.push(format!(
                "release {name} names no Kubernetes version (notes or metadata.yaml)"
            ));
        }
        out.push(Release {
            name,
            target: Target::Forge,
            kubernetes,
            published_at: r.published_at,
            url: Some(r.html_url.clone()),
        });
    }
    Ok(out)
}

/// The releases in the OCI repository the status looks at: the newest of every series, and
/// every tag a tenant lists. One manifest each (its annotations name the Kubernetes version
/// and, with `oci.created_annotation`, the date).
fn oci_releases(
    oci: &crate::oci::Publisher,
    index: &ReleaseIndex,
    minors: &[UpstreamMinor],
    listed: &BTreeSet<String>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Release>, Error> {
    let reference = oci.registry().target().reference();
    let mut wanted: BTreeSet<String> = BTreeSet::new();
    for m in minors {
        if let Some(n) = index.newest_in_oci(&m.stack, m.minor) {
            wanted.insert(crate::index::name_of(&m.stack, m.minor, n).to_string());
        }
    }
    wanted.extend(listed.iter().filter(|t| index.in_oci(t)).cloned());
    let mut out = Vec::new();
    for tag in wanted {
        let Some((bytes, _)) = oci.registry().manifest(&tag)? else {
            continue;
        };
        let name = ReleaseName::parse(&tag).expect("built or listed as a release name");
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
        let note = |k: &str| v["annotations"][k].as_str().map(str::to_string);
        let kubernetes = note("kubernetesVersion").and_then(|k| k.parse::<KubeVersion>().ok());
        if kubernetes.is_none() {
            warnings.push(format!(
                "OCI {reference}:{tag} has no `kubernetesVersion` annotation"
            ));
        }
        out.push(Release {
            name,
            target: Target::Oci,
            kubernetes,
            published_at: note(crate::oci::manifest::CREATED_ANNOTATION)
                .and_then(|c| chrono::DateTime::parse_from_rfc3339(&c).ok())
                .map(|c| c.with_timezone(&chrono::Utc)),
            url: Some(format!("{reference}:{tag}")),
        });
    }
    Ok(out)
}

/// Open release pull requests of the series upstream has news for (`mode: pull-request`).
fn release_pulls(
    forge: &dyn Forge,
    repo: &RepoRef,
    minors: &[UpstreamMinor],
) -> Result<Vec<ReleasePull>, Error> {
    let mut out = Vec::new();
    for m in minors
        .iter()
        .filter(|m| m.tracked && m.releasable.is_some())
    {
        let series = crate::model::series_prefix(&m.stack, m.minor);
        let pulls = match forge.find_pulls(repo, &crate::plan::release_branch(&series)) {
            Ok(p) => p,
            Err(ForgeError::NotFound { .. }) => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        if let Some(pull) = pulls.into_iter().find(|p| p.state == PullState::Open) {
            out.push(ReleasePull {
                stack: m.stack.clone(),
                minor: m.minor,
                pull,
            });
        }
    }
    Ok(out)
}

/// The release names a tenant stack's resources list.
fn listed_names(s: &TenantStackFacts) -> Vec<ReleaseName> {
    s.resources
        .iter()
        .flat_map(|r| {
            r.versions.iter().flatten().filter_map(|v| {
                Some(ReleaseName {
                    stack: s.stack.clone(),
                    minor: r.minor,
                    version: crate::model::StackVersion::parse_dot(v).ok()?,
                })
            })
        })
        .collect()
}

/// Every tenant, read concurrently unless `known` holds it; each one's trouble stays in its
/// own facts.
fn tenants(forge: &dyn Forge, ctx: &Context, known: &Observations) -> Vec<TenantFacts> {
    let all = &ctx.loaded.config.tenants;
    let bot = &ctx.loaded.config.forge.committer.email;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, TenantFacts)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..CONCURRENCY.clamp(1, all.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(t) = all.get(i) else { break };
                    let read = match known.get(&t.name) {
                        Some(o) => Ok(o.clone()),
                        None => crate::tenants::apply::read(forge, t),
                    };
                    let facts = tenant(t, read, bot);
                    results.lock().expect("results lock").push((i, facts));
                }
            });
        }
    });
    let mut out = results.into_inner().expect("results lock");
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, f)| f).collect()
}

fn tenant(t: &TenantConfig, read: Result<Observed, String>, bot: &str) -> TenantFacts {
    let mut facts = TenantFacts {
        name: t.name.clone(),
        repository: t.repository.clone(),
        patch_policy: t.policy.patch,
        minor_policy: t.policy.minor,
        stacks: Vec::new(),
        error: None,
    };
    match read {
        Ok(o) => {
            let files: Vec<Result<TenantFile, String>> = o
                .stack_files
                .iter()
                .map(|(p, bytes)| TenantFile::parse(p, bytes).map_err(|x| x.to_string()))
                .collect();
            let clusters: Vec<(String, crate::tenants::edit::ClusterDoc)> = o
                .cluster_files
                .iter()
                .filter_map(|(p, bytes)| TenantFile::parse(p, bytes).ok())
                .flat_map(|f| {
                    let path = f.path.clone();
                    f.clusters().into_iter().map(move |c| (path.clone(), c))
                })
                .collect();
            let mut branches = o.branches;
            // In configuration order (the reading keys them by stack).
            facts.stacks = t
                .stacks
                .iter()
                .filter_map(|s| s.parse::<StackId>().ok())
                .filter_map(|stack| {
                    let state = branches.remove(&stack)?;
                    let mut facts = tenant_stack(stack, state, &files, bot);
                    facts.clusters = clusters
                        .iter()
                        .filter(|(_, c)| {
                            ReleaseName::parse(&c.class).is_ok_and(|n| n.stack == facts.stack)
                        })
                        .map(|(file, c)| ClusterVersion {
                            cluster: crate::tenants::upgrade::cluster_label(c),
                            file: file.clone(),
                            line: c.line,
                            class: c.class.clone(),
                            version: c.version.clone(),
                            // The step to the next minor, read when upgrades are on.
                            upgrade: crate::tenants::plan::cluster_release(c, &facts.stack)
                                .map(|cur| {
                                    crate::tenants::upgrade::branch_name(
                                        &facts.stack,
                                        c,
                                        crate::tenants::upgrade::next_minor(cur.minor),
                                    )
                                })
                                .and_then(|b| o.upgrades.get(&b))
                                .and_then(|s| s.pulls.first().cloned()),
                        })
                        .collect();
                    Some(facts)
                })
                .collect();
        }
        Err(e) => facts.error = Some(e),
    }
    facts
}

/// One followed stack: its `ClusterStack` resources at the base, and the bot branch.
fn tenant_stack(
    stack: StackId,
    state: BranchState,
    files: &[Result<TenantFile, String>],
    bot: &str,
) -> TenantStackFacts {
    let mut resources = Vec::new();
    let mut error = None;
    for f in files {
        let docs = f
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|f| Ok((f, f.cluster_stacks(&stack).map_err(|x| x.to_string())?)));
        match docs {
            Ok((f, docs)) => {
                resources.extend(docs.into_iter().filter(|d| d.channel == "stable").map(|d| {
                    StackResource {
                        file: f.path.clone(),
                        line: d.line,
                        minor: d.minor,
                        versions: d.versions,
                        auto_subscribe: d.auto_subscribe,
                    }
                }))
            }
            Err(x) => error = Some(x),
        }
    }
    let human_commits = state
        .commits
        .iter()
        .filter(|c| !c.is_by(bot))
        .map(|c| c.sha[..c.sha.len().min(12)].to_string())
        .collect();
    TenantStackFacts {
        stack,
        resources,
        pulls: state.pulls,
        human_commits,
        clusters: Vec::new(),
        error,
    }
}
