//! Real upstream pairs (`tests/fixtures/pairs/<pair>/<commit>/`): one stack released for two
//! minors, close in time. Adopting one release and rendering the other release's set gives the
//! other release byte for byte, in both directions, except the edits a person made between the
//! two commits, which are named here. Content shared across minors (the image list with its
//! build dates, the version table, the README) must come out as upstream's maintainers wrote it.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use stackbot::lock::Lock;
use stackbot::model::FileTree;

use crate::support::shared;
use crate::support::upstream_server::UpstreamServer;

pub(crate) fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("stackbot")
        .unwrap()
        .env_remove("GITHUB_ACTIONS")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

pub(crate) fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

pub(crate) fn tree(dir: &Path) -> FileTree {
    stackbot::render::read_tree(dir).unwrap()
}

/// A line a person wrote differently in the two commits of a pair: `older` is the text in the
/// older minor's release, `newer` in the newer one's (1-based line, the same in both).
/// Rendering one side's templates for the other minor gives that side's wording, with its
/// per-minor facts templated: `from_older` / `from_newer` is the rendered line when that
/// differs from the adopted side's own text.
struct HumanEdit {
    file: &'static str,
    line: usize,
    older: &'static str,
    newer: &'static str,
    from_older: Option<&'static str>,
    from_newer: Option<&'static str>,
}

/// The edits made by hand between the two commits of each pair, besides the per-minor facts.
/// A pair not listed here has none.
fn human_edits(pair: &str) -> Vec<HumanEdit> {
    match pair {
        // a931cdb "Improved wording suggesting SCS-2V-4-20s for control plane. (#265)"
        "openstack-scs2-1-33-1-34" => vec![HumanEdit {
            file: "cluster-class/templates/cluster-class.yaml",
            line: 123,
            older: "            (Default: SCS-2V-4, replace by SCS-2V-4-20s or specify a controlPlaneRootDisk.)",
            newer: "            (Default: SCS-2V-4, specify a controlPlanRootDisk or better replace by SCS-2V-4-20s.)",
            from_older: None,
            from_newer: None,
        }],
        // The README's example: the cluster-stack release a reader should pick is a person's
        // choice (v3 for 1.30, v2 for 1.31), and the 1.30 release names the 1.31 class.
        "openstack-scs-1-30-1-31" => vec![
            HumanEdit {
                file: "README.md",
                line: 74,
                older: "    - v3",
                newer: "    - v2",
                from_older: None,
                from_newer: None,
            },
            HumanEdit {
                file: "README.md",
                line: 105,
                older: "    class: openstack-scs-1-31-v3",
                newer: "    class: openstack-scs-1-31-v2",
                from_older: None,
                from_newer: Some("    class: openstack-scs-1-30-v2"),
            },
        ],
        _ => Vec::new(),
    }
}

/// The Kubernetes version a stack directory's csctl.yaml names.
fn kubernetes_of(dir: &Path) -> stackbot::model::KubeVersion {
    let text = std::fs::read_to_string(dir.join("csctl.yaml")).unwrap();
    let v: yaml_serde::Value = yaml_serde::from_str(&text).unwrap();
    v["config"]["kubernetesVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// The two stack directories of the pair named `name` (a folder of tests/fixtures/pairs), the
/// older minor first.
pub(crate) fn pair(name: &str) -> (PathBuf, PathBuf) {
    let (_, older, newer) = pairs()
        .into_iter()
        .find(|(p, _, _)| p == name)
        .unwrap_or_else(|| panic!("no pair {name} in tests/fixtures/pairs"));
    (older, newer)
}

/// Every pair: its name and its two stack directories, the older minor first.
pub(crate) fn pairs() -> Vec<(String, PathBuf, PathBuf)> {
    let root = shared::shared_dir().join("pairs");
    let mut out = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    names.sort();
    for pair in names {
        let mut sides: Vec<PathBuf> = std::fs::read_dir(&pair)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("csctl.yaml").is_file())
            .collect();
        assert_eq!(
            sides.len(),
            2,
            "{}: a pair is two stack directories",
            pair.display()
        );
        sides.sort_by_key(|d| kubernetes_of(d));
        assert!(
            pair.join("LICENSE").is_file() && pair.join("README.md").is_file(),
            "{}: a vendored pair carries its licence and attribution",
            pair.display()
        );
        let name = pair.file_name().unwrap().to_string_lossy().into_owned();
        let newer = sides.pop().unwrap();
        out.push((name, sides.pop().unwrap(), newer));
    }
    out
}

/// Every vendored chart archive of a stack directory (`**/charts/*.tgz`): file name → bytes.
pub(crate) fn archives(dir: &Path) -> Vec<(String, Vec<u8>)> {
    tree(dir)
        .into_iter()
        .filter(|(p, _)| p.ends_with(".tgz") && p.contains("charts/"))
        .map(|(p, b)| (p.rsplit('/').next().unwrap().to_string(), b))
        .collect()
}

/// The chart repository of cloud-provider-openstack on loopback, as the real one is laid out:
/// its real index (`tests/fixtures/helm-indexes/`, whose `urls` point at the GitHub release
/// assets) under `/cpo`, and the archives `serve` vendors as those release assets under
/// `/dl`. Returns the server and the `--mirror` arguments that send the real URLs there.
pub(crate) fn chart_repository(serve: &Path) -> (UpstreamServer, Vec<String>) {
    let s = UpstreamServer::start();
    let index = shared::shared_dir().join("helm-indexes/cloud-provider-openstack-2026-05-13.yaml");
    s.set("/cpo/index.yaml", 200, std::fs::read(index).unwrap());
    for (file, bytes) in archives(serve) {
        let stem = file.strip_suffix(".tgz").unwrap();
        s.set(&format!("/dl/{stem}/{file}"), 200, bytes);
    }
    let u = s.url();
    let mirrors = vec![
        "--mirror".to_string(),
        format!("https://kubernetes.github.io/cloud-provider-openstack={u}/cpo"),
        "--mirror".to_string(),
        format!("https://github.com/kubernetes/cloud-provider-openstack/releases/download={u}/dl"),
    ];
    (s, mirrors)
}

/// `stackbot adopt DIR --into INTO`, checked; returns the adopted release sets (the lock).
pub(crate) fn adopt(dir: &Path, into: &Path) -> (Lock, String) {
    let (code, out, err) = run(&["adopt", s(dir), "--into", s(into)]);
    assert_eq!(code, 0, "adopt {}:\n{out}\n{err}", dir.display());
    (
        stackbot::lock::load(&into.join("stackbot.lock")).unwrap(),
        out,
    )
}

/// Lines of `rendered` that differ from `expected`, as (1-based line, rendered, expected).
fn differing_lines(rendered: &[u8], expected: &[u8]) -> Vec<(usize, String, String)> {
    let r = String::from_utf8_lossy(rendered);
    let e = String::from_utf8_lossy(expected);
    let (r, e): (Vec<&str>, Vec<&str>) = (r.split('\n').collect(), e.split('\n').collect());
    assert_eq!(
        r.len(),
        e.len(),
        "a human edit changes lines, not their number"
    );
    r.iter()
        .zip(&e)
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(i, (a, b))| (i + 1, a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn adopting_one_release_and_rendering_the_other_gives_the_other_except_named_human_edits() {
    let all = pairs();
    assert!(
        !all.is_empty(),
        "tests/fixtures/pairs holds at least one pair"
    );
    for (pair, older, newer) in all {
        let edits = human_edits(&pair);
        for (from, to, from_is_older) in [(&older, &newer, true), (&newer, &older, false)] {
            let what = format!(
                "{pair}: adopt {} and render {}",
                from.file_name().unwrap().to_string_lossy(),
                to.file_name().unwrap().to_string_lossy()
            );
            let dir = tempfile::tempdir().unwrap();
            let setup = dir.path().join("setup");
            let (_, out) = adopt(from, &setup);
            let config = std::fs::read_to_string(setup.join("stackbot.yaml")).unwrap();
            assert!(
                config.contains("minors: supported"),
                "{what}: nothing keeps this stack from other minors, so none is dropped:\n{config}\n{out}"
            );
            // The other side's release set, exactly as adopting that side reads it.
            let (other_lock, _) = adopt(to, &dir.path().join("other"));
            let sets = dir.path().join("other-set.yaml");
            std::fs::write(
                &sets,
                yaml_serde::to_string(&other_lock.release_sets).unwrap(),
            )
            .unwrap();
            let cfg = setup.join("stackbot.yaml");
            // The other side's chart archives come from their chart repository.
            let (repo, mirrors) = chart_repository(to);
            let mut args = vec!["-c", s(&cfg), "render", "--release-set", s(&sets)];
            args.extend(mirrors.iter().map(String::as_str));
            let (code, _, err) = run(&args);
            assert_eq!(code, 0, "{what}: {err}");
            let own: Vec<String> = archives(from).into_iter().map(|(f, _)| f).collect();
            let new_archives = archives(to)
                .into_iter()
                .filter(|(f, _)| !own.contains(f))
                .count();
            assert_eq!(
                repo.count_prefix("/dl/"),
                new_archives,
                "{what}: each archive the other minor needs is fetched once, no other: {err}"
            );
            assert!(
                repo.count_prefix("/cpo/index.yaml") <= other_lock.release_sets.len(),
                "{what}: the chart repository's index is read once per release set, not per archive"
            );
            let loaded = stackbot::config::load(&cfg).unwrap();
            let minor = other_lock.release_sets[0].minor();
            let rendered = tree(&stackbot::render::output_dir(
                &loaded,
                &loaded.config.stacks[0],
                minor,
            ));
            let expected = tree(to);
            assert_eq!(
                rendered.keys().collect::<Vec<_>>(),
                expected.keys().collect::<Vec<_>>(),
                "{what}: the same files"
            );
            let mut seen = Vec::new();
            for (path, want) in &expected {
                let got = &rendered[path];
                if got == want {
                    continue;
                }
                for (line, r, e) in differing_lines(got, want) {
                    // Rendering carries the adopted side's wording; the other side has its own.
                    let named = edits.iter().find(|h| {
                        let (adopted, other) = if from_is_older {
                            (h.from_older.unwrap_or(h.older), h.newer)
                        } else {
                            (h.from_newer.unwrap_or(h.newer), h.older)
                        };
                        h.file == path && h.line == line && r == adopted && e == other
                    });
                    assert!(
                        named.is_some(),
                        "{what}: {path}:{line} differs and is no named human edit:\n  rendered: {r}\n  upstream: {e}"
                    );
                    seen.push((path.clone(), line));
                }
            }
            assert_eq!(
                seen.len(),
                edits.len(),
                "{what}: every named human edit is a real difference ({seen:?})"
            );
            // `--release-set` also rendered the adopted minor (it shares the lists), so the
            // tree is what the lock renders: `render --check` is clean at once, from the lock
            // and the templates alone (no network), and `render` changes nothing.
            let before = repo.count();
            let (code, out, err) = run(&["-c", s(&cfg), "render", "--check"]);
            assert_eq!(
                code, 0,
                "{what}: render --check after render --release-set:\n{out}{err}"
            );
            let (code, out, err) = run(&["-c", s(&cfg), "render"]);
            assert_eq!(code, 0, "{what}: {out}{err}");
            assert!(
                out.lines().all(|l| l.ends_with(": unchanged")),
                "{what}: nothing left to render:\n{out}"
            );
            assert_eq!(
                repo.count(),
                before,
                "{what}: render and --check fetch nothing"
            );
        }
    }
}

#[test]
fn the_image_list_records_build_dates_and_keeps_every_image_it_knows() {
    // After adopting 1.34.7, a 1.34.8 release adds its image beside 1.34.7 (kept, with its
    // build date) and replaces the 1.34 row; nothing is listed twice.
    let (_, newer) = pair("openstack-scs2-1-33-1-34");
    let dir = tempfile::tempdir().unwrap();
    let setup = dir.path().join("setup");
    let (lock, _) = adopt(&newer, &setup);
    let set = &lock.release_sets[0];
    assert_eq!(
        set.node_image.build_date.map(|d| d.to_string()).as_deref(),
        Some("2026-04-16"),
        "the build date kubernetes.yaml gives v1.34.7 is in the release set"
    );
    let cfg = setup.join("stackbot.yaml");
    let loaded = stackbot::config::load(&cfg).unwrap();
    let mut next = set.clone();
    next.kubernetes = "v1.34.8".parse().unwrap();
    let (name, url) = loaded.config.stacks[0].node_image.expand(next.kubernetes);
    next.node_image.name = name;
    next.node_image.url = url.clone();
    next.node_image.sha256 = "a".repeat(64);
    next.node_image.build_date = None;
    let sets = dir.path().join("next.yaml");
    std::fs::write(&sets, yaml_serde::to_string(&vec![next.clone()]).unwrap()).unwrap();
    // Without a build date the list cannot be written: refused, naming what is missing.
    let (code, _, err) = run(&["-c", s(&cfg), "render", "--release-set", s(&sets)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("kubernetes.yaml"), "{err}");
    assert!(
        err.contains("build date of node image v1.34.8 is unknown"),
        "{err}"
    );
    next.node_image.build_date = Some("2026-05-20".parse().unwrap());
    std::fs::write(&sets, yaml_serde::to_string(&vec![next.clone()]).unwrap()).unwrap();
    let (code, _, err) = run(&["-c", s(&cfg), "render", "--release-set", s(&sets)]);
    assert_eq!(code, 0, "{err}");
    let out = stackbot::render::output_dir(&loaded, &loaded.config.stacks[0], next.minor());
    let list = std::fs::read_to_string(out.join("kubernetes.yaml")).unwrap();
    let upstream = std::fs::read_to_string(newer.join("kubernetes.yaml")).unwrap();
    let entry = format!(
        "      - version: 'v1.34.8'\n        url: {url}\n        checksum: \"sha256:{}\"\n        build_date: 2026-05-20\n",
        "a".repeat(64)
    );
    assert_eq!(
        list,
        format!("{upstream}{entry}"),
        "appended, sorted, nothing lost"
    );
    let table = std::fs::read_to_string(out.join("versions.yaml")).unwrap();
    let upstream = std::fs::read_to_string(newer.join("versions.yaml")).unwrap();
    assert_eq!(
        table,
        upstream.replace("kubernetes: 1.34.7", "kubernetes: 1.34.8"),
        "one row per minor"
    );
    // The replaced set's image stays known, with its build date, for every later rendering.
    let lock = stackbot::lock::load(&setup.join("stackbot.lock")).unwrap();
    let id = set.stack.clone();
    let kept = lock.history[&id]
        .images
        .iter()
        .find(|k| k.kubernetes == set.kubernetes)
        .expect("v1.34.7 is remembered");
    assert_eq!(kept.node_image, set.node_image);
    let (code, out, err) = run(&["-c", s(&cfg), "render", "--check"]);
    assert_eq!(code, 0, "{out}{err}");
}

/// A new patch of `set`'s minor, its image named as the stack's configuration names it.
pub(crate) fn next_patch(
    set: &stackbot::model::ReleaseSet,
    cfg: &stackbot::config::StackConfig,
    patch: &str,
    day: &str,
) -> stackbot::model::ReleaseSet {
    let mut next = set.clone();
    next.kubernetes = patch.parse().unwrap();
    let (name, url) = cfg.node_image.expand(next.kubernetes);
    next.node_image.name = name;
    next.node_image.url = url;
    next.node_image.sha256 = "b".repeat(64);
    next.node_image.build_date = Some(day.parse().unwrap());
    next
}

#[test]
fn a_new_image_of_one_minor_releases_that_minor_only_and_the_other_carries_it_at_its_own_release() {
    use stackbot::plan::{Desired, Latest, Renderer, up_to_date};
    let (older, newer) = pair("openstack-scs2-1-33-1-34");
    let dir = tempfile::tempdir().unwrap();
    let setup = dir.path().join("setup");
    adopt(&newer, &setup);
    let (older_lock, _) = adopt(&older, &dir.path().join("other"));
    let cfg = setup.join("stackbot.yaml");
    let loaded = stackbot::config::load(&cfg).unwrap();
    let stack = loaded.config.stacks[0].clone();
    let renderer = Renderer {
        templates: std::sync::Arc::new(
            stackbot::render::load_templates(&loaded.resolve(&stack.templates)).unwrap(),
        ),
        stack: stack.clone(),
    };
    // `render --release-set FILE`: the lock records the sets (and keeps replaced images).
    let record = |sets: Vec<stackbot::model::ReleaseSet>| {
        let file = dir.path().join("sets.yaml");
        std::fs::write(&file, yaml_serde::to_string(&sets).unwrap()).unwrap();
        let (code, out, err) = run(&["-c", s(&cfg), "render", "--release-set", s(&file)]);
        assert_eq!(code, 0, "{out}{err}");
        stackbot::lock::load(&setup.join("stackbot.lock")).unwrap()
    };
    let desired = |set: &stackbot::model::ReleaseSet, lock: &Lock| Desired {
        stack: set.stack.clone(),
        minor: set.minor(),
        set: set.clone(),
        path: String::new(),
        rendered: stackbot::render::render_stack(&renderer.templates, &stack, set, lock).unwrap(),
        stepped_over: Vec::new(),
        beside: Default::default(),
        renderer: Some(renderer.clone()),
    };
    // A release as `plan` observes it: its hashes and the lock at its tag.
    let released = |d: &Desired, lock: &Lock| Latest {
        tag: format!("{}-v1", d.series()),
        n: 1,
        hashes: Some(stackbot::package::hashes(&d.rendered)),
        metadata: None,
        kubernetes: None,
        created: None,
        set: Some(d.set.clone()),
        lock: Some(lock.clone()),
    };
    let set33 = older_lock.release_sets[0].clone();
    let both = record(vec![set33.clone()]);
    let set34 = both
        .get(&set33.stack, "1.34".parse().unwrap())
        .unwrap()
        .clone();
    let (d33, d34) = (desired(&set33, &both), desired(&set34, &both));
    let (latest33, latest34) = (released(&d33, &both), released(&d34, &both));
    assert!(up_to_date(&d33, Some(&latest33)) && up_to_date(&d34, Some(&latest34)));

    // v1.34.8: its image joins the list 1.33's templates render too.
    let set34n = next_patch(&set34, &stack, "v1.34.8", "2026-05-20");
    let after = record(vec![set34n.clone()]);
    let d34n = desired(&set34n, &after);
    assert!(
        !up_to_date(&d34n, Some(&latest34)),
        "1.34 has a new patch: released"
    );
    let d33n = desired(&set33, &after);
    assert_ne!(
        d33n.rendered, d33.rendered,
        "the shared list of 1.33 changed with 1.34's image"
    );
    assert!(
        up_to_date(&d33n, Some(&latest33)),
        "shared content alone releases nothing: 1.33 is unchanged since its release"
    );
    // The run after: 1.34's release is the latest, 1.33 still has nothing of its own.
    let latest34n = released(&d34n, &after);
    assert!(up_to_date(&d34n, Some(&latest34n)) && up_to_date(&d33n, Some(&latest33)));

    // 1.33's own next patch releases it, and its release carries v1.34.8 in the list.
    let set33n = next_patch(&set33, &stack, "v1.33.11", "2026-05-21");
    let later = record(vec![set33n.clone()]);
    let d33l = desired(&set33n, &later);
    assert!(!up_to_date(&d33l, Some(&latest33)));
    let list = String::from_utf8(d33l.rendered["kubernetes.yaml"].clone()).unwrap();
    assert!(
        list.contains("'v1.34.8'") && list.contains("'v1.33.11'"),
        "{list}"
    );
}

/// The openstack/scs 1.29 setup and the 1.30 release set, for the chart-archive tests.
fn vendored_pair() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let (older, newer) = pair("openstack-scs-1-29-1-30");
    let dir = tempfile::tempdir().unwrap();
    let setup = dir.path().join("setup");
    adopt(&older, &setup);
    let (other, _) = adopt(&newer, &dir.path().join("other"));
    let sets = dir.path().join("sets.yaml");
    std::fs::write(&sets, yaml_serde::to_string(&other.release_sets).unwrap()).unwrap();
    (dir, setup, sets, newer)
}

#[test]
fn an_archive_that_is_not_the_one_the_index_vouches_for_is_refused_and_nothing_is_written() {
    let (_dir, setup, sets, newer) = vendored_pair();
    let (repo, mirrors) = chart_repository(&newer);
    // The repository serves 2.29.1's bytes as 2.30.0: not what its index's digest says.
    let old = std::fs::read(
        setup.join("templates/openstack/scs/cluster-addon/charts/openstack-cloud-controller-manager-2.29.1.tgz"),
    )
    .unwrap();
    let target = "/dl/openstack-cloud-controller-manager-2.30.0/openstack-cloud-controller-manager-2.30.0.tgz";
    repo.set(target, 200, old);
    let cfg = setup.join("stackbot.yaml");
    let lock_before = std::fs::read_to_string(setup.join("stackbot.lock")).unwrap();
    let mut args = vec!["-c", s(&cfg), "render", "--release-set", s(&sets)];
    args.extend(mirrors.iter().map(String::as_str));
    let (code, _, err) = run(&args);
    assert_eq!(
        code, 2,
        "a digest mismatch is for a human to look at: {err}"
    );
    for part in [
        "openstack-cloud-controller-manager 2.30.0",
        "https://github.com/kubernetes/cloud-provider-openstack/releases/download/openstack-cloud-controller-manager-2.30.0/openstack-cloud-controller-manager-2.30.0.tgz",
        "f9676bfa1a2aa75e9fa2ceaa21752d7fcad37878afb01fbeb006d2f31997755f",
        "hint:",
    ] {
        assert!(err.contains(part), "names {part}: {err}");
    }
    let charts = setup.join("templates/openstack/scs/cluster-addon/charts");
    let names: Vec<String> = std::fs::read_dir(&charts)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n.contains("2.30.0")),
        "nothing fetched is kept: {names:?}"
    );
    assert_eq!(
        std::fs::read_to_string(setup.join("stackbot.lock")).unwrap(),
        lock_before
    );
    assert!(!setup.join("cluster-stacks/openstack/scs/1-30").exists());
}

#[test]
fn an_unreachable_chart_repository_is_transient_and_a_version_it_does_not_publish_is_not() {
    let (_dir, setup, sets, newer) = vendored_pair();
    let cfg = setup.join("stackbot.yaml");
    let (repo, mirrors) = chart_repository(&newer);
    let mut args = vec!["-c", s(&cfg), "render", "--release-set", s(&sets)];
    args.extend(mirrors.iter().map(String::as_str));
    repo.set("/cpo/index.yaml", 503, "unavailable");
    let (code, _, err) = run(&args);
    assert_eq!(code, 1, "the next run may succeed: {err}");
    assert!(
        err.contains("openstack-c") && err.contains("2.30.0") && err.contains("/cpo/index.yaml"),
        "names the chart, the version and the URL: {err}"
    );
    assert!(!setup.join("cluster-stacks/openstack/scs/1-30").exists());

    // A set pinning a version the repository never published is the set's mistake.
    repo.set(
        "/cpo/index.yaml",
        200,
        std::fs::read(
            shared::shared_dir().join("helm-indexes/cloud-provider-openstack-2026-05-13.yaml"),
        )
        .unwrap(),
    );
    let text = std::fs::read_to_string(&sets)
        .unwrap()
        .replace("2.30.0", "2.30.99");
    std::fs::write(&sets, text).unwrap();
    let (code, _, err) = run(&args);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("2.30.99") && err.contains("does not list this version"),
        "{err}"
    );
}

#[test]
fn render_check_names_an_archive_it_would_need_instead_of_fetching_it() {
    let (_dir, setup, sets, newer) = vendored_pair();
    let cfg = setup.join("stackbot.yaml");
    let (repo, mirrors) = chart_repository(&newer);
    let mut args = vec![
        "-c",
        s(&cfg),
        "render",
        "--check",
        "--release-set",
        s(&sets),
    ];
    args.extend(mirrors.iter().map(String::as_str));
    let (code, _, err) = run(&args);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("the templates hold no cluster-addon/charts/openstack-cloud-controller-manager-2.30.0.tgz"),
        "{err}"
    );
    assert_eq!(repo.count(), 0, "--check reads no network");
}

#[test]
fn after_render_release_set_the_other_minors_share_the_new_lists_and_render_check_is_clean() {
    let (older, newer) = pair("openstack-scs2-1-33-1-34");
    let dir = tempfile::tempdir().unwrap();
    let setup = dir.path().join("setup");
    let (lock, _) = adopt(&newer, &setup);
    let (older_lock, _) = adopt(&older, &dir.path().join("other"));
    let cfg = setup.join("stackbot.yaml");
    let loaded = stackbot::config::load(&cfg).unwrap();
    let stack = &loaded.config.stacks[0];
    let record = |sets: Vec<stackbot::model::ReleaseSet>, extra: &[&str]| {
        let file = dir.path().join("sets.yaml");
        std::fs::write(&file, yaml_serde::to_string(&sets).unwrap()).unwrap();
        let mut args = vec!["-c", s(&cfg), "render", "--release-set", s(&file)];
        args.extend(extra);
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{out}{err}");
        out
    };
    record(older_lock.release_sets.clone(), &[]);
    // v1.34.8: its image joins the list every minor's kubernetes.yaml carries.
    let next = next_patch(&lock.release_sets[0], stack, "v1.34.8", "2026-05-20");
    let out = record(vec![next.clone()], &[]);
    assert!(
        out.contains("1.33 (v1.33.10)") && out.contains("1.34 (v1.34.8)"),
        "both minors rendered: {out}"
    );
    let dir33 = stackbot::render::output_dir(&loaded, stack, "1.33".parse().unwrap());
    let list = std::fs::read_to_string(dir33.join("kubernetes.yaml")).unwrap();
    assert!(list.contains("'v1.34.8'"), "{list}");
    let (code, out, err) = run(&["-c", s(&cfg), "render", "--check"]);
    assert_eq!(code, 0, "the tree is what the lock renders:\n{out}{err}");
    // `--minor` renders that minor only: the other's shared lists are then stale, and
    // `render --check` says so until `render` runs.
    let again = next_patch(&next, stack, "v1.34.9", "2026-05-27");
    let out = record(vec![again], &["--minor", "1.34"]);
    assert!(!out.contains("1.33"), "{out}");
    let (code, out, _) = run(&["-c", s(&cfg), "render", "--check"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("1-33: stale"), "{out}");
}

#[test]
fn the_version_table_drops_the_row_of_a_minor_past_its_end_of_life_as_upstream_does() {
    // Upstream drops a row by hand once its minor is past its end of life ("remove kubernetes
    // 1.28 since it's EOL", e19f91c, 2024-10-29, the day after 1.28's). The R8 release of 1.31
    // (e2d3dc0, 2025-04-07) lists 1.30, 1.31 and 1.32; 1.30 ended on 2025-07-15
    // (tests/fixtures/upstream/k8s-eol.yaml).
    let (_, newer) = pair("openstack-scs-1-30-1-31");
    let dir = tempfile::tempdir().unwrap();
    let setup = dir.path().join("setup");
    let (lock, _) = adopt(&newer, &setup);
    let loaded = stackbot::config::load(&setup.join("stackbot.yaml")).unwrap();
    let stack = &loaded.config.stacks[0];
    let templates = stackbot::render::load_templates(&loaded.resolve(&stack.templates)).unwrap();
    let set = &lock.release_sets[0];
    let eol = |m: &str, d: &str| (m.parse().unwrap(), d.parse().unwrap());
    let lifecycles = stackbot::compliance::Lifecycles::Known(
        [
            eol("1.30", "2025-07-15"),
            eol("1.31", "2025-11-11"),
            eol("1.32", "2026-02-28"),
        ]
        .into(),
    );
    let render_on = |day: &str| {
        let mut known = lock.clone();
        known.retire_rows(&lifecycles, day.parse().unwrap());
        // What the release commit writes is what `render` reads back.
        let path = dir.path().join("stackbot.lock");
        stackbot::lock::save(&known, &path).unwrap();
        let read = stackbot::lock::load(&path).unwrap();
        assert_eq!(read, known);
        stackbot::render::render_stack(&templates, stack, set, &read).unwrap()
    };
    let upstream = tree(&newer);
    assert_eq!(render_on("2025-07-14"), upstream, "1.30 still supported");
    let after = render_on("2025-07-15");
    let table = String::from_utf8(upstream["versions.yaml"].clone()).unwrap();
    let without_1_30: String = table.split_inclusive('\n').skip(3).collect();
    assert!(table.starts_with("- kubernetes: 1.30.11\n"), "{table}");
    assert_eq!(
        String::from_utf8(after["versions.yaml"].clone()).unwrap(),
        without_1_30
    );
    for (path, bytes) in &upstream {
        if path != "versions.yaml" {
            assert_eq!(
                &after[path], bytes,
                "{path}: only the table follows the window"
            );
        }
    }
}
