//! `stackbot adopt` on the real SCS stacks: adopting a tree and rendering the adopted setup
//! gives the tree back byte for byte (same csctl hash, `render --check` clean), for every
//! reference tree at every commit; trees that cannot be adopted safely are refused with the
//! file, line and field; an adopted tree re-targeted to the next minor still packages.

use crate::support::shared;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use stackbot::model::{FileTree, KubeVersion, ReleaseSet};

fn stackbot() -> Command {
    Command::cargo_bin("stackbot").unwrap()
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = stackbot()
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

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every `<commit>/providers/<provider>/<name>` under the reference root.
fn reference_trees() -> Vec<(String, String, String, PathBuf)> {
    let known = shared::reference_stack("a931cdb", "openstack", "scs2");
    let root = known.ancestors().nth(4).unwrap().to_path_buf();
    let mut out = Vec::new();
    let dirs = |p: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(p)
            .map(|r| {
                r.flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    for commit in dirs(&root) {
        for provider in dirs(&root.join(&commit).join("providers")) {
            for name in dirs(&root.join(&commit).join("providers").join(&provider)) {
                let path = shared::reference_stack(&commit, &provider, &name);
                out.push((commit.clone(), provider.clone(), name.clone(), path));
            }
        }
    }
    out
}

fn tree(dir: &Path) -> FileTree {
    stackbot::render::read_tree(dir).unwrap()
}

fn hash(dir: &Path) -> String {
    let (code, out, err) = run(&["hash", s(dir)]);
    assert_eq!(code, 0, "{err}");
    out.trim().to_string()
}

/// Adopt `stack` into `into` and render it; returns the rendered directory.
fn adopt_and_render(stack: &Path, into: &Path) -> PathBuf {
    let (code, out, err) = run(&["adopt", s(stack), "--into", s(into)]);
    assert_eq!(code, 0, "adopt {}:\n{out}\n{err}", stack.display());
    let cfg = into.join("stackbot.yaml");
    let (code, _, err) = run(&["-c", s(&cfg), "render"]);
    assert_eq!(code, 0, "render {}:\n{err}", stack.display());
    let (code, out, err) = run(&["-c", s(&cfg), "render", "--check"]);
    assert_eq!(code, 0, "render --check right after render:\n{out}\n{err}");
    let loaded = stackbot::config::load(&cfg).unwrap();
    let lock = stackbot::lock::load(&into.join("stackbot.lock")).unwrap();
    assert_eq!(lock.release_sets.len(), 1);
    let set = &lock.release_sets[0];
    stackbot::render::output_dir(&loaded, &loaded.config.stacks[0], set.minor())
}

#[test]
fn every_reference_tree_round_trips_or_is_refused_with_the_reason() {
    let trees = reference_trees();
    let names: Vec<String> = trees
        .iter()
        .map(|(c, p, n, _)| format!("{c}/{p}/{n}"))
        .collect();
    for expected in [
        "3c6ca6c/openstack/scs2",
        "828710f/openstack/scs2",
        "a931cdb/docker/scs",
        "a931cdb/openstack/scs",
        "a931cdb/openstack/scs2",
        "cb69170/openstack/scs2",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    for (commit, provider, name, path) in trees {
        let dir = tempfile::tempdir().unwrap();
        let into = dir.path().join("setup");
        if commit == "3c6ca6c" {
            // The chart still carries the 1.33 name while csctl.yaml says v1.34.7 (fixed a
            // week later by 9baa57c): no template can render that, so adoption refuses.
            let (code, out, err) = run(&["adopt", s(&path), "--into", s(&into)]);
            assert_eq!(code, 2, "{out}\n{err}");
            assert!(
                err.contains("cluster-class/Chart.yaml:7: field `name`"),
                "{err}"
            );
            assert!(err.contains("openstack-scs2-1-34-cluster-class"), "{err}");
            assert!(!into.exists(), "nothing written");
            continue;
        }
        let rendered = adopt_and_render(&path, &into);
        assert_eq!(
            rendered,
            into.join("cluster-stacks")
                .join(&provider)
                .join(&name)
                .join(rendered.file_name().unwrap())
        );
        let (want, got) = (tree(&path), tree(&rendered));
        assert_eq!(
            want.keys().collect::<Vec<_>>(),
            got.keys().collect::<Vec<_>>(),
            "{commit}/{provider}/{name}"
        );
        for (p, bytes) in &want {
            assert!(&got[p] == bytes, "{commit}/{provider}/{name}: {p} differs");
        }
        assert_eq!(hash(&path), hash(&rendered), "{commit}/{provider}/{name}");
    }
}

#[test]
fn the_csctl_test_vector_hash_survives_adoption() {
    let dir = tempfile::tempdir().unwrap();
    let rendered = adopt_and_render(
        &shared::reference_stack("a931cdb", "openstack", "scs2"),
        dir.path(),
    );
    // docs: cluster-stack-format.md §2.1, confirmed with csctl 66dc97a.
    assert_eq!(
        hash(&rendered),
        "azlfam7rgn823z07ougej26xmpzsohlj0tvr4s0njis"
    );
}

#[test]
fn version_bearing_values_become_expressions_and_nothing_else_changes() {
    let dir = tempfile::tempdir().unwrap();
    let stack = shared::reference_stack("a931cdb", "openstack", "scs2");
    let (code, out, err) = run(&[
        "--format",
        "json",
        "adopt",
        s(&stack),
        "--into",
        s(dir.path()),
    ]);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["stack"], "openstack/scs2");
    assert_eq!(report["kubernetes"], "v1.34.7");
    let templates = dir.path().join("templates/openstack/scs2");
    let t = |p: &str| std::fs::read_to_string(templates.join(p)).unwrap();
    // No pinned value is left as a literal in any template.
    for (path, bytes) in tree(&templates) {
        let text = String::from_utf8_lossy(&bytes);
        for pinned in [
            "v1.34.7",
            "ubuntu-capi-image-v1.34.7",
            "f7bf12297833cca14de6d24081c8a01e99143651e4c01431b911375300550fe0",
            "2.34.2",
            "2.34.3",
            "openstack-scs2-1-34",
        ] {
            assert!(!text.contains(pinned), "{path} still holds {pinned}");
        }
    }
    assert!(t("csctl.yaml.tera").contains("kubernetesVersion: {{ kubernetes.version }}"));
    assert!(
        t("cluster-class/Chart.yaml.tera")
            .contains("name: openstack-scs2-{{ minor.dashed }}-cluster-class")
    );
    assert!(
        t("cluster-addon/ccm/Chart.yaml.tera").contains("version: {{ components.ccm.version }}")
    );
    assert!(
        t("cluster-addon/metrics-server/Chart.yaml.tera")
            .contains("version: \"{{ components[\"metrics-server\"].version }}\"")
    );
    let image = t("image.yaml.tera");
    for e in [
        "{{ node_image.name }}",
        "{{ node_image.url }}",
        "{{ node_image.sha256 }}",
    ] {
        assert!(image.contains(e), "{image}");
    }
    // The image-manager list and the version table are shared across minors: loops over
    // what the lock knows (older entries and other minors' rows go to its `history`).
    let list = t("kubernetes.yaml.tera");
    assert!(
        list.ends_with("    versions:\n{% for image in images %}      - version: '{{ image.version }}'\n        url: {{ image.url }}\n        checksum: \"sha256:{{ image.sha256 }}\"\n        build_date: {{ image.build_date }}\n{% endfor %}"),
        "{list}"
    );
    assert!(!list.contains("v1.34.6"), "{list}");
    assert_eq!(
        t("versions.yaml.tera"),
        "{% for row in table %}- kubernetes: {{ row.kubernetes.major }}.{{ row.kubernetes.minor }}.{{ row.kubernetes.patch }}\n  cinder_csi: {{ row.components.csi }}\n  occm: {{ row.components.ccm }}\n{% endfor %}"
    );
    let lock = stackbot::lock::load(&dir.path().join("stackbot.lock")).unwrap();
    let history = &lock.history[&lock.release_sets[0].stack];
    assert_eq!(
        history.images.len(),
        14,
        "every listed image but the pinned one"
    );
    let rows: Vec<String> = history
        .rows
        .iter()
        .map(|r| r.kubernetes.to_string())
        .collect();
    assert_eq!(rows, ["v1.32.13", "v1.33.10"]);
    // Helm and CSO templates pass through untouched (files without pinned values are not
    // even templates).
    let reference = |p: &str| std::fs::read(stack.join(p)).unwrap();
    for p in [
        "cluster-class/templates/cluster-class.yaml",
        "cluster-addon/ccm/overwrite.yaml",
        "clusteraddon.yaml",
        "cluster-class/.helmignore",
    ] {
        assert_eq!(
            std::fs::read(templates.join(p)).unwrap(),
            reference(p),
            "{p}"
        );
    }
    // The configuration derives rules from what it found.
    let cfg = stackbot::config::load(&dir.path().join("stackbot.yaml")).unwrap();
    let st = &cfg.config.stacks[0];
    assert_eq!(
        st.node_image.expand("v1.35.1".parse().unwrap()),
        (
            "ubuntu-capi-image-v1.35.1".to_string(),
            "https://nbg1.your-objectstorage.com/osism/openstack-k8s-capi-images/ubuntu-2404-kube-v1.35/ubuntu-2404-kube-v1.35.1.qcow2".to_string()
        )
    );
    let rule = |k: &str| format!("{:?}", st.components[k].version);
    assert_eq!(rule("ccm"), "Series(\"2.{minor}\")");
    assert_eq!(rule("csi"), "Series(\"2.{minor}\")");
    assert_eq!(rule("cni"), "Pin(\"1.18.9\")");
    assert_eq!(rule("metrics-server"), "Pin(\"3.13.0\")");
    assert_eq!(
        st.minors,
        stackbot::config::MinorSelection::Keyword(stackbot::config::MinorKeyword::Supported)
    );
}

/// The release set for the next minor, as `release` would resolve it from the adopted rules
/// (series → `<major>.<next minor>.0`, pins kept, the image from the pattern).
fn next_minor_set(set: &ReleaseSet, cfg: &stackbot::config::StackConfig) -> ReleaseSet {
    let next = KubeVersion {
        major: set.kubernetes.major,
        minor: set.kubernetes.minor + 1,
        // A patch no reference image list holds (a listed one has its own checksum).
        patch: 42,
    };
    let mut s = set.clone();
    s.kubernetes = next;
    if !s.node_image.is_none() {
        let (name, url) = cfg.node_image.expand(next);
        s.node_image.name = name;
        s.node_image.url = url;
        s.node_image.sha256 = "a".repeat(64);
    }
    for (key, c) in s.components.iter_mut() {
        if let stackbot::config::VersionRule::Series(p) = &cfg.components[key].version {
            c.version = format!("{}.0", p.replace("{minor}", &next.minor.to_string()));
        }
    }
    s
}

#[test]
fn an_adopted_tree_rendered_for_the_next_minor_passes_package_validation() {
    for (commit, provider, name, path) in reference_trees() {
        if commit == "3c6ca6c" {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let into = dir.path().join("setup");
        adopt_and_render(&path, &into);
        let cfg_path = into.join("stackbot.yaml");
        let loaded = stackbot::config::load(&cfg_path).unwrap();
        let lock = stackbot::lock::load(&into.join("stackbot.lock")).unwrap();
        let set = next_minor_set(&lock.release_sets[0], &loaded.config.stacks[0]);
        let sets = dir.path().join("next.yaml");
        std::fs::write(&sets, yaml_serde::to_string(&vec![set.clone()]).unwrap()).unwrap();
        // Chart repositories on loopback: every https URL goes to a server that has nothing
        // (so no test reaches the internet).
        let nothing = crate::support::upstream_server::UpstreamServer::start();
        let mirror = format!("https://={}/", nothing.url());
        let (code, _, err) = run(&[
            "-c",
            s(&cfg_path),
            "render",
            "--release-set",
            s(&sets),
            "--mirror",
            &mirror,
        ]);
        let out = stackbot::render::output_dir(&loaded, &loaded.config.stacks[0], set.minor());
        let templates =
            stackbot::render::load_templates(&loaded.resolve(&loaded.config.stacks[0].templates))
                .unwrap();
        let needed = stackbot::render::archives_to_fetch(&templates, &set);
        if !needed.is_empty() {
            // The templates vendor per-minor chart archives: the next minor's must come from
            // the chart repository, which does not answer here. Refused as transient, naming
            // the archive; nothing is written.
            assert_eq!(code, 1, "{commit}/{provider}/{name}: {err}");
            assert!(
                err.contains(&needed[0].path()) && err.contains("run again later"),
                "{err}"
            );
            assert!(!out.exists(), "{}", out.display());
            continue;
        }
        assert_eq!(code, 0, "{commit}/{provider}/{name}: {err}");
        let csctl = std::fs::read_to_string(out.join("csctl.yaml")).unwrap();
        assert!(
            csctl.contains(&set.kubernetes.to_string()),
            "{commit}/{provider}/{name}: {csctl}"
        );
        // The packager's validation (csctl.yaml, chart names CSO looks up, stage
        // directories, Helm-valid versions) accepts it.
        let release = tempfile::tempdir().unwrap();
        let (code, _, err) = run(&[
            "package",
            s(&out),
            "--mode",
            "hash",
            "--out",
            s(release.path()),
        ]);
        assert_eq!(code, 0, "{commit}/{provider}/{name}: {err}");
        let prefix = format!(
            "{provider}-{name}-{}-{}-v0-sha-",
            set.kubernetes.major, set.kubernetes.minor
        );
        let made: Vec<String> = std::fs::read_dir(release.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            made.len() == 1 && made[0].starts_with(&prefix),
            "{made:?} {prefix}"
        );
    }
}

#[test]
fn adopting_1_33_and_rendering_the_1_34_set_repeats_the_human_minor_switch() {
    // cb69170 (1.33.10) → a931cdb (1.34.7) was done by hand. Rendering the adopted 1.33
    // tree with the 1.34 release set must give the same files, except the one a human edited
    // for other reasons (a description in the ClusterClass). The image list, the version
    // table and the README are shared across minors: upstream's are identical in both.
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old");
    let new = dir.path().join("new");
    adopt_and_render(
        &shared::reference_stack("cb69170", "openstack", "scs2"),
        &old,
    );
    adopt_and_render(
        &shared::reference_stack("a931cdb", "openstack", "scs2"),
        &new,
    );
    let new_set = stackbot::lock::load(&new.join("stackbot.lock"))
        .unwrap()
        .release_sets
        .remove(0);
    let sets = dir.path().join("sets.yaml");
    std::fs::write(&sets, yaml_serde::to_string(&vec![new_set]).unwrap()).unwrap();
    let cfg = old.join("stackbot.yaml");
    let (code, _, err) = run(&["-c", s(&cfg), "render", "--release-set", s(&sets)]);
    assert_eq!(code, 0, "{err}");
    let rendered = tree(&old.join("cluster-stacks/openstack/scs2/1-34"));
    let human = tree(&shared::reference_stack("a931cdb", "openstack", "scs2"));
    let differing: Vec<&String> = human
        .keys()
        .filter(|p| rendered.get(*p) != human.get(*p))
        .collect();
    assert_eq!(
        differing,
        ["cluster-class/templates/cluster-class.yaml"],
        "everything the minor switch changed (csctl.yaml, chart name, ccm/csi versions, image.yaml) is reproduced, and the shared lists are upstream's"
    );
    assert_eq!(rendered.len(), human.len());
    let readme = String::from_utf8(rendered["README.md"].clone()).unwrap();
    assert!(readme.contains("kubernetesVersion: \"1.33\""), "{readme}");
}

#[test]
fn one_literal_with_two_meanings_is_refused_with_file_line_and_field() {
    // At cb69170 the ccm and csi charts are both 2.33.1; versions.yaml tells them apart by
    // key (`occm`, `cinder_csi`). With a key that names neither, stackbot cannot know.
    let dir = tempfile::tempdir().unwrap();
    let stack = dir.path().join("scs2");
    let original = tree(&shared::reference_stack("cb69170", "openstack", "scs2"));
    stackbot::render::replace_dir(&stack, &original).unwrap();
    let versions = stack.join("versions.yaml");
    let text = std::fs::read_to_string(&versions).unwrap();
    assert!(text.contains("- kubernetes: 1.33.10\n  cinder_csi: 2.33.1\n  occm: 2.33.1\n"));
    std::fs::write(
        &versions,
        text.replace(
            "- kubernetes: 1.33.10\n  cinder_csi: 2.33.1\n",
            "- kubernetes: 1.33.10\n  storage: 2.33.1\n",
        ),
    )
    .unwrap();
    let into = dir.path().join("setup");
    let (code, out, err) = run(&["adopt", s(&stack), "--into", s(&into)]);
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(
        err.contains("versions.yaml:5: field `[1].storage`: `2.33.1` is the version of component `ccm` and also the version of component `csi`"),
        "{err}"
    );
    assert!(err.contains("hint:"), "{err}");
    assert!(!into.exists(), "nothing was written");
}

#[test]
fn a_second_minor_of_the_same_stack_joins_the_setup_when_the_templates_agree() {
    let dir = tempfile::tempdir().unwrap();
    let into = dir.path().join("setup");
    adopt_and_render(
        &shared::reference_stack("a931cdb", "openstack", "scs2"),
        &into,
    );
    // The same stack for 1.33, as the adopted templates render it.
    let cfg = into.join("stackbot.yaml");
    let loaded = stackbot::config::load(&cfg).unwrap();
    let lock = stackbot::lock::load(&into.join("stackbot.lock")).unwrap();
    let mut set33 = lock.release_sets[0].clone();
    set33.kubernetes = "v1.33.10".parse().unwrap();
    let (name, url) = loaded.config.stacks[0].node_image.expand(set33.kubernetes);
    set33.node_image.name = name;
    set33.node_image.url = url;
    // The checksum kubernetes.yaml lists for this image (a different one is refused: one
    // image, one checksum).
    set33.node_image.sha256 =
        "efc3817b565c407710724b9d7b51cbb433638aad6b613b64843da28d58a777aa".into();
    set33.components.get_mut("ccm").unwrap().version = "2.33.1".into();
    set33.components.get_mut("csi").unwrap().version = "2.33.2".into();
    let templates =
        stackbot::render::load_templates(&into.join("templates/openstack/scs2")).unwrap();
    let tree33 =
        stackbot::render::render_stack(&templates, &loaded.config.stacks[0], &set33, &lock)
            .unwrap();
    let stack33 = dir.path().join("scs2-1-33");
    stackbot::render::replace_dir(&stack33, &tree33).unwrap();

    let (code, out, err) = run(&["adopt", s(&stack33), "--into", s(&into)]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("added the 1.33 release set"), "{out}");
    let lock = stackbot::lock::load(&into.join("stackbot.lock")).unwrap();
    let versions: Vec<String> = lock
        .release_sets
        .iter()
        .map(|s| s.kubernetes.to_string())
        .collect();
    assert_eq!(versions, ["v1.33.10", "v1.34.7"]);
    let (code, _, err) = run(&["-c", s(&cfg), "render"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        tree(&into.join("cluster-stacks/openstack/scs2/1-33")),
        tree33
    );

    // A different stack cannot join this setup.
    let (code, _, err) = run(&[
        "adopt",
        s(&shared::reference_stack("a931cdb", "docker", "scs")),
        "--into",
        s(&into),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("already configures other stacks"), "{err}");
}

#[test]
fn dry_run_writes_nothing_and_bad_arguments_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let into = dir.path().join("setup");
    let stack = shared::reference_stack("a931cdb", "docker", "scs");
    let (code, out, err) = run(&["adopt", s(&stack), "--into", s(&into), "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("would adopt docker/scs v1.30.10"), "{out}");
    assert!(out.contains("cluster-class/values.yaml.tera"), "{out}");
    // The README's example is this tree's own (it names v1.30.10): templated like any file;
    // its ClusterClass name carries a release version: not templated, but said.
    assert!(
        out.contains("README.md:75: the release version `v0-sha.rwvgrna`"),
        "{out}"
    );
    assert!(!into.exists());

    let (code, _, err) = run(&["adopt", s(&dir.path().join("nope")), "--into", s(&into)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nope"), "{err}");
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, _, err) = run(&["adopt", s(&empty), "--into", s(&into)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("csctl.yaml"), "{err}");
}

#[test]
fn a_docker_stack_pins_no_node_image() {
    let dir = tempfile::tempdir().unwrap();
    adopt_and_render(
        &shared::reference_stack("a931cdb", "docker", "scs"),
        dir.path(),
    );
    let lock = std::fs::read_to_string(dir.path().join("stackbot.lock")).unwrap();
    assert!(!lock.contains("node_image"), "{lock}");
    let cfg = std::fs::read_to_string(dir.path().join("stackbot.yaml")).unwrap();
    assert!(!cfg.contains("node_image:"), "{cfg}");
    let values = std::fs::read_to_string(
        dir.path()
            .join("templates/docker/scs/cluster-class/values.yaml.tera"),
    )
    .unwrap();
    assert!(
        values.contains("kindest/node:{{ kubernetes.version }}"),
        "{values}"
    );
}

#[test]
fn upstreams_per_minor_source_layout_is_refused_naming_the_file_line_and_what_to_adopt() {
    let src = shared::shared_dir().join("pr259-per-minor-layout/scs-1-34");
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = run(&["adopt", s(&src), "--into", s(dir.path())]);
    assert_eq!(code, 2, "{out}{err}");
    for part in [
        "csctl.yaml:4",
        "config.kubernetesVersion",
        "`v1.34` names a minor only",
        "stack.yaml:3: `kubernetesVersion: 1.34.6`",
        "PR #259",
        "hint:",
    ] {
        assert!(err.contains(part), "names {part}: {err}");
    }
    assert!(
        !dir.path().join("stackbot.yaml").exists(),
        "nothing is written"
    );
}
