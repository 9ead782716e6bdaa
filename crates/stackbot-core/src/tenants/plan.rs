//! What each tenant should get, decided purely from the configuration, the published releases
//! (forge, OCI or both) and what was observed in the tenant repository. No I/O here, so
//! `--dry-run` and `plan --format json` show exactly what `apply` will do.

use std::collections::BTreeMap;

use serde::Serialize;

use super::branch;
use super::edit::{Channel, Edit, EditError, StackDoc, TenantFile};
use crate::compliance::{CveFact, fixed_between};
use crate::config::{PolicyAction, TenantConfig, UpgradeAction};
use crate::forge::{CommitInfo, PullInfo};
use crate::model::{KubeVersion, Minor, ReleaseName, StackId, StackVersion};

/// A published release (on the forge, in the OCI repository, or both), with what a tenant PR
/// needs to say about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvailableRelease {
    pub name: ReleaseName,
    /// `versions.kubernetes` of its `metadata.yaml`: what a `Cluster` must run.
    pub kubernetes: KubeVersion,
    /// The release's web page; empty for a release that exists only in the OCI repository.
    pub html_url: String,
    /// The release notes (components, image sha256), quoted in the PR body.
    pub body: String,
    /// The Kubernetes version of each earlier release of the same series (by stack version
    /// major), as its notes name it: what a tenant listing an older release runs, so a pull
    /// request can say which critical CVEs it fixes. Read from the same release listing, at
    /// no extra cost; empty where unknown (OCI, planned releases).
    pub earlier: BTreeMap<u64, KubeVersion>,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEdit {
    pub path: String,
    pub before: Vec<u8>,
    pub after: Vec<u8>,
}

/// What happens to the tenant's pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Open,
    Update,
    Close,
    #[default]
    None,
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Action::Open => "open",
            Action::Update => "update",
            Action::Close => "close",
            Action::None => "none",
        })
    }
}

/// The state of one tenant branch as observed on the forge. Whether the base has moved on
/// is deliberately not part of it: an unrelated commit on the base is no reason to touch the
/// branch (see [`super::branch`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BranchState {
    /// Head of `stackbot/<provider>-<name>`, if the branch exists.
    pub head: Option<String>,
    /// Commits on the branch that the base does not have (oldest first, with parents).
    pub commits: Vec<CommitInfo>,
    /// Pull requests of the branch, any state, newest first (the newest
    /// [`crate::forge::PULLS_WINDOW`]): the plan reads the newest, the status report the
    /// history (first merge of each release).
    pub pulls: Vec<PullInfo>,
    /// The branch head's versions of the base's stack and cluster files (a path missing here is
    /// missing on the branch), read only when the branch holds a merge of the base ("Update
    /// branch"): then it may hold the desired content although its bot commit's trailer names
    /// the content of an older base (see [`super::branch::holds_files`]).
    pub files: Option<BTreeMap<String, Vec<u8>>>,
}

impl BranchState {
    /// The newest pull request of the branch, any state.
    pub fn pull(&self) -> Option<&PullInfo> {
        self.pulls.first()
    }
}

/// Everything observed in one tenant repository.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    pub base_head: String,
    /// Files matched by `files` globs at the base head.
    pub stack_files: BTreeMap<String, Vec<u8>>,
    /// Files matched by `clusters` globs at the base head.
    pub cluster_files: BTreeMap<String, Vec<u8>>,
    /// Per followed stack.
    pub branches: BTreeMap<StackId, BranchState>,
    /// Per Cluster minor-upgrade branch (see [`super::upgrade`]), read only when the tenant's
    /// `policy.upgrade.clusters` is on.
    pub upgrades: BTreeMap<String, BranchState>,
}

/// What a plan knows beyond the tenant repository and the releases: the day (end-of-life
/// windows of Cluster upgrades) and what the SCS 0210 verdicts read (end of life, critical
/// CVEs). A run that did not read them plans with [`Facts::unread`]: no pull request then
/// claims a CVE fix, and an upgrade waiting for an end-of-life window is not proposed.
#[derive(Debug, Clone)]
pub struct Facts {
    pub today: chrono::NaiveDate,
    pub inputs: crate::compliance::Inputs,
    /// The steps listed on the dashboard, as `(tenant, branch)`, with whether a person ticked
    /// them (see [`super::approval`]).
    pub approvals: BTreeMap<(String, String), bool>,
    /// What a tenant file may hold (`limits.tenant_files`): a file over it fails its tenant.
    pub limits: crate::yaml::Limits,
    /// What each unreleased Kubernetes patch of a stack still waits for, in words (from the
    /// run's detection; empty without one): a pull request whose release is affected by a
    /// critical CVE says what holds the fix back.
    pub waits: BTreeMap<(StackId, KubeVersion), String>,
}

impl Facts {
    /// `today`, with every upstream source unknown and the default limits.
    pub fn unread(today: chrono::NaiveDate) -> Facts {
        Facts {
            today,
            inputs: crate::compliance::Inputs::default(),
            approvals: Default::default(),
            limits: crate::config::LimitsConfig::default().tenant_files(),
            waits: Default::default(),
        }
    }
}

/// The plan for one tenant and stack.
#[derive(Debug, Clone)]
pub struct TenantPlan {
    pub tenant: String,
    pub repository: String,
    pub stack: StackId,
    pub base_branch: String,
    pub base_head: String,
    pub branch: String,
    pub files: Vec<FileEdit>,
    pub action: Action,
    /// A new commit must be pushed to the branch.
    pub push: bool,
    /// The branch head the push must replace (compare-and-swap).
    pub branch_head: Option<String>,
    /// The pull request to update or close.
    pub pull: Option<u64>,
    /// The open pull request's title or body differs from `title`/`body`.
    pub pull_stale: bool,
    pub title: String,
    pub body: String,
    /// Identifies the desired content; carried in commit messages and PR bodies.
    pub content_id: String,
    /// Commits by someone other than the bot on the branch of an open pull request (merges
    /// of the base excepted): the bot leaves the branch alone and says so. Empty unless they
    /// block an update the tenant needs.
    pub human_commits: Vec<String>,
    /// Releases this PR proposes.
    pub releases: Vec<String>,
    /// Why the action is what it is, for reports.
    pub note: Option<String>,
    /// Labels to add to the pull request (the security label of a PR that fixes a critical
    /// CVE), those it does not carry yet: empty when there is nothing to add.
    pub labels: Vec<String>,
    /// Ask the forge to merge the pull request once its checks pass (`patch: automerge`,
    /// `automerge_security`): set when it is opened, or open without auto-merge requested and
    /// without the note that the forge refused it for this content.
    pub automerge: bool,
    /// A step waiting for (or opened by) a person's approval on the dashboard.
    pub approval: Option<super::approval::Approval>,
    /// What the comment closing the pull request says, when not "already up to date".
    pub close_comment: Option<String>,
}

impl TenantPlan {
    /// Whether someone else's commits on the bot branch block this plan: then nothing is
    /// pushed, updated or closed, and the pull request gets a comment saying why.
    pub fn blocked(&self) -> bool {
        !self.human_commits.is_empty()
    }
}

/// Starts the note a pull request body gets when the forge refused auto-merge: the next runs
/// read it there and do not ask again until the content changes (a new release), so the
/// refusal is said once and costs no request per run.
pub const AUTOMERGE_UNAVAILABLE: &str = "<!-- stackbot:automerge-unavailable -->";

/// The body of a pull request whose auto-merge the forge refused for `why`.
pub fn with_automerge_note(body: &str, why: &str) -> String {
    // The body left room for this note ([`AUTOMERGE_ROOM`]): the forge's reason is cut to fit.
    let why = crate::body::truncate_str(why, 512);
    format!(
        "{body}\n{AUTOMERGE_UNAVAILABLE}\n> **Auto-merge is not available:** {why}. Merge this pull request by hand, or allow auto-merge in the repository's settings and require a status check on the base branch; stackbot asks again with the next update.\n"
    )
}

/// The branch of a tenant stack PR.
pub fn branch_name(stack: &StackId) -> String {
    format!("stackbot/{}-{}", stack.provider, stack.name)
}

/// The newest stable release per minor of `stack`, by the release index's tie-break.
pub fn latest_per_minor<'a>(
    stack: &StackId,
    releases: &'a [AvailableRelease],
) -> BTreeMap<Minor, &'a AvailableRelease> {
    crate::index::newest_per_series(releases.iter().filter(|r| &r.name.stack == stack), |r| {
        Some((
            r.name.clone(),
            crate::index::Rank::of_number(r.name.version.major),
        ))
    })
    .into_iter()
    .map(|((_, minor), r)| (minor, r))
    .collect()
}

fn stable_major(v: &str) -> Option<u64> {
    StackVersion::parse_dot(v)
        .ok()
        .filter(StackVersion::is_stable)
        .map(|v| v.major)
}

/// `list` plus `new`, then the oldest dropped until `keep` remain (order otherwise kept).
pub fn next_versions(list: &[String], new: &str, keep: usize) -> Vec<String> {
    let mut out: Vec<String> = list.to_vec();
    out.push(new.to_string());
    while out.len() > keep.max(1) {
        // Oldest: non-stable entries first, then the lowest stable major; first one on ties.
        let (i, _) = out
            .iter()
            .enumerate()
            .min_by_key(|(i, v)| (stable_major(v).map_or((0, 0), |m| (1, m)), *i))
            .expect("not empty");
        out.remove(i);
    }
    out
}

/// The edits one tenant stack needs, per file, and the releases they bring in.
#[derive(Debug, Default)]
struct Desired {
    edits: BTreeMap<String, Vec<Edit>>,
    releases: Vec<String>,
    changes: Vec<String>,
    /// Critical CVEs the changes fix (affecting what the tenant lists or runs now, not what it
    /// gets).
    fixes: Vec<CveFact>,
    /// A `ClusterStack` for a new minor is added: never merged without a person.
    new_minor: bool,
}

impl Desired {
    /// Record that `r` is brought in (once) by `change`.
    fn note_release(&mut self, r: &AvailableRelease, change: String) {
        let n = r.name.to_string();
        if !self.releases.contains(&n) {
            self.releases.push(n);
        }
        self.changes.push(change);
    }

    fn edit(&mut self, file: &TenantFile, edit: Edit) {
        self.edits.entry(file.path.clone()).or_default().push(edit);
    }
}

/// One tenant stack's wanted edits: newer patches into its `ClusterStack` versions (patch
/// policy), a `ClusterStack` per newer minor (minor policy), and its Clusters moved to the
/// newest patch of their minor (patch policy).
fn desired(
    t: &TenantConfig,
    stack: &StackId,
    latest: &BTreeMap<Minor, &AvailableRelease>,
    stack_files: &[TenantFile],
    cluster_files: &[TenantFile],
    facts: &Facts,
) -> Result<Desired, EditError> {
    let docs = stable_docs(t, stack, stack_files)?;
    let mut d = Desired::default();
    if t.policy.patch != PolicyAction::Ignore {
        let keep = t.policy.keep as usize;
        for (f, doc) in &docs {
            patch_versions(&mut d, f, doc, latest, keep, facts);
        }
    }
    if t.policy.minor != PolicyAction::Ignore {
        add_minors(&mut d, &docs, latest);
    }
    if t.policy.patch != PolicyAction::Ignore {
        bump_clusters(&mut d, stack, latest, cluster_files, facts);
    }
    Ok(d)
}

/// The tenant's `ClusterStack` documents of `stack` on the stable channel, with their files;
/// none at all is a configuration error (the tenant's `files` miss them).
fn stable_docs<'f>(
    t: &TenantConfig,
    stack: &StackId,
    stack_files: &'f [TenantFile],
) -> Result<Vec<(&'f TenantFile, StackDoc)>, EditError> {
    let mut docs = Vec::new();
    for f in stack_files {
        for doc in f.cluster_stacks(stack)? {
            if doc.channel == Channel::Stable {
                docs.push((f, doc));
            }
        }
    }
    if docs.is_empty() {
        return Err(EditError {
            file: t.files.join(", "),
            line: None,
            message: format!(
                "no ClusterStack resource of {stack} (channel stable) found; check `files` of tenant `{}`",
                t.name
            ),
        });
    }
    Ok(docs)
}

/// A `ClusterStack` document gets the newest release of its minor: written as its only
/// version when it lists none and does not auto-subscribe, added (oldest dropped beyond
/// `keep`) when its newest listed major is older.
fn patch_versions(
    d: &mut Desired,
    f: &TenantFile,
    doc: &StackDoc,
    latest: &BTreeMap<Minor, &AvailableRelease>,
    keep: usize,
    facts: &Facts,
) {
    let Some(r) = latest.get(&doc.minor) else {
        return;
    };
    let new = r.name.version.dot();
    let Some(list) = &doc.versions else {
        if !doc.auto_subscribe {
            let edit = Edit::SetVersions {
                doc: doc.doc,
                versions: vec![new.clone()],
            };
            let at = changed_at(f, &edit, doc.line);
            d.edit(f, edit);
            d.note_release(r, format!("`{}` {at}: {} add {new}", f.path, doc.minor));
        }
        return;
    };
    let current = list.iter().filter_map(|v| stable_major(v)).max();
    if current.is_some_and(|c| c >= r.name.version.major) {
        return;
    }
    let running = current.and_then(|c| r.earlier.get(&c).copied());
    add_fixes(
        &mut d.fixes,
        fixed_between(running, r.kubernetes, &facts.inputs),
    );
    let versions = next_versions(list, &new, keep);
    let edit = Edit::SetVersions {
        doc: doc.doc,
        versions: versions.clone(),
    };
    d.note_release(
        r,
        format!(
            "`{}` {}: {} `[{}]` → `[{}]`",
            f.path,
            changed_at(f, &edit, doc.line),
            doc.minor,
            list.join(", "),
            versions.join(", ")
        ),
    );
    d.edit(f, edit);
}

/// A new `ClusterStack` per minor newer than the tenant's highest, after each document of
/// that highest minor (with a version list only when that document has one).
fn add_minors(
    d: &mut Desired,
    docs: &[(&TenantFile, StackDoc)],
    latest: &BTreeMap<Minor, &AvailableRelease>,
) {
    let top = docs.iter().map(|(_, d)| d.minor).max().expect("not empty");
    for (f, doc) in docs.iter().filter(|(_, d)| d.minor == top) {
        for (m, r) in latest.range(top..).filter(|(m, _)| **m > top) {
            let versions = doc.versions.as_ref().map(|_| vec![r.name.version.dot()]);
            let edit = Edit::AddMinor {
                after_doc: doc.doc,
                from: top,
                minor: *m,
                versions: versions.unwrap_or_default(),
            };
            d.note_release(
                r,
                format!(
                    "`{}`: new ClusterStack for {m} after {}",
                    f.path,
                    changed_at(f, &edit, doc.line)
                ),
            );
            d.new_minor = true;
            d.edit(f, edit);
        }
    }
}

/// Every Cluster of `stack` on an older major of its minor moves to the newest release of
/// that minor (class and Kubernetes version).
fn bump_clusters(
    d: &mut Desired,
    stack: &StackId,
    latest: &BTreeMap<Minor, &AvailableRelease>,
    cluster_files: &[TenantFile],
    facts: &Facts,
) {
    for f in cluster_files {
        for c in f.clusters() {
            let Some(cur) = cluster_release(&c, stack) else {
                continue;
            };
            let Some(r) = latest.get(&cur.minor) else {
                continue;
            };
            if r.name.version.major <= cur.version.major {
                continue;
            }
            add_fixes(
                &mut d.fixes,
                fixed_between(c.version.parse().ok(), r.kubernetes, &facts.inputs),
            );
            let class = format!("{}-{}", r.name.prefix(), r.name.version.dot());
            let version = r.kubernetes.to_string();
            let edit = Edit::BumpCluster {
                doc: c.doc,
                class: class.clone(),
                version: version.clone(),
            };
            d.note_release(
                r,
                format!(
                    "`{}` {}: Cluster `{}` → `{class}` ({version})",
                    f.path,
                    changed_at(f, &edit, c.line),
                    c.class
                ),
            );
            d.edit(f, edit);
        }
    }
}

/// Where `edit` changes `f`, in the lines its diff shows (`line 15`, `lines 8, 10`); the
/// document's first line when it cannot be located (applying it then fails with the reason).
fn changed_at(f: &TenantFile, edit: &Edit, doc_line: usize) -> String {
    f.changed_lines(edit)
        .unwrap_or_else(|| format!("line {doc_line}"))
}

/// The files `edits` change (by path), applied and verified, in file order; an edit that
/// changes nothing is no change.
pub(super) fn file_edits(
    stack_files: &[TenantFile],
    cluster_files: &[TenantFile],
    edits: &BTreeMap<String, Vec<Edit>>,
) -> Result<Vec<FileEdit>, EditError> {
    let mut files = Vec::new();
    for f in stack_files.iter().chain(cluster_files) {
        if let Some(e) = edits.get(&f.path) {
            let after = f.apply(e)?;
            if after != f.text {
                files.push(FileEdit {
                    path: f.path.clone(),
                    before: f.text.clone().into_bytes(),
                    after: after.into_bytes(),
                });
            }
        }
    }
    Ok(files)
}

/// The stable release of `stack` a Cluster's `spec.topology.class` names, if it names one.
pub fn cluster_release(c: &super::edit::ClusterDoc, stack: &StackId) -> Option<ReleaseName> {
    ReleaseName::parse(&c.class.replacen('.', "-", 1))
        .ok()
        .filter(|n| &n.stack == stack && n.version.is_stable())
}

/// Identity of the desired content: each changed file as the base has it and as the bot
/// wants it. The same edits of the same base files give the same id on every run, whatever
/// else moved on the base; a change of an edited file on the base changes the id (the branch
/// would conflict, so it is rebuilt).
pub fn content_id(stack: &StackId, files: &[FileEdit]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(stack.to_string());
    for f in files {
        h.update([0]);
        h.update(&f.path);
        for bytes in [&f.before, &f.after] {
            h.update([0]);
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        }
    }
    hex::encode(&h.finalize()[..8])
}

/// Unified diff of one file, for `--dry-run` and PR bodies.
pub fn unified_diff(f: &FileEdit) -> String {
    let a = String::from_utf8_lossy(&f.before);
    let b = String::from_utf8_lossy(&f.after);
    similar::TextDiff::from_lines(a.as_ref(), b.as_ref())
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{}", f.path), &format!("b/{}", f.path))
        .to_string()
}

fn title(stack: &StackId, releases: &[String], fixes: &[CveFact]) -> String {
    let t = format!("Update ClusterStack {stack} to {}", releases.join(", "));
    if fixes.is_empty() {
        t
    } else {
        format!("{SECURITY_PREFIX} {t}")
    }
}

/// The start of the title of a pull request that fixes a critical CVE: visible in every list
/// of pull requests and in notifications, before anyone opens it.
pub const SECURITY_PREFIX: &str = "Security fix:";

/// The labels of a pull request fixing `fixes` (none when it fixes nothing, or when the tenant
/// set `policy.security_label` to the empty string).
pub fn security_labels(t: &TenantConfig, fixes: &[CveFact]) -> Vec<String> {
    if fixes.is_empty() || t.policy.security_label.is_empty() {
        Vec::new()
    } else {
        vec![t.policy.security_label.clone()]
    }
}

/// The section of a pull request body naming the critical CVEs it fixes (empty without any).
pub fn security_section(fixes: &[CveFact]) -> String {
    if fixes.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\n**Security:** this pull request fixes critical CVEs (CVSS 8 or more). SCS 0210 gives 14 days (2 recommended) to offer such a fix, and clusters still run the affected version until it is merged.\n\n| CVE | CVSS | fixed in |\n|---|---|---|\n",
    );
    for f in fixes {
        s.push_str(&format!(
            "| [{}]({}) | {} | {} |\n",
            f.id,
            f.url,
            f.score.map_or("?".to_string(), |x| format!("{x:.1}")),
            f.fixed_in.map_or("?".to_string(), |v| v.to_string())
        ));
    }
    s
}

/// The critical CVEs that still affect a release the pull request proposes, one row each:
/// the CVE and its score, the patch that fixes it and what that patch waits for (empty when
/// no proposed release is affected, or the CVE data was not read).
pub fn risk_section(stack: &StackId, releases: &[&AvailableRelease], facts: &Facts) -> String {
    let mut rows = String::new();
    for r in releases {
        for c in crate::compliance::critical_cves(r.kubernetes, &facts.inputs) {
            let waits = match c.fixed_in {
                None => "no fixed patch of this minor is published yet".to_string(),
                Some(v) => facts
                    .waits
                    .get(&(stack.clone(), v))
                    .cloned()
                    .unwrap_or_else(|| "nothing upstream: the next release run ships it".into()),
            };
            rows.push_str(&format!(
                "| {} ({}) | [{}]({}) | {} | {} | {} |\n",
                r.name,
                r.kubernetes,
                c.id,
                c.url,
                c.score.map_or("?".to_string(), |x| format!("{x:.1}")),
                c.fixed_in.map_or("?".to_string(), |v| v.to_string()),
                waits.replace('|', "\\|")
            ));
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "{STILL_AFFECTED} the proposed release is affected by a critical CVE (CVSS 8 or more) whose fix is not released yet; a later pull request brings it.\n\n| Release | CVE | CVSS | fixed in | the fix waits for |\n|---|---|---|---|---|\n{rows}"
    )
}

/// The start of [`risk_section`].
const STILL_AFFECTED: &str = "\n**Still affected:**";

/// The *Still affected* section of a pull request proposing `releases` ([`risk_section`]), for
/// stack and Cluster-upgrade pull requests alike. A run that did not read the CVE data
/// (`stackbot tenants`) cannot know the risk: the open pull request keeps the section the last
/// run that knew wrote, rather than a rewrite that drops it (and back again on the next
/// `release`).
pub(super) fn risk(
    stack: &StackId,
    releases: &[&AvailableRelease],
    facts: &Facts,
    state: &BranchState,
) -> String {
    if matches!(
        facts.inputs.security,
        crate::compliance::Security::Known { .. }
    ) {
        return risk_section(stack, releases, facts);
    }
    state
        .pull()
        .filter(|p| p.state == crate::forge::PullState::Open)
        .and_then(|p| written_risk(&p.body))
        .unwrap_or_default()
}

/// The [`risk_section`] a pull request body holds: its opening line up to its table's last row.
fn written_risk(body: &str) -> Option<String> {
    let start = body.find(STILL_AFFECTED)?;
    let section = &body[start..];
    let table = section.find("\n|")? + 1;
    let rows = section[table..]
        .split_inclusive('\n')
        .take_while(|l| l.starts_with('|'))
        .map(str::len)
        .sum::<usize>();
    Some(section[..table + rows].to_string())
}

/// `fixes` plus `more`, each CVE once.
fn add_fixes(fixes: &mut Vec<CveFact>, more: Vec<CveFact>) {
    for f in more {
        if !fixes.iter().any(|x| x.id == f.id) {
            fixes.push(f);
        }
    }
}

fn body(
    t: &TenantConfig,
    stack: &StackId,
    id: &str,
    d: &Desired,
    (releases, risk): (&[&AvailableRelease], &str),
    files: &[FileEdit],
) -> String {
    let names: Vec<String> = releases.iter().map(|r| r.name.to_string()).collect();
    let mut head = format!(
        "{}\nThis pull request makes the `ClusterStack` resources of tenant `{}` use the newest releases of the cluster stack `{stack}`.\n\n| Release | Kubernetes |\n|---|---|\n",
        branch::marker(stack, id, &names),
        t.name
    );
    for r in releases {
        if r.html_url.is_empty() {
            head.push_str(&format!("| `{}` | {} |\n", r.name, r.kubernetes));
        } else {
            head.push_str(&format!(
                "| [{}]({}) | {} |\n",
                r.name, r.html_url, r.kubernetes
            ));
        }
    }
    head.push_str(&security_section(&d.fixes));
    head.push_str(risk);
    fit_body(head, d.changes.clone(), releases, files)
}

/// Room a tenant pull request body keeps for the note appended when the forge refuses
/// auto-merge ([`with_automerge_note`]): that note is counted too.
const AUTOMERGE_ROOM: usize = 1024;

/// A pull request body: `head`, the list of `changes`, then the release notes and the diff as
/// far as GitHub's limit allows, then the trailer, through [`crate::body::fit_body`] (every part
/// counted; what is cut is said, with where the whole is).
pub(super) fn fit_body(
    head: String,
    changes: Vec<String>,
    releases: &[&AvailableRelease],
    files: &[FileEdit],
) -> String {
    use crate::body::{self, Block};
    let mut blocks = vec![Block::List {
        title: "\n**Changes**\n\n".into(),
        items: changes,
    }];
    for r in releases {
        blocks.push(Block::Section {
            label: format!("the release notes of {}", r.name),
            text: format!(
                "\n<details><summary>Release notes of {}</summary>\n\n{}\n\n</details>\n",
                r.name,
                r.body.trim()
            ),
        });
    }
    blocks.push(Block::Text("\n**Diff**\n\n".into()));
    blocks.push(Block::Code {
        summary_html: "the diff".into(),
        info: "diff".into(),
        content: files.iter().map(unified_diff).collect(),
    });
    let trailer = "\n---\nOpened by stackbot. Commits pushed to this branch by anyone else stop the bot from updating it.\n";
    body::fit_body(
        &head,
        &blocks,
        trailer,
        body::BODY_MAX - AUTOMERGE_ROOM,
        "the pull request's *Files changed* tab and the release notes linked above",
    )
    .text
}

/// Plan one tenant: one [`TenantPlan`] per followed stack. A bad file fails the whole tenant
/// (a partial PR would be worse than none).
pub fn plan_tenant(
    t: &TenantConfig,
    releases: &[AvailableRelease],
    observed: &Observed,
    facts: &Facts,
    bot_email: &str,
) -> Result<Vec<TenantPlan>, EditError> {
    let parse = |m: &BTreeMap<String, Vec<u8>>| {
        m.iter()
            .map(|(p, b)| TenantFile::parse(p, b, &facts.limits))
            .collect::<Result<Vec<_>, _>>()
    };
    let stack_files = parse(&observed.stack_files)?;
    let cluster_files = parse(&observed.cluster_files)?;
    let mut out = Vec::new();
    for s in &t.stacks {
        let stack: StackId = s.parse().map_err(|e| EditError {
            file: "stackbot.yaml".into(),
            line: None,
            message: format!("tenant `{}`: {e}", t.name),
        })?;
        let latest = latest_per_minor(&stack, releases);
        let d = desired(t, &stack, &latest, &stack_files, &cluster_files, facts)?;
        let files = file_edits(&stack_files, &cluster_files, &d.edits)?;
        let id = content_id(&stack, &files);
        let used: Vec<&AvailableRelease> = latest
            .values()
            .filter(|r| d.releases.contains(&r.name.to_string()))
            .copied()
            .collect();
        let release_names: Vec<String> = used.iter().map(|r| r.name.to_string()).collect();
        let title = title(&stack, &release_names, &d.fixes);
        let state = observed.branches.get(&stack).cloned().unwrap_or_default();
        let risk = risk(&stack, &used, facts, &state);
        let body = body(t, &stack, &id, &d, (&used, &risk), &files);
        let branch = branch_name(&stack);
        out.push(decide(
            t,
            stack.clone(),
            branch,
            observed,
            state,
            files,
            DesiredPr {
                id,
                title,
                body,
                releases: release_names,
                nothing_published: latest.is_empty(),
                labels: security_labels(t, &d.fixes),
                automerge: !d.new_minor
                    && (t.policy.patch == PolicyAction::Automerge
                        || (t.policy.automerge_security && !d.fixes.is_empty())),
            },
            bot_email,
        ));
        if t.policy.upgrade.clusters != UpgradeAction::Ignore {
            out.extend(super::upgrade::plan(
                t,
                &stack,
                &latest,
                &stack_files,
                &cluster_files,
                observed,
                facts,
                bot_email,
            )?);
        }
    }
    Ok(out)
}

pub(super) struct DesiredPr {
    pub id: String,
    pub title: String,
    pub body: String,
    pub releases: Vec<String>,
    /// No release of the stack was found at all: no evidence that the tenant is up to date
    /// (a wrong target, an empty registry), so an open pull request is not closed for it.
    pub nothing_published: bool,
    /// Labels the pull request must carry.
    pub labels: Vec<String>,
    /// The forge should merge it once its checks pass.
    pub automerge: bool,
}

/// What to do with one tenant stack's branch and pull request. In order:
/// - the base already holds the desired files: done, whatever the branch history says (an
///   open bot pull request is closed, unless a person has added commits to it);
/// - an open pull request with commits by a person: blocked, the bot never pushes over them;
/// - an open pull request: updated only when its content, title or body differ;
/// - a pull request a person closed for the same releases: not reopened;
/// - otherwise a pull request is opened. A merged or closed pull request's leftover branch is
///   the bot's: it is reset onto the base (only a branch with a person's commits and no pull
///   request at all is left alone).
#[allow(clippy::too_many_arguments)]
pub(super) fn decide(
    t: &TenantConfig,
    stack: StackId,
    branch: String,
    observed: &Observed,
    state: BranchState,
    files: Vec<FileEdit>,
    mut pr: DesiredPr,
    bot_email: &str,
) -> TenantPlan {
    let open = state
        .pull()
        .filter(|p| p.state == crate::forge::PullState::Open);
    // After a merge or a close, whatever is left on the branch is history, not an edit.
    let human: Vec<String> = if open.is_some() || state.pull().is_none() {
        branch::human_commits(&state.commits, bot_email)
    } else {
        Vec::new()
    };
    let current = state.head.is_some()
        && (branch::holds(&state.commits, &pr.id, bot_email)
            || branch::holds_files(state.files.as_ref(), observed, &files));
    // The forge refused auto-merge for this very content: the note stays, nothing is asked.
    let refused = pr.automerge
        && current
        && match open.and_then(|p| p.body.find(AUTOMERGE_UNAVAILABLE).map(|i| (p, i))) {
            Some((p, i)) => {
                pr.body = format!("{}\n{}", pr.body, &p.body[i..]);
                true
            }
            None => false,
        };
    // Human commits block only a branch with something to propose (see [`action`]).
    let up_to_date = base_holds_desired(&files);
    let blocking = if up_to_date || human.is_empty() {
        Vec::new()
    } else {
        human.clone()
    };
    let (action, push, note) = action(&Choice {
        stack: &stack,
        branch: &branch,
        files: &files,
        pr: &pr,
        open,
        last: state.pull(),
        human: &human,
        current,
    });
    let (title, body) = words(action, open, pr.title, pr.body);
    // Auto-merge is asked for on opening, and on an open pull request that lacks it (a run that
    // stopped after opening, or one refused for older content).
    let automerge = pr.automerge
        && !refused
        && match (action, open) {
            (Action::Open, _) => true,
            (Action::Update, Some(p)) => !p.auto_merge,
            (Action::None, Some(p)) if blocking.is_empty() => !p.auto_merge,
            _ => false,
        };
    let action = if automerge && action == Action::None {
        Action::Update
    } else {
        action
    };
    let labels = labels(action, open, &pr.labels);
    TenantPlan {
        labels,
        automerge,
        approval: None,
        close_comment: None,
        tenant: t.name.clone(),
        repository: t.repository.clone(),
        branch,
        stack,
        base_branch: t.base_branch.clone(),
        base_head: observed.base_head.clone(),
        files,
        action,
        push,
        branch_head: state.head.clone(),
        pull: open.map(|p| p.number),
        pull_stale: open.is_some_and(|p| p.title != title || p.body != body),
        title,
        body,
        content_id: pr.id,
        human_commits: blocking,
        releases: pr.releases,
        note,
    }
}

/// The pull request's title and body: the desired ones, except that closing keeps the pull
/// request's words and marks it as closed by the bot.
fn words(
    action: Action,
    open: Option<&crate::forge::PullInfo>,
    title: String,
    body: String,
) -> (String, String) {
    match open {
        Some(p) if action == Action::Close => {
            let body = if p.body.contains(branch::CLOSED_BY_BOT) {
                p.body.clone()
            } else {
                format!("{}\n{}\n", p.body, branch::CLOSED_BY_BOT)
            };
            (p.title.clone(), body)
        }
        _ => (title, body),
    }
}

/// The labels to add. Labels are added when the pull request is opened or updated, never
/// taken away: a label a person removed comes back only with new content.
fn labels(action: Action, open: Option<&crate::forge::PullInfo>, wanted: &[String]) -> Vec<String> {
    match (action, open) {
        (Action::Open, _) => wanted.to_vec(),
        (Action::Update, Some(p)) => wanted
            .iter()
            .filter(|l| !p.labels.contains(l))
            .cloned()
            .collect(),
        _ => Vec::new(),
    }
}

/// What [`action`] reads.
struct Choice<'a> {
    stack: &'a StackId,
    branch: &'a str,
    files: &'a [FileEdit],
    pr: &'a DesiredPr,
    /// The branch's open pull request.
    open: Option<&'a crate::forge::PullInfo>,
    /// The branch's newest pull request, any state.
    last: Option<&'a crate::forge::PullInfo>,
    /// Commits by someone else on the branch (only while its pull request is open, or when
    /// it has none).
    human: &'a [String],
    /// The branch already holds the desired content.
    current: bool,
}

/// Whether the base already holds the desired files (nothing left to edit): a merge is
/// recognised by its content, whoever merged it and however. Its own function so that the
/// mutation check (`.cargo/mutants.toml`, docs/reliability.md) can replace it.
fn base_holds_desired(files: &[FileEdit]) -> bool {
    files.is_empty()
}

/// The action on the pull request, whether to push the branch, and the note saying why (the
/// order is [`decide`]'s).
fn action(c: &Choice<'_>) -> (Action, bool, Option<String>) {
    let Choice {
        stack,
        branch,
        files,
        pr,
        open,
        human,
        current,
        ..
    } = *c;
    let short = |v: &[String]| {
        v.iter()
            .map(|s| format!("`{}`", &s[..s.len().min(12)]))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if files.is_empty() && pr.nothing_published {
        (
            Action::None,
            false,
            Some(format!(
                "no release of {stack} is published to the configured targets; nothing to propose"
            )),
        )
    } else if base_holds_desired(files) {
        match open {
            Some(p) if !human.is_empty() => (
                Action::None,
                false,
                Some(format!(
                    "up to date; pull request #{} has commits by someone else ({}) and is left open",
                    p.number,
                    short(human)
                )),
            ),
            Some(_) => (
                Action::Close,
                false,
                Some("tenant is already up to date".into()),
            ),
            None => (Action::None, false, Some("up to date".into())),
        }
    } else if !human.is_empty() {
        let note = match open {
            Some(p) => format!(
                "{branch} has commits by someone else ({}); pull request #{} is left alone: to let the bot update it, close it and delete the branch",
                short(human),
                p.number
            ),
            None => format!(
                "{branch} has commits by someone else ({}) and no pull request; delete the branch to let the bot open one",
                short(human)
            ),
        };
        (Action::None, false, Some(note))
    } else {
        match (open, c.last) {
            (Some(p), _)
                if current
                    && p.title == pr.title
                    && p.body == pr.body
                    && pr.labels.iter().all(|l| p.labels.contains(l)) =>
            {
                (Action::None, false, Some("pull request is current".into()))
            }
            (Some(_), _) => (Action::Update, !current, None),
            (None, Some(p)) if branch::declined(p, stack, &pr.id, &pr.releases) => (
                Action::None,
                false,
                Some(format!(
                    "pull request #{} was closed by a human; not reopened for the same releases ({})",
                    p.number,
                    pr.releases.join(", ")
                )),
            ),
            (None, _) => (Action::Open, !current, None),
        }
    }
}

/// The commit message of a tenant branch commit; the trailer lets a re-run see that the
/// branch already holds this exact content without reading its files.
pub fn commit_message(p: &TenantPlan) -> String {
    format!(
        "{}\n\n{} {}\n",
        p.title,
        branch::CONTENT_TRAILER,
        p.content_id
    )
}

/// Files (and clusters) patterns matched against the paths of a repository. Literal paths
/// must exist, and every pattern must match something.
pub fn match_globs(patterns: &[String], paths: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for p in patterns {
        let m = globset::Glob::new(p)
            .map_err(|e| format!("bad glob `{p}`: {e}"))?
            .compile_matcher();
        let hits: Vec<&String> = paths.iter().filter(|x| m.is_match(x.as_str())).collect();
        if hits.is_empty() {
            return Err(format!("`{p}` matches no file in the repository"));
        }
        out.extend(hits.into_iter().cloned());
    }
    out.sort();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TenantPolicy;

    fn tenant() -> TenantConfig {
        TenantConfig {
            name: "acme".into(),
            repository: "acme/gitops".into(),
            base_branch: "main".into(),
            files: vec!["cs.yaml".into()],
            stacks: vec!["openstack/scs2".into()],
            policy: TenantPolicy::default(),
            clusters: vec![],
        }
    }

    fn release(name: &str, body: &str) -> AvailableRelease {
        AvailableRelease {
            name: ReleaseName::parse(name).unwrap(),
            kubernetes: "v1.33.5".parse().unwrap(),
            html_url: format!("https://example.org/{name}"),
            body: body.into(),
            earlier: BTreeMap::new(),
        }
    }

    const FILE: &str = "apiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: x-1-33\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"1.33\"\n  versions: [v2]\n";

    fn facts() -> Facts {
        Facts::unread("2026-05-01".parse().unwrap())
    }

    fn observed() -> Observed {
        let mut o = Observed {
            base_head: "b".repeat(40),
            ..Observed::default()
        };
        o.stack_files
            .insert("cs.yaml".into(), FILE.as_bytes().to_vec());
        o
    }

    #[test]
    fn oldest_versions_are_dropped_beyond_keep() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(next_versions(&l(&["v1", "v2"]), "v3", 2), l(&["v2", "v3"]));
        assert_eq!(next_versions(&l(&["v2", "v1"]), "v3", 2), l(&["v2", "v3"]));
        assert_eq!(
            next_versions(&l(&["v0-sha.abcdefg", "v2"]), "v3", 2),
            l(&["v2", "v3"])
        );
        assert_eq!(next_versions(&l(&["v1"]), "v2", 3), l(&["v1", "v2"]));
    }

    #[test]
    fn huge_release_notes_are_truncated_under_the_github_limit() {
        let notes = "x".repeat(200_000);
        let plans = plan_tenant(
            &tenant(),
            &[release("openstack-scs2-1-33-v3", &notes)],
            &observed(),
            &facts(),
            "bot@x",
        )
        .unwrap();
        let body = &plans[0].body;
        assert!(body.len() < 65_536, "{}", body.len());
        assert!(
            body.contains("Cut to stay under GitHub's 65,536-character limit: the release notes of openstack-scs2-1-33-v3"),
            "{body}"
        );
        assert!(
            body.contains("[openstack-scs2-1-33-v3](https://example.org/openstack-scs2-1-33-v3)")
        );
    }

    #[test]
    fn the_plan_is_deterministic_and_names_the_branch() {
        let r = [release("openstack-scs2-1-33-v3", "notes")];
        let a = plan_tenant(&tenant(), &r, &observed(), &facts(), "bot@x").unwrap();
        let b = plan_tenant(&tenant(), &r, &observed(), &facts(), "bot@x").unwrap();
        assert_eq!(a[0].branch, "stackbot/openstack-scs2");
        assert_eq!(a[0].action, Action::Open);
        assert_eq!(
            (&a[0].body, &a[0].content_id),
            (&b[0].body, &b[0].content_id)
        );
        assert_eq!(
            a[0].files[0].after,
            FILE.replace("[v2]", "[v2, v3]").into_bytes()
        );
    }

    #[test]
    fn a_pull_request_fixing_a_critical_cve_says_so_and_carries_the_security_label() {
        use crate::compliance::{Inputs, Lifecycles, Security};
        use crate::upstream::cve::{Cve, Version, VersionRange};
        let mut r = release("openstack-scs2-1-33-v3", "notes");
        r.kubernetes = "v1.33.6".parse().unwrap();
        // v2, which the tenant lists, ships v1.33.5 (as its notes said).
        r.earlier.insert(2, "v1.33.5".parse().unwrap());
        let facts = Facts {
            approvals: Default::default(),
            waits: Default::default(),
            limits: crate::config::LimitsConfig::default().tenant_files(),
            today: "2026-05-01".parse().unwrap(),
            inputs: Inputs {
                odd_tags: Vec::new(),
                releases: Ok(Vec::new()),
                lifecycles: Lifecycles::Unknown("not read".into()),
                security: Security::Known {
                    cves: vec![Cve {
                        id: "CVE-2026-1000".into(),
                        score: Some(9.8),
                        critical: true,
                        affected: vec![VersionRange {
                            lower: Version(1, 33, 0),
                            upper: Some(Version(1, 33, 6)),
                            inclusive: false,
                        }],
                    }],
                    unreadable: Vec::new(),
                },
            },
        };
        let p = &plan_tenant(
            &tenant(),
            std::slice::from_ref(&r),
            &observed(),
            &facts,
            "bot@x",
        )
        .unwrap()[0];
        assert_eq!(
            p.title,
            "Security fix: Update ClusterStack openstack/scs2 to openstack-scs2-1-33-v3"
        );
        assert!(
            p.body.contains(
                "[CVE-2026-1000](https://www.cve.org/CVERecord?id=CVE-2026-1000) | 9.8 | v1.33.6"
            ),
            "{}",
            p.body
        );
        assert_eq!(p.labels, ["security"]);

        let mut quiet = tenant();
        quiet.policy.security_label = String::new();
        let p = &plan_tenant(
            &quiet,
            std::slice::from_ref(&r),
            &observed(),
            &facts,
            "bot@x",
        )
        .unwrap()[0];
        assert!(p.title.starts_with("Security fix:"));
        assert!(p.labels.is_empty(), "an empty security_label adds no label");

        // Without knowing what v2 ships, nothing is claimed.
        r.earlier.clear();
        let p = &plan_tenant(&tenant(), &[r], &observed(), &facts, "bot@x").unwrap()[0];
        assert!(!p.title.contains("Security"));
        assert!(p.labels.is_empty());
    }

    #[test]
    fn ignore_policies_propose_nothing() {
        let mut t = tenant();
        t.policy.patch = PolicyAction::Ignore;
        t.policy.minor = PolicyAction::Ignore;
        let r = [
            release("openstack-scs2-1-33-v3", ""),
            release("openstack-scs2-1-34-v1", ""),
        ];
        let p = plan_tenant(&t, &r, &observed(), &facts(), "bot@x").unwrap();
        assert!(p[0].files.is_empty());
        assert_eq!(p[0].action, Action::None);
    }
}
