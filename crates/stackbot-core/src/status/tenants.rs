//! One tenant × stack: the releases its `ClusterStack` resources list today, the bot's pull
//! request, and how far behind the newest releases that is.
//!
//! "Behind" counts what the tenant could have and does not list: `patches` is the number of
//! newer Kubernetes patches released for the minors it uses (a chart-only release adds a
//! release, not a patch), `minors` the released minors newer than every minor it uses,
//! `releases` the newer releases of its minors. A resource with `autoSubscribe: true` and
//! no versions follows the newest release by itself and is never behind.

use std::collections::BTreeSet;

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;

use super::{
    ClusterVersion, Release, StackResource, TenantFacts, TenantStackFacts, days_between,
    proposed_releases, releases_of,
};
use crate::compliance::{self, Inputs, Scs0210};
use crate::config::PolicyAction;
use crate::forge::PullState;
use crate::model::{KubeVersion, Minor, ReleaseName, StackId};

/// Where a tenant × stack stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TenantState {
    /// Lists the newest release of every minor it uses, and no newer minor is released.
    Current,
    /// A bot pull request is open.
    PullRequestOpen,
    /// The bot's pull request has commits by someone else: the bot leaves it alone.
    Blocked,
    /// Behind, and no open bot pull request (not propagated yet, closed unmerged, or the
    /// tenant's policy ignores that kind of update).
    Behind,
    /// The repository or its files could not be read.
    Error,
}

impl TenantState {
    /// The word the text and Markdown forms use.
    pub fn word(self) -> &'static str {
        match self {
            TenantState::Current => "current",
            TenantState::PullRequestOpen => "PR open",
            TenantState::Blocked => "blocked",
            TenantState::Behind => "behind",
            TenantState::Error => "error",
        }
    }
}

/// How far behind the newest releases.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Behind {
    /// Newer Kubernetes patches released for the minors the tenant uses.
    pub patches: u64,
    /// Released minors newer than every minor the tenant uses.
    pub minors: u64,
    /// Newer releases of the minors the tenant uses (chart-only releases included).
    pub releases: u64,
}

impl Behind {
    /// Anything to catch up on.
    pub fn any(&self) -> bool {
        self.patches + self.minors + self.releases > 0
    }

    /// `1 patch, 1 minor`, or `up to date` (releases are named only when nothing else lags).
    pub fn words(&self) -> String {
        let count = |n: u64, one: &str, many: &str| {
            (n > 0).then(|| format!("{n} {}", if n == 1 { one } else { many }))
        };
        let mut parts: Vec<String> = [
            count(self.patches, "patch", "patches"),
            count(self.minors, "minor", "minors"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if parts.is_empty() {
            parts.extend(count(self.releases, "release", "releases"));
        }
        if parts.is_empty() {
            "up to date".into()
        } else {
            parts.join(", ")
        }
    }
}

/// One minor a tenant uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TenantMinor {
    pub minor: Minor,
    /// The releases its resources list for the minor.
    pub releases: Vec<String>,
    /// The Kubernetes patch of the newest of them.
    pub kubernetes: Option<KubeVersion>,
    /// `autoSubscribe: true` without versions: CSO follows the newest release.
    pub auto_subscribe: bool,
    /// The newest release of the minor.
    pub latest: Option<String>,
    pub latest_kubernetes: Option<KubeVersion>,
    /// Patches and releases behind within this minor (`minors` is always 0 here).
    pub behind: Behind,
}

/// The bot's newest pull request for the stack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TenantPull {
    pub number: u64,
    pub url: String,
    pub state: PullState,
    pub created_at: Option<DateTime<Utc>>,
    /// Days since it was opened.
    pub age_days: Option<i64>,
    pub merged_at: Option<DateTime<Utc>>,
    /// The releases it proposes.
    pub releases: Vec<String>,
    /// Why the bot no longer updates it, if it does not.
    pub blocked: Option<String>,
}

/// One tenant × followed stack.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TenantStatus {
    pub tenant: String,
    pub repository: String,
    /// `None` when the tenant failed before its stacks could be looked at.
    pub stack: Option<StackId>,
    pub state: TenantState,
    /// `policy.patch` and `policy.minor` of the tenant.
    pub patch_policy: PolicyAction,
    pub minor_policy: PolicyAction,
    /// Every release the tenant's `ClusterStack` resources list today.
    pub releases: Vec<String>,
    pub minors: Vec<TenantMinor>,
    pub behind: Behind,
    pub pull: Option<TenantPull>,
    /// Why a lag is expected (the policy ignores it), for readers.
    pub note: Option<String>,
    pub error: Option<String>,
    /// What the standard's conformance test says of the versions this tenant runs: the
    /// `spec.topology.version` of each of its `Cluster`s when its `clusters` files hold any,
    /// else the newest release of each minor it lists (the worst of them).
    pub scs0210: Scs0210,
    /// The tenant's `Cluster`s of this stack (its `clusters` files), each with its verdict.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<ClusterStatus>,
}

/// One `Cluster` of a tenant: what it runs, until when, and the way to the next minor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterStatus {
    /// `namespace/name`.
    pub cluster: String,
    pub file: String,
    pub line: usize,
    /// `spec.topology.class`.
    pub class: String,
    /// `spec.topology.version` as written.
    pub version: String,
    /// The end of life of its minor (when the schedule was read).
    pub end_of_life: Option<NaiveDate>,
    /// The newest release of the next minor: where a minor upgrade takes it.
    pub next: Option<String>,
    /// The bot's pull request of that step.
    pub upgrade: Option<TenantPull>,
    /// What the conformance test says of a cluster at its version.
    pub scs0210: Scs0210,
}

/// The rows of one tenant. Pure.
pub fn status(
    t: &TenantFacts,
    releases: &[Release],
    inputs: &Inputs,
    today: NaiveDate,
) -> Vec<TenantStatus> {
    let row = |stack: Option<StackId>| TenantStatus {
        tenant: t.name.clone(),
        repository: t.repository.clone(),
        stack,
        state: TenantState::Error,
        patch_policy: t.patch_policy,
        minor_policy: t.minor_policy,
        releases: Vec::new(),
        minors: Vec::new(),
        behind: Behind::default(),
        pull: None,
        note: None,
        error: t.error.clone(),
        scs0210: Scs0210::unknown(
            t.error
                .clone()
                .unwrap_or_else(|| "the tenant's repository could not be read".into()),
        ),
        clusters: Vec::new(),
    };
    if t.error.is_some() || t.stacks.is_empty() {
        return vec![row(None)];
    }
    t.stacks
        .iter()
        .map(|s| {
            let mut r = row(Some(s.stack.clone()));
            fill(&mut r, s, releases, today);
            r.scs0210 = verdict(&r, s, inputs, today);
            r.clusters = s
                .clusters
                .iter()
                .map(|c| cluster(&s.stack, c, releases, inputs, today))
                .collect();
            r
        })
        .collect()
}

/// A tenant's `Cluster`: its verdict at the version it runs, its minor's end of life, and the
/// next minor's newest release with the bot's pull request moving it there.
fn cluster(
    stack: &StackId,
    c: &ClusterVersion,
    releases: &[Release],
    inputs: &Inputs,
    today: NaiveDate,
) -> ClusterStatus {
    let version = runs(c);
    let minor = version.as_ref().ok().map(|v| v.minor());
    let next = minor.and_then(|m| {
        releases
            .iter()
            .filter(|x| {
                &x.name.stack == stack
                    && x.name.version.is_stable()
                    && x.name.minor.major == m.major
                    && x.name.minor.minor == m.minor + 1
            })
            .max_by_key(|x| x.name.version.major)
            .map(|x| x.name.to_string())
    });
    ClusterStatus {
        cluster: c.cluster.clone(),
        file: c.file.clone(),
        line: c.line,
        class: c.class.clone(),
        version: c.version.clone(),
        end_of_life: match (&inputs.lifecycles, minor) {
            (compliance::Lifecycles::Known(m), Some(minor)) => m.get(&minor).copied(),
            _ => None,
        },
        next,
        upgrade: c.upgrade.as_ref().map(|p| tenant_pull(p, today)),
        scs0210: match version {
            Ok(v) => compliance::evaluate(v, inputs, today),
            Err(why) => Scs0210::unknown(why),
        },
    }
}

/// The Kubernetes version a `Cluster` runs, or why it cannot be judged.
fn runs(c: &ClusterVersion) -> Result<KubeVersion, String> {
    c.version.parse::<KubeVersion>().map_err(|_| {
        format!(
            "{}:{}: `spec.topology.version: {}` is not a Kubernetes version",
            c.file, c.line, c.version
        )
    })
}

/// A bot pull request as the report shows it, on `today`.
fn tenant_pull(p: &crate::forge::PullInfo, today: NaiveDate) -> TenantPull {
    TenantPull {
        number: p.number,
        url: p.html_url.clone(),
        state: p.state,
        created_at: p.created_at,
        age_days: p
            .created_at
            .map(|c| days_between(c.date_naive(), today).max(0)),
        merged_at: p.merged_at,
        releases: proposed_releases(p).iter().map(|n| n.to_string()).collect(),
        blocked: None,
    }
}

fn fill(r: &mut TenantStatus, s: &TenantStackFacts, releases: &[Release], today: NaiveDate) {
    r.pull = s.pulls.first().map(|p| TenantPull {
        blocked: (p.state == PullState::Open && !s.human_commits.is_empty()).then(|| {
            format!(
                "commits by someone else on `{}` ({}): the bot no longer updates it; close it \
                 and delete the branch to let the bot take over",
                p.head,
                s.human_commits.join(", ")
            )
        }),
        ..tenant_pull(p, today)
    });
    if let Some(e) = &s.error {
        r.error = Some(e.clone());
        return;
    }
    let minors: BTreeSet<Minor> = s.resources.iter().map(|x| x.minor).collect();
    for m in &minors {
        let of_minor: Vec<&StackResource> = s.resources.iter().filter(|x| x.minor == *m).collect();
        let tm = minor(&s.stack, *m, &of_minor, releases);
        r.releases.extend(tm.releases.iter().cloned());
        r.behind.patches += tm.behind.patches;
        r.behind.releases += tm.behind.releases;
        r.minors.push(tm);
    }
    r.behind.minors = match minors.last() {
        Some(top) => {
            let released: BTreeSet<Minor> = releases
                .iter()
                .filter(|x| x.name.stack == s.stack && x.name.version.is_stable())
                .map(|x| x.name.minor)
                .filter(|x| x > top)
                .collect();
            released.len() as u64
        }
        None => 0,
    };
    if r.behind.minors > 0 && r.minor_policy == PolicyAction::Ignore {
        r.note = Some("newer minors are adopted by hand (policy.minor: ignore)".into());
    } else if r.behind.patches + r.behind.releases > 0 && r.patch_policy == PolicyAction::Ignore {
        r.note = Some("new patches are adopted by hand (policy.patch: ignore)".into());
    }
    r.error = None;
    r.state = if s.resources.is_empty() {
        r.error = Some(format!(
            "no ClusterStack resource of {} (channel stable) in the tenant's `files`",
            s.stack
        ));
        TenantState::Error
    } else if r.pull.as_ref().is_some_and(|p| p.blocked.is_some()) {
        TenantState::Blocked
    } else if r.pull.as_ref().is_some_and(|p| p.state == PullState::Open) {
        TenantState::PullRequestOpen
    } else if r.behind.any() {
        TenantState::Behind
    } else {
        TenantState::Current
    };
}

/// The worst verdict over the versions the tenant runs (see [`TenantStatus::scs0210`]).
fn verdict(r: &TenantStatus, s: &TenantStackFacts, inputs: &Inputs, today: NaiveDate) -> Scs0210 {
    if let Some(e) = &r.error {
        return Scs0210::unknown(e.clone());
    }
    let mut versions: Vec<KubeVersion> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    if s.clusters.is_empty() {
        // No `Cluster` to read: each minor the tenant lists stands for the newest release that
        // minor has (what its ClusterStack can run once the bot's pull request is merged).
        for m in &r.minors {
            match m.latest_kubernetes {
                Some(v) => versions.push(v),
                None => problems.push(format!(
                    "{}: no release of this minor with a known Kubernetes version",
                    m.minor
                )),
            }
        }
    } else {
        // The clusters themselves: what they run is what the conformance test would see.
        for c in &s.clusters {
            match runs(c) {
                Ok(v) => versions.push(v),
                Err(why) => problems.push(why),
            }
        }
    }
    // A `clusters` file that could not be read holds Clusters nobody can judge.
    problems.extend(s.unjudged.iter().cloned());
    versions.sort();
    versions.dedup();
    let mut all: Vec<Scs0210> = versions
        .into_iter()
        .map(|v| compliance::evaluate(v, inputs, today))
        .collect();
    // Every version that cannot be judged makes the tenant `unknown` (a failure found on the
    // others still shows as `fail`): a Cluster that drops out is never a pass.
    all.extend(problems.into_iter().map(Scs0210::unknown));
    if all.is_empty() {
        all.push(Scs0210::unknown("no version to evaluate"));
    }
    Scs0210::combine(all).expect("at least one verdict")
}

fn minor(
    stack: &StackId,
    m: Minor,
    resources: &[&StackResource],
    releases: &[Release],
) -> TenantMinor {
    let auto_subscribe = resources
        .iter()
        .any(|x| x.auto_subscribe && x.versions.as_ref().is_none_or(Vec::is_empty));
    let names: Vec<ReleaseName> = resources.iter().flat_map(|x| x.releases(stack)).collect();
    let rels = releases_of(releases, stack, m);
    let newest_listed = names
        .iter()
        .filter(|n| n.version.is_stable())
        .max_by_key(|n| n.version.major);
    let kubernetes = newest_listed.and_then(|n| {
        rels.iter()
            .find(|r| &r.name == n)
            .and_then(|r| r.kubernetes)
    });
    let latest = rels.first();
    let mut behind = Behind::default();
    if !auto_subscribe && let Some(l) = latest {
        let have = newest_listed.map_or(0, |n| n.version.major);
        behind.releases = l.name.version.major.saturating_sub(have);
        let newer: BTreeSet<KubeVersion> = rels
            .iter()
            .filter(|r| r.name.version.major > have)
            .filter_map(|r| r.kubernetes)
            .filter(|k| kubernetes.is_none_or(|have| *k > have))
            .collect();
        behind.patches = newer.len() as u64;
    }
    TenantMinor {
        minor: m,
        releases: names.iter().map(ToString::to_string).collect(),
        kubernetes,
        auto_subscribe,
        latest: latest.map(|l| l.name.to_string()),
        latest_kubernetes: latest.and_then(|l| l.kubernetes),
        behind,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    fn releases() -> Vec<Release> {
        vec![
            release("openstack-scs2-1-33-v1", "v1.33.10", "2026-03-20"),
            release("openstack-scs2-1-33-v2", "v1.33.11", "2026-04-20"),
            release("openstack-scs2-1-34-v1", "v1.34.6", "2026-03-20"),
            release("openstack-scs2-1-34-v2", "v1.34.7", "2026-04-20"),
        ]
    }

    #[test]
    fn each_cluster_shows_its_end_of_life_the_next_minor_and_its_upgrade() {
        let mut t = tenant("acme", vec![resource("1.33", &["v2"])], vec![]);
        let mut upgrade = pull(
            12,
            "Upgrade Cluster team-a/prod",
            PullState::Open,
            "2026-04-28",
        );
        upgrade.head = "stackbot/upgrade-openstack-scs2-team-a-prod-1-34".into();
        t.stacks[0].clusters = vec![ClusterVersion {
            cluster: "team-a/prod".into(),
            file: "clusters/prod.yaml".into(),
            line: 1,
            class: "openstack-scs2-1-33-v2".into(),
            version: "v1.33.11".into(),
            upgrade: Some(upgrade),
        }];
        let inputs = Inputs {
            odd_tags: Vec::new(),
            lifecycles: compliance::Lifecycles::Known(
                [("1.33".parse::<Minor>().unwrap(), day("2026-06-28"))].into(),
            ),
            ..inputs_none()
        };
        let s = &status(&t, &releases(), &inputs, day("2026-05-01"))[0];
        let c = &s.clusters[0];
        assert_eq!(c.cluster, "team-a/prod");
        assert_eq!(c.end_of_life, Some(day("2026-06-28")));
        assert_eq!(c.next.as_deref(), Some("openstack-scs2-1-34-v2"));
        let p = c.upgrade.as_ref().unwrap();
        assert_eq!(
            (p.number, p.state, p.age_days),
            (12, PullState::Open, Some(3))
        );
    }

    #[test]
    fn behind_by_one_patch_and_behind_by_a_minor_are_told_apart() {
        let by_patch = tenant("acme", vec![resource("1.34", &["v1"])], vec![]);
        let by_minor = tenant("globex", vec![resource("1.33", &["v2"])], vec![]);
        let today = day("2026-05-01");
        let a = &status(&by_patch, &releases(), &inputs_none(), today)[0];
        let g = &status(&by_minor, &releases(), &inputs_none(), today)[0];
        assert_eq!(
            a.behind,
            Behind {
                patches: 1,
                minors: 0,
                releases: 1
            }
        );
        assert_eq!(a.behind.words(), "1 patch");
        assert_eq!(
            g.behind,
            Behind {
                patches: 0,
                minors: 1,
                releases: 0
            }
        );
        assert_eq!(g.behind.words(), "1 minor");
        assert_eq!(
            (a.state, g.state),
            (TenantState::Behind, TenantState::Behind)
        );
        assert_eq!(a.releases, ["openstack-scs2-1-34-v1"]);
        assert_eq!(a.minors[0].kubernetes, Some(kv("v1.34.6")));
        assert_eq!(
            a.minors[0].latest.as_deref(),
            Some("openstack-scs2-1-34-v2")
        );
    }

    #[test]
    fn a_chart_only_release_is_a_release_behind_not_a_patch() {
        let mut rs = releases();
        rs.push(release("openstack-scs2-1-34-v3", "v1.34.7", "2026-04-25"));
        let t = tenant("acme", vec![resource("1.34", &["v2"])], vec![]);
        let s = &status(&t, &rs, &inputs_none(), day("2026-05-01"))[0];
        assert_eq!(
            s.behind,
            Behind {
                patches: 0,
                minors: 0,
                releases: 1
            }
        );
        assert_eq!(s.behind.words(), "1 release");
    }

    #[test]
    fn newest_everywhere_is_current_and_auto_subscribe_follows_by_itself() {
        let t = tenant(
            "acme",
            vec![resource("1.33", &["v1", "v2"]), resource("1.34", &["v2"])],
            vec![],
        );
        let s = &status(&t, &releases(), &inputs_none(), day("2026-05-01"))[0];
        assert_eq!(s.state, TenantState::Current);
        assert!(!s.behind.any());
        let mut auto = resource("1.34", &[]);
        auto.versions = None;
        auto.auto_subscribe = true;
        let t = tenant("initech", vec![auto], vec![]);
        let s = &status(&t, &releases(), &inputs_none(), day("2026-05-01"))[0];
        assert_eq!(s.state, TenantState::Current);
        assert!(s.minors[0].auto_subscribe);
    }

    #[test]
    fn an_empty_version_list_is_behind_by_every_released_patch() {
        let t = tenant("acme", vec![resource("1.34", &[])], vec![]);
        let s = &status(&t, &releases(), &inputs_none(), day("2026-05-01"))[0];
        assert_eq!((s.behind.patches, s.behind.releases), (2, 2));
    }

    #[test]
    fn the_pull_request_shows_age_state_and_why_it_is_blocked() {
        let p = pull(
            15,
            "Update ClusterStack openstack/scs2 to openstack-scs2-1-34-v2",
            PullState::Open,
            "2026-04-21",
        );
        let mut t = tenant("acme", vec![resource("1.34", &["v1"])], vec![p]);
        let s = &status(&t, &releases(), &inputs_none(), day("2026-05-01"))[0];
        assert_eq!(s.state, TenantState::PullRequestOpen);
        let pr = s.pull.as_ref().unwrap();
        assert_eq!((pr.number, pr.age_days), (15, Some(10)));
        assert_eq!(pr.releases, ["openstack-scs2-1-34-v2"]);
        assert_eq!(pr.blocked, None);
        t.stacks[0].human_commits = vec!["abc1234".into()];
        let s = &status(&t, &releases(), &inputs_none(), day("2026-05-01"))[0];
        assert_eq!(s.state, TenantState::Blocked);
        assert!(
            s.pull
                .as_ref()
                .unwrap()
                .blocked
                .as_ref()
                .unwrap()
                .contains("abc1234")
        );
    }

    #[test]
    fn an_ignored_minor_is_explained_and_an_unreadable_tenant_is_an_error() {
        let mut t = tenant("globex", vec![resource("1.33", &["v2"])], vec![]);
        t.minor_policy = PolicyAction::Ignore;
        let s = &status(&t, &releases(), &inputs_none(), day("2026-05-01"))[0];
        assert_eq!(s.state, TenantState::Behind);
        assert!(s.note.as_ref().unwrap().contains("policy.minor: ignore"));
        t.error = Some("repository globex/gitops not found".into());
        let rows = status(&t, &releases(), &inputs_none(), day("2026-05-01"));
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (rows[0].state, rows[0].stack.clone()),
            (TenantState::Error, None)
        );
        let none = tenant("acme", vec![], vec![]);
        let s = &status(&none, &releases(), &inputs_none(), day("2026-05-01"))[0];
        assert_eq!(s.state, TenantState::Error);
        assert!(
            s.error
                .as_ref()
                .unwrap()
                .contains("no ClusterStack resource")
        );
    }

    fn inputs_2026() -> Inputs {
        let m33 = upstream(
            "1.33",
            &[("v1.33.10", "2026-03-18"), ("v1.33.11", "2026-04-15")],
        );
        let m34 = upstream(
            "1.34",
            &[("v1.34.6", "2026-03-18"), ("v1.34.7", "2026-04-15")],
        );
        inputs_of(&[m33, m34])
    }

    #[test]
    fn a_tenant_is_judged_on_its_clusters_when_it_has_any() {
        let mut t = tenant("acme", vec![resource("1.34", &["v2"])], vec![]);
        let today = day("2026-06-01");
        // No Cluster: the newest release of its minor (v1.34.7, current) passes.
        let s = &status(&t, &releases(), &inputs_2026(), today)[0];
        assert_eq!(s.scs0210.verdict, crate::compliance::Verdict::Pass);
        // A Cluster still on v1.34.6, whose successor is out for more than 31 days, fails.
        t.stacks[0].clusters = vec![super::super::ClusterVersion {
            cluster: "prod".into(),
            upgrade: None,
            file: "clusters/prod.yaml".into(),
            line: 1,
            class: "openstack-scs2-1-34-v1".into(),
            version: "v1.34.6".into(),
        }];
        let s = &status(&t, &releases(), &inputs_2026(), today)[0];
        assert_eq!(s.scs0210.verdict, crate::compliance::Verdict::Fail);
        assert_eq!(
            s.scs0210.reasons[0]
                .version
                .map(|v| v.to_string())
                .as_deref(),
            Some("v1.34.6")
        );
    }

    #[test]
    fn a_cluster_that_cannot_be_judged_makes_the_tenant_unknown_naming_the_file() {
        use crate::compliance::Verdict;
        let today = day("2026-06-01");
        let cluster = |file: &str, version: &str| super::super::ClusterVersion {
            cluster: "prod".into(),
            upgrade: None,
            file: file.into(),
            line: 7,
            class: "openstack-scs2-1-34-v2".into(),
            version: version.into(),
        };
        // Beside a Cluster that passes (v1.34.7 is the newest patch), one whose version lacks
        // its `v`: it does not drop out, the tenant is unknown and the verdict names it.
        let mut t = tenant("acme", vec![resource("1.34", &["v2"])], vec![]);
        t.stacks[0].clusters = vec![
            cluster("clusters/good.yaml", "v1.34.7"),
            cluster("clusters/staging.yaml", "1.34.7"),
        ];
        let s = &status(&t, &releases(), &inputs_2026(), today)[0];
        assert_eq!(s.scs0210.verdict, Verdict::Unknown);
        assert!(
            s.scs0210
                .unknown
                .iter()
                .any(|u| u.contains("clusters/staging.yaml:7") && u.contains("1.34.7")),
            "{:?}",
            s.scs0210.unknown
        );
        // A `clusters` file that is not YAML: unknown, naming that file.
        let mut t = tenant("acme", vec![resource("1.34", &["v2"])], vec![]);
        t.stacks[0].clusters = vec![cluster("clusters/good.yaml", "v1.34.7")];
        t.stacks[0].unjudged =
            vec!["clusters/broken.yaml: cannot judge its Clusters: not YAML".into()];
        let s = &status(&t, &releases(), &inputs_2026(), today)[0];
        assert_eq!(s.scs0210.verdict, Verdict::Unknown);
        assert!(
            s.scs0210
                .unknown
                .iter()
                .any(|u| u.contains("clusters/broken.yaml"))
        );
        // A failure found on a judged Cluster stays a failure.
        t.stacks[0].clusters = vec![cluster("clusters/old.yaml", "v1.34.6")];
        let s = &status(&t, &releases(), &inputs_2026(), today)[0];
        assert_eq!(s.scs0210.verdict, Verdict::Fail);
    }
}
