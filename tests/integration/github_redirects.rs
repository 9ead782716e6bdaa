//! Renamed and transferred repositories on the fake GitHub. GitHub answers `301` (reads) or
//! `307` (other methods) to `/repositories/{id}/…` and performs nothing at the old path: the
//! forge must follow on the same API origin (same method and body), say that the configuration
//! names the old repository, and never take an unfollowed redirect for success.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use stackbot::clock::SystemClock;
use stackbot::config::{self, GithubForgeConfig};
use stackbot::forge::github::{GithubForge, RetryPolicy};
use stackbot::forge::{Forge, ForgeError, PullState, RepoRef};
use stackbot::tenants::{Options, Outcome};
use support::fake_github::{FakeGithub, FakeOptions};

const TOKEN: &str = "ghp_REDIRECTtestTOKEN0123456789SECRET";

fn repo(s: &str) -> RepoRef {
    RepoRef::parse(s).unwrap()
}

fn forge_for(fake: &FakeGithub, api_url: String) -> GithubForge {
    let cfg = GithubForgeConfig {
        api_url,
        upload_url: Some(fake.upload_url()),
        ..GithubForgeConfig::default()
    };
    GithubForge::new(&cfg, Some(TOKEN.into()), Arc::new(SystemClock))
        .unwrap()
        .with_retry_policy(RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(2),
            max_delay: Duration::from_millis(10),
            max_rate_limit_wait: Duration::from_secs(1),
        })
}

fn files(items: &[(&str, &[u8])]) -> stackbot::forge::FileChanges {
    items
        .iter()
        .map(|(p, b)| (p.to_string(), Some(b.to_vec())))
        .collect()
}

#[test]
fn every_operation_on_a_renamed_repository_reaches_the_new_one_exactly_once() {
    let fake = FakeGithub::start_with(FakeOptions::default().with_token(TOKEN));
    fake.create_repo(
        "scs/cluster-stacks",
        "main",
        &[("README.md", b"# stacks\n")],
    );
    fake.rename_repo("scs/cluster-stacks", "cluster-stacks-v2");
    let f = forge_for(&fake, fake.api_url());
    let old = repo("scs/cluster-stacks");

    // Reads (301) and writes (307) through the old name.
    let head = f.branch_head(&old, "main").unwrap().expect("main exists");
    let c = f
        .commit(
            &old,
            "main",
            &head,
            Some(&head),
            &files(&[("a.txt", b"a\n")]),
            "m",
        )
        .unwrap();
    f.create_tag(&old, "t1", &c, "t1").unwrap();
    let d = f.create_draft_release(&old, "t1", "t1", "notes").unwrap();
    let a = f.upload_asset(&old, d.id, "a.bin", b"bytes").unwrap();
    assert_eq!(f.download_asset(&old, d.id, &a).unwrap(), b"bytes");
    f.publish_release(&old, d.id, true).unwrap();
    let p = {
        let base = f.branch_head(&old, "main").unwrap().unwrap();
        f.commit(&old, "b", &base, None, &files(&[("b", b"b")]), "b")
            .unwrap();
        f.open_pull(&old, "b", "main", "title", "body").unwrap()
    };
    f.create_comment(&old, p.number, "hello").unwrap();

    // Everything happened, once, in the repository under its new name.
    let new = "scs/cluster-stacks-v2";
    assert_eq!(fake.branch_head(new, "main").as_deref(), Some(c.as_str()));
    assert_eq!(
        fake.file(new, "main", "a.txt").as_deref(),
        Some(&b"a\n"[..])
    );
    let releases = f.list_releases(&repo(new)).unwrap();
    assert_eq!(releases.len(), 1, "{releases:?}");
    assert!(!releases[0].draft);
    assert_eq!(releases[0].assets.len(), 1);
    let pulls = f.find_pulls(&repo(new), "b").unwrap();
    assert_eq!(pulls.len(), 1);
    assert_eq!(pulls[0].state, PullState::Open);
    assert_eq!(f.list_comments(&repo(new), p.number).unwrap().len(), 1);
    assert_eq!(
        f.tag_target(&repo(new), "t1").unwrap().as_deref(),
        Some(c.as_str())
    );

    // And the configuration's old name is reported once, with the new name.
    assert_eq!(
        f.moved_repositories().into_iter().collect::<Vec<_>>(),
        vec![("scs/cluster-stacks".to_string(), new.to_string())]
    );
}

#[test]
fn a_redirect_to_another_host_is_an_error_that_says_what_to_change_in_stackbot_yaml() {
    // The fake writes its URLs with `localhost` while the forge is configured with 127.0.0.1:
    // another origin, so the token must not follow and nothing may be taken for success.
    let fake = FakeGithub::start_with(
        FakeOptions::default()
            .with_token(TOKEN)
            .with_url_host("localhost"),
    );
    fake.create_repo(
        "scs/cluster-stacks",
        "main",
        &[("README.md", b"# stacks\n")],
    );
    let f = forge_for(&fake, fake.api_url());
    let old = repo("scs/cluster-stacks");
    let head = f.branch_head(&old, "main").unwrap().unwrap();
    fake.transfer_repo("scs/cluster-stacks", "sovereign");

    let read = f.branch_head(&old, "main").unwrap_err();
    let write = f.create_tag(&old, "t", &head, "t").unwrap_err();
    for e in [&read, &write] {
        assert!(matches!(e, ForgeError::Moved { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(
            msg.contains("scs/cluster-stacks")
                && msg.contains("stackbot.yaml")
                && msg.contains("forge.repository")
                && !msg.contains(TOKEN),
            "{msg}"
        );
    }
    assert_eq!(
        fake.counts().writes,
        1,
        "the write was sent once, never repeated"
    );
    assert!(
        fake.snapshot().repos["sovereign/cluster-stacks"]
            .tags
            .is_empty()
    );
}

#[test]
fn a_tenant_in_a_transferred_repository_gets_its_pull_request_for_real() {
    let fake = FakeGithub::start_with(FakeOptions::default().with_token(TOKEN));
    fake.create_repo("scs/cluster-stacks", "main", &[("README.md", b"stacks\n")]);
    let stack = "apiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: openstack-scs2-1-33\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"1.33\"\n  versions: [v1]\n";
    fake.create_repo(
        "acme/gitops",
        "main",
        &[("clusterstacks/prod.yaml", stack.as_bytes())],
    );
    let yaml = format!(
        "stacks:\n  - provider: openstack\n    name: scs2\n    templates: t\n    output: o\n    minors: [\"1.33\"]\n    node_image: {{url: \"https://img/{{version}}.qcow2\", name: \"ubuntu-capi-image-{{version}}\"}}\nforge:\n  kind: github\n  repository: scs/cluster-stacks\n  github: {{api_url: \"{}\", upload_url: \"{}\"}}\ntenants:\n  - name: acme\n    repository: acme/gitops\n    files: [\"clusterstacks/*.yaml\"]\n    stacks: [openstack/scs2]\n",
        fake.api_url(),
        fake.upload_url()
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stackbot.yaml");
    std::fs::write(&path, yaml).unwrap();
    let loaded = config::load(&path).unwrap();
    let ctx = stackbot::pipeline::Context::fixed(loaded.clone(), "2026-05-01".parse().unwrap());
    let f = forge_for(&fake, fake.api_url()).with_committer(&loaded.config.forge.committer);

    // A published release to propagate.
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

    // The tenant's repository moves to another organisation; stackbot.yaml still names the old.
    fake.transfer_repo("acme/gitops", "acme-corp");
    let reports = stackbot::pipeline::tenants::run(&ctx, &f, &Options::default()).unwrap();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(reports[0].outcome, Outcome::Opened, "{reports:?}");
    let pulls = f
        .find_pulls(&repo("acme-corp/gitops"), "stackbot/openstack-scs2")
        .unwrap();
    assert_eq!(pulls.len(), 1, "the reported pull request exists");
    let moved = repo("acme-corp/gitops");
    let branch = f
        .branch_head(&moved, "stackbot/openstack-scs2")
        .unwrap()
        .expect("the bot branch exists");
    let file = f
        .read_file(&moved, &branch, "clusterstacks/prod.yaml")
        .unwrap()
        .unwrap();
    let file = String::from_utf8(file).unwrap();
    assert!(
        file.contains("versions: [v1, v2]"),
        "the branch carries the change:\n{file}"
    );
    assert_eq!(
        f.moved_repositories()
            .get("acme/gitops")
            .map(String::as_str),
        Some("acme-corp/gitops")
    );

    // A second run changes nothing and says so.
    let again = stackbot::pipeline::tenants::run(&ctx, &f, &Options::default()).unwrap();
    assert!(
        again.iter().all(|r| r.outcome != Outcome::Opened),
        "{again:?}"
    );
    assert_eq!(
        f.find_pulls(&repo("acme-corp/gitops"), "stackbot/openstack-scs2")
            .unwrap()
            .len(),
        1
    );
}
