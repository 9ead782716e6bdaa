//! One behavioural specification of the [`Forge`] trait, run against every implementation
//! (the fake-GitHub-backed `GithubForge`, the local forge), so they cannot drift apart.
//!
//! Precondition: `repo` exists, its branch `main` has at least one commit with at least one
//! file, and it has no tags, releases, pull requests or branches whose names start with `conf`.
#![allow(dead_code)]

use stackbot::forge::{
    Forge, ForgeError, IssueState, PULLS_WINDOW, PullState, RepoRef, upsert_comment,
};

fn changes(items: &[(&str, Option<&[u8]>)]) -> stackbot::forge::FileChanges {
    items
        .iter()
        .map(|(p, b)| (p.to_string(), b.map(|b| b.to_vec())))
        .collect()
}

/// Run the whole specification; panics with a message naming the violated rule.
pub fn conformance(forge: &dyn Forge, repo: &RepoRef) {
    assert!(!forge.kind().is_empty());
    forge
        .ensure_repo(repo, "main")
        .expect("ensure_repo on an existing repo");
    git_objects(forge, repo);
    releases(forge, repo);
    latest(forge, repo);
    pulls_and_comments(forge, repo);
    pull_history_window(forge, repo);
    issues(forge, repo);
}

/// Branches, commits, files and tags.
pub fn git_objects(forge: &dyn Forge, repo: &RepoRef) {
    let [h0, h1, h2] = files_and_commits(forge, repo);
    branches_and_history(forge, repo, [&h0, &h1, &h2]);
    tags(forge, repo, &h1, &h2);
}

/// Files round-trip through commits (text, binary, nested; deleted and modified), a stale
/// expected head is a conflict; the heads of main before and after the two commits.
fn files_and_commits(forge: &dyn Forge, repo: &RepoRef) -> [String; 3] {
    let h0 = forge
        .branch_head(repo, "main")
        .unwrap()
        .expect("main exists");
    assert_eq!(forge.branch_head(repo, "conf-no-such").unwrap(), None);
    assert_eq!(forge.tag_target(repo, "conf-no-such").unwrap(), None);
    let files0 = forge.list_files(repo, &h0).unwrap();
    assert!(!files0.is_empty(), "main has files");
    assert!(forge.read_file(repo, &h0, &files0[0]).unwrap().is_some());
    assert_eq!(
        forge.read_file(repo, &h0, "conf/no/such.txt").unwrap(),
        None
    );

    // Text, binary (NUL, invalid UTF-8) and nested files round-trip byte for byte.
    let binary: Vec<u8> = (0u8..=255).chain([0xff, 0xfe, 0, 0]).collect();
    let text = "line 1\nkubernetesVersion: \"1.34\" # comment\n".as_bytes();
    let h1 = forge
        .commit(
            repo,
            "main",
            &h0,
            Some(&h0),
            &changes(&[
                ("conf/a.txt", Some(text)),
                ("conf/bin.dat", Some(&binary)),
                ("conf/deep/x/y.yaml", Some(b"y: 1\n")),
            ]),
            "conformance: add files",
        )
        .expect("commit on main");
    assert_ne!(h1, h0);
    assert_eq!(
        forge.branch_head(repo, "main").unwrap().as_deref(),
        Some(h1.as_str())
    );
    let files1 = forge.list_files(repo, &h1).unwrap();
    for f in ["conf/a.txt", "conf/bin.dat", "conf/deep/x/y.yaml"] {
        assert!(files1.contains(&f.to_string()), "{f} listed in {files1:?}");
    }
    for f in &files0 {
        assert!(files1.contains(f), "untouched file {f} kept");
    }
    assert_eq!(
        forge.read_file(repo, &h1, "conf/a.txt").unwrap().as_deref(),
        Some(text)
    );
    assert_eq!(
        forge.read_file(repo, &h1, "conf/bin.dat").unwrap(),
        Some(binary.clone())
    );
    assert_eq!(
        forge.read_file(repo, &h0, "conf/a.txt").unwrap(),
        None,
        "old commit unchanged"
    );

    // A stale expected head is a conflict, and nothing moves.
    let stale = forge.commit(
        repo,
        "main",
        &h0,
        Some(&h0),
        &changes(&[("conf/z", Some(b"z"))]),
        "stale",
    );
    assert!(
        matches!(stale, Err(ForgeError::Conflict { .. })),
        "stale head: {stale:?}"
    );
    assert_eq!(
        forge.branch_head(repo, "main").unwrap().as_deref(),
        Some(h1.as_str())
    );

    // Deletion and modification in one commit.
    let h2 = forge
        .commit(
            repo,
            "main",
            &h1,
            Some(&h1),
            &changes(&[
                ("conf/a.txt", None),
                ("conf/deep/x/y.yaml", Some(b"y: 2\n")),
            ]),
            "conformance: delete and modify",
        )
        .unwrap();
    assert_eq!(forge.read_file(repo, &h2, "conf/a.txt").unwrap(), None);
    assert_eq!(
        forge
            .read_file(repo, &h2, "conf/deep/x/y.yaml")
            .unwrap()
            .as_deref(),
        Some(&b"y: 2\n"[..])
    );
    assert_eq!(
        forge.read_file(repo, &h1, "conf/a.txt").unwrap().as_deref(),
        Some(text)
    );
    [h0, h1, h2]
}

/// A new branch is created once, history between commits is oldest first, and a bot branch
/// is forced anywhere. `h` are main's heads from [`files_and_commits`].
fn branches_and_history(forge: &dyn Forge, repo: &RepoRef, h: [&str; 3]) {
    let [h0, h1, h2] = h;
    // A new branch needs `expected_head: None`, and only once.
    let h3 = forge
        .commit(
            repo,
            "conf-branch",
            h2,
            None,
            &changes(&[("conf/b.txt", Some(b"b\n"))]),
            "conformance: branch",
        )
        .unwrap();
    assert_eq!(
        forge.branch_head(repo, "conf-branch").unwrap().as_deref(),
        Some(h3.as_str())
    );
    let again = forge.commit(
        repo,
        "conf-branch",
        h2,
        None,
        &changes(&[("conf/c", Some(b"c"))]),
        "again",
    );
    assert!(
        matches!(again, Err(ForgeError::Conflict { .. })),
        "branch exists: {again:?}"
    );

    // History between commits, oldest first.
    let between = forge.commits_between(repo, h0, h2).unwrap();
    let shas: Vec<&str> = between.iter().map(|c| c.sha.as_str()).collect();
    assert_eq!(shas, [h1, h2]);
    assert_eq!(between[1].message.trim(), "conformance: delete and modify");
    let between = forge.commits_between(repo, h2, &h3).unwrap();
    assert_eq!(between.len(), 1);
    assert_eq!(between[0].sha, h3);
    assert!(forge.commits_between(repo, h2, h2).unwrap().is_empty());

    // Force moves a bot branch anywhere, and creates it if missing.
    forge.force_branch(repo, "conf-branch", h0).unwrap();
    assert_eq!(
        forge.branch_head(repo, "conf-branch").unwrap().as_deref(),
        Some(h0)
    );
    forge.force_branch(repo, "conf-new", h1).unwrap();
    assert_eq!(
        forge.branch_head(repo, "conf-new").unwrap().as_deref(),
        Some(h1)
    );
}

/// Annotated tags peel to their commit and are created once.
fn tags(forge: &dyn Forge, repo: &RepoRef, h1: &str, h2: &str) {
    // Annotated tags peel to their commit and are created once.
    forge
        .create_tag(repo, "conf-v1", h1, "conformance tag")
        .unwrap();
    assert_eq!(
        forge.tag_target(repo, "conf-v1").unwrap().as_deref(),
        Some(h1)
    );
    let dup = forge.create_tag(repo, "conf-v1", h1, "again");
    assert!(
        matches!(dup, Err(ForgeError::AlreadyExists { .. })),
        "dup tag: {dup:?}"
    );
    let moved = forge.create_tag(repo, "conf-v1", h2, "elsewhere");
    assert!(
        matches!(moved, Err(ForgeError::AlreadyExists { .. })),
        "moved tag: {moved:?}"
    );
    assert_eq!(
        forge.tag_target(repo, "conf-v1").unwrap().as_deref(),
        Some(h1)
    );
}

/// Draft → assets → publish, duplicates refused, deletion.
pub fn releases(forge: &dyn Forge, repo: &RepoRef) {
    let head = forge.branch_head(repo, "main").unwrap().unwrap();
    if forge.tag_target(repo, "conf-r1").unwrap().is_none() {
        forge
            .create_tag(repo, "conf-r1", &head, "release tag")
            .unwrap();
    }
    let mine = |f: &dyn Forge| {
        f.list_releases(repo)
            .unwrap()
            .into_iter()
            .filter(|r| r.tag.starts_with("conf-"))
            .collect::<Vec<_>>()
    };
    assert!(mine(forge).is_empty(), "no conformance releases yet");
    let draft = forge
        .create_draft_release(repo, "conf-r1", "conf-r1", "notes\n")
        .unwrap();
    assert!(draft.draft);
    assert_eq!(draft.tag, "conf-r1");
    assert_eq!(draft.name.as_deref(), Some("conf-r1"));
    assert!(draft.assets.is_empty());
    let listed = mine(forge);
    assert_eq!(listed.len(), 1);
    assert!(
        listed[0].draft && listed[0].id == draft.id,
        "drafts are listed: {listed:?}"
    );

    let tarball: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
    let a = forge
        .upload_asset(repo, draft.id, "conf-r1.tar.gz", &tarball)
        .unwrap();
    assert_eq!(a.name, "conf-r1.tar.gz");
    assert_eq!(a.size, tarball.len() as u64);
    let dup = forge.upload_asset(repo, draft.id, "conf-r1.tar.gz", b"other");
    assert!(
        matches!(dup, Err(ForgeError::AlreadyExists { .. })),
        "dup asset: {dup:?}"
    );
    let sums = forge
        .upload_asset(repo, draft.id, "SHA256SUMS", b"abc  conf-r1.tar.gz\n")
        .unwrap();
    assert_eq!(forge.download_asset(repo, draft.id, &a).unwrap(), tarball);
    forge.delete_asset(repo, draft.id, sums.id).unwrap();
    let after = mine(forge);
    let names: Vec<&str> = after[0].assets.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["conf-r1.tar.gz"]);
    forge
        .upload_asset(repo, draft.id, "SHA256SUMS", b"def  conf-r1.tar.gz\n")
        .expect("a deleted asset's name is free again");

    // A second draft for the same tag can be created (as on GitHub) and deleted.
    let extra = forge
        .create_draft_release(repo, "conf-r1", "conf-r1", "duplicate draft")
        .unwrap();
    assert_ne!(extra.id, draft.id);
    assert_eq!(mine(forge).len(), 2, "drafts may share a tag");
    forge.delete_release(repo, extra.id).unwrap();
    let listed = mine(forge);
    assert_eq!(listed.len(), 1, "deleted draft is gone: {listed:?}");
    assert_eq!(listed[0].id, draft.id);

    assert_eq!(draft.published_at, None, "a draft is not published");
    let published = forge.publish_release(repo, draft.id, true).unwrap();
    assert!(!published.draft);
    assert_eq!(published.tag, "conf-r1");
    let listed = mine(forge);
    assert_eq!(listed.len(), 1);
    assert!(!listed[0].draft);
    assert!(
        listed[0].published_at.is_some(),
        "a published release knows when (the status report's release date)"
    );
    let mut names: Vec<&str> = listed[0].assets.iter().map(|a| a.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["SHA256SUMS", "conf-r1.tar.gz"]);
    assert_eq!(
        forge.tag_target(repo, "conf-r1").unwrap().as_deref(),
        Some(head.as_str())
    );
}

/// "Latest" is what `make_latest` says: `true` moves it, `false` leaves it where it is (an
/// older minor's patch published after a newer minor must not take the badge).
pub fn latest(forge: &dyn Forge, repo: &RepoRef) {
    let head = forge.branch_head(repo, "main").unwrap().unwrap();
    let publish = |tag: &str, make_latest: bool| {
        forge.create_tag(repo, tag, &head, tag).unwrap();
        let d = forge.create_draft_release(repo, tag, tag, "").unwrap();
        forge.publish_release(repo, d.id, make_latest).unwrap()
    };
    let newest_minor = publish("conf-1-34-v1", true);
    let latest = || forge.latest_release(repo).unwrap().map(|r| r.tag);
    assert_eq!(latest().as_deref(), Some("conf-1-34-v1"));
    publish("conf-1-33-v2", false);
    assert_eq!(
        latest().as_deref(),
        Some("conf-1-34-v1"),
        "an older minor's patch published later does not become Latest"
    );
    let drafted = forge
        .create_draft_release(repo, "conf-1-34-v2", "conf-1-34-v2", "")
        .unwrap();
    assert_eq!(
        latest().as_deref(),
        Some("conf-1-34-v1"),
        "drafts never are Latest"
    );
    forge.create_tag(repo, "conf-1-34-v2", &head, "t").unwrap();
    forge.publish_release(repo, drafted.id, true).unwrap();
    assert_eq!(latest().as_deref(), Some("conf-1-34-v2"));
    // Re-applying `true` to an already published release moves the badge back.
    forge.publish_release(repo, newest_minor.id, true).unwrap();
    assert_eq!(latest().as_deref(), Some("conf-1-34-v1"));
}

/// Pull requests found by head branch, updated, closed; comments upserted once.
pub fn pulls_and_comments(forge: &dyn Forge, repo: &RepoRef) {
    let main = forge.branch_head(repo, "main").unwrap().unwrap();
    forge
        .commit(
            repo,
            "conf-pr",
            &main,
            None,
            &changes(&[("conf/pr.txt", Some(b"pr\n"))]),
            "conformance: pr",
        )
        .unwrap();
    assert!(forge.find_pulls(repo, "conf-pr").unwrap().is_empty());
    let pr = forge
        .open_pull(repo, "conf-pr", "main", "Title 1", "Body 1")
        .unwrap();
    assert_eq!(pr.state, PullState::Open);
    assert_eq!((pr.head.as_str(), pr.base.as_str()), ("conf-pr", "main"));
    assert!(pr.created_at.is_some(), "a pull request knows its age");
    assert_eq!(pr.merged_at, None);
    let dup = forge.open_pull(repo, "conf-pr", "main", "Title 1", "Body 1");
    assert!(
        matches!(dup, Err(ForgeError::AlreadyExists { .. })),
        "dup pull: {dup:?}"
    );
    let found = forge.find_pulls(repo, "conf-pr").unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].number, pr.number);
    assert!(
        forge.find_pulls(repo, "conf-p").unwrap().is_empty(),
        "head matches exactly"
    );

    forge
        .update_pull(repo, pr.number, "Title 2", "Body 2")
        .unwrap();
    let found = forge.find_pulls(repo, "conf-pr").unwrap();
    assert_eq!(
        (found[0].title.as_str(), found[0].body.as_str()),
        ("Title 2", "Body 2")
    );

    // Labels are added, kept, and adding one again changes nothing.
    assert!(
        forge.find_pulls(repo, "conf-pr").unwrap()[0]
            .labels
            .is_empty()
    );
    forge
        .add_labels(repo, pr.number, &["security".to_string()])
        .unwrap();
    forge
        .add_labels(
            repo,
            pr.number,
            &["security".to_string(), "tenant".to_string()],
        )
        .unwrap();
    assert_eq!(
        forge.find_pulls(repo, "conf-pr").unwrap()[0].labels,
        ["security", "tenant"]
    );

    assert!(forge.list_comments(repo, pr.number).unwrap().is_empty());
    let c1 = forge.create_comment(repo, pr.number, "first").unwrap();
    let c2 = forge.create_comment(repo, pr.number, "second").unwrap();
    forge.update_comment(repo, c1.id, "first, edited").unwrap();
    let listed = forge.list_comments(repo, pr.number).unwrap();
    let bodies: Vec<&str> = listed.iter().map(|c| c.body.as_str()).collect();
    assert_eq!(bodies, ["first, edited", "second"], "oldest first");
    assert_eq!(listed[1].id, c2.id);

    let marker = "<!-- stackbot:conformance -->";
    upsert_comment(forge, repo, pr.number, marker, "status: one").unwrap();
    upsert_comment(forge, repo, pr.number, marker, "status: two").unwrap();
    upsert_comment(forge, repo, pr.number, marker, "status: two").unwrap();
    let marked: Vec<_> = forge
        .list_comments(repo, pr.number)
        .unwrap()
        .into_iter()
        .filter(|c| c.body.contains(marker))
        .collect();
    assert_eq!(marked.len(), 1, "one marked comment: {marked:?}");
    assert!(marked[0].body.ends_with("status: two"));

    forge.close_pull(repo, pr.number).unwrap();
    let found = forge.find_pulls(repo, "conf-pr").unwrap();
    assert_eq!(found[0].state, PullState::Closed);
}

/// A branch with more pull requests than [`PULLS_WINDOW`] (a tenant branch after years of
/// releases): `find_pulls` gives the newest window, newest first, so its cost stays one
/// request however long the history.
pub fn pull_history_window(forge: &dyn Forge, repo: &RepoRef) {
    let main = forge.branch_head(repo, "main").unwrap().unwrap();
    forge
        .commit(
            repo,
            "conf-many",
            &main,
            None,
            &changes(&[("conf/many.txt", Some(b"many\n"))]),
            "conformance: many",
        )
        .unwrap();
    let mut numbers = Vec::new();
    for i in 0..=PULLS_WINDOW {
        let pr = forge
            .open_pull(repo, "conf-many", "main", &format!("Try {i}"), "")
            .unwrap();
        forge.close_pull(repo, pr.number).unwrap();
        numbers.push(pr.number);
    }
    let found = forge.find_pulls(repo, "conf-many").unwrap();
    let newest: Vec<u64> = numbers.iter().rev().take(PULLS_WINDOW).copied().collect();
    assert_eq!(
        found.iter().map(|p| p.number).collect::<Vec<_>>(),
        newest,
        "the newest {PULLS_WINDOW} pull requests of the branch, newest first"
    );
}

/// Issues: created with labels, listed (oldest first, pull requests excluded, by label),
/// edited in place.
pub fn issues(forge: &dyn Forge, repo: &RepoRef) {
    let mine = |label: Option<&str>| {
        forge
            .list_issues(repo, label)
            .unwrap()
            .into_iter()
            .filter(|i| i.title.starts_with("conf"))
            .collect::<Vec<_>>()
    };
    assert!(mine(None).is_empty(), "no conformance issues yet");
    let label = "conf-dashboard".to_string();
    let a = forge
        .create_issue(
            repo,
            "conf: dashboard",
            "<!-- conf -->\nfirst",
            std::slice::from_ref(&label),
        )
        .unwrap();
    assert_eq!(a.state, IssueState::Open);
    assert_eq!(a.labels, vec![label.clone()]);
    let b = forge
        .create_issue(repo, "conf: other", "plain", &[])
        .unwrap();
    assert!(b.number > a.number);
    let all = mine(None);
    assert_eq!(
        all.iter().map(|i| i.number).collect::<Vec<_>>(),
        [a.number, b.number],
        "oldest first: {all:?}"
    );
    assert!(
        forge
            .list_issues(repo, None)
            .unwrap()
            .iter()
            .all(|i| !i.title.starts_with("Title")),
        "pull requests are not issues"
    );
    let labelled = mine(Some("conf-dashboard"));
    assert_eq!(labelled.len(), 1, "{labelled:?}");
    assert_eq!(labelled[0].number, a.number);
    assert!(mine(Some("conf-no-such-label")).is_empty());
    forge
        .update_issue(repo, a.number, "conf: dashboard", "<!-- conf -->\nsecond")
        .unwrap();
    let again = mine(Some("conf-dashboard"));
    assert_eq!(again[0].body, "<!-- conf -->\nsecond");
    assert_eq!(again[0].labels, vec![label], "an edit keeps the labels");
    assert_eq!(mine(None).len(), 2, "edited in place, nothing new");
}
