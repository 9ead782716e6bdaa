//! Reading what `stackbot status` shows beside upstream: the releases of the forge and the
//! OCI repository (the Kubernetes version and date of each), the open release pull requests,
//! and every tenant repository. Reads only, no token needed on the local forge: one release
//! listing (plus a `metadata.yaml` for a release whose notes name no Kubernetes version), one
//! manifest per OCI series, and per tenant its base branch, listing, matched files, and per
//! followed stack the bot branch's pull requests, head and commits. The evaluation is the
//! pure [`crate::status::compute`].

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::ObserveError;
use crate::config::TenantConfig;
use crate::forge::{Forge, ForgeError, PullState, RepoRef};
use crate::index::ReleaseIndex;
use crate::model::{KubeVersion, ReleaseName, StackId};
use crate::status::{Release, ReleasePull, Target, UpstreamMinor};
use crate::tenants::Observations;
use crate::tenants::plan::Observed;
use crate::tenants::releases::kubernetes_of;

/// Tenants read at the same time.
const CONCURRENCY: usize = 8;

/// The published stable releases of the configured stacks on the forge. The Kubernetes
/// version comes from the notes (no request), else from `metadata.yaml` (one download).
pub fn forge_releases(
    forge: &dyn Forge,
    repo: &RepoRef,
    index: &ReleaseIndex,
    stacks: &BTreeSet<StackId>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Release>, ObserveError> {
    let mut out = Vec::new();
    for r in index.listed().iter().filter(|r| !r.draft) {
        let Ok(name) = ReleaseName::parse(&r.tag) else {
            continue;
        };
        if !stacks.contains(&name.stack) || !name.version.is_stable() {
            continue;
        }
        let mut kubernetes = kubernetes_of(&name, None, &r.body);
        if kubernetes.is_none()
            && let Some(a) = r.assets.iter().find(|a| a.name == "metadata.yaml")
        {
            let meta = forge.download_asset(repo, r.id, a)?;
            kubernetes = kubernetes_of(&name, Some(&meta), &r.body);
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
pub fn oci_releases(
    oci: &crate::oci::Publisher,
    index: &ReleaseIndex,
    minors: &[UpstreamMinor],
    listed: &BTreeSet<String>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Release>, ObserveError> {
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
pub fn release_pulls(
    forge: &dyn Forge,
    repo: &RepoRef,
    minors: &[UpstreamMinor],
) -> Result<Vec<ReleasePull>, ObserveError> {
    let mut out = Vec::new();
    for m in minors.iter().filter(|m| m.may_have_release_pull()) {
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

/// Every tenant, read concurrently unless `known` holds it (in configuration order); each
/// one's trouble stays in its own reading.
pub fn tenants(
    forge: &dyn Forge,
    all: &[TenantConfig],
    known: &Observations,
    limits: &crate::yaml::Limits,
) -> Vec<Result<Observed, String>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Result<Observed, String>)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..CONCURRENCY.clamp(1, all.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(t) = all.get(i) else { break };
                    let read = match known.get(&t.name) {
                        Some(o) => Ok(o.clone()),
                        None => super::tenants::read(forge, t, limits),
                    };
                    results.lock().expect("results lock").push((i, read));
                }
            });
        }
    });
    let mut out = results.into_inner().expect("results lock");
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, f)| f).collect()
}
