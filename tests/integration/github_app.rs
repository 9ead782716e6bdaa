//! GitHub App authentication on the fake GitHub: one App installed on several organisations,
//! an installation token per repository with only contents and pull-request permissions, tokens
//! reused while fresh and re-minted when GitHub refuses them mid-run, and a tenant whose owner
//! never installed the App: that tenant fails with a clear message, the others go on, exit 3.

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use assert_cmd::Command;
use stackbot::clock::SystemClock;
use stackbot::config::GithubForgeConfig;
use stackbot::forge::github::{AppCredentials, GithubForge, RetryPolicy};
use stackbot::forge::{Forge, ForgeError, RepoRef};
use support::fake_github::{FakeGithub, FakeOptions};

pub(crate) const APP_ID: u64 = 424_242;
pub(crate) const KEY_ENV: &str = "STACKBOT_TEST_APP_PRIVATE_KEY";

pub(crate) fn key() -> String {
    std::fs::read_to_string(root().join("tests/fixtures/github/app/test-app-private-key.pem"))
        .unwrap()
}

use crate::support::root;

pub(crate) fn repo(s: &str) -> RepoRef {
    RepoRef::parse(s).unwrap()
}

pub(crate) fn fake_with_app(installed_on: &[&str]) -> FakeGithub {
    // No personal token is accepted at all: everything must go through the App.
    let fake = FakeGithub::start_with(FakeOptions::default().with_token("ghp_NOBODY_HAS_THIS"));
    fake.register_app(APP_ID, &key());
    for owner in installed_on {
        fake.install_app(APP_ID, owner);
    }
    fake
}

pub(crate) fn app_forge(fake: &FakeGithub) -> GithubForge {
    let cfg = GithubForgeConfig {
        api_url: fake.api_url(),
        upload_url: Some(fake.upload_url()),
        ..GithubForgeConfig::default()
    };
    GithubForge::new_app(
        &cfg,
        AppCredentials::from_pem(APP_ID, &key()).unwrap(),
        Arc::new(SystemClock),
    )
    .unwrap()
    .with_retry_policy(RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(2),
        max_delay: Duration::from_millis(10),
        max_rate_limit_wait: Duration::from_secs(1),
    })
}

#[test]
fn one_token_per_repository_reused_and_reminted_when_github_refuses_it() {
    let fake = fake_with_app(&["scs", "acme"]);
    fake.create_repo("scs/cluster-stacks", "main", &[("README.md", b"# s\n")]);
    fake.create_repo("acme/gitops", "main", &[("a.yaml", b"a: 1\n")]);
    let f = app_forge(&fake);
    let stacks = repo("scs/cluster-stacks");

    // Writes and reads on two organisations' repositories.
    let head = f.branch_head(&stacks, "main").unwrap().unwrap();
    f.create_tag(&stacks, "t1", &head, "t1").unwrap();
    let d = f.create_draft_release(&stacks, "t1", "t1", "").unwrap();
    f.upload_asset(&stacks, d.id, "a.bin", b"x").unwrap();
    f.publish_release(&stacks, d.id, true).unwrap();
    let acme = repo("acme/gitops");
    let ah = f.branch_head(&acme, "main").unwrap().unwrap();
    assert_eq!(
        f.read_file(&acme, &ah, "a.yaml").unwrap().as_deref(),
        Some(&b"a: 1\n"[..])
    );
    assert_eq!(
        fake.installation_tokens_minted(),
        2,
        "one token per repository, reused for every request"
    );

    // The run outlives its tokens: GitHub refuses them, the forge mints new ones and goes on.
    fake.expire_installation_tokens();
    f.create_tag(&stacks, "t2", &head, "t2").unwrap();
    assert_eq!(
        f.tag_target(&stacks, "t2").unwrap().as_deref(),
        Some(head.as_str())
    );
    assert!(f.branch_head(&acme, "main").unwrap().is_some());
    assert_eq!(fake.installation_tokens_minted(), 4);
    assert_eq!(
        f.list_releases(&stacks).unwrap().len(),
        1,
        "drafts visible, nothing doubled"
    );
}

#[test]
fn a_repository_of_an_owner_without_the_app_is_a_clear_error() {
    let fake = fake_with_app(&["scs"]);
    fake.create_repo("nobody/gitops", "main", &[("a.yaml", b"a: 1\n")]);
    let f = app_forge(&fake);
    let e = f.branch_head(&repo("nobody/gitops"), "main").unwrap_err();
    assert!(matches!(e, ForgeError::Rejected { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains(&APP_ID.to_string())
            && msg.contains("not installed on `nobody`")
            && msg.contains("docs/github-setup.md"),
        "{msg}"
    );
    assert_eq!(fake.installation_tokens_minted(), 0);
}

pub(crate) fn write_config(dir: &Path, fake: &FakeGithub) -> PathBuf {
    let stack = |versions: &str| {
        format!(
            "apiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: openstack-scs2-1-33\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"1.33\"\n  versions: {versions}\n"
        )
    };
    let mut yaml = format!(
        "stacks:\n  - provider: openstack\n    name: scs2\n    templates: t\n    output: o\n    minors: [\"1.33\"]\n    node_image: {{url: \"https://img/{{version}}.qcow2\", name: \"ubuntu-capi-image-{{version}}\"}}\nforge:\n  kind: github\n  repository: scs/cluster-stacks\n  github:\n    api_url: \"{}\"\n    upload_url: \"{}\"\n    token_env: STACKBOT_NO_SUCH_TOKEN\n    app: {{id: {APP_ID}, private_key_env: {KEY_ENV}}}\ntenants:\n",
        fake.api_url(),
        fake.upload_url()
    );
    for (name, r) in [
        ("acme", "acme/gitops"),
        ("nobody", "nobody/gitops"),
        ("beta", "beta/gitops"),
    ] {
        fake.create_repo(
            r,
            "main",
            &[("clusterstacks/prod.yaml", stack("[v1]").as_bytes())],
        );
        yaml.push_str(&format!(
            "  - name: {name}\n    repository: {r}\n    files: [\"clusterstacks/*.yaml\"]\n    stacks: [openstack/scs2]\n"
        ));
    }
    let p = dir.join("stackbot.yaml");
    std::fs::write(&p, yaml).unwrap();
    p
}

#[test]
fn tenants_as_an_app_across_organisations_one_owner_without_installation_exits_3() {
    let fake = fake_with_app(&["scs", "acme", "beta"]);
    fake.create_repo("scs/cluster-stacks", "main", &[("README.md", b"# s\n")]);
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), &fake);
    // A published release to propagate, made through the App as well.
    let f = app_forge(&fake);
    let stacks = repo("scs/cluster-stacks");
    let head = f.branch_head(&stacks, "main").unwrap().unwrap();
    let tag = "openstack-scs2-1-33-v2";
    f.create_tag(&stacks, tag, &head, tag).unwrap();
    let r = f
        .create_draft_release(&stacks, tag, tag, "Kubernetes v1.33.5")
        .unwrap();
    let meta = "apiVersion: metadata.clusterstack.x-k8s.io/v1alpha1\nversions:\n    clusterStack: v2\n    kubernetes: v1.33.5\n    components:\n        clusterAddon: v1\n        nodeImage: v1\n";
    f.upload_asset(&stacks, r.id, "metadata.yaml", meta.as_bytes())
        .unwrap();
    f.publish_release(&stacks, r.id, true).unwrap();

    let key = key();
    let out = Command::cargo_bin("stackbot")
        .unwrap()
        .env(KEY_ENV, &key)
        .env("NO_COLOR", "1")
        .env("RUST_LOG", "trace")
        .args([
            "-c",
            cfg.to_str().unwrap(),
            "-vvv",
            "--format",
            "json",
            "tenants",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    let reports: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let of = |t: &str| {
        reports["tenants"]
            .as_array()
            .or(reports.as_array())
            .unwrap()
            .iter()
            .find(|r| r["tenant"] == t)
            .cloned()
            .unwrap_or_else(|| panic!("no report for {t}: {reports}"))
    };
    assert_eq!(of("acme")["outcome"], "opened", "{reports}");
    assert_eq!(of("beta")["outcome"], "opened", "{reports}");
    assert_eq!(of("nobody")["outcome"], "failed", "{reports}");
    let err = of("nobody")["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        err.contains("not installed on `nobody`") && err.contains("docs/github-setup.md"),
        "{err}"
    );
    for p in ["acme/gitops", "beta/gitops"] {
        assert_eq!(
            f.find_pulls(&repo(p), "stackbot/openstack-scs2")
                .unwrap()
                .len(),
            1,
            "{p}"
        );
    }
    // The private key (any line of it), the JWTs and the installation tokens never show.
    for line in key.lines().filter(|l| !l.starts_with("-----")) {
        assert!(
            !stdout.contains(line) && !stderr.contains(line),
            "key material leaked"
        );
    }
    for text in [&stdout, &stderr] {
        assert!(!text.contains("ghs_"), "an installation token leaked");
        assert!(!text.contains("eyJhbGciOiJSUzI1NiI"), "a JWT leaked");
    }
}
