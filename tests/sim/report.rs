//! The figures of a simulation: runs, human events and faults by kind, violations by invariant
//! (with the seed and run to reproduce each), and what runs cost (median, p95, max per forge),
//! as Markdown for `docs/reliability.md` and `BENCHMARKS.md`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::invariants::{Invariant, Violation};
use super::world::WorldReport;

/// The start delay assumed for GitHub's scheduled workflows, in minutes: GitHub starts them
/// late under load and documents no bound (docs/reliability.md, Latency).
pub const CRON_START_DELAY: u64 = 10;

/// `(median, p95, max)` of a list.
pub fn spread(mut xs: Vec<u64>) -> (u64, u64, u64) {
    if xs.is_empty() {
        return (0, 0, 0);
    }
    xs.sort_unstable();
    let at = |q: f64| xs[((xs.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.95), *xs.last().expect("not empty"))
}

fn fmt3((a, b, c): (u64, u64, u64)) -> String {
    format!("{a} / {b} / {c}")
}

/// Every world's figures together.
pub struct Summary<'a> {
    pub worlds: &'a [WorldReport],
}

impl Summary<'_> {
    pub fn runs(&self) -> usize {
        self.worlds.iter().map(|w| w.records.len()).sum()
    }

    pub fn violations(&self) -> Vec<&Violation> {
        self.worlds.iter().flat_map(|w| &w.violations).collect()
    }

    fn merged(
        f: impl Fn(&WorldReport) -> &BTreeMap<String, usize>,
        worlds: &[WorldReport],
    ) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for w in worlds {
            for (k, v) in f(w) {
                *out.entry(k.clone()).or_default() += v;
            }
        }
        out
    }

    /// The worlds table.
    pub fn worlds_table(&self) -> String {
        let mut s = String::from(
            "| world | forge | upstream | seed | simulated | runs | exit 0 / 1 / 2 / 3 | releases published (withdrawn) | tenant PRs | wall |\n|---|---|---|---|---|---|---|---|---|---|\n",
        );
        for w in self.worlds {
            let exits = |c: i32| w.records.iter().filter(|r| r.exit == c).count();
            let start = w
                .start
                .map(|s| s.format("%Y-%m-%d").to_string())
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} days from {start} | {} | {} / {} / {} / {} | {} ({}) | {} | {:.1} s |",
                w.name,
                w.forge,
                w.upstream,
                w.seed,
                w.days,
                w.records.len(),
                exits(0),
                exits(1),
                exits(2),
                exits(3),
                w.published,
                w.withdrawn,
                w.pulls_opened,
                w.wall.as_secs_f64()
            );
        }
        s
    }

    fn counts_table(title: &str, counts: &BTreeMap<String, usize>) -> String {
        let mut s = format!("| {title} | count |\n|---|---|\n");
        let mut list: Vec<(&String, &usize)> = counts.iter().collect();
        list.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (k, v) in list {
            let _ = writeln!(s, "| {k} | {v} |");
        }
        s
    }

    pub fn humans_table(&self) -> String {
        Self::counts_table("human event", &Self::merged(|w| &w.humans, self.worlds))
    }

    pub fn faults_table(&self) -> String {
        Self::counts_table("fault injected", &Self::merged(|w| &w.faults, self.worlds))
    }

    /// Distinct findings: the first violation of each (world, invariant, subject), with how
    /// many runs repeated it.
    pub fn findings(&self) -> Vec<(&Violation, usize)> {
        let mut seen: BTreeMap<(String, Invariant, String), (usize, usize)> = BTreeMap::new();
        let all = self.violations();
        for (i, v) in all.iter().enumerate() {
            let e = seen
                .entry((v.world.clone(), v.invariant, v.subject.clone()))
                .or_insert((i, 0));
            e.1 += 1;
        }
        let mut out: Vec<(&Violation, usize)> =
            seen.into_values().map(|(i, n)| (all[i], n)).collect();
        out.sort_by_key(|(v, _)| (v.invariant, v.world.clone(), v.run));
        out
    }

    /// Runs in which the situation `inv` guards occurred, and of those the runs in which it
    /// held, over every world.
    pub fn coverage(&self, inv: Invariant) -> (usize, usize) {
        self.worlds
            .iter()
            .filter_map(|w| w.coverage.get(&inv))
            .fold((0, 0), |(o, h), (a, b)| (o + a, h + b))
    }

    /// Violations per invariant: runs that broke it, distinct findings, the first one.
    pub fn violations_table(&self) -> String {
        let all = self.violations();
        let findings = self.findings();
        let mut s = String::from(
            "| invariant | guarded situation | occurred / held (runs) | violations (runs) | distinct findings | first seen (world, seed, budget, run) | where the rule lives |\n|---|---|---|---|---|---|---|\n",
        );
        for inv in Invariant::ALL {
            let of = all.iter().filter(|v| v.invariant == inv).count();
            let distinct: Vec<&(&Violation, usize)> = findings
                .iter()
                .filter(|(v, _)| v.invariant == inv)
                .collect();
            let first = all
                .iter()
                .find(|v| v.invariant == inv)
                .map(|v| {
                    format!(
                        "{}, SIM_SEED={} SIM_RUNS={}, run {}",
                        v.world, v.seed, v.budget, v.run
                    )
                })
                .unwrap_or_else(|| "—".into());
            let (occurred, held) = self.coverage(inv);
            let coverage = format!("{occurred} / {held}");
            let _ = writeln!(
                s,
                "| `{}`: {} | {} | {coverage} | {of} | {} | {first} | {} |",
                inv.name(),
                inv.promise(),
                inv.situation(),
                distinct.len(),
                inv.home()
            );
        }
        s
    }

    /// The first `n` distinct findings of each invariant, in full.
    pub fn examples(&self, n: usize) -> String {
        let mut s = String::new();
        let findings = self.findings();
        for inv in Invariant::ALL {
            for (v, repeats) in findings.iter().filter(|(v, _)| v.invariant == inv).take(n) {
                let again = if *repeats > 1 {
                    format!(" (in {repeats} runs)")
                } else {
                    String::new()
                };
                let _ = writeln!(s, "- {v}{again}");
            }
        }
        s
    }

    /// Cost per run, per forge: forge calls, writes, HTTP requests (GitHub).
    pub fn cost_table(&self) -> String {
        let mut s = String::from(
            "| world (forge, publish) | runs | forge calls per run (median / p95 / max) | writes per run | no-op runs: calls | GitHub HTTP requests per run | rate-limit units per run | upstream HTTP requests per run |\n|---|---|---|---|---|---|---|---|\n",
        );
        // Per world kind (several seeds of one kind pool their runs): the OCI world lives on
        // the local forge but costs differently (no forge releases to list).
        let mut by: BTreeMap<String, Vec<&WorldReport>> = BTreeMap::new();
        for w in self.worlds {
            let publish = match w.name.as_str() {
                "oci" => "oci",
                "github+oci" => "forge + oci",
                "local-pr" => "forge, pull-request mode",
                _ => "forge",
            };
            by.entry(format!("{} ({}, {publish})", w.name, w.forge))
                .or_default()
                .push(w);
        }
        for (forge, ws) in by {
            let recs: Vec<_> = ws.iter().flat_map(|w| &w.records).collect();
            let calls = spread(recs.iter().map(|r| r.reads + r.writes).collect());
            let writes = spread(recs.iter().map(|r| r.writes).collect());
            let noop = spread(
                recs.iter()
                    .filter(|r| r.writes == 0 && r.exit == 0)
                    .map(|r| r.reads)
                    .collect(),
            );
            let http: Vec<u64> = recs
                .iter()
                .filter_map(|r| r.http.as_ref().map(|h| h.requests as u64))
                .collect();
            let units: Vec<u64> = recs
                .iter()
                .filter_map(|r| r.http.as_ref().map(|h| h.units as u64))
                .collect();
            let up: Vec<u64> = recs
                .iter()
                .filter(|r| r.upstream_requests > 0)
                .map(|r| r.upstream_requests as u64)
                .collect();
            let or_dash = |v: Vec<u64>| {
                if v.is_empty() {
                    "—".to_string()
                } else {
                    fmt3(spread(v))
                }
            };
            let _ = writeln!(
                s,
                "| {forge} | {} | {} | {} | {} | {} | {} | {} |",
                recs.len(),
                fmt3(calls),
                fmt3(writes),
                fmt3(noop),
                or_dash(http),
                or_dash(units),
                or_dash(up)
            );
        }
        s
    }

    /// Whether cost grows with history: no-op runs (no write, exit 0) of the first and the
    /// last quarter of the year, with the series and tenants they served — what the cost
    /// bound allows to grow — beside the releases published before them, which must not count.
    pub fn history_table(&self) -> String {
        let mut s = String::from(
            "| world | seed | no-op runs, first quarter: forge calls (median / max) | series, tenants | releases before | last quarter: forge calls (median / max) | series, tenants | releases before |\n|---|---|---|---|---|---|---|---|\n",
        );
        for w in self.worlds {
            let noops: Vec<&super::ledger::RunRecord> = w
                .records
                .iter()
                .filter(|r| r.writes == 0 && r.exit == 0)
                .collect();
            let q = noops.len() / 4;
            if q == 0 {
                continue;
            }
            let part = |rs: &[&super::ledger::RunRecord]| {
                let calls = spread(rs.iter().map(|r| r.reads).collect());
                let series = spread(rs.iter().map(|r| r.series as u64).collect());
                let tenants = spread(rs.iter().map(|r| r.tenants as u64).collect());
                let history = spread(rs.iter().map(|r| r.history as u64).collect());
                format!(
                    "{} / {} | {}, {} | {}",
                    calls.0, calls.2, series.0, tenants.0, history.0
                )
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                w.name,
                w.seed,
                part(&noops[..q]),
                part(&noops[noops.len() - q..])
            );
        }
        s
    }

    /// Upstream-to-release delay per world (p50 / p95 / max in minutes), as simulated (runs
    /// at minute 17 of the hours the world runs), and with the cron start delay assumed for
    /// GitHub's scheduler added.
    pub fn latency_table(&self) -> String {
        let mut s = format!(
            "| world | runs | every hour? | releases caused by upstream | left out: minor off the `minors:` list while waiting | delay to the run that released (p50 / p95 / max, minutes) | with a {CRON_START_DELAY}-minute cron start delay (p50 / p95) |\n|---|---|---|---|---|---|---|\n",
        );
        for w in self.worlds {
            if w.latency.is_empty() {
                continue;
            }
            let xs: Vec<u64> = w.latency.iter().map(|m| (*m).max(0) as u64).collect();
            let (p50, p95, max) = spread(xs);
            let hourly = w.records.len() as i64 >= w.days * 24;
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {p50} / {p95} / {max} | {} / {} |",
                w.name,
                w.records.len(),
                if hourly { "yes" } else { "no (chosen hours)" },
                w.latency.len() + w.latency_excluded,
                w.latency_excluded,
                p50 + CRON_START_DELAY,
                p95 + CRON_START_DELAY
            );
        }
        s
    }

    /// Cluster upgrades (issue 22): per world and policy, the Clusters × minors whose end of
    /// life fell in the window, how many left the minor before its end of life (the upgrade
    /// step merged) and how many days before it.
    pub fn upgrades_table(&self) -> String {
        use super::tenants::UpgradeMode;
        let mut s = String::from(
            "| world | `policy.upgrade.clusters` | Clusters × minors reaching end of life in the window | on a supported minor before end of life | days before end of life (min / median / max) | upgrade PRs opened / merged / declined | steps ticked |\n|---|---|---|---|---|---|---|\n",
        );
        for w in self.worlds {
            for mode in [
                UpgradeMode::PullRequest,
                UpgradeMode::Approval,
                UpgradeMode::Ignore,
            ] {
                let list: Vec<_> = w.end_of_life.iter().filter(|e| e.mode == mode).collect();
                if list.is_empty() {
                    continue;
                }
                let days: Vec<u64> = list
                    .iter()
                    .filter_map(|e| e.days_before())
                    .map(|d| d as u64)
                    .collect();
                let (min, median, max) = (
                    days.iter().min().copied().unwrap_or(0),
                    spread(days.clone()).0,
                    days.iter().max().copied().unwrap_or(0),
                );
                let (opened, merged, declined, ticked) = w.upgrade_pulls;
                let pulls = if mode == UpgradeMode::Ignore {
                    "— (control: none expected)".to_string()
                } else {
                    format!("{opened} / {merged} / {declined} (all tenants)")
                };
                let _ = writeln!(
                    s,
                    "| {} | `{}` | {} | {} of {} | {} | {pulls} | {} |",
                    w.name,
                    mode.yaml(),
                    list.iter()
                        .map(|e| format!(
                            "{} {} 1.{} ({}{})",
                            e.tenant,
                            e.cluster,
                            e.minor,
                            e.eol,
                            if e.declined { ", a step declined" } else { "" }
                        ))
                        .collect::<Vec<_>>()
                        .join(", "),
                    days.len(),
                    list.len(),
                    if days.is_empty() {
                        "—".to_string()
                    } else {
                        format!("{min} / {median} / {max}")
                    },
                    if mode == UpgradeMode::Approval {
                        ticked.to_string()
                    } else {
                        "—".into()
                    }
                );
            }
        }
        s
    }

    /// The whole report.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "### Worlds\n\n{}", self.worlds_table());
        for w in self.worlds {
            let _ = writeln!(s, "- {}: upstream of the window: {}", w.name, w.provenance);
        }
        let _ = writeln!(s, "\n### Human events\n\n{}", self.humans_table());
        let _ = writeln!(s, "### Faults injected\n\n{}", self.faults_table());
        let _ = writeln!(s, "### Invariants\n\n{}", self.violations_table());
        let ex = self.examples(3);
        if !ex.is_empty() {
            let _ = writeln!(s, "First violations of each invariant:\n\n{ex}");
        }
        let _ = writeln!(
            s,
            "### Cluster upgrades before end of life\n\n{}",
            self.upgrades_table()
        );
        let _ = writeln!(s, "### Cost per run\n\n{}", self.cost_table());
        let _ = writeln!(s, "### Upstream to release\n\n{}", self.latency_table());
        let _ = writeln!(s, "{}", self.history_table());
        s
    }

    /// The performance figures alone (BENCHMARKS.md): cost per run, and whether it grows.
    pub fn cost_markdown(&self) -> String {
        format!("{}\n{}", self.cost_table(), self.history_table())
    }
}
