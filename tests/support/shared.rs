//! Where things are: the repository root of this clone, and the vendored test data under its
//! `tests/fixtures/`, never a path outside it (a fresh clone must pass its tests with nothing
//! beside it). Provenance and licences: `tests/fixtures/README.md` and the README of each
//! folder.

use std::path::{Path, PathBuf};

/// The repository root of this clone (the root package's directory, two above this crate's
/// `tests/support`): `templates/`, `examples/`, `docs/`, `cluster-stacks/`, `tests/fixtures/`
/// are under it. The one definition for every test (`support::root`).
pub fn root() -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir.ancestors().nth(2).unwrap().to_path_buf()
}

/// `tests/fixtures/` of this clone: the root of every vendored file (`reference/`,
/// `upstream/`, `helm-indexes/`, `csctl-output/`, ...).
pub fn shared_dir() -> PathBuf {
    root().join("tests/fixtures")
}

/// Copy a directory tree (the repository's templates or fixtures into a temporary directory).
pub fn copy_dir(from: &Path, to: &Path) {
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

/// The folder of the local forge's release `tag` under `releases` (a repository's
/// `.stackbot/forge/releases/<owner>/<name>`): its `release.json` and `assets/`, to read or to
/// damage by hand. Panics naming the folder when no release there has that tag.
pub fn local_release(releases: &Path, tag: &str) -> PathBuf {
    std::fs::read_dir(releases)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            std::fs::read_to_string(p.join("release.json"))
                .is_ok_and(|j| j.contains(&format!("\"tag\": \"{tag}\"")))
        })
        .unwrap_or_else(|| panic!("{tag} under {}", releases.display()))
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
