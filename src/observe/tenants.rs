//! Reading tenant repositories: what a tenant plan needs (base branch, matched files, per
//! followed stack the bot branch with its commits and pull requests) and what the status
//! report shows; and the releases tenants can move to. Never writes; a dry run never creates a
//! repository.
//!
//! The releases' cost is bounded by the number of series, never by history: the forge is one
//! release listing (the run's [`ReleaseIndex`]) plus, per series whose newest release's notes
//! name no Kubernetes version, one `metadata.yaml`; OCI is one tag listing plus, per series
//! whose newest release the forge does not already have, one manifest and one blob. Each is
//! read once per run, shared with the status ([`super::versions`], [`super::oci`]).

use std::collections::{BTreeMap, BTreeSet};

use super::versions::Kubernetes;
use crate::config::{TenantConfig, UpgradeAction};
use crate::forge::{Forge, ForgeError, RepoRef};
use crate::index::{Rank, ReleaseIndex};
use crate::model::{ReleaseName, StackId};
use crate::oci::{OciError, Registry};
use crate::tenants::TenantsError;
use crate::tenants::plan::{AvailableRelease, BranchState, Observed, branch_name, match_globs};
use crate::tenants::releases::kubernetes_of;

/// The base head a dry run plans against when the repository does not exist yet.
pub const TO_BE_CREATED: &str = "(repository to be created)";

/// The tenant's repository and followed stacks, or what is wrong with how they are written.
fn identify(t: &TenantConfig) -> Result<(RepoRef, Vec<StackId>), String> {
    let repo = RepoRef::parse(&t.repository)
        .ok_or_else(|| format!("repository `{}` is not `owner/name`", t.repository))?;
    let stacks = t
        .stacks
        .iter()
        .map(|s| {
            s.parse::<StackId>()
                .map_err(|x| format!("stack `{s}` of tenant `{}`: {x}", t.name))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((repo, stacks))
}

/// Read what the plan needs from one tenant repository: one `read_file` per matched file.
/// A dry run never creates the repository: a missing one is planned against the files
/// `ensure_repo` would seed it with (base head [`TO_BE_CREATED`], no bot branches).
pub fn tenant(
    (forge, contents): (&dyn Forge, &super::contents::Contents),
    t: &TenantConfig,
    dry_run: bool,
    limits: &crate::yaml::Limits,
) -> Result<Observed, String> {
    let (repo, stacks) = identify(t)?;
    let e = |e: ForgeError| e.to_string();
    let in_repo = |m: String| format!("{}: {m}", t.repository);
    if dry_run {
        if let Some(seed) = forge.seed_preview(&repo).map_err(e)? {
            let paths: Vec<String> = seed.keys().cloned().collect();
            let pick = |globs: &[String]| -> Result<BTreeMap<String, Vec<u8>>, String> {
                Ok(match_globs(globs, &paths)
                    .map_err(in_repo)?
                    .into_iter()
                    .map(|p| {
                        let b = seed[&p].clone();
                        (p, b)
                    })
                    .collect())
            };
            return Ok(Observed {
                base_head: TO_BE_CREATED.to_string(),
                stack_files: pick(&t.files)?,
                cluster_files: pick(&t.clusters)?,
                branches: stacks
                    .into_iter()
                    .map(|s| (s, BranchState::default()))
                    .collect(),
                upgrades: BTreeMap::new(),
            });
        }
    } else {
        forge
            .ensure_repo(&repo, &t.base_branch)
            .map_err(missing(t))?;
    }
    read((forge, contents), t, limits)
}

/// A tenant repository that does not exist: said as such, never created empty (an empty
/// repository would only fail later with "matches no file", pointing away from the cause).
fn missing(t: &TenantConfig) -> impl Fn(ForgeError) -> String + '_ {
    move |e| match e {
        ForgeError::NotFound { .. } => format!(
            "{}: no such repository (create it, or check that the token can see it; the local \
             forge creates only `forge.repository` and the repositories `forge.local.seed` names, \
             in the first release run)",
            t.repository
        ),
        other => other.to_string(),
    }
}

/// Read one tenant repository as it is: base branch, matched files, and per followed stack
/// the bot branch with its commits and pull requests. Never writes, never seeds: the one
/// reading of a tenant, for the plan ([`tenant`]) and the status report alike. What a commit
/// holds is read once per run (`contents`): the status reading a tenant the run changed reads
/// its branch heads again, not the files at a base head the tenant stage read.
pub fn read(
    (forge, contents): (&dyn Forge, &super::contents::Contents),
    t: &TenantConfig,
    limits: &crate::yaml::Limits,
) -> Result<Observed, String> {
    let (repo, stacks) = identify(t)?;
    let e = |e: ForgeError| e.to_string();
    let in_repo = |m: String| format!("{}: {m}", t.repository);
    let Some(base_head) = forge
        .branch_head(&repo, &t.base_branch)
        .map_err(missing(t))?
    else {
        return Err(format!(
            "{}: base branch `{}` does not exist",
            t.repository, t.base_branch
        ));
    };
    let paths = contents.list_files(forge, &repo, &base_head).map_err(e)?;
    let read = |list: Vec<String>| -> Result<BTreeMap<String, Vec<u8>>, String> {
        list.into_iter()
            .map(|p| match contents.read_file(forge, &repo, &base_head, &p) {
                Ok(Some(b)) => Ok((p, b)),
                Ok(None) => Err(format!("{}: `{p}` vanished while reading", t.repository)),
                Err(err) => Err(err.to_string()),
            })
            .collect()
    };
    let stack_files = read(match_globs(&t.files, &paths).map_err(in_repo)?)?;
    let cluster_files = read(match_globs(&t.clusters, &paths).map_err(in_repo)?)?;
    let paths: Vec<&String> = stack_files.keys().chain(cluster_files.keys()).collect();
    let branch = |name: &str| read_branch(forge, &repo, &base_head, name, &paths).map_err(e);
    let mut branches = BTreeMap::new();
    for stack in &stacks {
        branches.insert(stack.clone(), branch(&branch_name(stack))?);
    }
    let mut upgrades = BTreeMap::new();
    if t.policy.upgrade.clusters != UpgradeAction::Ignore {
        // A file that does not parse fails the tenant in the plan, with its line.
        for name in
            crate::tenants::upgrade::branches(&stacks, &cluster_files, limits).unwrap_or_default()
        {
            let state = branch(&name)?;
            upgrades.insert(name, state);
        }
    }
    Ok(Observed {
        base_head,
        stack_files,
        cluster_files,
        branches,
        upgrades,
    })
}

/// One bot branch: its head, the commits the base lacks, its pull requests, and (only when it
/// holds a merge of the base) its versions of the tenant's files.
fn read_branch(
    forge: &dyn Forge,
    repo: &RepoRef,
    base_head: &str,
    branch: &str,
    paths: &[&String],
) -> Result<BranchState, ForgeError> {
    let head = forge.branch_head(repo, branch)?;
    let mut state = BranchState {
        pulls: forge.find_pulls(repo, branch)?,
        ..BranchState::default()
    };
    if let Some(h) = &head {
        state.commits = forge.commits_between(repo, base_head, h)?;
        // A branch with a merge of the base may hold content its bot commit does not
        // name: its files are read (a few reads, only in that case).
        if state.commits.iter().any(|c| c.parents.len() > 1) {
            let mut files = BTreeMap::new();
            for p in paths {
                if let Some(b) = forge.read_file(repo, h, p)? {
                    files.insert((*p).clone(), b);
                }
            }
            state.files = Some(files);
        }
    }
    state.head = head;
    Ok(state)
}

/// The newest published forge release of each series of `stacks` in `index`, with its
/// Kubernetes version by the status's rule ([`super::versions::ForgeVersions::of`]: its notes,
/// else one `metadata.yaml` download, once per run) and the versions its earlier releases ship,
/// as their notes say. A `metadata.yaml` that cannot be downloaded fails them all
/// ([`TenantsError::Metadata`]): left out, its series would read as "nothing released".
pub fn available_releases(
    forge: &dyn Forge,
    repo: &RepoRef,
    (index, versions): (&ReleaseIndex, &super::versions::ForgeVersions),
    stacks: &BTreeSet<StackId>,
) -> Result<Vec<AvailableRelease>, TenantsError> {
    let mut out = Vec::new();
    for ((stack, minor), releases) in index.forge_series() {
        if !stacks.contains(stack) {
            continue;
        }
        let Some(r) = index.newest_on_forge(stack, *minor) else {
            continue;
        };
        let name = ReleaseName::parse(&r.tag).expect("indexed by its name");
        let metadata_error =
            |source: Box<dyn std::error::Error + Send + Sync>| TenantsError::Metadata {
                release: name.to_string(),
                source,
            };
        let kubernetes = match versions
            .of(forge, repo, &name, r)
            .map_err(|e| metadata_error(Box::new(e)))?
        {
            Kubernetes::Known(k) => k,
            Kubernetes::NoneNamed => {
                tracing::warn!("release {name} names no Kubernetes version; skipped");
                continue;
            }
            // A file a person must fix (exit 2): left out, its series would read as "nothing
            // released", as when it does not download.
            Kubernetes::Unreadable(why) => {
                return Err(metadata_error(Box::new(crate::error::InvalidInput(why))));
            }
        };
        // What each older release ships, as its notes say: no request beyond the listing.
        let earlier = releases
            .iter()
            .filter(|o| !o.release.draft && o.n < name.version.major)
            .filter_map(|o| {
                let n = ReleaseName::parse(&o.release.tag).ok()?;
                Some((o.n, kubernetes_of(&n, None, &o.release.body)?))
            })
            .collect();
        out.push(AvailableRelease {
            name,
            kubernetes,
            html_url: r.html_url.clone(),
            body: r.body.clone(),
            earlier,
        });
    }
    Ok(out)
}

/// The newest stable release per stack × minor among the OCI repository's tags in `index`,
/// for the series where it is newer than every release in `known` (read from the forge
/// already): for each such series the manifest and `metadata.yaml` of its newest tag only, as
/// this run read them ([`super::oci::OciReads`]: once per run). A release without a readable
/// Kubernetes version is skipped with a warning.
pub fn oci_releases(
    (registry, reads): (&Registry, &super::oci::OciReads),
    index: &ReleaseIndex,
    stacks: &BTreeSet<StackId>,
    known: &[AvailableRelease],
) -> Result<Vec<AvailableRelease>, OciError> {
    let reference = registry.target().reference();
    let mut out = Vec::new();
    for ((stack, minor), n) in index.oci_series() {
        if !stacks.contains(stack) {
            continue;
        }
        let name = crate::index::name_of(stack, *minor, n);
        let covered = known.iter().any(|k| {
            k.name.stack == name.stack
                && k.name.minor == name.minor
                && !Rank::oci(n).replaces(Rank::forge(k.name.version.major, 0))
        });
        if covered {
            continue;
        }
        let tag = name.to_string();
        let Some(kubernetes) = reads.get(registry, &name)?.and_then(|r| r.kubernetes) else {
            tracing::warn!(
                "OCI release {reference}:{tag} names no Kubernetes version in its metadata.yaml; skipped"
            );
            continue;
        };
        out.push(AvailableRelease {
            body: format!("Published to the OCI repository as `{reference}:{tag}`."),
            name,
            kubernetes,
            html_url: String::new(),
            earlier: BTreeMap::new(),
        });
    }
    Ok(out)
}
