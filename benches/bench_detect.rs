//! Detect benchmark for `BENCHMARKS.md` (issue 7, "Figures in one place"); run it through
//! `scripts/bench`. Serves the "as of 2026-05-01" upstream fixtures from the test-support
//! server (ETags on, the Kubernetes releases list in pages of 25) and runs `detect` for the
//! demo configuration twice with one ETag cache directory: cold (empty cache), then warm.
//! Prints requests, conditional requests and `304` answers of each run.

use stackbot_testkit::upstream_server;

use std::time::Instant;

use chrono::NaiveDate;
use stackbot::config;
use stackbot::upstream::DetectOptions;
use upstream_server::UpstreamServer;
use upstream_server::upstream_fixtures as fixtures;

/// The same fixture server and mirrors as `tests/integration/detect.rs`.
fn fixture_server() -> UpstreamServer {
    let s = UpstreamServer::start();
    let text = std::fs::read_to_string(fixtures().join("kubernetes-releases.json")).unwrap();
    let releases: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    s.paginate_json(
        "/github/repos/kubernetes/kubernetes/releases",
        &releases,
        25,
    );
    s.serve_dir("/dl", &fixtures().join("dl.k8s.io/release"));
    s.serve_dir("/capi", &fixtures().join("capi-images"));
    s.serve_dir("/web", &fixtures());
    for (path, file) in [
        ("/cpo/index.yaml", "helm-index-cpo.yaml"),
        ("/cilium/index.yaml", "helm-index-cilium.yaml"),
        (
            "/metrics-server/index.yaml",
            "helm-index-metrics-server.yaml",
        ),
    ] {
        s.set(path, 200, std::fs::read(fixtures().join(file)).unwrap());
    }
    s
}

fn mirrors(s: &UpstreamServer) -> Vec<(String, String)> {
    let u = s.url();
    [
        ("https://api.github.com", format!("{u}/github")),
        ("https://dl.k8s.io/release", format!("{u}/dl")),
        (
            "https://raw.githubusercontent.com/kubernetes/website/main/data/releases/schedule.yaml",
            format!("{u}/web/k8s-schedule.yaml"),
        ),
        (
            "https://nbg1.your-objectstorage.com/osism/openstack-k8s-capi-images",
            format!("{u}/capi"),
        ),
        (
            "https://kubernetes.github.io/cloud-provider-openstack",
            format!("{u}/cpo"),
        ),
        ("https://helm.cilium.io", format!("{u}/cilium")),
        (
            "https://kubernetes-sigs.github.io/metrics-server",
            format!("{u}/metrics-server"),
        ),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b))
    .collect()
}

fn main() {
    let root = stackbot_testkit::root();
    let loaded = config::load(&root.join("examples/local/stackbot.yaml")).unwrap();
    let now = NaiveDate::from_ymd_opt(2026, 5, 1).unwrap();
    let s = fixture_server();
    let cache = tempfile::tempdir().unwrap();
    let opts = DetectOptions {
        mirrors: mirrors(&s),
        live: true,
        cache_dir: Some(cache.path().to_path_buf()),
        ..DetectOptions::default()
    };
    let mut reports = Vec::new();
    for run in ["cold", "warm"] {
        s.reset_counts();
        let start = Instant::now();
        let (report, _, stats) = stackbot::pipeline::detect::detect(
            &stackbot::pipeline::Context::fixed(loaded.clone(), now),
            &opts,
        )
        .unwrap();
        let wall = start.elapsed();
        let seen = s.seen();
        let status = |code: u16| seen.iter().filter(|x| x.status == code).count();
        println!(
            "{run}: requests={} conditional={} not_modified={} retries={} (server saw {}: {} × 200, {} × 304, {} × 404) wall={:.1} ms",
            stats.requests,
            stats.conditional,
            stats.not_modified,
            stats.retries,
            seen.len(),
            status(200),
            status(304),
            status(404),
            wall.as_secs_f64() * 1000.0
        );
        reports.push(report);
    }
    assert_eq!(reports[0], reports[1], "warm run must give the same answer");
}
