//! Reading what `stackbot status` shows beside upstream: the releases of the forge and the
//! OCI repository (the Kubernetes version and date of each), the open release pull requests,
//! and every tenant repository. Reads only, no token needed on the local forge: one release
//! listing (plus a `metadata.yaml` for a release whose notes name no Kubernetes version), one
//! manifest and its `metadata.yaml` per OCI series, and per tenant its base branch, listing,
//! matched files, and per followed stack the bot branch's pull requests, head and commits. The
//! evaluation is the pure [`crate::status::compute`].

use std::collections::BTreeSet;

use super::ObserveError;
use crate::config::TenantConfig;
use crate::forge::{Forge, ForgeError, PullState, RepoRef};
use crate::index::ReleaseIndex;
use crate::model::{ReleaseName, StackId};
use crate::status::{Release, ReleasePull, Target, UpstreamMinor};
use crate::tenants::Observations;
use crate::tenants::plan::Observed;

/// Tenants read at the same time.
const CONCURRENCY: usize = 8;

/// The published stable releases of the configured stacks on the forge. The Kubernetes
/// version is [`super::versions::ForgeVersions::of`]'s, the tenants' rule: from the notes (no
/// request), else from `metadata.yaml` (one download, once per run). A
/// `metadata.yaml` that cannot be downloaded does not fail the reading: the release stays, its
/// Kubernetes version unknown with the file and the cause (`Release::unread`, and a warning),
/// so its verdict is `unknown` naming them ([`crate::status::stacks::status`]), never the
/// "never released" (the minor window) that leaving it out would read as. `status`, the
/// dashboard and the `release` summary read releases here, so they say the same of it.
pub fn forge_releases(
    forge: &dyn Forge,
    repo: &RepoRef,
    (index, stacks): (&ReleaseIndex, &BTreeSet<StackId>),
    versions: &super::versions::ForgeVersions,
    warnings: &mut Vec<String>,
) -> Vec<Release> {
    let mut out = Vec::new();
    for r in index.listed().iter().filter(|r| !r.draft) {
        let Ok(name) = ReleaseName::parse(&r.tag) else {
            continue;
        };
        if !stacks.contains(&name.stack) || !name.version.is_stable() {
            continue;
        }
        let read = versions
            .of(forge, repo, &name, r)
            .map_err(|e| e.to_string());
        let (kubernetes, unread) = match read {
            Ok(super::versions::Kubernetes::Known(k)) => (Some(k), None),
            Ok(super::versions::Kubernetes::NoneNamed) => (None, None),
            Ok(super::versions::Kubernetes::Unreadable(e)) | Err(e) => {
                let why = format!("release {name}: metadata.yaml could not be read ({e})");
                warnings.push(format!("{why}: its Kubernetes version is unknown"));
                (None, Some(why))
            }
        };
        if kubernetes.is_none() && unread.is_none() {
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
            unread,
        });
    }
    out
}

/// The releases in the OCI repository the status looks at: the newest of every series, and
/// every tag a tenant lists. Per tag its manifest (with `oci.created_annotation`, the date) and
/// its `metadata.yaml`, whose Kubernetes version [`crate::tenants::releases::kubernetes_of`] reads: the one rule for
/// every release, so `status`, the `release` summary and the tenants never disagree on it
/// (the manifest's `kubernetesVersion` annotation is a copy that a hand-pushed release can get
/// wrong). Each read once per run ([`super::oci::OciReads`]): what the observation or the
/// tenants read already is not read again.
pub fn oci_releases(
    (registry, reads): (&crate::oci::Registry, &super::oci::OciReads),
    index: &ReleaseIndex,
    minors: &[UpstreamMinor],
    listed: &BTreeSet<String>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Release>, ObserveError> {
    let reference = registry.target().reference();
    let mut wanted: BTreeSet<String> = BTreeSet::new();
    for m in minors {
        if let Some(n) = index.newest_in_oci(&m.stack, m.minor) {
            wanted.insert(crate::index::name_of(&m.stack, m.minor, n).to_string());
        }
    }
    wanted.extend(listed.iter().filter(|t| index.in_oci(t)).cloned());
    let mut out = Vec::new();
    for tag in wanted {
        let name = ReleaseName::parse(&tag).expect("built or listed as a release name");
        let Some(read) = reads.get(registry, &name)? else {
            continue;
        };
        if read.kubernetes.is_none() {
            warnings.push(format!(
                "OCI {reference}:{tag} names no Kubernetes version in its metadata.yaml"
            ));
        }
        out.push(Release {
            name,
            target: Target::Oci,
            kubernetes: read.kubernetes,
            published_at: read.created,
            url: Some(format!("{reference}:{tag}")),
            unread: None,
        });
    }
    Ok(out)
}

/// Open release pull requests of the series upstream has news for (`mode: pull-request`). A
/// branch whose pull requests `known` has (what this run read and left) is not read again.
pub fn release_pulls(
    forge: &dyn Forge,
    repo: &RepoRef,
    minors: &[UpstreamMinor],
    known: &dyn Fn(&str) -> Option<Vec<crate::forge::PullInfo>>,
) -> Result<Vec<ReleasePull>, ObserveError> {
    let mut out = Vec::new();
    for m in minors.iter().filter(|m| m.may_have_release_pull()) {
        let series = crate::model::series_prefix(&m.stack, m.minor);
        let branch = crate::plan::release_branch(&series);
        let pulls = match known(&branch)
            .map(Ok)
            .unwrap_or_else(|| forge.find_pulls(repo, &branch))
        {
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

/// Every tenant, read concurrently unless `known` holds it (in configuration order); each
/// one's trouble stays in its own reading.
pub fn tenants(
    forge: (&dyn Forge, &super::contents::Contents),
    all: &[TenantConfig],
    known: &Observations,
    limits: &crate::yaml::Limits,
) -> Vec<Result<Observed, String>> {
    crate::fan_out::fan_out(all, CONCURRENCY, |t| match known.get(&t.name) {
        Some(o) => Ok(o.clone()),
        None => super::tenants::read(forge, t, limits),
    })
}
