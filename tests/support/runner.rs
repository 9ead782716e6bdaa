//! A stand-in for the GitHub Actions runner, enough to run a workflow job and the composite
//! action it calls the way GitHub does, on this machine:
//!
//! - `run:` steps run under `bash --noprofile --norc -eo pipefail` in the workspace, with the
//!   step's `env:`, the `GITHUB_*`/`RUNNER_*` environment, and fresh `GITHUB_OUTPUT`,
//!   `GITHUB_STEP_SUMMARY`, `GITHUB_PATH` and `GITHUB_ENV` files per step (read back after it:
//!   outputs, the job summary, later steps' `PATH` and environment);
//! - `${{ }}` expressions in `with:`, `env:` and outputs, and `if:` conditions, are evaluated
//!   by [`expr`]: the contexts `inputs`, `github`, `runner`, `steps`, `secrets`, `vars`,
//!   `matrix`, `needs`, the status functions and `== != && || !` with GitHub's loose
//!   comparison (strings case-insensitive, `null`/`''` as 0). An expression outside that
//!   subset panics, so the emulation never silently reads one differently;
//! - a `uses:` step runs only if a stand-in is registered for it ([`Runner::stand_in`]): the
//!   tests say, per action, what replaces GitHub (a local cache store, a skip with the
//!   reason). An action without one panics: nothing is pretended.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

pub mod expr;

pub use expr::Context;

/// How a step ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Success,
    /// Its exit code.
    Failure(i32),
    /// Its `if:` was false.
    Skipped,
    /// A stand-in declined to emulate it; the reason says why (e.g. it needs GitHub's OIDC).
    NotEmulated(String),
}

/// One step that ran (or did not).
#[derive(Debug, Clone)]
pub struct StepRecord {
    pub name: String,
    pub id: Option<String>,
    pub outcome: Outcome,
    pub outputs: BTreeMap<String, String>,
    /// What it appended to the job summary.
    pub summary: String,
    pub stderr: String,
}

/// What a stand-in for a `uses:` action did.
pub struct StandIn {
    pub outcome: Outcome,
    pub outputs: BTreeMap<String, String>,
}

type StandInFn = Box<dyn Fn(&BTreeMap<String, String>, &Runner) -> StandIn>;

/// The runner of one job.
pub struct Runner {
    /// `GITHUB_WORKSPACE`, where `run:` steps start.
    pub workspace: PathBuf,
    /// `RUNNER_TEMP`.
    pub temp: PathBuf,
    /// The `github` context (`token`, `run_id`, `repository`, `workflow_ref`, ...).
    pub github: BTreeMap<String, String>,
    pub secrets: BTreeMap<String, String>,
    pub vars: BTreeMap<String, String>,
    /// Directories before the system `PATH` (stand-in tools, then `GITHUB_PATH` additions).
    pub path: Vec<PathBuf>,
    /// Variables every step sees (also from `GITHUB_ENV`).
    pub env: BTreeMap<String, String>,
    /// `uses:` → its stand-in, by action name without the `@ref`.
    stand_ins: BTreeMap<String, StandInFn>,
    /// `owner/name` → a local directory holding that action at any pinned commit.
    pub local_actions: BTreeMap<String, PathBuf>,
    /// Every step of every action and job so far, in order.
    pub log: Vec<StepRecord>,
    n: usize,
}

/// The steps of one job or action run, and its outputs.
#[derive(Debug, Clone, Default)]
pub struct Run {
    pub steps: Vec<StepRecord>,
    pub outputs: BTreeMap<String, String>,
}

impl Run {
    /// The whole job summary the steps wrote.
    pub fn summary(&self) -> String {
        self.steps.iter().map(|s| s.summary.as_str()).collect()
    }

    /// The step named `name` (panics with the list when there is none).
    pub fn step(&self, name: &str) -> &StepRecord {
        self.steps
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| {
                let names: Vec<&str> = self.steps.iter().map(|s| s.name.as_str()).collect();
                panic!("no step `{name}` in {names:?}")
            })
    }

    /// Whether every step that ran succeeded.
    pub fn succeeded(&self) -> bool {
        !self
            .steps
            .iter()
            .any(|s| matches!(s.outcome, Outcome::Failure(_)))
    }
}

fn str_map(v: Option<&Value>) -> Vec<(String, String)> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let s = match v {
                        Value::String(s) => s.clone(),
                        Value::Null => String::new(),
                        other => other.to_string(),
                    };
                    (k.clone(), s)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Parse a `GITHUB_OUTPUT`/`GITHUB_ENV` file: `key=value` lines and `key<<DELIM` heredocs.
pub fn parse_env_file(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((key, delim)) = line.split_once("<<") {
            let mut value = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                value.push(l);
            }
            out.insert(key.to_string(), value.join("\n"));
        } else if let Some((k, v)) = line.split_once('=') {
            out.insert(k.to_string(), v.to_string());
        }
    }
    out
}

impl Runner {
    /// A runner for a job in `workspace`, its temporary files under `temp`.
    pub fn new(workspace: &Path, temp: &Path) -> Self {
        std::fs::create_dir_all(temp).unwrap();
        Runner {
            workspace: workspace.to_path_buf(),
            temp: temp.to_path_buf(),
            github: BTreeMap::new(),
            secrets: BTreeMap::new(),
            vars: BTreeMap::new(),
            path: Vec::new(),
            env: BTreeMap::new(),
            stand_ins: BTreeMap::new(),
            local_actions: BTreeMap::new(),
            log: Vec::new(),
            n: 0,
        }
    }

    /// Register what replaces the action `name` (e.g. `actions/cache/restore`).
    pub fn stand_in(
        &mut self,
        name: &str,
        f: impl Fn(&BTreeMap<String, String>, &Runner) -> StandIn + 'static,
    ) {
        self.stand_ins.insert(name.to_string(), Box::new(f));
    }

    fn context<'a>(
        &'a self,
        inputs: &'a BTreeMap<String, String>,
        steps: &'a [StepRecord],
        extra: &'a BTreeMap<String, BTreeMap<String, String>>,
    ) -> Context<'a> {
        Context {
            inputs,
            github: &self.github,
            secrets: &self.secrets,
            vars: &self.vars,
            steps,
            extra,
            runner_temp: self.temp.display().to_string(),
            failed: steps
                .iter()
                .any(|s| matches!(s.outcome, Outcome::Failure(_))),
        }
    }

    /// The `env` of a `run:` step: the runner's, the `GITHUB_*` files, the step's own.
    fn base_env(&self, files: &Path) -> BTreeMap<String, String> {
        let system = std::env::var_os("PATH").unwrap();
        let path = std::env::join_paths(
            self.path
                .iter()
                .cloned()
                .chain(std::env::split_paths(&system)),
        )
        .unwrap();
        let mut env: BTreeMap<String, String> = BTreeMap::from([
            ("PATH".into(), path.to_string_lossy().into_owned()),
            ("HOME".into(), self.temp.join("home").display().to_string()),
            ("CI".into(), "true".into()),
            ("GITHUB_ACTIONS".into(), "true".into()),
            ("RUNNER_TEMP".into(), self.temp.display().to_string()),
            ("RUNNER_OS".into(), "Linux".into()),
            (
                "GITHUB_WORKSPACE".into(),
                self.workspace.display().to_string(),
            ),
            ("NO_COLOR".into(), "1".into()),
        ]);
        for (k, v) in &self.github {
            let name = format!("GITHUB_{}", k.to_ascii_uppercase());
            if k != "token" && k != "action_path" {
                env.insert(name, v.clone());
            }
        }
        for f in ["OUTPUT", "STEP_SUMMARY", "PATH", "ENV"] {
            env.insert(
                format!("GITHUB_{f}"),
                files.join(f.to_ascii_lowercase()).display().to_string(),
            );
        }
        env.extend(self.env.clone());
        env
    }

    /// Run `bash` on `script` as the runner does; returns the record without name and id.
    fn run_script(&mut self, script: &str, step_env: BTreeMap<String, String>) -> StepRecord {
        self.n += 1;
        let files = self.temp.join(format!("_step{}", self.n));
        std::fs::create_dir_all(&files).unwrap();
        std::fs::create_dir_all(self.temp.join("home")).unwrap();
        let script_path = files.join("script.sh");
        std::fs::write(&script_path, script).unwrap();
        let mut env = self.base_env(&files);
        env.extend(step_env);
        let out = Command::new("bash")
            .args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&script_path)
            .env_clear()
            .envs(&env)
            .current_dir(&self.workspace)
            .output()
            .expect("bash runs");
        let read = |f: &str| std::fs::read_to_string(files.join(f)).unwrap_or_default();
        for p in read("path").lines().filter(|l| !l.is_empty()) {
            self.path.insert(0, PathBuf::from(p));
        }
        self.env.extend(parse_env_file(&read("env")));
        let code = out.status.code().unwrap_or(-1);
        StepRecord {
            name: String::new(),
            id: None,
            outcome: if code == 0 {
                Outcome::Success
            } else {
                Outcome::Failure(code)
            },
            outputs: parse_env_file(&read("output")),
            summary: read("step_summary"),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned()
                + &String::from_utf8_lossy(&out.stdout),
        }
    }

    /// Run a list of steps (a job's or a composite action's) with `inputs` as the `inputs`
    /// context and `extra` contexts (`matrix`, `needs`).
    pub fn run_steps(
        &mut self,
        steps: &[Value],
        inputs: &BTreeMap<String, String>,
        extra: &BTreeMap<String, BTreeMap<String, String>>,
    ) -> Vec<StepRecord> {
        let mut done: Vec<StepRecord> = Vec::new();
        for step in steps {
            let name = step["name"]
                .as_str()
                .or_else(|| step["uses"].as_str())
                .unwrap_or("(unnamed)")
                .to_string();
            let id = step["id"].as_str().map(str::to_string);
            let condition = step.get("if").and_then(Value::as_str);
            let go = expr::condition(condition, &self.context(inputs, &done, extra));
            let mut record = if !go {
                StepRecord {
                    name: String::new(),
                    id: None,
                    outcome: Outcome::Skipped,
                    outputs: BTreeMap::new(),
                    summary: String::new(),
                    stderr: String::new(),
                }
            } else {
                let ctx = self.context(inputs, &done, extra);
                let env: BTreeMap<String, String> = str_map(step.get("env"))
                    .into_iter()
                    .map(|(k, v)| (k, expr::interpolate(&v, &ctx)))
                    .collect();
                let with: BTreeMap<String, String> = str_map(step.get("with"))
                    .into_iter()
                    .map(|(k, v)| (k, expr::interpolate(&v, &ctx)))
                    .collect();
                if let Some(script) = step["run"].as_str() {
                    let shell = step["shell"].as_str().unwrap_or("bash");
                    assert_eq!(shell, "bash", "{name}: only bash steps are emulated");
                    self.run_script(script, env)
                } else {
                    let uses = step["uses"].as_str().expect("a step runs or uses");
                    self.uses(uses, &with, env)
                }
            };
            record.name = name;
            record.id = id;
            self.log.push(record.clone());
            done.push(record);
        }
        done
    }

    /// A `uses:` step: a local action (run its steps), or its registered stand-in.
    fn uses(
        &mut self,
        uses: &str,
        with: &BTreeMap<String, String>,
        env: BTreeMap<String, String>,
    ) -> StepRecord {
        let (name, _) = uses.split_once('@').unwrap_or((uses, ""));
        if let Some(dir) = self.local_actions.get(name).cloned() {
            let saved = self.env.clone();
            self.env.extend(env);
            let run = self.run_action(&dir, with);
            self.env = saved;
            return StepRecord {
                name: String::new(),
                id: None,
                outcome: if run.succeeded() {
                    Outcome::Success
                } else {
                    Outcome::Failure(1)
                },
                outputs: run.outputs.clone(),
                summary: run.summary(),
                stderr: String::new(),
            };
        }
        let f = self
            .stand_ins
            .get(name)
            .unwrap_or_else(|| panic!("no stand-in for `uses: {uses}`: register one or skip it"));
        let r = f(with, self);
        StepRecord {
            name: String::new(),
            id: None,
            outcome: r.outcome,
            outputs: r.outputs,
            summary: String::new(),
            stderr: String::new(),
        }
    }

    /// Run the composite action in `dir` (its `action.yml`) with `with` over its defaults.
    pub fn run_action(&mut self, dir: &Path, with: &BTreeMap<String, String>) -> Run {
        let text = std::fs::read_to_string(dir.join("action.yml")).unwrap();
        let doc: Value = yaml_serde::from_str(&text).unwrap();
        assert_eq!(doc["runs"]["using"], "composite");
        for w in with.keys() {
            assert!(
                doc["inputs"].get(w).is_some(),
                "the action has no input `{w}`"
            );
        }
        let mut inputs = BTreeMap::new();
        for (k, v) in doc["inputs"].as_object().unwrap() {
            let given = with.get(k).cloned();
            let default = v["default"].as_str().unwrap_or("").to_string();
            inputs.insert(k.clone(), given.unwrap_or(default));
        }
        let saved = self.github.get("action_path").cloned();
        self.github
            .insert("action_path".into(), dir.display().to_string());
        // Defaults may be expressions (`${{ github.token }}`).
        let no_inputs = BTreeMap::new();
        let none = BTreeMap::new();
        let inputs: BTreeMap<String, String> = inputs
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    expr::interpolate(v, &self.context(&no_inputs, &[], &none)),
                )
            })
            .collect();
        let steps = self.run_steps(doc["runs"]["steps"].as_array().unwrap(), &inputs, &none);
        let ctx = self.context(&inputs, &steps, &none);
        let outputs = str_map(doc.get("outputs"))
            .into_iter()
            .map(|(k, _)| {
                let v = doc["outputs"][&k]["value"].as_str().unwrap_or("");
                (k, expr::interpolate(v, &ctx))
            })
            .collect();
        match saved {
            Some(p) => self.github.insert("action_path".into(), p),
            None => self.github.remove("action_path"),
        };
        Run { steps, outputs }
    }

    /// Run job `job` of `workflow` with the `inputs` context (empty on `schedule`) and the
    /// `matrix` values given.
    pub fn run_job(
        &mut self,
        workflow: &Value,
        job: &str,
        inputs: &BTreeMap<String, String>,
        matrix: &BTreeMap<String, String>,
    ) -> Run {
        let j = &workflow["jobs"][job];
        assert!(j.is_object(), "no job `{job}`");
        self.github.insert("job".into(), job.to_string());
        let extra = BTreeMap::from([("matrix".to_string(), matrix.clone())]);
        let steps = self.run_steps(j["steps"].as_array().unwrap(), inputs, &extra);
        let ctx = self.context(inputs, &steps, &extra);
        let outputs = str_map(j.get("outputs"))
            .into_iter()
            .map(|(k, v)| (k, expr::interpolate(&v, &ctx)))
            .collect();
        Run { steps, outputs }
    }
}
