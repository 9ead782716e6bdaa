//! Branch protection through the REST API: "Require signed commits" of a branch's classic
//! protection rule (`…/branches/{branch}/protection/required_signatures`). As on GitHub the
//! endpoints address a rule naming the branch exactly (a rule with a wildcard pattern is
//! reachable through GraphQL only): for a branch with no such rule they answer
//! `404 Branch not protected`, for a missing branch `404 Branch not found`. Reading and
//! changing protection takes an administrator (an App installation: "Administration").

use axum::http::Method;
use serde_json::json;

use super::super::answer::Ans;
use super::super::state::Repo;
use super::Route;

pub fn handle(repo: &mut Repo, r: &Route) -> Option<Ans> {
    let ["branches", branch @ .., "protection", "required_signatures"] = r.rest else {
        return None;
    };
    if branch.is_empty() {
        return None;
    }
    if !r.cx.authed {
        return Some(Ans::msg(401, "Requires authentication"));
    }
    let branch = branch.join("/");
    if !repo.refs.contains_key(&format!("refs/heads/{branch}")) {
        return Some(Ans::msg(404, "Branch not found"));
    }
    let url = format!(
        "{}/repos/{}/branches/{branch}/protection/required_signatures",
        r.cx.urls.api, r.full
    );
    let Some(rule) = repo.classic_rule_of(&branch) else {
        return Some(Ans::msg(404, "Branch not protected"));
    };
    Some(match r.m.clone() {
        Method::GET => Ans::json(
            200,
            json!({"url": url, "enabled": rule.required_signatures}),
        ),
        Method::POST => {
            rule.required_signatures = true;
            Ans::json(200, json!({"url": url, "enabled": true}))
        }
        Method::DELETE => {
            rule.required_signatures = false;
            Ans::empty(204)
        }
        _ => return None,
    })
}
