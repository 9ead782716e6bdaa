//! Pull requests and issue comments.

use http::Method;
use serde_json::{Value, json};

use super::transport::Req;
use super::{GithubForge, enc, str_of, time_of};
use crate::{AutoMerge, CommentInfo, ForgeResult, PULLS_WINDOW, PullInfo, PullState, RepoRef};

/// The mutation enabling auto-merge, with the repository's default merge method.
const ENABLE_AUTO_MERGE: &str = "mutation($id: ID!) { enablePullRequestAutoMerge(input: {pullRequestId: $id}) { pullRequest { number } } }";

impl GithubForge {
    pub(super) async fn find_pulls_a(
        &self,
        repo: &RepoRef,
        head: &str,
    ) -> ForgeResult<Vec<PullInfo>> {
        let what = format!("pull requests from `{head}` in {repo}");
        // One page, newest first (`Forge::find_pulls` promises the newest PULLS_WINDOW only).
        let path = format!(
            "{}/pulls?state=all&head={}&sort=created&direction=desc&per_page={PULLS_WINDOW}",
            Self::repo_path(repo),
            enc(&format!("{}:{head}", repo.owner), false)
        );
        let page = self.get_json(&what, &path).await?;
        let mut pulls: Vec<PullInfo> = page
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(pull_of)
            .filter(|p| p.head == head)
            .collect();
        pulls.sort_by_key(|p| std::cmp::Reverse(p.number));
        Ok(pulls)
    }

    pub(super) async fn open_pull_a(
        &self,
        repo: &RepoRef,
        head: &str,
        base: &str,
        title: &str,
        body: &str,
    ) -> ForgeResult<PullInfo> {
        let what = format!("pull request `{head}` → `{base}` in {repo}");
        let req = Req::json(
            Method::POST,
            format!("{}/pulls", Self::repo_path(repo)),
            &json!({"head": head, "base": base, "title": title, "body": body}),
        );
        self.write_checked(
            &what,
            &req,
            |r| Ok(pull_of(&r.json(&what)?)),
            async || {
                Ok(self
                    .find_pulls_a(repo, head)
                    .await?
                    .into_iter()
                    .find(|p| p.state == PullState::Open && p.base == base))
            },
        )
        .await
    }

    pub(super) async fn patch_pull(
        &self,
        repo: &RepoRef,
        number: u64,
        body: Value,
    ) -> ForgeResult<()> {
        let what = format!("pull request #{number} of {repo}");
        let path = format!("{}/pulls/{number}", Self::repo_path(repo));
        self.write_json(&what, Method::PATCH, path, &body)
            .await
            .map(drop)
    }

    /// Labels through the issues API (a pull request is an issue there). GitHub creates a label
    /// the repository does not have yet, and adding one the pull request carries changes
    /// nothing, so a retry after an ambiguous failure is safe.
    pub(super) async fn add_labels_a(
        &self,
        repo: &RepoRef,
        number: u64,
        labels: &[String],
    ) -> ForgeResult<()> {
        let what = format!("labels of pull request #{number} of {repo}");
        let path = format!("{}/issues/{number}/labels", Self::repo_path(repo));
        let body = json!({ "labels": labels });
        self.write_json(&what, Method::POST, path, &body)
            .await
            .map(drop)
    }

    /// GitHub's native auto-merge, which only the GraphQL API enables
    /// (`enablePullRequestAutoMerge`, by the pull request's node id). GitHub answers a refusal
    /// with `200` and an `errors` list ("Auto merge is not allowed for this repository", "Pull
    /// request is in clean status" when no required check is pending): that is
    /// [`AutoMerge::Unavailable`], for a person to change. Enabling it twice changes nothing, so
    /// a retry after an ambiguous failure is safe.
    pub(super) async fn enable_auto_merge_a(
        &self,
        repo: &RepoRef,
        number: u64,
    ) -> ForgeResult<AutoMerge> {
        let what = format!("auto-merge of pull request #{number} of {repo}");
        let path = format!("{}/pulls/{number}", Self::repo_path(repo));
        let pull = self.get_json(&what, &path).await?;
        if !pull["auto_merge"].is_null() {
            return Ok(AutoMerge::Enabled);
        }
        let mut req = Req::json(
            Method::POST,
            "/graphql".to_string(),
            &json!({
                "query": ENABLE_AUTO_MERGE,
                "variables": {"id": str_of(&pull["node_id"])},
            }),
        );
        // The installation token of the repository (a GitHub App has one per repository).
        req.scope = Some(super::wire::scope_of(repo));
        let answer: Value = self.write_ok(&what, &req).await?.json(&what)?;
        match answer["errors"].as_array().filter(|e| !e.is_empty()) {
            None => Ok(AutoMerge::Enabled),
            Some(errors) => Ok(AutoMerge::Unavailable(
                errors
                    .iter()
                    .map(|e| str_of(&e["message"]))
                    .collect::<Vec<_>>()
                    .join("; "),
            )),
        }
    }

    pub(super) async fn list_comments_a(
        &self,
        repo: &RepoRef,
        number: u64,
    ) -> ForgeResult<Vec<CommentInfo>> {
        let what = format!("comments of #{number} in {repo}");
        let path = format!("{}/issues/{number}/comments", Self::repo_path(repo));
        let all = self
            .get_all(&what, format!("{path}?per_page=100"), None)
            .await?;
        let mut out: Vec<CommentInfo> = all.iter().map(comment_of).collect();
        out.sort_by_key(|c| c.id);
        Ok(out)
    }

    pub(super) async fn update_comment_a(
        &self,
        repo: &RepoRef,
        comment_id: u64,
        body: &str,
    ) -> ForgeResult<()> {
        let what = format!("comment {comment_id} in {repo}");
        let path = format!("{}/issues/comments/{comment_id}", Self::repo_path(repo));
        let body = json!({"body": body});
        self.write_json(&what, Method::PATCH, path, &body)
            .await
            .map(drop)
    }

    pub(super) async fn create_comment_a(
        &self,
        repo: &RepoRef,
        number: u64,
        body: &str,
    ) -> ForgeResult<CommentInfo> {
        let what = format!("comment on #{number} in {repo}");
        let req = Req::json(
            Method::POST,
            format!("{}/issues/{number}/comments", Self::repo_path(repo)),
            &json!({"body": body}),
        );
        self.write_checked(
            &what,
            &req,
            |r| Ok(comment_of(&r.json(&what)?)),
            // The bot's comments carry a unique marker, so an identical body is ours.
            async || {
                Ok(self
                    .list_comments_a(repo, number)
                    .await?
                    .into_iter()
                    .rev()
                    .find(|c| c.body == body))
            },
        )
        .await
    }
}

fn pull_of(v: &Value) -> PullInfo {
    let state = if !v["merged_at"].is_null() || v["merged"].as_bool() == Some(true) {
        PullState::Merged
    } else if v["state"].as_str() == Some("open") {
        PullState::Open
    } else {
        PullState::Closed
    };
    PullInfo {
        number: v["number"].as_u64().unwrap_or_default(),
        head: str_of(&v["head"]["ref"]),
        base: str_of(&v["base"]["ref"]),
        title: str_of(&v["title"]),
        body: str_of(&v["body"]),
        state,
        html_url: str_of(&v["html_url"]),
        created_at: time_of(&v["created_at"]),
        merged_at: time_of(&v["merged_at"]),
        labels: v["labels"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|l| str_of(&l["name"]))
            .collect(),
        auto_merge: !v["auto_merge"].is_null(),
    }
}

fn comment_of(v: &Value) -> CommentInfo {
    CommentInfo {
        id: v["id"].as_u64().unwrap_or_default(),
        body: str_of(&v["body"]),
    }
}
