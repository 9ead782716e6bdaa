//! The `hash` and `package` commands, run as a binary against the real reference trees.

use crate::support::shared;

use std::path::{Path, PathBuf};
use std::process::Command as Std;

use assert_cmd::Command;

fn stackbot() -> Command {
    Command::cargo_bin("stackbot").unwrap()
}

fn all_reference_trees() -> Vec<PathBuf> {
    let root = shared::reference_root();
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
        &std::fs::read(shared::fixture("csctl-output/scs2-a931cdb.json")).unwrap(),
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

fn sha256_hex(b: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(b))
}

fn package_hash_mode(stack: &Path, out: &Path) -> PathBuf {
    let o = stackbot()
        .args(["--format", "json", "package"])
        .arg(stack)
        .arg("--out")
        .arg(out)
        .args(["--mode", "hash"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    PathBuf::from(v["dir"].as_str().unwrap())
}

fn dir_files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().into_string().unwrap(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// `[(name, "dir"|"file", sha256 or "")]` of a .tgz, in archive order.
fn tar_listing(tgz: &[u8]) -> Vec<(String, String, String)> {
    stackbot::package::archive::read_tgz(tgz)
        .unwrap()
        .into_iter()
        .map(|e| match e.data {
            None => (e.name, "dir".to_string(), String::new()),
            Some(d) => (e.name, "file".to_string(), sha256_hex(&d)),
        })
        .collect()
}

#[test]
fn package_matches_what_csctl_wrote_for_scs2_a931cdb() {
    let fixture: serde_json::Value = serde_json::from_slice(
        &std::fs::read(shared::fixture("csctl-output/scs2-a931cdb.json")).unwrap(),
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = package_hash_mode(
        &shared::reference_stack("a931cdb", "openstack", "scs2"),
        out.path(),
    );
    assert_eq!(
        dir.file_name().unwrap().to_str().unwrap(),
        fixture["release"].as_str().unwrap()
    );
    let files = dir_files(&dir);
    let assets = fixture["assets"].as_object().unwrap();
    let mut expected_names: Vec<&str> = assets.keys().map(String::as_str).collect();
    expected_names.push("SHA256SUMS");
    expected_names.sort();
    assert_eq!(
        files.keys().map(String::as_str).collect::<Vec<_>>(),
        expected_names
    );
    for (name, want) in assets {
        let got = &files[name];
        if let Some(text) = want.get("text") {
            assert_eq!(
                String::from_utf8_lossy(got),
                text.as_str().unwrap(),
                "{name}"
            );
            assert_eq!(sha256_hex(got), want["sha256"].as_str().unwrap(), "{name}");
        } else {
            let want_tar: Vec<(String, String, String)> = want["tar"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    (
                        e["name"].as_str().unwrap().to_string(),
                        e["type"].as_str().unwrap().to_string(),
                        e["sha256"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect();
            assert_eq!(tar_listing(got), want_tar, "{name}");
        }
    }
    // SHA256SUMS covers every other file, sorted, in `sha256sum -c` format.
    let sums = String::from_utf8(files["SHA256SUMS"].clone()).unwrap();
    let expected_sums: String = files
        .iter()
        .filter(|(n, _)| *n != "SHA256SUMS")
        .map(|(n, b)| format!("{}  {n}\n", sha256_hex(b)))
        .collect();
    assert_eq!(sums, expected_sums);
}

#[test]
fn package_is_byte_reproducible_across_runs() {
    let stack = shared::reference_stack("a931cdb", "openstack", "scs2");
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let one = dir_files(&package_hash_mode(&stack, a.path()));
    let two = dir_files(&package_hash_mode(&stack, b.path()));
    assert_eq!(one, two);
    // Re-running into the same directory is a no-op that succeeds.
    let again = dir_files(&package_hash_mode(&stack, a.path()));
    assert_eq!(one, again);
    assert_eq!(std::fs::read_dir(a.path()).unwrap().count(), 1);
}

#[test]
fn package_scs_a931cdb_has_the_csctl_file_set_and_raw_addon_tree() {
    let stack = shared::reference_stack("a931cdb", "openstack", "scs");
    let out = tempfile::tempdir().unwrap();
    let dir = package_hash_mode(&stack, out.path());
    let files = dir_files(&dir);
    let v = dir
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .strip_prefix("openstack-scs-1-32-")
        .unwrap()
        .replacen("-sha-", "-sha.", 1);
    let mut want = vec![
        "SHA256SUMS".to_string(),
        "clusteraddon.yaml".into(),
        "hashes.json".into(),
        "metadata.yaml".into(),
        format!("openstack-scs-1-32-cluster-addon-{v}.tgz"),
        format!("openstack-scs-1-32-cluster-class-{v}.tgz"),
    ];
    want.sort();
    assert_eq!(files.keys().cloned().collect::<Vec<_>>(), want);
    // The new-convention addon archive carries the cluster-addon/ tree verbatim
    // (vendored subchart archives included), one dir entry per directory.
    let listing = tar_listing(&files[&format!("openstack-scs-1-32-cluster-addon-{v}.tgz")]);
    let src_files: Vec<String> = listing
        .iter()
        .filter(|(_, t, _)| t == "file")
        .map(|(n, _, sha)| {
            assert_eq!(
                &sha256_hex(&std::fs::read(stack.join("cluster-addon").join(n)).unwrap()),
                sha
            );
            n.clone()
        })
        .collect();
    assert!(
        src_files.contains(&"ccm/charts/openstack-cloud-controller-manager-2.32.0.tgz".to_string())
    );
    assert!(listing.contains(&("ccm/charts".into(), "dir".into(), String::new())));
    let on_disk = Std::new("find")
        .arg(stack.join("cluster-addon"))
        .args(["-type", "f"])
        .output()
        .unwrap();
    assert_eq!(
        src_files.len(),
        on_disk
            .stdout
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .count()
    );
}

#[test]
fn package_refuses_3c6ca6c_naming_file_field_and_expected_value() {
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("rel");
    let o = stackbot()
        .arg("package")
        .arg(shared::reference_stack("3c6ca6c", "openstack", "scs2"))
        .arg("--out")
        .arg(&target)
        .args(["--mode", "hash"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    for needle in [
        "cluster-class/Chart.yaml",
        "`name`",
        "openstack-scs2-1-34-cluster-class",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in {err}");
    }
    assert!(!target.exists(), "nothing may be written");
}

#[test]
fn package_explicit_versions_default_to_the_cluster_stack_version() {
    let stack = shared::reference_stack("a931cdb", "openstack", "scs2");
    let out = tempfile::tempdir().unwrap();
    stackbot()
        .arg("package")
        .arg(&stack)
        .arg("--out")
        .arg(out.path())
        .args(["--version", "v3", "--node-image-version", "v1"])
        .assert()
        .success();
    let dir = out.path().join("openstack-scs2-1-34-v3");
    let md = std::fs::read_to_string(dir.join("metadata.yaml")).unwrap();
    assert!(md.contains("    clusterStack: v3\n"), "{md}");
    assert!(md.contains("        clusterAddon: v3\n"), "{md}");
    assert!(md.contains("        nodeImage: v1\n"), "{md}");
    assert!(
        dir.join("openstack-scs2-1-34-cluster-class-v3.tgz")
            .is_file()
    );
    assert!(
        dir.join("openstack-scs2-1-34-cluster-addon-v3.tgz")
            .is_file()
    );
}

#[test]
fn package_rejects_bad_flags_and_invalid_trees_with_exit_2() {
    let stack = shared::reference_stack("a931cdb", "openstack", "scs2");
    let out = tempfile::tempdir().unwrap();
    // Neither --mode nor --version.
    let o = stackbot()
        .arg("package")
        .arg(&stack)
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    // A stage in clusteraddon.yaml without its directory.
    let copy = tempfile::tempdir().unwrap();
    let status = Std::new("cp")
        .arg("-r")
        .arg(&stack)
        .arg(copy.path().join("s"))
        .status()
        .unwrap();
    assert!(status.success());
    let s = copy.path().join("s");
    std::fs::remove_dir_all(s.join("cluster-addon/csi")).unwrap();
    let o = stackbot()
        .arg("package")
        .arg(&s)
        .arg("--out")
        .arg(out.path())
        .args(["--mode", "hash"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("clusteraddon.yaml") && err.contains("cluster-addon/csi/"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
}

#[test]
fn package_refuses_an_output_dir_inside_the_stack() {
    let copy = tempfile::tempdir().unwrap();
    let s = copy.path().join("s");
    let status = Std::new("cp")
        .arg("-r")
        .arg(shared::reference_stack("a931cdb", "openstack", "scs2"))
        .arg(&s)
        .status()
        .unwrap();
    assert!(status.success());
    let o = stackbot()
        .arg("package")
        .arg(&s)
        .arg("--out")
        .arg(s.join(".release"))
        .args(["--mode", "hash"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("inside the stack directory"));
    assert!(!s.join(".release").exists());
}

#[test]
fn help_shows_examples() {
    for cmd in ["hash", "package"] {
        let o = stackbot().args([cmd, "--help"]).output().unwrap();
        assert!(o.status.success());
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("Examples:"),
            "{cmd}"
        );
    }
}

#[test]
fn package_accepts_every_committed_rendered_stack() {
    let root = crate::support::root().join("cluster-stacks");
    let mut dirs = Vec::new();
    for p in std::fs::read_dir(&root).unwrap().flatten() {
        for n in std::fs::read_dir(p.path()).unwrap().flatten() {
            for m in std::fs::read_dir(n.path()).unwrap().flatten() {
                if m.path().join("csctl.yaml").is_file() {
                    dirs.push(m.path());
                }
            }
        }
    }
    assert!(
        !dirs.is_empty(),
        "no rendered stacks under {}",
        root.display()
    );
    let out = tempfile::tempdir().unwrap();
    for d in dirs {
        let dir = package_hash_mode(&d, out.path());
        let files = dir_files(&dir);
        assert!(files.contains_key("metadata.yaml"), "{}", d.display());
        assert!(
            files.keys().any(|k| k.contains("-cluster-class-")),
            "{}",
            d.display()
        );
    }
}
