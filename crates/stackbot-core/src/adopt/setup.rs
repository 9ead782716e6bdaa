//! The configuration and release set of an adopted stack.
//!
//! The release set records exactly what the tree pins, so rendering reproduces it. The
//! configuration's rules say how later releases find newer values: the node image patterns
//! are the found name and URL with the image's version replaced by `{version}`/`{minor}`, and
//! a component whose version follows the Kubernetes minor (`2.34.2` for 1.34) gets a
//! `series` rule, any other a `pin`.

use std::collections::BTreeMap;

use super::Layout;
use super::facts::{FoundComponent, StackFacts};
use crate::model::{Component, KubeVersion, ReleaseSet};

/// The release set the tree was built from.
pub fn release_set(facts: &StackFacts) -> ReleaseSet {
    ReleaseSet {
        stack: facts.stack.clone(),
        kubernetes: facts.kubernetes,
        published_at: None,
        node_image: facts
            .node_image
            .as_ref()
            .map(|i| i.image.clone())
            .unwrap_or_default(),
        components: facts
            .components
            .iter()
            .map(|c| {
                (
                    c.key.clone(),
                    Component {
                        chart: c.chart.clone(),
                        repository: c.repository.clone(),
                        version: c.version.clone(),
                        digest: c.archive_digest.clone(),
                        locked_at: c.locked_at.clone(),
                    },
                )
            })
            .collect::<BTreeMap<_, _>>(),
    }
}

/// `s` with the image version written as `{version}` and its minor as `{minor}`, or `None`
/// when the pattern would not expand back to `s` (braces in it, or a patch without `v`).
pub fn pattern(s: &str, v: KubeVersion) -> Option<String> {
    if s.contains(['{', '}']) {
        return None;
    }
    let full = v.to_string();
    let minor = format!("{}.{}", v.major, v.minor);
    let mut out = String::new();
    let mut rest = s;
    while !rest.is_empty() {
        if rest.starts_with(&full) && !rest[full.len()..].starts_with(|c: char| c.is_ascii_digit())
        {
            out.push_str("{version}");
            rest = &rest[full.len()..];
        } else if rest.starts_with(&minor)
            && !rest[minor.len()..].starts_with(|c: char| c.is_ascii_digit())
            && !rest[minor.len()..]
                .strip_prefix('.')
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
            && !out.ends_with(|c: char| c.is_ascii_digit() || c == '.')
        {
            out.push_str("{minor}");
            rest = &rest[minor.len()..];
        } else {
            let c = rest.chars().next().expect("non-empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    let expanded = out.replace("{version}", &full).replace("{minor}", &minor);
    (expanded == s && out.contains("{version}")).then_some(out)
}

/// A YAML double-quoted scalar (JSON strings are valid YAML).
fn q(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

/// `s` plain when YAML reads it back as the same string (names, paths, URLs), else quoted.
fn plain(s: &str) -> String {
    let safe = s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ':'))
        && !s.contains(": ")
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n"
        );
    if safe { s.to_string() } else { q(s) }
}

/// Whether a component's version follows the Kubernetes minor (`2.34.2` for 1.34): then it
/// is a per-minor fact.
pub fn follows_minor(c: &FoundComponent, k: KubeVersion) -> bool {
    let plain = c.version.strip_prefix('v').unwrap_or(&c.version);
    semver::Version::parse(plain)
        .is_ok_and(|v| v.minor == k.minor && v.pre.is_empty() && c.version == plain)
}

fn version_rule(c: &FoundComponent, k: KubeVersion) -> (String, String) {
    let plain = c.version.strip_prefix('v').unwrap_or(&c.version);
    if follows_minor(c, k)
        && let Ok(v) = semver::Version::parse(plain)
    {
        return (
            format!("{{ series: {} }}", q(&format!("{}.{{minor}}", v.major))),
            format!(
                "{} follows the Kubernetes minor: the newest {}.<minor>.x",
                c.version, v.major
            ),
        );
    }
    (
        format!("{{ pin: {} }}", q(plain)),
        format!(
            "{} does not follow the Kubernetes minor, so pinned",
            c.version
        ),
    )
}

/// `stackbot.yaml` for the adopted stack: one `stacks:` entry, with comments saying where
/// each rule came from.
pub fn config_text(facts: &StackFacts, layout: &Layout, limits: &[String]) -> String {
    let k = facts.kubernetes;
    let mut s = String::new();
    s.push_str(&format!(
        "# stackbot configuration written by `stackbot adopt {}`: stack `{}`, Kubernetes {k}.\n",
        layout.source, facts.stack
    ));
    s.push_str("# `stackbot render` writes the stack from the templates and stackbot.lock; `stackbot schema` lists every key.\n");
    s.push_str("stacks:\n");
    s.push_str(&format!("  - provider: {}\n", facts.stack.provider));
    s.push_str(&format!("    name: {}\n", facts.stack.name));
    s.push_str(&format!(
        "    templates: {}\n",
        plain(&layout.templates.to_string_lossy())
    ));
    s.push_str(&format!(
        "    output: {}\n",
        plain(&layout.output.to_string_lossy())
    ));
    if limits.is_empty() {
        s.push_str("    # Every Kubernetes minor not past its end of life; list them (e.g. [\"1.34\"]) to choose.\n");
        s.push_str("    minors: supported\n");
    } else {
        s.push_str(&format!(
            "    # Only {} (the adopted minor): stackbot cannot render other minors as upstream would write them:\n",
            k.minor()
        ));
        for l in limits {
            s.push_str(&format!("    #   {l}\n"));
        }
        s.push_str("    # Fix these (or accept the difference) before listing more minors or writing `supported`.\n");
        s.push_str(&format!("    minors: [\"{}\"]\n", k.minor()));
    }
    if let Some(img) = &facts.node_image {
        let v = img.version.unwrap_or(k);
        match (pattern(&img.image.url, v), pattern(&img.image.name, v)) {
            (Some(url), Some(name)) => {
                s.push_str(&format!(
                    "    # From {}; the sha256 of a new image is read from `<url>.CHECKSUM`.\n",
                    img.files.join(", ")
                ));
                s.push_str("    node_image:\n");
                s.push_str(&format!("      url: {}\n", q(&url)));
                s.push_str(&format!("      name: {}\n", q(&name)));
            }
            _ => {
                s.push_str(&format!(
                    "    # The node image ({}) could not be written as a pattern: set `node_image` by hand.\n",
                    img.image.url
                ));
            }
        }
    } else {
        s.push_str("    # No node image: the tree describes none to import.\n");
    }
    if facts.components.is_empty() {
        s.push_str("    components: {}\n");
    } else {
        s.push_str("    components:\n");
        for c in &facts.components {
            let (rule, why) = version_rule(c, k);
            s.push_str(&format!("      # {} ({}): {why}.\n", c.key, c.file));
            s.push_str(&format!("      {}:\n", plain(&c.key)));
            s.push_str(&format!("        chart: {}\n", plain(&c.chart)));
            s.push_str(&format!("        repository: {}\n", plain(&c.repository)));
            s.push_str(&format!("        version: {rule}\n"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_replace_the_image_version() {
        let v: KubeVersion = "v1.34.7".parse().unwrap();
        assert_eq!(
            pattern(
                "https://x/ubuntu-2404-kube-v1.34/ubuntu-2404-kube-v1.34.7.qcow2",
                v
            )
            .as_deref(),
            Some("https://x/ubuntu-2404-kube-v{minor}/ubuntu-2404-kube-{version}.qcow2")
        );
        assert_eq!(
            pattern("ubuntu-capi-image-v1.34.7", v).as_deref(),
            Some("ubuntu-capi-image-{version}")
        );
        // A patch without `v` cannot be expressed with `{version}`.
        assert_eq!(pattern("https://x/1.34.7/img", v), None);
        assert_eq!(pattern("https://x/{a}", v), None);
    }
}
