//! The REST API, one module per resource: repositories, the git database, contents and
//! compare, releases and assets, issues and pull requests with their comments, branch
//! protection's "Require signed commits".

mod actions;
mod apps;
mod branches;
mod contents;
mod git;
mod issues;
mod releases;
mod repos;

use std::collections::BTreeMap;

use axum::http::Method;
use serde_json::{Value, json};

use super::answer::Ans;
use super::app::Principal;
use super::repr::Urls;
use super::state::{Lookup, World};
use super::wire::enc_q;

/// What a handler knows about the request besides method, path and body.
pub struct Ctx<'a> {
    pub urls: &'a Urls,
    /// A valid token was presented (drafts are visible, writes allowed).
    pub authed: bool,
    pub accept: &'a str,
    pub query: &'a BTreeMap<String, String>,
    /// The query in its order (kept in the `Link`s GitHub builds).
    pub query_list: &'a [(String, String)],
    /// The request came to the upload host.
    pub upload: bool,
    pub content_type: &'a str,
    /// The signature download URLs carry (checked by the download host).
    pub download_key: &'a str,
    pub principal: &'a Principal,
}

impl Ctx<'_> {
    /// Slice a list into the requested page (`per_page` default 30, at most 100) and build
    /// GitHub's `Link` header: `prev`, `next`, `last`, `first`, in that order, pointing at
    /// `/repositories/{id}/…` for repository lists, the original query kept.
    pub fn page(&self, repo_id: u64, rest: &str, items: Vec<Value>) -> Ans {
        let per = self
            .query
            .get("per_page")
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(30)
            .clamp(1, 100);
        let page = self
            .query
            .get("page")
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(1)
            .max(1);
        let last = items.len().div_ceil(per).max(1);
        let slice: Vec<Value> = items.into_iter().skip((page - 1) * per).take(per).collect();
        let mut a = Ans::json(200, Value::Array(slice));
        a.link = self.link(&format!("/repositories/{repo_id}{rest}"), page, last);
        a
    }

    fn link(&self, path: &str, page: usize, last: usize) -> Option<String> {
        let url = |p: usize| {
            let mut q: Vec<(String, String)> = self
                .query_list
                .iter()
                .filter(|(k, _)| k != "page")
                .cloned()
                .collect();
            q.push(("page".into(), p.to_string()));
            let qs: Vec<String> = q
                .iter()
                .map(|(k, v)| format!("{}={}", enc_q(k), enc_q(v)))
                .collect();
            format!("<{}{path}?{}>", self.urls.api, qs.join("&"))
        };
        let mut links = Vec::new();
        if page > 1 {
            links.push(format!("{}; rel=\"prev\"", url(page - 1)));
        }
        if page < last {
            links.push(format!("{}; rel=\"next\"", url(page + 1)));
            links.push(format!("{}; rel=\"last\"", url(last)));
        }
        if page > 1 {
            links.push(format!("{}; rel=\"first\"", url(1)));
        }
        (!links.is_empty()).then(|| links.join(", "))
    }

    /// A boolean query flag (`recursive=1`, `recursive=true`).
    pub fn flag(&self, name: &str) -> bool {
        self.query
            .get(name)
            .is_some_and(|v| !v.is_empty() && v != "0" && v != "false")
    }
}

/// `POST /graphql`, the one mutation stackbot sends: `enablePullRequestAutoMerge` with the pull
/// request's node id in `variables.id`. GitHub answers `200` either way; a refusal is an
/// `errors` entry (type `UNPROCESSABLE`, or `NOT_FOUND` for an unknown node) with `data` null,
/// with GitHub's own words.
fn graphql(w: &mut World, raw: &[u8]) -> Ans {
    let Ok(body) = serde_json::from_slice::<Value>(raw) else {
        return Ans::msg(400, "Problems parsing JSON");
    };
    let query = body["query"].as_str().unwrap_or_default();
    if !query.contains("enablePullRequestAutoMerge") {
        panic!("fake github: unsupported GraphQL query {query:?}");
    }
    let id = body["variables"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let refuse = |kind: &str, message: String| {
        Ans::json(
            200,
            json!({"data": {"enablePullRequestAutoMerge": null},
                   "errors": [{"type": kind, "path": ["enablePullRequestAutoMerge"],
                               "locations": [{"line": 1, "column": 21}], "message": message}]}),
        )
    };
    let found = w.repos.values_mut().find_map(|r| {
        let (allowed, checks) = (r.allow_auto_merge, r.required_checks);
        r.pulls
            .iter_mut()
            .find(|p| format!("PR_{}", p.id) == id)
            .map(|p| (p, allowed, checks))
    });
    let Some((p, allowed, checks)) = found else {
        return refuse(
            "NOT_FOUND",
            format!("Could not resolve to a node with the global id of '{id}'."),
        );
    };
    if !allowed {
        return refuse(
            "UNPROCESSABLE",
            "Auto merge is not allowed for this repository".into(),
        );
    }
    if p.state != "open" {
        return refuse("UNPROCESSABLE", "Pull request is closed".into());
    }
    if !checks {
        return refuse("UNPROCESSABLE", "Pull request is in clean status".into());
    }
    p.auto_merge = true;
    Ans::json(
        200,
        json!({"data": {"enablePullRequestAutoMerge": {"pullRequest": {"number": p.number}}}}),
    )
}

pub fn is_num(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// One request to a repository's resources, as the resource handlers see it.
#[derive(Clone, Copy)]
pub struct Route<'a> {
    pub cx: &'a Ctx<'a>,
    pub m: &'a Method,
    /// The repository's full name.
    pub full: &'a str,
    /// The path below `/repos/{owner}/{repo}`.
    pub rest: &'a [&'a str],
    pub body: &'a Value,
    pub raw: &'a [u8],
    pub f: Fresh,
    /// The App's bot account (`<slug>[bot]`) when an installation token sent the request:
    /// the author GitHub puts on the commits it creates, and signs, for the App.
    pub bot: Option<&'a str>,
}

/// Ids and timestamps a write may use, drawn before the repository is borrowed.
#[derive(Debug, Clone, Copy)]
pub struct Fresh {
    pub id: u64,
    pub seq: u64,
}

pub use actions::artifact_zip;

pub fn dispatch(w: &mut World, cx: &Ctx, m: &Method, segs: &[String], raw: &[u8]) -> Ans {
    let s: Vec<&str> = segs.iter().map(|s| s.as_str()).collect();
    if *m == Method::POST && s.as_slice() == ["graphql"] && !cx.upload {
        return graphql(w, raw);
    }
    // Uploads belong on the upload host: the API host does not know the route.
    if let ["repos", _, _, "releases", _, "assets"] = s.as_slice()
        && *m == Method::POST
        && !cx.upload
    {
        return Ans::not_found();
    }
    let known = matches!(
        s.as_slice(),
        ["repos", _, _, ..] | ["orgs", _, "repos"] | ["user", "repos"] | ["app", ..]
    );
    if !known {
        return Ans::not_found();
    }
    let body: Value = if raw.is_empty() || cx.upload {
        Value::Null
    } else {
        match serde_json::from_slice(raw) {
            Ok(v) => v,
            Err(_) => return Ans::msg(400, "Problems parsing JSON"),
        }
    };
    w.seq += 1;
    let fresh = Fresh {
        seq: w.seq,
        id: w.next_id(),
    };
    match (m.clone(), s.as_slice()) {
        (Method::POST, ["orgs", org, "repos"]) => return repos::create(w, cx, org, &body, fresh),
        (Method::POST, ["user", "repos"]) => {
            return repos::create(w, cx, super::repr::VIEWER, &body, fresh);
        }
        (Method::POST, ["app", "installations", id, "access_tokens"]) => {
            return apps::create_token(w, cx, id, &body);
        }
        _ => {}
    }
    let ["repos", owner, name, rest @ ..] = s.as_slice() else {
        return Ans::not_found();
    };
    let full = match w.lookup(owner, name) {
        Lookup::Found(f) => f,
        _ => return Ans::not_found(),
    };
    // An archived repository stays readable; GitHub refuses every write the same way.
    if w.repos[&full].archived && !matches!(*m, Method::GET | Method::HEAD) {
        return Ans::msg(403, "Repository was archived so is read-only.");
    }
    if let (Method::GET, ["installation"]) = (m.clone(), rest) {
        return apps::repo_installation(&*w, cx, &full);
    }
    if let Some(a) = repos::handle(w, cx, m, &full, rest, &body) {
        return a;
    }
    let bot = match cx.principal {
        super::app::Principal::Installation { id, .. } => w
            .apps
            .installations
            .iter()
            .find(|i| i.id == *id)
            .and_then(|i| w.apps.apps.iter().find(|a| a.id == i.app_id))
            .map(|a| format!("{}[bot]", a.slug)),
        _ => None,
    };
    let repo = w.repos.get_mut(&full).expect("found above");
    let r = Route {
        cx,
        m,
        full: &full,
        rest,
        body: &body,
        raw,
        f: fresh,
        bot: bot.as_deref(),
    };
    git::handle(repo, &r)
        .or_else(|| branches::handle(repo, &r))
        .or_else(|| contents::handle(repo, &r))
        .or_else(|| releases::handle(repo, &r))
        .or_else(|| issues::handle(repo, &r))
        .or_else(|| actions::handle(repo, &r))
        .unwrap_or_else(Ans::not_found)
}
