//! What a fake reports: counters, the write log, and the comparable state of every repository.

use std::collections::BTreeMap;

use serde::Serialize;

/// One write request as the fake saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WriteRecord {
    /// 1-based index among writes since the last reset (what [`Faults::on_write`] keys on).
    pub index: usize,
    pub method: String,
    /// Route template, e.g. `POST /repos/{owner}/{repo}/git/refs`.
    pub route: String,
    /// Concrete path without the API/upload prefix.
    pub path: String,
    /// The status answered (0: connection dropped).
    pub status: u16,
    /// Whether the write changed state.
    pub applied: bool,
    /// The injected fault, if any.
    pub fault: Option<String>,
    /// Milliseconds since the fake started.
    pub at_ms: u64,
}

/// Request counters since the last reset.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub reads: usize,
    pub writes: usize,
    /// `METHOD /route/{template}` → requests.
    pub by_route: BTreeMap<String, usize>,
    /// Primary rate-limit units spent (every counted request; not `304`s, not `/rate_limit`,
    /// not the download host). What a benchmark reports as the cost of a run.
    pub units: usize,
    /// `304 Not Modified` answers to conditional requests (free of charge on GitHub).
    pub not_modified: usize,
}

impl Counts {
    pub fn total(&self) -> usize {
        self.reads + self.writes
    }
}

/// The comparable state of every repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    pub repos: BTreeMap<String, RepoSnapshot>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RepoSnapshot {
    pub branches: BTreeMap<String, BranchSnapshot>,
    pub tags: BTreeMap<String, TagSnapshot>,
    /// Sorted by tag, then draft, then name, then body.
    pub releases: Vec<ReleaseSnapshot>,
    /// In number order.
    pub pulls: Vec<PullSnapshot>,
    /// Issues (not pull requests), in number order.
    pub issues: Vec<IssueSnapshot>,
    /// In creation order.
    pub comments: Vec<CommentSnapshot>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BranchSnapshot {
    /// Every file at the branch head.
    pub files: BTreeMap<String, Vec<u8>>,
    /// First-parent history, newest first (commit messages).
    pub history: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TagSnapshot {
    pub annotated: bool,
    /// Tag message (empty for a lightweight tag).
    pub message: String,
    /// Message of the tagged commit.
    pub commit_message: String,
    /// sha256 of every file of the tagged commit.
    pub files: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReleaseSnapshot {
    pub tag: String,
    pub name: Option<String>,
    pub draft: bool,
    pub body: String,
    /// Asset name → sha256 of its bytes.
    pub assets: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PullSnapshot {
    pub number: u64,
    pub head: String,
    pub base: String,
    pub title: String,
    pub body: String,
    /// `open`, `closed` or `merged`.
    pub state: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IssueSnapshot {
    pub number: u64,
    pub title: String,
    pub body: String,
    /// `open` or `closed`.
    pub state: String,
    pub labels: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommentSnapshot {
    pub issue: u64,
    pub body: String,
}
