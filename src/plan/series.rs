//! Reading a series out of the facts: its releases by number, the latest release, the highest
//! number ever used and an unfinished release to finish. The one home of those rules.

use std::collections::BTreeMap;

use crate::forge::ReleaseInfo;
use crate::model::ReleaseName;

/// One parsed release of a series.
#[derive(Debug, Clone)]
pub struct SeriesRelease<'a> {
    pub n: u64,
    pub release: &'a ReleaseInfo,
}

/// Group stable releases by series prefix; names CSO cannot parse are skipped with a warning
/// (csctl aborts on them; one stray `latest` tag must not stop every release).
pub fn index_releases(
    releases: &[ReleaseInfo],
) -> (BTreeMap<String, Vec<SeriesRelease<'_>>>, Vec<String>) {
    let mut out: BTreeMap<String, Vec<SeriesRelease<'_>>> = BTreeMap::new();
    let mut warnings = Vec::new();
    for r in releases {
        match ReleaseName::parse(&r.tag) {
            Ok(name) if name.version.is_stable() => {
                out.entry(name.prefix()).or_default().push(SeriesRelease {
                    n: name.version.major,
                    release: r,
                });
            }
            Ok(_) => {} // hash-mode and custom channels are not ours to number
            Err(_) => warnings.push(format!(
                "release `{}` is not a cluster-stack release name; ignored",
                r.tag
            )),
        }
    }
    for v in out.values_mut() {
        v.sort_by_key(|r| (r.n, r.release.id));
    }
    (out, warnings)
}

/// The latest published release of a series, if any.
pub fn latest_published<'a>(series: &[SeriesRelease<'a>]) -> Option<&'a ReleaseInfo> {
    series
        .iter()
        .filter(|r| !r.release.draft)
        .max_by_key(|r| (r.n, r.release.id))
        .map(|r| r.release)
}

/// What plan concludes about one series.
#[derive(Debug, Clone, Default)]
pub struct SeriesState<'a> {
    /// The release to compare against and number after: the newest release of any target.
    pub latest: Option<&'a super::Latest>,
    /// The highest `N` ever seen for the series: releases (drafts included), tags, OCI tags.
    /// A new release is `N + 1`, so no two targets ever disagree about what `v<N>` is.
    pub highest: Option<u64>,
    /// An unfinished release of an earlier run: `(N, commit its tag points at)`.
    pub resume: Option<(u64, String)>,
}

/// Decide the state of `d`'s series from what was observed. The rules:
/// - the latest release is the newest of the forge's latest and the registry's highest;
/// - numbering counts every release (drafts too), every tag found and every OCI tag;
/// - a tag above the latest release whose commit holds exactly the desired tree is an
///   unfinished release of an earlier run: it is finished under its number (the lowest such);
///   a tag at or below the latest release is done, whatever it holds.
pub fn decide<'a>(
    d: &super::Desired,
    so: &'a super::SeriesObserved,
    releases: &[SeriesRelease<'_>],
    oci_tags: Option<&[String]>,
) -> SeriesState<'a> {
    let latest = newest(so);
    let above = latest.map_or(0, |l| l.n);
    let resume = so
        .tags
        .iter()
        .filter(|(n, _)| **n > above)
        .find(|(_, t)| t.tree == d.rendered)
        .map(|(n, t)| (*n, t.commit.clone()));
    let oci_highest =
        oci_tags.and_then(|t| crate::oci::versioning::scan_tags(t, &d.stack, d.minor).highest);
    let highest = releases
        .iter()
        .map(|r| r.n)
        .chain(so.tags.keys().copied())
        .chain(latest.map(|l| l.n))
        .chain(oci_highest)
        .max();
    SeriesState {
        latest,
        highest,
        resume,
    }
}

/// Whether observing the series' details (metadata, recorded release set, base tree, tags,
/// release pull requests) can change the plan: only when the rendered tree is not what the
/// newest known release already shipped. `observe` asks this so that a no-op run reads one
/// `hashes.json` per series and nothing else.
pub fn needs_details(d: &super::Desired, so: &super::SeriesObserved) -> bool {
    !super::up_to_date(d, newest(so))
}

/// The newest release of any target.
fn newest(so: &super::SeriesObserved) -> Option<&super::Latest> {
    [so.forge_latest.as_ref(), so.oci_latest.as_ref()]
        .into_iter()
        .flatten()
        .max_by_key(|l| l.n)
}

/// The release that should carry the repository's *Latest* badge: the newest release of the
/// newest Kubernetes minor (ties between stacks go to the stack that sorts last, so the rule is
/// total). GitHub, left to itself, marks whatever was published last, so an older minor's patch
/// would steal the badge; the bot therefore says `make_latest` on every publication.
pub fn latest_of_repository<'a>(published: impl IntoIterator<Item = &'a str>) -> Option<String> {
    published
        .into_iter()
        .filter_map(|t| ReleaseName::parse(t).ok())
        .filter(|n| n.version.is_stable())
        .max_by(|a, b| {
            (a.minor, &a.stack, a.version.major).cmp(&(b.minor, &b.stack, b.version.major))
        })
        .map(|n| n.to_string())
}

/// Decide `latest` on every `Publish` step: true for the one release that will be the
/// repository's newest minor's newest release once the plan is applied (among the releases
/// already published and the ones this plan publishes), false for the others.
pub(super) fn mark_latest(
    plan: &mut super::Plan,
    index: &BTreeMap<String, Vec<SeriesRelease<'_>>>,
) {
    let published = index
        .values()
        .flatten()
        .filter(|r| !r.release.draft)
        .map(|r| r.release.tag.clone());
    let planned: Vec<String> = plan
        .releases
        .iter()
        .flat_map(|r| &r.steps)
        .filter_map(|s| match s {
            super::Step::Publish { tag, .. } => Some(tag.clone()),
            _ => None,
        })
        .collect();
    let all: Vec<String> = published.chain(planned.iter().cloned()).collect();
    let winner = latest_of_repository(all.iter().map(String::as_str));
    for step in plan.releases.iter_mut().flat_map(|r| r.steps.iter_mut()) {
        if let super::Step::Publish { tag, latest } = step {
            *latest = winner.as_deref() == Some(tag.as_str());
        }
    }
}
