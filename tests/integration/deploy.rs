//! Deploy for real (issue 34, "Done when"): a cluster-stacks-like repository (the vendored SCS
//! stacks of upstream commit `a931cdb` under `providers/`), `stackbot init` run in it, and then
//!
//! 1. the generated workflows and the action pass zizmor (pedantic) and actionlint, and the
//!    workflow's `with:` passes only inputs the action has;
//! 2. every path a `run:` script calls and every `uses:` resolves: inside the repository, in
//!    the action (stackbot's repository at the pinned commit is this checkout), or a public
//!    action pinned to the same commit stackbot's own workflows pin;
//! 3. the jobs run as a runner runs them (tests/support/runner.rs: `bash -eo pipefail`, the
//!    `GITHUB_*` environment, per-step `GITHUB_OUTPUT`/`GITHUB_STEP_SUMMARY`) against the fake
//!    GitHub, with the stackbot release binaries served on 127.0.0.1: the first hourly run,
//!    the maintainer merging the release pull request, the run that publishes, the quiet hour
//!    after, the preview of a pull request, and the action without a token.
//!
//! What GitHub alone provides is replaced, each by a stand-in that says what it is:
//! `actions/checkout` writes the fake's branch into a fresh workspace; `actions/cache/restore`
//! and `/save` use a local store with GitHub's rules (immutable keys, newest prefix match);
//! `gh` answers release reads from the fake GitHub's API, vouches only for the attestation of
//! stackbot's own release archive (signer binaries.yml, as GitHub would after binaries.yml
//! ran) and finds no attestation of a cluster-stack release (the fake stores none), so the
//! collector gathers them; `actions/attest-build-provenance` is not emulated (it needs
//! GitHub's OIDC token and Sigstore): the step is reached and recorded as such, and the files
//! it would attest are checked. The upstream answers are the recorded snapshot of 2026-05-01
//! (a `snapshot:` line added to the generated stackbot.yaml).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::cluster_stacks::{self, ACTION_REPO, ACTION_SHA, REPO};
use crate::distribution::{FakeRelease, chmod_x, genuine_archive, sums_line};
use crate::support::fake_github::humans::{MAINTAINER, MergeMethod};
use crate::support::fake_github::{FakeGithub, FakeOptions};
use crate::support::runner::{Outcome, Run, Runner, StandIn};

/// The only token the fake GitHub accepts: the workflow's own (`github.token`), which GitHub
/// accepts for the repository the workflow runs in.
const TOKEN: &str = "ghs_WorkflowTokenNeverPrinted_34";

use crate::support::root;

fn yaml(path: &Path) -> Value {
    yaml_serde::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A linter that must be installed (.ci/run installs both); a missing one fails the test.
pub(crate) fn lint(tool: &str, args: &[&str], dir: &Path) {
    let out = Command::new(tool)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| panic!("{tool} is not installed ({e}); .ci/run installs it"));
    assert!(
        out.status.success(),
        "{tool} {}:\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn init_writes_a_setup_once_and_then_only_shows_what_it_would_change() {
    let dir = tempfile::tempdir().unwrap();
    let first = cluster_stacks::initialised(dir.path(), &[]);
    let text = String::from_utf8_lossy(&first.stdout);
    for line in [
        "created      stackbot.yaml",
        "created      stackbot.lock",
        "created      templates/openstack/scs2/ (27 files)",
        "created      cluster-stacks/openstack/scs2/1-34/ (27 files)",
        "created      .github/workflows/stackbot-release.yml",
        "created      .github/workflows/stackbot-preview.yml",
    ] {
        assert!(text.contains(line), "{line}:\n{text}");
    }
    // The adopted setup renders back what providers/ holds, and validates.
    let stackbot = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_stackbot"))
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .args(args)
            .output()
            .unwrap()
    };
    let check = stackbot(&["render", "--check"]);
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let cfg = std::fs::read_to_string(dir.path().join("stackbot.yaml")).unwrap();
    assert!(cfg.contains(&format!("repository: {REPO}")) && cfg.contains("mode: pull-request"));

    // Again: nothing to change.
    let again = cluster_stacks::init(dir.path(), &[]);
    assert!(again.status.success());
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(text.contains("nothing to change"), "{text}");

    // An edited workflow is shown as a diff and kept, until --update.
    let wf = dir.path().join(".github/workflows/stackbot-release.yml");
    let generated = std::fs::read_to_string(&wf).unwrap();
    std::fs::write(&wf, generated.replace("17 * * * *", "42 * * * *")).unwrap();
    let diff = cluster_stacks::init(dir.path(), &[]);
    let text = String::from_utf8_lossy(&diff.stdout);
    assert!(
        text.contains("differs      .github/workflows/stackbot-release.yml"),
        "{text}"
    );
    assert!(
        text.contains("-    - cron: \"42 * * * *\"\n+    - cron: \"17 * * * *\""),
        "{text}"
    );
    assert!(
        text.contains("`stackbot init --update` writes it"),
        "{text}"
    );
    assert!(std::fs::read_to_string(&wf).unwrap().contains("42 * * * *"));
    let update = cluster_stacks::init(dir.path(), &["--update"]);
    assert!(String::from_utf8_lossy(&update.stdout).contains("updated      .github"));
    assert_eq!(std::fs::read_to_string(&wf).unwrap(), generated);

    // A pin must be a commit.
    let tag = Command::new(env!("CARGO_BIN_EXE_stackbot"))
        .current_dir(dir.path())
        .args(["init", "--action-ref", "v0.1.0"])
        .output()
        .unwrap();
    assert_eq!(tag.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&tag.stderr).contains("not a full commit SHA"));
}

/// The action's own third-party pins: those of stackbot's workflows plus init's table.
fn known_pins() -> BTreeMap<String, String> {
    let mut pins = BTreeMap::new();
    let pinned =
        regex::Regex::new(r"uses:\s*([\w.-]+/[\w.-]+)(?:/[\w./-]+)?@([0-9a-f]{40})\s*#\s*v\d")
            .unwrap();
    for f in std::fs::read_dir(root().join(".github/workflows")).unwrap() {
        let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
        for c in pinned.captures_iter(&text) {
            pins.insert(c[1].to_string(), c[2].to_string());
        }
    }
    for p in stackbot::init::workflows::PINNED {
        pins.insert(p.action.to_string(), p.commit.to_string());
    }
    pins
}

/// `owner/name` of a `uses:` value (`actions/cache/restore@…` is `actions/cache`).
fn action_repo(uses: &str) -> (String, String) {
    let (path, reference) = uses.split_once('@').expect("uses has a ref");
    let repo: Vec<&str> = path.split('/').take(2).collect();
    (repo.join("/"), reference.to_string())
}

fn all_steps(doc: &Value) -> Vec<&Value> {
    let mut out: Vec<&Value> = Vec::new();
    if let Some(s) = doc.pointer("/runs/steps").and_then(Value::as_array) {
        out.extend(s);
    }
    for job in doc["jobs"].as_object().into_iter().flat_map(|m| m.values()) {
        out.extend(job["steps"].as_array().into_iter().flatten());
    }
    out
}

#[test]
fn the_generated_workflows_and_the_action_lint_clean_and_every_reference_resolves() {
    let dir = tempfile::tempdir().unwrap();
    cluster_stacks::initialised(dir.path(), &["--tenant-shards", "2"]);
    let workflows = cluster_stacks::workflows(dir.path());
    lint(
        "zizmor",
        &["--offline", "--no-progress", "--persona=pedantic", "."],
        dir.path(),
    );
    lint(
        "zizmor",
        &[
            "--offline",
            "--no-progress",
            "--persona=pedantic",
            "action.yml",
        ],
        &root(),
    );
    lint("actionlint", &["-no-color"], dir.path());
    // With the pinned action as a local copy, actionlint also checks every `with:` against
    // the action's inputs.
    let local = dir.path().join(".github/actions/stackbot");
    std::fs::create_dir_all(&local).unwrap();
    std::fs::copy(root().join("action.yml"), local.join("action.yml")).unwrap();
    let pin = format!("{ACTION_REPO}@{ACTION_SHA}");
    let linted = tempfile::tempdir().unwrap();
    for wf in &workflows {
        let text = std::fs::read_to_string(wf).unwrap();
        assert!(
            text.contains(&format!("uses: {pin} # v")),
            "{}",
            wf.display()
        );
        let target = linted.path().join(wf.file_name().unwrap());
        std::fs::write(&target, text.replace(&pin, "./.github/actions/stackbot")).unwrap();
    }
    let paths: Vec<String> = std::fs::read_dir(linted.path())
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    let mut args = vec!["-no-color"];
    args.extend(paths.iter().map(String::as_str));
    lint("actionlint", &args, dir.path());

    let pins = known_pins();
    let script_path = regex::Regex::new(r#"(\$ACTION_PATH/|\./)?\b(scripts/[\w./-]+)"#).unwrap();
    let mut docs: Vec<(PathBuf, PathBuf)> = workflows
        .iter()
        .map(|w| (w.clone(), dir.path().to_path_buf()))
        .collect();
    docs.push((root().join("action.yml"), root()));
    let mut resolved = 0;
    for (file, base) in &docs {
        let doc = yaml(file);
        for step in all_steps(&doc) {
            if let Some(run) = step["run"].as_str() {
                for c in script_path.captures_iter(run) {
                    let under = if c.get(1).is_some_and(|m| m.as_str() == "$ACTION_PATH/") {
                        root()
                    } else {
                        base.clone()
                    };
                    assert!(
                        under.join(&c[2]).is_file(),
                        "{}: `{}` is not in {}",
                        file.display(),
                        &c[0],
                        under.display()
                    );
                    resolved += 1;
                }
            }
            let Some(uses) = step["uses"].as_str() else {
                continue;
            };
            resolved += 1;
            if let Some(local) = uses.strip_prefix("./") {
                assert!(base.join(local).join("action.yml").is_file(), "{uses}");
                continue;
            }
            let (repo, reference) = action_repo(uses);
            if repo == ACTION_REPO {
                assert_eq!(
                    reference,
                    ACTION_SHA,
                    "{}: the action is pinned",
                    file.display()
                );
                assert!(root().join("action.yml").is_file());
                continue;
            }
            assert_eq!(
                pins.get(&repo),
                Some(&reference),
                "{}: `{uses}` is not a public action pinned as stackbot's own workflows pin it",
                file.display()
            );
        }
    }
    assert!(resolved >= 12, "only {resolved} references checked");
}

// ---- the jobs, run as a runner runs them ----

/// A `gh` stand-in over the fake GitHub's REST API (see the module comment).
const GH: &str = r#"#!/usr/bin/env bash
set -euo pipefail
printf '%s\n' "$*" >> "$GH_LOG"
auth=()
if [ -n "${GH_TOKEN:-}" ]; then auth=(-H "Authorization: Bearer $GH_TOKEN"); fi
api() { curl -fsS "${auth[@]}" -H 'Accept: application/vnd.github+json' "$FAKE_API/$1"; }
sub="$1 $2"; shift 2
repo="" jq_filter="." dir="." pattern="*" signer="" first=""
while [ $# -gt 0 ]; do
  case "$1" in
    --repo) repo="$2"; shift 2 ;;
    --jq) jq_filter="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --pattern) pattern="$2"; shift 2 ;;
    --signer-workflow) signer="$2"; shift 2 ;;
    --json | --limit) shift 2 ;;
    --exclude-drafts) shift ;;
    *) [ -n "$first" ] || first="$1"; shift ;;
  esac
done
case "$sub" in
  "attestation verify")
    case "$signer" in
      */.github/workflows/binaries.yml) exit 0 ;;
      *) echo "no attestations found (the fake GitHub stores none)" >&2; exit 1 ;;
    esac ;;
  "release list")
    api "repos/$repo/releases?per_page=50" \
      | jq '[.[] | select(.draft | not) | {tagName: .tag_name, publishedAt: .published_at}]' \
      | jq -r "$jq_filter" ;;
  "release view") api "repos/$repo/releases/tags/$first" >/dev/null ;;
  "release download")
    mkdir -p "$dir"
    n=0
    while IFS=$'\t' read -r id name; do
      # shellcheck disable=SC2053
      [[ "$name" == $pattern ]] || continue
      curl -fsSL "${auth[@]}" -H 'Accept: application/octet-stream' \
        "$FAKE_API/repos/$repo/releases/assets/$id" -o "$dir/$name"
      n=$((n + 1))
    done < <(api "repos/$repo/releases/tags/$first" | jq -r '.assets[] | "\(.id)\t\(.name)"')
    [ "$n" -gt 0 ] || { echo "no assets match the file pattern" >&2; exit 1; } ;;
  *) echo "gh stand-in: unexpected gh $sub" >&2; exit 64 ;;
esac
"#;

/// The world the jobs run in: the fake GitHub holding the repository, the stackbot release
/// assets on loopback, the cache store and the `gh` stand-in.
struct World {
    fake: FakeGithub,
    assets: FakeRelease,
    tmp: tempfile::TempDir,
    runs: usize,
}

impl World {
    fn new() -> Self {
        let fake = FakeGithub::start_with(FakeOptions::default().enterprise().with_token(TOKEN));
        let tmp = tempfile::tempdir().unwrap();
        let checkout = tmp.path().join("maintainer");
        // The stacks the recorded snapshot holds upstream data for: it has none for
        // openstack/scs's node images (regiocloud's ubuntu-2204 builds), and a stack whose
        // upstream data is missing is `unknown` and makes every run exit 1 (docs/status.md),
        // which is not what this test is about.
        cluster_stacks::initialised(
            &checkout,
            &[
                "--api-url",
                &fake.api_url(),
                "--stack-dir",
                "providers/openstack/scs2",
                "--stack-dir",
                "providers/docker/scs",
            ],
        );
        // The network stand-in: upstream as recorded on 2026-05-01.
        let cfg = checkout.join("stackbot.yaml");
        let text = std::fs::read_to_string(&cfg).unwrap();
        let snapshot = root().join("examples/local/upstream-2026-05-01.json");
        let text = text.replacen(
            "upstream:\n",
            &format!("upstream:\n  snapshot: {}\n", snapshot.display()),
            1,
        );
        std::fs::write(&cfg, text).unwrap();
        // The maintainer commits and pushes what init wrote.
        let mut files = BTreeMap::new();
        collect(&checkout, &checkout, &mut files);
        fake.create_repo_tree(REPO, "main", &files);
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("gh"), GH).unwrap();
        chmod_x(&bin.join("gh"));
        std::fs::create_dir_all(tmp.path().join("cache-store")).unwrap();
        let (_, archive) = genuine_archive();
        let assets = FakeRelease::serve(archive, &sums_line(archive));
        World {
            fake,
            assets,
            tmp,
            runs: 0,
        }
    }

    fn branch_files(&self, branch: &str) -> BTreeMap<String, Vec<u8>> {
        self.fake.snapshot().repos[REPO].branches[branch]
            .files
            .clone()
    }

    /// A runner for the next job: a fresh workspace and temp, the stand-ins registered.
    fn runner(&mut self, workflow: &str, checkout_branch: &str) -> Runner {
        self.runs += 1;
        let n = self.runs;
        let job = self.tmp.path().join(format!("job{n}"));
        let workspace = job.join("workspace");
        std::fs::create_dir_all(&workspace).unwrap();
        let mut r = Runner::new(&workspace, &job.join("temp"));
        r.path.push(self.tmp.path().join("bin"));
        r.local_actions.insert(ACTION_REPO.into(), root());
        for (k, v) in [
            ("token", TOKEN.to_string()),
            ("repository", REPO.to_string()),
            ("repository_owner", "SovereignCloudStack".to_string()),
            ("run_id", format!("{}", 9000 + n)),
            ("run_attempt", "1".to_string()),
            (
                "workflow_ref",
                format!("{REPO}/.github/workflows/{workflow}@refs/heads/main"),
            ),
            ("server_url", format!("http://{}", self.fake.addr())),
            ("api_url", self.fake.api_url()),
            ("event_name", "schedule".to_string()),
        ] {
            r.github.insert(k.into(), v);
        }
        r.env.insert(
            "GH_LOG".into(),
            self.tmp.path().join("gh.log").display().to_string(),
        );
        r.env.insert("FAKE_API".into(), self.fake.api_url());
        let files = self.branch_files(checkout_branch);
        let ws = workspace.clone();
        r.stand_in("actions/checkout", move |with, _| {
            assert_eq!(
                with.get("persist-credentials").map(String::as_str),
                Some("false")
            );
            for (path, bytes) in &files {
                let p = ws.join(path);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, bytes).unwrap();
            }
            ok(BTreeMap::new())
        });
        let store = self.tmp.path().join("cache-store");
        let s = store.clone();
        r.stand_in("actions/cache/restore", move |with, r| restore(&s, with, r));
        r.stand_in("actions/cache/save", move |with, r| save(&store, with, r));
        r.stand_in("actions/attest-build-provenance", |with, _| {
            let subjects = glob_files(&with["subject-path"]);
            assert!(
                !subjects.is_empty(),
                "nothing to attest at {}",
                with["subject-path"]
            );
            StandIn {
                outcome: Outcome::NotEmulated(format!(
                    "attesting {} files needs GitHub's OIDC token and Sigstore",
                    subjects.len()
                )),
                outputs: BTreeMap::new(),
            }
        });
        r
    }

    /// Run `job` of the generated workflow `file` as the hourly schedule (no inputs), with
    /// the stackbot release assets on loopback instead of github.com.
    fn run_job(&mut self, file: &str, job: &str, branch: &str) -> (Run, Runner) {
        let workflow = yaml(
            &self
                .tmp
                .path()
                .join("maintainer/.github/workflows")
                .join(file),
        );
        let mut r = self.runner(file, branch);
        let wf = with_release_url(&workflow, &self.assets.url());
        let run = r.run_job(&wf, job, &BTreeMap::new(), &BTreeMap::new());
        (run, r)
    }
}

fn ok(outputs: BTreeMap<String, String>) -> StandIn {
    StandIn {
        outcome: Outcome::Success,
        outputs,
    }
}

fn collect(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.file_name().is_some_and(|n| n == ".git") {
            continue;
        }
        if p.is_dir() {
            collect(base, &p, out);
        } else {
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            out.insert(rel, std::fs::read(&p).unwrap());
        }
    }
}

/// `DIR/*/*` → its files.
fn glob_files(pattern: &str) -> Vec<PathBuf> {
    let base = pattern.trim_end_matches("/*/*");
    assert!(pattern.ends_with("/*/*"), "{pattern}");
    let mut out = Vec::new();
    for d in std::fs::read_dir(base).into_iter().flatten() {
        for f in std::fs::read_dir(d.unwrap().path()).into_iter().flatten() {
            out.push(f.unwrap().path());
        }
    }
    out
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.path().is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// `actions/cache/restore` on a local store: the exact key, else the newest key starting
/// with a `restore-keys` prefix (GitHub's rule); `cache-hit` only for the exact key.
fn restore(store: &Path, with: &BTreeMap<String, String>, r: &Runner) -> StandIn {
    let order = std::fs::read_to_string(store.join("order")).unwrap_or_default();
    let keys: Vec<&str> = order.lines().collect();
    let key = &with["key"];
    let hit = keys.iter().any(|k| k == key).then(|| key.clone());
    let matched = hit.clone().or_else(|| {
        let prefixes = with.get("restore-keys").cloned().unwrap_or_default();
        prefixes.lines().map(str::trim).find_map(|p| {
            keys.iter()
                .rev()
                .find(|k| !p.is_empty() && k.starts_with(p))
                .map(|k| k.to_string())
        })
    });
    let mut outputs = BTreeMap::from([("cache-hit".to_string(), hit.is_some().to_string())]);
    if let Some(m) = matched {
        copy_tree(&store.join(&m), &r.workspace.join(&with["path"]));
        outputs.insert("cache-matched-key".into(), m);
    }
    ok(outputs)
}

/// `actions/cache/save`: keys are immutable (a second save of one key saves nothing).
fn save(store: &Path, with: &BTreeMap<String, String>, r: &Runner) -> StandIn {
    let key = &with["key"];
    let src = r.workspace.join(&with["path"]);
    if !store.join(key).exists() && src.is_dir() {
        copy_tree(&src, &store.join(key));
        let mut order = std::fs::read_to_string(store.join("order")).unwrap_or_default();
        order.push_str(&format!("{key}\n"));
        std::fs::write(store.join("order"), order).unwrap();
    }
    ok(BTreeMap::new())
}

/// The workflow with the action step also given `release-url`: github.com's release
/// downloads are the loopback server here.
fn with_release_url(workflow: &Value, url: &str) -> Value {
    let mut wf = workflow.clone();
    for job in wf["jobs"].as_object_mut().unwrap().values_mut() {
        for step in job["steps"].as_array_mut().unwrap() {
            if step["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with(ACTION_REPO))
            {
                step["with"]["release-url"] = url.into();
            }
        }
    }
    wf
}

fn no_secret_in(run: &Run) {
    for s in &run.steps {
        for text in [&s.stderr, &s.summary] {
            assert!(!text.contains(TOKEN), "step `{}` printed the token", s.name);
        }
        assert!(s.outputs.values().all(|v| !v.contains(TOKEN)));
    }
}

#[test]
fn the_action_runs_the_first_release_then_the_merged_one_then_nothing() {
    let mut world = World::new();
    let before = world.fake.snapshot();

    // Hour 1: stackbot opens the release pull request (mode: pull-request).
    let (first, r1) = world.run_job("stackbot-release.yml", "release", "main");
    no_secret_in(&first);
    let action = first.step("stackbot release");
    assert_eq!(action.outcome, Outcome::Success, "{:#?}", r1.log);
    let log: BTreeMap<&str, &Outcome> = r1
        .log
        .iter()
        .map(|s| (s.name.as_str(), &s.outcome))
        .collect();
    assert_eq!(log["Install stackbot"], &Outcome::Success);
    assert_eq!(log["Restore the answer cache"], &Outcome::Success);
    assert_eq!(log["Status report"], &Outcome::Success);
    assert_eq!(log["Save the answer cache"], &Outcome::Success);
    let prs = &action.outputs["pull-requests"];
    assert!(
        prs.contains("/pull/"),
        "a release pull request: {:?}",
        action.outputs
    );
    let summary = first.summary();
    assert!(
        summary.contains("## stackbot release") && summary.contains("### Release pull requests")
    );
    assert!(summary.contains("SCS 0210"), "the status report: {summary}");
    assert!(["true", "false", "unknown"].contains(&first.outputs["compliant"].as_str()));
    let calls = std::fs::read_to_string(world.tmp.path().join("gh.log")).unwrap();
    assert!(
        calls.contains(&format!(
            "--repo {ACTION_REPO} --signer-workflow {ACTION_REPO}/.github/workflows/binaries.yml"
        )),
        "the binary's attestation was checked: {calls}"
    );
    let after_first = world.fake.snapshot();
    assert_ne!(after_first, before);

    // The next hours: the maintainer merges every release pull request GitHub lets them
    // merge (two may both change stackbot.lock: the bot brings the other up to date in the
    // next run); each run tags and publishes what was merged and attests it.
    let mut published_tags = Vec::new();
    let mut hours = 1;
    let mut last_temp = PathBuf::new();
    while open_pulls(&world) > 0 {
        hours += 1;
        assert!(hours <= 10, "the release pull requests never got merged");
        for n in open_pull_numbers(&world) {
            let _ = world
                .fake
                .try_merge_pull(REPO, n, MergeMethod::Merge, MAINTAINER);
        }
        let (run, r) = world.run_job("stackbot-release.yml", "release", "main");
        no_secret_in(&run);
        assert!(run.succeeded(), "hour {hours}: {:#?}", r.log);
        let tags: Vec<String> = run.outputs["tags"].lines().map(str::to_string).collect();
        let step = |name: &str| {
            r.log
                .iter()
                .find(|s| s.name == name)
                .unwrap()
                .outcome
                .clone()
        };
        if !tags.is_empty() {
            assert!(run.summary().contains("### Released"));

            assert_eq!(step("Collect the published assets"), Outcome::Success);
            assert!(matches!(
                step("Attest the published assets"),
                Outcome::NotEmulated(_)
            ));
            for t in &tags {
                let sums = std::fs::read_to_string(
                    r.temp.join("stackbot-published").join(t).join("SHA256SUMS"),
                )
                .unwrap();
                assert!(sums.lines().count() >= 4, "{t}: {sums}");
            }
        }
        published_tags.extend(tags);
        last_temp = r.temp.clone();
    }
    assert!(last_temp.exists());
    let published = world.fake.snapshot();
    for t in &published_tags {
        assert!(
            published.repos[REPO]
                .releases
                .iter()
                .any(|r| &r.tag == t && !r.draft),
            "{t}"
        );
    }
    published_tags.sort();
    for t in [
        "openstack-scs2-1-33-v1",
        "openstack-scs2-1-34-v1",
        "docker-scs-1-34-v1",
    ] {
        assert!(
            published_tags.iter().any(|x| x == t),
            "{t} in {published_tags:?}"
        );
    }
    let last_run_id = 9000 + world.runs;

    // The quiet hour: nothing to do, nothing written, the cache of the last run restored.
    world.fake.reset_counts();
    let (quiet, r) = world.run_job("stackbot-release.yml", "release", "main");
    assert!(quiet.succeeded(), "{:#?}", r.log);
    assert_eq!(quiet.outputs["tags"], "");
    assert_eq!(world.fake.counts().writes, 0, "{:?}", world.fake.counts());
    assert_eq!(world.fake.snapshot(), published);
    let restored = r
        .log
        .iter()
        .find(|s| s.name == "Restore the answer cache")
        .unwrap();
    assert!(
        restored.outputs["cache-matched-key"].starts_with(&format!("stackbot-http-{last_run_id}-")),
        "warm from the previous run: {:?}",
        restored.outputs
    );
    assert!(
        world.fake.counts().not_modified > 0,
        "conditional requests answered 304"
    );
    assert!(quiet.summary().contains("Nothing released."));
    let attest = r
        .log
        .iter()
        .find(|s| s.name == "Attest the published assets")
        .unwrap();
    assert_eq!(attest.outcome, Outcome::Skipped, "nothing new to attest");
    eprintln!(
        "first release: {} hours, {} releases; quiet hour: {:?}",
        hours,
        published_tags.len(),
        world.fake.counts()
    );
}

fn open_pull_numbers(world: &World) -> Vec<u64> {
    world.fake.snapshot().repos[REPO]
        .pulls
        .iter()
        .filter(|p| p.state == "open")
        .map(|p| p.number)
        .collect()
}

fn open_pulls(world: &World) -> usize {
    open_pull_numbers(world).len()
}

#[test]
fn a_pull_request_preview_plans_read_only_and_the_action_works_without_a_token() {
    let mut world = World::new();
    let before = world.fake.snapshot();
    let (preview, r) = world.run_job("stackbot-preview.yml", "plan", "main");
    assert!(preview.succeeded(), "{:#?}", r.log);
    let body = &preview.outputs["preview"];
    assert!(body.starts_with("<!-- stackbot:preview -->"), "{body}");
    assert!(body.chars().count() <= 65_536);
    assert!(preview.summary().contains("## stackbot preview"));
    assert_eq!(world.fake.snapshot(), before, "a preview writes nothing");

    // Without a token: the plan reads what is public; a release cannot write and says so.
    for (command, code) in [("plan", "0"), ("release", "1")] {
        let mut r = world.runner("stackbot-release.yml", "main");
        let with = BTreeMap::from([
            ("command".to_string(), command.to_string()),
            ("token".to_string(), String::new()),
            ("release-url".to_string(), world.assets.url()),
            ("status".to_string(), "false".to_string()),
        ]);
        let checkout = r.run_steps(
            &[serde_json::json!({"uses": "actions/checkout@x", "with": {"persist-credentials": "false"}})],
            &BTreeMap::new(),
            &BTreeMap::new(),
        );
        assert_eq!(checkout[0].outcome, Outcome::Success);
        let run = r.run_action(&root(), &with);
        assert_eq!(
            run.outputs["exit-code"], code,
            "{command}: {:#?}",
            run.steps
        );
        if command == "release" {
            let err = &run.step("Run stackbot").stderr;
            assert!(
                err.contains("GITHUB_TOKEN"),
                "names the missing token: {err}"
            );
        }
        assert_eq!(
            world.fake.snapshot(),
            before,
            "{command} without a token wrote"
        );
    }
}

/// A stack with a GitHub conformance gate dispatches its workflow from the release job, which
/// GitHub allows only with `actions: write`: `init` on such a setup grants it there (and only
/// there), and the workflow still lints clean.
#[test]
fn init_grants_the_release_job_actions_write_when_a_stack_has_a_workflow_gate() {
    let dir = tempfile::tempdir().unwrap();
    cluster_stacks::initialised(dir.path(), &[]);
    let permissions = |dir: &Path| {
        let path = dir.join(".github/workflows/stackbot-release.yml");
        let doc: Value = yaml_serde::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        doc["jobs"]["release"]["permissions"].clone()
    };
    assert!(permissions(dir.path()).get("actions").is_none());
    let config = dir.path().join("stackbot.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.contains("\n    components:"), "{text}");
    // A gated setup publishes directly (a gated release pull request is refused).
    let gated = text
        .replacen(
            "\n    components:",
            "\n    gate: {workflow: conformance.yml}\n    components:",
            1,
        )
        .replace("mode: pull-request", "mode: direct");
    std::fs::write(&config, gated).unwrap();
    let out = cluster_stacks::init(dir.path(), &["--update"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let granted = permissions(dir.path());
    assert_eq!(granted["actions"], "write", "{granted}");
    assert_eq!(granted["contents"], "write");
    lint(
        "zizmor",
        &["--offline", "--no-progress", "--persona=pedantic", "."],
        dir.path(),
    );
    lint("actionlint", &["-no-color"], dir.path());
}
