//! The git database: refs, blobs, trees, commits and annotated tags.

use std::collections::BTreeMap;

use axum::http::Method;
use base64::Engine as _;
use serde_json::Value;

use super::super::answer::Ans;
use super::super::repr;
use super::super::state::{Obj, Protection, Repo, TagObj, hash_hex, person};
use super::{Ctx, Fresh, Route};

/// GitHub's refusal of a ref write on a protected branch: a classic protection rule names the
/// ref; a ruleset lists the rules violated.
fn protected(how: Protection, full_ref: &str, rule: &str) -> Ans {
    match how {
        Protection::Classic => Ans::msg(
            422,
            &format!("Protected branch update failed for {full_ref}."),
        ),
        Protection::Ruleset => Ans::msg(
            422,
            &format!("Repository rule violations found\n\n{rule}\n\n"),
        ),
    }
}

/// GitHub's refusal of a ref write that brings commits without a verified signature onto a
/// branch that requires signed commits (as `git push` shows it: `GH006: Protected branch
/// update failed for refs/heads/main. Commits must have verified signatures.`).
fn unsigned(how: Protection, full_ref: &str) -> Ans {
    const RULE: &str = "Commits must have verified signatures.";
    match how {
        Protection::Classic => Ans::msg(
            422,
            &format!("Protected branch update failed for {full_ref}.\n\n{RULE}"),
        ),
        Protection::Ruleset => Ans::msg(
            422,
            &format!("Repository rule violations found\n\n{RULE}\n\n"),
        ),
    }
}

/// The author GitHub gives a commit an App installation creates without one, and signs:
/// the App's bot account, with its no-reply address (`<id>+<slug>[bot]@…`).
pub fn bot_person(bot: &str, seq: u64) -> super::super::state::Person {
    person(
        bot,
        &format!("{}+{bot}@users.noreply.github.com", repr::account_id(bot)),
        seq,
    )
}

pub fn handle(repo: &mut Repo, r: &Route) -> Option<Ans> {
    if let Some(answer) = read_refs(repo, r) {
        return Some(answer);
    }
    if let Some(answer) = write_refs(repo, r) {
        return Some(answer);
    }
    if let Some(answer) = blobs_and_trees(repo, r) {
        return Some(answer);
    }
    if let Some(answer) = commits(repo, r) {
        return Some(answer);
    }
    tags(repo, r)
}

/// Refs: read one, list.
fn read_refs(repo: &mut Repo, r: &Route) -> Option<Ans> {
    let Route {
        cx, m, full, rest, ..
    } = *r;
    let u = cx.urls;
    Some(match (m.clone(), rest) {
        (Method::GET, ["git", "ref", r @ ..]) => {
            if repo.refs.is_empty() {
                return Some(Ans::msg(409, "Git Repository is empty."));
            }
            let full_ref = format!("refs/{}", r.join("/"));
            match repo.refs.get(&full_ref) {
                Some(sha) => Ans::json(200, repr::git_ref(u, repo, full, &full_ref, sha)),
                None => Ans::not_found(),
            }
        }
        // Listing: `git/matching-refs/{prefix}`, and the older `git/refs[/{prefix}]`, which
        // answers the ref itself for an exact name.
        (Method::GET, ["git", kind @ ("refs" | "matching-refs"), r @ ..]) => {
            if repo.refs.is_empty() {
                return Some(Ans::msg(409, "Git Repository is empty."));
            }
            let prefix = if r.is_empty() {
                "refs/".to_string()
            } else {
                format!("refs/{}", r.join("/"))
            };
            if *kind == "refs"
                && let Some(sha) = repo.refs.get(&prefix)
            {
                return Some(Ans::json(200, repr::git_ref(u, repo, full, &prefix, sha)));
            }
            let list: Vec<Value> = repo
                .refs
                .iter()
                .filter(|(name, _)| name.starts_with(&prefix))
                .map(|(name, sha)| repr::git_ref(u, repo, full, name, sha))
                .collect();
            if list.is_empty() && *kind == "refs" {
                return Some(Ans::not_found());
            }
            Ans::json(200, Value::Array(list))
        }
        _ => return None,
    })
}

/// Refs: create, move, delete.
fn write_refs(repo: &mut Repo, r: &Route) -> Option<Ans> {
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
        (Method::POST, ["git", "refs"]) => {
            let r = body["ref"].as_str().unwrap_or("").to_string();
            let sha = body["sha"].as_str().unwrap_or("").to_string();
            if !r.starts_with("refs/") || r.matches('/').count() < 2 {
                return Some(Ans::msg(
                    422,
                    "Reference name must start with 'refs/' and have at least two slashes.",
                ));
            }
            if !repo.objects.contains_key(&sha) {
                return Some(Ans::msg(422, "Object does not exist"));
            }
            if let Some(how) = repo.protection(&r) {
                return Some(protected(
                    how,
                    &r,
                    "Cannot create ref due to creations being restricted.",
                ));
            }
            if repo.refs.contains_key(&r) {
                return Some(Ans::msg(422, "Reference already exists"));
            }
            if let Some(how) = repo.unsigned_refusal(&r, &sha) {
                return Some(unsigned(how, &r));
            }
            repo.refs.insert(r.clone(), sha.clone());
            Ans::json(201, repr::git_ref(u, repo, full, &r, &sha))
        }
        (Method::PATCH, ["git", "refs", r @ ..]) => {
            let full_ref = format!("refs/{}", r.join("/"));
            let sha = body["sha"].as_str().unwrap_or("").to_string();
            let force = body["force"].as_bool().unwrap_or(false);
            let Some(cur) = repo.refs.get(&full_ref).cloned() else {
                return Some(Ans::msg(422, "Reference does not exist"));
            };
            if !repo.objects.contains_key(&sha) {
                return Some(Ans::msg(422, "Object does not exist"));
            }
            if let Some(how) = repo.protection(&full_ref) {
                let rule = if force && !repo.ancestors(&sha).contains(&cur) {
                    "Cannot force-push to this branch"
                } else {
                    "Cannot update this protected ref."
                };
                return Some(protected(how, &full_ref, rule));
            }
            if !force && !repo.ancestors(&sha).contains(&cur) {
                return Some(Ans::msg(422, "Update is not a fast forward"));
            }
            if let Some(how) = repo.unsigned_refusal(&full_ref, &sha) {
                return Some(unsigned(how, &full_ref));
            }
            repo.refs.insert(full_ref.clone(), sha.clone());
            Ans::json(200, repr::git_ref(u, repo, full, &full_ref, &sha))
        }
        (Method::DELETE, ["git", "refs", r @ ..]) => {
            let full_ref = format!("refs/{}", r.join("/"));
            if let Some(how) = repo.protection(&full_ref) {
                return Some(protected(
                    how,
                    &full_ref,
                    "Cannot delete this protected ref.",
                ));
            }
            match repo.refs.remove(&full_ref) {
                Some(_) => Ans::empty(204),
                None => Ans::msg(422, "Reference does not exist"),
            }
        }
        _ => return None,
    })
}

/// Blobs and trees.
fn blobs_and_trees(repo: &mut Repo, r: &Route) -> Option<Ans> {
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
        (Method::POST, ["git", "blobs"]) => {
            let content = body["content"].as_str().unwrap_or("");
            let bytes = if body["encoding"].as_str() == Some("base64") {
                match b64_decode(content) {
                    Some(b) => b,
                    None => return Some(Ans::invalid("Blob", "invalid", "content")),
                }
            } else {
                content.as_bytes().to_vec()
            };
            let sha = repo.put_blob(bytes);
            Ans::json(201, repr::short_blob(u, full, &sha))
        }
        (Method::GET, ["git", "blobs", sha]) => match repo.blob(sha) {
            // `application/vnd.github.raw+json`: the bytes as they are.
            Some(b) if cx.accept.contains("vnd.github.raw") => Ans::raw(
                200,
                b.clone(),
                "application/vnd.github.raw+json; charset=utf-8",
            ),
            Some(b) => Ans::json(200, repr::blob(u, full, sha, b)),
            None => Ans::not_found(),
        },
        (Method::POST, ["git", "trees"]) => post_tree(repo, cx, full, body),
        (Method::GET, ["git", "trees", sha]) => {
            let Some(Obj::Tree(_)) = repo.objects.get(*sha) else {
                return Some(Ans::not_found());
            };
            Ans::json(
                200,
                repr::git_tree(u, repo, full, sha, cx.flag("recursive")),
            )
        }
        _ => return None,
    })
}

/// Commits.
fn commits(repo: &mut Repo, r: &Route) -> Option<Ans> {
    let Route {
        cx,
        m,
        full,
        rest,
        body,
        f,
        bot,
        ..
    } = *r;
    let u = cx.urls;
    Some(match (m.clone(), rest) {
        (Method::POST, ["git", "commits"]) => {
            let tree = body["tree"].as_str().unwrap_or("").to_string();
            if !matches!(repo.objects.get(&tree), Some(Obj::Tree(_))) {
                return Some(Ans::msg(422, "Tree SHA does not exist"));
            }
            let parents: Vec<String> = body["parents"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|p| p.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            if parents.iter().any(|p| repo.commit(p).is_none()) {
                return Some(Ans::msg(
                    422,
                    "Parent SHA does not exist or is not a commit object",
                ));
            }
            let who = |v: &Value| {
                person(
                    v["name"].as_str().unwrap_or("ghost"),
                    v["email"].as_str().unwrap_or("ghost@example.com"),
                    f.seq,
                )
            };
            // GitHub signs a commit it creates for an App installation when the request names
            // no author and no committer: the App's bot account is then both.
            let custom = body["author"].is_object() || body["committer"].is_object();
            let signed = bot.is_some() && !custom;
            let author = if body["author"].is_object() {
                who(&body["author"])
            } else if let Some(bot) = bot {
                bot_person(bot, f.seq)
            } else {
                person(repr::VIEWER, "viewer@example.com", f.seq)
            };
            let committer = if body["committer"].is_object() {
                who(&body["committer"])
            } else {
                author.clone()
            };
            let message = body["message"].as_str().unwrap_or("").to_string();
            let sha = repo.put_commit(tree, parents, &message, author, f.seq);
            if let Some(Obj::Commit(c)) = repo.objects.get_mut(&sha) {
                c.committer = committer;
                c.verified = signed;
            }
            Ans::json(201, repr::git_commit(u, repo, full, &sha))
        }
        (Method::GET, ["git", "commits", sha]) => match repo.commit(sha) {
            Some(_) => Ans::json(200, repr::git_commit(u, repo, full, sha)),
            None => Ans::not_found(),
        },
        _ => return None,
    })
}

/// Annotated tags.
fn tags(repo: &mut Repo, r: &Route) -> Option<Ans> {
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
        (Method::POST, ["git", "tags"]) => {
            let object = body["object"].as_str().unwrap_or("").to_string();
            if !repo.objects.contains_key(&object) {
                return Some(Ans::msg(422, "Object does not exist"));
            }
            let t = TagObj {
                tag: body["tag"].as_str().unwrap_or("").into(),
                message: body["message"].as_str().unwrap_or("").into(),
                object: object.clone(),
                kind: body["type"].as_str().unwrap_or("commit").into(),
                tagger: person(
                    body["tagger"]["name"].as_str().unwrap_or("ghost"),
                    body["tagger"]["email"]
                        .as_str()
                        .unwrap_or("ghost@example.com"),
                    f.seq,
                ),
            };
            let sha = hash_hex(
                "tag",
                &[
                    t.tag.as_bytes(),
                    t.message.as_bytes(),
                    object.as_bytes(),
                    &f.seq.to_le_bytes(),
                ],
            );
            repo.objects.insert(sha.clone(), Obj::Tag(t));
            Ans::json(201, repr::git_tag(u, repo, full, &sha))
        }
        (Method::GET, ["git", "tags", sha]) => match repo.objects.get(*sha) {
            Some(Obj::Tag(_)) => Ans::json(200, repr::git_tag(u, repo, full, sha)),
            _ => Ans::not_found(),
        },

        _ => return None,
    })
}

pub fn b64_decode(s: &str) -> Option<Vec<u8>> {
    let clean: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD.decode(clean).ok()
}

/// `POST git/trees`: entries with `content`, `sha` (blob or tree), or `sha: null` (delete),
/// on top of `base_tree`.
fn post_tree(repo: &mut Repo, cx: &Ctx, full: &str, body: &Value) -> Ans {
    let mut flat = match body["base_tree"].as_str() {
        Some(bt) => {
            if !matches!(repo.objects.get(bt), Some(Obj::Tree(_))) {
                return Ans::msg(422, "base_tree is not a valid tree oid");
            }
            repo.flatten(bt)
        }
        None => BTreeMap::new(),
    };
    let Some(entries) = body["tree"].as_array() else {
        return Ans::invalid("Tree", "missing_field", "tree");
    };
    for e in entries {
        let path = e["path"]
            .as_str()
            .unwrap_or("")
            .trim_matches('/')
            .to_string();
        if path.is_empty() {
            return Ans::invalid("Tree", "invalid", "tree.path");
        }
        let kind = e["type"].as_str().unwrap_or("blob");
        if let Some(content) = e["content"].as_str() {
            let s = repo.put_blob(content.as_bytes().to_vec());
            flat.insert(path, s);
        } else if e["sha"].is_null() {
            let prefix = format!("{path}/");
            let before = flat.len();
            flat.retain(|p, _| *p != path && !p.starts_with(&prefix));
            if flat.len() == before {
                return Ans::msg(422, "GitRPC::BadObjectState");
            }
        } else {
            let sha = e["sha"].as_str().unwrap_or("").to_string();
            match (kind, repo.objects.get(&sha)) {
                ("blob", Some(Obj::Blob(_))) => {
                    flat.insert(path, sha);
                }
                ("tree", Some(Obj::Tree(_))) => {
                    let prefix = format!("{path}/");
                    flat.retain(|p, _| !p.starts_with(&prefix));
                    for (p, s) in repo.flatten(&sha) {
                        flat.insert(format!("{prefix}{p}"), s);
                    }
                }
                _ => return Ans::msg(422, &format!("tree.sha {sha} is not a valid {kind}")),
            }
        }
    }
    let sha = repo.write_tree(&flat);
    Ans::json(201, repr::git_tree(cx.urls, repo, full, &sha, false))
}
