//! GitHub Actions, as far as the conformance gate needs it: dispatch a workflow
//! (`workflow_dispatch`), list its runs, read one run, list a run's artifacts, download an
//! artifact's zip (GitHub redirects it to blob storage, followed without the token), and
//! cancel a run that overran the gate's timeout.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use http::{Method, StatusCode};
use serde_json::{Value, json};

use super::transport::{Outcome, Req, step};
use super::{GithubForge, enc, str_of, time_of};
use crate::{ArtifactInfo, ForgeError, ForgeResult, RepoRef, WorkflowRun};
use stackbot_net::retry::{Ended, Step};

fn run_of(v: &Value) -> WorkflowRun {
    WorkflowRun {
        id: v["id"].as_u64().unwrap_or_default(),
        display_title: str_of(&v["display_title"]),
        event: str_of(&v["event"]),
        status: str_of(&v["status"]),
        conclusion: v["conclusion"].as_str().map(str::to_string),
        created_at: time_of(&v["created_at"]),
        html_url: str_of(&v["html_url"]),
    }
}

fn artifact_of(v: &Value) -> ArtifactInfo {
    ArtifactInfo {
        id: v["id"].as_u64().unwrap_or_default(),
        name: str_of(&v["name"]),
        size: v["size_in_bytes"].as_u64().unwrap_or_default(),
        expired: v["expired"].as_bool().unwrap_or(false),
    }
}

impl GithubForge {
    fn workflow_path(repo: &RepoRef, workflow: &str) -> String {
        format!(
            "{}/actions/workflows/{}",
            Self::repo_path(repo),
            enc(workflow, false)
        )
    }

    /// `POST …/dispatches` with `return_run_details` (GitHub then answers 200 with the run's
    /// id; a server that does not know the flag answers 204). Sent once: what GitHub
    /// definitely did not receive (a rate-limit refusal, a connection refused before the
    /// request went out) is waited out and sent again until `send_by`, then fails as
    /// [`ForgeError::NotSent`], as does one that cannot heal (DNS, TLS). Anything ambiguous
    /// (a 5xx, a timeout or a connection dropped after the request went out) is never sent
    /// again, since a repeated dispatch starts a second test: it fails as transient.
    pub(super) async fn dispatch_workflow_a(
        &self,
        repo: &RepoRef,
        workflow: &str,
        git_ref: &str,
        inputs: &BTreeMap<String, String>,
        send_by: DateTime<Utc>,
    ) -> ForgeResult<Option<u64>> {
        let what = format!("dispatch of workflow `{workflow}` in {repo}");
        let not_sent = |reason: String| ForgeError::NotSent {
            what: what.clone(),
            reason,
        };
        let req = Req::json(
            Method::POST,
            format!("{}/dispatches", Self::workflow_path(repo, workflow)),
            &json!({"ref": git_ref, "inputs": inputs, "return_run_details": true}),
        );
        let attempt = async |_| {
            if let Err(e) = self.spend_write(&what) {
                return Step::Done(Err(not_sent(e.to_string())));
            }
            if self.t.clock.now() > send_by {
                return Step::Done(Err(not_sent(format!("its deadline ({send_by}) passed"))));
            }
            Step::Done(match self.t.attempt(&req).await {
                Outcome::Ok(r) if r.status == StatusCode::NO_CONTENT || r.body.is_empty() => {
                    Ok(None)
                }
                // GitHub accepted it: a run was started, even if its id cannot be read.
                Outcome::Ok(r) => Ok(r
                    .json::<Value>(&what)
                    .ok()
                    .and_then(|v| v["workflow_run_id"].as_u64())),
                Outcome::Refused(r) => Err(self.refusal(&what, &r)),
                // A failure that cannot heal in seconds (DNS, TLS): nothing went out.
                Outcome::Failed(ForgeError::Transient { reason, .. }) => Err(not_sent(reason)),
                Outcome::Failed(e) => Err(e),
                Outcome::Ambiguous(reason, cause)
                    if !cause.as_ref().is_some_and(|c| c.before_sending()) =>
                {
                    Err(ForgeError::Transient {
                        what: what.clone(),
                        reason: format!(
                            "{reason}; it may have started a run, which the next run looks for \
                             rather than dispatching again"
                        ),
                    })
                }
                // Definitely not received (a rate limit, a connection refused): sent again.
                other => return step(other),
            })
        };
        match self.t.retried(&what, Some(send_by), attempt).await {
            Ok(done) => done,
            Err(Ended::GaveUp {
                why,
                attempts,
                last,
            }) => Err(not_sent(self.t.gave_up(
                &what,
                why,
                attempts,
                &last,
                Some(send_by),
            ))),
            Err(e) => Err(self.t.ended(&what, e)),
        }
    }

    /// One page of the workflow's `workflow_dispatch` runs, newest first.
    pub(super) async fn workflow_runs_a(
        &self,
        repo: &RepoRef,
        workflow: &str,
    ) -> ForgeResult<Vec<WorkflowRun>> {
        let what = format!("runs of workflow `{workflow}` in {repo}");
        let path = format!(
            "{}/runs?event=workflow_dispatch&exclude_pull_requests=true&per_page=100",
            Self::workflow_path(repo, workflow)
        );
        let v = self.get_json(&what, &path).await?;
        Ok(v["workflow_runs"]
            .as_array()
            .map(|a| a.iter().map(run_of).collect())
            .unwrap_or_default())
    }

    pub(super) async fn workflow_run_a(
        &self,
        repo: &RepoRef,
        run_id: u64,
    ) -> ForgeResult<Option<WorkflowRun>> {
        let what = format!("workflow run {run_id} in {repo}");
        let path = format!(
            "{}/actions/runs/{run_id}?exclude_pull_requests=true",
            Self::repo_path(repo)
        );
        Ok(self.get_opt(&what, &path).await?.as_ref().map(run_of))
    }

    pub(super) async fn run_artifacts_a(
        &self,
        repo: &RepoRef,
        run_id: u64,
    ) -> ForgeResult<Vec<ArtifactInfo>> {
        let what = format!("artifacts of workflow run {run_id} in {repo}");
        let path = format!(
            "{}/actions/runs/{run_id}/artifacts?per_page=100",
            Self::repo_path(repo)
        );
        let v = self.get_json(&what, &path).await?;
        Ok(v["artifacts"]
            .as_array()
            .map(|a| a.iter().map(artifact_of).collect())
            .unwrap_or_default())
    }

    /// The zip: GitHub answers `302` to a short-lived blob storage URL, followed without the
    /// token. Its size is known from the listing, so a larger one is refused before it is
    /// downloaded, and no more than `max_bytes` of it is read.
    pub(super) async fn download_artifact_a(
        &self,
        repo: &RepoRef,
        a: &ArtifactInfo,
        max_bytes: u64,
    ) -> ForgeResult<Vec<u8>> {
        let what = format!("artifact `{}` ({}) in {repo}", a.name, a.id);
        if a.size > max_bytes {
            return Err(ForgeError::Rejected {
                what,
                reason: format!("{} bytes, more than the {max_bytes} read", a.size),
            });
        }
        let req = Req {
            length: super::wire::Length::AtMost(max_bytes),
            ..Req::download(format!(
                "{}/actions/artifacts/{}/zip",
                Self::repo_path(repo),
                a.id
            ))
        };
        let got = self.t.read(&what, &req).await;
        match got.map_err(|e| super::transport::relabel(&what, e))? {
            Ok(r) => Ok(r.body),
            Err(r) => Err(self.refusal(&what, &r)),
        }
    }

    /// `POST …/cancel` (202). A run that already completed answers 409: nothing to stop.
    pub(super) async fn cancel_workflow_run_a(
        &self,
        repo: &RepoRef,
        run_id: u64,
    ) -> ForgeResult<()> {
        let what = format!("cancel of workflow run {run_id} in {repo}");
        let req = Req {
            method: Method::POST,
            ..Req::get(format!(
                "{}/actions/runs/{run_id}/cancel",
                Self::repo_path(repo)
            ))
        };
        match self.write_idem(&what, &req).await? {
            (Ok(_), _) => Ok(()),
            (Err(r), _)
                if r.status == StatusCode::CONFLICT || r.status == StatusCode::NOT_FOUND =>
            {
                Ok(())
            }
            (Err(r), _) => Err(self.refusal(&what, &r)),
        }
    }
}
