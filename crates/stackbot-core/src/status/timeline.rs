//! The latency of recent patches: upstream GA → first release shipping it → first tenant
//! merge of a pull request bringing it (or a newer patch), with the SCS deadline beside it.
//!
//! Which patches: of every tracked minor, the patches a release shipped and the patches newer
//! than the latest release (each starts an SCS clock), published within [`WINDOW_DAYS`]
//! before the report's day, newest [`PER_MINOR`]; for a minor never released, its first GA
//! patch (whose minor window is the clock that runs). Patches superseded before any release
//! shipped them never reached anyone and are left out.

use chrono::NaiveDate;
use serde::Serialize;

use super::{Facts, proposed_releases, releases_of};
use crate::forge::PullState;
use crate::model::{KubeVersion, Minor, StackId};

/// Patches published longer ago than this are history, not news.
pub const WINDOW_DAYS: i64 = 180;
/// At most this many patches per stack × minor.
pub const PER_MINOR: usize = 3;

/// One patch's way from upstream to the tenants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimelineEntry {
    pub stack: StackId,
    pub minor: Minor,
    pub kubernetes: KubeVersion,
    /// Upstream GA.
    pub upstream_at: NaiveDate,
    /// The first release shipping it (or a newer patch of the minor).
    pub released_at: Option<NaiveDate>,
    pub release: Option<String>,
    /// The first merge of a bot pull request bringing it (or newer) to a tenant.
    pub first_tenant_merge_at: Option<NaiveDate>,
    pub first_tenant: Option<String>,
    /// The SCS 0210 deadline for offering it: 14 days when it fixes a critical CVE.
    pub due: Option<NaiveDate>,
    /// The critical CVEs it fixes (affecting the previous patch of its minor, not it).
    pub critical_cves: Vec<String>,
    /// Released by `due` (`None` while the deadline has not passed unreleased).
    pub met: Option<bool>,
}

/// The entries for the report's day, by stack, minor and patch. Pure. The newest unreleased
/// patch's deadline is the one `stacks` (the status rows, [`super::stacks::status`]) give it:
/// the deadline model computes it once, the timeline renders it (its own clock for that patch
/// can be the critical-CVE window of the version offered, not only of the CVEs it fixes).
pub fn entries(f: &Facts, stacks: &[super::StackStatus]) -> Vec<TimelineEntry> {
    let mut out = Vec::new();
    for m in f.minors.iter().filter(|m| m.tracked) {
        let rels = releases_of(&f.releases, &m.stack, m.minor);
        let offered = rels.iter().filter_map(|r| r.kubernetes).max();
        let dated = m
            .patches
            .iter()
            .filter_map(|p| Some((p.version, p.published_at?.date_naive())))
            .filter(|(_, d)| *d <= f.today);
        let recent: Vec<_> = match offered {
            None => dated.take(1).collect(),
            Some(o) => dated
                .filter(|(_, d)| (f.today - *d).num_days() <= WINDOW_DAYS)
                .filter(|(v, _)| *v > o || rels.iter().any(|r| r.kubernetes == Some(*v)))
                .collect(),
        };
        for (version, upstream_at) in recent.iter().rev().take(PER_MINOR).rev() {
            // The first release shipping it; an undated one (an OCI release without a
            // creation annotation) only when no dated one exists.
            let shipping = rels
                .iter()
                .filter(|r| r.kubernetes.is_some_and(|k| k >= *version))
                .map(|r| (r.published_at.map(|p| p.date_naive()), r.name.to_string()))
                .min_by_key(|(d, n)| (d.is_none(), *d, n.clone()));
            let merge = f
                .tenants
                .iter()
                .flat_map(|t| {
                    t.stacks
                        .iter()
                        .filter(|s| s.stack == m.stack)
                        .flat_map(|s| &s.pulls)
                        .map(move |p| (t, p))
                })
                .filter(|(_, p)| p.state == PullState::Merged)
                .filter(|(_, p)| {
                    proposed_releases(p).iter().any(|n| {
                        n.minor == m.minor
                            && rels
                                .iter()
                                .find(|r| &r.name == n)
                                .and_then(|r| r.kubernetes)
                                .is_some_and(|k| k >= *version)
                    })
                })
                .filter_map(|(t, p)| Some((p.merged_at?.date_naive(), t.name.clone())))
                .filter(|(d, _)| d >= upstream_at)
                .min();
            let published = m
                .patches
                .iter()
                .find(|p| p.version == *version)
                .and_then(|p| p.published_at);
            let previous = m
                .patches
                .iter()
                .map(|p| p.version)
                .filter(|p| p < version)
                .max();
            let critical_cves: Vec<String> =
                crate::compliance::fixed_between(previous, *version, &f.compliance)
                    .into_iter()
                    .map(|c| c.id)
                    .collect();
            let due = due_of(stacks, m, *version, published, !critical_cves.is_empty());
            let released_at = shipping.as_ref().and_then(|(d, _)| *d);
            let met = match (due, released_at, &shipping) {
                (Some(d), Some(r), _) => Some(crate::model::scs::in_time(d, r)),
                (Some(d), None, None) if crate::model::scs::past(d, f.today) => Some(false),
                _ => None,
            };
            out.push(TimelineEntry {
                stack: m.stack.clone(),
                minor: m.minor,
                kubernetes: *version,
                upstream_at: *upstream_at,
                released_at,
                release: shipping.map(|(_, n)| n),
                first_tenant_merge_at: merge.as_ref().map(|(d, _)| *d),
                first_tenant: merge.map(|(_, t)| t),
                due,
                critical_cves,
                met,
            });
        }
    }
    out
}

/// The day `version` of `m` must be offered by: for the series' newest unreleased patch, the
/// day its status row gives it (the deadline model); for an earlier patch, its own clock.
fn due_of(
    stacks: &[super::StackStatus],
    m: &super::UpstreamMinor,
    version: KubeVersion,
    published: Option<chrono::DateTime<chrono::Utc>>,
    fixes_critical: bool,
) -> Option<NaiveDate> {
    let newest_unreleased = stacks
        .iter()
        .find(|s| s.stack == m.stack && s.minor == m.minor)
        .and_then(|s| s.newest_unreleased.as_ref())
        .filter(|n| n.kubernetes == version);
    match newest_unreleased {
        Some(n) => n.release_by,
        None => crate::compliance::offer_deadline(version, published, fixes_critical),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    /// The timeline as `compute` builds it: beside the status rows of the same facts.
    fn entries(f: &Facts) -> Vec<TimelineEntry> {
        super::entries(f, &super::super::compute(f).stacks)
    }

    #[test]
    fn a_patch_goes_from_upstream_to_release_to_the_first_tenant_merge() {
        let mut merged = pull(
            9,
            "Update ClusterStack openstack/scs2 to openstack-scs2-1-34-v2",
            PullState::Merged,
            "2026-04-20",
        );
        merged.merged_at = at("2026-04-23");
        let f = Facts {
            today: day("2026-05-01"),
            minors: vec![upstream(
                "1.34",
                &[
                    ("v1.34.1", "2025-09-09"),
                    ("v1.34.6", "2026-03-18"),
                    ("v1.34.7", "2026-04-15"),
                ],
            )],
            releases: vec![
                release("openstack-scs2-1-34-v1", "v1.34.6", "2026-03-20"),
                release("openstack-scs2-1-34-v2", "v1.34.7", "2026-04-20"),
            ],
            tenants: vec![tenant("acme", vec![], vec![merged])],
            ..Facts::default()
        };
        let e = entries(&f);
        let patches: Vec<String> = e.iter().map(|x| x.kubernetes.to_string()).collect();
        assert_eq!(
            patches,
            ["v1.34.6", "v1.34.7"],
            "v1.34.1 is older than the window"
        );
        let last = &e[1];
        assert_eq!(last.upstream_at, day("2026-04-15"));
        assert_eq!(last.released_at, Some(day("2026-04-20")));
        assert_eq!(last.release.as_deref(), Some("openstack-scs2-1-34-v2"));
        assert_eq!(last.first_tenant_merge_at, Some(day("2026-04-23")));
        assert_eq!(last.first_tenant.as_deref(), Some("acme"));
        assert_eq!((last.due, last.met), (Some(day("2026-05-16")), Some(true)));
        // v1.34.6's first tenant merge is the same merge: it brought a newer patch.
        assert_eq!(e[0].first_tenant_merge_at, Some(day("2026-04-23")));
    }

    #[test]
    fn superseded_patches_are_left_out_and_a_minor_never_released_shows_its_first_patch() {
        let f = Facts {
            today: day("2026-05-01"),
            minors: vec![
                upstream(
                    "1.33",
                    &[
                        ("v1.33.9", "2026-02-26"),
                        ("v1.33.10", "2026-03-18"),
                        ("v1.33.11", "2026-04-15"),
                    ],
                ),
                upstream(
                    "1.35",
                    &[("v1.35.0", "2025-12-17"), ("v1.35.4", "2026-04-15")],
                ),
            ],
            releases: vec![release("openstack-scs2-1-33-v1", "v1.33.10", "2026-03-20")],
            ..Facts::default()
        };
        let e = entries(&f);
        let seen: Vec<String> = e.iter().map(|x| x.kubernetes.to_string()).collect();
        assert_eq!(seen, ["v1.33.10", "v1.33.11", "v1.35.0"]);
        assert_eq!(e[1].released_at, None);
        assert_eq!(e[1].met, None, "not due yet");
        assert_eq!(e[2].due, Some(day("2026-04-16")), "the minor window");
        assert_eq!(e[2].met, Some(false));
    }

    /// 1.34 offered at v1.34.5, affected by a critical CVE that v1.34.6 fixed; v1.34.7 (which
    /// fixes nothing new) is the newest patch. `status` gives v1.34.7 the critical-CVE window
    /// (14 days from its GA: the offered version is affected), and so does the timeline: one
    /// computation, not the timeline's own 31 days for a patch that fixes no CVE itself.
    #[test]
    fn the_newest_unreleased_patch_has_the_deadline_status_gives_it() {
        use crate::compliance::Security;
        use crate::upstream::cve::{Cve, Version, VersionRange};
        let m = upstream(
            "1.34",
            &[
                ("v1.34.5", "2026-02-01"),
                ("v1.34.6", "2026-03-18"),
                ("v1.34.7", "2026-04-15"),
            ],
        );
        let mut compliance = inputs_for(&m);
        compliance.security = Security::Known {
            cves: vec![Cve {
                id: "CVE-2026-0001".into(),
                score: Some(9.8),
                critical: true,
                affected: vec![VersionRange {
                    lower: Version(1, 34, 0),
                    upper: Some(Version(1, 34, 6)),
                    inclusive: false,
                }],
            }],
            unreadable: Vec::new(),
        };
        let f = Facts {
            today: day("2026-05-01"),
            minors: vec![m],
            releases: vec![release("openstack-scs2-1-34-v1", "v1.34.5", "2026-02-03")],
            compliance,
            ..Facts::default()
        };
        let status = super::super::compute(&f);
        let n = status.stacks[0].newest_unreleased.clone().unwrap();
        assert_eq!(n.kubernetes, kv("v1.34.7"));
        assert_eq!(n.release_by, Some(day("2026-04-29")), "{n:?}");
        let e = status
            .timeline
            .iter()
            .find(|e| e.kubernetes == kv("v1.34.7"))
            .unwrap();
        assert_eq!(e.due, n.release_by, "{e:?}");
        assert_eq!(e.met, Some(false), "past it, unreleased");
    }

    #[test]
    fn a_release_without_a_date_is_released_not_late() {
        let mut undated = release("openstack-scs2-1-34-v1", "v1.34.7", "2026-04-20");
        undated.published_at = None;
        let f = Facts {
            today: day("2026-06-01"),
            minors: vec![upstream("1.34", &[("v1.34.7", "2026-04-15")])],
            releases: vec![undated],
            ..Facts::default()
        };
        let e = &entries(&f)[0];
        assert_eq!(e.release.as_deref(), Some("openstack-scs2-1-34-v1"));
        assert_eq!((e.released_at, e.met), (None, None), "unknown, not missed");
    }
}
