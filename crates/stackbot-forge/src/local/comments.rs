//! Comments of the local forge: one JSON file per comment, on issues and pull requests alike
//! (as on GitHub, where a pull request's conversation is its issue's), listed oldest first.

use std::fs;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::LocalForge;
use super::files::{io_err, numbered_records, read_record, write_record};
use crate::{CommentInfo, ForgeError, ForgeResult, RepoRef};

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredComment {
    id: u64,
    issue: u64,
    body: String,
}

impl LocalForge {
    pub(super) fn comments_dir(&self, repo: &RepoRef) -> PathBuf {
        self.root
            .join("comments")
            .join(&repo.owner)
            .join(&repo.name)
    }

    pub(super) fn list_comments_impl(
        &self,
        repo: &RepoRef,
        number: u64,
    ) -> ForgeResult<Vec<CommentInfo>> {
        let mut out = Vec::new();
        for id in numbered_records(&self.comments_dir(repo), ".json")? {
            let c: StoredComment = read_record(&self.comment_path(repo, id), || {
                format!("comment {id} of {repo}")
            })?;
            if c.issue == number {
                out.push(CommentInfo {
                    id: c.id,
                    body: c.body,
                });
            }
        }
        out.sort_by_key(|c| c.id);
        Ok(out)
    }

    pub(super) fn create_comment_impl(
        &self,
        repo: &RepoRef,
        number: u64,
        body: &str,
    ) -> ForgeResult<CommentInfo> {
        let _g = self.repo_lock(repo)?;
        let id = self.next_id()?;
        let c = StoredComment {
            id,
            issue: number,
            body: body.into(),
        };
        write_record(&self.comment_path(repo, id), &c)?;
        Ok(CommentInfo {
            id,
            body: body.into(),
        })
    }

    pub(super) fn update_comment_impl(
        &self,
        repo: &RepoRef,
        comment_id: u64,
        body: &str,
    ) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let path = self.comment_path(repo, comment_id);
        let bytes = fs::read(&path).map_err(|_| ForgeError::NotFound {
            what: format!("comment {comment_id} of {repo}"),
        })?;
        let mut c: StoredComment =
            serde_json::from_slice(&bytes).map_err(|e| io_err("comment", e))?;
        c.body = body.into();
        write_record(&path, &c)
    }

    fn comment_path(&self, repo: &RepoRef, id: u64) -> PathBuf {
        self.comments_dir(repo).join(format!("{id}.json"))
    }
}
