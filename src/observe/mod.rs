//! Read what exists: the releases, tags and base branch of the cluster-stacks repository, and
//! the tags and releases of the OCI repository. Facts only: whether a series is up to date,
//! which number comes next and which unfinished release to finish are decided by
//! [`crate::plan`] (observe asks [`crate::plan::series::needs_details`] only to skip reads that
//! cannot change the plan). Never writes; needs no token on the local forge.
//!
//! Cost of a run with nothing to do: one release listing (plus the OCI tag listing when `oci`
//! is a target), then one `hashes.json` per series (with `oci` alone: the latest release pulled
//! from the registry and one tag lookup per series). A series that needs a release costs more:
//! its metadata, the release set its latest release shipped, the base tree and lock, a probe of
//! the tags above its latest release, and in pull-request mode its release branch and pull
//! requests. The probe starts above the newest release of *any* target and walks only the
//! numbers some evidence names plus the first gap, so its cost never grows with history.

pub mod contents;
pub mod gate;
pub mod oci;
pub mod status;
pub mod tenants;
pub mod versions;
pub mod zip;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use crate::forge::{Forge, ForgeError, PullInfo, PullState, ReleaseInfo, RepoRef, read_subtree};
use crate::index::{Numbered, ReleaseIndex};
use crate::lock::Lock;
use crate::model::{FileTree, ReleaseName};
use crate::oci::Publisher;
use crate::package::{Metadata, ReleaseHashes};
use crate::plan::{
    self, Desired, Latest, Mode, Observed, ReleaseBranch, SeriesObserved, TaggedTree,
};

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
    /// The bot's committer e-mail: commits by anyone else on a release branch are a human's.
    pub bot_email: &'a str,
    /// `publish: [oci]` alone (no forge releases).
    pub oci_only: bool,
}

/// What one run has read through observe, so that nothing is read twice: the base branch (its
/// head, file list and `stackbot.lock`, shared by [`Reads::base_lock`] and every series that
/// needs a release) and each series' reading, kept with the part of the release index it was
/// read against.
///
/// Why: a release run asks twice. The pipeline needs the base lock's publication dates before
/// it renders (an outage of the releases API), then the observation reads the base branch for
/// the series that need a release; and when the conformance gate holds a series back (or gives
/// a release pull request its line), the rest is planned again. Each time the same commit, tags
/// and assets were read anew. Now the second plan is made from the first reading, with the
/// index as the gate's writes left it: a series whose releases in the index changed is read
/// again, the others are not.
///
/// Valid while the run has not written to the base branch or to a stable release: the gate's
/// writes (candidate pre-releases, their tags and records) touch neither, `apply`'s do, so a
/// run keeps one `Reads` from rendering to the last plan and none after `apply`.
#[derive(Debug, Default)]
pub struct Reads {
    base: Base,
    series: BTreeMap<String, SeriesRead>,
}

impl Reads {
    /// `stackbot.lock` on the base branch, if there is a readable one (an unreadable one is
    /// `plan`'s error to report). For the pipeline, which needs the recorded publication dates
    /// before it renders; the observation after it reads the same head and lock from here.
    pub fn base_lock(
        &mut self,
        forge: &dyn Forge,
        scope: Scope<'_>,
    ) -> Result<Option<Lock>, ObserveError> {
        Ok(self.base.lock(forge, scope)?.1)
    }

    /// One series, from what was read of it already when that was read against the same
    /// releases of the index, else from the forge (its details only when the plan needs them).
    fn series(
        &mut self,
        forge: &dyn Forge,
        oci: Option<&Publisher>,
        scope: Scope<'_>,
        index: &ReleaseIndex,
        d: &Desired,
    ) -> Result<OneSeries, ObserveError> {
        let key = d.series();
        let against = Against::of(index, d);
        if self.series.get(&key).is_none_or(|r| r.against != against) {
            let mut warnings = Vec::new();
            let latest = latest(forge, oci, scope, index, d, &mut warnings)?;
            let read = SeriesRead {
                against,
                latest,
                warnings,
                details: None,
            };
            self.series.insert(key.clone(), read);
        }
        let read = self.series.get_mut(&key).expect("read above");
        if !plan::series::needs_details(d, &read.latest) {
            return Ok(OneSeries {
                so: read.latest.clone(),
                warnings: read.warnings.clone(),
                pulls: None,
                detailed: false,
            });
        }
        if read.details.as_ref().is_none_or(|x| x.path != d.path) {
            let so = read.latest.clone();
            read.details = Some(details(forge, scope, index, d, so, &mut self.base)?);
        }
        let x = read.details.as_ref().expect("read above");
        Ok(OneSeries {
            so: x.so.clone(),
            warnings: read.warnings.iter().chain(&x.warnings).cloned().collect(),
            pulls: x.pulls.clone(),
            detailed: true,
        })
    }
}

/// The base branch, each part read the first time it is needed (`None`: not read yet), and
/// `stackbot.lock` at each commit read (the base head's, a latest release's tag's: a release
/// tagged on the base head shares its lock, one read).
#[derive(Debug, Default)]
struct Base {
    head: Option<Option<String>>,
    files: Option<Vec<String>>,
    /// By commit: the lock's bytes and, when they parse, the lock.
    locks: BTreeMap<String, (Option<Vec<u8>>, Option<Lock>)>,
}

impl Base {
    fn head(
        &mut self,
        forge: &dyn Forge,
        scope: Scope<'_>,
    ) -> Result<Option<String>, ObserveError> {
        if let Some(h) = &self.head {
            return Ok(h.clone());
        }
        let head = or_none(forge.branch_head(scope.repo, scope.base_branch))?;
        Ok(self.head.insert(head).clone())
    }

    fn files(&mut self, forge: &dyn Forge, scope: Scope<'_>) -> Result<&[String], ObserveError> {
        if self.files.is_none() {
            let files = match self.head(forge, scope)? {
                Some(h) => forge.list_files(scope.repo, &h)?,
                None => Vec::new(),
            };
            self.files = Some(files);
        }
        Ok(self.files.as_deref().expect("read above"))
    }

    /// The lock at the base head (none without a base branch, or when its file list lacks it).
    fn lock(
        &mut self,
        forge: &dyn Forge,
        scope: Scope<'_>,
    ) -> Result<(Option<Vec<u8>>, Option<Lock>), ObserveError> {
        let Some(head) = self.head(forge, scope)? else {
            return Ok((None, None));
        };
        let listed_without =
            (self.files.as_ref()).is_some_and(|f| !f.iter().any(|p| p == scope.lock_path));
        if listed_without {
            return Ok((None, None));
        }
        Ok(self.lock_at(forge, scope, &head)?.clone())
    }

    /// `stackbot.lock` at `commit`, read the first time only.
    fn lock_at(
        &mut self,
        forge: &dyn Forge,
        scope: Scope<'_>,
        commit: &str,
    ) -> Result<&(Option<Vec<u8>>, Option<Lock>), ObserveError> {
        if !self.locks.contains_key(commit) {
            let bytes = forge.read_file(scope.repo, commit, scope.lock_path)?;
            // An unreadable lock is plan's error to report (with file and line).
            let lock = bytes.as_ref().and_then(|b| {
                Lock::parse(&String::from_utf8_lossy(b), scope.lock_path.as_ref()).ok()
            });
            self.locks.insert(commit.to_string(), (bytes, lock));
        }
        Ok(&self.locks[commit])
    }
}

/// What of the release index a series' reading depends on: its forge releases (drafts
/// included), its newest OCI number and whether the registry has its newest forge release.
#[derive(Debug, PartialEq)]
struct Against {
    forge: Vec<ReleaseInfo>,
    oci: Option<u64>,
    latest_in_oci: bool,
}

impl Against {
    fn of(index: &ReleaseIndex, d: &Desired) -> Against {
        Against {
            forge: (index.forge(&d.stack, d.minor).iter())
                .map(|r| r.release.clone())
                .collect(),
            oci: index.newest_in_oci(&d.stack, d.minor),
            latest_in_oci: index
                .newest_on_forge(&d.stack, d.minor)
                .is_some_and(|l| index.in_oci(&l.tag)),
        }
    }
}

/// One series as read: the cheap reads, and the details once a plan needed them.
#[derive(Debug)]
struct SeriesRead {
    against: Against,
    latest: SeriesObserved,
    warnings: Vec<String>,
    details: Option<Details>,
}

/// A series' details, read for the rendered path `path`.
#[derive(Debug)]
struct Details {
    path: String,
    so: SeriesObserved,
    warnings: Vec<String>,
    /// Pull-request mode: the release branch and its pull requests.
    pulls: Option<(String, Vec<PullInfo>)>,
}

/// One series as an observation takes it.
struct OneSeries {
    so: SeriesObserved,
    warnings: Vec<String>,
    pulls: Option<(String, Vec<PullInfo>)>,
    /// Its details were needed (then the observation carries the base head and lock).
    detailed: bool,
}

/// What one run read, by key: an answer whose content cannot change while the run lasts (a
/// commit's files, an asset's bytes, a release's manifest) is read once. Only answers are
/// kept: a read that failed is tried again when asked again.
#[derive(Debug)]
pub struct Memo<K, V>(Mutex<BTreeMap<K, V>>);

impl<K, V> Default for Memo<K, V> {
    fn default() -> Self {
        Memo(Mutex::new(BTreeMap::new()))
    }
}

impl<K: Ord, V: Clone> Memo<K, V> {
    /// The answer kept for `key`, else `read`'s (kept from then on).
    pub fn get_or<E>(&self, key: K, read: impl FnOnce() -> Result<V, E>) -> Result<V, E> {
        if let Some(v) = self.lock().get(&key) {
            return Ok(v.clone());
        }
        let v = read()?;
        self.lock().insert(key, v.clone());
        Ok(v)
    }

    /// Keep `value` for `key` (what another stage read).
    pub fn insert(&self, key: K, value: V) {
        self.lock().insert(key, value);
    }

    /// Forget what was kept for `key`.
    pub fn remove(&self, key: &K) {
        self.lock().remove(key);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<K, V>> {
        self.0.lock().expect("memo lock")
    }
}

/// Read everything `plan` needs for `desired`.
pub fn observe(
    forge: &dyn Forge,
    oci: Option<&Publisher>,
    scope: Scope<'_>,
    desired: &[Desired],
) -> Result<Observed, ObserveError> {
    let index = published(forge, scope.repo, ForgeReleases::Required, oci)?;
    observe_indexed(forge, oci, scope, desired, index, &mut Reads::default())
}

/// [`observe`] against a release index the run listed already (a run lists it once, see
/// [`crate::pipeline::run`]), reading only what `reads` does not hold yet.
pub fn observe_indexed(
    forge: &dyn Forge,
    oci: Option<&Publisher>,
    scope: Scope<'_>,
    desired: &[Desired],
    index: ReleaseIndex,
    reads: &mut Reads,
) -> Result<Observed, ObserveError> {
    let mut obs = Observed {
        base_branch: scope.base_branch.to_string(),
        warnings: index.warnings().to_vec(),
        index,
        ..Observed::default()
    };
    let mut detailed = false;
    for d in desired {
        let one = reads.series(forge, oci, scope, &obs.index, d)?;
        obs.warnings.extend(one.warnings);
        obs.pulls.extend(one.pulls);
        detailed |= one.detailed;
        obs.series.insert(d.series(), one.so);
    }
    // The base branch as the series that need a release read it (none: not read).
    if detailed {
        obs.base_head = reads.base.head(forge, scope)?;
        obs.base_lock = reads.base.lock(forge, scope)?.0;
    }
    Ok(obs)
}

/// The details of a series that needs a release, on top of its cheap reads `so`: its latest
/// releases' metadata and locks, the base tree under its path, the tags above its latest and,
/// in pull-request mode, its release branch and pull requests.
fn details(
    forge: &dyn Forge,
    scope: Scope<'_>,
    index: &ReleaseIndex,
    d: &Desired,
    mut so: SeriesObserved,
    base: &mut Base,
) -> Result<Details, ObserveError> {
    let mut warnings = Vec::new();
    latest_details(forge, scope, (index, &mut *base), d, &mut so, &mut warnings)?;
    let head = base.head(forge, scope)?;
    so.base_tree = Some(match &head {
        Some(h) => read_subtree(forge, scope.repo, h, base.files(forge, scope)?, &d.path)?,
        None => FileTree::new(),
    });
    so.base_released =
        (base.lock(forge, scope)?.1.as_ref()).and_then(|l| l.released_as(&d.stack, d.minor));
    so.tags = tags_above(forge, scope.repo, d, &so, index.forge(&d.stack, d.minor))?;
    let mut pulls = None;
    if scope.mode == Mode::PullRequest {
        let branch = plan::release_branch(&d.series());
        let found = release_pulls(forge, scope, &branch, &mut so)?;
        so.release_branch = Some(release_branch(
            forge,
            scope,
            head.as_deref(),
            &branch,
            &d.path,
        )?);
        pulls = Some((branch, found));
    }
    Ok(Details {
        path: d.path.clone(),
        so,
        warnings,
        pulls,
    })
}

/// The cheap reads of a series, enough to tell whether it is up to date: the latest forge
/// release and its `hashes.json`, the latest OCI release when newer, the forge release's
/// assets when the registry lacks it, and (with `oci` alone) whether the latest is tagged.
fn latest(
    forge: &dyn Forge,
    oci: Option<&Publisher>,
    scope: Scope<'_>,
    index: &ReleaseIndex,
    d: &Desired,
    warnings: &mut Vec<String>,
) -> Result<SeriesObserved, ObserveError> {
    let mut so = SeriesObserved::default();
    let forge_latest = index.newest_on_forge(&d.stack, d.minor);
    if let Some(l) = forge_latest {
        so.forge_latest = Some(recorded(forge, scope.repo, l, warnings)?);
    }
    if let Some(oci) = oci {
        so.oci_latest = oci_latest(oci, index, d, so.forge_latest.as_ref(), warnings)?;
        // The forge's latest release is not in the registry yet: its assets are what a
        // push would send.
        if let Some(l) = forge_latest
            && !index.in_oci(&l.tag)
        {
            let mut assets = FileTree::new();
            for a in &l.assets {
                assets.insert(a.name.clone(), forge.download_asset(scope.repo, l.id, a)?);
            }
            so.latest_assets = Some(assets);
        }
    }
    // With `oci` alone the push comes before the commit and the tag: a run that stopped
    // in between left the latest release without its tag.
    if scope.oci_only
        && let Some(l) = &so.oci_latest
    {
        so.latest_tagged = Some(tag_of(forge, scope.repo, &l.tag)?.is_some());
    }
    Ok(so)
}

/// What a series that needs a release reads of its latest releases: the forge release's
/// `metadata.yaml`, and the release set (and number) each one's lock recorded.
fn latest_details(
    forge: &dyn Forge,
    scope: Scope<'_>,
    (index, base): (&ReleaseIndex, &mut Base),
    d: &Desired,
    so: &mut SeriesObserved,
    warnings: &mut Vec<String>,
) -> Result<(), ObserveError> {
    if let (Some(l), Some(lat)) = (
        index.newest_on_forge(&d.stack, d.minor),
        so.forge_latest.as_mut(),
    ) {
        lat.metadata = read_asset(forge, scope.repo, l, "metadata.yaml")?.and_then(|b| {
            parse_or_warn(warnings, &l.tag, "metadata.yaml", || {
                Metadata::parse(&String::from_utf8_lossy(&b)).map_err(|e| e.to_string())
            })
        });
    }
    for lat in [so.forge_latest.as_mut(), so.oci_latest.as_mut()]
        .into_iter()
        .flatten()
    {
        let lock = released_lock(forge, scope, &lat.tag, base)?;
        lat.set = lock
            .as_ref()
            .and_then(|l| l.get(&d.stack, d.minor).cloned());
        let released = lock.as_ref().and_then(|l| l.released_as(&d.stack, d.minor));
        so.latest_released = so.latest_released.max(released);
        lat.lock = lock;
    }
    Ok(())
}

/// The release pull requests of a series' branch (pull-request mode), noting in `so` the
/// merged ones naming a release above the latest that the bot announced as published (then a
/// missing release was withdrawn).
fn release_pulls(
    forge: &dyn Forge,
    scope: Scope<'_>,
    branch: &str,
    so: &mut SeriesObserved,
) -> Result<Vec<PullInfo>, ObserveError> {
    let pulls = match forge.find_pulls(scope.repo, branch) {
        Ok(p) => p,
        Err(ForgeError::NotFound { .. }) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let p = plan::series::newest(so).map_or(0, |l| l.n);
    for pr in pulls.iter().filter(|pr| pr.state == PullState::Merged) {
        let above = plan::marker::parse(&pr.body)
            .and_then(|m| ReleaseName::parse(&m.tag).ok())
            .is_some_and(|n| n.version.major > p);
        if above
            && forge
                .list_comments(scope.repo, pr.number)?
                .iter()
                .any(|c| c.body.starts_with(plan::marker::PUBLISHED))
        {
            so.announced.insert(pr.number);
        }
    }
    Ok(pulls)
}

/// Whether a release index reads the forge's releases, and what a repository that does not
/// exist yet means for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForgeReleases {
    /// Not read at all (`publish: [oci]` alone, for tenants and the status report).
    Unread,
    /// Read; a repository that does not exist is an error (what the release stage plans on).
    Required,
    /// Read; a repository the first release run has not created yet has no releases (a
    /// report, which must not fail before anything was published).
    MissingIsEmpty,
}

/// The release index of a run: one release listing of the forge (unless `forge_releases` is
/// [`ForgeReleases::Unread`]) and, when OCI is a target, one tag listing of the registry.
/// Every "newest" and "highest number" of the run is read from it.
pub fn published(
    forge: &dyn Forge,
    repo: &RepoRef,
    forge_releases: ForgeReleases,
    oci: Option<&Publisher>,
) -> Result<ReleaseIndex, ObserveError> {
    let releases = match forge_releases {
        ForgeReleases::Unread => Vec::new(),
        read => match forge.list_releases(repo) {
            Ok(l) => l,
            Err(ForgeError::NotFound { .. }) if read == ForgeReleases::MissingIsEmpty => Vec::new(),
            Err(e) => return Err(e.into()),
        },
    };
    let tags = match oci {
        Some(oci) => Some(oci.tags()?),
        None => None,
    };
    Ok(ReleaseIndex::new(releases, tags))
}

/// `stackbot.lock` on the base branch, if there is a readable one (see [`Reads::base_lock`]),
/// for a command that observes nothing else of the base branch (`detect`).
pub fn base_lock(forge: &dyn Forge, scope: Scope<'_>) -> Result<Option<Lock>, ObserveError> {
    Reads::default().base_lock(forge, scope)
}

/// A series' release branch: its head, what it holds under `path` and in the lock, and the
/// commits on it (not on the base) that someone other than the bot authored.
fn release_branch(
    forge: &dyn Forge,
    scope: Scope<'_>,
    base_head: Option<&str>,
    branch: &str,
    path: &str,
) -> Result<ReleaseBranch, ObserveError> {
    let Some(h) = or_none(forge.branch_head(scope.repo, branch))? else {
        return Ok(ReleaseBranch::default());
    };
    let files = forge.list_files(scope.repo, &h)?;
    let tree = read_subtree(forge, scope.repo, &h, &files, path)?;
    let lock = if files.iter().any(|f| f == scope.lock_path) {
        forge.read_file(scope.repo, &h, scope.lock_path)?
    } else {
        None
    };
    let foreign = match base_head {
        Some(b) => forge
            .commits_between(scope.repo, b, &h)?
            .into_iter()
            .filter(|c| !c.is_by(scope.bot_email))
            .map(|c| c.sha)
            .collect(),
        None => Vec::new(),
    };
    Ok(ReleaseBranch {
        head: Some(h),
        tree,
        lock,
        foreign,
    })
}

/// The commit a tag points at; a missing tag is `None`.
fn tag_of(forge: &dyn Forge, repo: &RepoRef, tag: &str) -> Result<Option<String>, ObserveError> {
    or_none(forge.tag_target(repo, tag))
}

/// A forge's answer, with what does not exist (a branch, a tag, the repository) as `None`.
fn or_none<T>(answer: Result<Option<T>, ForgeError>) -> Result<Option<T>, ObserveError> {
    match answer {
        Err(ForgeError::NotFound { .. }) => Ok(None),
        other => Ok(other?),
    }
}

/// The tags `…-v<N>` above the newest known release, each with the tree it points at. Probed:
/// every number above it that a release, draft or lock names, and the run of consecutive tags
/// from `latest + 1` up to the first missing one. Normally that is a single lookup that finds
/// nothing, and never more than the evidence names: a stray `…-v18446744073709551615` costs
/// one lookup, not a walk.
fn tags_above(
    forge: &dyn Forge,
    repo: &RepoRef,
    d: &Desired,
    so: &SeriesObserved,
    rels: &[Numbered],
) -> Result<BTreeMap<u64, TaggedTree>, ObserveError> {
    let p = plan::series::newest(so).map_or(0, |l| l.n);
    let named: BTreeSet<u64> = rels
        .iter()
        .map(|r| r.n)
        .chain(so.base_released)
        .chain(so.latest_released)
        .filter(|n| *n > p)
        .collect();
    let mut out = BTreeMap::new();
    let probe = |k: u64, out: &mut BTreeMap<u64, TaggedTree>| -> Result<bool, ObserveError> {
        let tag = crate::index::name_of(&d.stack, d.minor, k).to_string();
        let Some(commit) = tag_of(forge, repo, &tag)? else {
            return Ok(false);
        };
        let files = forge.list_files(repo, &commit)?;
        let tree = read_subtree(forge, repo, &commit, &files, &d.path)?;
        out.insert(k, TaggedTree { commit, tree });
        Ok(true)
    };
    let mut k = p.checked_add(1);
    while let Some(n) = k {
        if !probe(n, &mut out)? {
            break;
        }
        k = n.checked_add(1);
    }
    for n in named {
        if !out.contains_key(&n) && k.is_none_or(|stop| n > stop) {
            probe(n, &mut out)?;
        }
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
        ..Latest::default()
    })
}

/// The highest release of the series in the registry, pulled, unless it is the forge's latest
/// (then the forge's copy is already known and the pull would cost a request per layer).
fn oci_latest(
    oci: &Publisher,
    index: &ReleaseIndex,
    d: &Desired,
    forge_latest: Option<&Latest>,
    warnings: &mut Vec<String>,
) -> Result<Option<Latest>, ObserveError> {
    let Some(n) = index.newest_in_oci(&d.stack, d.minor) else {
        return Ok(None);
    };
    if forge_latest.is_some_and(|l| l.n >= n) {
        return Ok(None);
    }
    let name = crate::index::name_of(&d.stack, d.minor, n);
    let tag = name.to_string();
    let (manifest, files) = oci.registry().pull_release_and_manifest(&tag)?;
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
    // The date and the Kubernetes version as the tenants and the status read them.
    let read = oci::OciRelease::of(
        &name,
        &manifest,
        files.get("metadata.yaml").map(Vec::as_slice),
    );
    Ok(Some(Latest {
        tag,
        n,
        hashes,
        metadata,
        kubernetes: read.kubernetes,
        created: read.created,
        ..Latest::default()
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

/// The lock a release shipped: `stackbot.lock` at the commit its tag points at (its release
/// set and the number it records for the series, the shared lists as they were). `None` when
/// the tag or the lock is missing (the notes then show no "was").
fn released_lock(
    forge: &dyn Forge,
    scope: Scope<'_>,
    tag: &str,
    base: &mut Base,
) -> Result<Option<Lock>, ObserveError> {
    let Some(commit) = tag_of(forge, scope.repo, tag)? else {
        return Ok(None);
    };
    Ok(base.lock_at(forge, scope, &commit)?.1.clone())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(id: u64, tag: &str, draft: bool) -> ReleaseInfo {
        ReleaseInfo {
            id,
            tag: tag.into(),
            name: Some(tag.into()),
            draft,
            prerelease: false,
            body: String::new(),
            assets: Vec::new(),
            html_url: String::new(),
            published_at: None,
        }
    }

    fn desired(k8s: &str) -> Desired {
        let set = crate::model::ReleaseSet {
            stack: crate::model::StackId::new("openstack", "scs2").unwrap(),
            kubernetes: k8s.parse().unwrap(),
            published_at: None,
            node_image: crate::model::NodeImage {
                name: "img".into(),
                url: "https://x/img.qcow2".into(),
                sha256: "0".repeat(64),
                build_date: None,
            },
            components: BTreeMap::new(),
        };
        Desired {
            stack: set.stack.clone(),
            minor: set.minor(),
            path: "stacks/x".into(),
            set,
            rendered: FileTree::new(),
            stepped_over: Vec::new(),
            beside: Default::default(),
            renderer: None,
        }
    }

    /// The rule [`Reads::series`] keeps a reading by: a write (the gate's candidate, here a
    /// draft of 1.34) that changes one series' releases in the index makes that series read
    /// again, and only that one. (A focused test: `tests/integration/run_once_reads.rs` shows
    /// no repeated read, not yet the re-read of the changed series through the pipeline.)
    #[test]
    fn a_series_whose_releases_change_is_read_again_and_no_other() {
        let before = ReleaseIndex::new(
            vec![
                rel(1, "openstack-scs2-1-33-v1", false),
                rel(2, "openstack-scs2-1-34-v1", false),
            ],
            None,
        );
        let mut listed = before.listed().to_vec();
        listed.push(rel(3, "openstack-scs2-1-34-v2", true));
        let after = ReleaseIndex::new(listed, None);
        let (old, changed) = (desired("v1.33.5"), desired("v1.34.3"));
        assert_eq!(Against::of(&before, &old), Against::of(&after, &old));
        assert_ne!(
            Against::of(&before, &changed),
            Against::of(&after, &changed)
        );
        // The reading of a series is the same when nothing about it changed.
        assert_eq!(Against::of(&after, &changed), Against::of(&after, &changed));
    }
}
