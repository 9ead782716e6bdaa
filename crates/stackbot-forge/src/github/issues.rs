//! Issues (the status dashboard): list, create, edit. The issues API also returns pull
//! requests (an issue with a `pull_request` key); they are left out here.

use http::Method;
use serde_json::{Value, json};

use super::transport::Req;
use super::{GithubForge, enc, str_of};
use crate::{ForgeResult, IssueInfo, IssueState, RepoRef};

impl GithubForge {
    pub(super) async fn list_issues_a(
        &self,
        repo: &RepoRef,
        label: Option<&str>,
    ) -> ForgeResult<Vec<IssueInfo>> {
        let what = match label {
            Some(l) => format!("issues labelled `{l}` in {repo}"),
            None => format!("issues of {repo}"),
        };
        let mut path = format!(
            "{}/issues?state=all&sort=created&direction=asc&per_page=100",
            Self::repo_path(repo)
        );
        if let Some(l) = label {
            path.push_str(&format!("&labels={}", enc(l, false)));
        }
        let all = self.get_all(&what, path, None).await?;
        let mut out: Vec<IssueInfo> = all
            .iter()
            .filter(|v| v.get("pull_request").is_none_or(Value::is_null))
            .map(issue_of)
            .collect();
        out.sort_by_key(|i| i.number);
        Ok(out)
    }

    pub(super) async fn create_issue_a(
        &self,
        repo: &RepoRef,
        title: &str,
        body: &str,
        labels: &[String],
    ) -> ForgeResult<IssueInfo> {
        let what = format!("issue `{title}` in {repo}");
        let req = Req::json(
            Method::POST,
            format!("{}/issues", Self::repo_path(repo)),
            &json!({"title": title, "body": body, "labels": labels}),
        );
        self.write_checked(
            &what,
            &req,
            |r| Ok(issue_of(&r.json(&what)?)),
            // Without push access GitHub silently drops labels, so look at every issue: the
            // same title and body is the attempt that took effect.
            async || {
                Ok(self
                    .list_issues_a(repo, None)
                    .await?
                    .into_iter()
                    .rev()
                    .find(|i| i.title == title && i.body == body))
            },
        )
        .await
    }

    pub(super) async fn update_issue_a(
        &self,
        repo: &RepoRef,
        number: u64,
        title: &str,
        body: &str,
    ) -> ForgeResult<()> {
        let what = format!("issue #{number} of {repo}");
        let path = format!("{}/issues/{number}", Self::repo_path(repo));
        let body = json!({"title": title, "body": body});
        self.write_json(&what, Method::PATCH, path, &body)
            .await
            .map(drop)
    }
}

fn issue_of(v: &Value) -> IssueInfo {
    IssueInfo {
        number: v["number"].as_u64().unwrap_or_default(),
        title: str_of(&v["title"]),
        body: str_of(&v["body"]),
        state: if v["state"].as_str() == Some("open") {
            IssueState::Open
        } else {
            IssueState::Closed
        },
        labels: v["labels"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|l| l["name"].as_str().or(l.as_str()).map(str::to_string))
            .collect(),
        html_url: str_of(&v["html_url"]),
    }
}
