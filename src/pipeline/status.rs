//! detect → releases (forge, OCI) → tenants → status, and the dashboard issue.
//!
//! `stackbot status` and the end of every `release` run: observe (upstream through detect, the
//! rest through [`crate::observe::status`]), shape the readings into [`Facts`], then the pure
//! [`crate::status::compute`].
//! The dashboard issue that shows it is [`super::dashboard`]'s.

use std::collections::BTreeSet;

use crate::config::{PublishTarget, ReleaseMode, TenantConfig};
use crate::forge::Forge;
use crate::model::{ReleaseName, StackId};
use crate::status::{
    self, ClusterVersion, Facts, StackResource, Status, TenantFacts, TenantStackFacts,
    UpstreamMinor,
};
use crate::tenants::Observations;
use crate::tenants::edit::TenantFile;
use crate::tenants::plan::{BranchState, Observed};

use super::detect::Detected;
use super::run::Run;
use super::{Context, Error, Selection};
use crate::observe::ForgeReleases;
use crate::observe::status as read;

/// Detect (with the schedule, for end-of-life dates), then [`status_from`].
pub fn status(ctx: &Context, forge: &dyn Forge, sel: &Selection) -> Result<Status, Error> {
    let run = Run::new(ctx, forge)?;
    let detected = detect(ctx, sel)?;
    status_knowing(&run, &detected, &Observations::new())
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
    status_knowing(&Run::new(ctx, forge)?, detected, &Observations::new())
}

/// [`status_from`], reading only the tenants not in `known` (what this run already read of
/// the tenants it left unchanged).
pub fn status_knowing(
    run: &Run<'_>,
    detected: &Detected,
    known: &Observations,
) -> Result<Status, Error> {
    Ok(status::compute(&gather(run, detected, known)?))
}

/// Read every fact the status needs, reusing `known` tenant readings. Read-only.
pub fn gather(run: &Run<'_>, detected: &Detected, known: &Observations) -> Result<Facts, Error> {
    let (ctx, forge, target) = (run.ctx, run.forge, &run.target);
    let config = &ctx.loaded.config;
    let repo = target.repo.clone();
    let stacks: BTreeSet<StackId> = config.stacks.iter().map(|s| s.id()).collect();
    let mut warnings = detected.report.warnings.clone();
    let minors = upstream_minors(detected);
    let bot = &config.forge.committer.email;
    let limits = config.limits.tenant_files();
    let tenants: Vec<TenantFacts> = config
        .tenants
        .iter()
        .zip(read::tenants(
            (forge, &run.contents),
            &config.tenants,
            known,
            &limits,
        ))
        .map(|(t, r)| tenant(t, r, bot, &limits))
        .collect();
    let oci = target.oci.as_deref().filter(|_| config.publishes_on_oci());
    // The run's index: listed once, with what this run published folded in.
    let index = run
        .published(ForgeReleases::MissingIsEmpty)
        .map_err(Error::from)?;
    let versions = &run.forge_versions;
    let mut releases =
        read::forge_releases(forge, &repo, (&index, &stacks), versions, &mut warnings);
    if let Some(oci) = oci {
        let listed: BTreeSet<String> = tenants
            .iter()
            .flat_map(|t| &t.stacks)
            .flat_map(|s| s.resources.iter().flat_map(|r| r.releases(&s.stack)))
            .map(|n| n.to_string())
            .collect();
        let reads = (oci.registry(), &run.oci_reads);
        releases.extend(
            read::oci_releases(reads, &index, &minors, &listed, &mut warnings)
                .map_err(Error::from)?,
        );
    }
    let release_pulls = if config.forge.mode == ReleaseMode::PullRequest {
        read::release_pulls(forge, &repo, &minors, &|b| run.release_pulls_of(b))
            .map_err(Error::from)?
    } else {
        Vec::new()
    };
    // Read only when a stack has `gate:`: without it the status costs what it did.
    let gates = if config.stacks.iter().any(|s| s.gate.is_some()) {
        let index = run.gate_index().map_err(Error::from)?;
        crate::observe::gate::status_facts(forge, &repo, &index, &run.gate_records)?
    } else {
        Vec::new()
    };
    Ok(Facts {
        today: ctx.today,
        minors,
        releases,
        release_pulls,
        gates,
        tenants,
        warnings,
        compliance: detected.compliance.clone(),
        sources: detected.sources.clone(),
        snapshot: detected.report.snapshot,
        last_known: detected.last_known.clone(),
    })
}

/// Where each tracked series stands once a release run is done, as `status` computes it
/// ([`crate::status::stacks::status`], the one deadline model), from what the run read and did,
/// without asking the forge or the registry again; the `release` summary renders it:
/// - the releases the run observed: the forge's (`observed.index`, listed once before it) and,
///   with `publish: [oci]`, the newest OCI release of each series its observation pulled;
/// - the ones it published (`outcome.released`, with their Kubernetes versions from `plan`);
/// - in pull-request mode the release pull requests it left open (`outcome.release_pulls`),
///   and the open ones it observed and left alone.
pub fn series_after_run(
    run: &Run<'_>,
    (observed, detected): (&crate::plan::Observed, &Detected),
    (plan, outcome): (&crate::plan::Plan, &crate::outcome::Outcome),
) -> Vec<status::StackStatus> {
    let (ctx, forge, target) = (run.ctx, run.forge, &run.target);
    let stacks: BTreeSet<StackId> = ctx.loaded.config.stacks.iter().map(|s| s.id()).collect();
    // Read as `status` reads them: a release whose Kubernetes version cannot be read stays
    // in, unknown (never dropped: that would read as "never released", the minor window).
    let mut releases = read::forge_releases(
        forge,
        &target.repo,
        (&observed.index, &stacks),
        &run.forge_versions,
        &mut Vec::new(),
    );
    let release = |name: ReleaseName, target, kubernetes| status::Release {
        name,
        target,
        kubernetes,
        published_at: None,
        url: None,
        unread: None,
    };
    // With OCI alone the forge has no releases: the registry's, as observed.
    releases.extend(observed.series.values().filter_map(|so| {
        let l = so.oci_latest.as_ref()?;
        Some(status::Release {
            published_at: l.created,
            url: (target.oci.as_ref())
                .map(|o| format!("{}:{}", o.registry().target().reference(), l.tag)),
            ..release(
                ReleaseName::parse(&l.tag).ok()?,
                status::Target::Oci,
                l.kubernetes,
            )
        })
    }));
    let publish = &ctx.loaded.config.publish;
    let targets: Vec<status::Target> = [
        (PublishTarget::Forge, status::Target::Forge),
        (PublishTarget::Oci, status::Target::Oci),
    ]
    .into_iter()
    .filter(|(p, _)| publish.contains(p))
    .map(|(_, t)| t)
    .collect();
    for r in plan
        .releases
        .iter()
        .filter(|r| outcome.released.contains(&r.tag))
    {
        if let (Ok(name), Ok(k)) = (ReleaseName::parse(&r.tag), r.kubernetes.parse()) {
            releases.extend(targets.iter().map(|t| release(name.clone(), *t, Some(k))));
        }
    }
    let minors = upstream_minors(detected);
    let pulls: Vec<status::ReleasePull> = minors
        .iter()
        .filter(|m| m.may_have_release_pull())
        .filter_map(|m| {
            let branch =
                crate::plan::release_branch(&crate::model::series_prefix(&m.stack, m.minor));
            let open = |p: &&crate::forge::PullInfo| {
                p.head == branch && p.state == crate::forge::PullState::Open
            };
            let pull = outcome.release_pulls.iter().find(open).or_else(|| {
                observed
                    .pulls
                    .get(&branch)
                    .and_then(|ps| ps.iter().find(open))
            })?;
            Some(status::ReleasePull {
                stack: m.stack.clone(),
                minor: m.minor,
                pull: pull.clone(),
            })
        })
        .collect();
    minors
        .iter()
        .filter(|m| m.tracked)
        .map(|m| status::stacks::status(m, &releases, &pulls, &detected.compliance, ctx.today))
        .collect()
}

/// The detection's stack × minors (tracked first, then new ones), as the status sees them.
fn upstream_minors(d: &Detected) -> Vec<UpstreamMinor> {
    let tracked = d.report.minors.iter().map(|m| UpstreamMinor {
        stack: m.stack.clone(),
        minor: m.minor,
        tracked: true,
        patches: m.patches.clone(),
        waiting: m.waiting.clone(),
        errors: m.errors.clone(),
        releasable: m.release_set.as_ref().map(|s| s.kubernetes),
        end_of_life: d.end_of_life.get(&m.minor).copied(),
        stepped_over: m.held_back.skipped().to_vec(),
    });
    let new = d.report.new_minors.iter().map(|n| UpstreamMinor {
        stack: n.stack.clone(),
        minor: n.minor,
        tracked: false,
        patches: n.patches.clone(),
        waiting: Vec::new(),
        errors: Vec::new(),
        releasable: None,
        end_of_life: d.end_of_life.get(&n.minor).copied(),
        stepped_over: Vec::new(),
    });
    tracked.chain(new).collect()
}

fn tenant(
    t: &TenantConfig,
    read: Result<Observed, String>,
    bot: &str,
    limits: &crate::yaml::Limits,
) -> TenantFacts {
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
                .map(|(p, bytes)| TenantFile::parse(p, bytes, limits).map_err(|x| x.to_string()))
                .collect();
            let (parsed, unreadable): (Vec<_>, Vec<_>) = o
                .cluster_files
                .iter()
                .map(|(p, bytes)| TenantFile::parse(p, bytes, limits).map_err(|e| (p, e)))
                .partition(Result::is_ok);
            // A `clusters` file that does not parse is named in every followed stack's
            // verdict (which stack its Clusters use cannot be read either).
            let unjudged: Vec<String> = unreadable
                .into_iter()
                .filter_map(Result::err)
                .map(|(p, e)| format!("{p}: cannot judge its Clusters: {e}"))
                .collect();
            let clusters: Vec<(String, crate::tenants::edit::ClusterDoc)> = parsed
                .into_iter()
                .filter_map(Result::ok)
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
                    facts.unjudged = unjudged.clone();
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
            Ok((f, docs)) => resources.extend(
                docs.into_iter()
                    .filter(|d| d.channel == crate::tenants::edit::Channel::Stable)
                    .map(|d| StackResource {
                        file: f.path.clone(),
                        line: d.line,
                        minor: d.minor,
                        versions: d.versions,
                        auto_subscribe: d.auto_subscribe,
                    }),
            ),
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
        unjudged: Vec::new(),
        error,
    }
}
