//! `Chart.lock` as `helm dependency update` writes it: the locked dependencies and the
//! `digest` Helm checks them by.
//!
//! The digest is Helm's `resolver.HashReq(req, lock)` (helm/pkg/downloader, v3): the
//! `sha256` of `json.Marshal([2][]*chart.Dependency{req, lock})`, where `req` is
//! `Chart.yaml`'s `dependencies` as Helm loads them and `lock` the locked ones, written
//! `sha256:<hex>`. `helm dependency build` refuses a `Chart.lock` whose digest is not this
//! ("the lock file (Chart.lock) is out of sync with the dependencies file (Chart.yaml)"), so a
//! rendered `Chart.lock` must carry exactly it.
//!
//! Go's `encoding/json` is ported where it differs from `serde_json`: struct fields in
//! declaration order with `omitempty` (as [`crate::chart`] loads them), map keys sorted,
//! and `<`, `>`, `&`, U+2028 and U+2029 escaped (`\u003c`, ...), as `json.Marshal` does.

use serde_json::Value as Json;
use sha2::{Digest, Sha256};
use yaml_serde::Value as Yaml;

use crate::PackageError;

/// One dependency a `Chart.lock` locks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locked {
    pub name: String,
    pub repository: String,
    pub version: String,
}

fn deps_of(bytes: &[u8], file: &str) -> Result<Vec<Json>, PackageError> {
    let doc: Yaml = yaml_serde::from_slice(bytes)
        .map_err(|e| PackageError::invalid(file, format!("is not valid YAML: {e}")))?;
    match doc.get("dependencies") {
        None | Some(Yaml::Null) => Ok(Vec::new()),
        Some(Yaml::Sequence(ds)) => ds
            .iter()
            .map(|d| crate::chart::dependency_json(d, file))
            .collect(),
        Some(_) => Err(PackageError::field(file, "dependencies", "must be a list")),
    }
}

/// The dependencies `Chart.lock` (`file`, for messages) locks, in its order.
pub fn locked(chart_lock: &[u8], file: &str) -> Result<Vec<Locked>, PackageError> {
    let s = |d: &Json, k: &str| d.get(k).and_then(Json::as_str).unwrap_or("").to_string();
    Ok(deps_of(chart_lock, file)?
        .iter()
        .map(|d| Locked {
            name: s(d, "name"),
            repository: s(d, "repository"),
            version: s(d, "version"),
        })
        .collect())
}

/// The `digest` Helm writes into (and checks in) the `Chart.lock` of a chart whose
/// `Chart.yaml` is `chart_yaml`, locking what `chart_lock` locks: `sha256:<hex>`. `dir` names
/// the chart directory in messages.
pub fn digest(chart_yaml: &[u8], chart_lock: &[u8], dir: &str) -> Result<String, PackageError> {
    let req = deps_of(chart_yaml, &format!("{dir}Chart.yaml"))?;
    let lock = deps_of(chart_lock, &format!("{dir}Chart.lock"))?;
    let mut text = String::new();
    go_json(
        &Json::Array(vec![Json::Array(req), Json::Array(lock)]),
        0,
        &mut text,
    );
    Ok(format!(
        "sha256:{}",
        hex::encode(Sha256::digest(text.as_bytes()))
    ))
}

/// `json.Marshal` of a value: the objects of depth 2 are `chart.Dependency` structs (fields in
/// the order given), deeper ones Go maps (keys sorted). A nil slice is `null`, an empty
/// one `[]`; `[2][]` of no dependencies is `[null,null]` in Go, which a `Chart.lock` without
/// dependencies never has hashed (Helm writes none).
fn go_json(v: &Json, depth: usize, out: &mut String) {
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) => out.push_str(&n.to_string()),
        Json::String(s) => go_string(s, out),
        Json::Array(a) if a.is_empty() && depth == 1 => out.push_str("null"),
        Json::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json(x, depth + 1, out);
            }
            out.push(']');
        }
        Json::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            if depth > 2 {
                keys.sort();
            }
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_string(k, out);
                out.push(':');
                go_json(&m[k], depth + 1, out);
            }
            out.push('}');
        }
    }
}

/// A Go `encoding/json` string, HTML-escaped as `json.Marshal` writes it (Go 1.22+: `\b`
/// and `\f` short forms).
fn go_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The value of the top-level `digest:` of a `Chart.lock`, as written.
pub fn written_digest(chart_lock: &[u8]) -> Option<String> {
    let doc: Yaml = yaml_serde::from_slice(chart_lock).ok()?;
    doc.get("digest")?.as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The fixture pair is chosen at run time by commit; a test may read files.
    #[allow(clippy::disallowed_methods)]
    fn pair_file(commit: &str, file: &str) -> Vec<u8> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/pairs/openstack-scs-1-29-1-30");
        std::fs::read(root.join(commit).join(file)).unwrap()
    }

    #[test]
    fn the_digest_is_the_one_helm_wrote_into_upstreams_chart_locks() {
        // openstack/scs at tags openstack-scs-1-29-v1 and -1-30-v1: `helm dependency update`
        // wrote these files; the digest it wrote is the oracle.
        for commit in ["5a47baf", "87d65bb"] {
            let chart = pair_file(commit, "cluster-addon/Chart.yaml");
            let lock = pair_file(commit, "cluster-addon/Chart.lock");
            let want = written_digest(&lock).unwrap();
            assert_eq!(
                digest(&chart, &lock, "cluster-addon/").unwrap(),
                want,
                "{commit}"
            );
        }
    }

    #[test]
    fn the_digest_follows_every_field_helm_hashes() {
        let chart = pair_file("5a47baf", "cluster-addon/Chart.yaml");
        let lock = pair_file("5a47baf", "cluster-addon/Chart.lock");
        let base = digest(&chart, &lock, "").unwrap();
        let text = String::from_utf8(chart.clone()).unwrap();
        // A version, a condition and an alias are hashed; the chart's own fields are not.
        for (from, to) in [
            ("version: 2.29.1", "version: 2.30.0"),
            (
                "condition: yawol-controller.enabled",
                "condition: x.enabled",
            ),
            ("alias: cilium", "alias: cni"),
        ] {
            let changed = text.replace(from, to);
            assert_ne!(
                digest(changed.as_bytes(), &lock, "").unwrap(),
                base,
                "{from}"
            );
        }
        let renamed = text.replace("name: openstack-scs-1-29-cluster-addon", "name: other");
        assert_eq!(digest(renamed.as_bytes(), &lock, "").unwrap(), base);
        assert_eq!(
            locked(&lock, "Chart.lock").unwrap()[2],
            Locked {
                name: "openstack-cloud-controller-manager".into(),
                repository: "https://kubernetes.github.io/cloud-provider-openstack".into(),
                version: "2.29.1".into(),
            }
        );
    }

    #[test]
    fn strings_are_escaped_as_go_json_marshal_escapes_them() {
        let mut s = String::new();
        go_string(">=1.0.0 <2.0.0 & \"x\"\u{2028}\u{1}", &mut s);
        assert_eq!(s, r#""\u003e=1.0.0 \u003c2.0.0 \u0026 \"x\"\u2028\u0001""#);
        // Import values are Go maps: keys sorted.
        let v: Json = serde_json::json!([[{"name": "a", "import-values": [{"parent": "p", "child": "c"}]}], []]);
        let mut out = String::new();
        go_json(&v, 0, &mut out);
        assert_eq!(
            out,
            r#"[[{"name":"a","import-values":[{"child":"c","parent":"p"}]}],null]"#
        );
    }
}
