//! GitHub's official OpenAPI description, trimmed to the operations stackbot uses
//! (`tests/fixtures/github/openapi.json`, written by `scripts/github-openapi`), as a
//! conformance check of requests and answers.
//!
//! A request is conformant when an operation exists for its method and path template, its
//! path and query parameters are declared and valid, and its JSON body is valid against the
//! operation's request schema. An answer is conformant when its status is declared for the
//! operation (or is one GitHub may give to any request: redirects, conditional requests,
//! authentication, rate limits, server errors) and its JSON body is valid against the schema
//! declared for that status.

mod schema;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

pub use schema::Validator;

/// Statuses GitHub may answer to any operation, whether or not the description lists them:
/// 301/307 for renamed or transferred repositories, 302 for asset downloads, 304 for
/// conditional requests, 400 for unparsable JSON, 401/403 for credentials and the primary
/// rate limit, 404 for anything the token cannot see, 429 and 403 for secondary rate limits,
/// 5xx for server trouble. Their JSON bodies are checked against `basic-error`.
const ANY_OPERATION: &[u16] = &[301, 302, 304, 307, 400, 401, 403, 404, 429, 500, 502, 503];

/// Statuses GitHub really answers to one operation although its description does not declare
/// them (each with the reason). Checked against `validation-error`/`basic-error`.
const UNDECLARED_BUT_REAL: &[(&str, &str, u16, &str)] = &[
    (
        "PATCH",
        "/repos/{owner}/{repo}/releases/{release_id}",
        422,
        "publishing a draft whose tag already has a published release: Validation Failed, \
         already_exists (the description lists only 200 and 404)",
    ),
    (
        "POST",
        "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches",
        422,
        "a dispatch GitHub cannot start: `No ref found for: x`, `Unexpected inputs provided: \
         [\"x\"]`, `Required input 'x' not provided`, `Workflow does not have \
         'workflow_dispatch' trigger` (the description lists only 200 and 204)",
    ),
];

/// One parameter of an operation.
#[derive(Debug, Clone)]
pub struct Param {
    pub name: String,
    pub location: String,
    pub required: bool,
    pub schema: Value,
}

/// One operation (method + path template) of the description.
#[derive(Debug, Clone)]
pub struct Op {
    pub method: String,
    pub template: String,
    pub operation_id: String,
    /// Where GitHub's error answers for this operation point (`documentation_url`).
    pub doc_url: String,
    segs: Vec<Seg>,
    params: Vec<Param>,
    /// `(required, JSON schema)`; `None` when the operation takes no body. A body of another
    /// media type (asset uploads: any bytes) has no JSON schema.
    body: Option<(bool, Option<Value>)>,
    /// Declared status → the JSON schema of its body, if any.
    responses: BTreeMap<u16, Option<Value>>,
}

#[derive(Debug, Clone)]
enum Seg {
    Lit(String),
    Param(String),
}

/// An operation matched to a request, with the values of its path parameters.
#[derive(Debug)]
pub struct Matched<'s> {
    pub op: &'s Op,
    pub path_params: Vec<(String, String)>,
}

/// What checking a request found.
#[derive(Debug, Default)]
pub struct RequestCheck {
    /// Every problem, for the conformance report.
    pub problems: Vec<String>,
    /// The first problem with the JSON body, phrased like GitHub's `422 Invalid request.`
    pub invalid_body: Option<String>,
}

/// The loaded description.
pub struct Spec {
    doc: Value,
    ops: Vec<Op>,
}

static SPEC: OnceLock<Spec> = OnceLock::new();

impl Spec {
    /// The description vendored in `tests/fixtures/github/openapi.json`, loaded once.
    pub fn get() -> &'static Spec {
        SPEC.get_or_init(|| {
            let path = crate::shared::shared_dir().join("github/openapi.json");
            let shown = path.display();
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!("{shown}: {e} (regenerate with scripts/github-openapi)")
            });
            let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{shown}: {e}"));
            Spec::from_doc(doc)
        })
    }

    pub fn from_doc(doc: Value) -> Spec {
        let v = Validator::new(&doc);
        let mut ops = Vec::new();
        for (template, item) in doc["paths"].as_object().into_iter().flatten() {
            let shared: Vec<&Value> = item["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .collect();
            for (method, op) in item.as_object().into_iter().flatten() {
                if method == "parameters" {
                    continue;
                }
                let params = shared
                    .iter()
                    .copied()
                    .chain(op["parameters"].as_array().into_iter().flatten())
                    .map(|p| {
                        let p = v.resolve(p);
                        Param {
                            name: p["name"].as_str().unwrap_or_default().to_string(),
                            location: p["in"].as_str().unwrap_or_default().to_string(),
                            required: p["required"].as_bool().unwrap_or(false),
                            schema: p["schema"].clone(),
                        }
                    })
                    .collect();
                let body = op.get("requestBody").map(|b| {
                    let b = v.resolve(b);
                    (
                        b["required"].as_bool().unwrap_or(false),
                        b["content"]["application/json"].get("schema").cloned(),
                    )
                });
                let responses = op["responses"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter_map(|(status, r)| {
                        let r = v.resolve(r);
                        let schema = r["content"]["application/json"].get("schema").cloned();
                        Some((status.parse::<u16>().ok()?, schema))
                    })
                    .collect();
                let segs = template
                    .split('/')
                    .filter(|s| !s.is_empty())
                    .map(
                        |s| match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                            Some(p) => Seg::Param(p.to_string()),
                            None => Seg::Lit(s.to_string()),
                        },
                    )
                    .collect();
                ops.push(Op {
                    method: method.to_ascii_uppercase(),
                    template: template.clone(),
                    operation_id: op["operationId"].as_str().unwrap_or_default().to_string(),
                    doc_url: op["externalDocs"]["url"]
                        .as_str()
                        .unwrap_or("https://docs.github.com/rest")
                        .to_string(),
                    segs,
                    params,
                    body,
                    responses,
                });
            }
        }
        Spec { doc, ops }
    }

    pub fn validator(&self) -> Validator<'_> {
        Validator::new(&self.doc)
    }

    pub fn operations(&self) -> &[Op] {
        &self.ops
    }

    /// A named schema of `components/schemas`.
    pub fn schema(&self, name: &str) -> &Value {
        &self.doc["components"]["schemas"][name]
    }

    /// The operation a request addresses: exact segment matches first, then the most literal
    /// segments; a trailing `{path}`, `{ref}` or `{tag}` may span several segments.
    pub fn find(&self, method: &str, segs: &[String]) -> Option<Matched<'_>> {
        let mut best: Option<((bool, usize), Matched<'_>)> = None;
        for op in self.ops.iter().filter(|o| o.method == method) {
            let Some((exact, params)) = match_segs(&op.segs, segs) else {
                continue;
            };
            let lits = op.segs.iter().filter(|s| matches!(s, Seg::Lit(_))).count();
            let score = (exact, lits);
            if best.as_ref().is_none_or(|(b, _)| score > *b) {
                best = Some((
                    score,
                    Matched {
                        op,
                        path_params: params,
                    },
                ));
            }
        }
        best.map(|(_, m)| m)
    }

    /// Check parameters and body of a request to a matched operation.
    pub fn check_request(
        &self,
        m: &Matched<'_>,
        query: &[(String, String)],
        body: &[u8],
    ) -> RequestCheck {
        let v = self.validator();
        let mut out = RequestCheck::default();
        let op = m.op;
        for (name, value) in &m.path_params {
            if let Some(p) = op
                .params
                .iter()
                .find(|p| p.location == "path" && p.name == *name)
            {
                for e in check_param(&v, p, value) {
                    out.problems.push(format!("path parameter `{name}`: {e}"));
                }
            }
        }
        for p in op.params.iter().filter(|p| p.location == "query") {
            if p.required && !query.iter().any(|(k, _)| *k == p.name) {
                out.problems
                    .push(format!("required query parameter `{}` is missing", p.name));
            }
        }
        for (k, value) in query {
            match op
                .params
                .iter()
                .find(|p| p.location == "query" && p.name == *k)
            {
                Some(p) => {
                    for e in check_param(&v, p, value) {
                        out.problems.push(format!("query parameter `{k}`: {e}"));
                    }
                }
                None => out.problems.push(format!(
                    "query parameter `{k}` is not declared for this operation"
                )),
            }
        }
        match &op.body {
            None if !body.is_empty() => out
                .problems
                .push("sends a body, but the operation takes none".into()),
            None => {}
            Some((true, _)) if body.is_empty() => {
                out.problems.push("the request body is required".into());
                out.invalid_body = Some("Invalid request.\n\nNo body was sent.".into());
            }
            Some((false, _)) if body.is_empty() => {}
            Some((_, None)) => {} // raw bytes (asset uploads)
            Some((_, Some(schema))) => match serde_json::from_slice::<Value>(body) {
                Err(e) => out.problems.push(format!("the body is not JSON: {e}")),
                Ok(json) => {
                    let errs = v.validate(schema, &json);
                    if let Some(first) = errs.first() {
                        out.invalid_body =
                            Some(format!("Invalid request.\n\n{}", github_phrase(first)));
                    }
                    out.problems
                        .extend(errs.into_iter().map(|e| format!("request body {e}")));
                }
            },
        }
        out
    }

    /// Check an answer to a matched operation: status declared, JSON body valid.
    pub fn check_response(
        &self,
        m: &Matched<'_>,
        status: u16,
        content_type: &str,
        body: &[u8],
    ) -> Vec<String> {
        let op = m.op;
        let is_json = content_type.starts_with("application/json");
        let schema = match op.responses.get(&status) {
            Some(s) => s.as_ref(),
            None => {
                let extra = UNDECLARED_BUT_REAL
                    .iter()
                    .any(|(me, t, s, _)| *me == op.method && *t == op.template && *s == status);
                if !extra && !ANY_OPERATION.contains(&status) {
                    return vec![format!(
                        "status {status} is not declared for {} {} (declared: {:?})",
                        op.method,
                        op.template,
                        op.responses.keys().collect::<Vec<_>>()
                    )];
                }
                Some(if status == 422 {
                    self.schema("validation-error")
                } else {
                    self.schema("basic-error")
                })
            }
        };
        let Some(schema) = schema else {
            return Vec::new();
        };
        if body.is_empty() || !is_json {
            if body.is_empty() && (200..300).contains(&status) {
                return vec![format!("status {status} needs a JSON body, got none")];
            }
            return Vec::new();
        }
        match serde_json::from_slice::<Value>(body) {
            Err(e) => vec![format!("the answer is not JSON: {e}")],
            Ok(json) => self
                .validator()
                .validate(schema, &json)
                .into_iter()
                .map(|e| format!("{status} body {e}"))
                .collect(),
        }
    }
}

/// Parameters whose values may contain `/` unencoded (a file path, a ref like `heads/main`).
const SPANS_SEGMENTS: &[&str] = &["path", "ref", "tag"];

/// Match template segments against request segments: `(exact, path parameters)`.
fn match_segs(tpl: &[Seg], segs: &[String]) -> Option<(bool, Vec<(String, String)>)> {
    let mut params = Vec::new();
    for (i, t) in tpl.iter().enumerate() {
        let last = i + 1 == tpl.len();
        let s = segs.get(i)?;
        match t {
            Seg::Lit(l) if l == s => {}
            Seg::Lit(_) => return None,
            Seg::Param(p)
                if last && segs.len() > tpl.len() && SPANS_SEGMENTS.contains(&p.as_str()) =>
            {
                params.push((p.clone(), segs[i..].join("/")));
                return Some((false, params));
            }
            Seg::Param(p) => {
                if s.is_empty() {
                    return None;
                }
                params.push((p.clone(), s.clone()));
            }
        }
    }
    (segs.len() == tpl.len()).then_some((true, params))
}

/// A parameter value (always text on the wire) against its schema.
fn check_param(v: &Validator<'_>, p: &Param, raw: &str) -> Vec<String> {
    let schema = v.resolve(&p.schema);
    let value = match schema["type"].as_str() {
        Some("integer") => match raw.parse::<i64>() {
            Ok(n) => Value::from(n),
            Err(_) => return vec![format!("{raw:?} is not an integer")],
        },
        Some("number") => match raw.parse::<f64>() {
            Ok(n) => Value::from(n),
            Err(_) => return vec![format!("{raw:?} is not a number")],
        },
        Some("boolean") => match raw {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => return vec![format!("{raw:?} is not true or false")],
        },
        _ => Value::String(raw.to_string()),
    };
    v.validate(&p.schema, &value)
        .into_iter()
        .map(|e| e.trim_start_matches("$: ").to_string())
        .collect()
}

/// GitHub words schema problems as `For 'properties/make_latest', true is not a string.`
fn github_phrase(e: &str) -> String {
    let (at, what) = e.split_once(": ").unwrap_or(("$", e));
    let prop = at
        .trim_start_matches('$')
        .trim_start_matches('.')
        .replace('.', "/properties/");
    if prop.is_empty() {
        format!("{what}.")
    } else {
        format!("For 'properties/{prop}', {what}.")
    }
}
