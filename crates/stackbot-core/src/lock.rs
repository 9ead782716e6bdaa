//! `stackbot.lock`: the resolved release set of every stack × minor that was rendered.
//!
//! The lock makes rendering reproducible without the network: `render` (and `render --check`
//! in CI) reads it, and whoever resolves new sets (`render --release-set`, later `release`)
//! updates it in the same commit as the rendered stack, so reviewers see the inputs next to
//! the output. It is YAML, sorted by stack then minor, one set per stack × minor.
//!
//! Each entry also records the version its series was last released as (`release: v3`),
//! written by `stackbot release` in the release commit. It is the series' *high-water mark*:
//! git history keeps it when a release and its tag are deleted, so a number once on the base
//! branch is never issued again (see [`crate::plan::series`]). Replacing a set by hand
//! (`render --release-set`) keeps the number.

use chrono::NaiveDate;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::model::{
    Component, KubeVersion, Minor, NodeImage, ReleaseSet, StackId, StackVersion, series_prefix,
};

/// File name of the lock, beside `stackbot.yaml`.
pub const LOCK_FILE: &str = "stackbot.lock";

const HEADER: &str = "# stackbot.lock: the release sets `stackbot render` renders (one per stack and minor).\n\
# Written by `stackbot render --release-set` and `stackbot release`; review it like code.\n";

/// A lock or release-set file problem, naming the file and (for parse errors) the line.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}{}: {message}\n  hint: {hint}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Parse {
        path: std::path::PathBuf,
        line: Option<usize>,
        message: String,
        hint: &'static str,
    },
}

/// The lock file's contents.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lock {
    /// Sorted by (stack, minor); at most one per stack × minor.
    pub release_sets: Vec<ReleaseSet>,
    /// Series prefix (`openstack-scs2-1-34`) → the stable number it was last released as.
    pub released: BTreeMap<String, u64>,
    /// What the lock knows of each stack beyond its current release sets (content shared
    /// across minors: the cumulative image list, the version table).
    pub history: BTreeMap<StackId, History>,
}

/// A node image the stack listed or released, for the Kubernetes version it was built for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownImage {
    pub kubernetes: KubeVersion,
    pub node_image: NodeImage,
}

/// One row of a stack's version table (`versions.yaml`): a Kubernetes patch and the versions
/// of the components released with it, by component key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableRow {
    pub kubernetes: KubeVersion,
    pub components: BTreeMap<String, String>,
}

/// Content a stack shares across its minors that no single release set holds: node images of
/// earlier patches and other minors (the image list is cumulative), and version-table rows of
/// minors the lock has no release set for (adopted from the tree's own table). A minor's
/// release set, when the lock has one, supersedes its row.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct History {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<KnownImage>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<TableRow>,
    /// Minors past their end of life whose rows the version table no longer shows, as
    /// upstream's maintainers drop them ("remove kubernetes 1.28 since it's EOL", the day
    /// after): recorded by `plan`/`release` from the Kubernetes lifecycle on the run's day
    /// ([`Lock::retire_rows`]), so `render` needs no date and no network.
    #[serde(skip)]
    pub past_end_of_life: BTreeSet<Minor>,
}

impl History {
    fn is_empty(&self) -> bool {
        self.images.is_empty() && self.rows.is_empty() && self.past_end_of_life.is_empty()
    }
}

/// One entry as written: the release set's fields plus `release`. Spelled out (rather than
/// flattened) so unknown keys stay errors with a line number; the conversions destructure
/// [`ReleaseSet`] exhaustively, so a new field there fails to compile here until it is added.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    stack: StackId,
    kubernetes: KubeVersion,
    /// The version the series was last released as (stable channel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    release: Option<StackVersion>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    published_at: Option<chrono::DateTime<chrono::Utc>>,
    #[serde(default, skip_serializing_if = "NodeImage::is_none")]
    node_image: NodeImage,
    components: BTreeMap<String, Component>,
}

#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    release_sets: Vec<Entry>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    history: Vec<HistoryRecord>,
}

/// `history:` entry as written (flattening would lose `deny_unknown_fields`).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HistoryRecord {
    stack: StackId,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    images: Vec<KnownImage>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    rows: Vec<TableRow>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    past_end_of_life: Vec<String>,
}

impl Entry {
    fn new(set: &ReleaseSet, released: Option<u64>) -> Self {
        let ReleaseSet {
            stack,
            kubernetes,
            published_at,
            node_image,
            components,
        } = set.clone();
        Entry {
            stack,
            kubernetes,
            release: released.map(StackVersion::stable),
            published_at,
            node_image,
            components,
        }
    }

    fn into_parts(self) -> (ReleaseSet, Option<StackVersion>) {
        let Entry {
            stack,
            kubernetes,
            release,
            published_at,
            node_image,
            components,
        } = self;
        (
            ReleaseSet {
                stack,
                kubernetes,
                published_at,
                node_image,
                components,
            },
            release,
        )
    }
}

impl Serialize for Lock {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        File {
            release_sets: self
                .release_sets
                .iter()
                .map(|set| Entry::new(set, self.released_as(&set.stack, set.minor())))
                .collect(),
            history: self
                .history
                .iter()
                .filter(|(_, h)| !h.is_empty())
                .map(|(stack, h)| HistoryRecord {
                    stack: stack.clone(),
                    images: h.images.clone(),
                    rows: h.rows.clone(),
                    past_end_of_life: h.past_end_of_life.iter().map(Minor::to_string).collect(),
                })
                .collect(),
        }
        .serialize(s)
    }
}

/// Where a merge left its conflict markers: the first line starting with `<<<<<<<`,
/// `=======` or `>>>>>>>` (1-based). A lock is never guessed from a conflicted file.
fn conflict_marker(text: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            l.starts_with("<<<<<<<")
                || l.starts_with(">>>>>>>")
                || (l.starts_with("=======") && l.trim_end().chars().all(|c| c == '='))
        })
        .map(|i| i + 1)
}

impl Lock {
    /// Parse lock text; `path` only names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Lock, LockError> {
        let bad = |line, message: String, hint| LockError::Parse {
            path: path.to_path_buf(),
            line,
            message,
            hint,
        };
        const GENERATED: &str = "the lock is generated: restore it from git";
        if let Some(line) = conflict_marker(text) {
            return Err(bad(
                Some(line),
                "unresolved merge conflict (conflict marker)".into(),
                "resolve the conflict: keep one entry per stack and minor, and for `release:` the higher version of the two sides; then commit the lock",
            ));
        }
        let file: File = if text.trim().is_empty() {
            File::default()
        } else {
            yaml_serde::from_str(text).map_err(|e| {
                bad(
                    e.location().map(|l| l.line()),
                    e.to_string(),
                    "the lock is generated: restore it from git or re-run `stackbot render --release-set FILE`",
                )
            })?
        };
        let mut sorted = Lock::default();
        for entry in file.release_sets {
            let (set, release) = entry.into_parts();
            let (stack, minor) = (&set.stack, set.minor());
            if sorted.get(stack, minor).is_some() {
                let message = format!("two release sets for {stack} {minor}");
                return Err(bad(
                    None,
                    message,
                    "keep one release set per stack and minor",
                ));
            }
            match release {
                Some(v) if v.is_stable() => sorted.record_release(stack, minor, v.major),
                Some(v) => {
                    let message =
                        format!("{stack} {minor}: `release: {v}` is not a stable version (`v<N>`)");
                    return Err(bad(None, message, GENERATED));
                }
                None => {}
            }
            sorted.upsert(set);
        }
        for h in file.history {
            if sorted.history.contains_key(&h.stack) {
                let message = format!("two history entries for {}", h.stack);
                return Err(bad(None, message, "keep one history entry per stack"));
            }
            let mut history = History::default();
            for known in h.images {
                history.remember(known);
            }
            history.rows = h.rows;
            history.rows.sort_by_key(|r| r.kubernetes);
            for m in h.past_end_of_life {
                let minor = m.parse::<Minor>().map_err(|e| {
                    let message = format!("history of {}: `past_end_of_life: {m}`: {e}", h.stack);
                    bad(None, message, GENERATED)
                })?;
                history.past_end_of_life.insert(minor);
            }
            sorted.history.insert(h.stack, history);
        }
        Ok(sorted)
    }

    /// The lock as written to disk: a comment header, then sorted YAML.
    pub fn to_yaml(&self) -> String {
        let body = yaml_serde::to_string(self).expect("release sets serialize");
        format!("{HEADER}{}", quote_locked_at(&body))
    }

    /// Insert or replace the set for its stack × minor, keeping the order (and the recorded
    /// release number: it is a high-water mark, not a property of the set).
    ///
    /// The image of a replaced set stays known (the image list is cumulative), and so does a
    /// set's build date when the replacing set pins the same image without one.
    pub fn upsert(&mut self, mut set: ReleaseSet) {
        let key = (set.stack.clone(), set.minor());
        if set.node_image.build_date.is_none()
            && let Some(date) = self.build_date_of(&set.stack, &set.node_image)
        {
            set.node_image.build_date = Some(date);
        }
        match self
            .release_sets
            .binary_search_by(|s| (s.stack.clone(), s.minor()).cmp(&key))
        {
            Ok(i) => {
                let old = std::mem::replace(&mut self.release_sets[i], set);
                if !old.node_image.is_none() && old.kubernetes != self.release_sets[i].kubernetes {
                    self.history
                        .entry(old.stack.clone())
                        .or_default()
                        .remember(KnownImage {
                            kubernetes: old.kubernetes,
                            node_image: old.node_image,
                        });
                }
            }
            Err(i) => self.release_sets.insert(i, set),
        }
    }

    /// The build date the lock records for this image (same URL and checksum), if any.
    pub fn build_date_of(&self, stack: &StackId, image: &NodeImage) -> Option<chrono::NaiveDate> {
        let same = |i: &NodeImage| i.url == image.url && i.sha256 == image.sha256;
        self.release_sets
            .iter()
            .filter(|s| &s.stack == stack)
            .map(|s| &s.node_image)
            .chain(
                self.history
                    .get(stack)
                    .into_iter()
                    .flat_map(|h| h.images.iter().map(|k| &k.node_image)),
            )
            .filter(|i| same(i))
            .find_map(|i| i.build_date)
    }

    /// Every node image the stack has listed or released, with `set` (the set being rendered)
    /// in its place: one per Kubernetes version, sorted by version. Two different images for
    /// one version are a contradiction, reported rather than resolved.
    pub fn known_images(&self, set: &ReleaseSet) -> Result<Vec<KnownImage>, String> {
        let mut all = History::default();
        let current = (!set.node_image.is_none()).then(|| KnownImage {
            kubernetes: set.kubernetes,
            node_image: set.node_image.clone(),
        });
        let from_sets = self
            .release_sets
            .iter()
            // The set `set` replaces keeps its image in the list (upsert remembers it).
            .filter(|s| s.stack == set.stack && s.kubernetes != set.kubernetes)
            .filter(|s| !s.node_image.is_none())
            .map(|s| KnownImage {
                kubernetes: s.kubernetes,
                node_image: s.node_image.clone(),
            });
        let history = self
            .history
            .get(&set.stack)
            .into_iter()
            .flat_map(|h| h.images.iter().cloned());
        for known in current.into_iter().chain(from_sets).chain(history) {
            if let Some(had) = all.images.iter().find(|k| k.kubernetes == known.kubernetes)
                && (had.node_image.url != known.node_image.url
                    || had.node_image.sha256 != known.node_image.sha256)
            {
                return Err(format!(
                    "two node images for {}: {} (sha256 {}) and {} (sha256 {})",
                    known.kubernetes,
                    had.node_image.url,
                    had.node_image.sha256,
                    known.node_image.url,
                    known.node_image.sha256
                ));
            }
            all.remember(known);
        }
        Ok(all.images)
    }

    /// The stack's version table with `set` in its place: one row per minor, sorted; a
    /// minor's release set (here or in the lock) supersedes a recorded row.
    pub fn table(&self, set: &ReleaseSet) -> Vec<TableRow> {
        let row = |s: &ReleaseSet| TableRow {
            kubernetes: s.kubernetes,
            components: s
                .components
                .iter()
                .map(|(k, c)| (k.clone(), c.version.clone()))
                .collect(),
        };
        let mut by_minor: BTreeMap<Minor, TableRow> = BTreeMap::new();
        for r in self
            .history
            .get(&set.stack)
            .into_iter()
            .flat_map(|h| &h.rows)
        {
            by_minor.insert(r.kubernetes.minor(), r.clone());
        }
        for s in self.release_sets.iter().filter(|s| s.stack == set.stack) {
            by_minor.insert(s.minor(), row(s));
        }
        if let Some(h) = self.history.get(&set.stack) {
            by_minor.retain(|m, _| !h.past_end_of_life.contains(m));
        }
        by_minor.insert(set.minor(), row(set));
        by_minor.into_values().collect()
    }

    /// Record the minors of each stack's version table that are past their end of life on
    /// `today` (by the Kubernetes lifecycle, [`crate::model::scs::past_end_of_life`], the
    /// rule `minors: supported` follows): their rows leave the table, as upstream's do. Only
    /// for stacks whose lock keeps shared content (`history`, written by `adopt` for a tree
    /// with a version table); unknown lifecycles change nothing. Once recorded, it stays.
    pub fn retire_rows(&mut self, lifecycles: &crate::compliance::Lifecycles, today: NaiveDate) {
        let crate::compliance::Lifecycles::Known(end_of_life) = lifecycles else {
            return;
        };
        let mut retire: Vec<(StackId, Minor)> = Vec::new();
        for (stack, h) in &self.history {
            let minors = h.rows.iter().map(|r| r.kubernetes.minor()).chain(
                self.release_sets
                    .iter()
                    .filter(|s| &s.stack == stack)
                    .map(ReleaseSet::minor),
            );
            for m in minors {
                if end_of_life
                    .get(&m)
                    .is_some_and(|e| crate::model::scs::past_end_of_life(*e, today))
                {
                    retire.push((stack.clone(), m));
                }
            }
        }
        for (stack, m) in retire {
            if let Some(h) = self.history.get_mut(&stack) {
                h.past_end_of_life.insert(m);
            }
        }
    }

    /// The set recorded for a stack × minor.
    /// Fill what `set` says nothing of about its vendored charts from this lock's set of the
    /// same minor, for each component pinning the same chart version from the same repository:
    /// `locked_at` (a new Kubernetes patch with the same charts changes no `Chart.lock`) and
    /// `digest`. A component of another version keeps its unknowns.
    pub fn carry_chart_locks(&self, set: &mut ReleaseSet) {
        let Some(recorded) = self.get(&set.stack, set.minor()) else {
            return;
        };
        for (key, c) in &mut set.components {
            if let Some(r) = recorded.components.get(key)
                && (r.chart.as_str(), r.version.as_str(), r.repository.as_str())
                    == (c.chart.as_str(), c.version.as_str(), c.repository.as_str())
            {
                if c.locked_at.is_none() {
                    c.locked_at = r.locked_at.clone();
                }
                if c.digest.is_none() {
                    c.digest = r.digest.clone();
                }
            }
        }
    }

    pub fn get(&self, stack: &StackId, minor: Minor) -> Option<&ReleaseSet> {
        self.release_sets
            .iter()
            .find(|s| &s.stack == stack && s.minor() == minor)
    }

    /// The stable number the series was last released as, if the lock records one.
    pub fn released_as(&self, stack: &StackId, minor: Minor) -> Option<u64> {
        self.released.get(&series_prefix(stack, minor)).copied()
    }

    /// Record that the series was released as `v<n>`; never lowers a recorded number.
    pub fn record_release(&mut self, stack: &StackId, minor: Minor, n: u64) {
        let e = self
            .released
            .entry(series_prefix(stack, minor))
            .or_insert(n);
        *e = (*e).max(n);
    }
}

impl History {
    /// Add an image unless its version is known; a known one gains a missing build date.
    pub fn remember(&mut self, known: KnownImage) {
        match self
            .images
            .binary_search_by_key(&known.kubernetes, |k| k.kubernetes)
        {
            Ok(i) => {
                let had = &mut self.images[i].node_image;
                if had.build_date.is_none()
                    && had.url == known.node_image.url
                    && had.sha256 == known.node_image.sha256
                {
                    had.build_date = known.node_image.build_date;
                }
            }
            Err(i) => self.images.insert(i, known),
        }
    }
}

/// Parse a `--release-set` file: one release set or a list, as YAML or JSON (JSON is YAML).
pub fn parse_release_sets(text: &str, path: &Path) -> Result<Vec<ReleaseSet>, LockError> {
    let err = |line, message: String| LockError::Parse {
        path: path.to_path_buf(),
        line,
        message,
        hint: "a release set has `stack`, `kubernetes`, `node_image {name, url, sha256}`, `components` and optionally `published_at`",
    };
    let yaml_err = |e: yaml_serde::Error| err(e.location().map(|l| l.line()), e.to_string());
    // Look at the shape first and then parse the typed form from the text, so errors keep
    // their line numbers (an untagged enum would hide the real error).
    let value: yaml_serde::Value = yaml_serde::from_str(text).map_err(yaml_err)?;
    let sets: Vec<ReleaseSet> = if value.is_sequence() {
        yaml_serde::from_str(text).map_err(yaml_err)?
    } else {
        vec![yaml_serde::from_str(text).map_err(yaml_err)?]
    };
    if sets.is_empty() {
        return Err(err(None, "the file holds no release set".into()));
    }
    for s in sets.iter().filter(|s| !s.node_image.is_none()) {
        let sha = &s.node_image.sha256;
        // Empty is `unknown` (adopt writes no checksum for a tree that carries none).
        if !sha.is_empty() && !crate::model::is_sha256(sha) {
            return Err(err(
                None,
                format!(
                    "{} {}: node_image.sha256 `{sha}` is not 64 lowercase hex characters",
                    s.stack, s.kubernetes
                ),
            ));
        }
    }
    Ok(sets)
}

/// `locked_at` written quoted. It is a string (Helm's `generated`, copied into the rendered
/// `Chart.lock` as written and hashed nowhere, so its exact text matters), but it looks like a
/// timestamp, which YAML 1.1 readers (PyYAML, Go's yaml.v2, most tools a person edits or
/// rewrites the lock with) turn into a time and write back in another form
/// (`2024-07-12T11:43:43.163856556+02:00` becomes `2024-07-12 11:43:43.163856+02:00`): a
/// Chart.lock no longer upstream's. The serializer quotes only what the YAML 1.2 core schema
/// would misread, so the plain scalar it emitted is quoted here. Unquoted locks (as written
/// before) still read the same: the core schema reads the plain scalar as the same string.
fn quote_locked_at(yaml: &str) -> String {
    let mut out = String::with_capacity(yaml.len() + 64);
    for line in yaml.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        let indent = body.len() - body.trim_start().len();
        match body.trim_start().strip_prefix("locked_at: ") {
            Some(v) if !v.starts_with(['\'', '"']) && !v.is_empty() => {
                out.push_str(&body[..indent]);
                out.push_str("locked_at: '");
                out.push_str(&v.replace('\'', "''"));
                out.push('\'');
                out.push_str(&line[body.len()..]);
            }
            _ => out.push_str(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Component, NodeImage};

    #[test]
    fn a_new_patch_keeps_when_its_unchanged_charts_were_locked_and_a_new_version_does_not() {
        let mut lock = Lock::default();
        let mut adopted = set("v1.34.7");
        let cni = adopted.components.get_mut("cni").unwrap();
        cni.locked_at = Some("2024-07-12T11:43:40.22001358+02:00".into());
        lock.upsert(adopted.clone());
        let mut next = set("v1.34.8");
        next.components.get_mut("cni").unwrap().digest = None;
        lock.carry_chart_locks(&mut next);
        assert_eq!(next.components["cni"], adopted.components["cni"]);
        let mut newer = set("v1.34.9");
        newer.components.get_mut("cni").unwrap().version = "1.18.10".into();
        lock.carry_chart_locks(&mut newer);
        assert_eq!(
            newer.components["cni"].locked_at, None,
            "another version: unknown"
        );
        let mut other_minor = set("v1.33.3");
        lock.carry_chart_locks(&mut other_minor);
        assert_eq!(other_minor.components["cni"].locked_at, None);
    }

    fn set(k: &str) -> ReleaseSet {
        let kubernetes: crate::model::KubeVersion = k.parse().unwrap();
        let mut components = std::collections::BTreeMap::new();
        components.insert(
            "cni".to_string(),
            Component {
                chart: "cilium".into(),
                repository: "https://helm.cilium.io/".into(),
                version: "1.18.9".into(),
                digest: Some("ab".repeat(32)),
                locked_at: None,
            },
        );
        ReleaseSet {
            stack: StackId::new("openstack", "scs2").unwrap(),
            kubernetes,
            published_at: Some("2026-04-15T15:49:00Z".parse().unwrap()),
            node_image: NodeImage {
                name: format!("ubuntu-capi-image-{k}"),
                url: format!("https://img/{k}.qcow2"),
                sha256: "f".repeat(64),
                build_date: None,
            },
            components,
        }
    }

    #[test]
    fn upsert_keeps_one_set_per_minor_sorted() {
        let mut lock = Lock::default();
        lock.upsert(set("v1.34.6"));
        lock.upsert(set("v1.33.10"));
        lock.upsert(set("v1.34.7"));
        let versions: Vec<String> = lock
            .release_sets
            .iter()
            .map(|s| s.kubernetes.to_string())
            .collect();
        assert_eq!(versions, ["v1.33.10", "v1.34.7"]);
        let id = StackId::new("openstack", "scs2").unwrap();
        assert_eq!(
            lock.get(&id, "1.34".parse().unwrap())
                .unwrap()
                .kubernetes
                .to_string(),
            "v1.34.7"
        );
        assert!(lock.get(&id, "1.35".parse().unwrap()).is_none());
    }

    #[test]
    fn lock_round_trips_through_its_text() {
        let path = Path::new(LOCK_FILE);
        assert_eq!(Lock::parse("", path).unwrap(), Lock::default());
        let mut lock = Lock::default();
        lock.upsert(set("v1.34.7"));
        lock.upsert(set("v1.33.10"));
        let text = lock.to_yaml();
        assert!(text.starts_with("# stackbot.lock"), "{text}");
        assert_eq!(Lock::parse(&text, path).unwrap(), lock);
        // Writing what was read gives the same bytes: the text is canonical.
        assert_eq!(Lock::parse(&text, path).unwrap().to_yaml(), text);
    }

    #[test]
    fn duplicate_sets_and_unknown_keys_are_refused() {
        let mut lock = Lock::default();
        lock.upsert(set("v1.34.7"));
        let body = yaml_serde::to_string(&lock).unwrap();
        let dup = format!("{body}{}", body.replacen("release_sets:\n", "", 1));
        assert!(Lock::parse(&dup, Path::new("l")).is_err());
        let err = Lock::parse("release_sets: []\nextra: 1\n", Path::new("l")).unwrap_err();
        assert!(err.to_string().starts_with("l:2"), "{err}");
    }

    #[test]
    fn conflict_markers_are_an_error_naming_the_line_never_an_empty_lock() {
        let mut lock = Lock::default();
        lock.upsert(set("v1.34.7"));
        let body = lock.to_yaml();
        let conflicted = body.replacen(
            "release_sets:\n",
            "release_sets:\n<<<<<<< HEAD\n=======\n>>>>>>> stackbot/release/openstack-scs2-1-34\n",
            1,
        );
        let err = Lock::parse(&conflicted, Path::new("stackbot.lock")).unwrap_err();
        let line = body.lines().position(|l| l == "release_sets:").unwrap() + 2;
        let msg = err.to_string();
        assert!(
            msg.starts_with(&format!("stackbot.lock:{line}: unresolved merge conflict")),
            "{msg}"
        );
        assert!(msg.contains("hint: resolve the conflict"), "{msg}");
        // A YAML document separator is not a conflict marker.
        assert!(Lock::parse("---\nrelease_sets: []\n", Path::new("l")).is_ok());
    }

    #[test]
    fn the_release_number_is_kept_per_series_and_never_lowered() {
        let id = StackId::new("openstack", "scs2").unwrap();
        let m34: Minor = "1.34".parse().unwrap();
        let mut lock = Lock::default();
        lock.upsert(set("v1.34.7"));
        lock.upsert(set("v1.33.10"));
        let legacy = lock.to_yaml();
        assert!(!legacy.contains("release:"), "no number, no key: {legacy}");
        lock.record_release(&id, m34, 3);
        lock.record_release(&id, m34, 2);
        assert_eq!(lock.released_as(&id, m34), Some(3));
        // Replacing the set by hand keeps the high-water mark.
        lock.upsert(set("v1.34.8"));
        assert_eq!(lock.released_as(&id, m34), Some(3));
        let text = lock.to_yaml();
        assert_eq!(text.matches("release: v3").count(), 1, "{text}");
        let back = Lock::parse(&text, Path::new("l")).unwrap();
        assert_eq!(back, lock);
        assert_eq!(back.released_as(&id, "1.33".parse().unwrap()), None);
        let bad = text.replace("release: v3", "release: v3-sha.abc");
        assert!(Lock::parse(&bad, Path::new("l")).is_err());
    }

    #[test]
    fn release_set_file_holds_one_or_many() {
        let one = yaml_serde::to_string(&set("v1.34.7")).unwrap();
        assert_eq!(parse_release_sets(&one, Path::new("f")).unwrap().len(), 1);
        let many = serde_json::to_string(&vec![set("v1.34.7"), set("v1.33.10")]).unwrap();
        assert_eq!(parse_release_sets(&many, Path::new("f")).unwrap().len(), 2);
        let bad = one.replace(&"f".repeat(64), "nothex");
        let err = parse_release_sets(&bad, Path::new("f")).unwrap_err();
        assert!(err.to_string().contains("sha256"), "{err}");
        let typo = one.replace("kubernetes:", "kubernetes_version:");
        assert!(parse_release_sets(&typo, Path::new("f")).is_err());
    }

    #[test]
    fn locked_at_is_written_quoted_and_an_unquoted_one_of_an_older_lock_reads_the_same() {
        let mut lock = Lock::default();
        let mut adopted = set("v1.34.7");
        let at = "2024-07-12T11:43:40.22001358+02:00";
        adopted.components.get_mut("cni").unwrap().locked_at = Some(at.into());
        lock.upsert(adopted);
        let text = lock.to_yaml();
        assert!(
            text.contains(&format!("      locked_at: '{at}'\n")),
            "{text}"
        );
        assert!(!text.contains(&format!("locked_at: {at}")), "{text}");
        let path = Path::new("stackbot.lock");
        let read = Lock::parse(&text, path).unwrap();
        assert_eq!(read, lock);
        let older = text.replace(&format!("'{at}'"), at);
        assert_ne!(older, text);
        assert_eq!(
            Lock::parse(&older, path).unwrap(),
            lock,
            "written before: unquoted"
        );
        assert_eq!(Lock::parse(&older, path).unwrap().to_yaml(), text);
    }
}
