//! Where each fact an SCS 0210 verdict reads came from: read now from a URL (and when), from
//! a snapshot (of which day, how old), or not readable (why, and how old the last answer the
//! cache kept is). Reports list it (`status --format json`: `sources[]`), so "pass" can
//! always be traced back to what was read, and "unknown" to what was not.

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;

use super::{Inputs, Lifecycles, Security};
use crate::upstream::{Fetched, Key, Origin, UpstreamData};

/// One source a verdict depends on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceReading {
    /// What it is, in words: `Kubernetes releases list`, `CVE record CVE-2026-0001`.
    pub source: String,
    /// Its key (`kubernetes/releases`, `cve-record CVE-2026-0001`), as snapshots name it.
    pub key: String,
    /// Where this run read it (live runs; a snapshot does not record it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(flatten)]
    pub read: Read,
}

/// How a source was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "read", rename_all = "snake_case")]
pub enum Read {
    /// Read during this run, at `at`.
    Live { at: Option<DateTime<Utc>> },
    /// From a snapshot recorded for `recorded_for`, `age_days` old on the report's day.
    Snapshot {
        recorded_for: Option<NaiveDate>,
        age_days: Option<i64>,
    },
    /// Could not be read (or not understood): `why`. `last_known_at`: when the cache last had
    /// an answer, `last_known_age_days` how old it is; reports show those facts as stale, no
    /// verdict is decided on them.
    Unreadable {
        why: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        last_known_at: Option<DateTime<Utc>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        last_known_age_days: Option<i64>,
    },
}

impl Read {
    /// Whether the fact was read (now or from a snapshot).
    pub fn is_read(&self) -> bool {
        !matches!(self, Read::Unreadable { .. })
    }

    /// The same, with its ages counted on `today`.
    fn aged(self, today: NaiveDate) -> Read {
        let age = |d: NaiveDate| (today - d).num_days();
        match self {
            Read::Snapshot { recorded_for, .. } => Read::Snapshot {
                recorded_for,
                age_days: recorded_for.map(age),
            },
            Read::Unreadable {
                why, last_known_at, ..
            } => Read::Unreadable {
                why,
                last_known_at,
                last_known_age_days: last_known_at.map(|a| age(a.date_naive())),
            },
            live => live,
        }
    }
}

/// `list` with every age counted on `today` (the report's day).
pub fn aged(list: &[SourceReading], today: NaiveDate) -> Vec<SourceReading> {
    list.iter()
        .cloned()
        .map(|r| SourceReading {
            read: r.read.aged(today),
            ..r
        })
        .collect()
}

fn words(key: &Key) -> String {
    match key {
        Key::Releases => "Kubernetes releases list".into(),
        Key::Schedule => "Kubernetes schedule (end of life)".into(),
        Key::Marker(m) => format!("Kubernetes version marker stable-{m}.txt"),
        Key::CveFeed => "Kubernetes CVE feed".into(),
        Key::CveRecord(id) => format!("CVE record {id}"),
        Key::Checksum(url) => format!("node image checksum {url}"),
        Key::HelmIndex(repo) => format!("Helm index {repo}"),
    }
}

/// The sources the verdicts of `data` depend on, in a stable order: the releases list (and the
/// version markers read in its place), the schedule, the CVE feed and every record it lists.
/// A source absent from `data` is unreadable "not read". `inputs` is what the verdicts read
/// of `data` (a body that arrived but does not parse is unreadable with the parser's cause).
pub fn sources(data: &UpstreamData, inputs: &Inputs, today: NaiveDate) -> Vec<SourceReading> {
    let mut keys = vec![Key::Releases];
    keys.extend(data.entries.keys().filter_map(|id| {
        id.strip_prefix("kubernetes/stable-")
            .and_then(|m| m.parse().ok())
            .map(Key::Marker)
    }));
    keys.push(Key::Schedule);
    keys.push(Key::CveFeed);
    keys.extend(data.entries.keys().filter_map(|id| {
        id.strip_prefix("cve-record ")
            .map(|id| Key::CveRecord(id.to_string()))
    }));
    keys.into_iter()
        .map(|key| reading(data, inputs, &key, today))
        .collect()
}

/// Why `key` is not usable although (or because) of what `data` holds; `None`: it is.
fn unusable(data: &UpstreamData, inputs: &Inputs, key: &Key) -> Option<String> {
    match data.get(key) {
        None => return Some("not read".into()),
        Some(Fetched::Missing { url }) => return Some(format!("{url}: HTTP 404")),
        Some(Fetched::Error { message }) => return Some(message.clone()),
        Some(Fetched::Ok { .. }) => {}
    }
    match key {
        Key::Releases => inputs.releases.as_ref().err().cloned(),
        Key::Schedule => match &inputs.lifecycles {
            Lifecycles::Unknown(e) => Some(e.clone()),
            Lifecycles::Known(_) => None,
        },
        Key::CveFeed => match &inputs.security {
            Security::Unknown(e) => Some(e.clone()),
            Security::Known { .. } => None,
        },
        Key::CveRecord(id) => match &inputs.security {
            Security::Known { unreadable, .. } => unreadable
                .iter()
                .find(|(u, _)| u == id)
                .map(|(_, e)| e.clone()),
            Security::Unknown(e) => Some(e.clone()),
        },
        Key::Marker(m) => match data.get(key) {
            Some(Fetched::Ok { body }) => crate::upstream::kubernetes::parse_marker(body, *m)
                .is_none()
                .then(|| format!("not a GA version of {m}")),
            _ => None,
        },
        Key::Checksum(_) | Key::HelmIndex(_) => None,
    }
}

fn reading(data: &UpstreamData, inputs: &Inputs, key: &Key, today: NaiveDate) -> SourceReading {
    let read = match unusable(data, inputs, key) {
        Some(why) => Read::Unreadable {
            why,
            last_known_at: data.last_known.get(&key.id()).and_then(|l| l.fetched_at),
            last_known_age_days: None,
        },
        None => match data.origin {
            Origin::Live { at } => Read::Live { at: Some(at) },
            Origin::Unsaid => Read::Live { at: None },
            Origin::Snapshot { recorded_for } => Read::Snapshot {
                recorded_for,
                age_days: None,
            },
        },
    };
    SourceReading {
        source: words(key),
        key: key.id(),
        url: data.urls.get(&key.id()).cloned(),
        read: read.aged(today),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn every_source_says_where_it_came_from_or_why_it_could_not_be_read() {
        let mut data = UpstreamData {
            origin: Origin::Snapshot {
                recorded_for: Some(day("2026-05-01")),
            },
            ..UpstreamData::default()
        };
        data.insert(
            &Key::Releases,
            Fetched::Error {
                message: "https://api.github.com/…: HTTP 403 (rate limited)".into(),
            },
        );
        data.insert(
            &Key::Schedule,
            Fetched::Ok {
                body: "<html>".into(),
            },
        );
        data.insert(
            &Key::CveFeed,
            Fetched::Ok {
                body: r#"{"items": [{"id": "CVE-2026-0001"}]}"#.into(),
            },
        );
        data.insert(
            &Key::CveRecord("CVE-2026-0001".into()),
            Fetched::Ok {
                body: r#"{"containers": {"cna": {}}}"#.into(),
            },
        );
        data.last_known.insert(
            Key::Releases.id(),
            crate::upstream::LastKnown {
                body: "[]".into(),
                fetched_at: Some("2026-04-28T10:00:00Z".parse().unwrap()),
            },
        );
        let inputs = Inputs::from_data(&data);
        let s = sources(&data, &inputs, day("2026-05-03"));
        let by = |k: &str| s.iter().find(|r| r.key == k).unwrap().read.clone();
        assert_eq!(
            by("kubernetes/releases"),
            Read::Unreadable {
                why: "https://api.github.com/…: HTTP 403 (rate limited)".into(),
                last_known_at: Some("2026-04-28T10:00:00Z".parse().unwrap()),
                last_known_age_days: Some(5),
            }
        );
        assert!(
            matches!(by("kubernetes/schedule"), Read::Unreadable { why, .. } if why.contains("YAML") || why.contains("schedules")),
            "a body that does not parse is not read"
        );
        let snap = Read::Snapshot {
            recorded_for: Some(day("2026-05-01")),
            age_days: Some(2),
        };
        assert_eq!(by("kubernetes/cve-feed"), snap);
        assert_eq!(by("cve-record CVE-2026-0001"), snap);
        assert_eq!(s.iter().filter(|r| r.read.is_read()).count(), 2);
    }
}
