//! No run reads the same thing twice (issue 29), fact by fact: the forge under each run here is
//! a [`ReadLog`], which notes every call with what it asked for, so a second download of the
//! same `hashes.json` or a second read of the base lock shows, not only a second call of a
//! method. A read is repeated when the run asked for the same thing before with no write in
//! between ([`ReadLog::repeated`]); what a commit holds never changes, so a second read of a
//! commit's file list or of a file at a commit counts whatever was written in between
//! ([`ReadLog::reread_content`]).

use stackbot::forge::local::LocalForge;
use stackbot::pipeline::Selection;
use stackbot::pipeline::release::Released;

use super::run_once::Demo;
use crate::support::read_log::ReadLog;

impl Demo {
    /// The forge of a run at `ctx`, every call logged.
    fn logged(&self, ctx: &stackbot::pipeline::Context) -> ReadLog<LocalForge> {
        ReadLog::new(LocalForge::from_config(&self.loaded, ctx.clock.clone()).unwrap())
    }

    /// One `stackbot release` at `when`, and its forge calls.
    fn release_logged(&self, when: &str) -> (Released, ReadLog<LocalForge>) {
        let ctx = self.ctx(when);
        let log = self.logged(&ctx);
        let r = stackbot::pipeline::release::release(&ctx, &log, &Selection::default()).unwrap();
        (r, log)
    }

    fn local(&self) -> std::path::PathBuf {
        self._dir.path().join("examples/local")
    }

    /// Edit the entries of the bundled upstream snapshot.
    fn edit_snapshot(&self, edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>)) {
        let path = self.local().join("upstream-2026-05-01.json");
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        edit(v["entries"].as_object_mut().unwrap());
        std::fs::write(&path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    }

    /// A pull request changes a template of the stack: every series needs a new release.
    fn change_template(&self) {
        let chart = self
            ._dir
            .path()
            .join("templates/openstack/scs2/cluster-class/Chart.yaml.tera");
        let mut text = std::fs::read_to_string(&chart).unwrap();
        text.push_str("# reviewed by the platform team\n");
        std::fs::write(&chart, text).unwrap();
    }
}

/// The demo with a second stack beside it, `openstack/scs3` (the same templates, no gate),
/// and `gate:` on `openstack/scs2` with the test script of `gate.rs` (it waits for `gate-go`).
fn gated_beside_ungated(mode: &str) -> Demo {
    gated_beside_ungated_with(mode, "")
}

/// [`gated_beside_ungated`] with `more` appended to the configuration.
fn gated_beside_ungated_with(mode: &str, more: &str) -> Demo {
    let demo = Demo::configured(|c| {
        let start = c
            .find("  - provider: openstack\n")
            .expect("the demo's stack");
        let end = c.find("\n# The local forge").expect("the forge section");
        let stack = &c[start..end];
        let gated = stack.replacen(
            "    node_image:\n",
            "    gate:\n      command: [sh, ./conformance.sh]\n    node_image:\n",
            1,
        );
        let ungated = stack
            .replace("name: scs2", "name: scs3")
            .replace("out/openstack/scs2", "out/openstack/scs3");
        format!("{}{gated}{ungated}{}{more}", &c[..start], &c[end..])
    });
    assert_eq!(demo.loaded.config.stacks.len(), 2);
    std::fs::write(demo.local().join("conformance.sh"), crate::gate::SCRIPT).unwrap();
    std::fs::write(demo.local().join("gate-mode"), mode).unwrap();
    demo
}

/// The gate holds `openstack/scs2` back (its tests are still running), so the release stage
/// plans twice: with and without the held series. The second plan is made from the first
/// reading: the up-to-date `openstack/scs3` series are not read again (their `hashes.json`
/// was downloaded twice), and so is nothing else in the run, the tenants and the dashboard
/// included. `stackbot plan` (no writes at all) reads each thing once too.
#[test]
fn a_gated_run_that_holds_a_series_reads_each_forge_fact_once() {
    let demo = gated_beside_ungated("pass");
    let (first, _) = demo.release_logged("2026-05-01T06:00:00Z");
    assert_eq!(
        first.outcome.released,
        ["openstack-scs3-1-33-v1", "openstack-scs3-1-34-v1"],
        "the ungated stack is released, the gated one waits for its tests"
    );
    let (waiting, log) = demo.release_logged("2026-05-01T07:00:00Z");
    demo_go(&demo);
    assert!(waiting.outcome.released.is_empty(), "{:?}", waiting.outcome);
    let held: Vec<String> = waiting
        .plan
        .skipped
        .iter()
        .filter(|k| k.reason.to_string().contains("in test since"))
        .map(|k| k.what.to_string())
        .collect();
    assert_eq!(
        held.len(),
        2,
        "both gated series wait: {:?}",
        waiting.plan.skipped
    );
    assert_eq!(log.writes(), 0, "{:?}", log.calls());
    for tag in ["openstack-scs3-1-33-v1", "openstack-scs3-1-34-v1"] {
        let hashes = hashes_of(&log, tag);
        assert_eq!(
            log.reads_of("download_asset", &hashes),
            1,
            "{tag}'s hashes.json"
        );
    }
    assert_eq!(log.repeated(), Default::default(), "{:?}", log.calls());

    let ctx = demo.ctx("2026-05-01T07:00:00Z");
    let plan_log = demo.logged(&ctx);
    stackbot::pipeline::release::plan(&ctx, &plan_log, &Selection::default()).unwrap();
    assert_eq!(plan_log.writes(), 0);
    assert_eq!(
        plan_log.repeated(),
        Default::default(),
        "{:?}",
        plan_log.calls()
    );
}

/// Lets the gate's test script finish (it waits for this file), so no test outlives the test.
fn demo_go(demo: &Demo) {
    std::fs::write(demo.local().join("gate-go"), "").unwrap();
}

/// The key of the `hashes.json` download of release `tag`, as a [`ReadLog`] names it.
fn hashes_of(log: &ReadLog<LocalForge>, tag: &str) -> String {
    use stackbot::forge::Forge;
    let repo = stackbot::forge::RepoRef::parse("scs/cluster-stacks").unwrap();
    let listed = log.inner().list_releases(&repo).unwrap();
    let r = listed
        .iter()
        .find(|r| r.tag == tag)
        .unwrap_or_else(|| panic!("{tag} is released"));
    let a = r.assets.iter().find(|a| a.name == "hashes.json").unwrap();
    format!("{repo} {} {} {}", r.id, a.id, a.name)
}

/// The head of the demo's base branch.
fn base_head(demo: &Demo) -> String {
    use stackbot::forge::Forge;
    let ctx = demo.ctx("2026-05-01T06:00:00Z");
    let repo = stackbot::forge::RepoRef::parse("scs/cluster-stacks").unwrap();
    demo.forge(&ctx)
        .branch_head(&repo, "main")
        .unwrap()
        .unwrap()
}

/// An outage of the releases API (the `stable-1.NN.txt` markers carry no publication dates)
/// while a template change needs new releases: the pipeline reads the dates the base lock
/// recorded before it renders, and the observation reads the base branch for the releases.
/// One reading of the base head and its lock serves both (they were read twice).
#[test]
fn an_outage_reads_the_base_lock_once() {
    let demo = Demo::new();
    let (first, _) = demo.release_logged("2026-05-01T06:00:00Z");
    assert_eq!(
        first.outcome.released,
        ["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"]
    );
    demo.edit_snapshot(|e| {
        e.insert(
            "kubernetes/releases".into(),
            serde_json::json!({"result": "error", "message": "GET https://api.github.com/repos/kubernetes/kubernetes/releases: HTTP 403 rate limit exceeded"}),
        );
        for (minor, patch) in [
            ("1.33", "v1.33.11"),
            ("1.34", "v1.34.7"),
            ("1.35", "v1.35.4"),
            ("1.36", "v1.36.0"),
        ] {
            e.insert(
                format!("kubernetes/stable-{minor}"),
                serde_json::json!({"result": "ok", "body": patch}),
            );
        }
    });
    demo.change_template();
    let head = base_head(&demo);
    let (r, log) = demo.release_logged("2026-05-01T07:00:00Z");
    // 1.34's recorded patch is the marker's: its date renders it, with the template change
    // (1.33's marker names a patch the lock has no date for: it waits, as without the change).
    assert_eq!(r.outcome.released, ["openstack-scs2-1-34-v2"]);
    let lock = format!("scs/cluster-stacks {head} stackbot.lock");
    assert_eq!(log.reads_of("read_file", &lock), 1, "{:?}", log.calls());
    let first_write = log.calls().iter().position(|c| c.write).unwrap();
    let heads = log.calls()[..first_write]
        .iter()
        .filter(|c| c.method == "branch_head" && c.key == "scs/cluster-stacks main")
        .count();
    assert_eq!(
        heads,
        1,
        "the base head, before the run writes: {:?}",
        log.calls()
    );
    assert_eq!(log.reread_content(), Default::default());
}

/// In pull-request mode the gate gives each release pull request its line, so the release
/// stage plans twice with every series: the second plan is made from the first reading (the
/// base tree, the tags, the release branches and their pull requests were all read again).
#[test]
fn a_gated_pull_request_run_reads_each_forge_fact_once() {
    let demo = Demo::configured(|c| {
        c.replacen(
            "    node_image:\n",
            "    gate:\n      command: [sh, ./conformance.sh]\n    node_image:\n",
            1,
        )
        .replacen("  mode: direct\n", "  mode: pull-request\n", 1)
    });
    std::fs::write(demo.local().join("conformance.sh"), crate::gate::SCRIPT).unwrap();
    std::fs::write(demo.local().join("gate-mode"), "pass").unwrap();
    let (first, _) = demo.release_logged("2026-05-01T06:00:00Z");
    assert_eq!(first.outcome.release_pulls.len(), 2, "{:?}", first.outcome);
    let (again, log) = demo.release_logged("2026-05-01T07:00:00Z");
    demo_go(&demo);
    assert!(again.outcome.released.is_empty(), "{:?}", again.outcome);
    assert_eq!(log.repeated(), Default::default(), "{:?}", log.calls());
    assert_eq!(log.reread_content(), Default::default());
}

/// An hour after the demo's first release: `release` (plan, tenants, dashboard), `status`, the
/// preview and `tenants` each read every fact once, and write nothing.
#[test]
fn no_op_release_status_preview_and_tenants_runs_read_each_forge_fact_once() {
    let demo = Demo::new();
    demo.release_logged("2026-05-01T06:00:00Z");
    let when = "2026-05-01T07:00:00Z";
    let (noop, log) = demo.release_logged(when);
    assert!(noop.outcome.released.is_empty(), "{:?}", noop.outcome);
    assert!(!noop.tenants.is_empty() && noop.dashboard.is_some());
    assert_eq!(log.writes(), 0, "{:?}", log.calls());
    assert_eq!(
        log.repeated(),
        Default::default(),
        "release: {:?}",
        log.calls()
    );

    let ctx = demo.ctx(when);
    let log = demo.logged(&ctx);
    stackbot::pipeline::status::status(&ctx, &log, &Selection::default()).unwrap();
    assert_eq!(
        log.repeated(),
        Default::default(),
        "status: {:?}",
        log.calls()
    );

    // `plan` with the tenant pull requests that would follow (the preview of `plan` and
    // `release --dry-run`).
    let log = demo.logged(&ctx);
    stackbot::pipeline::release::preview(&ctx, &log, &Selection::default()).unwrap();
    assert_eq!(log.writes(), 0, "{:?}", log.calls());
    assert_eq!(
        log.repeated(),
        Default::default(),
        "preview: {:?}",
        log.calls()
    );

    let log = demo.logged(&ctx);
    let opts = stackbot::pipeline::tenants::options(false);
    stackbot::pipeline::tenants::run(&ctx, &log, &opts).unwrap();
    assert_eq!(log.writes(), 0, "{:?}", log.calls());
    assert_eq!(
        log.repeated(),
        Default::default(),
        "tenants: {:?}",
        log.calls()
    );
}

/// The demo's first release run, which writes (two releases, the tenants' pull requests, the
/// dashboard): between its writes nothing is read twice, and no commit's content twice at all.
/// The status at its end reads the tenants it changed afresh (their branch heads), but not the
/// file list and files at their base heads the tenant stage read (`observe::contents`).
#[test]
fn a_release_run_that_writes_reads_no_commits_content_twice() {
    let demo = Demo::new();
    let (r, log) = demo.release_logged("2026-05-01T06:00:00Z");
    assert_eq!(r.outcome.released.len(), 2, "{:?}", r.outcome);
    let opened = (r.tenants.iter())
        .filter(|t| t.outcome == stackbot::tenants::Outcome::Opened)
        .count();
    assert!(opened > 0, "the tenants got pull requests: {:?}", r.tenants);
    assert!(r.dashboard.is_some());
    assert_eq!(log.repeated(), Default::default(), "{:?}", log.calls());
    assert_eq!(
        log.reread_content(),
        Default::default(),
        "{:?}",
        log.calls()
    );
}

/// The same held gate, publishing to the forge and a real OCI registry (behind a counting
/// proxy): the second plan reads nothing of the forge again, and no manifest, blob or page of
/// the tag list is fetched twice.
#[test]
fn a_gated_run_that_holds_a_series_reads_each_oci_fact_once() {
    let reg = crate::support::registry::TestRegistry::start();
    let proxy = crate::support::counting_proxy::CountingProxy::start(&reg.addr);
    let oci = format!(
        "\npublish: [forge, oci]\noci:\n  registry: \"{0}\"\n  repository: \"{0}/kaas/cluster-stacks\"\n  plain_http: true\n",
        proxy.addr
    );
    let demo = gated_beside_ungated_with("pass", &oci);
    let (first, _) = demo.release_logged("2026-05-01T06:00:00Z");
    assert_eq!(
        first.outcome.released,
        ["openstack-scs3-1-33-v1", "openstack-scs3-1-34-v1"]
    );
    proxy.take();
    let (waiting, log) = demo.release_logged("2026-05-01T07:00:00Z");
    demo_go(&demo);
    assert!(waiting.outcome.released.is_empty(), "{:?}", waiting.outcome);
    assert_eq!(log.writes(), 0, "{:?}", log.calls());
    assert_eq!(log.repeated(), Default::default(), "{:?}", log.calls());
    let mut fetched: std::collections::BTreeMap<String, usize> = Default::default();
    // `/v2/` is the registry's API check before a request (no fact of the repository).
    let facts = proxy
        .take()
        .into_iter()
        .filter(|s| s.method == "GET" && s.path != "/v2/");
    for s in facts {
        *fetched.entry(s.target).or_default() += 1;
    }
    assert!(!fetched.is_empty());
    fetched.retain(|_, n| *n > 1);
    assert_eq!(fetched, Default::default(), "the registry");
}

/// The same on GitHub (the fake, with one tenant and the dashboard): the first release run and
/// an hourly run with nothing to do ask the API for nothing twice, whatever route it takes (a per-route count cannot
/// tell two reads of one file from reads of two files; the forge's log can).
#[test]
fn release_runs_on_github_read_each_forge_fact_once() {
    use crate::support::config::DemoConfig;
    use crate::support::fake_github::demo;
    const TOKEN: &str = "ghp_readsONCEtoken_0123456789abcdef";
    let tenant_file = "apiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: openstack-scs2-1-34\n  namespace: cluster\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"1.34\"\n  autoSubscribe: false\n  noProvider: true\n  versions: [v0]\n";
    let fake = demo::start(TOKEN, &["acme/gitops"], tenant_file);
    let dir = tempfile::tempdir().unwrap();
    let cfg = DemoConfig::new()
        .on_github(
            &fake.api_url(),
            &fake.upload_url(),
            "STACKBOT_READS_ONCE_TOKEN",
        )
        .tenant("acme")
        .write(dir.path());
    let loaded = stackbot::config::load(&cfg).unwrap();
    let clock: stackbot::clock::SharedClock = std::sync::Arc::new(stackbot::clock::SystemClock);
    let forge = || {
        let c = stackbot::config::GithubForgeConfig {
            api_url: fake.api_url(),
            upload_url: Some(fake.upload_url()),
            ..Default::default()
        };
        let f = stackbot::forge::github::GithubForge::new(&c, Some(TOKEN.into()), clock.clone());
        ReadLog::new(f.unwrap())
    };
    let ctx = stackbot::pipeline::Context::new(
        loaded,
        "2026-05-01".parse().unwrap(),
        stackbot::env::Env::default(),
        clock.clone(),
    );
    let release = |log: &ReadLog<_>| {
        stackbot::pipeline::release::release(&ctx, log, &Selection::default()).unwrap()
    };
    let log = forge();
    let first = release(&log);
    assert_eq!(first.outcome.released.len(), 2, "{:?}", first.outcome);
    // The first run writes (releases, the tenant's pull request, the dashboard): nothing is
    // read twice between its writes, no commit's content twice at all.
    assert_eq!(log.repeated(), Default::default(), "{:?}", log.calls());
    assert_eq!(
        log.reread_content(),
        Default::default(),
        "{:?}",
        log.calls()
    );
    release(&forge());
    let log = forge();
    let noop = release(&log);
    assert!(noop.outcome.released.is_empty() && noop.dashboard.is_some());
    assert_eq!(log.writes(), 0, "{:?}", log.calls());
    assert_eq!(log.repeated(), Default::default(), "{:?}", log.calls());
}
