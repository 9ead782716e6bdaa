//! One builder for test configurations: the demo configuration (`examples/local/stackbot.yaml`:
//! its stack, templates, minors, components and the upstream snapshot of 2026-05-01) with what
//! a test changes set field by field, then written as `stackbot.yaml` into the test's
//! directory.
//!
//! It reads the demo as YAML and sets fields, so a comment added to the demo or a section
//! moved in it cannot break a test; the tests that need the demo on another forge used to
//! splice the demo's text around one of its comments.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::shared::root;

/// The demo configuration, being changed for one test.
#[derive(Debug, Clone)]
pub struct DemoConfig {
    doc: Value,
}

impl Default for DemoConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// `relative` (a path of the demo, relative to its folder) as an absolute path: the
/// configuration is written elsewhere.
fn absolute(relative: &Value) -> Value {
    let demo = root().join("examples/local");
    let path = demo.join(relative.as_str().expect("a path"));
    let path = path.canonicalize().unwrap_or(path);
    Value::from(path.display().to_string())
}

impl DemoConfig {
    /// The demo as it is (local forge, its tenants), with its paths made absolute, except the
    /// local forge's folder: `forge/` beside the written file, so every test starts empty.
    pub fn new() -> Self {
        let text = std::fs::read_to_string(root().join("examples/local/stackbot.yaml")).unwrap();
        let mut doc: Value = yaml_serde::from_str(&text).expect("the demo configuration parses");
        doc["upstream"]["snapshot"] = absolute(&doc["upstream"]["snapshot"]);
        for stack in doc["stacks"].as_array_mut().expect("the demo lists stacks") {
            stack["templates"] = absolute(&stack["templates"]);
        }
        doc["forge"]["local"]["path"] = Value::from("forge");
        if let Some(seeds) = doc["forge"]["local"]["seed"].as_object_mut() {
            for seed in seeds.values_mut() {
                *seed = absolute(seed);
            }
        }
        DemoConfig { doc }
    }

    /// On a GitHub at `api_url` / `upload_url` (the fake GitHub of the tests), in direct mode,
    /// with the token read from `token_env`, and no tenants yet ([`Self::tenant`] adds them).
    pub fn on_github(mut self, api_url: &str, upload_url: &str, token_env: &str) -> Self {
        self.doc["forge"] = json!({
            "kind": "github",
            "repository": "scs/cluster-stacks",
            "base_branch": "main",
            "mode": "direct",
            "github": { "api_url": api_url, "upload_url": upload_url, "token_env": token_env },
        });
        self.doc
            .as_object_mut()
            .expect("a mapping")
            .remove("tenants");
        self
    }

    /// `forge.github.max_retries` (0: a failing request fails the run at once).
    pub fn max_retries(mut self, n: u32) -> Self {
        self.doc["forge"]["github"]["max_retries"] = Value::from(n);
        self
    }

    /// `forge.github.cache_dir`: the GitHub answer cache kept between runs, as the hourly
    /// workflow keeps it.
    pub fn github_cache_dir(mut self, dir: &Path) -> Self {
        self.doc["forge"]["github"]["cache_dir"] = Value::from(dir.display().to_string());
        self
    }

    /// One more tenant, `name`, in the repository `<name>/gitops`, following the demo's stack in
    /// its files `clusterstacks/*.yaml`.
    pub fn tenant(mut self, name: &str) -> Self {
        let tenant = json!({
            "name": name,
            "repository": format!("{name}/gitops"),
            "files": ["clusterstacks/*.yaml"],
            "stacks": ["openstack/scs2"],
        });
        match self.doc["tenants"].as_array_mut() {
            Some(tenants) => tenants.push(tenant),
            None => self.doc["tenants"] = json!([tenant]),
        }
        self
    }

    /// Every stack's templates from `dir` (a copy a test may edit).
    pub fn templates(mut self, dir: &Path) -> Self {
        for stack in self.doc["stacks"]
            .as_array_mut()
            .expect("the demo lists stacks")
        {
            stack["templates"] = Value::from(dir.display().to_string());
        }
        self
    }

    /// `forge.mode: pull-request`: releases are proposed as pull requests.
    pub fn pull_request_mode(mut self) -> Self {
        self.doc["forge"]["mode"] = Value::from("pull-request");
        self
    }

    /// `gate:` on every stack (docs/conformance-gate.md).
    pub fn gate(mut self, gate: Value) -> Self {
        for stack in self.doc["stacks"]
            .as_array_mut()
            .expect("the demo lists stacks")
        {
            stack["gate"] = gate.clone();
        }
        self
    }

    /// Publish as `publish` says (`["oci"]`, `["forge", "oci"]`) to the plain-HTTP registry
    /// at `addr` (a loopback `host:port`).
    pub fn oci(mut self, publish: &[&str], addr: &str) -> Self {
        self.doc["publish"] = Value::from(publish.to_vec());
        self.doc["oci"] = serde_json::json!({
            "registry": addr,
            "repository": format!("{addr}/kaas/cluster-stacks"),
            "plain_http": true,
        });
        self
    }

    /// The configuration as YAML.
    pub fn yaml(&self) -> String {
        yaml_serde::to_string(&self.doc).unwrap()
    }

    /// Write it as `dir/stackbot.yaml` and return that path.
    pub fn write(&self, dir: &Path) -> PathBuf {
        let path = dir.join("stackbot.yaml");
        std::fs::write(&path, self.yaml()).unwrap();
        path
    }
}
