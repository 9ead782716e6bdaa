//! The shared vocabulary of every stage.
//!
//! Cluster stacks have two spellings of the same version (dash form in tags, dot form in
//! metadata and asset names) and a positional tag grammar that CSO parses by splitting on
//! `-`. Getting either wrong produces releases the operator cannot read, so the types in
//! this module are the *only* place that formats or parses them.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub mod scs;

/// Why a name or version could not be parsed. Carries the offending input so the caller can
/// say which file or field held it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error(
        "`{input}` is not a Kubernetes version: expected `v<major>.<minor>.<patch>`, e.g. `v1.34.7`"
    )]
    KubeVersion { input: String },
    #[error("`{input}` is not a Kubernetes minor: expected `<major>.<minor>`, e.g. `1.34`")]
    Minor { input: String },
    #[error(
        "`{input}` is not a valid {what}: use lowercase letters and digits only (no `-`: CSO splits release tags on `-`)"
    )]
    StackPart { what: &'static str, input: String },
    #[error(
        "`{input}` is not a stack: write it `provider/name` (e.g. `openstack/{input}`); the provider is missing"
    )]
    NoProvider { input: String },
    #[error(
        "`{input}` is not a cluster-stack version: expected `v<N>` or `v<N>-<channel>.<patch>` (e.g. `v2`, `v0-sha.azlfam7`)"
    )]
    Version { input: String },
    #[error(
        "`{input}` is not a cluster-stack release tag: expected `<provider>-<name>-<major>-<minor>-v<N>` (e.g. `openstack-scs2-1-34-v2`)"
    )]
    ReleaseName { input: String },
}

/// A GA Kubernetes version. Strict on purpose: pre-releases (`-rc.0`) and build metadata are
/// never something the bot ships.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubeVersion {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
}

impl KubeVersion {
    /// The minor this patch belongs to: what stacks, tags and ClusterStack resources are keyed by.
    pub fn minor(&self) -> Minor {
        Minor {
            major: self.major,
            minor: self.minor,
        }
    }
}

fn parse_digits(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0'))
    {
        return None;
    }
    s.parse().ok()
}

impl FromStr for KubeVersion {
    type Err = ModelError;
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let err = || ModelError::KubeVersion {
            input: input.to_string(),
        };
        let rest = input.strip_prefix('v').ok_or_else(err)?;
        let mut parts = rest.split('.');
        let (Some(a), Some(b), Some(c), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(err());
        };
        Ok(KubeVersion {
            major: parse_digits(a).ok_or_else(err)?,
            minor: parse_digits(b).ok_or_else(err)?,
            patch: parse_digits(c).ok_or_else(err)?,
        })
    }
}

impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// A Kubernetes minor (`1.34`). Parsed from a string, never from a YAML float, because
/// `1.30` as a float is `1.3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Minor {
    pub major: u64,
    pub minor: u64,
}

impl Minor {
    /// `1-34`: the form used inside tags, chart names and output directories.
    pub fn dashed(&self) -> String {
        format!("{}-{}", self.major, self.minor)
    }
}

impl FromStr for Minor {
    type Err = ModelError;
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let err = || ModelError::Minor {
            input: input.to_string(),
        };
        let rest = input.strip_prefix('v').unwrap_or(input);
        let (a, b) = rest.split_once('.').ok_or_else(err)?;
        Ok(Minor {
            major: parse_digits(a).ok_or_else(err)?,
            minor: parse_digits(b).ok_or_else(err)?,
        })
    }
}

impl fmt::Display for Minor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// `provider/name` of a cluster stack, e.g. `openstack/scs2`. Both parts are restricted to
/// `[a-z0-9]+` because CSO parses tags positionally on `-` (csctl does not check this).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StackId {
    pub provider: String,
    pub name: String,
}

fn check_stack_part(what: &'static str, s: &str) -> Result<(), ModelError> {
    if s.is_empty()
        || s.len() > 63
        || !s
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    {
        return Err(ModelError::StackPart {
            what,
            input: s.to_string(),
        });
    }
    Ok(())
}

impl StackId {
    /// Validating constructor: the only way to get a `StackId`, so every one can be put in a tag.
    pub fn new(provider: &str, name: &str) -> Result<Self, ModelError> {
        check_stack_part("provider", provider)?;
        check_stack_part("stack name", name)?;
        Ok(StackId {
            provider: provider.to_string(),
            name: name.to_string(),
        })
    }
}

impl FromStr for StackId {
    type Err = ModelError;
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        match input.split_once('/') {
            Some((p, n)) => StackId::new(p, n),
            None => Err(ModelError::NoProvider {
                input: input.to_string(),
            }),
        }
    }
}

impl fmt::Display for StackId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.provider, self.name)
    }
}

/// A cluster-stack component version as CSO models it (`pkg/version`): `v<N>` on the stable
/// channel, or `v<N>-<channel>.<patch>` (dot form) / `v<N>-<channel>-<patch>` (dash form).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StackVersion {
    pub major: u64,
    /// `None` for the stable channel.
    pub pre: Option<(String, String)>,
}

fn is_word(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl StackVersion {
    /// A stable-channel version `v<n>`.
    pub fn stable(n: u64) -> Self {
        StackVersion {
            major: n,
            pre: None,
        }
    }

    /// csctl's hash-mode version `v0-sha.<first 7 of the cleaned hash>`.
    pub fn hash_mode(clean_hash: &str) -> Self {
        let short: String = clean_hash.chars().take(7).collect();
        StackVersion {
            major: 0,
            pre: Some(("sha".to_string(), short)),
        }
    }

    /// Whether this is on the stable channel (the only one the bot numbers).
    pub fn is_stable(&self) -> bool {
        self.pre.is_none()
    }

    fn parse_with(input: &str, sep: char) -> Result<Self, ModelError> {
        let err = || ModelError::Version {
            input: input.to_string(),
        };
        let rest = input.strip_prefix('v').ok_or_else(err)?;
        let (num, pre) = match rest.split_once('-') {
            None => (rest, None),
            Some((num, tail)) => {
                let (ch, patch) = tail.split_once(sep).ok_or_else(err)?;
                if !is_word(ch) || !is_word(patch) {
                    return Err(err());
                }
                (num, Some((ch.to_string(), patch.to_string())))
            }
        };
        // No leading zeros: `v01` would be a second spelling of `v1`, and two tags for one
        // release break the "one release per name" rule.
        Ok(StackVersion {
            major: parse_digits(num).ok_or_else(err)?,
            pre,
        })
    }

    /// Parse the dot form used in `metadata.yaml`, asset names and `ClusterStack.spec.versions`.
    pub fn parse_dot(input: &str) -> Result<Self, ModelError> {
        Self::parse_with(input, '.')
    }

    /// Parse the dash form used in tags and ClusterStackRelease names.
    pub fn parse_dash(input: &str) -> Result<Self, ModelError> {
        Self::parse_with(input, '-')
    }

    /// `v2` / `v0-sha.azlfam7`.
    pub fn dot(&self) -> String {
        match &self.pre {
            None => format!("v{}", self.major),
            Some((c, p)) => format!("v{}-{}.{}", self.major, c, p),
        }
    }

    /// `v2` / `v0-sha-azlfam7`.
    pub fn dash(&self) -> String {
        match &self.pre {
            None => format!("v{}", self.major),
            Some((c, p)) => format!("v{}-{}-{}", self.major, c, p),
        }
    }

    /// The next stable version. Only stable versions are bumped by the bot; csctl's
    /// "replace every number" bump is deliberately not reproduced.
    pub fn next_stable(&self) -> Self {
        StackVersion::stable(self.major + 1)
    }
}

impl fmt::Display for StackVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.dot())
    }
}

/// A release of one stack for one minor: `openstack-scs2-1-34-v2`. The tag, the GitHub release
/// name, the OCI tag and the release directory are all this string (dash form).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReleaseName {
    pub stack: StackId,
    pub minor: Minor,
    pub version: StackVersion,
}

impl ReleaseName {
    /// `openstack-scs2-1-34`: the per-minor prefix shared by tags, chart names and the
    /// Helm release name CSO uses.
    pub fn prefix(&self) -> String {
        series_prefix(&self.stack, self.minor)
    }

    /// The only cluster-class chart name CSO will find (`<prefix>-cluster-class`).
    pub fn cluster_class_chart(&self) -> String {
        format!("{}-cluster-class", self.prefix())
    }

    /// Parse a tag as CSO does (5 or 7 dash-separated parts), for listing existing releases.
    pub fn parse(input: &str) -> Result<Self, ModelError> {
        let err = || ModelError::ReleaseName {
            input: input.to_string(),
        };
        let parts: Vec<&str> = input.split('-').collect();
        if parts.len() != 5 && parts.len() != 7 {
            return Err(err());
        }
        let stack = StackId::new(parts[0], parts[1]).map_err(|_| err())?;
        let major = parse_digits(parts[2]).ok_or_else(err)?;
        let minor = parse_digits(parts[3]).ok_or_else(err)?;
        let version = StackVersion::parse_dash(&parts[4..].join("-")).map_err(|_| err())?;
        Ok(ReleaseName {
            stack,
            minor: Minor { major, minor },
            version,
        })
    }
}

/// `<provider>-<name>-<major>-<minor>` for a stack and minor.
pub fn series_prefix(stack: &StackId, minor: Minor) -> String {
    format!("{}-{}-{}", stack.provider, stack.name, minor.dashed())
}

impl fmt::Display for ReleaseName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.prefix(), self.version.dash())
    }
}

macro_rules! serde_via_string {
    ($t:ty, $parse:expr) => {
        impl Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                ($parse)(&s).map_err(serde::de::Error::custom)
            }
        }
    };
}
serde_via_string!(KubeVersion, KubeVersion::from_str);
serde_via_string!(Minor, Minor::from_str);
serde_via_string!(StackId, StackId::from_str);
serde_via_string!(StackVersion, StackVersion::parse_dot);
serde_via_string!(ReleaseName, ReleaseName::parse);

/// The node image a release set pins: the name Glance and the ClusterClass use, where it is
/// downloaded from, and the sha256 verified against the upstream CHECKSUM file.
///
/// Stacks whose provider has no image to import (Docker's kind nodes) have none: every field
/// is empty ([`NodeImage::is_none`]) and the lock leaves it out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeImage {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub url: String,
    /// 64 lowercase hex characters; never filled in without having been verified (empty when
    /// unknown, e.g. for a stack adopted from a tree that carries no checksum).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sha256: String,
    /// The image's `build_date` as the openstack-image-manager list (`kubernetes.yaml`) gives
    /// it. Upstream's generator (`hack/generate_openstack_image_manager_yaml.sh`) writes the
    /// day it adds the entry; stackbot records it here so rendering needs no network. `None`
    /// when unknown (never guessed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_date: Option<chrono::NaiveDate>,
}

impl NodeImage {
    /// The stack pins no node image.
    pub fn is_none(&self) -> bool {
        self.name.is_empty() && self.url.is_empty() && self.sha256.is_empty()
    }
}

/// Whether `s` is a sha256 as images and checksum files write it: 64 lowercase hex characters.
pub fn is_sha256(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// One Helm chart dependency of the stack (ccm, csi, cni, metrics-server...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Component {
    pub chart: String,
    pub repository: String,
    pub version: String,
    /// The chart archive digest from the Helm index, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// For a chart vendored with a `Chart.lock` (`cluster-addon/*/charts/*.tgz`): when this
    /// version was locked, the `generated:` Helm writes (Go RFC 3339 with nanoseconds, as
    /// written). adopt reads it from the tree; `render --release-set` records the moment it
    /// fetched the archive. Unknown otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locked_at: Option<String>,
}

/// Everything a cluster-stack release for one minor pins. Rendering is a pure function of
/// this plus the templates, which is what makes `render --check` and reproducible packages
/// possible.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReleaseSet {
    pub stack: StackId,
    pub kubernetes: KubeVersion,
    /// When upstream published this patch (drives the SCS 0210 deadline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Empty for stacks without a node image (left out of the lock).
    #[serde(default, skip_serializing_if = "NodeImage::is_none")]
    pub node_image: NodeImage,
    /// Keyed by a short component key from the config (e.g. `ccm`, `csi`, `cni`, `metrics-server`).
    pub components: BTreeMap<String, Component>,
}

impl ReleaseSet {
    /// The minor this set is for.
    pub fn minor(&self) -> Minor {
        self.kubernetes.minor()
    }

    /// What in this set is older than in `shipped` (a set already released): the Kubernetes
    /// patch, and every component whose chart is the same and whose version is a lower semver.
    /// Empty when nothing went backwards. Versions that are not semver, and components that
    /// changed chart or repository, cannot be compared and are not reported.
    pub fn regressions_since(&self, shipped: &ReleaseSet) -> Vec<String> {
        let mut out = Vec::new();
        if self.kubernetes < shipped.kubernetes {
            out.push(format!(
                "Kubernetes {} is older than {}",
                self.kubernetes, shipped.kubernetes
            ));
        }
        for (key, c) in &self.components {
            let Some(old) = shipped.components.get(key) else {
                continue;
            };
            if old.chart != c.chart || old.repository != c.repository {
                continue;
            }
            let parse = |v: &str| semver::Version::parse(v.trim_start_matches('v')).ok();
            if let (Some(new), Some(was)) = (parse(&c.version), parse(&old.version))
                && new < was
            {
                out.push(format!(
                    "{key} ({}) {} is older than {}",
                    c.chart, c.version, old.version
                ));
            }
        }
        out
    }
}

/// An in-memory stack or release tree (defined by `stackbot-package`, whose byte-level
/// packaging reads and writes it).
pub use stackbot_package::FileTree;

/// `owner/name` of a repository on the forge (the cluster-stacks repository, tenants).
///
/// Lives in the vocabulary rather than in `forge` because configuration names repositories
/// too, and `config` must not depend on the forge.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct RepoRef {
    pub owner: String,
    pub name: String,
}

impl RepoRef {
    /// Parse `owner/name`.
    pub fn parse(s: &str) -> Option<RepoRef> {
        let (o, n) = s.split_once('/')?;
        if o.is_empty() || n.is_empty() || n.contains('/') {
            return None;
        }
        Some(RepoRef {
            owner: o.into(),
            name: n.into(),
        })
    }
}

impl std::fmt::Display for RepoRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

/// A patch newer than what a series can release, and why it was passed over.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SteppedOver {
    pub patch: KubeVersion,
    /// Upstream answered an error (transient: the next run may release it).
    pub transient: bool,
    /// What upstream answered, naming the URL.
    pub reason: String,
}

impl std::fmt::Display for SteppedOver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} skipped: {}", self.patch, self.reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_version_is_strict() {
        assert_eq!(
            "v1.34.7".parse::<KubeVersion>().unwrap().to_string(),
            "v1.34.7"
        );
        for bad in [
            "1.34.7",
            "v1.34",
            "v1.34.7-rc.0",
            "v1.034.7",
            "v1.34.7.1",
            "v1.34.x",
            "",
        ] {
            assert!(
                bad.parse::<KubeVersion>().is_err(),
                "{bad} must be rejected"
            );
        }
    }

    #[test]
    fn regressions_compare_the_patch_and_components_by_semver() {
        let comp = |v: &str| Component {
            chart: "cilium".into(),
            repository: "https://helm.cilium.io/".into(),
            version: v.into(),
            digest: None,
            locked_at: None,
        };
        let set = |k: &str, cni: &str| ReleaseSet {
            stack: StackId::new("openstack", "scs2").unwrap(),
            kubernetes: k.parse().unwrap(),
            published_at: None,
            node_image: NodeImage::default(),
            components: BTreeMap::from([("cni".to_string(), comp(cni))]),
        };
        let shipped = set("v1.35.5", "1.18.10");
        assert!(
            set("v1.35.5", "1.18.10")
                .regressions_since(&shipped)
                .is_empty()
        );
        assert!(
            set("v1.35.6", "1.18.10")
                .regressions_since(&shipped)
                .is_empty()
        );
        // 1.18.9 < 1.18.10 although "1.18.9" > "1.18.10" as strings.
        let r = set("v1.35.4", "1.18.9").regressions_since(&shipped);
        assert_eq!(
            r,
            [
                "Kubernetes v1.35.4 is older than v1.35.5",
                "cni (cilium) 1.18.9 is older than 1.18.10"
            ]
        );
        // A different chart is not a downgrade of the old one.
        let mut other = set("v1.35.5", "0.1.0");
        other.components.get_mut("cni").unwrap().chart = "calico".into();
        assert!(other.regressions_since(&shipped).is_empty());
    }

    #[test]
    fn minor_parses_from_string_not_float() {
        let m: Minor = "1.30".parse().unwrap();
        assert_eq!(m.minor, 30);
        assert_eq!(m.dashed(), "1-30");
        assert!("1.3x".parse::<Minor>().is_err());
    }

    #[test]
    fn stack_parts_reject_dashes() {
        assert!(StackId::new("openstack", "scs2").is_ok());
        assert!(StackId::new("open-stack", "scs2").is_err());
        assert!(StackId::new("openstack", "scs-2").is_err());
        assert!(StackId::new("OpenStack", "scs2").is_err());
    }

    #[test]
    fn versions_have_dot_and_dash_forms() {
        let v = StackVersion::parse_dot("v0-sha.azlfam7").unwrap();
        assert_eq!(v.dash(), "v0-sha-azlfam7");
        assert_eq!(StackVersion::parse_dash("v0-sha-azlfam7").unwrap(), v);
        assert_eq!(
            StackVersion::parse_dot("v2").unwrap(),
            StackVersion::stable(2)
        );
        assert!(StackVersion::parse_dot("2").is_err());
        assert!(StackVersion::parse_dot("v1-alpha").is_err());
        assert_eq!(StackVersion::stable(2).next_stable().dot(), "v3");
    }

    #[test]
    fn release_names_round_trip_like_cso() {
        let r = ReleaseName::parse("openstack-scs2-1-34-v2").unwrap();
        assert_eq!(r.to_string(), "openstack-scs2-1-34-v2");
        assert_eq!(r.cluster_class_chart(), "openstack-scs2-1-34-cluster-class");
        let h = ReleaseName::parse("openstack-scs2-1-34-v0-sha-azlfam7").unwrap();
        assert_eq!(h.version.dot(), "v0-sha.azlfam7");
        for bad in [
            "latest",
            "v1.0.0",
            "openstack-scs2-1-34",
            "openstack-scs2-1-x-v2",
            "a-b-1-2-v1-x",
            // Second spellings of `openstack-scs2-1-34-v1` (found by the release_name fuzzer).
            "openstack-scs2-1-34-v01",
            "openstack-scs2-01-34-v1",
            "openstack-scs2-1-34-v00-sha-abc",
        ] {
            assert!(ReleaseName::parse(bad).is_err(), "{bad}");
        }
    }
}
