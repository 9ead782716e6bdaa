//! The upstream world over time: Kubernetes releases, node images and Helm charts as they
//! appeared, built from real dates and extended forward with the same rhythm.
//!
//! **Real** (fixtures in the repository):
//! - every Kubernetes release the GitHub API listed up to v1.36.0 (2026-04-22): tag names, GA and
//!   pre-release dates of `tests/fixtures/upstream/kubernetes-releases.json` (GA dates are the git
//!   tag dates; see that directory's README);
//! - release and end-of-life dates of the minors 1.31 … 1.36 (`k8s-schedule.yaml`, and the
//!   end-of-life table of `tests/fixtures/upstream/k8s-eol.yaml` copied below);
//! - every `openstack-cloud-controller-manager` / `openstack-cinder-csi` chart version with its
//!   publication time and digest up to 2026-05-13 (`tests/fixtures/sim/cpo-chart-versions.tsv`);
//! - the sha256 of the node images the fixtures know (`tests/fixtures/upstream/capi-images/`).
//!
//! **Synthetic** (seeded, so the same seed gives the same world):
//! - Kubernetes patches after 2026-04-22: one per supported minor on the second Tuesday of each
//!   month (the real v1.36.1/v1.35.5/v1.34.8/v1.33.12 target date 2026-05-12 is one), tagged that
//!   day or the next, none after a minor's end of life; a new minor every 119 days after 1.36.0
//!   (1.37.0 on 2026-08-19), with `-beta.0`, `-rc.0` and `-rc.1` pre-releases before it and 14
//!   months of support;
//! - node images: every GA patch gets its image 6 hours to 10 days after the GA (OSISM builds
//!   them after the tag; v1.35.4 took one day), and 3 % never get one;
//! - Helm charts after 2026-05-13: a `2.<minor>.0` chart 18 to 50 days after a new minor (with an
//!   `-alpha.0` before it, a pitfall the real index has), then a patch chart every 35 to 110 days
//!   while the minor is supported;
//! - every sha256 and digest not listed above (derived from the file name, so stable).

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, Duration, NaiveDate, TimeZone, Utc, Weekday};
use stackbot::model::{KubeVersion, Minor};

/// Release and end-of-life dates of the minors with real data: kubernetes/website
/// `schedule.yaml` (1.33 … 1.36) and `eol.yaml` (1.31, 1.32), as in the upstream fixtures.
const REAL_MINORS: &[(u64, &str, &str)] = &[
    (31, "2024-08-13", "2025-11-11"),
    (32, "2024-12-11", "2026-02-28"),
    (33, "2025-04-23", "2026-06-28"),
    (34, "2025-08-27", "2026-10-27"),
    (35, "2025-12-17", "2027-02-28"),
    (36, "2026-04-22", "2027-06-28"),
];

/// Days between two synthetic minors (1.34.0 → 1.35.0 → 1.36.0 took 112 and 126 days).
const MINOR_CADENCE_DAYS: i64 = 119;

/// One entry of the Kubernetes releases API (GA or pre-release).
#[derive(Debug, Clone)]
pub struct KubeRelease {
    pub tag: String,
    /// `Some` for a GA release.
    pub ga: Option<KubeVersion>,
    pub at: DateTime<Utc>,
    pub id: u64,
    pub real: bool,
}

/// The node image of a GA patch.
#[derive(Debug, Clone)]
pub struct Image {
    pub version: KubeVersion,
    /// When its `.CHECKSUM` appears; `None`: never built.
    pub at: Option<DateTime<Utc>>,
}

/// One chart version in a Helm repository index.
#[derive(Debug, Clone)]
pub struct Chart {
    pub chart: String,
    pub version: String,
    pub app_version: String,
    pub at: DateTime<Utc>,
    pub digest: String,
    pub real: bool,
}

/// A minor's lifecycle.
#[derive(Debug, Clone)]
pub struct MinorLife {
    pub minor: Minor,
    pub released: NaiveDate,
    pub eol: NaiveDate,
    pub real: bool,
}

/// Everything upstream publishes during the simulation (and before it).
#[derive(Debug, Clone)]
pub struct Timeline {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    /// Oldest first.
    pub kube: Vec<KubeRelease>,
    pub images: BTreeMap<KubeVersion, Image>,
    /// Oldest first.
    pub charts: Vec<Chart>,
    pub minors: Vec<MinorLife>,
}

/// The chart names of cloud-provider-openstack the stacks use.
pub const CCM: &str = "openstack-cloud-controller-manager";
pub const CSI: &str = "openstack-cinder-csi";

use crate::support::root;

fn date(s: &str) -> NaiveDate {
    s.parse().expect("date")
}

fn at(d: NaiveDate, h: u32, m: u32) -> DateTime<Utc> {
    Utc.from_utc_datetime(&d.and_hms_opt(h, m, 0).expect("time"))
}

fn v(major: u64, minor: u64, patch: u64) -> KubeVersion {
    KubeVersion {
        major,
        minor,
        patch,
    }
}

/// The second Tuesday of a month: the Kubernetes patch release day.
pub fn second_tuesday(year: i32, month: u32) -> NaiveDate {
    let mut d = NaiveDate::from_ymd_opt(year, month, 1).expect("month");
    while d.weekday() != Weekday::Tue {
        d = d.succ_opt().expect("date");
    }
    d + Duration::days(7)
}

fn next_month(d: NaiveDate) -> NaiveDate {
    let (y, m) = if d.month() == 12 {
        (d.year() + 1, 1)
    } else {
        (d.year(), d.month() + 1)
    };
    NaiveDate::from_ymd_opt(y, m, 1).expect("month")
}

fn real_kube() -> Vec<KubeRelease> {
    let text =
        std::fs::read_to_string(root().join("tests/fixtures/upstream/kubernetes-releases.json"))
            .expect("kubernetes-releases.json");
    let list: Vec<serde_json::Value> = serde_json::from_str(&text).expect("releases json");
    let mut out: Vec<KubeRelease> = list
        .iter()
        .filter(|r| !r["draft"].as_bool().unwrap_or(false))
        .filter_map(|r| {
            let tag = r["tag_name"].as_str()?.to_string();
            let at: DateTime<Utc> = r["published_at"].as_str()?.parse().ok()?;
            let pre = r["prerelease"].as_bool().unwrap_or(false);
            Some(KubeRelease {
                ga: (!pre).then(|| tag.parse().ok()).flatten(),
                tag,
                at,
                id: r["id"].as_u64().unwrap_or(0),
                real: true,
            })
        })
        .collect();
    out.sort_by_key(|r| (r.at, r.id));
    out
}

fn real_charts() -> Vec<Chart> {
    let text = std::fs::read_to_string(root().join("tests/fixtures/sim/cpo-chart-versions.tsv"))
        .expect("cpo-chart-versions.tsv");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Chart {
                chart: f[0].into(),
                version: f[1].into(),
                app_version: f[2].into(),
                at: f[3].parse().expect("created"),
                digest: f[4].into(),
                real: true,
            }
        })
        .collect()
}

/// The real minors, then one every `MINOR_CADENCE_DAYS` until `horizon`.
fn minors_until(horizon: NaiveDate) -> Vec<MinorLife> {
    let mut minors: Vec<MinorLife> = REAL_MINORS
        .iter()
        .map(|(m, r, e)| MinorLife {
            minor: Minor {
                major: 1,
                minor: *m,
            },
            released: date(r),
            eol: date(e),
            real: true,
        })
        .collect();
    while let Some(last) = minors.last().cloned() {
        let released = last.released + Duration::days(MINOR_CADENCE_DAYS);
        if released > horizon {
            break;
        }
        // 14 months of support, ending on the 28th like the real schedule.
        let mut eol = released;
        for _ in 0..14 {
            eol = next_month(eol);
        }
        minors.push(MinorLife {
            minor: Minor {
                major: 1,
                minor: last.minor.minor + 1,
            },
            released,
            eol: NaiveDate::from_ymd_opt(eol.year(), eol.month(), 28).expect("28th"),
            real: false,
        });
    }
    minors
}

/// The real Kubernetes releases, then for every new minor its pre-releases and GA, and a patch
/// of every supported minor each month (on the second Tuesday or the day after).
fn kube_releases(
    minors: &[MinorLife],
    horizon: NaiveDate,
    rng: &mut fastrand::Rng,
) -> Vec<KubeRelease> {
    let mut kube = real_kube();
    let real_until = kube.iter().map(|r| r.at).max().expect("real releases");
    let mut next_id = kube.iter().map(|r| r.id).max().unwrap_or(0) + 1;
    let mut newest: BTreeMap<Minor, u64> = BTreeMap::new();
    for r in &kube {
        if let Some(g) = r.ga {
            let e = newest.entry(g.minor()).or_insert(0);
            *e = (*e).max(g.patch);
        }
    }
    let mut push = |kube: &mut Vec<KubeRelease>, tag: String, ga: Option<KubeVersion>, at| {
        kube.push(KubeRelease {
            tag,
            ga,
            at,
            id: next_id,
            real: false,
        });
        next_id += 1;
    };
    // New minors (GA + pre-releases).
    for m in minors.iter().filter(|m| !m.real) {
        let mm = m.minor;
        for (days, pre) in [(42, "beta.0"), (14, "rc.0"), (7, "rc.1")] {
            push(
                &mut kube,
                format!("v{mm}.0-{pre}"),
                None,
                at(m.released - Duration::days(days), 6, 0),
            );
        }
        push(
            &mut kube,
            format!("v{mm}.0"),
            Some(v(mm.major, mm.minor, 0)),
            at(m.released, 16, 0),
        );
        newest.insert(mm, 0);
    }
    // Monthly patches.
    let mut month = next_month(real_until.date_naive());
    while month <= horizon {
        let day = second_tuesday(month.year(), month.month()) + Duration::days(rng.i64(0..=1));
        for (i, m) in minors.iter().enumerate() {
            let ga = at(m.released, 16, 0);
            if ga >= at(day, 0, 0) || day > m.eol || at(day, 12, 0) <= real_until {
                continue;
            }
            let patch = newest.get(&m.minor).map_or(0, |p| p + 1);
            newest.insert(m.minor, patch);
            let t = at(day, 12 + (i as u32 % 6), rng.u32(0..60));
            push(
                &mut kube,
                format!("v{}.{patch}", m.minor),
                Some(v(m.minor.major, m.minor.minor, patch)),
                t,
            );
        }
        month = next_month(month);
    }
    kube.sort_by_key(|r| (r.at, r.id));
    kube
}

/// The node image of each GA release: usually within days, now and then never.
fn node_images(kube: &[KubeRelease], rng: &mut fastrand::Rng) -> BTreeMap<KubeVersion, Image> {
    // Node images after each GA.
    let mut images = BTreeMap::new();
    for r in kube {
        let Some(g) = r.ga else { continue };
        let roll = rng.f64();
        let delay = if roll < 0.03 {
            None
        } else if roll < 0.75 {
            Some(Duration::hours(rng.i64(6..96)))
        } else {
            Some(Duration::hours(rng.i64(96..240)))
        };
        images.insert(
            g,
            Image {
                version: g,
                at: delay.map(|d| r.at + d),
            },
        );
    }
    images
}

/// The real Helm charts, then the CCM and CSI charts of each minor: a first release weeks
/// after the minor's GA, patches every one to four months until its end of life.
fn charts(minors: &[MinorLife], horizon: NaiveDate, rng: &mut fastrand::Rng) -> Vec<Chart> {
    // Helm charts.
    let mut charts = real_charts();
    let charts_real_until = charts.iter().map(|c| c.at).max().expect("real charts");
    let mut series_last: BTreeMap<u64, (u64, DateTime<Utc>)> = BTreeMap::new();
    for c in charts.iter().filter(|c| c.chart == CCM) {
        if let Ok(sv) = semver::Version::parse(&c.version)
            && sv.major == 2
            && sv.pre.is_empty()
        {
            let e = series_last.entry(sv.minor).or_insert((sv.patch, c.at));
            if (sv.patch, c.at) > *e {
                *e = (sv.patch, c.at);
            }
        }
    }
    let add = |charts: &mut Vec<Chart>, version: String, app: String, t: DateTime<Utc>| {
        for (name, lag) in [(CCM, 0), (CSI, 0)] {
            charts.push(Chart {
                chart: name.into(),
                digest: synthetic_digest(&format!("chart {name}-{version}")),
                version: version.clone(),
                app_version: app.clone(),
                at: t + Duration::minutes(lag),
                real: false,
            });
        }
    };
    for m in minors {
        let mm = m.minor.minor;
        let ga = at(m.released, 16, 0);
        let first = match series_last.get(&mm) {
            Some(&(p, t)) => (p, t),
            None => {
                let t0 = ga + Duration::days(rng.i64(18..=50)) + Duration::hours(rng.i64(0..24));
                if t0 <= charts_real_until {
                    continue;
                }
                add(
                    &mut charts,
                    format!("2.{mm}.0-alpha.0"),
                    format!("v1.{}.0", mm - 1),
                    ga - Duration::days(rng.i64(20..40)),
                );
                add(&mut charts, format!("2.{mm}.0"), format!("v1.{mm}.0"), t0);
                (0, t0)
            }
        };
        let (mut patch, mut last) = first;
        let eol = at(m.eol, 0, 0);
        loop {
            let next = last.max(charts_real_until)
                + Duration::days(rng.i64(35..=110))
                + Duration::hours(rng.i64(0..24));
            if next >= eol || next.date_naive() > horizon {
                break;
            }
            patch += 1;
            add(
                &mut charts,
                format!("2.{mm}.{patch}"),
                format!("v1.{mm}.0"),
                next,
            );
            last = next;
        }
    }
    charts.sort_by_key(|c| c.at);
    charts
}

fn synthetic_digest(what: &str) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(
        format!("stackbot-sim {what}").as_bytes(),
    ))
}

impl Timeline {
    /// The world from `start` for `days` days, seeded.
    pub fn build(start: DateTime<Utc>, days: i64, seed: u64) -> Timeline {
        let mut rng = fastrand::Rng::with_seed(seed ^ 0x7157_e11e);
        let end = start + Duration::days(days);
        let horizon = end.date_naive() + Duration::days(400);
        let minors = minors_until(horizon);
        let kube = kube_releases(&minors, horizon, &mut rng);
        let images = node_images(&kube, &mut rng);
        let charts = charts(&minors, horizon, &mut rng);
        Timeline {
            start,
            end,
            kube,
            images,
            charts,
            minors,
        }
    }

    /// Entries of the releases API at `t`, newest first (what GitHub lists).
    pub fn kube_at(&self, t: DateTime<Utc>) -> Vec<&KubeRelease> {
        let mut out: Vec<&KubeRelease> = self.kube.iter().filter(|r| r.at <= t).collect();
        out.reverse();
        out
    }

    /// The newest GA patch of `minor` at `t`.
    pub fn newest_ga(&self, minor: Minor, t: DateTime<Utc>) -> Option<KubeVersion> {
        self.kube
            .iter()
            .filter(|r| r.at <= t)
            .filter_map(|r| r.ga)
            .filter(|g| g.minor() == minor)
            .max()
    }

    /// Whether the image of `v` is published at `t`.
    pub fn image_at(&self, version: KubeVersion, t: DateTime<Utc>) -> bool {
        self.images
            .get(&version)
            .and_then(|i| i.at)
            .is_some_and(|a| a <= t)
    }

    /// GA patches released at `t` (oldest first).
    pub fn ga_at(&self, t: DateTime<Utc>) -> Vec<KubeVersion> {
        self.kube
            .iter()
            .filter(|r| r.at <= t)
            .filter_map(|r| r.ga)
            .collect()
    }

    /// Chart versions published at `t`.
    pub fn charts_at(&self, t: DateTime<Utc>) -> Vec<&Chart> {
        self.charts.iter().filter(|c| c.at <= t).collect()
    }

    /// Minors the schedule lists at `t`: released, and not more than 60 days past end of life.
    pub fn schedule_at(&self, t: DateTime<Utc>) -> Vec<&MinorLife> {
        let d = t.date_naive();
        self.minors
            .iter()
            .filter(|m| m.released <= d && m.eol + Duration::days(60) >= d)
            .collect()
    }

    /// Minors supported at `t` (what `minors: supported` tracks).
    pub fn supported_at(&self, t: DateTime<Utc>) -> Vec<Minor> {
        let d = t.date_naive();
        self.minors
            .iter()
            // The bot's own rule, its one home: from the release day, not on the end-of-life day.
            .filter(|m| stackbot::model::scs::supported_on(Some(m.released), Some(m.eol), d))
            .map(|m| m.minor)
            .collect()
    }

    /// Every instant in `[start, end)` at which upstream changes (a release, an image, a chart).
    pub fn changes(&self) -> Vec<DateTime<Utc>> {
        let inside = |t: &DateTime<Utc>| *t >= self.start && *t < self.end;
        let mut out: Vec<DateTime<Utc>> = self
            .kube
            .iter()
            .map(|r| r.at)
            .chain(self.images.values().filter_map(|i| i.at))
            .chain(self.charts.iter().map(|c| c.at))
            .filter(inside)
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// How much of the window is real data, for the report.
    pub fn provenance(&self) -> String {
        let inside = |t: &DateTime<Utc>| *t >= self.start && *t < self.end;
        let ga: Vec<&KubeRelease> = self
            .kube
            .iter()
            .filter(|r| r.ga.is_some() && inside(&r.at))
            .collect();
        let real_ga = ga.iter().filter(|r| r.real).count();
        let charts: Vec<&Chart> = self.charts.iter().filter(|c| inside(&c.at)).collect();
        let real_charts = charts.iter().filter(|c| c.real).count();
        let images = self
            .images
            .values()
            .filter(|i| i.at.is_some_and(|t| inside(&t)))
            .count();
        format!(
            "{} Kubernetes GA releases ({} real, {} synthetic), {} chart versions ({} real, {} synthetic), {} node images (publication times synthetic)",
            ga.len(),
            real_ga,
            ga.len() - real_ga,
            charts.len(),
            real_charts,
            charts.len() - real_charts,
            images
        )
    }
}

#[cfg(test)]
mod tests {}
