//! Releases and their assets: drafts visible only with a token, one published release per
//! tag, the tag created on publication, GitHub's "Latest" (`make_latest`), uploads on the
//! upload host, downloads redirected (302) to another host.

use axum::http::Method;
use serde_json::Value;

use super::super::answer::Ans;
use super::super::repr;
use super::super::state::{Asset, Rel, Repo};
use super::{Ctx, Fresh, Route, is_num};

pub fn handle(repo: &mut Repo, r: &Route) -> Option<Ans> {
    if let Some(answer) = releases(repo, r) {
        return Some(answer);
    }
    if let Some(answer) = assets(repo, r) {
        return Some(answer);
    }
    by_id(repo, r)
}

/// Releases: list, create, the latest, by tag.
fn releases(repo: &mut Repo, r: &Route) -> Option<Ans> {
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
    let rj = |r: &Rel| repr::release(u, full, r);
    Some(match (m.clone(), rest) {
        (Method::GET, ["releases"]) => {
            let mut rels: Vec<&Rel> = repo
                .releases
                .iter()
                .filter(|r| cx.authed || !r.draft)
                .collect();
            rels.sort_by_key(|r| std::cmp::Reverse(r.seq));
            let items = rels.into_iter().map(rj).collect();
            cx.page(repo.id, "/releases", items)
        }
        (Method::POST, ["releases"]) => create(repo, cx, full, body, f),
        (Method::GET, ["releases", "latest"]) => match repo.latest_release() {
            Some(r) => Ans::json(200, rj(r)),
            None => Ans::not_found(),
        },
        (Method::GET, ["releases", "tags", tag]) => {
            match repo
                .releases
                .iter()
                .filter(|r| r.tag == *tag && !r.draft)
                .max_by_key(|r| r.seq)
            {
                Some(r) => Ans::json(200, rj(r)),
                None => Ans::not_found(),
            }
        }
        _ => return None,
    })
}

/// Release assets by id: read (or download), edit, delete.
fn assets(repo: &mut Repo, r: &Route) -> Option<Ans> {
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
        (Method::GET, ["releases", "assets", aid]) => {
            let Some((r, a)) = find_asset(repo, aid) else {
                return Some(Ans::not_found());
            };
            if r.draft && !cx.authed {
                return Some(Ans::not_found());
            }
            if cx.accept.contains("application/octet-stream") {
                // Like objects.githubusercontent.com: another host, a pre-signed URL.
                let mut ans = Ans::empty(302);
                ans.location = Some(format!(
                    "{}/downloads/{}/{}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=300&X-Amz-Signature={}",
                    u.objects, a.id, a.name, cx.download_key
                ));
                return Some(ans);
            }
            Ans::json(200, repr::asset(u, full, r, a))
        }
        (Method::PATCH, ["releases", "assets", aid]) => {
            let Some(r) = repo
                .releases
                .iter_mut()
                .find(|r| r.assets.iter().any(|a| a.id.to_string() == *aid))
            else {
                return Some(Ans::not_found());
            };
            let i = r.assets.iter().position(|a| a.id.to_string() == *aid)?;
            if let Some(n) = body["name"].as_str() {
                if r.assets
                    .iter()
                    .any(|a| a.name == n && a.id.to_string() != *aid)
                {
                    return Some(Ans::invalid("ReleaseAsset", "already_exists", "name"));
                }
                r.assets[i].name = n.to_string();
            }
            if let Some(l) = body["label"].as_str() {
                r.assets[i].label = l.to_string();
            }
            r.assets[i].updated = f.seq;
            let r = r.clone();
            Ans::json(200, repr::asset(u, full, &r, &r.assets[i]))
        }
        (Method::DELETE, ["releases", "assets", aid]) => {
            for r in &mut repo.releases {
                if let Some(i) = r.assets.iter().position(|a| a.id.to_string() == *aid) {
                    r.assets.remove(i);
                    return Some(Ans::empty(204));
                }
            }
            Ans::not_found()
        }
        _ => return None,
    })
}

/// One release by id: read, edit, delete, its assets, an upload.
fn by_id(repo: &mut Repo, r: &Route) -> Option<Ans> {
    let Route {
        cx,
        m,
        full,
        rest,
        body,
        raw,
        f,
        ..
    } = *r;
    let u = cx.urls;
    let rj = |r: &Rel| repr::release(u, full, r);
    Some(match (m.clone(), rest) {
        (Method::GET, ["releases", rid]) if is_num(rid) => match find_rel(repo, rid) {
            Some(r) if cx.authed || !r.draft => Ans::json(200, rj(r)),
            _ => Ans::not_found(),
        },
        (Method::PATCH, ["releases", rid]) if is_num(rid) => update(repo, cx, full, rid, body, f),
        (Method::DELETE, ["releases", rid]) if is_num(rid) => {
            match repo.releases.iter().position(|r| r.id.to_string() == *rid) {
                Some(i) => {
                    repo.releases.remove(i);
                    Ans::empty(204)
                }
                None => Ans::not_found(),
            }
        }
        (Method::GET, ["releases", rid, "assets"]) if !cx.upload => match find_rel(repo, rid) {
            Some(r) if cx.authed || !r.draft => {
                let items = r
                    .assets
                    .iter()
                    .map(|a| repr::asset(u, full, r, a))
                    .collect();
                cx.page(repo.id, &format!("/releases/{rid}/assets"), items)
            }
            _ => Ans::not_found(),
        },
        (Method::POST, ["releases", rid, "assets"]) if cx.upload => {
            let Some(name) = cx.query.get("name").cloned().filter(|n| !n.is_empty()) else {
                return Some(Ans::invalid("ReleaseAsset", "missing_field", "name"));
            };
            let Some(r) = repo.releases.iter_mut().find(|r| r.id.to_string() == *rid) else {
                return Some(Ans::not_found());
            };
            if r.assets.iter().any(|a| a.name == name) {
                return Some(Ans::invalid("ReleaseAsset", "already_exists", "name"));
            }
            let content_type = match cx.content_type {
                "" => "application/octet-stream",
                ct => ct,
            };
            r.assets.push(Asset {
                id: f.id,
                name,
                label: cx.query.get("label").cloned().unwrap_or_default(),
                content_type: content_type.to_string(),
                bytes: raw.to_vec(),
                seq: f.seq,
                updated: f.seq,
            });
            let r = r.clone();
            Ans::json(201, repr::asset(u, full, &r, r.assets.last().unwrap()))
        }

        _ => return None,
    })
}

fn find_rel<'a>(repo: &'a Repo, rid: &str) -> Option<&'a Rel> {
    repo.releases.iter().find(|r| r.id.to_string() == rid)
}

fn find_asset<'a>(repo: &'a Repo, aid: &str) -> Option<(&'a Rel, &'a Asset)> {
    repo.releases.iter().find_map(|r| {
        r.assets
            .iter()
            .find(|a| a.id.to_string() == aid)
            .map(|a| (r, a))
    })
}

/// Create the tag of a release being published, at its target, unless it exists; the
/// refusal if the target does not resolve.
fn tag_on_publish(repo: &mut Repo, r: &Rel) -> Option<Ans> {
    if repo.refs.contains_key(&format!("refs/tags/{}", r.tag)) {
        return None;
    }
    let Some(c) = repo.resolve(&r.target) else {
        return Some(Ans::invalid("Release", "invalid", "target_commitish"));
    };
    repo.refs.insert(format!("refs/tags/{}", r.tag), c);
    None
}

fn create(repo: &mut Repo, cx: &Ctx, full: &str, body: &Value, f: Fresh) -> Ans {
    let tag = body["tag_name"].as_str().unwrap_or("").to_string();
    if tag.is_empty() {
        return Ans::invalid("Release", "missing_field", "tag_name");
    }
    let draft = body["draft"].as_bool().unwrap_or(false);
    if !draft && repo.releases.iter().any(|r| r.tag == tag && !r.draft) {
        return Ans::invalid("Release", "already_exists", "tag_name");
    }
    let r = Rel {
        id: f.id,
        tag,
        target: body["target_commitish"]
            .as_str()
            .unwrap_or(&repo.default_branch)
            .to_string(),
        name: body["name"].as_str().map(str::to_string),
        body: body["body"].as_str().map(str::to_string),
        draft,
        prerelease: body["prerelease"].as_bool().unwrap_or(false),
        assets: vec![],
        seq: f.seq,
        published: (!draft).then_some(f.seq),
    };
    if !draft && let Some(a) = tag_on_publish(repo, &r) {
        return a;
    }
    let j = repr::release(cx.urls, full, &r);
    repo.releases.push(r);
    repo.make_latest(f.id, body["make_latest"].as_str(), !draft);
    Ans::json(201, j)
}

fn update(repo: &mut Repo, cx: &Ctx, full: &str, rid: &str, body: &Value, f: Fresh) -> Ans {
    let Some(idx) = repo.releases.iter().position(|r| r.id.to_string() == rid) else {
        return Ans::not_found();
    };
    let mut r = repo.releases[idx].clone();
    let was_draft = r.draft;
    if let Some(t) = body["tag_name"].as_str() {
        r.tag = t.into();
    }
    if let Some(t) = body["target_commitish"].as_str() {
        r.target = t.into();
    }
    if let Some(n) = body["name"].as_str() {
        r.name = Some(n.into());
    }
    if let Some(b) = body["body"].as_str() {
        r.body = Some(b.into());
    }
    if let Some(p) = body["prerelease"].as_bool() {
        r.prerelease = p;
    }
    if let Some(d) = body["draft"].as_bool() {
        r.draft = d;
    }
    if !r.draft {
        if repo
            .releases
            .iter()
            .any(|o| o.id != r.id && o.tag == r.tag && !o.draft)
        {
            return Ans::invalid("Release", "already_exists", "tag_name");
        }
        if let Some(a) = tag_on_publish(repo, &r) {
            return a;
        }
        if was_draft {
            r.published = Some(f.seq);
        }
    } else {
        r.published = None;
    }
    let id = r.id;
    let newly_published = was_draft && !r.draft;
    repo.releases[idx] = r;
    repo.make_latest(id, body["make_latest"].as_str(), newly_published);
    Ans::json(200, repr::release(cx.urls, full, &repo.releases[idx]))
}
