//! Writing git on the local forge: commits as a compare-and-swap of the branch (GitHub's
//! `PATCH` of a ref without `force`), forced branch moves, and annotated tags that are unique
//! like GitHub's. Every write holds the repository lock.

use git2::{Oid, Repository, Signature};

use super::LocalForge;
use super::files::git_err;
use super::git::{find_commit, parse_oid};
use crate::{FileChanges, ForgeError, ForgeResult, RepoRef};

impl LocalForge {
    pub(super) fn signature(&self) -> ForgeResult<Signature<'static>> {
        let at = git2::Time::new(self.clock.now().timestamp(), 0);
        Signature::new(&self.committer_name, &self.committer_email, &at)
            .map_err(|e| git_err("committer signature", e))
    }

    pub(super) fn commit_impl(
        &self,
        repo: &RepoRef,
        branch: &str,
        parent: &str,
        expected_head: Option<&str>,
        changes: &FileChanges,
        message: &str,
    ) -> ForgeResult<String> {
        let _g = self.repo_lock(repo)?;
        let r = self.open(repo)?;
        let what = format!("push to {branch} of {repo}");
        let parent_commit = find_commit(&r, repo, parent)?;
        let refname = format!("refs/heads/{branch}");
        let current = match r.refname_to_id(&refname) {
            Ok(oid) => Some(oid),
            Err(e) if e.code() == git2::ErrorCode::NotFound => None,
            Err(e) => return Err(git_err(&what, e)),
        };
        let expected = expected_head.map(|s| parse_oid("commit", s)).transpose()?;
        if current != expected {
            return Err(ForgeError::Conflict { what });
        }
        let base_tree = parent_commit.tree().map_err(|e| git_err(&what, e))?;
        let tree_id = build_tree(&r, Some(&base_tree), changes).map_err(|e| git_err(&what, e))?;
        let tree = r.find_tree(tree_id).map_err(|e| git_err(&what, e))?;
        let sig = self.signature()?;
        let oid = r
            .commit(None, &sig, &sig, message, &tree, &[&parent_commit])
            .map_err(|e| git_err(&what, e))?;
        // Compare-and-swap of the branch ref (the repo lock makes it atomic across processes;
        // `reference_matching` makes it atomic against anything else writing the repository).
        let res = match current {
            Some(cur) => r.reference_matching(&refname, oid, true, cur, message),
            None => r.reference(&refname, oid, false, message),
        };
        match res {
            Ok(_) => Ok(oid.to_string()),
            Err(_) => Err(ForgeError::Conflict { what }),
        }
    }

    pub(super) fn force_branch_impl(
        &self,
        repo: &RepoRef,
        branch: &str,
        commit: &str,
    ) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let r = self.open(repo)?;
        let c = find_commit(&r, repo, commit)?;
        r.reference(&format!("refs/heads/{branch}"), c.id(), true, "force")
            .map_err(|e| git_err(format!("branch {branch} of {repo}"), e))?;
        Ok(())
    }

    pub(super) fn create_tag_impl(
        &self,
        repo: &RepoRef,
        tag: &str,
        commit: &str,
        message: &str,
    ) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let r = self.open(repo)?;
        let what = format!("tag {tag} of {repo}");
        if r.find_reference(&format!("refs/tags/{tag}")).is_ok() {
            return Err(ForgeError::AlreadyExists { what });
        }
        let c = find_commit(&r, repo, commit)?;
        let sig = self.signature()?;
        r.tag(tag, c.as_object(), &sig, message, false)
            .map_err(|e| {
                if e.code() == git2::ErrorCode::Exists {
                    ForgeError::AlreadyExists { what: what.clone() }
                } else {
                    git_err(&what, e)
                }
            })?;
        Ok(())
    }

    /// Delete a tag, as a maintainer would (withdrawing a release). The local forge's stand-in
    /// for the human step; used by tests.
    pub fn delete_tag(&self, repo: &RepoRef, tag: &str) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let r = self.open(repo)?;
        let what = format!("delete tag {tag} of {repo}");
        let mut reference = r
            .find_reference(&format!("refs/tags/{tag}"))
            .map_err(|_| ForgeError::NotFound { what: what.clone() })?;
        reference.delete().map_err(|e| git_err(&what, e))
    }
}

/// Apply `changes` to `base` (or an empty tree) and write the resulting tree.
pub(super) fn build_tree(
    r: &Repository,
    base: Option<&git2::Tree>,
    changes: &FileChanges,
) -> Result<Oid, git2::Error> {
    let mut b = git2::build::TreeUpdateBuilder::new();
    for (path, change) in changes {
        match change {
            Some(bytes) => {
                let oid = r.blob(bytes)?;
                b.upsert(path.as_str(), oid, git2::FileMode::Blob);
            }
            None => {
                b.remove(path.as_str());
            }
        }
    }
    let empty;
    let base = match base {
        Some(t) => t,
        None => {
            let oid = r.treebuilder(None)?.write()?;
            empty = r.find_tree(oid)?;
            &empty
        }
    };
    b.create_updated(r, base)
}
