//! Repositories: read, create, update (a new `name` renames: the old name redirects from then
//! on), transfer, delete.

use axum::http::Method;
use serde_json::Value;

use super::super::answer::Ans;
use super::super::repr;
use super::super::state::{Lookup, Repo, World};
use super::{Ctx, Fresh};

pub fn create(w: &mut World, cx: &Ctx, owner: &str, body: &Value, f: Fresh) -> Ans {
    let Some(name) = body["name"].as_str().filter(|n| !n.is_empty()) else {
        return Ans::invalid("Repository", "missing_field", "name");
    };
    let full = format!("{owner}/{name}");
    if matches!(w.lookup(owner, name), Lookup::Found(_)) {
        return Ans::custom("Repository", "name already exists on this account");
    }
    let id = w.next_id();
    let mut repo = Repo::new(id, "main", f.seq);
    repo.description = body["description"].as_str().map(str::to_string);
    let j = repr::repo(cx.urls, &repo, &full, true);
    w.moved.remove(&full.to_ascii_lowercase());
    w.repos.insert(full, repo);
    Ans::json(201, j)
}

/// `GET/PATCH/DELETE /repos/{owner}/{repo}` and `POST …/transfer`; `None` for sub-resources.
pub fn handle(
    w: &mut World,
    cx: &Ctx,
    m: &Method,
    full: &str,
    rest: &[&str],
    body: &Value,
) -> Option<Ans> {
    let (owner, _) = full.split_once('/').unwrap_or((full, full));
    Some(match (m.clone(), rest) {
        (Method::GET, []) => Ans::json(200, repr::repo(cx.urls, &w.repos[full], full, true)),
        (Method::PATCH, []) => {
            let target = match body["name"].as_str() {
                Some(n) if !n.is_empty() => format!("{owner}/{n}"),
                _ => full.to_string(),
            };
            if target != full
                && let Err(e) = w.move_repo(full, &target)
            {
                return Some(Ans::custom("Repository", &e));
            }
            let r = w.repos.get_mut(&target).expect("moved above");
            if let Some(d) = body["description"].as_str() {
                r.description = Some(d.to_string());
            }
            if let Some(b) = body["default_branch"].as_str() {
                r.default_branch = b.to_string();
            }
            Ans::json(200, repr::repo(cx.urls, r, &target, true))
        }
        (Method::DELETE, []) => {
            w.repos.remove(full);
            Ans::empty(204)
        }
        (Method::POST, ["transfer"]) => {
            let Some(new_owner) = body["new_owner"].as_str() else {
                return Some(Ans::invalid("Repository", "missing_field", "new_owner"));
            };
            let name = body["new_name"]
                .as_str()
                .unwrap_or_else(|| full.split_once('/').map(|(_, n)| n).unwrap_or(full));
            let target = format!("{new_owner}/{name}");
            if let Err(e) = w.move_repo(full, &target) {
                return Some(Ans::custom("Repository", &e));
            }
            Ans::json(202, repr::repo(cx.urls, &w.repos[&target], &target, false))
        }
        _ => return None,
    })
}
