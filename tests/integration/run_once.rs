//! A run reads its facts once (issue 29): the release index is listed once per `release` run,
//! whether the run has nothing to do or releases, and the stages after `apply` (tenants, the
//! status on the dashboard) read the index as the run's writes left it instead of listing it
//! again. (A no-op hourly run on GitHub costing 0 rate-limit units is
//! `github_cache::a_no_op_release_costs_no_units_and_its_requests_do_not_grow_with_history`.)

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use stackbot::clock::ManualClock;
use stackbot::config::Loaded;
use stackbot::env::Env;
use stackbot::forge::Forge;
use stackbot::forge::counting::Counting;
use stackbot::forge::local::LocalForge;
use stackbot::pipeline::release::Released;
use stackbot::pipeline::{Context, Selection};

use crate::support::{copy_dir, root};

/// The README demo (local forge, bundled upstream snapshot, two tenants, the dashboard).
pub(crate) struct Demo {
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) loaded: Loaded,
}

impl Demo {
    pub(crate) fn new() -> Demo {
        Demo::configured(|c| c)
    }

    /// The demo with its `stackbot.yaml` changed by `edit`.
    pub(crate) fn configured(edit: impl FnOnce(String) -> String) -> Demo {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(
            &root().join("examples/local"),
            &dir.path().join("examples/local"),
        );
        copy_dir(&root().join("templates"), &dir.path().join("templates"));
        let path = dir.path().join("examples/local/stackbot.yaml");
        std::fs::write(&path, edit(std::fs::read_to_string(&path).unwrap())).unwrap();
        let loaded = stackbot::config::load(&path).unwrap();
        Demo { _dir: dir, loaded }
    }

    pub(crate) fn ctx(&self, when: &str) -> Context {
        let now: DateTime<Utc> = when.parse().unwrap();
        Context::new(
            self.loaded.clone(),
            now.date_naive(),
            Env::default(),
            ManualClock::shared(now),
        )
    }

    pub(crate) fn forge(&self, ctx: &Context) -> Counting<LocalForge> {
        Counting::new(LocalForge::from_config(&self.loaded, ctx.clock.clone()).unwrap())
    }

    /// One `stackbot release` at `when`, and its forge requests.
    pub(crate) fn release(&self, when: &str) -> (Released, Counting<LocalForge>) {
        let ctx = self.ctx(when);
        let counted = self.forge(&ctx);
        let r =
            stackbot::pipeline::release::release(&ctx, &counted, &Selection::default()).unwrap();
        (r, counted)
    }

    /// The release stage alone at `when` (plan, then apply), and the listings apply itself
    /// made: the compare-and-swap reads of its writes (is the tag published by now, which
    /// draft is the canonical one), which no index can answer for a concurrent run.
    fn apply_listings(&self, when: &str) -> u64 {
        let ctx = self.ctx(when);
        let forge = self.forge(&ctx);
        let t = stackbot::pipeline::release::target(&ctx).unwrap();
        forge.ensure_repo(&t.repo, &t.base_branch).unwrap();
        let planned =
            stackbot::pipeline::release::plan(&ctx, &forge, &Selection::default()).unwrap();
        forge.reset();
        stackbot::apply::apply(&planned.plan, &forge, &t.repo, &planned.observed).unwrap();
        listings(&forge)
    }
}

fn listings(c: &Counting<LocalForge>) -> u64 {
    c.by_method().get("list_releases").copied().unwrap_or(0)
}

#[test]
fn a_no_op_release_run_lists_the_release_index_once() {
    let demo = Demo::new();
    demo.release("2026-05-01T06:00:00Z");
    // The next hour: nothing to release, the tenants' pull requests are open, the dashboard
    // is up to date. Plan, tenants and the dashboard's status all read the one listing.
    let (noop, c) = demo.release("2026-05-01T07:00:00Z");
    assert!(noop.outcome.released.is_empty(), "{:?}", noop.outcome);
    assert!(!noop.tenants.is_empty(), "the tenant stage ran");
    assert!(noop.dashboard.is_some(), "the dashboard stage ran");
    assert_eq!(listings(&c), 1, "{:?}", c.by_method());
    assert_eq!(c.writes(), 0, "{:?}", c.by_method());
}

#[test]
fn a_run_that_releases_lists_the_index_once_and_its_later_stages_see_what_it_published() {
    // Two copies of the same world: one runs the release stage alone, to count apply's own
    // reads; the other runs the whole `release`.
    let apply_reads = Demo::new().apply_listings("2026-05-01T06:00:00Z");
    let demo = Demo::new();
    let (r, c) = demo.release("2026-05-01T06:00:00Z");
    assert_eq!(
        r.outcome.released,
        ["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"]
    );
    // Apply's own listings are the guards after its writes only: per release the one after
    // its draft is created (a concurrent run's draft) and the publish step's (is it published
    // by now). Whether a draft exists at all is the run's index's answer.
    assert_eq!(
        apply_reads,
        2 * r.outcome.released.len() as u64,
        "apply lists only after writing"
    );
    assert_eq!(
        listings(&c),
        1 + apply_reads,
        "the index once, then only apply's own reads ({apply_reads}): {:?}",
        c.by_method()
    );
    // The tenants were offered what this run published, without listing it again.
    let proposed: Vec<_> = r
        .tenants
        .iter()
        .flat_map(|t| t.releases.iter().cloned())
        .collect();
    assert!(
        proposed.iter().any(|t| t.starts_with("openstack-scs2-1-3")),
        "{:?}",
        r.tenants
    );
    // And the dashboard shows the status a fresh `stackbot status` computes from a new
    // listing: writing that status changes nothing.
    let ctx = demo.ctx("2026-05-01T06:00:00Z");
    let fresh =
        stackbot::pipeline::status::status(&ctx, &demo.forge(&ctx), &Selection::default()).unwrap();
    assert!(
        fresh.stacks.iter().any(|s| s.latest_release.is_some()),
        "{:?}",
        fresh.stacks
    );
    let again =
        stackbot::pipeline::dashboard::update_dashboard(&ctx, &demo.forge(&ctx), &fresh).unwrap();
    assert!(
        matches!(
            again,
            Some(stackbot::pipeline::dashboard::Dashboard::Unchanged { .. })
        ),
        "{again:?}"
    );
}

/// `detect --format json` and `status --format json` on the demo at `day` with `args`: their
/// `sources[]`.
fn sources_of_both(dir: &std::path::Path, day: &str, args: &[&str]) -> [serde_json::Value; 2] {
    ["detect", "status"].map(|command| {
        let mut all = vec!["--format", "json", command];
        all.extend(args);
        let (_, out, err) = crate::status::demo_cli(dir, day, &all);
        let v: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{command}: {e}: {out}{err}"));
        v["sources"].clone()
    })
}

#[test]
fn detect_and_status_report_the_same_sources() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &root().join("examples/local"),
        &dir.path().join("examples/local"),
    );
    copy_dir(&root().join("templates"), &dir.path().join("templates"));
    // The bundled snapshot, replayed a week after it was recorded: every source read, aged.
    let [detect, status] = sources_of_both(dir.path(), "2026-05-08", &[]);
    let listed = detect
        .as_array()
        .expect("detect --format json has sources[]");
    assert!(
        listed
            .iter()
            .any(|s| s["read"] == "snapshot" && s["age_days"] == 7),
        "{detect:#}"
    );
    assert_eq!(detect, status);
    // A snapshot recording the releases list refused: the same unreadable source, same cause.
    let mut snap: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("examples/local/upstream-2026-05-01.json")).unwrap(),
    )
    .unwrap();
    snap["entries"]["kubernetes/releases"] = serde_json::json!({"result": "error",
        "message": "https://api.github.com/repos/kubernetes/kubernetes/releases: HTTP 403"});
    let faulty = dir.path().join("faulty.json");
    std::fs::write(&faulty, snap.to_string()).unwrap();
    let args = ["--snapshot", faulty.to_str().unwrap()];
    let [detect, status] = sources_of_both(dir.path(), "2026-05-01", &args);
    let releases = detect
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == "kubernetes/releases")
        .cloned()
        .unwrap_or_default();
    assert_eq!(releases["read"], "unreadable", "{detect:#}");
    assert!(
        releases["why"].to_string().contains("HTTP 403"),
        "{detect:#}"
    );
    assert_eq!(detect, status);
}

#[test]
fn a_no_op_hourly_release_with_tenants_and_the_dashboard_costs_no_github_units() {
    use crate::support::config::DemoConfig;
    use crate::support::fake_github::demo;
    const TOKEN: &str = "ghp_runONCEtoken_0123456789abcdef";
    const TOKEN_ENV: &str = "STACKBOT_RUN_ONCE_TOKEN";
    let tenant_file = "apiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: openstack-scs2-1-34\n  namespace: cluster\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"1.34\"\n  autoSubscribe: false\n  noProvider: true\n  versions: [v0]\n";
    let fake = demo::start(TOKEN, &["acme/gitops"], tenant_file);
    let dir = tempfile::tempdir().unwrap();
    let cfg = DemoConfig::new()
        .on_github(&fake.api_url(), &fake.upload_url(), TOKEN_ENV)
        .github_cache_dir(&dir.path().join("cache"))
        .tenant("acme")
        .write(dir.path());
    let release = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_stackbot"))
            .current_dir(dir.path())
            .env(TOKEN_ENV, TOKEN)
            .env("NO_COLOR", "1")
            .env_remove("GITHUB_ACTIONS")
            .args([
                "-c",
                cfg.to_str().unwrap(),
                "--now",
                "2026-05-01",
                "release",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    release();
    // The first hour after publishing reads what changed (new ETags); from then on nothing.
    release();
    fake.reset_counts();
    release();
    let c = fake.counts();
    assert_eq!(c.writes, 0, "{c:?}");
    assert_eq!(c.units, 0, "a no-op hourly run is free: {:?}", c.by_route);
}

/// With `gate:` on the stack, a release run whose conformance tests are still running finds
/// each candidate in the run's release index: the one listing, never one more per candidate.
#[test]
fn a_gated_run_waiting_for_its_tests_lists_the_index_once() {
    let demo = Demo::new();
    let local = demo._dir.path().join("examples/local");
    let cfg = local.join("stackbot.yaml");
    let text = std::fs::read_to_string(&cfg).unwrap().replacen(
        "    node_image:\n",
        "    gate:\n      command: [sh, ./conformance.sh]\n    node_image:\n",
        1,
    );
    std::fs::write(&cfg, text).unwrap();
    std::fs::write(local.join("conformance.sh"), crate::gate::SCRIPT).unwrap();
    std::fs::write(local.join("gate-mode"), "pass").unwrap();
    let demo = Demo {
        loaded: stackbot::config::load(&cfg).unwrap(),
        ..demo
    };
    // The candidates are published and their tests started; they wait for `gate-go`.
    let (first, _) = demo.release("2026-05-01T06:00:00Z");
    assert!(first.outcome.released.is_empty(), "{:?}", first.outcome);
    assert!(
        first
            .outcome
            .actions
            .iter()
            .any(|a| a.contains("candidate")),
        "the gate published its candidates: {:?}",
        first.outcome.actions
    );
    let (waiting, c) = demo.release("2026-05-01T07:00:00Z");
    std::fs::write(local.join("gate-go"), "").unwrap();
    assert!(waiting.outcome.released.is_empty(), "{:?}", waiting.outcome);
    assert_eq!(listings(&c), 1, "{:?}", c.by_method());
}

/// In pull-request mode the status at the end of a release run (the dashboard) takes the
/// release pull requests from what the run read and left, not from the forge again: the run's
/// pull-request lookups are the plan's (the release branches) and the tenant stage's.
#[test]
fn the_dashboard_takes_the_release_pull_requests_from_the_run() {
    let demo = Demo::new();
    let cfg = demo._dir.path().join("examples/local/stackbot.yaml");
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("  mode: direct\n", "  mode: pull-request\n");
    std::fs::write(&cfg, text).unwrap();
    let demo = Demo {
        loaded: stackbot::config::load(&cfg).unwrap(),
        ..demo
    };
    let lookups = |c: &Counting<LocalForge>| c.by_method().get("find_pulls").copied().unwrap_or(0);
    let (opened, _) = demo.release("2026-05-01T06:00:00Z");
    assert_eq!(
        opened.outcome.release_pulls.len(),
        2,
        "{:?}",
        opened.outcome
    );
    // An hour later: the release pull requests are open, the tenants as they were.
    let when = "2026-05-01T07:00:00Z";
    let ctx = demo.ctx(when);
    let plan_forge = demo.forge(&ctx);
    stackbot::pipeline::release::plan(&ctx, &plan_forge, &Selection::default()).unwrap();
    let tenant_forge = demo.forge(&ctx);
    stackbot::pipeline::tenants::run(
        &ctx,
        &tenant_forge,
        &stackbot::pipeline::tenants::options(true),
    )
    .unwrap();
    let (again, c) = demo.release(when);
    assert!(again.dashboard.is_some(), "the dashboard stage ran");
    assert_eq!(
        lookups(&c),
        lookups(&plan_forge) + lookups(&tenant_forge),
        "the plan's and the tenants' lookups, none more: {:?}",
        c.by_method()
    );
}

/// How often a run fetched each manifest (`…/manifests/<tag>`), each blob
/// (`…/blobs/<digest>`) and each page of the tag list (with its query), by `GET`.
fn fetched(seen: &[crate::support::counting_proxy::Seen]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for s in seen.iter().filter(|s| s.method == "GET") {
        let path = &s.path;
        if path.contains("/manifests/") || path.contains("/blobs/") || path.ends_with("/tags/list")
        {
            *out.entry(s.target.clone()).or_default() += 1;
        }
    }
    out
}

/// The blob path of the `metadata.yaml` layer of release `tag`, read from the registry itself.
fn metadata_blob(reg: &crate::support::registry::TestRegistry, tag: &str) -> String {
    use stackbot::oci::{Credentials, OciTarget, Registry};
    let repository = format!("{}/kaas/cluster-stacks", reg.addr);
    let target = OciTarget::new(&reg.addr, &repository, true, Credentials::Anonymous).unwrap();
    let (json, _) = Registry::connect(target)
        .unwrap()
        .manifest(tag)
        .unwrap()
        .unwrap();
    let manifest: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let layer = manifest["layers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["annotations"]["org.opencontainers.image.title"] == "metadata.yaml")
        .unwrap_or_else(|| panic!("{tag}: no metadata.yaml layer: {manifest}"));
    format!("/blobs/{}", layer["digest"].as_str().unwrap())
}

/// No run reads the same thing twice, in the OCI repository too (`publish: [oci]` alone, the
/// README demo with its tenants and dashboard, a real registry behind a counting proxy). The
/// observation pulls each series' latest release; the tenants and the status take its date and
/// Kubernetes version from that reading (`observe::oci::OciReads`) instead of fetching its
/// manifest and `metadata.yaml` again, and share what either of them reads. So:
/// - a run that releases fetches the `metadata.yaml` of what it pushed once;
/// - the next hour's run, with nothing to do, fetches each series' manifest and `metadata.yaml`
///   once (it used to fetch them three times: observe, tenants, status), and each page of the
///   tag list once (the index, listed once);
/// - `stackbot status` alone fetches each once too.
#[test]
fn an_oci_release_run_fetches_each_manifest_and_metadata_once() {
    let reg = crate::support::registry::TestRegistry::start();
    let proxy = crate::support::counting_proxy::CountingProxy::start(&reg.addr);
    let demo = Demo::configured(|c| {
        format!(
            "{c}\npublish: [oci]\noci:\n  registry: \"{0}\"\n  repository: \"{0}/kaas/cluster-stacks\"\n  plain_http: true\n",
            proxy.addr
        )
    });
    let tags = ["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"];
    let (first, _) = demo.release("2026-05-01T06:00:00Z");
    assert_eq!(first.outcome.released, tags);
    let run = fetched(&proxy.take());
    let times = |run: &BTreeMap<String, usize>, suffix: &str| -> usize {
        run.iter()
            .filter(|(t, _)| t.ends_with(suffix))
            .map(|(_, n)| n)
            .sum()
    };
    for tag in tags {
        let meta = metadata_blob(&reg, tag);
        assert_eq!(
            times(&run, &meta),
            1,
            "{tag}'s metadata.yaml, pushed: {run:?}"
        );
    }

    let (noop, _) = demo.release("2026-05-01T07:00:00Z");
    assert!(noop.outcome.released.is_empty(), "{:?}", noop.outcome);
    assert!(!noop.tenants.is_empty() && noop.dashboard.is_some());
    let run = fetched(&proxy.take());
    for tag in tags {
        let manifest = format!("/manifests/{tag}");
        assert_eq!(times(&run, &manifest), 1, "{tag}'s manifest: {run:?}");
        let meta = metadata_blob(&reg, tag);
        assert_eq!(times(&run, &meta), 1, "{tag}'s metadata.yaml: {run:?}");
    }
    let pages: Vec<_> = run
        .iter()
        .filter(|(t, _)| t.contains("/tags/list"))
        .collect();
    assert!(
        !pages.is_empty() && pages.iter().all(|(_, n)| **n == 1),
        "{run:?}"
    );

    let ctx = demo.ctx("2026-05-01T07:00:00Z");
    let s =
        stackbot::pipeline::status::status(&ctx, &demo.forge(&ctx), &Selection::default()).unwrap();
    let row = s
        .stacks
        .iter()
        .find(|r| r.minor.to_string() == "1.34")
        .unwrap();
    assert_eq!(
        row.latest_release
            .as_ref()
            .and_then(|l| l.kubernetes)
            .map(|k| k.to_string()),
        Some("v1.34.7".to_string()),
        "read from the registry: {row:?}"
    );
    let run = fetched(&proxy.take());
    for tag in tags {
        assert_eq!(
            times(&run, &format!("/manifests/{tag}")),
            1,
            "status: {run:?}"
        );
        assert_eq!(times(&run, &metadata_blob(&reg, tag)), 1, "status: {run:?}");
    }
}

/// A FIFO that hands `bytes` to every reader and counts the readers: a file whose every read a
/// test can see. The next reader is served only once the last one closed it, so none reads the
/// bytes twice.
struct CountedFile {
    path: std::path::PathBuf,
    reads: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl CountedFile {
    fn serve(path: &std::path::Path, bytes: Vec<u8>) -> CountedFile {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        use std::sync::atomic::Ordering;
        let made = std::process::Command::new("mkfifo").arg(path).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo {}", path.display());
        let f = CountedFile {
            path: path.to_path_buf(),
            reads: Default::default(),
            stop: Default::default(),
        };
        let (p, reads, stop) = (f.path.clone(), f.reads.clone(), f.stop.clone());
        std::thread::spawn(move || {
            // Opening for writing waits for a reader; closing ends what the reader reads.
            while let Ok(mut w) = std::fs::OpenOptions::new().write(true).open(&p) {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let _ = w.write_all(&bytes);
                reads.fetch_add(1, Ordering::SeqCst);
                drop(w);
                // The next reader only once this one closed: a non-blocking open for writing
                // succeeds while the kernel counts a reader (Linux's `O_NONBLOCK`).
                while std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(0o4000)
                    .open(&p)
                    .is_ok()
                {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
        });
        f
    }

    fn reads(&self) -> usize {
        self.reads.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for CountedFile {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Lets the writer's open return, to see the stop.
        let _ = std::fs::File::open(&self.path);
    }
}

/// The checkout's `stackbot.lock` is read once per run: detection (the no-downgrade marks, the
/// verdicts of what was last released), the content shared across minors and the other
/// minors' directories all work from that one reading (`desired::Offered::checkout`). They used
/// to read it four times per run. Here the lock, as the first run committed it, is a FIFO in
/// the checkout, so every read of it is counted.
#[test]
fn a_release_run_reads_the_checkouts_lock_once() {
    let demo = Demo::new();
    demo.release("2026-05-01T06:00:00Z");
    let ctx = demo.ctx("2026-05-01T06:00:00Z");
    let forge = demo.forge(&ctx);
    let repo = stackbot::forge::RepoRef::parse("scs/cluster-stacks").unwrap();
    let head = forge.branch_head(&repo, "main").unwrap().unwrap();
    let lock = forge.read_file(&repo, &head, "stackbot.lock").unwrap();
    let lock = CountedFile::serve(
        &demo.loaded.base_dir.join("stackbot.lock"),
        lock.expect("the first run committed its lock"),
    );
    let (noop, _) = demo.release("2026-05-01T07:00:00Z");
    assert!(noop.outcome.released.is_empty(), "{:?}", noop.outcome);
    assert_eq!(lock.reads(), 1, "the checkout's lock, per run");
}
