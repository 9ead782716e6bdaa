//! Issues and pull requests (one number sequence), their comments, and labels.

use axum::http::Method;
use serde_json::{Value, json};

use super::super::answer::Ans;
use super::super::repr;
use super::super::state::{Comment, Issue, Label, Pull, Repo};
use super::{Ctx, Fresh, Route, is_num};

pub fn handle(repo: &mut Repo, r: &Route) -> Option<Ans> {
    if let Some(answer) = pulls(repo, r) {
        return Some(answer);
    }
    if let Some(answer) = issues(repo, r) {
        return Some(answer);
    }
    if let Some(answer) = issue(repo, r) {
        return Some(answer);
    }
    if let Some(answer) = comments(repo, r) {
        return Some(answer);
    }
    if let Some(answer) = issue_labels(repo, r) {
        return Some(answer);
    }
    labels(repo, r)
}

/// Pull requests: list, open, read, edit.
fn pulls(repo: &mut Repo, r: &Route) -> Option<Ans> {
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
    let owner = full.split_once('/').map(|(o, _)| o).unwrap_or(full);
    Some(match (m.clone(), rest) {
        // ------------------------------------------------------------ pull requests
        (Method::GET, ["pulls"]) => {
            let state = cx.query.get("state").map(String::as_str).unwrap_or("open");
            let head = cx.query.get("head").cloned();
            let basef = cx.query.get("base").cloned();
            let mut ps: Vec<&Pull> = repo
                .pulls
                .iter()
                .filter(|p| state == "all" || p.state == state)
                .filter(|p| {
                    head.as_ref()
                        .is_none_or(|h| *h == format!("{owner}:{}", p.head) || *h == p.head)
                })
                .filter(|p| basef.as_ref().is_none_or(|b| *b == p.base))
                .collect();
            // GitHub's default order is `sort=created&direction=desc`; creation order is
            // number order here.
            ps.sort_by_key(|p| std::cmp::Reverse(p.number));
            if cx.query.get("direction").map(String::as_str) == Some("asc") {
                ps.reverse();
            }
            let items = ps
                .into_iter()
                .map(|p| repr::pull(u, repo, full, p, false))
                .collect();
            cx.page(repo.id, "/pulls", items)
        }
        (Method::POST, ["pulls"]) => open_pull(repo, cx, full, owner, body, f),
        (Method::GET, ["pulls", n]) => {
            match repo.pulls.iter().find(|p| p.number.to_string() == *n) {
                Some(p) => Ans::json(200, repr::pull(u, repo, full, p, true)),
                None => Ans::not_found(),
            }
        }
        (Method::PATCH, ["pulls", n]) => {
            let Some(i) = repo.pulls.iter().position(|p| p.number.to_string() == *n) else {
                return Some(Ans::not_found());
            };
            let p = &mut repo.pulls[i];
            if let Some(t) = body["title"].as_str() {
                p.title = t.into();
            }
            if let Some(b) = body["body"].as_str() {
                p.body = b.into();
            }
            if let Some(b) = body["base"].as_str() {
                p.base = b.into();
            }
            if let Some(s) = body["state"].as_str()
                && !p.merged
                && (s == "open" || s == "closed")
            {
                p.closed = (s == "closed").then_some(f.seq);
                p.state = s.into();
            }
            p.updated = f.seq;
            let p = repo.pulls[i].clone();
            Ans::json(200, repr::pull(u, repo, full, &p, true))
        }
        _ => return None,
    })
}

/// Issues: list and open.
fn issues(repo: &mut Repo, r: &Route) -> Option<Ans> {
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
        // ------------------------------------------------------------ issues
        (Method::GET, ["issues"]) => {
            let state = cx.query.get("state").map(String::as_str).unwrap_or("open");
            // `labels=a,b`: issues carrying every one of them (pull requests carry none here).
            let wanted: Vec<&str> = cx
                .query
                .get("labels")
                .map(|l| {
                    l.split(',')
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                        .collect()
                })
                .unwrap_or_default();
            let mut items: Vec<(u64, Value)> = repo
                .issues
                .iter()
                .filter(|i| state == "all" || i.state == state)
                .filter(|i| {
                    wanted
                        .iter()
                        .all(|w| i.labels.iter().any(|l| l.eq_ignore_ascii_case(w)))
                })
                .map(|i| (i.number, repr::issue(u, repo, full, i)))
                .collect();
            if wanted.is_empty() {
                for p in repo
                    .pulls
                    .iter()
                    .filter(|p| state == "all" || p.state == state)
                {
                    items.push((p.number, pull_as_issue(cx, repo, full, p)));
                }
            }
            // `sort=created` (the default) newest first, unless `direction=asc`.
            let asc = cx.query.get("direction").is_some_and(|d| d == "asc");
            items.sort_by_key(|(n, _)| if asc { *n as i64 } else { -(*n as i64) });
            cx.page(
                repo.id,
                "/issues",
                items.into_iter().map(|(_, v)| v).collect(),
            )
        }
        (Method::POST, ["issues"]) => {
            let Some(title) = body["title"].as_str().filter(|t| !t.is_empty()) else {
                return Some(Ans::invalid("Issue", "missing_field", "title"));
            };
            // GitHub creates a label it does not know yet (colour `ededed`, no description).
            for name in body["labels"].as_array().into_iter().flatten() {
                let Some(name) = name.as_str() else { continue };
                if !repo
                    .labels
                    .iter()
                    .any(|l| l.name.eq_ignore_ascii_case(name))
                {
                    repo.labels.push(Label {
                        id: f.id + 1_000_000 + repo.labels.len() as u64,
                        name: name.into(),
                        color: "ededed".into(),
                        description: None,
                    });
                }
            }
            let i = Issue {
                number: repo.next_number,
                id: f.id,
                title: title.into(),
                body: body["body"].as_str().map(str::to_string),
                state: "open".into(),
                labels: body["labels"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|l| l.as_str().map(str::to_string))
                    .collect(),
                seq: f.seq,
            };
            repo.next_number += 1;
            let j = repr::issue(u, repo, full, &i);
            repo.issues.push(i);
            Ans::json(201, j)
        }
        _ => return None,
    })
}

/// One issue: edit and read.
fn issue(repo: &mut Repo, r: &Route) -> Option<Ans> {
    let Route {
        cx,
        m,
        full,
        rest,
        body,
        ..
    } = *r;
    let u = cx.urls;
    Some(match (m.clone(), rest) {
        (Method::PATCH, ["issues", n]) if is_num(n) => {
            let Some(i) = repo.issues.iter().position(|i| i.number.to_string() == *n) else {
                // A pull request is edited through the pulls API by this fake's clients.
                return Some(Ans::not_found());
            };
            let issue = &mut repo.issues[i];
            if let Some(t) = body["title"].as_str() {
                if t.is_empty() {
                    return Some(Ans::invalid("Issue", "missing_field", "title"));
                }
                issue.title = t.into();
            }
            if let Some(b) = body.get("body") {
                issue.body = b.as_str().map(str::to_string);
            }
            if let Some(s) = body["state"].as_str()
                && (s == "open" || s == "closed")
            {
                issue.state = s.into();
            }
            let issue = repo.issues[i].clone();
            Ans::json(200, repr::issue(u, repo, full, &issue))
        }
        (Method::GET, ["issues", n]) if is_num(n) => {
            if let Some(i) = repo.issues.iter().find(|i| i.number.to_string() == *n) {
                Ans::json(200, repr::issue(u, repo, full, i))
            } else if let Some(p) = repo.pulls.iter().find(|p| p.number.to_string() == *n) {
                Ans::json(200, pull_as_issue(cx, repo, full, p))
            } else {
                Ans::not_found()
            }
        }
        _ => return None,
    })
}

/// Comments of issues and pull requests.
fn comments(repo: &mut Repo, r: &Route) -> Option<Ans> {
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
        // ------------------------------------------------------------ comments
        (Method::GET, ["issues", n, "comments"]) if is_num(n) => {
            let n: u64 = n.parse().unwrap();
            if !has_issue(repo, n) {
                return Some(Ans::not_found());
            }
            let items = repo
                .comments
                .iter()
                .filter(|c| c.issue == n)
                .map(|c| repr::comment(u, full, c))
                .collect();
            cx.page(repo.id, &format!("/issues/{n}/comments"), items)
        }
        (Method::POST, ["issues", n, "comments"]) if is_num(n) => {
            let n: u64 = n.parse().unwrap();
            if !has_issue(repo, n) {
                return Some(Ans::not_found());
            }
            let Some(b) = body["body"].as_str() else {
                return Some(Ans::invalid("IssueComment", "missing_field", "body"));
            };
            let c = Comment {
                id: f.id,
                issue: n,
                body: b.into(),
                seq: f.seq,
                updated: f.seq,
            };
            let j = repr::comment(u, full, &c);
            repo.comments.push(c);
            Ans::json(201, j)
        }
        (Method::GET, ["issues", "comments", cid]) => {
            match repo.comments.iter().find(|c| c.id.to_string() == *cid) {
                Some(c) => Ans::json(200, repr::comment(u, full, c)),
                None => Ans::not_found(),
            }
        }
        // GitHub accepts POST for PATCH here (octocrab's update_comment sends POST).
        (Method::PATCH | Method::POST, ["issues", "comments", cid]) => {
            let Some(c) = repo.comments.iter_mut().find(|c| c.id.to_string() == *cid) else {
                return Some(Ans::not_found());
            };
            let Some(b) = body["body"].as_str() else {
                return Some(Ans::invalid("IssueComment", "missing_field", "body"));
            };
            c.body = b.into();
            c.updated = f.seq;
            let c = c.clone();
            Ans::json(200, repr::comment(u, full, &c))
        }
        (Method::DELETE, ["issues", "comments", cid]) => {
            match repo.comments.iter().position(|c| c.id.to_string() == *cid) {
                Some(i) => {
                    repo.comments.remove(i);
                    Ans::empty(204)
                }
                None => Ans::not_found(),
            }
        }
        _ => return None,
    })
}

/// Labels added to an issue or pull request.
fn issue_labels(repo: &mut Repo, r: &Route) -> Option<Ans> {
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
        // ------------------------------------------------------------ labels
        // Adds to what the issue or pull request carries; a label the repository does not
        // know yet is created (colour `ededed`), as GitHub does. Answers the full list.
        (Method::POST, ["issues", n, "labels"]) if is_num(n) => {
            let n: u64 = n.parse().unwrap();
            let Some(names) = body["labels"].as_array() else {
                return Some(Ans::invalid("Issue", "missing_field", "labels"));
            };
            let names: Vec<String> = names
                .iter()
                .filter_map(|l| l.as_str().map(str::to_string))
                .collect();
            for name in &names {
                if !repo
                    .labels
                    .iter()
                    .any(|l| l.name.eq_ignore_ascii_case(name))
                {
                    repo.labels.push(Label {
                        id: f.id + 1_000_000 + repo.labels.len() as u64,
                        name: name.clone(),
                        color: "ededed".into(),
                        description: None,
                    });
                }
            }
            let known = |name: &String| {
                repo.labels
                    .iter()
                    .find(|l| l.name.eq_ignore_ascii_case(name))
                    .map(|l| l.name.clone())
                    .expect("created above")
            };
            let names: Vec<String> = names.iter().map(known).collect();
            let carried = if let Some(p) = repo.pulls.iter_mut().find(|p| p.number == n) {
                &mut p.labels
            } else if let Some(i) = repo.issues.iter_mut().find(|i| i.number == n) {
                &mut i.labels
            } else {
                return Some(Ans::not_found());
            };
            for name in names {
                if !carried.contains(&name) {
                    carried.push(name);
                }
            }
            let carried = carried.clone();
            let items: Vec<Value> = carried
                .iter()
                .filter_map(|l| repo.labels.iter().find(|x| &x.name == l))
                .map(|l| repr::label(u, full, l))
                .collect();
            Ans::json(200, Value::Array(items))
        }
        _ => return None,
    })
}

/// The repository's labels.
fn labels(repo: &mut Repo, r: &Route) -> Option<Ans> {
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
        (Method::GET, ["labels"]) => {
            let items = repo
                .labels
                .iter()
                .map(|l| repr::label(u, full, l))
                .collect();
            cx.page(repo.id, "/labels", items)
        }
        (Method::POST, ["labels"]) => {
            let name = body["name"].as_str().unwrap_or("");
            let color = body["color"].as_str().unwrap_or("").trim_start_matches('#');
            if name.is_empty() {
                return Some(Ans::invalid("Label", "missing_field", "name"));
            }
            if color.len() != 6 || !color.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Some(Ans::invalid("Label", "invalid", "color"));
            }
            if repo
                .labels
                .iter()
                .any(|l| l.name.eq_ignore_ascii_case(name))
            {
                return Some(Ans::invalid("Label", "already_exists", "name"));
            }
            let l = Label {
                id: f.id,
                name: name.into(),
                color: color.to_ascii_lowercase(),
                description: body["description"].as_str().map(str::to_string),
            };
            let j = repr::label(u, full, &l);
            repo.labels.push(l);
            Ans::json(201, j)
        }
        (Method::GET, ["labels", name]) => {
            match repo
                .labels
                .iter()
                .find(|l| l.name.eq_ignore_ascii_case(name))
            {
                Some(l) => Ans::json(200, repr::label(u, full, l)),
                None => Ans::not_found(),
            }
        }

        _ => return None,
    })
}

fn has_issue(repo: &Repo, n: u64) -> bool {
    repo.pulls.iter().any(|p| p.number == n) || repo.issues.iter().any(|i| i.number == n)
}

/// A pull request in the issues API: an issue with a `pull_request` link.
fn pull_as_issue(cx: &Ctx, repo: &Repo, full: &str, p: &Pull) -> Value {
    let i = Issue {
        number: p.number,
        id: p.id,
        title: p.title.clone(),
        body: Some(p.body.clone()),
        state: p.state.clone(),
        labels: p.labels.clone(),
        seq: p.seq,
    };
    let mut v = repr::issue(cx.urls, repo, full, &i);
    let api = format!("{}/repos/{full}", cx.urls.api);
    let html = format!("{}/{full}/pull/{}", cx.urls.web, p.number);
    v["pull_request"] = json!({
        "url": format!("{api}/pulls/{}", p.number), "html_url": html,
        "diff_url": format!("{html}.diff"), "patch_url": format!("{html}.patch"),
        "merged_at": Value::Null,
    });
    v
}

fn open_pull(repo: &mut Repo, cx: &Ctx, full: &str, owner: &str, body: &Value, f: Fresh) -> Ans {
    let head_raw = body["head"].as_str().unwrap_or("");
    let head = head_raw
        .rsplit_once(':')
        .map(|(_, b)| b)
        .unwrap_or(head_raw)
        .to_string();
    let base = body["base"].as_str().unwrap_or("").to_string();
    let (Some(hs), Some(bs)) = (
        repo.refs.get(&format!("refs/heads/{head}")).cloned(),
        repo.refs.get(&format!("refs/heads/{base}")).cloned(),
    ) else {
        return Ans::invalid("PullRequest", "invalid", "head");
    };
    if repo
        .pulls
        .iter()
        .any(|p| p.head == head && p.base == base && p.state == "open")
    {
        return Ans::custom(
            "PullRequest",
            &format!("A pull request already exists for {owner}:{head}."),
        );
    }
    if repo.ancestors(&bs).contains(&hs) {
        return Ans::custom(
            "PullRequest",
            &format!("No commits between {base} and {head}"),
        );
    }
    let p = Pull {
        number: repo.next_number,
        id: f.id,
        head,
        base,
        title: body["title"].as_str().unwrap_or("").into(),
        body: body["body"].as_str().unwrap_or("").into(),
        state: "open".into(),
        merged: false,
        merge_commit: None,
        seq: f.seq,
        updated: f.seq,
        closed: None,
        labels: Vec::new(),
        auto_merge: false,
    };
    repo.next_number += 1;
    let j = repr::pull(cx.urls, repo, full, &p, true);
    repo.pulls.push(p);
    Ans::json(201, j)
}
