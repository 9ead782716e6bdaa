//! `stackbot plan` and `release --dry-run` on the local demo: they write nothing (not even the
//! seeded tenant repositories), they show the tenant pull requests that would follow the
//! planned releases, and the Markdown preview's rendered diffs are exactly the diff of the
//! commit the real run makes.

use crate::common::copy_dir;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A fresh copy of the demo (configuration, tenant seeds, templates) in a temp dir.
fn demo() -> tempfile::TempDir {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(
        &root.join("examples/local"),
        &tmp.path().join("examples/local"),
    );
    copy_dir(&root.join("templates"), &tmp.path().join("templates"));
    tmp
}

fn forge_dir(demo: &Path) -> PathBuf {
    demo.join(".stackbot/forge")
}

fn stackbot(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_stackbot"))
        .current_dir(dir)
        .args(["-c", "examples/local/stackbot.yaml", "--now", "2026-05-01"])
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_TOKEN")
        // The local forge is refused under GitHub Actions: the demo runs as on a laptop.
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "stackbot {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every file under `dir` with its bytes (empty when `dir` does not exist).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                out.insert(e.path(), Vec::new());
                walk(&e.path(), out);
            } else {
                out.insert(e.path(), std::fs::read(e.path()).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, &mut out);
    out
}

const READ_ONLY: [&[&str]; 6] = [
    &["plan"],
    &["plan", "--format", "json"],
    &["plan", "--format", "markdown"],
    &["release", "--dry-run"],
    &["release", "--dry-run", "--format", "json"],
    &["tenants", "--dry-run"],
];

#[test]
fn plan_and_dry_runs_write_nothing_not_even_seeded_tenant_repositories() {
    let tmp = demo();
    for args in READ_ONLY {
        stackbot(tmp.path(), args);
        assert!(
            !forge_dir(tmp.path()).exists(),
            "`{}` created the forge: {:?}",
            args.join(" "),
            snapshot(&forge_dir(tmp.path())).keys().collect::<Vec<_>>()
        );
    }
    // On an existing forge whose tenant repository is missing, byte for byte nothing changes.
    stackbot(tmp.path(), &["release"]);
    std::fs::remove_dir_all(forge_dir(tmp.path()).join("repos/globex")).unwrap();
    let before = snapshot(&forge_dir(tmp.path()));
    for args in READ_ONLY {
        stackbot(tmp.path(), args);
        assert!(
            snapshot(&forge_dir(tmp.path())) == before,
            "`{}` changed the forge",
            args.join(" ")
        );
    }
}

/// (tenant, repository, branch, files, action) of each tenant line of a JSON document.
fn tenant_lines(v: &serde_json::Value) -> Vec<(String, String, String, Vec<String>, String)> {
    v["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let s = |k: &str| t[k].as_str().unwrap_or_default().to_string();
            let files = t["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap().to_string())
                .collect();
            (
                s("tenant"),
                s("repository"),
                s("branch"),
                files,
                s("action"),
            )
        })
        .collect()
}

#[test]
fn plan_lists_the_tenant_pull_requests_that_would_follow_the_planned_releases() {
    let tmp = demo();
    let plan: serde_json::Value =
        serde_json::from_str(&stackbot(tmp.path(), &["plan", "--format", "json"])).unwrap();
    let planned = tenant_lines(&plan);
    let names: Vec<(&str, &str, &str)> = planned
        .iter()
        .map(|(t, r, _, _, a)| (t.as_str(), r.as_str(), a.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("acme", "acme/gitops", "open"),
            ("globex", "globex/platform", "open")
        ],
        "{plan:#}"
    );
    for (tenant, _, branch, files, _) in &planned {
        assert_eq!(branch, "stackbot/openstack-scs2", "{tenant}");
        assert!(!files.is_empty(), "{tenant} changes no file");
    }
    // The same through the Markdown preview and `release --dry-run`.
    let md = stackbot(tmp.path(), &["plan", "--format", "markdown"]);
    assert!(md.contains("### Tenant pull requests"), "{md}");
    assert!(
        md.contains("acme/gitops") && md.contains("globex/platform"),
        "{md}"
    );
    let dry: serde_json::Value = serde_json::from_str(&stackbot(
        tmp.path(),
        &["release", "--dry-run", "--format", "json"],
    ))
    .unwrap();
    assert_eq!(tenant_lines(&dry), planned);

    // The real run opens exactly these pull requests, changing exactly these files.
    let done: serde_json::Value =
        serde_json::from_str(&stackbot(tmp.path(), &["release", "--format", "json"])).unwrap();
    assert_eq!(tenant_lines(&done), planned, "{done:#}");
    for t in done["tenants"].as_array().unwrap() {
        assert_eq!(t["outcome"], "opened", "{t}");
    }
}

/// The rendered diffs of a Markdown preview: path → diff text, from the ```diff blocks before
/// the tenants' (`### Tenant changes` shows the tenant pull requests' diffs).
fn preview_diffs(md: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let rendered = md.split("\n### Tenant changes\n").next().unwrap();
    let mut lines = rendered.lines();
    while let Some(l) = lines.next() {
        if l.trim_start().starts_with("```diff") {
            let body: Vec<&str> = lines
                .by_ref()
                .take_while(|l| !l.starts_with("```"))
                .collect();
            let path = body
                .iter()
                .find_map(|l| l.strip_prefix("+++ b/").or(l.strip_prefix("--- a/")))
                .unwrap()
                .to_string();
            out.insert(path, body.join("\n") + "\n");
        }
    }
    out
}

#[test]
fn the_markdown_preview_of_a_template_change_is_the_diff_the_release_commits() {
    use stackbot::forge::local::LocalForge;
    use stackbot::forge::{Forge, RepoRef};

    let tmp = demo();
    stackbot(tmp.path(), &["release"]);
    // A pull request changes a template.
    let chart = tmp
        .path()
        .join("templates/openstack/scs2/cluster-class/Chart.yaml.tera");
    let mut text = std::fs::read_to_string(&chart).unwrap();
    text.push_str("# reviewed by the platform team\n");
    std::fs::write(&chart, text).unwrap();

    let md = stackbot(tmp.path(), &["plan", "--format", "markdown"]);
    let previewed = preview_diffs(&md);
    assert!(!previewed.is_empty(), "{md}");
    assert!(
        previewed
            .keys()
            .all(|p| p.ends_with("cluster-class/Chart.yaml")),
        "{previewed:#?}"
    );

    // The real run: its commit's diff (without stackbot.lock) is what the preview showed.
    let loaded = stackbot::config::load(&tmp.path().join("examples/local/stackbot.yaml")).unwrap();
    let forge: LocalForge =
        LocalForge::from_config(&loaded, std::sync::Arc::new(stackbot::clock::SystemClock))
            .unwrap();
    let repo = RepoRef::parse("scs/cluster-stacks").unwrap();
    let before = forge.branch_head(&repo, "main").unwrap().unwrap();
    stackbot(tmp.path(), &["release"]);
    let after = forge.branch_head(&repo, "main").unwrap().unwrap();
    let tree = |c: &str| -> BTreeMap<String, Vec<u8>> {
        forge
            .list_files(&repo, c)
            .unwrap()
            .into_iter()
            .filter(|p| p != "stackbot.lock")
            .map(|p| {
                let b = forge.read_file(&repo, c, &p).unwrap().unwrap();
                (p, b)
            })
            .collect()
    };
    let diffs = stackbot::report::from_plan::tree_diffs("", &tree(&before), &tree(&after));
    let committed: BTreeMap<String, String> =
        diffs.into_iter().map(|d| (d.path, d.unified)).collect();
    assert_eq!(previewed, committed);
}
