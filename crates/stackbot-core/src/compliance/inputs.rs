//! The upstream facts a verdict depends on, read from the raw [`UpstreamData`] of a run.
//!
//! Each source is either known or unknown *with its cause*, never silently empty: an
//! unreadable CVE feed is not "no CVE", a schedule the run did not read is not "no end of
//! life".

use std::collections::BTreeMap;

use chrono::NaiveDate;

use crate::model::Minor;
use crate::upstream::cve::{self, Cve};
use crate::upstream::kubernetes::{self, KubeRelease};
use crate::upstream::{Fetched, Key, UpstreamData, lifecycle};

/// End-of-life dates by minor.
#[derive(Debug, Clone, PartialEq)]
pub enum Lifecycles {
    /// The schedule was read: every minor it lists with an end-of-life date.
    Known(BTreeMap<Minor, NaiveDate>),
    Unknown(String),
}

/// What the CVE sources say.
#[derive(Debug, Clone, PartialEq)]
pub enum Security {
    /// The feed was read; `unreadable` names the records that were not, with the cause.
    Known {
        cves: Vec<Cve>,
        unreadable: Vec<(String, String)>,
    },
    /// The feed itself could not be read.
    Unknown(String),
}

/// Everything a verdict reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Inputs {
    /// GA releases with their publication dates (`Err`: the API was unusable, so no dates).
    pub releases: Result<Vec<KubeRelease>, String>,
    pub lifecycles: Lifecycles,
    pub security: Security,
    /// Releases of the same list flagged GA whose tags are not `vX.Y.Z`: not releases for
    /// stackbot, but for the standard's test ([`kubernetes::OddTag`]).
    pub odd_tags: Vec<kubernetes::OddTag>,
}

impl Default for Inputs {
    fn default() -> Self {
        let none = "not read".to_string();
        Inputs {
            releases: Err(none.clone()),
            lifecycles: Lifecycles::Unknown(none.clone()),
            security: Security::Unknown(none),
            odd_tags: Vec::new(),
        }
    }
}

fn cause(f: Option<&Fetched>, what: &str) -> String {
    match f {
        None => format!("{what} was not read (not in the snapshot?)"),
        Some(Fetched::Ok { .. }) => format!("{what} was read"),
        Some(Fetched::Missing { url }) => format!("{url}: HTTP 404"),
        Some(Fetched::Error { message }) => message.clone(),
    }
}

impl Inputs {
    /// Read the inputs out of what a run fetched (or a snapshot recorded).
    pub fn from_data(data: &UpstreamData) -> Inputs {
        let (releases, odd_tags) = match releases(data) {
            Ok((list, odd)) => (Ok(list), odd),
            Err(e) => (Err(e), Vec::new()),
        };
        Inputs {
            releases,
            lifecycles: lifecycles(data),
            security: security(data),
            odd_tags,
        }
    }

    /// The causes of every source that is unknown as a whole (for warnings and exit codes).
    pub fn problems(&self) -> Vec<String> {
        self.problems_where(|_| true)
    }

    /// [`Inputs::problems`] of the sources `data` holds an answer for: what a snapshot marks
    /// as unreadable on the day it was recorded (`detect --snapshot` exits 1 for it), not
    /// what an older snapshot never recorded (its verdicts say so, its replay is no failure).
    pub fn problems_recorded(&self, data: &UpstreamData) -> Vec<String> {
        self.problems_where(|k| data.has(k))
    }

    fn problems_where(&self, recorded: impl Fn(&Key) -> bool) -> Vec<String> {
        let mut out = Vec::new();
        if let Err(e) = &self.releases
            && recorded(&Key::Releases)
        {
            out.push(format!("Kubernetes releases (publication dates): {e}"));
        }
        if let Lifecycles::Unknown(e) = &self.lifecycles
            && recorded(&Key::Schedule)
        {
            out.push(format!("Kubernetes schedule (end of life): {e}"));
        }
        match &self.security {
            Security::Unknown(_) if !recorded(&Key::CveFeed) => {}
            Security::Unknown(e) => out.push(format!("Kubernetes CVE feed: {e}")),
            Security::Known { unreadable, .. } => out.extend(
                unreadable
                    .iter()
                    .map(|(id, e)| format!("CVE record {id}: {e}")),
            ),
        }
        out
    }
}

/// The inputs as the sources last answered: every source that failed this run replaced by its
/// last known answer (the ETag cache's), with the day of the oldest. `None` when nothing
/// failed that a last answer is known for. For reports only: "last known: fail, facts of
/// 2026-05-01", never for a decision.
pub fn last_known(data: &UpstreamData) -> Option<(Inputs, Option<chrono::DateTime<chrono::Utc>>)> {
    if data.last_known.is_empty() {
        return None;
    }
    let mut stale = data.clone();
    for (id, last) in &data.last_known {
        stale.entries.insert(
            id.clone(),
            Fetched::Ok {
                body: last.body.clone(),
            },
        );
    }
    let oldest = data.last_known.values().filter_map(|l| l.fetched_at).min();
    Some((Inputs::from_data(&stale), oldest))
}

type Listing = (Vec<KubeRelease>, Vec<kubernetes::OddTag>);

fn releases(data: &UpstreamData) -> Result<Listing, String> {
    match data.get(&Key::Releases) {
        Some(Fetched::Ok { body }) => {
            let (list, odd) = kubernetes::parse_listing(body)?;
            if list.is_empty() {
                return Err("the list has no GA release".into());
            }
            Ok((list, odd))
        }
        other => Err(cause(other, "the releases list")),
    }
}

fn lifecycles(data: &UpstreamData) -> Lifecycles {
    match data.get(&Key::Schedule) {
        Some(Fetched::Ok { body }) => match lifecycle::parse_schedule(body, &data.limits) {
            Ok((list, _)) => Lifecycles::Known(
                list.into_iter()
                    .filter_map(|l| Some((l.minor, l.end_of_life?)))
                    .collect(),
            ),
            Err(e) => Lifecycles::Unknown(e),
        },
        other => Lifecycles::Unknown(cause(other, "the schedule")),
    }
}

fn security(data: &UpstreamData) -> Security {
    let (ids, refused) = match data.get(&Key::CveFeed) {
        Some(Fetched::Ok { body }) => match cve::parse_feed(body) {
            Ok(read) => read,
            Err(e) => return Security::Unknown(e),
        },
        other => return Security::Unknown(cause(other, "the CVE feed")),
    };
    let mut cves = Vec::new();
    // A feed item that names no CVE id (none at all, or `cve-2026-0001`) is a CVE the run
    // could not read: unreadable, never "no CVE".
    let mut unreadable: Vec<(String, String)> = refused
        .into_iter()
        .map(|item| {
            (
                format!("CVE feed item `{item}`"),
                "names no CVE id (`CVE-YYYY-NNNN`): its record was not read".to_string(),
            )
        })
        .collect();
    for id in ids {
        match data.get(&Key::CveRecord(id.clone())) {
            Some(Fetched::Ok { body }) => match cve::parse_record(&id, body) {
                Ok(c) => cves.push(c),
                Err(e) => unreadable.push((id, e)),
            },
            other => {
                let c = cause(other, "the record");
                unreadable.push((id, c));
            }
        }
    }
    Security::Known { cves, unreadable }
}

/// The CVE sources still to read, given what `data` holds: the feed, then every record it
/// lists. Empty when everything is read (or the feed failed: there is nothing to list).
pub fn needed(data: &UpstreamData) -> Vec<Key> {
    match data.get(&Key::CveFeed) {
        None => vec![Key::CveFeed],
        Some(Fetched::Ok { body }) => cve::parse_feed(body)
            .map(|(ids, _)| ids)
            .unwrap_or_default()
            .into_iter()
            .map(Key::CveRecord)
            .filter(|k| !data.has(k))
            .collect(),
        Some(_) => Vec::new(),
    }
}
