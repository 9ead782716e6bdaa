//! Reading a series out of the facts: its releases by number, the latest release, the highest
//! number ever used, an unfinished release to finish and the releases a human withdrew. The
//! one home of those rules, for the forge and the OCI registry alike.
//!
//! **Evidence precedes the commit.** A release is made in the order *publication evidence →
//! commit (with `release: v<N>` in `stackbot.lock`) → tag → publish*: on the forge the
//! evidence is the draft `v<N>` (with every asset, its body carrying the content marker of
//! [`super::marker`]); with `publish: [oci]` alone it is the OCI tag itself (the push comes
//! first, then the commit and the tag). So, for a number `N` above the latest release:
//!
//! - a draft `v<N>` carrying the desired content (marker, or a tag on the desired tree) is an
//!   **unfinished** release: it is finished under `N`;
//! - `N` recorded in the base branch's lock (or at the latest tag's commit) or tagged, with no
//!   release of `v<N>` at all (neither draft nor published; no OCI tag with `oci` alone), was
//!   **withdrawn** by a human: `N` is never issued again, and the content it shipped is not
//!   published again unless asked (`release --republish <tag>`);
//! - in pull-request mode the commit is the merge, made by a human: a merged release pull
//!   request for `v<N>` with the desired content that does not yet carry the bot's comment
//!   ([`super::marker::PUBLISHED`], written right after the draft or the push) is the
//!   evidence that `v<N>` is still to be published; once it carries the comment, the draft is
//!   the evidence, and a missing release means withdrawn, as above;
//! - with `oci` alone, the latest release (an OCI tag) whose git tag is missing was pushed by a
//!   run that stopped before its commit or tag: it is finished (commit, tag).
//!
//! Numbering: the next `N` is one more than the highest number of any release, draft, tag, OCI
//! tag, and the lock's recorded number at the base branch and at the latest tag; an open
//! release pull request keeps its (uncommitted, unpublished) number.

use std::collections::BTreeSet;

use crate::forge::{PullInfo, PullState};
use crate::index::{Rank, ReleaseIndex};
use crate::model::ReleaseName;

/// Everything known about one series, as `decide` reads it.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    pub observed: &'a super::SeriesObserved,
    /// Every release of the forge and the OCI repository (the latter when `oci` is a target).
    pub index: &'a ReleaseIndex,
    /// Release pull requests of the series (pull-request mode), any state.
    pub pulls: &'a [PullInfo],
    /// `publish: [oci]` alone: the OCI tag is the publication and its evidence.
    pub oci_only: bool,
}

/// An unfinished release to finish under its number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    pub n: u64,
    /// The commit its tag already points at (it holds the desired tree), if tagged.
    pub commit: Option<String>,
}

/// A number whose release a human deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Withdrawn {
    pub n: u64,
    pub tag: String,
    /// Whether the desired tree is what `v<n>` shipped (its tag's tree, or the base branch's
    /// when the lock there records `n`).
    pub same_content: bool,
}

/// What plan concludes about one series.
#[derive(Debug, Clone, Default)]
pub struct SeriesState<'a> {
    /// The release to compare against and number after: the newest release of any target.
    pub latest: Option<&'a super::Latest>,
    /// The highest `N` ever seen for the series (see the module documentation).
    pub highest: Option<u64>,
    /// An unfinished release of an earlier run.
    pub resume: Option<Resume>,
    /// Numbers above the latest release that lost their release, ascending.
    pub withdrawn: Vec<Withdrawn>,
    /// Pull-request mode: the number of the open release pull request, when it is still free
    /// (not on the base branch, not tagged, not published); a new content keeps it.
    pub pending: Option<u64>,
}

/// Decide the state of `d`'s series from what was observed.
pub fn decide<'a>(d: &super::Desired, f: &Facts<'a>) -> SeriesState<'a> {
    let e = Evidence::of(d, f);
    let resume = e.resume();
    let withdrawn = e.withdrawn(resume.as_ref());
    SeriesState {
        latest: e.latest,
        highest: e.highest(),
        pending: e.pending(),
        resume,
        withdrawn,
    }
}

/// What one series' facts say about its numbers, read once for the rules below.
struct Evidence<'a, 'f> {
    d: &'f super::Desired,
    f: &'f Facts<'a>,
    so: &'a super::SeriesObserved,
    releases: &'a [crate::index::Numbered],
    latest: Option<&'a super::Latest>,
    /// The latest release's number (0: none).
    p: u64,
    /// The desired content's clusterStack hash.
    hash: String,
    /// Merged release pull requests naming `v<n>` with the desired content, not yet announced
    /// as published: their release is still to be made.
    merged: BTreeSet<u64>,
    /// Every number above the latest release some evidence names, ascending.
    candidates: BTreeSet<u64>,
}

impl<'a, 'f> Evidence<'a, 'f> {
    fn of(d: &'f super::Desired, f: &'f Facts<'a>) -> Self {
        let so = f.observed;
        let releases = f.index.forge(&d.stack, d.minor);
        let latest = newest(so);
        let p = latest.map_or(0, |l| l.n);
        let hash = crate::package::hashes(&d.rendered).cluster_stack;
        let merged: BTreeSet<u64> = f
            .pulls
            .iter()
            .filter(|p| p.state == PullState::Merged && !so.announced.contains(&p.number))
            .filter_map(|p| super::marker::parse(&p.body))
            .filter(|m| m.hash == hash)
            .filter_map(|m| ReleaseName::parse(&m.tag).ok())
            .map(|n| n.version.major)
            .collect();
        let candidates = releases
            .iter()
            .map(|r| r.n)
            .chain(so.tags.keys().copied())
            .chain(so.base_released)
            .chain(so.latest_released)
            .chain(merged.iter().copied())
            .filter(|n| *n > p)
            .collect();
        Evidence {
            d,
            f,
            so,
            releases,
            latest,
            p,
            hash,
            merged,
            candidates,
        }
    }

    fn tag_of(&self, n: u64) -> String {
        crate::index::name_of(&self.d.stack, self.d.minor, n).to_string()
    }

    fn oci_has(&self, n: u64) -> bool {
        self.f.index.in_oci(&self.tag_of(n))
    }

    /// `n` is on the base branch's lock, at the latest tag's lock, or tagged.
    fn committed(&self, n: u64) -> bool {
        let so = self.so;
        so.tags.contains_key(&n) || so.base_released == Some(n) || so.latest_released == Some(n)
    }

    /// `v<n>` has a release (a draft counts; with `oci` alone its OCI tag).
    fn has_release(&self, n: u64) -> bool {
        if self.f.oci_only {
            self.oci_has(n)
        } else {
            self.releases.iter().any(|r| r.n == n)
        }
    }

    /// The highest number the series ever used: the index's high-water mark, the tags, the
    /// latest release and the numbers the locks record.
    fn highest(&self) -> Option<u64> {
        let (d, so) = (self.d, self.so);
        let high_water = self.f.index.high_water(&d.stack, d.minor);
        high_water
            .into_iter()
            .chain(so.tags.keys().copied())
            .chain(self.latest.map(|l| l.n))
            .chain(so.base_released)
            .chain(so.latest_released)
            .max()
    }

    /// The unfinished release to finish: the lowest candidate whose draft carries the desired
    /// content (marker, or a tag on the desired tree) or whose merged pull request does; with
    /// `oci` alone, a published latest release that lacks its git tag.
    fn resume(&self) -> Option<Resume> {
        let (d, so) = (self.d, self.so);
        for &n in &self.candidates {
            let tagged = so.tags.get(&n);
            if tagged.is_some_and(|t| t.tree != d.rendered) {
                continue; // its tag holds other content: not this release
            }
            let ours = !self.f.oci_only
                && self.releases.iter().any(|r| {
                    r.n == n
                        && r.release.draft
                        && (super::marker::parse(&r.release.body)
                            .is_some_and(|m| m.hash == self.hash)
                            || tagged.is_some())
                });
            if ours || self.merged.contains(&n) {
                return Some(Resume {
                    n,
                    commit: tagged.map(|t| t.commit.clone()),
                });
            }
        }
        // `oci` alone: the latest release is published, but its commit or tag never happened.
        if self.f.oci_only
            && so.latest_tagged == Some(false)
            && let Some(l) = self.latest
            && super::up_to_date(d, Some(l))
        {
            return Some(Resume {
                n: l.n,
                commit: None,
            });
        }
        None
    }

    /// Numbers above the latest release that were committed (lock or tag) but have no release
    /// and no merged pull request to finish: a human withdrew them.
    fn withdrawn(&self, resume: Option<&Resume>) -> Vec<Withdrawn> {
        let (d, so) = (self.d, self.so);
        self.candidates
            .iter()
            .copied()
            .filter(|&n| resume.is_none_or(|r| r.n != n))
            .filter(|&n| self.committed(n) && !self.has_release(n) && !self.merged.contains(&n))
            .map(|n| {
                let shipped = match so.tags.get(&n) {
                    Some(t) => Some(&t.tree),
                    None if so.base_released == Some(n) => so.base_tree.as_ref(),
                    None => None,
                };
                Withdrawn {
                    n,
                    tag: self.tag_of(n),
                    same_content: shipped == Some(&d.rendered),
                }
            })
            .collect()
    }

    /// The number an open release pull request of the series carries, while it is still free.
    fn pending(&self) -> Option<u64> {
        let d = self.d;
        self.f
            .pulls
            .iter()
            .filter(|p| p.state == PullState::Open)
            .filter_map(|p| super::marker::parse(&p.body))
            .filter_map(|m| ReleaseName::parse(&m.tag).ok())
            .filter(|n| n.stack == d.stack && n.minor == d.minor && n.version.is_stable())
            .map(|n| n.version.major)
            .find(|&n| {
                n > self.p
                    && !self.committed(n)
                    && !self.oci_has(n)
                    && !self.releases.iter().any(|r| r.n == n && !r.release.draft)
            })
    }
}

/// Whether observing the series' details (metadata, recorded release set, base tree, tags,
/// release pull requests) can change the plan: only when the rendered tree is not what the
/// newest known release already shipped, or (with `oci` alone) when that release still lacks
/// its git tag. `observe` asks this so that a no-op run reads one `hashes.json` per series.
pub fn needs_details(d: &super::Desired, so: &super::SeriesObserved) -> bool {
    !super::up_to_date(d, newest(so)) || so.latest_tagged == Some(false)
}

/// The newest release of any target, by the index's one tie-break ([`Rank`]).
pub fn newest(so: &super::SeriesObserved) -> Option<&super::Latest> {
    let forge = so.forge_latest.as_ref().map(|l| (Rank::forge(l.n, 0), l));
    let oci = so.oci_latest.as_ref().map(|l| (Rank::oci(l.n), l));
    match (forge, oci) {
        (Some(f), Some(o)) if o.0.replaces(f.0) => Some(o.1),
        (f, o) => f.or(o).map(|(_, l)| l),
    }
}

/// Decide `latest` on every `Publish` step: true for the one release that will be the
/// repository's newest minor's newest release once the plan is applied (among the releases
/// already published and the ones this plan publishes), false for the others.
pub(super) fn mark_latest(plan: &mut super::Plan, index: &ReleaseIndex) {
    let published = index.published_on_forge().map(str::to_string);
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
    let winner = crate::index::latest_of_repository(all.iter().map(String::as_str));
    for step in plan.releases.iter_mut().flat_map(|r| r.steps.iter_mut()) {
        if let super::Step::Publish { tag, latest } = step {
            *latest = winner.as_deref() == Some(tag.as_str());
        }
    }
}
