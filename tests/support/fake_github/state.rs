//! The fake's state: repositories with a content-addressed git object store, refs, releases
//! with assets, issues and pull requests (one number sequence), comments, labels, and the
//! names a repository answered to before it was renamed or transferred.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use sha2::Digest as _;

use super::{
    BranchSnapshot, CommentSnapshot, IssueSnapshot, PullSnapshot, ReleaseSnapshot, RepoSnapshot,
    TagSnapshot,
};

#[derive(Debug, Clone)]
pub struct Person {
    pub name: String,
    pub email: String,
    pub date: String,
}

pub fn person(name: &str, email: &str, seq: u64) -> Person {
    Person {
        name: name.into(),
        email: email.into(),
        date: date_of(seq),
    }
}

/// A deterministic, increasing timestamp per sequence number.
pub fn date_of(seq: u64) -> String {
    let t = chrono::DateTime::from_timestamp(1_780_000_000 + seq as i64, 0).unwrap();
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[derive(Debug, Clone)]
pub struct CommitObj {
    pub tree: String,
    pub parents: Vec<String>,
    pub message: String,
    pub author: Person,
    pub committer: Person,
    pub seq: u64,
    /// Signed by GitHub, so `verification.verified` (a commit an App installation created
    /// through the API without a custom author or committer, or a merge made on the web).
    pub verified: bool,
}

#[derive(Debug, Clone)]
pub struct TagObj {
    pub tag: String,
    pub message: String,
    pub object: String,
    pub kind: String,
    pub tagger: Person,
}

#[derive(Debug, Clone)]
pub enum Obj {
    Blob(Vec<u8>),
    /// name → (mode, type, sha)
    Tree(BTreeMap<String, (String, String, String)>),
    Commit(CommitObj),
    Tag(TagObj),
}

#[derive(Debug, Clone)]
pub struct Asset {
    pub id: u64,
    pub name: String,
    pub label: String,
    pub content_type: String,
    pub bytes: Vec<u8>,
    pub seq: u64,
    pub updated: u64,
}

#[derive(Debug, Clone)]
pub struct Rel {
    pub id: u64,
    pub tag: String,
    pub target: String,
    pub name: Option<String>,
    pub body: Option<String>,
    pub draft: bool,
    pub prerelease: bool,
    pub assets: Vec<Asset>,
    /// Creation (`created_at`).
    pub seq: u64,
    /// Publication (`published_at`); `None` while a draft.
    pub published: Option<u64>,
}

impl Rel {
    /// Can be GitHub's "Latest": published and not a prerelease.
    pub fn full_release(&self) -> bool {
        !self.draft && !self.prerelease
    }
}

#[derive(Debug, Clone)]
pub struct Pull {
    pub number: u64,
    pub id: u64,
    pub head: String,
    pub base: String,
    pub title: String,
    pub body: String,
    pub state: String,
    pub merged: bool,
    pub merge_commit: Option<String>,
    pub seq: u64,
    pub updated: u64,
    pub closed: Option<u64>,
    /// Label names, as the issues API adds them.
    pub labels: Vec<String>,
    /// Auto-merge requested (GraphQL `enablePullRequestAutoMerge`).
    pub auto_merge: bool,
}

/// An issue (pull requests are issues too on GitHub; both share one number sequence).
#[derive(Debug, Clone)]
pub struct Issue {
    pub number: u64,
    pub id: u64,
    pub title: String,
    pub body: Option<String>,
    pub state: String,
    pub labels: Vec<String>,
    pub seq: u64,
}

#[derive(Debug, Clone)]
pub struct Comment {
    pub id: u64,
    pub issue: u64,
    pub body: String,
    pub seq: u64,
    pub updated: u64,
}

#[derive(Debug, Clone)]
pub struct Label {
    pub id: u64,
    pub name: String,
    pub color: String,
    pub description: Option<String>,
}

/// Which release GitHub shows as "Latest".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Latest {
    /// `make_latest: legacy` (and the state before any choice): the most recently created
    /// full release (ties: the higher semantic version).
    Legacy,
    /// Set by `make_latest: true` (the default when a release is published) or kept by
    /// `make_latest: false`; `None`: no release is latest.
    Pinned(Option<u64>),
}

#[derive(Debug, Clone)]
pub struct Repo {
    /// GitHub's numeric repository id (`/repositories/{id}`).
    pub id: u64,
    pub default_branch: String,
    pub description: Option<String>,
    pub seq: u64,
    pub objects: HashMap<String, Obj>,
    pub refs: BTreeMap<String, String>,
    pub releases: Vec<Rel>,
    pub pulls: Vec<Pull>,
    pub issues: Vec<Issue>,
    pub comments: Vec<Comment>,
    pub labels: Vec<Label>,
    pub latest: Latest,
    pub next_number: u64,
    /// Archived: readable, every write refused (`403`).
    pub archived: bool,
    /// Branch protection: classic rules (at most one per pattern) and rulesets, with the
    /// settings the fake models. People set them ([`super::humans`]); "Require signed
    /// commits" of a classic rule is also read and set through the REST API
    /// (`branches/{branch}/protection/required_signatures`).
    pub rules: Vec<BranchRule>,
    /// The setting "Allow auto-merge" (off by default, as on GitHub).
    pub allow_auto_merge: bool,
    /// The base branch requires a status check: without one GitHub refuses auto-merge ("Pull
    /// request is in clean status": it could be merged right away).
    pub required_checks: bool,
    /// GitHub Actions: the workflows the repository has, and their runs with artifacts.
    pub actions: Actions,
}

/// GitHub Actions of one repository.
#[derive(Debug, Clone)]
pub struct Actions {
    pub workflows: Vec<Workflow>,
    pub runs: Vec<Run>,
    /// A dispatch with `return_run_details: true` answers `200` with the run (github.com
    /// since 2026); `false` models a server that answers `204` whatever was asked.
    pub dispatch_details: bool,
}

impl Default for Actions {
    fn default() -> Self {
        Actions {
            workflows: Vec::new(),
            runs: Vec::new(),
            dispatch_details: true,
        }
    }
}

/// A workflow file of `.github/workflows/`, as far as `workflow_dispatch` goes.
#[derive(Debug, Clone)]
pub struct Workflow {
    pub id: u64,
    /// `.github/workflows/<file>`.
    pub path: String,
    pub name: String,
    /// Its `on.workflow_dispatch.inputs`: name → required.
    pub inputs: BTreeMap<String, bool>,
    /// Its `run-name`, with `${{ inputs.<name> }}` expressions.
    pub run_name: Option<String>,
    /// It has a `workflow_dispatch` trigger.
    pub dispatchable: bool,
    pub seq: u64,
}

/// A workflow run.
#[derive(Debug, Clone)]
pub struct Run {
    pub id: u64,
    pub workflow_id: u64,
    pub run_number: u64,
    pub display_title: String,
    pub event: String,
    /// `queued`, `in_progress`, `completed`.
    pub status: String,
    pub conclusion: Option<String>,
    pub head_branch: String,
    pub head_sha: String,
    pub inputs: BTreeMap<String, String>,
    pub seq: u64,
    pub updated: u64,
    /// When it was created, by the wall clock, as GitHub stamps a run when it is dispatched
    /// (the bot compares it with its own clock to find the run).
    pub created: String,
    pub artifacts: Vec<RunArtifact>,
}

/// An artifact a run uploaded: its zip archive.
#[derive(Debug, Clone)]
pub struct RunArtifact {
    pub id: u64,
    pub name: String,
    pub zip: Vec<u8>,
    pub expired: bool,
    pub seq: u64,
}

/// How GitHub refuses a write to a protected branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protection {
    /// A classic branch protection rule: `422 Protected branch update failed for
    /// refs/heads/<b>.`
    Classic,
    /// A repository ruleset ("Restrict updates", "Block force pushes"): `422 Repository rule
    /// violations found` with the violated rules listed.
    Ruleset,
}

/// A branch protection rule: a classic one (Settings → Branches → "Add classic branch
/// protection rule") or a repository ruleset targeting branches, with the settings the fake
/// models. A classic rule with neither setting still protects its branch: GitHub's branch
/// protection endpoints answer for it instead of `404 Branch not protected`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchRule {
    /// An exact branch name, or a prefix ending in `*`.
    pub pattern: String,
    pub kind: Protection,
    /// Ref creations, updates and deletions through the API are refused ("Restrict who can
    /// push", "Require a pull request before merging"; a ruleset's "Restrict updates").
    pub restrict_updates: bool,
    /// "Require signed commits": a ref update bringing a commit without a verified signature
    /// is refused, and so are merges that would.
    pub required_signatures: bool,
}

impl BranchRule {
    fn matches(&self, branch: &str) -> bool {
        match self.pattern.strip_suffix('*') {
            Some(prefix) => branch.starts_with(prefix),
            None => branch == self.pattern,
        }
    }
}

pub fn hash_hex(kind: &str, parts: &[&[u8]]) -> String {
    let mut h = sha2::Sha256::new();
    h.update(kind.as_bytes());
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    hex::encode(h.finalize())[..40].to_string()
}

pub fn sha256_hex(b: &[u8]) -> String {
    hex::encode(sha2::Sha256::digest(b))
}

impl Repo {
    pub fn new(id: u64, default_branch: &str, seq: u64) -> Self {
        Repo {
            id,
            default_branch: default_branch.into(),
            description: None,
            seq,
            objects: HashMap::new(),
            refs: BTreeMap::new(),
            releases: Vec::new(),
            pulls: Vec::new(),
            issues: Vec::new(),
            comments: Vec::new(),
            labels: Vec::new(),
            latest: Latest::Legacy,
            next_number: 1,
            archived: false,
            rules: Vec::new(),
            allow_auto_merge: false,
            required_checks: false,
            actions: Actions::default(),
        }
    }

    /// The release GitHub marks "Latest" (`GET /releases/latest`).
    pub fn latest_release(&self) -> Option<&Rel> {
        match self.latest {
            Latest::Pinned(Some(id)) => {
                if let Some(r) = self
                    .releases
                    .iter()
                    .find(|r| r.id == id && r.full_release())
                {
                    return Some(r);
                }
                self.legacy_latest(None)
            }
            Latest::Pinned(None) => None,
            Latest::Legacy => self.legacy_latest(None),
        }
    }

    fn legacy_latest(&self, except: Option<u64>) -> Option<&Rel> {
        self.releases
            .iter()
            .filter(|r| r.full_release() && Some(r.id) != except)
            .max_by(|a, b| {
                let v = |r: &Rel| semver::Version::parse(r.tag.trim_start_matches('v')).ok();
                (a.seq, v(a)).cmp(&(b.seq, v(b)))
            })
    }

    /// Apply `make_latest` (`"true"`, `"false"`, `"legacy"`) for release `id`, which has just
    /// been created or updated; `None` means the request did not say. `newly_published`:
    /// GitHub's default for a release published by this request is `"true"`.
    pub fn make_latest(&mut self, id: u64, choice: Option<&str>, newly_published: bool) {
        let full = self.releases.iter().any(|r| r.id == id && r.full_release());
        let choice = choice.or(newly_published.then_some("true"));
        match choice {
            Some("true") if full => self.latest = Latest::Pinned(Some(id)),
            Some("false") => {
                // Whatever is latest now stays latest; this release must not become it.
                let keep = match self.latest {
                    Latest::Pinned(p) => p.filter(|p| *p != id),
                    Latest::Legacy => self.legacy_latest(Some(id)).map(|r| r.id),
                };
                self.latest = Latest::Pinned(keep);
            }
            Some("legacy") => self.latest = Latest::Legacy,
            _ => {}
        }
    }

    pub fn put_blob(&mut self, b: Vec<u8>) -> String {
        let sha = hash_hex("blob", &[&b]);
        self.objects.insert(sha.clone(), Obj::Blob(b));
        sha
    }

    pub fn blob(&self, sha: &str) -> Option<&Vec<u8>> {
        match self.objects.get(sha)? {
            Obj::Blob(b) => Some(b),
            _ => None,
        }
    }

    pub fn commit(&self, sha: &str) -> Option<&CommitObj> {
        match self.objects.get(sha)? {
            Obj::Commit(c) => Some(c),
            _ => None,
        }
    }

    pub fn put_commit(
        &mut self,
        tree: String,
        parents: Vec<String>,
        message: &str,
        who: Person,
        seq: u64,
    ) -> String {
        let sha = hash_hex(
            "commit",
            &[
                tree.as_bytes(),
                parents.join(",").as_bytes(),
                message.as_bytes(),
                who.name.as_bytes(),
                &seq.to_le_bytes(),
            ],
        );
        self.objects.insert(
            sha.clone(),
            Obj::Commit(CommitObj {
                tree,
                parents,
                message: message.into(),
                author: who.clone(),
                committer: who,
                verified: false,
                seq,
            }),
        );
        sha
    }

    /// Store a hierarchy of trees for a flat path → blob map; returns the root tree.
    pub fn write_tree(&mut self, flat: &BTreeMap<String, String>) -> String {
        let mut entries: BTreeMap<String, (String, String, String)> = BTreeMap::new();
        let mut dirs: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (p, sha) in flat {
            match p.split_once('/') {
                Some((d, rest)) => {
                    dirs.entry(d.to_string())
                        .or_default()
                        .insert(rest.to_string(), sha.clone());
                }
                None => {
                    entries.insert(p.clone(), ("100644".into(), "blob".into(), sha.clone()));
                }
            }
        }
        for (d, sub) in dirs {
            let s = self.write_tree(&sub);
            entries.insert(d, ("040000".into(), "tree".into(), s));
        }
        let ser: String = entries
            .iter()
            .map(|(n, (m, t, s))| format!("{m} {t} {s} {n}\n"))
            .collect();
        let sha = hash_hex("tree", &[ser.as_bytes()]);
        self.objects.insert(sha.clone(), Obj::Tree(entries));
        sha
    }

    /// path → blob sha of every file under a tree.
    pub fn flatten(&self, tree: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        self.flatten_into(tree, "", &mut out);
        out
    }

    pub fn flatten_into(&self, tree: &str, prefix: &str, out: &mut BTreeMap<String, String>) {
        if let Some(Obj::Tree(entries)) = self.objects.get(tree) {
            for (n, (_, t, s)) in entries {
                let p = format!("{prefix}{n}");
                if t == "tree" {
                    self.flatten_into(s, &format!("{p}/"), out);
                } else {
                    out.insert(p, s.clone());
                }
            }
        }
    }

    /// Peel a ref target (tag objects) to a commit.
    pub fn peel(&self, mut sha: String) -> Option<String> {
        for _ in 0..10 {
            match self.objects.get(&sha)? {
                Obj::Tag(t) => sha = t.object.clone(),
                Obj::Commit(_) => return Some(sha),
                _ => return None,
            }
        }
        None
    }

    /// A commit-ish: sha, branch or tag name.
    pub fn resolve(&self, r: &str) -> Option<String> {
        if self.commit(r).is_some() {
            return Some(r.to_string());
        }
        if let Some(s) = self.refs.get(&format!("refs/heads/{r}")) {
            return Some(s.clone());
        }
        if let Some(s) = self.refs.get(&format!("refs/tags/{r}")) {
            return self.peel(s.clone());
        }
        if let Some(s) = r.strip_prefix("refs/").and_then(|_| self.refs.get(r)) {
            return self.peel(s.clone());
        }
        None
    }

    /// The rules that apply to the branch of `full_ref` (none for a tag): as on GitHub, one
    /// classic rule (a rule naming the branch exactly wins over patterns; among patterns the
    /// first added) and every matching ruleset, classic first.
    pub fn rules_for(&self, full_ref: &str) -> Vec<&BranchRule> {
        let Some(branch) = full_ref.strip_prefix("refs/heads/") else {
            return Vec::new();
        };
        let classic = |r: &&BranchRule| r.kind == Protection::Classic;
        let exact = self
            .rules
            .iter()
            .filter(classic)
            .find(|r| r.pattern == branch);
        let classic_rule = exact.or_else(|| {
            self.rules
                .iter()
                .filter(classic)
                .find(|r| r.matches(branch))
        });
        classic_rule
            .into_iter()
            .chain(
                self.rules
                    .iter()
                    .filter(|r| r.kind == Protection::Ruleset && r.matches(branch)),
            )
            .collect()
    }

    /// The rule of `kind` whose pattern is exactly `pattern`, added (with no setting) if there
    /// is none: what a person edits in the settings.
    pub fn rule_mut(&mut self, pattern: &str, kind: Protection) -> &mut BranchRule {
        let i = match self
            .rules
            .iter()
            .position(|r| r.pattern == pattern && r.kind == kind)
        {
            Some(i) => i,
            None => {
                self.rules.push(BranchRule {
                    pattern: pattern.to_string(),
                    kind,
                    restrict_updates: false,
                    required_signatures: false,
                });
                self.rules.len() - 1
            }
        };
        &mut self.rules[i]
    }

    /// The classic rule protecting `branch` as GitHub's REST API sees it: only a rule naming
    /// the branch exactly (rules with a pattern are reachable through GraphQL only).
    pub fn classic_rule_of(&mut self, branch: &str) -> Option<&mut BranchRule> {
        self.rules
            .iter_mut()
            .find(|r| r.kind == Protection::Classic && r.pattern == branch)
    }

    /// How a write to `refs/heads/<branch>` is refused, if the branch is protected.
    pub fn protection(&self, full_ref: &str) -> Option<Protection> {
        self.rules_for(full_ref)
            .into_iter()
            .find(|r| r.restrict_updates)
            .map(|r| r.kind)
    }

    /// How the branch of `full_ref` requires signed commits, if it does.
    fn signatures_rule(&self, full_ref: &str) -> Option<Protection> {
        self.rules_for(full_ref)
            .into_iter()
            .find(|r| r.required_signatures)
            .map(|r| r.kind)
    }

    /// Whether the branch of `full_ref` requires signed commits.
    pub fn requires_signatures(&self, full_ref: &str) -> bool {
        self.signatures_rule(full_ref).is_some()
    }

    /// How moving `refs/heads/<branch>` to `new` is refused for bringing commits without a
    /// verified signature, if the branch requires signed commits. The commits brought are
    /// those `new` reaches and the branch did not (for a new branch: that no branch or tag
    /// of the repository reached).
    pub fn unsigned_refusal(&self, full_ref: &str, new: &str) -> Option<Protection> {
        let how = self.signatures_rule(full_ref)?;
        let known: BTreeSet<String> = match self.refs.get(full_ref) {
            Some(cur) => self.ancestors(cur),
            None => self
                .refs
                .values()
                .flat_map(|sha| self.ancestors(sha))
                .collect(),
        };
        self.ancestors(new)
            .iter()
            .filter(|c| !known.contains(*c))
            .any(|c| self.commit(c).is_some_and(|c| !c.verified))
            .then_some(how)
    }

    pub fn ancestors(&self, sha: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![sha.to_string()];
        while let Some(s) = stack.pop() {
            if seen.insert(s.clone())
                && let Some(c) = self.commit(&s)
            {
                stack.extend(c.parents.iter().cloned());
            }
        }
        seen
    }

    /// A branch at `sha`: its files and its first-parent history (`None` when the commit is
    /// missing).
    fn branch_snapshot(&self, sha: &str) -> Option<BranchSnapshot> {
        let c = self.commit(sha)?;
        let files = self
            .flatten(&c.tree)
            .into_iter()
            .map(|(p, s)| (p, self.blob(&s).cloned().unwrap_or_default()))
            .collect();
        let mut history = Vec::new();
        let mut cur = Some(sha.to_string());
        while let Some(s) = cur {
            let Some(c) = self.commit(&s) else { break };
            history.push(c.message.clone());
            cur = c.parents.first().cloned();
            if history.len() > 10_000 {
                break;
            }
        }
        Some(BranchSnapshot { files, history })
    }

    /// A tag at `sha`: annotated or not, its message, and the commit it points at.
    fn tag_snapshot(&self, sha: &str) -> TagSnapshot {
        let (annotated, message) = match self.objects.get(sha) {
            Some(Obj::Tag(o)) => (true, o.message.clone()),
            _ => (false, String::new()),
        };
        let commit = self
            .peel(sha.to_string())
            .and_then(|c| self.commit(&c).cloned());
        let (commit_message, files) = match commit {
            Some(c) => (
                c.message.clone(),
                self.flatten(&c.tree)
                    .into_iter()
                    .map(|(p, s)| {
                        (
                            p,
                            sha256_hex(self.blob(&s).map(|b| b.as_slice()).unwrap_or(&[])),
                        )
                    })
                    .collect(),
            ),
            None => (String::new(), BTreeMap::new()),
        };
        TagSnapshot {
            annotated,
            message,
            commit_message,
            files,
        }
    }

    pub fn snapshot(&self) -> RepoSnapshot {
        let mut branches = BTreeMap::new();
        let mut tags = BTreeMap::new();
        for (r, sha) in &self.refs {
            if let Some(b) = r.strip_prefix("refs/heads/") {
                if let Some(branch) = self.branch_snapshot(sha) {
                    branches.insert(b.to_string(), branch);
                }
            } else if let Some(t) = r.strip_prefix("refs/tags/") {
                tags.insert(t.to_string(), self.tag_snapshot(sha));
            }
        }
        let mut releases: Vec<ReleaseSnapshot> = self
            .releases
            .iter()
            .map(|r| ReleaseSnapshot {
                tag: r.tag.clone(),
                name: r.name.clone(),
                draft: r.draft,
                body: r.body.clone().unwrap_or_default(),
                assets: r
                    .assets
                    .iter()
                    .map(|a| (a.name.clone(), sha256_hex(&a.bytes)))
                    .collect(),
            })
            .collect();
        releases.sort_by(|a, b| {
            (&a.tag, a.draft, &a.name, &a.body).cmp(&(&b.tag, b.draft, &b.name, &b.body))
        });
        let mut pulls: Vec<PullSnapshot> = self
            .pulls
            .iter()
            .map(|p| PullSnapshot {
                number: p.number,
                head: p.head.clone(),
                base: p.base.clone(),
                title: p.title.clone(),
                body: p.body.clone(),
                state: if p.merged {
                    "merged".into()
                } else {
                    p.state.clone()
                },
            })
            .collect();
        pulls.sort_by_key(|p| p.number);
        let comments = self
            .comments
            .iter()
            .map(|c| CommentSnapshot {
                issue: c.issue,
                body: c.body.clone(),
            })
            .collect();
        let mut issues: Vec<IssueSnapshot> = self
            .issues
            .iter()
            .map(|i| IssueSnapshot {
                number: i.number,
                title: i.title.clone(),
                body: i.body.clone().unwrap_or_default(),
                state: i.state.clone(),
                labels: i.labels.clone(),
            })
            .collect();
        issues.sort_by_key(|i| i.number);
        RepoSnapshot {
            branches,
            tags,
            releases,
            pulls,
            issues,
            comments,
        }
    }
}

/// Where a `/repos/{owner}/{name}` path leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The repository's current full name (as it was created, original letter case).
    Found(String),
    /// A former name: GitHub redirects to `/repositories/{id}`.
    Moved(u64),
    Missing,
}

/// Every repository, by full name (`owner/name`).
#[derive(Debug, Default)]
pub struct World {
    pub repos: BTreeMap<String, Repo>,
    /// Former full names (lower case) → repository id, after renames and transfers.
    pub moved: BTreeMap<String, u64>,
    /// GitHub Apps, their installations and installation tokens.
    pub apps: super::app::Apps,
    pub next_id: u64,
    pub seq: u64,
}

impl World {
    /// Names are case-insensitive on GitHub; a current name wins over a former one.
    pub fn lookup(&self, owner: &str, name: &str) -> Lookup {
        let want = format!("{owner}/{name}");
        if let Some(full) = self.repos.keys().find(|k| k.eq_ignore_ascii_case(&want)) {
            return Lookup::Found(full.clone());
        }
        match self.moved.get(&want.to_ascii_lowercase()) {
            Some(id) if self.full_name_of(*id).is_some() => Lookup::Moved(*id),
            _ => Lookup::Missing,
        }
    }

    pub fn full_name_of(&self, id: u64) -> Option<String> {
        self.repos
            .iter()
            .find(|(_, r)| r.id == id)
            .map(|(k, _)| k.clone())
    }

    pub fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Rename or transfer: the repository answers to `to`, and its old name redirects.
    pub fn move_repo(&mut self, from: &str, to: &str) -> Result<(), String> {
        let Lookup::Found(from) = self.lookup_full(from) else {
            return Err(format!("no repository {from}"));
        };
        if matches!(self.lookup_full(to), Lookup::Found(_)) {
            return Err(format!("{to} already exists"));
        }
        let repo = self.repos.remove(&from).expect("found above");
        self.moved.insert(from.to_ascii_lowercase(), repo.id);
        self.moved.remove(&to.to_ascii_lowercase());
        self.repos.insert(to.to_string(), repo);
        Ok(())
    }

    pub fn lookup_full(&self, full: &str) -> Lookup {
        match full.split_once('/') {
            Some((o, n)) => self.lookup(o, n),
            None => Lookup::Missing,
        }
    }
}
