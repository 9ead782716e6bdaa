//! Upstream facts + configuration + date ⇒ what each stack × minor can release.
//!
//! Pure: no I/O, no clock. [`needed`] tells the fetching shell which sources are still
//! missing (which CHECKSUMs matter depends on the patches found), [`resolve`] decides. Both
//! read the same raw [`UpstreamData`], so a snapshot replay decides exactly like a live run.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;

use crate::config::{Config, MinorSelection, StackConfig};
use crate::model::scs::Waiting;
use crate::model::{Component, KubeVersion, Minor, NodeImage, ReleaseSet, StackId};
use crate::upstream::helm;
use crate::upstream::kubernetes::{self, KubeRelease};
use crate::upstream::lifecycle::{self, Lifecycle};
use crate::upstream::{Fetched, Key, UpstreamData, images};

/// SCS 0210 windows (patch: 31 days, minor: 120), defined in [`crate::model::scs`].
pub use crate::model::scs::{MINOR_DAYS, PATCH_DAYS};
/// How many patches of a minor are tried, newest first, when looking for a published image.
pub const IMAGE_CANDIDATES: usize = 4;
/// With `minors: supported` and no lifecycle data, the newest this many minors are tracked.
pub const FALLBACK_SUPPORTED: usize = 3;

/// Whether a stack × minor can be released as is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Everything for the newest patch is published and verified.
    Complete,
    /// Something is not published yet (image, chart, or the minor itself): normal, try later.
    Waiting,
    /// Upstream served something invalid (malformed CHECKSUM, broken index): needs a human.
    Error,
}

/// The state of one stack × minor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MinorStatus {
    /// `provider/name`.
    pub stack: StackId,
    /// The tracked minor.
    pub minor: Minor,
    /// Newest GA patch.
    pub kubernetes: Option<KubeVersion>,
    /// When the newest patch was published (`None` when known only from a marker).
    pub published_at: Option<DateTime<Utc>>,
    /// Whether the newest patch can be released now.
    pub status: Status,
    /// What the newest patch is waiting for, in words (the [`Waiting`] items, displayed).
    pub missing: Vec<String>,
    /// What the newest patch is waiting for, as data (`stackbot status`).
    #[serde(skip)]
    pub waiting: Vec<Waiting>,
    /// Invalid upstream data affecting this minor only.
    pub errors: Vec<String>,
    /// The verified image of the newest patch.
    pub node_image: Option<NodeImage>,
    /// Chart name → selected version.
    pub components: BTreeMap<String, String>,
    /// The deadline of the SCS 0210 rule that governs what is offered (`stackbot.lock`'s
    /// release; nothing released: the minor window), as `status` gives it (filled by the
    /// pipeline from [`crate::compliance::deadlines`]).
    pub due: Option<NaiveDate>,
    /// The patch whose publication started that clock.
    pub due_for: Option<KubeVersion>,
    /// The rule `due` comes from.
    pub due_window: Option<crate::compliance::Rule>,
    /// Days until `due` (negative: days overdue).
    pub days_left: Option<i64>,
    /// The governing rule has failed (the deadline day itself is still in time).
    pub overdue: bool,
    /// The newest GA patch not yet offered, and when it must be released by on its own clock.
    pub newest_unreleased: Option<crate::compliance::NewestUnreleased>,
    /// The newest *complete* set: what a release would use (may be an older patch).
    pub release_set: Option<ReleaseSet>,
    /// Every GA patch of the minor, oldest first, with its publication date: which unreleased
    /// patch started the SCS clock (`stackbot status`).
    #[serde(skip)]
    pub patches: Vec<KubeRelease>,
    /// What `release_set` would move backwards compared with the set `stackbot.lock` records
    /// (filled by the pipeline, which reads the lock): a release keeps such a series where it
    /// is (`degraded`). Empty when nothing regresses.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub degraded: Vec<String>,
    /// What the standard's conformance test says of the version `stackbot.lock` records as
    /// last released (the minor window when none): filled by the pipeline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scs0210: Option<crate::compliance::Scs0210>,
    /// The critical CVEs affecting that version.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cves: Vec<crate::compliance::CveFact>,
    /// Why `release_set` is not the newest patch, whichever patch each reason belongs to (a
    /// release decides from it whether a series kept back is transient trouble).
    #[serde(skip)]
    pub held_back: HeldBack,
}

/// Everything upstream answered that kept a stack × minor's release set below its newest
/// patch: the errors and gaps of its components, and of *every* patch the walk back to a
/// verified image passed over, not only the newest. A series kept at an older release because
/// the CHECKSUM of the patch it already shipped answered 503 is transient trouble even when
/// the patch above it merely has no image yet; judging by the newest patch alone would call
/// that a lasting gap (exit 0) and hide the 503. One home, so a skipped series' reason and a
/// degraded series' cause, `transient` flag and exit code all read the same answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeldBack {
    /// Upstream answered with an error or something unreadable (a CHECKSUM with 503, a Helm
    /// index that does not parse): transient, the next run retries.
    pub errors: Vec<String>,
    /// Something is not (or no longer) published (a CHECKSUM answering 404, a chart series
    /// that does not exist yet).
    pub missing: Vec<String>,
    /// Each patch newer than the release set's that the walk stepped over, newest first, with
    /// why: the one record the release output, the notes and `status` say "skipped" from
    /// (kept for every series, degraded or not).
    pub stepped_over: Vec<SteppedOver>,
}

pub use crate::model::SteppedOver;

impl HeldBack {
    /// Whether an upstream error is among the reasons: the next run may well get further.
    pub fn is_transient(&self) -> bool {
        !self.errors.is_empty()
    }

    /// Every reason, errors first (they are what a reader must see).
    pub fn reasons(&self) -> impl Iterator<Item = &String> {
        self.errors.iter().chain(&self.missing)
    }

    /// The patches stepped over below which a release set was found (empty when the newest
    /// patch is releasable, or when nothing is): what a release says it did not ship, and why.
    pub fn skipped(&self) -> &[SteppedOver] {
        &self.stepped_over
    }
}

/// A GA minor newer than every minor a stack tracks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewMinor {
    /// The stack that does not track it yet.
    pub stack: StackId,
    /// The new minor.
    pub minor: Minor,
    /// Its newest GA patch.
    pub kubernetes: KubeVersion,
    /// When the minor's first GA patch was published.
    pub published_at: Option<DateTime<Utc>>,
    /// SCS 0210: offer the minor within 4 months (the minor window's deadline).
    pub due: Option<NaiveDate>,
    /// The minor's first GA patch, which started that clock.
    pub due_for: Option<KubeVersion>,
    /// The rule `due` comes from (`minor`).
    pub due_window: Option<crate::compliance::Rule>,
    /// Days until `due` (negative: days overdue).
    pub days_left: Option<i64>,
    /// `due` has passed.
    pub overdue: bool,
    /// Every GA patch of the minor, oldest first (`stackbot status`).
    #[serde(skip)]
    pub patches: Vec<KubeRelease>,
}

/// The result of `detect`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// One entry per configured stack × tracked minor, in configuration order.
    pub minors: Vec<MinorStatus>,
    /// GA minors newer than everything a stack tracks.
    pub new_minors: Vec<NewMinor>,
    /// Degraded sources (API fallback, unreadable schedule), deduplicated.
    pub warnings: Vec<String>,
    /// Sources the SCS 0210 verdicts depend on that a live run could not read (filled by the
    /// pipeline): `detect` and `release` exit 1.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
    /// Set when upstream came from a snapshot (filled by the pipeline): the data is as old as
    /// the snapshot, and reports say so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<crate::upstream::snapshot::SnapshotInfo>,
}

/// What the Kubernetes sources say, after fallback.
struct Facts {
    /// GA releases, ascending by version.
    releases: Vec<KubeRelease>,
    /// The releases API failed: releases come from `stable-1.NN.txt` markers.
    api_failed: bool,
    lifecycle: Option<Vec<Lifecycle>>,
    warnings: Vec<String>,
}

fn describe(f: Option<&Fetched>) -> String {
    match f {
        None => "not read".into(),
        Some(Fetched::Ok { .. }) => "ok".into(),
        Some(Fetched::Missing { url }) => format!("{url}: HTTP 404"),
        Some(Fetched::Error { message }) => message.clone(),
    }
}

/// What the Kubernetes sources say as of `now`: releases the API dates after `now` did not
/// exist yet (`--now` answers "what would the bot have done that day"; markers carry no date
/// and cannot be filtered).
fn facts(data: &UpstreamData, now: NaiveDate) -> Facts {
    let mut warnings = Vec::new();
    let api = match data.get(&Key::Releases) {
        Some(Fetched::Ok { body }) => match kubernetes::parse_releases(body) {
            Ok(mut list) if !list.is_empty() => {
                list.retain(|r| r.published_at.is_none_or(|p| p.date_naive() <= now));
                Ok(list)
            }
            Ok(_) => Err("the list has no GA release".to_string()),
            Err(e) => Err(e),
        },
        other => Err(describe(other)),
    };
    let (releases, api_failed) = match api {
        Ok(list) => (list, false),
        Err(e) => {
            if data.has(&Key::Releases) {
                warnings.push(format!(
                    "Kubernetes releases API unusable ({e}); using stable-1.NN.txt markers: no publication dates, so no deadlines"
                ));
            }
            let mut list: Vec<KubeRelease> = data
                .entries
                .keys()
                .filter_map(|id| id.strip_prefix("kubernetes/stable-"))
                .filter_map(|m| m.parse::<Minor>().ok())
                .filter_map(|m| match data.get(&Key::Marker(m)) {
                    Some(Fetched::Ok { body }) => kubernetes::parse_marker(body, m),
                    _ => None,
                })
                .map(|version| KubeRelease {
                    version,
                    published_at: None,
                })
                .collect();
            list.sort_by_key(|r| r.version);
            (list, true)
        }
    };
    let lifecycle = match data.get(&Key::Schedule) {
        Some(Fetched::Ok { body }) => match lifecycle::parse_schedule(body, &data.limits) {
            Ok((l, w)) => {
                warnings.extend(w);
                Some(l)
            }
            Err(e) => {
                warnings.push(format!("Kubernetes schedule unusable: {e}"));
                None
            }
        },
        None => None,
        other => {
            warnings.push(format!(
                "Kubernetes schedule unavailable ({})",
                describe(other)
            ));
            None
        }
    };
    Facts {
        releases,
        api_failed,
        lifecycle,
        warnings,
    }
}

/// What upstream data says of a minor a stack lists explicitly (`minors: ["1.34"]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListedMinor {
    /// Released and not past its end of life.
    Releasable,
    /// Not released yet but next in line: detection waits for it (a warning).
    Upcoming(String),
    /// It does not exist, or it is past its end of life: never releasable.
    Refused(String),
    /// The data holds neither the schedule nor releases: it cannot tell.
    Unknown,
}

/// One listed minor's verdict; see [`ListedMinor`].
fn listed_verdict(
    m: Minor,
    facts: &Facts,
    released: &BTreeSet<Minor>,
    newest: Option<Minor>,
    now: NaiveDate,
) -> ListedMinor {
    let Some(n) = newest else {
        return ListedMinor::Unknown;
    };
    let schedule = facts.lifecycle.as_deref().unwrap_or_default();
    let next = m.major == n.major && m.minor == n.minor + 1;
    if m > n && !next {
        return ListedMinor::Refused(format!(
            "Kubernetes {m} does not exist (upstream's newest minor is {n}): detection would wait for it forever"
        ));
    }
    if let Some(l) = schedule.iter().find(|l| l.minor == m) {
        if let Some(eol) = l.end_of_life.filter(|d| *d < now) {
            return ListedMinor::Refused(format!(
                "{m} is past its end of life ({eol}): upstream releases no more patches"
            ));
        }
        if let Some(day) = l.release_date.filter(|d| *d > now) {
            return ListedMinor::Upcoming(format!(
                "{m} is not released yet (planned for {day}): detection waits for it"
            ));
        }
        return ListedMinor::Releasable;
    }
    if released.contains(&m) {
        return ListedMinor::Releasable;
    }
    if next {
        return ListedMinor::Upcoming(format!(
            "{m} is not released yet (the newest minor is {n}): detection waits for it"
        ));
    }
    // The schedule lists every minor still maintained: one older than all of them is past
    // its end of life.
    match schedule.iter().map(|l| l.minor).min() {
        Some(oldest) if m < oldest => ListedMinor::Refused(format!(
            "{m} is older than every minor the Kubernetes schedule still maintains (the oldest is {oldest}): past its end of life"
        )),
        _ => ListedMinor::Unknown,
    }
}

/// Check every explicitly listed minor against the schedule and the releases in `data`, as
/// of `now`.
pub fn check_listed(
    config: &Config,
    data: &UpstreamData,
    now: NaiveDate,
) -> Vec<(StackId, Minor, ListedMinor)> {
    let facts = facts(data, now);
    let released: BTreeSet<Minor> = facts.releases.iter().map(|r| r.version.minor()).collect();
    let newest = facts
        .lifecycle
        .iter()
        .flatten()
        .map(|l| l.minor)
        .chain(released.iter().copied())
        .max();
    let mut out = Vec::new();
    for stack in &config.stacks {
        let MinorSelection::List(list) = &stack.minors else {
            continue;
        };
        for m in list.iter().filter_map(|s| s.parse::<Minor>().ok()) {
            let verdict = listed_verdict(m, &facts, &released, newest, now);
            out.push((stack.id(), m, verdict));
        }
    }
    out
}

/// The minors a stack tracks on `now`, plus a warning when a fallback was needed.
fn tracked(stack: &StackConfig, facts: &Facts, now: NaiveDate) -> (Vec<Minor>, Option<String>) {
    match &stack.minors {
        MinorSelection::List(list) => {
            let mut m: Vec<Minor> = list.iter().filter_map(|s| s.parse().ok()).collect();
            m.sort();
            m.dedup();
            (m, None)
        }
        MinorSelection::Keyword(_) => match &facts.lifecycle {
            Some(l) => (
                l.iter()
                    .filter(|x| x.supported_on(now))
                    .map(|x| x.minor)
                    .collect(),
                None,
            ),
            None => {
                let all: BTreeSet<Minor> =
                    facts.releases.iter().map(|r| r.version.minor()).collect();
                let m: Vec<Minor> = all
                    .into_iter()
                    .rev()
                    .take(FALLBACK_SUPPORTED)
                    .rev()
                    .collect();
                (
                    m,
                    Some(format!(
                        "`minors: supported` without lifecycle data: tracking the newest {FALLBACK_SUPPORTED} minors"
                    )),
                )
            }
        },
    }
}

/// Patches of `minor`, newest first, at most [`IMAGE_CANDIDATES`].
fn candidates(releases: &[KubeRelease], minor: Minor) -> Vec<&KubeRelease> {
    releases
        .iter()
        .rev()
        .filter(|r| r.version.minor() == minor)
        .take(IMAGE_CANDIDATES)
        .collect()
}

/// The node image of a patch as far as upstream data shows it.
enum ImageState {
    Verified(NodeImage),
    /// CHECKSUM not published (404): waiting for the image.
    Missing {
        name: String,
        url: String,
    },
    /// CHECKSUM unreadable or malformed.
    Invalid(String),
    NotRead {
        url: String,
    },
}

fn image_state(stack: &StackConfig, v: KubeVersion, data: &UpstreamData) -> ImageState {
    if stack.node_image.is_none() {
        // Nothing to import (e.g. Docker's kind nodes): never waiting for an image.
        return ImageState::Verified(NodeImage::default());
    }
    let (name, url) = stack.node_image.expand(v);
    let checksum_url = images::checksum_url(&url);
    match data.get(&Key::Checksum(checksum_url.clone())) {
        None => ImageState::NotRead { url: checksum_url },
        Some(Fetched::Missing { .. }) => ImageState::Missing { name, url },
        Some(Fetched::Error { message }) => ImageState::Invalid(message.clone()),
        Some(Fetched::Ok { body }) => match images::parse_checksum(body, images::file_name(&url)) {
            Ok(sha256) => ImageState::Verified(NodeImage {
                name,
                url,
                sha256,
                build_date: None,
            }),
            Err(e) => ImageState::Invalid(format!("{checksum_url}: {e}")),
        },
    }
}

/// The sources still to read for `config` on `now`, given what `data` already holds. Empty
/// when resolution has everything it will use. Never returns a key `data` already has.
pub fn needed(config: &Config, data: &UpstreamData, now: NaiveDate) -> Vec<Key> {
    // Lifecycle data only matters for `minors: supported`.
    let wants_schedule = config
        .stacks
        .iter()
        .any(|s| matches!(s.minors, MinorSelection::Keyword(_)));
    let mut keys: Vec<Key> = [Key::Schedule, Key::Releases]
        .into_iter()
        .filter(|k| (wants_schedule || *k != Key::Schedule) && !data.has(k))
        .collect();
    if !keys.is_empty() {
        return keys;
    }
    let facts = facts(data, now);
    let per_stack: Vec<(&StackConfig, Vec<Minor>)> = config
        .stacks
        .iter()
        .map(|s| (s, tracked(s, &facts, now).0))
        .collect();
    if facts.api_failed {
        let mut minors: BTreeSet<Minor> = per_stack.iter().flat_map(|(_, m)| m.clone()).collect();
        // Probe one minor beyond the newest tracked to notice a new minor without the API.
        if let Some(max) = minors.last().copied() {
            minors.insert(Minor {
                major: max.major,
                minor: max.minor + 1,
            });
        }
        keys.extend(minors.into_iter().map(Key::Marker).filter(|k| !data.has(k)));
        if !keys.is_empty() {
            return keys;
        }
    }
    for (stack, minors) in &per_stack {
        for minor in minors {
            for r in candidates(&facts.releases, *minor) {
                match image_state(stack, r.version, data) {
                    ImageState::NotRead { url } => {
                        keys.push(Key::Checksum(url));
                        break;
                    }
                    ImageState::Verified(_) => break,
                    ImageState::Missing { .. } | ImageState::Invalid(_) => continue,
                }
            }
        }
        for comp in stack.components.values() {
            keys.push(Key::HelmIndex(comp.repository.clone()));
        }
    }
    let mut seen = BTreeSet::new();
    keys.retain(|k| !data.has(k) && seen.insert(k.clone()));
    keys
}

/// Decide the state of every configured stack × tracked minor, and report new minors.
pub fn resolve(config: &Config, data: &UpstreamData, now: NaiveDate) -> Report {
    let facts = facts(data, now);
    let mut warnings = facts.warnings.clone();
    let indexes = chart_answers(config, &facts, data, now);
    let mut minors = Vec::new();
    let mut new_minors = Vec::new();
    for stack in &config.stacks {
        let (tracked_minors, warning) = tracked(stack, &facts, now);
        warnings.extend(warning);
        for minor in &tracked_minors {
            minors.push(resolve_minor(stack, *minor, &facts, data, &indexes));
        }
        let Some(max) = tracked_minors.iter().max() else {
            continue;
        };
        let newer: BTreeSet<Minor> = facts
            .releases
            .iter()
            .map(|r| r.version.minor())
            .filter(|m| m > max)
            .collect();
        for m in newer {
            let of_minor: Vec<&KubeRelease> = facts
                .releases
                .iter()
                .filter(|r| r.version.minor() == m)
                .collect();
            let (first, last) = (of_minor[0], of_minor[of_minor.len() - 1]);
            new_minors.push(NewMinor {
                stack: stack.id(),
                minor: m,
                kubernetes: last.version,
                published_at: first.published_at,
                // Filled by the pipeline from the deadline model.
                due: None,
                due_for: None,
                due_window: None,
                days_left: None,
                overdue: false,
                patches: of_minor.iter().map(|r| (*r).clone()).collect(),
            });
        }
    }
    let mut seen = BTreeSet::new();
    warnings.retain(|w| seen.insert(w.clone()));
    Report {
        minors,
        new_minors,
        warnings,
        unreadable: Vec::new(),
        snapshot: None,
    }
}

/// Which chart version answers each component rule of each tracked minor: (repository,
/// chart, rule, minor) → the chosen version, or why there is none. Each Helm index is read
/// once, as it streams ([`helm::search`]): only the answers are kept, never the index.
type ChartAnswers<'c> =
    BTreeMap<(&'c str, &'c str, String, Minor), Result<Option<helm::ChartVersion>, String>>;

fn chart_answers<'c>(
    config: &'c Config,
    facts: &Facts,
    data: &UpstreamData,
    now: NaiveDate,
) -> ChartAnswers<'c> {
    let mut by_repo: BTreeMap<&str, Vec<helm::Query<'c>>> = BTreeMap::new();
    for stack in &config.stacks {
        let (minors, _) = tracked(stack, facts, now);
        for comp in stack.components.values() {
            for minor in &minors {
                by_repo
                    .entry(comp.repository.as_str())
                    .or_default()
                    .push(helm::Query {
                        chart: &comp.chart,
                        rule: &comp.version,
                        minor: *minor,
                    });
            }
        }
    }
    let limits = data.limits.yaml();
    let mut out = ChartAnswers::new();
    for (repo, queries) in by_repo {
        let url = helm::index_url(repo);
        let answers = match data.get(&Key::HelmIndex(repo.to_string())) {
            Some(Fetched::Ok { body }) => helm::search(body, &url, &queries, Some(now), &limits)
                .map_err(|e| {
                    if e.starts_with(&url) {
                        e
                    } else {
                        format!("{url}: {e}")
                    }
                }),
            other => Err(format!("{url}: {}", describe(other))),
        };
        for (i, q) in queries.iter().enumerate() {
            let answer = match &answers {
                Ok(list) => list[i].clone(),
                Err(e) => Err(e.clone()),
            };
            out.insert((repo, q.chart, format!("{:?}", q.rule), q.minor), answer);
        }
    }
    out
}

fn resolve_minor(
    stack: &StackConfig,
    minor: Minor,
    facts: &Facts,
    data: &UpstreamData,
    indexes: &ChartAnswers<'_>,
) -> MinorStatus {
    let patches = candidates(&facts.releases, minor);
    let newest = patches.first().copied();
    let Charts {
        components,
        resolved,
        mut missing,
        mut errors,
    } = charts(stack, minor, newest.is_none(), indexes);
    let walk = walk_patches(stack, &patches, data, &mut missing, &mut errors);

    let status = if !errors.is_empty() {
        Status::Error
    } else if !missing.is_empty() {
        Status::Waiting
    } else {
        Status::Complete
    };

    // The newest verified patch, if every component resolved.
    let release_set = walk
        .verified
        .filter(|_| resolved.len() == stack.components.len())
        .map(|(p, img)| ReleaseSet {
            stack: stack.id(),
            kubernetes: p.version,
            published_at: p.published_at,
            node_image: img,
            components: resolved,
        });

    let mut held_back = walk.held_back;
    if release_set.is_none() {
        // Nothing is released in their place: no patch was stepped over.
        held_back.stepped_over.clear();
    }
    MinorStatus {
        stack: stack.id(),
        minor,
        kubernetes: newest.map(|n| n.version),
        published_at: newest.and_then(|n| n.published_at),
        status,
        missing: missing.iter().map(ToString::to_string).collect(),
        waiting: missing,
        errors,
        node_image: walk.node_image,
        components,
        // What is offered is the pipeline's to read (`stackbot.lock`): it fills these from the
        // one deadline model ([`crate::compliance::deadlines`]).
        due: None,
        due_for: None,
        due_window: None,
        days_left: None,
        overdue: false,
        newest_unreleased: None,
        release_set,
        patches: facts
            .releases
            .iter()
            .filter(|r| r.version.minor() == minor)
            .cloned()
            .collect(),
        degraded: Vec::new(),
        scs0210: None,
        cves: Vec::new(),
        held_back,
    }
}

/// The charts of a stack × minor as the Helm indexes answer its rules, and what is missing or
/// unreadable so far (a minor without any Kubernetes patch yet is missing first).
struct Charts {
    /// chart name → chosen version, for the status.
    components: BTreeMap<String, String>,
    /// component key → the chosen chart, for the release set.
    resolved: BTreeMap<String, Component>,
    missing: Vec<Waiting>,
    errors: Vec<String>,
}

/// Select every component's chart for `minor`; a rule that selects nothing is waited for, an
/// index that could not be read is an error.
fn charts(stack: &StackConfig, minor: Minor, no_patch: bool, indexes: &ChartAnswers<'_>) -> Charts {
    let mut missing = Vec::new();
    let mut errors = Vec::new();
    if no_patch {
        missing.push(Waiting::Kubernetes { minor });
    }
    let mut components = BTreeMap::new();
    let mut resolved: BTreeMap<String, Component> = BTreeMap::new();
    for (key, rule) in &stack.components {
        let at = (
            rule.repository.as_str(),
            rule.chart.as_str(),
            format!("{:?}", rule.version),
            minor,
        );
        let chosen = indexes
            .get(&at)
            .cloned()
            .expect("every rule of every tracked minor was answered above");
        match chosen {
            Ok(Some(cv)) => {
                components.insert(rule.chart.clone(), cv.version.to_string());
                resolved.insert(
                    key.clone(),
                    Component {
                        chart: rule.chart.clone(),
                        repository: rule.repository.clone(),
                        version: cv.version.to_string(),
                        digest: cv.digest,
                        locked_at: None,
                    },
                );
            }
            Ok(None) => missing.push(Waiting::Chart {
                chart: rule.chart.clone(),
                rule: helm::describe_rule(&rule.version, minor),
                index: helm::index_url(&rule.repository),
            }),
            Err(e) => errors.push(format!("component `{key}` ({}): {e}", rule.chart)),
        }
    }
    Charts {
        components,
        resolved,
        missing,
        errors,
    }
}

/// What the walk over a minor's patches found.
struct PatchWalk<'a> {
    /// The newest patch's image, when that one is verified.
    node_image: Option<NodeImage>,
    /// The newest patch whose image is verified, with that image.
    verified: Option<(&'a KubeRelease, NodeImage)>,
    /// Why each newer patch was passed over (on top of the charts' reasons).
    held_back: HeldBack,
}

/// Walk back from the newest patch to the newest one whose image is verified, keeping why
/// each newer patch was passed over. Only a verified sha256 ever enters a release set. The
/// newest patch's own image problem also goes to the minor's `missing`/`errors`.
fn walk_patches<'a>(
    stack: &StackConfig,
    patches: &[&'a KubeRelease],
    data: &UpstreamData,
    missing: &mut Vec<Waiting>,
    errors: &mut Vec<String>,
) -> PatchWalk<'a> {
    let newest = patches.first().copied();
    let mut held_back = HeldBack {
        errors: errors.clone(),
        missing: missing.iter().map(ToString::to_string).collect(),
        stepped_over: Vec::new(),
    };
    let mut node_image = None;
    let mut verified = None;
    let mut passed = Vec::new();
    for p in patches {
        let is_newest = newest.is_some_and(|n| n.version == p.version);
        let e = match image_state(stack, p.version, data) {
            ImageState::Verified(img) => {
                if is_newest {
                    node_image = Some(img.clone()).filter(|i| !i.is_none());
                }
                verified = Some((*p, img));
                break;
            }
            ImageState::Missing { name, url } => {
                let w = Waiting::NodeImage {
                    name,
                    checksum: images::checksum_url(&url),
                };
                passed.push(SteppedOver {
                    patch: p.version,
                    transient: false,
                    reason: w.to_string(),
                });
                held_back.missing.push(w.to_string());
                if is_newest {
                    missing.push(w);
                }
                continue;
            }
            ImageState::Invalid(e) => format!("node image for {}: {e}", p.version),
            ImageState::NotRead { url } => {
                format!("node image for {}: {url} was not read", p.version)
            }
        };
        passed.push(SteppedOver {
            patch: p.version,
            transient: true,
            reason: e.clone(),
        });
        held_back.errors.push(e.clone());
        if is_newest {
            errors.push(e);
        }
    }
    // Stepped over only where an older patch is what the series can release.
    if verified.is_some() {
        held_back.stepped_over = passed;
    }
    PatchWalk {
        node_image,
        verified,
        held_back,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const H1: &str = "1111111111111111111111111111111111111111111111111111111111111111";

    fn config(minors: &str) -> Config {
        let text = format!(
            r#"
stacks:
  - provider: openstack
    name: scs2
    templates: t
    output: o
    minors: {minors}
    node_image:
      url: "https://img/kube-{{version}}.qcow2"
      name: "ubuntu-capi-image-{{version}}"
    components:
      ccm:
        chart: occm
        repository: https://charts
        version: {{ series: "2.{{minor}}" }}
"#
        );
        crate::config::parse(&text, Path::new("test.yaml")).unwrap()
    }

    fn releases(list: &[(&str, &str)]) -> Fetched {
        let v: Vec<serde_json::Value> = list
            .iter()
            .map(|(t, p)| serde_json::json!({"tag_name": t, "draft": false, "prerelease": false, "published_at": p}))
            .collect();
        Fetched::Ok {
            body: serde_json::to_string(&v).unwrap(),
        }
    }

    fn ok(body: &str) -> Fetched {
        Fetched::Ok { body: body.into() }
    }

    fn checksum(v: &str) -> Key {
        Key::Checksum(format!("https://img/kube-{v}.qcow2.CHECKSUM"))
    }

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    const INDEX: &str =
        "entries:\n  occm:\n  - version: 2.34.1\n    digest: abc\n  - version: 2.3.0\n";

    fn base() -> UpstreamData {
        let mut d = UpstreamData::default();
        d.insert(
            &Key::Releases,
            releases(&[
                ("v1.34.6", "2026-03-18T00:00:00Z"),
                ("v1.34.7", "2026-04-15T00:00:00Z"),
            ]),
        );
        d.insert(&Key::HelmIndex("https://charts".into()), ok(INDEX));
        d
    }

    #[test]
    fn fetching_walks_back_one_checksum_at_a_time_until_one_verifies() {
        let c = config(r#"["1.34"]"#);
        let now = date(2026, 5, 1);
        let mut d = UpstreamData::default();
        assert_eq!(
            needed(&c, &d, now),
            [Key::Releases],
            "explicit list: no schedule"
        );
        d = base();
        assert_eq!(needed(&c, &d, now), [checksum("v1.34.7")]);
        d.insert(&checksum("v1.34.7"), Fetched::Missing { url: "x".into() });
        assert_eq!(needed(&c, &d, now), [checksum("v1.34.6")]);
        d.insert(
            &checksum("v1.34.6"),
            ok(&format!("{H1}  kube-v1.34.6.qcow2\n")),
        );
        assert!(needed(&c, &d, now).is_empty());

        let r = resolve(&c, &d, now);
        let m = &r.minors[0];
        assert_eq!(m.status, Status::Waiting);
        assert_eq!(m.kubernetes.unwrap().to_string(), "v1.34.7");
        let set = m.release_set.as_ref().unwrap();
        assert_eq!(set.kubernetes.to_string(), "v1.34.6");
        assert_eq!(set.node_image.sha256, H1);
        assert_eq!(set.components["ccm"].version, "2.34.1");
        assert_eq!(set.components["ccm"].digest.as_deref(), Some("abc"));
    }

    #[test]
    fn an_error_on_a_patch_the_walk_passed_over_holds_the_release_set_back_transiently() {
        // v1.34.7 has no image yet (404) and the CHECKSUM of v1.34.6 answers 503: the walk
        // settles on v1.34.5, and the 503 is among the reasons although v1.34.6 is not the
        // newest patch.
        let c = config(r#"["1.34"]"#);
        let now = date(2026, 5, 1);
        let mut d = base();
        d.insert(
            &Key::Releases,
            releases(&[
                ("v1.34.5", "2026-02-18T00:00:00Z"),
                ("v1.34.6", "2026-03-18T00:00:00Z"),
                ("v1.34.7", "2026-04-15T00:00:00Z"),
            ]),
        );
        d.insert(&checksum("v1.34.7"), Fetched::Missing { url: "x".into() });
        d.insert(
            &checksum("v1.34.6"),
            Fetched::Error {
                message: "GET https://img/kube-v1.34.6.qcow2.CHECKSUM: HTTP 503".into(),
            },
        );
        assert_eq!(
            needed(&c, &d, now),
            [checksum("v1.34.5")],
            "walks past the 503"
        );
        d.insert(
            &checksum("v1.34.5"),
            ok(&format!("{H1}  kube-v1.34.5.qcow2\n")),
        );

        let m = &resolve(&c, &d, now).minors[0];
        assert_eq!(kube_of(&resolve(&c, &d, now)), "v1.34.5");
        assert_eq!(m.status, Status::Waiting, "the newest patch only waits");
        assert_eq!(
            m.held_back.errors,
            ["node image for v1.34.6: GET https://img/kube-v1.34.6.qcow2.CHECKSUM: HTTP 503"]
        );
        assert_eq!(m.held_back.missing.len(), 1);
        assert!(m.held_back.missing[0].contains("kube-v1.34.7.qcow2.CHECKSUM"));
        assert!(m.held_back.is_transient());

        // The same walk over a 404 instead: only gaps, nothing transient.
        d.insert(&checksum("v1.34.6"), Fetched::Missing { url: "x".into() });
        let m = &resolve(&c, &d, now).minors[0];
        assert_eq!(
            m.release_set.as_ref().unwrap().kubernetes.to_string(),
            "v1.34.5"
        );
        assert!(m.held_back.errors.is_empty());
        assert_eq!(m.held_back.missing.len(), 2, "{:?}", m.held_back);
        assert!(!m.held_back.is_transient());
    }

    #[test]
    fn a_verified_newest_patch_is_held_back_by_nothing() {
        let c = config(r#"["1.34"]"#);
        let mut d = base();
        d.insert(
            &checksum("v1.34.7"),
            ok(&format!("{H1}  kube-v1.34.7.qcow2")),
        );
        let m = &resolve(&c, &d, date(2026, 5, 1)).minors[0];
        assert_eq!(m.status, Status::Complete);
        assert_eq!(m.held_back, HeldBack::default());
    }

    #[test]
    fn now_ignores_patches_published_later() {
        let c = config(r#"["1.34"]"#);
        let mut d = base();
        d.insert(
            &checksum("v1.34.6"),
            ok(&format!("{H1}  kube-v1.34.6.qcow2")),
        );
        d.insert(
            &checksum("v1.34.7"),
            ok(&format!("{H1}  kube-v1.34.7.qcow2")),
        );
        // v1.34.7 was published on 2026-04-15: as of the day before, it did not exist.
        let before = resolve(&c, &d, date(2026, 4, 14));
        assert_eq!(kube_of(&before), "v1.34.6");
        assert_eq!(needed(&c, &d, date(2026, 4, 14)), Vec::<Key>::new());
        let on = resolve(&c, &d, date(2026, 4, 15));
        assert_eq!(kube_of(&on), "v1.34.7", "the day itself counts");
    }

    fn kube_of(r: &Report) -> String {
        r.minors[0]
            .release_set
            .as_ref()
            .unwrap()
            .kubernetes
            .to_string()
    }

    #[test]
    fn an_unverified_checksum_never_reaches_a_release_set() {
        let c = config(r#"["1.34"]"#);
        let mut d = base();
        // Right hash, wrong file; and a short hash for the older patch.
        d.insert(
            &checksum("v1.34.7"),
            ok(&format!("{H1}  kube-v1.34.6.qcow2")),
        );
        d.insert(&checksum("v1.34.6"), ok("abc  kube-v1.34.6.qcow2"));
        let r = resolve(&c, &d, date(2026, 5, 1));
        let m = &r.minors[0];
        assert_eq!(m.status, Status::Error);
        assert_eq!(m.node_image, None);
        assert_eq!(m.release_set, None);
    }

    #[test]
    fn resolution_leaves_deadlines_to_the_one_model() {
        // Which rule governs depends on what is offered (the lock), which resolution does not
        // read: `compliance::deadlines` decides, and the pipeline fills the fields from it.
        let c = config(r#"["1.34"]"#);
        let mut d = base();
        d.insert(&checksum("v1.34.7"), Fetched::Missing { url: "x".into() });
        d.insert(
            &checksum("v1.34.6"),
            ok(&format!("{H1}  kube-v1.34.6.qcow2")),
        );
        let r = resolve(&c, &d, date(2026, 5, 17));
        let m = &r.minors[0];
        assert_eq!((m.due, m.due_window, m.overdue), (None, None, false));
        assert_eq!(
            m.release_set.as_ref().unwrap().kubernetes.to_string(),
            "v1.34.6"
        );

        let mut d = base();
        d.insert(
            &Key::Releases,
            releases(&[("v1.35.0", "2025-12-17T10:00:00Z")]),
        );
        let c35 = config(r#"["1.35"]"#);
        let r = resolve(&c35, &d, date(2026, 1, 1));
        assert!(
            r.minors[0]
                .missing
                .iter()
                .any(|m| m.contains("occm 2.35.x"))
        );
    }

    #[test]
    fn api_failure_asks_for_markers_including_the_next_minor() {
        let c = config(r#"["1.33", "1.34"]"#);
        let mut d = UpstreamData::default();
        d.insert(
            &Key::Releases,
            Fetched::Error {
                message: "GET x: HTTP 403".into(),
            },
        );
        let m = |s: &str| Key::Marker(s.parse().unwrap());
        assert_eq!(
            needed(&c, &d, date(2026, 5, 1)),
            [m("1.33"), m("1.34"), m("1.35")]
        );
        d.insert(&m("1.33"), ok("v1.33.11"));
        d.insert(&m("1.34"), ok("v1.34.7"));
        d.insert(&m("1.35"), ok("v1.35.4"));
        let r = resolve(&c, &d, date(2026, 5, 1));
        assert_eq!(r.minors[1].kubernetes.unwrap().to_string(), "v1.34.7");
        assert_eq!(r.minors[1].published_at, None, "markers carry no dates");
        assert_eq!(r.new_minors[0].minor.to_string(), "1.35");
        assert!(r.warnings[0].contains("HTTP 403"));
    }

    #[test]
    fn listed_minors_that_do_not_exist_or_are_past_end_of_life_are_refused() {
        let c = config(r#"["1.30", "1.34", "1.35", "1.99"]"#);
        let verdicts = |d: &UpstreamData| -> Vec<String> {
            check_listed(&c, d, date(2026, 5, 1))
                .into_iter()
                .map(|(_, m, v)| match v {
                    ListedMinor::Releasable => format!("{m} ok"),
                    ListedMinor::Upcoming(w) => format!("{m} upcoming: {w}"),
                    ListedMinor::Refused(w) => format!("{m} refused: {w}"),
                    ListedMinor::Unknown => format!("{m} unknown"),
                })
                .collect()
        };
        assert_eq!(
            verdicts(&UpstreamData::default()),
            [
                "1.30 unknown",
                "1.34 unknown",
                "1.35 unknown",
                "1.99 unknown"
            ],
            "no data: nothing is refused"
        );
        let mut d = base();
        d.insert(
            &Key::Schedule,
            ok("schedules:\n- release: 1.34\n  releaseDate: 2025-08-27\n  endOfLifeDate: 2026-10-27\n- release: 1.30\n  endOfLifeDate: 2025-06-28\n"),
        );
        assert_eq!(
            verdicts(&d),
            [
                "1.30 refused: 1.30 is past its end of life (2025-06-28): upstream releases no more patches",
                "1.34 ok",
                "1.35 upcoming: 1.35 is not released yet (the newest minor is 1.34): detection waits for it",
                "1.99 refused: Kubernetes 1.99 does not exist (upstream's newest minor is 1.34): detection would wait for it forever",
            ]
        );
    }

    #[test]
    fn supported_follows_the_schedule_and_its_end_of_life_dates() {
        let c = config("supported");
        let mut d = base();
        d.insert(
            &Key::Schedule,
            ok("schedules:\n- release: 1.34\n  releaseDate: 2025-08-27\n  endOfLifeDate: 2026-10-27\n- release: 1.30\n  endOfLifeDate: 2025-06-28\n"),
        );
        let r = resolve(&c, &d, date(2026, 5, 1));
        let minors: Vec<String> = r.minors.iter().map(|m| m.minor.to_string()).collect();
        assert_eq!(minors, ["1.34"]);
        assert!(resolve(&c, &d, date(2026, 10, 28)).minors.is_empty());
    }
}
