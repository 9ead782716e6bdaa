//! The contents API (read files and directories at a ref, create or update a file with a
//! commit) and comparing two commits.

use axum::http::Method;
use serde_json::{Value, json};

use super::super::answer::Ans;
use super::super::repr;
use super::super::state::{Repo, person};
use super::super::wire::enc_q;
use super::git::b64_decode;
use super::{Ctx, Fresh, Route};

/// Files above this size come without `content` (GitHub: 1 MiB; read them as blobs).
const INLINE_LIMIT: usize = 1024 * 1024;

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
    Some(match (m.clone(), rest) {
        (Method::GET, ["contents", p @ ..]) => get(repo, cx, full, &p.join("/")),
        (Method::PUT, ["contents", p @ ..]) => put(repo, cx, full, &p.join("/"), body, f),
        (Method::GET, ["compare", spec]) => compare(repo, cx, full, spec),
        _ => return None,
    })
}

fn get(repo: &Repo, cx: &Ctx, full: &str, path: &str) -> Ans {
    let u = cx.urls;
    let r = cx
        .query
        .get("ref")
        .cloned()
        .unwrap_or_else(|| repo.default_branch.clone());
    let Some(c) = repo.resolve(&r) else {
        return Ans::msg(404, &format!("No commit found for the ref {r}"));
    };
    let flat = repo.flatten(&repo.commit(&c).unwrap().tree.clone());
    if let Some(sha) = flat.get(path) {
        let b = repo.blob(sha).cloned().unwrap_or_default();
        if cx.accept.contains("vnd.github.v3.raw") || cx.accept.contains("vnd.github.raw") {
            let media = if cx.accept.contains("v3.raw") {
                "application/vnd.github.v3.raw; charset=utf-8"
            } else {
                "application/vnd.github.raw; charset=utf-8"
            };
            return Ans::raw(200, b, media);
        }
        let mut v = repr::content_entry(u, full, &r, path, "file", sha, Some(&b));
        let big = b.len() > INLINE_LIMIT;
        v["encoding"] = json!(if big { "none" } else { "base64" });
        v["content"] = json!(if big {
            String::new()
        } else {
            repr::b64_lines(&b)
        });
        return Ans::json(200, v);
    }
    let prefix = if path.is_empty() {
        String::new()
    } else {
        format!("{path}/")
    };
    let mut names = std::collections::BTreeMap::new();
    for (fp, sha) in &flat {
        if let Some(rest) = fp.strip_prefix(&prefix) {
            match rest.split_once('/') {
                Some((d, _)) => names.insert(d.to_string(), ("dir", None)),
                None => names.insert(rest.to_string(), ("file", Some(sha.clone()))),
            };
        }
    }
    if names.is_empty() {
        return Ans::not_found();
    }
    let tree_of = |dir: &str| -> String {
        // The sha of a sub-directory is its tree's.
        let mut t = repo.commit(&c).unwrap().tree.clone();
        for part in dir.split('/') {
            match repo.objects.get(&t) {
                Some(super::super::state::Obj::Tree(es)) => match es.get(part) {
                    Some((_, _, s)) => t = s.clone(),
                    None => return String::new(),
                },
                _ => return String::new(),
            }
        }
        t
    };
    let list: Vec<Value> = names
        .into_iter()
        .map(|(n, (kind, sha))| {
            let p = format!("{prefix}{n}");
            match sha {
                Some(s) => {
                    let b = repo.blob(&s).cloned().unwrap_or_default();
                    repr::content_entry(u, full, &r, &p, kind, &s, Some(&b))
                }
                None => repr::content_entry(u, full, &r, &p, kind, &tree_of(&p), None),
            }
        })
        .collect();
    Ans::json(200, Value::Array(list))
}

/// `PUT contents/{path}`: one commit that writes one file on a branch (default: the default
/// branch; an empty repository gets its first commit).
fn put(repo: &mut Repo, cx: &Ctx, full: &str, path: &str, body: &Value, f: Fresh) -> Ans {
    let Some(message) = body["message"].as_str() else {
        return Ans::msg(422, "Invalid request.\n\n\"message\" wasn't supplied.");
    };
    let Some(bytes) = body["content"].as_str().and_then(b64_decode) else {
        return Ans::msg(422, "Invalid request.\n\n\"content\" wasn't supplied.");
    };
    let branch = body["branch"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| repo.default_branch.clone());
    let key = format!("refs/heads/{branch}");
    let parent = repo.refs.get(&key).cloned();
    let mut flat = match &parent {
        Some(p) => repo.flatten(&repo.commit(p).unwrap().tree.clone()),
        None => Default::default(),
    };
    let existing = flat.get(path).cloned();
    if let Some(old) = &existing
        && body["sha"].as_str() != Some(old.as_str())
    {
        return Ans::msg(
            422,
            &format!("Invalid request.\n\n\"sha\" wasn't supplied or does not match {old}."),
        );
    }
    let blob = repo.put_blob(bytes.clone());
    flat.insert(path.to_string(), blob.clone());
    let tree = repo.write_tree(&flat);
    let who = match body["committer"]["name"].as_str() {
        Some(n) => person(
            n,
            body["committer"]["email"]
                .as_str()
                .unwrap_or("ghost@example.com"),
            f.seq,
        ),
        None => person(repr::VIEWER, "viewer@example.com", f.seq),
    };
    let sha = repo.put_commit(tree, parent.into_iter().collect(), message, who, f.seq);
    repo.refs.insert(key, sha.clone());
    let mut content =
        repr::content_entry(cx.urls, full, &branch, path, "file", &blob, Some(&bytes));
    if let Some(o) = content.as_object_mut() {
        o.remove("content");
        o.remove("encoding");
    }
    let status = if existing.is_some() { 200 } else { 201 };
    Ans::json(
        status,
        json!({"content": content, "commit": repr::git_commit(cx.urls, repo, full, &sha)}),
    )
}

fn compare(repo: &Repo, cx: &Ctx, full: &str, spec: &str) -> Ans {
    let u = cx.urls;
    let Some((b, h)) = spec.split_once("...") else {
        return Ans::not_found();
    };
    let (Some(bs), Some(hs)) = (repo.resolve(b), repo.resolve(h)) else {
        return Ans::not_found();
    };
    let base_anc = repo.ancestors(&bs);
    let head_anc = repo.ancestors(&hs);
    let mut commits: Vec<(u64, String)> = head_anc
        .iter()
        .filter(|c| !base_anc.contains(*c))
        .map(|c| (repo.commit(c).unwrap().seq, c.clone()))
        .collect();
    commits.sort();
    let behind = base_anc.iter().filter(|c| !head_anc.contains(*c)).count();
    let merge_base = base_anc
        .intersection(&head_anc)
        .max_by_key(|c| repo.commit(c).map(|c| c.seq))
        .cloned()
        .unwrap_or_else(|| bs.clone());
    let all: Vec<Value> = commits
        .iter()
        .map(|(_, c)| repr::commit(u, repo, full, c))
        .collect();
    let total = all.len();
    let paged = cx.query.contains_key("per_page") || cx.query.contains_key("page");
    let (list, link) = if paged {
        let a = cx.page(
            repo.id,
            &format!("/compare/{}...{}", enc_q(b), enc_q(h)),
            all,
        );
        (a.json.unwrap(), a.link)
    } else {
        (Value::Array(all.into_iter().take(250).collect()), None)
    };
    let status = match (total, behind) {
        (0, 0) => "identical",
        (_, 0) => "ahead",
        (0, _) => "behind",
        _ => "diverged",
    };
    let api = format!("{}/repos/{full}", u.api);
    let web = format!("{}/{full}", u.web);
    let mut a = Ans::json(
        200,
        json!({
            "url": format!("{api}/compare/{spec}"), "html_url": format!("{web}/compare/{spec}"),
            "permalink_url": format!("{web}/compare/{bs}...{hs}"),
            "diff_url": format!("{web}/compare/{spec}.diff"),
            "patch_url": format!("{web}/compare/{spec}.patch"),
            "base_commit": repr::commit(u, repo, full, &bs),
            "merge_base_commit": repr::commit(u, repo, full, &merge_base),
            "status": status, "ahead_by": total, "behind_by": behind,
            "total_commits": total, "commits": list, "files": [],
        }),
    );
    a.link = link;
    a
}
