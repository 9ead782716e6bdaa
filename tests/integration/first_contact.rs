//! The small things a new user hit first (issue 34, item 8), each as the user met it: the
//! demo (`examples/local`), a command line, and what it printed.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use axum::http::Method;

use crate::support::fake_github::{FakeGithub, FakeOptions, Fault, Faults};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A copy of the demo in a fresh folder: its configuration, snapshot and tenants, with the
/// templates of this checkout.
fn demo(dir: &Path) -> PathBuf {
    let ex = root().join("examples/local");
    let target = dir.join("examples/local");
    std::fs::create_dir_all(&target).unwrap();
    for f in ["stackbot.yaml", "upstream-2026-05-01.json", "registry.yml"] {
        std::fs::copy(ex.join(f), target.join(f)).unwrap();
    }
    copy_dir(&ex.join("tenants"), &target.join("tenants"));
    copy_dir(&root().join("templates"), &dir.join("templates"));
    target.join("stackbot.yaml")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn stackbot(cfg: &Path, args: &[&str]) -> Output {
    Command::cargo_bin("stackbot")
        .unwrap()
        .current_dir(cfg.parent().unwrap())
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .arg("-c")
        .arg(cfg)
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn forge_list_prints_aligned_columns_as_the_quickstart_shows() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = demo(dir.path());
    assert!(stackbot(&cfg, &["release"]).status.success());
    let out = text(&stackbot(&cfg, &["forge", "list"]).stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert!(!out.contains('\t'), "{out}");
    assert!(
        lines[0].starts_with("repository       number  state  head -> base"),
        "{out}"
    );
    // Every column starts where its header does.
    let col = lines[0].find("state").unwrap();
    for l in &lines[1..] {
        assert_eq!(&l[col..col + 4], "open", "{out}");
    }
}

#[test]
fn verbose_says_what_a_no_op_run_checked() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = demo(dir.path());
    assert!(stackbot(&cfg, &["release"]).status.success());
    let again = stackbot(&cfg, &["-v", "release"]);
    let err = text(&again.stderr);
    for said in [
        "upstream: 4 stack × minor series (2 with a complete release set, 2 waiting or failing) checked against the snapshot of 2026-05-01",
        "plan: 0 releases to make; 2 series already released as rendered, 2 skipped",
        "tenants: 0 opened, 0 updated, 2 unchanged",
        "is up to date",
    ] {
        assert!(err.contains(said), "`{said}` in:\n{err}");
    }
    assert!(
        text(&stackbot(&cfg, &["release"]).stderr).is_empty(),
        "without -v, quiet"
    );
}

#[test]
fn help_puts_the_global_options_apart_from_the_command_s() {
    let out = text(&stackbot(&root().join("stackbot.yaml"), &["release", "--help"]).stdout);
    let global = out.find("Global options:").expect("a heading of its own");
    let own = out.find("--dry-run").unwrap();
    let config = out.find("--config").unwrap();
    assert!(own < global && config > global, "{out}");
}

#[test]
fn a_stack_without_its_provider_is_told_what_is_missing_and_what_was_meant() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = demo(dir.path());
    let out = stackbot(&cfg, &["plan", "--stack", "scs2"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("write it `provider/name`"), "{err}");
    assert!(err.contains("the provider is missing"), "{err}");
    assert!(
        err.contains("did you mean `--stack openstack/scs2`?"),
        "{err}"
    );
    assert!(
        !err.contains("lowercase letters"),
        "not about characters: {err}"
    );
}

#[test]
fn a_tenant_name_in_the_wrong_case_gets_a_did_you_mean() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = demo(dir.path());
    let out = stackbot(&cfg, &["tenants", "--dry-run", "--tenant", "Acme"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("(did you mean `acme`?)"),
        "{}",
        text(&out.stderr)
    );
}

/// The demo configuration with `from` replaced by `to`.
fn demo_with(dir: &Path, from: &str, to: &str) -> PathBuf {
    let cfg = demo(dir);
    let s = std::fs::read_to_string(&cfg).unwrap();
    assert!(s.contains(from), "{from}");
    std::fs::write(&cfg, s.replacen(from, to, 1)).unwrap();
    cfg
}

#[test]
fn a_plain_version_is_explained_without_a_rust_type_name() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = demo_with(dir.path(), "version: { pin: 1.18.9 }", "version: 1.18.9");
    let err = text(&stackbot(&cfg, &["validate"]).stderr);
    assert!(!err.contains("VersionRuleMap"), "{err}");
    assert!(err.contains("expected a version rule"), "{err}");
    assert!(err.contains("{ pin: \"1.18.9\" }"), "{err}");
}

#[test]
fn a_bad_pin_is_reported_at_its_own_line() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = demo_with(
        dir.path(),
        "version: { pin: 1.18.9 }",
        "version:\n          pin: x.y",
    );
    let text_cfg = std::fs::read_to_string(&cfg).unwrap();
    let line = text_cfg
        .lines()
        .position(|l| l.contains("pin: x.y"))
        .unwrap()
        + 1;
    let err = text(&stackbot(&cfg, &["validate"]).stderr);
    assert!(
        err.contains(&format!("stackbot.yaml:{line}:")),
        "line {line}: {err}"
    );
    assert!(
        err.contains("`pin: x.y` is not a valid version rule"),
        "{err}"
    );
}

#[test]
fn a_missing_templates_folder_is_said_to_be_missing() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = demo(dir.path());
    std::fs::remove_dir_all(dir.path().join("templates")).unwrap();
    let out = stackbot(&cfg, &["validate"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("does not exist"), "{err}");
    assert!(!err.contains("holds no files"), "{err}");
}

#[test]
fn a_release_that_exits_2_leaves_no_forge_behind() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = demo(dir.path());
    for args in [
        &["release", "--stack", "nope/nope"][..],
        &["release", "--minor", "1.99"][..],
    ] {
        let out = stackbot(&cfg, args);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains("nothing was changed"));
        let state = dir.path().join(".stackbot"); // forge.local.path: ../../.stackbot/forge
        assert!(!state.exists(), "{args:?} left {}", state.display());
    }
    // A forge that existed stays as it was.
    assert!(stackbot(&cfg, &["release"]).status.success());
    let out = stackbot(&cfg, &["release", "--stack", "nope/nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(dir.path().join(".stackbot/forge").is_dir());
}

#[test]
fn checks_passing_on_a_merged_pull_request_do_not_say_it_stays_open() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = demo(dir.path());
    assert!(stackbot(&cfg, &["release"]).status.success());
    let list = text(&stackbot(&cfg, &["--format", "json", "forge", "list", "acme"]).stdout);
    let pulls: serde_json::Value = serde_json::from_str(&list).unwrap();
    let n = pulls[0]["number"].as_u64().unwrap().to_string();
    assert!(
        stackbot(&cfg, &["forge", "merge", "acme", &n])
            .status
            .success()
    );
    let out = text(&stackbot(&cfg, &["forge", "checks-pass", "acme", &n]).stdout);
    assert!(!out.contains("stays open"), "{out}");
    assert!(out.contains("is already merged"), "{out}");
}

/// The demo's stacks, publishing to the fake GitHub (no tenants).
fn github_config(dir: &Path, fake: &FakeGithub) -> PathBuf {
    let ex = root().join("examples/local");
    let demo = std::fs::read_to_string(ex.join("stackbot.yaml")).unwrap();
    let start = demo.find("\nstacks:").unwrap();
    let end = demo.find("\n# The local forge").unwrap();
    let stacks = demo[start..end].replace(
        "../../templates",
        &root().join("templates").display().to_string(),
    );
    let text = format!(
        "upstream:\n  snapshot: {}\n{stacks}\nforge:\n  kind: github\n  repository: scs/cluster-stacks\n  \
         mode: direct\n  github:\n    api_url: {}\n    upload_url: {}\n",
        ex.join("upstream-2026-05-01.json").display(),
        fake.api_url(),
        fake.upload_url()
    );
    let p = dir.join("stackbot.yaml");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn ctrl_c_after_publishing_says_what_was_done_and_that_the_next_run_finishes() {
    let fake = FakeGithub::start_with(FakeOptions::default().with_token("t0ken"));
    fake.create_repo(
        "scs/cluster-stacks",
        "main",
        &[("README.md", b"# stacks\n")],
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = github_config(dir.path(), &fake);
    // The dashboard issue comes after the releases: its creation hangs, as a slow API would.
    fake.set_faults(Faults::route(
        Method::POST,
        "/repos/{owner}/{repo}/issues",
        1,
        Fault::Delay(Duration::from_secs(60)),
    ));
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_stackbot"))
        .args(["-c", cfg.to_str().unwrap(), "release"])
        .env("GITHUB_TOKEN", "t0ken")
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let published = |f: &FakeGithub| {
        f.snapshot().repos["scs/cluster-stacks"]
            .releases
            .iter()
            .filter(|r| !r.draft)
            .count()
    };
    let start = Instant::now();
    while published(&fake) < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the releases never appeared"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Stopped while it waits for the dashboard (or just before): the releases are out.
    std::thread::sleep(Duration::from_millis(1500));
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted after"), "{err}");
    for t in ["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"] {
        assert!(err.contains(&format!("{t}: published")), "{t}: {err}");
    }
    assert!(err.contains("the next run finishes the job"), "{err}");
    // And it does: the dashboard, and nothing twice.
    fake.clear_faults();
    let before = fake.snapshot().repos["scs/cluster-stacks"].releases.len();
    let again = std::process::Command::new(env!("CARGO_BIN_EXE_stackbot"))
        .args(["-c", cfg.to_str().unwrap(), "release"])
        .env("GITHUB_TOKEN", "t0ken")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", text(&again.stderr));
    let snap = fake.snapshot();
    assert_eq!(snap.repos["scs/cluster-stacks"].releases.len(), before);
    assert_eq!(
        snap.repos["scs/cluster-stacks"].issues.len(),
        1,
        "the dashboard"
    );
}

#[test]
fn the_first_release_preview_keeps_every_series_and_the_tenant_diffs_under_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    // As a workflow trying the demo would: the local forge allowed under GitHub Actions.
    let cfg = demo_with(
        dir.path(),
        "    path: ../../.stackbot/forge\n",
        "    path: ../../.stackbot/forge\n    allow_in_ci: true\n",
    );
    let summary = dir.path().join("summary.md");
    let out = Command::cargo_bin("stackbot")
        .unwrap()
        .env("NO_COLOR", "1")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_REPOSITORY", "scs/cluster-stacks")
        .env("GITHUB_RUN_ID", "34")
        .arg("-c")
        .arg(&cfg)
        .args(["plan", "--format", "markdown"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let comment = text(&out.stdout);
    assert!(comment.chars().count() <= 65_536, "{}", comment.len());
    for headline in [
        "#### openstack/scs2 1.33: 26 files",
        "#### openstack/scs2 1.34: 26 files",
        "### Tenant changes",
        "#### acme (acme/gitops): open pull request",
        "#### globex (globex/platform): open pull request",
    ] {
        assert!(comment.contains(headline), "`{headline}` was cut");
    }
    assert!(
        comment.contains("+  versions: [v1]"),
        "the tenant diffs are whole"
    );
    assert!(
        comment.contains("more lines cut"),
        "the long diffs gave way"
    );
    assert!(
        comment.contains("[job summary](https://github.com/scs/cluster-stacks/actions/runs/34)")
    );
    // The job summary holds the whole preview.
    let full = std::fs::read_to_string(&summary).unwrap();
    assert!(
        full.len() > 65_536 && !full.contains("more lines cut"),
        "{}",
        full.len()
    );

    // `release --dry-run` shows the tenant diffs too.
    let dry = text(&stackbot(&cfg, &["release", "--dry-run"]).stdout);
    let at = dry
        .find("# tenant acme (acme/gitops, stackbot/openstack-scs2): open")
        .unwrap();
    assert!(
        dry[at..].contains("+++ b/clusters/clusterstack.yaml"),
        "{dry}"
    );
    let json = text(&stackbot(&cfg, &["--format", "json", "release", "--dry-run"]).stdout);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(
        v["tenants"][0]["diff"]
            .as_str()
            .unwrap()
            .contains("+  versions: [v1]")
    );
}
