//! `stackbot status` and the dashboard issue on the README demo (local forge, bundled upstream
//! snapshot): the report as golden files, a deadline crossing between two runs, a run that
//! changes nothing writing nothing, and tenants behind by a patch or by a minor told apart.
//!
//! Regenerate the golden files with `STACKBOT_BLESS=1 cargo test --test integration status::`.

use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use stackbot::clock::ManualClock;
use stackbot::config::Loaded;
use stackbot::env::Env;
use stackbot::forge::counting::Counting;
use stackbot::forge::local::LocalForge;
use stackbot::forge::{Forge, IssueInfo, RepoRef};
use stackbot::pipeline::dashboard::Dashboard;
use stackbot::pipeline::{Context, Selection};
use stackbot::status::{Status, TenantState};

use crate::support::copy_dir;
use crate::support::release;

use crate::support::root;

/// A copy of the README demo (config, tenant seeds, upstream snapshot, templates).
struct Demo {
    dir: tempfile::TempDir,
    loaded: Loaded,
}

impl Demo {
    fn new() -> Demo {
        Demo::edited(|_| {})
    }

    /// The demo with its files edited before the forge is created.
    fn edited(edit: impl FnOnce(&Path)) -> Demo {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(
            &root().join("examples/local"),
            &dir.path().join("examples/local"),
        );
        copy_dir(&root().join("templates"), &dir.path().join("templates"));
        edit(dir.path());
        let loaded =
            stackbot::config::load(&dir.path().join("examples/local/stackbot.yaml")).unwrap();
        Demo { dir, loaded }
    }

    fn at(&self, when: &str) -> (Context, Arc<ManualClock>) {
        let now: DateTime<Utc> = when.parse().unwrap();
        let clock = ManualClock::shared(now);
        let ctx = Context::new(
            self.loaded.clone(),
            now.date_naive(),
            Env::default(),
            clock.clone(),
        );
        (ctx, clock)
    }

    fn forge(&self, ctx: &Context) -> LocalForge {
        LocalForge::from_config(&self.loaded, ctx.clock.clone()).unwrap()
    }

    fn release(&self, when: &str) -> stackbot::pipeline::release::Released {
        let (ctx, _) = self.at(when);
        stackbot::pipeline::release::release(&ctx, &self.forge(&ctx), &Selection::default())
            .unwrap()
    }

    fn status(&self, when: &str) -> Status {
        let (ctx, _) = self.at(when);
        stackbot::pipeline::status::status(&ctx, &self.forge(&ctx), &Selection::default()).unwrap()
    }

    /// `stackbot -c examples/local/stackbot.yaml --now DAY ARGS…` in the demo, as on a laptop
    /// (no token; the local forge is refused under GitHub Actions): exit code, stdout, stderr.
    fn cli(&self, day: &str, args: &[&str]) -> (Option<i32>, String, String) {
        demo_cli(self.dir.path(), day, args)
    }

    fn issues(&self) -> Vec<IssueInfo> {
        let (ctx, _) = self.at("2026-05-01T00:00:00Z");
        self.forge(&ctx).list_issues(&repo(), None).unwrap()
    }

    /// Text with the temporary directory replaced, so golden files do not depend on it.
    fn portable(&self, text: &str) -> String {
        let forge = std::fs::canonicalize(self.dir.path()).unwrap();
        text.replace(forge.to_str().unwrap(), "$DEMO")
            .replace(self.dir.path().to_str().unwrap(), "$DEMO")
    }
}

fn repo() -> RepoRef {
    RepoRef::parse("scs/cluster-stacks").unwrap()
}

fn day(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

fn golden(name: &str, actual: &str) {
    let path = root().join("tests/fixtures/status").join(name);
    if std::env::var_os("STACKBOT_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        want == actual,
        "{} differs from the status computed now; if the change is intended, regenerate it \
         with STACKBOT_BLESS=1 cargo test --test integration status::\n--- actual ---\n{actual}",
        path.display()
    );
}

#[test]
fn status_on_the_readme_demo_matches_the_golden_files() {
    let demo = Demo::new();
    // Before anything is released, every tenant repository is still to be created.
    let before = demo.status("2026-05-01T00:00:00Z");
    assert!(
        before.tenants.iter().all(|t| t.state == TenantState::Error),
        "{:?}",
        before.tenants
    );
    // `release`, step by step, with one tenant at a time so pull request numbers do not
    // depend on thread scheduling.
    let (ctx, _) = demo.at("2026-05-01T00:00:00Z");
    let forge = demo.forge(&ctx);
    let sel = Selection::default();
    let t = stackbot::pipeline::release::target(&ctx).unwrap();
    forge.ensure_repo(&t.repo, &t.base_branch).unwrap();
    let planned = stackbot::pipeline::release::plan(&ctx, &forge, &sel).unwrap();
    let outcome = stackbot::apply::apply(
        &planned.plan,
        &forge,
        &planned.target.repo,
        &planned.observed,
    )
    .unwrap();
    assert_eq!(
        outcome.released,
        ["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"]
    );
    let one_at_a_time = stackbot::tenants::Options {
        concurrency: 1,
        ..Default::default()
    };
    stackbot::pipeline::tenants::run(&ctx, &forge, &one_at_a_time).unwrap();
    let d = stackbot::pipeline::dashboard::dashboard_after_release(
        &stackbot::pipeline::run::Run::new(&ctx, &forge).unwrap(),
        planned.detected.as_ref(),
        &Default::default(),
    );
    assert!(matches!(d, Some(Dashboard::Created { .. })), "{d:?}");
    // acme merges its pull request two days later.
    let (ctx, _) = demo.at("2026-05-03T09:30:00Z");
    let forge = demo.forge(&ctx);
    let acme = RepoRef::parse("acme/gitops").unwrap();
    let pr = forge.find_pulls(&acme, "stackbot/openstack-scs2").unwrap()[0].number;
    forge.merge_pull(&acme, pr).unwrap();

    let s = demo.status("2026-05-04T00:00:00Z");
    golden(
        "demo.json",
        &demo.portable(&stackbot::report::status::json(&s)),
    );
    golden(
        "demo.md",
        &demo.portable(&stackbot::report::status::markdown(&s)),
    );
    golden(
        "demo.txt",
        &demo.portable(&stackbot::report::status::text(&s)),
    );

    // What the golden files say, as a specification.
    let row = |m: &str| s.stacks.iter().find(|r| r.minor.to_string() == m).unwrap();
    assert!(
        !s.compliant,
        "1.35 was never offered within its minor window"
    );
    assert!(row("1.35").overdue && row("1.35").due == Some(day("2026-04-16")));
    assert_eq!(row("1.34").state, stackbot::status::StackState::Current);
    // The released v1.33.10 is affected by the critical CVE-2026-0001, fixed by v1.33.11
    // (GA 2026-04-15), whose node image is not out: 14 days, overdue on 2026-05-04.
    assert_eq!(
        row("1.33").due,
        Some(day("2026-04-29")),
        "v1.33.11 + 14 days (critical CVE)"
    );
    assert!(row("1.33").overdue);
    assert_eq!(
        row("1.33").scs0210.verdict,
        stackbot::compliance::Verdict::Fail
    );
    assert_eq!(row("1.33").cves[0].id, "CVE-2026-0001");
    assert_eq!(
        row("1.34").scs0210.verdict,
        stackbot::compliance::Verdict::Pass
    );
    assert!(
        row("1.33").waiting_for[0]
            .urgency
            .as_deref()
            .is_some_and(|u| u.starts_with("critical CVE: 5 days overdue")),
        "{:?}",
        row("1.33").waiting_for
    );
    let tenant = |n: &str| s.tenants.iter().find(|t| t.tenant == n).unwrap();
    assert_eq!(tenant("acme").state, TenantState::Current);
    assert_eq!(tenant("acme").releases, ["openstack-scs2-1-34-v1"]);
    assert_eq!(tenant("globex").state, TenantState::PullRequestOpen);
    assert_eq!(tenant("globex").pull.as_ref().unwrap().age_days, Some(3));
    let merged = s
        .timeline
        .iter()
        .find(|e| e.kubernetes.to_string() == "v1.34.7")
        .unwrap();
    assert_eq!(merged.released_at, Some(day("2026-05-01")));
    assert_eq!(merged.first_tenant_merge_at, Some(day("2026-05-03")));
    assert_eq!(merged.first_tenant.as_deref(), Some("acme"));
    let md = stackbot::report::status::markdown(&s);
    assert!(md.contains("```mermaid\ngantt\n"), "{md}");

    // The dashboard lives with the other forge records: one issue, the marker in its body.
    let issues = demo.issues();
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert!(
        issues[0]
            .body
            .starts_with(stackbot::status::dashboard::MARKER)
    );
    assert!(
        demo.dir
            .path()
            .join(".stackbot/forge/issues/scs/cluster-stacks")
            .is_dir()
    );
}

#[test]
fn a_deadline_crossing_between_two_runs_flips_overdue_and_edits_the_dashboard_once() {
    let demo = Demo::new();
    demo.release("2026-04-29T06:00:00Z");
    let row = |s: &Status| {
        s.stacks
            .iter()
            .find(|r| r.minor.to_string() == "1.33")
            .unwrap()
            .clone()
    };
    // The released v1.33.10 is affected by the critical CVE-2026-0001 that v1.33.11 (GA
    // 2026-04-15) fixes: 14 days, so 2026-04-29 is the last day.
    let last_day = row(&demo.status("2026-04-29T06:00:00Z"));
    assert_eq!((last_day.days_left, last_day.overdue), (Some(0), false));
    let next_day = row(&demo.status("2026-04-30T06:00:00Z"));
    assert_eq!((next_day.days_left, next_day.overdue), (Some(-1), true));
    assert_eq!(
        next_day.due_window,
        Some(stackbot::status::Window::CriticalCve)
    );
    assert_eq!(
        next_day.scs0210.verdict,
        stackbot::compliance::Verdict::Fail
    );

    // The hourly run of the next day notices and edits the one dashboard in place.
    let (ctx, _) = demo.at("2026-04-30T06:00:00Z");
    let counted = Counting::new(demo.forge(&ctx));
    let r = stackbot::pipeline::release::release(&ctx, &counted, &Selection::default()).unwrap();
    assert!(
        matches!(r.dashboard, Some(Dashboard::Updated { .. })),
        "{:?}",
        r.dashboard
    );
    let m = counted.by_method();
    assert_eq!(m.get("update_issue"), Some(&1), "{m:?}");
    assert_eq!(m.get("create_issue"), None, "{m:?}");
    let issues = demo.issues();
    assert_eq!(issues.len(), 1);
    assert!(
        issues[0].body.contains("1 day overdue"),
        "{}",
        issues[0].body
    );
}

#[test]
fn a_run_that_changes_nothing_writes_nothing_to_the_dashboard() {
    let demo = Demo::new();
    demo.release("2026-05-01T06:00:00Z");
    // An hour later (another "last change" time, another run): nothing differs but the
    // footer, so nothing is written: not the releases, not the tenants, not the dashboard.
    let (ctx, _) = demo.at("2026-05-01T07:00:00Z");
    let counted = Counting::new(demo.forge(&ctx));
    let r = stackbot::pipeline::release::release(&ctx, &counted, &Selection::default()).unwrap();
    assert!(
        matches!(r.dashboard, Some(Dashboard::Unchanged { .. })),
        "{:?}",
        r.dashboard
    );
    assert_eq!(counted.writes(), 0, "{:?}", counted.by_method());
    eprintln!(
        "demo no-op release with the dashboard: {} forge requests, 0 writes ({:?})",
        counted.total(),
        counted.by_method()
    );
    assert_eq!(
        counted.by_method().get("list_issues"),
        Some(&1),
        "the label finds the dashboard in one request"
    );
    assert_eq!(
        counted.by_method().get("list_files"),
        Some(&2),
        "the dashboard reuses what the run read of the two tenants it left unchanged"
    );
    assert_eq!(demo.issues().len(), 1);
}

#[test]
fn a_crash_right_after_creating_the_dashboard_never_leads_to_a_second_one() {
    use stackbot::forge::faulty::{FaultMode, Faulty};
    let demo = Demo::new();
    let (ctx, _) = demo.at("2026-05-01T06:00:00Z");
    let s =
        stackbot::pipeline::status::status(&ctx, &demo.forge(&ctx), &Selection::default()).unwrap();
    // The issue is created, then the process dies before it hears back.
    let dying = Faulty::new(demo.forge(&ctx), 1, FaultMode::After);
    assert!(stackbot::pipeline::dashboard::update_dashboard(&ctx, &dying, &s).is_err());
    assert_eq!(dying.performed(), ["create_issue"]);
    let again = stackbot::pipeline::dashboard::update_dashboard(&ctx, &demo.forge(&ctx), &s)
        .unwrap()
        .unwrap();
    assert!(matches!(again, Dashboard::Unchanged { .. }), "{again:?}");
    assert_eq!(demo.issues().len(), 1);
}

#[test]
fn plans_and_dry_runs_never_touch_the_dashboard() {
    let demo = Demo::new();
    let (ctx, _) = demo.at("2026-05-01T06:00:00Z");
    let counted = Counting::new(demo.forge(&ctx));
    stackbot::pipeline::release::preview(&ctx, &counted, &Selection::default()).unwrap();
    let m = counted.by_method();
    assert_eq!(m.get("list_issues"), None, "{m:?}");
    assert_eq!(counted.writes(), 0);
    assert!(demo.issues().is_empty());
}

#[test]
fn the_dashboard_can_be_turned_off() {
    let demo = Demo::edited(|dir| {
        let path = dir.join("examples/local/stackbot.yaml");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, format!("{text}\ndashboard:\n  enabled: false\n")).unwrap();
    });
    let (ctx, _) = demo.at("2026-05-01T06:00:00Z");
    let counted = Counting::new(demo.forge(&ctx));
    let r = stackbot::pipeline::release::release(&ctx, &counted, &Selection::default()).unwrap();
    assert_eq!(r.dashboard, None);
    assert_eq!(counted.by_method().get("list_issues"), None);
    assert!(demo.issues().is_empty());
}

#[test]
fn tenants_behind_by_one_patch_and_by_a_minor_are_told_apart_on_the_forge() {
    // acme lists 1.34 v1 (Kubernetes v1.34.6) while v2 ships v1.34.7; globex lists the newest
    // 1.33 release while 1.34 exists.
    let demo = Demo::edited(|dir| {
        let t = dir.join("examples/local/tenants");
        for (file, from) in [
            ("acme/clusters/clusterstack.yaml", "versions: []"),
            ("globex/clusterstacks/prod/scs2.yaml", "versions: []"),
        ] {
            let p = t.join(file);
            let text = std::fs::read_to_string(&p).unwrap();
            std::fs::write(&p, text.replace(from, "versions: [v1]")).unwrap();
        }
    });
    let (ctx, _) = demo.at("2026-05-01T06:00:00Z");
    let forge = demo.forge(&ctx);
    let target = stackbot::pipeline::release::target(&ctx).unwrap();
    forge.ensure_repo(&target.repo, "main").unwrap();
    for desired in [
        vec![
            release::desired("v1.33.10", "2.33.1"),
            release::desired("v1.34.6", "2.34.1"),
        ],
        vec![release::desired("v1.34.7", "2.34.2")],
    ] {
        stackbot::pipeline::release::release_desired(&forge, &target, &desired, &release::packager)
            .unwrap();
    }
    for t in &ctx.loaded.config.tenants {
        forge
            .ensure_repo(&RepoRef::parse(&t.repository).unwrap(), "main")
            .unwrap();
    }
    let s = stackbot::pipeline::status::status(&ctx, &forge, &Selection::default()).unwrap();
    let tenant = |n: &str| s.tenants.iter().find(|t| t.tenant == n).unwrap();
    let (acme, globex) = (tenant("acme"), tenant("globex"));
    assert_eq!(
        (acme.behind.patches, acme.behind.minors),
        (1, 0),
        "{acme:?}"
    );
    assert_eq!(
        (globex.behind.patches, globex.behind.minors),
        (0, 1),
        "{globex:?}"
    );
    assert_eq!(acme.behind.words(), "1 patch");
    assert_eq!(globex.behind.words(), "1 minor");
    assert_eq!(acme.minors[0].kubernetes.unwrap().to_string(), "v1.34.6");
    assert_eq!(
        acme.minors[0].latest.as_deref(),
        Some("openstack-scs2-1-34-v2")
    );
    assert!(
        globex
            .note
            .as_ref()
            .unwrap()
            .contains("policy.minor: ignore")
    );
}

#[test]
fn the_cli_prints_the_status_in_every_format_without_a_token() {
    let demo = Demo::new();
    demo.release("2026-05-01T00:00:00Z");
    for format in ["text", "json", "markdown"] {
        let (code, stdout, stderr) = demo.cli("2026-05-02", &["status", "--format", format]);
        assert_eq!(code, Some(0), "{format}: {stderr}");
        match format {
            "json" => {
                let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
                for key in [
                    "as_of",
                    "compliant",
                    "summary",
                    "stacks",
                    "tenants",
                    "timeline",
                ] {
                    assert!(!v[key].is_null(), "status JSON lacks `{key}`");
                }
                let row = &v["stacks"][0];
                for key in [
                    "overdue",
                    "due",
                    "waiting_for",
                    "latest_release",
                    "upstream",
                ] {
                    assert!(row.get(key).is_some(), "stacks[] lacks `{key}`: {row}");
                }
                assert!(v["tenants"][0]["behind"]["patches"].is_u64());
            }
            "markdown" => assert!(stdout.contains("```mermaid"), "{stdout}"),
            _ => assert!(
                stdout.starts_with("SCS 0210 status as of 2026-05-02"),
                "{stdout}"
            ),
        }
    }
}

/// The demo's loop as docs/quickstart.md plays it: release, `forge merge` a tenant pull
/// request as a person would, and `status` shows the tenant current; a merged pull request
/// cannot be merged twice (exit 2).
#[test]
fn merging_a_demo_pull_request_with_the_forge_command_shows_in_the_status() {
    let demo = Demo::new();
    demo.release("2026-05-01T00:00:00Z");
    let run = |args: &[&str]| demo.cli("2026-05-02", args);
    let acme = |json: &str| -> serde_json::Value {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        v["tenants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["tenant"] == "acme")
            .unwrap()
            .clone()
    };
    let (_, before, _) = run(&["--format", "json", "status"]);
    assert_ne!(acme(&before)["state"], "current", "{before}");

    let (code, list, err) = run(&["--format", "json", "forge", "list", "acme"]);
    assert_eq!(code, Some(0), "{err}");
    let pulls: serde_json::Value = serde_json::from_str(&list).unwrap();
    assert_eq!(pulls.as_array().unwrap().len(), 1, "{list}");
    assert_eq!(pulls[0]["state"], "open");
    let number = pulls[0]["number"].as_u64().unwrap().to_string();

    let (code, out, err) = run(&["forge", "merge", "acme", &number, "--squash"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(&format!("merged pull request #{number} of acme/gitops")),
        "{out}"
    );
    let (_, after, _) = run(&["--format", "json", "status"]);
    assert_eq!(acme(&after)["state"], "current", "{after}");

    let (code, _, err) = run(&["forge", "merge", "acme", &number]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("already merged"), "{err}");
    let (code, _, err) = run(&["forge", "close", "acmee", &number]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("did you mean `acme`?"), "{err}");
}

/// One rule on one clock: `detect` and `status` give every stack × minor the same SCS 0210
/// verdict and deadline (detect reads what the local forge's base branch records).
#[test]
fn detect_and_status_agree_on_every_verdict_and_deadline() {
    let demo = Demo::new();
    demo.release("2026-05-01T06:00:00Z");
    let run = |cmd: &str| -> serde_json::Value {
        let (_, out, err) = demo.cli("2026-05-04", &["--format", "json", cmd]);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{cmd}: {e}: {err}"))
    };
    let detect = run("detect");
    let status = run("status");
    for m in ["1.33", "1.34", "1.35", "1.36"] {
        let d = detect["minors"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["minor"] == m)
            .unwrap();
        let s = status["stacks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["minor"] == m)
            .unwrap();
        assert_eq!(d["scs0210"]["verdict"], s["scs0210"]["verdict"], "{m}");
        assert_eq!(d["due"], s["due"], "{m}");
    }
    assert_eq!(status["as_of"], "2026-05-04");
    assert_eq!(status["upstream_data"]["recorded_for"], "2026-05-01");
}

/// `forge checks-pass` plays CI passing on the local forge: a tenant pull request opened with
/// auto-merge requested (`policy.patch: automerge`) is merged, as GitHub's native auto-merge
/// would; one without it stays open.
#[test]
fn checks_passing_merges_a_pull_request_with_auto_merge_on_the_local_forge() {
    let demo = Demo::edited(|dir| {
        let cfg = dir.join("examples/local/stackbot.yaml");
        let text = std::fs::read_to_string(&cfg).unwrap().replace(
            "    files: [\"clusters/*.yaml\"]\n    stacks: [openstack/scs2]\n",
            "    files: [\"clusters/*.yaml\"]\n    stacks: [openstack/scs2]\n    policy: {patch: automerge, minor: ignore}\n",
        );
        std::fs::write(cfg, text).unwrap();
    });
    demo.release("2026-05-01T00:00:00Z");
    let run = |args: &[&str]| demo.cli("2026-05-02", args);
    let number = |tenant: &str| {
        let (_, list, _) = run(&["--format", "json", "forge", "list", tenant]);
        let pulls: serde_json::Value = serde_json::from_str(&list).unwrap();
        assert_eq!(pulls[0]["state"], "open", "{list}");
        pulls[0]["number"].as_u64().unwrap().to_string()
    };
    let (acme, globex) = (number("acme"), number("globex"));

    let (code, out, err) = run(&["forge", "checks-pass", "globex", &globex]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("auto-merge is not requested, so it stays open"),
        "{out}"
    );

    let (code, out, err) = run(&["forge", "checks-pass", "acme", &acme]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("auto-merge merged it"), "{out}");
    let (_, list, _) = run(&["--format", "json", "forge", "list", "acme"]);
    let pulls: serde_json::Value = serde_json::from_str(&list).unwrap();
    assert_eq!(pulls[0]["state"], "merged", "{list}");
}

/// `stackbot -c examples/local/stackbot.yaml --now DAY ARGS…` in a copy of the demo at `dir`,
/// as on a laptop (no token; the local forge is refused under GitHub Actions): exit code,
/// stdout, stderr. The one way the demo's CLI tests run the binary.
pub fn demo_cli(dir: &std::path::Path, day: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_stackbot"))
        .current_dir(dir)
        .args(["-c", "examples/local/stackbot.yaml", "--now", day])
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_TOKEN")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
