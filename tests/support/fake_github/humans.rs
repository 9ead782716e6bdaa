//! What people do on github.com between two runs of the bot, as the web UI does it: the three
//! merge buttons, "Update branch", deleting a branch, archiving a repository, protecting a
//! branch. They change the fake's state directly (they are not API calls the bot makes), the
//! way GitHub's own UI would.

use std::collections::BTreeMap;

use super::FakeGithub;
pub use super::state::Protection;
use super::state::{CommitObj, Obj, Repo, hash_hex, person};

pub use stackbot::forge::local::MergeMethod;

/// Who presses the buttons.
pub const MAINTAINER: (&str, &str) = ("Maintainer", "maintainer@example.com");

impl FakeGithub {
    /// Merge an open pull request with one of GitHub's three buttons, as [`MAINTAINER`]. The
    /// head branch stays (automatic deletion of head branches is off). Returns the base's
    /// new head.
    pub fn merge_pull_with(&self, full: &str, number: u64, method: MergeMethod) -> String {
        let mut st = self.shared.state.lock().unwrap();
        st.seq += 1;
        let seq = st.seq;
        let repo = st.repos.get_mut(full).expect("repo exists");
        let (head, base, title) = {
            let p = repo
                .pulls
                .iter()
                .find(|p| p.number == number)
                .expect("pull exists");
            assert_eq!(p.state, "open", "only open pulls can be merged");
            (p.head.clone(), p.base.clone(), p.title.clone())
        };
        let head_sha = repo.refs[&format!("refs/heads/{head}")].clone();
        let base_sha = repo.refs[&format!("refs/heads/{base}")].clone();
        let who = person(MAINTAINER.0, MAINTAINER.1, seq);
        let new = match method {
            MergeMethod::Merge => {
                let tree = merged_tree(repo, &base_sha, &head_sha);
                repo.put_commit(
                    tree,
                    vec![base_sha.clone(), head_sha.clone()],
                    &format!("Merge pull request #{number} from {head}"),
                    who,
                    seq,
                )
            }
            MergeMethod::Squash => {
                let tree = merged_tree(repo, &base_sha, &head_sha);
                repo.put_commit(
                    tree,
                    vec![base_sha.clone()],
                    &format!("{title} (#{number})"),
                    who,
                    seq,
                )
            }
            MergeMethod::Rebase => rebase(repo, &base_sha, &head_sha, seq),
        };
        repo.refs.insert(format!("refs/heads/{base}"), new.clone());
        let p = repo.pulls.iter_mut().find(|p| p.number == number).unwrap();
        p.state = "closed".into();
        p.merged = true;
        p.closed = Some(seq);
        p.updated = seq;
        p.merge_commit = Some(new.clone());
        new
    }

    /// The "Update branch" button of an open pull request: the base merged into the head
    /// branch by `who`. Returns the head branch's new head.
    pub fn update_branch(&self, full: &str, number: u64, who: (&str, &str)) -> String {
        let mut st = self.shared.state.lock().unwrap();
        st.seq += 1;
        let seq = st.seq;
        let repo = st.repos.get_mut(full).expect("repo exists");
        let (head, base) = {
            let p = repo
                .pulls
                .iter()
                .find(|p| p.number == number)
                .expect("pull exists");
            (p.head.clone(), p.base.clone())
        };
        let head_sha = repo.refs[&format!("refs/heads/{head}")].clone();
        let base_sha = repo.refs[&format!("refs/heads/{base}")].clone();
        if repo.ancestors(&head_sha).contains(&base_sha) {
            return head_sha;
        }
        let tree = merged_tree(repo, &head_sha, &base_sha);
        let c = repo.put_commit(
            tree,
            vec![head_sha, base_sha],
            &format!("Merge branch '{base}' into {head}"),
            person(who.0, who.1, seq),
            seq,
        );
        repo.refs.insert(format!("refs/heads/{head}"), c.clone());
        c
    }

    /// Delete a branch from the web UI. As on GitHub, open pull requests whose head it was
    /// are closed with it.
    pub fn delete_branch(&self, full: &str, branch: &str) {
        let mut st = self.shared.state.lock().unwrap();
        st.seq += 1;
        let seq = st.seq;
        let repo = st.repos.get_mut(full).expect("repo exists");
        repo.refs.remove(&format!("refs/heads/{branch}"));
        for p in repo
            .pulls
            .iter_mut()
            .filter(|p| p.head == branch && p.state == "open")
        {
            p.state = "closed".into();
            p.closed = Some(seq);
            p.updated = seq;
        }
    }

    /// Close an open pull request without merging, as a person would.
    pub fn close_pull(&self, full: &str, number: u64) {
        let mut st = self.shared.state.lock().unwrap();
        st.seq += 1;
        let seq = st.seq;
        let repo = st.repos.get_mut(full).expect("repo exists");
        let p = repo
            .pulls
            .iter_mut()
            .find(|p| p.number == number)
            .expect("pull exists");
        p.state = "closed".into();
        p.closed = Some(seq);
        p.updated = seq;
    }

    /// Archive a repository (Settings → Archive): it stays readable, every write is refused
    /// with `403 Repository was archived so is read-only.`
    pub fn archive_repo(&self, full: &str) {
        let mut st = self.shared.state.lock().unwrap();
        st.repos.get_mut(full).expect("repo exists").archived = true;
    }

    /// Protect the branches matching `pattern` (an exact name, or a prefix ending in `*`):
    /// creating, updating or deleting them through the API is refused as `how` refuses it.
    pub fn protect_branch(&self, full: &str, pattern: &str, how: Protection) {
        let mut st = self.shared.state.lock().unwrap();
        st.repos
            .get_mut(full)
            .expect("repo exists")
            .protected
            .push((pattern.to_string(), how));
    }
}

/// The tree of merging `theirs` into `ours`, file by file against their merge base (a path
/// changed on both sides to different contents is a conflict: the test set up something
/// GitHub would refuse to merge).
fn merged_tree(repo: &mut Repo, ours: &str, theirs: &str) -> String {
    let a = repo.ancestors(ours);
    let b = repo.ancestors(theirs);
    let base = a
        .intersection(&b)
        .max_by_key(|c| repo.commit(c).map(|c| c.seq))
        .cloned();
    let flat = |repo: &Repo, c: Option<&String>| -> BTreeMap<String, String> {
        c.and_then(|c| repo.commit(c))
            .map(|c| repo.flatten(&c.tree))
            .unwrap_or_default()
    };
    let (o, t, m) = (
        flat(repo, Some(&ours.to_string())),
        flat(repo, Some(&theirs.to_string())),
        flat(repo, base.as_ref()),
    );
    let mut out = BTreeMap::new();
    let paths: std::collections::BTreeSet<&String> = o.keys().chain(t.keys()).collect();
    for p in paths {
        let (x, y, z) = (o.get(p), t.get(p), m.get(p));
        let pick = if x == y || y == z {
            x
        } else if x == z {
            y
        } else {
            panic!("fake github: merge conflict on `{p}`");
        };
        if let Some(s) = pick {
            out.insert(p.clone(), s.clone());
        }
    }
    repo.write_tree(&out)
}

/// "Rebase and merge": the head's own commits replayed on the base, authors kept, the
/// maintainer as committer. Merge commits are dropped (their changes come with the commits
/// they merged).
fn rebase(repo: &mut Repo, base: &str, head: &str, seq: u64) -> String {
    let on_base = repo.ancestors(base);
    let mut own: Vec<(u64, String)> = repo
        .ancestors(head)
        .into_iter()
        .filter(|c| !on_base.contains(c))
        .map(|c| (repo.commit(&c).unwrap().seq, c))
        .collect();
    own.sort();
    let mut tip = base.to_string();
    for (_, c) in own {
        let commit = repo.commit(&c).unwrap().clone();
        if commit.parents.len() > 1 {
            continue;
        }
        // The commit's own change, applied on the current tip.
        let tree = {
            let parent = commit.parents.first().cloned();
            let before = parent
                .and_then(|p| repo.commit(&p).map(|p| repo.flatten(&p.tree)))
                .unwrap_or_default();
            let after = repo.flatten(&commit.tree);
            let mut flat = repo.flatten(&repo.commit(&tip).unwrap().tree.clone());
            for (p, s) in &after {
                if before.get(p) != Some(s) {
                    flat.insert(p.clone(), s.clone());
                }
            }
            for p in before.keys().filter(|p| !after.contains_key(*p)) {
                flat.remove(p);
            }
            repo.write_tree(&flat)
        };
        let sha = hash_hex(
            "commit",
            &[
                tree.as_bytes(),
                tip.as_bytes(),
                commit.message.as_bytes(),
                b"rebased",
                &seq.to_le_bytes(),
            ],
        );
        repo.objects.insert(
            sha.clone(),
            Obj::Commit(CommitObj {
                tree,
                parents: vec![tip.clone()],
                message: commit.message.clone(),
                author: commit.author.clone(),
                committer: person(MAINTAINER.0, MAINTAINER.1, seq),
                seq,
            }),
        );
        tip = sha;
    }
    tip
}
