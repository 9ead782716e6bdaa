//! The simulator's own readers of raw state: tag names, `metadata.yaml` and cluster-addon
//! archive bytes, tenant version lists. The invariants judge the bot by what these read, so
//! none of them calls a parsing or decision helper of the bot (`ReleaseName`, `StackVersion`,
//! `Lock`, `kubernetes_of`, …): a bug in one of those would otherwise make the oracle agree
//! with the code under test. Each reader is a few lines of `split`, small enough to check by
//! eye, and is tested below against the formats the bot writes.

use std::collections::BTreeMap;
use std::io::Read as _;

/// A Kubernetes version as `metadata.yaml` names it (`v1.33.4`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Kube {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
}

impl std::fmt::Display for Kube {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "v{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Digits only (`"07"` is allowed: the oracle reads, it does not validate).
fn number(s: &str) -> Option<u64> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// `v1.33.4` or `1.33.4` → the version.
pub fn kube(s: &str) -> Option<Kube> {
    let s = s.trim().trim_matches('"');
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut it = s.split('.');
    let k = Kube {
        major: number(it.next()?)?,
        minor: number(it.next()?)?,
        patch: number(it.next()?)?,
    };
    it.next().is_none().then_some(k)
}

/// A stable release tag of the simulated stack: `openstack-scs2-1-33-v4` → series
/// `openstack-scs2-1-33`, minor 33, number 4. Pre-releases (`v0-sha.…`) and anything else are
/// `None`.
pub fn tag(tag: &str) -> Option<(String, u64, u64)> {
    let (series, n) = tag.rsplit_once("-v")?;
    let n = number(n)?;
    let (rest, minor) = series.rsplit_once('-')?;
    let (_, major) = rest.rsplit_once('-')?;
    let minor = number(minor)?;
    (major == "1").then(|| (series.to_string(), minor, n))
}

/// A ClusterStack's `kubernetesVersion` (`"1.33"`) → 33.
pub fn minor(s: &str) -> Option<u64> {
    let (major, minor) = s.trim().split_once('.')?;
    (major == "1").then(|| number(minor)).flatten()
}

/// One entry of a ClusterStack's `versions` list: `v4` → 4; anything that is not a stable
/// number (`v0-sha.abcdef0`) → `None`.
pub fn stable(version: &str) -> Option<u64> {
    number(version.trim().strip_prefix('v')?)
}

/// The Kubernetes version a release's `metadata.yaml` names (`    kubernetes: v1.33.4`).
pub fn metadata_kubernetes(bytes: &[u8]) -> Option<Kube> {
    String::from_utf8_lossy(bytes)
        .lines()
        .find_map(|l| l.trim().strip_prefix("kubernetes:").and_then(kube))
}

/// The charts a release's cluster-addon archive pulls in, from the `dependencies` of each
/// stage's `Chart.yaml`: chart name → version (`name:` then `version:` of each `- name:` item).
pub fn addon_charts(tgz: &[u8]) -> BTreeMap<String, semver::Version> {
    let mut out = BTreeMap::new();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tgz));
    let Ok(entries) = archive.entries() else {
        return out;
    };
    for mut e in entries.flatten() {
        let is_chart = e
            .path()
            .ok()
            .is_some_and(|p| p.file_name().is_some_and(|f| f == "Chart.yaml"));
        let mut text = String::new();
        if !is_chart || e.read_to_string(&mut text).is_err() {
            continue;
        }
        let deps = match text.split_once("\ndependencies:") {
            Some((_, d)) => d,
            None => continue,
        };
        let mut name: Option<String> = None;
        for line in deps.lines() {
            let l = line.trim();
            if !line.starts_with(' ') && !line.starts_with('-') && !l.is_empty() {
                break; // the next top-level key
            }
            let value = |key: &str| {
                l.trim_start_matches("- ")
                    .strip_prefix(key)
                    .map(|v| v.trim().trim_matches('"').to_string())
            };
            if let Some(n) = l.starts_with("- name:").then(|| value("name:")).flatten() {
                name = Some(n);
            } else if let Some(v) = value("version:")
                && let Some(n) = name.take()
                && let Ok(v) = semver::Version::parse(&v)
            {
                out.insert(n, v);
            }
        }
    }
    out
}

/// The cluster-addon archive among a release's files (`…-cluster-addon-vN.tgz`).
pub fn addon_archive<'a>(names: impl IntoIterator<Item = &'a String>) -> Option<&'a String> {
    names
        .into_iter()
        .find(|n| n.contains("-cluster-addon-") && n.ends_with(".tgz"))
}

/// A `Cluster` resource as a tenant file has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    pub name: String,
    pub namespace: String,
    /// `spec.topology.class` (`openstack-scs2-1-33-v2`).
    pub class: String,
    /// `spec.topology.version` (`v1.33.4`).
    pub version: String,
}

impl Cluster {
    /// The minor its class names (`openstack-scs2-1-33-v2` → 33).
    pub fn class_minor(&self) -> Option<u64> {
        tag(&self.class).map(|(_, m, _)| m)
    }

    /// The minor its Kubernetes version names.
    pub fn version_minor(&self) -> Option<u64> {
        kube(&self.version).map(|k| k.minor)
    }
}

/// The `Cluster` resources of a multi-document YAML file: per document the keys by their
/// indentation (`metadata:` → `name:`, `namespace:`; `spec:` → `topology:` → `class:`,
/// `version:`). Quotes are dropped; anything else is read as written.
pub fn clusters(bytes: &[u8]) -> Vec<Cluster> {
    let text = String::from_utf8_lossy(bytes);
    let mut out = Vec::new();
    let mut docs = vec![String::new()];
    for line in text.lines() {
        if line.trim_end() == "---" {
            docs.push(String::new());
        } else {
            let d = docs.last_mut().expect("one document");
            d.push_str(line);
            d.push('\n');
        }
    }
    for doc in docs {
        if !doc.lines().any(|l| l.trim_end() == "kind: Cluster") {
            continue;
        }
        // The path of keys leading to each line, by indentation.
        let mut path: Vec<(usize, String)> = Vec::new();
        let mut c = Cluster {
            name: String::new(),
            namespace: String::new(),
            class: String::new(),
            version: String::new(),
        };
        for line in doc.lines() {
            let indent = line.len() - line.trim_start().len();
            let l = line.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let Some((key, value)) = l.split_once(':') else {
                continue;
            };
            while path.last().is_some_and(|(i, _)| *i >= indent) {
                path.pop();
            }
            let value = value.trim().trim_matches('"').to_string();
            let at: Vec<&str> = path.iter().map(|(_, k)| k.as_str()).collect();
            match (at.as_slice(), key) {
                (["metadata"], "name") => c.name = value,
                (["metadata"], "namespace") => c.namespace = value,
                (["spec", "topology"], "class") => c.class = value,
                (["spec", "topology"], "version") => c.version = value,
                _ => {}
            }
            path.push((indent, key.to_string()));
        }
        out.push(c);
    }
    out
}

/// The branch of a Cluster upgrade step (`stackbot/upgrade-openstack-scs2-cluster-prod-1-34`)
/// → the Cluster's `namespace-name` and the minor it moves to.
pub fn upgrade_branch(branch: &str) -> Option<(String, u64)> {
    let rest = branch.strip_prefix("stackbot/upgrade-openstack-scs2-")?;
    let (id, minor) = rest.rsplit_once("-1-")?;
    Some((id.to_string(), number(minor)?))
}

/// The steps listed on a dashboard body for approval: `(tenant, branch, ticked)` of every
/// checkbox line carrying an approval marker (`- [x] … <!-- stackbot:approve acme b -->`).
pub fn approvals(body: &str) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    for line in body.lines() {
        let l = line.trim_start();
        let ticked = if l.starts_with("- [x]") || l.starts_with("- [X]") {
            true
        } else if l.starts_with("- [ ]") {
            false
        } else {
            continue;
        };
        let Some((_, rest)) = l.split_once("<!-- stackbot:approve ") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        if let (Some(tenant), Some(branch)) = (words.next(), words.next()) {
            out.push((tenant.to_string(), branch.to_string(), ticked));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    // The benchmark programs (benches/) compile this file too: cargo builds a bench target with
    // cfg(test) but, with `harness = false`, without the test harness, so the tests and the
    // use of these imports are gone there.
    #[allow(unused_imports)]
    use super::*;

    #[test]
    fn tags_minors_and_versions() {
        assert_eq!(
            tag("openstack-scs2-1-33-v4"),
            Some(("openstack-scs2-1-33".into(), 33, 4))
        );
        assert_eq!(tag("openstack-scs2-1-33-v0-sha.abcdef0"), None);
        assert_eq!(minor("1.34"), Some(34));
        assert_eq!(stable("v12"), Some(12));
        assert_eq!(stable("v0-sha.abc1234"), None);
        assert_eq!(
            kube("v1.33.10").map(|k| k.to_string()),
            Some("v1.33.10".into())
        );
        let meta = b"apiVersion: x\nversions:\n    clusterStack: v3\n    kubernetes: v1.34.7\n";
        assert_eq!(metadata_kubernetes(meta), kube("v1.34.7"));
    }

    #[test]
    fn clusters_branches_and_approvals() {
        let file = b"apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: prod\n  namespace: cluster\nspec:\n  topology:\n    class: openstack-scs2-1-33-v2\n    version: v1.33.4\n    workers: {}\n---\nkind: ClusterStack\nmetadata:\n  name: x\n---\nkind: Cluster\nmetadata:\n  name: \"edge\"\nspec:\n  topology:\n    class: \"openstack-scs2-1-34-v1\"\n    version: \"v1.34.0\"\n";
        let cs = clusters(file);
        assert_eq!(cs.len(), 2);
        assert_eq!(
            (cs[0].name.as_str(), cs[0].namespace.as_str()),
            ("prod", "cluster")
        );
        assert_eq!(
            (cs[0].class_minor(), cs[0].version_minor()),
            (Some(33), Some(33))
        );
        assert_eq!(
            (cs[1].class.as_str(), cs[1].version.as_str()),
            ("openstack-scs2-1-34-v1", "v1.34.0")
        );
        assert_eq!(
            upgrade_branch("stackbot/upgrade-openstack-scs2-cluster-prod-1-34"),
            Some(("cluster-prod".into(), 34))
        );
        assert_eq!(upgrade_branch("stackbot/openstack-scs2"), None);
        let body = "x\n- [ ] `tyrell`: Cluster `cluster/prod` from 1.32 to 1.33 <!-- stackbot:approve tyrell stackbot/upgrade-a-1-33 -->\n- [x] `t`: y <!-- stackbot:approve t b -->\n- [ ] no marker\n";
        assert_eq!(
            approvals(body),
            vec![
                ("tyrell".into(), "stackbot/upgrade-a-1-33".into(), false),
                ("t".into(), "b".into(), true)
            ]
        );
    }
}
