//! Reading git on the local forge: branch heads, tag targets, trees, files and the commits
//! between two points (what tells the bot's commits from a human's). Nothing here writes.

use std::path::Path;

use git2::{ObjectType, Oid, Repository};

use super::LocalForge;
use super::files::git_err;
use crate::{CommitInfo, ForgeError, ForgeResult, RepoRef};

impl LocalForge {
    pub(super) fn branch_head_impl(
        &self,
        repo: &RepoRef,
        branch: &str,
    ) -> ForgeResult<Option<String>> {
        let r = self.open(repo)?;
        match r.refname_to_id(&format!("refs/heads/{branch}")) {
            Ok(oid) => Ok(Some(oid.to_string())),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(git_err(format!("branch {branch} of {repo}"), e)),
        }
    }

    pub(super) fn tag_target_impl(&self, repo: &RepoRef, tag: &str) -> ForgeResult<Option<String>> {
        let r = self.open(repo)?;
        let what = format!("tag {tag} of {repo}");
        match r.find_reference(&format!("refs/tags/{tag}")) {
            Ok(reference) => {
                let commit = reference
                    .peel(ObjectType::Commit)
                    .map_err(|e| git_err(&what, e))?;
                Ok(Some(commit.id().to_string()))
            }
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(git_err(&what, e)),
        }
    }

    pub(super) fn list_files_impl(&self, repo: &RepoRef, commit: &str) -> ForgeResult<Vec<String>> {
        let r = self.open(repo)?;
        let c = find_commit(&r, repo, commit)?;
        let tree = c.tree().map_err(|e| git_err("tree", e))?;
        let mut out = Vec::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(ObjectType::Blob) {
                out.push(format!("{dir}{}", entry.name().unwrap_or_default()));
            }
            git2::TreeWalkResult::Ok
        })
        .map_err(|e| git_err("tree walk", e))?;
        out.sort();
        Ok(out)
    }

    pub(super) fn read_file_impl(
        &self,
        repo: &RepoRef,
        commit: &str,
        path: &str,
    ) -> ForgeResult<Option<Vec<u8>>> {
        let r = self.open(repo)?;
        let c = find_commit(&r, repo, commit)?;
        let tree = c.tree().map_err(|e| git_err("tree", e))?;
        let entry = match tree.get_path(Path::new(path)) {
            Ok(e) => e,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(git_err(path, e)),
        };
        if entry.kind() != Some(ObjectType::Blob) {
            return Ok(None);
        }
        let blob = r.find_blob(entry.id()).map_err(|e| git_err(path, e))?;
        Ok(Some(blob.content().to_vec()))
    }

    pub(super) fn commits_between_impl(
        &self,
        repo: &RepoRef,
        base: &str,
        head: &str,
    ) -> ForgeResult<Vec<CommitInfo>> {
        let r = self.open(repo)?;
        let what = format!("commits {base}..{head} of {repo}");
        let head = find_commit(&r, repo, head)?.id();
        let base = find_commit(&r, repo, base)?.id();
        let mut out = Vec::new();
        for oid in walk_between(&r, base, head, &what)? {
            let oid = oid.map_err(|e| git_err(&what, e))?;
            let c = r.find_commit(oid).map_err(|e| git_err(&what, e))?;
            out.push(CommitInfo {
                sha: oid.to_string(),
                author_name: c.author().name().unwrap_or_default().to_string(),
                author_email: c.author().email().unwrap_or_default().to_string(),
                message: c.message().unwrap_or_default().to_string(),
                parents: c.parent_ids().map(|p| p.to_string()).collect(),
                by_app: false,
            });
        }
        Ok(out)
    }
}

/// The commits reachable from `head` but not from `base`, oldest first.
pub(super) fn walk_between<'r>(
    r: &'r Repository,
    base: Oid,
    head: Oid,
    what: &str,
) -> ForgeResult<git2::Revwalk<'r>> {
    let mut walk = r.revwalk().map_err(|e| git_err(what, e))?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)
        .map_err(|e| git_err(what, e))?;
    walk.push(head).map_err(|e| git_err(what, e))?;
    walk.hide(base).map_err(|e| git_err(what, e))?;
    Ok(walk)
}

pub(super) fn parse_oid(what: &str, s: &str) -> ForgeResult<Oid> {
    Oid::from_str(s).map_err(|_| ForgeError::NotFound {
        what: format!("{what} `{s}`"),
    })
}

pub(super) fn find_commit<'r>(
    r: &'r Repository,
    repo: &RepoRef,
    sha: &str,
) -> ForgeResult<git2::Commit<'r>> {
    let oid = parse_oid("commit", sha)?;
    r.find_commit(oid).map_err(|_| ForgeError::NotFound {
        what: format!("commit {sha} in {repo}"),
    })
}
