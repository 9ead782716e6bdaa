//! One stack × minor against SCS 0210: the newest upstream patch, the latest release, the
//! deadline that applies and what the newest patch still waits for.
//!
//! Which deadline applies follows the SCS conformance test: a minor that is offered fails as
//! soon as *any* newer patch of it is older than the patch window, so the clock runs from the
//! **earliest** patch newer than the latest release, not the newest one. A minor that was
//! never offered gets the minor window, counted from its first GA release. The windows
//! themselves are [`crate::model::scs`]'s.

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;

use super::{Release, ReleasePull, Target, UpstreamMinor, days_between, releases_of, targets_of};
use crate::compliance::{self, CveFact, Deadlines, Inputs, NewestUnreleased, Offered, Scs0210};
use crate::model::scs::Waiting;
use crate::model::{KubeVersion, Minor, StackId};

/// Where a stack × minor stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StackState {
    /// The newest upstream patch is released.
    Current,
    /// Everything is published upstream: the next release run ships it.
    Releasable,
    /// A release pull request waits for a maintainer's merge (`forge.mode: pull-request`).
    ReleasePullRequest,
    /// Its candidate is in the conformance gate (`gate:`): released when the test passes.
    InTest,
    /// Its candidate failed the conformance gate: never promoted.
    FailedConformance,
    /// Upstream has not published everything the newest patch needs.
    Waiting,
    /// Upstream served something invalid: a human must look.
    Error,
    /// A GA minor no stack tracks yet: add it to the configuration.
    Untracked,
    /// The Kubernetes releases could not be read (neither the releases API nor the version
    /// markers): whether the newest patch is released is not known.
    Unknown,
}

impl StackState {
    /// The word the text and Markdown forms use.
    pub fn word(self) -> &'static str {
        match self {
            StackState::Current => "current",
            StackState::Releasable => "releasable",
            StackState::ReleasePullRequest => "release PR open",
            StackState::InTest => "in test",
            StackState::FailedConformance => "failed conformance",
            StackState::Waiting => "waiting",
            StackState::Error => "error",
            StackState::Untracked => "not tracked",
            StackState::Unknown => "unknown",
        }
    }
}

/// The kinds of things a stack × minor can wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitingKind {
    /// No GA release of the minor yet.
    Kubernetes,
    /// A chart series not in its Helm repository yet.
    Chart,
    /// The node image (its `CHECKSUM`) not published yet.
    NodeImage,
    /// Nothing upstream: the next release run publishes it.
    ReleaseRun,
    /// A release pull request to merge.
    ReleasePullRequest,
    /// The conformance test of the release's candidate.
    Gate,
    /// The configuration: the minor is not tracked.
    Configuration,
}

/// Which SCS 0210 rule a deadline comes from (`patch`, `minor`, `critical-cve`,
/// `end-of-life`).
pub type Window = compliance::Rule;

/// One thing the newest patch waits for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WaitingFor {
    pub kind: WaitingKind,
    /// The name: image, chart and series, pull request, version.
    pub what: String,
    /// Where to look or what to do.
    pub detail: String,
    /// How urgent it is: `critical CVE: 9 days left` while a fix for a critical CVE affecting
    /// the latest release waits for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub urgency: Option<String>,
}

impl WaitingFor {
    /// Waiting for `what`, not urgent.
    fn new(kind: WaitingKind, what: String, detail: String) -> Self {
        let urgency = None;
        WaitingFor {
            kind,
            what,
            detail,
            urgency,
        }
    }

    fn upstream(w: &Waiting) -> Self {
        match w {
            Waiting::Kubernetes { minor } => WaitingFor::new(
                WaitingKind::Kubernetes,
                format!("Kubernetes {minor}"),
                "no GA release yet".into(),
            ),
            Waiting::Chart { chart, rule, index } => WaitingFor::new(
                WaitingKind::Chart,
                format!("{chart} {rule}"),
                format!("not yet in {index}"),
            ),
            Waiting::NodeImage { name, checksum } => WaitingFor::new(
                WaitingKind::NodeImage,
                name.clone(),
                format!("{checksum} not published yet"),
            ),
        }
    }

    /// One line: `node image ubuntu-capi-image-v1.35.4 (… not published yet)`.
    pub fn line(&self) -> String {
        let kind = match self.kind {
            WaitingKind::NodeImage => "node image ",
            WaitingKind::ReleasePullRequest => "merge of ",
            _ => "",
        };
        match &self.urgency {
            Some(u) => format!("{kind}{} ({}; {u})", self.what, self.detail),
            None => format!("{kind}{} ({})", self.what, self.detail),
        }
    }
}

/// The newest upstream patch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Upstream {
    pub kubernetes: KubeVersion,
    pub published_at: Option<DateTime<Utc>>,
}

/// The newest release of a stack × minor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LatestRelease {
    pub tag: String,
    /// The Kubernetes patch it ships (`None` when neither its notes nor its metadata say).
    pub kubernetes: Option<KubeVersion>,
    pub published_at: Option<DateTime<Utc>>,
    /// Where it is published.
    pub targets: Vec<Target>,
    pub url: Option<String>,
}

/// One stack × minor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StackStatus {
    pub stack: StackId,
    pub minor: Minor,
    /// `false`: a GA minor newer than every minor the stack tracks.
    pub tracked: bool,
    pub state: StackState,
    /// The newest GA patch.
    pub upstream: Option<Upstream>,
    pub latest_release: Option<LatestRelease>,
    /// GA patches newer than the latest release, oldest first.
    pub unreleased: Vec<KubeVersion>,
    /// What the newest patch waits for (empty when current).
    pub waiting_for: Vec<WaitingFor>,
    /// The SCS 0210 deadline that applies now (`None` when current or undated).
    pub due: Option<NaiveDate>,
    /// The patch whose publication started that clock.
    pub due_for: Option<KubeVersion>,
    /// The rule `due` comes from.
    pub due_window: Option<Window>,
    /// Days until `due` (negative: days overdue).
    pub days_left: Option<i64>,
    /// The governing rule has failed (`due` has passed; the deadline day itself is in time).
    pub overdue: bool,
    /// The newest GA patch not yet released, and the day it must be released by on its own
    /// clock (`null` when the newest patch is released).
    pub newest_unreleased: Option<NewestUnreleased>,
    /// Kubernetes end of life of the minor, when known.
    pub end_of_life: Option<NaiveDate>,
    /// `end_of_life` has passed: SCS recommends no longer offering the minor.
    pub past_end_of_life: bool,
    /// Invalid upstream data.
    pub errors: Vec<String>,
    /// Patches newer than what a release can ship that it steps over, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stepped_over: Vec<crate::model::SteppedOver>,
    /// What the standard's conformance test says of a cluster at the latest release's version
    /// today (for a minor never released: the minor window).
    pub scs0210: Scs0210,
    /// The critical CVEs affecting the latest release.
    pub cves: Vec<CveFact>,
    /// The deadline model everything above comes from (rendered by the `release` summary).
    #[serde(skip)]
    pub deadlines: Deadlines,
}

/// Compute one row. Pure.
pub fn status(
    m: &UpstreamMinor,
    releases: &[Release],
    release_pulls: &[ReleasePull],
    inputs: &Inputs,
    today: NaiveDate,
) -> StackStatus {
    // The newest release of the stack × minor, with where it is published.
    let newest = releases_of(releases, &m.stack, m.minor).into_iter().next();
    let latest = newest.as_ref().map(|r| LatestRelease {
        tag: r.name.to_string(),
        kubernetes: r.kubernetes,
        published_at: r.published_at,
        targets: targets_of(releases, &r.name),
        url: r.url.clone(),
    });
    let offered = latest.as_ref().and_then(|l| l.kubernetes);
    let unknown_version = latest.is_some() && offered.is_none();
    let unreleased: Vec<&super::Patch> = if unknown_version {
        Vec::new()
    } else {
        m.patches
            .iter()
            .filter(|p| offered.is_none_or(|o| p.version > o))
            .collect()
    };
    // The one deadline model ([`compliance::deadlines`]): `detect`, the release summary and
    // the release notes render the same value. `unread`: why its Kubernetes version is not
    // known, when a file that would say could not be read.
    let version_unread = newest.and_then(|r| r.unread);
    let deadlines = series_deadlines(m, latest.as_ref(), version_unread, inputs, today);
    let scs0210 = deadlines.scs0210.clone();
    let cves = offered
        .map(|v| compliance::critical_cves(v, inputs))
        .unwrap_or_default();
    let pull = release_pulls
        .iter()
        .find(|p| p.stack == m.stack && p.minor == m.minor);
    let newer_releasable = m
        .releasable
        .filter(|r| offered.is_none_or(|o| *r > o) && !unknown_version);
    // No patch at all, and the list that would name them was not read: not "current".
    let unread = m.patches.is_empty() && inputs.releases.is_err();
    let (state, mut waiting_for) =
        state_and_waiting(m, unread, unreleased.is_empty(), pull, newer_releasable);
    critical_cve_urgency(&scs0210, today, &mut waiting_for);
    StackStatus {
        stack: m.stack.clone(),
        minor: m.minor,
        tracked: m.tracked,
        state,
        upstream: m.patches.last().map(|p| Upstream {
            kubernetes: p.version,
            published_at: p.published_at,
        }),
        latest_release: latest,
        unreleased: unreleased.iter().map(|p| p.version).collect(),
        waiting_for,
        due: deadlines.due,
        due_for: deadlines.due_for,
        due_window: deadlines.governing,
        days_left: deadlines.days_left,
        overdue: deadlines.overdue,
        newest_unreleased: deadlines.newest_unreleased.clone(),
        end_of_life: m.end_of_life,
        // The standard's test: a minor is supported while `now < end-of-life` (midnight), so
        // the end-of-life day itself is past it.
        past_end_of_life: m
            .end_of_life
            .is_some_and(|e| crate::model::scs::past_end_of_life(e, today)),
        errors: m.errors.clone(),
        stepped_over: m.stepped_over.clone(),
        scs0210,
        cves,
        deadlines,
    }
}

/// The deadline model of the stack × minor for what its latest release offers (nothing
/// released: the minor window). A release naming no Kubernetes version, or whose version could
/// not be read (`unread`: the file and the cause, named by the verdict), is unknown: missing
/// data is never compliance.
fn series_deadlines(
    m: &UpstreamMinor,
    latest: Option<&LatestRelease>,
    unread: Option<String>,
    inputs: &Inputs,
    today: NaiveDate,
) -> Deadlines {
    let offered = match latest {
        None => Offered::Nothing,
        Some(LatestRelease {
            kubernetes: Some(v),
            ..
        }) => Offered::Version { kubernetes: *v },
        Some(l) => Offered::Unknown {
            cause: unread.unwrap_or_else(|| {
                format!(
                    "release {} names no Kubernetes version (notes or metadata.yaml)",
                    l.tag
                )
            }),
        },
    };
    compliance::deadlines(offered, &m.patches, inputs, today)
}

/// Where the stack × minor stands and what its newest patch waits for: the configuration
/// first, then errors, then a release pull request, then upstream and the release run.
fn state_and_waiting(
    m: &UpstreamMinor,
    unread: bool,
    all_released: bool,
    pull: Option<&ReleasePull>,
    newer_releasable: Option<KubeVersion>,
) -> (StackState, Vec<WaitingFor>) {
    let mut waiting_for = Vec::new();
    let state = if !m.tracked {
        waiting_for.push(WaitingFor::new(
            WaitingKind::Configuration,
            format!("{} {}", m.stack, m.minor),
            format!(
                "not tracked: add \"{}\" to the stack's `minors` (or use `minors: supported`)",
                m.minor
            ),
        ));
        StackState::Untracked
    } else if !m.errors.is_empty() {
        StackState::Error
    } else if unread {
        StackState::Unknown
    } else if all_released {
        StackState::Current
    } else if let Some(p) = pull {
        let what = format!("release pull request #{}", p.pull.number);
        let pull = WaitingFor::new(
            WaitingKind::ReleasePullRequest,
            what,
            p.pull.html_url.clone(),
        );
        waiting_for.push(pull);
        StackState::ReleasePullRequest
    } else if m.waiting.is_empty() && newer_releasable.is_some() {
        StackState::Releasable
    } else {
        StackState::Waiting
    };
    if m.tracked && !matches!(state, StackState::Current | StackState::Unknown) {
        waiting_for.extend(m.waiting.iter().map(WaitingFor::upstream));
        if state != StackState::ReleasePullRequest
            && let Some(r) = newer_releasable
        {
            let detail = "complete upstream: the next release run publishes it".into();
            waiting_for.push(WaitingFor::new(
                WaitingKind::ReleaseRun,
                r.to_string(),
                detail,
            ));
        }
    }
    (state, waiting_for)
}

/// A row whose release is in the conformance gate says so: its newest candidate's state and
/// what it waits for. The deadline is untouched: time in the gate counts against it (the
/// release is not published until it passes).
pub fn in_gate(s: &mut StackStatus, gates: &[super::GateFact]) {
    if s.state == StackState::Current || !s.tracked {
        return;
    }
    let Some(g) = gates
        .iter()
        .find(|g| g.stack == s.stack && g.minor == s.minor)
    else {
        return;
    };
    s.state = if g.failed() {
        StackState::FailedConformance
    } else {
        StackState::InTest
    };
    s.waiting_for.retain(|w| w.kind != WaitingKind::ReleaseRun);
    s.waiting_for.insert(
        0,
        WaitingFor::new(
            WaitingKind::Gate,
            format!("{}: {}", g.stable, g.words()),
            g.url.clone(),
        ),
    );
}

/// A critical-CVE fix that waits for its node image or a chart carries its clock.
fn critical_cve_urgency(scs0210: &Scs0210, today: NaiveDate, waiting_for: &mut [WaitingFor]) {
    if let Some(d) = scs0210.critical_cve().and_then(|r| r.deadline) {
        let words = super::days_words(days_between(today, d));
        for w in waiting_for
            .iter_mut()
            .filter(|w| matches!(w.kind, WaitingKind::NodeImage | WaitingKind::Chart))
        {
            w.urgency = Some(format!("critical CVE: {words}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;
    use crate::compliance::Verdict;
    use crate::forge::PullState;

    #[test]
    fn a_released_newest_patch_is_current_with_nothing_due() {
        let m = upstream(
            "1.34",
            &[("v1.34.6", "2026-03-18"), ("v1.34.7", "2026-04-15")],
        );
        let r = [release("openstack-scs2-1-34-v2", "v1.34.7", "2026-04-20")];
        let s = status(&m, &r, &[], &inputs_for(&m), day("2026-06-01"));
        assert_eq!(s.state, StackState::Current);
        assert_eq!((s.due, s.overdue, s.days_left), (None, false, None));
        assert!(s.waiting_for.is_empty() && s.unreleased.is_empty());
        assert_eq!(s.latest_release.unwrap().tag, "openstack-scs2-1-34-v2");
    }

    #[test]
    fn the_earliest_unreleased_patch_starts_the_clock() {
        // Released .5; .6 (Mar 18) and .7 (Apr 15) are not: the test fails once .6 is 31
        // days old, even though .7 is fresh.
        let mut m = upstream(
            "1.34",
            &[
                ("v1.34.5", "2026-02-26"),
                ("v1.34.6", "2026-03-18"),
                ("v1.34.7", "2026-04-15"),
            ],
        );
        m.waiting = vec![Waiting::NodeImage {
            name: "ubuntu-capi-image-v1.34.7".into(),
            checksum: "https://img/x.CHECKSUM".into(),
        }];
        m.releasable = Some(kv("v1.34.6"));
        let r = [release("openstack-scs2-1-34-v1", "v1.34.5", "2026-03-01")];
        let s = status(&m, &r, &[], &inputs_for(&m), day("2026-04-10"));
        assert_eq!(s.due, Some(day("2026-04-18")));
        assert_eq!(s.due_for, Some(kv("v1.34.6")));
        assert_eq!(s.days_left, Some(8));
        assert!(!s.overdue);
        assert_eq!(s.state, StackState::Waiting);
        let kinds: Vec<WaitingKind> = s.waiting_for.iter().map(|w| w.kind).collect();
        assert_eq!(kinds, [WaitingKind::NodeImage, WaitingKind::ReleaseRun]);
        assert_eq!(s.unreleased, [kv("v1.34.6"), kv("v1.34.7")]);
    }

    #[test]
    fn a_deadline_crossing_flips_overdue() {
        let m = upstream(
            "1.33",
            &[("v1.33.10", "2026-03-18"), ("v1.33.11", "2026-04-15")],
        );
        let r = [release("openstack-scs2-1-33-v1", "v1.33.10", "2026-03-20")];
        let on_the_day = status(&m, &r, &[], &inputs_for(&m), day("2026-05-16"));
        assert_eq!(on_the_day.due, Some(day("2026-05-16")));
        assert_eq!(on_the_day.days_left, Some(0));
        assert!(!on_the_day.overdue, "the last day is still in time");
        let next_day = status(&m, &r, &[], &inputs_for(&m), day("2026-05-17"));
        assert!(next_day.overdue);
        assert_eq!(next_day.days_left, Some(-1));
    }

    #[test]
    fn a_minor_never_offered_gets_the_minor_window_from_its_first_patch() {
        let mut m = upstream(
            "1.35",
            &[("v1.35.0", "2025-12-17"), ("v1.35.4", "2026-04-15")],
        );
        m.releasable = None;
        m.waiting = vec![Waiting::NodeImage {
            name: "ubuntu-capi-image-v1.35.4".into(),
            checksum: "c".into(),
        }];
        let s = status(&m, &[], &[], &inputs_for(&m), day("2026-05-01"));
        assert_eq!(s.due, Some(day("2026-04-16")), "v1.35.0 + 120 days");
        assert_eq!(s.due_for, Some(kv("v1.35.0")));
        assert!(s.overdue);
        assert_eq!(s.days_left, Some(-15));
        assert!(s.latest_release.is_none());
    }

    #[test]
    fn complete_upstream_is_releasable_and_an_open_release_pr_is_named() {
        let m = upstream(
            "1.34",
            &[("v1.34.6", "2026-03-18"), ("v1.34.7", "2026-04-15")],
        );
        let r = [release("openstack-scs2-1-34-v1", "v1.34.6", "2026-03-20")];
        let s = status(&m, &r, &[], &inputs_for(&m), day("2026-04-20"));
        assert_eq!(s.state, StackState::Releasable);
        assert_eq!(s.waiting_for[0].kind, WaitingKind::ReleaseRun);
        let pr = ReleasePull {
            stack: stack(),
            minor: minor("1.34"),
            pull: pull(
                42,
                "Release openstack-scs2-1-34-v2",
                PullState::Open,
                "2026-04-16",
            ),
        };
        let s = status(&m, &r, &[pr], &inputs_for(&m), day("2026-04-20"));
        assert_eq!(s.state, StackState::ReleasePullRequest);
        assert_eq!(s.waiting_for.len(), 1);
        assert_eq!(s.waiting_for[0].what, "release pull request #42");
    }

    #[test]
    fn an_untracked_minor_says_to_configure_it() {
        let mut m = upstream("1.37", &[("v1.37.0", "2026-08-20")]);
        m.tracked = false;
        let s = status(&m, &[], &[], &inputs_for(&m), day("2026-09-01"));
        assert_eq!(s.state, StackState::Untracked);
        assert_eq!(s.waiting_for[0].kind, WaitingKind::Configuration);
        assert_eq!(s.due, Some(day("2026-12-18")));
    }

    #[test]
    fn end_of_life_is_reported() {
        let mut m = upstream("1.33", &[("v1.33.11", "2026-04-15")]);
        m.end_of_life = Some(day("2026-06-28"));
        let r = [release("openstack-scs2-1-33-v2", "v1.33.11", "2026-04-20")];
        assert!(!status(&m, &r, &[], &inputs_for(&m), day("2026-06-27")).past_end_of_life);
        let s = status(&m, &r, &[], &inputs_for(&m), day("2026-06-28"));
        assert!(
            s.past_end_of_life,
            "the standard's test fails the end-of-life day itself"
        );
        assert_eq!(s.scs0210.verdict, Verdict::Fail);
        assert_eq!(s.due_window, Some(Window::EndOfLife));
    }

    #[test]
    fn a_release_whose_version_could_not_be_read_is_unknown_naming_why_unless_another_target_read_it()
     {
        let m = upstream("1.33", &[("v1.33.10", "2026-03-18")]);
        let why = "release openstack-scs2-1-33-v1: metadata.yaml could not be read (503)";
        let unread = Release {
            kubernetes: None,
            unread: Some(why.into()),
            ..release("openstack-scs2-1-33-v1", "v1.33.10", "2026-03-20")
        };
        let s = status(
            &m,
            std::slice::from_ref(&unread),
            &[],
            &inputs_for(&m),
            day("2026-04-01"),
        );
        assert_eq!(s.latest_release.as_ref().unwrap().kubernetes, None);
        assert_eq!(s.scs0210.verdict, Verdict::Unknown);
        assert!(
            s.scs0210.unknown.iter().any(|u| u.contains(why)),
            "{:?}",
            s.scs0210.unknown
        );
        let mut read = release("openstack-scs2-1-33-v1", "v1.33.10", "2026-03-20");
        read.target = Target::Oci;
        let s = status(&m, &[unread, read], &[], &inputs_for(&m), day("2026-04-01"));
        assert_eq!(s.scs0210.verdict, Verdict::Pass, "{:?}", s.scs0210);
    }
}
