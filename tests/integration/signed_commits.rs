//! Repositories that require signed commits (issue 22, item 4), on the fake GitHub. GitHub signs
//! a commit it creates through the Git Data API only for a GitHub App installation, and only
//! when the request names no author or committer; a token's commits are never signed. So:
//! - with a token, a commit onto a branch that requires signatures is refused, and the error
//!   names the repository and branch and says what to change (an App, or lift the rule);
//! - as an App, the commit lands, Verified, authored by the App's bot account;
//! - the bot recognises those commits as its own: its signed commits on its pull request
//!   branch are never taken for a person's edits;
//! - the rule is GitHub's own: an administrator turns it on and off through the REST API
//!   (`…/branches/{branch}/protection/required_signatures`) on a protected branch, and the
//!   bot's commits follow it.

use crate::github_app::{APP_ID, KEY_ENV, app_forge, fake_with_app, key, repo, write_config};
use crate::support;

use std::sync::Arc;

use assert_cmd::Command;
use serde_json::{Value, json};
use stackbot::clock::SystemClock;
use stackbot::config::GithubForgeConfig;
use stackbot::forge::github::GithubForge;
use stackbot::forge::{FileChanges, Forge, ForgeError};
use support::fake_github::FakeGithub;
use support::fake_github::humans::{MAINTAINER, MergeMethod, Protection};

const STACKS: &str = "scs/cluster-stacks";
/// The one token `fake_with_app` accepts.
const TOKEN: &str = "ghp_NOBODY_HAS_THIS";
/// The bot's `forge.committer.email` (the default of the configuration).
const BOT_EMAIL: &str = "stackbot@users.noreply.github.com";

fn token_forge(fake: &FakeGithub) -> GithubForge {
    let cfg = GithubForgeConfig {
        api_url: fake.api_url(),
        upload_url: Some(fake.upload_url()),
        ..GithubForgeConfig::default()
    };
    GithubForge::new(&cfg, Some(TOKEN.into()), Arc::new(SystemClock)).unwrap()
}

fn change(path: &str, text: &str) -> FileChanges {
    [(path.to_string(), Some(text.as_bytes().to_vec()))]
        .into_iter()
        .collect()
}

/// A person with administrator rights on the repositories, at GitHub's REST API with their own
/// token: how "Require signed commits" of a branch protection rule is read and set.
struct Admin<'a> {
    fake: &'a FakeGithub,
    http: reqwest::blocking::Client,
}

impl<'a> Admin<'a> {
    fn new(fake: &'a FakeGithub) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        Admin {
            fake,
            http: reqwest::blocking::Client::new(),
        }
    }

    /// `METHOD /repos/{full}/branches/{branch}/protection/required_signatures`: the status and
    /// the JSON body (`null` for none).
    fn required_signatures(&self, method: &str, full: &str, branch: &str) -> (u16, Value) {
        let r = self
            .http
            .request(
                method.parse().unwrap(),
                format!(
                    "{}/repos/{full}/branches/{branch}/protection/required_signatures",
                    self.fake.api_url()
                ),
            )
            .header("authorization", format!("Bearer {TOKEN}"))
            .header("accept", "application/vnd.github+json")
            .send()
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json().unwrap_or(Value::Null))
    }
}

/// A fake with the cluster-stacks repository, whose `main` requires signed commits.
fn signed_main() -> FakeGithub {
    let fake = fake_with_app(&["scs", "acme", "beta"]);
    fake.create_repo(STACKS, "main", &[("README.md", b"# s\n")]);
    fake.require_signed_commits(STACKS, "main", Protection::Classic);
    fake
}

#[test]
fn a_token_s_unsigned_commit_is_refused_with_what_to_change() {
    let fake = signed_main();
    let f = token_forge(&fake);
    let stacks = repo(STACKS);
    let head = f.branch_head(&stacks, "main").unwrap().unwrap();

    let e = f
        .commit(
            &stacks,
            "main",
            &head,
            Some(&head),
            &change("a.txt", "a\n"),
            "release",
        )
        .unwrap_err();

    assert!(matches!(e, ForgeError::Rejected { .. }), "{e:?}");
    let msg = e.to_string();
    for says in [
        "scs/cluster-stacks",
        "`main`",
        "requires signed commits",
        "Commits must have verified signatures",
        "GitHub App",
        "docs/github-setup.md",
        "lift",
    ] {
        assert!(msg.contains(says), "`{says}` missing from: {msg}");
    }
    assert!(
        !msg.contains("authentication") && !msg.contains(TOKEN),
        "not blamed on the token, which is never shown: {msg}"
    );
    assert_eq!(
        fake.branch_head(STACKS, "main").as_deref(),
        Some(head.as_str()),
        "nothing landed"
    );

    // A ruleset's "Require signed commits" is refused and explained the same way.
    fake.require_signed_commits(STACKS, "release-*", Protection::Ruleset);
    let e = f
        .commit(
            &stacks,
            "release-1",
            &head,
            None,
            &change("b.txt", "b\n"),
            "release",
        )
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("requires signed commits") && msg.contains("docs/github-setup.md"),
        "{msg}"
    );
}

#[test]
fn an_app_s_commit_is_signed_by_github_and_accepted() {
    let fake = signed_main();
    let f = app_forge(&fake);
    let stacks = repo(STACKS);
    let head = f.branch_head(&stacks, "main").unwrap().unwrap();

    let sha = f
        .commit(
            &stacks,
            "main",
            &head,
            Some(&head),
            &change("a.txt", "a\n"),
            "release",
        )
        .unwrap();

    assert_eq!(fake.branch_head(STACKS, "main"), Some(sha.clone()));
    let ((name, email), verification) = fake.commit_signature(STACKS, &sha).unwrap();
    assert_eq!(verification["verified"], true, "{verification}");
    assert_eq!(verification["reason"], "valid", "{verification}");
    let bot = format!("app-{APP_ID}[bot]");
    assert_eq!(
        name, bot,
        "no custom author: GitHub's bot account for the App"
    );
    assert!(
        email.ends_with(&format!("+{bot}@users.noreply.github.com")),
        "{email}"
    );
}

#[test]
fn the_bot_knows_its_app_signed_commits_from_a_person_s() {
    let fake = signed_main();
    let f = app_forge(&fake);
    let stacks = repo(STACKS);
    let base = f.branch_head(&stacks, "main").unwrap().unwrap();
    let mine = f
        .commit(
            &stacks,
            "stackbot/x",
            &base,
            None,
            &change("a.txt", "a\n"),
            "bot",
        )
        .unwrap();
    let theirs = fake.push_commit(
        STACKS,
        "stackbot/x",
        &[("b.txt", Some(b"b\n"))],
        "a person's edit",
        ("Person", "person@example.com"),
    );

    let commits = f.commits_between(&stacks, &base, &theirs).unwrap();
    let by_bot: Vec<(&str, bool)> = commits
        .iter()
        .map(|c| (c.sha.as_str(), c.is_by(BOT_EMAIL)))
        .collect();
    assert_eq!(
        by_bot,
        vec![(mine.as_str(), true), (theirs.as_str(), false)],
        "{commits:?}"
    );

    // With a token the App's identity means nothing: only `forge.committer` is the bot.
    let commits = token_forge(&fake)
        .commits_between(&stacks, &base, &theirs)
        .unwrap();
    assert!(commits.iter().all(|c| !c.is_by(BOT_EMAIL)), "{commits:?}");
}

#[test]
fn a_protected_tenant_gets_signed_pull_request_commits_kept_as_the_bot_s_own() {
    let fake = fake_with_app(&["scs", "acme", "beta"]);
    fake.create_repo(STACKS, "main", &[("README.md", b"# s\n")]);
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), &fake);
    fake.require_signed_commits("acme/gitops", "main", Protection::Classic);
    let f = app_forge(&fake);
    publish(&f, "openstack-scs2-1-33-v2", "v1.33.5");

    let acme = run_tenants(&cfg, "acme");
    assert_eq!(acme["outcome"], "opened", "{acme}");
    let branch = acme["branch"].as_str().unwrap().to_string();
    let head = fake.branch_head("acme/gitops", &branch).unwrap();
    let (_, verification) = fake.commit_signature("acme/gitops", &head).unwrap();
    assert_eq!(verification["verified"], true, "{verification}");

    // A new release: the bot's own signed commit is no person's edit, so it updates its
    // pull request instead of stepping back from it.
    publish(&f, "openstack-scs2-1-33-v3", "v1.33.6");
    let acme = run_tenants(&cfg, "acme");
    assert_eq!(acme["outcome"], "updated", "{acme}");
    let head = fake.branch_head("acme/gitops", &branch).unwrap();
    let (_, verification) = fake.commit_signature("acme/gitops", &head).unwrap();
    assert_eq!(verification["verified"], true, "{verification}");

    // Every commit is signed, so the maintainer may merge it into the protected branch
    // keeping the commits (a merge commit); a token's unsigned commits could not be.
    let number = acme["pull"].as_u64().unwrap();
    fake.try_merge_pull("acme/gitops", number, MergeMethod::Merge, MAINTAINER)
        .expect("a pull request of signed commits merges into a branch requiring signatures");
}

#[test]
fn a_pull_request_with_unsigned_commits_cannot_be_merged_keeping_them() {
    let fake = signed_main();
    let f = token_forge(&fake);
    let stacks = repo(STACKS);
    let base = f.branch_head(&stacks, "main").unwrap().unwrap();
    f.commit(
        &stacks,
        "stackbot/x",
        &base,
        None,
        &change("a.txt", "a\n"),
        "bot",
    )
    .unwrap();
    let pull = f
        .open_pull(&stacks, "stackbot/x", "main", "t", "b")
        .unwrap();

    for method in [MergeMethod::Merge, MergeMethod::Rebase] {
        let e = fake
            .try_merge_pull(STACKS, pull.number, method, MAINTAINER)
            .unwrap_err();
        assert!(e.contains("signed") || e.contains("signatures"), "{e}");
    }
    // "Squash and merge" makes one new commit, which GitHub signs.
    let squashed = fake
        .try_merge_pull(STACKS, pull.number, MergeMethod::Squash, MAINTAINER)
        .unwrap();
    let (_, verification) = fake.commit_signature(STACKS, &squashed).unwrap();
    assert_eq!(verification["verified"], true, "{verification}");
}

#[test]
fn an_administrator_requires_signed_commits_through_the_api_and_the_bot_s_commits_follow() {
    let fake = fake_with_app(&["scs", "acme", "beta"]);
    fake.create_repo(STACKS, "main", &[("README.md", b"# s\n")]);
    // `main` has a branch protection rule (Settings → Branches), so far without signatures.
    fake.add_protection_rule(STACKS, "main");
    let admin = Admin::new(&fake);
    let url = format!(
        "{}/repos/{STACKS}/branches/main/protection/required_signatures",
        fake.api_url()
    );
    assert_eq!(
        admin.required_signatures("GET", STACKS, "main"),
        (200, json!({"url": url, "enabled": false}))
    );

    // The administrator turns "Require signed commits" on.
    assert_eq!(
        admin.required_signatures("POST", STACKS, "main"),
        (200, json!({"url": url, "enabled": true}))
    );
    assert_eq!(
        admin.required_signatures("GET", STACKS, "main"),
        (200, json!({"url": url, "enabled": true}))
    );

    // A token's commit onto `main` is refused, saying what to change; nothing lands.
    let f = token_forge(&fake);
    let stacks = repo(STACKS);
    let head = f.branch_head(&stacks, "main").unwrap().unwrap();
    let commit = || {
        f.commit(
            &stacks,
            "main",
            &head,
            Some(&head),
            &change("a.txt", "a\n"),
            "release",
        )
    };
    let e = commit().unwrap_err();
    let msg = e.to_string();
    for says in [
        "`main`",
        "requires signed commits",
        "Commits must have verified signatures",
        "GitHub App",
        "lift",
    ] {
        assert!(msg.contains(says), "`{says}` missing from: {msg}");
    }
    assert_eq!(fake.branch_head(STACKS, "main"), Some(head.clone()));

    // The administrator lifts the rule: the same commit goes through, unsigned.
    assert_eq!(
        admin.required_signatures("DELETE", STACKS, "main"),
        (204, Value::Null)
    );
    assert_eq!(
        admin.required_signatures("GET", STACKS, "main"),
        (200, json!({"url": url, "enabled": false}))
    );
    let sha = commit().unwrap();
    assert_eq!(fake.branch_head(STACKS, "main"), Some(sha.clone()));
    let (_, verification) = fake.commit_signature(STACKS, &sha).unwrap();
    assert_eq!(verification["verified"], false, "{verification}");
}

#[test]
fn the_rule_is_read_and_set_only_on_a_branch_protected_by_a_rule_of_its_own_name() {
    let fake = fake_with_app(&["scs", "acme", "beta"]);
    fake.create_repo(STACKS, "main", &[("README.md", b"# s\n")]);
    let admin = Admin::new(&fake);
    let not_protected = |method: &str, branch: &str| {
        let (status, body) = admin.required_signatures(method, STACKS, branch);
        assert_eq!(
            (status, &body["message"]),
            (404, &json!("Branch not protected")),
            "{method} {branch}: {body}"
        );
    };

    // No protection rule: GitHub's 404, for reading and writing alike, and nothing changes.
    for method in ["GET", "POST", "DELETE"] {
        not_protected(method, "main");
    }
    let f = token_forge(&fake);
    let stacks = repo(STACKS);
    let head = f.branch_head(&stacks, "main").unwrap().unwrap();
    let tip = f
        .commit(
            &stacks,
            "main",
            &head,
            Some(&head),
            &change("a.txt", "a\n"),
            "release",
        )
        .expect("an unprotected branch takes unsigned commits");

    // A branch that does not exist is not found at all.
    let (status, body) = admin.required_signatures("GET", STACKS, "no-such-branch");
    assert_eq!(
        (status, &body["message"]),
        (404, &json!("Branch not found"))
    );

    // The REST API only reaches a rule naming the branch exactly (a pattern's rule is GraphQL
    // only), and a ruleset is no branch protection rule: still 404, although both refuse the
    // token's commits.
    fake.push_commit(STACKS, "release-1", &[], "cut", MAINTAINER);
    fake.require_signed_commits(STACKS, "release-*", Protection::Classic);
    fake.require_signed_commits(STACKS, "main", Protection::Ruleset);
    not_protected("GET", "release-1");
    not_protected("GET", "main");
    let e = f
        .commit(
            &stacks,
            "main",
            &tip,
            Some(&tip),
            &change("b.txt", "b\n"),
            "release",
        )
        .unwrap_err();
    assert!(e.to_string().contains("requires signed commits"), "{e}");

    // The test helper is a person ticking the box of the branch's rule: the API sees the same
    // rule, and lifting it there lifts it for the helper's rule too.
    fake.require_signed_commits(STACKS, "release-1", Protection::Classic);
    let (status, body) = admin.required_signatures("GET", STACKS, "release-1");
    assert_eq!((status, &body["enabled"]), (200, &json!(true)), "{body}");
    assert_eq!(
        admin.required_signatures("DELETE", STACKS, "release-1").0,
        204
    );
    let (status, body) = admin.required_signatures("GET", STACKS, "release-1");
    assert_eq!((status, &body["enabled"]), (200, &json!(false)), "{body}");
}

/// Publish a release of the stack with its `metadata.yaml`, through the App.
fn publish(f: &GithubForge, tag: &str, kubernetes: &str) {
    let stacks = repo(STACKS);
    let head = f.branch_head(&stacks, "main").unwrap().unwrap();
    f.create_tag(&stacks, tag, &head, tag).unwrap();
    let r = f
        .create_draft_release(&stacks, tag, tag, &format!("Kubernetes {kubernetes}"))
        .unwrap();
    let version = tag.rsplit('-').next().unwrap();
    let meta = format!(
        "apiVersion: metadata.clusterstack.x-k8s.io/v1alpha1\nversions:\n    clusterStack: {version}\n    kubernetes: {kubernetes}\n    components:\n        clusterAddon: v1\n        nodeImage: v1\n"
    );
    f.upload_asset(&stacks, r.id, "metadata.yaml", meta.as_bytes())
        .unwrap();
    f.publish_release(&stacks, r.id, true).unwrap();
}

/// `stackbot tenants` as the App; the report of `tenant`.
fn run_tenants(cfg: &std::path::Path, tenant: &str) -> serde_json::Value {
    let out = Command::cargo_bin("stackbot")
        .unwrap()
        .env(KEY_ENV, key())
        .env("NO_COLOR", "1")
        .args(["-c", cfg.to_str().unwrap(), "--format", "json", "tenants"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let reports: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    reports["tenants"]
        .as_array()
        .or(reports.as_array())
        .unwrap()
        .iter()
        .find(|r| r["tenant"] == tenant)
        .cloned()
        .unwrap_or_else(|| panic!("no report for {tenant}: {reports}"))
}
