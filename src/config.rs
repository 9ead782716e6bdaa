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
}

fn default_publish() -> Vec<PublishTarget> {
    vec![PublishTarget::Forge]
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
    /// How to find the node image for a Kubernetes version.
    pub node_image: NodeImageRule,
    /// Helm chart components keyed by a short name used in templates (`ccm`, `csi`, `cni`, ...).
    #[serde(default)]
    pub components: BTreeMap<String, ComponentRule>,
}

impl StackConfig {
    /// The validated id; config validation guarantees this succeeds after `load`.
    pub fn id(&self) -> StackId {
        StackId::new(&self.provider, &self.name).expect("validated at load")
    }
}

/// Which minors a stack tracks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum MinorSelection {
    /// The keyword `supported`.
    Keyword(MinorKeyword),
    /// Explicit minors, as strings (`"1.34"`, quoted so YAML does not read a float).
    List(Vec<String>),
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
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum VersionRule {
    /// `2.{minor}`: the highest GA `2.<k8s minor>.x` (never a string-prefix match).
    Series(String),
    /// An exact version.
    Pin(String),
    /// A semver range, e.g. `>=1.18.0, <1.19.0`; the highest GA match wins.
    Range(String),
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
    /// Author and committer of the bot's commits.
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
    pub seed: BTreeMap<String, PathBuf>,
}

impl Default for LocalForgeConfig {
    fn default() -> Self {
        LocalForgeConfig {
            path: PathBuf::from(".stackbot/forge"),
            seed: BTreeMap::new(),
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
}

impl Default for GithubForgeConfig {
    fn default() -> Self {
        GithubForgeConfig {
            api_url: "https://api.github.com".into(),
            upload_url: None,
            token_env: "GITHUB_TOKEN".into(),
        }
    }
}

/// Identity used for commits and annotated tags.
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
}

impl Default for TenantPolicy {
    fn default() -> Self {
        TenantPolicy {
            patch: PolicyAction::PullRequest,
            minor: PolicyAction::PullRequest,
            keep: 2,
        }
    }
}

/// Whether a kind of update becomes a PR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyAction {
    PullRequest,
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

/// Read, parse and validate a configuration file. Nothing is fetched or written.
pub fn load(path: &Path) -> Result<Loaded, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: path.to_path_buf(),
        line: None,
        message: format!("cannot read the configuration: {e}"),
        hint: "pass the file with `-c FILE` (default `./stackbot.yaml`)".into(),
    })?;
    let config = parse(&text, path)?;
    let base_dir = path
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .unwrap_or(Path::new("."))
        .to_path_buf();
    Ok(Loaded {
        config,
        path: path.to_path_buf(),
        base_dir,
    })
}

/// Parse and validate configuration text; `path` is only used in messages.
pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    let config: Config = yaml_serde::from_str(text).map_err(|e| ConfigError {
        file: path.to_path_buf(),
        line: e.location().map(|l| l.line()),
        message: e.to_string(),
        hint: "fix the field named above; `stackbot schema` prints every allowed key".into(),
    })?;
    validate(&config, text, path)?;
    Ok(config)
}

/// Line (1-based) of the first line containing `needle`, for pointing at semantic errors.
fn line_of(text: &str, needle: &str) -> Option<usize> {
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1)
}

fn validate(c: &Config, text: &str, path: &Path) -> Result<(), ConfigError> {
    let err = |needle: &str, message: String, hint: &str| ConfigError {
        file: path.to_path_buf(),
        line: line_of(text, needle),
        message,
        hint: hint.to_string(),
    };
    if c.stacks.is_empty() {
        return Err(err(
            "stacks",
            "`stacks` is empty".into(),
            "configure at least one stack",
        ));
    }
    let mut seen = BTreeSet::new();
    for s in &c.stacks {
        let id = StackId::new(&s.provider, &s.name).map_err(|e| {
            err(
                &format!("name: {}", s.name),
                format!("stack `{}/{}`: {e}", s.provider, s.name),
                "rename the provider or stack",
            )
        })?;
        if !seen.insert(id.clone()) {
            return Err(err(
                &format!("name: {}", s.name),
                format!("stack `{id}` is configured twice"),
                "remove the duplicate entry",
            ));
        }
        if let MinorSelection::List(list) = &s.minors {
            if list.is_empty() {
                return Err(err(
                    "minors",
                    format!("stack `{id}`: `minors` is empty"),
                    "list minors or use `supported`",
                ));
            }
            for m in list {
                m.parse::<Minor>().map_err(|e| {
                    err(m, format!("stack `{id}`: {e}"), "quote minors: `\"1.34\"`")
                })?;
            }
        }
        for vv in &s.node_image.vars_by_version {
            vv.since.parse::<KubeVersion>().map_err(|e| {
                err(
                    &vv.since,
                    format!("stack `{id}` node_image.vars_by_version.since: {e}"),
                    "use a full version such as `v1.33.4`",
                )
            })?;
        }
        for (key, comp) in &s.components {
            let bad = match &comp.version {
                VersionRule::Series(p) if !p.contains("{minor}") => {
                    Some("a series rule must contain `{minor}`, e.g. `2.{minor}`")
                }
                VersionRule::Pin(v) if semver::Version::parse(v).is_err() => {
                    Some("a pin must be a full semver version, e.g. `1.18.9`")
                }
                VersionRule::Range(r) if semver::VersionReq::parse(r).is_err() => {
                    Some("a range must be a semver requirement, e.g. `>=1.18.0, <1.19.0`")
                }
                _ => None,
            };
            if let Some(hint) = bad {
                return Err(err(
                    key,
                    format!("stack `{id}` component `{key}`: invalid version rule"),
                    hint,
                ));
            }
        }
    }
    if c.publish.contains(&PublishTarget::Oci) && c.oci.is_none() {
        return Err(err(
            "publish",
            "`publish` lists `oci` but there is no `oci` section".into(),
            "add `oci: {}` (it reads OCI_REGISTRY/OCI_REPOSITORY) or remove `oci`",
        ));
    }
    validate_tenants(c, text, path)
}

fn validate_tenants(c: &Config, text: &str, path: &Path) -> Result<(), ConfigError> {
    let err = |needle: &str, message: String, hint: &str| ConfigError {
        file: path.to_path_buf(),
        line: line_of(text, needle),
        message,
        hint: hint.to_string(),
    };
    let stacks: BTreeSet<StackId> = c.stacks.iter().map(|s| s.id()).collect();
    let mut names = BTreeSet::new();
    for t in &c.tenants {
        let at = format!("name: {}", t.name);
        if !names.insert(t.name.clone()) {
            return Err(err(
                &at,
                format!("tenant `{}` is configured twice", t.name),
                "tenant names must be unique",
            ));
        }
        if t.policy.keep == 0 {
            return Err(err(
                &at,
                format!("tenant `{}`: `policy.keep` is 0", t.name),
                "keep at least 1 version, or set `patch: ignore`",
            ));
        }
        if t.files.is_empty() {
            return Err(err(
                &at,
                format!("tenant `{}`: `files` is empty", t.name),
                "list the files or globs holding ClusterStack resources",
            ));
        }
        for s in &t.stacks {
            let id: StackId = s.parse().map_err(|e| {
                err(
                    s,
                    format!("tenant `{}`: {e}", t.name),
                    "write stacks as `provider/name`",
                )
            })?;
            if !stacks.contains(&id) {
                return Err(err(
                    s,
                    format!("tenant `{}` follows unknown stack `{id}`", t.name),
                    "add the stack under `stacks:` or fix the name",
                ));
            }
        }
        let mut globs = Vec::new();
        for g in t.files.iter().chain(&t.clusters) {
            let glob = globset::Glob::new(g).map_err(|e| {
                err(
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
                    return Err(err(
                        b,
                        format!("tenant `{}`: globs `{a}` and `{b}` overlap", t.name),
                        "each file must be matched by exactly one entry of `files` or `clusters`",
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The JSON Schema of `stackbot.yaml`, published by `stackbot schema`.
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Config)).expect("schema serializes")
}
