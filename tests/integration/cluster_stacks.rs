//! A cluster-stacks-like checkout for the deployment tests: the vendored SCS stacks of
//! upstream commit `a931cdb` under `providers/` (exactly as in SovereignCloudStack/cluster-stacks),
//! a git repository whose `origin` is that repository on GitHub, and `stackbot init` run in it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The SHA the generated workflows pin in these tests. Offline, no release commit can be
/// looked up; any full SHA stands for "the stackbot release", and the tests resolve a pin of
/// stackbot's repository at any SHA to this checkout's `action.yml` (the action under test).
pub const ACTION_SHA: &str = "5d8a1c0e0b3c4f2a9e7d6c5b4a39281706f5e4d3";

/// stackbot's repository as the generated workflows name it (Cargo.toml `repository`).
pub const ACTION_REPO: &str = "SovereignCloudStack/stackbot";

/// The cluster-stacks repository the checkout's `origin` points at.
pub const REPO: &str = "SovereignCloudStack/cluster-stacks";

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// A fresh checkout in `dir`: `providers/` of the vendored SCS commit `a931cdb`, `README.md`,
/// and a git repository on `main` with `origin` = github.com/SovereignCloudStack/cluster-stacks.
pub fn checkout(dir: &Path) {
    let providers = crate::support::shared::reference_root().join("a931cdb/providers");
    copy_dir(&providers, &dir.join("providers"));
    std::fs::write(dir.join("README.md"), "# cluster-stacks\n").unwrap();
    let repo =
        git2::Repository::init_opts(dir, git2::RepositoryInitOptions::new().initial_head("main"))
            .unwrap();
    repo.remote("origin", &format!("https://github.com/{REPO}.git"))
        .unwrap();
}

/// Run `stackbot init` in `dir` with the test pin and `args`.
pub fn init(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stackbot"))
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .args(["init", "--action-ref", ACTION_SHA])
        .args(args)
        .output()
        .unwrap()
}

/// A checkout with `stackbot init` run in it (panics with its stderr when it fails).
pub fn initialised(dir: &Path, args: &[&str]) -> Output {
    checkout(dir);
    let out = init(dir, args);
    assert!(
        out.status.success(),
        "stackbot init failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The workflows `init` wrote in `dir`.
pub fn workflows(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join(".github/workflows"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}
