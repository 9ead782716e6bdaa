//! GitHub's JSON representations of the fake's state, complete enough to be valid against
//! GitHub's OpenAPI description and shaped like recorded api.github.com answers.

use serde_json::{Value, json};

use super::state::{
    Asset, Comment, CommitObj, Issue, Label, Obj, Person, Pull, Rel, Repo, date_of, hash_hex,
    sha256_hex,
};

/// The bases of every URL the fake writes into its answers.
#[derive(Debug, Clone)]
pub struct Urls {
    /// API base (`http://host:port` or `http://host:port/api/v3`).
    pub api: String,
    /// Web origin for `html_url`s (`http://host:port`).
    pub web: String,
    /// Upload base (`http://host:port2` like uploads.github.com, or `…/api/uploads`).
    pub uploads: String,
    /// Where asset downloads are redirected (another host, like objects.githubusercontent.com).
    pub objects: String,
}

/// The user every token belongs to (the author of what the API creates).
pub const VIEWER: &str = "stackbot-fake-user";

/// A stable numeric id for an account name.
pub fn account_id(login: &str) -> u64 {
    let h = sha256_hex(login.as_bytes());
    10_000 + u64::from_str_radix(&h[..8], 16).unwrap_or(0) % 90_000_000
}

/// `simple-user`: an account (`User` or `Organization`).
pub fn user(u: &Urls, login: &str, kind: &str) -> Value {
    let id = account_id(login);
    let api = format!("{}/users/{login}", u.api);
    json!({
        "login": login, "id": id, "node_id": format!("U_{id}"),
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{id}?v=4"),
        "gravatar_id": "", "url": api, "html_url": format!("{}/{login}", u.web),
        "followers_url": format!("{api}/followers"),
        "following_url": format!("{api}/following{{/other_user}}"),
        "gists_url": format!("{api}/gists{{/gist_id}}"),
        "starred_url": format!("{api}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{api}/subscriptions"),
        "organizations_url": format!("{api}/orgs"),
        "repos_url": format!("{api}/repos"),
        "events_url": format!("{api}/events{{/privacy}}"),
        "received_events_url": format!("{api}/received_events"),
        "type": kind, "user_view_type": "public", "site_admin": false,
    })
}

/// The token owner.
pub fn viewer(u: &Urls) -> Value {
    user(u, VIEWER, "User")
}

fn owner_of(full: &str) -> &str {
    full.split_once('/').map(|(o, _)| o).unwrap_or(full)
}

/// The API links of a repository (`{api}/repos/{owner}/{name}` + suffix).
const REPO_URLS: &[(&str, &str)] = &[
    ("forks_url", "/forks"),
    ("keys_url", "/keys{/key_id}"),
    ("collaborators_url", "/collaborators{/collaborator}"),
    ("teams_url", "/teams"),
    ("hooks_url", "/hooks"),
    ("issue_events_url", "/issues/events{/number}"),
    ("events_url", "/events"),
    ("assignees_url", "/assignees{/user}"),
    ("branches_url", "/branches{/branch}"),
    ("tags_url", "/tags"),
    ("blobs_url", "/git/blobs{/sha}"),
    ("git_tags_url", "/git/tags{/sha}"),
    ("git_refs_url", "/git/refs{/sha}"),
    ("trees_url", "/git/trees{/sha}"),
    ("statuses_url", "/statuses/{sha}"),
    ("languages_url", "/languages"),
    ("stargazers_url", "/stargazers"),
    ("contributors_url", "/contributors"),
    ("subscribers_url", "/subscribers"),
    ("subscription_url", "/subscription"),
    ("commits_url", "/commits{/sha}"),
    ("git_commits_url", "/git/commits{/sha}"),
    ("comments_url", "/comments{/number}"),
    ("issue_comment_url", "/issues/comments{/number}"),
    ("contents_url", "/contents/{+path}"),
    ("compare_url", "/compare/{base}...{head}"),
    ("merges_url", "/merges"),
    ("archive_url", "/{archive_format}{/ref}"),
    ("downloads_url", "/downloads"),
    ("issues_url", "/issues{/number}"),
    ("pulls_url", "/pulls{/number}"),
    ("milestones_url", "/milestones{/number}"),
    (
        "notifications_url",
        "/notifications{?since,all,participating}",
    ),
    ("labels_url", "/labels{/name}"),
    ("releases_url", "/releases{/id}"),
    ("deployments_url", "/deployments"),
];

/// `repository` (`full: false`) or `full-repository` (`full: true`).
pub fn repo(u: &Urls, r: &Repo, full_name: &str, full: bool) -> Value {
    let (owner, name) = full_name.split_once('/').unwrap_or((full_name, full_name));
    let api = format!("{}/repos/{full_name}", u.api);
    let web = format!("{}/{full_name}", u.web);
    let open = r.issues.iter().filter(|i| i.state == "open").count()
        + r.pulls.iter().filter(|p| p.state == "open").count();
    let pushed = r
        .refs
        .values()
        .filter_map(|s| r.commit(s).map(|c| c.seq))
        .max()
        .unwrap_or(r.seq);
    let owner_json = user(u, owner, "Organization");
    let mut v = json!({
        "id": r.id, "node_id": format!("R_{}", r.id), "name": name, "full_name": full_name,
        "private": false, "owner": owner_json, "html_url": web, "description": r.description,
        "fork": false, "url": api,
    });
    let more = json!({
        "created_at": date_of(r.seq), "updated_at": date_of(r.seq), "pushed_at": date_of(pushed),
        "git_url": format!("git:{}/{full_name}.git", u.web.trim_start_matches("http:").trim_start_matches("https:")),
        "ssh_url": format!("git@fake-github:{full_name}.git"),
        "clone_url": format!("{web}.git"), "svn_url": web.clone(), "homepage": null,
        "size": 0, "stargazers_count": 0, "watchers_count": 0, "language": null,
        "has_issues": true, "has_projects": true, "has_downloads": true, "has_wiki": true,
        "has_pages": false, "has_discussions": false, "forks_count": 0, "mirror_url": null,
        "archived": r.archived, "disabled": false, "open_issues_count": open, "license": null,
        "allow_forking": true, "is_template": false, "web_commit_signoff_required": false,
        "topics": [], "visibility": "public", "forks": 0, "open_issues": open, "watchers": 0,
        "default_branch": r.default_branch,
        "permissions": {"admin": true, "maintain": true, "push": true, "triage": true, "pull": true},
    });
    for (k, x) in more.as_object().unwrap() {
        v[k] = x.clone();
    }
    for (k, suffix) in REPO_URLS {
        v[*k] = json!(format!("{api}{suffix}"));
    }
    if full {
        let extra = json!({
            "temp_clone_token": "", "allow_squash_merge": true, "allow_merge_commit": true,
            "allow_rebase_merge": true, "allow_auto_merge": r.allow_auto_merge, "delete_branch_on_merge": false,
            "allow_update_branch": false, "use_squash_pr_title_as_default": false,
            "squash_merge_commit_title": "COMMIT_OR_PR_TITLE", "squash_merge_commit_message": "COMMIT_MESSAGES",
            "merge_commit_title": "MERGE_MESSAGE", "merge_commit_message": "PR_TITLE",
            "organization": user(u, owner, "Organization"),
            "network_count": 0, "subscribers_count": 0,
        });
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
    }
    v
}

fn git_person(p: &Person) -> Value {
    json!({"name": p.name, "email": p.email, "date": p.date})
}

/// A commit's `verification`: GitHub's signature of the commits it signs itself, checked
/// against GitHub's key (`valid`), or none (`unsigned`).
fn verification(c: &CommitObj) -> Value {
    if !c.verified {
        return unsigned();
    }
    let payload = format!(
        "tree {}\n{}author {} <{}> {}\ncommitter {} <{}> {}\n\n{}",
        c.tree,
        c.parents
            .iter()
            .map(|p| format!("parent {p}\n"))
            .collect::<String>(),
        c.author.name,
        c.author.email,
        c.author.date,
        c.committer.name,
        c.committer.email,
        c.committer.date,
        c.message
    );
    let signature = format!(
        "-----BEGIN PGP SIGNATURE-----\n\nwsBcBAABCAAQBQJ{}\n-----END PGP SIGNATURE-----\n",
        hash_hex("signature", &[payload.as_bytes()])
    );
    json!({"verified": true, "reason": "valid", "signature": signature, "payload": payload,
           "verified_at": c.committer.date})
}

fn unsigned() -> Value {
    json!({"verified": false, "reason": "unsigned", "signature": null, "payload": null,
           "verified_at": null})
}

/// `git-ref`.
pub fn git_ref(u: &Urls, repo: &Repo, full: &str, r: &str, sha: &str) -> Value {
    let kind = match repo.objects.get(sha) {
        Some(Obj::Tag(_)) => "tag",
        Some(Obj::Tree(_)) => "tree",
        Some(Obj::Blob(_)) => "blob",
        _ => "commit",
    };
    let api = format!("{}/repos/{full}", u.api);
    json!({"ref": r, "node_id": format!("REF_{}", &sha[..12.min(sha.len())]),
           "url": format!("{api}/git/{r}"),
           "object": {"sha": sha, "type": kind, "url": format!("{api}/git/{kind}s/{sha}")}})
}

/// `git-commit` (the git database view of a commit).
pub fn git_commit(u: &Urls, repo: &Repo, full: &str, sha: &str) -> Value {
    let c = repo.commit(sha).expect("commit exists");
    let api = format!("{}/repos/{full}", u.api);
    json!({
        "sha": sha, "node_id": format!("C_{sha}"), "url": format!("{api}/git/commits/{sha}"),
        "html_url": format!("{}/{full}/commit/{sha}", u.web),
        "author": git_person(&c.author), "committer": git_person(&c.committer),
        "message": c.message,
        "tree": {"sha": c.tree, "url": format!("{api}/git/trees/{}", c.tree)},
        "parents": c.parents.iter().map(|p| json!({"sha": p, "url": format!("{api}/git/commits/{p}"),
            "html_url": format!("{}/{full}/commit/{p}", u.web)})).collect::<Vec<_>>(),
        "verification": verification(c),
    })
}

/// `commit` (the repository view, as listed by compare).
pub fn commit(u: &Urls, repo: &Repo, full: &str, sha: &str) -> Value {
    let c = repo.commit(sha).expect("commit exists");
    let api = format!("{}/repos/{full}", u.api);
    json!({
        "sha": sha, "node_id": format!("C_{sha}"), "url": format!("{api}/commits/{sha}"),
        "html_url": format!("{}/{full}/commit/{sha}", u.web),
        "comments_url": format!("{api}/commits/{sha}/comments"),
        "commit": {
            "url": format!("{api}/git/commits/{sha}"),
            "author": git_person(&c.author), "committer": git_person(&c.committer),
            "message": c.message, "comment_count": 0,
            "tree": {"sha": c.tree, "url": format!("{api}/git/trees/{}", c.tree)},
            "verification": verification(c),
        },
        "author": null, "committer": null,
        "parents": c.parents.iter().map(|p| json!({"sha": p, "url": format!("{api}/commits/{p}"),
            "html_url": format!("{}/{full}/commit/{p}", u.web)})).collect::<Vec<_>>(),
    })
}

/// `git-tag`.
pub fn git_tag(u: &Urls, repo: &Repo, full: &str, sha: &str) -> Value {
    let Some(Obj::Tag(t)) = repo.objects.get(sha) else {
        return Value::Null;
    };
    let api = format!("{}/repos/{full}", u.api);
    json!({"sha": sha, "node_id": format!("TAG_{sha}"), "url": format!("{api}/git/tags/{sha}"),
           "tag": t.tag, "message": t.message, "tagger": git_person(&t.tagger),
           "object": {"sha": t.object, "type": t.kind, "url": format!("{api}/git/{}s/{}", t.kind, t.object)},
           "verification": unsigned()})
}

/// `git-tree`, optionally recursive.
pub fn git_tree(u: &Urls, repo: &Repo, full: &str, sha: &str, recursive: bool) -> Value {
    let api = format!("{}/repos/{full}", u.api);
    let mut entries = Vec::new();
    fn walk(
        repo: &Repo,
        api: &str,
        sha: &str,
        prefix: &str,
        recursive: bool,
        out: &mut Vec<Value>,
    ) {
        if let Some(Obj::Tree(es)) = repo.objects.get(sha) {
            for (n, (mode, t, s)) in es {
                let p = format!("{prefix}{n}");
                let mut e = json!({"path": p, "mode": mode, "type": t, "sha": s,
                                   "url": format!("{api}/git/{t}s/{s}")});
                if let Some(b) = repo.blob(s) {
                    e["size"] = json!(b.len());
                }
                out.push(e);
                if recursive && t == "tree" {
                    walk(repo, api, s, &format!("{p}/"), recursive, out);
                }
            }
        }
    }
    walk(repo, &api, sha, "", recursive, &mut entries);
    json!({"sha": sha, "url": format!("{api}/git/trees/{sha}"), "tree": entries, "truncated": false})
}

/// `short-blob` (the answer to creating a blob).
pub fn short_blob(u: &Urls, full: &str, sha: &str) -> Value {
    json!({"sha": sha, "url": format!("{}/repos/{full}/git/blobs/{sha}", u.api)})
}

/// `blob`.
pub fn blob(u: &Urls, full: &str, sha: &str, bytes: &[u8]) -> Value {
    json!({"sha": sha, "node_id": format!("B_{sha}"), "size": bytes.len(), "encoding": "base64",
           "content": b64_lines(bytes), "url": format!("{}/repos/{full}/git/blobs/{sha}", u.api)})
}

/// One entry of the contents API (`content-file` with `content`, or a directory listing item).
pub fn content_entry(
    u: &Urls,
    full: &str,
    git_ref: &str,
    path: &str,
    kind: &str,
    sha: &str,
    bytes: Option<&[u8]>,
) -> Value {
    let api = format!("{}/repos/{full}", u.api);
    let name = path.rsplit('/').next().unwrap_or(path);
    let (git_url, html_url) = match kind {
        "dir" => (
            format!("{api}/git/trees/{sha}"),
            format!("{}/{full}/tree/{git_ref}/{path}", u.web),
        ),
        _ => (
            format!("{api}/git/blobs/{sha}"),
            format!("{}/{full}/blob/{git_ref}/{path}", u.web),
        ),
    };
    let self_url = format!("{api}/contents/{path}?ref={git_ref}");
    json!({
        "type": kind, "name": name, "path": path, "sha": sha,
        "size": bytes.map(|b| b.len()).unwrap_or(0),
        "url": self_url, "git_url": git_url, "html_url": html_url,
        "download_url": if kind == "file" { json!(format!("{}/raw/{full}/{git_ref}/{path}", u.web)) } else { Value::Null },
        "_links": {"self": self_url, "git": git_url, "html": html_url},
    })
}

/// `release`.
pub fn release(u: &Urls, full: &str, r: &Rel) -> Value {
    let api = format!("{}/repos/{full}", u.api);
    let updated = r
        .assets
        .iter()
        .map(|a| a.updated)
        .chain(r.published)
        .max()
        .unwrap_or(r.seq);
    json!({
        "url": format!("{api}/releases/{}", r.id),
        "html_url": if r.draft { format!("{}/{full}/releases/tag/untagged-{}", u.web, r.id) }
                    else { format!("{}/{full}/releases/tag/{}", u.web, r.tag) },
        "assets_url": format!("{api}/releases/{}/assets", r.id),
        "upload_url": format!("{}/repos/{full}/releases/{}/assets{{?name,label}}", u.uploads, r.id),
        "tarball_url": if r.draft { Value::Null } else { json!(format!("{api}/tarball/{}", r.tag)) },
        "zipball_url": if r.draft { Value::Null } else { json!(format!("{api}/zipball/{}", r.tag)) },
        "id": r.id, "node_id": format!("RE_{}", r.id), "author": viewer(u),
        "tag_name": r.tag, "target_commitish": r.target, "name": r.name, "body": r.body,
        "draft": r.draft, "prerelease": r.prerelease, "immutable": false,
        "created_at": date_of(r.seq), "updated_at": date_of(updated),
        "published_at": r.published.map(date_of),
        "assets": r.assets.iter().map(|a| asset(u, full, r, a)).collect::<Vec<_>>(),
    })
}

/// `release-asset`.
pub fn asset(u: &Urls, full: &str, r: &Rel, a: &Asset) -> Value {
    let tag = if r.draft {
        format!("untagged-{}", r.id)
    } else {
        r.tag.clone()
    };
    json!({
        "url": format!("{}/repos/{full}/releases/assets/{}", u.api, a.id),
        "browser_download_url": format!("{}/{full}/releases/download/{tag}/{}", u.web, a.name),
        "id": a.id, "node_id": format!("RA_{}", a.id), "name": a.name,
        "label": if a.label.is_empty() { Value::Null } else { json!(a.label) },
        "uploader": viewer(u), "content_type": a.content_type, "state": "uploaded",
        "size": a.bytes.len(), "digest": format!("sha256:{}", sha256_hex(&a.bytes)),
        "download_count": 0, "created_at": date_of(a.seq), "updated_at": date_of(a.updated),
    })
}

fn reactions(url: String) -> Value {
    json!({"url": url, "total_count": 0, "+1": 0, "-1": 0, "laugh": 0, "hooray": 0,
           "confused": 0, "heart": 0, "rocket": 0, "eyes": 0})
}

/// `pull-request` (`single`) or `pull-request-simple` (in lists).
pub fn pull(u: &Urls, repo: &Repo, full: &str, p: &Pull, single: bool) -> Value {
    let owner = owner_of(full);
    let api = format!("{}/repos/{full}", u.api);
    let html = format!("{}/{full}/pull/{}", u.web, p.number);
    let sha = |b: &str| {
        repo.refs
            .get(&format!("refs/heads/{b}"))
            .cloned()
            .unwrap_or_default()
    };
    let side = |b: &str| {
        json!({"label": format!("{owner}:{b}"), "ref": b, "sha": sha(b),
               "user": user(u, owner, "Organization"), "repo": self::repo(u, repo, full, false)})
    };
    let n = p.number;
    let links = json!({
        "self": {"href": format!("{api}/pulls/{n}")}, "html": {"href": html},
        "issue": {"href": format!("{api}/issues/{n}")},
        "comments": {"href": format!("{api}/issues/{n}/comments")},
        "review_comments": {"href": format!("{api}/pulls/{n}/comments")},
        "review_comment": {"href": format!("{api}/pulls/comments{{/number}}")},
        "commits": {"href": format!("{api}/pulls/{n}/commits")},
        "statuses": {"href": format!("{api}/statuses/{}", sha(&p.head))},
    });
    let mut v = json!({
        "url": format!("{api}/pulls/{n}"), "id": p.id, "node_id": format!("PR_{}", p.id),
        "html_url": html, "diff_url": format!("{html}.diff"), "patch_url": format!("{html}.patch"),
        "issue_url": format!("{api}/issues/{n}"), "commits_url": format!("{api}/pulls/{n}/commits"),
        "review_comments_url": format!("{api}/pulls/{n}/comments"),
        "review_comment_url": format!("{api}/pulls/comments{{/number}}"),
        "comments_url": format!("{api}/issues/{n}/comments"),
        "statuses_url": format!("{api}/statuses/{}", sha(&p.head)),
        "number": n, "state": p.state, "locked": false, "title": p.title, "user": viewer(u),
        "body": p.body,
        // The pulls API's label items declare `description` a string (never null).
        "labels": p.labels.iter().filter_map(|l| repo.labels.iter().find(|x| x.name == *l))
            .map(|l| {
                let mut v = label(u, full, l);
                v["description"] = json!(l.description.clone().unwrap_or_default());
                v
            })
            .collect::<Vec<_>>(),
        "milestone": null, "active_lock_reason": null,
        "created_at": date_of(p.seq), "updated_at": date_of(p.updated),
        "closed_at": p.closed.map(date_of),
        "merged_at": if p.merged { p.closed.map(date_of).map(Value::from).unwrap_or(Value::Null) } else { Value::Null },
        "merge_commit_sha": p.merge_commit, "assignee": null, "assignees": [],
        "requested_reviewers": [], "requested_teams": [], "draft": false,
        "head": side(&p.head), "base": side(&p.base),
        "_links": links,
        "author_association": "MEMBER",
        "auto_merge": if p.auto_merge {
            json!({"enabled_by": viewer(u), "merge_method": "merge",
                   "commit_title": p.title, "commit_message": ""})
        } else {
            Value::Null
        },
    });
    if single {
        let comments = repo.comments.iter().filter(|c| c.issue == n).count();
        let extra = json!({
            "merged": p.merged, "mergeable": if p.state == "open" { json!(true) } else { Value::Null },
            "rebaseable": null, "mergeable_state": if p.state == "open" { "clean" } else { "unknown" },
            "merged_by": if p.merged { viewer(u) } else { Value::Null },
            "comments": comments, "review_comments": 0, "maintainer_can_modify": false,
            "commits": 1, "additions": 0, "deletions": 0, "changed_files": 0,
        });
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
    }
    v
}

/// `issue` (a pull request listed as an issue carries `pull_request`).
pub fn issue(u: &Urls, repo: &Repo, full: &str, i: &Issue) -> Value {
    let api = format!("{}/repos/{full}", u.api);
    let n = i.number;
    let comments = repo.comments.iter().filter(|c| c.issue == n).count();
    json!({
        "url": format!("{api}/issues/{n}"), "repository_url": api,
        "labels_url": format!("{api}/issues/{n}/labels{{/name}}"),
        "comments_url": format!("{api}/issues/{n}/comments"),
        "events_url": format!("{api}/issues/{n}/events"),
        "html_url": format!("{}/{full}/issues/{n}", u.web),
        "id": i.id, "node_id": format!("I_{}", i.id), "number": n, "title": i.title,
        "user": viewer(u),
        "labels": i.labels.iter().filter_map(|l| repo.labels.iter().find(|x| x.name == *l))
            .map(|l| label(u, full, l)).collect::<Vec<_>>(),
        "state": i.state, "locked": false, "assignee": null, "assignees": [], "milestone": null,
        "comments": comments, "created_at": date_of(i.seq), "updated_at": date_of(i.seq),
        "closed_at": null, "author_association": "MEMBER", "active_lock_reason": null,
        "body": i.body, "closed_by": null, "reactions": reactions(format!("{api}/issues/{n}/reactions")),
        "timeline_url": format!("{api}/issues/{n}/timeline"), "performed_via_github_app": null,
        "state_reason": null,
    })
}

/// `label`.
pub fn label(u: &Urls, full: &str, l: &Label) -> Value {
    json!({"id": l.id, "node_id": format!("LA_{}", l.id),
           "url": format!("{}/repos/{full}/labels/{}", u.api, l.name), "name": l.name,
           "color": l.color, "default": false, "description": l.description})
}

/// `issue-comment`.
pub fn comment(u: &Urls, full: &str, c: &Comment) -> Value {
    let api = format!("{}/repos/{full}", u.api);
    json!({"id": c.id, "node_id": format!("IC_{}", c.id), "body": c.body, "user": viewer(u),
           "url": format!("{api}/issues/comments/{}", c.id),
           "html_url": format!("{}/{full}/issues/{}#issuecomment-{}", u.web, c.issue, c.id),
           "issue_url": format!("{api}/issues/{}", c.issue),
           "created_at": date_of(c.seq), "updated_at": date_of(c.updated),
           "author_association": "MEMBER", "performed_via_github_app": null,
           "reactions": reactions(format!("{api}/issues/comments/{}/reactions", c.id))})
}

/// Base64 in 60-character lines, as the contents and blobs APIs send it.
pub fn b64_lines(b: &[u8]) -> String {
    use base64::Engine as _;
    let s = base64::engine::general_purpose::STANDARD.encode(b);
    let mut out = String::with_capacity(s.len() + s.len() / 60 + 1);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && i % 60 == 0 {
            out.push('\n');
        }
        out.push(ch);
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// `workflow-run`.
pub fn workflow_run(u: &Urls, repo_state: &Repo, full: &str, run: &super::state::Run) -> Value {
    let api = format!("{}/repos/{full}", u.api);
    let path = repo_state
        .actions
        .workflows
        .iter()
        .find(|w| w.id == run.workflow_id)
        .map(|w| (w.path.clone(), w.name.clone()))
        .unwrap_or_default();
    let head_commit = repo_state.commit(&run.head_sha).map(|c| {
        json!({"id": run.head_sha, "tree_id": c.tree, "message": c.message,
               "timestamp": c.author.date,
               "author": {"name": c.author.name, "email": c.author.email},
               "committer": {"name": c.committer.name, "email": c.committer.email}})
    });
    let r = format!("{api}/actions/runs/{}", run.id);
    json!({
        "id": run.id, "name": path.1, "node_id": format!("WFR_{}", run.id),
        "check_suite_id": run.id + 1, "check_suite_node_id": format!("CS_{}", run.id + 1),
        "head_branch": run.head_branch, "head_sha": run.head_sha, "path": path.0,
        "display_title": run.display_title, "run_number": run.run_number, "run_attempt": 1,
        "referenced_workflows": [], "event": run.event, "status": run.status,
        "conclusion": run.conclusion, "workflow_id": run.workflow_id,
        "url": r, "html_url": format!("{}/{full}/actions/runs/{}", u.web, run.id),
        "pull_requests": [], "created_at": run.created, "updated_at": run.created,
        "actor": viewer(u), "triggering_actor": viewer(u),
        "run_started_at": run.created,
        "jobs_url": format!("{r}/jobs"), "logs_url": format!("{r}/logs"),
        "check_suite_url": format!("{api}/check-suites/{}", run.id + 1),
        "artifacts_url": format!("{r}/artifacts"), "cancel_url": format!("{r}/cancel"),
        "rerun_url": format!("{r}/rerun"), "previous_attempt_url": null,
        "workflow_url": format!("{api}/actions/workflows/{}", run.workflow_id),
        "head_commit": head_commit,
        "repository": repo(u, repo_state, full, false),
        "head_repository": repo(u, repo_state, full, false),
        "head_repository_id": repo_state.id,
    })
}

/// `artifact`.
pub fn artifact(
    u: &Urls,
    repo_state: &Repo,
    full: &str,
    run: &super::state::Run,
    a: &super::state::RunArtifact,
) -> Value {
    let api = format!("{}/repos/{full}/actions/artifacts/{}", u.api, a.id);
    let expires =
        chrono::DateTime::parse_from_rfc3339(&date_of(a.seq)).unwrap() + chrono::Duration::days(90);
    json!({
        "id": a.id, "node_id": format!("MDg6QXJ0aWZhY3Q{}", a.id), "name": a.name,
        "size_in_bytes": a.zip.len(), "url": api,
        "archive_download_url": format!("{api}/zip"), "expired": a.expired,
        "created_at": date_of(a.seq), "updated_at": date_of(a.seq),
        "expires_at": expires.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "digest": format!("sha256:{}", sha256_hex(&a.zip)),
        "workflow_run": {"id": run.id, "repository_id": repo_state.id,
                         "head_repository_id": repo_state.id, "head_branch": run.head_branch,
                         "head_sha": run.head_sha},
    })
}
