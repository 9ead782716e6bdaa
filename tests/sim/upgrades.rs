//! Cluster minor upgrades (issue 22): the promises about the bot's upgrade pull requests,
//! checked after every run from the tenants' raw files and pull request records, and what the
//! year shows — which Clusters left a minor before its end of life, and how many days before.
//!
//! Everything here is read through the simulator's own readers (`read::clusters`,
//! `read::upgrade_branch`, `read::tag`, `read::kube`): none of the bot's parsing or decision
//! helpers (`ClusterDoc`, `upgrade::branch_name`, `next_minor`, …).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, NaiveDate, Utc};

use super::invariants::{Invariant, Out, RunFacts, Violation};
use super::ledger::Ledger;
use super::observe::{Observation, UpgradeObs};
use super::read;
use super::tenants::{CLUSTER_NAMESPACE, Proposal, Tenant, UpgradeMode, Upgrades};

/// The minor of every release ever published (live or withdrawn).
fn minors_released(ledger: &Ledger) -> BTreeSet<u64> {
    ledger
        .published
        .keys()
        .filter_map(|t| read::tag(t).map(|(_, m, _)| m))
        .collect()
}

/// The upgrade promises, per tenant with `policy.upgrade`: each open step moves one Cluster one
/// minor up from what `main` runs; `approval` steps open only once ticked; a declined step is
/// not opened again for the same release; and a Cluster that opted in is off its minor by the
/// minor's end of life. `eol`: minor → end-of-life date; `unticked_after`: `(tenant, branch)`
/// of the steps the dashboard lists unticked after the run.
pub fn check_upgrades(
    f: &RunFacts,
    ledger: &Ledger,
    tenants: &[&Tenant],
    before: &Observation,
    after: &Observation,
    eol: &BTreeMap<u64, NaiveDate>,
    unticked_after: &BTreeSet<(String, String)>,
) -> Vec<Violation> {
    let mut out = Out { f, v: Vec::new() };
    for t in tenants {
        let Some(u) = &t.upgrade else { continue };
        let (Some(pre), Some(post)) = (before.upgrades.get(t.name), after.upgrades.get(t.name))
        else {
            continue;
        };
        let failed = f.tenant_outcomes.get(t.name).is_some_and(|o| o == "failed");
        if f.tenants_clean() && !failed {
            one_minor(&mut out, ledger, t, u, post);
        }
        approval(&mut out, ledger, t, u, pre, post, unticked_after);
        declined(&mut out, ledger, t, pre, post);
        at_end_of_life(&mut out, ledger, t, u, post, eol);
    }
    out.v
}

/// The Cluster an open step moves, as the branch has it.
fn on_branch(t: &Tenant, files: &super::forge::Files, id: &str) -> Option<read::Cluster> {
    read::clusters(files.get(t.cluster_file?)?)
        .into_iter()
        .find(|c| format!("{}-{}", c.namespace, c.name) == id)
}

fn one_minor(out: &mut Out, ledger: &Ledger, t: &Tenant, u: &Upgrades, post: &UpgradeObs) {
    let mut per_cluster: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (p, files) in post.open() {
        out.f.occurred(Invariant::ClusterOneMinorPerStep);
        let mut wrong = Vec::new();
        if u.mode == UpgradeMode::Ignore {
            wrong.push("the tenant's policy is `clusters: ignore`".to_string());
        }
        let Some((id, to)) = read::upgrade_branch(&p.head) else {
            wrong.push(format!(
                "its branch `{}` names no Cluster and minor",
                p.head
            ));
            out.push(
                Invariant::ClusterOneMinorPerStep,
                t.name,
                format!("{}: #{}: {}", t.name, p.number, wrong.join("; ")),
            );
            continue;
        };
        per_cluster.entry(id.clone()).or_default().push(p.number);
        let main = post.cluster(&id);
        let branch = files.as_ref().and_then(|f| on_branch(t, f, &id));
        match (main, &branch) {
            (None, _) => wrong.push(format!("`main` has no Cluster `{id}`")),
            (Some(_), None) => wrong.push(format!("the branch has no Cluster `{id}`")),
            (Some(m), Some(b)) => {
                let from = m.version_minor();
                if from.map(|m| m + 1) != Some(to) {
                    wrong.push(format!(
                        "it moves to 1.{to} while `main` runs {} ({}): not the next minor",
                        m.version,
                        if from.is_some_and(|m| to > m + 1) {
                            "a minor skipped, or stacked on a step not merged"
                        } else {
                            "a step already taken"
                        }
                    ));
                }
                if b.class_minor() != Some(to) || b.version_minor() != Some(to) {
                    wrong.push(format!(
                        "the branch's Cluster has class `{}` and version {}, not both on 1.{to}",
                        b.class, b.version
                    ));
                }
                if let Some(k) = ledger.published.get(&b.class).and_then(|p| p.kubernetes)
                    && read::kube(&b.version) != Some(k)
                {
                    wrong.push(format!(
                        "version {} is not the Kubernetes of `{}` ({k})",
                        b.version, b.class
                    ));
                }
                let listed = files.as_ref().map(Proposal::of).is_some_and(|pr| {
                    read::tag(&b.class)
                        .is_some_and(|(_, m, n)| pr.stacks.get(&m).is_some_and(|l| l.contains(&n)))
                });
                if !listed {
                    wrong.push(format!(
                        "the branch's ClusterStack does not list `{}`",
                        b.class
                    ));
                }
            }
        }
        if !wrong.is_empty() {
            out.push(
                Invariant::ClusterOneMinorPerStep,
                &format!("{} {id}", t.name),
                format!(
                    "{}: #{} (`{}`, {}): {}",
                    t.name,
                    p.number,
                    p.head,
                    branch
                        .as_ref()
                        .map(|b| format!("{} {}", b.class, b.version))
                        .unwrap_or_default(),
                    wrong.join("; ")
                ),
            );
        }
    }
    for (id, pulls) in per_cluster.into_iter().filter(|(_, p)| p.len() > 1) {
        out.push(
            Invariant::ClusterOneMinorPerStep,
            &format!("{} {id}", t.name),
            format!(
                "{}: Cluster `{id}` has {} open upgrade pull requests at once: {pulls:?}",
                t.name,
                pulls.len()
            ),
        );
    }
}

fn approval(
    out: &mut Out,
    ledger: &Ledger,
    t: &Tenant,
    u: &Upgrades,
    pre: &UpgradeObs,
    post: &UpgradeObs,
    unticked_after: &BTreeSet<(String, String)>,
) {
    if u.mode != UpgradeMode::Approval {
        return;
    }
    // The situation: a run with a step that waits for a tick, listed unticked before the run
    // or listed by this run (then this run held a due step back for want of a tick). Runs
    // days apart with a person ticking within days may see every step ticked before the next
    // run: the run that lists a step is then the only one in which it waits.
    if ledger
        .waiting
        .iter()
        .any(|(n, b)| *n == t.name && !ledger.ticked.contains_key(&(t.name, b.clone())))
        || unticked_after.iter().any(|(n, _)| n == t.name)
    {
        out.f.occurred(Invariant::ClusterWaitsForApproval);
    }
    let known: BTreeSet<u64> = pre.pulls.iter().map(|(p, _)| p.number).collect();
    for (p, _) in post
        .pulls
        .iter()
        .filter(|(p, _)| !known.contains(&p.number))
    {
        if !ledger.ticked.contains_key(&(t.name, p.head.clone())) {
            out.push(
                Invariant::ClusterWaitsForApproval,
                &format!("{} {}", t.name, p.head),
                format!(
                    "{}: #{} opened for `{}`, a step no one ticked on the dashboard{}",
                    t.name,
                    p.number,
                    p.head,
                    if ledger.waiting.contains(&(t.name, p.head.clone())) {
                        " (it was listed there without a tick)"
                    } else {
                        " (it was never listed there)"
                    }
                ),
            );
        }
    }
}

/// The promise of `declined-stays-closed`, for upgrade steps: a step a human closed is not
/// opened again proposing the same release.
fn declined(out: &mut Out, ledger: &Ledger, t: &Tenant, pre: &UpgradeObs, post: &UpgradeObs) {
    let open_before: BTreeSet<&str> = pre.open().map(|(p, _)| p.head.as_str()).collect();
    if ledger
        .upgrade_declined
        .iter()
        .any(|d| d.tenant == t.name && !open_before.contains(d.branch.as_str()))
    {
        out.f.occurred(Invariant::DeclinedStaysClosed);
    }
    let known: BTreeSet<u64> = pre.pulls.iter().map(|(p, _)| p.number).collect();
    for (p, files) in post.open().filter(|(p, _)| !known.contains(&p.number)) {
        let Some((id, _)) = read::upgrade_branch(&p.head) else {
            continue;
        };
        let Some(class) = files
            .as_ref()
            .and_then(|f| on_branch(t, f, &id))
            .map(|c| c.class)
        else {
            continue;
        };
        if let Some(d) = ledger
            .upgrade_declined
            .iter()
            .rev()
            .find(|d| d.tenant == t.name && d.branch == p.head && d.class == class)
        {
            out.push(
                Invariant::DeclinedStaysClosed,
                &format!("{} {}", t.name, p.head),
                format!(
                    "{}: #{} opened moving Cluster `{id}` to `{class}` — the step of #{} that a human closed after run {}",
                    t.name, p.number, d.pull, d.after_run
                ),
            );
        }
    }
}

/// The end of `day` (UTC).
fn end_of(day: NaiveDate) -> DateTime<Utc> {
    (day + chrono::Days::new(1))
        .and_hms_opt(0, 0, 0)
        .expect("midnight")
        .and_utc()
}

/// Whether the team of `tenant` declined a step of Cluster `id` away from minor `m`.
fn declined_step(ledger: &Ledger, tenant: &str, id: &str, m: u64) -> bool {
    ledger.upgrade_declined.iter().any(|d| {
        d.tenant == tenant && read::upgrade_branch(&d.branch) == Some((id.to_string(), m + 1))
    })
}

/// The minors a Cluster ran on, oldest first: its first minor and every minor it moved to.
fn minors_of(
    ledger: &Ledger,
    t: &Tenant,
    name: &str,
    first: u64,
) -> Vec<(u64, Option<DateTime<Utc>>)> {
    let id = format!("{CLUSTER_NAMESPACE}-{name}");
    let mut out = vec![(first, None)];
    for m in ledger
        .cluster_moves
        .iter()
        .filter(|m| m.tenant == t.name && m.cluster == id)
    {
        if let Some(last) = out.last_mut()
            && last.0 == m.from
        {
            last.1 = Some(m.at);
        }
        out.push((m.to, None));
    }
    out
}

fn at_end_of_life(
    out: &mut Out,
    ledger: &Ledger,
    t: &Tenant,
    u: &Upgrades,
    post: &UpgradeObs,
    eol: &BTreeMap<u64, NaiveDate>,
) {
    if u.mode == UpgradeMode::Ignore {
        return;
    }
    let today = out.f.at.date_naive();
    let past = |m: u64| eol.get(&m).is_some_and(|e| today > *e);
    if u.clusters.iter().any(|(name, first)| {
        minors_of(ledger, t, name, *first)
            .iter()
            .any(|(m, _)| past(*m))
    }) {
        out.f.occurred(Invariant::ClusterSupportedAtEndOfLife);
    }
    let released = minors_released(ledger);
    for c in &post.clusters {
        let Some(m) = c.version_minor() else { continue };
        if !past(m) {
            continue;
        }
        if !released.contains(&(m + 1)) {
            continue; // no step possible: the next minor has no release
        }
        let id = format!("{}-{}", c.namespace, c.name);
        // Declined by its team, with no release of the next minor since: their choice.
        // The team declined the step (a re-proposal for a newer release is a courtesy whose
        // timing is upstream's): their choice.
        if declined_step(ledger, t.name, &id, m) {
            continue;
        }
        // The bot could not have done it: its first run on or after the day the step was due
        // (`before_end_of_life_days` before the end of life) left the team less than its
        // longest delay (ticking, merging, one refused merge retried) before the end of life.
        let due = u
            .before_eol_days
            .map(|d| eol[&m] - chrono::Days::new(u64::from(d)))
            .unwrap_or(NaiveDate::MIN);
        let first_run = ledger
            .runs
            .iter()
            .filter_map(|r| r.at)
            .find(|at| at.date_naive() >= due);
        let slack = chrono::Duration::hours(u.merge_hours.1 + u.tick_hours.1 + 48);
        if first_run.is_none_or(|r| r + slack > end_of(eol[&m])) {
            continue;
        }
        let steps: Vec<String> = post
            .pulls
            .iter()
            .filter(|(p, _)| read::upgrade_branch(&p.head).is_some_and(|(i, _)| i == id))
            .map(|(p, _)| format!("#{} {:?} `{}`", p.number, p.state, p.head))
            .collect();
        out.push(
            Invariant::ClusterSupportedAtEndOfLife,
            &format!("{} {id} 1.{m}", t.name),
            format!(
                "{}: Cluster `{id}` still runs {} ({}) on {today}, after 1.{m} reached its end of life on {}; upgrade pull requests: {}",
                t.name,
                c.version,
                c.class,
                eol[&m],
                if steps.is_empty() {
                    "none".to_string()
                } else {
                    steps.join(", ")
                }
            ),
        );
    }
}

/// One Cluster × minor whose end of life fell in the simulated window.
#[derive(Debug, Clone)]
pub struct EndOfLife {
    pub tenant: &'static str,
    pub mode: UpgradeMode,
    pub cluster: &'static str,
    pub minor: u64,
    pub eol: NaiveDate,
    /// When its upgrade step was merged (the Cluster left the minor), if it was.
    pub left: Option<DateTime<Utc>>,
    /// Its team declined a step away from the minor.
    pub declined: bool,
}

impl EndOfLife {
    /// Days from leaving the minor to its end of life, when it left before.
    pub fn days_before(&self) -> Option<i64> {
        self.left
            .map(|l| (self.eol - l.date_naive()).num_days())
            .filter(|d| *d >= 0)
    }
}

/// What the year shows for the Clusters of the tenants with `policy.upgrade`: every minor a
/// Cluster ran on whose end of life fell between `start` and `end`.
pub fn outcomes(
    ledger: &Ledger,
    tenants: &[&Tenant],
    eol: &BTreeMap<u64, NaiveDate>,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> Vec<EndOfLife> {
    let mut out = Vec::new();
    for t in tenants {
        let Some(u) = &t.upgrade else { continue };
        for (name, first) in u.clusters {
            for (m, left) in minors_of(ledger, t, name, *first) {
                let Some(e) = eol.get(&m) else { continue };
                if *e < start.date_naive() || *e >= end.date_naive() {
                    continue;
                }
                out.push(EndOfLife {
                    tenant: t.name,
                    mode: u.mode,
                    cluster: name,
                    minor: m,
                    eol: *e,
                    left,
                    declined: declined_step(
                        ledger,
                        t.name,
                        &format!("{CLUSTER_NAMESPACE}-{name}"),
                        m,
                    ),
                });
            }
        }
    }
    out
}
