//! `publish: [oci]` alone over many runs (issue 12, items 4 and 5, release side), with the
//! local forge and a real OCI registry on loopback. The OCI tag is the publication and the
//! evidence: the push comes first, then the commit (with `release: v<N>` in the lock) and the
//! tag. So a run that stopped after the push is finished (commit, tag), a deleted OCI tag is a
//! withdrawal (its number is never reissued, its content not pushed again), and the cost of a
//! run does not grow with the number of releases.

use crate::support::registry as registry_support;

use std::path::Path;

use crate::support::release::{desired, packager, repo};
use registry_support::TestRegistry;
use stackbot::forge::Forge;
use stackbot::forge::counting::Counting;
use stackbot::forge::faulty::{FaultMode, Faulty};
use stackbot::forge::local::LocalForge;
use stackbot::pipeline::release::{Target, release_desired};
use stackbot::plan::{Desired, Mode, Settings};

fn forge(dir: &Path) -> LocalForge {
    let f = LocalForge::new(dir.join("forge"), "stackbot", "stackbot@example.org");
    f.ensure_repo(&repo(), "main").unwrap();
    f
}

fn target(reg: &TestRegistry) -> Target {
    let config = yaml_serde::from_str::<stackbot::config::Config>(&format!(
        "stacks: []\npublish: [oci]\noci:\n  registry: \"{0}\"\n  repository: \"{0}/kaas/cluster-stacks\"\n  plain_http: true\n",
        reg.addr
    ))
    .unwrap();
    let now = chrono::NaiveDate::from_ymd_opt(2026, 5, 1).unwrap();
    let (settings, publisher) = stackbot::oci::publish::for_run(
        &config,
        now,
        crate::support::release::manual_clock(now),
        |_| None,
    )
    .unwrap();
    Target {
        repo: repo(),
        base_branch: "main".into(),
        settings: Settings {
            mode: Mode::Direct,
            lock_path: "stackbot.lock".into(),
            now,
            oci: settings,
            bot_email: "stackbot@example.org".into(),
            compliance: Default::default(),
            gate: Default::default(),
        },
        oci: publisher,
    }
}

fn oci_tags(reg: &TestRegistry) -> Vec<String> {
    let mut t = reg.client().list_tags().unwrap();
    t.sort();
    t
}

/// A maintainer deletes an OCI tag (the registry's storage, as `regctl tag rm` leaves it).
fn delete_oci_tag(reg: &TestRegistry, tag: &str) {
    let dir = reg
        .storage()
        .join("docker/registry/v2/repositories/kaas/cluster-stacks/_manifests/tags")
        .join(tag);
    std::fs::remove_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
}

fn patch(p: u32) -> Desired {
    desired(&format!("v1.34.{p}"), "2.34.2")
}

/// Path → bytes of every file on main.
type Files = Vec<(String, Vec<u8>)>;

/// Files of main and the tags' commits, comparable across runs.
fn state(f: &LocalForge, tags: &[&str]) -> (Files, Vec<Option<String>>) {
    let head = f.branch_head(&repo(), "main").unwrap().unwrap();
    let files = f
        .list_files(&repo(), &head)
        .unwrap()
        .into_iter()
        .map(|p| {
            let b = f.read_file(&repo(), &head, &p).unwrap().unwrap();
            (p, b)
        })
        .collect();
    let tagged = tags
        .iter()
        .map(|t| f.tag_target(&repo(), t).unwrap())
        .collect();
    (files, tagged)
}

#[test]
fn a_run_that_stopped_after_the_push_is_finished_with_its_commit_and_tag() {
    let reg = TestRegistry::start();
    let want = {
        let tmp = tempfile::tempdir().unwrap();
        let reg = TestRegistry::start();
        let f = forge(tmp.path());
        release_desired(&f, &target(&reg), &[patch(7)], &packager).unwrap();
        let (files, tags) = state(&f, &["openstack-scs2-1-34-v1"]);
        (files, tags.iter().map(Option::is_some).collect::<Vec<_>>())
    };
    drop(reg);
    // The forge writes of a release with `oci` alone: the commit, then the tag.
    for (k, mode) in [
        (1, FaultMode::Before),
        (1, FaultMode::After),
        (2, FaultMode::Before),
    ] {
        let reg = TestRegistry::start();
        let tmp = tempfile::tempdir().unwrap();
        let t = target(&reg);
        let faulty = Faulty::new(forge(tmp.path()), k, mode);
        assert!(release_desired(&faulty, &t, &[patch(7)], &packager).is_err());
        assert_eq!(
            oci_tags(&reg),
            ["openstack-scs2-1-34-v1"],
            "the push came first"
        );
        let f = forge(tmp.path());
        let (p, _) = release_desired(&f, &t, &[patch(7)], &packager).unwrap();
        assert!(p.releases[0].resumed, "write {k} {mode:?}: {p:?}");
        let (files, tags) = state(&f, &["openstack-scs2-1-34-v1"]);
        assert_eq!(
            (files, tags.iter().map(Option::is_some).collect::<Vec<_>>()),
            want,
            "write {k} {mode:?}"
        );
        let c = Counting::new(forge(tmp.path()));
        let (p, _) = release_desired(&c, &t, &[patch(7)], &packager).unwrap();
        assert!(p.is_noop(), "{p:?}");
        assert_eq!(c.writes(), 0);
        assert_eq!(oci_tags(&reg), ["openstack-scs2-1-34-v1"]);
    }
}

#[test]
fn a_deleted_oci_tag_is_withdrawn_never_pushed_again_nor_its_number_reused() {
    let reg = TestRegistry::start();
    let tmp = tempfile::tempdir().unwrap();
    let f = forge(tmp.path());
    let t = target(&reg);
    release_desired(&f, &t, &[patch(7)], &packager).unwrap();
    let (_, out) = release_desired(&f, &t, &[patch(8)], &packager).unwrap();
    assert_eq!(out.released, ["openstack-scs2-1-34-v2"]);
    delete_oci_tag(&reg, "openstack-scs2-1-34-v2");
    assert_eq!(oci_tags(&reg), ["openstack-scs2-1-34-v1"]);
    let (p, out) = release_desired(&f, &t, &[patch(8)], &packager).unwrap();
    assert!(out.released.is_empty(), "{out:?}");
    assert!(
        p.skipped.iter().any(|s| s.reason
            == stackbot::plan::SkipReason::Withdrawn {
                tag: "openstack-scs2-1-34-v2".into()
            }),
        "{:?}",
        p.skipped
    );
    assert_eq!(oci_tags(&reg), ["openstack-scs2-1-34-v1"]);
    let (_, out) = release_desired(&f, &t, &[patch(9)], &packager).unwrap();
    assert_eq!(out.released, ["openstack-scs2-1-34-v3"]);
}

/// Forge requests of a no-op run and of a release run after `history` releases.
fn costs(history: u32) -> (u64, u64) {
    let reg = TestRegistry::start();
    let tmp = tempfile::tempdir().unwrap();
    let f = forge(tmp.path());
    let t = target(&reg);
    for p in 1..=history {
        release_desired(&f, &t, &[patch(p)], &packager).unwrap();
    }
    assert_eq!(oci_tags(&reg).len(), history as usize);
    let c = Counting::new(forge(tmp.path()));
    assert!(
        release_desired(&c, &t, &[patch(history)], &packager)
            .unwrap()
            .0
            .is_noop()
    );
    let noop = c.total();
    let c = Counting::new(forge(tmp.path()));
    let (_, out) = release_desired(&c, &t, &[patch(history + 1)], &packager).unwrap();
    assert_eq!(out.released.len(), 1);
    (noop, c.total())
}

#[test]
fn the_cost_of_a_run_does_not_grow_with_the_number_of_releases() {
    let short = costs(2);
    let long = costs(12);
    eprintln!(
        "oci alone, forge requests after 2 / 12 releases: no-op {} / {}, release {} / {}",
        short.0, long.0, short.1, long.1
    );
    assert_eq!(
        short, long,
        "(no-op, release) after 2 and after 12 releases"
    );
    // A no-op: the release listing and the tag of the latest release (the push comes first).
    assert_eq!(short.0, 2);
}
