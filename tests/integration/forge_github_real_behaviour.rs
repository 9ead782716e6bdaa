//! The GitHub forge against GitHub as it really behaves (issue 15), as the fake now
//! reproduces it: renamed repositories (301/307, the write at the old path not performed),
//! another spelling of the same origin in the URLs GitHub writes, the "Latest" release, the
//! primary and secondary rate limits, downloads redirected to another host.
//!
//! Tests marked `#[ignore = "fixed on branch gh: …"]` show real defects of the forge that the
//! former fake hid; they fail until the forge is fixed (issue 15, defects 1–3), and then the
//! ignore goes.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use crate::support::release::*;

use stackbot::clock::SystemClock;
use stackbot::config::GithubForgeConfig;
use stackbot::forge::github::{GithubForge, RetryPolicy};
use stackbot::forge::{FileChanges, Forge, RepoRef};
use support::fake_github::{FakeGithub, FakeOptions, Fault, Faults};

const TOKEN: &str = "ghp_REALbehaviourTOKEN0123456789";
const REPO: &str = "scs/cluster-stacks";

fn seeded(opts: FakeOptions) -> FakeGithub {
    let fake = FakeGithub::start_with(opts.with_token(TOKEN));
    fake.create_repo(REPO, "main", &[("README.md", b"# cluster stacks\n")]);
    fake
}

fn fast() -> RetryPolicy {
    RetryPolicy {
        max_retries: 4,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_rate_limit_wait: Duration::from_secs(5),
    }
}

fn forge_with(api_url: String, upload_url: String) -> GithubForge {
    let cfg = GithubForgeConfig {
        api_url,
        upload_url: Some(upload_url),
        token_env: "STACKBOT_TEST_GITHUB_TOKEN".into(),
        ..GithubForgeConfig::default()
    };
    GithubForge::new(&cfg, Some(TOKEN.into()), Arc::new(SystemClock))
        .unwrap()
        .with_retry_policy(fast())
}

fn forge(fake: &FakeGithub) -> GithubForge {
    forge_with(fake.api_url(), fake.upload_url())
}

fn repo(s: &str) -> RepoRef {
    RepoRef::parse(s).unwrap()
}

fn files(items: &[(&str, &[u8])]) -> FileChanges {
    items
        .iter()
        .map(|(p, b)| (p.to_string(), Some(b.to_vec())))
        .collect()
}

/// `http://127.0.0.1:PORT…` → `http://{host}:PORT…`.
fn spelled(url: &str, host: &str) -> String {
    url.replacen("127.0.0.1", host, 1)
}

// ---------------------------------------------------------------------------- renamed repositories

#[test]
fn reads_of_a_renamed_repository_follow_githubs_301() {
    let fake = seeded(FakeOptions::default());
    let f = forge(&fake);
    let head = f.branch_head(&repo(REPO), "main").unwrap().unwrap();
    fake.rename_repo(REPO, "stacks");
    assert_eq!(
        f.branch_head(&repo(REPO), "main").unwrap().as_deref(),
        Some(head.as_str())
    );
    assert!(f.list_releases(&repo(REPO)).unwrap().is_empty());
    assert_eq!(
        f.list_files(&repo(REPO), &head).unwrap(),
        vec!["README.md".to_string()]
    );
}

/// Defect 1: a `307` answer was taken for success. Whatever the fix (repeat the write at the
/// `Location`, or refuse with a message that says the repository moved), a write must never be
/// reported done when it was not.
#[test]
fn a_write_to_a_renamed_repository_is_never_reported_done_when_it_was_not() {
    let fake = seeded(FakeOptions::default());
    let f = forge(&fake);
    let old = repo(REPO);
    let head = f.branch_head(&old, "main").unwrap().unwrap();
    fake.rename_repo(REPO, "stacks");
    let moved = |e: &stackbot::forge::ForgeError| {
        let t = e.to_string().to_ascii_lowercase();
        t.contains("moved") || t.contains("renamed") || t.contains("redirect")
    };

    match f.create_draft_release(&old, "v1", "v1", "notes") {
        Ok(r) => {
            let s = fake.snapshot();
            let rels = &s.repos["scs/stacks"].releases;
            assert!(
                rels.iter().any(|x| x.tag == "v1" && x.draft) && r.id != 0,
                "reported {r:?}, but GitHub has {rels:?}"
            );
        }
        Err(e) => assert!(moved(&e), "unclear error: {e}"),
    }
    match f.commit(
        &old,
        "main",
        &head,
        Some(&head),
        &files(&[("a.txt", b"a")]),
        "a",
    ) {
        Ok(c) => assert_eq!(fake.branch_head("scs/stacks", "main"), Some(c)),
        Err(e) => assert!(moved(&e), "unclear error: {e}"),
    }
    match f.create_tag(&old, "t1", &head, "t1") {
        Ok(()) => assert!(fake.snapshot().repos["scs/stacks"].tags.contains_key("t1")),
        Err(e) => assert!(moved(&e), "unclear error: {e}"),
    }
}

/// Defect 1, end to end: with the cluster-stacks repository renamed, a release run either
/// publishes (following GitHub to the new name) or fails saying the repository moved — never
/// "the draft disappeared".
#[test]
fn a_release_into_a_renamed_repository_publishes_or_says_it_moved() {
    let fake = seeded(FakeOptions::default());
    fake.rename_repo(REPO, "stacks");
    let f = forge(&fake);
    match stackbot::pipeline::release::release_desired(&f, &target(), &two_minors(), &packager) {
        Ok((_, out)) => {
            let s = fake.snapshot();
            let r = &s.repos["scs/stacks"];
            for tag in &out.released {
                assert!(
                    r.releases.iter().any(|x| x.tag == *tag && !x.draft),
                    "{tag} reported released, GitHub has {:?}",
                    r.releases
                );
            }
            assert_eq!(out.released.len(), 2);
        }
        Err(e) => {
            let t = format!("{e:#}").to_ascii_lowercase();
            assert!(
                t.contains("moved") || t.contains("renamed") || t.contains("redirect"),
                "unclear error: {e:#}"
            );
        }
    }
}

// ---------------------------------------------------------------------------- one origin, two spellings

/// Defect 2: origins compared as text. GitHub writes its own spelling of the API host in
/// `Link`s (here upper case); the same origin must be recognised.
#[test]
fn pagination_links_to_the_api_host_spelled_differently_are_followed() {
    let fake = seeded(FakeOptions::default().with_url_host("LOCALHOST"));
    let f = forge_with(
        spelled(&fake.api_url(), "localhost"),
        spelled(&fake.upload_url(), "localhost"),
    );
    for i in 0..120 {
        f.create_draft_release(&repo(REPO), &format!("t{i}"), "t", "")
            .unwrap();
    }
    assert_eq!(f.list_releases(&repo(REPO)).unwrap().len(), 120);
}

/// Defect 2: GitHub's `upload_url` names the upload host in its own spelling.
#[test]
fn uploads_to_the_upload_host_spelled_differently_work() {
    let fake = seeded(FakeOptions::default().with_url_host("LOCALHOST"));
    let f = forge_with(
        spelled(&fake.api_url(), "localhost"),
        spelled(&fake.upload_url(), "localhost"),
    );
    let r = f.create_draft_release(&repo(REPO), "v1", "v1", "").unwrap();
    f.upload_asset(&repo(REPO), r.id, "a.tgz", b"bytes")
        .unwrap();
    assert_eq!(fake.snapshot().repos[REPO].releases[0].assets.len(), 1);
}

/// Defect 2 on GitHub Enterprise: the configured upload URL spells the host differently from
/// GitHub's `upload_url`, which names the API host — the upload must not be sent through the
/// API client to `/api/v3/api/uploads/…`.
#[test]
fn enterprise_uploads_never_go_to_a_doubled_api_path() {
    let fake = seeded(
        FakeOptions::default()
            .enterprise()
            .with_url_host("localhost"),
    );
    let f = forge_with(
        spelled(&fake.api_url(), "localhost"),
        spelled(&fake.upload_url(), "LOCALHOST"),
    );
    let r = f.create_draft_release(&repo(REPO), "v1", "v1", "").unwrap();
    f.upload_asset(&repo(REPO), r.id, "a.tgz", b"bytes")
        .unwrap();
    assert_eq!(fake.snapshot().repos[REPO].releases[0].assets.len(), 1);
    assert!(
        !fake
            .counts()
            .by_route
            .keys()
            .any(|r| r.contains("/api/uploads")),
        "{:?}",
        fake.counts().by_route
    );
}

// ---------------------------------------------------------------------------- latest

/// Defect 3: publishing sent only `draft: false`, so GitHub made whatever was published last
/// "Latest" — even an older minor's patch. Latest belongs to the newest minor's newest release.
#[test]
fn latest_stays_on_the_newest_minor_when_an_older_minor_gets_a_patch() {
    let fake = seeded(FakeOptions::default());
    let f = forge(&fake);
    stackbot::pipeline::release::release_desired(&f, &target(), &two_minors(), &packager).unwrap();
    assert_eq!(
        fake.latest_release(REPO).as_deref(),
        Some("openstack-scs2-1-34-v1")
    );
    let patched = vec![desired("v1.33.11", "2.33.1"), desired("v1.34.7", "2.34.2")];
    let (_, out) =
        stackbot::pipeline::release::release_desired(&f, &target(), &patched, &packager).unwrap();
    assert_eq!(out.released, vec!["openstack-scs2-1-33-v2"]);
    assert_eq!(
        fake.latest_release(REPO).as_deref(),
        Some("openstack-scs2-1-34-v1"),
        "an older minor's patch must not become Latest"
    );
    let newer = vec![desired("v1.33.11", "2.33.1"), desired("v1.34.8", "2.34.2")];
    stackbot::pipeline::release::release_desired(&f, &target(), &newer, &packager).unwrap();
    assert_eq!(
        fake.latest_release(REPO).as_deref(),
        Some("openstack-scs2-1-34-v2")
    );
}

// ---------------------------------------------------------------------------- limits, hosts

#[test]
fn an_exhausted_primary_rate_limit_is_waited_out_until_the_reset() {
    let mut opts = FakeOptions::default().with_rate_limit(4);
    opts.rate_limit.window = Duration::from_secs(1);
    let fake = seeded(opts);
    let f = forge(&fake);
    // Six different reads (the same read again would be a free 304 revalidation).
    for i in 0..6 {
        assert!(
            f.branch_head(&repo(REPO), &format!("absent-{i}"))
                .unwrap()
                .is_none()
        );
    }
    let (requests, retries) = f.request_counts();
    assert!(
        retries >= 1 && requests >= 7,
        "{requests} requests, {retries} retries"
    );
}

#[test]
fn a_429_secondary_limit_is_waited_out_and_the_write_done_once() {
    let fake = seeded(FakeOptions::default());
    let f = forge(&fake);
    fake.set_faults(Faults::route(
        axum::http::Method::POST,
        "/repos/{owner}/{repo}/releases",
        1,
        Fault::TooManyRequests(1),
    ));
    f.create_draft_release(&repo(REPO), "v1", "v1", "").unwrap();
    assert_eq!(fake.snapshot().repos[REPO].releases.len(), 1);
}

#[test]
fn assets_download_from_the_other_host_without_the_token() {
    let fake = seeded(FakeOptions::default());
    let f = forge(&fake);
    let r = f.create_draft_release(&repo(REPO), "v1", "v1", "").unwrap();
    let a = f
        .upload_asset(&repo(REPO), r.id, "a.tgz", b"payload")
        .unwrap();
    // A new client (the next run): the uploading one already knows the bytes (answer cache).
    let next_run = forge(&fake);
    assert_eq!(
        next_run.download_asset(&repo(REPO), r.id, &a).unwrap(),
        b"payload"
    );
    assert!(
        fake.counts()
            .by_route
            .keys()
            .any(|k| k.contains("/downloads/"))
    );
    // A token sent to the download host would be a violation, failing this test on drop.
    assert!(fake.violations().is_empty(), "{:?}", fake.violations());
}

#[test]
fn an_asset_is_read_no_further_than_github_lists_and_one_listed_past_the_ceiling_is_not_asked_for()
{
    use stackbot::forge::{AssetInfo, RELEASE_FILE_CEILING};
    let fake = seeded(FakeOptions::default());
    let uploader = forge(&fake);
    let r = uploader
        .create_draft_release(&repo(REPO), "v1", "v1", "")
        .unwrap();
    let a = uploader
        .upload_asset(&repo(REPO), r.id, "a.tgz", b"payload")
        .unwrap();
    let downloads = || -> usize {
        let counts = fake.counts();
        let on_storage = counts
            .by_route
            .iter()
            .filter(|(k, _)| k.contains("/downloads/"));
        on_storage.map(|(_, n)| n).sum()
    };
    // The next run, which holds no bytes of it yet.
    let f = forge(&fake);
    let refusal = |asset: &AssetInfo| {
        f.download_asset(&repo(REPO), r.id, asset)
            .unwrap_err()
            .to_string()
    };

    // The storage host sends 7 bytes where GitHub lists 3: refused at the bound, asked once.
    let e = refusal(&AssetInfo {
        size: 3,
        ..a.clone()
    });
    assert!(e.contains("asset `a.tgz` in scs/cluster-stacks"), "{e}");
    assert!(e.contains("longer than the 3 bytes read for it"), "{e}");
    assert_eq!(downloads(), 1, "a refusal at the bound is not repeated");

    // Fewer bytes than listed: a cut answer, asked again, never taken for the file.
    let e = refusal(&AssetInfo {
        size: 9,
        ..a.clone()
    });
    assert!(e.contains("GitHub listed 9 bytes for it and sent 7"), "{e}");
    let after_cut = downloads();
    assert!(
        after_cut > 2,
        "a cut answer is asked again: {after_cut} downloads"
    );

    // Listed past what a release file may have: refused without a request.
    let e = refusal(&AssetInfo {
        size: RELEASE_FILE_CEILING + 1,
        ..a.clone()
    });
    assert!(
        e.contains(&format!(
            "more than the {RELEASE_FILE_CEILING} bytes a release file may have"
        )),
        "{e}"
    );
    assert_eq!(downloads(), after_cut);

    // As listed: the bytes, downloaded (no cut answer was kept).
    assert_eq!(f.download_asset(&repo(REPO), r.id, &a).unwrap(), b"payload");
    assert_eq!(downloads(), after_cut + 1);
}
