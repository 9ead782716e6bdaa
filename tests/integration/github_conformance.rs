//! stackbot's GitHub traffic against GitHub's official OpenAPI description
//! (tests/fixtures/github/openapi.json, written by scripts/github-openapi).
//!
//! How it is enforced: the fake GitHub checks every request it receives (operation exists for
//! method + path, path and query parameters valid, JSON body valid against the request schema)
//! and every answer it gives (status declared, body valid against the response schema). It
//! collects violations, and dropping the fake panics with them, so any test whose forge sends a
//! malformed request — or that makes the fake answer something GitHub would not — fails.
//! This file proves that mechanism bites, and that the description and the list of operations
//! (operations.txt) agree.

use crate::support;

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Value, json};
use stackbot::config::GithubForgeConfig;
use stackbot::forge::github::{GithubForge, RetryPolicy};
use stackbot::forge::{Forge, RepoRef};
use support::fake_github::openapi::{Spec, Validator};
use support::fake_github::{FakeGithub, FakeOptions};

const TOKEN: &str = "ghp_conformanceTEST";
const REPO: &str = "scs/cluster-stacks";

fn seeded() -> FakeGithub {
    let fake = FakeGithub::start_with(FakeOptions::default().with_token(TOKEN));
    fake.create_repo(
        REPO,
        "main",
        &[
            ("README.md", b"# stacks\n"),
            ("providers/openstack/csctl.yaml", b"x: 1\n"),
        ],
    );
    fake
}

fn http() -> reqwest::blocking::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::blocking::Client::new()
}

fn post(fake: &FakeGithub, path: &str, body: Value) -> u16 {
    http()
        .post(format!("{}{path}", fake.api_url()))
        .header("authorization", format!("Bearer {TOKEN}"))
        .json(&body)
        .send()
        .unwrap()
        .status()
        .as_u16()
}

/// `METHOD /path` lines of operations.txt.
fn listed_operations() -> BTreeSet<String> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/github/operations.txt"
    ))
    .unwrap();
    text.lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| !l.is_empty())
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn the_vendored_description_holds_exactly_the_listed_operations() {
    let in_spec: BTreeSet<String> = Spec::get()
        .operations()
        .iter()
        .map(|o| format!("{} {}", o.method, o.template))
        .collect();
    assert_eq!(
        in_spec,
        listed_operations(),
        "openapi.json is stale: re-run scripts/github-openapi"
    );
}

// ---------------------------------------------------------------------------- it bites

#[test]
#[should_panic(expected = "request body $.make_latest: true is not a string")]
fn a_request_body_field_of_the_wrong_type_fails_the_test_that_sent_it() {
    let fake = seeded();
    // GitHub wants the string "true"; a JSON boolean is refused like GitHub refuses it…
    assert_eq!(
        post(
            &fake,
            &format!("/repos/{REPO}/releases"),
            json!({"tag_name": "v1", "make_latest": true})
        ),
        422
    );
    assert!(fake.snapshot().repos[REPO].releases.is_empty());
    // …and dropping the fake fails this test.
}

#[test]
#[should_panic(expected = "GET /repos/scs/cluster-stacks/branches: no such operation")]
fn a_request_to_an_operation_outside_the_description_fails_the_test_that_sent_it() {
    let fake = seeded();
    let r = http()
        .get(format!("{}/repos/{REPO}/branches", fake.api_url()))
        .send()
        .unwrap();
    assert_eq!(r.status(), 404);
}

#[test]
fn undeclared_or_invalid_parameters_and_missing_bodies_are_violations() {
    let fake = seeded();
    let get = |path: &str| {
        http()
            .get(format!("{}{path}", fake.api_url()))
            .send()
            .unwrap()
    };
    get(&format!("/repos/{REPO}/releases?per_page=many"));
    get(&format!("/repos/{REPO}/releases?sort=newest"));
    get(&format!("/repos/{REPO}/pulls?state=merged"));
    get(&format!("/repos/{REPO}/releases/abc"));
    http()
        .post(format!("{}/repos/{REPO}/pulls", fake.api_url()))
        .header("authorization", format!("Bearer {TOKEN}"))
        .send()
        .unwrap();
    let v = fake.take_violations();
    let expect = [
        "query parameter `per_page`: \"many\" is not an integer",
        "query parameter `sort` is not declared",
        "query parameter `state`: \"merged\" is not one of",
        "path parameter `release_id`: \"abc\" is not an integer",
        "the request body is required",
    ];
    for e in expect {
        assert!(v.iter().any(|x| x.contains(e)), "missing `{e}` in {v:#?}");
    }
}

#[test]
fn an_answer_that_breaks_its_schema_or_status_is_a_violation() {
    let spec = Spec::get();
    let segs = |p: &str| -> Vec<String> { p.split('/').skip(1).map(str::to_string).collect() };
    let m = spec
        .find("GET", &segs("/repos/o/r/releases/tags/v1"))
        .unwrap();
    assert_eq!(m.op.operation_id, "repos/get-release-by-tag");
    let ct = "application/json; charset=utf-8";

    let broken = json!({"id": "12", "tag_name": "v1", "draft": false});
    let errs = spec.check_response(&m, 200, ct, broken.to_string().as_bytes());
    assert!(
        errs.iter()
            .any(|e| e.contains("$.id: \"12\" is not an integer")),
        "{errs:#?}"
    );
    assert!(
        errs.iter()
            .any(|e| e.contains("required property `upload_url` is missing")),
        "{errs:#?}"
    );
    let errs = spec.check_response(&m, 409, ct, b"{\"message\":\"x\"}");
    assert!(errs[0].contains("status 409 is not declared"), "{errs:#?}");
    // Statuses GitHub may give to any request are checked against its error schema.
    assert!(
        spec.check_response(&m, 403, ct, br#"{"message": "API rate limit exceeded"}"#)
            .is_empty()
    );
    let errs = spec.check_response(&m, 403, ct, br#"{"message": 3}"#);
    assert!(
        errs[0].contains("$.message: 3 is not a string"),
        "{errs:#?}"
    );
}

// ---------------------------------------------------------------------------- real traffic

fn forge(fake: &FakeGithub) -> GithubForge {
    let cfg = GithubForgeConfig {
        api_url: fake.api_url(),
        upload_url: Some(fake.upload_url()),
        token_env: "STACKBOT_TEST_GITHUB_TOKEN".into(),
        ..GithubForgeConfig::default()
    };
    GithubForge::new(
        &cfg,
        Some(TOKEN.into()),
        std::sync::Arc::new(stackbot::clock::SystemClock),
    )
    .unwrap()
    .with_retry_policy(RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_rate_limit_wait: Duration::from_secs(2),
    })
}

#[test]
fn the_forge_trait_specification_sends_only_conformant_requests() {
    let fake = seeded();
    let r = RepoRef::parse(REPO).unwrap();
    support::forge_conformance::conformance(&forge(&fake), &r);
    // The uploading client keeps what it uploaded (answer cache); a new client (the next run)
    // downloads over the wire.
    let next_run = forge(&fake);
    let with_asset = next_run
        .list_releases(&r)
        .unwrap()
        .into_iter()
        .find(|x| !x.assets.is_empty())
        .expect("the specification uploads assets");
    next_run
        .download_asset(&r, with_asset.id, &with_asset.assets[0])
        .unwrap();
    workflows(&fake, &next_run, &r);
    assert_eq!(fake.violations(), Vec::<String>::new());
    // The checks covered the operations the forge uses (all listed ones but those of
    // features the trait specification does not exercise).
    let seen = fake.operations_seen();
    let not_by_the_trait: BTreeSet<String> = [
        "GET /rate_limit",
        "GET /repos/{owner}/{repo}/installation",
        "POST /app/installations/{installation_id}/access_tokens",
        "GET /repos/{owner}/{repo}/releases/latest",
        "GET /repos/{owner}/{repo}/releases/tags/{tag}",
        "GET /repos/{owner}/{repo}/pulls/{pull_number}",
        "GET /repos/{owner}/{repo}/git/blobs/{file_sha}",
        // Only after a lost answer or an upload URL not cached: see tests/integration/forge_github.rs.
        "GET /repos/{owner}/{repo}/releases/{release_id}",
        "GET /repos/{owner}/{repo}/releases/{release_id}/assets",
        // Sent by an administrator, not by stackbot: see tests/integration/signed_commits.rs.
        "GET /repos/{owner}/{repo}/branches/{branch}/protection/required_signatures",
        "POST /repos/{owner}/{repo}/branches/{branch}/protection/required_signatures",
        "DELETE /repos/{owner}/{repo}/branches/{branch}/protection/required_signatures",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    let missing: Vec<_> = listed_operations()
        .difference(&seen)
        .filter(|o| !not_by_the_trait.contains(*o))
        .cloned()
        .collect();
    assert!(missing.is_empty(), "never exercised: {missing:#?}");
}

// ---------------------------------------------------------------------------- the validator

#[test]
fn the_validator_understands_the_json_schema_subset_github_uses() {
    let doc = json!({"components": {"schemas": {
        "user": {"type": "object", "properties": {"login": {"type": "string"}},
                 "required": ["login"]},
        "nullable-user": {"type": "object", "nullable": true,
                          "properties": {"login": {"type": "string"}}, "required": ["login"]},
    }}});
    let v = Validator::new(&doc);
    let ok = |s: Value, x: Value| {
        let errs = v.validate(&s, &x);
        assert!(errs.is_empty(), "{s} should accept {x}: {errs:?}");
    };
    let bad = |s: Value, x: Value, msg: &str| {
        let errs = v.validate(&s, &x);
        assert!(
            errs.iter().any(|e| e.contains(msg)),
            "{s} on {x}: expected `{msg}` in {errs:?}"
        );
    };
    let user = json!({"$ref": "#/components/schemas/user"});
    ok(user.clone(), json!({"login": "a", "extra": 1}));
    bad(
        user.clone(),
        json!({}),
        "required property `login` is missing",
    );
    bad(user.clone(), Value::Null, "null is not an object");
    ok(
        json!({"$ref": "#/components/schemas/nullable-user"}),
        Value::Null,
    );
    ok(
        json!({"type": "string", "nullable": true, "enum": ["a"]}),
        Value::Null,
    );
    bad(
        json!({"type": "string", "enum": ["true", "false"]}),
        json!("yes"),
        "is not one of",
    );
    ok(json!({"type": "integer"}), json!(3));
    bad(json!({"type": "integer"}), json!(3.5), "is not an integer");
    bad(
        json!({"type": "object", "additionalProperties": false, "properties": {"a": {}}}),
        json!({"a": 1, "b": 2}),
        "property `b` is not allowed",
    );
    bad(
        json!({"type": "object", "additionalProperties": {"type": "integer"}}),
        json!({"b": "x"}),
        "$.b: \"x\" is not an integer",
    );
    bad(
        json!({"type": "array", "items": {"type": "string"}}),
        json!(["a", 1]),
        "$[1]: 1 is not a string",
    );
    // oneOf is "at least one": GitHub's branches overlap (a user is also an empty object).
    let one_of = json!({"oneOf": [user.clone(), {"type": "object", "properties": {}}]});
    ok(one_of.clone(), json!({"login": "a"}));
    bad(one_of, json!("x"), "matches none of the 2 oneOf branches");
    bad(
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
        json!(true),
        "matches none",
    );
    bad(
        json!({"allOf": [user.clone(), {"properties": {"login": {"minLength": 2}}}]}),
        json!({"login": "a"}),
        "has 1 characters, at least 2 allowed",
    );
    bad(
        json!({"type": "string", "format": "date-time"}),
        json!("yesterday"),
        "date-time",
    );
    ok(
        json!({"type": "string", "format": "date-time"}),
        json!("2026-05-01T10:00:00Z"),
    );
    bad(
        json!({"type": "string", "format": "uri"}),
        json!("not a uri"),
        "uri",
    );
    ok(
        json!({"type": "string", "format": "uri"}),
        json!("http://127.0.0.1:1/x"),
    );
    bad(
        json!({"type": "string", "pattern": "^[0-9a-f]+$"}),
        json!("xyz"),
        "does not match",
    );
    bad(
        json!({"type": "integer", "minimum": 1}),
        json!(0),
        "less than the minimum",
    );
}

/// The conformance gate's workflow calls: dispatch (with and without the run id in the answer),
/// the workflow's runs, one run, its artifacts, the artifact's zip through the storage host,
/// cancelling, and GitHub's refusal of an undeclared input.
fn workflows(fake: &FakeGithub, forge: &GithubForge, r: &RepoRef) {
    fake.add_workflow(
        REPO,
        "conformance.yml",
        "Conformance",
        &["gate_id"],
        Some("C ${{ inputs.gate_id }}"),
    );
    let inputs: std::collections::BTreeMap<String, String> =
        [("gate_id".to_string(), "x#1".to_string())].into();
    let id = forge
        .dispatch_workflow(r, "conformance.yml", "main", &inputs, soon())
        .unwrap()
        .expect("github.com returns the run");
    fake.set_dispatch_returns_run(REPO, false);
    let other = forge
        .dispatch_workflow(r, "conformance.yml", "main", &inputs, soon())
        .unwrap();
    assert_eq!(
        other, None,
        "a server without return_run_details answers 204"
    );
    let runs = forge.workflow_runs(r, "conformance.yml").unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs[0].id > runs[1].id, "newest first");
    assert_eq!(runs[1].id, id);
    assert_eq!(
        (runs[1].display_title.as_str(), runs[1].event.as_str()),
        ("C x#1", "workflow_dispatch")
    );
    let run = forge.workflow_run(r, id).unwrap().unwrap();
    assert_eq!(
        (run.status.as_str(), run.conclusion.as_deref()),
        ("queued", None)
    );
    fake.upload_artifact(REPO, id, "conformance", &[("junit.xml", b"<testsuite/>")]);
    fake.complete_run(REPO, id, "success");
    let arts = forge.run_artifacts(r, id).unwrap();
    assert_eq!(arts.len(), 1);
    let zip = forge.download_artifact(r, &arts[0], 1 << 20).unwrap();
    assert_eq!(zip.len() as u64, arts[0].size);
    assert!(forge.download_artifact(r, &arts[0], 10).is_err(), "bounded");
    // Listed within the bound but longer: the read stops at the bound, named by the artifact.
    let listed_short = stackbot::forge::ArtifactInfo {
        size: 10,
        ..arts[0].clone()
    };
    let e = forge.download_artifact(r, &listed_short, 10).unwrap_err();
    let e = e.to_string();
    assert!(e.contains("artifact `conformance`"), "{e}");
    assert!(e.contains("longer than the 10 bytes read for it"), "{e}");
    forge.cancel_workflow_run(r, runs[0].id).unwrap();
    let cancelled = forge.workflow_run(r, runs[0].id).unwrap().unwrap();
    assert_eq!(cancelled.conclusion.as_deref(), Some("cancelled"));
    forge.cancel_workflow_run(r, id).unwrap();
    assert_eq!(
        forge
            .workflow_run(r, id)
            .unwrap()
            .unwrap()
            .conclusion
            .as_deref(),
        Some("success"),
        "a completed run stays as it is"
    );
    assert!(forge.workflow_run(r, 999_999).unwrap().is_none());
    let mut undeclared = inputs.clone();
    undeclared.insert("extra".into(), "1".into());
    let e = forge
        .dispatch_workflow(r, "conformance.yml", "main", &undeclared, soon())
        .unwrap_err();
    assert!(e.to_string().contains("Unexpected inputs provided"), "{e}");
}

/// A dispatch deadline that does not bind.
fn soon() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now() + chrono::Duration::minutes(5)
}
