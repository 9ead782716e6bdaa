//! What people do on GitHub's web UI, and what a test reads back, straight on the fake's state
//! (no request is counted): the three merge buttons, "Update branch", closing a pull request,
//! deleting a branch, a tag or a release, and reading tags, releases, pull requests, comments
//! and commits. The world simulator (`tests/sim/`) acts and inspects through these.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::FakeGithub;
use super::merge::{self, Files};
use super::state::{Repo, person};

/// How a pull request is merged (GitHub's three buttons).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeKind {
    /// A merge commit with the base and the head as parents.
    Merge,
    /// One new commit on the base with the merged changes; the branch keeps its commits.
    Squash,
    /// The head's commits replayed one by one onto the base (new shas, same authors).
    Rebase,
}

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

fn files_of(repo: &Repo, commit: &str) -> Files {
    let Some(c) = repo.commit(commit) else {
        return Files::new();
    };
    repo.flatten(&c.tree)
        .into_iter()
        .map(|(p, s)| (p, repo.blob(&s).cloned().unwrap_or_default()))
        .collect()
}

fn write_files(repo: &mut Repo, files: &Files) -> String {
    let flat: BTreeMap<String, String> = files
        .iter()
        .map(|(p, b)| (p.clone(), repo.put_blob(b.clone())))
        .collect();
    repo.write_tree(&flat)
}

/// The nearest common ancestor of two commits (breadth-first from `b`).
fn merge_base(repo: &Repo, a: &str, b: &str) -> Option<String> {
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

    fn with_repo<T>(&self, full: &str, f: impl FnOnce(&mut Repo, u64) -> T) -> T {
        let mut st = self.shared.state.lock().unwrap();
        st.seq += 1;
        let seq = st.seq;
        let repo = st
            .repos
            .get_mut(full)
            .unwrap_or_else(|| panic!("fake github: no repository {full}"));
        f(repo, seq)
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

    /// Press a merge button on an open pull request as `who` (`(name, email)`). `Err` when
    /// GitHub would refuse (not open, or the head conflicts with the base).
    pub fn merge_as(
        &self,
        full: &str,
        number: u64,
        kind: MergeKind,
        who: (&str, &str),
    ) -> Result<String, String> {
        self.with_repo(full, |repo, seq| {
            let (head, base) = {
                let p = repo
                    .pulls
                    .iter()
                    .find(|p| p.number == number)
                    .ok_or("no such pull request")?;
                if p.state != "open" {
                    return Err("not open".to_string());
                }
                (p.head.clone(), p.base.clone())
            };
            let head_sha = repo
                .refs
                .get(&format!("refs/heads/{head}"))
                .cloned()
                .ok_or("head branch is gone")?;
            let base_sha = repo.refs[&format!("refs/heads/{base}")].clone();
            let ancestor = merge_base(repo, &head_sha, &base_sha).ok_or("unrelated histories")?;
            let merged = merge::merge_trees(
                &files_of(repo, &ancestor),
                &files_of(repo, &base_sha),
                &files_of(repo, &head_sha),
            )
            .map_err(|c| format!("conflict in {}", c.join(", ")))?;
            let title = repo
                .pulls
                .iter()
                .find(|p| p.number == number)
                .map(|p| p.title.clone())
                .unwrap_or_default();
            let new_base = match kind {
                MergeKind::Merge => {
                    let tree = write_files(repo, &merged);
                    repo.put_commit(
                        tree,
                        vec![base_sha.clone(), head_sha.clone()],
                        &format!("Merge pull request #{number} from {head}\n\n{title}"),
                        person(who.0, who.1, seq),
                        seq,
                    )
                }
                MergeKind::Squash => {
                    let tree = write_files(repo, &merged);
                    repo.put_commit(
                        tree,
                        vec![base_sha.clone()],
                        &format!("{title} (#{number})"),
                        person(who.0, who.1, seq),
                        seq,
                    )
                }
                MergeKind::Rebase => {
                    // The head's own commits, oldest first, first-parent chain down to the
                    // ancestor; merge commits are dropped as `git rebase` does.
                    let mut chain = Vec::new();
                    let mut cur = head_sha.clone();
                    while cur != ancestor {
                        let c = repo.commit(&cur).ok_or("broken history")?.clone();
                        if c.parents.len() == 1 {
                            chain.push((cur.clone(), c.clone()));
                        }
                        cur = c.parents.first().cloned().ok_or("broken history")?;
                    }
                    chain.reverse();
                    let mut tip = base_sha.clone();
                    for (i, (sha, c)) in chain.iter().enumerate() {
                        let before = files_of(repo, &c.parents[0]);
                        let after = files_of(repo, sha);
                        let onto = files_of(repo, &tip);
                        let files = merge::cherry_pick(&before, &after, &onto)
                            .map_err(|p| format!("conflict in {}", p.join(", ")))?;
                        let tree = write_files(repo, &files);
                        let mut author = c.author.clone();
                        author.date = super::state::date_of(seq + i as u64);
                        tip = repo.put_commit(tree, vec![tip], &c.message, author, seq + i as u64);
                    }
                    tip
                }
            };
            repo.refs
                .insert(format!("refs/heads/{base}"), new_base.clone());
            let p = repo.pulls.iter_mut().find(|p| p.number == number).unwrap();
            p.state = "closed".into();
            p.merged = true;
            p.closed = Some(seq);
            p.updated = seq;
            p.merge_commit = Some(new_base.clone());
            Ok(new_base)
        })
    }

    /// GitHub's "Update branch" button: merge the base into the head branch of an open pull
    /// request, a merge commit authored by `who`. `Err` on conflict.
    pub fn update_branch(
        &self,
        full: &str,
        number: u64,
        who: (&str, &str),
    ) -> Result<String, String> {
        self.with_repo(full, |repo, seq| {
            let p = repo
                .pulls
                .iter()
                .find(|p| p.number == number)
                .ok_or("no such pull request")?
                .clone();
            let head_sha = repo
                .refs
                .get(&format!("refs/heads/{}", p.head))
                .cloned()
                .ok_or("head branch is gone")?;
            let base_sha = repo.refs[&format!("refs/heads/{}", p.base)].clone();
            if repo.ancestors(&head_sha).contains(&base_sha) {
                return Err("already up to date".into());
            }
            let ancestor = merge_base(repo, &head_sha, &base_sha).ok_or("unrelated histories")?;
            let merged = merge::merge_trees(
                &files_of(repo, &ancestor),
                &files_of(repo, &head_sha),
                &files_of(repo, &base_sha),
            )
            .map_err(|c| format!("conflict in {}", c.join(", ")))?;
            let tree = write_files(repo, &merged);
            let c = repo.put_commit(
                tree,
                vec![head_sha, base_sha],
                &format!("Merge branch '{}' into {}", p.base, p.head),
                person(who.0, who.1, seq),
                seq,
            );
            repo.refs
                .insert(format!("refs/heads/{}", p.head), c.clone());
            Ok(c)
        })
    }

    /// Close an open pull request without merging (the "Close pull request" button).
    pub fn close_pull(&self, full: &str, number: u64) {
        self.with_repo(full, |repo, seq| {
            if let Some(p) = repo
                .pulls
                .iter_mut()
                .find(|p| p.number == number && p.state == "open")
            {
                p.state = "closed".into();
                p.closed = Some(seq);
                p.updated = seq;
            }
        })
    }

    /// Delete a branch; GitHub closes the open pull requests whose head it was.
    pub fn delete_branch(&self, full: &str, branch: &str) -> bool {
        self.with_repo(full, |repo, seq| {
            let gone = repo.refs.remove(&format!("refs/heads/{branch}")).is_some();
            for p in repo
                .pulls
                .iter_mut()
                .filter(|p| p.head == branch && p.state == "open")
            {
                p.state = "closed".into();
                p.closed = Some(seq);
                p.updated = seq;
            }
            gone
        })
    }

    /// Delete a tag (`git push --delete origin <tag>`).
    pub fn delete_tag(&self, full: &str, tag: &str) -> bool {
        self.with_repo(full, |repo, _| {
            repo.refs.remove(&format!("refs/tags/{tag}")).is_some()
        })
    }

    /// Delete every release of a tag (the tag itself stays, as on GitHub).
    pub fn delete_releases_of(&self, full: &str, tag: &str) -> usize {
        self.with_repo(full, |repo, _| {
            let before = repo.releases.len();
            repo.releases.retain(|r| r.tag != tag);
            before - repo.releases.len()
        })
    }
}
