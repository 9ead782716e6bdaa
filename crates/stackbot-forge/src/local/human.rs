//! What people do to pull requests on a forge's web UI, for the local forge: merge (with a
//! merge commit, squashed, or rebased), "Update branch", delete a branch. The bot never calls
//! these; the demo, the tests and the world simulator play the humans with them, so every
//! kind of merge a tenant can make is exercised against real git.

use git2::{Oid, Repository};

use super::LocalForge;
use super::files::git_err;
use super::git::walk_between;
use crate::{ForgeError, ForgeResult, PullInfo, PullState, RepoRef};

/// How a maintainer merges a pull request (GitHub's three buttons).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeMethod {
    /// "Create a merge commit": a commit with the base and the head as parents.
    Merge,
    /// "Squash and merge": one new commit on the base with the merged tree; the head's
    /// commits never become ancestors of the base.
    Squash,
    /// "Rebase and merge": each head commit replayed on the base (authors kept, the merger
    /// as committer); the head's own commits never become ancestors of the base.
    Rebase,
}

impl LocalForge {
    /// Merge an open pull request into its base branch (fast-forward if possible, else a merge
    /// commit), as a maintainer would on the web UI. The local forge's stand-in for the human
    /// step of `mode: pull-request`; used by the demo and tests.
    pub fn merge_pull(&self, repo: &RepoRef, number: u64) -> ForgeResult<String> {
        self.merge(repo, number, None)
    }

    /// Merge an open pull request the way `method` does on GitHub (never a fast-forward; the
    /// head branch is left in place, as with "automatically delete head branches" off). The
    /// merger is this forge's committer.
    pub fn merge_pull_with(
        &self,
        repo: &RepoRef,
        number: u64,
        method: MergeMethod,
    ) -> ForgeResult<String> {
        self.merge(repo, number, Some(method))
    }

    /// The required checks of pull request `number` passed: with auto-merge requested it is
    /// merged now (a merge commit, as GitHub's default), as GitHub would; `None` when it was
    /// not requested (nothing happens, as on GitHub).
    pub fn checks_passed(&self, repo: &RepoRef, number: u64) -> ForgeResult<Option<String>> {
        let pull = self.read_pull(repo, number)?;
        if pull.state != PullState::Open || !pull.auto_merge {
            return Ok(None);
        }
        self.merge(repo, number, Some(MergeMethod::Merge)).map(Some)
    }

    /// GitHub's "Update branch" button: merge the base into the pull request's head branch
    /// (a merge commit by this forge's committer). Nothing happens when the head already
    /// contains the base. Returns the head after the update.
    pub fn update_pull_branch(&self, repo: &RepoRef, number: u64) -> ForgeResult<String> {
        let _g = self.repo_lock(repo)?;
        let pull = self.read_pull(repo, number)?;
        let r = self.open(repo)?;
        let what = format!("update of the branch of pull request #{number}");
        let (head_ref, head, base) = refs(&r, &pull, &what)?;
        if head == base || r.graph_descendant_of(head, base).unwrap_or(false) {
            return Ok(head.to_string());
        }
        let hc = r.find_commit(head).map_err(|e| git_err(&what, e))?;
        let bc = r.find_commit(base).map_err(|e| git_err(&what, e))?;
        let tree = merged_tree(&r, &hc, &bc, &what)?;
        let sig = self.signature()?;
        let message = format!("Merge branch '{}' into {}", pull.base, pull.head);
        let new = r
            .commit(None, &sig, &sig, &message, &tree, &[&hc, &bc])
            .map_err(|e| git_err(&what, e))?;
        r.reference_matching(&head_ref, new, true, head, &what)
            .map_err(|_| ForgeError::Conflict { what: what.clone() })?;
        Ok(new.to_string())
    }

    /// Every pull request of `repo`, newest first (`stackbot forge list`).
    pub fn pulls(&self, repo: &RepoRef) -> ForgeResult<Vec<PullInfo>> {
        self.open(repo)?;
        self.all_pulls(repo)
    }

    /// Close an open pull request without merging, as a maintainer would ("Close pull
    /// request"). Closing one that is not open is refused, as GitHub greys out the button.
    pub fn close_pull_by_hand(&self, repo: &RepoRef, number: u64) -> ForgeResult<()> {
        let pull = self.read_pull(repo, number)?;
        if pull.state != PullState::Open {
            return Err(ForgeError::Rejected {
                what: format!("closing pull request #{number} of {repo}"),
                reason: format!("it is already {}", state_word(pull.state)),
            });
        }
        crate::Forge::close_pull(self, repo, number)
    }

    /// Delete a branch (a no-op when it does not exist).
    pub fn delete_branch(&self, repo: &RepoRef, branch: &str) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let r = self.open(repo)?;
        let what = format!("deleting branch {branch} of {repo}");
        match r.find_reference(&format!("refs/heads/{branch}")) {
            Ok(mut reference) => reference.delete().map_err(|e| git_err(&what, e)),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(()),
            Err(e) => Err(git_err(&what, e)),
        }
    }

    fn merge(
        &self,
        repo: &RepoRef,
        number: u64,
        method: Option<MergeMethod>,
    ) -> ForgeResult<String> {
        let _g = self.repo_lock(repo)?;
        let mut pull = self.read_pull(repo, number)?;
        let what = format!("merge of pull request #{number}");
        if pull.state != PullState::Open {
            return Err(ForgeError::Rejected {
                what,
                reason: format!("the pull request is already {}", state_word(pull.state)),
            });
        }
        let r = self.open(repo)?;
        let (_, head, base) = refs(&r, &pull, &what)?;
        let base_ref = format!("refs/heads/{}", pull.base);
        let hc = r.find_commit(head).map_err(|e| git_err(&what, e))?;
        let bc = r.find_commit(base).map_err(|e| git_err(&what, e))?;
        let sig = self.signature()?;
        let fast_forward = head == base || r.graph_descendant_of(head, base).unwrap_or(false);
        let new = match method {
            None if fast_forward => head,
            None | Some(MergeMethod::Merge) => {
                let tree = merged_tree(&r, &bc, &hc, &what)?;
                let message = format!("Merge pull request #{number} from {}", pull.head);
                r.commit(None, &sig, &sig, &message, &tree, &[&bc, &hc])
                    .map_err(|e| git_err(&what, e))?
            }
            Some(MergeMethod::Squash) => {
                let tree = merged_tree(&r, &bc, &hc, &what)?;
                let message = format!("{} (#{number})", pull.title);
                r.commit(None, &sig, &sig, &message, &tree, &[&bc])
                    .map_err(|e| git_err(&what, e))?
            }
            Some(MergeMethod::Rebase) => rebase_onto(&r, head, base, &sig, &what)?,
        };
        r.reference_matching(&base_ref, new, true, base, &what)
            .map_err(|_| ForgeError::Conflict { what: what.clone() })?;
        pull.state = PullState::Merged;
        pull.merged_at = Some(self.clock.now());
        self.write_pull(repo, &pull)?;
        Ok(new.to_string())
    }
}

/// How a pull request's state reads in a sentence.
pub fn state_word(state: PullState) -> &'static str {
    match state {
        PullState::Open => "open",
        PullState::Closed => "closed",
        PullState::Merged => "merged",
    }
}

/// `(head ref name, head, base)` of a pull request.
fn refs(r: &Repository, pull: &PullInfo, what: &str) -> ForgeResult<(String, Oid, Oid)> {
    let head_ref = format!("refs/heads/{}", pull.head);
    let head = r.refname_to_id(&head_ref).map_err(|e| git_err(what, e))?;
    let base = r
        .refname_to_id(&format!("refs/heads/{}", pull.base))
        .map_err(|e| git_err(what, e))?;
    Ok((head_ref, head, base))
}

/// The tree of merging `theirs` into `ours`; a conflict is refused as GitHub refuses it.
fn merged_tree<'r>(
    r: &'r Repository,
    ours: &git2::Commit<'r>,
    theirs: &git2::Commit<'r>,
    what: &str,
) -> ForgeResult<git2::Tree<'r>> {
    let idx = r
        .merge_commits(ours, theirs, None)
        .map_err(|e| git_err(what, e))?;
    index_tree(r, idx, "merge", what)
}

/// The tree of a merged `idx`; a conflict (of a `kind`: merge, rebase) is refused.
fn index_tree<'r>(
    r: &'r Repository,
    mut idx: git2::Index,
    kind: &str,
    what: &str,
) -> ForgeResult<git2::Tree<'r>> {
    if idx.has_conflicts() {
        return Err(ForgeError::Rejected {
            what: what.to_string(),
            reason: format!("{kind} conflict"),
        });
    }
    let id = idx.write_tree_to(r).map_err(|e| git_err(what, e))?;
    r.find_tree(id).map_err(|e| git_err(what, e))
}

/// Replay the commits of `head` that `base` lacks onto `base`, oldest first, keeping each
/// author and message (the merger commits). Merge commits are skipped: their changes arrive
/// with the commits they merged.
fn rebase_onto(
    r: &Repository,
    head: Oid,
    base: Oid,
    merger: &git2::Signature<'_>,
    what: &str,
) -> ForgeResult<Oid> {
    let mut tip = r.find_commit(base).map_err(|e| git_err(what, e))?;
    for oid in walk_between(r, base, head, what)? {
        let c = r
            .find_commit(oid.map_err(|e| git_err(what, e))?)
            .map_err(|e| git_err(what, e))?;
        if c.parent_count() > 1 {
            continue;
        }
        let idx = r
            .cherrypick_commit(&c, &tip, 0, None)
            .map_err(|e| git_err(what, e))?;
        let tree = index_tree(r, idx, "rebase", what)?;
        let id = r
            .commit(
                None,
                &c.author(),
                merger,
                c.message().unwrap_or_default(),
                &tree,
                &[&tip],
            )
            .map_err(|e| git_err(what, e))?;
        tip = r.find_commit(id).map_err(|e| git_err(what, e))?;
    }
    Ok(tip.id())
}
