//! Benchmark of tenant propagation on the local forge (issue 5, "Performance"); run it with
//! `scripts/bench-tenants`. Modes:
//!
//! - `setup DIR N`: N tenant repositories (one ClusterStack file each, alternating flow and
//!   block style) and one published release `openstack-scs2-1-33-v3`;
//! - `measure DIR [--apply]`: one propagation run (dry-run unless `--apply`) in this process,
//!   printing wall time, forge requests per tenant and per method, and peak RSS.
//!
//! Setup happens in a separate process so the peak memory printed by `measure` is the run's.

use std::path::Path;
use std::time::Instant;

use stackbot::config;
use stackbot::forge::counting::Counting;
use stackbot::forge::local::LocalForge;
use stackbot::forge::{Forge, RepoRef};
use stackbot::tenants::{Options, Outcome};

const BOT: (&str, &str) = ("stackbot", "stackbot@users.noreply.github.com");

fn tenant_file(i: usize) -> String {
    let versions = if i.is_multiple_of(2) {
        "  versions: [v1, v2] # pinned\n".to_string()
    } else {
        "  versions:\n    # rolled out\n    - v1\n    - v2\n".to_string()
    };
    format!(
        "# tenant {i}\napiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: openstack-scs2-1-33\n  namespace: t{i}\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"1.33\"\n  channel: stable\n  autoSubscribe: false\n  noProvider: true\n{versions}---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: t{i}\n"
    )
}

fn setup(dir: &Path, n: usize) {
    let seeds = dir.join("seeds");
    let mut yaml = String::from(
        "stacks:\n  - provider: openstack\n    name: scs2\n    templates: t\n    output: o\n    minors: [\"1.33\"]\n    node_image: {url: \"https://img/{version}.qcow2\", name: \"img-{version}\"}\nforge:\n  repository: scs/cluster-stacks\n  local:\n    path: forge\ntenants:\n",
    );
    let mut forge = LocalForge::new(dir.join("forge"), BOT.0, BOT.1);
    std::fs::create_dir_all(seeds.join("stacks")).unwrap();
    std::fs::write(seeds.join("stacks/README.md"), "stacks\n").unwrap();
    let stacks = RepoRef::parse("scs/cluster-stacks").unwrap();
    forge = forge.with_seed(stacks.clone(), seeds.join("stacks"));
    let mut repos = Vec::new();
    for i in 0..n {
        let s = seeds.join(format!("t{i}/clusterstacks"));
        std::fs::create_dir_all(&s).unwrap();
        std::fs::write(s.join("stacks.yaml"), tenant_file(i)).unwrap();
        let r = RepoRef::parse(&format!("tenants/t{i}")).unwrap();
        forge = forge.with_seed(r.clone(), seeds.join(format!("t{i}")));
        repos.push(r);
        yaml.push_str(&format!(
            "  - name: t{i}\n    repository: tenants/t{i}\n    files: [\"clusterstacks/*.yaml\"]\n    stacks: [openstack/scs2]\n"
        ));
    }
    std::fs::write(dir.join("stackbot.yaml"), yaml).unwrap();
    forge.ensure_repo(&stacks, "main").unwrap();
    for r in &repos {
        forge.ensure_repo(r, "main").unwrap();
    }
    let head = forge.branch_head(&stacks, "main").unwrap().unwrap();
    let tag = "openstack-scs2-1-33-v3";
    forge.create_tag(&stacks, tag, &head, tag).unwrap();
    let rel = forge
        .create_draft_release(&stacks, tag, tag, "Kubernetes v1.33.5")
        .unwrap();
    forge
        .upload_asset(
            &stacks,
            rel.id,
            "metadata.yaml",
            b"versions:\n    clusterStack: v3\n    kubernetes: v1.33.5\n",
        )
        .unwrap();
    forge.publish_release(&stacks, rel.id, true).unwrap();
    println!("setup: {n} tenants in {}", dir.display());
}

fn peak_rss_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn measure(dir: &Path, apply: bool) {
    let loaded = config::load(&dir.join("stackbot.yaml")).unwrap();
    let forge = Counting::new(LocalForge::new(dir.join("forge"), BOT.0, BOT.1));
    let opts = Options {
        dry_run: !apply,
        ..Options::default()
    };
    let start = Instant::now();
    let ctx = stackbot::pipeline::Context::fixed(loaded.clone(), "2026-05-01".parse().unwrap());
    let reports = stackbot::pipeline::tenants::run(&ctx, &forge, &opts).unwrap();
    let wall = start.elapsed();
    let n = loaded.config.tenants.len() as f64;
    let mut outcomes = std::collections::BTreeMap::new();
    for r in &reports {
        *outcomes.entry(format!("{:?}", r.outcome)).or_insert(0) += 1;
    }
    let failed = reports
        .iter()
        .filter(|r| r.outcome == Outcome::Failed)
        .count();
    println!(
        "mode: {}  tenants: {n}  wall: {:.2} s  peak RSS: {:.1} MiB",
        if apply { "apply" } else { "dry-run" },
        wall.as_secs_f64(),
        peak_rss_mib()
    );
    println!(
        "requests: {} reads ({:.2}/tenant), {} writes ({:.2}/tenant)",
        forge.reads(),
        forge.reads() as f64 / n,
        forge.writes(),
        forge.writes() as f64 / n
    );
    println!("by method: {:?}", forge.by_method());
    println!("outcomes: {outcomes:?}");
    assert_eq!(failed, 0, "no tenant may fail in the benchmark");
}

fn main() {
    // `cargo bench` appends `--bench`; the scripts call the program without it.
    let args: Vec<String> = std::env::args().filter(|a| a != "--bench").collect();
    match args.get(1).map(String::as_str) {
        Some("setup") => setup(Path::new(&args[2]), args[3].parse().unwrap()),
        Some("measure") => measure(
            Path::new(&args[2]),
            args.get(3).is_some_and(|a| a == "--apply"),
        ),
        _ => {
            eprintln!("usage: bench_tenants setup DIR N | measure DIR [--apply]");
            std::process::exit(2);
        }
    }
}
