//! A no-op hourly run costs nothing against GitHub's primary rate limit: the forge revalidates
//! what it read last hour with `If-None-Match` (GitHub does not count `304 Not Modified`), keeps
//! the answers on disk between runs, and never asks again for what cannot change (git objects
//! by sha, files at a commit sha, asset bytes by id).

use crate::support;

use std::path::Path;
use std::sync::Arc;

use crate::support::release::*;
use stackbot::clock::SystemClock;
use stackbot::config::GithubForgeConfig;
use stackbot::forge::github::GithubForge;
use stackbot::forge::{Forge, RepoRef};
use support::fake_github::{FakeGithub, FakeOptions};

const TOKEN: &str = "ghp_CACHEtestTOKEN0123456789SECRET";
const REPO: &str = "scs/cluster-stacks";

fn fake() -> FakeGithub {
    let f = FakeGithub::start_with(FakeOptions::default().with_token(TOKEN));
    f.create_repo(REPO, "main", &[("README.md", b"# cluster stacks\n")]);
    f
}

/// A new client (a new process, as each hourly run is) on the cache directory `cache`.
fn client(fake: &FakeGithub, cache: &Path) -> GithubForge {
    let cfg = GithubForgeConfig {
        api_url: fake.api_url(),
        upload_url: Some(fake.upload_url()),
        ..GithubForgeConfig::default()
    };
    GithubForge::new(&cfg, Some(TOKEN.into()), Arc::new(SystemClock))
        .unwrap()
        .with_cache_dir(cache)
}

/// Every read the release and tenant planners make, once.
fn read_everything(f: &dyn Forge, r: &RepoRef) {
    let head = f.branch_head(r, "main").unwrap().unwrap();
    let files = f.list_files(r, &head).unwrap();
    for p in &files {
        f.read_file(r, &head, p).unwrap();
    }
    for rel in f.list_releases(r).unwrap() {
        for a in &rel.assets {
            f.download_asset(r, rel.id, a).unwrap();
        }
    }
    f.tag_target(r, "t1").unwrap();
    f.find_pulls(r, "b").unwrap();
}

#[test]
fn the_next_run_revalidates_for_free_and_never_refetches_immutable_objects() {
    let fake = fake();
    let cache = tempfile::tempdir().unwrap();
    let r = RepoRef::parse(REPO).unwrap();
    {
        let f = client(&fake, cache.path());
        let head = f.branch_head(&r, "main").unwrap().unwrap();
        f.create_tag(&r, "t1", &head, "t1").unwrap();
        let d = f.create_draft_release(&r, "t1", "t1", "").unwrap();
        f.upload_asset(&r, d.id, "metadata.yaml", b"versions: {}\n")
            .unwrap();
        f.publish_release(&r, d.id, true).unwrap();
        read_everything(&f, &r);
    }
    // The next hour: nothing changed.
    fake.reset_counts();
    let f = client(&fake, cache.path());
    read_everything(&f, &r);
    let c = fake.counts();
    assert_eq!(c.units, 0, "a no-op run is free: {c:?}");
    assert_eq!(c.not_modified, c.total(), "every request was a 304: {c:?}");
    for immutable in [
        "GET /repos/{owner}/{repo}/git/trees/{tree_sha}",
        "GET /repos/{owner}/{repo}/git/commits/{commit_sha}",
        "GET /repos/{owner}/{repo}/contents/{path}",
        "GET /repos/{owner}/{repo}/releases/assets/{asset_id}",
    ] {
        assert!(
            !c.by_route.contains_key(immutable),
            "{immutable} was asked again: {:?}",
            c.by_route
        );
    }
    let (_, hits) = f.cache_counts();
    assert!(hits >= 3, "immutable reads came from the cache ({hits})");

    // Something changes: the conditional read sees it at once (a new ETag, one unit).
    fake.push_commit(
        REPO,
        "main",
        &[("new.txt", Some(b"new\n".as_slice()))],
        "human",
        ("Jane", "jane@example.org"),
    );
    fake.reset_counts();
    let head = f.branch_head(&r, "main").unwrap().unwrap();
    assert_eq!(fake.branch_head(REPO, "main"), Some(head));
    assert_eq!(fake.counts().units, 1);
}

#[test]
fn a_no_op_release_costs_no_units_and_its_requests_do_not_grow_with_history() {
    let cost = |series: usize| {
        let fake = fake();
        let cache = tempfile::tempdir().unwrap();
        let desired: Vec<_> = (0..series)
            .map(|i| desired(&format!("v1.{}.1", 30 + i), &format!("2.{}.0", 30 + i)))
            .collect();
        let (_, out) = stackbot::pipeline::release::release_desired(
            &client(&fake, cache.path()),
            &target(),
            &desired,
            &packager,
        )
        .unwrap();
        assert_eq!(out.released.len(), series);
        // The first no-op run after publishing reads the new release list once (one unit);
        // from then on, hour after hour, a no-op run is free.
        for _ in 0..2 {
            fake.reset_counts();
            let (_, out) = stackbot::pipeline::release::release_desired(
                &client(&fake, cache.path()),
                &target(),
                &desired,
                &packager,
            )
            .unwrap();
            assert!(out.released.is_empty() && out.actions.is_empty());
        }
        fake.counts()
    };
    let one = cost(1);
    let six = cost(6);
    assert_eq!((one.units, six.units), (0, 0), "{one:?}\n{six:?}");
    assert_eq!(
        one.total(),
        six.total(),
        "requests of a no-op release do not grow with the released series:\n{:?}\n{:?}",
        one.by_route,
        six.by_route
    );
}

#[test]
fn an_immutable_list_over_several_pages_is_complete_from_the_cache() {
    let fake = fake();
    let cache = tempfile::tempdir().unwrap();
    let r = RepoRef::parse(REPO).unwrap();
    let base = fake.branch_head(REPO, "main").unwrap();
    for i in 0..120 {
        fake.push_commit(
            REPO,
            "main",
            &[("n.txt", Some(format!("{i}\n").as_bytes()))],
            "human",
            ("Jane", "jane@example.org"),
        );
    }
    let head = fake.branch_head(REPO, "main").unwrap();
    let first = client(&fake, cache.path())
        .commits_between(&r, &base, &head)
        .unwrap();
    assert_eq!(first.len(), 120);
    fake.reset_counts();
    let again = client(&fake, cache.path())
        .commits_between(&r, &base, &head)
        .unwrap();
    assert_eq!(again, first, "every page, from the cache");
    assert_eq!(fake.counts().total(), 0, "{:?}", fake.counts());
}
