//! `stackbot release` as a user runs it, with `forge.kind: github` pointing at the fake GitHub:
//! the token comes from the environment variable named in the config and never appears in any
//! output; the first run publishes, the second makes no write request; a bad token is a clear
//! error that changes nothing.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use support::fake_github::{FakeGithub, FakeOptions};

const TOKEN: &str = "ghp_CLItokenMUSTneverBEprinted_77";
const TOKEN_ENV: &str = "STACKBOT_FAKE_GH_TOKEN";

use crate::support::config::DemoConfig;

/// The demo configuration, pointed at the fake GitHub (no tenants).
fn config(dir: &Path, fake: &FakeGithub) -> PathBuf {
    DemoConfig::new()
        .on_github(&fake.api_url(), &fake.upload_url(), TOKEN_ENV)
        .write(dir)
}

fn release(cfg: &Path, token: &str) -> Output {
    Command::cargo_bin("stackbot")
        .unwrap()
        .env(TOKEN_ENV, token)
        .env("NO_COLOR", "1")
        .env("RUST_LOG", "debug")
        .args([
            "-c",
            cfg.to_str().unwrap(),
            "--now",
            "2026-05-01",
            "--format",
            "json",
            "release",
        ])
        .output()
        .unwrap()
}

fn assert_no_token(out: &Output, token: &str) {
    for s in [&out.stdout, &out.stderr] {
        assert!(
            !String::from_utf8_lossy(s).contains(token),
            "the token leaked into the output"
        );
    }
}

#[test]
fn release_publishes_on_github_then_does_nothing_and_never_prints_the_token() {
    let fake = FakeGithub::start_with(FakeOptions::default().with_token(TOKEN));
    fake.create_repo(
        "scs/cluster-stacks",
        "main",
        &[("README.md", b"# stacks\n")],
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &fake);

    let first = release(&cfg, TOKEN);
    assert_no_token(&first, TOKEN);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    let released: Vec<String> = v["released"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    assert!(!released.is_empty(), "{v}");
    let snap = fake.snapshot();
    let repo = &snap.repos["scs/cluster-stacks"];
    let mut tags: Vec<&String> = repo.releases.iter().map(|r| &r.tag).collect();
    tags.sort();
    let mut want: Vec<&String> = released.iter().collect();
    want.sort();
    assert_eq!(tags, want);
    assert!(
        repo.releases
            .iter()
            .all(|r| !r.draft && r.assets.contains_key("SHA256SUMS"))
    );
    for r in &repo.releases {
        assert!(!r.body.contains(TOKEN));
    }

    fake.reset_counts();
    let second = release(&cfg, TOKEN);
    assert_no_token(&second, TOKEN);
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let c = fake.counts();
    assert_eq!(c.writes, 0, "a no-op release writes nothing: {c:?}");
    assert_eq!(fake.snapshot(), snap);
    eprintln!(
        "no-op `stackbot release` on the fake GitHub: {} requests",
        c.total()
    );
}

#[test]
fn a_bad_token_fails_clearly_changes_nothing_and_is_not_printed() {
    let fake = FakeGithub::start_with(FakeOptions::default().with_token(TOKEN));
    fake.create_repo(
        "scs/cluster-stacks",
        "main",
        &[("README.md", b"# stacks\n")],
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &fake);
    let before = fake.snapshot();
    let bad = "ghp_WRONGcliTOKEN_should_not_leak_99";
    let out = release(&cfg, bad);
    assert_no_token(&out, bad);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(TOKEN_ENV),
        "the error names the variable: {err}"
    );
    assert_eq!(fake.counts().writes, 0);
    assert_eq!(fake.snapshot(), before);
}

/// `--cache-dir` is the run's cache for everything conditional: the upstream ETags and the
/// GitHub forge's answers (under `github/`), so a CI cache step restores both.
#[test]
fn cache_dir_holds_the_github_forge_cache_too() {
    let fake = FakeGithub::start_with(FakeOptions::default().with_token(TOKEN));
    fake.create_repo(
        "scs/cluster-stacks",
        "main",
        &[("README.md", b"# stacks\n")],
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &fake);
    let cache = dir.path().join("cache");
    let out = Command::cargo_bin("stackbot")
        .unwrap()
        .env(TOKEN_ENV, TOKEN)
        .env("NO_COLOR", "1")
        .args(["-c", cfg.to_str().unwrap(), "--now", "2026-05-01", "plan"])
        .arg("--cache-dir")
        .arg(&cache)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let github = cache.join("github");
    assert!(
        github.is_dir() && std::fs::read_dir(&github).unwrap().next().is_some(),
        "the GitHub forge cached its answers under --cache-dir/github"
    );
}
