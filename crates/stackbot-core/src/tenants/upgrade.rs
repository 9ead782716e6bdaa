//! Minor upgrades of a tenant's `Cluster` resources (`policy.upgrade.clusters`), decided
//! purely.
//!
//! Kubernetes upgrades a control plane one minor at a time, and a minor upgrade changes what
//! runs in a tenant's cluster, so each step is its own pull request on its own branch
//! (`stackbot/upgrade-<provider>-<stack>-<cluster>-<minor>`): one Cluster, one minor, reviewed
//! and merged on its own. The step is read from the base, so the next one (1.34 → 1.35) can
//! only appear once the previous one is merged: until then the base still runs 1.33.
//!
//! A step moves the Cluster to the newest release of the next minor and, in the same pull
//! request, makes the tenant's `ClusterStack` list that release (the Cluster Stack Operator
//! must provide the ClusterClass before a Cluster can use it). Every promise of the stack pull
//! requests holds for these too, because they go through the same [`super::plan::decide`]: a
//! declined step is not proposed again for the same release, the base moving is no reason to
//! push, a person's commit is never pushed over.

use std::collections::BTreeMap;

use super::approval::Approval;
use super::edit::{Channel, ClusterDoc, Edit, EditError, TenantFile};
use super::plan::{
    self, AvailableRelease, BranchState, DesiredPr, Facts, FileEdit, Observed, TenantPlan,
    content_id,
};
use crate::compliance::{self, CveFact, Lifecycles};
use crate::config::{TenantConfig, UpgradeAction};
use crate::model::{KubeVersion, Minor, ReleaseName, StackId};

/// The Kubernetes changelog of a minor: its "Urgent Upgrade Notes" and removed APIs.
pub fn kubernetes_notes(minor: Minor) -> String {
    format!("https://github.com/kubernetes/kubernetes/blob/master/CHANGELOG/CHANGELOG-{minor}.md")
}

/// Kubernetes' guide to the APIs each minor removes.
pub const KUBERNETES_DEPRECATIONS: &str =
    "https://kubernetes.io/docs/reference/using-api/deprecation-guide/";

/// Cluster API's notes on upgrading a managed Cluster (control plane first, then workers).
pub const CLUSTER_API_NOTES: &str = "https://cluster-api.sigs.k8s.io/tasks/upgrading-clusters";

/// The minor after `m`: the only one a Cluster may move to.
pub fn next_minor(m: Minor) -> Minor {
    Minor {
        major: m.major,
        minor: m.minor + 1,
    }
}

/// `namespace/name` of a Cluster as people write it (`name` alone without a namespace).
pub fn cluster_label(c: &ClusterDoc) -> String {
    match &c.namespace {
        Some(ns) => format!("{ns}/{}", c.name),
        None => c.name.clone(),
    }
}

/// The branch of the step that moves Cluster `c` to minor `to`. Named by the target minor, so
/// the branch of the step a Cluster has already taken is found from its current minor.
pub fn branch_name(stack: &StackId, c: &ClusterDoc, to: Minor) -> String {
    let id: String = cluster_label(c)
        .chars()
        .map(|ch| {
            if ch.is_ascii_alphanumeric() {
                ch.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    format!(
        "stackbot/upgrade-{}-{}-{}-{}",
        stack.provider,
        stack.name,
        id.trim_matches('-'),
        to.dashed()
    )
}

/// The Clusters of `stack` in the tenant's cluster files, with the file they are in and the
/// release their class names. Files that do not parse are left to the stack plan (which
/// fails the tenant for them).
fn clusters<'a>(
    cluster_files: &'a [TenantFile],
    stack: &StackId,
) -> Vec<(&'a TenantFile, ClusterDoc, ReleaseName)> {
    cluster_files
        .iter()
        .flat_map(|f| f.clusters().into_iter().map(move |c| (f, c)))
        .filter_map(|(f, c)| {
            let cur = plan::cluster_release(&c, stack)?;
            Some((f, c, cur))
        })
        .collect()
}

/// The branches an upgrade plan reads, per Cluster of a followed stack: the step to the next
/// minor, and the step that brought the Cluster to its minor (its pull request is closed when
/// the Cluster got there another way). Two branches per Cluster: the cost is bounded by the
/// Clusters, never by history.
pub fn branches(
    stacks: &[StackId],
    cluster_files: &BTreeMap<String, Vec<u8>>,
    limits: &crate::yaml::Limits,
) -> Result<Vec<String>, EditError> {
    let files = cluster_files
        .iter()
        .map(|(p, b)| TenantFile::parse(p, b, limits))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::new();
    for stack in stacks {
        for (_, c, cur) in clusters(&files, stack) {
            out.push(branch_name(stack, &c, cur.minor));
            out.push(branch_name(stack, &c, next_minor(cur.minor)));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// When the step away from `minor` is due, by `before_end_of_life_days`: `Ok(None)` when it is
/// due now, `Ok(Some(day))` when it waits until `day`, `Err` when the end of life is unknown.
fn due(t: &TenantConfig, minor: Minor, facts: &Facts) -> Result<Option<chrono::NaiveDate>, String> {
    let Some(days) = t.policy.upgrade.before_end_of_life_days else {
        return Ok(None);
    };
    let eol = match &facts.inputs.lifecycles {
        Lifecycles::Known(m) => m
            .get(&minor)
            .copied()
            .ok_or_else(|| format!("the Kubernetes schedule lists no end of life for {minor}"))?,
        Lifecycles::Unknown(cause) => {
            return Err(format!(
                "the end of life of {minor} is unknown this run ({cause})"
            ));
        }
    };
    let from = eol
        .checked_sub_days(chrono::Days::new(u64::from(days)))
        .unwrap_or(eol);
    Ok((facts.today < from).then_some(from))
}

/// The plans of one stack's Cluster upgrades: per Cluster the next step (when the next minor
/// has a release and the step is due) and the closing of a step the Cluster already took.
#[allow(clippy::too_many_arguments)]
pub fn plan(
    t: &TenantConfig,
    stack: &StackId,
    latest: &BTreeMap<Minor, &AvailableRelease>,
    stack_files: &[TenantFile],
    cluster_files: &[TenantFile],
    observed: &Observed,
    facts: &Facts,
    bot_email: &str,
) -> Result<Vec<TenantPlan>, EditError> {
    let state = |b: &str| observed.upgrades.get(b).cloned().unwrap_or_default();
    let mut out = Vec::new();
    for (file, c, cur) in clusters(cluster_files, stack) {
        // The step that brought the Cluster here: an open pull request for it is done.
        let arrived = branch_name(stack, &c, cur.minor);
        let s = state(&arrived);
        if is_open(&s) {
            out.push(close(t, stack, arrived, observed, s, bot_email));
        }
        let to = next_minor(cur.minor);
        let Some(r) = latest.get(&to).copied() else {
            continue;
        };
        let branch = branch_name(stack, &c, to);
        let s = state(&branch);
        // With `approval`, the step waits for a tick on the dashboard; an untick withdraws it.
        // A step is listed once it is due. A step held back this run (its end of life unknown,
        // or not due after all) keeps the line it has, with its tick; without a pull request it
        // gets no line it has not. Listing a step that may not be due invited a tick that the
        // next run, knowing the step was not due, dropped with the line: the step came back
        // unticked when due, and its team, having ticked, waited for a pull request that never
        // came.
        let listed = facts
            .approvals
            .get(&(t.name.clone(), branch.clone()))
            .copied();
        let has_pull = s.pull().is_some();
        let approval = approval(t, listed, &branch, &c, &cur, to, r);
        let not_due = match due(t, cur.minor, facts) {
            Ok(None) => None,
            // Not yet: nothing to say unless a pull request exists or the dashboard lists the
            // step (then it is left as it is).
            Ok(Some(_)) if !has_pull && listed.is_none() => continue,
            Ok(Some(day)) => Some(format!(
                "the upgrade of {} to {to} is due from {day}; {} is left as it is",
                cluster_label(&c),
                if has_pull {
                    "its pull request"
                } else {
                    "its line on the dashboard"
                }
            )),
            Err(why) => Some(format!(
                "the upgrade of {} to {to} waits: {why} (`before_end_of_life_days` needs it)",
                cluster_label(&c)
            )),
        };
        if let Some(note) = not_due {
            let mut p = idle(t, stack, branch, observed, &s, r, note);
            if has_pull || listed.is_some() {
                p.approval = approval;
            }
            out.push(p);
            continue;
        }
        if let Some(a) = approval.as_ref().filter(|a| !a.approved) {
            let mut p = unapproved(t, stack, (branch, s), observed, r, (&c, to), bot_email);
            p.approval = Some(a.clone());
            out.push(p);
            continue;
        }
        let step = Step {
            cluster: &c,
            file,
            from: &cur,
            to: r,
        };
        let mut p = step.propose(
            t,
            stack,
            branch,
            (stack_files, cluster_files),
            observed,
            s,
            facts,
            bot_email,
        )?;
        p.approval = approval;
        out.push(p);
    }
    Ok(out)
}

fn is_open(s: &BranchState) -> bool {
    s.pull()
        .is_some_and(|p| p.state == crate::forge::PullState::Open)
}

/// The plan for a step's branch that wants no pull request: an open one is closed (with the
/// stack plans' promises, through [`plan::decide`]).
fn close(
    t: &TenantConfig,
    stack: &StackId,
    branch: String,
    observed: &Observed,
    s: BranchState,
    bot_email: &str,
) -> TenantPlan {
    plan::decide(
        t,
        stack.clone(),
        branch,
        observed,
        s,
        Vec::new(),
        DesiredPr {
            id: content_id(stack, &[]),
            title: String::new(),
            body: String::new(),
            releases: Vec::new(),
            nothing_published: false,
            labels: Vec::new(),
            automerge: false,
        },
        bot_email,
    )
}

#[allow(clippy::too_many_arguments)]
/// With `approval`, the step waits for a tick on the dashboard; an untick withdraws it.
/// `listed` is the step's line on the dashboard: `None` when it has none, else whether it is
/// ticked.
fn approval(
    t: &TenantConfig,
    listed: Option<bool>,
    branch: &str,
    c: &ClusterDoc,
    cur: &ReleaseName,
    to: Minor,
    r: &AvailableRelease,
) -> Option<Approval> {
    (t.policy.upgrade.clusters == UpgradeAction::Approval).then(|| Approval {
        tenant: t.name.clone(),
        approved: listed == Some(true),
        branch: branch.to_string(),
        words: format!(
            "Cluster `{}` from {} to {to} (`{}`, Kubernetes {})",
            cluster_label(c),
            cur.minor,
            r.name,
            r.kubernetes
        ),
    })
}

/// A step not (or no longer) approved: its open pull request is closed as withdrawn, otherwise
/// it waits as a report line.
fn unapproved(
    t: &TenantConfig,
    stack: &StackId,
    (branch, s): (String, BranchState),
    observed: &Observed,
    r: &AvailableRelease,
    (c, to): (&ClusterDoc, Minor),
    bot_email: &str,
) -> TenantPlan {
    if !is_open(&s) {
        return idle(
            t,
            stack,
            branch,
            observed,
            &s,
            r,
            format!(
                "the upgrade of {} to {to} waits for approval on the dashboard",
                cluster_label(c)
            ),
        );
    }
    let mut p = close(t, stack, branch, observed, s, bot_email);
    if p.action == plan::Action::Close {
        p.note = Some("the approval was withdrawn on the dashboard".into());
        p.close_comment = Some(
            "The step was unticked on the dashboard, which withdraws this pull request. Tick it again to have it proposed again.".into(),
        );
    }
    p
}

/// A step that is not proposed this run, as a report line: nothing is written.
fn idle(
    t: &TenantConfig,
    stack: &StackId,
    branch: String,
    observed: &Observed,
    s: &BranchState,
    r: &AvailableRelease,
    note: String,
) -> TenantPlan {
    TenantPlan {
        tenant: t.name.clone(),
        repository: t.repository.clone(),
        stack: stack.clone(),
        base_branch: t.base_branch.clone(),
        base_head: observed.base_head.clone(),
        branch,
        files: Vec::new(),
        action: plan::Action::None,
        push: false,
        branch_head: s.head.clone(),
        pull: None,
        pull_stale: false,
        title: String::new(),
        body: String::new(),
        content_id: String::new(),
        human_commits: Vec::new(),
        releases: vec![r.name.to_string()],
        note: Some(note),
        labels: Vec::new(),
        automerge: false,
        approval: None,
        close_comment: None,
    }
}

/// One Cluster × minor step.
struct Step<'a> {
    cluster: &'a ClusterDoc,
    file: &'a TenantFile,
    from: &'a ReleaseName,
    to: &'a AvailableRelease,
}

impl Step<'_> {
    /// The step's plan: its files, its pull request's words (with the critical CVEs the new
    /// Kubernetes version fixes, and those still affecting it) and the stack plans' promises, through [`plan::decide`].
    #[allow(clippy::too_many_arguments)]
    fn propose(
        &self,
        t: &TenantConfig,
        stack: &StackId,
        branch: String,
        (stack_files, cluster_files): (&[TenantFile], &[TenantFile]),
        observed: &Observed,
        s: BranchState,
        facts: &Facts,
        bot_email: &str,
    ) -> Result<TenantPlan, EditError> {
        let r = self.to;
        let files = self.files(t, stack, stack_files, cluster_files)?;
        let id = content_id(stack, &files);
        let fixes = match self.cluster.version.parse::<KubeVersion>() {
            Ok(v) => compliance::fixed_between(Some(v), r.kubernetes, &facts.inputs),
            Err(_) => Vec::new(),
        };
        let title = self.title(&fixes);
        let risk = plan::risk(stack, &[r], facts, &s);
        let body = self.body(t, stack, &id, &files, (&fixes, &risk));
        Ok(plan::decide(
            t,
            stack.clone(),
            branch,
            observed,
            s,
            files,
            DesiredPr {
                id,
                title,
                body,
                releases: vec![r.name.to_string()],
                nothing_published: false,
                labels: plan::security_labels(t, &fixes),
                // A minor upgrade needs a person's steps (its body lists them).
                automerge: false,
            },
            bot_email,
        ))
    }

    fn class(&self) -> String {
        format!("{}-{}", self.to.name.prefix(), self.to.name.version.dot())
    }

    /// The Cluster's new class and version, and the ClusterStack listing the release when it
    /// does not yet: the release appended to the next minor's ClusterStack (oldest dropped
    /// beyond `keep`), or a ClusterStack for the next minor copied from the Cluster's own.
    fn files(
        &self,
        t: &TenantConfig,
        stack: &StackId,
        stack_files: &[TenantFile],
        cluster_files: &[TenantFile],
    ) -> Result<Vec<FileEdit>, EditError> {
        let mut edits: BTreeMap<String, Vec<Edit>> = BTreeMap::new();
        edits
            .entry(self.file.path.clone())
            .or_default()
            .push(Edit::BumpCluster {
                doc: self.cluster.doc,
                class: self.class(),
                version: self.to.kubernetes.to_string(),
            });
        let to = self.to.name.minor;
        let new = self.to.name.version.dot();
        let mut docs = Vec::new();
        for f in stack_files {
            for d in f.cluster_stacks(stack)? {
                if d.channel == Channel::Stable {
                    docs.push((f, d));
                }
            }
        }
        if let Some((f, d)) = docs.iter().find(|(_, d)| d.minor == to) {
            let edit = match &d.versions {
                Some(list) if !list.contains(&new) => {
                    let mut versions = plan::next_versions(list, &new, t.policy.keep as usize);
                    // The release the Cluster moves to is listed even when the list holds newer
                    // ones (withdrawn since): `next_versions` would drop it as the oldest.
                    if !versions.contains(&new) {
                        versions.push(new.clone());
                    }
                    Some(Edit::SetVersions {
                        doc: d.doc,
                        versions,
                    })
                }
                None if !d.auto_subscribe => Some(Edit::SetVersions {
                    doc: d.doc,
                    versions: vec![new.clone()],
                }),
                _ => None,
            };
            if let Some(e) = edit {
                edits.entry(f.path.clone()).or_default().push(e);
            }
        } else if let Some((f, d)) = docs
            .iter()
            .filter(|(_, d)| d.minor < to)
            .max_by_key(|(_, d)| (d.minor == self.from.minor, d.minor))
        {
            edits
                .entry(f.path.clone())
                .or_default()
                .push(Edit::AddMinor {
                    after_doc: d.doc,
                    from: d.minor,
                    minor: to,
                    versions: if d.versions.is_some() {
                        vec![new.clone()]
                    } else {
                        Vec::new()
                    },
                });
        }
        plan::file_edits(stack_files, cluster_files, &edits)
    }

    fn title(&self, fixes: &[CveFact]) -> String {
        let mut title = format!(
            "Upgrade Cluster {} to Kubernetes {} ({})",
            cluster_label(self.cluster),
            self.to.name.minor,
            self.to.name
        );
        if !fixes.is_empty() {
            title = format!("{} {title}", plan::SECURITY_PREFIX);
        }
        title
    }

    fn body(
        &self,
        t: &TenantConfig,
        stack: &StackId,
        id: &str,
        files: &[FileEdit],
        (fixes, risk): (&[CveFact], &str),
    ) -> String {
        let c = self.cluster;
        let (from, to) = (self.from.minor, self.to.name.minor);
        let name = cluster_label(c);
        let ns = c.namespace.as_deref().unwrap_or("default");
        let release = if self.to.html_url.is_empty() {
            format!("`{}`", self.to.name)
        } else {
            format!("[`{}`]({})", self.to.name, self.to.html_url)
        };
        let mut head = format!(
            "{}\nThis pull request upgrades the Cluster `{name}` (`{}` line {}) of tenant `{}` from Kubernetes {from} to {to}: one minor, the only step Kubernetes supports.\n\n| | ClusterClass | Kubernetes |\n|---|---|---|\n| now | `{}` | {} |\n| after the merge | {release} | {} |\n",
            super::branch::marker(stack, id, &[self.to.name.to_string()]),
            self.file.path,
            c.line,
            t.name,
            c.class,
            c.version,
            self.to.kubernetes,
        );
        head.push_str(&plan::security_section(fixes));
        // What the stack pull requests say of a release still affected by a critical CVE, from
        // the same computation: the Cluster moves to it, so its team must know.
        head.push_str(risk);
        if files.iter().any(|f| f.path != self.file.path) {
            head.push_str(&format!(
                "\nThe tenant's `ClusterStack` does not list `{}` yet, so this pull request adds it: the Cluster Stack Operator must provide the ClusterClass before the Cluster can use it.\n",
                self.to.name
            ));
        }
        head.push_str(&format!(
            "\n**Before merging**\n\n\
             1. Read the Kubernetes {to} upgrade notes (\"Urgent Upgrade Notes\", removed APIs): {}, and {KUBERNETES_DEPRECATIONS}. No workload may still use an API {to} removes.\n\
             2. Read Cluster API's notes on upgrading a Cluster: {CLUSTER_API_NOTES}.\n\
             3. Make sure a recent etcd backup exists: a minor upgrade cannot be undone by setting the version back.\n\
             \n**After merging**\n\n\
             1. The GitOps controller applies the `ClusterStack`; wait until the Cluster Stack Operator reports the ClusterClass `{}` ready (`kubectl get clusterstackreleases -n {ns}`).\n\
             2. Cluster API replaces the control plane machines, then the workers: `clusterctl describe cluster {} -n {ns}`.\n\
             3. Once every machine runs {}, the step to the next minor can follow: stackbot proposes it only after this pull request is merged.\n\
             \n**Rollback**\n\n\
             - Before the rollout starts: revert this pull request.\n\
             - Once the control plane runs {to}: Kubernetes does not support going back a minor, and Cluster API refuses to lower `spec.topology.version`. Fix forward, or restore the etcd backup into a Cluster at {from}.\n",
            kubernetes_notes(to),
            self.class(),
            c.name,
            self.to.kubernetes,
        ));
        let changes = files.iter().map(|f| format!("`{}`", f.path)).collect();
        plan::fit_body(head, changes, &[self.to], files)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(ns: Option<&str>, name: &str) -> ClusterDoc {
        ClusterDoc {
            doc: 0,
            line: 1,
            name: name.into(),
            namespace: ns.map(str::to_string),
            class: "openstack-scs2-1-33-v2".into(),
            version: "v1.33.4".into(),
        }
    }

    #[test]
    fn each_cluster_and_minor_step_has_its_own_branch() {
        let s: StackId = "openstack/scs2".parse().unwrap();
        let m: Minor = "1.34".parse().unwrap();
        assert_eq!(
            branch_name(&s, &cluster(Some("team-a"), "prod"), m),
            "stackbot/upgrade-openstack-scs2-team-a-prod-1-34"
        );
        assert_ne!(
            branch_name(&s, &cluster(Some("team-a"), "prod"), m),
            branch_name(&s, &cluster(Some("team-b"), "prod"), m)
        );
        assert_ne!(
            branch_name(&s, &cluster(None, "prod"), m),
            branch_name(&s, &cluster(None, "prod"), next_minor(m))
        );
    }
}
