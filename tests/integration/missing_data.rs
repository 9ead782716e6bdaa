//! Missing data is never compliance (issue 29, "Provenance by type"): the README demo after
//! its first release, its upstream served by a real local HTTP server with faults in every
//! source the SCS 0210 verdicts read, alone and in pairs. Whatever fails, no stack × minor and
//! no tenant gets a more favourable verdict than with all data, `compliant` is never `true`
//! where it is `false` with all data, and whatever became `unknown` names what it could not
//! read. Then the same through the command line with a snapshot that marks sources as failed
//! (`detect` exits 1, `status` and the dashboard say not compliant), and tenants whose
//! `Cluster` files cannot be judged.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use chrono::NaiveDate;
use stackbot::compliance::Verdict;
use stackbot::config::Loaded;
use stackbot::forge::local::LocalForge;
use stackbot::pipeline::{Context, Selection};
use stackbot::status::Status;
use stackbot::upstream::DetectOptions;
use stackbot::upstream::http::HttpOptions;

use crate::support::upstream_server::{UpstreamServer, upstream_fixtures};
use crate::support::{copy_dir, root};

/// The sources a verdict depends on, as the fixture server lays them out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Src {
    /// The GitHub releases list of kubernetes/kubernetes.
    Releases,
    /// `stable-1.NN.txt`, read when the releases list fails.
    Markers,
    /// kubernetes/website `schedule.yaml` (end of life).
    Schedule,
    /// The official Kubernetes CVE feed.
    Feed,
    /// The CVE records the feed lists.
    Records,
}

const SOURCES: [Src; 5] = [
    Src::Releases,
    Src::Markers,
    Src::Schedule,
    Src::Feed,
    Src::Records,
];

/// How a source fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Nothing listens.
    Refused,
    Forbidden,
    NotFound,
    ServerError,
    /// HTTP 200 with something that is not the format.
    Garbage,
    /// HTTP 200 with an empty body.
    Empty,
    /// CVE data that the standard's test could not read: feed items without an id, ids in
    /// lower case, `versions` entries without `status`.
    NoId,
    LowerCaseId,
    NoStatus,
}

const HTTP_KINDS: [Kind; 6] = [
    Kind::Refused,
    Kind::Forbidden,
    Kind::NotFound,
    Kind::ServerError,
    Kind::Garbage,
    Kind::Empty,
];

type Fault = (Src, Kind);

/// Every fault of one source: the HTTP ones everywhere, the malformed CVE entries where they
/// belong.
fn faults_of(src: Src) -> Vec<Fault> {
    let mut out: Vec<Fault> = HTTP_KINDS.iter().map(|k| (src, *k)).collect();
    match src {
        Src::Feed => out.extend([(src, Kind::NoId), (src, Kind::LowerCaseId)]),
        Src::Records => out.push((src, Kind::NoStatus)),
        _ => {}
    }
    out
}

fn cve_ids() -> Vec<String> {
    let feed: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(upstream_fixtures().join("cve/index.json")).unwrap(),
    )
    .unwrap();
    feed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect()
}

/// The server paths of a source (every page, marker and record it could be asked for).
fn paths(src: Src) -> Vec<String> {
    match src {
        // Every page as the fixture server paginates it (its exact targets win over a path).
        Src::Releases => {
            let list = "/github/repos/kubernetes/kubernetes/releases?per_page=100";
            std::iter::once(list.to_string())
                .chain((2..=6).map(|n| format!("{list}&page={n}")))
                .collect()
        }
        Src::Markers => (28..=38).map(|m| format!("/dl/stable-1.{m}.txt")).collect(),
        Src::Schedule => vec!["/web/k8s-schedule.yaml".into()],
        Src::Feed => vec!["/cve/index.json".into()],
        Src::Records => cve_ids()
            .iter()
            .map(|id| format!("/cve/records/{id}"))
            .collect(),
    }
}

/// The real URL prefix of a source in the demo configuration (what `--mirror` rewrites).
fn prefix(src: Src) -> &'static str {
    match src {
        Src::Releases => "https://api.github.com",
        Src::Markers => "https://dl.k8s.io/release",
        Src::Schedule => {
            "https://raw.githubusercontent.com/kubernetes/website/main/data/releases/schedule.yaml"
        }
        Src::Feed => {
            "https://kubernetes.io/docs/reference/issues-security/official-cve-feed/index.json"
        }
        Src::Records => "https://cveawg.mitre.org/api/cve",
    }
}

/// A body malformed the way `kind` says, from the fixture served at `path`.
fn malformed(kind: Kind, path: &str) -> Vec<u8> {
    // The server maps `/cve` to `tests/fixtures/upstream/cve`.
    let file = upstream_fixtures().join(path.trim_start_matches('/'));
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    match kind {
        Kind::NoId | Kind::LowerCaseId => {
            for item in v["items"].as_array_mut().unwrap() {
                let obj = item.as_object_mut().unwrap();
                let id = obj.remove("id").unwrap();
                if kind == Kind::LowerCaseId {
                    obj.insert("id".into(), id.as_str().unwrap().to_lowercase().into());
                }
            }
        }
        Kind::NoStatus => {
            for a in v["containers"]["cna"]["affected"]
                .as_array_mut()
                .into_iter()
                .flatten()
            {
                for vi in a["versions"].as_array_mut().into_iter().flatten() {
                    vi.as_object_mut().unwrap().remove("status");
                }
            }
        }
        other => unreachable!("{other:?} is not a malformed CVE entry"),
    }
    serde_json::to_vec(&v).unwrap()
}

/// The demo's upstream with `faults` applied, and the mirrors that reach it.
fn upstream(faults: &[Fault]) -> (UpstreamServer, Vec<(String, String)>) {
    let s = UpstreamServer::with_fixtures();
    let mut mirrors = s.fixture_mirrors();
    for &(src, kind) in faults {
        if kind == Kind::Refused {
            // Port 9 (discard) on loopback: nothing listens there.
            for m in mirrors.iter_mut().filter(|(from, _)| from == prefix(src)) {
                m.1 = "http://127.0.0.1:9".into();
            }
            continue;
        }
        for path in paths(src) {
            let (status, body): (u16, Vec<u8>) = match kind {
                Kind::Forbidden => (403, b"{\"message\": \"API rate limit exceeded\"}".to_vec()),
                Kind::NotFound => (404, b"Not Found".to_vec()),
                Kind::ServerError => (503, b"upstream connect error".to_vec()),
                Kind::Garbage => (200, b"<html><body>Moved</body></html>".to_vec()),
                Kind::Empty => (200, Vec::new()),
                Kind::NoId | Kind::LowerCaseId | Kind::NoStatus => (200, malformed(kind, &path)),
                Kind::Refused => unreachable!(),
            };
            s.set(&path, status, body);
        }
    }
    (s, mirrors)
}

/// The README demo after its first release (2026-05-01, from the bundled snapshot).
struct Demo {
    _dir: tempfile::TempDir,
    loaded: Loaded,
}

fn demo() -> Demo {
    demo_edited(|_| {})
}

fn demo_edited(edit: impl FnOnce(&Path)) -> Demo {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &root().join("examples/local"),
        &dir.path().join("examples/local"),
    );
    copy_dir(&root().join("templates"), &dir.path().join("templates"));
    edit(dir.path());
    let loaded = stackbot::config::load(&dir.path().join("examples/local/stackbot.yaml")).unwrap();
    let d = Demo { _dir: dir, loaded };
    let ctx = d.ctx(day("2026-05-01"));
    stackbot::pipeline::release::release(&ctx, &d.forge(&ctx), &Selection::default()).unwrap();
    d
}

fn day(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

impl Demo {
    fn ctx(&self, today: NaiveDate) -> Context {
        Context::fixed(self.loaded.clone(), today)
    }

    fn forge(&self, ctx: &Context) -> LocalForge {
        LocalForge::from_config(&self.loaded, ctx.clock.clone()).unwrap()
    }

    /// `status` on `today` with upstream read live from the fixture server with `faults`.
    fn status(&self, today: NaiveDate, faults: &[Fault]) -> Status {
        let (_server, mirrors) = upstream(faults);
        let ctx = self.ctx(today);
        let opts = DetectOptions {
            mirrors,
            live: true,
            http: Some(HttpOptions {
                attempts: 2,
                backoff: Duration::from_millis(1),
                max_wait: Duration::from_millis(5),
                ..HttpOptions::default()
            }),
            ..DetectOptions::default()
        };
        let (report, data, _) = stackbot::pipeline::detect::detect_with(&ctx, &opts, true).unwrap();
        let detected = stackbot::pipeline::detect::Detected::new(report, &data);
        stackbot::pipeline::status::status_from(&ctx, &self.forge(&ctx), &detected).unwrap()
    }
}

/// How favourable a verdict is: `unknown` and `fail` both are not compliance.
fn favour(v: Verdict) -> u8 {
    match v {
        Verdict::Pass => 2,
        Verdict::Warn => 1,
        Verdict::Unknown | Verdict::Fail => 0,
    }
}

/// Every subject's verdict, by a name that is the same with and without faults.
fn verdicts(s: &Status) -> BTreeMap<String, (Verdict, Vec<String>)> {
    let stacks = s.stacks.iter().map(|r| {
        (
            format!("{} {}", r.stack, r.minor),
            (r.scs0210.verdict, r.scs0210.unknown.clone()),
        )
    });
    let tenants = s.tenants.iter().map(|t| {
        (
            format!(
                "tenant {} {:?}",
                t.tenant,
                t.stack.as_ref().map(|x| x.to_string())
            ),
            (t.scs0210.verdict, t.scs0210.unknown.clone()),
        )
    });
    stacks.chain(tenants).collect()
}

/// What is wrong with `faulty` compared with `full`, in words (empty: nothing).
fn worse_only(full: &Status, faulty: &Status, faults: &[Fault]) -> Vec<String> {
    let mut out = Vec::new();
    if faulty.compliant && !full.compliant {
        out.push(format!("{faults:?}: compliant: true, with all data false"));
    }
    let (all, some) = (verdicts(full), verdicts(faulty));
    for (subject, (want, _)) in &all {
        match some.get(subject) {
            Some((got, unknown)) => {
                if favour(*got) > favour(*want) {
                    out.push(format!(
                        "{faults:?}: {subject} is {} (all data: {})",
                        got.word(),
                        want.word()
                    ));
                }
                if *got == Verdict::Unknown && unknown.is_empty() {
                    out.push(format!(
                        "{faults:?}: {subject} is unknown and names no source"
                    ));
                }
            }
            // A row that disappears is fine only when nothing was known favourably of it.
            None if favour(*want) == 0 => {}
            None => out.push(format!(
                "{faults:?}: {subject} ({}) disappeared",
                want.word()
            )),
        }
    }
    out
}

#[test]
fn no_upstream_fault_alone_or_paired_makes_a_verdict_more_favourable() {
    let demo = demo();
    let singles: Vec<Fault> = SOURCES.iter().flat_map(|s| faults_of(*s)).collect();
    // Pairs of different sources, each fault of the first with a fault of the second that
    // rotates through the second's list: every fault occurs in a pair with every other source.
    let mut pairs: Vec<[Fault; 2]> = Vec::new();
    for (i, a) in SOURCES.iter().enumerate() {
        for b in &SOURCES[i + 1..] {
            let (fa, fb) = (faults_of(*a), faults_of(*b));
            for (k, x) in fa.iter().enumerate() {
                pairs.push([*x, fb[k % fb.len()]]);
            }
        }
    }
    let mut problems = Vec::new();
    let mut unknown_seen = 0;
    // Before a release is due, while the critical CVE fails 1.33, on 1.33's end-of-life day.
    for today in ["2026-05-01", "2026-06-28"].map(day) {
        let full = demo.status(today, &[]);
        assert!(
            full.scs0210.unreadable.is_empty(),
            "all data is read: {:?}",
            full.scs0210.unreadable
        );
        assert!(
            verdicts(&full).values().any(|(v, _)| *v == Verdict::Fail),
            "the demo fails somewhere with all data on {today}: the comparison is not vacuous"
        );
        let cases = singles
            .iter()
            .map(std::slice::from_ref)
            .chain(pairs.iter().map(|p| p.as_slice()));
        for faults in cases {
            let faulty = demo.status(today, faults);
            problems.extend(worse_only(&full, &faulty, faults));
            // A verdict source that failed is named as unreadable (the markers are read only
            // when the releases list fails, and a 404 of a marker is "not published").
            let verdict_source = faults.iter().any(|(s, _)| *s != Src::Markers);
            if verdict_source && faulty.scs0210.unreadable.is_empty() {
                problems.push(format!("{faults:?} on {today}: no source named unreadable"));
            }
            unknown_seen += faulty.scs0210.stacks.unknown;
        }
    }
    assert!(unknown_seen > 0, "faults did make verdicts unknown");
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn a_403_releases_api_with_failing_markers_is_unknown_everywhere_never_compliant() {
    // The issue's own reproduction: before the fix every stack was `pass` and
    // `compliant: true`, including 1.33 whose released version has a critical CVE.
    let demo = demo();
    let s = demo.status(
        day("2026-05-01"),
        &[
            (Src::Releases, Kind::Forbidden),
            (Src::Markers, Kind::ServerError),
        ],
    );
    assert!(!s.compliant);
    assert_eq!(s.scs0210.verdict, Verdict::Unknown);
    for r in &s.stacks {
        assert_eq!(
            r.scs0210.verdict,
            Verdict::Unknown,
            "{} {}",
            r.stack,
            r.minor
        );
        assert!(
            r.scs0210
                .unknown
                .iter()
                .any(|u| u.contains("Kubernetes releases list") && u.contains("HTTP 403")),
            "the verdict names the source and why: {:?}",
            r.scs0210.unknown
        );
        assert_ne!(
            r.state,
            stackbot::status::StackState::Current,
            "{} {}: nothing read is not `current`",
            r.stack,
            r.minor
        );
    }
    for t in &s.tenants {
        assert_ne!(t.scs0210.verdict, Verdict::Pass, "{}", t.tenant);
    }
    // Provenance: the releases list is unreadable with why, the markers read in its place
    // too; the schedule was read live, from its URL, on the run's day.
    let source = |key: &str| s.sources.iter().find(|r| r.key == key).unwrap();
    let releases = source("kubernetes/releases");
    assert_eq!(
        releases.url.as_deref(),
        Some("https://api.github.com/repos/kubernetes/kubernetes/releases")
    );
    assert!(
        matches!(&releases.read, stackbot::compliance::Read::Unreadable { why, .. } if why.contains("403")),
        "{releases:?}"
    );
    assert!(!source("kubernetes/stable-1.34").read.is_read());
    let schedule = source("kubernetes/schedule");
    assert!(matches!(
        schedule.read,
        stackbot::compliance::Read::Live { at: Some(_) }
    ));
    assert!(schedule.url.as_deref().unwrap().ends_with("schedule.yaml"));
}

/// `stackbot -c examples/local/stackbot.yaml --now DAY ARGS…` in `dir`: exit code, stdout.
fn cli(dir: &Path, today: &str, args: &[&str]) -> (Option<i32>, String) {
    let (code, stdout, _) = crate::status::demo_cli(dir, today, args);
    (code, stdout)
}

/// The demo snapshot as a run records it when the releases API answers 403 and every
/// `stable-1.NN.txt` marker 500.
fn faulty_snapshot(dir: &Path) -> std::path::PathBuf {
    let mut snap: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("examples/local/upstream-2026-05-01.json")).unwrap(),
    )
    .unwrap();
    let entries = snap["entries"].as_object_mut().unwrap();
    entries.insert(
        "kubernetes/releases".into(),
        serde_json::json!({"result": "error", "message":
            "https://api.github.com/repos/kubernetes/kubernetes/releases?per_page=100: HTTP 403 (rate limited)"}),
    );
    for m in 33..=36 {
        entries.insert(
            format!("kubernetes/stable-1.{m}"),
            serde_json::json!({"result": "error", "message":
                format!("https://dl.k8s.io/release/stable-1.{m}.txt: HTTP 500")}),
        );
    }
    let path = dir.join("faulty.json");
    std::fs::write(&path, serde_json::to_string(&snap).unwrap()).unwrap();
    path
}

#[test]
fn a_snapshot_marking_sources_unreadable_exits_1_and_is_never_compliant_on_any_surface() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &root().join("examples/local"),
        &dir.path().join("examples/local"),
    );
    copy_dir(&root().join("templates"), &dir.path().join("templates"));
    let (code, _) = cli(dir.path(), "2026-05-01", &["release"]);
    assert_eq!(code, Some(0), "the demo's first release");
    let snap = faulty_snapshot(dir.path());
    let snap = snap.to_str().unwrap();
    // docs/status.md: a source the verdicts depend on that could not be read is exit 1, for a
    // replay of a snapshot that recorded the failure too.
    let (code, out) = cli(dir.path(), "2026-05-01", &["detect", "--snapshot", snap]);
    assert_eq!(code, Some(1), "{out}");
    let (code, _) = cli(
        dir.path(),
        "2026-05-01",
        &["--format", "json", "detect", "--snapshot", snap],
    );
    assert_eq!(code, Some(1));
    // The bundled snapshot reads everything: exit 0.
    let (code, _) = cli(dir.path(), "2026-05-01", &["detect"]);
    assert_eq!(code, Some(0));
    // status: a report, exit 0, but never compliant, every verdict unknown naming the source.
    let (code, out) = cli(
        dir.path(),
        "2026-05-01",
        &["--format", "json", "status", "--snapshot", snap],
    );
    assert_eq!(code, Some(0));
    let s: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(s["compliant"], false);
    assert_eq!(s["scs0210"]["verdict"], "unknown");
    for row in s["stacks"].as_array().unwrap() {
        assert_eq!(row["scs0210"]["verdict"], "unknown", "{row}");
        assert!(
            row["scs0210"]["unknown"][0]
                .as_str()
                .unwrap()
                .contains("HTTP 403")
        );
    }
    let (_, md) = cli(
        dir.path(),
        "2026-05-01",
        &["--format", "markdown", "status", "--snapshot", snap],
    );
    // The headline (what the dashboard issue opens with) claims no compliance.
    let headline = md
        .lines()
        .find(|l| l.contains("SCS 0210 status as of"))
        .unwrap();
    assert!(!headline.contains("✅"), "{headline}");
    assert!(
        headline.starts_with("❔") && headline.contains("NOT compliant"),
        "{headline}"
    );
}

#[test]
fn a_tenant_whose_clusters_cannot_be_judged_is_never_pass() {
    let broken = |root: &Path| {
        let acme = root.join("examples/local/tenants/acme/k8s");
        std::fs::create_dir_all(&acme).unwrap();
        std::fs::write(
            acme.join("prod.yaml"),
            "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: prod\n  namespace: team-a\nspec:\n  topology:\n    class: openstack-scs2-1-34-v1\n    version: v1.34.7\n",
        )
        .unwrap();
        std::fs::write(acme.join("broken.yaml"), "kind: Cluster\nspec: [unclosed\n").unwrap();
        std::fs::write(
            acme.join("staging.yaml"),
            "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: staging\nspec:\n  topology:\n    class: openstack-scs2-1-34-v1\n    version: 1.34.7\n",
        )
        .unwrap();
        let config = root.join("examples/local/stackbot.yaml");
        let text = std::fs::read_to_string(&config).unwrap().replace(
            "    files: [\"clusters/*.yaml\"]\n",
            "    files: [\"clusters/*.yaml\"]\n    clusters: [\"k8s/*.yaml\"]\n",
        );
        std::fs::write(config, text).unwrap();
    };
    let demo = demo_edited(broken);
    let (ctx, today) = (demo.ctx(day("2026-05-01")), day("2026-05-01"));
    let s =
        stackbot::pipeline::status::status(&ctx, &demo.forge(&ctx), &Selection::default()).unwrap();
    assert_eq!(s.as_of, today);
    let acme = s.tenants.iter().find(|t| t.tenant == "acme").unwrap();
    assert_ne!(acme.scs0210.verdict, Verdict::Pass);
    let named = |file: &str| acme.scs0210.unknown.iter().any(|u| u.contains(file));
    assert!(named("k8s/broken.yaml"), "{:?}", acme.scs0210.unknown);
    assert!(named("k8s/staging.yaml"), "{:?}", acme.scs0210.unknown);
    assert!(!s.compliant);
}

/// One fact, one answer, when a release's Kubernetes version cannot be read: its notes name
/// none and its `metadata.yaml`, listed with the release, does not download. `status` does not
/// fail on it (it is a report: exit 0, docs/status.md) and does not drop it (that would read as
/// "never released", the minor window's verdict): the series keeps its latest release, its
/// Kubernetes version unknown, and the verdict is `unknown` naming the file and the cause; not
/// compliant. The `release` summary and the dashboard say the same of the series.
#[test]
fn a_release_whose_metadata_cannot_be_read_is_unknown_in_status_the_summary_and_the_dashboard() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    copy_dir(&root().join("examples/local"), &dir.join("examples/local"));
    copy_dir(&root().join("templates"), &dir.join("templates"));
    let (code, _, err) = crate::status::demo_cli(dir, "2026-05-01", &["release"]);
    assert!(code.is_some_and(|c| c <= 1), "{err}");
    let tag = "openstack-scs2-1-33-v1";
    let releases = dir.join(".stackbot/forge/releases/scs/cluster-stacks");
    let release = crate::support::local_release(&releases, tag);
    let manifest = release.join("release.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    json["body"] = "Notes that name no Kubernetes version.".into();
    std::fs::write(&manifest, serde_json::to_vec_pretty(&json).unwrap()).unwrap();
    std::fs::remove_file(release.join("assets/metadata.yaml")).unwrap();

    let day = "2026-06-01";
    let (code, out, err) = crate::status::demo_cli(dir, day, &["--format", "json", "status"]);
    assert_eq!(code, Some(0), "status is a report: {err}");
    let status: serde_json::Value = serde_json::from_str(&out).unwrap();
    let row = status["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["minor"] == "1.33")
        .unwrap()
        .clone();
    assert_eq!(row["latest_release"]["tag"], tag, "kept: {row}");
    assert!(row["latest_release"]["kubernetes"].is_null(), "{row}");
    assert_eq!(row["scs0210"]["verdict"], "unknown", "{row}");
    let named = row["scs0210"]["unknown"]
        .as_array()
        .unwrap()
        .iter()
        .any(|u| {
            u.as_str()
                .is_some_and(|u| u.contains(tag) && u.contains("metadata.yaml could not be read"))
        });
    assert!(named, "the verdict names the file: {}", row["scs0210"]);
    assert_eq!(status["compliant"], false);
    assert!(
        status["warnings"]
            .to_string()
            .contains("metadata.yaml could not be read"),
        "{}",
        status["warnings"]
    );

    // The release summary (its tenants left to `tenants` runs) and the dashboard it writes. A
    // verdict it could not decide makes the run exit 1 (transient: the next run reads again),
    // naming the file.
    let (code, out, err) =
        crate::status::demo_cli(dir, day, &["--format", "json", "release", "--skip-tenants"]);
    assert_eq!(code, Some(1), "{err}");
    let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        summary["failed"]
            .to_string()
            .contains("metadata.yaml could not be read"),
        "{}",
        summary["failed"]
    );
    let series = summary["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["minor"] == "1.33")
        .unwrap();
    for field in ["state", "due", "due_window", "overdue", "scs0210"] {
        assert_eq!(series[field], row[field], "release series[] {field}");
    }
    let (_, md, _) = crate::status::demo_cli(dir, day, &["--format", "markdown", "status"]);
    assert!(md.contains("metadata.yaml could not be read"), "{md}");
}

/// The tenant stage and a release whose Kubernetes version cannot be read (its notes name none,
/// its `metadata.yaml` does not download): it is never proposed to a tenant, and neither is
/// anything else. Leaving that series out would read as "nothing released" for it (a tenant's
/// open pull request for it could be withdrawn on missing data), so the stage stops before any
/// write: transient (exit 1), naming the release and the file; the next run reads it again.
/// `status` goes on and says `unknown` for it
/// (`a_release_whose_metadata_cannot_be_read_is_unknown_in_status_the_summary_and_the_dashboard`).
#[test]
fn a_release_whose_metadata_cannot_be_read_is_never_proposed_and_the_tenant_stage_writes_nothing() {
    let d = demo();
    let tag = "openstack-scs2-1-34-v1";
    let releases = d
        ._dir
        .path()
        .join(".stackbot/forge/releases/scs/cluster-stacks");
    let release = crate::support::local_release(&releases, tag);
    let manifest = release.join("release.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    json["body"] = "Notes that name no Kubernetes version.".into();
    std::fs::write(&manifest, serde_json::to_vec_pretty(&json).unwrap()).unwrap();
    std::fs::remove_file(release.join("assets/metadata.yaml")).unwrap();

    let ctx = d.ctx(day("2026-05-02"));
    let forge = crate::support::read_log::ReadLog::new(d.forge(&ctx));
    let opts = stackbot::pipeline::tenants::options(false);
    let err = stackbot::pipeline::tenants::run(&ctx, &forge, &opts).unwrap_err();
    assert_eq!(forge.writes(), 0, "{:?}", forge.calls());
    assert_eq!(
        err.class(),
        stackbot::pipeline::exit::Class::Transient,
        "{err}"
    );
    let said = err.to_string();
    assert!(
        said.contains(tag) && said.contains("metadata.yaml could not be read"),
        "{said}"
    );
}

/// As above, when the release's `metadata.yaml` downloads but says no version (not YAML, or no
/// `versions.kubernetes`): the same stop before any write, naming the release, the file and
/// what is wrong; the file is for a person to fix (exit 2), the next run reads it again.
#[test]
fn a_release_whose_metadata_is_garbage_is_never_proposed_and_the_tenant_stage_writes_nothing() {
    for (garbage, wrong) in [
        ("{ not: [yaml", "metadata.yaml"),
        ("versions:\n  other: 1\n", "kubernetes"),
    ] {
        let d = demo();
        let tag = "openstack-scs2-1-34-v1";
        let releases = d
            ._dir
            .path()
            .join(".stackbot/forge/releases/scs/cluster-stacks");
        let release = crate::support::local_release(&releases, tag);
        let manifest = release.join("release.json");
        let mut json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
        json["body"] = "Notes that name no Kubernetes version.".into();
        std::fs::write(&manifest, serde_json::to_vec_pretty(&json).unwrap()).unwrap();
        std::fs::write(release.join("assets/metadata.yaml"), garbage).unwrap();

        let ctx = d.ctx(day("2026-05-02"));
        let forge = crate::support::read_log::ReadLog::new(d.forge(&ctx));
        let opts = stackbot::pipeline::tenants::options(false);
        let err = stackbot::pipeline::tenants::run(&ctx, &forge, &opts).unwrap_err();
        assert_eq!(forge.writes(), 0, "{garbage:?}: {:?}", forge.calls());
        assert_eq!(err.class(), stackbot::pipeline::exit::Class::Input, "{err}");
        let said = err.to_string();
        assert!(
            said.contains(tag)
                && said.contains("metadata.yaml could not be read")
                && said.contains(wrong),
            "{garbage:?}: {said}"
        );
    }
}
