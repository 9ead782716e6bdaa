//! The user documentation stays true: the configuration reference is exactly what the
//! generator produces from the current config types, and every relative link in `docs/`
//! and the README points at a file that exists.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::root;

#[test]
fn configuration_reference_is_generated_from_the_current_schema() {
    let out = Command::new(env!("CARGO_BIN_EXE_stackbot"))
        .args(["schema", "--format", "markdown"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let generated = String::from_utf8(out.stdout).unwrap();
    let path = root().join("docs/configuration.md");
    if std::env::var_os("STACKBOT_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/configuration.md is stale: the config types changed. Regenerate it with\n  \
         cargo run -q -- schema --format markdown > docs/configuration.md\n\
         (or STACKBOT_BLESS=1 cargo test --test integration docs::) and commit the result."
    );
}

fn markdown_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.push(root().join("README.md"));
    files.sort();
    files
}

#[test]
fn relative_links_in_the_docs_resolve() {
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut checked = 0;
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let dir = file.parent().unwrap();
        for cap in link.captures_iter(&text) {
            let target = &cap[1];
            if target.contains("://") || target.starts_with('#') || target.starts_with("mailto:") {
                continue;
            }
            let path = target.split('#').next().unwrap();
            checked += 1;
            assert!(
                Path::new(dir).join(path).exists(),
                "{}: link to `{target}` points at nothing",
                file.display()
            );
        }
    }
    assert!(checked > 0, "the docs link to each other");
}

#[test]
fn the_docs_a_newcomer_needs_exist() {
    for doc in [
        "quickstart.md",
        "configuration.md",
        "github-setup.md",
        "operations.md",
        "csctl-comparison.md",
        "architecture.md",
    ] {
        let text = std::fs::read_to_string(root().join("docs").join(doc))
            .unwrap_or_else(|_| panic!("docs/{doc} exists"));
        assert!(text.starts_with("# "), "docs/{doc} starts with a title");
    }
}

/// The pages people read speak about what stackbot does for them, not about how it is coded
/// (that is `docs/architecture.md`'s and the code's business).
#[test]
fn user_docs_carry_no_implementation_notes() {
    let leaks = [
        "yaml_serde",
        "serde is implemented",
        "implemented by hand",
        "untagged enum",
    ];
    for file in markdown_files() {
        if file.ends_with("architecture.md") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for leak in leaks {
            assert!(
                !text.contains(leak),
                "{}: mentions `{leak}`, an implementation note",
                file.display()
            );
        }
    }
}

/// The quick start shows the whole demo loop, with the commands that exist.
#[test]
fn the_quickstart_plays_the_demo_loop() {
    let text = std::fs::read_to_string(root().join("docs/quickstart.md")).unwrap();
    for step in ["forge list", "forge merge", "status", "--now 2026-06-01"] {
        assert!(text.contains(step), "docs/quickstart.md lacks `{step}`");
    }
}

/// The quick start's minimal configuration (step 4), copied verbatim beside the templates this
/// repository ships, validates, and `ok` means what it says: a release set resolved from
/// upstream (the 2026-05-01 scenario's) renders with it, and `render --check` then passes.
#[test]
fn the_quickstart_minimal_configuration_works_verbatim() {
    let text = std::fs::read_to_string(root().join("docs/quickstart.md")).unwrap();
    let step = &text[text.find("## 4. Point it at your repository").unwrap()..];
    let start = step.find("```yaml\n").unwrap() + "```yaml\n".len();
    let config = &step[start..start + step[start..].find("```").unwrap()];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("stackbot.yaml"), config).unwrap();
    crate::support::copy_dir(
        &root().join("templates/openstack/scs2"),
        &dir.path().join("templates/openstack/scs2"),
    );
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_stackbot"))
            .current_dir(dir.path())
            .env_remove("GITHUB_TOKEN")
            .env_remove("GITHUB_ACTIONS")
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (code, out) = run(&["validate"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("ok openstack/scs2: ")
            && out.contains("a sample release set from the configuration"),
        "{out}"
    );
    let sets = root().join("tests/fixtures/release-sets-2026-05-01.yaml");
    // `release --dry-run` renders and plans with the same configuration. Its `forge:` names a
    // placeholder GitHub repository no test can reach; only that block is swapped, for a local
    // forge of the same repository and mode, so what renders is what the page says.
    let forge = &config[config.find("forge:\n").unwrap()..config.find("tenants:\n").unwrap()];
    assert!(
        forge.contains("kind: github") && forge.contains("mode: pull-request"),
        "{forge}"
    );
    let local = config.replace(
        forge,
        "forge:\n  kind: local\n  repository: your-org/cluster-stacks\n  mode: pull-request\n  local:\n    path: .stackbot/forge\n",
    );
    std::fs::write(dir.path().join("local.yaml"), &local).unwrap();
    let (code, out) = run(&[
        "-c",
        "local.yaml",
        "release",
        "--dry-run",
        "--release-set",
        sets.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    for minor in ["1-33", "1-34"] {
        assert!(
            out.contains(&format!("release openstack-scs2-{minor}-v1 ")),
            "a release would render: {out}"
        );
    }
    assert!(
        !dir.path().join("cluster-stacks").exists(),
        "a dry run writes nothing"
    );
    let (code, out) = run(&["render", "--release-set", sets.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = run(&["render", "--check"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = run(&["validate"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("stackbot.lock and a sample release set"),
        "{out}"
    );
    // A component the templates use but the configuration lacks fails `validate` even when
    // the lock's sets have it: a release would not render.
    let without = config.replace(
        "      cni:\n        chart: cilium\n        repository: https://helm.cilium.io/\n        version: { pin: 1.18.9 }\n",
        "",
    );
    assert_ne!(without, config);
    std::fs::write(dir.path().join("stackbot.yaml"), without).unwrap();
    let (code, out) = run(&["validate"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("Field `cni` is not defined"), "{out}");
}
