//! Read what exists: the releases, tags and base branch of the cluster-stacks repository, and
//! the tags and releases of the OCI repository. Facts only: whether a series is up to date,
//! which number comes next and which unfinished release to finish are decided by
//! [`crate::plan`] (observe asks [`crate::plan::series::needs_details`] only to skip reads that
//! cannot change the plan). Never writes; needs no token on the local forge.
//!
//! Cost of a run with nothing to do: one release listing (plus the OCI tag listing when `oci`
//! is a target), then one `hashes.json` per series. A series that needs a release costs more:
//! its metadata, the release set its latest release shipped, the base tree, and a probe of the
//! tags above its latest release (one request when there is no unfinished release). The probe
//! starts above the newest release of *any* target, so its cost never grows with history.

use crate::forge::{Forge, ForgeError, ReleaseInfo, RepoRef, read_subtree};
use crate::model::{FileTree, ReleaseName, ReleaseSet, StackVersion};
use crate::oci::Publisher;
use crate::package::{Metadata, ReleaseHashes};
use crate::plan::{self, Desired, Latest, Mode, Observed, SeriesObserved, TaggedTree};

/// Why observing failed. All variants are transient: the next run reads again.
#[derive(Debug, thiserror::Error)]
pub enum ObserveError {
    #[error(transparent)]
    Forge(#[from] ForgeError),
    #[error(transparent)]
    Oci(#[from] crate::oci::OciError),
}

/// Where to look.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    pub repo: &'a RepoRef,
    pub base_branch: &'a str,
    pub mode: Mode,
    /// Repository path of `stackbot.lock`.
    pub lock_path: &'a str,
}

/// Read everything `plan` needs for `desired`.
pub fn observe(
    forge: &dyn Forge,
    oci: Option<&Publisher>,
    scope: Scope<'_>,
    desired: &[Desired],
) -> Result<Observed, ObserveError> {
    let releases = forge.list_releases(scope.repo)?;
    let (index, warnings) = plan::index_releases(&releases);
    let mut obs = Observed {
        base_branch: scope.base_branch.to_string(),
        releases: releases.clone(),
        warnings,
        ..Observed::default()
    };
    if let Some(oci) = oci {
        let tags = oci.tags()?;
        let mut unparsable: Vec<&String> = tags
            .iter()
            .filter(|t| ReleaseName::parse(t).is_err())
            .collect();
        unparsable.dedup();
        for t in unparsable {
            obs.warnings.push(format!(
                "OCI tag `{t}` skipped: not a cluster-stack release name CSO can parse"
            ));
        }
        obs.oci_tags = Some(tags);
    }
    let mut base: Option<(Option<String>, Vec<String>)> = None;
    for d in desired {
        let series = d.series();
        let empty = Vec::new();
        let rels = index.get(&series).unwrap_or(&empty);
        let mut so = SeriesObserved::default();
        let forge_latest = plan::latest_published(rels);
        if let Some(l) = forge_latest {
            so.forge_latest = Some(recorded(forge, scope.repo, l, &mut obs.warnings)?);
        }
        if let (Some(oci), Some(tags)) = (oci, obs.oci_tags.as_deref()) {
            so.oci_latest = oci_latest(oci, tags, d, so.forge_latest.as_ref(), &mut obs.warnings)?;
            // The forge's latest release is not in the registry yet: its assets are what a
            // push would send.
            if let Some(l) = forge_latest
                && !tags.contains(&l.tag)
            {
                let mut assets = FileTree::new();
                for a in &l.assets {
                    assets.insert(a.name.clone(), forge.download_asset(scope.repo, l.id, a)?);
                }
                so.latest_assets = Some(assets);
            }
        }
        if !plan::series::needs_details(d, &so) {
            obs.series.insert(series, so);
            continue;
        }
        if let (Some(l), Some(lat)) = (forge_latest, so.forge_latest.as_mut()) {
            lat.metadata = read_asset(forge, scope.repo, l, "metadata.yaml")?.and_then(|b| {
                parse_or_warn(&mut obs.warnings, &l.tag, "metadata.yaml", || {
                    Metadata::parse(&String::from_utf8_lossy(&b)).map_err(|e| e.to_string())
                })
            });
        }
        for lat in [so.forge_latest.as_mut(), so.oci_latest.as_mut()]
            .into_iter()
            .flatten()
        {
            lat.set = released_set(forge, scope.repo, &lat.tag, d, scope.lock_path)?;
        }
        if base.is_none() {
            let head = match forge.branch_head(scope.repo, scope.base_branch) {
                Ok(h) => h,
                Err(ForgeError::NotFound { .. }) => None,
                Err(e) => return Err(e.into()),
            };
            let files = match &head {
                Some(h) => forge.list_files(scope.repo, h)?,
                None => Vec::new(),
            };
            if let Some(h) = &head
                && files.iter().any(|f| f == scope.lock_path)
            {
                obs.base_lock = forge.read_file(scope.repo, h, scope.lock_path)?;
            }
            obs.base_head = head.clone();
            base = Some((head, files));
        }
        let (head, files) = base.as_ref().expect("just set");
        so.base_tree = Some(match head {
            Some(h) => read_subtree(forge, scope.repo, h, files, &d.path)?,
            None => FileTree::new(),
        });
        so.tags = tags_above(forge, scope.repo, d, &so, rels, obs.oci_tags.as_deref())?;
        if scope.mode == Mode::PullRequest {
            let branch = plan::release_branch(&series);
            let pulls = match forge.find_pulls(scope.repo, &branch) {
                Ok(p) => p,
                Err(ForgeError::NotFound { .. }) => Vec::new(),
                Err(e) => return Err(e.into()),
            };
            obs.pulls.insert(branch, pulls);
        }
        obs.series.insert(series, so);
    }
    Ok(obs)
}

/// The tags `…-v<N>` above the newest known release, each with the tree it points at: from
/// `latest + 1` upwards, until the first missing tag past every number any release, draft or
/// OCI tag uses, or the first tag holding the desired tree. Normally that is a single lookup
/// that finds nothing.
fn tags_above(
    forge: &dyn Forge,
    repo: &RepoRef,
    d: &Desired,
    so: &SeriesObserved,
    rels: &[plan::SeriesRelease<'_>],
    oci_tags: Option<&[String]>,
) -> Result<std::collections::BTreeMap<u64, TaggedTree>, ObserveError> {
    let known = plan::series::decide(d, so, rels, oci_tags);
    let start = known.latest.map_or(0, |l| l.n) + 1;
    let known_highest = known.highest.unwrap_or(0);
    let mut out = std::collections::BTreeMap::new();
    let mut k = start;
    loop {
        let tag = ReleaseName {
            stack: d.stack.clone(),
            minor: d.minor,
            version: StackVersion::stable(k),
        }
        .to_string();
        match forge.tag_target(repo, &tag) {
            Ok(Some(commit)) => {
                let files = forge.list_files(repo, &commit)?;
                let tree = read_subtree(forge, repo, &commit, &files, &d.path)?;
                // The lowest tag holding exactly the desired tree is the unfinished release
                // plan will finish; nothing above it matters.
                let done = tree == d.rendered;
                out.insert(k, TaggedTree { commit, tree });
                if done {
                    break;
                }
            }
            Ok(None) | Err(ForgeError::NotFound { .. }) => {
                if k > known_highest {
                    break;
                }
            }
            Err(e) => return Err(e.into()),
        }
        k += 1;
    }
    Ok(out)
}

/// A published forge release and the `hashes.json` it carries (metadata and set are read later,
/// only when the series needs a release).
fn recorded(
    forge: &dyn Forge,
    repo: &RepoRef,
    l: &ReleaseInfo,
    warnings: &mut Vec<String>,
) -> Result<Latest, ObserveError> {
    let n = ReleaseName::parse(&l.tag)
        .map(|r| r.version.major)
        .unwrap_or(0);
    let hashes = read_asset(forge, repo, l, "hashes.json")?.and_then(|b| {
        parse_or_warn(warnings, &l.tag, "hashes.json", || {
            ReleaseHashes::parse_json(&String::from_utf8_lossy(&b)).map_err(|e| e.to_string())
        })
    });
    Ok(Latest {
        tag: l.tag.clone(),
        n,
        hashes,
        metadata: None,
        set: None,
    })
}

/// The highest release of the series in the registry, pulled, unless it is the forge's latest
/// (then the forge's copy is already known and the pull would cost a request per layer).
fn oci_latest(
    oci: &Publisher,
    tags: &[String],
    d: &Desired,
    forge_latest: Option<&Latest>,
    warnings: &mut Vec<String>,
) -> Result<Option<Latest>, ObserveError> {
    let Some(n) = crate::oci::versioning::scan_tags(tags, &d.stack, d.minor).highest else {
        return Ok(None);
    };
    if forge_latest.is_some_and(|l| l.n >= n) {
        return Ok(None);
    }
    let tag = ReleaseName {
        stack: d.stack.clone(),
        minor: d.minor,
        version: StackVersion::stable(n),
    }
    .to_string();
    let files = oci.registry().pull_release(&tag)?;
    let text = |name: &str| {
        files
            .get(name)
            .map(|b| String::from_utf8_lossy(b).into_owned())
    };
    let label = format!("OCI {tag}");
    let hashes = text("hashes.json").and_then(|t| {
        parse_or_warn(warnings, &label, "hashes.json", || {
            ReleaseHashes::parse_json(&t).map_err(|e| e.to_string())
        })
    });
    let metadata = text("metadata.yaml").and_then(|t| {
        parse_or_warn(warnings, &label, "metadata.yaml", || {
            Metadata::parse(&t).map_err(|e| e.to_string())
        })
    });
    Ok(Some(Latest {
        tag,
        n,
        hashes,
        metadata,
        set: None,
    }))
}

/// Parse a release file; an unreadable one is a warning (the series then releases afresh).
fn parse_or_warn<T>(
    warnings: &mut Vec<String>,
    release: &str,
    file: &str,
    parse: impl FnOnce() -> Result<T, String>,
) -> Option<T> {
    parse()
        .map_err(|e| warnings.push(format!("release {release}: {file} unreadable: {e}")))
        .ok()
}

/// The release set a release shipped: `stackbot.lock` at the commit its tag points at. `None`
/// when the tag, the lock or the entry is missing (the notes then show no "was").
fn released_set(
    forge: &dyn Forge,
    repo: &RepoRef,
    tag: &str,
    d: &Desired,
    lock_path: &str,
) -> Result<Option<ReleaseSet>, ObserveError> {
    let commit = match forge.tag_target(repo, tag) {
        Ok(Some(c)) => c,
        Ok(None) | Err(ForgeError::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let Some(bytes) = forge.read_file(repo, &commit, lock_path)? else {
        return Ok(None);
    };
    Ok(
        crate::lock::Lock::parse(&String::from_utf8_lossy(&bytes), lock_path.as_ref())
            .ok()
            .and_then(|l| l.get(&d.stack, d.minor).cloned()),
    )
}

fn read_asset(
    forge: &dyn Forge,
    repo: &RepoRef,
    release: &ReleaseInfo,
    name: &str,
) -> Result<Option<Vec<u8>>, ObserveError> {
    match release.assets.iter().find(|a| a.name == name) {
        Some(a) => Ok(Some(forge.download_asset(repo, release.id, a)?)),
        None => Ok(None),
    }
}
