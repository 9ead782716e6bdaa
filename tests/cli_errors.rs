//! How failures reach people: a readable error with a next step on stderr, the documented exit
//! code, and under GitHub Actions an `::error` annotation on the offending file and line.

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
