//! Release benchmarks for `BENCHMARKS.md` (issue 7, "Figures in one place"); run them through
//! `scripts/bench`. Modes:
//!
//! - `demo-local DIR`: the README demo, already released once by `stackbot release` in `DIR`
//!   (a copy of `examples/local` + `templates`): one no-op release + tenant run through the
//!   counting forge wrapper, printing forge requests for the release part and in total;
//! - `noop-github S T`: on the fake GitHub, release S series (minors) and propagate to T
//!   tenants, then run both again as the next hourly run would (a new forge client on the same
//!   GitHub answer cache) and print the requests and rate-limit units of that no-op run
//!   (release part, tenant part);
//! - `noop-table`: `noop-github` for S = 1, 5, 20 and T = 0, 10, 100, as a Markdown table;
//! - `fanout-github T LATENCY_MS INTERVAL_MS`: release 3 minors and open T tenant pull requests
//!   against the fake GitHub answering every request after LATENCY_MS, with the GitHub forge's
//!   write pacing `forge.github.write_interval_ms = INTERVAL_MS`; prints wall time, requests,
//!   writes and the peak number of writes in any 60-second window.
//!
//! Everything runs in this process on loopback; the fake GitHub is the test-support one.

// The release scenario (target, release sets, rendered trees) the end-to-end tests use.
use stackbot_testkit::fake_github;
use stackbot_testkit::release as common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{desired, target};
use fake_github::{FakeGithub, Faults};
use stackbot::apply;
use stackbot::config::{self, GithubForgeConfig, Loaded};
use stackbot::forge::counting::Counting;
use stackbot::forge::github::GithubForge;
use stackbot::forge::local::LocalForge;
use stackbot::plan::Desired;
use stackbot::tenants::{Outcome, TenantReport};

const TOKEN: &str = "ghp_STACKBOTbenchTOKEN_0123456789";
const REPO: &str = "scs/cluster-stacks";
/// Kubernetes patch and CCM chart version per minor; the first S are released.
const MINORS: [(&str, &str, &str); 4] = [
    ("1.33", "v1.33.10", "2.33.1"),
    ("1.34", "v1.34.7", "2.34.2"),
    ("1.35", "v1.35.3", "2.35.0"),
    ("1.36", "v1.36.0", "2.36.0"),
];

fn peak_rss_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn tenant_file(minor: &str) -> String {
    format!(
        "# production stacks\napiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: openstack-scs2-{} # one per minor\n  namespace: cluster\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"{minor}\"\n  autoSubscribe: false\n  noProvider: true\n  versions: [v0]  # pinned\n",
        minor.replace('.', "-")
    )
}

/// The first `n` series: the measured minors of [`MINORS`], then made-up later minors.
fn series(n: usize) -> Vec<(String, String, String)> {
    (0..n)
        .map(|i| match MINORS.get(i) {
            Some((m, k, c)) => (m.to_string(), k.to_string(), c.to_string()),
            None => {
                let m = 37 + i - MINORS.len();
                (format!("1.{m}"), format!("v1.{m}.1"), format!("2.{m}.0"))
            }
        })
        .collect()
}

/// A fake GitHub with the stacks repository and `tenants` tenant repositories (tenant i follows
/// minor i mod `minors`), and the configuration naming them.
struct World {
    dir: tempfile::TempDir,
    fake: FakeGithub,
    loaded: Loaded,
    desired: Vec<Desired>,
}

impl World {
    fn new(minors: usize, tenants: usize) -> World {
        // The fake enforces GitHub's primary rate limit (5000 units an hour per token); the
        // benchmarks measure requests and units over runs larger than one hour's budget, so
        // they lift it (the limit itself is exercised by tests/integration/fake_github.rs).
        let fake = FakeGithub::start_with(
            fake_github::FakeOptions::default()
                .with_token(TOKEN)
                .with_rate_limit(1_000_000),
        );
        fake.create_repo(REPO, "main", &[("README.md", b"# cluster stacks\n")]);
        let used = series(minors);
        let list: Vec<String> = used.iter().map(|m| format!("\"{}\"", m.0)).collect();
        let mut yaml = format!(
            "stacks:\n  - provider: openstack\n    name: scs2\n    templates: t\n    output: o\n    minors: [{}]\n    node_image: {{url: \"https://img/{{version}}.qcow2\", name: \"ubuntu-capi-image-{{version}}\"}}\nforge:\n  kind: github\n  repository: {REPO}\n  github: {{api_url: \"{}\", upload_url: \"{}\"}}\ntenants:\n",
            list.join(", "),
            fake.api_url(),
            fake.upload_url()
        );
        for i in 0..tenants {
            let r = format!("tenants/t{i}");
            let file = tenant_file(&used[i % minors].0);
            fake.create_repo(
                &r,
                "main",
                &[("clusterstacks/stacks.yaml", file.as_bytes())],
            );
            yaml.push_str(&format!(
                "  - name: t{i}\n    repository: {r}\n    files: [\"clusterstacks/*.yaml\"]\n    stacks: [openstack/scs2]\n"
            ));
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stackbot.yaml");
        std::fs::write(&path, yaml).unwrap();
        let loaded = config::load(&path).unwrap();
        let desired = used.iter().map(|(_, k, c)| desired(k, c)).collect();
        World {
            dir,
            fake,
            loaded,
            desired,
        }
    }

    fn forge(&self, interval_ms: u64) -> GithubForge {
        let cfg = GithubForgeConfig {
            api_url: self.fake.api_url(),
            upload_url: Some(self.fake.upload_url()),
            write_interval_ms: Some(interval_ms),
            ..GithubForgeConfig::default()
        };
        GithubForge::new(
            &cfg,
            Some(TOKEN.into()),
            std::sync::Arc::new(stackbot::clock::SystemClock),
        )
        .unwrap()
        .with_committer(&self.loaded.config.forge.committer)
        // One cache directory for all runs, as the release workflow restores it each hour.
        .with_cache_dir(self.dir.path().join("github-cache"))
    }

    fn release(&self, f: &GithubForge) -> apply::Outcome {
        stackbot::pipeline::release::release_desired(
            f,
            &target(),
            &self.desired,
            &stackbot::pipeline::release::packager,
        )
        .unwrap()
        .1
    }

    fn tenants(&self, f: &GithubForge) -> Vec<TenantReport> {
        let ctx =
            stackbot::pipeline::Context::fixed(self.loaded.clone(), "2026-05-01".parse().unwrap());
        stackbot::pipeline::tenants::run(&ctx, f, &Default::default()).unwrap()
    }
}

fn outcomes(reports: &[TenantReport]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in reports {
        *m.entry(format!("{:?}", r.outcome)).or_insert(0) += 1;
    }
    assert!(
        reports.iter().all(|r| r.outcome != Outcome::Failed),
        "no tenant may fail in the benchmark: {m:?}"
    );
    m
}

/// Requests, rate-limit units and 304s of a no-op run, release part and tenant part.
struct Noop {
    release: fake_github::Counts,
    tenants: fake_github::Counts,
}

/// Release S series and propagate to T tenants, then `hours` no-op runs, each a new process
/// (new client) on the same answer cache on disk, as the hourly workflow restores it. Returns
/// the counts of the last one: the first no-op after a run that changed things still reads
/// what that run changed once (new ETags), the ones after it are the steady state.
fn noop_run(minors: usize, tenants: usize, hours: usize) -> Noop {
    let w = World::new(minors, tenants);
    let first = w.forge(0);
    let out = w.release(&first);
    assert_eq!(
        out.released.len(),
        minors,
        "first run releases every series"
    );
    outcomes(&w.tenants(&first));
    drop(first);
    let mut last = None;
    for _ in 0..hours {
        let f = w.forge(0);
        w.fake.reset_counts();
        let out = w.release(&f);
        assert!(out.released.is_empty() && out.actions.is_empty());
        let release = w.fake.counts();
        w.fake.reset_counts();
        let again = outcomes(&w.tenants(&f));
        assert!(
            again.keys().all(|k| k != "Opened" && k != "Updated"),
            "nothing may change in a no-op run: {again:?}"
        );
        let tenants = w.fake.counts();
        last = Some(Noop { release, tenants });
    }
    last.expect("at least one hour")
}

fn noop_github(minors: usize, tenants: usize) {
    let n = noop_run(minors, tenants, 1);
    let (rel, ten) = (&n.release, &n.tenants);
    // Rate-limit units: what the run costs against GitHub's primary limit (304s are free).
    println!(
        "no-op: stacks×minors={minors} tenants={tenants} release={} requests ({} writes) tenants={} requests ({} writes, {:.2}/tenant) total={} units={} (release {}, tenants {}; {} answered 304)",
        rel.total(),
        rel.writes,
        ten.total(),
        ten.writes,
        ten.total() as f64 / tenants.max(1) as f64,
        rel.total() + ten.total(),
        rel.units + ten.units,
        rel.units,
        ten.units,
        rel.not_modified + ten.not_modified
    );
    println!("no-op release by route: {:?}", rel.by_route);
    println!("no-op tenants by route: {:?}", ten.by_route);
}

fn noop_table() {
    println!(
        "| released series | tenants | hour | release: requests / units | tenants: requests / units | total requests | total units | answered 304 |"
    );
    println!("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |");
    for s in [1, 5, 20] {
        for t in [0, 10, 100] {
            for (hours, label) in [(1, "first no-op"), (2, "steady")] {
                let n = noop_run(s, t, hours);
                let (r, x) = (&n.release, &n.tenants);
                println!(
                    "| {s} | {t} | {label} | {} / {} | {} / {} | {} | {} | {} |",
                    r.total(),
                    r.units,
                    x.total(),
                    x.units,
                    r.total() + x.total(),
                    r.units + x.units,
                    r.not_modified + x.not_modified
                );
            }
        }
    }
}

fn fanout_github(tenants: usize, latency_ms: u64, interval_ms: u64) {
    let w = World::new(3, tenants);
    let f = w.forge(interval_ms);
    w.fake.set_faults(Faults {
        latency: Duration::from_millis(latency_ms),
        ..Faults::default()
    });
    w.fake.reset_counts();
    let start = Instant::now();
    let out = w.release(&f);
    let release_wall = start.elapsed();
    let release_counts = w.fake.counts();
    let reports = w.tenants(&f);
    let wall = start.elapsed();
    let o = outcomes(&reports);
    assert_eq!(out.released.len(), 3);
    let c = w.fake.counts();
    let log = w.fake.write_log();
    let rejected = log.iter().filter(|r| r.status >= 400).count();
    let span_s = match (log.first(), log.last()) {
        (Some(a), Some(b)) => (b.at_ms - a.at_ms) as f64 / 1000.0,
        _ => 0.0,
    };
    println!(
        "fanout: minors=3 tenants={tenants} latency={latency_ms}ms write_interval_ms={interval_ms}"
    );
    println!(
        "wall: {:.1} s (release {:.1} s)  peak RSS: {:.1} MiB",
        wall.as_secs_f64(),
        release_wall.as_secs_f64(),
        peak_rss_mib()
    );
    println!(
        "requests: {} ({} reads, {} writes; release {} writes)  writes/tenant: {:.2}  rejected writes: {rejected}",
        c.total(),
        c.reads,
        c.writes,
        release_counts.writes,
        (c.writes - release_counts.writes) as f64 / tenants as f64,
    );
    println!(
        "peak writes in any 60 s: {}  mean write rate: {:.1}/min over {span_s:.1} s",
        w.fake.peak_writes_per_minute(),
        if span_s > 0.0 {
            c.writes as f64 * 60.0 / span_s
        } else {
            0.0
        }
    );
    println!("tenants: {o:?}");
}

fn demo_local(dir: &Path) {
    let loaded = config::load(&dir.join("examples/local/stackbot.yaml")).unwrap();
    let ctx = stackbot::pipeline::Context::fixed(loaded.clone(), "2026-05-01".parse().unwrap());
    let sel = stackbot::pipeline::Selection::default();
    let counted = Counting::new(LocalForge::from_config(&loaded, ctx.clock.clone()).unwrap());
    let planned = stackbot::pipeline::release::plan(&ctx, &counted, &sel).unwrap();
    let noop = apply::apply(
        &planned.plan,
        &counted,
        &planned.target.repo,
        &planned.observed,
    )
    .unwrap();
    assert!(noop.actions.is_empty(), "the demo must already be released");
    let release = counted.total();
    let reports = stackbot::pipeline::tenants::run(&ctx, &counted, &Default::default()).unwrap();
    println!(
        "demo no-op (local forge): release={release} requests, tenants={} requests for {} tenants, total={} ({} writes) by method {:?}",
        counted.total() - release,
        reports.len(),
        counted.total(),
        counted.writes(),
        counted.by_method()
    );
}

fn main() {
    // `cargo bench` appends `--bench`; the scripts call the program without it.
    let args: Vec<String> = std::env::args().filter(|a| a != "--bench").collect();
    let n = |i: usize| -> u64 { args[i].parse().expect("a number") };
    match args.get(1).map(String::as_str) {
        Some("demo-local") if args.len() == 3 => demo_local(Path::new(&args[2])),
        Some("noop-github") if args.len() == 4 => noop_github(n(2) as usize, n(3) as usize),
        Some("noop-table") => noop_table(),
        Some("fanout-github") if args.len() == 5 => fanout_github(n(2) as usize, n(3), n(4)),
        _ => {
            eprintln!(
                "usage: bench_release demo-local DIR | noop-github SERIES TENANTS | noop-table | fanout-github TENANTS LATENCY_MS INTERVAL_MS"
            );
            std::process::exit(2);
        }
    }
}
