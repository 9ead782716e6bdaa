//! The `hash` and `package` commands, run as a binary against the real reference trees.

#[path = "support/shared.rs"]
mod shared;

use std::path::{Path, PathBuf};
use std::process::Command as Std;

use assert_cmd::Command;

fn stackbot() -> Command {
    Command::cargo_bin("stackbot").unwrap()
}

fn all_reference_trees() -> Vec<PathBuf> {
    let root = shared::shared_dir().join("reference/cluster-stacks");
    let mut out = Vec::new();
    for commit in std::fs::read_dir(&root).unwrap().flatten() {
        let providers = commit.path().join("providers");
        let Ok(ps) = std::fs::read_dir(&providers) else {
            continue;
        };
        for p in ps.flatten() {
            for s in std::fs::read_dir(p.path()).unwrap().flatten() {
                out.push(s.path());
            }
        }
    }
    out.sort();
    out
}

/// An independent dirhash oracle built from coreutils: `sha256sum` already prints
/// `<hex>  <path>` lines, which is exactly Go's Hash1 line format.
fn coreutils_clean_hash(dir: &Path) -> String {
    let out = Std::new("sh")
        .arg("-c")
        .arg("find . -type f -printf '%P\\n' | LC_ALL=C sort | xargs -d '\\n' sha256sum | sha256sum | cut -c1-64 | xxd -r -p | base64")
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .trim()
        .chars()
        .filter(|c| !matches!(c, '/' | '+' | '='))
        .flat_map(char::to_lowercase)
        .collect()
}

fn hash_of(dir: &Path) -> String {
    let out = stackbot().arg("hash").arg(dir).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .trim_end()
        .to_string()
}

#[test]
fn hash_matches_csctl_vectors() {
    assert_eq!(
        hash_of(&shared::reference_stack("a931cdb", "openstack", "scs2")),
        "azlfam7rgn823z07ougej26xmpzsohlj0tvr4s0njis"
    );
    assert_eq!(
        hash_of(&shared::reference_stack("3c6ca6c", "openstack", "scs2")),
        "ilo3epzlpdzktwzwoyfkwzlxekit1wcp7dnvaccmqm"
    );
}

#[test]
fn hash_matches_the_dirhash_algorithm_on_all_six_reference_trees() {
    let trees = all_reference_trees();
    assert_eq!(trees.len(), 6, "{trees:?}");
    for t in trees {
        assert_eq!(hash_of(&t), coreutils_clean_hash(&t), "{}", t.display());
    }
}

#[test]
fn hash_json_is_hashes_json_as_csctl_wrote_it() {
    let fixture: serde_json::Value = serde_json::from_slice(
        &std::fs::read(shared::shared_dir().join("fixtures/csctl-output/scs2-a931cdb.json"))
            .unwrap(),
    )
    .unwrap();
    let expected = fixture["assets"]["hashes.json"]["text"].as_str().unwrap();
    stackbot()
        .args(["hash", "--json"])
        .arg(shared::reference_stack("a931cdb", "openstack", "scs2"))
        .assert()
        .success()
        .stdout(expected.to_string());
}

#[test]
fn hash_of_a_missing_dir_is_invalid_input() {
    let out = stackbot()
        .args(["hash", "/nonexistent/stack"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/stack"));
}
