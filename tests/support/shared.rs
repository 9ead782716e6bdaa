//! Where the vendored test data lives: `tests/fixtures/` of this clone, never a path outside
//! it (a fresh clone must pass its tests with nothing beside it). Provenance and licences:
//! `tests/fixtures/README.md` and the README of each folder.

use std::path::PathBuf;

/// `tests/fixtures/` of this clone: the root of every vendored file (`reference/`,
/// `upstream/`, `helm-indexes/`, `csctl-output/`, ...).
pub fn shared_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A vendored file or folder by its path under `tests/fixtures/`, e.g.
/// `fixture("csctl-output/scs2-a931cdb.json")`; panics naming the path when it is missing.
#[allow(dead_code)]
pub fn fixture(relative: &str) -> PathBuf {
    let path = shared_dir().join(relative);
    assert!(
        path.exists(),
        "test fixture {} is missing (see tests/fixtures/README.md)",
        path.display()
    );
    path
}

/// `tests/fixtures/reference/cluster-stacks`: one folder per upstream commit.
#[allow(dead_code)]
pub fn reference_root() -> PathBuf {
    shared_dir().join("reference/cluster-stacks")
}

/// `reference/cluster-stacks/<commit>/providers/<provider>/<name>`.
#[allow(dead_code)]
pub fn reference_stack(commit: &str, provider: &str, name: &str) -> PathBuf {
    reference_root()
        .join(commit)
        .join("providers")
        .join(provider)
        .join(name)
}
