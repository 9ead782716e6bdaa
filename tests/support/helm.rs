//! `helm template <release> <chart>` for charts like the cluster-class chart, on top of the
//! Go-template subset in [`super::gotemplate`].
//!
//! Simulated: `.Release` (Name, Namespace, Service, IsInstall), `.Chart` (Name, Version,
//! AppVersion, from Chart.yaml with the version CSO's packaging sets), `.Values` (values.yaml),
//! `define`s from every file under `templates/` (including `_*.tpl`), rendering of every
//! file not starting with `_`, and splitting the output into YAML documents on `---`.
//! Not simulated: subcharts, `.Capabilities`, `lookup`, `tpl`, `required`, schema validation.

use std::path::Path;

use serde_json::{Value, json};

use super::gotemplate::Templates;

/// YAML text → JSON values, one per non-empty document.
pub fn yaml_docs(text: &str) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    for doc in yaml_serde::Deserializer::from_str(text) {
        let v: Value = serde::Deserialize::deserialize(doc).map_err(|e| e.to_string())?;
        if !v.is_null() {
            out.push(v);
        }
    }
    Ok(out)
}

/// One rendered manifest: the template file it came from and the object.
#[derive(Debug, Clone)]
pub struct Manifest {
    #[allow(dead_code)]
    pub source: String,
    pub object: Value,
}

/// Render the chart in `dir` as release `release`, with the chart version replaced by
/// `version` (what `csctl`/stackbot packaging does before `helm package`).
pub fn template(dir: &Path, release: &str, version: &str) -> Result<Vec<Manifest>, String> {
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    let chart = yaml_docs(&read(&dir.join("Chart.yaml"))?)?
        .into_iter()
        .next()
        .ok_or("empty Chart.yaml")?;
    let name = chart["name"]
        .as_str()
        .ok_or("Chart.yaml: no name")?
        .to_string();
    let values = match dir.join("values.yaml") {
        p if p.exists() => yaml_docs(&read(&p)?)?
            .into_iter()
            .next()
            .unwrap_or_else(|| json!({})),
        _ => json!({}),
    };
    let mut files: Vec<String> = std::fs::read_dir(dir.join("templates"))
        .map_err(|e| e.to_string())?
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut t = Templates::default();
    for f in &files {
        t.add(
            &format!("{name}/templates/{f}"),
            &read(&dir.join("templates").join(f))?,
        )?;
    }
    let data = json!({
        "Release": {"Name": release, "Namespace": "default", "Service": "Helm", "IsInstall": true, "IsUpgrade": false},
        "Chart": {"Name": name, "Version": version, "AppVersion": chart.get("appVersion").cloned().unwrap_or(Value::Null)},
        "Values": values,
    });
    let mut out = Vec::new();
    for f in files
        .iter()
        .filter(|f| !f.starts_with('_') && *f != "NOTES.txt")
    {
        let source = format!("{name}/templates/{f}");
        let text = t.execute(&source, &data)?;
        for object in yaml_docs(&text).map_err(|e| format!("{source}: rendered YAML: {e}"))? {
            out.push(Manifest {
                source: source.clone(),
                object,
            });
        }
    }
    Ok(out)
}
