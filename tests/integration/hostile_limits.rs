//! Inputs nobody here controls (issue 33): one tenant's file or one upstream answer never
//! takes the whole run down. Each case generates its hostile bytes here, runs the real
//! binary's `release` on the local demo (tenant files on the local forge, upstream from the
//! demo snapshot or served live by the fixture server on 127.0.0.1), and asserts the named
//! refusal or success, the exit code, and that the other tenants and series were served and
//! the dashboard written. Memory and time are measured by `scripts/bench-hostile`, never here
//! (the timeout below only keeps a regression from hanging the suite).

use crate::support::copy_dir;
use crate::support::upstream_server::UpstreamServer;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

/// A copy of the demo (configuration, snapshot, templates, tenant seeds) in a temp dir.
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

/// [`demo`] reading upstream live from `server` (every upstream URL of the configuration
/// rewritten to it), instead of the snapshot.
fn live_demo(server: &UpstreamServer) -> tempfile::TempDir {
    let tmp = demo();
    let path = config(tmp.path());
    let mut text = std::fs::read_to_string(&path).unwrap();
    for (from, to) in server.fixture_mirrors() {
        text = text.replace(&from, &to);
    }
    let u = server.url();
    text = text.replace(
        "  snapshot: upstream-2026-05-01.json\n",
        &format!(
            "  cve_feed_url: {u}/cve/index.json\n  cve_record_url: \"{u}/cve/records/{{id}}\"\n"
        ),
    );
    std::fs::write(&path, text).unwrap();
    tmp
}

fn config(dir: &Path) -> PathBuf {
    dir.join("examples/local/stackbot.yaml")
}

/// `stackbot -c examples/local/stackbot.yaml --now 2026-05-01 <args>`: exit code, stdout,
/// stderr. Never a panic.
fn stackbot(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = assert_cmd::Command::cargo_bin("stackbot")
        .unwrap()
        .current_dir(dir)
        .args(["-c", "examples/local/stackbot.yaml", "--now", "2026-05-01"])
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_TOKEN")
        .env_remove("GITHUB_ACTIONS")
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(!stderr.contains("panicked at"), "{stderr}");
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

/// Write a file into a tenant's seed repository (seeded into the local forge by the first run).
fn seed(dir: &Path, tenant: &str, rel: &str, bytes: impl AsRef<[u8]>) {
    let p = dir.join("examples/local/tenants").join(tenant).join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

/// Every pull request on the local forge of `owner/name`, as stored (title, body, state).
fn pulls(dir: &Path, repo: &str) -> Vec<Value> {
    let d = dir.join(".stackbot/forge/pulls").join(repo);
    let mut out = Vec::new();
    for e in std::fs::read_dir(&d).into_iter().flatten() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            out.push(serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap());
        }
    }
    out
}

/// The published releases of the demo's cluster-stacks repository: tag → notes.
fn releases(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let root = dir.join(".stackbot/forge/releases/scs/cluster-stacks");
    for rel in std::fs::read_dir(&root).into_iter().flatten() {
        let m = rel.unwrap().path().join("release.json");
        if let Ok(b) = std::fs::read(&m) {
            let v: Value = serde_json::from_slice(&b).unwrap();
            if v["draft"] == false {
                let tag = v["tag"].as_str().unwrap_or_default().to_string();
                let body = v["body"].as_str().unwrap_or_default().to_string();
                out.push((tag, body));
            }
        }
    }
    out.sort();
    out
}

/// One ClusterStack document of openstack/scs2 for `minor`, listing `versions`.
fn cluster_stack(name: &str, minor: &str, versions: &str) -> String {
    format!(
        "apiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: {name}\n  namespace: cluster\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"{minor}\"\n  channel: stable\n  autoSubscribe: false\n  noProvider: true\n  versions: {versions}\n"
    )
}

/// One anchor of `width` scalars, referenced `refs` times (the form that passes a counter of
/// references): `width × refs` nodes from a few dozen kilobytes.
fn wide_anchor_bomb(width: usize, refs: usize) -> String {
    let items = vec!["x"; width].join(",");
    let aliases = vec!["*a"; refs].join(",");
    format!("anchor: &a [{items}]\nrefs: [{aliases}]\n")
}

/// The classic billion laughs: nine levels of ten references each.
fn billion_laughs() -> String {
    let mut s = String::from("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        let refs = vec![format!("*l{}", i - 1); 10].join(", ");
        s.push_str(&format!("l{i}: &l{i} [{refs}]\n"));
    }
    s
}

/// The run served the other tenant (globex got its pull request), released the series the
/// hostile input does not touch, and wrote the dashboard.
fn others_served(dir: &Path, out: &str) {
    assert!(
        out.contains(
            "tenant globex (globex/platform, stackbot/openstack-scs2): opened pull request"
        ),
        "globex was not served:\n{out}"
    );
    assert!(
        out.contains("released openstack-scs2-1-33-v1"),
        "1.33 not released:\n{out}"
    );
    assert!(
        out.contains("dashboard: opened issue"),
        "no dashboard:\n{out}"
    );
    assert!(!pulls(dir, "globex/platform").is_empty());
}

/// A tenant file that must fail its tenant alone: exit 3, the file and `expect` named.
fn tenant_fails_alone(file: &str, bytes: Vec<u8>, expect: &[&str]) {
    let tmp = demo();
    seed(tmp.path(), "acme", file, bytes);
    let (code, out, err) = stackbot(tmp.path(), &["release"]);
    let all = format!("{out}\n{err}");
    assert_eq!(code, 3, "{all}");
    assert!(
        all.contains(&format!(
            "acme: clusters/{}",
            Path::new(file).file_name().unwrap().to_string_lossy()
        )) || all.contains(file),
        "{all}"
    );
    for e in expect {
        assert!(all.contains(e), "output lacks {e:?}:\n{all}");
    }
    others_served(tmp.path(), &out);
}

#[test]
fn a_wide_anchor_bomb_in_a_tenant_file_fails_that_tenant_alone() {
    let mut file = cluster_stack("openstack-scs2-1-34", "1.34", "[v1]");
    file.push_str("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n");
    for line in wide_anchor_bomb(10_000, 10_000).lines() {
        file.push_str(&format!("  {line}\n"));
    }
    assert!(
        file.len() > 50_000 && file.len() < 100_000,
        "{}",
        file.len()
    );
    tenant_fails_alone(
        "clusters/bomb.yaml",
        file.into_bytes(),
        &[
            "clusters/bomb.yaml:",
            "alias `*a` repeats 10001 nodes",
            "limits.tenant_files.max_nodes",
        ],
    );
}

#[test]
fn a_tenant_file_nested_100000_levels_fails_that_tenant_alone() {
    let mut file = cluster_stack("openstack-scs2-1-34", "1.34", "[v1]");
    file.push_str(&format!(
        "---\nnested: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    ));
    tenant_fails_alone(
        "clusters/deep.yaml",
        file.into_bytes(),
        &[
            "nested deeper than 64 levels",
            "limits.tenant_files.max_depth",
        ],
    );
}

#[test]
fn the_classic_alias_bomb_invalid_utf8_and_nul_bytes_fail_their_tenant_alone() {
    let good = cluster_stack("openstack-scs2-1-34", "1.34", "[v1]");
    let mut laughs = good.clone();
    laughs.push_str("---\n");
    laughs.push_str(&billion_laughs());
    tenant_fails_alone(
        "clusters/laughs.yaml",
        laughs.into_bytes(),
        &["limits.tenant_files.max_nodes"],
    );
    let mut utf8 = good.clone().into_bytes();
    utf8.extend_from_slice(b"# \xff\xfe not text\n");
    tenant_fails_alone("clusters/utf8.yaml", utf8, &["not a UTF-8 text file"]);
    let mut nul = good.into_bytes();
    nul.extend_from_slice(b"note: \"a\0b\"\n");
    tenant_fails_alone("clusters/nul.yaml", nul, &["clusters/nul.yaml"]);
}

#[test]
fn ten_thousand_cluster_stack_documents_get_one_pull_request_under_the_forge_limit() {
    let tmp = demo();
    let docs: Vec<String> = (0..10_000)
        .map(|i| cluster_stack(&format!("stack-{i}"), "1.34", "[]"))
        .collect();
    seed(
        tmp.path(),
        "acme",
        "clusters/clusterstack.yaml",
        docs.join("---\n"),
    );
    let (code, out, err) = stackbot(tmp.path(), &["release"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("tenant acme (acme/gitops, stackbot/openstack-scs2): opened pull request"),
        "{out}"
    );
    others_served(tmp.path(), &out);
    let acme = pulls(tmp.path(), "acme/gitops");
    let body = acme[0]["body"].as_str().unwrap();
    assert!(body.chars().count() < 65_536, "{}", body.chars().count());
    // Every part counted: the list of changes is cut like the rest, and the body says so.
    assert!(
        body.contains("Cut to stay under GitHub's 65,536-character limit: Changes (after "),
        "{}",
        &body[body.len().saturating_sub(2000)..]
    );
    assert!(body.contains("of 10000 items)"), "{body}");
    assert!(body.contains("the pull request's *Files changed* tab"));
    assert!(
        body.ends_with("stop the bot from updating it.\n"),
        "the trailer is kept"
    );
}

#[test]
fn a_50_mb_tenant_file_is_edited_byte_for_byte() {
    let tmp = demo();
    let mut file = cluster_stack("openstack-scs2-1-34", "1.34", "[]");
    file.push_str(
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  blob: |\n",
    );
    let line = format!("    {}\n", "0123456789abcdef".repeat(6));
    while file.len() < 50 * 1000 * 1000 {
        file.push_str(&line);
    }
    seed(tmp.path(), "acme", "clusters/clusterstack.yaml", &file);
    let (code, out, err) = stackbot(tmp.path(), &["release"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("tenant acme (acme/gitops, stackbot/openstack-scs2): opened pull request"),
        "{out}"
    );
    // The bot branch holds the file with exactly the one line changed.
    let forge = stackbot::forge::local::LocalForge::new(
        tmp.path().join(".stackbot/forge"),
        "stackbot",
        "stackbot@example.org",
    );
    use stackbot::forge::Forge;
    let repo = stackbot::forge::RepoRef::parse("acme/gitops").unwrap();
    let head = forge
        .branch_head(&repo, "stackbot/openstack-scs2")
        .unwrap()
        .unwrap();
    let edited = forge
        .read_file(&repo, &head, "clusters/clusterstack.yaml")
        .unwrap()
        .unwrap();
    let want = file.replacen("  versions: []\n", "  versions: [v1]\n", 1);
    assert!(
        edited == want.as_bytes(),
        "the file changed beyond its versions line"
    );
}

/// The live demo's first release with `target` on the fixture server answering `body`.
fn live_release(
    target: &str,
    status: u16,
    body: Vec<u8>,
) -> (tempfile::TempDir, UpstreamServer, i32, String, String) {
    let server = UpstreamServer::with_fixtures();
    server.set(target, status, body);
    let tmp = live_demo(&server);
    let (code, out, err) = stackbot(tmp.path(), &["release"]);
    (tmp, server, code, out, err)
}

#[test]
fn the_live_demo_releases_cleanly_without_hostile_input() {
    let server = UpstreamServer::with_fixtures();
    let tmp = live_demo(&server);
    let (code, out, err) = stackbot(tmp.path(), &["release"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("released openstack-scs2-1-34-v1 (Kubernetes v1.34.7"),
        "{out}"
    );
    others_served(tmp.path(), &out);
}

#[test]
fn a_wide_anchor_bomb_in_the_upstream_schedule_is_an_upstream_error_and_the_run_goes_on() {
    let mut schedule = std::fs::read_to_string(
        crate::support::upstream_server::upstream_fixtures().join("k8s-schedule.yaml"),
    )
    .unwrap();
    schedule.push_str(
        &wide_anchor_bomb(10_000, 10_000)
            .replace("anchor:", "bombAnchor:")
            .replace("refs:", "bombRefs:"),
    );
    assert!(schedule.len() > 50_000, "{}", schedule.len());
    let (tmp, _s, code, out, err) =
        live_release("/web/k8s-schedule.yaml", 200, schedule.into_bytes());
    let all = format!("{out}\n{err}");
    assert_eq!(code, 1, "{all}");
    assert!(
        all.contains("Kubernetes schedule unusable: schedule.yaml:"),
        "{all}"
    );
    assert!(all.contains("limits.upstream.max_nodes"), "{all}");
    assert!(out.contains("released openstack-scs2-1-34-v1"), "{out}");
    others_served(tmp.path(), &out);
}

#[test]
fn a_helm_index_with_a_million_entries_of_the_chart_is_searched_as_it_streams() {
    let mut index = std::fs::read_to_string(
        crate::support::upstream_server::upstream_fixtures().join("helm-index-cpo.yaml"),
    )
    .unwrap();
    let at = index
        .find("  openstack-cinder-csi:\n")
        .expect("the chart is listed")
        + "  openstack-cinder-csi:\n".len();
    let mut extra = String::with_capacity(22 * 1024 * 1024);
    for i in 0..1_000_000u32 {
        extra.push_str(&format!(
            "  - name: openstack-cinder-csi\n    version: 0.{}.{}\n",
            i / 1000,
            i % 1000
        ));
    }
    index.insert_str(at, &extra);
    assert!(
        index.len() > 20 * 1024 * 1024 && index.len() < 64 * 1024 * 1024,
        "{}",
        index.len()
    );
    let (tmp, _s, code, out, err) = live_release("/cpo/index.yaml", 200, index.into_bytes());
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("released openstack-scs2-1-34-v1 (Kubernetes v1.34.7"),
        "{out}"
    );
    others_served(tmp.path(), &out);
    let lock = std::fs::read_to_string(tmp.path().join("examples/local/stackbot.lock"))
        .unwrap_or_default();
    let released = releases(tmp.path());
    let notes = &released
        .iter()
        .find(|(t, _)| t == "openstack-scs2-1-34-v1")
        .unwrap()
        .1;
    assert!(
        notes.contains("| csi | openstack-cinder-csi | 2.34."),
        "{notes}\n{lock}"
    );
}

const CHECKSUM_1_34_7: &str =
    "/capi/ubuntu-2404-kube-v1.34/ubuntu-2404-kube-v1.34.7.qcow2.CHECKSUM";

/// v1.34.7's CHECKSUM answers `status`/`body`: the first release steps back to v1.34.6, and
/// says so in its output, its notes and `status`, naming `why`; an upstream error exits 1.
fn a_broken_checksum_is_said(status: u16, body: Vec<u8>, why: &[&str], code_wanted: i32) {
    let (tmp, _s, code, out, err) = live_release(CHECKSUM_1_34_7, status, body);
    let all = format!("{out}\n{err}");
    assert_eq!(code, code_wanted, "{all}");
    assert!(
        out.contains("released openstack-scs2-1-34-v1 (Kubernetes v1.34.6"),
        "{all}"
    );
    assert!(
        all.contains("openstack-scs2-1-34: v1.34.7 skipped: "),
        "{all}"
    );
    for w in why {
        assert!(all.contains(w), "output lacks {w:?}:\n{all}");
    }
    let released = releases(tmp.path());
    let notes = &released
        .iter()
        .find(|(t, _)| t == "openstack-scs2-1-34-v1")
        .unwrap()
        .1;
    assert!(
        notes.contains("### Newer patches not in this release\n\n- v1.34.7 skipped: "),
        "{notes}"
    );
    for w in why {
        assert!(notes.contains(w), "notes lack {w:?}:\n{notes}");
    }
    others_served(tmp.path(), &out);
    let (_, status_out, _) = stackbot(tmp.path(), &["status"]);
    assert!(
        status_out.contains("openstack/scs2 1.34 steps over v1.34.7: "),
        "{status_out}"
    );
}

#[test]
fn a_200_mb_checksum_is_refused_after_4_kib_and_the_step_back_is_said() {
    a_broken_checksum_is_said(
        200,
        vec![b'f'; 200 * 1024 * 1024],
        &[
            "ubuntu-2404-kube-v1.34.7.qcow2.CHECKSUM: response larger than 4096 bytes",
            "limits.upstream.max_checksum_bytes",
        ],
        1,
    );
}

#[test]
fn a_checksum_with_a_10_mb_first_line_is_refused_and_the_step_back_is_said() {
    let mut body = vec![b'a'; 10 * 1024 * 1024];
    body.extend_from_slice(b"  ubuntu-2404-kube-v1.34.7.qcow2\n");
    a_broken_checksum_is_said(
        200,
        body,
        &[
            "response larger than 4096 bytes",
            "limits.upstream.max_checksum_bytes",
        ],
        1,
    );
}

#[test]
fn a_checksum_answering_503_is_said_and_exits_1() {
    a_broken_checksum_is_said(
        503,
        b"down".to_vec(),
        &["ubuntu-2404-kube-v1.34.7.qcow2.CHECKSUM: HTTP 503"],
        1,
    );
}

#[test]
fn a_checksum_with_a_bad_hash_is_said_and_exits_1() {
    a_broken_checksum_is_said(
        200,
        b"0123456789  ubuntu-2404-kube-v1.34.7.qcow2\n".to_vec(),
        &["`0123456789` is not a sha256"],
        1,
    );
}
