//! Invariants over many runs through the real binary on the local demo (issue 12, release
//! side): upstream flickers between runs (a `CHECKSUM` answering 503 or 404, the releases API
//! down) and the exit codes, outputs and tenant propagation that follow.

use crate::support::copy_dir;
use std::path::Path;

use serde_json::Value;

const IMAGES: &str =
    "https://nbg1.your-objectstorage.com/osism/openstack-k8s-capi-images/ubuntu-2404-kube-v1.34";

/// A copy of the demo (configuration, snapshot, templates) in a temp dir.
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
    // The verdicts cannot be decided without the releases list: transient, exit 1
    // (docs/status.md), as live; nothing is released again for it.
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        out.contains("SCS 0210 verdicts: unknown where they depend on Kubernetes releases"),
        "{out}"
    );
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

// ---- one minor against a live upstream on 127.0.0.1 -----------------------------------------

use crate::support::upstream_server;

use upstream_server::UpstreamServer;

/// The node image folder of 1.35 on the fixture server.
const IMAGES_1_35: &str = "/capi/ubuntu-2404-kube-v1.35";

/// A release of Kubernetes as the GitHub releases API lists it.
fn kube_release(tag: &str, published_at: &str) -> Value {
    serde_json::json!({"tag_name": tag, "name": format!("Kubernetes {tag}"), "draft": false, "prerelease": false, "published_at": published_at})
}

/// Upstream serves the 1.35 patches in `patches` (tag, publication time), the Helm indexes of
/// the fixtures and the Kubernetes schedule; no CHECKSUM yet (every image answers 404).
fn serve_1_35(s: &UpstreamServer, patches: &[(&str, &str)]) {
    let list: Vec<Value> = patches
        .iter()
        .rev()
        .map(|(t, at)| kube_release(t, at))
        .collect();
    s.paginate_json("/github/repos/kubernetes/kubernetes/releases", &list, 100);
    let fixtures = crate::support::root().join("tests/fixtures/upstream");
    s.serve_dir("/web", &fixtures);
    for (path, file) in [
        ("/cpo/index.yaml", "helm-index-cpo.yaml"),
        ("/cilium/index.yaml", "helm-index-cilium.yaml"),
        (
            "/metrics-server/index.yaml",
            "helm-index-metrics-server.yaml",
        ),
    ] {
        s.set(path, 200, std::fs::read(fixtures.join(file)).unwrap());
    }
}

/// `CHECKSUM` of the 1.35 patch `tag` answers `status` (200: a valid file).
fn image(s: &UpstreamServer, tag: &str, status: u16) {
    let file = format!("ubuntu-2404-kube-{tag}.qcow2");
    let body = match status {
        200 => format!("{}  {file}\n", "5".repeat(64)),
        _ => "<html>Service Unavailable</html>".to_string(),
    };
    s.set(&format!("{IMAGES_1_35}/{file}.CHECKSUM"), status, body);
}

/// The demo's stack, templates and local forge, tracking 1.35 alone, every upstream URL on
/// the fixture server (no snapshot: each run reads upstream live).
fn one_minor_against(s: &UpstreamServer) -> tempfile::TempDir {
    let tmp = demo();
    let u = s.url();
    let config = format!(
        r#"upstream:
  github_api: {u}/github
  kubernetes_repo: kubernetes/kubernetes
  markers_url: {u}/dl
  schedule_url: {u}/web/k8s-schedule.yaml
  cve_feed_url: {u}/web/cve/index.json
  cve_record_url: {u}/web/cve/records/{{id}}
  token_env: STACKBOT_TEST_NO_TOKEN
stacks:
  - provider: openstack
    name: scs2
    templates: ../../templates/openstack/scs2
    output: out/openstack/scs2
    minors: ["1.35"]
    node_image:
      url: "{u}{IMAGES_1_35}/ubuntu-2404-kube-{{version}}.qcow2"
      name: "ubuntu-capi-image-{{version}}"
    components:
      ccm: {{chart: openstack-cloud-controller-manager, repository: "{u}/cpo", version: {{series: "2.{{minor}}"}}}}
      csi: {{chart: openstack-cinder-csi, repository: "{u}/cpo", version: {{series: "2.{{minor}}"}}}}
      cni: {{chart: cilium, repository: "{u}/cilium", version: {{pin: 1.18.9}}}}
      metrics-server: {{chart: metrics-server, repository: "{u}/metrics-server", version: {{pin: 3.13.0}}}}
forge:
  kind: local
  repository: scs/cluster-stacks
  base_branch: main
  mode: direct
  local:
    path: ../../.stackbot/forge
"#
    );
    std::fs::write(tmp.path().join("examples/local/stackbot.yaml"), config).unwrap();
    std::fs::remove_file(snapshot_path(tmp.path())).unwrap();
    tmp
}

/// `release --format json` on the one-minor world: exit code and the single degraded entry.
fn release_json(dir: &Path) -> (i32, Value, String) {
    let (code, out, err) = stackbot(dir, &["release", "--format", "json"]);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    (code, v, err)
}

#[test]
fn a_503_on_the_released_patch_exits_1_even_when_a_newer_patch_has_no_image_yet() {
    let s = UpstreamServer::start();
    let v1_35_4 = ("v1.35.4", "2026-04-15T16:28:00Z");
    let v1_35_5 = ("v1.35.5", "2026-04-22T16:00:00Z");
    let v1_35_6 = ("v1.35.6", "2026-04-29T16:00:00Z");
    serve_1_35(&s, &[v1_35_4, v1_35_5]);
    image(&s, "v1.35.4", 200);
    image(&s, "v1.35.5", 200);
    let tmp = one_minor_against(&s);
    let (code, v, err) = release_json(tmp.path());
    assert_eq!(code, 0, "{v}\n{err}");
    assert_eq!(released(tmp.path()), ["openstack-scs2-1-35-v1"]);

    // v1.35.6 is out, its node image is not (404); the CHECKSUM of the released v1.35.5
    // answers 503. Upstream offers v1.35.4: the series stays at v1, and because of the 503.
    serve_1_35(&s, &[v1_35_4, v1_35_5, v1_35_6]);
    image(&s, "v1.35.5", 503);
    let (code, v, err) = release_json(tmp.path());
    assert_eq!(
        code, 1,
        "an upstream error kept the series back:\n{v}\n{err}"
    );
    assert_eq!(v["released"], serde_json::json!([]), "{v}");
    let d = &v["degraded"][0];
    assert_eq!(d["series"], "openstack-scs2-1-35", "{v}");
    assert_eq!(d["latest"], "openstack-scs2-1-35-v1", "{v}");
    assert_eq!(d["transient"], true, "{d}");
    let cause: Vec<&str> = d["cause"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(
        cause[0].contains("v1.35.5") && cause[0].contains("503"),
        "the 503 comes first: {cause:?}"
    );
    assert!(
        cause
            .iter()
            .any(|c| c.contains("ubuntu-2404-kube-v1.35.6.qcow2.CHECKSUM")),
        "the missing image of v1.35.6 is named too: {cause:?}"
    );
    assert!(err.contains("503"), "the error line names the 503:\n{err}");
    assert_eq!(released(tmp.path()), ["openstack-scs2-1-35-v1"]);

    // The same 503 without v1.35.6 (the released patch is the newest): exit 1 as well.
    serve_1_35(&s, &[v1_35_4, v1_35_5]);
    let (code, v, err) = release_json(tmp.path());
    assert_eq!(code, 1, "{v}\n{err}");
    assert_eq!(v["degraded"][0]["transient"], true, "{v}");

    // Upstream answers again: v1.35.6 still has no image, v1.35.5 is what was released.
    serve_1_35(&s, &[v1_35_4, v1_35_5, v1_35_6]);
    image(&s, "v1.35.5", 200);
    let (code, v, err) = release_json(tmp.path());
    assert_eq!(code, 0, "{v}\n{err}");
    assert_eq!(v["degraded"], serde_json::json!([]), "{v}");
    assert_eq!(released(tmp.path()), ["openstack-scs2-1-35-v1"]);
}

/// SCS 0210: a CVE record that answers 5xx leaves the verdict unknown; `release` still
/// publishes what it can, says which record failed, and exits 1 (the next run reads again).
#[test]
fn a_cve_record_answering_503_makes_release_say_so_and_exit_1() {
    let s = UpstreamServer::start();
    serve_1_35(&s, &[("v1.35.4", "2026-04-15T16:28:00Z")]);
    image(&s, "v1.35.4", 200);
    s.set("/web/cve/records/CVE-2025-0426", 503, "<html>busy</html>");
    let tmp = one_minor_against(&s);
    let (code, v, err) = release_json(tmp.path());
    assert_eq!(code, 1, "{v}\n{err}");
    assert_eq!(
        released(tmp.path()),
        ["openstack-scs2-1-35-v1"],
        "the release went on"
    );
    let failed = v["failed"].to_string();
    assert!(
        failed.contains("CVE-2025-0426") && failed.contains("503"),
        "the failing record is named: {v}\n{err}"
    );
    // The record answers again: nothing to do, exit 0.
    s.set(
        "/web/cve/records/CVE-2025-0426",
        200,
        std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/upstream/cve/records/CVE-2025-0426"),
        )
        .unwrap(),
    );
    let (code, v, err) = release_json(tmp.path());
    assert_eq!(code, 0, "{v}\n{err}");
}
