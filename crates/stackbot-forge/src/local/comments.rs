//! Comments of the local forge: one JSON file per comment, on issues and pull requests alike
//! (as on GitHub, where a pull request's conversation is its issue's), listed oldest first.

use std::fs;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::LocalForge;
use super::files::{fs_err, io_err, write_atomic};
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
        let dir = self.comments_dir(repo);
        let mut out: Vec<StoredComment> = Vec::new();
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(fs_err(dir.display().to_string(), e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| fs_err(dir.display().to_string(), e))?;
            if !entry.file_name().to_string_lossy().ends_with(".json")
                || entry.file_name().to_string_lossy().starts_with('.')
            {
                continue;
            }
            let bytes = fs::read(entry.path()).map_err(|e| fs_err("comment", e))?;
            let c: StoredComment =
                serde_json::from_slice(&bytes).map_err(|e| io_err("comment", e))?;
            if c.issue == number {
                out.push(c);
            }
        }
        out.sort_by_key(|c| c.id);
        Ok(out
            .into_iter()
            .map(|c| CommentInfo {
                id: c.id,
                body: c.body,
            })
            .collect())
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
        let path = self.comments_dir(repo).join(format!("{id}.json"));
        write_atomic(
            &path,
            &serde_json::to_vec_pretty(&c).expect("comment serializes"),
        )
        .map_err(|e| fs_err(path.display().to_string(), e))?;
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
        let path = self.comments_dir(repo).join(format!("{comment_id}.json"));
        let bytes = fs::read(&path).map_err(|_| ForgeError::NotFound {
            what: format!("comment {comment_id} of {repo}"),
        })?;
        let mut c: StoredComment =
            serde_json::from_slice(&bytes).map_err(|e| io_err("comment", e))?;
        c.body = body.into();
        write_atomic(
            &path,
            &serde_json::to_vec_pretty(&c).expect("comment serializes"),
        )
        .map_err(|e| fs_err(path.display().to_string(), e))
    }
}
