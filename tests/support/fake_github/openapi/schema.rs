//! The subset of JSON Schema that GitHub's OpenAPI 3.0 description uses, as a validator.
//!
//! Keywords: `$ref` (local, `#/components/...`), `type` with OpenAPI's `nullable`, `enum`,
//! `properties`, `required`, `additionalProperties` (boolean or schema), `items`, `allOf`,
//! `anyOf`, `oneOf`, `not`, `format` (`date-time`, `uri`, `uri-template`-free `uri`, `email`
//! cheaply), `minLength`/`maxLength`, `minimum`/`maximum`, `pattern`, `minItems`/`maxItems`.
//!
//! `oneOf` is checked as "at least one branch": GitHub's description has overlapping branches
//! (a commit's `author` is `simple-user` or `empty-object`, and every user is also an object),
//! so exclusive `oneOf` would reject GitHub's own answers.

use serde_json::Value;

/// Resolves local `$ref`s against the whole document.
pub struct Validator<'a> {
    pub root: &'a Value,
}

/// Longest `$ref` chain we follow (the description has recursive schemas; data is finite, so
/// recursion is bounded by the value's depth, this is only a guard against a `$ref` loop).
const MAX_DEPTH: usize = 64;

impl<'a> Validator<'a> {
    pub fn new(root: &'a Value) -> Self {
        Validator { root }
    }

    /// Follow `$ref`s to the schema they name.
    pub fn resolve(&self, mut s: &'a Value) -> &'a Value {
        for _ in 0..MAX_DEPTH {
            let Some(r) = s.get("$ref").and_then(Value::as_str) else {
                return s;
            };
            let Some(ptr) = r.strip_prefix('#') else {
                return &Value::Null;
            };
            s = self.root.pointer(ptr).unwrap_or(&Value::Null);
        }
        s
    }

    /// Every problem of `v` against `schema`, each prefixed with its JSON path (`$.a[0].b`).
    pub fn validate(&self, schema: &'a Value, v: &Value) -> Vec<String> {
        let mut errs = Vec::new();
        self.check(schema, v, "$", &mut errs, 0);
        errs
    }

    /// Whether `v` is valid (no error collected).
    pub fn is_valid(&self, schema: &'a Value, v: &Value) -> bool {
        let mut errs = Vec::new();
        self.check(schema, v, "$", &mut errs, 0);
        errs.is_empty()
    }

    fn check(&self, schema: &'a Value, v: &Value, at: &str, errs: &mut Vec<String>, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let s = self.resolve(schema);
        let Some(obj) = s.as_object() else {
            return; // `true`/`{}`-like schemas accept anything
        };
        if v.is_null() && obj.get("nullable").and_then(Value::as_bool) == Some(true) {
            return;
        }
        if let Some(t) = obj.get("type").and_then(Value::as_str)
            && !type_matches(t, v)
        {
            errs.push(format!("{at}: {} is not {}", describe(v), article(t)));
            return;
        }
        if let Some(allowed) = obj.get("enum").and_then(Value::as_array)
            && !allowed.contains(v)
        {
            let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
            errs.push(format!(
                "{at}: {} is not one of [{}]",
                describe(v),
                list.join(", ")
            ));
        }
        self.check_combinators(obj, v, at, errs, depth);
        match v {
            Value::Object(map) => self.check_object(obj, map, at, errs, depth),
            Value::Array(items) => {
                if let Some(is) = obj.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        self.check(is, item, &format!("{at}[{i}]"), errs, depth + 1);
                    }
                }
                bound(obj, "minItems", items.len(), at, "items", errs, false);
                bound(obj, "maxItems", items.len(), at, "items", errs, true);
            }
            Value::String(_) | Value::Number(_) => check_scalar(obj, v, at, errs),
            _ => {}
        }
    }

    /// `allOf`, `anyOf`, `oneOf` and `not`.
    fn check_combinators(
        &self,
        obj: &'a serde_json::Map<String, Value>,
        v: &Value,
        at: &str,
        errs: &mut Vec<String>,
        depth: usize,
    ) {
        for sub in obj
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.check(sub, v, at, errs, depth + 1);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = obj.get(key).and_then(Value::as_array) {
                let results: Vec<Vec<String>> = branches
                    .iter()
                    .map(|b| {
                        let mut e = Vec::new();
                        self.check(b, v, at, &mut e, depth + 1);
                        e
                    })
                    .collect();
                if !results.iter().any(Vec::is_empty) {
                    // Report the branch that came closest.
                    let best = results.iter().min_by_key(|e| e.len()).cloned();
                    errs.push(format!(
                        "{at}: matches none of the {} {key} branches (closest: {})",
                        branches.len(),
                        best.unwrap_or_default().join("; ")
                    ));
                }
            }
        }
        if let Some(not) = obj.get("not")
            && self.is_valid(not, v)
        {
            errs.push(format!("{at}: must not match the `not` schema"));
        }
    }

    /// An object's required and additional properties, each property against its schema, and
    /// the bounds on their number.
    fn check_object(
        &self,
        obj: &'a serde_json::Map<String, Value>,
        map: &serde_json::Map<String, Value>,
        at: &str,
        errs: &mut Vec<String>,
        depth: usize,
    ) {
        let props = obj.get("properties").and_then(Value::as_object);
        for req in obj
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(name) = req.as_str()
                && !map.contains_key(name)
            {
                errs.push(format!("{at}: required property `{name}` is missing"));
            }
        }
        for (k, sub) in map {
            let here = format!("{at}.{k}");
            match props.and_then(|p| p.get(k)) {
                Some(ps) => self.check(ps, sub, &here, errs, depth + 1),
                None => match obj.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        errs.push(format!("{at}: property `{k}` is not allowed"))
                    }
                    Some(ap @ Value::Object(_)) => self.check(ap, sub, &here, errs, depth + 1),
                    _ => {}
                },
            }
        }
        bound(
            obj,
            "minProperties",
            map.len(),
            at,
            "properties",
            errs,
            false,
        );
        bound(
            obj,
            "maxProperties",
            map.len(),
            at,
            "properties",
            errs,
            true,
        );
    }
}

/// A string's length, format and pattern; a number's minimum and maximum.
fn check_scalar(obj: &serde_json::Map<String, Value>, v: &Value, at: &str, errs: &mut Vec<String>) {
    match v {
        Value::String(text) => {
            let n = text.chars().count();
            bound(obj, "minLength", n, at, "characters", errs, false);
            bound(obj, "maxLength", n, at, "characters", errs, true);
            if let Some(f) = obj.get("format").and_then(Value::as_str)
                && !format_ok(f, text)
            {
                errs.push(format!("{at}: {text:?} is not a valid {f}"));
            }
            if let Some(p) = obj.get("pattern").and_then(Value::as_str)
                && pattern(p).is_some_and(|re| !re.is_match(text))
            {
                errs.push(format!("{at}: {text:?} does not match /{p}/"));
            }
        }
        Value::Number(num) => {
            let x = num.as_f64().unwrap_or(0.0);
            if let Some(min) = obj.get("minimum").and_then(Value::as_f64)
                && x < min
            {
                errs.push(format!("{at}: {x} is less than the minimum {min}"));
            }
            if let Some(max) = obj.get("maximum").and_then(Value::as_f64)
                && x > max
            {
                errs.push(format!("{at}: {x} is more than the maximum {max}"));
            }
        }
        _ => {}
    }
}

fn bound(
    obj: &serde_json::Map<String, Value>,
    key: &str,
    n: usize,
    at: &str,
    what: &str,
    errs: &mut Vec<String>,
    is_max: bool,
) {
    if let Some(b) = obj.get(key).and_then(Value::as_u64) {
        let b = b as usize;
        if (is_max && n > b) || (!is_max && n < b) {
            let rel = if is_max { "at most" } else { "at least" };
            errs.push(format!("{at}: has {n} {what}, {rel} {b} allowed"));
        }
    }
}

/// `a string`, `an integer`: how GitHub words a type in its `422 Invalid request` messages.
fn article(t: &str) -> String {
    match t {
        "integer" | "object" | "array" => format!("an {t}"),
        "null" => "null".into(),
        _ => format!("a {t}"),
    }
}

/// JSON type names as GitHub's description uses them.
pub fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "null" => v.is_null(),
        _ => true,
    }
}

/// A short description of a value for messages: its type, and small scalars themselves.
pub fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if s.chars().count() <= 40 => format!("{s:?}"),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// Cheap checks of the formats GitHub's description uses; unknown formats pass.
fn format_ok(f: &str, s: &str) -> bool {
    match f {
        "date-time" => chrono::DateTime::parse_from_rfc3339(s).is_ok(),
        "uri" => {
            let Some((scheme, rest)) = s.split_once(':') else {
                return false;
            };
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                && !rest.is_empty()
                && !s.contains(char::is_whitespace)
        }
        "email" => s.contains('@'),
        _ => true,
    }
}

/// A schema's `pattern`, compiled once per process (every request is validated).
fn pattern(p: &str) -> Option<regex::Regex> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<String, Option<regex::Regex>>>> = OnceLock::new();
    CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(p.to_string())
        .or_insert_with(|| regex::Regex::new(p).ok())
        .clone()
}
