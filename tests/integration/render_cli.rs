//! `stackbot render` / `validate` / `schema` as users and CI run them: the committed
//! `cluster-stacks/` must be exactly what the templates and `stackbot.lock` produce.

use crate::support::copy_dir;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

use crate::support::root;

fn stackbot() -> Command {
    Command::cargo_bin("stackbot").unwrap()
}

/// A scratch copy of everything `render` reads and writes.
fn scratch_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in ["stackbot.yaml", "stackbot.lock"] {
        std::fs::copy(root().join(f), dir.path().join(f)).unwrap();
    }
    copy_dir(&root().join("templates"), &dir.path().join("templates"));
    copy_dir(
        &root().join("cluster-stacks"),
        &dir.path().join("cluster-stacks"),
    );
    dir
}

fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = stackbot()
        .current_dir(dir)
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

#[test]
fn committed_output_is_what_the_templates_and_lock_render() {
    let (code, stdout, stderr) = run(&root(), &["render", "--check"]);
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    // The result is on stdout (no diff: nothing is stale), the logs alone on stderr.
    assert!(stdout.contains("1-34: unchanged"), "{stdout}");
    assert!(stdout.contains("1-33: unchanged"), "{stdout}");
    assert!(!stdout.contains("---"), "no diff: {stdout}");
    assert!(!stderr.contains("unchanged"), "{stderr}");
}

#[test]
fn check_fails_with_a_diff_when_a_rendered_file_was_edited_and_render_repairs_it() {
    let dir = scratch_repo();
    let stack = dir.path().join("cluster-stacks/openstack/scs2/1-34");
    let chart = stack.join("cluster-addon/ccm/Chart.yaml");
    let text = std::fs::read_to_string(&chart).unwrap();
    std::fs::write(&chart, text.replace("2.34.2", "2.34.1")).unwrap();
    std::fs::write(stack.join("stray.txt"), "left behind\n").unwrap();

    let (code, stdout, stderr) = run(dir.path(), &["render", "--check"]);
    assert_eq!(code, 1, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("--- a/cluster-stacks/openstack/scs2/1-34/cluster-addon/ccm/Chart.yaml"),
        "{stdout}"
    );
    assert!(stdout.contains("-    version: \"2.34.1\""), "{stdout}");
    assert!(stdout.contains("+    version: \"2.34.2\""), "{stdout}");
    assert!(stdout.contains("stray.txt\n+++ /dev/null"), "{stdout}");
    assert!(stdout.contains("1-34: stale (2 files)"), "{stdout}");
    assert!(stderr.contains("run `stackbot render`"), "{stderr}");
    // --check wrote nothing.
    assert!(std::fs::read_to_string(&chart).unwrap().contains("2.34.1"));

    let (code, _, stderr) = run(dir.path(), &["render"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stack.join("stray.txt").exists());
    assert_eq!(std::fs::read_to_string(&chart).unwrap(), text);
    let (code, stdout, _) = run(dir.path(), &["render"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("1-34: unchanged"),
        "re-running does nothing: {stdout}"
    );
    assert_eq!(run(dir.path(), &["render", "--check"]).0, 0);
}

#[test]
fn release_set_file_reproduces_the_committed_lock_and_output() {
    let dir = scratch_repo();
    std::fs::remove_file(dir.path().join("stackbot.lock")).unwrap();
    std::fs::remove_dir_all(dir.path().join("cluster-stacks")).unwrap();
    let sets = root().join("tests/fixtures/release-sets-2026-05-01.yaml");
    let sets = sets.to_str().unwrap();

    let (code, _, stderr) = run(dir.path(), &["render"]);
    assert_eq!(
        code, 2,
        "no lock and no --release-set is invalid input: {stderr}"
    );
    assert!(stderr.contains("--release-set"), "{stderr}");

    let (code, _, stderr) = run(dir.path(), &["render", "--release-set", sets]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("stackbot.lock")).unwrap(),
        std::fs::read_to_string(root().join("stackbot.lock")).unwrap()
    );
    for minor in ["1-33", "1-34"] {
        let rel = format!("cluster-stacks/openstack/scs2/{minor}");
        assert_eq!(
            stackbot::render::read_tree(&dir.path().join(&rel)).unwrap(),
            stackbot::render::read_tree(&root().join(&rel)).unwrap(),
            "{rel}"
        );
    }
    assert_eq!(
        run(dir.path(), &["render", "--check", "--release-set", sets]).0,
        0
    );
}

#[test]
fn stack_and_minor_filters_limit_the_work() {
    let dir = scratch_repo();
    let (code, stdout, stderr) = run(dir.path(), &["render", "--check", "--minor", "1.34"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("1-34") && !stdout.contains("1-33"),
        "{stdout}"
    );
    let (code, _, stderr) = run(dir.path(), &["render", "--stack", "openstack/scs9"]);
    assert_eq!(code, 2, "{stderr}");
    let (code, _, stderr) = run(dir.path(), &["render", "--minor", "1.99"]);
    assert_eq!(
        code, 2,
        "a minor matching nothing is not silently ignored: {stderr}"
    );
    assert!(
        stderr.contains("1.99") && stderr.contains("1.34"),
        "{stderr}"
    );
    let (code, _, stderr) = run(dir.path(), &["render", "--stack", "open-stack/scs2"]);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn validate_accepts_the_repository_and_names_a_broken_template() {
    let (code, stdout, stderr) = run(&root(), &["validate"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("ok openstack/scs2"), "{stdout}");
    assert!(stdout.contains("v1.33.10, v1.34.7"), "{stdout}");

    let dir = scratch_repo();
    let csctl = dir.path().join("templates/openstack/scs2/csctl.yaml.tera");
    let text = std::fs::read_to_string(&csctl).unwrap();
    std::fs::write(
        &csctl,
        text.replace("{{ kubernetes.version }}", "{{ kubernetes.full }}"),
    )
    .unwrap();
    let before = stackbot::render::read_tree(&dir.path().join("cluster-stacks")).unwrap();
    let (code, _, stderr) = run(dir.path(), &["validate"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("templates/openstack/scs2/csctl.yaml.tera:3: "),
        "{stderr}"
    );
    assert!(stderr.contains("full"), "{stderr}");
    let (code, _, stderr) = run(dir.path(), &["render"]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stackbot::render::read_tree(&dir.path().join("cluster-stacks")).unwrap(),
        before,
        "a failed render changes nothing"
    );
}

#[test]
fn validate_refuses_a_bad_config_with_exit_2() {
    let dir = scratch_repo();
    let cfg = dir.path().join("stackbot.yaml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        text.replace(
            "    minors: supported",
            "    minors: supported\n    colour: blue",
        ),
    )
    .unwrap();
    let (code, _, stderr) = run(dir.path(), &["validate"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("stackbot.yaml:"), "{stderr}");
    assert!(stderr.contains("colour"), "{stderr}");
}

#[test]
fn rendered_1_34_is_a_csctl_stack_for_the_2026_05_01_release_set() {
    let dir = root().join("cluster-stacks/openstack/scs2/1-34");
    let yaml = |p: &str| -> yaml_serde::Value {
        yaml_serde::from_str(&std::fs::read_to_string(dir.join(p)).unwrap()).unwrap()
    };
    let s = |v: &yaml_serde::Value, path: &[&str]| -> String {
        let mut cur = v;
        for k in path {
            cur = &cur[*k];
        }
        cur.as_str().unwrap_or_default().to_string()
    };
    let csctl = yaml("csctl.yaml");
    assert_eq!(s(&csctl, &["config", "kubernetesVersion"]), "v1.34.7");
    assert_eq!(s(&csctl, &["config", "clusterStackName"]), "scs2");
    assert_eq!(s(&csctl, &["config", "provider", "type"]), "openstack");
    assert!(
        csctl["config"]["provider"].get("config").is_none(),
        "no csctl plugin"
    );
    assert_eq!(
        s(&yaml("cluster-class/Chart.yaml"), &["name"]),
        "openstack-scs2-1-34-cluster-class"
    );
    // Every addon stage has its directory, and each directory is a stage.
    let addon = yaml("clusteraddon.yaml");
    let mut stages = std::collections::BTreeSet::new();
    for hook in addon["addonStages"].as_mapping().unwrap().values() {
        for stage in hook.as_sequence().unwrap() {
            stages.insert(s(stage, &["name"]));
        }
    }
    let dirs: std::collections::BTreeSet<String> = std::fs::read_dir(dir.join("cluster-addon"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(stages, dirs);
    let dep = |stage: &str| -> (String, String) {
        let chart = yaml(&format!("cluster-addon/{stage}/Chart.yaml"));
        let d = &chart["dependencies"][0];
        (s(d, &["name"]), s(d, &["version"]))
    };
    assert_eq!(
        dep("ccm"),
        ("openstack-cloud-controller-manager".into(), "2.34.2".into())
    );
    assert_eq!(dep("csi"), ("openstack-cinder-csi".into(), "2.34.3".into()));
    assert_eq!(dep("cni"), ("cilium".into(), "1.18.9".into()));
    assert_eq!(
        dep("metrics-server"),
        ("metrics-server".into(), "3.13.0".into())
    );
    let image = yaml("image.yaml");
    assert_eq!(
        s(&image, &["metadata", "name"]),
        "ubuntu-capi-image-v1.34.7"
    );
    let download = &image["spec"]["resource"]["content"]["download"];
    assert_eq!(
        s(download, &["url"]),
        "https://nbg1.your-objectstorage.com/osism/openstack-k8s-capi-images/ubuntu-2404-kube-v1.34/ubuntu-2404-kube-v1.34.7.qcow2"
    );
    assert_eq!(
        s(download, &["hash", "value"]),
        "f7bf12297833cca14de6d24081c8a01e99143651e4c01431b911375300550fe0"
    );
    // The packager's own csctl.yaml reading and hashing accept the tree.
    let tree = stackbot::package::read_stack_dir(&dir).unwrap();
    let cfg = stackbot::package::csctl::parse(&tree["csctl.yaml"]).unwrap();
    assert_eq!(cfg.stack.to_string(), "openstack/scs2");
    assert_eq!(cfg.kubernetes.to_string(), "v1.34.7");
    assert!(!cfg.has_provider_config);
    let hashes = stackbot::package::dirhash::hashes(&tree);
    assert!(!hashes.cluster_stack.is_empty() && !hashes.cluster_addon_dir.is_empty());
    assert_eq!(hashes.node_image_dir, None);
    // csctl templating would choke on an unterminated `<< ` anywhere in the tree.
    for (path, bytes) in stackbot::render::read_tree(&dir).unwrap() {
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains("<< "),
            "{path} contains csctl's template delimiter"
        );
    }
}

#[test]
fn help_has_examples_and_schema_prints() {
    for cmd in ["render", "validate", "schema"] {
        let out = stackbot().args([cmd, "--help"]).output().unwrap();
        let help = String::from_utf8(out.stdout).unwrap();
        assert!(help.contains("Examples:"), "{cmd}: {help}");
    }
    let out = stackbot().arg("schema").output().unwrap();
    assert!(out.status.success());
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(schema["properties"]["stacks"].is_object(), "{schema}");
}

#[test]
fn a_template_naming_the_previous_minor_chart_is_refused_and_nothing_is_written() {
    // The 3c6ca6c mistake: the chart still named for 1.33 while rendering 1.34.
    let dir = scratch_repo();
    let chart = dir
        .path()
        .join("templates/openstack/scs2/cluster-class/Chart.yaml.tera");
    let text = std::fs::read_to_string(&chart).unwrap();
    std::fs::write(
        &chart,
        text.replace(
            "{{ stack.provider }}-{{ stack.name }}-{{ minor.dashed }}-cluster-class",
            "openstack-scs2-1-33-cluster-class",
        ),
    )
    .unwrap();
    std::fs::remove_dir_all(dir.path().join("cluster-stacks/openstack/scs2/1-33")).unwrap();
    let (code, _, stderr) = run(dir.path(), &["render"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("expected `openstack-scs2-1-34-cluster-class`"),
        "{stderr}"
    );
    assert!(
        !dir.path()
            .join("cluster-stacks/openstack/scs2/1-33")
            .exists(),
        "1.33 rendered fine but must not be written when 1.34 fails"
    );
}

#[test]
fn a_release_set_for_an_untracked_minor_is_refused() {
    let dir = scratch_repo();
    let cfg = dir.path().join("stackbot.yaml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        text.replace("minors: supported", "minors: [\"1.34\"]"),
    )
    .unwrap();
    let sets = root().join("tests/fixtures/release-sets-2026-05-01.yaml");
    let (code, _, stderr) = run(
        dir.path(),
        &["render", "--release-set", sets.to_str().unwrap()],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("minor 1.33 is not in the stack's `minors`"),
        "{stderr}"
    );
    // From the lock, an untracked minor is skipped with a warning; the tracked one still checks.
    let (code, stdout, stderr) = run(dir.path(), &["render", "--check"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("skipping"), "{stderr}");
    assert!(stdout.contains("1-34: unchanged"), "{stdout}");
}

#[test]
fn the_scs2_helm_templates_are_copied_verbatim_and_tera_files_drop_their_suffix() {
    let loaded = stackbot::config::load(&root().join("stackbot.yaml")).unwrap();
    let stack = &loaded.config.stacks[0];
    let templates = stackbot::render::load_templates(&loaded.resolve(&stack.templates)).unwrap();
    let lock = stackbot::lock::load(&root().join("stackbot.lock")).unwrap();
    let set = lock.get(&stack.id(), "1.34".parse().unwrap()).unwrap();
    let out = stackbot::render::render_stack(&templates, stack, set, &lock).unwrap();
    let mut helm = 0;
    for (path, bytes) in &templates.files {
        match path.strip_suffix(".tera") {
            Some(target) => assert!(out.contains_key(target) && !out.contains_key(path)),
            None => {
                assert_eq!(&out[path], bytes, "{path} is copied byte for byte");
                helm += usize::from(path.starts_with("cluster-class/templates/"));
            }
        }
    }
    assert!(
        helm >= 5,
        "ClusterClass, 2 machine templates, cluster and kubeadm templates"
    );
    assert_eq!(out.len(), templates.files.len());

    // Without a publication date (the markers fallback when the releases API is down) the
    // stack still renders (issue 12, item 6): the image-manager list leaves `build_date` out,
    // and nothing else changes.
    let mut undated = set.clone();
    undated.published_at = None;
    let plain = stackbot::render::render_stack(&templates, stack, &undated, &lock).unwrap();
    let k8s = String::from_utf8(plain["kubernetes.yaml"].clone()).unwrap();
    assert!(!k8s.contains("build_date: "), "{k8s}");
    let dated = String::from_utf8(out["kubernetes.yaml"].clone()).unwrap();
    assert!(dated.contains("build_date: "), "{dated}");
    assert_eq!(
        k8s,
        dated
            .lines()
            .filter(|l| !l.trim_start().starts_with("build_date: "))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    );
    assert_eq!(plain.len(), out.len());
}

#[test]
fn the_committed_1_34_stack_packages_in_hash_mode() {
    let out = tempfile::tempdir().unwrap();
    let stack = root().join("cluster-stacks/openstack/scs2/1-34");
    let result = stackbot()
        .current_dir(root())
        .args([
            "package",
            stack.to_str().unwrap(),
            "--mode",
            "hash",
            "--out",
        ])
        .arg(out.path())
        .output()
        .unwrap();
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let releases: Vec<PathBuf> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(releases.len(), 1, "{releases:?}");
    let release = &releases[0];
    let tag = release.file_name().unwrap().to_str().unwrap();
    let sha = tag
        .strip_prefix("openstack-scs2-1-34-v0-sha-")
        .unwrap_or_else(|| panic!("release name {tag}"));
    let version = format!("v0-sha.{sha}");
    let mut files: Vec<String> = std::fs::read_dir(release)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "SHA256SUMS".to_string(),
            "clusteraddon.yaml".into(),
            "hashes.json".into(),
            "metadata.yaml".into(),
            format!("openstack-scs2-1-34-cluster-addon-{version}.tgz"),
            format!("openstack-scs2-1-34-cluster-class-{version}.tgz"),
        ]
    );
    let metadata = std::fs::read_to_string(release.join("metadata.yaml")).unwrap();
    assert!(metadata.contains("kubernetes: v1.34.7"), "{metadata}");

    let read = |name: &str| {
        stackbot::package::archive::read_tgz(&std::fs::read(release.join(name)).unwrap()).unwrap()
    };
    let class = read(&format!("openstack-scs2-1-34-cluster-class-{version}.tgz"));
    let chart = class
        .iter()
        .find(|e| e.name == "openstack-scs2-1-34-cluster-class/Chart.yaml")
        .expect("the chart is packaged under its derived name");
    let chart = String::from_utf8(chart.data.clone().unwrap()).unwrap();
    assert!(chart.contains(&format!("version: {version}")), "{chart}");
    assert!(
        class
            .iter()
            .any(|e| e.name == "openstack-scs2-1-34-cluster-class/templates/cluster-class.yaml")
    );
    let addon = read(&format!("openstack-scs2-1-34-cluster-addon-{version}.tgz"));
    let top: std::collections::BTreeSet<&str> = addon
        .iter()
        .map(|e| e.name.split('/').next().unwrap())
        .collect();
    assert_eq!(
        top.into_iter().collect::<Vec<_>>(),
        ["ccm", "cni", "csi", "metrics-server"]
    );
}
