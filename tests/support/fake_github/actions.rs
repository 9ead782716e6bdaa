//! GitHub Actions as a test drives it: the workflows a repository has (what its
//! `.github/workflows/*.yml` declare for `workflow_dispatch`), and a runner's side of a run:
//! picking it up, completing it with a conclusion, uploading artifacts. Like [`super::humans`]
//! these change the fake's state directly; they are not API calls the bot makes.

use std::collections::BTreeMap;
use std::io::Write;

use super::FakeGithub;
use super::state::{Repo, RunArtifact, Workflow};

/// A run as a test sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunView {
    pub id: u64,
    /// The workflow's file name.
    pub workflow: String,
    pub display_title: String,
    pub event: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub head_branch: String,
    pub inputs: BTreeMap<String, String>,
}

impl FakeGithub {
    fn actions<T>(&self, full: &str, f: impl FnOnce(&mut Repo, u64) -> T) -> T {
        let mut st = self.shared.state.lock().unwrap();
        st.seq += 1;
        let seq = st.seq;
        let repo = st
            .repos
            .get_mut(full)
            .unwrap_or_else(|| panic!("fake github: no repository {full}"));
        f(repo, seq)
    }

    /// Give `full` the workflow `.github/workflows/<file>` named `name`, triggered by
    /// `workflow_dispatch` with these inputs (all required) and this `run-name`.
    pub fn add_workflow(
        &self,
        full: &str,
        file: &str,
        name: &str,
        inputs: &[&str],
        run_name: Option<&str>,
    ) -> u64 {
        let inputs: BTreeMap<String, bool> = inputs.iter().map(|i| (i.to_string(), true)).collect();
        self.add_workflow_declaring(full, file, name, inputs, run_name)
    }

    /// [`FakeGithub::add_workflow`] with `inputs` as name → required.
    pub fn add_workflow_declaring(
        &self,
        full: &str,
        file: &str,
        name: &str,
        inputs: BTreeMap<String, bool>,
        run_name: Option<&str>,
    ) -> u64 {
        let id = self.shared.state.lock().unwrap().next_id();
        self.actions(full, |repo, seq| {
            repo.actions.workflows.push(Workflow {
                id,
                path: format!(".github/workflows/{file}"),
                name: name.into(),
                inputs,
                run_name: run_name.map(str::to_string),
                dispatchable: true,
                seq,
            });
        });
        id
    }

    /// Give `full` the conformance workflow docs/github-setup.md tells people to add, as
    /// `.github/workflows/conformance.yml`: its name, `run-name` and `workflow_dispatch`
    /// inputs (with their `required`) read from the documentation, so every dispatch of a
    /// test using it is checked against what the documentation declares.
    pub fn add_documented_conformance_workflow(&self, full: &str) -> u64 {
        self.add_documented_conformance_workflow_without(full, "conformance.yml", &[])
    }

    /// [`FakeGithub::add_documented_conformance_workflow`] as `.github/workflows/<file>`,
    /// without the inputs `undeclared` (a workflow written to earlier documentation).
    pub fn add_documented_conformance_workflow_without(
        &self,
        full: &str,
        file: &str,
        undeclared: &[&str],
    ) -> u64 {
        let doc: serde_json::Value = yaml_serde::from_str(&documented_conformance_workflow())
            .expect("the documented conformance workflow is YAML");
        let inputs: BTreeMap<String, bool> = doc
            .pointer("/on/workflow_dispatch/inputs")
            .and_then(|i| i.as_object())
            .expect("it declares workflow_dispatch inputs")
            .iter()
            .filter(|(k, _)| !undeclared.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v["required"].as_bool().unwrap_or(false)))
            .collect();
        self.add_workflow_declaring(
            full,
            file,
            doc["name"].as_str().expect("it has a name"),
            inputs,
            doc["run-name"].as_str(),
        )
    }

    /// Whether a dispatch asking for `return_run_details` is answered with the run (`200`,
    /// github.com) or not (`204`, as servers that predate the flag answer).
    pub fn set_dispatch_returns_run(&self, full: &str, returns: bool) {
        self.actions(full, |repo, _| repo.actions.dispatch_details = returns);
    }

    /// Every run of `full`, oldest first.
    pub fn runs(&self, full: &str) -> Vec<RunView> {
        let st = self.shared.state.lock().unwrap();
        let repo = &st.repos[full];
        repo.actions
            .runs
            .iter()
            .map(|r| RunView {
                id: r.id,
                workflow: repo
                    .actions
                    .workflows
                    .iter()
                    .find(|w| w.id == r.workflow_id)
                    .map(|w| w.path.rsplit('/').next().unwrap_or_default().to_string())
                    .unwrap_or_default(),
                display_title: r.display_title.clone(),
                event: r.event.clone(),
                status: r.status.clone(),
                conclusion: r.conclusion.clone(),
                head_branch: r.head_branch.clone(),
                inputs: r.inputs.clone(),
            })
            .collect()
    }

    /// A runner picks the run up (`in_progress`) or it waits (`queued`).
    pub fn set_run_status(&self, full: &str, run_id: u64, status: &str) {
        self.actions(full, |repo, seq| {
            let r = run_mut(repo, run_id);
            r.status = status.into();
            r.updated = seq;
        });
    }

    /// The run completes with `conclusion` (`success`, `failure`, `cancelled`, ...).
    pub fn complete_run(&self, full: &str, run_id: u64, conclusion: &str) {
        self.actions(full, |repo, seq| {
            let r = run_mut(repo, run_id);
            r.status = "completed".into();
            r.conclusion = Some(conclusion.into());
            r.updated = seq;
        });
    }

    /// The run uploads an artifact (`actions/upload-artifact`): `files` zipped.
    pub fn upload_artifact(&self, full: &str, run_id: u64, name: &str, files: &[(&str, &[u8])]) {
        let id = self.shared.state.lock().unwrap().next_id();
        let zip = zip_of(files);
        self.actions(full, |repo, seq| {
            run_mut(repo, run_id).artifacts.push(RunArtifact {
                id,
                name: name.into(),
                zip,
                expired: false,
                seq,
            });
        });
    }

    /// Replace the asset `name` of the release `tag` with `bytes` (as a new asset, with a new
    /// id, so no cache holds the old bytes): how a test moves an attempt's start back in time.
    pub fn replace_asset(&self, full: &str, tag: &str, name: &str, bytes: &[u8]) {
        let id = self.shared.state.lock().unwrap().next_id();
        self.actions(full, |repo, seq| {
            let rel = repo
                .releases
                .iter_mut()
                .find(|r| r.tag == tag && !r.draft)
                .unwrap_or_else(|| panic!("fake github: no release {tag}"));
            let i = rel
                .assets
                .iter()
                .position(|a| a.name == name)
                .unwrap_or_else(|| panic!("fake github: no asset {name} on {tag}"));
            let mut a = rel.assets.remove(i);
            a.id = id;
            a.bytes = bytes.to_vec();
            a.seq = seq;
            a.updated = seq;
            rel.assets.push(a);
        });
    }

    /// The bytes of the asset `name` of the published release `tag`, if there is one.
    pub fn asset_bytes(&self, full: &str, tag: &str, name: &str) -> Option<Vec<u8>> {
        let st = self.shared.state.lock().unwrap();
        let rel = st
            .repos
            .get(full)?
            .releases
            .iter()
            .find(|r| r.tag == tag && !r.draft)?;
        Some(rel.assets.iter().find(|a| a.name == name)?.bytes.clone())
    }

    /// A person deletes the run (its artifacts go with it).
    pub fn delete_run(&self, full: &str, run_id: u64) {
        self.actions(full, |repo, _| repo.actions.runs.retain(|r| r.id != run_id));
    }
}

fn run_mut(repo: &mut Repo, id: u64) -> &mut super::state::Run {
    repo.actions
        .runs
        .iter_mut()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("fake github: no run {id}"))
}

/// A zip as `actions/upload-artifact` writes one: every file deflated, its sizes and CRC in a
/// data descriptor after the data, then the central directory.
pub fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new_stream(Vec::new());
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in files {
        w.start_file(*name, options).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// The conformance workflow docs/github-setup.md shows (the YAML block of its section "The
/// conformance workflow").
pub fn documented_conformance_workflow() -> String {
    let text = std::fs::read_to_string(crate::shared::root().join("docs/github-setup.md"))
        .expect("docs/github-setup.md");
    let section = text
        .split_once("### The conformance workflow")
        .expect("docs/github-setup.md has the section")
        .1;
    let block = section
        .split_once("```yaml\n")
        .expect("the section shows a workflow")
        .1;
    block
        .split_once("```")
        .expect("the block ends")
        .0
        .to_string()
}
