//! Writing git data: commits as blob → tree → commit → compare-and-swap ref update, forced
//! bot branches, and annotated tags. Objects are content-addressed, so repeating them is
//! harmless; only the ref writes need the look-before-repeat of
//! [`write_checked`](GithubForge::write_checked).

use base64::Engine as _;
use http::Method;
use serde_json::{Value, json};

use super::transport::Req;
use super::{GithubForge, enc, str_of};
use crate::{FileChanges, ForgeError, ForgeResult, RepoRef};

impl GithubForge {
    /// One commit on `branch`, made as blob → tree → commit → ref update. The branch must still
    /// be at `expected_head` (`None`: must not exist yet): the ref update is the compare-and-swap
    /// that keeps a person's concurrent push from being overwritten.
    pub(super) async fn commit_a(
        &self,
        repo: &RepoRef,
        branch: &str,
        parent: &str,
        expected_head: Option<&str>,
        changes: &FileChanges,
        message: &str,
    ) -> ForgeResult<String> {
        let what = format!("branch `{branch}` of {repo}");
        let current = self.branch_head_a(repo, branch).await?;
        if current.as_deref() != expected_head {
            return Err(ForgeError::Conflict { what });
        }
        let tree = self.tree_a(repo, parent, changes, &what).await?;
        let sha = self
            .commit_object_a(repo, parent, &tree, message, &what)
            .await?;
        self.move_ref_a(repo, branch, parent, expected_head, sha, what)
            .await
    }

    /// The tree of `parent` with `changes` applied; returns its sha. Text goes inline in the
    /// tree request; binary content (not UTF-8, or with NUL bytes) needs a base64 blob first.
    /// A deletion is sent only for a file the parent has (GitHub refuses deleting a missing one).
    async fn tree_a(
        &self,
        repo: &RepoRef,
        parent: &str,
        changes: &FileChanges,
        what: &str,
    ) -> ForgeResult<String> {
        let base_tree = self.commit_tree(repo, parent).await?;
        let existing: Option<Vec<String>> = if changes.values().any(Option::is_none) {
            Some(self.list_files_a(repo, parent).await?)
        } else {
            None
        };
        let mut entries = Vec::new();
        for (path, change) in changes {
            match change {
                Some(bytes) => match std::str::from_utf8(bytes) {
                    Ok(text) if !bytes.contains(&0) => entries.push(
                        json!({"path": path, "mode": "100644", "type": "blob", "content": text}),
                    ),
                    _ => {
                        let sha = self.blob_a(repo, path, bytes, what).await?;
                        entries.push(
                            json!({"path": path, "mode": "100644", "type": "blob", "sha": sha}),
                        );
                    }
                },
                None => {
                    if existing.as_ref().is_some_and(|e| e.contains(path)) {
                        entries.push(
                            json!({"path": path, "mode": "100644", "type": "blob", "sha": null}),
                        );
                    }
                }
            }
        }
        let body = json!({"base_tree": base_tree, "tree": entries});
        self.git_object(repo, "trees", &format!("tree for {what}"), &body, what)
            .await
    }

    /// Create a git object (`kind`: `blobs`, `trees`, `commits`, `tags`); returns its sha.
    /// Objects are content-addressed, so repeating the POST is harmless.
    async fn git_object(
        &self,
        repo: &RepoRef,
        kind: &str,
        label: &str,
        body: &Value,
        what: &str,
    ) -> ForgeResult<String> {
        let path = format!("{}/git/{kind}", Self::repo_path(repo));
        let r = self.write_json(label, Method::POST, path, body).await?;
        Ok(str_of(&r.json::<Value>(what)?["sha"]))
    }

    /// A blob for binary content, base64 encoded; returns its sha.
    async fn blob_a(
        &self,
        repo: &RepoRef,
        path: &str,
        bytes: &[u8],
        what: &str,
    ) -> ForgeResult<String> {
        let body = json!({
            "content": base64::engine::general_purpose::STANDARD.encode(bytes),
            "encoding": "base64",
        });
        let label = format!("blob for `{path}` in {repo}");
        self.git_object(repo, "blobs", &label, &body, what).await
    }

    /// The commit object (not yet on any branch); returns its sha.
    async fn commit_object_a(
        &self,
        repo: &RepoRef,
        parent: &str,
        tree: &str,
        message: &str,
        what: &str,
    ) -> ForgeResult<String> {
        let mut body = json!({"message": message, "tree": tree, "parents": [parent]});
        // As an App, no author or committer: GitHub then signs the commit (Verified), which
        // branches that require signed commits insist on. A token's commit is never signed, so
        // it carries `forge.committer`.
        if !self.commits_signed_by_github() {
            let who = json!({"name": self.committer.name, "email": self.committer.email});
            body["author"] = who.clone();
            body["committer"] = who;
        }
        // A repeated commit POST only leaves an unreferenced object behind: safe to retry.
        self.git_object(repo, "commits", &format!("commit for {what}"), &body, what)
            .await
    }

    /// Points `branch` at `sha`: creates the ref when `expected_head` is `None`, else updates it.
    /// An answer lost on the way is settled by reading the branch again (`write_checked`); a ref
    /// someone else moved meanwhile is a [`ForgeError::Conflict`].
    async fn move_ref_a(
        &self,
        repo: &RepoRef,
        branch: &str,
        parent: &str,
        expected_head: Option<&str>,
        sha: String,
        what: String,
    ) -> ForgeResult<String> {
        let rp = Self::repo_path(repo);
        let done = async || -> ForgeResult<Option<String>> {
            let now = self.branch_head_a(repo, branch).await?;
            if now.as_deref() == Some(sha.as_str()) {
                Ok(Some(sha.clone()))
            } else if now.as_deref() == expected_head {
                Ok(None)
            } else {
                Err(ForgeError::Conflict { what: what.clone() })
            }
        };
        let req = match expected_head {
            None => Req::json(
                Method::POST,
                format!("{rp}/git/refs"),
                &json!({"ref": format!("refs/heads/{branch}"), "sha": sha}),
            ),
            // With the parent as expected head, `force: false` makes GitHub check atomically
            // that nobody moved the branch. Otherwise (rebuilding a bot branch on a new base)
            // the pre-check above is the guard and the update must force.
            Some(exp) => Req::json(
                Method::PATCH,
                format!("{rp}/git/refs/heads/{}", enc(branch, true)),
                &json!({"sha": sha, "force": exp != parent}),
            ),
        };
        match self
            .write_checked(&what, &req, |_| Ok(sha.clone()), done)
            .await
        {
            // A ref that appeared meanwhile, or "not a fast forward": someone else moved it.
            Err(ForgeError::AlreadyExists { what }) => Err(ForgeError::Conflict { what }),
            Err(ForgeError::Rejected { what, reason })
                if reason.to_ascii_lowercase().contains("reference") =>
            {
                Err(ForgeError::Conflict { what })
            }
            other => other,
        }
    }

    pub(super) async fn force_branch_a(
        &self,
        repo: &RepoRef,
        branch: &str,
        commit: &str,
    ) -> ForgeResult<()> {
        let what = format!("branch `{branch}` of {repo}");
        let rp = Self::repo_path(repo);
        if self.branch_head_a(repo, branch).await?.is_some() {
            let path = format!("{rp}/git/refs/heads/{}", enc(branch, true));
            let body = json!({"sha": commit, "force": true});
            self.write_json(&what, Method::PATCH, path, &body)
                .await
                .map(drop)
        } else {
            let req = Req::json(
                Method::POST,
                format!("{rp}/git/refs"),
                &json!({"ref": format!("refs/heads/{branch}"), "sha": commit}),
            );
            self.write_checked(
                &what,
                &req,
                |_| Ok(()),
                async || {
                    Ok(
                        (self.branch_head_a(repo, branch).await?.as_deref() == Some(commit))
                            .then_some(()),
                    )
                },
            )
            .await
        }
    }

    pub(super) async fn create_tag_a(
        &self,
        repo: &RepoRef,
        tag: &str,
        commit: &str,
        message: &str,
    ) -> ForgeResult<()> {
        let what = format!("tag `{tag}` in {repo}");
        let rp = Self::repo_path(repo);
        let tagger = json!({
            "name": self.committer.name,
            "email": self.committer.email,
            "date": self.t.clock.now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        });
        // The tag object is unreferenced until the ref exists: repeating it is harmless.
        let body = json!({"tag": tag, "message": message, "object": commit,
                          "type": "commit", "tagger": tagger});
        let label = format!("tag object for {what}");
        let obj = self.git_object(repo, "tags", &label, &body, &what).await?;
        let req = Req::json(
            Method::POST,
            format!("{rp}/git/refs"),
            &json!({"ref": format!("refs/tags/{tag}"), "sha": obj}),
        );
        self.write_checked(
            &what,
            &req,
            |_| Ok(()),
            async || match self.tag_target_a(repo, tag).await? {
                Some(c) if c.eq_ignore_ascii_case(commit) => Ok(Some(())),
                Some(_) => Err(ForgeError::AlreadyExists { what: what.clone() }),
                None => Ok(None),
            },
        )
        .await
    }
}
