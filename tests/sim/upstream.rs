//! Upstream as a run sees it at hour *t*: the timeline's state, with the faults of that run,
//! fed either as an upstream snapshot (`upstream.snapshot`, whose `Error`/`Missing` entries are
//! the failures; fast and exact) or through the upstream fixture HTTP server (so the HTTP
//! client's retries, pagination and ETag cache are exercised too).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Duration, Utc};
use stackbot::config::NodeImageRule;
use stackbot::model::{KubeVersion, Minor};
use stackbot::upstream::{Fetched, Key, UpstreamData};

use super::timeline::{CCM, CSI, Chart, Timeline};
use crate::upstream_server::UpstreamServer;

/// What can be wrong with one upstream source during a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpFault {
    /// A published image's CHECKSUM answers a server error (503/500).
    ChecksumError { version: KubeVersion, status: u16 },
    /// A published image's CHECKSUM answers 404 (a bucket hiccup, a re-upload in progress).
    ChecksumGone { version: KubeVersion },
    /// The GitHub releases API answers 503: the bot falls back to `stable-1.NN.txt` markers,
    /// which carry no dates.
    ReleasesApiDown,
    /// A CDN serves the cloud-provider-openstack Helm index as it was `days` ago.
    IndexStale { days: i64 },
    /// The cloud-provider-openstack Helm index answers 503.
    IndexDown,
    /// A source does not answer in time.
    Timeout(Target),
    /// The Kubernetes schedule answers 503.
    ScheduleDown,
    /// One 502, then the source answers (the HTTP client's retry absorbs it; a snapshot has
    /// nothing to show for it).
    Blip(Target),
}

/// An upstream source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Releases,
    Checksum(KubeVersion),
    Index,
    Schedule,
}

impl UpFault {
    /// The fault's kind, for the report.
    pub fn label(&self) -> &'static str {
        match self {
            UpFault::ChecksumError { .. } => "CHECKSUM 5xx",
            UpFault::ChecksumGone { .. } => "CHECKSUM 404 (it existed)",
            UpFault::ReleasesApiDown => "releases API down (markers without dates)",
            UpFault::IndexStale { .. } => "stale Helm index",
            UpFault::IndexDown => "Helm index 503",
            UpFault::Timeout(_) => "timeout",
            UpFault::ScheduleDown => "schedule 503",
            UpFault::Blip(_) => "transient 502 (retried)",
        }
    }
}

/// Where upstream lives, as configured.
#[derive(Debug, Clone)]
pub struct Urls {
    pub github_api: String,
    pub markers: String,
    pub schedule: String,
    /// Base of the node image URLs.
    pub capi: String,
    pub cpo: String,
    pub cilium: String,
    pub metrics_server: String,
}

impl Urls {
    /// The real upstream (what a snapshot's keys name).
    pub fn real() -> Self {
        Urls {
            github_api: "https://api.github.com".into(),
            markers: "https://dl.k8s.io/release".into(),
            schedule: "https://raw.githubusercontent.com/kubernetes/website/main/data/releases/schedule.yaml".into(),
            capi: "https://nbg1.your-objectstorage.com/osism/openstack-k8s-capi-images".into(),
            cpo: "https://kubernetes.github.io/cloud-provider-openstack".into(),
            cilium: "https://helm.cilium.io/".into(),
            metrics_server: "https://kubernetes-sigs.github.io/metrics-server/".into(),
        }
    }

    fn on(server: &str) -> Self {
        Urls {
            github_api: server.into(),
            markers: format!("{server}/release"),
            schedule: format!("{server}/schedule.yaml"),
            capi: format!("{server}/capi"),
            cpo: format!("{server}/charts/cpo"),
            cilium: format!("{server}/charts/cilium"),
            metrics_server: format!("{server}/charts/metrics-server"),
        }
    }
}

/// How the run reads upstream.
pub enum Feed {
    /// A snapshot file per run.
    Snapshot { path: PathBuf },
    /// The fixture HTTP server, re-programmed before each run.
    Http {
        server: UpstreamServer,
        /// Targets set by the previous run (unset when they disappear).
        set: RefCell<BTreeSet<String>>,
    },
}

pub struct Upstream {
    pub timeline: Timeline,
    pub urls: Urls,
    pub feed: Feed,
    /// Node image file name → the real sha256 the fixtures know.
    real_sha: BTreeMap<String, String>,
    /// Node image file name → how often it was rebuilt (a new sha256 for the same patch).
    rebuilt: BTreeMap<String, u32>,
    cilium_index: String,
    metrics_index: String,
}

use crate::support::root;

fn known_checksums() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let dir = root().join("tests/fixtures/upstream/capi-images");
    for d in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        for f in std::fs::read_dir(d.path()).into_iter().flatten().flatten() {
            let text = std::fs::read_to_string(f.path()).unwrap_or_default();
            let mut parts = text.split_whitespace();
            if let (Some(sha), Some(file)) = (parts.next(), parts.next()) {
                out.insert(file.to_string(), sha.to_string());
            }
        }
    }
    out
}

/// A stable synthetic sha256 for what has no real one.
pub fn synthetic_sha(what: &str) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(
        format!("stackbot-sim {what}").as_bytes(),
    ))
}

fn status_line(url: &str, status: u16) -> String {
    format!("GET {url}: HTTP {status}")
}

impl Upstream {
    /// Upstream fed by snapshots written to `dir`.
    pub fn snapshots(timeline: Timeline, dir: &Path) -> Self {
        Self::new(
            timeline,
            Urls::real(),
            Feed::Snapshot {
                path: dir.join("upstream.snapshot.json"),
            },
        )
    }

    /// Upstream served over HTTP on loopback.
    pub fn http(timeline: Timeline) -> Self {
        let server = UpstreamServer::start();
        let urls = Urls::on(&server.url());
        Self::new(
            timeline,
            urls,
            Feed::Http {
                server,
                set: RefCell::new(BTreeSet::new()),
            },
        )
    }

    fn new(timeline: Timeline, urls: Urls, feed: Feed) -> Self {
        let fixture = |f: &str| {
            std::fs::read_to_string(root().join("tests/fixtures/upstream").join(f)).expect("index")
        };
        Upstream {
            timeline,
            urls,
            feed,
            real_sha: known_checksums(),
            rebuilt: BTreeMap::new(),
            cilium_index: fixture("helm-index-cilium.yaml"),
            metrics_index: fixture("helm-index-metrics-server.yaml"),
        }
    }

    /// The `upstream:` section of `stackbot.yaml`.
    pub fn upstream_yaml(&self, dir: &Path) -> String {
        let mut s = format!(
            "upstream:\n  github_api: {}\n  kubernetes_repo: kubernetes/kubernetes\n  markers_url: {}\n  schedule_url: {}\n",
            self.urls.github_api, self.urls.markers, self.urls.schedule
        );
        if let Feed::Http { server, .. } = &self.feed {
            s.push_str(&format!("  cache_dir: {}\n", dir.join("cache").display()));
            s.push_str(&format!(
                "  cve_feed_url: {0}/cve/index.json\n  cve_record_url: {0}/cve/records/{{id}}\n",
                server.url()
            ));
        }
        s
    }

    /// The `--snapshot` a run replays (`None` over HTTP).
    pub fn snapshot_path(&self) -> Option<PathBuf> {
        match &self.feed {
            Feed::Snapshot { path } => Some(path.clone()),
            Feed::Http { .. } => None,
        }
    }

    pub fn is_http(&self) -> bool {
        matches!(self.feed, Feed::Http { .. })
    }

    /// `sha256sum` output for the image whose `.CHECKSUM` is at `url`.
    fn checksum_body(&self, url: &str) -> String {
        let image = url.strip_suffix(".CHECKSUM").unwrap_or(url);
        let file = image.rsplit('/').next().unwrap_or(image).to_string();
        let sha = match self.rebuilt.get(&file) {
            Some(n) => synthetic_sha(&format!("image {file} rebuilt {n}")),
            None => self
                .real_sha
                .get(&file)
                .cloned()
                .unwrap_or_else(|| synthetic_sha(&format!("image {file}"))),
        };
        format!("{sha}  {file}\n")
    }

    /// The node image of `version` is rebuilt: from now on its `CHECKSUM` names a new sha256
    /// (same file name, same Kubernetes patch).
    pub fn rebuild_image(&mut self, version: &str) {
        let minor = version.split('.').nth(1).unwrap_or_default();
        let ubuntu = match version
            .split('.')
            .nth(2)
            .and_then(|p| p.parse::<u64>().ok())
        {
            // `vars_by_version` of the world's configuration: 2404 from v1.33.4 on.
            Some(p) if minor.parse::<u64>().unwrap_or(0) > 33 || (minor == "33" && p >= 4) => {
                "2404"
            }
            _ => "2204",
        };
        *self
            .rebuilt
            .entry(format!("ubuntu-{ubuntu}-kube-{version}.qcow2"))
            .or_default() += 1;
    }

    fn releases_reduced(&self, t: DateTime<Utc>) -> String {
        let list: Vec<serde_json::Value> = self
            .timeline
            .kube_at(t)
            .iter()
            .map(|r| {
                serde_json::json!({
                    "tag_name": r.tag,
                    "draft": false,
                    "prerelease": r.ga.is_none(),
                    "published_at": r.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                })
            })
            .collect();
        serde_json::to_string(&list).expect("json")
    }

    fn releases_full(&self, t: DateTime<Utc>) -> Vec<serde_json::Value> {
        self.timeline
            .kube_at(t)
            .iter()
            .map(|r| {
                let when = r.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
                serde_json::json!({
                    "url": format!("https://api.github.com/repos/kubernetes/kubernetes/releases/{}", r.id),
                    "html_url": format!("https://github.com/kubernetes/kubernetes/releases/tag/{}", r.tag),
                    "id": r.id,
                    "tag_name": r.tag,
                    "name": format!("Kubernetes {}", r.tag),
                    "draft": false,
                    "prerelease": r.ga.is_none(),
                    "created_at": when,
                    "published_at": when,
                    "body": if r.real { "[sim] real tag and date" } else { "[sim] synthetic" },
                })
            })
            .collect()
    }

    fn schedule(&self, t: DateTime<Utc>) -> String {
        let mut s = String::from(
            "# simulated kubernetes/website data/releases/schedule.yaml\nschedules:\n",
        );
        let mut lives = self.timeline.schedule_at(t);
        lives.sort_by_key(|m| std::cmp::Reverse(m.minor));
        for m in lives {
            s.push_str(&format!(
                "- endOfLifeDate: \"{}\"\n  maintenanceModeStartDate: \"{}\"\n  previousPatches:\n",
                m.eol,
                m.eol - Duration::days(61)
            ));
            let mut patches: Vec<KubeVersion> = self
                .timeline
                .ga_at(t)
                .into_iter()
                .filter(|g| g.minor() == m.minor)
                .collect();
            patches.sort();
            patches.reverse();
            for p in patches {
                s.push_str(&format!(
                    "  - release: {}.{}.{}\n",
                    p.major, p.minor, p.patch
                ));
            }
            s.push_str(&format!(
                "  release: \"{}\"\n  releaseDate: \"{}\"\n",
                m.minor, m.released
            ));
        }
        s
    }

    fn cpo_index(&self, t: DateTime<Utc>) -> String {
        let mut by: BTreeMap<&str, Vec<&Chart>> = BTreeMap::new();
        for c in self.timeline.charts_at(t) {
            by.entry(c.chart.as_str()).or_default().push(c);
        }
        let mut s = String::from("apiVersion: v1\nentries:\n");
        for name in [CCM, CSI] {
            s.push_str(&format!("  {name}:\n"));
            let mut list = by.remove(name).unwrap_or_default();
            list.sort_by_key(|c| std::cmp::Reverse(c.at));
            for c in list {
                s.push_str(&format!(
                    "  - apiVersion: v2\n    appVersion: {}\n    created: \"{}\"\n    digest: {}\n    name: {name}\n    urls:\n    - https://github.com/kubernetes/cloud-provider-openstack/releases/download/{name}-{v}/{name}-{v}.tgz\n    version: {v}\n",
                    c.app_version,
                    c.at.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true),
                    c.digest,
                    v = c.version
                ));
            }
        }
        s.push_str(&format!(
            "generated: \"{}\"\n",
            t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ));
        s
    }

    /// Minors whose markers a run may read: every minor with a GA, plus the next one.
    fn marker_minors(&self, t: DateTime<Utc>) -> Vec<Minor> {
        let mut m: BTreeSet<Minor> = self.timeline.ga_at(t).iter().map(|g| g.minor()).collect();
        if let Some(max) = m.last().copied() {
            m.insert(Minor {
                major: max.major,
                minor: max.minor + 1,
            });
        }
        m.into_iter().collect()
    }

    /// Feed upstream at `t` with `faults` to the next run.
    pub fn feed(&self, t: DateTime<Utc>, image: &NodeImageRule, faults: &[UpFault]) {
        match &self.feed {
            Feed::Snapshot { path } => {
                let data = self.snapshot_at(t, image, faults);
                stackbot::upstream::snapshot::save(path, &data).expect("write snapshot");
            }
            Feed::Http { server, set } => self.serve_at(server, set, t, image, faults),
        }
    }

    fn stale_or_now(&self, t: DateTime<Utc>, faults: &[UpFault]) -> DateTime<Utc> {
        faults
            .iter()
            .find_map(|f| match f {
                UpFault::IndexStale { days } => Some(t - Duration::days(*days)),
                _ => None,
            })
            .unwrap_or(t)
    }

    /// The snapshot a run replays at `t`.
    pub fn snapshot_at(
        &self,
        t: DateTime<Utc>,
        image: &NodeImageRule,
        faults: &[UpFault],
    ) -> UpstreamData {
        let has = |f: &UpFault| faults.contains(f);
        let timeout = |target: Target| faults.contains(&UpFault::Timeout(target));
        let timed_out = |url: &str| Fetched::Error {
            message: format!("GET {url}: error sending request: operation timed out"),
        };
        let mut d = UpstreamData::default();
        let releases_url = format!(
            "{}/repos/kubernetes/kubernetes/releases?per_page=100",
            self.urls.github_api
        );
        d.insert(
            &Key::Releases,
            if has(&UpFault::ReleasesApiDown) {
                Fetched::Error {
                    message: status_line(&releases_url, 503),
                }
            } else if timeout(Target::Releases) {
                timed_out(&releases_url)
            } else {
                Fetched::Ok {
                    body: self.releases_reduced(t),
                }
            },
        );
        d.insert(
            &Key::Schedule,
            if has(&UpFault::ScheduleDown) {
                Fetched::Error {
                    message: status_line(&self.urls.schedule, 503),
                }
            } else if timeout(Target::Schedule) {
                timed_out(&self.urls.schedule)
            } else {
                Fetched::Ok {
                    body: self.schedule(t),
                }
            },
        );
        for m in self.marker_minors(t) {
            let url = format!("{}/stable-{m}.txt", self.urls.markers);
            d.insert(
                &Key::Marker(m),
                match self.timeline.newest_ga(m, t) {
                    Some(v) => Fetched::Ok {
                        body: v.to_string(),
                    },
                    None => Fetched::Missing { url },
                },
            );
        }
        self.snapshot_checksums(&mut d, t, image, faults);
        let index_url = format!("{}/index.yaml", self.urls.cpo.trim_end_matches('/'));
        d.insert(
            &Key::HelmIndex(self.urls.cpo.clone()),
            if has(&UpFault::IndexDown) {
                Fetched::Error {
                    message: status_line(&index_url, 503),
                }
            } else if timeout(Target::Index) {
                timed_out(&index_url)
            } else {
                Fetched::Ok {
                    body: self.cpo_index(self.stale_or_now(t, faults)),
                }
            },
        );
        d.insert(
            &Key::HelmIndex(self.urls.cilium.clone()),
            Fetched::Ok {
                body: self.cilium_index.clone(),
            },
        );
        d.insert(
            &Key::HelmIndex(self.urls.metrics_server.clone()),
            Fetched::Ok {
                body: self.metrics_index.clone(),
            },
        );
        d
    }

    fn serve_at(
        &self,
        server: &UpstreamServer,
        set: &RefCell<BTreeSet<String>>,
        t: DateTime<Utc>,
        image: &NodeImageRule,
        faults: &[UpFault],
    ) {
        let base = server.url();
        let path = |url: &str| url.strip_prefix(&base).unwrap_or(url).to_string();
        let mut now: BTreeSet<String> = BTreeSet::new();
        let put = |target: String, status: u16, body: String, now: &mut BTreeSet<String>| {
            server.set(&target, status, body);
            now.insert(target);
        };
        let timeout = |target: Target| faults.contains(&UpFault::Timeout(target));
        let blip = |target: Target| faults.contains(&UpFault::Blip(target));

        // Releases: paginated like GitHub (40 a page here, so the `Link` walk is exercised).
        let rel_path = "/repos/kubernetes/kubernetes/releases";
        let first = format!("{rel_path}?per_page=100");
        server.paginate_json(rel_path, &self.releases_full(t), 40);
        if faults.contains(&UpFault::ReleasesApiDown) {
            server.set(&first, 503, "<html>503 Service Unavailable</html>");
        } else if timeout(Target::Releases) {
            server.set(&first, 0, "");
        } else if blip(Target::Releases) {
            server.fail_next(&first, 1, 502, &[]);
        }

        // The CVE feed: no CVE in the simulated world (its rule has its own differential test,
        // tests/integration/scs0210_oracle.rs); served so a live run never reaches for the network.
        put(
            "/cve/index.json".into(),
            200,
            r#"{"version": "https://jsonfeed.org/version/1.1", "items": []}"#.into(),
            &mut now,
        );

        let schedule = path(&self.urls.schedule);
        if faults.contains(&UpFault::ScheduleDown) {
            put(schedule.clone(), 503, "unavailable".into(), &mut now);
        } else if timeout(Target::Schedule) {
            put(schedule.clone(), 0, String::new(), &mut now);
        } else {
            put(schedule.clone(), 200, self.schedule(t), &mut now);
            if blip(Target::Schedule) {
                server.fail_next(&schedule, 1, 502, &[]);
            }
        }

        for m in self.marker_minors(t) {
            if let Some(v) = self.timeline.newest_ga(m, t) {
                put(
                    path(&format!("{}/stable-{m}.txt", self.urls.markers)),
                    200,
                    v.to_string(),
                    &mut now,
                );
            }
        }

        self.serve_checksums(server, t, image, faults, &mut now);
        self.serve_indexes(server, t, faults, &mut now);

        let mut prev = set.borrow_mut();
        for gone in prev.difference(&now) {
            server.unset(gone);
        }
        *prev = now;
    }

    /// The node images' CHECKSUMs of a snapshot at `t`: what was published by then, or the
    /// fault injected for it.
    fn snapshot_checksums(
        &self,
        d: &mut UpstreamData,
        t: DateTime<Utc>,
        image: &NodeImageRule,
        faults: &[UpFault],
    ) {
        let timeout = |target: Target| faults.contains(&UpFault::Timeout(target));
        let timed_out = |url: &str| Fetched::Error {
            message: format!("GET {url}: error sending request: operation timed out"),
        };
        for v in self.timeline.ga_at(t) {
            let url = format!("{}.CHECKSUM", image.expand(v).1);
            let fetched = if faults.contains(&UpFault::ChecksumGone { version: v }) {
                Fetched::Missing { url }
            } else if let Some(status) = faults.iter().find_map(|f| match f {
                UpFault::ChecksumError { version, status } if *version == v => Some(*status),
                _ => None,
            }) {
                Fetched::Error {
                    message: status_line(&url, status),
                }
            } else if timeout(Target::Checksum(v)) {
                timed_out(&url)
            } else if self.timeline.image_at(v, t) {
                Fetched::Ok {
                    body: self.checksum_body(&url),
                }
            } else {
                Fetched::Missing { url }
            };
            d.insert(
                &Key::Checksum(format!("{}.CHECKSUM", image.expand(v).1)),
                fetched,
            );
        }
    }

    /// Serve the node images' CHECKSUMs at `t` (what was published by then, or the fault
    /// injected for it); every path served goes into `now`.
    fn serve_checksums(
        &self,
        server: &UpstreamServer,
        t: DateTime<Utc>,
        image: &NodeImageRule,
        faults: &[UpFault],
        now: &mut BTreeSet<String>,
    ) {
        let base = server.url();
        let path = |url: &str| url.strip_prefix(&base).unwrap_or(url).to_string();
        let put = |target: String, status: u16, body: String, now: &mut BTreeSet<String>| {
            server.set(&target, status, body);
            now.insert(target);
        };
        let timeout = |target: Target| faults.contains(&UpFault::Timeout(target));
        let blip = |target: Target| faults.contains(&UpFault::Blip(target));
        for v in self.timeline.ga_at(t) {
            let url = format!("{}.CHECKSUM", image.expand(v).1);
            let target = path(&url);
            if faults.contains(&UpFault::ChecksumGone { version: v }) {
                put(target, 404, "NoSuchKey".into(), now);
            } else if let Some(status) = faults.iter().find_map(|f| match f {
                UpFault::ChecksumError { version, status } if *version == v => Some(*status),
                _ => None,
            }) {
                put(target, status, "error".into(), now);
            } else if timeout(Target::Checksum(v)) {
                put(target, 0, String::new(), now);
            } else if self.timeline.image_at(v, t) {
                put(target.clone(), 200, self.checksum_body(&url), now);
                if blip(Target::Checksum(v)) {
                    server.fail_next(&target, 1, 502, &[]);
                }
            }
        }
    }

    /// Serve the Helm indexes at `t` (the CPO index as of a stale day when that fault is on);
    /// every path served goes into `now`.
    fn serve_indexes(
        &self,
        server: &UpstreamServer,
        t: DateTime<Utc>,
        faults: &[UpFault],
        now: &mut BTreeSet<String>,
    ) {
        let base = server.url();
        let path = |url: &str| url.strip_prefix(&base).unwrap_or(url).to_string();
        let put = |target: String, status: u16, body: String, now: &mut BTreeSet<String>| {
            server.set(&target, status, body);
            now.insert(target);
        };
        let timeout = |target: Target| faults.contains(&UpFault::Timeout(target));
        let blip = |target: Target| faults.contains(&UpFault::Blip(target));
        let cpo = path(&format!("{}/index.yaml", self.urls.cpo));
        if faults.contains(&UpFault::IndexDown) {
            put(cpo.clone(), 503, "unavailable".into(), now);
        } else if timeout(Target::Index) {
            put(cpo.clone(), 0, String::new(), now);
        } else {
            put(
                cpo.clone(),
                200,
                self.cpo_index(self.stale_or_now(t, faults)),
                now,
            );
            if blip(Target::Index) {
                server.fail_next(&cpo, 1, 502, &[]);
            }
        }
        put(
            path(&format!(
                "{}/index.yaml",
                self.urls.cilium.trim_end_matches('/')
            )),
            200,
            self.cilium_index.clone(),
            now,
        );
        put(
            path(&format!(
                "{}/index.yaml",
                self.urls.metrics_server.trim_end_matches('/')
            )),
            200,
            self.metrics_index.clone(),
            now,
        );
    }

    /// HTTP requests the server saw since the last call (0 for snapshots).
    pub fn take_requests(&self) -> usize {
        match &self.feed {
            Feed::Snapshot { .. } => 0,
            Feed::Http { server, .. } => {
                let n = server.count();
                server.reset_counts();
                n
            }
        }
    }
}
