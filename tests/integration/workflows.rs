//! The GitHub workflows and the composite action are part of the product: stackbot's own
//! (ci, binaries, fuzz, mutants), the action, and the two `stackbot init` writes into the
//! cluster-stacks repository (generated here, with and without tenant shards). They must only
//! call commands and flags that exist, pin every third-party action to a commit, declare
//! least-privilege permissions, never splice `${{ }}` expressions into shell scripts (the
//! classic template-injection hole), and restore only caches some job saves.
//!
//! Every `run:` script that invokes `stackbot` is executed for real by bash, with the step's
//! `env:` filled in (input defaults, then sample values for every input), a `PATH` holding
//! only a recording `stackbot` stand-in (so such steps cannot depend on anything else), and
//! each recorded command line is then run through the real binary with `--help` appended:
//! clap rejects unknown subcommands, unknown flags and bad values before printing help.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use crate::cluster_stacks;
use crate::support::root;

/// The workflows `stackbot init` writes, once per test process: `plain/` with the release job
/// serving the tenants, `sharded/` with a matrix of 3 tenant shards after it.
fn generated() -> &'static [PathBuf] {
    static GENERATED: OnceLock<Vec<PathBuf>> = OnceLock::new();
    GENERATED.get_or_init(|| {
        let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("workflows-generated");
        let _ = std::fs::remove_dir_all(&base);
        let mut out = Vec::new();
        for (name, args) in [
            ("plain", &[][..]),
            ("sharded", &["--tenant-shards", "3"][..]),
        ] {
            let dir = base.join(name);
            cluster_stacks::initialised(&dir, args);
            out.extend(cluster_stacks::workflows(&dir));
        }
        out
    })
}

/// The conformance workflow docs/github-setup.md tells people to add (the one the gate tests
/// dispatch against the fake GitHub), written out once per test process: held to the same
/// rules as the shipped workflows.
fn documented() -> &'static Path {
    static DOCUMENTED: OnceLock<PathBuf> = OnceLock::new();
    DOCUMENTED.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("workflows-documented");
        let wf = dir.join(".github/workflows");
        std::fs::create_dir_all(&wf).unwrap();
        let path = wf.join("conformance.yml");
        std::fs::write(
            &path,
            crate::support::fake_github::actions::documented_conformance_workflow(),
        )
        .unwrap();
        path
    })
}

#[test]
fn the_documented_conformance_workflow_lints_clean() {
    let path = documented();
    let dir = path.ancestors().nth(3).unwrap();
    let file = path.strip_prefix(dir).unwrap().to_str().unwrap();
    crate::deploy::lint(
        "zizmor",
        &["--offline", "--no-progress", "--persona=pedantic", file],
        dir,
    );
    crate::deploy::lint("actionlint", &["-no-color", file], dir);
}

/// Every workflow file plus the root `action.yml` plus the generated workflows plus the
/// documented conformance workflow, with their parsed YAML and raw text.
fn documents() -> Vec<(PathBuf, Value, String)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(root().join(".github/workflows"))
        .expect(".github/workflows exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    paths.sort();
    paths.push(root().join("action.yml"));
    paths.extend(generated().iter().cloned());
    paths.push(documented().to_path_buf());
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let value: Value = yaml_serde::from_str(&text)
                .unwrap_or_else(|e| panic!("{} is not valid YAML: {e}", p.display()));
            (p, value, text)
        })
        .collect()
}

fn is_action(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == "action.yml")
}

/// All steps of a workflow (across jobs) or of a composite action.
fn steps(doc: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    if let Some(s) = doc.pointer("/runs/steps").and_then(Value::as_array) {
        out.extend(s);
    }
    if let Some(jobs) = doc.get("jobs").and_then(Value::as_object) {
        for job in jobs.values() {
            if let Some(s) = job.get("steps").and_then(Value::as_array) {
                out.extend(s);
            }
        }
    }
    out
}

/// Declared inputs (`workflow_dispatch` or action) with their defaults as strings.
fn input_defaults(doc: &Value) -> BTreeMap<String, String> {
    let inputs = doc
        .pointer("/on/workflow_dispatch/inputs")
        .or_else(|| doc.get("inputs"))
        .and_then(Value::as_object);
    inputs
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let d = match v.get("default") {
                        Some(Value::String(s)) => s.clone(),
                        Some(Value::Bool(b)) => b.to_string(),
                        Some(Value::Number(n)) => n.to_string(),
                        _ => String::new(),
                    };
                    (k.clone(), d)
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_third_party_action_is_pinned_to_a_commit_with_a_version_comment() {
    let pinned = regex::Regex::new(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$").unwrap();
    let version_comment = regex::Regex::new(r"#\s*v\d").unwrap();
    let mut count = 0;
    for (path, doc, text) in documents() {
        let mut uses: Vec<&str> = steps(&doc)
            .iter()
            .filter_map(|s| s.get("uses").and_then(Value::as_str))
            .collect();
        if let Some(jobs) = doc.get("jobs").and_then(Value::as_object) {
            uses.extend(
                jobs.values()
                    .filter_map(|j| j.get("uses").and_then(Value::as_str)),
            );
        }
        for u in uses {
            if u.starts_with("./") {
                continue;
            }
            count += 1;
            assert!(
                pinned.is_match(u),
                "{}: `uses: {u}` must pin a full 40-hex commit SHA",
                path.display()
            );
            let line = text
                .lines()
                .find(|l| l.contains(u))
                .expect("uses line is in the text");
            assert!(
                version_comment.is_match(line),
                "{}: `{}` needs a `# vX.Y.Z` comment saying which release the SHA is",
                path.display(),
                line.trim()
            );
        }
    }
    assert!(
        count >= 5,
        "expected the workflows to use pinned actions, found {count}"
    );
}

#[test]
fn every_workflow_and_job_declares_its_permissions() {
    for (path, doc, _) in documents() {
        if is_action(&path) {
            continue;
        }
        assert_eq!(
            doc.get("permissions"),
            Some(&serde_json::json!({})),
            "{}: the workflow default must be `permissions: {{}}`; grant per job",
            path.display()
        );
        let jobs = doc.get("jobs").and_then(Value::as_object).unwrap();
        for (name, job) in jobs {
            let perms = job.get("permissions").unwrap_or_else(|| {
                panic!("{}: job `{name}` declares no permissions", path.display())
            });
            if let Some(m) = perms.as_object() {
                for (scope, level) in m {
                    assert!(
                        matches!(level.as_str(), Some("read" | "write" | "none")),
                        "{}: job `{name}` {scope}: {level}",
                        path.display()
                    );
                }
            } else {
                panic!(
                    "{}: job `{name}`: list scopes explicitly, not `{perms}`",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn the_release_workflow_never_overlaps_and_the_preview_never_runs_untrusted_code_with_write_access()
{
    let docs = documents();
    let generated: Vec<&(PathBuf, Value, String)> = docs
        .iter()
        .filter(|(p, _, _)| generated().contains(p))
        .collect();
    let named = |n: &str| -> Vec<&(PathBuf, Value, String)> {
        generated
            .iter()
            .copied()
            .filter(|(p, _, _)| p.file_name().is_some_and(|f| f == n))
            .collect()
    };
    assert_eq!(named("stackbot-release.yml").len(), 2);
    for (_, release, _) in named("stackbot-release.yml") {
        assert_eq!(
            release.pointer("/concurrency/cancel-in-progress"),
            Some(&Value::Bool(false))
        );
        assert!(release.pointer("/concurrency/group").is_some());
        assert!(release.pointer("/on/schedule").is_some());
        let inputs = input_defaults(release);
        for i in ["dry-run", "stack", "minor", "allow-downgrade", "republish"] {
            assert!(inputs.contains_key(i), "release workflow input `{i}`");
        }
    }
    for (_, preview, text) in named("stackbot-preview.yml") {
        assert!(preview.pointer("/on/pull_request").is_some());
        assert!(
            preview.pointer("/on/pull_request_target").is_none(),
            "untrusted PR code must never run with a write token"
        );
        let jobs = preview.get("jobs").and_then(Value::as_object).unwrap();
        for (name, job) in jobs {
            let writes = job
                .get("permissions")
                .and_then(Value::as_object)
                .is_some_and(|m| m.values().any(|v| v == "write"));
            let checks_out = job.get("steps").and_then(Value::as_array).is_some_and(|s| {
                s.iter().any(|st| {
                    st.get("uses")
                        .and_then(Value::as_str)
                        .is_some_and(|u| u.starts_with("actions/checkout@"))
                })
            });
            assert!(
                !(writes && checks_out),
                "preview job `{name}` both checks out PR code and holds a write token"
            );
            if writes {
                let cond = job.get("if").and_then(Value::as_str).unwrap_or("");
                assert!(
                    cond.contains("head.repo.full_name == github.repository"),
                    "preview job `{name}` writes and must skip fork PRs"
                );
            }
        }
        assert!(text.contains("<!-- stackbot:preview -->"));
    }
    assert_eq!(
        stackbot::report::preview::MARKER,
        "<!-- stackbot:preview -->",
        "the workflow looks for the renderer's marker"
    );
}

/// stackbot's repository ships the tool; the hourly bot runs in the cluster-stacks repository
/// (docs/github-setup.md): no workflow here releases cluster stacks or runs stackbot itself.
#[test]
fn stackbot_s_own_repository_runs_no_release_bot() {
    for (path, doc, _) in documents() {
        if is_action(&path) || generated().contains(&path) {
            continue;
        }
        assert!(
            doc.pointer("/on/schedule").is_none()
                || path.ends_with("fuzz.yml")
                || path.ends_with("mutants.yml"),
            "{}: only the fuzzer and the mutation check are scheduled in stackbot's repository",
            path.display()
        );
        for script in run_scripts(&doc) {
            assert!(
                !invokes_stackbot(script),
                "{}: stackbot runs from the cluster-stacks repository, through the action",
                path.display()
            );
        }
    }
}

#[test]
fn run_scripts_take_expressions_only_through_env() {
    for (path, doc, _) in documents() {
        for step in steps(&doc) {
            if let Some(run) = step.get("run").and_then(Value::as_str) {
                assert!(
                    !run.contains("${{"),
                    "{}: pass `${{{{ }}}}` values through `env:`, not into the script:\n{run}",
                    path.display()
                );
            }
        }
    }
}

/// Does a shell script run `stackbot` as a command (not merely mention the name)?
fn invokes_stackbot(script: &str) -> bool {
    regex::Regex::new(r"(?m)(^\s*|[;&|(!]\s*|\b(?:then|do|else)\s+)stackbot\s")
        .unwrap()
        .is_match(script)
}

/// Sample values that exercise every optional flag.
fn sample(input: &str) -> Option<&'static str> {
    Some(match input {
        "dry-run" => "true",
        "stack" => "openstack/scs2",
        "minor" => "1.34",
        "allow-downgrade" => "true",
        "republish" => "openstack-scs2-1-34-v3 openstack-scs2-1-33-v2",
        "config" => "stackbot.yaml",
        "format" => "json",
        "skip-tenants" => "true",
        "shard" => "2/4",
        "tenant" => "acme",
        "cache-dir" => ".stackbot/cache",
        _ => return None,
    })
}

const ACTION_COMMANDS: &[&str] = &[
    "release", "plan", "tenants", "status", "detect", "render", "validate",
];

/// Fill one `env:` value: `${{ inputs.x }}` from `inputs`, `${{ runner.temp }}` from `tmp`,
/// anything else (tokens, event fields) with a harmless placeholder.
fn expand(value: &str, inputs: &BTreeMap<String, String>, tmp: &Path) -> String {
    let expr = regex::Regex::new(r"\$\{\{\s*(.*?)\s*\}\}").unwrap();
    expr.replace_all(value, |c: &regex::Captures| {
        let e = &c[1];
        if let Some(name) = e.strip_prefix("inputs.") {
            inputs.get(name).cloned().unwrap_or_default()
        } else if e == "runner.temp" {
            tmp.display().to_string()
        } else {
            "placeholder".to_string()
        }
    })
    .into_owned()
}

/// Absolute path of bash (the child's `PATH` is only the recorder, so it cannot be looked up there).
fn bash() -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join("bash"))
        .find(|p| p.is_file())
        .expect("bash is installed")
}

/// Run `script` as GitHub runs `run:` steps (`bash --noprofile --norc -eo pipefail`) with a
/// recording `stackbot`; return the recorded argument vectors and the exit status.
fn run_with_recorder(
    script: &str,
    env: &BTreeMap<String, String>,
    tmp: &Path,
) -> (Vec<Vec<String>>, i32) {
    let bin = tmp.join("stackbot/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = tmp.join("argv.log");
    let _ = std::fs::remove_file(&log);
    let shim = bin.join("stackbot");
    std::fs::write(
        &shim,
        "#!/bin/bash\nprintf '%s\\037' \"$@\" >> \"$STACKBOT_ARGV_LOG\"\nprintf '\\036' >> \"$STACKBOT_ARGV_LOG\"\necho '{}'\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let script_path = tmp.join("step.sh");
    std::fs::write(&script_path, script).unwrap();
    let status = Command::new(bash())
        .args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(&script_path)
        .env_clear()
        .envs(env)
        .env("PATH", &bin)
        .env("RUNNER_TEMP", tmp)
        .env("GITHUB_OUTPUT", tmp.join("output"))
        .env("GITHUB_STEP_SUMMARY", tmp.join("summary"))
        .env("GITHUB_WORKSPACE", root())
        .env("STACKBOT_ARGV_LOG", &log)
        .current_dir(tmp)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("bash runs");
    let recorded = std::fs::read_to_string(&log).unwrap_or_default();
    let argvs = recorded
        .split('\u{1e}')
        .filter(|r| !r.is_empty())
        .map(|r| {
            r.split('\u{1f}')
                .filter(|a| !a.is_empty())
                .map(str::to_string)
                .collect()
        })
        .collect();
    (argvs, status.code().unwrap_or(-1))
}

/// The subcommand of an argument vector (skipping global options and their values).
fn subcommand(argv: &[String]) -> Option<&str> {
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-c" | "--config" | "--format" | "--now" => {
                it.next();
            }
            s if s.starts_with('-') => {}
            s => return Some(s),
        }
    }
    None
}

/// A command whose owner has not landed it yet still has the skeleton's placeholder `Args`;
/// its flags cannot be checked until then (the check switches on by itself when it lands).
fn is_placeholder(cmd: &str) -> bool {
    std::fs::read_to_string(root().join(format!("src/cli/{cmd}.rs")))
        .is_ok_and(|s| s.contains("Placeholder arguments"))
}

#[test]
fn every_stackbot_command_in_the_workflows_exists_with_its_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let mut checked = 0;
    let mut invocations = 0;
    let mut skipped = Vec::new();
    for (path, doc, _) in documents() {
        let defaults = input_defaults(&doc);
        let mut full = defaults.clone();
        for (k, v) in full.iter_mut() {
            if let Some(s) = sample(k) {
                *v = s.to_string();
            }
        }
        for step in steps(&doc) {
            let Some(script) = step.get("run").and_then(Value::as_str) else {
                continue;
            };
            if !invokes_stackbot(script) {
                continue;
            }
            let env_map: BTreeMap<String, String> = step
                .get("env")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| {
                            (
                                k.clone(),
                                v.as_str().map_or_else(|| v.to_string(), str::to_string),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            let uses_command = env_map.values().any(|v| v.contains("inputs.command"));
            let commands: Vec<Option<&str>> = if uses_command {
                ACTION_COMMANDS.iter().map(|c| Some(*c)).collect()
            } else {
                vec![None]
            };
            for inputs in [&defaults, &full] {
                for cmd in &commands {
                    let mut inputs = inputs.clone();
                    if let Some(c) = cmd {
                        inputs.insert("command".into(), c.to_string());
                    }
                    let env: BTreeMap<String, String> = env_map
                        .iter()
                        .map(|(k, v)| (k.clone(), expand(v, &inputs, tmp.path())))
                        .collect();
                    let (argvs, code) = run_with_recorder(script, &env, tmp.path());
                    assert_eq!(
                        code,
                        0,
                        "{}: step `{}` failed under bash with inputs {inputs:?} (a step that runs stackbot may use only shell builtins)",
                        path.display(),
                        step.get("name").and_then(Value::as_str).unwrap_or("?")
                    );
                    assert!(
                        !argvs.is_empty(),
                        "{}: step `{}` never reached stackbot with inputs {inputs:?}",
                        path.display(),
                        step.get("name").and_then(Value::as_str).unwrap_or("?")
                    );
                    for argv in argvs {
                        invocations += 1;
                        let sub = subcommand(&argv).expect("a subcommand").to_string();
                        // A placeholder proves only that the subcommand exists.
                        let check: Vec<String> = if is_placeholder(&sub) {
                            skipped.push(format!(
                                "{}: stackbot {}",
                                path.display(),
                                argv.join(" ")
                            ));
                            vec![sub.clone()]
                        } else {
                            argv.clone()
                        };
                        let out = Command::new(env!("CARGO_BIN_EXE_stackbot"))
                            .args(&check)
                            .arg("--help")
                            .env("NO_COLOR", "1")
                            .output()
                            .unwrap();
                        assert!(
                            out.status.success(),
                            "{}: `stackbot {}` is not a valid command line:\n{}",
                            path.display(),
                            argv.join(" "),
                            String::from_utf8_lossy(&out.stderr)
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    for s in &skipped {
        eprintln!("flags not yet checkable (command still a placeholder): {s}");
    }
    assert!(
        invocations >= 10,
        "expected the workflows and the action to run stackbot, found {invocations} invocations"
    );
    eprintln!(
        "{checked} stackbot command lines checked ({} only for the subcommand)",
        skipped.len()
    );
}

#[test]
fn the_action_refuses_an_unknown_command() {
    let docs = documents();
    let (_, action, _) = docs.iter().find(|(p, _, _)| is_action(p)).unwrap();
    let step = steps(action)
        .into_iter()
        .find(|s| s.get("id").and_then(Value::as_str) == Some("run"))
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut inputs = input_defaults(action);
    inputs.insert("command".into(), "rm -rf /".into());
    let env: BTreeMap<String, String> = step["env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), expand(v.as_str().unwrap(), &inputs, tmp.path())))
        .collect();
    let (argvs, code) = run_with_recorder(step["run"].as_str().unwrap(), &env, tmp.path());
    assert_eq!(code, 2);
    assert!(argvs.is_empty());
}

// ---- GitHub CI is local CI; binaries are built once, verified before they run ----

fn find_doc<'a>(docs: &'a [(PathBuf, Value, String)], name: &str) -> &'a Value {
    &docs
        .iter()
        .find(|(p, _, _)| p.file_name().is_some_and(|f| f == name))
        .unwrap_or_else(|| panic!("{name} exists"))
        .1
}

/// The steps of a workflow, an action or a single job.
fn any_steps(doc: &Value) -> Vec<&Value> {
    match doc.get("steps").and_then(Value::as_array) {
        Some(s) => s.iter().collect(),
        None => steps(doc),
    }
}

fn run_scripts(doc: &Value) -> Vec<&str> {
    any_steps(doc)
        .iter()
        .filter_map(|s| s.get("run").and_then(Value::as_str))
        .collect()
}

fn uses_of(doc: &Value) -> Vec<&str> {
    any_steps(doc)
        .iter()
        .filter_map(|s| s.get("uses").and_then(Value::as_str))
        .collect()
}

/// The lines of a shell script that are code, not comments.
fn code_lines(script: &str) -> Vec<&str> {
    script
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// `rust-version` of Cargo.toml, e.g. `1.95`.
fn rust_version() -> String {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    regex::Regex::new(r#"(?m)^rust-version\s*=\s*"([^"]+)""#)
        .unwrap()
        .captures(&manifest)
        .expect("Cargo.toml declares rust-version")[1]
        .to_string()
}

#[test]
fn github_ci_runs_the_local_ci_script_and_nothing_besides_the_toolchain() {
    let docs = documents();
    let ci = find_doc(&docs, "ci.yml");
    assert!(ci.pointer("/on/push").is_some() && ci.pointer("/on/pull_request").is_some());
    for (name, job) in ci["jobs"].as_object().unwrap() {
        assert_eq!(
            job["runs-on"], "ubuntu-24.04",
            "ci job `{name}` runs where .ci/run is meant to run"
        );
    }
    let scripts = run_scripts(ci);
    assert_eq!(
        scripts
            .iter()
            .filter(|s| s.trim() == "bash .ci/run")
            .count(),
        1,
        "ci.yml runs the one CI script exactly once: {scripts:?}"
    );
    for script in scripts.iter().filter(|s| s.trim() != "bash .ci/run") {
        for line in code_lines(script) {
            assert!(
                line.starts_with("rustup "),
                "ci.yml may only set up the toolchain besides .ci/run; move `{line}` into .ci/run"
            );
        }
    }
    for u in uses_of(ci) {
        assert!(
            u.starts_with("actions/checkout@") || u.starts_with("actions/cache@"),
            "ci.yml step `{u}`: checks belong in .ci/run, where they also run locally"
        );
    }

    // Everything the project's CI checks is in .ci/run, as code (not a comment).
    let script = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let code = code_lines(&script).join("\n");
    for step in [
        "apt_install docker-registry",
        "apt_install apache2-utils",
        "check-jsonschema --builtin-schema vendor.github-workflows",
        "check-jsonschema --builtin-schema vendor.github-actions action.yml",
        "zizmor --offline --no-progress --persona=pedantic .",
        "actionlint",
        "cargo fmt --all -- --check",
        // Clippy lints the workspace while it is compiled for the tests (clippy-driver as
        // the workspace's compiler, `-D warnings`), behind a canary that must fail.
        "bin/clippy-driver",
        "CLIPPY_ARGS=\"-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__\"",
        "export RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS",
        "pub fn len(v: &Vec<u8>)",
        // Every target, the benchmark programs included (`cargo test` alone leaves benches out).
        "cargo test --locked --no-run --all-targets",
        "cargo test --locked",
        "scripts/check-package",
    ] {
        assert!(code.contains(step), ".ci/run no longer runs `{step}`");
    }
    assert!(
        !code.contains("../shared") && !code.contains("/work/"),
        ".ci/run needs nothing outside the clone"
    );
}

#[test]
fn every_workflow_installs_the_crates_rust_version() {
    let want = rust_version();
    let install = regex::Regex::new(r"rustup toolchain install (\S+)").unwrap();
    let mut seen = 0;
    for (path, doc, _) in documents() {
        for script in run_scripts(&doc) {
            // Numbered toolchains only: the fuzz workflow needs nightly, on purpose.
            for c in install.captures_iter(script) {
                if !c[1].starts_with(|ch: char| ch.is_ascii_digit()) {
                    continue;
                }
                seen += 1;
                assert!(
                    c[1] == want || c[1].starts_with(&format!("{want}.")),
                    "{}: installs Rust {} but Cargo.toml says rust-version {want}",
                    path.display(),
                    &c[1]
                );
            }
        }
    }
    assert!(seen >= 2, "ci and binaries pin a toolchain");
}

/// The `dist_targets` of scripts/lib/dist.sh: what install-stackbot can download.
fn dist_targets() -> Vec<String> {
    let out = Command::new("bash")
        .args(["-c", ". scripts/lib/dist.sh && dist_targets"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_version_tag_builds_every_target_natively_and_publishes_it_with_sums_and_attestations() {
    let docs = documents();
    let wf = find_doc(&docs, "binaries.yml");
    assert_eq!(
        wf.pointer("/on/push/tags"),
        Some(&serde_json::json!(["v*.*.*"])),
        "release tags only: moving the major tag must not start a build"
    );
    assert_eq!(
        wf["on"].as_object().unwrap().len(),
        1,
        "binaries are built for version tags only"
    );
    let build = &wf["jobs"]["build"];
    let mut targets: Vec<String> = build
        .pointer("/strategy/matrix/include")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|m| {
            let target = m["target"].as_str().unwrap();
            let runner = m["runner"].as_str().unwrap();
            let native = if target.starts_with("aarch64") {
                runner.ends_with("-arm")
            } else {
                !runner.ends_with("-arm")
            };
            assert!(native, "{target} is built natively, not on {runner}");
            target.to_string()
        })
        .collect();
    targets.sort();
    let mut shipped = dist_targets();
    shipped.sort();
    assert_eq!(
        targets, shipped,
        "the workflow builds what install-stackbot downloads"
    );
    let build_scripts = run_scripts(build).join("\n");
    assert!(build_scripts.contains("scripts/package-binary --target \"$TARGET\" --tag \"$TAG\""));
    assert_eq!(
        build["permissions"],
        serde_json::json!({"contents": "read"}),
        "the build job cannot write or sign anything"
    );
    assert!(
        !uses_of(build)
            .iter()
            .any(|u| u.starts_with("actions/cache")),
        "release binaries are built without a cache"
    );

    let publish = &wf["jobs"]["publish"];
    for (scope, level) in [
        ("contents", "write"),
        ("id-token", "write"),
        ("attestations", "write"),
    ] {
        assert_eq!(publish["permissions"][scope], level, "publish job {scope}");
    }
    let publish_scripts = run_scripts(publish).join("\n");
    assert!(publish_scripts.contains("sha256sum -- *.tar.gz > SHA256SUMS"));
    let attest = any_steps(publish)
        .into_iter()
        .find(|s| {
            s.get("uses")
                .and_then(Value::as_str)
                .is_some_and(|u| u.starts_with("actions/attest-build-provenance@"))
        })
        .expect("the publish job attests");
    let subjects = attest["with"]["subject-path"].as_str().unwrap();
    assert!(subjects.contains("dist/*.tar.gz") && subjects.contains("dist/SHA256SUMS"));
    let order: Vec<&str> = any_steps(publish)
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    let pos = |n: &str| order.iter().position(|x| *x == n).unwrap();
    assert!(
        pos("Attest build provenance") < pos("Publish the release"),
        "nothing is published before it is attested"
    );
    // The binaries know their release commit (`stackbot init` pins it)...
    let build_step = any_steps(build)
        .into_iter()
        .find(|s| s["name"] == "Build and package")
        .unwrap();
    assert_eq!(
        build_step["env"]["STACKBOT_RELEASE_COMMIT"],
        "${{ github.sha }}"
    );
    // ...and `@v0` follows the releases, once they are published.
    let major = &wf["jobs"]["major-tag"];
    assert_eq!(major["needs"], "publish");
    assert_eq!(
        major["permissions"],
        serde_json::json!({"contents": "write"})
    );
    assert!(
        run_scripts(major)
            .join("\n")
            .contains("scripts/move-major-tag")
    );
}

#[test]
fn the_action_installs_a_verified_binary_instead_of_compiling() {
    let docs = documents();
    let action = find_doc(&docs, "action.yml");
    let all = steps(action);
    let install = all
        .iter()
        .position(|s| {
            s.get("run")
                .and_then(Value::as_str)
                .is_some_and(|r| r.contains("scripts/install-stackbot"))
        })
        .expect("the action installs through scripts/install-stackbot");
    let first_run = all
        .iter()
        .position(|s| {
            s.get("run")
                .and_then(Value::as_str)
                .is_some_and(invokes_stackbot)
        })
        .unwrap();
    assert!(install < first_run, "install before stackbot runs");
    assert!(
        all[first_run].get("if").is_none(),
        "the step running stackbot must be skipped when the install failed"
    );
    for (path, doc, _) in &docs {
        if !(is_action(path) || generated().contains(path)) {
            continue;
        }
        for script in run_scripts(doc) {
            assert!(
                !script.contains("cargo build") && !script.contains("cargo install"),
                "{}: compiling is install-stackbot's opt-in (--from-source), not a step",
                path.display()
            );
        }
    }
    assert_eq!(input_defaults(action)["build-from-source"], "false");
    assert_eq!(input_defaults(action)["verify-attestation"], "always");
}

#[test]
fn the_action_attests_what_a_release_published() {
    let docs = documents();
    for (path, doc, _) in docs.iter().filter(|(p, _, _)| generated().contains(p)) {
        if !path.ends_with("stackbot-release.yml") {
            continue;
        }
        let job = &doc["jobs"]["release"];
        assert_eq!(
            job["permissions"]["id-token"],
            "write",
            "{}",
            path.display()
        );
        assert_eq!(job["permissions"]["attestations"], "write");
    }
    let action = find_doc(&docs, "action.yml");
    let all = steps(action);
    let pos = |pred: &dyn Fn(&Value) -> bool| all.iter().position(|s| pred(s)).unwrap();
    let publish = pos(&|s| s.get("id").and_then(Value::as_str) == Some("run"));
    let collect = pos(&|s| {
        s.get("run")
            .and_then(Value::as_str)
            .is_some_and(|r| r.contains("scripts/collect-published-assets"))
    });
    let attest = pos(&|s| {
        s.get("uses")
            .and_then(Value::as_str)
            .is_some_and(|u| u.starts_with("actions/attest-build-provenance@"))
    });
    assert!(publish < collect && collect < attest);
    let out_dir = all[collect]["env"]["OUT"].as_str().unwrap();
    let subjects = all[attest]["with"]["subject-path"].as_str().unwrap();
    assert_eq!(
        subjects,
        format!("{out_dir}/*/*"),
        "attests what was collected"
    );
    // The releases are where stackbot published them, not where the workflow runs.
    assert_eq!(
        all[collect]["env"]["REPO"],
        "${{ steps.run.outputs.repository }}"
    );
    for i in [collect, attest] {
        assert!(
            all[i]["if"].as_str().unwrap().starts_with("always()"),
            "runs even when some tenants failed (exit 3)"
        );
    }
}

/// A cache key (or a restore prefix, ending in `*`) and the file it is in.
type Keys = Vec<(String, String)>;

/// The caches of every workflow and the action: `(restored keys and restore-key prefixes,
/// saved keys)`.
fn caches(docs: &[(PathBuf, Value, String)]) -> (Keys, Keys) {
    let (mut restored, mut saved) = (Vec::new(), Vec::new());
    for (path, doc, _) in docs {
        let name = path.display().to_string();
        for step in steps(doc) {
            let Some(uses) = step.get("uses").and_then(Value::as_str) else {
                continue;
            };
            let (restores, saves) = match uses.split('@').next().unwrap() {
                "actions/cache" => (true, true),
                "actions/cache/restore" => (true, false),
                "actions/cache/save" => (false, true),
                _ => continue,
            };
            let key = step["with"]["key"]
                .as_str()
                .expect("a cache step has a key");
            if saves {
                saved.push((name.clone(), key.to_string()));
            }
            if restores {
                restored.push((name.clone(), key.to_string()));
                let prefixes = step["with"]["restore-keys"].as_str().unwrap_or("");
                for p in prefixes.lines().map(str::trim).filter(|p| !p.is_empty()) {
                    restored.push((name.clone(), format!("{p}*")));
                }
            }
        }
    }
    (restored, saved)
}

#[test]
fn every_cache_a_workflow_restores_is_saved_by_some_job() {
    let docs = documents();
    let (restored, saved) = caches(&docs);
    assert!(
        restored.len() >= 3 && saved.len() >= 2,
        "the action and ci.yml use caches: {restored:?} {saved:?}"
    );
    for (file, key) in &restored {
        let found = match key.strip_suffix('*') {
            // A restore-keys prefix: some saved key starts with it (expressions and all, so
            // the key made from it starts with the prefix made from the same values).
            Some(prefix) => saved
                .iter()
                .any(|(_, s)| !prefix.is_empty() && s.starts_with(prefix)),
            // An exact key: the very same key (expressions included) is saved.
            None => saved.iter().any(|(_, s)| s == key),
        };
        assert!(
            found,
            "{file}: restores cache `{key}`, which no job saves (saved: {saved:?})"
        );
    }
    // The answer cache is keyed per run (caches are immutable) and found again by prefix.
    let action = docs.iter().find(|(p, _, _)| is_action(p)).unwrap();
    let (r, s) = caches(std::slice::from_ref(action));
    assert!(s.iter().all(|(_, k)| k.contains("${{ github.run_id }}")));
    assert!(r.iter().any(|(_, k)| k == "stackbot-http-*"));
}
