//! `stackbot.yaml`: what to track, where to publish, who to tell.
//!
//! The file is the bot's whole desired state, so it is parsed strictly: unknown keys are
//! errors with file and line (a typo must not silently disable a tenant), and every semantic
//! check runs before anything is fetched, rendered or written.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::{KubeVersion, Minor, StackId};

/// A configuration problem, always naming the file and, where the parser knows it, the line.
#[derive(Debug, thiserror::Error)]
#[error("{file}{}: {message}\n  hint: {hint}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub message: String,
    pub hint: String,
}

/// The whole configuration file.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Where upstream facts come from (GitHub releases API, version markers, schedule).
    #[serde(default)]
    pub upstream: UpstreamConfig,
    /// The cluster stacks this bot renders and releases.
    pub stacks: Vec<StackConfig>,
    /// Where the cluster-stacks repository and its releases live.
    #[serde(default)]
    pub forge: ForgeConfig,
    /// Release targets: the forge's releases, an OCI registry, or both.
    #[serde(default = "default_publish")]
    pub publish: Vec<PublishTarget>,
    /// The OCI registry target (required when `publish` lists `oci`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci: Option<OciConfig>,
    /// Tenant GitOps repositories whose `ClusterStack` resources follow our releases.
    #[serde(default)]
    pub tenants: Vec<TenantConfig>,
    /// The status dashboard: one issue in `forge.repository` that `release` keeps current.
    #[serde(default)]
    pub dashboard: DashboardConfig,
    /// Bounds on what is read from tenant repositories and upstream: no tenant file and no
    /// upstream answer can take the run's memory or time (docs/reliability.md, "Inputs
    /// nobody here controls").
    #[serde(default)]
    pub limits: LimitsConfig,
}

/// Bounds on input nobody here controls. A document over one is refused by name (the file or
/// URL, the line, and the setting below that would raise it): a tenant file fails that tenant
/// alone (exit 3), an upstream answer is an upstream error for the series that depend on it
/// (exit 1); everything else goes on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Each tenant file a `files` or `clusters` glob matches (all its documents together).
    pub tenant_files: YamlLimits,
    /// Every upstream answer: Kubernetes schedule, Helm indexes, release lists, CVE data,
    /// CHECKSUM files.
    pub upstream: UpstreamLimits,
}

/// Limits of a YAML file read whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct YamlLimits {
    /// Largest file, in bytes (refused before it is parsed).
    pub max_bytes: u64,
    /// Deepest nesting of mappings and sequences (at most 128, the YAML parser's own limit).
    pub max_depth: usize,
    /// Most nodes the file may produce, each alias counted as every node it repeats (the
    /// alias-expansion budget; it also bounds the memory the parsed file takes).
    pub max_nodes: u64,
}

impl Default for YamlLimits {
    /// 500,000 nodes: a file at the limit costs the run about 110 MiB (scripts/bench-hostile);
    /// a tenant file of 10,000 ClusterStack documents has 290,000.
    fn default() -> Self {
        YamlLimits {
            max_bytes: 64 * 1024 * 1024,
            max_depth: 64,
            max_nodes: 500_000,
        }
    }
}

/// Limits of upstream answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct UpstreamLimits {
    /// Largest answer, in bytes: refused while it is read, before it is parsed.
    pub max_bytes: u64,
    /// Deepest nesting of a YAML answer (at most 128).
    pub max_depth: usize,
    /// Most nodes a YAML answer built whole (`schedule.yaml`) may produce, aliases expanded.
    /// A Helm index is searched as it is read, keeping only the best version per rule, so
    /// its size is bounded by `max_bytes` and only the nodes its aliases repeat count here.
    pub max_nodes: u64,
    /// Largest node-image CHECKSUM file, in bytes: one line `<sha256>  <file>` is about 100.
    pub max_checksum_bytes: u64,
}

impl Default for UpstreamLimits {
    fn default() -> Self {
        UpstreamLimits {
            max_bytes: 64 * 1024 * 1024,
            max_depth: 64,
            max_nodes: 1_000_000,
            max_checksum_bytes: 4096,
        }
    }
}

impl LimitsConfig {
    /// The limits every tenant file is read with.
    pub fn tenant_files(&self) -> crate::yaml::Limits {
        let l = &self.tenant_files;
        crate::yaml::Limits {
            max_bytes: l.max_bytes,
            max_depth: l.max_depth,
            max_nodes: l.max_nodes,
            setting: Some("limits.tenant_files"),
        }
    }
}

impl UpstreamLimits {
    /// The limits every upstream YAML document is read with.
    pub fn yaml(&self) -> crate::yaml::Limits {
        crate::yaml::Limits {
            max_bytes: self.max_bytes,
            max_depth: self.max_depth,
            max_nodes: self.max_nodes,
            setting: Some("limits.upstream"),
        }
    }
}

fn default_publish() -> Vec<PublishTarget> {
    vec![PublishTarget::Forge]
}

impl Config {
    /// Whether `publish` lists the forge: its releases are read, written and listed to tenants.
    pub fn publishes_on_forge(&self) -> bool {
        self.publish.contains(&PublishTarget::Forge)
    }

    /// Whether `publish` lists an OCI registry: its tags are read and pushed.
    pub fn publishes_on_oci(&self) -> bool {
        self.publish.contains(&PublishTarget::Oci)
    }
}

/// Where a release is published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PublishTarget {
    /// Releases on the configured forge (GitHub or local). `github` is accepted as an alias.
    #[serde(alias = "github", alias = "local")]
    Forge,
    /// An OCI repository, pushed as csctl pushes.
    Oci,
}

/// Upstream endpoints. Every base URL is configurable so tests and mirrors can point elsewhere.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct UpstreamConfig {
    /// GitHub REST API base used for the Kubernetes releases list.
    pub github_api: String,
    /// `owner/name` of the Kubernetes repository.
    pub kubernetes_repo: String,
    /// Base URL of the `stable-1.NN.txt` version markers (fallback source).
    pub markers_url: String,
    /// URL of kubernetes/website `data/releases/schedule.yaml`.
    pub schedule_url: String,
    /// The official Kubernetes CVE feed (JSON Feed 1.1): which CVEs exist (SCS 0210's
    /// critical-CVE rule).
    pub cve_feed_url: String,
    /// Where one CVE record (CVE JSON 5.x) is read; `{id}` is replaced by the CVE id.
    pub cve_record_url: String,
    /// Name of the environment variable holding an optional GitHub token for upstream reads.
    pub token_env: String,
    /// Replay a saved upstream snapshot instead of using the network (relative to this file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<PathBuf>,
    /// Directory for the ETag cache (relative to this file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_dir: Option<PathBuf>,
}

impl Default for UpstreamConfig {
    fn default() -> Self {
        UpstreamConfig {
            github_api: "https://api.github.com".into(),
            kubernetes_repo: "kubernetes/kubernetes".into(),
            markers_url: "https://dl.k8s.io/release".into(),
            schedule_url: "https://raw.githubusercontent.com/kubernetes/website/main/data/releases/schedule.yaml"
                .into(),
            cve_feed_url: crate::upstream::cve::DEFAULT_FEED_URL.into(),
            cve_record_url: crate::upstream::cve::DEFAULT_RECORD_URL.into(),
            token_env: "GITHUB_TOKEN".into(),
            snapshot: None,
            cache_dir: None,
        }
    }
}

/// One cluster stack (provider + name) rendered for several Kubernetes minors.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StackConfig {
    /// csctl `provider.type`, e.g. `openstack` (lowercase letters and digits only).
    pub provider: String,
    /// csctl `clusterStackName`, e.g. `scs2` (lowercase letters and digits only).
    pub name: String,
    /// Template directory (relative to this file): `.tera` files are rendered, others copied.
    pub templates: PathBuf,
    /// Output directory (relative to this file); each minor goes to `<output>/<major>-<minor>/`.
    pub output: PathBuf,
    /// `supported` (every minor not past end of life on the run's date) or a list like `["1.33", "1.34"]`.
    pub minors: MinorSelection,
    /// How to find the node image for a Kubernetes version. Leave it out for providers without
    /// an image to import (e.g. `docker`): release sets then pin no node image.
    #[serde(default, skip_serializing_if = "NodeImageRule::is_none")]
    pub node_image: NodeImageRule,
    /// Helm chart components keyed by a short name used in templates (`ccm`, `csi`, `cni`, ...).
    #[serde(default)]
    pub components: BTreeMap<String, ComponentRule>,
    /// The conformance gate (docs/conformance-gate.md): a new release is first
    /// published as a candidate (`<prefix>-v0-sha-<7>`, with the same assets, wherever
    /// `publish` says: a forge pre-release, an OCI tag), tested, and becomes the stable `vN`
    /// only when its test passes. Leave it out to publish `vN` directly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateConfig>,
}

/// How a stack's candidates are tested. Exactly one of `command` and `workflow`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GateConfig {
    /// Local forge: the test command and its arguments (no shell; relative to this file's
    /// directory, where it runs). It is started in the background with the candidate in
    /// `STACKBOT_CANDIDATE` (tag), `STACKBOT_CANDIDATE_VERSION` (dot form, for
    /// `ClusterStack.spec.versions`), `STACKBOT_CANDIDATE_DIR` (its assets),
    /// `STACKBOT_STABLE_TAG`, `STACKBOT_GATE_ATTEMPT`, and writes JUnit XML (`*.xml`) into
    /// `STACKBOT_RESULTS_DIR`; exit 0 with no failed test case passes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// GitHub: the workflow to dispatch (`workflow_dispatch`), by its file name in
    /// `.github/workflows/` (`conformance.yml`) or its numeric id. It is dispatched on the base
    /// branch with the inputs `candidate`, `candidate_version`, `stable_tag`, `attempt` and
    /// `gate_id` (and, when `publish` lists `oci`, `candidate_oci` and `candidate_oci_digest`:
    /// where the candidate is in the registry); its `run-name` must contain
    /// `${{ inputs.gate_id }}`, and it uploads the result
    /// (JUnit XML or sonobuoy's results tarball) as the artifact named by `artifact`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    /// GitHub: the name of the workflow run's artifact that holds the conformance result.
    #[serde(default = "default_gate_artifact")]
    pub artifact: String,
    /// Minutes an attempt may run without a result before it counts as lost (and is retried
    /// once).
    #[serde(default = "default_gate_timeout")]
    pub timeout_minutes: u64,
}

fn default_gate_timeout() -> u64 {
    360
}

fn default_gate_artifact() -> String {
    "conformance".into()
}

impl StackConfig {
    /// The validated id; config validation guarantees this succeeds after `load`.
    pub fn id(&self) -> StackId {
        StackId::new(&self.provider, &self.name).expect("validated at load")
    }

    /// Whether `render` renders the lock's set of `minor` for this stack: `minors: supported`
    /// renders every set the lock holds, a list only the minors it names.
    pub fn renders(&self, minor: crate::model::Minor) -> bool {
        match &self.minors {
            MinorSelection::List(list) => list
                .iter()
                .any(|m| m.parse::<crate::model::Minor>().ok() == Some(minor)),
            _ => true,
        }
    }
}

/// Which minors a stack tracks.
// Read by hand rather than as an untagged enum: the derived reader can only say "did not
// match any variant", at the line of the enclosing stack, while a person needs to hear at the
// `minors:` line itself that `1.34` must be quoted or that `supportd` means `supported`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum MinorSelection {
    /// The keyword `supported`.
    Keyword(MinorKeyword),
    /// Explicit minors, as strings (`"1.34"`, quoted so YAML does not read a float).
    List(Vec<String>),
}

impl<'de> Deserialize<'de> for MinorSelection {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(MinorSelectionVisitor)
    }
}

struct MinorSelectionVisitor;

impl<'de> serde::de::Visitor<'de> for MinorSelectionVisitor {
    type Value = MinorSelection;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("`supported` or a list of quoted minors such as [\"1.33\", \"1.34\"]")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        if v == "supported" {
            return Ok(MinorSelection::Keyword(MinorKeyword::Supported));
        }
        let hint = match crate::error::did_you_mean(v, &["supported"]) {
            Some(s) => format!("did you mean `{s}`?"),
            None if v.parse::<Minor>().is_ok() => format!("write a list: [\"{v}\"]"),
            None => "write `supported` or a list such as [\"1.33\", \"1.34\"]".to_string(),
        };
        Err(E::custom(format!(
            "`minors: {v}` is not a minor selection; {hint}"
        )))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Err(E::custom(unquoted_minor(&v.to_string(), true)))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Err(E::custom(unquoted_minor(&v.to_string(), true)))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Err(E::custom(unquoted_minor(&v.to_string(), true)))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(QuotedMinor(m)) = seq.next_element()? {
            out.push(m);
        }
        Ok(MinorSelection::List(out))
    }
}

/// YAML reads an unquoted `1.34` as a number (and `1.30` as 1.3): say so, and how to write it.
fn unquoted_minor(number: &str, scalar: bool) -> String {
    if !number.contains('.') {
        return format!(
            "`{number}` is a number, not a minor; write `supported` or a list of quoted minors such as [\"1.33\", \"1.34\"]"
        );
    }
    let written = number;
    if scalar {
        format!(
            "`minors: {number}` is a number, not a minor selection; quote the minor: [\"{written}\"] (YAML reads unquoted 1.30 as 1.3)"
        )
    } else {
        format!(
            "minor {number} is a number; quote the minor: \"{written}\" (YAML reads unquoted 1.30 as 1.3)"
        )
    }
}

/// One entry of a `minors:` list: a string, never a YAML number.
struct QuotedMinor(String);

impl<'de> Deserialize<'de> for QuotedMinor {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = QuotedMinor;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a quoted minor such as \"1.34\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<QuotedMinor, E> {
                Ok(QuotedMinor(v.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<QuotedMinor, E> {
                Err(E::custom(unquoted_minor(&v.to_string(), false)))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<QuotedMinor, E> {
                Err(E::custom(unquoted_minor(&v.to_string(), false)))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<QuotedMinor, E> {
                Err(E::custom(unquoted_minor(&v.to_string(), false)))
            }
        }
        d.deserialize_any(V)
    }
}

/// Keywords for [`MinorSelection`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MinorKeyword {
    Supported,
}

/// Node image location rule. `url` and `name` are patterns with `{version}` (`v1.34.7`),
/// `{minor}` (`1.34`) and any variable from the matching `vars_by_version` entry (e.g.
/// `{ubuntu}`), so the Ubuntu 22.04 → 24.04 path switch is data, not code.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeImageRule {
    /// Image URL pattern; the checksum is fetched from `<url>.CHECKSUM`.
    pub url: String,
    /// Glance image name pattern, e.g. `ubuntu-capi-image-{version}`.
    pub name: String,
    /// Variables by Kubernetes version: the entry with the highest `since` not above the version applies.
    #[serde(default)]
    pub vars_by_version: Vec<VersionVars>,
}

impl NodeImageRule {
    /// No node image is configured (both patterns empty).
    pub fn is_none(&self) -> bool {
        self.url.is_empty() && self.name.is_empty()
    }

    /// The variables in force for `v`: those of the entry with the highest `since` not above
    /// `v`. Versions before every `since` get no variables (config validation makes sure the
    /// patterns then need none).
    pub fn vars_for(&self, v: KubeVersion) -> BTreeMap<String, String> {
        self.vars_by_version
            .iter()
            .filter_map(|vv| vv.since.parse::<KubeVersion>().ok().map(|s| (s, vv)))
            .filter(|(since, _)| *since <= v)
            .max_by_key(|(since, _)| *since)
            .map(|(_, vv)| vv.vars.clone())
            .unwrap_or_default()
    }

    /// The node image `(name, url)` for a Kubernetes version: `{version}` → `v1.34.7`,
    /// `{minor}` → `1.34`, `{<var>}` → the variable from [`Self::vars_for`]. Pure, so the
    /// detector and the renderer agree on names without sharing any I/O. A placeholder with
    /// no value is left as written; `config::load` refuses such patterns up front.
    pub fn expand(&self, v: KubeVersion) -> (String, String) {
        let vars = self.vars_for(v);
        (
            expand_pattern(&self.name, v, &vars),
            expand_pattern(&self.url, v, &vars),
        )
    }
}

/// A `{name}` in a node-image pattern (an unclosed `{` is text).
static PLACEHOLDER: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r"\{([^}]*)\}").expect("static regex"));

/// Substitute `{version}`, `{minor}` and variables in one pass, so a value containing braces
/// is never expanded again; an unknown placeholder stays as written.
fn expand_pattern(pattern: &str, v: KubeVersion, vars: &BTreeMap<String, String>) -> String {
    let value = |c: &regex::Captures| match &c[1] {
        "version" => v.to_string(),
        "minor" => v.minor().to_string(),
        other => vars.get(other).cloned().unwrap_or_else(|| c[0].to_string()),
    };
    PLACEHOLDER.replace_all(pattern, value).into_owned()
}

/// The placeholder names used in a pattern (`{ubuntu}` → `ubuntu`), for validation.
fn placeholders(pattern: &str) -> Vec<&str> {
    PLACEHOLDER
        .captures_iter(pattern)
        .map(|c| c.get(1).map_or("", |m| m.as_str()))
        .collect()
}

/// Variables that apply from a Kubernetes version on.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VersionVars {
    /// First Kubernetes version (`v1.33.4`) these variables apply to.
    pub since: String,
    /// Pattern variables, e.g. `{ubuntu: "2404"}`.
    pub vars: BTreeMap<String, String>,
}

/// A Helm chart the stack depends on and how its version is chosen.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ComponentRule {
    /// Chart name in the repository index.
    pub chart: String,
    /// Helm repository URL (its `index.yaml` is read).
    pub repository: String,
    /// Version rule.
    pub version: VersionRule,
}

/// How a component version is chosen from the Helm index.
///
/// Written as a one-key map: `{series: "2.{minor}"}`, `{pin: 1.18.9}` or
/// `{range: ">=1.18.0, <1.19.0"}`.
// Read and written by hand (see `VersionRuleMap`): as a derived enum, the YAML reader would
// expect a tag (`!series`) instead of a one-key map.
#[derive(Debug, Clone, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum VersionRule {
    /// `2.{minor}`: the highest GA `2.<k8s minor>.x` (never a string-prefix match).
    Series(String),
    /// An exact version.
    Pin(String),
    /// A semver range, e.g. `>=1.18.0, <1.19.0`; the highest GA match wins.
    Range(String),
}

/// The map form of [`VersionRule`] on the wire. `expecting` is what a wrong value is told
/// (without it, serde names this Rust type: "expected struct VersionRuleMap").
#[derive(Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a version rule: a map with one of `series`, `pin` or `range`, e.g. `{ pin: \"1.18.9\" }` or `{ series: \"2.{minor}\" }`"
)]
struct VersionRuleMap {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    series: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    range: Option<String>,
}

impl Serialize for VersionRule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (series, pin, range) = match self.clone() {
            VersionRule::Series(v) => (Some(v), None, None),
            VersionRule::Pin(v) => (None, Some(v), None),
            VersionRule::Range(v) => (None, None, Some(v)),
        };
        VersionRuleMap { series, pin, range }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for VersionRule {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let VersionRuleMap { series, pin, range } = VersionRuleMap::deserialize(d)?;
        match (series, pin, range) {
            (Some(v), None, None) => Ok(VersionRule::Series(v)),
            (None, Some(v), None) => Ok(VersionRule::Pin(v)),
            (None, None, Some(v)) => Ok(VersionRule::Range(v)),
            _ => Err(serde::de::Error::custom(
                "a version rule needs exactly one of `series`, `pin` or `range`",
            )),
        }
    }
}

/// The forge holding the cluster-stacks repository and its releases.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ForgeConfig {
    /// `local` (bare git repositories and release folders on disk) or `github`.
    pub kind: ForgeKind,
    /// `owner/name` of the cluster-stacks repository.
    pub repository: String,
    /// Branch releases are committed to (or PRs target).
    pub base_branch: String,
    /// `direct`: push to the base branch; `pull-request`: open a release PR and publish after merge.
    pub mode: ReleaseMode,
    /// Local forge settings.
    pub local: LocalForgeConfig,
    /// GitHub settings.
    pub github: GithubForgeConfig,
    /// Author and committer of the bot's commits (with a GitHub App: of its tags only; GitHub
    /// authors and signs the App's commits as its bot account).
    pub committer: Committer,
}

impl Default for ForgeConfig {
    fn default() -> Self {
        ForgeConfig {
            kind: ForgeKind::Local,
            repository: "scs/cluster-stacks".into(),
            base_branch: "main".into(),
            mode: ReleaseMode::Direct,
            local: LocalForgeConfig::default(),
            github: GithubForgeConfig::default(),
            committer: Committer::default(),
        }
    }
}

/// Which forge implementation to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ForgeKind {
    Local,
    Github,
}

/// How a rendered stack reaches the base branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReleaseMode {
    Direct,
    PullRequest,
}

/// The local forge: everything under one folder, no network, no token.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LocalForgeConfig {
    /// Forge folder (relative to this file).
    pub path: PathBuf,
    /// Repositories created on first use from a directory of files: `owner/name` → directory.
    /// The local forge creates only these and `forge.repository`; any other repository a
    /// tenant names must exist already.
    pub seed: BTreeMap<String, PathBuf>,
    /// Allow the local forge under GitHub Actions (`GITHUB_ACTIONS=true`). Off by default: on
    /// a runner the local forge would "publish" to the runner's disk and report success.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_in_ci: bool,
}

impl Default for LocalForgeConfig {
    fn default() -> Self {
        LocalForgeConfig {
            path: PathBuf::from(".stackbot/forge"),
            seed: BTreeMap::new(),
            allow_in_ci: false,
        }
    }
}

/// GitHub or GitHub Enterprise.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct GithubForgeConfig {
    /// REST API base, e.g. `https://api.github.com` or `https://ghe.example.com/api/v3`.
    pub api_url: String,
    /// Upload base for release assets (defaults from `api_url`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upload_url: Option<String>,
    /// Name of the environment variable holding the token (the token itself never goes in this file).
    pub token_env: String,
    /// Minimum milliseconds between mutating requests, to stay inside GitHub's secondary rate
    /// limits (default 1000 for a remote host, 0 for loopback).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_interval_ms: Option<u64>,
    /// Most mutating requests sent in any rolling 60 minutes by one run (default 450 for a remote
    /// host, unlimited for loopback). GitHub refuses content-creating requests beyond about 500
    /// an hour; a write over this budget is not sent and the tenant fails as transient, so the
    /// next scheduled run continues where this one stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writes_per_hour: Option<u32>,
    /// Retries per request after 5xx, dropped connections and rate limits (default 6).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// Authenticate as a GitHub App instead of with a token (`token_env` is then unused): an
    /// installation token is minted per repository, with contents and pull-request write
    /// access only. See docs/github-setup.md.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<GithubAppConfig>,
    /// Directory of the GitHub answer cache (relative to this file; default: `github/` in
    /// `upstream.cache_dir`, when that is set). Reads are revalidated with their `ETag` (GitHub
    /// does not count `304 Not Modified` against the rate limit) and immutable objects are
    /// not fetched again: keep it between scheduled runs (the release workflow caches it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_dir: Option<PathBuf>,
}

/// A GitHub App stackbot authenticates as. Exactly one of `private_key_env` and
/// `private_key_file` names the App's private key (the key itself never goes in this file).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GithubAppConfig {
    /// The App ID (the App's settings page, "About").
    pub id: u64,
    /// Name of the environment variable holding the App's private key (PEM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key_env: Option<String>,
    /// Path of the App's private key file (PEM; relative to this file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key_file: Option<PathBuf>,
}

impl Default for GithubForgeConfig {
    fn default() -> Self {
        GithubForgeConfig {
            api_url: "https://api.github.com".into(),
            upload_url: None,
            token_env: "GITHUB_TOKEN".into(),
            write_interval_ms: None,
            writes_per_hour: None,
            max_retries: None,
            app: None,
            cache_dir: None,
        }
    }
}

/// The dashboard issue: `stackbot status` as Markdown, kept current by every `release` run
/// (not by `plan`, dry runs or `tenants`). One issue, found by a hidden marker in its body,
/// created once and edited in place only when its content changes.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DashboardConfig {
    /// Keep the issue current; `false` makes `release` never read or write issues.
    pub enabled: bool,
    /// Title of the issue (a title changed by hand is set back).
    pub title: String,
    /// Label put on the issue, so a run finds it with one request. The hidden marker in the
    /// body identifies it: without the label the run looks through every issue instead.
    pub label: String,
}

impl Default for DashboardConfig {
    fn default() -> Self {
        DashboardConfig {
            enabled: true,
            title: "Cluster stacks: SCS 0210 status (stackbot dashboard)".into(),
            label: "stackbot-dashboard".into(),
        }
    }
}

/// Identity used for commits and annotated tags. As a GitHub App, commits carry no custom
/// identity, so that GitHub signs them (see docs/github-setup.md, "Branches that require
/// signed commits"); the bot also knows those commits as its own.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Committer {
    pub name: String,
    pub email: String,
}

impl Default for Committer {
    fn default() -> Self {
        Committer {
            name: "stackbot".into(),
            email: "stackbot@users.noreply.github.com".into(),
        }
    }
}

/// An OCI repository target, read the way csctl and CSO read it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OciConfig {
    /// Registry host (credential scope), e.g. `registry.scs.community`. Falls back to `$OCI_REGISTRY`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<String>,
    /// Full repository reference, e.g. `registry.scs.community/kaas/cluster-stacks`. Falls back to `$OCI_REPOSITORY`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// Env var holding a bearer access token (default `OCI_ACCESS_TOKEN`).
    #[serde(default = "default_oci_token_env")]
    pub access_token_env: String,
    /// Env var holding the user name (default `OCI_USERNAME`).
    #[serde(default = "default_oci_user_env")]
    pub username_env: String,
    /// Env var holding the password (default `OCI_PASSWORD`).
    #[serde(default = "default_oci_password_env")]
    pub password_env: String,
    /// Use plain HTTP; refused for anything but a loopback registry.
    #[serde(default)]
    pub plain_http: bool,
    /// Add `org.opencontainers.image.created` (the run's date, `--now`) as oras does. Off by
    /// default: without it the manifest digest is reproducible. A re-run on another day still
    /// recognises its own release (only this annotation differs).
    #[serde(default)]
    pub created_annotation: bool,
}

fn default_oci_token_env() -> String {
    "OCI_ACCESS_TOKEN".into()
}
fn default_oci_user_env() -> String {
    "OCI_USERNAME".into()
}
fn default_oci_password_env() -> String {
    "OCI_PASSWORD".into()
}

/// A tenant GitOps repository.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TenantConfig {
    /// Unique tenant name (used in reports and `--tenant`).
    pub name: String,
    /// `owner/name` on the forge.
    pub repository: String,
    /// Branch the PR targets.
    #[serde(default = "default_main")]
    pub base_branch: String,
    /// Files or globs holding `ClusterStack` resources.
    pub files: Vec<String>,
    /// Stacks (`provider/name`) this tenant follows.
    pub stacks: Vec<String>,
    /// What to propose.
    #[serde(default)]
    pub policy: TenantPolicy,
    /// Opt-in: files or globs whose `Cluster` resources get `spec.topology.class`/`version` bumped.
    #[serde(default)]
    pub clusters: Vec<String>,
}

fn default_main() -> String {
    "main".into()
}

/// Tenant update policy.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TenantPolicy {
    /// New patch releases of a followed minor.
    pub patch: PolicyAction,
    /// A new minor of a followed stack.
    pub minor: PolicyAction,
    /// How many versions stay in `spec.versions` (at least 1).
    pub keep: u32,
    /// Minor upgrades of the tenant's `Cluster` resources (those matched by `clusters`).
    pub upgrade: UpgradePolicy,
    /// Label put on a pull request that fixes a critical CVE (CVSS 8 or more) of the version
    /// the tenant lists or runs, besides saying so in its title and body: tenants route such
    /// pull requests by label. Created in the repository when missing; empty: no label.
    pub security_label: String,
    /// Auto-merge (as `patch: automerge`) every stack pull request that fixes a critical CVE,
    /// whatever `patch` says; a pull request that also brings a new minor is left to people.
    pub automerge_security: bool,
}

impl Default for TenantPolicy {
    fn default() -> Self {
        TenantPolicy {
            patch: PolicyAction::PullRequest,
            minor: PolicyAction::PullRequest,
            keep: 2,
            upgrade: UpgradePolicy::default(),
            security_label: "security".into(),
            automerge_security: false,
        }
    }
}

/// Minor upgrades of `Cluster` resources: one minor at a time (Kubernetes upgrades a control
/// plane one minor per step), one pull request per Cluster and step on its own branch, the
/// next step only once the previous one is merged. Off by default: a minor upgrade changes
/// what runs in a tenant's cluster, so a tenant opts in.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct UpgradePolicy {
    /// Whether a Cluster running a minor older than the newest released one gets a pull request
    /// moving it to the next minor.
    pub clusters: UpgradeAction,
    /// Propose the step only once the Cluster's minor is this close (in days) to its end of
    /// life, or past it. Unset: as soon as the next minor has a release. With it set, a run
    /// that could not read the Kubernetes schedule proposes nothing new (and says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_end_of_life_days: Option<u32>,
}

/// Whether a Cluster's minor upgrade becomes a pull request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum UpgradeAction {
    /// Open a pull request for each step.
    PullRequest,
    /// List each step on the dashboard issue as a checkbox; open its pull request once a person
    /// ticks it (unticking withdraws it). Needs `dashboard.enabled`.
    Approval,
    /// Propose nothing.
    #[default]
    Ignore,
}

/// Whether a kind of update becomes a PR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyAction {
    /// Open a pull request for people to merge.
    PullRequest,
    /// `patch` only: open the pull request and ask the forge to merge it once its required
    /// checks pass (GitHub's native auto-merge). A pull request that also brings a new minor is
    /// left to people.
    Automerge,
    /// Propose nothing.
    Ignore,
}

/// A loaded configuration with the directory its relative paths are resolved against.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    pub path: PathBuf,
    pub base_dir: PathBuf,
}

impl Loaded {
    /// Resolve a path from the config relative to the config file's directory.
    pub fn resolve(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base_dir.join(p)
        }
    }

    /// Find a stack by id.
    pub fn stack(&self, id: &StackId) -> Option<&StackConfig> {
        self.config.stacks.iter().find(|s| &s.id() == id)
    }
}

impl Loaded {
    /// Parse and validate the configuration `text` read from `path`, which names the file in
    /// messages and is where its relative paths start. Reading the file is the edge's
    /// (`stackbot::config::load`): core holds no file I/O.
    pub fn parse(text: &str, path: &Path) -> Result<Loaded, ConfigError> {
        let config = parse(text, path)?;
        let base_dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        Ok(Loaded {
            config,
            path: path.to_path_buf(),
            base_dir,
        })
    }
}

/// Parse and validate configuration text; `path` is only used in messages.
pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    let config: Config = yaml_serde::from_str(text).map_err(|e| parse_error(&e, path))?;
    validate(&config, text, path)?;
    Ok(config)
}

/// A YAML or shape error as a [`ConfigError`]: the location once (in front, not again at the
/// end of the message), and for an unknown key or value the allowed one it is closest to.
fn parse_error(e: &yaml_serde::Error, path: &Path) -> ConfigError {
    let mut message = e.to_string();
    if let Some(at) = message.rfind(" at line ")
        && message[at + " at line ".len()..]
            .split_once(" column ")
            .is_some_and(|(l, c)| {
                l.chars().all(|ch| ch.is_ascii_digit()) && c.chars().all(|ch| ch.is_ascii_digit())
            })
    {
        message.truncate(at);
    }
    let hint = match unknown_and_expected(&message) {
        Some((word, expected)) => match crate::error::did_you_mean(&word, &expected) {
            Some(s) => format!("did you mean `{s}`? `stackbot schema` prints every allowed key"),
            None => "fix the field named above; `stackbot schema` prints every allowed key".into(),
        },
        None => "fix the field named above; `stackbot schema` prints every allowed key".into(),
    };
    ConfigError {
        file: path.to_path_buf(),
        line: e.location().map(|l| l.line()),
        message,
        hint,
    }
}

/// From serde's "unknown field `x`, expected one of `a`, `b`" (or "unknown variant `x`,
/// expected `a` or `b`"): the unknown word and the allowed ones.
fn unknown_and_expected(message: &str) -> Option<(String, Vec<&str>)> {
    let at = message
        .find("unknown field `")
        .map(|i| i + "unknown field `".len())
        .or_else(|| {
            message
                .find("unknown variant `")
                .map(|i| i + "unknown variant `".len())
        })?;
    let rest = &message[at..];
    let end = rest.find('`')?;
    let word = rest[..end].to_string();
    let expected: Vec<&str> = rest[end + 1..].split('`').skip(1).step_by(2).collect();
    Some((word, expected))
}

/// Where a semantic error of the configuration points: its file, and the first line that
/// mentions the offending value.
struct Loc<'a> {
    text: &'a str,
    path: &'a Path,
}

impl Loc<'_> {
    /// The first line (1-based) at or after line `from` containing `needle`.
    fn line(&self, from: usize, needle: &str) -> Option<usize> {
        let mut lines = self.text.lines().enumerate().skip(from - 1);
        lines.find(|(_, l)| l.contains(needle)).map(|(i, _)| i + 1)
    }

    fn err(&self, needle: &str, message: String, hint: &str) -> ConfigError {
        self.err_at(self.line(1, needle), message, hint)
    }

    /// The error at the first line mentioning `needle` at or after the first line mentioning
    /// `after` (a value below its key: the bad `pin:` line, not the component's first line).
    fn err_after(&self, after: &str, needle: &str, message: String, hint: &str) -> ConfigError {
        let start = self.line(1, after).unwrap_or(1);
        self.err_at(self.line(start, needle).or(Some(start)), message, hint)
    }

    fn err_at(&self, line: Option<usize>, message: String, hint: &str) -> ConfigError {
        ConfigError {
            file: self.path.to_path_buf(),
            line,
            message,
            hint: hint.to_string(),
        }
    }
}

/// The checks serde cannot make, one per field with its file:line, section by section: the
/// upstream patterns, every stack, the forge and publish targets, then the tenants.
fn validate(c: &Config, text: &str, path: &Path) -> Result<(), ConfigError> {
    let loc = &Loc { text, path };
    if !c.upstream.cve_record_url.contains("{id}") {
        return Err(loc.err(
            "cve_record_url",
            format!(
                "`upstream.cve_record_url` ({}) has no `{{id}}`",
                c.upstream.cve_record_url
            ),
            "write the pattern with `{id}` where the CVE id goes, e.g. `https://cveawg.mitre.org/api/cve/{id}`",
        ));
    }
    if c.stacks.is_empty() {
        return Err(loc.err(
            "stacks",
            "`stacks` is empty".into(),
            "configure at least one stack",
        ));
    }
    let mut seen = BTreeSet::new();
    for s in &c.stacks {
        let id = StackId::new(&s.provider, &s.name).map_err(|e| {
            loc.err(
                &format!("name: {}", s.name),
                format!("stack `{}/{}`: {e}", s.provider, s.name),
                "rename the provider or stack",
            )
        })?;
        if !seen.insert(id.clone()) {
            return Err(loc.err(
                &format!("name: {}", s.name),
                format!("stack `{id}` is configured twice"),
                "remove the duplicate entry",
            ));
        }
        validate_minors(loc, &id, s)?;
        validate_node_image(loc, &id, s)?;
        validate_components(loc, &id, s)?;
        validate_gate(c, loc, &id, s)?;
    }
    if let Some(app) = &c.forge.github.app
        && app.private_key_env.is_some() == app.private_key_file.is_some()
    {
        return Err(loc.err(
            "app:",
            "`forge.github.app` needs exactly one of `private_key_env` and `private_key_file`"
                .into(),
            "name the environment variable holding the App's PEM key, or the key file",
        ));
    }
    if c.publishes_on_oci() && c.oci.is_none() {
        return Err(loc.err(
            "publish",
            "`publish` lists `oci` but there is no `oci` section".into(),
            "add `oci: {}` (it reads OCI_REGISTRY/OCI_REPOSITORY) or remove `oci`",
        ));
    }
    validate_limits(c, loc)?;
    validate_tenants(c, loc)
}

/// A gate names one way to test, one this forge can run (the candidate goes wherever
/// `publish` says: a forge pre-release, the OCI registry or both).
fn validate_gate(c: &Config, loc: &Loc, id: &StackId, s: &StackConfig) -> Result<(), ConfigError> {
    let Some(g) = &s.gate else {
        return Ok(());
    };
    let err = |message: String, hint: &str| Err(loc.err("gate:", message, hint));
    match (&g.command, &g.workflow) {
        (Some(_), Some(_)) | (None, None) => {
            return err(
                format!("stack `{id}`: `gate` needs exactly one of `command` and `workflow`"),
                "local forge: `command: [./conformance.sh]`",
            );
        }
        (Some(cmd), None) if cmd.is_empty() || cmd[0].trim().is_empty() => {
            return err(
                format!("stack `{id}`: `gate.command` is empty"),
                "name the program first, then its arguments",
            );
        }
        (None, Some(w)) if !is_workflow_name(w) => {
            return err(
                format!(
                    "stack `{id}`: `gate.workflow` `{w}` is neither a workflow file name nor a workflow id"
                ),
                "name the file in .github/workflows/, e.g. `workflow: conformance.yml`",
            );
        }
        (None, Some(_)) if c.forge.kind != ForgeKind::Github => {
            return err(
                format!(
                    "stack `{id}`: `gate.workflow` (a GitHub workflow_dispatch) needs `forge.kind: github`"
                ),
                "on the local forge the gate is a command: `command: [./conformance.sh]`",
            );
        }
        (Some(_), None) if c.forge.kind != ForgeKind::Local => {
            return err(
                format!("stack `{id}`: `gate.command` runs on the local forge only"),
                "on GitHub the gate is a workflow_dispatch: `workflow: conformance.yml`",
            );
        }
        _ => {}
    }
    if g.artifact.trim().is_empty() {
        return err(
            format!("stack `{id}`: `gate.artifact` is empty"),
            "name the artifact the workflow uploads, e.g. `artifact: conformance`",
        );
    }
    if g.timeout_minutes == 0 {
        return err(
            format!("stack `{id}`: `gate.timeout_minutes` is 0"),
            "give the test at least a minute",
        );
    }
    Ok(())
}

/// A workflow as GitHub's API names it: a file name in `.github/workflows/` or an id.
fn is_workflow_name(w: &str) -> bool {
    let file = (w.ends_with(".yml") || w.ends_with(".yaml"))
        && !w.contains('/')
        && !w.starts_with('.')
        && w.bytes().all(|b| b.is_ascii_graphic());
    file || (!w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()))
}

/// Every limit at least 1, and no depth above what the YAML parser itself allows.
fn validate_limits(c: &Config, loc: &Loc) -> Result<(), ConfigError> {
    let (t, u) = (&c.limits.tenant_files, &c.limits.upstream);
    let checks = [
        ("tenant_files.max_bytes", t.max_bytes, u64::MAX),
        (
            "tenant_files.max_depth",
            t.max_depth as u64,
            crate::yaml::DEPTH_CEILING as u64,
        ),
        ("tenant_files.max_nodes", t.max_nodes, u64::MAX),
        ("upstream.max_bytes", u.max_bytes, u64::MAX),
        (
            "upstream.max_depth",
            u.max_depth as u64,
            crate::yaml::DEPTH_CEILING as u64,
        ),
        ("upstream.max_nodes", u.max_nodes, u64::MAX),
        (
            "upstream.max_checksum_bytes",
            u.max_checksum_bytes,
            u64::MAX,
        ),
    ];
    for (key, value, max) in checks {
        if value == 0 || value > max {
            let needle = key.rsplit('.').next().unwrap_or(key);
            return Err(loc.err(
                needle,
                format!("`limits.{key}: {value}` must be between 1 and {max}"),
                "raise or lower the limit into that range, or remove it for the default",
            ));
        }
    }
    Ok(())
}

/// A stack's `minors` list: not empty, every entry a minor.
fn validate_minors(loc: &Loc, id: &StackId, s: &StackConfig) -> Result<(), ConfigError> {
    if let MinorSelection::List(list) = &s.minors {
        if list.is_empty() {
            return Err(loc.err(
                "minors",
                format!("stack `{id}`: `minors` is empty"),
                "list minors or use `supported`",
            ));
        }
        for m in list {
            m.parse::<Minor>().map_err(|e| {
                loc.err(m, format!("stack `{id}`: {e}"), "quote minors: `\"1.34\"`")
            })?;
        }
    }
    Ok(())
}

/// A stack's `node_image`: both patterns or none, and every placeholder defined for every
/// version the patterns may be asked for.
fn validate_node_image(loc: &Loc, id: &StackId, s: &StackConfig) -> Result<(), ConfigError> {
    if s.node_image.url.is_empty() != s.node_image.name.is_empty() {
        return Err(loc.err(
            "node_image",
            format!("stack `{id}` node_image: `url` and `name` must be set together"),
            "set both patterns, or leave `node_image` out for a provider without node images",
        ));
    }
    for vv in &s.node_image.vars_by_version {
        vv.since.parse::<KubeVersion>().map_err(|e| {
            loc.err(
                &vv.since,
                format!("stack `{id}` node_image.vars_by_version.since: {e}"),
                "use a full version such as `v1.33.4`",
            )
        })?;
    }
    let first_since = s
        .node_image
        .vars_by_version
        .iter()
        .filter_map(|vv| vv.since.parse::<KubeVersion>().ok())
        .min();
    for pattern in [&s.node_image.url, &s.node_image.name] {
        for ph in placeholders(pattern) {
            if ph == "version" || ph == "minor" {
                continue;
            }
            let everywhere = !s.node_image.vars_by_version.is_empty()
                && s.node_image
                    .vars_by_version
                    .iter()
                    .all(|vv| vv.vars.contains_key(ph));
            if !everywhere {
                return Err(loc.err(
                    &format!("{{{ph}}}"),
                    format!(
                        "stack `{id}` node_image: placeholder `{{{ph}}}` is not defined by every `vars_by_version` entry"
                    ),
                    "use `{version}`, `{minor}` or a variable every `vars_by_version` entry sets",
                ));
            }
        }
    }
    if let Some(first) = first_since
        && first
            > (KubeVersion {
                major: 1,
                minor: 0,
                patch: 0,
            })
        && !placeholders(&s.node_image.url)
            .iter()
            .chain(placeholders(&s.node_image.name).iter())
            .all(|p| *p == "version" || *p == "minor")
    {
        return Err(loc.err(
            "since",
            format!(
                "stack `{id}` node_image: versions before {first} would have no variables for the patterns"
            ),
            "add a `vars_by_version` entry with `since: v1.0.0`",
        ));
    }
    Ok(())
}

/// Every component's version rule can select a chart version.
fn validate_components(loc: &Loc, id: &StackId, s: &StackConfig) -> Result<(), ConfigError> {
    for (key, comp) in &s.components {
        let bad = match &comp.version {
            VersionRule::Series(p) if !p.contains("{minor}") => Some((
                "series",
                p,
                "a series rule must contain `{minor}`, e.g. `2.{minor}`",
            )),
            VersionRule::Pin(v) if semver::Version::parse(v).is_err() => Some((
                "pin",
                v,
                "a pin must be a full semver version, e.g. `1.18.9`",
            )),
            VersionRule::Range(r) if semver::VersionReq::parse(r).is_err() => Some((
                "range",
                r,
                "a range must be a semver requirement, e.g. `>=1.18.0, <1.19.0`",
            )),
            _ => None,
        };
        if let Some((rule, value, hint)) = bad {
            return Err(loc.err_after(
                &format!("{key}:"),
                value,
                format!(
                    "stack `{id}` component `{key}`: `{rule}: {value}` is not a valid version rule"
                ),
                hint,
            ));
        }
    }
    Ok(())
}

/// The tenants: each followed stack one pull request branch per repository, then each
/// tenant's own fields.
fn validate_tenants(c: &Config, loc: &Loc) -> Result<(), ConfigError> {
    let stacks: BTreeSet<StackId> = c.stacks.iter().map(|s| s.id()).collect();
    let mut names = BTreeSet::new();
    // One branch `stackbot/<provider>-<name>` per repository and stack: two tenants sharing
    // both would push over each other's pull request.
    let mut branches: BTreeMap<(String, String), String> = BTreeMap::new();
    for t in &c.tenants {
        for s in &t.stacks {
            if let Some(other) = branches.insert((t.repository.clone(), s.clone()), t.name.clone())
            {
                return Err(loc.err(
                    &format!("name: {}", t.name),
                    format!(
                        "tenants `{other}` and `{}` both follow `{s}` in repository `{}`",
                        t.name, t.repository
                    ),
                    "they would share one pull request branch; merge them into one tenant",
                ));
            }
        }
    }
    for t in &c.tenants {
        if !names.insert(t.name.clone()) {
            return Err(loc.err(
                &format!("name: {}", t.name),
                format!("tenant `{}` is configured twice", t.name),
                "tenant names must be unique",
            ));
        }
        validate_tenant(c, loc, t)?;
        validate_tenant_stacks(loc, t, &stacks)?;
        validate_tenant_globs(loc, t)?;
    }
    Ok(())
}

/// One tenant's policy, repository and files.
fn validate_tenant(c: &Config, loc: &Loc, t: &TenantConfig) -> Result<(), ConfigError> {
    let at = format!("name: {}", t.name);
    if t.policy.keep == 0 {
        return Err(loc.err(
            &at,
            format!("tenant `{}`: `policy.keep` is 0", t.name),
            "keep at least 1 version, or set `patch: ignore`",
        ));
    }
    if t.policy.upgrade.clusters == UpgradeAction::Approval && !c.dashboard.enabled {
        return Err(loc.err(
            "approval",
            format!(
                "tenant `{}`: `policy.upgrade.clusters: approval` needs the dashboard, and `dashboard.enabled` is false",
                t.name
            ),
            "approvals are ticked on the dashboard issue: enable it, or use `clusters: pull-request`",
        ));
    }
    if t.policy.minor == PolicyAction::Automerge {
        return Err(loc.err(
            "automerge",
            format!(
                "tenant `{}`: `policy.minor: automerge`: auto-merge is for patches only",
                t.name
            ),
            "a new minor changes what the tenant's clusters can run; use `minor: pull-request` and `patch: automerge`",
        ));
    }
    if t.policy.upgrade.clusters != UpgradeAction::Ignore && t.clusters.is_empty() {
        return Err(loc.err(
            &at,
            format!(
                "tenant `{}`: `policy.upgrade.clusters` is set but `clusters` is empty",
                t.name
            ),
            "list the files or globs holding the tenant's Cluster resources under `clusters`",
        ));
    }
    if crate::model::RepoRef::parse(&t.repository).is_none() {
        return Err(loc.err(
            &format!("repository: {}", t.repository),
            format!(
                "tenant `{}`: repository `{}` is not `owner/name`",
                t.name, t.repository
            ),
            "write the tenant repository as `owner/name`, e.g. `acme/gitops`",
        ));
    }
    if t.files.is_empty() {
        return Err(loc.err(
            &at,
            format!("tenant `{}`: `files` is empty", t.name),
            "list the files or globs holding ClusterStack resources",
        ));
    }
    Ok(())
}

/// A tenant follows configured stacks only (with a "did you mean" for a typo).
fn validate_tenant_stacks(
    loc: &Loc,
    t: &TenantConfig,
    stacks: &BTreeSet<StackId>,
) -> Result<(), ConfigError> {
    for s in &t.stacks {
        let id: StackId = s.parse().map_err(|e| {
            loc.err(
                s,
                format!("tenant `{}`: {e}", t.name),
                "write stacks as `provider/name`",
            )
        })?;
        if !stacks.contains(&id) {
            let known: Vec<String> = stacks.iter().map(ToString::to_string).collect();
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            let hint = match crate::error::did_you_mean(s, &known) {
                Some(k) => format!("did you mean `{k}`?"),
                None => format!(
                    "add the stack under `stacks:` or follow one of: {}",
                    known.join(", ")
                ),
            };
            return Err(loc.err(
                s,
                format!("tenant `{}` follows unknown stack `{id}`", t.name),
                &hint,
            ));
        }
    }
    Ok(())
}

/// A tenant's `files` and `clusters` globs parse and never overlap: each file has one role.
fn validate_tenant_globs(loc: &Loc, t: &TenantConfig) -> Result<(), ConfigError> {
    let mut globs = Vec::new();
    for g in t.files.iter().chain(&t.clusters) {
        let glob = globset::Glob::new(g).map_err(|e| {
            loc.err(
                g,
                format!("tenant `{}`: bad glob `{g}`: {e}", t.name),
                "use `*`, `**` and `?` only",
            )
        })?;
        globs.push((g.clone(), glob.compile_matcher()));
    }
    for (i, (a, ma)) in globs.iter().enumerate() {
        for (b, mb) in &globs[i + 1..] {
            if a == b || ma.is_match(b) || mb.is_match(a) {
                return Err(loc.err(
                    b,
                    format!("tenant `{}`: globs `{a}` and `{b}` overlap", t.name),
                    "each file must be matched by exactly one entry of `files` or `clusters`",
                ));
            }
        }
    }
    Ok(())
}

/// The JSON Schema of `stackbot.yaml`, published by `stackbot schema`.
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Config)).expect("schema serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
stacks:
  - provider: openstack
    name: scs2
    templates: templates/openstack/scs2
    output: cluster-stacks/openstack/scs2
    minors: ["1.33", "1.34"]
    node_image:
      url: "https://img/ubuntu-{ubuntu}-kube-v{minor}/ubuntu-{ubuntu}-kube-{version}.qcow2"
      name: "ubuntu-capi-image-{version}"
      vars_by_version:
        - since: v1.0.0
          vars: { ubuntu: "2204" }
        - since: v1.33.4
          vars: { ubuntu: "2404" }
    components:
      ccm:
        chart: openstack-cloud-controller-manager
        repository: https://kubernetes.github.io/cloud-provider-openstack
        version: { series: "2.{minor}" }
      cni:
        chart: cilium
        repository: https://helm.cilium.io/
        version: { pin: 1.18.9 }
"#;

    fn parse_str(text: &str) -> Result<Config, ConfigError> {
        parse(text, Path::new("stackbot.yaml"))
    }

    fn tenant(extra: &str) -> String {
        format!(
            "{BASE}tenants:\n  - name: acme\n    repository: acme/gitops\n    files: [\"clusters/*.yaml\"]\n{extra}"
        )
    }

    #[test]
    fn upgrades_need_cluster_files_and_auto_merge_is_for_patches_only() {
        let ok = parse_str(&tenant(
            "    stacks: [openstack/scs2]\n    clusters: [\"k8s/*.yaml\"]\n    policy: {patch: automerge, automerge_security: true, upgrade: {clusters: pull-request, before_end_of_life_days: 30}}\n",
        ))
        .unwrap();
        let p = &ok.tenants[0].policy;
        assert_eq!(p.patch, PolicyAction::Automerge);
        assert_eq!(p.upgrade.clusters, UpgradeAction::PullRequest);
        assert_eq!(p.upgrade.before_end_of_life_days, Some(30));
        assert_eq!(p.security_label, "security", "the default label");

        let e = parse_str(&tenant(
            "    stacks: [openstack/scs2]\n    policy: {upgrade: {clusters: pull-request}}\n",
        ))
        .unwrap_err();
        assert!(e.message.contains("`clusters` is empty"), "{e}");
        let e = parse_str(&tenant(
            "    stacks: [openstack/scs2]\n    policy: {minor: automerge}\n",
        ))
        .unwrap_err();
        assert!(e.message.contains("patches only"), "{e}");
        assert_eq!(e.line, Some(30), "{e}");
    }

    #[test]
    fn a_gate_names_one_way_to_test_that_this_forge_runs() {
        let with = |gate: &str, rest: &str| {
            let text = BASE.replace(
                "    components:\n",
                &format!("    gate: {gate}\n    components:\n"),
            );
            parse_str(&format!("{text}{rest}"))
        };
        let ok = with("{command: [./conformance.sh, --quick]}", "").unwrap();
        let g = ok.stacks[0].gate.as_ref().unwrap();
        assert_eq!(g.command.as_deref().unwrap()[1], "--quick");
        assert_eq!(g.timeout_minutes, 360, "the default timeout");
        assert!(parse_str(BASE).unwrap().stacks[0].gate.is_none());
        let e = with("{workflow: conformance.yml}", "").unwrap_err();
        assert!(e.message.contains("needs `forge.kind: github`"), "{e}");
        let github = "forge:\n  kind: github\n  repository: a/b\n";
        let ok = with("{workflow: conformance.yml}", github).unwrap();
        let g = ok.stacks[0].gate.as_ref().unwrap();
        assert_eq!(g.workflow.as_deref(), Some("conformance.yml"));
        assert_eq!(g.artifact, "conformance", "the default artifact");
        assert!(with("{workflow: '12345'}", github).is_ok(), "a workflow id");
        let e = with("{workflow: .github/workflows/c.yml}", github).unwrap_err();
        assert!(e.message.contains("neither a workflow file"), "{e}");
        let e = with("{workflow: c.yml, artifact: ''}", github).unwrap_err();
        assert!(e.message.contains("`gate.artifact` is empty"), "{e}");
        let e = with("{command: []}", "").unwrap_err();
        assert!(e.message.contains("is empty"), "{e}");
        let e = with("{}", "").unwrap_err();
        assert!(e.message.contains("exactly one"), "{e}");
        let e = with(
            "{command: [./c.sh]}",
            "forge:\n  kind: github\n  repository: a/b\n",
        )
        .unwrap_err();
        assert!(e.message.contains("local forge only"), "{e}");
        // The candidate goes wherever the stack publishes.
        for publish in ["[forge, oci]", "[oci]"] {
            let ok = with(
                "{command: [./c.sh]}",
                &format!("publish: {publish}\noci: {{}}\n"),
            );
            assert!(ok.is_ok(), "publish: {publish}: {ok:?}");
        }
        assert!(
            with("{command: [./c.sh]}", "forge:\n  mode: pull-request\n").is_ok(),
            "a gated release pull request is tested while it is open"
        );
        let e = with("{command: [./c.sh], timeout_minutes: 0}", "").unwrap_err();
        assert!(e.message.contains("is 0"), "{e}");
    }

    #[test]
    fn the_repository_config_is_valid() {
        let text = include_str!("../../../stackbot.yaml");
        let loaded = Loaded::parse(text, Path::new("stackbot.yaml")).unwrap();
        // The production setup publishes on GitHub; the local forge is the demo's.
        let f = &loaded.config.forge;
        assert_eq!(f.kind, ForgeKind::Github);
        assert_eq!(f.repository, "SovereignCloudStack/cluster-stacks");
        assert_eq!(f.github.token_env, "GITHUB_TOKEN", "what the action sets");
        let s = &loaded.config.stacks[0];
        assert_eq!(s.id().to_string(), "openstack/scs2");
        assert_eq!(
            s.components["ccm"].version,
            VersionRule::Series("2.{minor}".into())
        );
        assert_eq!(
            s.components["cni"].version,
            VersionRule::Pin("1.18.9".into())
        );
    }

    #[test]
    fn node_image_patterns_switch_ubuntu_by_version() {
        let c = parse_str(BASE).unwrap();
        let rule = &c.stacks[0].node_image;
        let (name, url) = rule.expand("v1.34.7".parse().unwrap());
        assert_eq!(name, "ubuntu-capi-image-v1.34.7");
        assert_eq!(
            url,
            "https://img/ubuntu-2404-kube-v1.34/ubuntu-2404-kube-v1.34.7.qcow2"
        );
        let (_, url) = rule.expand("v1.33.3".parse().unwrap());
        assert_eq!(
            url,
            "https://img/ubuntu-2204-kube-v1.33/ubuntu-2204-kube-v1.33.3.qcow2"
        );
        let (_, url) = rule.expand("v1.33.4".parse().unwrap());
        assert!(url.contains("ubuntu-2404-kube-v1.33.4"), "{url}");
    }

    #[test]
    fn a_variable_value_is_not_expanded_again() {
        let mut vars = BTreeMap::new();
        vars.insert("x".to_string(), "{version}".to_string());
        let v: KubeVersion = "v1.2.3".parse().unwrap();
        assert_eq!(
            expand_pattern("a-{x}-{version}-{nope}-{", v, &vars),
            "a-{version}-v1.2.3-{nope}-{"
        );
    }

    #[test]
    fn unknown_key_is_rejected_with_its_line() {
        let text = BASE.replace("    minors:", "    minor_list: []\n    minors:");
        let err = parse_str(&text).unwrap_err();
        assert_eq!(err.line, Some(7), "{err}");
        assert!(err.to_string().contains("minor_list"), "{err}");
        assert!(err.to_string().starts_with("stackbot.yaml:7:"), "{err}");
    }

    #[test]
    fn a_version_rule_needs_exactly_one_kind() {
        let text = BASE.replace("{ pin: 1.18.9 }", "{ pin: 1.18.9, series: \"1.{minor}\" }");
        let err = parse_str(&text).unwrap_err();
        assert!(err.to_string().contains("exactly one"), "{err}");
        let text = BASE.replace("{ pin: 1.18.9 }", "{ pin: latest }");
        let err = parse_str(&text).unwrap_err();
        assert!(err.to_string().contains("component `cni`"), "{err}");
    }

    #[test]
    fn undefined_node_image_placeholder_is_rejected() {
        let text = BASE.replace("ubuntu-capi-image-{version}", "ubuntu-{distro}-{version}");
        let err = parse_str(&text).unwrap_err();
        assert!(err.to_string().contains("{distro}"), "{err}");
        assert_eq!(err.line, Some(10), "{err}");
    }

    #[test]
    fn minors_must_be_strings_like_1_34() {
        let err = parse_str(&BASE.replace("[\"1.33\", \"1.34\"]", "[\"1.x\"]")).unwrap_err();
        assert!(err.to_string().contains("1.x"), "{err}");
        let ok = parse_str(&BASE.replace("[\"1.33\", \"1.34\"]", "supported")).unwrap();
        assert_eq!(
            ok.stacks[0].minors,
            MinorSelection::Keyword(MinorKeyword::Supported)
        );
    }

    #[test]
    fn a_dash_in_the_stack_name_is_rejected() {
        let err = parse_str(&BASE.replace("name: scs2", "name: scs-2")).unwrap_err();
        assert!(err.to_string().contains("scs-2"), "{err}");
    }

    #[test]
    fn tenant_keep_zero_is_rejected() {
        assert!(parse_str(&tenant("    stacks: [openstack/scs2]\n")).is_ok());
        let err = parse_str(&tenant(
            "    stacks: [openstack/scs2]\n    policy: { keep: 0 }\n",
        ))
        .unwrap_err();
        assert!(err.to_string().contains("keep"), "{err}");
        assert!(err.line.is_some(), "{err}");
    }

    #[test]
    fn a_github_app_names_exactly_one_private_key_source() {
        let app = |keys: &str| {
            format!("{BASE}forge:\n  kind: github\n  github:\n    app: {{id: 7{keys}}}\n")
        };
        let ok = parse_str(&app(", private_key_env: APP_KEY")).unwrap();
        let a = ok.forge.github.app.unwrap();
        assert_eq!((a.id, a.private_key_env.as_deref()), (7, Some("APP_KEY")));
        assert!(parse_str(&app(", private_key_file: key.pem")).is_ok());
        for bad in ["", ", private_key_env: K, private_key_file: k.pem"] {
            let err = parse_str(&app(bad)).unwrap_err();
            assert!(err.to_string().contains("exactly one of"), "{err}");
            assert!(err.line.is_some(), "{err}");
        }
    }

    #[test]
    fn tenant_repository_must_be_owner_slash_name() {
        let text = tenant("    stacks: [openstack/scs2]\n")
            .replace("repository: acme/gitops", "repository: acme");
        let err = parse_str(&text).unwrap_err();
        assert!(
            err.to_string()
                .contains("repository `acme` is not `owner/name`"),
            "{err}"
        );
        assert!(err.line.is_some(), "{err}");
    }

    #[test]
    fn tenant_following_an_unknown_stack_is_rejected() {
        let err = parse_str(&tenant("    stacks: [openstack/scs9]\n")).unwrap_err();
        assert!(
            err.to_string().contains("unknown stack `openstack/scs9`"),
            "{err}"
        );
        assert!(err.line.is_some(), "{err}");
    }

    #[test]
    fn two_tenants_sharing_a_repository_and_stack_are_rejected() {
        let text = tenant(
            "    stacks: [openstack/scs2]\n  - name: acme2\n    repository: acme/gitops\n    files: [\"other/*.yaml\"]\n    stacks: [openstack/scs2]\n",
        );
        let err = parse_str(&text).unwrap_err();
        assert!(err.to_string().contains("`acme` and `acme2`"), "{err}");
    }

    #[test]
    fn the_schema_describes_version_rules_as_maps() {
        let schema = json_schema().to_string();
        assert!(schema.contains("\"series\""), "{schema}");
        assert!(schema.contains("\"vars_by_version\""));
    }
}
