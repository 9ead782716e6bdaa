//! What people do on github.com between two runs of the bot, as the web UI does it: the three
//! merge buttons, "Update branch", closing a pull request, deleting a branch, a tag or a
//! release, archiving a repository, protecting a branch, requiring signed commits. They change the fake's state directly
//! (they are not API calls the bot makes, and no request is counted), the way GitHub's own UI
//! would. Merges are three-way and line by line ([`super::merge`]): changes to different lines
//! of a file merge, overlapping ones are refused as GitHub refuses them.

use super::FakeGithub;
use super::merge::{self, Files};
pub use super::state::Protection;
use super::state::{CommitObj, Obj, Repo, hash_hex, person};
use super::views::{files_of, merge_base, write_files};

pub use stackbot::forge::local::MergeMethod;

/// Who presses the buttons.
pub const MAINTAINER: (&str, &str) = ("Maintainer", "maintainer@example.com");

impl FakeGithub {
    fn act<T>(&self, full: &str, f: impl FnOnce(&mut Repo, u64) -> T) -> T {
        let mut st = self.shared.state.lock().unwrap();
        st.seq += 1;
        let seq = st.seq;
        let repo = st
            .repos
            .get_mut(full)
            .unwrap_or_else(|| panic!("fake github: no repository {full}"));
        f(repo, seq)
    }

    /// Change a repository's settings (no event: nothing in the repository changes).
    fn settings(&self, full: &str, f: impl FnOnce(&mut Repo)) {
        let mut st = self.shared.state.lock().unwrap();
        f(st.repos
            .get_mut(full)
            .unwrap_or_else(|| panic!("fake github: no repository {full}")))
    }

    /// Merge an open pull request with one of GitHub's three buttons, as [`MAINTAINER`]. The
    /// head branch stays (automatic deletion of head branches is off). Returns the base's
    /// new head; panics where GitHub would refuse (see [`FakeGithub::try_merge_pull`]).
    pub fn merge_pull_with(&self, full: &str, number: u64, method: MergeMethod) -> String {
        self.try_merge_pull(full, number, method, MAINTAINER)
            .unwrap_or_else(|e| panic!("fake github: cannot merge #{number} of {full}: {e}"))
    }

    /// Press a merge button on an open pull request as `who` (`(name, email)`). `Err` when
    /// GitHub would refuse: not open, head branch gone, a conflict with the base, or a base
    /// that requires signed commits and a merge that would bring unsigned ones (a merge
    /// commit keeps the head's commits; a rebase re-creates them unsigned). GitHub signs the
    /// merge and squash commits it makes itself.
    pub fn try_merge_pull(
        &self,
        full: &str,
        number: u64,
        method: MergeMethod,
        who: (&str, &str),
    ) -> Result<String, String> {
        self.act(full, |repo, seq| {
            let p = repo
                .pulls
                .iter()
                .find(|p| p.number == number)
                .ok_or("no such pull request")?;
            if p.state != "open" {
                return Err("not open".to_string());
            }
            let (head, base, title) = (p.head.clone(), p.base.clone(), p.title.clone());
            let head_sha = repo
                .refs
                .get(&format!("refs/heads/{head}"))
                .cloned()
                .ok_or("head branch is gone")?;
            let base_sha = repo.refs[&format!("refs/heads/{base}")].clone();
            let base_ref = format!("refs/heads/{base}");
            match method {
                MergeMethod::Merge if repo.unsigned_refusal(&base_ref, &head_sha).is_some() => {
                    return Err("405 Commits must have verified signatures.".into());
                }
                MergeMethod::Rebase if repo.requires_signatures(&base_ref) => {
                    return Err("405 Base branch requires signed commits. Rebase merges \
                                cannot be automatically signed by GitHub"
                        .into());
                }
                _ => {}
            }
            let merged = merged_files(repo, &base_sha, &head_sha)?;
            let new = match method {
                MergeMethod::Merge => {
                    let tree = write_files(repo, &merged);
                    repo.put_commit(
                        tree,
                        vec![base_sha.clone(), head_sha.clone()],
                        &format!("Merge pull request #{number} from {head}\n\n{title}"),
                        person(who.0, who.1, seq),
                        seq,
                    )
                }
                MergeMethod::Squash => {
                    let tree = write_files(repo, &merged);
                    repo.put_commit(
                        tree,
                        vec![base_sha.clone()],
                        &format!("{title} (#{number})"),
                        person(who.0, who.1, seq),
                        seq,
                    )
                }
                MergeMethod::Rebase => rebase(repo, &base_sha, &head_sha, who, seq)?,
            };
            if method != MergeMethod::Rebase
                && let Some(Obj::Commit(c)) = repo.objects.get_mut(&new)
            {
                c.verified = true;
            }
            repo.refs.insert(format!("refs/heads/{base}"), new.clone());
            let p = repo.pulls.iter_mut().find(|p| p.number == number).unwrap();
            p.state = "closed".into();
            p.merged = true;
            p.closed = Some(seq);
            p.updated = seq;
            p.merge_commit = Some(new.clone());
            Ok(new)
        })
    }

    /// The "Update branch" button of an open pull request: the base merged into the head
    /// branch by `who`. Returns the head branch's new head; panics on a conflict.
    pub fn update_branch(&self, full: &str, number: u64, who: (&str, &str)) -> String {
        self.try_update_branch(full, number, who)
            .unwrap_or_else(|e| panic!("fake github: cannot update #{number} of {full}: {e}"))
    }

    /// "Update branch" as `who`; nothing happens when the head already contains the base (the
    /// head is returned). `Err` when GitHub would refuse (head gone, conflict).
    pub fn try_update_branch(
        &self,
        full: &str,
        number: u64,
        who: (&str, &str),
    ) -> Result<String, String> {
        self.act(full, |repo, seq| {
            let p = repo
                .pulls
                .iter()
                .find(|p| p.number == number)
                .ok_or("no such pull request")?;
            let (head, base) = (p.head.clone(), p.base.clone());
            let head_sha = repo
                .refs
                .get(&format!("refs/heads/{head}"))
                .cloned()
                .ok_or("head branch is gone")?;
            let base_sha = repo.refs[&format!("refs/heads/{base}")].clone();
            if repo.ancestors(&head_sha).contains(&base_sha) {
                return Ok(head_sha);
            }
            let merged = merged_files(repo, &head_sha, &base_sha)?;
            let tree = write_files(repo, &merged);
            let c = repo.put_commit(
                tree,
                vec![head_sha, base_sha],
                &format!("Merge branch '{base}' into {head}"),
                person(who.0, who.1, seq),
                seq,
            );
            repo.refs.insert(format!("refs/heads/{head}"), c.clone());
            Ok(c)
        })
    }

    /// Delete a branch from the web UI. As on GitHub, open pull requests whose head it was
    /// are closed with it.
    pub fn delete_branch(&self, full: &str, branch: &str) {
        self.act(full, |repo, seq| {
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
        })
    }

    /// Close an open pull request without merging, as a person would (a closed or merged one
    /// stays as it is).
    pub fn close_pull(&self, full: &str, number: u64) {
        self.act(full, |repo, seq| {
            let p = repo
                .pulls
                .iter_mut()
                .find(|p| p.number == number)
                .expect("pull exists");
            if p.state == "open" {
                p.state = "closed".into();
                p.closed = Some(seq);
                p.updated = seq;
            }
        })
    }

    /// Delete a tag, as a maintainer would on the web UI (`git push --delete origin <tag>`).
    pub fn delete_tag(&self, full: &str, tag: &str) {
        self.act(full, |repo, _| {
            repo.refs.remove(&format!("refs/tags/{tag}"));
        })
    }

    /// Delete every release of a tag (the tag itself stays, as on GitHub). Returns how many.
    pub fn delete_releases_of(&self, full: &str, tag: &str) -> usize {
        self.act(full, |repo, _| {
            let before = repo.releases.len();
            repo.releases.retain(|r| r.tag != tag);
            before - repo.releases.len()
        })
    }

    /// Archive a repository (Settings → Archive): it stays readable, every write is refused
    /// with `403 Repository was archived so is read-only.`
    /// The repository's settings: "Allow auto-merge", and a required status check on the
    /// base branch (without one GitHub refuses auto-merge: there is nothing to wait for).
    pub fn set_auto_merge(&self, full: &str, allowed: bool, required_checks: bool) {
        let mut st = self.shared.state.lock().unwrap();
        let r = st.repos.get_mut(full).expect("repo exists");
        r.allow_auto_merge = allowed;
        r.required_checks = required_checks;
    }

    /// The required checks of pull request `number` pass: with auto-merge requested GitHub
    /// merges it (a merge commit by the person who enabled it; here the maintainer). Returns
    /// whether it was merged.
    pub fn checks_pass(&self, full: &str, number: u64) -> bool {
        let requested = {
            let st = self.shared.state.lock().unwrap();
            st.repos[full]
                .pulls
                .iter()
                .any(|p| p.number == number && p.state == "open" && p.auto_merge)
        };
        if requested {
            self.merge_pull_with(full, number, MergeMethod::Merge);
        }
        requested
    }

    pub fn archive_repo(&self, full: &str) {
        let mut st = self.shared.state.lock().unwrap();
        st.repos.get_mut(full).expect("repo exists").archived = true;
    }

    /// Unarchive a repository: writable again.
    pub fn unarchive_repo(&self, full: &str) {
        let mut st = self.shared.state.lock().unwrap();
        st.repos.get_mut(full).expect("repo exists").archived = false;
    }

    /// Require signed commits on the branches matching `pattern` (an exact name, or a prefix
    /// ending in `*`), as the protection rule's "Require signed commits" does (`Classic`) or a
    /// ruleset's (`Ruleset`): a ref update bringing a commit without a verified signature is
    /// refused (`422 … Commits must have verified signatures.`), and so are merges that would.
    /// For `Classic`, the rule for `pattern` (created if there is none) gets the setting: the
    /// same state `POST …/branches/{branch}/protection/required_signatures` sets.
    pub fn require_signed_commits(&self, full: &str, pattern: &str, how: Protection) {
        self.settings(full, |repo| {
            repo.rule_mut(pattern, how).required_signatures = true;
        })
    }

    /// Protect the branches matching `pattern` (an exact name, or a prefix ending in `*`):
    /// creating, updating or deleting them through the API is refused as `how` refuses it.
    pub fn protect_branch(&self, full: &str, pattern: &str, how: Protection) {
        self.settings(full, |repo| {
            repo.rule_mut(pattern, how).restrict_updates = true;
        })
    }

    /// Add a classic branch protection rule for `pattern` with nothing the fake models ticked
    /// (Settings → Branches → "Add classic branch protection rule"): writes still go through,
    /// but the branch is now protected, so an administrator can manage the rule's settings
    /// through the REST API (`…/branches/{branch}/protection/…`, for a rule naming the branch
    /// exactly).
    pub fn add_protection_rule(&self, full: &str, pattern: &str) {
        self.settings(full, |repo| {
            repo.rule_mut(pattern, Protection::Classic);
        })
    }
}

/// The files of merging `theirs` into `ours` against their merge base; `Err` names the
/// conflicting paths.
fn merged_files(repo: &Repo, ours: &str, theirs: &str) -> Result<Files, String> {
    let ancestor = merge_base(repo, ours, theirs).ok_or("unrelated histories")?;
    merge::merge_trees(
        &files_of(repo, &ancestor),
        &files_of(repo, ours),
        &files_of(repo, theirs),
    )
    .map_err(|c| format!("conflict in {}", c.join(", ")))
}

/// "Rebase and merge": the head's own commits replayed on the base, oldest first, authors
/// kept, `who` as committer. Merge commits are dropped (their changes come with the commits
/// they merged), as `git rebase` does.
fn rebase(
    repo: &mut Repo,
    base: &str,
    head: &str,
    who: (&str, &str),
    seq: u64,
) -> Result<String, String> {
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
        let before = commit
            .parents
            .first()
            .map(|p| files_of(repo, p))
            .unwrap_or_default();
        let files = merge::cherry_pick(&before, &files_of(repo, &c), &files_of(repo, &tip))
            .map_err(|p| format!("conflict in {}", p.join(", ")))?;
        let tree = write_files(repo, &files);
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
                committer: person(who.0, who.1, seq),
                seq,
                verified: false,
            }),
        );
        tip = sha;
    }
    Ok(tip)
}
