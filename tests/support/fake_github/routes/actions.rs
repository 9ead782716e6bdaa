//! GitHub Actions, as far as a workflow is dispatched and its run read: `workflow_dispatch`
//! (refusing an unknown ref, undeclared inputs and missing required ones with GitHub's words;
//! `200` with the run when `return_run_details` is asked for, else `204`), the runs of a
//! workflow (filters `event`, `status`, `head_sha`, `created`, newest first, paged), one run,
//! its artifacts, an artifact's zip (`302` to the download host; `410` once expired), and
//! cancelling a run. Runs move on only when a test says (`FakeGithub::set_run_status`, ...),
//! as a runner would.

use std::collections::BTreeMap;

use axum::http::Method;
use serde_json::{Value, json};

use super::super::answer::Ans;
use super::super::repr;
use super::super::state::{Repo, Run, RunArtifact, Workflow};
use super::{Route, is_num};

pub fn handle(repo: &mut Repo, r: &Route) -> Option<Ans> {
    let Route {
        cx,
        m,
        full,
        rest,
        body,
        f,
        ..
    } = *r;
    let u = cx.urls;
    Some(match (m.clone(), rest) {
        (Method::POST, ["actions", "workflows", wf, "dispatches"]) => {
            dispatch(repo, r, wf, body, f.id, f.seq)
        }
        (Method::GET, ["actions", "workflows", wf, "runs"]) => {
            let Some(w) = find_workflow(repo, wf) else {
                return Some(Ans::not_found());
            };
            let wid = w.id;
            let mut runs: Vec<&Run> = repo
                .actions
                .runs
                .iter()
                .filter(|run| run.workflow_id == wid && matches_filters(run, cx.query))
                .collect();
            runs.sort_by_key(|run| std::cmp::Reverse(run.id));
            let total = runs.len();
            let (page, per) = page_of(cx.query);
            let items: Vec<Value> = runs
                .into_iter()
                .skip((page - 1) * per)
                .take(per)
                .map(|run| repr::workflow_run(u, repo, full, run))
                .collect();
            Ans::json(200, json!({"total_count": total, "workflow_runs": items}))
        }
        (Method::GET, ["actions", "runs", id]) if is_num(id) => match find_run(repo, id) {
            Some(run) => Ans::json(200, repr::workflow_run(u, repo, full, run)),
            None => Ans::not_found(),
        },
        (Method::POST, ["actions", "runs", id, "cancel"]) if is_num(id) => {
            let Some(run) = repo
                .actions
                .runs
                .iter_mut()
                .find(|x| x.id.to_string() == *id)
            else {
                return Some(Ans::not_found());
            };
            if run.status == "completed" {
                return Some(Ans::msg(
                    409,
                    "Cannot cancel a workflow run that is completed.",
                ));
            }
            run.status = "completed".into();
            run.conclusion = Some("cancelled".into());
            run.updated = f.seq;
            Ans::json(202, json!({}))
        }
        (Method::GET, ["actions", "runs", id, "artifacts"]) if is_num(id) => {
            let Some(run) = find_run(repo, id) else {
                return Some(Ans::not_found());
            };
            let items: Vec<Value> = run
                .artifacts
                .iter()
                .filter(|a| cx.query.get("name").is_none_or(|n| *n == a.name))
                .map(|a| repr::artifact(u, repo, full, run, a))
                .collect();
            Ans::json(200, json!({"total_count": items.len(), "artifacts": items}))
        }
        (Method::GET, ["actions", "artifacts", id, format]) if is_num(id) => {
            download(repo, r, id, format)
        }
        _ => return None,
    })
}

/// An artifact's zip: `302` to the download host, like Azure blob storage (another host, a
/// short-lived signed URL); `410` once it expired.
fn download(repo: &Repo, r: &Route, id: &str, format: &str) -> Ans {
    let Some(a) = artifact_zip(repo, id) else {
        return Ans::not_found();
    };
    if format != "zip" {
        return Ans::not_found();
    }
    if !r.cx.authed {
        return Ans::msg(401, "Requires authentication");
    }
    if a.expired {
        return Ans::msg(410, "Artifact has expired");
    }
    let mut ans = Ans::empty(302);
    ans.location = Some(format!(
        "{}/artifacts/{}/{}.zip?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=60&X-Amz-Signature={}",
        r.cx.urls.objects, a.id, a.name, r.cx.download_key
    ));
    ans
}

/// `per_page` (default 30, at most 100) and `page`.
fn page_of(q: &BTreeMap<String, String>) -> (usize, usize) {
    let n = |k: &str| q.get(k).and_then(|v| v.parse::<usize>().ok());
    (
        n("page").unwrap_or(1).max(1),
        n("per_page").unwrap_or(30).clamp(1, 100),
    )
}

/// A workflow by id or by file name.
pub fn find_workflow<'r>(repo: &'r Repo, wf: &str) -> Option<&'r Workflow> {
    repo.actions
        .workflows
        .iter()
        .find(|w| w.id.to_string() == wf || w.path.rsplit('/').next() == Some(wf))
}

fn find_run<'r>(repo: &'r Repo, id: &str) -> Option<&'r Run> {
    repo.actions.runs.iter().find(|r| r.id.to_string() == id)
}

/// `event`, `status` (a status or a conclusion), `head_sha`, `branch`, and `created` in
/// GitHub's search syntax (`>=T`, `<=T`, `>T`, `<T`, `A..B`, or a date).
fn matches_filters(run: &Run, q: &BTreeMap<String, String>) -> bool {
    let eq = |k: &str, v: &str| q.get(k).is_none_or(|want| want == v);
    let status_ok = q
        .get("status")
        .is_none_or(|s| *s == run.status || run.conclusion.as_deref() == Some(s.as_str()));
    eq("event", &run.event)
        && eq("head_sha", &run.head_sha)
        && eq("branch", &run.head_branch)
        && status_ok
        && q.get("created")
            .is_none_or(|c| created_matches(&run.created, c))
}

fn created_matches(created: &str, filter: &str) -> bool {
    // RFC 3339 in UTC with `Z` compares as text; a date alone covers its day.
    let day = &created[..10];
    if let Some((a, b)) = filter.split_once("..") {
        return created >= a && (created <= b || day == b);
    }
    for (op, f) in [(">=", 0), ("<=", 1), (">", 2), ("<", 3)] {
        if let Some(t) = filter.strip_prefix(op) {
            return match f {
                0 => created >= t,
                1 => created <= t || day == t,
                2 => created > t && day != t,
                _ => created < t,
            };
        }
    }
    created == filter || day == filter
}

/// `${{ inputs.name }}` expressions of a `run-name`, filled in.
fn render(template: &str, inputs: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(i) = rest.find("${{") {
        out.push_str(&rest[..i]);
        let Some(j) = rest[i..].find("}}") else {
            rest = &rest[i..];
            break;
        };
        let expr = rest[i + 3..i + j].trim();
        if let Some(name) = expr
            .strip_prefix("inputs.")
            .or(expr.strip_prefix("github.event.inputs."))
        {
            out.push_str(inputs.get(name.trim()).map(String::as_str).unwrap_or(""));
        }
        rest = &rest[i + j + 2..];
    }
    out.push_str(rest);
    out
}

fn dispatch(repo: &mut Repo, r: &Route, wf: &str, body: &Value, id: u64, seq: u64) -> Ans {
    let Some(w) = find_workflow(repo, wf).cloned() else {
        return Ans::not_found();
    };
    if !w.dispatchable {
        return Ans::msg(422, "Workflow does not have 'workflow_dispatch' trigger");
    }
    let git_ref = body["ref"].as_str().unwrap_or_default();
    let branch = git_ref
        .trim_start_matches("refs/heads/")
        .trim_start_matches("refs/tags/");
    let Some(head_sha) = repo.resolve(git_ref).or_else(|| repo.resolve(branch)) else {
        return Ans::msg(422, &format!("No ref found for: {git_ref}"));
    };
    let mut inputs = BTreeMap::new();
    let mut unexpected = Vec::new();
    for (k, v) in body["inputs"].as_object().into_iter().flatten() {
        if !w.inputs.contains_key(k) {
            unexpected.push(format!("\"{k}\""));
        }
        let text = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        inputs.insert(k.clone(), text);
    }
    if !unexpected.is_empty() {
        return Ans::msg(
            422,
            &format!("Unexpected inputs provided: [{}]", unexpected.join(", ")),
        );
    }
    if let Some((k, _)) = w
        .inputs
        .iter()
        .find(|(k, required)| **required && !inputs.contains_key(*k))
    {
        return Ans::msg(422, &format!("Required input '{k}' not provided"));
    }
    let run_number = repo
        .actions
        .runs
        .iter()
        .filter(|x| x.workflow_id == w.id)
        .count() as u64
        + 1;
    let display_title = match &w.run_name {
        Some(t) => render(t, &inputs),
        None => w.name.clone(),
    };
    repo.actions.runs.push(Run {
        id,
        workflow_id: w.id,
        run_number,
        display_title,
        event: "workflow_dispatch".into(),
        status: "queued".into(),
        conclusion: None,
        head_branch: branch.to_string(),
        head_sha,
        inputs,
        seq,
        updated: seq,
        created: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        artifacts: Vec::new(),
    });
    if body["return_run_details"].as_bool() == Some(true) && repo.actions.dispatch_details {
        let u = r.cx.urls;
        return Ans::json(
            200,
            json!({"workflow_run_id": id,
                   "run_url": format!("{}/repos/{}/actions/runs/{id}", u.api, r.full),
                   "html_url": format!("{}/{}/actions/runs/{id}", u.web, r.full)}),
        );
    }
    Ans::empty(204)
}

/// An artifact's zip for the download host.
pub fn artifact_zip<'w>(repo: &'w Repo, id: &str) -> Option<&'w RunArtifact> {
    repo.actions
        .runs
        .iter()
        .flat_map(|r| &r.artifacts)
        .find(|a| a.id.to_string() == id)
}
