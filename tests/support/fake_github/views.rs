//! What a test reads back, straight from the fake's state (no request is counted): tags,
//! releases with their assets, pull requests, comments, commits and their files, ancestry.
//! The world simulator (`tests/sim/`) checks its invariants through these; what people *do*
//! is in [`super::humans`].

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::FakeGithub;
use super::merge::Files;
use super::state::Repo;

/// A pull request as the web UI shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullView {
    pub number: u64,
    pub head: String,
    pub base: String,
    pub title: String,
    pub body: String,
    /// `open` or `closed`.
    pub state: String,
    pub merged: bool,
}

/// A commit as `git log` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitView {
    pub sha: String,
    pub parents: Vec<String>,
    pub author_email: String,
    pub message: String,
}

/// A release with its assets' bytes.
#[derive(Debug, Clone)]
pub struct ReleaseView {
    pub id: u64,
    pub tag: String,
    pub draft: bool,
    pub assets: BTreeMap<String, Vec<u8>>,
}

pub(super) fn files_of(repo: &Repo, commit: &str) -> Files {
    let Some(c) = repo.commit(commit) else {
        return Files::new();
    };
    repo.flatten(&c.tree)
        .into_iter()
        .map(|(p, s)| (p, repo.blob(&s).cloned().unwrap_or_default()))
        .collect()
}

pub(super) fn write_files(repo: &mut Repo, files: &Files) -> String {
    let flat: BTreeMap<String, String> = files
        .iter()
        .map(|(p, b)| (p.clone(), repo.put_blob(b.clone())))
        .collect();
    repo.write_tree(&flat)
}

/// The nearest common ancestor of two commits (breadth-first from `b`).
pub(super) fn merge_base(repo: &Repo, a: &str, b: &str) -> Option<String> {
    let of_a = repo.ancestors(a);
    let mut seen = BTreeSet::new();
    let mut queue = VecDeque::from([b.to_string()]);
    while let Some(s) = queue.pop_front() {
        if of_a.contains(&s) {
            return Some(s);
        }
        if seen.insert(s.clone())
            && let Some(c) = repo.commit(&s)
        {
            queue.extend(c.parents.iter().cloned());
        }
    }
    None
}

impl FakeGithub {
    fn read_repo<T>(&self, full: &str, f: impl FnOnce(&Repo) -> T) -> T {
        let st = self.shared.state.lock().unwrap();
        let repo = st
            .repos
            .get(full)
            .unwrap_or_else(|| panic!("fake github: no repository {full}"));
        f(repo)
    }

    /// Tag name → the commit it points at.
    pub fn tags(&self, full: &str) -> BTreeMap<String, String> {
        self.read_repo(full, |r| {
            r.refs
                .iter()
                .filter_map(|(k, v)| Some((k.strip_prefix("refs/tags/")?.to_string(), v.clone())))
                .filter_map(|(t, v)| Some((t, r.peel(v)?)))
                .collect()
        })
    }

    /// Every release (drafts too), with asset bytes.
    pub fn releases(&self, full: &str) -> Vec<ReleaseView> {
        self.read_repo(full, |r| {
            r.releases
                .iter()
                .map(|rel| ReleaseView {
                    id: rel.id,
                    tag: rel.tag.clone(),
                    draft: rel.draft,
                    assets: rel
                        .assets
                        .iter()
                        .map(|a| (a.name.clone(), a.bytes.clone()))
                        .collect(),
                })
                .collect()
        })
    }

    /// Every pull request, in number order.
    pub fn pulls(&self, full: &str) -> Vec<PullView> {
        self.read_repo(full, |r| {
            r.pulls
                .iter()
                .map(|p| PullView {
                    number: p.number,
                    head: p.head.clone(),
                    base: p.base.clone(),
                    title: p.title.clone(),
                    body: p.body.clone(),
                    state: p.state.clone(),
                    merged: p.merged,
                })
                .collect()
        })
    }

    /// `(comment id, issue number, body)` of every comment, in creation order.
    pub fn comments(&self, full: &str) -> Vec<(u64, u64, String)> {
        self.read_repo(full, |r| {
            r.comments
                .iter()
                .map(|c| (c.id, c.issue, c.body.clone()))
                .collect()
        })
    }

    /// A commit's parents, author and message.
    pub fn commit_view(&self, full: &str, sha: &str) -> Option<CommitView> {
        self.read_repo(full, |r| {
            r.commit(sha).map(|c| CommitView {
                sha: sha.to_string(),
                parents: c.parents.clone(),
                author_email: c.author.email.clone(),
                message: c.message.clone(),
            })
        })
    }

    /// Every file at a commit.
    pub fn files_at(&self, full: &str, commit: &str) -> Files {
        self.read_repo(full, |r| files_of(r, commit))
    }

    /// Whether `a` is an ancestor of (or equal to) `b`.
    pub fn is_ancestor(&self, full: &str, a: &str, b: &str) -> bool {
        self.read_repo(full, |r| r.ancestors(b).contains(a))
    }

    /// The nearest common ancestor of two commits.
    pub fn merge_base(&self, full: &str, a: &str, b: &str) -> Option<String> {
        self.read_repo(full, |r| merge_base(r, a, b))
    }
}
