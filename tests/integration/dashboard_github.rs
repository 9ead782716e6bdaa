//! The dashboard issue on the fake GitHub (real HTTP on loopback, every exchange checked
//! against GitHub's OpenAPI description): created once with its label, found by the hidden
//! marker, edited in place only when its content changes, and never duplicated: not after a
//! 502 that had taken effect, not after a run that died right after creating it, not when
//! someone removed the label.

use crate::support;

use std::time::Duration;

use axum::http::Method;
use stackbot::config::{self, GithubForgeConfig, Loaded};
use stackbot::forge::faulty::{FaultMode, Faulty};
use stackbot::forge::github::{GithubForge, RetryPolicy};
use stackbot::forge::{Forge, RepoRef};
use stackbot::model::ReleaseName;
use stackbot::pipeline::Context;
use stackbot::pipeline::dashboard::{Dashboard, update_dashboard};
use stackbot::status::{self, Facts, Patch, Release, Status, Target, UpstreamMinor};
use support::fake_github::{FakeGithub, FakeOptions, Fault, Faults, IssueSnapshot};

const TOKEN: &str = "ghp_DASHBOARDtestTOKEN0123456789SECRET";
const REPO: &str = "scs/cluster-stacks";

struct World {
    _dir: tempfile::TempDir,
    fake: FakeGithub,
    forge: GithubForge,
    loaded: Loaded,
}

impl World {
    fn new() -> World {
        let fake = FakeGithub::start_with(FakeOptions::default().with_token(TOKEN));
        fake.create_repo(REPO, "main", &[("README.md", b"stacks\n")]);
        let yaml = format!(
            "stacks:\n  - provider: openstack\n    name: scs2\n    templates: t\n    output: o\n    minors: [\"1.34\"]\n    node_image: {{url: \"https://img/{{version}}.qcow2\", name: \"ubuntu-capi-image-{{version}}\"}}\nforge:\n  kind: github\n  repository: {REPO}\n  github: {{api_url: \"{}\", upload_url: \"{}\"}}\n",
            fake.api_url(),
            fake.upload_url()
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stackbot.yaml");
        std::fs::write(&path, yaml).unwrap();
        let loaded = config::load(&path).unwrap();
        let forge = client(&fake);
        World {
            _dir: dir,
            fake,
            forge,
            loaded,
        }
    }

    /// Another process talking to the same GitHub.
    fn another_client(&self) -> GithubForge {
        client(&self.fake)
    }

    fn ctx(&self, day: &str) -> Context {
        Context::fixed(self.loaded.clone(), day.parse().unwrap())
    }

    fn issues(&self) -> Vec<IssueSnapshot> {
        self.fake.snapshot().repos[REPO].issues.clone()
    }
}

fn client(fake: &FakeGithub) -> GithubForge {
    let cfg = GithubForgeConfig {
        api_url: fake.api_url(),
        upload_url: Some(fake.upload_url()),
        ..GithubForgeConfig::default()
    };
    GithubForge::new(
        &cfg,
        Some(TOKEN.into()),
        std::sync::Arc::new(stackbot::clock::SystemClock),
    )
    .unwrap()
    .with_retry_policy(RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_rate_limit_wait: Duration::from_secs(1),
    })
}

/// A status with one minor whose newest patch (published 2026-04-15) the next run releases,
/// as of `day`.
fn status_on(day: &str) -> Status {
    let patch = |v: &str, at: &str| Patch {
        version: v.parse().unwrap(),
        published_at: Some(at.parse().unwrap()),
    };
    status::compute(&Facts {
        today: day.parse().unwrap(),
        minors: vec![UpstreamMinor {
            stack: "openstack/scs2".parse().unwrap(),
            minor: "1.34".parse().unwrap(),
            tracked: true,
            patches: vec![
                patch("v1.34.6", "2026-03-18T15:42:00Z"),
                patch("v1.34.7", "2026-04-15T15:49:00Z"),
            ],
            waiting: Vec::new(),
            errors: Vec::new(),
            releasable: Some("v1.34.7".parse().unwrap()),
            end_of_life: None,
            stepped_over: Vec::new(),
        }],
        releases: vec![Release {
            name: ReleaseName::parse("openstack-scs2-1-34-v1").unwrap(),
            target: Target::Forge,
            kubernetes: Some("v1.34.6".parse().unwrap()),
            published_at: Some("2026-03-20T10:00:00Z".parse().unwrap()),
            url: None,
            unread: None,
        }],
        // What the verdicts read: the same patches (the releases list was read), the end of
        // life of 1.34, no CVE. A verdict never counts on patches the inputs did not read.
        compliance: stackbot::compliance::Inputs {
            odd_tags: Vec::new(),
            releases: Ok([
                "v1.34.6:2026-03-18T15:42:00Z",
                "v1.34.7:2026-04-15T15:49:00Z",
            ]
            .iter()
            .map(|s| {
                let (v, at) = s.split_once(':').unwrap();
                stackbot::upstream::kubernetes::KubeRelease {
                    version: v.parse().unwrap(),
                    published_at: Some(at.parse().unwrap()),
                }
            })
            .collect()),
            lifecycles: stackbot::compliance::Lifecycles::Known(
                [("1.34".parse().unwrap(), "2026-10-27".parse().unwrap())].into(),
            ),
            security: stackbot::compliance::Security::Known {
                cves: Vec::new(),
                unreadable: Vec::new(),
            },
        },
        ..Facts::default()
    })
}

#[test]
fn the_dashboard_is_created_once_then_edited_in_place_only_when_it_changes() {
    let w = World::new();
    let ctx = w.ctx("2026-05-01");
    let first = update_dashboard(&ctx, &w.forge, &status_on("2026-05-01"))
        .unwrap()
        .unwrap();
    let Dashboard::Created { number, url } = first else {
        panic!("{first:?}")
    };
    assert!(url.ends_with(&format!("/{REPO}/issues/{number}")), "{url}");
    let issues = w.issues();
    assert_eq!(issues.len(), 1);
    assert_eq!(issues[0].labels, ["stackbot-dashboard"]);
    assert!(issues[0].body.starts_with(status::dashboard::MARKER));
    assert!(issues[0].body.len() < 65_536);

    // Same content: one read (the labelled listing), no write.
    w.fake.reset_counts();
    let again = update_dashboard(&ctx, &w.forge, &status_on("2026-05-01"))
        .unwrap()
        .unwrap();
    assert_eq!(again, Dashboard::Unchanged { number, url });
    let c = w.fake.counts();
    assert_eq!((c.reads, c.writes), (1, 0), "{:?}", c.by_route);

    // A day later the deadline is one day closer: one edit, of the same issue.
    w.fake.reset_counts();
    let next = update_dashboard(&w.ctx("2026-05-02"), &w.forge, &status_on("2026-05-02"))
        .unwrap()
        .unwrap();
    assert!(matches!(next, Dashboard::Updated { number: n, .. } if n == number));
    assert_eq!(w.fake.counts().writes, 1);
    let issues = w.issues();
    assert_eq!(issues.len(), 1);
    assert!(
        issues[0].body.contains("14 days left"),
        "{}",
        issues[0].body
    );
    w.fake.assert_conformant();
}

#[test]
fn a_502_after_the_issue_was_created_does_not_create_a_second_one() {
    let w = World::new();
    w.fake.set_faults(Faults::route(
        Method::POST,
        "/repos/{owner}/{repo}/issues",
        1,
        Fault::AfterSuccess(502),
    ));
    let d = update_dashboard(&w.ctx("2026-05-01"), &w.forge, &status_on("2026-05-01")).unwrap();
    assert!(matches!(d, Some(Dashboard::Created { .. })), "{d:?}");
    assert_eq!(w.issues().len(), 1);
}

#[test]
fn a_run_that_died_right_after_creating_the_dashboard_is_finished_by_the_next() {
    let w = World::new();
    let ctx = w.ctx("2026-05-01");
    let s = status_on("2026-05-01");
    let dying = Faulty::new(w.another_client(), 1, FaultMode::After);
    assert!(update_dashboard(&ctx, &dying, &s).is_err());
    assert_eq!(dying.performed(), ["create_issue"]);
    assert_eq!(
        w.issues().len(),
        1,
        "the issue exists, the run never heard back"
    );
    let next = update_dashboard(&ctx, &w.forge, &s).unwrap().unwrap();
    assert!(matches!(next, Dashboard::Unchanged { .. }), "{next:?}");
    assert_eq!(w.issues().len(), 1);
}

#[test]
fn without_its_label_the_dashboard_is_still_found_by_its_marker() {
    let w = World::new();
    let repo = RepoRef::parse(REPO).unwrap();
    // Someone removed the label (or the token could not set it): only the marker is left.
    let old = format!("{}\nyesterday's status\n", status::dashboard::MARKER);
    let mine = w
        .forge
        .create_issue(
            &repo,
            "Cluster stacks: SCS 0210 status (stackbot dashboard)",
            &old,
            &[],
        )
        .unwrap();
    w.forge
        .create_issue(&repo, "An unrelated issue", "hello", &[])
        .unwrap();
    let d = update_dashboard(&w.ctx("2026-05-01"), &w.forge, &status_on("2026-05-01"))
        .unwrap()
        .unwrap();
    assert!(
        matches!(d, Dashboard::Updated { number, .. } if number == mine.number),
        "{d:?}"
    );
    let issues = w.issues();
    assert_eq!(issues.len(), 2, "edited, not duplicated");
    assert!(issues[0].body.contains("SCS 0210 status as of 2026-05-01"));
}
