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

use std::collections::BTreeMap;
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

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    release_sets: Vec<Entry>,
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
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Lock {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let file = File::deserialize(d)?;
        let mut lock = Lock::default();
        for entry in file.release_sets {
            let (set, release) = entry.into_parts();
            if let Some(v) = release.filter(StackVersion::is_stable) {
                lock.record_release(&set.stack, set.minor(), v.major);
            }
            lock.upsert(set);
        }
        Ok(lock)
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
    /// Read a lock. A missing file is an empty lock (nothing rendered yet).
    pub fn load(path: &Path) -> Result<Lock, LockError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Lock::default()),
            Err(source) => {
                return Err(LockError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        Lock::parse(&text, path)
    }

    /// Parse lock text; `path` only names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Lock, LockError> {
        if let Some(line) = conflict_marker(text) {
            return Err(LockError::Parse {
                path: path.to_path_buf(),
                line: Some(line),
                message: "unresolved merge conflict (conflict marker)".into(),
                hint: "resolve the conflict: keep one entry per stack and minor, and for `release:` the higher version of the two sides; then commit the lock",
            });
        }
        let file: File = if text.trim().is_empty() {
            File {
                release_sets: Vec::new(),
            }
        } else {
            yaml_serde::from_str(text).map_err(|e| LockError::Parse {
                path: path.to_path_buf(),
                line: e.location().map(|l| l.line()),
                message: e.to_string(),
                hint: "the lock is generated: restore it from git or re-run `stackbot render --release-set FILE`",
            })?
        };
        let mut sorted = Lock::default();
        for entry in file.release_sets {
            let (set, release) = entry.into_parts();
            if sorted.get(&set.stack, set.minor()).is_some() {
                return Err(LockError::Parse {
                    path: path.to_path_buf(),
                    line: None,
                    message: format!("two release sets for {} {}", set.stack, set.minor()),
                    hint: "keep one release set per stack and minor",
                });
            }
            match release {
                Some(v) if v.is_stable() => sorted.record_release(&set.stack, set.minor(), v.major),
                Some(v) => {
                    return Err(LockError::Parse {
                        path: path.to_path_buf(),
                        line: None,
                        message: format!(
                            "{} {}: `release: {v}` is not a stable version (`v<N>`)",
                            set.stack,
                            set.minor()
                        ),
                        hint: "the lock is generated: restore it from git",
                    });
                }
                None => {}
            }
            sorted.upsert(set);
        }
        Ok(sorted)
    }

    /// The lock as written to disk: a comment header, then sorted YAML.
    pub fn to_yaml(&self) -> String {
        let body = yaml_serde::to_string(self).expect("release sets serialize");
        format!("{HEADER}{body}")
    }

    /// Write the lock atomically (temporary file + rename), so a crash never leaves half a lock.
    pub fn save(&self, path: &Path) -> Result<(), LockError> {
        write_atomic(path, self.to_yaml().as_bytes()).map_err(|source| LockError::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Insert or replace the set for its stack × minor, keeping the order (and the recorded
    /// release number: it is a high-water mark, not a property of the set).
    pub fn upsert(&mut self, set: ReleaseSet) {
        let key = (set.stack.clone(), set.minor());
        match self
            .release_sets
            .binary_search_by(|s| (s.stack.clone(), s.minor()).cmp(&key))
        {
            Ok(i) => self.release_sets[i] = set,
            Err(i) => self.release_sets.insert(i, set),
        }
    }

    /// The set recorded for a stack × minor.
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
        if sha.len() != 64
            || !sha
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
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

/// Write a file via a temporary sibling and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Component, NodeImage};

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
    fn lock_round_trips_through_disk() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        assert_eq!(Lock::load(&path).unwrap(), Lock::default());
        let mut lock = Lock::default();
        lock.upsert(set("v1.34.7"));
        lock.upsert(set("v1.33.10"));
        lock.save(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# stackbot.lock"), "{text}");
        assert_eq!(Lock::load(&path).unwrap(), lock);
        // Saving what was loaded is a no-op on the bytes: the file is canonical.
        Lock::load(&path).unwrap().save(&path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
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
}
