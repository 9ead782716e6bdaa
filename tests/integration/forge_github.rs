//! The GitHub forge against the fake GitHub: every trait method, pagination, drafts and
//! tokens, duplicate refusal, and recovery from failures injected before and after a write
//! took effect.

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use axum::http::Method;
use stackbot::clock::{SharedClock, SystemClock};
use stackbot::config::GithubForgeConfig;
use stackbot::forge::github::{GithubForge, RetryPolicy};
use stackbot::forge::{Forge, ForgeError, RepoRef, upsert_comment};
use support::fake_github::{FakeGithub, FakeOptions, Fault, Faults, RandomFaults};

/// A recognisable token: it must never show up in any output.
const TOKEN: &str = "ghp_STACKBOTtestTOKEN0123456789SECRET";
const REPO: &str = "scs/cluster-stacks";

fn repo() -> RepoRef {
    RepoRef::parse(REPO).unwrap()
}

/// The real clock: these tests measure the forge against a real server.
fn clock() -> SharedClock {
    std::sync::Arc::new(SystemClock)
}

fn fast() -> RetryPolicy {
    RetryPolicy {
        max_retries: 8,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(50),
        max_rate_limit_wait: Duration::from_secs(5),
    }
}

fn config(fake: &FakeGithub) -> GithubForgeConfig {
    GithubForgeConfig {
        api_url: fake.api_url(),
        upload_url: Some(fake.upload_url()),
        token_env: "STACKBOT_TEST_GITHUB_TOKEN".into(),
        ..GithubForgeConfig::default()
    }
}

fn forge(fake: &FakeGithub, token: Option<&str>) -> GithubForge {
    GithubForge::new(&config(fake), token.map(str::to_string), clock())
        .unwrap()
        .with_retry_policy(fast())
}

fn seeded(opts: FakeOptions) -> FakeGithub {
    let fake = FakeGithub::start_with(opts.with_token(TOKEN));
    fake.create_repo(
        REPO,
        "main",
        &[
            ("README.md", b"# cluster stacks\n"),
            (
                "providers/openstack/scs/csctl.yaml",
                b"apiVersion: csctl.clusterstack.x-k8s.io/v1alpha1\n",
            ),
        ],
    );
    fake
}

fn files(items: &[(&str, &[u8])]) -> stackbot::forge::FileChanges {
    items
        .iter()
        .map(|(p, b)| (p.to_string(), Some(b.to_vec())))
        .collect()
}

#[test]
fn every_trait_method_behaves_as_specified() {
    let fake = seeded(FakeOptions::default());
    support::forge_conformance::conformance(&forge(&fake, Some(TOKEN)), &repo());
}

#[test]
fn enterprise_paths_work_including_asset_uploads() {
    // GHE serves the API under /api/v3 and uploads under /api/uploads; octocrab alone would
    // send uploads to /api/v3/api/uploads.
    let fake = seeded(FakeOptions::default().enterprise());
    assert!(fake.api_url().ends_with("/api/v3"));
    let f = forge(&fake, Some(TOKEN));
    support::forge_conformance::releases(&f, &repo());
    let counts = fake.counts();
    assert!(
        counts
            .by_route
            .contains_key("POST /uploads/repos/{owner}/{repo}/releases/{id}/assets"),
        "{counts:?}"
    );
}

#[test]
fn lists_follow_link_pagination_across_pages() {
    let fake = seeded(FakeOptions::default());
    let f = forge(&fake, Some(TOKEN));
    let r = repo();
    for i in 0..130 {
        f.create_draft_release(&r, &format!("t-{i}"), &format!("t-{i}"), "")
            .unwrap();
    }
    let main = f.branch_head(&r, "main").unwrap().unwrap();
    f.commit(&r, "pr", &main, None, &files(&[("x", b"x")]), "x")
        .unwrap();
    let pr = f.open_pull(&r, "pr", "main", "t", "b").unwrap();
    for i in 0..105 {
        f.create_comment(&r, pr.number, &format!("c{i}")).unwrap();
    }
    fake.reset_counts();

    let rels = f.list_releases(&r).unwrap();
    assert_eq!(rels.len(), 130);
    let mut tags: Vec<String> = rels.iter().map(|r| r.tag.clone()).collect();
    tags.sort();
    tags.dedup();
    assert_eq!(tags.len(), 130, "no release lost or repeated across pages");
    let comments = f.list_comments(&r, pr.number).unwrap();
    assert_eq!(comments.len(), 105);
    assert_eq!(comments[0].body, "c0");
    assert_eq!(comments[104].body, "c104");

    let c = fake.counts();
    assert_eq!(
        c.by_route["GET /repos/{owner}/{repo}/releases"], 2,
        "100 per page: {c:?}"
    );
    assert_eq!(
        c.by_route["GET /repos/{owner}/{repo}/issues/{number}/comments"],
        2
    );
    assert_eq!(c.writes, 0);
}

#[test]
fn drafts_are_invisible_without_a_token_and_writes_need_one() {
    let fake = seeded(FakeOptions::default());
    let authed = forge(&fake, Some(TOKEN));
    let anon = forge(&fake, None);
    let r = repo();
    let head = authed.branch_head(&r, "main").unwrap().unwrap();
    authed
        .create_tag(&r, "openstack-scs-1-34-v1", &head, "release")
        .unwrap();
    let d = authed
        .create_draft_release(&r, "openstack-scs-1-34-v1", "openstack-scs-1-34-v1", "")
        .unwrap();
    assert_eq!(authed.list_releases(&r).unwrap().len(), 1);
    assert!(
        anon.list_releases(&r).unwrap().is_empty(),
        "a draft is not public"
    );
    assert_eq!(
        anon.tag_target(&r, "openstack-scs-1-34-v1").unwrap(),
        Some(head.clone())
    );
    let denied = anon.create_draft_release(&r, "x", "x", "");
    assert!(
        matches!(denied, Err(ForgeError::Unauthorized { .. })),
        "{denied:?}"
    );
    authed.publish_release(&r, d.id, true).unwrap();
    assert_eq!(anon.list_releases(&r).unwrap().len(), 1);
}

#[test]
fn duplicates_are_refused_with_already_exists() {
    let fake = seeded(FakeOptions::default());
    let f = forge(&fake, Some(TOKEN));
    let r = repo();
    let head = f.branch_head(&r, "main").unwrap().unwrap();
    f.create_tag(&r, "v1", &head, "m").unwrap();
    assert!(matches!(
        f.create_tag(&r, "v1", &head, "m"),
        Err(ForgeError::AlreadyExists { .. })
    ));
    let d = f.create_draft_release(&r, "v1", "v1", "").unwrap();
    f.upload_asset(&r, d.id, "a.tgz", b"1").unwrap();
    let e = f.upload_asset(&r, d.id, "a.tgz", b"1").unwrap_err();
    assert!(matches!(e, ForgeError::AlreadyExists { .. }), "{e:?}");
    assert!(e.to_string().contains("a.tgz"), "{e}");
    f.publish_release(&r, d.id, true).unwrap();
    // A second published release for the tag is refused by GitHub.
    let d2 = f.create_draft_release(&r, "v1", "v1", "").unwrap();
    assert!(matches!(
        f.publish_release(&r, d2.id, true),
        Err(ForgeError::AlreadyExists { .. })
    ));
}

/// Run `op` once with `fault` on the first request of `route`; the state must show it done
/// exactly once, and the forge must have looked it up rather than blindly repeating it.
fn once_despite(
    fault: Fault,
    method: Method,
    route: &str,
    op: impl Fn(&GithubForge, &RepoRef),
) -> FakeGithub {
    let fake = seeded(FakeOptions::default());
    let f = forge(&fake, Some(TOKEN));
    fake.set_faults(Faults::route(method.clone(), route, 1, fault.clone()));
    op(&f, &repo());
    let key = format!("{method} {route}");
    let log = fake.write_log();
    let applied = log.iter().filter(|w| w.route == key && w.applied).count();
    assert_eq!(
        applied, 1,
        "{fault:?} on {key}: applied {applied} times; log {log:#?}"
    );
    fake
}

#[test]
fn a_write_answered_502_after_it_took_effect_is_not_repeated() {
    for fault in [Fault::AfterSuccess(502), Fault::DropAfterSuccess] {
        // create draft
        let fake = once_despite(
            fault.clone(),
            Method::POST,
            "/repos/{owner}/{repo}/releases",
            |f, r| {
                let head = f.branch_head(r, "main").unwrap().unwrap();
                f.create_tag(r, "v1", &head, "m").unwrap();
                let d = f.create_draft_release(r, "v1", "v1", "notes").unwrap();
                assert!(d.draft && d.tag == "v1");
            },
        );
        assert_eq!(
            fake.snapshot().repos[REPO].releases.len(),
            1,
            "{fault:?}: one draft"
        );

        // create ref (tag and branch)
        let fake = once_despite(
            fault.clone(),
            Method::POST,
            "/repos/{owner}/{repo}/git/refs",
            |f, r| {
                let head = f.branch_head(r, "main").unwrap().unwrap();
                f.create_tag(r, "v1", &head, "m").unwrap();
                assert_eq!(f.tag_target(r, "v1").unwrap(), Some(head));
            },
        );
        assert!(fake.snapshot().repos[REPO].tags.contains_key("v1"));

        // move a branch
        once_despite(
            fault.clone(),
            Method::PATCH,
            "/repos/{owner}/{repo}/git/refs/{ref}",
            |f, r| {
                let head = f.branch_head(r, "main").unwrap().unwrap();
                let c = f
                    .commit(r, "main", &head, Some(&head), &files(&[("a", b"a")]), "m")
                    .unwrap();
                assert_eq!(f.branch_head(r, "main").unwrap(), Some(c));
            },
        );

        // upload
        let fake = once_despite(
            fault.clone(),
            Method::POST,
            "/uploads/repos/{owner}/{repo}/releases/{id}/assets",
            |f, r| {
                let head = f.branch_head(r, "main").unwrap().unwrap();
                f.create_tag(r, "v1", &head, "m").unwrap();
                let d = f.create_draft_release(r, "v1", "v1", "").unwrap();
                let a = f.upload_asset(r, d.id, "x.tgz", b"bytes").unwrap();
                assert_eq!(a.size, 5);
            },
        );
        assert_eq!(fake.snapshot().repos[REPO].releases[0].assets.len(), 1);

        // pull request and comment
        once_despite(
            fault.clone(),
            Method::POST,
            "/repos/{owner}/{repo}/pulls",
            |f, r| {
                let head = f.branch_head(r, "main").unwrap().unwrap();
                f.commit(r, "b", &head, None, &files(&[("a", b"a")]), "m")
                    .unwrap();
                f.open_pull(r, "b", "main", "t", "body").unwrap();
            },
        );
        once_despite(
            fault.clone(),
            Method::POST,
            "/repos/{owner}/{repo}/issues/{number}/comments",
            |f, r| {
                let head = f.branch_head(r, "main").unwrap().unwrap();
                f.commit(r, "b", &head, None, &files(&[("a", b"a")]), "m")
                    .unwrap();
                let p = f.open_pull(r, "b", "main", "t", "body").unwrap();
                upsert_comment(f, r, p.number, "<!-- m -->", "hello").unwrap();
                assert_eq!(f.list_comments(r, p.number).unwrap().len(), 1);
            },
        );

        // the dashboard issue
        let fake = once_despite(
            fault.clone(),
            Method::POST,
            "/repos/{owner}/{repo}/issues",
            |f, r| {
                let i = f
                    .create_issue(r, "dashboard", "<!-- d -->\nbody", &["dash".into()])
                    .unwrap();
                assert_eq!(i.title, "dashboard");
            },
        );
        assert_eq!(fake.snapshot().repos[REPO].issues.len(), 1, "{fault:?}");
    }
}

#[test]
fn a_write_refused_before_it_took_effect_is_retried() {
    for fault in [
        Fault::Status(502),
        Fault::Drop,
        Fault::SecondaryRateLimit(1),
        Fault::Status(503),
    ] {
        once_despite(
            fault,
            Method::POST,
            "/repos/{owner}/{repo}/releases",
            |f, r| {
                f.create_draft_release(r, "v9", "v9", "").unwrap();
            },
        );
    }
}

/// A small but complete release + PR scenario.
fn scenario(f: &GithubForge, r: &RepoRef) {
    let head = f.branch_head(r, "main").unwrap().unwrap();
    let c = f
        .commit(
            r,
            "main",
            &head,
            Some(&head),
            &files(&[
                (
                    "providers/openstack/scs/1-34/stack.yaml",
                    b"kubernetesVersion: v1.34.1\n",
                ),
                (
                    "providers/openstack/scs/1-34/blob.bin",
                    &[0, 159, 146, 150, 0, 1],
                ),
            ]),
            "Release openstack-scs-1-34-v1",
        )
        .unwrap();
    let tag = "openstack-scs-1-34-v1";
    f.create_tag(r, tag, &c, "Release").unwrap();
    let d = f.create_draft_release(r, tag, tag, "notes").unwrap();
    let big: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 256) as u8).collect();
    for (name, bytes) in [
        ("openstack-scs-1-34-v1.tgz", &big[..]),
        ("metadata.yaml", b"versions: {}\n"),
        ("SHA256SUMS", b"abc  openstack-scs-1-34-v1.tgz\n"),
    ] {
        f.upload_asset(r, d.id, name, bytes).unwrap();
    }
    f.publish_release(r, d.id, true).unwrap();
    f.commit(
        r,
        "stackbot/bump",
        &c,
        None,
        &files(&[("tenant.yaml", b"v: 1\n")]),
        "Bump",
    )
    .unwrap();
    let p = f
        .open_pull(r, "stackbot/bump", "main", "Bump", "body")
        .unwrap();
    upsert_comment(f, r, p.number, "<!-- stackbot -->", "status 1").unwrap();
    upsert_comment(f, r, p.number, "<!-- stackbot -->", "status 2").unwrap();
    f.update_pull(r, p.number, "Bump (updated)", "body 2")
        .unwrap();
    assert_eq!(f.list_releases(r).unwrap().len(), 1);
}

#[test]
fn a_flaky_github_still_ends_in_the_clean_state_with_bounded_retries() {
    let clean = seeded(FakeOptions::default());
    scenario(&forge(&clean, Some(TOKEN)), &repo());
    let clean_requests = clean.counts().total();

    let mut added = Vec::new();
    for seed in [1u64, 2, 3] {
        let flaky = seeded(FakeOptions::default());
        let mut faults = RandomFaults::flaky(seed);
        faults.rate_limit = 0.02;
        flaky.set_faults(Faults::random(faults));
        let f = forge(&flaky, Some(TOKEN));
        scenario(&f, &repo());
        flaky.clear_faults();
        assert_eq!(
            flaky.snapshot(),
            clean.snapshot(),
            "seed {seed}: same final state"
        );
        let total = flaky.counts().total();
        let injected = flaky
            .write_log()
            .iter()
            .filter(|w| w.fault.is_some())
            .count();
        let (sent, retries) = f.request_counts();
        assert_eq!(sent as usize, total, "every attempt reached the fake");
        assert!(retries > 0, "seed {seed}: faults were injected and retried");
        assert!(
            total <= clean_requests * 2,
            "seed {seed}: retries are bounded ({total} vs {clean_requests} clean)"
        );
        let _ = injected;
        added.push(total - clean_requests);
    }
    eprintln!(
        "flaky GitHub: clean run {clean_requests} requests; added requests per seed: {added:?}"
    );
}

#[test]
fn persistent_server_errors_give_a_bounded_transient_error() {
    let fake = seeded(FakeOptions::default());
    let f = forge(&fake, Some(TOKEN));
    let mut r = RandomFaults::flaky(7);
    r.server_error = 1.0;
    r.after_success = 0.0;
    fake.set_faults(Faults::random(r));
    let e = f.list_releases(&repo()).unwrap_err();
    assert!(matches!(e, ForgeError::Transient { .. }), "{e:?}");
    assert!(e.to_string().contains("safe to re-run"), "{e}");
    assert_eq!(fake.counts().total(), 1 + fast().max_retries as usize);
    let e = f.create_draft_release(&repo(), "v1", "v1", "").unwrap_err();
    assert!(matches!(e, ForgeError::Transient { .. }), "{e:?}");
    fake.clear_faults();
    assert!(
        f.list_releases(&repo()).unwrap().is_empty(),
        "nothing was created"
    );
}

#[test]
fn a_bad_token_is_a_clear_unauthorized_error_that_never_shows_the_token() {
    let fake = seeded(FakeOptions::default());
    let bad = "ghp_WRONGtokenVALUE_do_not_print_42";
    let f = forge(&fake, Some(bad));
    let e = f.list_releases(&repo()).unwrap_err();
    assert!(matches!(e, ForgeError::Unauthorized { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("STACKBOT_TEST_GITHUB_TOKEN"),
        "names the variable: {msg}"
    );
    assert!(
        !msg.contains(bad) && !format!("{e:?}").contains(bad),
        "{msg}"
    );
    let w = f.create_draft_release(&repo(), "v1", "v1", "").unwrap_err();
    assert!(matches!(w, ForgeError::Unauthorized { .. }), "{w:?}");
    assert_eq!(fake.counts().writes, 1, "no retry of a refused write");
    assert!(
        fake.snapshot().repos[REPO].releases.is_empty(),
        "nothing changed"
    );
}

#[test]
fn the_token_never_appears_in_errors_or_debug_output() {
    let fake = seeded(FakeOptions::default());
    let f = forge(&fake, Some(TOKEN));
    let r = repo();
    let mut outputs = vec![format!("{f:?}")];
    let mut record = |e: ForgeError| {
        outputs.push(e.to_string());
        outputs.push(format!("{e:?}"));
    };
    record(
        f.ensure_repo(&RepoRef::parse("scs/missing").unwrap(), "main")
            .unwrap_err(),
    );
    record(
        f.download_asset(
            &r,
            1,
            &stackbot::forge::AssetInfo {
                id: 99,
                name: "x".into(),
                size: 1,
                sha256: None,
            },
        )
        .unwrap_err(),
    );
    record(f.publish_release(&r, 12345, true).unwrap_err());
    let head = f.branch_head(&r, "main").unwrap().unwrap();
    f.create_tag(&r, "t", &head, "m").unwrap();
    record(f.create_tag(&r, "t", &head, "m").unwrap_err());
    record(
        f.commit(
            &r,
            "main",
            &head,
            Some("0000000000000000000000000000000000000000"),
            &files(&[("a", b"a")]),
            "m",
        )
        .unwrap_err(),
    );
    let mut all_drop = RandomFaults::flaky(1);
    (all_drop.server_error, all_drop.drop) = (0.0, 1.0);
    fake.set_faults(Faults::random(all_drop));
    record(f.list_releases(&r).unwrap_err());
    fake.clear_faults();
    let e = GithubForge::new(
        &GithubForgeConfig {
            api_url: "http://example.com".into(),
            ..config(&fake)
        },
        Some(TOKEN.into()),
        clock(),
    )
    .unwrap_err();
    record(e);
    for o in &outputs {
        assert!(!o.contains(TOKEN), "token leaked: {o}");
    }
    assert!(
        outputs.iter().any(|o| o.contains("connection")),
        "{outputs:#?}"
    );
}

#[test]
fn plain_http_to_a_remote_host_is_refused() {
    let cfg = GithubForgeConfig {
        api_url: "http://github.example.com/api/v3".into(),
        ..GithubForgeConfig::default()
    };
    let e = GithubForge::new(&cfg, None, clock())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("forge.github.api_url") && e.contains("loopback"),
        "{e}"
    );
    let cfg = GithubForgeConfig {
        upload_url: Some("http://uploads.example.com".into()),
        ..GithubForgeConfig::default()
    };
    assert!(GithubForge::new(&cfg, None, clock()).is_err());
}

#[test]
fn large_files_are_read_through_the_blobs_api() {
    let fake = seeded(FakeOptions::default());
    let f = forge(&fake, Some(TOKEN));
    let r = repo();
    let big: Vec<u8> = (0..(1024 * 1024 + 10))
        .map(|i: u32| (i % 97) as u8 + 32)
        .collect();
    let head = f.branch_head(&r, "main").unwrap().unwrap();
    let c = f
        .commit(
            &r,
            "main",
            &head,
            Some(&head),
            &files(&[("big.txt", &big)]),
            "big",
        )
        .unwrap();
    fake.reset_counts();
    assert_eq!(f.read_file(&r, &c, "big.txt").unwrap(), Some(big));
    const BLOB: &str = "/repos/{owner}/{repo}/git/blobs/{sha}";
    assert_eq!(fake.counts().by_route[&format!("GET {BLOB}")], 1);

    // A blob answer longer than the size the contents API listed: refused at that size,
    // named by the file, and not asked again. (Another client: the first holds the blob.)
    fake.set_faults(Faults::route(Method::GET, BLOB, 1, Fault::Longer(10)));
    fake.reset_counts();
    let e = forge(&fake, Some(TOKEN))
        .read_file(&r, &c, "big.txt")
        .unwrap_err()
        .to_string();
    assert!(e.contains("`big.txt` at"), "{e}");
    assert!(
        e.contains(&format!(
            "longer than the {} bytes read for it",
            1024 * 1024 + 10
        )),
        "{e}"
    );
    assert_eq!(fake.counts().by_route[&format!("GET {BLOB}")], 1);
}

#[test]
fn the_forge_is_usable_from_several_threads_at_once() {
    let fake = seeded(FakeOptions::default());
    let f = forge(&fake, Some(TOKEN));
    let r = repo();
    let head = f.branch_head(&r, "main").unwrap().unwrap();
    f.commit(&r, "b", &head, None, &files(&[("a", b"a")]), "m")
        .unwrap();
    let p = f.open_pull(&r, "b", "main", "t", "body").unwrap();
    std::thread::scope(|s| {
        for i in 0..6 {
            let (f, r) = (&f, &r);
            s.spawn(move || {
                f.create_comment(r, p.number, &format!("thread {i}"))
                    .unwrap();
                assert_eq!(f.list_releases(r).unwrap().len(), 0);
            });
        }
    });
    let bodies: BTreeMap<String, ()> = f
        .list_comments(&r, p.number)
        .unwrap()
        .into_iter()
        .map(|c| (c.body, ()))
        .collect();
    assert_eq!(bodies.len(), 6);
}

#[test]
fn writes_are_spaced_by_the_configured_interval() {
    let fake = seeded(FakeOptions::default());
    let paced = GithubForge::new(
        &GithubForgeConfig {
            write_interval_ms: Some(150),
            ..config(&fake)
        },
        Some(TOKEN.into()),
        clock(),
    )
    .unwrap();
    let r = repo();
    // Three writes take three slots: the third cannot start before 2 intervals have passed.
    let start = std::time::Instant::now();
    for i in 0..3 {
        paced
            .create_draft_release(&r, &format!("p{i}"), "p", "")
            .unwrap();
    }
    assert!(start.elapsed() >= Duration::from_millis(300));
    assert_eq!(fake.counts().writes, 3);
}

#[test]
fn slow_answers_and_latency_do_not_change_the_result() {
    let fake = seeded(FakeOptions::default());
    let f = forge(&fake, Some(TOKEN));
    let r = repo();
    fake.set_faults(Faults {
        latency: Duration::from_millis(20),
        ..Faults::route(
            Method::POST,
            "/repos/{owner}/{repo}/releases",
            1,
            Fault::Delay(Duration::from_millis(300)),
        )
    });
    let d = f.create_draft_release(&r, "slow", "slow", "").unwrap();
    assert_eq!(f.list_releases(&r).unwrap()[0].id, d.id);
    let c = fake.counts();
    assert_eq!(
        (c.writes, c.reads),
        (1, 1),
        "a slow answer is not retried: {c:?}"
    );
}

#[test]
fn writes_over_the_hourly_budget_are_not_sent_and_the_next_run_continues() {
    let fake = seeded(FakeOptions::default());
    let budgeted = || {
        GithubForge::new(
            &GithubForgeConfig {
                writes_per_hour: Some(3),
                ..config(&fake)
            },
            Some(TOKEN.into()),
            clock(),
        )
        .unwrap()
        .with_retry_policy(fast())
    };
    let r = repo();
    let run1 = budgeted();
    for i in 0..3 {
        run1.create_draft_release(&r, &format!("b{i}"), "b", "")
            .unwrap();
    }
    let err = run1.create_draft_release(&r, "b3", "b", "").unwrap_err();
    assert!(matches!(err, ForgeError::Transient { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("hourly write budget of 3 content-creating requests used")
            && msg.contains("next scheduled run continues"),
        "{msg}"
    );
    assert_eq!(
        fake.counts().writes,
        3,
        "the refused write never reached GitHub"
    );
    // Reads are not budgeted: the run can still look at what exists.
    assert_eq!(run1.list_releases(&r).unwrap().len(), 3);

    // The next scheduled run is a new process with a fresh window: it finishes the job.
    let run2 = budgeted();
    let d = run2.create_draft_release(&r, "b3", "b", "").unwrap();
    assert_eq!(d.tag, "b3");
    assert_eq!(fake.counts().writes, 4);
    assert_eq!(run2.list_releases(&r).unwrap().len(), 4);
}

#[test]
fn pacing_and_rate_limit_waits_run_on_the_injected_clock() {
    // An hour of GitHub time passes in no real time: the forge waits on the clock it is given.
    let fake = seeded(FakeOptions::default());
    let manual = stackbot::clock::ManualClock::shared("2026-05-01T12:00:00Z".parse().unwrap());
    let f = GithubForge::new(
        &GithubForgeConfig {
            write_interval_ms: Some(1000),
            ..config(&fake)
        },
        Some(TOKEN.into()),
        manual.clone(),
    )
    .unwrap()
    .with_retry_policy(RetryPolicy {
        max_rate_limit_wait: Duration::from_secs(120),
        ..fast()
    });
    let r = repo();
    let wall = std::time::Instant::now();
    let t0 = stackbot::clock::Clock::now(manual.as_ref());
    for i in 0..3 {
        f.create_draft_release(&r, &format!("m{i}"), "m", "")
            .unwrap();
    }
    let paced = stackbot::clock::Clock::now(manual.as_ref()) - t0;
    assert_eq!(
        paced.num_seconds(),
        2,
        "3 writes, 2 gaps of 1 s on the clock"
    );
    // A secondary rate limit asking for 60 s is honoured on the clock, then the write goes.
    fake.set_faults(Faults::route(
        Method::POST,
        "/repos/{owner}/{repo}/releases",
        1,
        Fault::SecondaryRateLimit(60),
    ));
    let t1 = stackbot::clock::Clock::now(manual.as_ref());
    f.create_draft_release(&r, "m3", "m", "").unwrap();
    let waited = stackbot::clock::Clock::now(manual.as_ref()) - t1;
    assert!(waited.num_seconds() >= 60, "{waited}");
    assert!(
        wall.elapsed() < Duration::from_secs(30),
        "no real waiting: {:?}",
        wall.elapsed()
    );
    assert_eq!(f.list_releases(&r).unwrap().len(), 4);
}

/// A dispatch waits out a rate limit only until its deadline: an overlapping run may start the
/// attempt again once its claim is old enough, so a dispatch sent later would start a second
/// test. Past the deadline it fails as not sent, and nothing was started.
#[test]
fn a_dispatch_gives_up_as_not_sent_rather_than_wait_past_its_deadline() {
    let fake = seeded(FakeOptions::default());
    fake.add_workflow(
        REPO,
        "conformance.yml",
        "C",
        &["gate_id"],
        Some("C ${{ inputs.gate_id }}"),
    );
    let manual = stackbot::clock::ManualClock::shared("2026-05-01T12:00:00Z".parse().unwrap());
    let f = GithubForge::new(&config(&fake), Some(TOKEN.into()), manual.clone())
        .unwrap()
        .with_retry_policy(RetryPolicy {
            max_rate_limit_wait: Duration::from_secs(600),
            ..fast()
        });
    let inputs: BTreeMap<String, String> = [("gate_id".to_string(), "x#1".to_string())].into();
    let dispatches = "/repos/{owner}/{repo}/actions/workflows/conformance.yml/dispatches";
    fake.set_faults(Faults::route(
        Method::POST,
        dispatches,
        1,
        Fault::TooManyRequests(120),
    ));
    let t0 = stackbot::clock::Clock::now(manual.as_ref());
    let send_by = t0 + chrono::Duration::seconds(60);
    let e = f
        .dispatch_workflow(&repo(), "conformance.yml", "main", &inputs, send_by)
        .unwrap_err();
    assert!(matches!(e, ForgeError::NotSent { .. }), "{e:?}");
    assert!(fake.runs(REPO).is_empty(), "nothing was started");
    assert!(
        stackbot::clock::Clock::now(manual.as_ref()) <= send_by,
        "it did not wait past it"
    );

    // A wait that ends before the deadline is waited out, and the dispatch goes.
    fake.set_faults(Faults::route(
        Method::POST,
        dispatches,
        1,
        Fault::TooManyRequests(30),
    ));
    let send_by = stackbot::clock::Clock::now(manual.as_ref()) + chrono::Duration::seconds(60);
    f.dispatch_workflow(&repo(), "conformance.yml", "main", &inputs, send_by)
        .unwrap();
    assert_eq!(fake.runs(REPO).len(), 1);
}

/// A dispatch refused before it went out (the name does not resolve) is not sent, which the
/// gate tells apart from one whose answer was lost.
#[test]
fn a_dispatch_that_never_went_out_fails_as_not_sent() {
    let fake = seeded(FakeOptions::default());
    let f = GithubForge::new(
        &GithubForgeConfig {
            api_url: "https://stackbot-no-such-host.invalid/api/v3".into(),
            upload_url: None,
            ..config(&fake)
        },
        Some(TOKEN.into()),
        clock(),
    )
    .unwrap()
    .with_retry_policy(fast());
    let soon = chrono::Utc::now() + chrono::Duration::minutes(5);
    let e = f
        .dispatch_workflow(&repo(), "conformance.yml", "main", &BTreeMap::new(), soon)
        .unwrap_err();
    assert!(matches!(e, ForgeError::NotSent { .. }), "{e:?}");
}
