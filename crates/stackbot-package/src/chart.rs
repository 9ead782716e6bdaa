//! `helm package` (helm v3.16 `chartutil.Save` after `loader.LoadDir`), reimplemented so the
//! cluster-class archive has the layout CSO's `helm template` expects (§2.6): `<name>/`
//! prefix, `Chart.yaml` re-serialised as helm does, then `Chart.lock`, `values.yaml`,
//! `values.schema.json`, `templates/*`, other files, subcharts; `.helmignore` honoured plus
//! the default `templates/.?*` rule; no directory entries; helm's gzip header.

use std::cmp::Ordering;

use serde_json::{Map, Value as Json};
use yaml_serde::Value as Yaml;

use super::PackageError;
use super::archive::{self, GzipHeader, TarEntry};
use super::helmyaml;
use super::validate::helm_version;
use crate::FileTree;

/// helm's gzip header `Extra` (`chartutil.headerBytes`).
pub const HELM_GZIP_EXTRA: &[u8] = b"+aHR0cHM6Ly95b3V0dS5iZS96OVV6MWljandyTQo=";
/// helm's gzip header `Comment`.
pub const HELM_GZIP_COMMENT: &str = "Helm";

/// A packaged chart: `<name>-<version>.tgz`.
#[derive(Debug, Clone)]
pub struct Packaged {
    pub name: String,
    pub version: String,
    pub file_name: String,
    pub tgz: Vec<u8>,
}

/// Order of `filepath.Walk`: lexical per directory, i.e. component-wise (so `a/b` comes
/// before `a-c`, unlike a plain byte sort of full paths).
pub fn walk_cmp(a: &str, b: &str) -> Ordering {
    a.split('/').cmp(b.split('/'))
}

/// Package the chart in `files` (chart-relative paths, already templated) as csctl does:
/// set `version` in `Chart.yaml` (it must already be a string), then `helm package`.
/// `dir` is the chart's path in the stack (e.g. `cluster-class`), used in errors.
pub fn helm_package(files: &FileTree, dir: &str, version: &str) -> Result<Packaged, PackageError> {
    let rules = Ignore::parse(
        files
            .get(".helmignore")
            .map(|b| b.as_slice())
            .unwrap_or(b""),
        &format!("{dir}/.helmignore"),
    )?;
    let mut paths: Vec<&String> = files.keys().collect();
    paths.sort_by(|a, b| walk_cmp(a, b));
    let mut loaded: Vec<(String, Vec<u8>)> = Vec::new();
    for p in paths {
        let comps: Vec<&str> = p.split('/').collect();
        let dir_ignored = (1..comps.len()).any(|n| rules.ignore(&comps[..n].join("/"), true));
        if dir_ignored || rules.ignore(p, false) {
            continue;
        }
        let mut data = files[p].as_slice();
        data = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data);
        let data = if p == "Chart.yaml" {
            set_version(data, &format!("{dir}/Chart.yaml"), version)?
        } else {
            data.to_vec()
        };
        loaded.push((p.clone(), data));
    }
    let chart = load(loaded, dir)?;
    for dep in chart_dependency_names(&chart) {
        if !chart.deps.iter().any(|d| d.name == dep) {
            return Err(PackageError::invalid(
                format!("{dir}/Chart.yaml"),
                format!(
                    "dependency `{dep}` is not vendored in `{dir}/charts/`: helm package requires it (run `helm dependency build`)"
                ),
            ));
        }
    }
    let mut blobs: Vec<(String, Vec<u8>)> = Vec::new();
    write_chart(&chart, "", &mut blobs);
    let entries: Vec<TarEntry<'_>> = blobs.iter().map(|(n, d)| TarEntry::File(n, d)).collect();
    let io =
        |e: std::io::Error| PackageError::invalid(dir.to_string(), format!("cannot archive: {e}"));
    let tar = archive::tar(&entries).map_err(io)?;
    let tgz = archive::gzip(
        &tar,
        GzipHeader {
            extra: Some(HELM_GZIP_EXTRA),
            comment: Some(HELM_GZIP_COMMENT),
        },
    )
    .map_err(io)?;
    Ok(Packaged {
        file_name: format!("{}-{}.tgz", chart.name, version),
        name: chart.name.clone(),
        version: version.to_string(),
        tgz,
    })
}

/// The `name` field of a `Chart.yaml`, for the naming checks done before packaging.
pub fn chart_name(bytes: &[u8], file: &str) -> Result<String, PackageError> {
    let doc: Yaml = yaml_serde::from_slice(bytes)
        .map_err(|e| PackageError::invalid(file, format!("is not valid YAML: {e}")))?;
    Ok(match doc.get("name") {
        Some(Yaml::String(s)) => s.clone(),
        Some(Yaml::Number(n)) => n.to_string(),
        _ => String::new(),
    })
}

/// csctl `overwriteVersionInFile`: the existing `version` must be a YAML string.
fn set_version(data: &[u8], file: &str, version: &str) -> Result<Vec<u8>, PackageError> {
    let mut doc: Yaml = yaml_serde::from_slice(data)
        .map_err(|e| PackageError::invalid(file, format!("is not valid YAML: {e}")))?;
    let Some(map) = doc.as_mapping_mut() else {
        return Err(PackageError::invalid(file, "must be a YAML mapping"));
    };
    match map.get("version") {
        Some(Yaml::String(_)) => {}
        _ => {
            return Err(PackageError::field(
                file,
                "version",
                "must be a string (csctl overwrites it with the release version), e.g. `version: v1`",
            ));
        }
    }
    map.insert(Yaml::from("version"), Yaml::from(version));
    yaml_serde::to_string(&doc)
        .map(String::into_bytes)
        .map_err(|e| PackageError::invalid(file, e.to_string()))
}

struct Chart {
    name: String,
    api_v1: bool,
    metadata: Json,
    lock: Option<Json>,
    values: Option<Vec<u8>>,
    schema: Option<Vec<u8>>,
    templates: Vec<(String, Vec<u8>)>,
    files: Vec<(String, Vec<u8>)>,
    deps: Vec<Chart>,
}

fn chart_dependency_names(c: &Chart) -> Vec<String> {
    c.metadata
        .get("dependencies")
        .and_then(|d| d.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|d| d.get("name").and_then(|n| n.as_str()).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A chart's files sorted into its parts as `loader.LoadFiles` does.
#[derive(Default)]
struct Parts {
    chart_yaml: Option<Vec<u8>>,
    lock: Option<Vec<u8>>,
    values: Option<Vec<u8>>,
    schema: Option<Vec<u8>>,
    templates: Vec<(String, Vec<u8>)>,
    other: Vec<(String, Vec<u8>)>,
    /// Per entry of `charts/` (a directory or an archive), its files below `charts/`.
    subcharts: std::collections::BTreeMap<String, Vec<(String, Vec<u8>)>>,
}

impl Parts {
    fn sort(files: Vec<(String, Vec<u8>)>) -> Self {
        let mut p = Parts::default();
        for (name, data) in files {
            match name.as_str() {
                "Chart.yaml" => p.chart_yaml = Some(data),
                "Chart.lock" => p.lock = Some(data),
                "values.yaml" => p.values = Some(data),
                "values.schema.json" => p.schema = Some(data),
                n if n.starts_with("templates/") => p.templates.push((name, data)),
                n if n.starts_with("charts/") && !n.ends_with(".prov") => {
                    let rest = &n["charts/".len()..];
                    let cname = rest.split('/').next().unwrap_or(rest).to_string();
                    p.subcharts
                        .entry(cname)
                        .or_default()
                        .push((rest.to_string(), data));
                }
                _ => p.other.push((name, data)),
            }
        }
        p
    }
}

/// `loader.LoadFiles`: sort files into the chart's parts, load subcharts, validate.
fn load(files: Vec<(String, Vec<u8>)>, dir: &str) -> Result<Chart, PackageError> {
    let parts = Parts::sort(files);
    let chart_file = format!("{dir}/Chart.yaml");
    let Some(chart_yaml) = parts.chart_yaml else {
        return Err(PackageError::invalid(
            chart_file,
            "is missing: every chart needs a Chart.yaml",
        ));
    };
    let (metadata, name, api_v1) = metadata(&chart_yaml, &chart_file)?;
    if let Some(v) = &parts.values {
        check_values(v, dir)?;
    }
    if let Some(s) = &parts.schema
        && serde_json::from_slice::<Json>(s).is_err()
    {
        return Err(PackageError::invalid(
            format!("{dir}/values.schema.json"),
            "is not valid JSON (helm refuses to package it)",
        ));
    }
    let lock = match parts.lock {
        Some(l) if !api_v1 => Some(lock_json(&l, &format!("{dir}/Chart.lock"))?),
        _ => None,
    };
    let deps = load_subcharts(parts.subcharts, dir)?;
    Ok(Chart {
        name,
        api_v1,
        metadata,
        lock,
        values: parts.values,
        schema: parts.schema,
        templates: parts.templates,
        files: parts.other,
        deps,
    })
}

/// `values.yaml` is a YAML mapping (or empty): helm refuses to load anything else.
fn check_values(v: &[u8], dir: &str) -> Result<(), PackageError> {
    let parsed: Result<Yaml, _> = yaml_serde::from_slice(v);
    match parsed {
        Ok(Yaml::Mapping(_)) | Ok(Yaml::Null) => Ok(()),
        Ok(_) => Err(PackageError::invalid(
            format!("{dir}/values.yaml"),
            "must be a YAML mapping (helm refuses to load it)",
        )),
        Err(e) => Err(PackageError::invalid(
            format!("{dir}/values.yaml"),
            format!("is not valid YAML (helm refuses to load it): {e}"),
        )),
    }
}

/// The charts below `charts/` (directories and archives; `_` and `.` entries skipped), each
/// loaded like its parent; two with one name are an error.
fn load_subcharts(
    subcharts: std::collections::BTreeMap<String, Vec<(String, Vec<u8>)>>,
    dir: &str,
) -> Result<Vec<Chart>, PackageError> {
    let mut deps = Vec::new();
    for (cname, files) in subcharts {
        if cname.starts_with('_') || cname.starts_with('.') {
            continue;
        }
        let sub_dir = format!("{dir}/charts/{cname}");
        let sub_files = if cname.ends_with(".tgz") {
            if files.len() != 1 || files[0].0 != cname {
                return Err(PackageError::invalid(sub_dir, "is not a chart archive"));
            }
            untar_chart(&files[0].1, &sub_dir)?
        } else {
            files
                .into_iter()
                .filter_map(|(n, d)| n.split_once('/').map(|(_, rest)| (rest.to_string(), d)))
                .collect()
        };
        deps.push(load(sub_files, &sub_dir)?);
    }
    let mut seen = std::collections::BTreeSet::new();
    for d in &deps {
        if !seen.insert(d.name.clone()) {
            return Err(PackageError::invalid(
                format!("{dir}/charts"),
                format!("holds two charts named `{}`", d.name),
            ));
        }
    }
    Ok(deps)
}

/// `loader.LoadArchiveFiles`: drop the top directory, skip directory entries.
fn untar_chart(tgz: &[u8], dir: &str) -> Result<Vec<(String, Vec<u8>)>, PackageError> {
    let entries = archive::read_tgz(tgz)
        .map_err(|e| PackageError::invalid(dir, format!("is not a readable chart archive: {e}")))?;
    let mut out = Vec::new();
    for e in entries {
        let Some(data) = e.data else { continue };
        if e.kind == tar::EntryType::XGlobalHeader {
            continue;
        }
        let name = e.name.replace('\\', "/");
        if name.starts_with('/') {
            return Err(PackageError::invalid(
                dir,
                format!("chart archive entry `{name}` is an absolute path"),
            ));
        }
        let Some((_, rest)) = name.split_once('/') else {
            return Err(PackageError::invalid(
                dir,
                "chart archive has files outside its base directory",
            ));
        };
        if rest.is_empty() || rest.starts_with("..") || rest.split('/').any(|c| c == "..") {
            return Err(PackageError::invalid(
                dir,
                format!("chart archive entry `{name}` escapes the chart"),
            ));
        }
        let data = data
            .strip_prefix(b"\xef\xbb\xbf")
            .map(<[u8]>::to_vec)
            .unwrap_or(data);
        out.push((rest.to_string(), data));
    }
    Ok(out)
}

fn write_chart(c: &Chart, prefix: &str, out: &mut Vec<(String, Vec<u8>)>) {
    let base = format!("{prefix}{}", c.name);
    let mut md = c.metadata.clone();
    if c.api_v1
        && let Some(m) = md.as_object_mut()
    {
        m.remove("dependencies");
    }
    out.push((
        format!("{base}/Chart.yaml"),
        helmyaml::to_string(&md).into_bytes(),
    ));
    if let Some(l) = &c.lock {
        out.push((
            format!("{base}/Chart.lock"),
            helmyaml::to_string(l).into_bytes(),
        ));
    }
    if let Some(v) = &c.values {
        out.push((format!("{base}/values.yaml"), v.clone()));
    }
    if let Some(s) = &c.schema {
        out.push((format!("{base}/values.schema.json"), s.clone()));
    }
    for (n, d) in c.templates.iter().chain(c.files.iter()) {
        out.push((format!("{base}/{n}"), d.clone()));
    }
    for d in &c.deps {
        write_chart(d, &format!("{base}/charts/"), out);
    }
}

/// helm `sanitizeString`: whitespace becomes a space, unprintable characters are dropped.
fn sanitize(s: &str) -> String {
    s.chars()
        .filter_map(|c| {
            if c.is_whitespace() {
                Some(' ')
            } else if c.is_control() || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}') {
                None
            } else {
                Some(c)
            }
        })
        .collect()
}

/// What `sigs.k8s.io/yaml` stores in a Go `string` field: scalars become their text.
fn as_string(v: &Yaml, file: &str, field: &str) -> Result<String, PackageError> {
    match v {
        Yaml::Null => Ok(String::new()),
        Yaml::String(s) => Ok(s.clone()),
        Yaml::Bool(b) => Ok(b.to_string()),
        Yaml::Number(n) => Ok(if let Some(f) = n.as_f64().filter(|_| n.is_f64()) {
            format!("{}", f as f32)
        } else {
            n.to_string()
        }),
        _ => Err(PackageError::field(
            file,
            field,
            "must be a string (helm cannot load this chart)",
        )),
    }
}

fn as_string_list(
    v: &Yaml,
    file: &str,
    field: &str,
    clean: bool,
) -> Result<Vec<String>, PackageError> {
    match v {
        Yaml::Null => Ok(vec![]),
        Yaml::Sequence(s) => s
            .iter()
            .map(|x| as_string(x, file, field).map(|s| if clean { sanitize(&s) } else { s }))
            .collect(),
        _ => Err(PackageError::field(
            file,
            field,
            "must be a list of strings",
        )),
    }
}

fn put_str(m: &mut Map<String, Json>, k: &str, s: String) {
    if !s.is_empty() {
        m.insert(k.to_string(), Json::String(s));
    }
}

fn put_list(m: &mut Map<String, Json>, k: &str, l: Vec<String>) {
    if !l.is_empty() {
        m.insert(
            k.to_string(),
            Json::Array(l.into_iter().map(Json::String).collect()),
        );
    }
}

pub(crate) fn dependency_json(d: &Yaml, file: &str) -> Result<Json, PackageError> {
    let field = "dependencies";
    if d.is_null() {
        return Err(PackageError::field(
            file,
            field,
            "must not contain empty entries",
        ));
    }
    let g = |k: &str| d.get(k).cloned().unwrap_or(Yaml::Null);
    let mut m = Map::new();
    let s = |k: &str| as_string(&g(k), file, &format!("{field}[].{k}"));
    m.insert("name".into(), Json::String(sanitize(&s("name")?)));
    put_str(&mut m, "version", sanitize(&s("version")?));
    m.insert(
        "repository".into(),
        Json::String(sanitize(&s("repository")?)),
    );
    put_str(&mut m, "condition", sanitize(&s("condition")?));
    put_list(
        &mut m,
        "tags",
        as_string_list(&g("tags"), file, "dependencies[].tags", true)?,
    );
    match g("enabled") {
        Yaml::Bool(true) => {
            m.insert("enabled".into(), Json::Bool(true));
        }
        Yaml::Bool(false) | Yaml::Null => {}
        _ => {
            return Err(PackageError::field(
                file,
                "dependencies[].enabled",
                "must be a boolean",
            ));
        }
    }
    if let Yaml::Sequence(iv) = g("import-values")
        && !iv.is_empty()
    {
        let j = serde_json::to_value(&iv)
            .map_err(|e| PackageError::field(file, "dependencies[].import-values", e))?;
        m.insert("import-values".into(), j);
    }
    let alias = s("alias")?;
    if !alias.is_empty()
        && !alias
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(PackageError::field(
            file,
            "dependencies[].alias",
            format!("`{alias}` has characters helm disallows"),
        ));
    }
    put_str(&mut m, "alias", alias);
    Ok(Json::Object(m))
}

/// `chart.Metadata` as helm loads, sanitises and validates it, as a JSON value of exactly the
/// fields helm would serialise (`omitempty` applied). Returns `(json, name, is_v1)`.
fn metadata(bytes: &[u8], file: &str) -> Result<(Json, String, bool), PackageError> {
    let doc: Yaml = yaml_serde::from_slice(bytes)
        .map_err(|e| PackageError::invalid(file, format!("is not valid YAML: {e}")))?;
    if !doc.is_mapping() {
        return Err(PackageError::invalid(file, "must be a YAML mapping"));
    }
    let g = |k: &str| doc.get(k).cloned().unwrap_or(Yaml::Null);
    let s = |k: &str| as_string(&g(k), file, k);
    let mut m = Map::new();
    let name = sanitize(&s("name")?);
    let version = s("version")?;
    let mut api = s("apiVersion")?;
    if api.is_empty() {
        api = "v1".into();
    }
    let ctype = s("type")?;
    put_str(&mut m, "name", name.clone());
    put_str(&mut m, "home", sanitize(&s("home")?));
    put_list(
        &mut m,
        "sources",
        as_string_list(&g("sources"), file, "sources", true)?,
    );
    put_str(&mut m, "version", version.clone());
    put_str(&mut m, "description", sanitize(&s("description")?));
    put_list(
        &mut m,
        "keywords",
        as_string_list(&g("keywords"), file, "keywords", true)?,
    );
    if let Some(ms) = maintainers_json(g("maintainers"), file)? {
        m.insert("maintainers".into(), ms);
    }
    put_str(&mut m, "icon", sanitize(&s("icon")?));
    put_str(&mut m, "apiVersion", api.clone());
    put_str(&mut m, "condition", sanitize(&s("condition")?));
    put_str(&mut m, "tags", sanitize(&s("tags")?));
    put_str(&mut m, "appVersion", sanitize(&s("appVersion")?));
    match g("deprecated") {
        Yaml::Bool(true) => {
            m.insert("deprecated".into(), Json::Bool(true));
        }
        Yaml::Bool(false) | Yaml::Null => {}
        _ => return Err(PackageError::field(file, "deprecated", "must be a boolean")),
    }
    if let Some(a) = annotations_json(g("annotations"), file)? {
        m.insert("annotations".into(), a);
    }
    put_str(&mut m, "kubeVersion", sanitize(&s("kubeVersion")?));
    if let Some(ds) = dependencies_json(g("dependencies"), file)? {
        m.insert("dependencies".into(), ds);
    }
    put_str(&mut m, "type", ctype.clone());
    check_required(file, &name, &version, &ctype)?;
    Ok((Json::Object(m), name, api == "v1"))
}

/// `maintainers`: a list of `name`/`email`/`url` entries (sanitised), none empty; `None`
/// when there are none (`omitempty`).
fn maintainers_json(v: Yaml, file: &str) -> Result<Option<Json>, PackageError> {
    let ms = match v {
        Yaml::Null => return Ok(None),
        Yaml::Sequence(ms) => ms,
        _ => return Err(PackageError::field(file, "maintainers", "must be a list")),
    };
    let mut out = Vec::new();
    for mt in ms {
        if mt.is_null() {
            return Err(PackageError::field(
                file,
                "maintainers",
                "must not contain empty entries",
            ));
        }
        let mut o = Map::new();
        for k in ["name", "email", "url"] {
            let v = mt.get(k).cloned().unwrap_or(Yaml::Null);
            put_str(
                &mut o,
                k,
                sanitize(&as_string(&v, file, &format!("maintainers[].{k}"))?),
            );
        }
        out.push(Json::Object(o));
    }
    Ok((!out.is_empty()).then_some(Json::Array(out)))
}

/// `annotations`: a map of strings; `None` when empty (`omitempty`).
fn annotations_json(v: Yaml, file: &str) -> Result<Option<Json>, PackageError> {
    let a = match v {
        Yaml::Null => return Ok(None),
        Yaml::Mapping(a) => a,
        _ => {
            return Err(PackageError::field(
                file,
                "annotations",
                "must be a map of strings",
            ));
        }
    };
    let mut o = Map::new();
    for (k, v) in a {
        let k = as_string(&k, file, "annotations")?;
        o.insert(k, Json::String(as_string(&v, file, "annotations")?));
    }
    Ok((!o.is_empty()).then_some(Json::Object(o)))
}

/// `dependencies`: a list whose names (or aliases) are unique; `None` when empty
/// (`omitempty`).
fn dependencies_json(v: Yaml, file: &str) -> Result<Option<Json>, PackageError> {
    let ds = match v {
        Yaml::Null => return Ok(None),
        Yaml::Sequence(ds) => ds,
        _ => return Err(PackageError::field(file, "dependencies", "must be a list")),
    };
    let mut out = Vec::new();
    let mut keys = std::collections::BTreeSet::new();
    for d in &ds {
        let j = dependency_json(d, file)?;
        let key = j
            .get("alias")
            .or_else(|| j.get("name"))
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string();
        if !keys.insert(key.clone()) {
            return Err(PackageError::field(
                file,
                "dependencies",
                format!("has more than one dependency with name or alias `{key}`"),
            ));
        }
        out.push(j);
    }
    Ok((!out.is_empty()).then_some(Json::Array(out)))
}

/// helm's `Metadata.Validate` on what is left once every field has loaded: a valid name, a
/// SemVer version, a known type.
fn check_required(file: &str, name: &str, version: &str, ctype: &str) -> Result<(), PackageError> {
    if name.is_empty() {
        return Err(PackageError::field(file, "name", "is required"));
    }
    if name.contains('/') || name == "." || name == ".." {
        return Err(PackageError::field(
            file,
            "name",
            format!("`{name}` is not a valid chart name"),
        ));
    }
    if version.is_empty() {
        return Err(PackageError::field(file, "version", "is required"));
    }
    helm_version(version).map_err(|e| PackageError::field(file, "version", e))?;
    if !matches!(ctype, "" | "application" | "library") {
        return Err(PackageError::field(
            file,
            "type",
            "must be `application` or `library`",
        ));
    }
    Ok(())
}

/// `chart.Lock` as helm re-serialises it: `generated` in Go's RFC3339Nano form.
fn lock_json(bytes: &[u8], file: &str) -> Result<Json, PackageError> {
    let doc: Yaml = yaml_serde::from_slice(bytes)
        .map_err(|e| PackageError::invalid(file, format!("is not valid YAML: {e}")))?;
    let generated = match doc.get("generated") {
        None | Some(Yaml::Null) => "0001-01-01T00:00:00Z".to_string(),
        Some(v) => {
            let raw = as_string(v, file, "generated")?;
            go_rfc3339_nano(&raw).ok_or_else(|| {
                PackageError::field(
                    file,
                    "generated",
                    format!("`{raw}` is not an RFC 3339 time"),
                )
            })?
        }
    };
    let digest = as_string(doc.get("digest").unwrap_or(&Yaml::Null), file, "digest")?;
    let deps = match doc.get("dependencies") {
        None | Some(Yaml::Null) => Json::Null,
        Some(Yaml::Sequence(ds)) => Json::Array(
            ds.iter()
                .map(|d| dependency_json(d, file))
                .collect::<Result<_, _>>()?,
        ),
        Some(_) => return Err(PackageError::field(file, "dependencies", "must be a list")),
    };
    let mut m = Map::new();
    m.insert("generated".into(), Json::String(generated));
    m.insert("digest".into(), Json::String(digest));
    m.insert("dependencies".into(), deps);
    Ok(Json::Object(m))
}

fn go_rfc3339_nano(s: &str) -> Option<String> {
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| go_time(&t))
}

/// A time as Go's `time.RFC3339Nano` writes it (Helm's `Chart.lock` `generated`): nanoseconds
/// with trailing zeros cut, `Z` for UTC. The one formatter, for a lock time read from a
/// template and for one stackbot records when it locks a chart (`pipeline::vendor`).
pub fn go_time(t: &chrono::DateTime<chrono::FixedOffset>) -> String {
    let mut out = t.format("%Y-%m-%dT%H:%M:%S").to_string();
    let nanos = t.timestamp_subsec_nanos();
    if nanos > 0 {
        let frac = format!("{nanos:09}");
        out.push('.');
        out.push_str(frac.trim_end_matches('0'));
    }
    let off = t.offset().local_minus_utc();
    if off == 0 {
        out.push('Z');
    } else {
        let sign = if off < 0 { '-' } else { '+' };
        let a = off.abs();
        out.push_str(&format!("{sign}{:02}:{:02}", a / 3600, (a % 3600) / 60));
    }
    out
}

/// `.helmignore` rules (helm `pkg/ignore`), including helm's odd negation semantics.
struct Ignore {
    patterns: Vec<Pattern>,
}

struct Pattern {
    negate: bool,
    must_dir: bool,
    kind: MatchKind,
    glob: String,
}

enum MatchKind {
    Root,
    Structural,
    Base,
}

impl Ignore {
    fn parse(text: &[u8], file: &str) -> Result<Self, PackageError> {
        let text = String::from_utf8_lossy(text);
        let mut patterns = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let rule = line.trim();
            if rule.is_empty() || rule.starts_with('#') {
                continue;
            }
            if rule.contains("**") {
                return Err(PackageError::invalid(
                    format!("{file}:{}", i + 1),
                    "double-star (**) syntax is not supported by helm",
                ));
            }
            patterns.push(Pattern::new(rule, &format!("{file}:{}", i + 1))?);
        }
        patterns.push(Pattern::new("templates/.?*", file)?);
        Ok(Ignore { patterns })
    }

    fn ignore(&self, path: &str, is_dir: bool) -> bool {
        for p in &self.patterns {
            if p.negate {
                if p.must_dir && !is_dir {
                    return true;
                }
                if !p.matches(path) {
                    return true;
                }
                continue;
            }
            if p.must_dir && !is_dir {
                continue;
            }
            if p.matches(path) {
                return true;
            }
        }
        false
    }
}

impl Pattern {
    fn new(rule: &str, at: &str) -> Result<Self, PackageError> {
        if glob_match(rule, "abc").is_none() {
            return Err(PackageError::invalid(
                at,
                format!("`{rule}` is not a valid pattern"),
            ));
        }
        let mut r = rule;
        let negate = r.starts_with('!');
        if negate {
            r = &r[1..];
        }
        let must_dir = r.ends_with('/');
        if must_dir {
            r = &r[..r.len() - 1];
        }
        let kind = if r.starts_with('/') {
            r = &r[1..];
            MatchKind::Root
        } else if r.contains('/') {
            MatchKind::Structural
        } else {
            MatchKind::Base
        };
        Ok(Pattern {
            negate,
            must_dir,
            kind,
            glob: r.to_string(),
        })
    }

    fn matches(&self, path: &str) -> bool {
        let target = match self.kind {
            MatchKind::Root | MatchKind::Structural => path,
            MatchKind::Base => path.rsplit('/').next().unwrap_or(path),
        };
        glob_match(&self.glob, target).unwrap_or(false)
    }
}

/// Go `path/filepath.Match` (with `/` as separator). `None` for a malformed pattern.
pub fn glob_match(pattern: &str, name: &str) -> Option<bool> {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    fn class(p: &[char], mut i: usize, c: char) -> Option<(bool, usize)> {
        // p[i] is just after '['.
        let negate = p.get(i) == Some(&'^');
        if negate {
            i += 1;
        }
        let mut matched = false;
        let mut first = true;
        loop {
            let ch = *p.get(i)?;
            if ch == ']' && !first {
                i += 1;
                break;
            }
            first = false;
            let lo = if ch == '\\' {
                i += 1;
                *p.get(i)?
            } else {
                ch
            };
            i += 1;
            let mut hi = lo;
            if p.get(i) == Some(&'-') && p.get(i + 1).is_some_and(|&c| c != ']') {
                i += 1;
                hi = if p[i] == '\\' {
                    i += 1;
                    *p.get(i)?
                } else {
                    p[i]
                };
                i += 1;
            }
            if lo <= c && c <= hi {
                matched = true;
            }
        }
        Some((matched != negate, i))
    }
    fn rec(p: &[char], n: &[char]) -> Option<bool> {
        let (mut pi, mut ni) = (0, 0);
        while pi < p.len() {
            match p[pi] {
                '*' => {
                    let rest = &p[pi + 1..];
                    let mut k = ni;
                    loop {
                        if rec(rest, &n[k..])? {
                            return Some(true);
                        }
                        if k >= n.len() || n[k] == '/' {
                            return Some(false);
                        }
                        k += 1;
                    }
                }
                '?' => {
                    if ni >= n.len() || n[ni] == '/' {
                        return check_rest(&p[pi..]);
                    }
                    pi += 1;
                    ni += 1;
                }
                '[' => {
                    let (ok, next) = class(p, pi + 1, *n.get(ni).unwrap_or(&'\0'))?;
                    if ni >= n.len() || n[ni] == '/' || !ok {
                        return check_rest(&p[next..]).map(|_| false);
                    }
                    pi = next;
                    ni += 1;
                }
                '\\' => {
                    let c = *p.get(pi + 1)?;
                    if n.get(ni) != Some(&c) {
                        return Some(false);
                    }
                    pi += 2;
                    ni += 1;
                }
                c => {
                    if n.get(ni) != Some(&c) {
                        return check_rest(&p[pi..]).map(|_| false);
                    }
                    pi += 1;
                    ni += 1;
                }
            }
        }
        Some(ni == n.len())
    }
    /// Go reports `ErrBadPattern` even when matching fails early; validate the remainder.
    fn check_rest(p: &[char]) -> Option<bool> {
        let mut i = 0;
        while i < p.len() {
            match p[i] {
                '[' => {
                    let (_, next) = class(p, i + 1, '\0')?;
                    i = next;
                }
                '\\' => {
                    p.get(i + 1)?;
                    i += 2;
                }
                _ => i += 1,
            }
        }
        Some(false)
    }
    rec(&p, &n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> FileTree {
        files
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
            .collect()
    }

    fn names(p: &Packaged) -> Vec<String> {
        archive::read_tgz(&p.tgz)
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect()
    }

    #[test]
    fn layout_order_and_helmignore_follow_helm() {
        let t = tree(&[
            ("Chart.yaml", "apiVersion: v2\nname: c\nversion: v1\n"),
            ("values.yaml", "a: 1\n"),
            ("README.md", "r"),
            (".helmignore", "*.bak\nsecret/\n"),
            ("templates/b.yaml", "b"),
            ("templates/a/x.yaml", "x"),
            ("templates/a-c.yaml", "y"),
            ("templates/.hidden", "h"),
            ("x.bak", "no"),
            ("secret/key", "no"),
        ]);
        let p = helm_package(&t, "c", "v2").unwrap();
        assert_eq!(p.file_name, "c-v2.tgz");
        assert_eq!(
            names(&p),
            [
                "c/Chart.yaml",
                "c/values.yaml",
                "c/templates/a/x.yaml",
                "c/templates/a-c.yaml",
                "c/templates/b.yaml",
                "c/.helmignore",
                "c/README.md",
            ]
        );
        let entries = archive::read_tgz(&p.tgz).unwrap();
        assert_eq!(
            entries[0].data.as_deref(),
            Some(b"apiVersion: v2\nname: c\nversion: v2\n".as_slice())
        );
        let d = flate2::read::GzDecoder::new(p.tgz.as_slice());
        assert_eq!(d.header().unwrap().comment(), Some(b"Helm".as_slice()));
    }

    #[test]
    fn vendored_tgz_subcharts_are_expanded_under_charts() {
        let sub = archive::gzip(
            &archive::tar(&[
                TarEntry::File(
                    "dep/Chart.yaml",
                    b"apiVersion: v2\nname: dep\nversion: 1.2.3\n",
                ),
                TarEntry::File("dep/templates/t.yaml", b"t"),
            ])
            .unwrap(),
            GzipHeader::default(),
        )
        .unwrap();
        let mut t = tree(&[(
            "Chart.yaml",
            "apiVersion: v2\nname: c\nversion: v1\ndependencies:\n- name: dep\n  version: 1.2.3\n  repository: https://example.org\n",
        )]);
        t.insert("charts/dep-1.2.3.tgz".into(), sub);
        let p = helm_package(&t, "c", "v1").unwrap();
        assert_eq!(
            names(&p),
            [
                "c/Chart.yaml",
                "c/charts/dep/Chart.yaml",
                "c/charts/dep/templates/t.yaml"
            ]
        );
        t.remove("charts/dep-1.2.3.tgz");
        let e = helm_package(&t, "c", "v1").unwrap_err().to_string();
        assert!(e.contains("dependency `dep` is not vendored"), "{e}");
    }

    #[test]
    fn rejects_versions_and_types_helm_rejects() {
        let t = tree(&[("Chart.yaml", "apiVersion: v2\nname: c\nversion: v1\n")]);
        let e = helm_package(&t, "cluster-class", "v0-sha.0123456")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cluster-class/Chart.yaml") && e.contains("version"),
            "{e}"
        );
        let t = tree(&[("Chart.yaml", "apiVersion: v2\nname: c\nversion: 1\n")]);
        let e = helm_package(&t, "cluster-class", "v1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("must be a string"), "{e}");
    }

    #[test]
    fn lock_time_is_go_rfc3339_nano() {
        assert_eq!(
            go_rfc3339_nano("2024-05-13T11:45:53.587920+02:00").unwrap(),
            "2024-05-13T11:45:53.58792+02:00"
        );
        assert_eq!(
            go_rfc3339_nano("2024-05-13T11:45:53+00:00").unwrap(),
            "2024-05-13T11:45:53Z"
        );
    }

    #[test]
    fn go_glob_semantics() {
        assert_eq!(glob_match("*.bak", "a.bak"), Some(true));
        assert_eq!(glob_match("*", "a/b"), Some(false));
        assert_eq!(glob_match("templates/.?*", "templates/.x"), Some(true));
        assert_eq!(glob_match("templates/.?*", "templates/."), Some(false));
        assert_eq!(glob_match("[a-c]x", "bx"), Some(true));
        assert_eq!(glob_match("[^a-c]x", "bx"), Some(false));
        assert_eq!(glob_match("[", "abc"), None);
    }
}
