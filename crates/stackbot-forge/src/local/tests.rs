//! The local forge against real git and real files: each resource round-trips, and the
//! guarantees the bot relies on (compare-and-swap branches, unique tags, one published release
//! per tag, the run lock) hold.

use std::fs;

use git2::Repository;

use super::*;
use crate::{ForgeError, PullState};

fn repo() -> RepoRef {
    RepoRef::parse("scs/cluster-stacks").unwrap()
}

fn forge(dir: &Path) -> LocalForge {
    LocalForge::new(dir.join("forge"), "stackbot", "bot@example.org")
}

fn changes(files: &[(&str, &str)]) -> FileChanges {
    files
        .iter()
        .map(|(p, c)| (p.to_string(), Some(c.as_bytes().to_vec())))
        .collect()
}

#[test]
fn seeded_repository_starts_with_the_seed_files() {
    let tmp = tempfile::tempdir().unwrap();
    let seed = tmp.path().join("seed");
    fs::create_dir_all(seed.join("clusters")).unwrap();
    fs::write(seed.join("clusters/stack.yaml"), "kind: ClusterStack\n").unwrap();
    fs::write(seed.join("README.md"), "tenant\n").unwrap();
    let f = forge(tmp.path()).with_seed(repo(), &seed);
    f.ensure_repo(&repo(), "main").unwrap();
    f.ensure_repo(&repo(), "main").unwrap(); // idempotent
    let head = f.branch_head(&repo(), "main").unwrap().unwrap();
    assert_eq!(
        f.list_files(&repo(), &head).unwrap(),
        vec!["README.md", "clusters/stack.yaml"]
    );
    assert_eq!(
        f.read_file(&repo(), &head, "clusters/stack.yaml").unwrap(),
        Some(b"kind: ClusterStack\n".to_vec())
    );
    assert_eq!(f.read_file(&repo(), &head, "missing").unwrap(), None);
}

#[test]
fn unseeded_repository_starts_with_an_empty_initial_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let f = forge(tmp.path());
    f.ensure_repo(&repo(), "main").unwrap();
    let root = f.branch_head(&repo(), "main").unwrap().unwrap();
    assert!(f.list_files(&repo(), &root).unwrap().is_empty());
    let c = f
        .commit(
            &repo(),
            "main",
            &root,
            Some(&root),
            &changes(&[("a/b.txt", "x")]),
            "add",
        )
        .unwrap();
    assert_eq!(f.branch_head(&repo(), "main").unwrap(), Some(c.clone()));
    assert_eq!(f.list_files(&repo(), &c).unwrap(), vec!["a/b.txt"]);
}

#[test]
fn commit_is_a_compare_and_swap_of_the_branch() {
    let tmp = tempfile::tempdir().unwrap();
    let seed = tmp.path().join("seed");
    fs::create_dir_all(&seed).unwrap();
    fs::write(seed.join("README.md"), "x\n").unwrap();
    let f = forge(tmp.path()).with_seed(repo(), &seed);
    f.ensure_repo(&repo(), "main").unwrap();
    let h0 = f.branch_head(&repo(), "main").unwrap().unwrap();
    let c1 = f
        .commit(
            &repo(),
            "main",
            &h0,
            Some(&h0),
            &changes(&[("x/1", "1")]),
            "one",
        )
        .unwrap();
    // A second writer that still believes the head is h0 loses.
    let err = f
        .commit(
            &repo(),
            "main",
            &h0,
            Some(&h0),
            &changes(&[("x/2", "2")]),
            "two",
        )
        .unwrap_err();
    assert!(matches!(err, ForgeError::Conflict { .. }), "{err}");
    assert_eq!(f.branch_head(&repo(), "main").unwrap(), Some(c1.clone()));
    // Creating a branch that already exists is a conflict too.
    let err = f
        .commit(&repo(), "main", &c1, None, &changes(&[]), "again")
        .unwrap_err();
    assert!(matches!(err, ForgeError::Conflict { .. }));
    // Deletions remove files.
    let mut del = FileChanges::new();
    del.insert("x/1".into(), None);
    let c2 = f
        .commit(&repo(), "main", &c1, Some(&c1), &del, "rm")
        .unwrap();
    assert_eq!(f.list_files(&repo(), &c2).unwrap(), vec!["README.md"]);
    let between = f.commits_between(&repo(), &h0, &c2).unwrap();
    assert_eq!(
        between
            .iter()
            .map(|c| c.message.as_str())
            .collect::<Vec<_>>(),
        vec!["one", "rm"]
    );
    assert_eq!(between[0].author_name, "stackbot");
}

#[test]
fn tags_are_annotated_unique_and_peel_to_their_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let seed = tmp.path().join("seed");
    fs::create_dir_all(&seed).unwrap();
    fs::write(seed.join("f"), "x").unwrap();
    let f = forge(tmp.path()).with_seed(repo(), &seed);
    f.ensure_repo(&repo(), "main").unwrap();
    let head = f.branch_head(&repo(), "main").unwrap().unwrap();
    assert_eq!(
        f.tag_target(&repo(), "openstack-scs2-1-34-v1").unwrap(),
        None
    );
    f.create_tag(&repo(), "openstack-scs2-1-34-v1", &head, "Release")
        .unwrap();
    assert_eq!(
        f.tag_target(&repo(), "openstack-scs2-1-34-v1").unwrap(),
        Some(head.clone())
    );
    let r = Repository::open_bare(f.repo_path(&repo())).unwrap();
    let tag_ref = r
        .find_reference("refs/tags/openstack-scs2-1-34-v1")
        .unwrap();
    assert!(tag_ref.peel_to_tag().is_ok(), "tag must be annotated");
    let err = f
        .create_tag(&repo(), "openstack-scs2-1-34-v1", &head, "Release")
        .unwrap_err();
    assert!(matches!(err, ForgeError::AlreadyExists { .. }));
}

#[test]
fn releases_go_from_draft_to_published_once() {
    let tmp = tempfile::tempdir().unwrap();
    let f = forge(tmp.path());
    let tag = "openstack-scs2-1-34-v1";
    let d1 = f.create_draft_release(&repo(), tag, tag, "notes").unwrap();
    let d2 = f.create_draft_release(&repo(), tag, tag, "notes").unwrap();
    assert!(
        d1.draft && d2.id > d1.id,
        "duplicate drafts are possible, as on GitHub"
    );
    let a = f
        .upload_asset(&repo(), d1.id, "metadata.yaml", b"abc")
        .unwrap();
    assert_eq!(a.size, 3);
    let err = f
        .upload_asset(&repo(), d1.id, "metadata.yaml", b"abc")
        .unwrap_err();
    assert!(matches!(err, ForgeError::AlreadyExists { .. }));
    assert_eq!(f.download_asset(&repo(), d1.id, &a).unwrap(), b"abc");
    let p = f.publish_release(&repo(), d1.id, true).unwrap();
    assert!(!p.draft);
    // A second published release of the same tag is refused, and so is a new draft.
    assert!(matches!(
        f.publish_release(&repo(), d2.id, true).unwrap_err(),
        ForgeError::AlreadyExists { .. }
    ));
    assert!(matches!(
        f.create_draft_release(&repo(), tag, tag, "").unwrap_err(),
        ForgeError::AlreadyExists { .. }
    ));
    f.delete_release(&repo(), d2.id).unwrap();
    let all = f.list_releases(&repo()).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].assets, vec![a.clone()]);
    f.delete_asset(&repo(), d1.id, a.id).unwrap();
    assert!(f.list_releases(&repo()).unwrap()[0].assets.is_empty());
    // A fresh handle on the same folder sees the same state (it is all on disk).
    assert_eq!(forge(tmp.path()).list_releases(&repo()).unwrap().len(), 1);
}

#[test]
fn pulls_and_comments_round_trip_and_merge() {
    let tmp = tempfile::tempdir().unwrap();
    let seed = tmp.path().join("seed");
    fs::create_dir_all(&seed).unwrap();
    fs::write(seed.join("f"), "x").unwrap();
    let f = forge(tmp.path()).with_seed(repo(), &seed);
    f.ensure_repo(&repo(), "main").unwrap();
    let head = f.branch_head(&repo(), "main").unwrap().unwrap();
    f.commit(&repo(), "bot/x", &head, None, &changes(&[("g", "y")]), "g")
        .unwrap();
    let p = f.open_pull(&repo(), "bot/x", "main", "T", "B").unwrap();
    assert!(matches!(
        f.open_pull(&repo(), "bot/x", "main", "T", "B").unwrap_err(),
        ForgeError::AlreadyExists { .. }
    ));
    f.update_pull(&repo(), p.number, "T2", "B2").unwrap();
    let found = f.find_pulls(&repo(), "bot/x").unwrap();
    assert_eq!(
        (found[0].title.as_str(), found[0].state),
        ("T2", PullState::Open)
    );
    super::super::upsert_comment(&f, &repo(), p.number, "<!-- m -->", "hello").unwrap();
    super::super::upsert_comment(&f, &repo(), p.number, "<!-- m -->", "hello2").unwrap();
    let cs = f.list_comments(&repo(), p.number).unwrap();
    assert_eq!(cs.len(), 1);
    assert!(cs[0].body.ends_with("hello2"));
    let merged = f.merge_pull(&repo(), p.number).unwrap();
    assert_eq!(
        f.branch_head(&repo(), "main").unwrap(),
        Some(merged.clone())
    );
    assert_eq!(
        f.read_file(&repo(), &merged, "g").unwrap(),
        Some(b"y".to_vec())
    );
    assert_eq!(
        f.find_pulls(&repo(), "bot/x").unwrap()[0].state,
        PullState::Merged
    );
}

#[test]
fn the_run_lock_excludes_a_second_run_until_released() {
    let tmp = tempfile::tempdir().unwrap();
    let f = forge(tmp.path());
    let g = f.lock_run().unwrap();
    assert!(forge(tmp.path()).try_lock_run().unwrap().is_none());
    drop(g);
    assert!(forge(tmp.path()).try_lock_run().unwrap().is_some());
}
