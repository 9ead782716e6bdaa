//! `stackbot init`: the files that turn a cluster-stacks checkout into an hourly bot, and
//! what writing them would change.
//!
//! Pure: the command (`cli/init.rs`) reads the checkout, adopts its stacks through
//! [`crate::adopt`] and hands the results here; this module decides the bytes of every file
//! ([`config_text`], [`workflows`]) and compares them with what exists ([`compare`]), so a
//! second run is a fixpoint that only shows diffs. Nothing here reads the clock, the
//! environment or the disk.

pub mod workflows;

use std::collections::BTreeMap;

/// The reusable action a generated workflow calls, pinned by commit: `uses: owner/name@sha`
/// with the release it is in a comment (`# v0.1.0`). A tag or branch is refused: a pin that
/// can move is not a pin (and zizmor's `unpinned-uses` would fail the workflow).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionPin {
    /// `owner/name` of stackbot's repository (the action lives at its root).
    pub repository: String,
    /// Full 40-hex commit SHA of a stackbot release tag.
    pub commit: String,
    /// The release that commit is, e.g. `v0.1.0`.
    pub version: String,
}

/// Why the inputs of `init` cannot make a setup; each is input a human must fix (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InitError {
    #[error(
        "--action-ref `{0}` is not a full commit SHA (40 hex digits)\n  hint: pin the commit of a stackbot release tag, e.g. `git ls-remote https://github.com/SovereignCloudStack/stackbot 'refs/tags/v0.1.0^{{}}'`; a tag or branch can move"
    )]
    NotASha(String),
    #[error("--action-repo `{0}` is not `owner/name`")]
    BadRepository(String),
    #[error("--action-version `{0}` is not a release version like v0.1.0")]
    BadVersion(String),
    #[error("--tenant-shards {0}: use 2 to 256 shards (1 means no sharding: leave it out)")]
    BadShards(u32),
}

/// Whether `s` is `owner/name` as GitHub allows it.
pub fn is_repository(s: &str) -> bool {
    let ok = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    matches!(s.split_once('/'), Some((o, n)) if ok(o) && ok(n))
}

impl ActionPin {
    /// A pin, checked: `commit` must be 40 hex digits (written lower-case), `version` a
    /// `vX.Y.Z` release.
    pub fn new(repository: &str, commit: &str, version: &str) -> Result<Self, InitError> {
        if commit.len() != 40 || !commit.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(InitError::NotASha(commit.to_string()));
        }
        if !is_repository(repository) {
            return Err(InitError::BadRepository(repository.to_string()));
        }
        let v = version.strip_prefix('v').unwrap_or(version);
        if semver::Version::parse(v).is_err() {
            return Err(InitError::BadVersion(version.to_string()));
        }
        Ok(ActionPin {
            repository: repository.to_string(),
            commit: commit.to_ascii_lowercase(),
            version: format!("v{v}"),
        })
    }

    /// `owner/name@sha # vX.Y.Z`, as it goes after `uses:`.
    pub fn uses(&self) -> String {
        format!("{}@{} # {}", self.repository, self.commit, self.version)
    }
}

/// Everything the generated files depend on besides the adopted stacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setup {
    /// The action the workflows call.
    pub pin: ActionPin,
    /// The stackbot writing the files (named in their header).
    pub stackbot_version: String,
    /// `owner/name` of the cluster-stacks repository (`forge.repository`).
    pub repository: String,
    /// Its default branch (`forge.base_branch`).
    pub base_branch: String,
    /// `forge.github.api_url` when not github.com (GitHub Enterprise).
    pub api_url: Option<String>,
    /// Path of `stackbot.yaml`, relative to the repository root.
    pub config: String,
    /// Tenant shards after the release job; 0 or 1: the release job serves the tenants.
    pub tenant_shards: u32,
    /// The minute of every hour the release runs.
    pub cron_minute: u8,
    /// A stack of `stackbot.yaml` has a GitHub conformance gate (`gate.workflow`): the release
    /// job dispatches that workflow, reads its runs and artifacts and cancels an overrun run,
    /// which needs `actions: write` (docs/conformance-gate.md).
    pub dispatches_gate: bool,
}

impl Setup {
    /// Shards must be 0/1 (none) or 2..=256 (a GitHub matrix holds at most 256 jobs).
    pub fn check(&self) -> Result<(), InitError> {
        match self.tenant_shards {
            0..=256 => Ok(()),
            n => Err(InitError::BadShards(n)),
        }
    }
}

/// The `stacks:` entries of a configuration `adopt` wrote (the list items, without the
/// `stacks:` line), so several adopted stacks share one `stackbot.yaml`. `None` when the text
/// has no top-level `stacks:` list.
pub fn stack_entries(adopted_config: &str) -> Option<String> {
    let mut lines = adopted_config.split_inclusive('\n');
    lines.by_ref().find(|l| l.trim_end() == "stacks:")?;
    let mut out = String::new();
    for l in lines {
        // The list ends at the next top-level key.
        if !l.starts_with([' ', '#', '\n', '-']) && !l.trim().is_empty() {
            break;
        }
        out.push_str(l);
    }
    (!out.trim().is_empty()).then_some(out)
}

/// `stackbot.yaml` for a cluster-stacks repository: the adopted stacks (from
/// [`stack_entries`]), the GitHub forge in pull-request mode, the answer cache the action
/// saves between runs, and no tenants yet.
pub fn config_text(stacks: &[String], setup: &Setup) -> String {
    let mut s = format!(
        "# stackbot configuration for {repo}, written by `stackbot init` (stackbot {v}).\n\
         # `stackbot validate` checks it; `stackbot schema` lists every key; the reference is\n\
         # https://github.com/{tool}/blob/{pv}/docs/configuration.md\n\
         upstream:\n  \
         # The answer cache (upstream ETags and GitHub's answers): the action saves and restores\n  \
         # it between runs, so a quiet hour costs only conditional requests.\n  \
         cache_dir: .stackbot/cache\n\
         stacks:\n",
        repo = setup.repository,
        v = setup.stackbot_version,
        tool = setup.pin.repository,
        pv = setup.pin.version,
    );
    for entry in stacks {
        s.push_str(entry);
        if !entry.ends_with('\n') {
            s.push('\n');
        }
    }
    s.push_str(&format!(
        "forge:\n  \
         kind: github\n  \
         repository: {repo}\n  \
         base_branch: {branch}\n  \
         # The bot opens a release pull request; a maintainer merges it; the next hourly run\n  \
         # tags and publishes what was merged. `direct` pushes to the base branch instead.\n  \
         mode: pull-request\n",
        repo = setup.repository,
        branch = setup.base_branch,
    ));
    let mut github = String::new();
    if let Some(api) = &setup.api_url {
        github.push_str(&format!("    api_url: {api}\n"));
    }
    if setup.tenant_shards >= 2 {
        github.push_str(&format!(
            "    # {n} tenant shards share one token's hourly budget of content-creating requests.\n    \
             writes_per_hour: {w}\n",
            n = setup.tenant_shards,
            w = 450 / setup.tenant_shards,
        ));
    }
    if !github.is_empty() {
        s.push_str("  github:\n");
        s.push_str(&github);
    }
    s.push_str(
        "  # A GitHub App (recommended: its tenant pull requests trigger the tenants' CI):\n  \
         # github:\n  \
         #   app: { id: 123456, private_key_env: STACKBOT_APP_PRIVATE_KEY }\n\
         # The GitOps repositories whose ClusterStack resources follow the releases, e.g.\n\
         #   - name: team-a\n\
         #     repository: your-org/gitops-team-a\n\
         #     files: [\"clusters/**/clusterstack.yaml\"]\n\
         #     stacks: [openstack/scs2]\n\
         tenants: []\n",
    );
    s
}

/// What writing one file would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The file does not exist yet.
    Create,
    /// It exists with exactly these bytes.
    Unchanged,
    /// It exists and differs; `diff` is the unified diff from what is there to what `init`
    /// would write (empty for binary files).
    Update { diff: String },
}

/// One file `init` manages and what writing it would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Path relative to the repository root, `/`-separated.
    pub path: String,
    pub change: Change,
    /// The bytes `init` writes.
    pub bytes: Vec<u8>,
}

/// Compare the desired files with what `existing` returns for each path; in path order.
pub fn compare(
    desired: &BTreeMap<String, Vec<u8>>,
    existing: impl Fn(&str) -> Option<Vec<u8>>,
) -> Vec<FileChange> {
    desired
        .iter()
        .map(|(path, bytes)| {
            let change = match existing(path) {
                None => Change::Create,
                Some(old) if &old == bytes => Change::Unchanged,
                Some(old) => Change::Update {
                    diff: crate::report::from_plan::unified(
                        &format!("a/{path}"),
                        &format!("b/{path}"),
                        &old,
                        bytes,
                    )
                    .unwrap_or_default(),
                },
            };
            FileChange {
                path: path.clone(),
                change,
                bytes: bytes.clone(),
            }
        })
        .collect()
}

/// `.gitignore` with the answer cache's folder ignored: the lines as they are plus
/// `.stackbot/` when no line ignores it yet.
pub fn gitignore(existing: Option<&str>) -> String {
    let text = existing.unwrap_or("");
    let ignored = text
        .lines()
        .map(str::trim)
        .any(|l| matches!(l, ".stackbot" | ".stackbot/" | "/.stackbot" | "/.stackbot/"));
    if ignored {
        return text.to_string();
    }
    let mut s = text.to_string();
    if !s.is_empty() && !s.ends_with('\n') {
        s.push('\n');
    }
    s.push_str("# stackbot's answer cache and local state (stackbot init)\n.stackbot/\n");
    s
}

#[cfg(test)]
mod tests;
