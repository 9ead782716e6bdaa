//! The fake GitHub itself, over raw HTTP: it must behave as GitHub documents (and as the
//! recordings in tests/fixtures/github/octokit-fixtures/ show) where stackbot depends on it —
//! redirects for renamed repositories, the upload and download hosts, `/repositories/{id}`
//! pagination links, the primary rate limit, "Latest" releases, conditional requests, and
//! GitHub's error bodies.

use crate::support;

use std::time::Duration;

use reqwest::blocking::{Client, Response};
use serde_json::{Value, json};
use support::fake_github::{Conformance, FakeGithub, FakeOptions, Fault, Faults};

const TOKEN: &str = "ghp_fakeTESTtoken";
const REPO: &str = "scs/cluster-stacks";

fn client() -> Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

fn seeded(opts: FakeOptions) -> FakeGithub {
    let fake = FakeGithub::start_with(opts.with_token(TOKEN));
    fake.create_repo(REPO, "main", &[("README.md", b"# stacks\n")]);
    fake
}

struct Api<'a> {
    fake: &'a FakeGithub,
    http: Client,
}

impl<'a> Api<'a> {
    fn new(fake: &'a FakeGithub) -> Self {
        Api {
            fake,
            http: client(),
        }
    }

    fn url(&self, path: &str) -> String {
        if path.starts_with("http") {
            path.to_string()
        } else {
            format!("{}{path}", self.fake.api_url())
        }
    }

    fn send(&self, method: &str, path: &str, body: Option<Value>) -> Response {
        let mut r = self
            .http
            .request(method.parse().unwrap(), self.url(path))
            .header("authorization", format!("Bearer {TOKEN}"))
            .header("accept", "application/vnd.github+json");
        if let Some(b) = body {
            r = r.json(&b);
        }
        r.send().unwrap()
    }

    fn get(&self, path: &str) -> Response {
        self.send("GET", path, None)
    }

    fn json(&self, method: &str, path: &str, body: Value) -> (u16, Value) {
        let r = self.send(method, path, Some(body));
        let s = r.status().as_u16();
        (s, r.json().unwrap_or(Value::Null))
    }

    fn release(&self, tag: &str, extra: Value) -> Value {
        let mut body = json!({"tag_name": tag, "name": tag, "body": ""});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let (s, v) = self.json("POST", &format!("/repos/{REPO}/releases"), body);
        assert_eq!(s, 201, "{v}");
        v
    }
}

fn header(r: &Response, name: &str) -> String {
    r.headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------- redirects

#[test]
fn a_renamed_repository_redirects_reads_with_301_and_writes_with_307_without_performing_them() {
    let fake = seeded(FakeOptions::default());
    let api = Api::new(&fake);
    let id = fake.repo_id(REPO).unwrap();
    fake.rename_repo(REPO, "stacks");

    let r = api.get(&format!("/repos/{REPO}/releases?per_page=5"));
    assert_eq!(r.status(), 301);
    let location = header(&r, "location");
    assert_eq!(
        location,
        format!("{}/repositories/{id}/releases?per_page=5", fake.api_url())
    );
    let body: Value = r.json().unwrap();
    assert_eq!(body["message"], "Moved Permanently");
    assert_eq!(body["url"], location.as_str());

    // Following the redirect works, and so does the new name.
    assert_eq!(api.get(&location).status(), 200);
    assert_eq!(api.get("/repos/scs/stacks/releases").status(), 200);

    // A write at the old path is answered 307 and not performed.
    let before = fake.snapshot();
    let (s, v) = api.json(
        "POST",
        &format!("/repos/{REPO}/releases"),
        json!({"tag_name": "v1", "draft": true}),
    );
    assert_eq!(s, 307, "{v}");
    assert_eq!(v["message"], "Moved Permanently");
    assert_eq!(
        fake.snapshot(),
        before,
        "the write at the old path was performed"
    );
    assert!(fake.write_log().iter().all(|w| !w.applied));

    // Repeating it at the Location performs it.
    let (s, _) = api.json(
        "POST",
        &format!("/repositories/{id}/releases"),
        json!({"tag_name": "v1", "draft": true}),
    );
    assert_eq!(s, 201);
    assert_eq!(fake.snapshot().repos["scs/stacks"].releases.len(), 1);
}

#[test]
fn a_transferred_repository_redirects_and_the_real_rename_api_does_the_same() {
    // Renaming through the API is not an operation stackbot uses: serve it unchecked.
    let fake = seeded(FakeOptions::default().with_conformance(Conformance::KnownOperationsOnly));
    let api = Api::new(&fake);
    fake.transfer_repo(REPO, "sovereigncloudstack");
    assert_eq!(api.get(&format!("/repos/{REPO}")).status(), 301);
    let (s, v) = api.json(
        "PATCH",
        "/repos/sovereigncloudstack/cluster-stacks",
        json!({"name": "stacks"}),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["full_name"], "sovereigncloudstack/stacks");
    for old in [REPO, "sovereigncloudstack/cluster-stacks"] {
        assert_eq!(api.get(&format!("/repos/{old}/pulls")).status(), 301);
    }
    // Names are case-insensitive, as on GitHub.
    assert_eq!(api.get("/repos/SovereignCloudStack/Stacks").status(), 200);
}

// ---------------------------------------------------------------------------- hosts

#[test]
fn uploads_go_to_the_upload_host_and_downloads_are_redirected_to_a_host_that_refuses_tokens() {
    let fake = seeded(FakeOptions::default());
    let api = Api::new(&fake);
    let rel = api.release("v1", json!({"draft": true}));
    let upload_url = rel["upload_url"].as_str().unwrap();
    assert!(
        upload_url.starts_with(&fake.upload_url()) && !upload_url.starts_with(&fake.api_url()),
        "{upload_url} must point at the upload host {}",
        fake.upload_url()
    );
    let target = upload_url.split('{').next().unwrap();

    // Not on the API host.
    let r = api
        .http
        .post(format!(
            "{}?name=a.tgz",
            api.url(&target[fake.upload_url().len()..])
        ))
        .header("authorization", format!("Bearer {TOKEN}"))
        .body("bytes")
        .send()
        .unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(fake.take_violations().len(), 1, "wrong host is a violation");

    let r = api
        .http
        .post(format!("{target}?name=a.tgz"))
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("content-type", "application/octet-stream")
        .body("bytes")
        .send()
        .unwrap();
    assert_eq!(r.status(), 201);
    let asset: Value = r.json().unwrap();

    let r = api
        .http
        .get(asset["url"].as_str().unwrap())
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("accept", "application/octet-stream")
        .send()
        .unwrap();
    assert_eq!(r.status(), 302);
    let location = header(&r, "location");
    assert!(
        location.contains(&fake.objects_addr().port().to_string()),
        "{location}"
    );
    assert_eq!(
        api.http.get(&location).send().unwrap().text().unwrap(),
        "bytes"
    );
    let r = api
        .http
        .get(&location)
        .header("authorization", format!("Bearer {TOKEN}"))
        .send()
        .unwrap();
    assert_eq!(r.status(), 400, "a token sent to the download host");
    let v = fake.take_violations();
    assert!(v[0].contains("Authorization"), "{v:?}");
}

#[test]
fn enterprise_serves_uploads_on_the_api_host_under_api_uploads() {
    let fake = seeded(FakeOptions::default().enterprise());
    let api = Api::new(&fake);
    let rel = api.release("v1", json!({}));
    let upload_url = rel["upload_url"].as_str().unwrap();
    let host = fake.api_url().trim_end_matches("/api/v3").to_string();
    assert!(
        upload_url.starts_with(&format!("{host}/api/uploads/repos/")),
        "{upload_url}"
    );
}

// ---------------------------------------------------------------------------- pagination

#[test]
fn pagination_links_use_the_repositories_id_form_and_keep_the_query() {
    let fake = seeded(FakeOptions::default());
    let api = Api::new(&fake);
    for i in 0..5 {
        api.release(&format!("v{i}"), json!({"draft": true}));
    }
    let id = fake.repo_id(REPO).unwrap();
    let r = api.get(&format!("/repos/{REPO}/releases?per_page=2"));
    let base = format!("{}/repositories/{id}/releases", fake.api_url());
    assert_eq!(
        header(&r, "link"),
        format!(
            "<{base}?per_page=2&page=2>; rel=\"next\", <{base}?per_page=2&page=3>; rel=\"last\""
        )
    );
    let r = api.get(&format!("{base}?per_page=2&page=3"));
    assert_eq!(
        header(&r, "link"),
        format!(
            "<{base}?per_page=2&page=2>; rel=\"prev\", <{base}?per_page=2&page=1>; rel=\"first\""
        )
    );
    assert_eq!(r.json::<Value>().unwrap().as_array().unwrap().len(), 1);
}

// ---------------------------------------------------------------------------- rate limit

#[test]
fn every_answer_reports_the_primary_rate_limit_and_each_request_spends_one_unit() {
    let fake = seeded(FakeOptions::default());
    let api = Api::new(&fake);
    let first = api.get(&format!("/repos/{REPO}"));
    let second = api.get(&format!("/repos/{REPO}/releases"));
    for (r, used) in [(&first, 1), (&second, 2)] {
        assert_eq!(header(r, "x-ratelimit-limit"), "5000");
        assert_eq!(header(r, "x-ratelimit-used"), used.to_string());
        assert_eq!(
            header(r, "x-ratelimit-remaining"),
            (5000 - used).to_string()
        );
        assert_eq!(header(r, "x-ratelimit-resource"), "core");
        assert_eq!(
            header(r, "x-ratelimit-reset"),
            header(&first, "x-ratelimit-reset")
        );
    }
    // `GET /rate_limit` is free.
    let v: Value = api.get("/rate_limit").json().unwrap();
    assert_eq!(v["resources"]["core"]["used"], 2);
    assert_eq!(fake.counts().units, 2);
    assert_eq!(fake.rate_limit(Some(TOKEN)).remaining, 4998);
}

#[test]
fn an_exhausted_rate_limit_refuses_with_githubs_answer_until_the_window_resets() {
    for status in [403, 429] {
        let mut opts = FakeOptions::default().with_rate_limit(3);
        opts.rate_limit.exhausted_status = status;
        opts.rate_limit.window = Duration::from_secs(3600);
        let fake = seeded(opts);
        let api = Api::new(&fake);
        for _ in 0..3 {
            assert_eq!(api.get(&format!("/repos/{REPO}")).status(), 200);
        }
        let r = api.get(&format!("/repos/{REPO}"));
        assert_eq!(r.status().as_u16(), status);
        assert_eq!(header(&r, "x-ratelimit-remaining"), "0");
        let reset: u64 = header(&r, "x-ratelimit-reset").parse().unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(reset > now + 3500, "resets an hour after the window began");
        let v: Value = r.json().unwrap();
        assert!(
            v["message"]
                .as_str()
                .unwrap()
                .starts_with("API rate limit exceeded for user ID"),
            "{v}"
        );
        assert!(
            v["documentation_url"]
                .as_str()
                .unwrap()
                .contains("rate-limit")
        );
        fake.reset_rate_limit();
        assert_eq!(api.get(&format!("/repos/{REPO}")).status(), 200);
    }
}

#[test]
fn a_short_window_resets_by_itself() {
    let mut opts = FakeOptions::default().with_rate_limit(1);
    opts.rate_limit.window = Duration::from_millis(300);
    let fake = seeded(opts);
    let api = Api::new(&fake);
    assert_eq!(api.get(&format!("/repos/{REPO}")).status(), 200);
    assert_eq!(api.get(&format!("/repos/{REPO}")).status(), 403);
    std::thread::sleep(Duration::from_millis(350));
    assert_eq!(api.get(&format!("/repos/{REPO}")).status(), 200);
}

#[test]
fn secondary_rate_limits_answer_403_or_429_with_retry_after_and_change_nothing() {
    let fake = seeded(FakeOptions::default());
    let api = Api::new(&fake);
    for (fault, status) in [
        (Fault::SecondaryRateLimit(7), 403),
        (Fault::TooManyRequests(9), 429),
    ] {
        let secs = match fault {
            Fault::SecondaryRateLimit(s) | Fault::TooManyRequests(s) => s,
            _ => unreachable!(),
        };
        fake.set_faults(Faults::write(1, fault));
        let r = api.send(
            "POST",
            &format!("/repos/{REPO}/releases"),
            Some(json!({"tag_name": "v1"})),
        );
        assert_eq!(r.status().as_u16(), status);
        assert_eq!(header(&r, "retry-after"), secs.to_string());
        let v: Value = r.json().unwrap();
        assert!(
            v["message"]
                .as_str()
                .unwrap()
                .contains("secondary rate limit")
        );
        assert!(fake.snapshot().repos[REPO].releases.is_empty());
    }
}

// ---------------------------------------------------------------------------- conditional requests

#[test]
fn an_unchanged_representation_is_304_not_modified_and_costs_no_unit() {
    let fake = seeded(FakeOptions::default());
    let api = Api::new(&fake);
    api.release("v1", json!({}));
    let path = format!("/repos/{REPO}/releases?per_page=100");
    let r = api.get(&path);
    let etag = header(&r, "etag");
    assert!(etag.starts_with("W/\"") && etag.ends_with('"'), "{etag}");
    let units = fake.counts().units;

    let conditional = |tag: &str| {
        api.http
            .get(api.url(&path))
            .header("authorization", format!("Bearer {TOKEN}"))
            .header("if-none-match", tag)
            .send()
            .unwrap()
    };
    let r = conditional(&etag);
    assert_eq!(r.status(), 304);
    assert_eq!(header(&r, "etag"), etag);
    assert_eq!(r.text().unwrap(), "");
    // A strong spelling of the same tag matches too (weak comparison).
    assert_eq!(conditional(etag.trim_start_matches("W/")).status(), 304);
    assert_eq!(fake.counts().units, units, "304s are free");
    assert_eq!(fake.counts().not_modified, 2);

    // A change gives a new representation, at full price.
    api.release("v2", json!({}));
    let r = conditional(&etag);
    assert_eq!(r.status(), 200);
    assert_ne!(header(&r, "etag"), etag);
}

#[test]
fn refs_contents_pulls_and_comments_are_conditional_too() {
    let fake = seeded(FakeOptions::default());
    let api = Api::new(&fake);
    for path in [
        format!("/repos/{REPO}/git/ref/heads/main"),
        format!("/repos/{REPO}/contents/README.md?ref=main"),
        format!("/repos/{REPO}/pulls?state=all"),
        format!("/repos/{REPO}"),
    ] {
        let etag = header(&api.get(&path), "etag");
        let r = api
            .http
            .get(api.url(&path))
            .header("authorization", format!("Bearer {TOKEN}"))
            .header("if-none-match", &etag)
            .send()
            .unwrap();
        assert_eq!(r.status(), 304, "{path}");
    }
}

// ---------------------------------------------------------------------------- latest

#[test]
fn make_latest_true_false_and_legacy_choose_the_latest_release() {
    let fake = seeded(FakeOptions::default());
    let api = Api::new(&fake);
    let latest = || {
        let v: Value = api
            .get(&format!("/repos/{REPO}/releases/latest"))
            .json()
            .unwrap();
        v["tag_name"].as_str().map(str::to_string)
    };
    assert_eq!(latest(), None);
    // Legacy default: the most recently created full release.
    api.release("v1.1", json!({}));
    assert_eq!(latest().as_deref(), Some("v1.1"));
    // Publishing makes the new release latest (make_latest defaults to "true")…
    api.release("v1.0.1", json!({}));
    assert_eq!(latest().as_deref(), Some("v1.0.1"));
    // …unless it says "false".
    api.release("v1.0.2", json!({"make_latest": "false"}));
    assert_eq!(latest().as_deref(), Some("v1.0.1"));
    // Drafts and prereleases never are.
    api.release("v2-rc", json!({"prerelease": true}));
    let draft = api.release("v1.2", json!({"draft": true}));
    assert_eq!(latest().as_deref(), Some("v1.0.1"));
    // Publishing a draft without make_latest makes it latest.
    let id = draft["id"].as_u64().unwrap();
    let (s, _) = api.json(
        "PATCH",
        &format!("/repos/{REPO}/releases/{id}"),
        json!({"draft": false}),
    );
    assert_eq!(s, 200);
    assert_eq!(latest().as_deref(), Some("v1.2"));
    assert_eq!(fake.latest_release(REPO).as_deref(), Some("v1.2"));
    // Explicitly on an older one.
    let old: Value = api
        .get(&format!("/repos/{REPO}/releases/tags/v1.1"))
        .json()
        .unwrap();
    let id = old["id"].as_u64().unwrap();
    api.json(
        "PATCH",
        &format!("/repos/{REPO}/releases/{id}"),
        json!({"make_latest": "true"}),
    );
    assert_eq!(latest().as_deref(), Some("v1.1"));
    // Legacy: the most recently *created* full release (v1.2 was drafted last).
    api.json(
        "PATCH",
        &format!("/repos/{REPO}/releases/{id}"),
        json!({"make_latest": "legacy"}),
    );
    assert_eq!(latest().as_deref(), Some("v1.2"));
}

// ---------------------------------------------------------------------------- errors

#[test]
fn errors_carry_githubs_body_with_the_operations_documentation() {
    let fake = seeded(FakeOptions::default());
    let api = Api::new(&fake);
    let r = api.get(&format!("/repos/{REPO}/releases/tags/nope"));
    assert_eq!(r.status(), 404);
    let v: Value = r.json().unwrap();
    assert_eq!(
        v,
        json!({"message": "Not Found", "status": "404",
               "documentation_url": "https://docs.github.com/rest/releases/releases#get-a-release-by-tag-name"})
    );

    api.release("v1", json!({}));
    let (s, v) = api.json(
        "POST",
        &format!("/repos/{REPO}/releases"),
        json!({"tag_name": "v1"}),
    );
    assert_eq!(s, 422);
    assert_eq!(v["message"], "Validation Failed");
    assert_eq!(
        v["errors"],
        json!([{"resource": "Release", "code": "already_exists", "field": "tag_name"}])
    );
    assert_eq!(v["status"], "422");

    // A body that breaks the schema is refused like GitHub does, and is a violation.
    let (s, v) = api.json(
        "POST",
        &format!("/repos/{REPO}/releases"),
        json!({"tag_name": "v2", "draft": "yes"}),
    );
    assert_eq!(s, 422);
    assert_eq!(
        v["message"],
        "Invalid request.\n\nFor 'properties/draft', \"yes\" is not a boolean."
    );
    assert_eq!(fake.take_violations().len(), 1);

    let r = api
        .http
        .get(api.url(&format!("/repos/{REPO}/releases")))
        .header("authorization", "Bearer wrong")
        .send()
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(r.json::<Value>().unwrap()["message"], "Bad credentials");
}

#[test]
fn an_empty_repository_answers_409() {
    let fake = FakeGithub::start_with(FakeOptions::default().with_token(TOKEN));
    fake.create_repo(REPO, "main", &[]);
    let api = Api::new(&fake);
    let r = api.get(&format!("/repos/{REPO}/git/ref/heads/main"));
    assert_eq!(r.status(), 409);
    assert_eq!(
        r.json::<Value>().unwrap()["message"],
        "Git Repository is empty."
    );
}

// ---------------------------------------------------------------------------- GitHub Apps

const APP_KEY: &str = include_str!("../fixtures/github/app/test-app-private-key.pem");

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn with_auth(api: &Api, method: &str, path: &str, auth: &str, body: Option<Value>) -> (u16, Value) {
    let mut r = api
        .http
        .request(method.parse().unwrap(), api.url(path))
        .header("authorization", format!("Bearer {auth}"))
        .header("accept", "application/vnd.github+json");
    if let Some(b) = body {
        r = r.json(&b);
    }
    let r = r.send().unwrap();
    let s = r.status().as_u16();
    (s, r.json().unwrap_or(Value::Null))
}

#[test]
fn a_github_app_mints_installation_tokens_limited_to_their_account_repositories_and_permissions() {
    use support::fake_github::app::sign_jwt;
    let fake = seeded(FakeOptions::default());
    fake.create_repo("acme/gitops", "main", &[("a.yaml", b"a: 1\n")]);
    fake.create_repo("nobody/gitops", "main", &[("a.yaml", b"a: 1\n")]);
    fake.register_app(42, APP_KEY);
    let scs = fake.install_app(42, "scs");
    let acme = fake.install_app_with(42, "acme", &[("contents", "read"), ("metadata", "read")]);
    let api = Api::new(&fake);
    let jwt = sign_jwt(42, APP_KEY, now() - 60, now() + 540);

    // The installation is looked up per repository.
    let (s, v) = with_auth(&api, "GET", "/repos/acme/gitops/installation", &jwt, None);
    assert_eq!((s, v["id"].as_u64()), (200, Some(acme)), "{v}");
    let (s, _) = with_auth(&api, "GET", "/repos/nobody/gitops/installation", &jwt, None);
    assert_eq!(s, 404, "no installation on that owner");

    // A token for one repository with least privilege.
    let (s, v) = with_auth(
        &api,
        "POST",
        &format!("/app/installations/{scs}/access_tokens"),
        &jwt,
        Some(json!({"repositories": ["cluster-stacks"], "permissions": {"contents": "write"}})),
    );
    assert_eq!(s, 201, "{v}");
    let token = v["token"].as_str().unwrap().to_string();
    assert!(token.starts_with("ghs_"));
    assert_eq!(v["repository_selection"], "selected");
    let expires = chrono::DateTime::parse_from_rfc3339(v["expires_at"].as_str().unwrap()).unwrap();
    assert!((expires.timestamp() as u64).abs_diff(now() + 3600) < 5);

    let (s, _) = with_auth(&api, "GET", &format!("/repos/{REPO}"), &token, None);
    assert_eq!(s, 200);
    let body = json!({"tag_name": "v1", "draft": true});
    let (s, _) = with_auth(
        &api,
        "POST",
        &format!("/repos/{REPO}/releases"),
        &token,
        Some(body),
    );
    assert_eq!(s, 201);
    // Other accounts are invisible; missing permissions are refused.
    let (s, _) = with_auth(&api, "GET", "/repos/acme/gitops", &token, None);
    assert_eq!(s, 404);
    let pr = json!({"head": "x", "base": "main", "title": "t"});
    let (s, v) = with_auth(
        &api,
        "POST",
        &format!("/repos/{REPO}/pulls"),
        &token,
        Some(pr),
    );
    assert_eq!(
        (s, v["message"].as_str()),
        (403, Some("Resource not accessible by integration"))
    );

    // A read-only installation cannot grant write, nor write with its token.
    let mint = |inst: u64, body: Value| {
        with_auth(
            &api,
            "POST",
            &format!("/app/installations/{inst}/access_tokens"),
            &jwt,
            Some(body),
        )
    };
    let (s, v) = mint(acme, json!({"permissions": {"contents": "write"}}));
    assert_eq!(s, 422, "{v}");
    let (s, v) = mint(acme, json!({}));
    assert_eq!(s, 201);
    let acme_token = v["token"].as_str().unwrap().to_string();
    let (s, _) = with_auth(
        &api,
        "GET",
        "/repos/acme/gitops/contents/a.yaml",
        &acme_token,
        None,
    );
    assert_eq!(s, 200);
    let body = json!({"tag_name": "v1"});
    let (s, _) = with_auth(
        &api,
        "POST",
        "/repos/acme/gitops/releases",
        &acme_token,
        Some(body),
    );
    assert_eq!(s, 403);

    // JWTs are only for the app's endpoints, tokens not for those.
    let (s, _) = with_auth(&api, "GET", &format!("/repos/{REPO}"), &jwt, None);
    assert_eq!(s, 403);
    let (s, _) = with_auth(&api, "GET", "/repos/acme/gitops/installation", &token, None);
    assert_eq!(s, 401);

    // Tokens expire.
    fake.expire_installation_tokens();
    let (s, v) = with_auth(&api, "GET", &format!("/repos/{REPO}"), &token, None);
    assert_eq!((s, v["message"].as_str()), (401, Some("Bad credentials")));
    assert_eq!(fake.installation_tokens_minted(), 2);
}

#[test]
fn app_jwts_are_verified_as_github_does() {
    use support::fake_github::app::sign_jwt;
    let fake = seeded(FakeOptions::default());
    fake.register_app(42, APP_KEY);
    let api = Api::new(&fake);
    let path = format!("/repos/{REPO}/installation");
    let message = |jwt: &str| {
        let (s, v) = with_auth(&api, "GET", &path, jwt, None);
        assert_eq!(s, 401, "{v}");
        v["message"].as_str().unwrap().to_string()
    };
    assert!(message(&sign_jwt(42, APP_KEY, now() - 700, now() - 100)).contains("'exp'"));
    assert!(message(&sign_jwt(42, APP_KEY, now(), now() + 3600)).contains("too far in the future"));
    assert!(message(&sign_jwt(42, APP_KEY, now() + 300, now() + 500)).contains("'iat'"));
    assert_eq!(
        message(&sign_jwt(7, APP_KEY, now(), now() + 60)),
        "Integration not found"
    );
    // A forged claim breaks the signature.
    let good = sign_jwt(42, APP_KEY, now() - 10, now() + 60);
    let parts: Vec<&str> = good.split('.').collect();
    let forged = {
        use base64::Engine as _;
        let claims = json!({"iat": now(), "exp": now() + 60, "iss": "42", "x": 1}).to_string();
        let c = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(claims);
        format!("{}.{c}.{}", parts[0], parts[2])
    };
    assert_eq!(message(&forged), "A JSON web token could not be decoded");
    // Not installed on `scs`: a valid JWT gets 404.
    let (s, _) = with_auth(&api, "GET", &path, &good, None);
    assert_eq!(s, 404);
}
