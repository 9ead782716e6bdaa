//! End-to-end release on the local forge: publish, no-op, resume after a crash at every write,
//! and concurrent runs.

use std::collections::BTreeMap;
use std::path::Path;

use sha2::{Digest, Sha256};
use stackbot::apply;
use stackbot::forge::Forge;
use stackbot::forge::counting::Counting;
use stackbot::forge::faulty::{FaultMode, Faulty};
use stackbot::forge::local::LocalForge;
use stackbot::model::ReleaseName;
use stackbot::plan::{Desired, Mode};

use crate::support::copy_dir;
use crate::support::release::*;

fn forge(dir: &Path) -> LocalForge {
    let f = LocalForge::new(dir.join("forge"), "stackbot", "stackbot@example.org");
    f.ensure_repo(&repo(), "main").unwrap();
    f
}

fn run(f: &dyn Forge, d: &[Desired]) -> anyhow::Result<(stackbot::plan::Plan, apply::Outcome)> {
    Ok(stackbot::pipeline::release::release_desired(
        f,
        &target(),
        d,
        &packager,
    )?)
}

/// A release as seen from outside: (tag, draft, name, body, asset name → sha256).
type SeenRelease = (
    String,
    bool,
    Option<String>,
    String,
    BTreeMap<String, String>,
);

/// Everything a user of the forge can see, with commit ids replaced by content.
#[derive(Debug, PartialEq, Eq)]
struct State {
    /// (tag, draft, name, release notes, asset name → sha256)
    releases: Vec<SeenRelease>,
    /// tag → files of the tagged commit (path → sha256)
    tags: BTreeMap<String, BTreeMap<String, String>>,
    /// files on main (path → sha256)
    main: BTreeMap<String, String>,
}

fn tree_of(f: &LocalForge, commit: &str) -> BTreeMap<String, String> {
    f.list_files(&repo(), commit)
        .unwrap()
        .into_iter()
        .map(|p| {
            let b = f.read_file(&repo(), commit, &p).unwrap().unwrap();
            (p, hex::encode(Sha256::digest(b)))
        })
        .collect()
}

fn state(f: &LocalForge, tags: &[&str]) -> State {
    let mut releases: Vec<_> = f
        .list_releases(&repo())
        .unwrap()
        .into_iter()
        .map(|r| {
            let assets = r
                .assets
                .iter()
                .map(|a| {
                    let b = f.download_asset(&repo(), r.id, a).unwrap();
                    assert_eq!(b.len() as u64, a.size);
                    (a.name.clone(), hex::encode(Sha256::digest(b)))
                })
                .collect();
            (r.tag, r.draft, r.name, r.body, assets)
        })
        .collect();
    releases.sort();
    let tags = tags
        .iter()
        .filter_map(|t| {
            f.tag_target(&repo(), t)
                .unwrap()
                .map(|c| (t.to_string(), tree_of(f, &c)))
        })
        .collect();
    let head = f.branch_head(&repo(), "main").unwrap().unwrap();
    State {
        releases,
        tags,
        main: tree_of(f, &head),
    }
}

const TAGS: [&str; 4] = [
    "openstack-scs2-1-33-v1",
    "openstack-scs2-1-34-v1",
    "openstack-scs2-1-33-v2",
    "openstack-scs2-1-34-v2",
];

#[test]
fn first_run_publishes_one_release_per_minor_with_the_assets_cso_needs() {
    let tmp = tempfile::tempdir().unwrap();
    let f = forge(tmp.path());
    let (plan, out) = run(&f, &two_minors()).unwrap();
    assert_eq!(
        out.released,
        vec!["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"]
    );
    assert_eq!(plan.releases[1].kubernetes, "v1.34.7");
    let rels = f.list_releases(&repo()).unwrap();
    assert_eq!(rels.len(), 2);
    for r in &rels {
        assert!(!r.draft, "{} must be published", r.tag);
        assert_eq!(
            r.name.as_deref(),
            Some(r.tag.as_str()),
            "CSO lists by name, downloads by tag"
        );
        let name = ReleaseName::parse(&r.tag).unwrap();
        let prefix = name.prefix();
        let mut names: Vec<_> = r.assets.iter().map(|a| a.name.clone()).collect();
        names.sort();
        assert_eq!(
            names,
            vec![
                "SHA256SUMS".to_string(),
                "clusteraddon.yaml".into(),
                "hashes.json".into(),
                "metadata.yaml".into(),
                format!("{prefix}-cluster-addon-v1.tgz"),
                format!("{prefix}-cluster-class-v1.tgz"),
            ]
        );
        // SHA256SUMS covers every other asset.
        let sums = r.assets.iter().find(|a| a.name == "SHA256SUMS").unwrap();
        let sums = String::from_utf8(f.download_asset(&repo(), r.id, sums).unwrap()).unwrap();
        for a in r.assets.iter().filter(|a| a.name != "SHA256SUMS") {
            let b = f.download_asset(&repo(), r.id, a).unwrap();
            let line = format!("{}  {}", hex::encode(Sha256::digest(&b)), a.name);
            assert!(
                sums.lines().any(|l| l == line),
                "{line} missing from SHA256SUMS"
            );
        }
        assert!(r.body.contains("Kubernetes"), "{}", r.body);
        assert!(r.body.contains("sha256"), "{}", r.body);
        assert!(r.body.contains("SCS 0210 deadline"), "{}", r.body);
        // The tag is on a commit holding the rendered directory and the lock.
        let commit = f.tag_target(&repo(), &r.tag).unwrap().unwrap();
        let files = f.list_files(&repo(), &commit).unwrap();
        let dir = format!(
            "providers/openstack/scs2/{}/csctl.yaml",
            name.minor.dashed()
        );
        assert!(files.contains(&dir), "{files:?}");
        assert!(files.contains(&"stackbot.lock".to_string()));
    }
    let head = f.branch_head(&repo(), "main").unwrap().unwrap();
    let lock = f
        .read_file(&repo(), &head, "stackbot.lock")
        .unwrap()
        .unwrap();
    let lock = String::from_utf8(lock).unwrap();
    assert!(
        lock.contains("v1.33.10") && lock.contains("v1.34.7"),
        "{lock}"
    );
}

#[test]
fn second_run_is_a_noop_with_zero_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let f = forge(tmp.path());
    run(&f, &two_minors()).unwrap();
    let counted = Counting::new(forge(tmp.path()));
    let (plan, out) = run(&counted, &two_minors()).unwrap();
    assert!(plan.is_noop());
    assert!(out.released.is_empty());
    assert_eq!(plan.skipped.len(), 2, "{:?}", plan.skipped);
    assert_eq!(counted.writes(), 0, "{:?}", counted.by_method());
    // One release listing plus one hashes.json per series.
    assert_eq!(counted.reads(), 3, "{:?}", counted.by_method());
    eprintln!("no-op run: {} forge requests", counted.total());
}

#[test]
fn a_kubernetes_patch_alone_releases_and_keeps_unchanged_component_versions() {
    let tmp = tempfile::tempdir().unwrap();
    let f = forge(tmp.path());
    run(&f, &two_minors()).unwrap();
    let next = vec![desired("v1.33.10", "2.33.1"), desired("v1.34.8", "2.34.2")];
    let (plan, out) = run(&f, &next).unwrap();
    assert_eq!(out.released, vec!["openstack-scs2-1-34-v2"]);
    let r = &plan.releases[0];
    assert_eq!(
        (
            r.versions.cluster_stack.as_str(),
            r.versions.cluster_addon.as_str(),
            r.versions.node_image.as_str()
        ),
        ("v2", "v1", "v1"),
        "only the cluster-class part changed"
    );
    assert!(
        r.notes.contains("v1.34.8") && r.notes.contains("was v1.34.7"),
        "{}",
        r.notes
    );
    // A component change bumps clusterAddon.
    let next = vec![desired("v1.33.10", "2.33.2"), desired("v1.34.8", "2.34.2")];
    let (plan, out) = run(&f, &next).unwrap();
    assert_eq!(out.released, vec!["openstack-scs2-1-33-v2"]);
    assert_eq!(plan.releases[0].versions.cluster_addon, "v2");
    assert!(
        plan.releases[0].notes.contains("2.33.1 → 2.33.2"),
        "{}",
        plan.releases[0].notes
    );
}

#[test]
fn notes_of_a_patch_release_resumed_after_its_commit_equal_the_uninterrupted_ones() {
    let next = vec![desired("v1.33.10", "2.33.2"), desired("v1.34.8", "2.34.2")];
    let notes = |f: &LocalForge| -> Vec<(String, String)> {
        let mut v: Vec<_> = f
            .list_releases(&repo())
            .unwrap()
            .into_iter()
            .map(|r| (r.tag, r.body))
            .collect();
        v.sort();
        v
    };
    let clean = tempfile::tempdir().unwrap();
    let f = forge(clean.path());
    run(&f, &two_minors()).unwrap();
    run(&f, &next).unwrap();
    let want = notes(&f);
    assert!(
        want.iter().any(|(_, b)| b.contains("(was v1.34.7)")),
        "{want:#?}"
    );
    assert!(
        want.iter().any(|(_, b)| b.contains("2.33.1 → 2.33.2")),
        "{want:#?}"
    );
    // Interrupt the patch run right after its first write (the commit of the rendered tree
    // and stackbot.lock), then let the next run finish it.
    let tmp = tempfile::tempdir().unwrap();
    run(&forge(tmp.path()), &two_minors()).unwrap();
    let faulty = Faulty::new(forge(tmp.path()), 1, FaultMode::After);
    assert!(run(&faulty, &next).is_err());
    let f = forge(tmp.path());
    run(&f, &next).unwrap();
    assert_eq!(notes(&f), want);
}

#[test]
fn unparsable_release_names_are_skipped_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let f = forge(tmp.path());
    let r = f
        .create_draft_release(&repo(), "latest", "latest", "")
        .unwrap();
    f.publish_release(&repo(), r.id, true).unwrap();
    let (plan, out) = run(&f, &two_minors()).unwrap();
    assert_eq!(out.released.len(), 2);
    assert!(
        plan.warnings.iter().any(|w| w.contains("`latest`")),
        "{:?}",
        plan.warnings
    );
}

#[test]
fn numbering_continues_after_the_highest_existing_release_of_the_series() {
    let tmp = tempfile::tempdir().unwrap();
    let f = forge(tmp.path());
    // A release v4 made by hand (no hashes.json): the next one is v5.
    let r = f
        .create_draft_release(
            &repo(),
            "openstack-scs2-1-34-v4",
            "openstack-scs2-1-34-v4",
            "",
        )
        .unwrap();
    f.publish_release(&repo(), r.id, true).unwrap();
    let (_, out) = run(&f, &two_minors()).unwrap();
    assert_eq!(
        out.released,
        vec!["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v5"]
    );
}

#[test]
fn duplicate_and_superseded_drafts_left_by_others_are_cleaned() {
    let tmp = tempfile::tempdir().unwrap();
    let g = forge(tmp.path());
    // 1.34: v1 published by hand (no hashes.json) plus a duplicate draft of it.
    let t34 = "openstack-scs2-1-34-v1";
    let d1 = g
        .create_draft_release(&repo(), t34, t34, "by hand")
        .unwrap();
    let d2 = g
        .create_draft_release(&repo(), t34, t34, "by hand")
        .unwrap();
    g.publish_release(&repo(), d1.id, true).unwrap();
    // 1.33: an abandoned draft v1 that never got a tag.
    let t33 = "openstack-scs2-1-33-v1";
    let e1 = g.create_draft_release(&repo(), t33, t33, "stale").unwrap();
    let (_, out) = run(&g, &two_minors()).unwrap();
    assert_eq!(
        out.released,
        vec!["openstack-scs2-1-33-v2", "openstack-scs2-1-34-v2"],
        "numbering counts drafts too"
    );
    let left: Vec<_> = g.list_releases(&repo()).unwrap();
    assert!(left.iter().all(|r| !r.draft), "no draft is left: {left:?}");
    assert!(left.iter().all(|r| r.id != d2.id && r.id != e1.id));
    assert_eq!(left.len(), 3);
    // And nothing is left to do.
    let c = Counting::new(forge(tmp.path()));
    run(&c, &two_minors()).unwrap();
    assert_eq!(c.writes(), 0);
}

/// The reference end state: an uninterrupted run on a fresh forge.
fn reference_state() -> State {
    let tmp = tempfile::tempdir().unwrap();
    let f = forge(tmp.path());
    run(&f, &two_minors()).unwrap();
    state(&f, &TAGS)
}

fn writes_of_clean_run() -> u64 {
    let tmp = tempfile::tempdir().unwrap();
    let f = Counting::new(forge(tmp.path()));
    run(&f, &two_minors()).unwrap();
    f.writes()
}

#[test]
fn a_crash_at_any_write_is_finished_by_the_next_run() {
    let want = reference_state();
    let total = writes_of_clean_run();
    assert!(
        total >= 14,
        "two releases need at least 14 writes, saw {total}"
    );
    for mode in [FaultMode::Before, FaultMode::After] {
        for k in 1..=total {
            let tmp = tempfile::tempdir().unwrap();
            let faulty = Faulty::new(forge(tmp.path()), k, mode);
            assert!(
                run(&faulty, &two_minors()).is_err(),
                "write {k} ({mode:?}) must fail the run"
            );
            let f = forge(tmp.path());
            let (_, out) = run(&f, &two_minors())
                .unwrap_or_else(|e| panic!("resume after write {k} ({mode:?}): {e:#}"));
            let got = state(&f, &TAGS);
            assert_eq!(
                got,
                want,
                "after a crash at write {k} ({mode:?}, performed {:?}) and a re-run {:?}",
                faulty.performed(),
                out.actions
            );
            // And the run after that does nothing.
            let c = Counting::new(forge(tmp.path()));
            run(&c, &two_minors()).unwrap();
            assert_eq!(c.writes(), 0, "k={k} {mode:?}: {:?}", c.by_method());
        }
    }
}

#[test]
fn two_concurrent_runs_publish_once() {
    let want = reference_state();
    let tmp = tempfile::tempdir().unwrap();
    forge(tmp.path());
    let dir = tmp.path().to_path_buf();
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let f = forge(&dir);
                let _guard = f.lock_run().unwrap();
                let (_, out) = run(&f, &two_minors()).unwrap();
                out.released
            })
        })
        .collect();
    let mut released: Vec<String> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    released.sort();
    assert_eq!(
        released,
        vec!["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"],
        "each tag is published by exactly one of the runs"
    );
    assert_eq!(state(&forge(&dir), &TAGS), want);
}

#[test]
fn concurrent_runs_without_the_lock_still_never_publish_twice() {
    let want = reference_state();
    for _ in 0..3 {
        let tmp = tempfile::tempdir().unwrap();
        forge(tmp.path());
        let dir = tmp.path().to_path_buf();
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let dir = dir.clone();
                std::thread::spawn(move || run(&forge(&dir), &two_minors()).is_ok())
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let f = forge(&dir);
        for tag in TAGS {
            let published = f
                .list_releases(&repo())
                .unwrap()
                .iter()
                .filter(|r| r.tag == tag && !r.draft)
                .count();
            assert!(published <= 1, "{tag} published {published} times");
        }
        // Whatever the interleaving, one more run converges to the reference state.
        run(&f, &two_minors()).unwrap();
        assert_eq!(state(&f, &TAGS), want);
    }
}

fn stackbot(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_stackbot"))
        .current_dir(dir)
        .args(["-c", "examples/local/stackbot.yaml"])
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_TOKEN")
        // The local forge is refused under GitHub Actions: the demo runs as on a laptop.
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_readme_demo_releases_then_does_nothing_offline_and_without_a_token() {
    // A copy of the clone's demo files, so the test writes only into a temp dir.
    let root = &crate::support::root();
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(
        &root.join("examples/local"),
        &tmp.path().join("examples/local"),
    );
    copy_dir(&root.join("templates"), &tmp.path().join("templates"));

    let (code, out, err) = stackbot(tmp.path(), &["plan", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let plan: serde_json::Value = serde_json::from_str(&out).unwrap();
    let tags: Vec<&str> = plan["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["tag"].as_str().unwrap())
        .collect();
    assert_eq!(tags, ["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"]);
    for r in plan["releases"].as_array().unwrap() {
        for key in ["stack", "minor", "kubernetes", "version", "assets"] {
            assert!(!r[key].is_null(), "plan JSON lacks `{key}`: {r}");
        }
    }
    assert!(plan["tenants"].is_array());
    assert!(
        !tmp.path().join(".stackbot/forge/releases").exists(),
        "plan must not write releases"
    );

    let (code, out, err) = stackbot(tmp.path(), &["release", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("+++ b/out/openstack/scs2/1-34/csctl.yaml"),
        "{out}"
    );

    let (code, out, err) = stackbot(tmp.path(), &["release"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("released openstack-scs2-1-34-v1"), "{out}");
    assert!(
        out.contains("tenant acme") && out.contains("opened pull request"),
        "{out}"
    );
    assert!(out.contains("tenant globex"), "{out}");

    let (code, out, err) = stackbot(tmp.path(), &["release", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["released"], serde_json::json!([]), "{out}");
    assert!(v["actions"].as_array().unwrap().is_empty(), "{out}");
    // The same no-op run through the library, counting forge requests (release + tenants).
    let loaded = stackbot::config::load(&tmp.path().join("examples/local/stackbot.yaml")).unwrap();
    let ctx = stackbot::pipeline::Context::fixed(loaded.clone(), "2026-05-01".parse().unwrap());
    let sel = stackbot::pipeline::Selection::default();
    let counted = Counting::new(LocalForge::from_config(&loaded, ctx.clock.clone()).unwrap());
    let planned = stackbot::pipeline::release::plan(&ctx, &counted, &sel).unwrap();
    let noop = apply::apply(
        &planned.plan,
        &counted,
        &planned.target.repo,
        &planned.observed,
    )
    .unwrap();
    assert!(noop.actions.is_empty());
    let release_requests = counted.total();
    let reports = stackbot::pipeline::tenants::run(&ctx, &counted, &Default::default()).unwrap();
    assert_eq!(reports.len(), 2);
    assert_eq!(counted.writes(), 0, "{:?}", counted.by_method());
    eprintln!(
        "demo no-op run: {release_requests} forge requests for releases, {} in total with tenants, 0 writes ({:?})",
        counted.total(),
        counted.by_method()
    );
    assert_eq!(
        release_requests, 3,
        "one listing + one hashes.json per released series"
    );

    let skipped = v["skipped"].as_array().unwrap();
    assert!(
        skipped.iter().any(|s| s["reason"]
            .as_str()
            .unwrap()
            .contains("unchanged since openstack-scs2-1-34-v1")),
        "{out}"
    );
}

#[test]
fn pull_request_mode_publishes_only_after_the_release_pull_request_is_merged() {
    let tmp = tempfile::tempdir().unwrap();
    let f = forge(tmp.path());
    let mut t = target();
    t.settings.mode = Mode::PullRequest;
    let d = vec![desired("v1.34.7", "2.34.2")];
    let (_, out) = stackbot::pipeline::release::release_desired(&f, &t, &d, &packager).unwrap();
    assert!(out.released.is_empty());
    assert_eq!(out.pull_requests.len(), 1, "{out:?}");
    let branch = "stackbot/release/openstack-scs2-1-34";
    let pulls = f.find_pulls(&repo(), branch).unwrap();
    assert_eq!(pulls.len(), 1);
    assert_eq!(pulls[0].title, "Release openstack-scs2-1-34-v1");
    assert!(f.list_releases(&repo()).unwrap().is_empty());
    // Re-running before the merge changes nothing.
    let c = Counting::new(forge(tmp.path()));
    stackbot::pipeline::release::release_desired(&c, &t, &d, &packager).unwrap();
    assert_eq!(c.writes(), 0, "{:?}", c.by_method());
    // A maintainer merges; the next run tags the merged content and publishes.
    f.merge_pull(&repo(), pulls[0].number).unwrap();
    let (_, out) = stackbot::pipeline::release::release_desired(&f, &t, &d, &packager).unwrap();
    assert_eq!(out.released, vec!["openstack-scs2-1-34-v1"]);
    let head = f.branch_head(&repo(), "main").unwrap().unwrap();
    assert_eq!(
        f.tag_target(&repo(), "openstack-scs2-1-34-v1").unwrap(),
        Some(head)
    );
    let c = Counting::new(forge(tmp.path()));
    stackbot::pipeline::release::release_desired(&c, &t, &d, &packager).unwrap();
    assert_eq!(c.writes(), 0);
}
