//! Invariants over many runs, release side (issue 12): what must hold while the world changes
//! between hourly runs (upstream flickers, humans delete releases and tags, decline or merge
//! release pull requests, push to bot branches, leave merge conflicts). Each scenario runs on
//! the local forge and on the fake GitHub; see "Invariants over many runs" in
//! docs/reliability.md for the list and the test guarding each.

use crate::support;

use std::path::Path;
use std::time::Duration;

use crate::support::release::*;
use sha2::{Digest, Sha256};
use stackbot::apply::Outcome;
use stackbot::config::{Committer, GithubForgeConfig};
use stackbot::error::Class;
use stackbot::forge::counting::Counting;
use stackbot::forge::faulty::{FaultMode, Faulty};
use stackbot::forge::local::LocalForge;
use stackbot::forge::{FileChanges, Forge, PullState};
use stackbot::lock::Lock;
use stackbot::plan::{Desired, Mode, Overrides, Plan};
use support::fake_github::{FakeGithub, FakeOptions};

const TOKEN: &str = "ghp_STACKBOToverRUNStoken_0123456789";
const REPO: &str = "scs/cluster-stacks";
const BOT: &str = "stackbot@example.org";

/// A forge and the human actions tests need on it.
enum World {
    Local {
        forge: LocalForge,
        human: LocalForge,
        _dir: tempfile::TempDir,
    },
    Github {
        fake: FakeGithub,
        forge: Box<stackbot::forge::github::GithubForge>,
    },
}

impl World {
    fn local() -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("forge");
        let forge = LocalForge::new(&root, "stackbot", BOT);
        forge.ensure_repo(&repo(), "main").unwrap();
        World::Local {
            human: LocalForge::new(&root, "A Maintainer", "maintainer@example.com"),
            forge,
            _dir: dir,
        }
    }

    fn github() -> World {
        let fake = FakeGithub::start_with(FakeOptions::default().with_token(TOKEN));
        fake.create_repo(REPO, "main", &[("README.md", b"# cluster stacks\n")]);
        let forge = Box::new(github_forge(&fake));
        World::Github { fake, forge }
    }

    /// Run `f` on a fresh client of the same forge, counting its requests: `(result, writes,
    /// all requests)`.
    fn counted<R>(&self, f: impl FnOnce(&dyn Forge) -> R) -> (R, u64, u64) {
        match self {
            World::Local { forge, .. } => {
                let c = Counting::new(LocalForge::new(forge.root(), "stackbot", BOT));
                let r = f(&c);
                (r, c.writes(), c.total())
            }
            World::Github { fake, .. } => {
                let c = Counting::new(github_forge(fake));
                let r = f(&c);
                (r, c.writes(), c.total())
            }
        }
    }

    fn all() -> [World; 2] {
        [World::local(), World::github()]
    }

    fn name(&self) -> &'static str {
        match self {
            World::Local { .. } => "local forge",
            World::Github { .. } => "fake GitHub",
        }
    }

    fn forge(&self) -> &dyn Forge {
        match self {
            World::Local { forge, .. } => forge,
            World::Github { forge, .. } => forge.as_ref(),
        }
    }

    /// Run `f` on a fresh client of the same forge whose `k`-th write fails (`mode`): the
    /// result and the number of writes attempted.
    fn faulty<R>(&self, k: u64, mode: FaultMode, f: impl FnOnce(&dyn Forge) -> R) -> (R, u64) {
        match self {
            World::Local { forge, .. } => {
                let c = Faulty::new(LocalForge::new(forge.root(), "stackbot", BOT), k, mode);
                let r = f(&c);
                (r, c.writes())
            }
            World::Github { fake, .. } => {
                let c = Faulty::new(github_forge(fake), k, mode);
                let r = f(&c);
                (r, c.writes())
            }
        }
    }

    /// What a user sees, for comparing end states: published and draft releases (tag, draft,
    /// notes, asset name → sha256), which tags exist, the files on main, and the comments of
    /// pull request `number`.
    fn state(&self, tags: &[&str], number: u64) -> String {
        let f = self.forge();
        let mut rels: Vec<String> = f
            .list_releases(&repo())
            .unwrap()
            .into_iter()
            .map(|r| {
                let assets: Vec<String> = r
                    .assets
                    .iter()
                    .map(|a| {
                        let b = f.download_asset(&repo(), r.id, a).unwrap();
                        format!("{} {}", a.name, hex::encode(Sha256::digest(b)))
                    })
                    .collect();
                format!("{} draft={} {:?} {assets:?}", r.tag, r.draft, r.body)
            })
            .collect();
        rels.sort();
        let tagged: Vec<bool> = tags
            .iter()
            .map(|t| f.tag_target(&repo(), t).unwrap().is_some())
            .collect();
        let head = f.branch_head(&repo(), "main").unwrap().unwrap();
        let files: Vec<String> = f
            .list_files(&repo(), &head)
            .unwrap()
            .into_iter()
            .map(|p| {
                let b = f.read_file(&repo(), &head, &p).unwrap().unwrap();
                format!("{p} {}", hex::encode(Sha256::digest(b)))
            })
            .collect();
        // Release links differ between forges and temp dirs: compared without them.
        let comments: Vec<String> = f
            .list_comments(&repo(), number)
            .unwrap()
            .into_iter()
            .map(|c| match c.body.find(" (") {
                Some(i) => c.body[..i].to_string(),
                None => c.body,
            })
            .collect();
        format!("{rels:#?}\n{tagged:?}\n{files:#?}\n{comments:#?}")
    }

    /// A maintainer deletes a tag.
    fn delete_tag(&self, tag: &str) {
        match self {
            World::Local { forge, .. } => forge.delete_tag(&repo(), tag).unwrap(),
            World::Github { fake, .. } => fake.delete_tag(REPO, tag),
        }
    }

    /// A maintainer deletes the release of `tag` (drafts too).
    fn delete_release(&self, tag: &str) {
        for r in self.forge().list_releases(&repo()).unwrap() {
            if r.tag == tag {
                self.forge().delete_release(&repo(), r.id).unwrap();
            }
        }
    }

    /// A maintainer merges a pull request.
    fn merge(&self, number: u64) {
        match self {
            World::Local { forge, .. } => {
                forge.merge_pull(&repo(), number).unwrap();
            }
            World::Github { fake, .. } => {
                fake.merge_pull(REPO, number);
            }
        }
    }

    /// A human commits `path` on `branch` (as someone other than the bot).
    fn human_commit(&self, branch: &str, path: &str, bytes: &[u8], message: &str) {
        match self {
            World::Local { human, .. } => {
                let head = human.branch_head(&repo(), branch).unwrap().unwrap();
                let changes = FileChanges::from([(path.to_string(), Some(bytes.to_vec()))]);
                human
                    .commit(&repo(), branch, &head, Some(&head), &changes, message)
                    .unwrap();
            }
            World::Github { fake, .. } => {
                fake.push_commit(
                    REPO,
                    branch,
                    &[(path, Some(bytes))],
                    message,
                    ("A Maintainer", "maintainer@example.com"),
                );
            }
        }
    }

    fn file(&self, branch: &str, path: &str) -> Option<Vec<u8>> {
        let f = self.forge();
        let head = f.branch_head(&repo(), branch).unwrap()?;
        f.read_file(&repo(), &head, path).unwrap()
    }

    fn published(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .forge()
            .list_releases(&repo())
            .unwrap()
            .into_iter()
            .filter(|r| !r.draft)
            .map(|r| r.tag)
            .collect();
        v.sort();
        v
    }
}

fn github_forge(fake: &FakeGithub) -> stackbot::forge::github::GithubForge {
    let cfg = GithubForgeConfig {
        api_url: fake.api_url(),
        upload_url: Some(fake.upload_url()),
        token_env: "STACKBOT_TEST_GITHUB_TOKEN".into(),
        ..GithubForgeConfig::default()
    };
    stackbot::forge::github::GithubForge::new(
        &cfg,
        Some(TOKEN.into()),
        std::sync::Arc::new(stackbot::clock::SystemClock),
    )
    .unwrap()
    .with_committer(&Committer {
        name: "stackbot".into(),
        email: BOT.into(),
    })
    .with_retry_policy(stackbot::forge::github::RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(2),
        max_delay: Duration::from_millis(20),
        max_rate_limit_wait: Duration::from_secs(5),
    })
}

fn pull_mode() -> stackbot::pipeline::release::Target {
    let mut t = target();
    t.settings.mode = Mode::PullRequest;
    t
}

fn run_with(
    f: &dyn Forge,
    t: &stackbot::pipeline::release::Target,
    d: &[Desired],
    o: &Overrides,
) -> Result<(Plan, Outcome), stackbot::pipeline::Error> {
    let (p, observed) = stackbot::pipeline::release::plan_desired_with(f, t, d, o, &packager)?;
    let out = stackbot::apply::apply(&p, f, &t.repo, &observed)?;
    Ok((p, out))
}

fn run(w: &World, d: &[Desired]) -> (Plan, Outcome) {
    run_with(w.forge(), &target(), d, &Overrides::default())
        .unwrap_or_else(|e| panic!("{}: {e}", w.name()))
}

const V34_2: &str = "openstack-scs2-1-34-v2";

/// v1 of both minors, then v2 of 1.34 (Kubernetes v1.34.8).
fn two_releases_of_1_34(w: &World) -> Vec<Desired> {
    run(w, &two_minors());
    let next = vec![desired("v1.33.10", "2.33.1"), desired("v1.34.8", "2.34.2")];
    let (_, out) = run(w, &next);
    assert_eq!(out.released, [V34_2], "{}", w.name());
    next
}

#[test]
fn a_withdrawn_release_number_is_never_issued_again() {
    for w in World::all() {
        let next = two_releases_of_1_34(&w);
        let lock = Lock::parse(
            &String::from_utf8(w.file("main", "stackbot.lock").unwrap()).unwrap(),
            Path::new("stackbot.lock"),
        )
        .unwrap();
        assert_eq!(
            lock.released_as(&next[1].stack, next[1].minor),
            Some(2),
            "{}: the release commit records the number in the lock",
            w.name()
        );
        // A maintainer withdraws v2: release and tag deleted.
        w.delete_release(V34_2);
        w.delete_tag(V34_2);
        let (p, out) = run(&w, &next);
        assert!(out.released.is_empty(), "{}: {:?}", w.name(), out.released);
        let why = p
            .skipped
            .iter()
            .find(|s| s.what.to_string() == "openstack-scs2-1-34")
            .unwrap_or_else(|| panic!("{}: {:?}", w.name(), p.skipped));
        assert!(
            why.reason
                == stackbot::plan::SkipReason::Withdrawn {
                    tag: "openstack-scs2-1-34-v2".into()
                }
                && why
                    .reason
                    .to_string()
                    .contains("--republish openstack-scs2-1-34-v2"),
            "{}: {}",
            w.name(),
            why.reason
        );
        // New content gets a new number: v3, never v2 again.
        let (_, out) = run(
            &w,
            &[desired("v1.33.10", "2.33.1"), desired("v1.34.9", "2.34.2")],
        );
        assert_eq!(out.released, ["openstack-scs2-1-34-v3"], "{}", w.name());
        assert!(!w.published().contains(&V34_2.to_string()));
    }
}

#[test]
fn a_release_deleted_with_its_tag_kept_is_not_published_again_unless_asked() {
    for w in World::all() {
        let next = two_releases_of_1_34(&w);
        w.delete_release(V34_2);
        let (p, out) = run(&w, &next);
        assert!(out.released.is_empty(), "{}: {:?}", w.name(), out);
        assert!(
            p.skipped.iter().any(|s| s.reason
                == stackbot::plan::SkipReason::Withdrawn {
                    tag: "openstack-scs2-1-34-v2".into()
                }),
            "{}: {:?}",
            w.name(),
            p.skipped
        );
        // Nothing to do, hour after hour.
        let (p, out) = run(&w, &next);
        assert!(p.is_noop() && out.actions.is_empty(), "{}", w.name());
        // A maintainer asks for it: the same content, under a new number.
        let republish = Overrides {
            republish: vec![V34_2.into()],
            ..Overrides::default()
        };
        let (_, out) = run_with(w.forge(), &target(), &next, &republish).unwrap();
        assert_eq!(out.released, ["openstack-scs2-1-34-v3"], "{}", w.name());
    }
}

#[test]
fn a_series_never_moves_backwards_unless_a_downgrade_is_asked_for() {
    for w in World::all() {
        run(&w, &[desired("v1.34.8", "2.34.2")]);
        // Upstream flickers: the newest complete set is the previous patch, or an older chart.
        for older in [desired("v1.34.7", "2.34.2"), desired("v1.34.8", "2.34.1")] {
            let (p, out) = run(&w, std::slice::from_ref(&older));
            assert!(out.released.is_empty(), "{}: {:?}", w.name(), out.released);
            assert_eq!(p.degraded.len(), 1, "{}", w.name());
            let d = &p.degraded[0];
            assert_eq!(d.latest, "openstack-scs2-1-34-v1");
            assert!(
                d.regressions.iter().any(|r| r.contains("older than")),
                "{:?}",
                d.regressions
            );
        }
        let (p, _) = run(&w, &[desired("v1.34.7", "2.34.2")]);
        assert_eq!(
            p.degraded[0].regressions,
            ["Kubernetes v1.34.7 is older than v1.34.8"]
        );
        let (p, _) = run(&w, &[desired("v1.34.8", "2.34.1")]);
        assert_eq!(
            p.degraded[0].regressions,
            ["ccm (openstack-cloud-controller-manager) 2.34.1 is older than 2.34.2"]
        );
        // A deliberate downgrade.
        let allow = Overrides {
            allow_downgrade: true,
            ..Overrides::default()
        };
        let (p, out) = run_with(
            w.forge(),
            &target(),
            &[desired("v1.34.7", "2.34.2")],
            &allow,
        )
        .unwrap();
        assert_eq!(out.released, ["openstack-scs2-1-34-v2"], "{}", w.name());
        assert!(p.warnings.iter().any(|x| x.contains("--allow-downgrade")));
    }
}

#[test]
fn a_conflicted_lock_on_the_base_branch_is_an_error_never_an_empty_lock() {
    for w in World::all() {
        run(&w, &two_minors());
        let lock = w.file("main", "stackbot.lock").unwrap();
        let text = String::from_utf8(lock).unwrap();
        let conflicted = text.replacen(
            "release_sets:\n",
            "release_sets:\n<<<<<<< HEAD\n=======\n>>>>>>> stackbot/release/openstack-scs2-1-34\n",
            1,
        );
        w.human_commit("main", "stackbot.lock", conflicted.as_bytes(), "merge");
        let err = run_with(
            w.forge(),
            &target(),
            &[desired("v1.33.10", "2.33.1"), desired("v1.34.8", "2.34.2")],
            &Overrides::default(),
        )
        .unwrap_err();
        assert_eq!(err.class(), Class::Input, "{}: exit 2: {err}", w.name());
        let msg = err.to_string();
        assert!(
            msg.contains("stackbot.lock:") && msg.contains("merge conflict"),
            "{}: {msg}",
            w.name()
        );
        assert_eq!(
            w.file("main", "stackbot.lock").unwrap(),
            conflicted.as_bytes(),
            "{}: the lock is left for a human",
            w.name()
        );
        assert_eq!(w.published().len(), 2);
    }
}

#[test]
fn a_tag_with_the_largest_number_is_refused_without_walking_or_overflowing() {
    for w in World::all() {
        let huge = format!("openstack-scs2-1-34-v{}", u64::MAX);
        w.forge()
            .create_draft_release(&repo(), &huge, &huge, "by hand")
            .unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let name = w.name();
        std::thread::scope(|s| {
            s.spawn(|| {
                let (r, _, total) = w.counted(|f| {
                    run_with(f, &target(), &two_minors(), &Overrides::default()).map(|_| ())
                });
                let _ = tx.send((r, total));
            });
            let (r, requests) = rx
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|_| panic!("{name}: the run walked the numbers"));
            let err = r.unwrap_err();
            assert_eq!(err.class(), Class::Input, "{name}: {err}");
            assert!(
                err.to_string().contains("no release number follows"),
                "{err}"
            );
            assert!(requests < 40, "{name}: {requests} requests");
        });
    }
}

#[test]
fn one_stuck_release_branch_does_not_stop_the_other_series() {
    for w in World::all() {
        let t = pull_mode();
        let o = Overrides::default();
        let (_, out) = run_with(w.forge(), &t, &two_minors(), &o).unwrap();
        assert_eq!(out.pull_requests.len(), 2, "{}", w.name());
        // A human pushes to the 1.33 branch, with a message that looks like the bot's: it is
        // recognised by its author.
        w.human_commit(
            "stackbot/release/openstack-scs2-1-33",
            "providers/openstack/scs2/1-33/NOTES.md",
            b"looked at it\n",
            "Release openstack-scs2-1-33-v1",
        );
        let next = vec![desired("v1.33.11", "2.33.1"), desired("v1.34.8", "2.34.2")];
        let (p, out) = run_with(w.forge(), &t, &next, &o).unwrap();
        assert_eq!(p.failed.len(), 1, "{}: {:?}", w.name(), p.failed);
        assert_eq!(p.failed[0].what.to_string(), "openstack-scs2-1-33");
        assert!(
            p.failed[0]
                .reason
                .to_string()
                .contains("commits not made by stackbot"),
            "{}",
            p.failed[0].reason
        );
        // The 1.34 pull request moved on.
        assert_eq!(out.pull_requests.len(), 1, "{}: {out:?}", w.name());
        let lock34 = w
            .file("stackbot/release/openstack-scs2-1-34", "stackbot.lock")
            .unwrap();
        assert!(String::from_utf8(lock34).unwrap().contains("v1.34.8"));
        // The human's branch is untouched.
        assert!(
            w.file(
                "stackbot/release/openstack-scs2-1-33",
                "providers/openstack/scs2/1-33/NOTES.md"
            )
            .is_some()
        );
    }
}

#[test]
fn each_release_pull_request_carries_only_its_own_lock_change() {
    for w in World::all() {
        let (_, out) = run_with(
            w.forge(),
            &pull_mode(),
            &two_minors(),
            &Overrides::default(),
        )
        .unwrap();
        assert_eq!(out.pull_requests.len(), 2);
        for (branch, own, other) in [
            (
                "stackbot/release/openstack-scs2-1-33",
                "v1.33.10",
                "v1.34.7",
            ),
            (
                "stackbot/release/openstack-scs2-1-34",
                "v1.34.7",
                "v1.33.10",
            ),
        ] {
            let lock = String::from_utf8(w.file(branch, "stackbot.lock").unwrap()).unwrap();
            assert!(
                lock.contains(own) && !lock.contains(other),
                "{}: {branch}:\n{lock}",
                w.name()
            );
        }
    }
}

#[test]
fn a_declined_release_pull_request_is_not_reopened_for_the_same_content() {
    for w in World::all() {
        let t = pull_mode();
        let o = Overrides::default();
        let d = vec![desired("v1.34.7", "2.34.2")];
        run_with(w.forge(), &t, &d, &o).unwrap();
        let branch = "stackbot/release/openstack-scs2-1-34";
        let pulls = w.forge().find_pulls(&repo(), branch).unwrap();
        w.forge().close_pull(&repo(), pulls[0].number).unwrap();
        let (r, writes, _) = w.counted(|f| run_with(f, &t, &d, &o).unwrap());
        let (p, out) = r;
        assert!(out.pull_requests.is_empty(), "{}: {out:?}", w.name());
        assert_eq!(writes, 0, "{}", w.name());
        assert!(
            p.skipped
                .iter()
                .any(|s| matches!(s.reason, stackbot::plan::SkipReason::Declined { .. })),
            "{}: {:?}",
            w.name(),
            p.skipped
        );
        // A newer content opens a new pull request.
        let (_, out) = run_with(w.forge(), &t, &[desired("v1.34.8", "2.34.2")], &o).unwrap();
        assert_eq!(out.pull_requests.len(), 1, "{}", w.name());
        let pulls = w.forge().find_pulls(&repo(), branch).unwrap();
        assert_eq!(
            pulls.iter().filter(|p| p.state == PullState::Open).count(),
            1
        );
        assert_eq!(
            pulls.len(),
            2,
            "{}: a new one, not the declined one",
            w.name()
        );
    }
}

#[test]
fn a_merged_release_is_published_once_and_its_withdrawal_is_honoured() {
    for w in World::all() {
        let t = pull_mode();
        let o = Overrides::default();
        let d = vec![desired("v1.34.7", "2.34.2")];
        run_with(w.forge(), &t, &d, &o).unwrap();
        let branch = "stackbot/release/openstack-scs2-1-34";
        let number = w.forge().find_pulls(&repo(), branch).unwrap()[0].number;
        w.merge(number);
        let (_, out) = run_with(w.forge(), &t, &d, &o).unwrap();
        assert_eq!(out.released, ["openstack-scs2-1-34-v1"], "{}", w.name());
        let comments = w.forge().list_comments(&repo(), number).unwrap();
        assert!(
            comments.iter().any(|c| c
                .body
                .contains("Publishing this as `openstack-scs2-1-34-v1`")),
            "{}: {comments:?}",
            w.name()
        );
        // Withdrawn by a maintainer: never published again.
        w.delete_release("openstack-scs2-1-34-v1");
        w.delete_tag("openstack-scs2-1-34-v1");
        let (p, out) = run_with(w.forge(), &t, &d, &o).unwrap();
        assert!(out.released.is_empty(), "{}: {out:?}", w.name());
        assert!(out.pull_requests.is_empty(), "{}: {out:?}", w.name());
        assert!(
            p.skipped
                .iter()
                .any(|s| matches!(s.reason, stackbot::plan::SkipReason::Withdrawn { .. })),
            "{}: {:?}",
            w.name(),
            p.skipped
        );
    }
}

#[test]
fn an_archived_repository_or_a_protected_branch_is_named_not_blamed_on_the_token() {
    for (setup, words) in [
        (
            (|f: &FakeGithub| f.archive_repo(REPO)) as fn(&FakeGithub),
            "archived",
        ),
        (
            |f: &FakeGithub| {
                f.protect_branch(
                    REPO,
                    "main",
                    support::fake_github::humans::Protection::Classic,
                )
            },
            "protected",
        ),
    ] {
        let w = World::github();
        let World::Github { fake, .. } = &w else {
            unreachable!()
        };
        setup(fake);
        let err = run_with(w.forge(), &target(), &two_minors(), &Overrides::default()).unwrap_err();
        let msg = format!("{err}");
        assert!(msg.contains(words), "{msg}");
        assert!(!msg.contains("authentication failed"), "{msg}");
        assert_eq!(err.class(), Class::Transient, "{msg}");
    }
}

#[test]
fn pull_request_mode_a_crash_at_any_write_after_the_merge_is_finished_by_the_next_run() {
    let t = pull_mode();
    let o = Overrides::default();
    let d = two_minors();
    const TAGS: [&str; 2] = ["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"];
    // Up to the merge of the 1.34 release pull request; its number.
    let merged = |w: &World| -> u64 {
        run_with(w.forge(), &t, &d, &o).unwrap();
        let number = w
            .forge()
            .find_pulls(&repo(), "stackbot/release/openstack-scs2-1-34")
            .unwrap()[0]
            .number;
        w.merge(number);
        number
    };
    for make in [World::local as fn() -> World, World::github] {
        let clean = make();
        let number = merged(&clean);
        let (_, writes) = clean.faulty(u64::MAX, FaultMode::Before, |f| {
            run_with(f, &t, &d, &o).unwrap()
        });
        let want = clean.state(&TAGS, number);
        assert!(want.contains("Publishing this as"), "{want}");
        assert!(writes >= 8, "{}: {writes} writes", clean.name());
        for mode in [FaultMode::Before, FaultMode::After] {
            for k in 1..=writes {
                let w = make();
                let number = merged(&w);
                let (r, _) = w.faulty(k, mode, |f| run_with(f, &t, &d, &o).map(|_| ()));
                assert!(r.is_err(), "{}: write {k} {mode:?} must fail", w.name());
                run_with(w.forge(), &t, &d, &o)
                    .unwrap_or_else(|e| panic!("{}: resume after {k} {mode:?}: {e}", w.name()));
                assert_eq!(
                    w.state(&TAGS, number),
                    want,
                    "{}: after a crash at write {k} ({mode:?})",
                    w.name()
                );
                let (_, writes, _) = w.counted(|f| run_with(f, &t, &d, &o).unwrap());
                assert_eq!(writes, 0, "{}: k={k} {mode:?}", w.name());
            }
        }
        eprintln!(
            "pull-request mode after the merge, {}: {} of {} interruption points recover",
            clean.name(),
            2 * writes,
            2 * writes
        );
    }
}

#[test]
fn a_release_that_cannot_be_finished_is_reported_and_the_run_goes_on() {
    for w in World::all() {
        let t = target();
        let (p, observed) =
            stackbot::pipeline::release::plan_desired(w.forge(), &t, &two_minors(), &packager)
                .unwrap();
        // Between planning and applying, someone tags 1.33's v1 on another commit.
        let head = w.forge().branch_head(&repo(), "main").unwrap().unwrap();
        w.forge()
            .create_tag(&repo(), "openstack-scs2-1-33-v1", &head, "by hand")
            .unwrap();
        let out = stackbot::apply::apply(&p, w.forge(), &repo(), &observed)
            .unwrap_or_else(|e| panic!("{}: {e}", w.name()));
        assert_eq!(out.failed.len(), 2, "{}: {:?}", w.name(), out.failed);
        assert_eq!(out.failed[0].what.to_string(), "openstack-scs2-1-33-v1");
        assert!(
            out.failed[0]
                .reason
                .to_string()
                .contains("already points at"),
            "{:?}",
            out.failed
        );
        // 1.34's commit was planned on top of 1.33's: left to the next run.
        assert_eq!(out.failed[1].what.to_string(), "openstack-scs2-1-34-v1");
        assert_eq!(
            out.failed[1].reason,
            stackbot::plan::SkipReason::NotAttempted
        );
        // The next run releases both, 1.33 above the foreign tag.
        let (_, out) = run(&w, &two_minors());
        assert_eq!(
            out.released,
            ["openstack-scs2-1-33-v2", "openstack-scs2-1-34-v1"],
            "{}",
            w.name()
        );
    }
}
