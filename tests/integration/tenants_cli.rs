//! `stackbot tenants` through the binary: JSON fields of the contract, `--dry-run` diffs,
//! exit code 3 when a tenant fails, and `--shard` selecting a deterministic subset.

use std::path::Path;

use assert_cmd::Command;
use stackbot::forge::local::LocalForge;
use stackbot::forge::{Forge, RepoRef};

const GOOD: &str = "apiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: openstack-scs2-1-33\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"1.33\"\n  versions: [v2] # pinned\n";

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A config with tenants `acme` (good) and `broken` (not YAML), and one published release.
fn setup(dir: &Path) {
    write(&dir.join("seeds/stacks/README.md"), "stacks\n");
    write(&dir.join("seeds/acme/stacks/prod.yaml"), GOOD);
    write(&dir.join("seeds/broken/stacks/prod.yaml"), "spec: [\n");
    write(
        &dir.join("stackbot.yaml"),
        "stacks:\n  - provider: openstack\n    name: scs2\n    templates: t\n    output: o\n    minors: [\"1.33\"]\n    node_image: {url: \"https://img/{version}.qcow2\", name: \"img-{version}\"}\nforge:\n  repository: scs/cluster-stacks\n  local:\n    path: forge\n    seed:\n      scs/cluster-stacks: seeds/stacks\n      acme/gitops: seeds/acme\n      broken/gitops: seeds/broken\ntenants:\n  - name: acme\n    repository: acme/gitops\n    files: [\"stacks/*.yaml\"]\n    stacks: [openstack/scs2]\n  - name: broken\n    repository: broken/gitops\n    files: [\"stacks/*.yaml\"]\n    stacks: [openstack/scs2]\n",
    );
    let f = LocalForge::new(
        dir.join("forge"),
        "stackbot",
        "stackbot@users.noreply.github.com",
    )
    .with_seed(
        RepoRef::parse("scs/cluster-stacks").unwrap(),
        dir.join("seeds/stacks"),
    );
    let r = RepoRef::parse("scs/cluster-stacks").unwrap();
    f.ensure_repo(&r, "main").unwrap();
    let head = f.branch_head(&r, "main").unwrap().unwrap();
    let tag = "openstack-scs2-1-33-v3";
    f.create_tag(&r, tag, &head, tag).unwrap();
    let rel = f.create_draft_release(&r, tag, tag, "notes").unwrap();
    f.upload_asset(
        &r,
        rel.id,
        "metadata.yaml",
        b"versions:\n    clusterStack: v3\n    kubernetes: v1.33.5\n",
    )
    .unwrap();
    f.publish_release(&r, rel.id, true).unwrap();
}

fn stackbot(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("stackbot").unwrap();
    // The local forge is refused under GitHub Actions: these run as on a laptop.
    c.current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS");
    c
}

#[test]
fn dry_run_json_lists_each_tenant_and_exits_3_when_one_failed() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let out = stackbot(dir.path())
        .args(["--format", "json", "tenants", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let acme = v
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["tenant"] == "acme")
        .unwrap();
    assert_eq!(acme["repository"], "acme/gitops");
    assert_eq!(acme["branch"], "stackbot/openstack-scs2");
    assert_eq!(acme["files"], serde_json::json!(["stacks/prod.yaml"]));
    assert_eq!(acme["action"], "open");
    let broken = v
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["tenant"] == "broken")
        .unwrap();
    assert_eq!(broken["outcome"], "failed");
    assert!(
        broken["error"]
            .as_str()
            .unwrap()
            .contains("stacks/prod.yaml")
    );
    // Nothing was written: no branch exists; the dry run did not even create the seeded
    // tenant repository (it planned against the seed).
    let f = LocalForge::new(dir.path().join("forge"), "x", "x@x");
    let acme_repo = RepoRef::parse("acme/gitops").unwrap();
    assert!(matches!(
        f.branch_head(&acme_repo, "stackbot/openstack-scs2"),
        Ok(None) | Err(stackbot::forge::ForgeError::NotFound { .. })
    ));
    assert!(matches!(
        f.branch_head(&acme_repo, "main"),
        Err(stackbot::forge::ForgeError::NotFound { .. })
    ));
}

#[test]
fn dry_run_text_shows_the_unified_diff_and_a_tenant_can_be_selected() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let out = stackbot(dir.path())
        .args(["tenants", "--dry-run", "--tenant", "acme"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("--- a/stacks/prod.yaml\n+++ b/stacks/prod.yaml\n"),
        "{text}"
    );
    assert!(
        text.contains("-  versions: [v2] # pinned\n+  versions: [v2, v3] # pinned\n"),
        "{text}"
    );
    assert!(!text.contains("broken"), "{text}");

    // Then for real: the branch and PR appear; the second run changes nothing.
    stackbot(dir.path())
        .args(["tenants", "--tenant", "acme"])
        .assert()
        .code(0);
    let f = LocalForge::new(dir.path().join("forge"), "x", "x@x");
    let acme_repo = RepoRef::parse("acme/gitops").unwrap();
    assert_eq!(
        f.find_pulls(&acme_repo, "stackbot/openstack-scs2")
            .unwrap()
            .len(),
        1
    );
    let out = stackbot(dir.path())
        .args(["--format", "json", "tenants", "--tenant", "acme"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["outcome"], "unchanged");
    assert_eq!(v[0]["action"], "none");
}

#[test]
fn shards_partition_the_tenants_and_bad_arguments_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let mut seen = Vec::new();
    for i in 1..=3 {
        let out = stackbot(dir.path())
            .args([
                "--format",
                "json",
                "tenants",
                "--dry-run",
                "--shard",
                &format!("{i}/3"),
            ])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for r in v.as_array().unwrap() {
            seen.push(r["tenant"].as_str().unwrap().to_string());
        }
    }
    seen.sort();
    assert_eq!(
        seen,
        ["acme", "broken"],
        "every tenant in exactly one shard"
    );
    stackbot(dir.path())
        .args(["tenants", "--shard", "0/3"])
        .assert()
        .code(2);
    stackbot(dir.path())
        .args(["tenants", "--tenant", "nobody"])
        .assert()
        .code(2);
}

/// A blocked tenant is a person's decision, not a failure: exit 0, the JSON says `blocked`
/// with what to do, and stderr carries a warning line (an annotation under GitHub Actions)
/// whatever `--format` and `--quiet` say.
#[test]
fn a_blocked_tenant_exits_0_with_a_warning_line_and_an_annotation() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    stackbot(dir.path())
        .args(["tenants", "--tenant", "acme"])
        .assert()
        .code(0);
    let jane = LocalForge::new(dir.path().join("forge"), "Jane", "jane@example.org");
    let acme_repo = RepoRef::parse("acme/gitops").unwrap();
    let branch = "stackbot/openstack-scs2";
    let head = jane.branch_head(&acme_repo, branch).unwrap().unwrap();
    let mut c = stackbot::forge::FileChanges::new();
    c.insert(
        "stacks/prod.yaml".into(),
        Some(GOOD.replace("[v2]", "[v3]").into_bytes()),
    );
    jane.commit(&acme_repo, branch, &head, Some(&head), &c, "only v3")
        .unwrap();
    // A new release the branch cannot take.
    let r = RepoRef::parse("scs/cluster-stacks").unwrap();
    let main = jane.branch_head(&r, "main").unwrap().unwrap();
    let tag = "openstack-scs2-1-33-v4";
    jane.create_tag(&r, tag, &main, tag).unwrap();
    let rel = jane.create_draft_release(&r, tag, tag, "notes").unwrap();
    jane.upload_asset(
        &r,
        rel.id,
        "metadata.yaml",
        b"versions:\n    clusterStack: v4\n    kubernetes: v1.33.6\n",
    )
    .unwrap();
    jane.publish_release(&r, rel.id, true).unwrap();

    // Under GitHub Actions on purpose (the annotation): the local forge must be allowed there.
    let cfg = dir.path().join("stackbot.yaml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        text.replace(
            "    path: forge\n",
            "    path: forge\n    allow_in_ci: true\n",
        ),
    )
    .unwrap();
    let out = stackbot(dir.path())
        .env("GITHUB_ACTIONS", "true")
        .args(["--quiet", "--format", "json", "tenants", "--tenant", "acme"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["outcome"], "blocked");
    let pulls = jane.find_pulls(&acme_repo, branch).unwrap();
    assert_eq!(v[0]["pull"], pulls[0].number);
    let note = v[0]["note"].as_str().unwrap();
    assert!(
        note.contains("someone else") && note.contains("close it"),
        "{note}"
    );
    assert!(
        stderr.contains("warning: tenant `acme` (acme/gitops) is blocked: "),
        "{stderr}"
    );
    assert!(
        stderr.contains("::warning title=stackbot%3A tenant blocked::tenant `acme`"),
        "{stderr}"
    );
}

#[test]
fn text_output_has_a_header_and_diffs_only_for_changes() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let text = |args: &[&str]| {
        let out = stackbot(dir.path()).args(args).output().unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let planned = text(&["tenants", "--dry-run", "--tenant", "acme"]);
    let mut lines = planned.lines();
    assert_eq!(
        lines.next(),
        Some("tenant\trepository\tbranch\taction\toutcome\tfiles\tnote"),
        "{planned}"
    );
    let row: Vec<&str> = lines.next().unwrap().split('\t').collect();
    assert_eq!(row.len(), 7, "one column per header field: {row:?}");
    assert_eq!((row[0], row[3]), ("acme", "open"), "{row:?}");
    assert!(planned.contains("+++ b/stacks/prod.yaml"), "{planned}");

    stackbot(dir.path())
        .args(["tenants", "--tenant", "acme"])
        .assert()
        .code(0);
    // Now the pull request is current: action `none`, and no diff for a change already made.
    let current = text(&["tenants", "--dry-run", "--tenant", "acme"]);
    assert!(current.contains("\tnone\t"), "{current}");
    assert!(!current.contains("+++"), "{current}");
}
