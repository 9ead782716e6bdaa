//! The world simulator of issue 12: months of hourly `stackbot release` runs (the real pipeline,
//! in process) against the local forge and the fake GitHub, while upstream flickers and people
//! merge, decline, edit and delete between runs; after every run it checks the promises of
//! issue 12 (`invariants`).
//!
//! | module | what |
//! |---|---|
//! | [`timeline`] | upstream over time: real Kubernetes GA dates and chart publications, extended forward |
//! | [`upstream`] | upstream as one run sees it (snapshot or HTTP), with that run's faults |
//! | [`forge`] | the local forge and the fake GitHub behind one interface (bot, people, checks) |
//! | [`tenants`] | tenant repositories, their teams, and what their files propose |
//! | [`actors`] | people between runs |
//! | [`observe`] | the world read before and after each run |
//! | [`ledger`] | what was ever published, declined, merged; what each run cost |
//! | [`read`] | the oracles' own readers of raw state (tags, `metadata.yaml`, archives, tenant files) |
//! | [`invariants`] | the promises, checked after every run |
//! | [`upgrades`] | the Cluster upgrade promises (issue 22) and what the year shows for them |
//! | [`world`] | one world: plan the hours, act, run, check |
//! | [`report`] | the figures, as Markdown |
//!
//! Deterministic: a seed fixes the timeline, the faults and every person's decision. Knobs
//! (environment): `SIM_SEED`, `SIM_SEEDS` (worlds per forge), `SIM_DAYS`, `SIM_RUNS` (runs per
//! world; `24 × SIM_DAYS` runs every hour), `SIM_START`, `SIM_TRACE=1` (a line per run and per
//! person's act), `SIM_TRACE=2` (and each run's skipped series and tenant decisions),
//! `SIM_REPORT_ONLY=1` (print violations instead of failing). The defaults (100 local / 40
//! GitHub / 30 OCI / 25 GitHub with OCI / 40 pull-request runs) cost about 65 s of CPU (user
//! and system) for the five worlds of `cargo test` (they run in parallel; 10 / 15 / 17 / 18 /
//! 5 s, each alone), eight tenants per run; docs/reliability.md has the mutation check's
//! share.
#![allow(dead_code)]

pub mod actors;
pub mod forge;
pub mod invariants;
pub mod ledger;
pub mod observe;
pub mod oci;
pub mod read;
pub mod report;
pub mod tenants;
pub mod timeline;
pub mod upgrades;
pub mod upstream;
pub mod world;

use chrono::{DateTime, NaiveDate, Utc};

use world::{ForgeKind, Scenario};

/// The simulation's knobs.
#[derive(Debug, Clone)]
pub struct Settings {
    pub seed: u64,
    pub seeds: u64,
    pub days: i64,
    /// Runs per world; `None`: each world's default.
    pub runs: Option<usize>,
    pub start: DateTime<Utc>,
}

fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

impl Settings {
    /// From the environment, with the defaults of the normal `cargo test`.
    pub fn from_env() -> Settings {
        let start: NaiveDate =
            env("SIM_START").unwrap_or_else(|| "2025-08-01".parse().expect("date"));
        Settings {
            seed: env("SIM_SEED").unwrap_or(2026),
            seeds: env("SIM_SEEDS").unwrap_or(1).max(1),
            days: env("SIM_DAYS").unwrap_or(365),
            runs: env("SIM_RUNS"),
            start: start.and_hms_opt(0, 0, 0).expect("midnight").and_utc(),
        }
    }

    /// No knob is set: the seed and budgets of `cargo test`, whose worlds are known to produce
    /// certain situations (see `tests/world_sim.rs`, coverage).
    pub fn defaults() -> bool {
        ["SIM_SEED", "SIM_SEEDS", "SIM_DAYS", "SIM_START", "SIM_RUNS"]
            .iter()
            .all(|k| std::env::var_os(k).is_none())
    }

    /// Print the violations instead of failing.
    pub fn report_only() -> bool {
        std::env::var("SIM_REPORT_ONLY").is_ok_and(|v| v == "1")
    }

    /// The world on `forge` for the `i`-th seed.
    pub fn scenario(&self, forge: ForgeKind, i: u64) -> Scenario {
        let seed = self.seed + i;
        match forge {
            // The local forge with upstream snapshots: the cheapest world, so the most runs.
            ForgeKind::Local => Scenario {
                name: "local".into(),
                forge,
                http_upstream: false,
                oci_only: false,
                oci_too: false,
                pull_request: false,
                overlap: false,
                seed,
                start: self.start,
                days: self.days,
                runs: self.runs.unwrap_or(100),
                upstream_faults: 0.15,
                forge_faults: 0.05,
                harness_fault: None,
                update_after_main_moved: false,
            },
            // The fake GitHub with upstream over HTTP: every request crosses a socket and the
            // OpenAPI conformance checks, so fewer runs by default.
            ForgeKind::Github => Scenario {
                name: "github".into(),
                forge,
                http_upstream: true,
                oci_only: false,
                oci_too: false,
                pull_request: false,
                overlap: false,
                seed,
                start: self.start,
                days: self.days,
                runs: self.runs.unwrap_or(40),
                upstream_faults: 0.15,
                forge_faults: 0.08,
                harness_fault: None,
                update_after_main_moved: false,
            },
        }
    }

    /// `publish: [oci]` alone, on the local forge with a real registry: tenants must follow
    /// releases that exist only in the registry, and history must not cost more every run.
    pub fn oci_scenario(&self, i: u64) -> Scenario {
        let seed = self.seed + i;
        Scenario {
            name: "oci".into(),
            forge: ForgeKind::Local,
            http_upstream: false,
            oci_only: true,
            oci_too: false,
            pull_request: false,
            overlap: false,
            seed,
            start: self.start,
            days: self.days,
            runs: self.runs.unwrap_or(30),
            upstream_faults: 0.15,
            forge_faults: 0.05,
            harness_fault: None,
            update_after_main_moved: false,
        }
    }

    /// `publish: [forge, oci]` on the fake GitHub with upstream over HTTP: every release goes
    /// to both, and a run stopped between them must leave the next one to finish the other.
    pub fn both_scenario(&self, i: u64) -> Scenario {
        Scenario {
            name: "github+oci".into(),
            oci_only: false,
            oci_too: true,
            runs: self.runs.unwrap_or(25),
            ..self.scenario(ForgeKind::Github, i)
        }
    }

    /// `mode: pull-request` on the local forge: a release pull request per series, merged by
    /// a maintainer hours later (now and then declined), published by the next run.
    pub fn pull_request_scenario(&self, i: u64) -> Scenario {
        Scenario {
            name: "local-pr".into(),
            pull_request: true,
            overlap: true,
            runs: self.runs.unwrap_or(40),
            ..self.scenario(ForgeKind::Local, i)
        }
    }
}
