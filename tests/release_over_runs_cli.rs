//! Invariants over many runs through the real binary on the local demo (issue 12, release
//! side): upstream flickers between runs (a `CHECKSUM` answering 503 or 404, the releases API
//! down) and the exit codes, outputs and tenant propagation that follow.

use std::path::Path;

use serde_json::Value;

const IMAGES: &str =
    "https://nbg1.your-objectstorage.com/osism/openstack-k8s-capi-images/ubuntu-2404-kube-v1.34";

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

/// A copy of the demo (configuration, snapshot, templates) in a temp dir.
fn demo() -> tempfile::TempDir {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(
        &root.join("examples/local"),
        &tmp.path().join("examples/local"),
    );
    copy_dir(&root.join("templates"), &tmp.path().join("templates"));
    tmp
}

fn stackbot(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_stackbot"))
        .current_dir(dir)
        .args(["-c", "examples/local/stackbot.yaml", "--now", "2026-05-01"])
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_TOKEN")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(!stderr.contains("panicked at"), "{stderr}");
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

fn snapshot_path(dir: &Path) -> std::path::PathBuf {
    dir.join("examples/local/upstream-2026-05-01.json")
}

/// Edit the demo's upstream snapshot: `entries[key] = value` (`None` removes it).
fn set_entry(dir: &Path, key: &str, value: Option<Value>) {
    let path = snapshot_path(dir);
    let mut v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let entries = v["entries"].as_object_mut().unwrap();
    match value {
        Some(x) => {
            entries.insert(key.to_string(), x);
        }
        None => {
            entries.remove(key);
        }
    }
    std::fs::write(&path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

fn checksum_key(patch: &str) -> String {
    format!("checksum {IMAGES}/ubuntu-2404-kube-{patch}.qcow2.CHECKSUM")
}

/// The newest 1.34 image now answers `newest`, and the previous patch's image is published:
/// the newest complete set falls back to v1.34.6.
fn flicker(dir: &Path, newest: Value) {
    set_entry(dir, &checksum_key("v1.34.7"), Some(newest));
    set_entry(
        dir,
        &checksum_key("v1.34.6"),
        Some(serde_json::json!({
            "result": "ok",
            "body": format!("{}  ubuntu-2404-kube-v1.34.6.qcow2\n", "e".repeat(64)),
        })),
    );
}

fn released(dir: &Path) -> Vec<String> {
    let mut tags = Vec::new();
    let releases = dir.join(".stackbot/forge/releases");
    for owner in std::fs::read_dir(&releases).into_iter().flatten() {
        for repo in std::fs::read_dir(owner.unwrap().path()).unwrap() {
            for rel in std::fs::read_dir(repo.unwrap().path()).unwrap() {
                let m = rel.unwrap().path().join("release.json");
                if let Ok(b) = std::fs::read(&m) {
                    let v: Value = serde_json::from_slice(&b).unwrap();
                    if v["draft"] == false {
                        tags.push(v["tag"].as_str().unwrap().to_string());
                    }
                }
            }
        }
    }
    tags.sort();
    tags
}

#[test]
fn a_checksum_answering_503_keeps_the_series_degraded_and_exits_1() {
    let tmp = demo();
    let (code, _, err) = stackbot(tmp.path(), &["release"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        released(tmp.path()),
        ["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"]
    );
    flicker(
        tmp.path(),
        serde_json::json!({"result": "error", "message": format!("GET {IMAGES}/ubuntu-2404-kube-v1.34.7.qcow2.CHECKSUM: HTTP 503 Service Unavailable")}),
    );

    // The preview says so, and exits 0 (a preview is not a failed run).
    let (code, out, err) = stackbot(tmp.path(), &["plan", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let plan: Value = serde_json::from_str(&out).unwrap();
    assert!(plan["releases"].as_array().unwrap().is_empty(), "{out}");
    let d = &plan["degraded"][0];
    assert_eq!(d["series"], "openstack-scs2-1-34");
    assert_eq!(d["latest"], "openstack-scs2-1-34-v1");
    assert_eq!(d["transient"], true);
    assert!(
        d["regressions"][0]
            .as_str()
            .unwrap()
            .contains("Kubernetes v1.34.6 is older than v1.34.7"),
        "{d}"
    );
    assert!(d["cause"][0].as_str().unwrap().contains("503"), "{d}");
    let (_, text, _) = stackbot(tmp.path(), &["plan"]);
    assert!(
        text.contains("degraded openstack-scs2-1-34: stays at openstack-scs2-1-34-v1"),
        "{text}"
    );

    // The run: no release moves tenants backwards; exit 1 (transient), tenants still served.
    let (code, out, err) = stackbot(tmp.path(), &["release", "--format", "json"]);
    assert_eq!(code, 1, "{out}\n{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["released"], serde_json::json!([]), "{out}");
    assert_eq!(v["degraded"][0]["series"], "openstack-scs2-1-34");
    assert_eq!(v["tenants"].as_array().unwrap().len(), 2, "{out}");
    assert_eq!(
        released(tmp.path()),
        ["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"]
    );

    // detect shows it too (against the checkout's stackbot.lock, as the release recorded it).
    let forge_lock = std::process::Command::new("git")
        .args([
            "--git-dir",
            tmp.path()
                .join(".stackbot/forge/repos/scs/cluster-stacks.git")
                .to_str()
                .unwrap(),
            "show",
            "main:stackbot.lock",
        ])
        .output()
        .unwrap();
    assert!(forge_lock.status.success());
    std::fs::write(
        tmp.path().join("examples/local/stackbot.lock"),
        &forge_lock.stdout,
    )
    .unwrap();
    let (code, out, _) = stackbot(tmp.path(), &["detect"]);
    assert_eq!(code, 0);
    assert!(
        out.lines()
            .any(|l| l.starts_with("openstack/scs2  1.34") && l.contains("degraded")),
        "{out}"
    );
    assert!(
        out.contains("1.34: degraded: the release set is older"),
        "{out}"
    );

    // A deliberate downgrade.
    let (code, out, err) = stackbot(tmp.path(), &["release", "--allow-downgrade"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("released openstack-scs2-1-34-v2"), "{out}");
}

#[test]
fn a_checksum_gone_404_keeps_the_series_degraded_with_a_warning_and_exits_0() {
    let tmp = demo();
    let (code, _, err) = stackbot(tmp.path(), &["release"]);
    assert_eq!(code, 0, "{err}");
    flicker(
        tmp.path(),
        serde_json::json!({"result": "missing", "url": format!("{IMAGES}/ubuntu-2404-kube-v1.34.7.qcow2.CHECKSUM")}),
    );
    let (code, out, err) = stackbot(tmp.path(), &["release"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!out.contains("released"), "{out}");
    assert!(
        out.contains("degraded openstack-scs2-1-34: stays at openstack-scs2-1-34-v1"),
        "{out}"
    );
    assert!(
        err.contains("WARN") && err.contains("degraded openstack-scs2-1-34: stays at"),
        "{err}"
    );
}

#[test]
fn a_render_missing_upstream_data_is_transient_and_the_tenants_are_still_served() {
    let tmp = demo();
    // A stack whose templates need the publication date (as the shipped kubernetes.yaml once
    // did), and upstream without dates (the markers fallback): the releases API is down.
    std::fs::write(
        tmp.path()
            .join("templates/openstack/scs2/build-date.txt.tera"),
        "{% if not published_date %}{{ throw(message=\"needs published_at\") }}{% endif %}{{ published_date }}\n",
    )
    .unwrap();
    let mut v: Value =
        serde_json::from_slice(&std::fs::read(snapshot_path(tmp.path())).unwrap()).unwrap();
    let body = v["entries"]["kubernetes/releases"]["body"]
        .as_str()
        .unwrap()
        .to_string();
    let mut list: Vec<Value> = serde_json::from_str(&body).unwrap();
    // Only the 1.34 patches lose their dates: 1.33 still releases.
    for r in &mut list {
        if r["tag_name"].as_str().unwrap().starts_with("v1.34.") {
            r["published_at"] = Value::Null;
        }
    }
    v["entries"]["kubernetes/releases"]["body"] =
        Value::String(serde_json::to_string(&list).unwrap());
    std::fs::write(snapshot_path(tmp.path()), serde_json::to_vec(&v).unwrap()).unwrap();

    let (code, out, err) = stackbot(tmp.path(), &["release"]);
    assert_eq!(code, 1, "transient, not invalid input:\n{out}\n{err}");
    assert!(out.contains("released openstack-scs2-1-33-v1"), "{out}");
    assert!(
        out.contains(
            "failed openstack/scs2 1.34: cannot render without the Kubernetes publication date"
        ),
        "{out}"
    );
    assert!(
        out.contains("tenant globex")
            && out.contains("opened pull request for openstack-scs2-1-33-v1"),
        "{out}"
    );
    assert_eq!(released(tmp.path()), ["openstack-scs2-1-33-v1"]);
}

#[test]
fn republish_names_a_release_tag() {
    let tmp = demo();
    let (code, _, err) = stackbot(tmp.path(), &["plan", "--republish", "v3"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--republish"), "{err}");
}

#[test]
fn an_outage_of_the_releases_api_does_not_release_again_what_was_released() {
    let tmp = demo();
    let (code, _, err) = stackbot(tmp.path(), &["release"]);
    assert_eq!(code, 0, "{err}");
    // The releases API is rate-limited: detection falls back to the stable-1.NN.txt markers,
    // which carry no publication dates.
    set_entry(
        tmp.path(),
        "kubernetes/releases",
        Some(
            serde_json::json!({"result": "error", "message": "GET https://api.github.com/repos/kubernetes/kubernetes/releases: HTTP 403 rate limit exceeded"}),
        ),
    );
    for (minor, patch) in [
        ("1.33", "v1.33.11"),
        ("1.34", "v1.34.7"),
        ("1.35", "v1.35.4"),
        ("1.36", "v1.36.0"),
    ] {
        set_entry(
            tmp.path(),
            &format!("kubernetes/stable-{minor}"),
            Some(serde_json::json!({"result": "ok", "body": patch})),
        );
    }
    let (code, out, err) = stackbot(tmp.path(), &["release"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!out.contains("released"), "{out}");
    assert!(
        out.contains("unchanged since openstack-scs2-1-34-v1"),
        "the recorded date keeps the rendering as released:\n{out}"
    );
    assert_eq!(
        released(tmp.path()),
        ["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"]
    );
}
