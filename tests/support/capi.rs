//! The Cluster API topology controller's inline-patch engine, for one Cluster of a
//! ClusterClass (`internal/controllers/topology/cluster/patches` in cluster-api).
//!
//! Simulated: variable defaulting from the schema (top-level `default` when the Cluster does
//! not set a variable, then nested `properties`/`items` defaults inside set values, as the
//! API server's structural defaulting does), `required` and basic type checks; the request
//! items CAPI builds (infrastructure cluster, control plane, control plane machine template,
//! per MachineDeployment its bootstrap and infrastructure templates) with their builtin
//! variables; patches in order; selectors (`apiVersion`, `kind`, `matchResources`
//! `infrastructureCluster`, `controlPlane`, `machineDeploymentClass.names` with `*`
//! prefix/suffix); `enabledIf` (enabled when the rendered YAML is exactly `true`);
//! `value`, `valueFrom.variable` (dotted paths) and `valueFrom.template` (rendered with the
//! Go-template subset and Sprig functions, then read as YAML); RFC 6902 `add`/`replace`/
//! `remove` applied strictly as evanphx/json-patch v5 does by default (no parents created).
//! Not simulated: external patches, MachinePools, per-MachineDeployment variable overrides,
//! full OpenAPI validation.

use serde_json::{Map, Value, json};

use super::gotemplate;

/// A Cluster's topology, as far as patching needs it.
#[derive(Debug, Clone)]
pub struct Topology {
    pub cluster_name: String,
    pub namespace: String,
    pub version: String,
    pub class: String,
    pub variables: Map<String, Value>,
    /// (MachineDeployment topology name, class)
    pub machine_deployments: Vec<(String, String)>,
}

/// One template after patching.
#[derive(Debug, Clone)]
pub struct Item {
    /// `infrastructureCluster`, `controlPlane`, `controlPlaneMachine`, `<md>/bootstrap`,
    /// `<md>/infrastructure`.
    pub role: String,
    pub object: Value,
    variables: Value,
    holder_kind: &'static str,
    holder_field: &'static str,
    md_class: Option<String>,
}

fn apply_defaults(schema: &Value, value: &mut Value) {
    match (value, schema.get("type").and_then(Value::as_str)) {
        (Value::Object(o), Some("object")) => {
            if let Some(Value::Object(props)) = schema.get("properties") {
                for (k, s) in props {
                    if !o.contains_key(k)
                        && let Some(d) = s.get("default")
                    {
                        o.insert(k.clone(), d.clone());
                    }
                    if let Some(v) = o.get_mut(k) {
                        apply_defaults(s, v);
                    }
                }
            }
        }
        (Value::Array(a), Some("array")) => {
            if let Some(items) = schema.get("items") {
                for v in a {
                    apply_defaults(items, v);
                }
            }
        }
        _ => {}
    }
}

fn check_type(name: &str, schema: &Value, value: &Value) -> Result<(), String> {
    let ok = match schema.get("type").and_then(Value::as_str) {
        Some("string") => value.is_string(),
        Some("boolean") => value.is_boolean(),
        Some("integer") => value.as_f64().is_some_and(|f| f.fract() == 0.0),
        Some("number") => value.is_number(),
        Some("array") => value.is_array(),
        Some("object") => value.is_object(),
        _ => true,
    };
    if !ok {
        return Err(format!(
            "variable {name}: {value} is not of type {}",
            schema["type"]
        ));
    }
    if let (Some(min), Some(v)) = (
        schema.get("minimum").and_then(Value::as_f64),
        value.as_f64(),
    ) && v < min
    {
        return Err(format!("variable {name}: {v} is below the minimum {min}"));
    }
    if let (Some(items), Value::Array(a)) = (schema.get("items"), value) {
        for v in a {
            check_type(name, items, v)?;
        }
    }
    if let (Some(Value::Object(props)), Value::Object(o)) = (schema.get("properties"), value) {
        for (k, s) in props {
            if let Some(v) = o.get(k) {
                check_type(&format!("{name}.{k}"), s, v)?;
            }
        }
    }
    Ok(())
}

/// The Cluster's variables after CAPI's defaulting and validation.
pub fn variables(class: &Value, topo: &Topology) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    let defs = class["spec"]["variables"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for name in topo.variables.keys() {
        if !defs.iter().any(|d| d["name"] == *name) {
            return Err(format!(
                "variable {name} is not defined in the ClusterClass"
            ));
        }
    }
    for d in &defs {
        let name = d["name"].as_str().ok_or("variable without name")?;
        let schema = &d["schema"]["openAPIV3Schema"];
        let mut value = match topo.variables.get(name) {
            Some(v) => v.clone(),
            None => match schema.get("default") {
                Some(v) => v.clone(),
                None if d["required"] == true => {
                    return Err(format!("required variable {name} is not set"));
                }
                None => continue,
            },
        };
        apply_defaults(schema, &mut value);
        check_type(name, schema, &value)?;
        out.insert(name.to_string(), value);
    }
    Ok(out)
}

fn merge(global: &Map<String, Value>, builtin: Value) -> Value {
    let mut v = global.clone();
    v.insert("builtin".into(), builtin);
    Value::Object(v)
}

fn find<'a>(templates: &'a [Value], kind: &str, name: &str) -> Result<&'a Value, String> {
    templates
        .iter()
        .find(|t| t["kind"] == kind && t["metadata"]["name"] == name)
        .ok_or_else(|| format!("template {kind} {name} not found"))
}

/// Build the request items, apply every patch of `class`, return the patched templates.
pub fn apply(class: &Value, templates: &[Value], topo: &Topology) -> Result<Vec<Item>, String> {
    let vars = variables(class, topo)?;
    let cluster = json!({
        "name": topo.cluster_name, "namespace": topo.namespace,
        "topology": {"version": topo.version, "class": topo.class},
    });
    let spec = &class["spec"];
    let r = |v: &Value| -> Result<(String, String), String> {
        Ok((
            v["kind"].as_str().ok_or("ref without kind")?.to_string(),
            v["name"].as_str().ok_or("ref without name")?.to_string(),
        ))
    };
    let mut items = Vec::new();
    let (k, n) = r(&spec["infrastructure"]["ref"])?;
    items.push(Item {
        role: "infrastructureCluster".into(),
        object: find(templates, &k, &n)?.clone(),
        variables: merge(&vars, json!({"cluster": cluster})),
        holder_kind: "Cluster",
        holder_field: "spec.infrastructureRef",
        md_class: None,
    });
    let cp = json!({"cluster": cluster, "controlPlane": {
        "version": topo.version, "name": format!("{}-control-plane", topo.cluster_name), "replicas": 3,
    }});
    let (k, n) = r(&spec["controlPlane"]["ref"])?;
    items.push(Item {
        role: "controlPlane".into(),
        object: find(templates, &k, &n)?.clone(),
        variables: merge(&vars, cp.clone()),
        holder_kind: "Cluster",
        holder_field: "spec.controlPlaneRef",
        md_class: None,
    });
    if spec["controlPlane"]["machineInfrastructure"]["ref"].is_object() {
        let (k, n) = r(&spec["controlPlane"]["machineInfrastructure"]["ref"])?;
        items.push(Item {
            role: "controlPlaneMachine".into(),
            object: find(templates, &k, &n)?.clone(),
            variables: merge(&vars, cp),
            holder_kind: "KubeadmControlPlane",
            holder_field: "spec.machineTemplate.infrastructureRef",
            md_class: None,
        });
    }
    let md_classes = spec["workers"]["machineDeployments"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for (md_name, md_class) in &topo.machine_deployments {
        let c = md_classes
            .iter()
            .find(|c| c["class"] == *md_class)
            .ok_or_else(|| format!("MachineDeployment class {md_class} not in the ClusterClass"))?;
        let builtin = json!({"cluster": cluster, "machineDeployment": {
            "version": topo.version, "class": md_class, "name": format!("{}-{md_name}", topo.cluster_name),
            "topologyName": md_name, "replicas": 1,
        }});
        for (part, field) in [
            ("bootstrap", "spec.template.spec.bootstrap.configRef"),
            ("infrastructure", "spec.template.spec.infrastructureRef"),
        ] {
            let (k, n) = r(&c["template"][part]["ref"])?;
            items.push(Item {
                role: format!("{md_name}/{part}"),
                object: find(templates, &k, &n)?.clone(),
                variables: merge(&vars, builtin.clone()),
                holder_kind: "MachineDeployment",
                holder_field: field,
                md_class: Some(md_class.clone()),
            });
        }
    }
    for patch in spec["patches"].as_array().cloned().unwrap_or_default() {
        apply_patch(&patch, &mut items)?;
    }
    Ok(items)
}

/// Apply one patch of the ClusterClass to every item its definitions select (when its
/// `enabledIf` renders `true` for the item).
fn apply_patch(patch: &Value, items: &mut [Item]) -> Result<(), String> {
    let pname = patch["name"].as_str().unwrap_or("?").to_string();
    for item in items.iter_mut() {
        let defs: Vec<&Value> = patch["definitions"]
            .as_array()
            .map(|d| d.iter().filter(|d| matches(item, &d["selector"])).collect())
            .unwrap_or_default();
        if defs.is_empty() {
            continue;
        }
        if let Some(cond) = patch["enabledIf"].as_str() {
            let text = gotemplate::render(cond, &item.variables)
                .map_err(|e| format!("patch {pname}: enabledIf: {e}"))?;
            if yaml_value(&text)? != Value::Bool(true) {
                continue;
            }
        }
        for d in defs {
            for op in d["jsonPatches"].as_array().cloned().unwrap_or_default() {
                json_patch(&mut item.object, &op, &item.variables)
                    .map_err(|e| format!("patch {pname} on {}: {e}", item.role))?;
            }
        }
    }
    Ok(())
}

fn matches(item: &Item, sel: &Value) -> bool {
    if item.object["apiVersion"] != sel["apiVersion"] || item.object["kind"] != sel["kind"] {
        return false;
    }
    let m = &sel["matchResources"];
    if m["infrastructureCluster"] == true
        && item.holder_kind == "Cluster"
        && item.holder_field == "spec.infrastructureRef"
    {
        return true;
    }
    if m["controlPlane"] == true
        && ((item.holder_kind == "Cluster" && item.holder_field == "spec.controlPlaneRef")
            || item.holder_field == "spec.machineTemplate.infrastructureRef")
    {
        return true;
    }
    if let (Some(names), Some(class)) = (
        m["machineDeploymentClass"]["names"].as_array(),
        &item.md_class,
    ) {
        return names.iter().filter_map(Value::as_str).any(|n| {
            n == "*"
                || n == class
                || n.strip_prefix('*').is_some_and(|s| class.ends_with(s))
                || n.strip_suffix('*').is_some_and(|p| class.starts_with(p))
        });
    }
    false
}

/// YAML text → JSON, as sigs.k8s.io/yaml does for rendered templates (empty → null).
pub fn yaml_value(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    yaml_serde::from_str::<Value>(text)
        .map_err(|e| format!("rendered template is not YAML: {e}: {text:?}"))
}

fn variable(vars: &Value, path: &str) -> Result<Value, String> {
    let mut cur = vars;
    for k in path.split('.') {
        cur = cur
            .get(k)
            .ok_or_else(|| format!("variable {path:?} not found"))?;
    }
    Ok(cur.clone())
}

fn json_patch(doc: &mut Value, op: &Value, vars: &Value) -> Result<(), String> {
    let kind = op["op"].as_str().ok_or("op missing")?;
    let path = op["path"].as_str().ok_or("path missing")?;
    let value = if kind == "remove" {
        Value::Null
    } else if let Some(v) = op.get("value") {
        v.clone()
    } else if let Some(name) = op["valueFrom"]["variable"].as_str() {
        variable(vars, name)?
    } else if let Some(t) = op["valueFrom"]["template"].as_str() {
        yaml_value(&gotemplate::render(t, vars)?)?
    } else {
        return Err("neither value nor valueFrom".into());
    };
    let parts: Vec<String> = path
        .split('/')
        .skip(1)
        .map(|p| p.replace("~1", "/").replace("~0", "~"))
        .collect();
    let (last, parents) = parts.split_last().ok_or("empty path")?;
    let mut cur = doc;
    for p in parents {
        cur = match cur {
            Value::Object(o) => o.get_mut(p),
            Value::Array(a) => p.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
            _ => None,
        }
        .ok_or_else(|| format!("{kind} operation does not apply: doc is missing path: {path:?}"))?;
    }
    match (kind, cur) {
        ("add", Value::Object(o)) => {
            o.insert(last.clone(), value);
        }
        ("add", Value::Array(a)) => {
            if last == "-" {
                a.push(value);
            } else {
                let i: usize = last.parse().map_err(|_| "bad index")?;
                if i > a.len() {
                    return Err(format!("index {i} out of range"));
                }
                a.insert(i, value);
            }
        }
        ("replace", Value::Object(o)) => {
            if !o.contains_key(last) {
                return Err(format!(
                    "replace operation does not apply: doc is missing key: {path}"
                ));
            }
            o.insert(last.clone(), value);
        }
        ("remove", Value::Object(o)) => {
            o.remove(last)
                .ok_or_else(|| format!("remove: missing key {path}"))?;
        }
        (k, _) => return Err(format!("{k} on {path} is not simulated")),
    }
    Ok(())
}
