//! How failures reach people: a readable error with a next step on stderr, the documented exit
//! code, and under GitHub Actions an `::error` annotation on the offending file and line.

use crate::support::copy_dir;
use std::process::Command;

fn stackbot(dir: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_stackbot"));
    c.current_dir(dir)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_WORKSPACE")
        .env("NO_COLOR", "1");
    c
}

fn bad_config() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("stackbot.yaml"),
        "# a typo on line 3\nstacks: []\nstackz: 1\n",
    )
    .unwrap();
    dir
}

#[test]
fn a_bad_config_is_annotated_on_its_line_under_github_actions() {
    let dir = bad_config();
    let out = stackbot(dir.path())
        .args(["-c", "stackbot.yaml", "detect"])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_WORKSPACE", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "invalid input exits 2");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let annotation = stderr
        .lines()
        .find(|l| l.starts_with("::error "))
        .unwrap_or_else(|| panic!("no annotation in:\n{stderr}"));
    assert!(
        annotation.starts_with("::error file=stackbot.yaml,line=3,title=stackbot::"),
        "{annotation}"
    );
    assert!(annotation.contains("stackz"), "{annotation}");
    // The human-readable error is there too, with what to do.
    assert!(stderr.contains("error: "), "{stderr}");
    assert!(stderr.contains("hint:"), "{stderr}");
}

#[test]
fn outside_github_actions_there_are_no_workflow_commands() {
    let dir = bad_config();
    let out = stackbot(dir.path())
        .args(["-c", "stackbot.yaml", "detect"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("::error"), "{stderr}");
    assert!(stderr.contains("stackbot.yaml:3"), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}'),
        "no colour escapes off a terminal"
    );
}

#[test]
fn a_missing_config_says_how_to_pass_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = stackbot(dir.path())
        .args(["-c", "nope.yaml", "detect"])
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("-c FILE"), "{stderr}");
    assert!(
        stderr.contains("::error file=nope.yaml,title=stackbot::"),
        "{stderr}"
    );
}

#[test]
fn bad_arguments_exit_2_and_help_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let bad = stackbot(dir.path()).arg("--no-such-flag").output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let help = stackbot(dir.path()).arg("--help").output().unwrap();
    assert_eq!(help.status.code(), Some(0));
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(
        text.contains("Exit codes: 0"),
        "the exit codes are documented in --help"
    );
}

#[test]
fn completions_are_generated_for_common_shells() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let out = stackbot(dir.path())
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("release"),
            "{shell} completion knows the subcommands"
        );
    }
}

// ---- The first hour of a new user: every mistake is named, none is silently ignored ----

/// A fresh copy of the README demo (configuration, tenant seeds, templates).
fn demo() -> tempfile::TempDir {
    let root = &crate::support::root();
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(
        &root.join("examples/local"),
        &tmp.path().join("examples/local"),
    );
    copy_dir(&root.join("templates"), &tmp.path().join("templates"));
    tmp
}

const DEMO: [&str; 4] = ["-c", "examples/local/stackbot.yaml", "--now", "2026-05-01"];

/// `stackbot` on the demo: (exit code, stdout, stderr).
fn on_demo(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = stackbot(dir)
        .args(DEMO)
        .args(args)
        .env_remove("GITHUB_TOKEN")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Edit the demo's configuration in place.
fn edit_demo_config(dir: &std::path::Path, edit: impl FnOnce(String) -> String) {
    let p = dir.join("examples/local/stackbot.yaml");
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, edit(text)).unwrap();
}

#[test]
fn a_minor_no_stack_tracks_exits_2_and_lists_the_tracked_minors() {
    let dir = demo();
    for cmd in [&["plan"][..], &["release", "--dry-run"]] {
        let mut args = cmd.to_vec();
        args.extend(["--minor", "1.99"]);
        let (code, out, err) = on_demo(dir.path(), &args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(!out.contains("Nothing to release"), "{out}");
        assert!(err.contains("--minor 1.99"), "{err}");
        assert!(err.contains("1.33, 1.34, 1.35, 1.36"), "{err}");
    }
}

#[test]
fn an_unknown_stack_or_tenant_exits_2_and_names_what_exists() {
    let dir = demo();
    let (code, _, err) = on_demo(dir.path(), &["plan", "--stack", "openstack/scs9"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("configured: openstack/scs2"), "{err}");
    let (code, _, err) = on_demo(dir.path(), &["tenants", "--dry-run", "--tenant", "acmee"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("acmee"), "{err}");
    assert!(err.contains("tenants: acme, globex"), "{err}");
}

#[test]
fn republishing_a_tag_that_was_never_withdrawn_exits_2() {
    let dir = demo();
    let (code, out, err) = on_demo(
        dir.path(),
        &[
            "release",
            "--republish",
            "openstack-scs2-1-34-v9",
            "--dry-run",
        ],
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(!out.contains("Nothing to release"), "{out}");
    assert!(err.contains("--republish openstack-scs2-1-34-v9"), "{err}");
    assert!(err.contains("withdrawn: none"), "{err}");
}

#[test]
fn a_misspelt_tenant_repository_is_reported_missing_not_created_empty() {
    let dir = demo();
    edit_demo_config(dir.path(), |t| {
        t.replace("repository: acme/gitops", "repository: acme/gitopz")
    });
    let (code, out, err) = on_demo(dir.path(), &["release"]);
    assert_eq!(code, 3, "the other tenant was served: {out}{err}");
    assert!(out.contains("acme/gitopz: no such repository"), "{out}");
    assert!(!out.contains("matches no file"), "{out}");
    assert!(
        !dir.path()
            .join(".stackbot/forge/repos/acme/gitopz.git")
            .exists(),
        "the local forge creates only seeded repositories"
    );
    // The seeded ones (the demo's tenants) are still created on first use.
    assert!(
        dir.path()
            .join(".stackbot/forge/repos/globex/platform.git")
            .exists()
    );
}

#[test]
fn a_forge_folder_that_cannot_be_written_is_not_called_transient() {
    let dir = demo();
    // A read-only folder; as root (which writes anyway) a path the kernel refuses.
    let ro = dir.path().join("read-only");
    std::fs::create_dir_all(&ro).unwrap();
    let mut perms = std::fs::metadata(&ro).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o555);
    std::fs::set_permissions(&ro, perms).unwrap();
    let refused = std::fs::write(ro.join("probe"), "x").is_err();
    let forge = if refused {
        ro.join("forge")
    } else if std::fs::create_dir("/sys/stackbot-probe").is_err()
        && std::path::Path::new("/sys/kernel").exists()
    {
        std::path::PathBuf::from("/sys/kernel/stackbot-forge")
    } else {
        // Never green without having run: a machine where nothing refuses writes cannot
        // check this promise, and says so.
        panic!(
            "no directory here refuses writes (running as root, and no /sys to fall back on): \
             run this test as a user without root, or where /sys is mounted"
        );
    };
    edit_demo_config(dir.path(), |t| {
        t.replace(
            "path: ../../.stackbot/forge",
            &format!("path: {}", forge.display()),
        )
    });
    let (code, out, err) = on_demo(dir.path(), &["release"]);
    assert_eq!(code, 2, "a person must fix permissions: {out}{err}");
    assert!(
        err.contains("Permission denied") || err.contains("Operation not permitted"),
        "{err}"
    );
    assert!(!err.contains("transient"), "{err}");
    assert!(!err.contains("re-running is safe"), "{err}");
    assert!(err.contains("writable"), "{err}");
}

/// The demo's configuration with `minors:` written as `value`; (exit code, stderr) of
/// `validate`, and the line of the `minors:` key.
fn validate_with_minors(value: &str) -> (i32, String, usize) {
    let dir = demo();
    edit_demo_config(dir.path(), |t| {
        t.replace(
            "minors: [\"1.33\", \"1.34\", \"1.35\", \"1.36\"]",
            &format!("minors: {value}"),
        )
    });
    let text = std::fs::read_to_string(dir.path().join("examples/local/stackbot.yaml")).unwrap();
    let line = text
        .lines()
        .position(|l| l.trim_start().starts_with("minors:"))
        .unwrap()
        + 1;
    let (code, _, err) = on_demo(dir.path(), &["validate"]);
    (code, err, line)
}

#[test]
fn an_unquoted_minor_says_quote_it_at_the_minors_line() {
    let (code, err, line) = validate_with_minors("[1.34]");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("quote the minor: \"1.34\""), "{err}");
    assert!(
        err.contains(&format!("stackbot.yaml:{line}:")),
        "points at the `minors:` line {line}: {err}"
    );
    assert!(!err.contains("untagged enum"), "{err}");
}

#[test]
fn validate_refuses_listed_minors_upstream_data_says_cannot_be_released() {
    // The demo replays upstream as of 2026-05-01 (schedule and releases): 1.99 does not
    // exist, 1.30 is past its end of life; detection would wait for either forever.
    for (minors, why) in [
        (
            r#"["1.34", "1.99"]"#,
            "minor 1.99 in `minors`: Kubernetes 1.99 does not exist (upstream's newest minor is 1.36)",
        ),
        (
            r#"["1.30"]"#,
            "minor 1.30 in `minors`: 1.30 is older than every minor the Kubernetes schedule still maintains",
        ),
    ] {
        let (code, err, _) = validate_with_minors(minors);
        assert_eq!(code, 2, "{minors}: {err}");
        assert!(err.contains(why), "{minors}: {err}");
    }
    // The next minor is not refused: it is said to be waited for.
    let dir = demo();
    edit_demo_config(dir.path(), |t| {
        t.replace("\"1.35\", \"1.36\"]", "\"1.35\", \"1.36\", \"1.37\"]")
    });
    let (code, out, err) = on_demo(dir.path(), &["validate"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(
            "warning: openstack/scs2: 1.37 is not released yet (the newest minor is 1.36)"
        ),
        "{out}"
    );
    // Without upstream data nothing is refused, and validate says what it could not check.
    edit_demo_config(dir.path(), |t| {
        t.replace("  snapshot: upstream-2026-05-01.json", "")
            .replace("\"1.37\"]", "\"1.99\"]")
    });
    let (code, out, err) = on_demo(dir.path(), &["validate"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("warning: openstack/scs2: minor 1.99 not checked against upstream"),
        "{out}"
    );
}

#[test]
fn a_misspelt_minors_keyword_suggests_supported() {
    let (code, err, line) = validate_with_minors("supportd");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("did you mean `supported`?"), "{err}");
    assert!(err.contains(&format!("stackbot.yaml:{line}:")), "{err}");
}

#[test]
fn now_takes_exactly_yyyy_mm_dd_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["yesterday", "2026-13-01", "2026-5-1"] {
        let out = stackbot(dir.path())
            .args(["--now", bad, "validate"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--now {bad}: {err}");
        assert!(err.contains("YYYY-MM-DD"), "--now {bad}: {err}");
        assert!(err.contains(bad), "{err}");
    }
}

#[test]
fn a_config_typo_names_its_line_once_and_suggests_the_key() {
    let dir = bad_config();
    let out = stackbot(dir.path())
        .args(["-c", "stackbot.yaml", "validate"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("stackbot.yaml:3:"), "{err}");
    assert!(!err.contains("at line 3"), "the location once: {err}");
    assert!(err.contains("did you mean `stacks`?"), "{err}");
}

#[test]
fn a_misspelt_forge_kind_suggests_the_right_one() {
    let dir = demo();
    edit_demo_config(dir.path(), |t| t.replace("kind: local", "kind: locall"));
    let (code, _, err) = on_demo(dir.path(), &["validate"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("did you mean `local`?"), "{err}");
}

#[test]
fn every_command_has_examples_in_its_help() {
    let dir = tempfile::tempdir().unwrap();
    for cmd in [
        "hash",
        "package",
        "render",
        "validate",
        "schema",
        "detect",
        "plan",
        "release",
        "tenants",
        "status",
        "adopt",
        "forge",
        "completions",
    ] {
        let out = stackbot(dir.path()).args([cmd, "--help"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{cmd}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("Examples"),
            "`{cmd} --help` has no examples:\n{text}"
        );
    }
}

#[test]
fn the_local_forge_is_refused_under_github_actions_unless_allowed() {
    let dir = demo();
    let run = |dir: &std::path::Path| {
        stackbot(dir)
            .args(DEMO)
            .args(["plan"])
            .env("GITHUB_ACTIONS", "true")
            .env_remove("GITHUB_TOKEN")
            .output()
            .unwrap()
    };
    let out = run(dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("GITHUB_ACTIONS=true"), "{err}");
    assert!(err.contains("forge.local.allow_in_ci: true"), "{err}");
    assert!(!dir.path().join(".stackbot").exists(), "nothing written");

    edit_demo_config(dir.path(), |t| {
        t.replace(
            "    path: ../../.stackbot/forge\n",
            "    path: ../../.stackbot/forge\n    allow_in_ci: true\n",
        )
    });
    let out = run(dir.path());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn validate_says_where_a_run_publishes_and_as_whom_without_the_secret() {
    let root = &crate::support::root();
    let out = stackbot(root)
        .args(["validate"])
        .env("GITHUB_TOKEN", "ghp_s3cr3tvalue")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("publishes to: github forge, repository SovereignCloudStack/cluster-stacks"),
        "{text}"
    );
    assert!(text.contains("mode pull-request"), "{text}");
    assert!(
        text.contains("identity: token from $GITHUB_TOKEN: set"),
        "{text}"
    );
    assert!(!text.contains("s3cr3t"), "{text}");
    let out = stackbot(root)
        .args(["validate", "--format", "json"])
        .env_remove("GITHUB_TOKEN")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["publishing"]["forge"], "github");
    assert_eq!(v["publishing"]["can_write"], false);

    let dir = demo();
    let (code, out, _) = on_demo(dir.path(), &["validate"]);
    assert_eq!(code, 0);
    assert!(out.contains("publishes to: local forge"), "{out}");
    assert!(out.contains("identity: none needed"), "{out}");
}

#[test]
fn forge_commands_refuse_a_github_configuration() {
    let root = &crate::support::root();
    let out = stackbot(root)
        .args(["forge", "merge", "acme", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("local forge only"), "{err}");
}
