//! `stackbot detect` against a local upstream server serving the "as of 2026-05-01" fixtures.
//!
//! Most scenarios call the library (`pipeline::detect::detect`) with short retry backoffs so
//! the suite stays fast; the command-line contract is checked through the binary.

use crate::support::shared;
use crate::support::upstream_server;

use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use chrono::NaiveDate;
use stackbot::config::{self, Loaded};
use stackbot::resolve::{MinorStatus, Report, Status};
use stackbot::upstream::http::{HttpClient, HttpOptions, RequestStats};
use stackbot::upstream::{DetectOptions, UpstreamData, UpstreamError, snapshot};
use upstream_server::UpstreamServer;

const RELEASES: &str = "/github/repos/kubernetes/kubernetes/releases";
const PAGE1: &str = "/github/repos/kubernetes/kubernetes/releases?per_page=100";
const IMG_1_34_7: &str = "/capi/ubuntu-2404-kube-v1.34/ubuntu-2404-kube-v1.34.7.qcow2.CHECKSUM";
const SHA_1_34_7: &str = "f7bf12297833cca14de6d24081c8a01e99143651e4c01431b911375300550fe0";
const SHA_1_34_6: &str = "c59fb893be8320d7112473290358320fad2756e3e31dce4f90ae8bda9d289a3d";
const SHA_1_33_10: &str = "efc3817b565c407710724b9d7b51cbb433638aad6b613b64843da28d58a777aa";

use crate::support::root;

fn fixtures() -> PathBuf {
    root().join("tests/fixtures/upstream")
}

fn demo_config() -> PathBuf {
    root().join("examples/local/stackbot.yaml")
}

fn demo_snapshot() -> PathBuf {
    root().join("examples/local/upstream-2026-05-01.json")
}

fn now() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 5, 1).unwrap()
}

fn releases() -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(fixtures().join("kubernetes-releases.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The fixture server: the releases list in pages of 25 (3 pages), markers, schedule, images,
/// and the cloud-provider-openstack Helm index.
fn fixture_server() -> UpstreamServer {
    UpstreamServer::with_fixtures()
}

fn serve_helm(s: &UpstreamServer) {
    s.serve_helm_fixtures();
}

/// Real upstream URL prefixes (as in the demo config) → the fixture server.
fn mirrors(s: &UpstreamServer) -> Vec<(String, String)> {
    s.fixture_mirrors()
}

fn fast_http() -> HttpOptions {
    HttpOptions {
        attempts: 3,
        backoff: Duration::from_millis(5),
        max_wait: Duration::from_millis(50),
        ..HttpOptions::default()
    }
}

/// Detection through the pipeline, as of `now`.
fn detect_counted(
    loaded: &Loaded,
    opts: &DetectOptions,
    now: chrono::NaiveDate,
) -> Result<(Report, UpstreamData, RequestStats), UpstreamError> {
    stackbot::pipeline::detect::detect(
        &stackbot::pipeline::Context::fixed(loaded.clone(), now),
        opts,
    )
}

fn live(s: &UpstreamServer) -> DetectOptions {
    DetectOptions {
        mirrors: mirrors(s),
        live: true,
        http: Some(fast_http()),
        ..DetectOptions::default()
    }
}

fn demo() -> Loaded {
    config::load(&demo_config()).unwrap()
}

fn run(loaded: &Loaded, opts: &DetectOptions) -> (Report, UpstreamData, RequestStats) {
    detect_counted(loaded, opts, now()).unwrap()
}

fn minor<'a>(r: &'a Report, m: &str) -> &'a MinorStatus {
    r.minors
        .iter()
        .find(|x| x.minor.to_string() == m)
        .unwrap_or_else(|| panic!("no row for {m}: {r:#?}"))
}

fn kube(m: &MinorStatus) -> String {
    m.kubernetes.map(|k| k.to_string()).unwrap_or_default()
}

fn release_set_version(m: &MinorStatus) -> Option<String> {
    m.release_set.as_ref().map(|s| s.kubernetes.to_string())
}

#[test]
fn fixture_scenario_as_of_2026_05_01() {
    let s = fixture_server();
    let (r, _, _) = run(&demo(), &live(&s));
    assert_eq!(
        s.count_prefix(&format!("{PAGE1}&page=3")),
        1,
        "all three pages of releases were read"
    );

    let minors: Vec<String> = r.minors.iter().map(|m| m.minor.to_string()).collect();
    assert_eq!(minors, ["1.33", "1.34", "1.35", "1.36"]);
    assert!(r.new_minors.is_empty());

    // `minors: supported` reads the same four from the schedule on that day.
    let mut supported = demo();
    supported.config.stacks[0].minors =
        config::MinorSelection::Keyword(config::MinorKeyword::Supported);
    let (rs, _, _) = run(&supported, &live(&s));
    assert_eq!(rs, r);
    let after_eol = detect_counted(
        &supported,
        &live(&s),
        NaiveDate::from_ymd_opt(2026, 6, 29).unwrap(),
    )
    .unwrap()
    .0;
    let minors: Vec<String> = after_eol
        .minors
        .iter()
        .map(|m| m.minor.to_string())
        .collect();
    assert_eq!(
        minors,
        ["1.34", "1.35", "1.36"],
        "1.33 reached end of life on 2026-06-28"
    );

    // 1.33: newest patch v1.33.11 has no image yet; a release would use v1.33.10.
    let m33 = minor(&r, "1.33");
    assert_eq!(kube(m33), "v1.33.11");
    assert_eq!(m33.status, Status::Waiting);
    assert_eq!(m33.missing.len(), 1);
    assert!(
        m33.missing[0].contains("ubuntu-capi-image-v1.33.11"),
        "{:?}",
        m33.missing
    );
    assert_eq!(m33.node_image, None);
    let set33 = m33.release_set.as_ref().expect("fallback set");
    assert_eq!(set33.kubernetes.to_string(), "v1.33.10");
    assert_eq!(set33.node_image.sha256, SHA_1_33_10);
    assert_eq!(set33.components["ccm"].version, "2.33.1");
    assert_eq!(
        set33.components["csi"].version, "2.33.1",
        "not 2.33.0-alpha.2"
    );

    // 1.34: complete.
    let m34 = minor(&r, "1.34");
    assert_eq!(kube(m34), "v1.34.7");
    assert_eq!(m34.status, Status::Complete);
    assert!(m34.missing.is_empty() && m34.errors.is_empty());
    let img = m34.node_image.as_ref().unwrap();
    assert_eq!(img.name, "ubuntu-capi-image-v1.34.7");
    assert_eq!(
        img.url,
        "https://nbg1.your-objectstorage.com/osism/openstack-k8s-capi-images/ubuntu-2404-kube-v1.34/ubuntu-2404-kube-v1.34.7.qcow2"
    );
    assert_eq!(img.sha256, SHA_1_34_7);
    assert_eq!(
        m34.components["openstack-cloud-controller-manager"],
        "2.34.2"
    );
    assert_eq!(m34.components["openstack-cinder-csi"], "2.34.3");
    assert_eq!(
        m34.components["cilium"], "1.18.9",
        "pinned; 1.19.0-pre.3 ignored"
    );
    assert_eq!(m34.components["metrics-server"], "3.13.0");
    // No stackbot.lock in the checkout: what is released is not known, so no rule governs
    // (no `due`); the newest patch's own clock is still shown.
    assert_eq!((m34.due, m34.due_window, m34.overdue), (None, None, false));
    let newest = m34.newest_unreleased.as_ref().unwrap();
    assert_eq!(
        (newest.rule, newest.release_by),
        (
            stackbot::compliance::Rule::CriticalCve,
            NaiveDate::from_ymd_opt(2026, 4, 29)
        ),
        "published 2026-04-15 + 14 days: it fixes the critical CVE-2026-0001 (fixtures/upstream/cve)"
    );
    assert_eq!(release_set_version(m34).as_deref(), Some("v1.34.7"));
    assert_eq!(
        m34.release_set.as_ref().unwrap().components["csi"]
            .digest
            .as_deref(),
        Some("367f83412a0c7990a36df47cb5b650e88f5cb0774ebbcf81634cef088112a9a6"),
        "digest from the Helm index"
    );

    // 1.35: charts exist, but the fixtures hold no CHECKSUM for any 1.35 image.
    let m35 = minor(&r, "1.35");
    assert_eq!(kube(m35), "v1.35.4");
    assert_eq!(m35.status, Status::Waiting);
    assert_eq!(m35.components["openstack-cinder-csi"], "2.35.0");
    assert_eq!(m35.release_set, None);

    // 1.36: the draft v1.36.1 and the v1.36.0-rc.* pre-releases are skipped; 2.36.x charts are
    // not in the index yet (they appeared 2026-05-13).
    let m36 = minor(&r, "1.36");
    assert_eq!(kube(m36), "v1.36.0");
    assert_eq!(m36.status, Status::Waiting);
    let missing = m36.missing.join("\n");
    assert!(
        missing.contains("openstack-cloud-controller-manager 2.36.x"),
        "{missing}"
    );
    assert!(missing.contains("openstack-cinder-csi 2.36.x"), "{missing}");
    assert_eq!(
        m36.components.keys().collect::<Vec<_>>(),
        ["cilium", "metrics-server"],
        "only the pinned charts resolve"
    );
    assert_eq!(
        m36.newest_unreleased.as_ref().unwrap().release_by,
        NaiveDate::from_ymd_opt(2026, 8, 20),
        "new minor: + 120 days"
    );
    assert_eq!(m36.release_set, None);
}

#[test]
fn complete_sets_equal_the_release_sets_render_was_built_from() {
    let s = fixture_server();
    let (r, _, _) = run(&demo(), &live(&s));
    let file = root().join("tests/fixtures/release-sets-2026-05-01.yaml");
    let expected =
        stackbot::lock::parse_release_sets(&std::fs::read_to_string(&file).unwrap(), &file)
            .unwrap();
    let got: Vec<_> = r
        .minors
        .iter()
        .filter_map(|m| m.release_set.clone())
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn once_the_2_36_charts_are_published_1_36_waits_only_for_its_image() {
    let s = fixture_server();
    let later = shared::fixture("helm-indexes/cloud-provider-openstack-2026-05-13.yaml");
    s.set("/cpo/index.yaml", 200, std::fs::read(later).unwrap());
    // As of the day that index was recorded: `--now` never picks a chart the index says was
    // created later (issue 12, item 8), and 2.36.0 was created on 2026-05-13.
    let on = NaiveDate::from_ymd_opt(2026, 5, 13).unwrap();
    let (r, _, _) = detect_counted(&demo(), &live(&s), on).unwrap();
    let m36 = minor(&r, "1.36");
    assert_eq!(
        m36.components["openstack-cloud-controller-manager"],
        "2.36.0"
    );
    assert_eq!(m36.components["openstack-cinder-csi"], "2.36.0");
    assert_eq!(m36.missing.len(), 1, "{:?}", m36.missing);
    assert!(m36.missing[0].starts_with("node image ubuntu-capi-image-v1.36.0"));
}

#[test]
fn now_never_picks_a_chart_created_after_that_day() {
    // The same later index, evaluated as of 2026-05-01: 2.36.0 (created 2026-05-13) did not
    // exist yet, so 1.36 still waits for its charts.
    let s = fixture_server();
    let later = shared::fixture("helm-indexes/cloud-provider-openstack-2026-05-13.yaml");
    s.set("/cpo/index.yaml", 200, std::fs::read(later).unwrap());
    let (r, _, _) = run(&demo(), &live(&s));
    let m36 = minor(&r, "1.36");
    assert!(
        !m36.components.values().any(|v| v == "2.36.0"),
        "{:?}",
        m36.components
    );
    assert!(
        m36.missing.iter().any(|m| m.contains("2.36.x")),
        "{:?}",
        m36.missing
    );
}

#[test]
fn unordered_results_across_many_pages_give_the_same_answer() {
    let s = fixture_server();
    let (baseline, _, _) = run(&demo(), &live(&s));

    let shuffled = UpstreamServer::start();
    let mut list = releases();
    list.reverse(); // oldest first: the newest patches are on the last page
    list.rotate_left(17);
    shuffled.paginate_json(RELEASES, &list, 7);
    shuffled.serve_dir("/capi", &fixtures().join("capi-images"));
    shuffled.serve_dir("/web", &fixtures());
    shuffled.serve_dir("/cve", &fixtures().join("cve"));
    serve_helm(&shuffled);
    let (r, _, _) = run(&demo(), &live(&shuffled));
    assert_eq!(r, baseline);
    assert!(
        shuffled.count_prefix(&format!("{PAGE1}&page=10")) == 1,
        "10 pages followed"
    );
}

#[test]
fn rate_limited_api_falls_back_to_markers() {
    let s = fixture_server();
    s.set_with_headers(
        PAGE1,
        403,
        r#"{"message":"API rate limit exceeded for 127.0.0.1."}"#,
        &[("x-ratelimit-remaining", "0")],
    );
    let (r, _, _) = run(&demo(), &live(&s));
    let warn = r.warnings.join("\n");
    assert!(
        warn.contains("HTTP 403") && warn.contains("rate limited"),
        "{warn}"
    );
    assert!(warn.contains("stable-1.NN.txt"), "{warn}");
    assert_eq!(s.count_prefix(PAGE1), 1, "403 is not retried");
    for (m, v) in [
        ("1.33", "v1.33.11"),
        ("1.34", "v1.34.7"),
        ("1.35", "v1.35.4"),
        ("1.36", "v1.36.0"),
    ] {
        let row = minor(&r, m);
        assert_eq!(kube(row), v);
        assert_eq!(row.published_at, None, "markers carry no dates");
        assert_eq!(row.due, None);
    }
    assert_eq!(minor(&r, "1.34").status, Status::Complete);
    assert_eq!(
        s.count_prefix("/dl/stable-1.37.txt"),
        1,
        "probes the next minor"
    );
    // Without the API only the marker's patch is known: no older fallback for 1.33.
    assert_eq!(minor(&r, "1.33").release_set, None);
}

#[test]
fn server_errors_are_retried_then_fall_back_to_markers() {
    let s = fixture_server();
    s.set(
        PAGE1,
        500,
        "<html><body>Internal Server Error</body></html>",
    );
    let (r, _, stats) = run(&demo(), &live(&s));
    assert_eq!(s.count_prefix(PAGE1), 3, "bounded retries");
    assert_eq!(stats.retries, 2);
    assert!(r.warnings.join("\n").contains("HTTP 500 (HTML error page)"));
    assert_eq!(kube(minor(&r, "1.36")), "v1.36.0");
    assert_eq!(minor(&r, "1.34").status, Status::Complete);
}

#[test]
fn retry_after_then_success_uses_the_api() {
    let s = fixture_server();
    s.fail_next(PAGE1, 1, 503, &[("Retry-After", "0")]);
    let (r, _, stats) = run(&demo(), &live(&s));
    assert_eq!(stats.retries, 1);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert!(minor(&r, "1.34").published_at.is_some());
}

#[test]
fn explicit_minors_report_a_new_minor_with_its_deadline() {
    let s = fixture_server();
    let mut loaded = demo();
    loaded.config.stacks[0].minors =
        config::MinorSelection::List(vec!["1.34".into(), "1.35".into()]);
    let (r, data, _) = run(&loaded, &live(&s));
    let minors: Vec<String> = r.minors.iter().map(|m| m.minor.to_string()).collect();
    assert_eq!(minors, ["1.34", "1.35"]);
    assert_eq!(r.new_minors.len(), 1);
    let n = &r.new_minors[0];
    assert_eq!(n.minor.to_string(), "1.36");
    assert_eq!(n.kubernetes.to_string(), "v1.36.0");
    assert_eq!(
        n.due,
        NaiveDate::from_ymd_opt(2026, 8, 20),
        "2026-04-22 + 120 days"
    );
    assert!(!n.overdue);
    // The verdict needs end of life, so the schedule is read even for an explicit list.
    assert!(data.entries.contains_key("kubernetes/schedule"));
    let later = detect_counted(
        &loaded,
        &live(&s),
        NaiveDate::from_ymd_opt(2026, 8, 21).unwrap(),
    )
    .unwrap()
    .0;
    assert!(later.new_minors[0].overdue);
}

#[test]
fn connection_failures_are_retried_and_name_the_url() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    }; // closed again: connections are refused
    let client = HttpClient::new(fast_http()).unwrap();
    let url = format!("http://127.0.0.1:{port}/index.yaml");
    let err = client.get(&url, None).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("GET {url}: 127.0.0.1 refused the connection")),
        "{err}"
    );
    assert_eq!(client.stats().requests, 3);
    assert_eq!(client.stats().retries, 2);
}

#[test]
fn malformed_checksum_is_an_error_for_that_minor_only() {
    let s = fixture_server();
    let (baseline, _, _) = run(&demo(), &live(&s));
    s.set(
        IMG_1_34_7,
        200,
        "NOT-A-HASH  ubuntu-2404-kube-v1.34.7.qcow2\n",
    );
    let (r, _, _) = run(&demo(), &live(&s));
    let m34 = minor(&r, "1.34");
    assert_eq!(m34.status, Status::Error);
    assert!(
        m34.errors[0].contains("ubuntu-2404-kube-v1.34.7.qcow2.CHECKSUM"),
        "{:?}",
        m34.errors
    );
    assert!(m34.errors[0].contains("not a sha256"), "{:?}", m34.errors);
    assert_eq!(m34.node_image, None, "never an unverified sha256");
    let set = m34.release_set.as_ref().unwrap();
    assert_eq!(set.kubernetes.to_string(), "v1.34.6", "newest complete set");
    assert_eq!(set.node_image.sha256, SHA_1_34_6);
    for m in ["1.33", "1.35", "1.36"] {
        assert_eq!(minor(&r, m), minor(&baseline, m), "{m} unaffected");
    }

    // A checksum for another file is just as wrong.
    s.set(
        IMG_1_34_7,
        200,
        format!("{SHA_1_34_7}  ubuntu-2404-kube-v1.34.6.qcow2\n"),
    );
    let (r, _, _) = run(&demo(), &live(&s));
    assert!(minor(&r, "1.34").errors[0].contains("expected `ubuntu-2404-kube-v1.34.7.qcow2`"));
}

#[test]
fn html_pages_and_truncated_json_are_clear_errors() {
    let s = fixture_server();
    s.set(&format!("{PAGE1}&page=2"), 200, r#"[{"tag_name": "v1.3"#);
    s.set(
        "/cpo/index.yaml",
        200,
        "<html><body><h1>Maintenance</h1></body></html>",
    );
    let (r, _, _) = run(&demo(), &live(&s));
    let warn = r.warnings.join("\n");
    assert!(
        warn.contains("page=2") && warn.contains("malformed or truncated"),
        "{warn}"
    );
    for m in &r.minors {
        assert_eq!(m.status, Status::Error, "{m:?}");
        assert!(
            m.errors
                .iter()
                .any(|e| e.contains("/index.yaml") && e.contains("Helm")),
            "{:?}",
            m.errors
        );
        assert_eq!(m.release_set, None);
    }
    // The rest is still reported.
    let m34 = minor(&r, "1.34");
    assert_eq!(kube(m34), "v1.34.7");
    assert_eq!(m34.node_image.as_ref().unwrap().sha256, SHA_1_34_7);
}

#[test]
fn oversized_responses_are_refused() {
    let s = fixture_server();
    s.set("/cpo/index.yaml", 200, vec![b'#'; 300_000]);
    let client = HttpClient::new(HttpOptions {
        max_bytes: 100_000,
        ..fast_http()
    })
    .unwrap();
    let err = client
        .get(&format!("{}/cpo/index.yaml", s.url()), None)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "GET {}/cpo/index.yaml: response larger than 100000 bytes; refusing to read it (`limits.upstream.max_bytes`; raise it in stackbot.yaml if the answer is genuine)",
            s.url()
        )
    );
    let mut opts = live(&s);
    opts.http = Some(HttpOptions {
        max_bytes: 100_000,
        ..fast_http()
    });
    let (r, _, _) = run(&demo(), &opts);
    assert!(minor(&r, "1.34").errors[0].contains("larger than 100000 bytes"));
}

#[test]
fn warm_run_costs_only_conditional_requests() {
    let s = fixture_server();
    let cache = tempfile::tempdir().unwrap();
    let mut opts = live(&s);
    opts.cache_dir = Some(cache.path().to_path_buf());
    let (cold, _, cold_stats) = run(&demo(), &opts);
    let not_found = s.seen().iter().filter(|x| x.status == 404).count() as u64;
    s.reset_counts();
    let (warm, _, warm_stats) = run(&demo(), &opts);
    eprintln!("cold: {cold_stats:?}\nwarm: {warm_stats:?}");
    assert_eq!(warm, cold);
    assert_eq!(cold_stats.conditional, 0);
    assert_eq!(warm_stats.requests, cold_stats.requests);
    // Every body seen before is revalidated, not downloaded; only the 404 probes repeat.
    assert_eq!(warm_stats.conditional, cold_stats.requests - not_found);
    assert_eq!(warm_stats.not_modified, warm_stats.conditional);
    assert!(s.seen().iter().all(|x| x.status == 304 || x.status == 404));
}

#[test]
fn snapshot_replay_equals_the_live_run_and_needs_no_network() {
    let s = fixture_server();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("snap.json");
    let mut opts = live(&s);
    opts.save = Some(file.clone());
    let (live_report, live_data, _) = run(&demo(), &opts);
    let before = s.count();
    let replay = DetectOptions {
        snapshot: Some(file.clone()),
        ..DetectOptions::default()
    };
    let (replayed, data, stats) = run(&demo(), &replay);
    assert_eq!(
        replayed.snapshot.and_then(|x| x.as_of),
        Some(now()),
        "a replay says which day its data is of"
    );
    let replayed = Report {
        snapshot: None,
        ..replayed
    };
    assert_eq!(replayed, live_report);
    assert_eq!(data, live_data);
    assert_eq!(stats, RequestStats::default());
    assert_eq!(s.count(), before);
    assert_eq!(snapshot::load(&file).unwrap(), live_data);
}

#[test]
fn token_goes_only_to_the_github_api_and_never_into_output() {
    let s = fixture_server();
    let mut loaded = demo();
    loaded.config.upstream.github_api = format!("{}/github", s.url());
    let mut opts = live(&s);
    opts.token = Some("sekret-token".into());
    let (r, _, _) = run(&loaded, &opts);
    for seen in s.seen() {
        let expect = seen
            .target
            .starts_with("/github/")
            .then_some("Bearer sekret-token");
        assert_eq!(seen.authorization.as_deref(), expect, "{}", seen.target);
    }
    assert!(!serde_json::to_string(&r).unwrap().contains("sekret"));
}

/// The shipped demo snapshot is exactly what a live run against the fixtures records.
/// Regenerate with `STACKBOT_REGENERATE_SNAPSHOT=1 cargo test --test integration detect::demo_snapshot`.
#[test]
fn demo_snapshot_is_current() {
    let s = fixture_server();
    let (_, data, _) = run(&demo(), &live(&s));
    if std::env::var_os("STACKBOT_REGENERATE_SNAPSHOT").is_some() {
        snapshot::save_as_of(&demo_snapshot(), &data, Some(now())).unwrap();
    }
    assert_eq!(
        snapshot::load(&demo_snapshot()).unwrap(),
        data,
        "examples/local/upstream-2026-05-01.json is stale: regenerate it (see this test's doc)"
    );
    assert_eq!(
        snapshot::open(&demo_snapshot()).unwrap().as_of(),
        Some(now())
    );
}

/// A replayed run's day and its data come from one read of the snapshot: the file read to
/// learn the day is the one replayed, even when it is replaced in between (before, the day was
/// read from the file once and the data a second time, so the two could disagree).
#[test]
fn a_run_replays_the_snapshot_it_read_its_day_from() {
    use clap::Parser;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("stackbot.yaml");
    std::fs::copy(demo_config(), &config).unwrap();
    let file = dir.path().join("upstream-2026-05-01.json");
    std::fs::copy(demo_snapshot(), &file).unwrap();
    let cli =
        stackbot::cli::Cli::parse_from(["stackbot", "-c", config.to_str().unwrap(), "detect"]);
    let ctx = stackbot::cli::Global::for_process(&cli).context().unwrap();
    assert_eq!(ctx.today, now(), "the day the snapshot was recorded for");

    std::fs::write(&file, "not a snapshot").unwrap();
    let opts = stackbot::pipeline::detect::options(&ctx, None, None);
    let (report, data, _) = stackbot::pipeline::detect::detect(&ctx, &opts)
        .expect("the snapshot read for the day is replayed, not read again");
    assert_eq!(data, snapshot::load(&demo_snapshot()).unwrap());
    assert_eq!(report.snapshot.map(|s| s.as_of), Some(Some(now())));

    // Another file than the one the day came from is read when the run opens it.
    let other = dir.path().join("other.json");
    std::fs::write(&other, "not a snapshot either").unwrap();
    let opts = stackbot::pipeline::detect::options(&ctx, Some(other), None);
    let Err(err) = stackbot::pipeline::detect::detect(&ctx, &opts) else {
        panic!("the other file is read, and refused");
    };
    assert!(err.to_string().contains("other.json"), "{err}");
}

fn stackbot(args: &[&str], cwd: &Path) -> (i32, String, String) {
    let out = Command::cargo_bin("stackbot")
        .unwrap()
        .current_dir(cwd)
        .env_remove("GITHUB_TOKEN")
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn cli_json_against_the_fixture_server_equals_snapshot_replay() {
    let s = fixture_server();
    let cfg = demo_config();
    let cfg = cfg.to_str().unwrap();
    let mut live_args = vec![
        "-c",
        cfg,
        "detect",
        "--format",
        "json",
        "--now",
        "2026-05-01",
        "--live",
    ];
    let mirror_args: Vec<String> = mirrors(&s)
        .iter()
        .map(|(a, b)| format!("{a}={b}"))
        .collect();
    for m in &mirror_args {
        live_args.extend(["--mirror", m.as_str()]);
    }
    let (code, live_out, err) = stackbot(&live_args, &root());
    assert_eq!(code, 0, "{err}");
    // The demo config replays its snapshot by default: no network at all.
    let (code, replay_out, err) = stackbot(
        &[
            "-c",
            cfg,
            "detect",
            "--format",
            "json",
            "--now",
            "2026-05-01",
        ],
        &root(),
    );
    assert_eq!(code, 0, "{err}");
    // The same report, except that each says where its data came from: the replay its
    // snapshot, and `sources[]` read live or from the snapshot, source by source.
    let mut replayed: serde_json::Value = serde_json::from_str(&replay_out).unwrap();
    assert_eq!(replayed["snapshot"]["as_of"], "2026-05-01");
    replayed.as_object_mut().unwrap().remove("snapshot");
    let mut live: serde_json::Value = serde_json::from_str(&live_out).unwrap();
    let keys = |v: &serde_json::Value, read: &str| -> Vec<String> {
        let list = v["sources"].as_array().expect("sources[]");
        assert!(list.iter().all(|s| s["read"] == read), "{list:?}");
        list.iter().map(|s| s["key"].to_string()).collect()
    };
    assert_eq!(keys(&live, "live"), keys(&replayed, "snapshot"));
    for v in [&mut live, &mut replayed] {
        v.as_object_mut().unwrap().remove("sources");
    }
    assert_eq!(live, replayed);

    let v: serde_json::Value = serde_json::from_str(&live_out).unwrap();
    let rows = v["minors"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    let r34 = rows.iter().find(|r| r["minor"] == "1.34").unwrap();
    assert_eq!(r34["stack"], "openstack/scs2");
    assert_eq!(r34["kubernetes"], "v1.34.7");
    assert_eq!(r34["published_at"], "2026-04-15T15:49:00Z");
    assert_eq!(r34["status"], "complete");
    assert_eq!(r34["missing"], serde_json::json!([]));
    assert_eq!(r34["node_image"]["sha256"], SHA_1_34_7);
    assert_eq!(r34["node_image"]["name"], "ubuntu-capi-image-v1.34.7");
    assert!(
        r34["node_image"]["url"]
            .as_str()
            .unwrap()
            .ends_with("ubuntu-2404-kube-v1.34.7.qcow2")
    );
    assert_eq!(r34["components"]["openstack-cinder-csi"], "2.34.3");
    // The local forge has released nothing yet: the minor window governs, as in `status`.
    assert_eq!(
        (&r34["due"], &r34["due_window"], &r34["overdue"]),
        (
            &serde_json::json!("2025-12-25"),
            &serde_json::json!("minor"),
            &serde_json::json!(true)
        ),
        "v1.34.0 of 2025-08-27 + 120 days"
    );
    let r36 = rows.iter().find(|r| r["minor"] == "1.36").unwrap();
    assert_eq!(r36["status"], "waiting");
    assert_eq!(r36["node_image"], serde_json::Value::Null);
}

#[test]
fn cli_save_then_snapshot_and_text_table() {
    let s = fixture_server();
    let dir = tempfile::tempdir().unwrap();
    let cfg = demo_config();
    let cfg = cfg.to_str().unwrap();
    let snap = dir.path().join("s.json");
    let mirror_args: Vec<String> = mirrors(&s)
        .iter()
        .map(|(a, b)| format!("{a}={b}"))
        .collect();
    let mut args = vec![
        "-c",
        cfg,
        "--now",
        "2026-05-01",
        "detect",
        "--live",
        "--save",
        snap.to_str().unwrap(),
    ];
    for m in &mirror_args {
        args.extend(["--mirror", m.as_str()]);
    }
    let (code, live_text, err) = stackbot(&args, dir.path());
    assert_eq!(code, 0, "{err}");
    let (code, replay_text, _) = stackbot(
        &[
            "-c",
            cfg,
            "--now",
            "2026-05-01",
            "detect",
            "--snapshot",
            snap.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(code, 0);
    assert_eq!(live_text, replay_text);
    assert!(live_text.starts_with("STACK"), "{live_text}");
    assert!(
        live_text.contains("openstack/scs2  1.33   v1.33.11"),
        "{live_text}"
    );
    assert!(
        live_text.contains("waiting for node image ubuntu-capi-image-v1.33.11"),
        "{live_text}"
    );

    let (code, help, _) = stackbot(&["detect", "--help"], dir.path());
    assert_eq!(code, 0);
    assert!(help.contains("Examples:") && help.contains("--snapshot"));

    let (code, _, err) = stackbot(&["-c", cfg, "detect", "--mirror", "nonsense"], dir.path());
    assert_eq!(code, 2, "{err}");

    std::fs::write(dir.path().join("not-a-snapshot.json"), "<html></html>").unwrap();
    let (code, _, err) = stackbot(
        &["-c", cfg, "detect", "--snapshot", "not-a-snapshot.json"],
        dir.path(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("not-a-snapshot.json: not a stackbot upstream snapshot"),
        "{err}"
    );
}

#[test]
fn the_verdict_reads_the_schedule_and_the_cve_feed_but_a_replay_never_asks_for_them() {
    let s = fixture_server();
    let ctx = stackbot::pipeline::Context::fixed(demo(), now());
    // The demo lists its minors explicitly, but the SCS 0210 verdict needs every minor's end
    // of life and the critical CVEs: a live run reads the schedule, the feed and its records.
    let (report, data, _) = stackbot::pipeline::detect::detect(&ctx, &live(&s)).unwrap();
    assert!(data.has(&stackbot::upstream::Key::Schedule));
    assert!(data.has(&stackbot::upstream::Key::CveFeed));
    assert!(data.has(&stackbot::upstream::Key::CveRecord("CVE-2026-0001".into())));
    let d = stackbot::pipeline::detect::Detected::new(report.clone(), &data);
    let eol = |m: &str| {
        d.end_of_life
            .get(&m.parse().unwrap())
            .map(|d| d.to_string())
    };
    assert_eq!(eol("1.33").as_deref(), Some("2026-06-28"));
    assert_eq!(eol("1.36").as_deref(), Some("2027-06-28"));
    assert!(report.unreadable.is_empty(), "{:?}", report.unreadable);
    // A snapshot recorded before stackbot read security facts is replayed as it is: nothing is
    // fetched, and the verdicts that depend on the missing facts say `unknown`.
    let mut old = data.clone();
    old.entries.retain(|k, _| {
        !k.starts_with("cve") && !k.contains("cve-feed") && k != "kubernetes/schedule"
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("old.json");
    snapshot::save(&file, &old).unwrap();
    let replay = DetectOptions {
        snapshot: Some(file),
        ..DetectOptions::default()
    };
    let (r, replayed, _) = stackbot::pipeline::detect::detect_with(&ctx, &replay, true).unwrap();
    assert_eq!(replayed, old, "nothing more was read");
    assert!(
        r.unreadable.is_empty(),
        "a replay never exits 1 for what it never recorded"
    );
    assert!(
        r.warnings.iter().any(|w| w.contains("no CVE data")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn an_unreadable_cve_record_makes_the_verdict_unknown_and_detect_exit_1() {
    let s = fixture_server();
    s.set("/cve/records/CVE-2026-0001", 503, "busy");
    let ctx = stackbot::pipeline::Context::fixed(demo(), now());
    let (report, _, _) = stackbot::pipeline::detect::detect(&ctx, &live(&s)).unwrap();
    assert!(
        report
            .unreadable
            .iter()
            .any(|u| u.contains("CVE-2026-0001") && u.contains("503")),
        "{:?}",
        report.unreadable
    );
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("SCS 0210 verdicts are unknown")),
        "{:?}",
        report.warnings
    );
}

#[test]
fn a_failing_cve_record_keeps_its_last_known_answer_marked_stale() {
    let s = fixture_server();
    let cache = tempfile::tempdir().unwrap();
    let mut opts = live(&s);
    opts.cache_dir = Some(cache.path().to_path_buf());
    let ctx = stackbot::pipeline::Context::fixed(demo(), now());
    let (_, first, _) = stackbot::pipeline::detect::detect(&ctx, &opts).unwrap();
    assert!(first.last_known.is_empty(), "nothing failed");
    s.set("/cve/records/CVE-2026-0001", 503, "busy");
    let (report, data, _) = stackbot::pipeline::detect::detect(&ctx, &opts).unwrap();
    assert!(!report.unreadable.is_empty());
    let d = stackbot::pipeline::detect::Detected::new(report, &data);
    let v: stackbot::model::KubeVersion = "v1.33.10".parse().unwrap();
    let today: NaiveDate = "2026-05-04".parse().unwrap();
    // Now: unknown (the record that decides it cannot be read)...
    let now = stackbot::compliance::evaluate(v, &d.compliance, today);
    assert_eq!(now.verdict, stackbot::compliance::Verdict::Unknown);
    // ...and what the last known answer said, kept for the dashboard (never for a decision).
    let (stale, from) = d
        .last_known
        .expect("the ETag cache remembers the last answer");
    assert!(from.is_some());
    let then = stackbot::compliance::evaluate(v, &stale, today);
    assert_eq!(then.verdict, stackbot::compliance::Verdict::Fail);
    assert_eq!(then.critical_cve().unwrap().cves, ["CVE-2026-0001"]);
}

/// A run reads each upstream source once (issue 29): every URL the detection of a `release`
/// or `status` run asks for (releases pages, markers, schedule, images, Helm indexes, the CVE
/// feed and its records) is requested once, though two components share the
/// cloud-provider-openstack Helm repository and several minors the same CVE records.
#[test]
fn a_live_detection_requests_each_upstream_url_once() {
    let s = fixture_server();
    let ctx = stackbot::pipeline::Context::fixed(demo(), now());
    stackbot::pipeline::detect::detect_with(&ctx, &live(&s), true).unwrap();
    let mut n: std::collections::BTreeMap<String, usize> = Default::default();
    for x in s.seen() {
        *n.entry(x.target).or_default() += 1;
    }
    for source in [
        "/github/",
        "/web/",
        "index.yaml",
        "/cve/index.json",
        "/cve/records/",
    ] {
        assert!(n.keys().any(|t| t.contains(source)), "{source}: {n:?}");
    }
    n.retain(|_, c| *c > 1);
    assert_eq!(n, Default::default());
}
