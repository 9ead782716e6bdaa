//! `stackbot release` from an adopted real tree, on the local forge whose repository holds the
//! setup (its `main` is what a checkout pulls): releasing another minor brings what
//! `render --release-set` brings (the other minor's chart archives, fetched and checked
//! against the chart repository's index), and the tree a release commit leaves is what its
//! lock renders, for every tracked minor, offline.

use std::path::Path;

use stackbot::forge::Forge;
use stackbot::forge::local::LocalForge;
use stackbot::model::ReleaseSet;

use super::adopt_pairs::{adopt, archives, chart_repository, next_patch, pair, run, s, tree};

fn repo() -> stackbot::forge::RepoRef {
    stackbot::forge::RepoRef::parse("scs/cluster-stacks").unwrap()
}

fn forge(setup: &Path) -> LocalForge {
    LocalForge::new(setup.join("forge"), "stackbot", "stackbot@example.org")
}

/// The adopted setup as a cluster-stacks repository: its configuration releases to the local
/// forge under `setup/forge` (no dashboard: nothing reads upstream but the chart repository),
/// and the forge's `main` holds the setup as `adopt` and `render` left it.
fn publish_setup(setup: &Path) {
    let cfg = setup.join("stackbot.yaml");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str("dashboard:\n  enabled: false\nforge:\n  kind: local\n  repository: scs/cluster-stacks\n  base_branch: main\n  mode: direct\n  local:\n    path: forge\n");
    std::fs::write(&cfg, text).unwrap();
    let (code, out, err) = run(&["-c", s(&cfg), "render"]);
    assert_eq!(code, 0, "{out}{err}");
    let f = forge(setup);
    f.ensure_repo(&repo(), "main").unwrap();
    let head = f.branch_head(&repo(), "main").unwrap().unwrap();
    let files = tree(setup)
        .into_iter()
        .filter(|(p, _)| !p.starts_with("forge/"))
        .map(|(p, b)| (p, Some(b)))
        .collect();
    f.commit(&repo(), "main", &head, Some(&head), &files, "adopted")
        .unwrap();
}

/// `git pull`: the files of the forge's `main` into the checkout.
fn pull(setup: &Path) {
    let f = forge(setup);
    let head = f.branch_head(&repo(), "main").unwrap().unwrap();
    for p in f.list_files(&repo(), &head).unwrap() {
        let bytes = f.read_file(&repo(), &head, &p).unwrap().unwrap();
        let path = setup.join(&p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

/// The files of `main` (path → bytes).
fn main_files(setup: &Path) -> Vec<(String, Vec<u8>)> {
    let f = forge(setup);
    let head = f.branch_head(&repo(), "main").unwrap().unwrap();
    f.list_files(&repo(), &head)
        .unwrap()
        .into_iter()
        .map(|p| {
            let b = f.read_file(&repo(), &head, &p).unwrap().unwrap();
            (p, b)
        })
        .collect()
}

fn write_sets(file: &Path, sets: &[ReleaseSet]) {
    std::fs::write(file, yaml_serde::to_string(sets).unwrap()).unwrap();
}

#[test]
fn releasing_another_minor_of_a_tree_that_vendors_charts_brings_its_archives_and_renders_offline() {
    let (older, newer) = pair("openstack-scs-1-29-1-30");
    for (from, to) in [(&older, &newer), (&newer, &older)] {
        let dir = tempfile::tempdir().unwrap();
        let setup = dir.path().join("setup");
        adopt(from, &setup);
        publish_setup(&setup);
        let (other, _) = adopt(to, &dir.path().join("other"));
        let sets = dir.path().join("sets.yaml");
        write_sets(&sets, &other.release_sets);
        let cfg = setup.join("stackbot.yaml");
        let (repo, mirrors) = chart_repository(to);
        let mut args = vec!["-c", s(&cfg), "release", "--release-set", s(&sets)];
        args.extend(mirrors.iter().map(String::as_str));
        let (code, out, err) = run(&args);
        let what = format!("adopt {} and release {}", from.display(), to.display());
        assert_eq!(code, 0, "{what}:\n{out}{err}");
        let own: Vec<String> = archives(from).into_iter().map(|(f, _)| f).collect();
        let new: Vec<String> = archives(to)
            .into_iter()
            .map(|(f, _)| f)
            .filter(|f| !own.contains(f))
            .collect();
        assert!(!new.is_empty(), "{what}: the other minor pins other charts");
        assert_eq!(repo.count_prefix("/dl/"), new.len(), "{what}: {err}");

        // The release commit carries the archives into the templates, and the lock their
        // digests: the other minor's directory is upstream's release byte for byte.
        pull(&setup);
        let committed: Vec<String> = main_files(&setup).into_iter().map(|(p, _)| p).collect();
        for f in &new {
            assert!(
                committed.contains(&format!("templates/openstack/scs/cluster-addon/charts/{f}")),
                "{what}: {f} is committed into the templates: {committed:?}"
            );
        }
        let loaded = stackbot::config::load(&cfg).unwrap();
        let minor = other.release_sets[0].minor();
        let dir_out = stackbot::render::output_dir(&loaded, &loaded.config.stacks[0], minor);
        assert_eq!(
            tree(&dir_out),
            tree(to),
            "{what}: the other minor as upstream released it"
        );
        let lock = stackbot::lock::load(&setup.join("stackbot.lock")).unwrap();
        let released = lock.get(&other.release_sets[0].stack, minor).unwrap();
        assert_eq!(
            released.components, other.release_sets[0].components,
            "{what}: the lock records each chart's digest and lock time"
        );

        // The checkout renders every tracked minor offline.
        let before = repo.count();
        let (code, out, err) = run(&["-c", s(&cfg), "render", "--check"]);
        assert_eq!(code, 0, "{what}:\n{out}{err}");
        assert_eq!(
            repo.count(),
            before,
            "{what}: render --check reads no network"
        );
    }
}

#[test]
fn a_release_whose_chart_archive_is_not_the_one_the_index_vouches_for_waits_and_says_why() {
    let (older, newer) = pair("openstack-scs-1-29-1-30");
    let dir = tempfile::tempdir().unwrap();
    let setup = dir.path().join("setup");
    adopt(&older, &setup);
    publish_setup(&setup);
    let (other, _) = adopt(&newer, &dir.path().join("other"));
    let sets = dir.path().join("sets.yaml");
    write_sets(&sets, &other.release_sets);
    let (repo, mirrors) = chart_repository(&newer);
    // 2.29.1's bytes served as 2.30.0: not what the index's digest says.
    let old = archives(&older)
        .into_iter()
        .find(|(f, _)| f == "openstack-cloud-controller-manager-2.29.1.tgz")
        .unwrap()
        .1;
    repo.set(
        "/dl/openstack-cloud-controller-manager-2.30.0/openstack-cloud-controller-manager-2.30.0.tgz",
        200,
        old,
    );
    let before = main_files(&setup);
    let cfg = setup.join("stackbot.yaml");
    let mut args = vec!["-c", s(&cfg), "release", "--release-set", s(&sets)];
    args.extend(mirrors.iter().map(String::as_str));
    let (code, out, err) = run(&args);
    assert_eq!(code, 1, "the series waits, reported as failed:\n{out}{err}");
    let said = format!("{out}{err}");
    for part in [
        "openstack-cloud-controller-manager 2.30.0",
        "the chart archives the release set pins",
        // Fetched from the repository and checked against its index's digest.
        "https://github.com/kubernetes/cloud-provider-openstack/releases/download/openstack-cloud-controller-manager-2.30.0/openstack-cloud-controller-manager-2.30.0.tgz",
        "f9676bfa1a2aa75e9fa2ceaa21752d7fcad37878afb01fbeb006d2f31997755f",
        "hint:",
    ] {
        assert!(said.contains(part), "names {part}:\n{said}");
    }
    assert_eq!(main_files(&setup), before, "nothing is committed");
}

#[test]
fn after_a_release_the_other_minors_directories_follow_the_shared_lists_and_render_check_is_clean()
{
    let (older, newer) = pair("openstack-scs2-1-33-1-34");
    let dir = tempfile::tempdir().unwrap();
    let setup = dir.path().join("setup");
    let (lock34, _) = adopt(&newer, &setup);
    publish_setup(&setup);
    let (lock33, _) = adopt(&older, &dir.path().join("other"));
    let cfg = setup.join("stackbot.yaml");
    let loaded = stackbot::config::load(&cfg).unwrap();
    let stack = &loaded.config.stacks[0];
    let sets = dir.path().join("sets.yaml");
    let release = |set: &ReleaseSet| {
        write_sets(&sets, std::slice::from_ref(set));
        let (code, out, err) = run(&["-c", s(&cfg), "release", "--release-set", s(&sets)]);
        assert_eq!(code, 0, "{out}{err}");
        pull(&setup);
        out
    };
    release(&lock33.release_sets[0]);
    // v1.34.8: its image joins the list 1.33's kubernetes.yaml carries, and its row the table.
    let next = next_patch(&lock34.release_sets[0], stack, "v1.34.8", "2026-05-20");
    let out = release(&next);
    assert!(
        out.contains("openstack-scs2-1-34-v1") && !out.contains("openstack-scs2-1-33-v2"),
        "1.34 releases, 1.33 has nothing of its own:\n{out}"
    );
    let dir33 = stackbot::render::output_dir(&loaded, stack, "1.33".parse().unwrap());
    let list = std::fs::read_to_string(dir33.join("kubernetes.yaml")).unwrap();
    assert!(list.contains("'v1.34.8'"), "{list}");
    let (code, out, err) = run(&["-c", s(&cfg), "render", "--check"]);
    assert_eq!(code, 0, "every tracked minor checks clean:\n{out}{err}");
}
