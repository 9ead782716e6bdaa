//! The release index: the one answer to "which releases exist, and which is the newest".
//!
//! `observe` builds a [`ReleaseIndex`] once per run from the forge's release listing and the
//! OCI repository's tag listing; `plan` (numbering, drafts, the *Latest* badge), `tenants`
//! (what a tenant can move to) and `status` (what is released) all read it, so release,
//! tenants and the dashboard cannot disagree on what "latest" is.
//!
//! It answers three questions per stack × minor ("series"):
//!
//! - **what is published**: the forge's releases (drafts kept apart: a draft is evidence of
//!   an unfinished release, never a publication) and the OCI tags;
//! - **the newest release** ([`ReleaseIndex::newest`]), on either target;
//! - **the high-water mark** ([`ReleaseIndex::high_water`]): the highest number any release,
//!   draft or OCI tag of the series ever used, so the next number is above all of them.
//!
//! **The one tie-break** ([`Rank`]): newer means a higher stable number `v<N>`. At an equal
//! number the forge's release ranks above the OCI tag (one release, published twice: the
//! forge's copy has notes and a web page); between two forge releases of one number the one
//! the forge created last (the higher id) ranks above. Names CSO cannot parse are left out
//! with a warning, and hash-mode or custom channels are never numbered. Pure: the reads are
//! `observe`'s.

use std::collections::{BTreeMap, BTreeSet};

use crate::forge::ReleaseInfo;
use crate::model::{Minor, ReleaseName, StackId, StackVersion};

/// Where a release is published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// The forge's releases (GitHub or local).
    Forge,
    /// The OCI repository.
    Oci,
}

/// A release's place among the releases of its series: the greater rank is the newer release.
/// See the module documentation for the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rank {
    /// The stable number `N` of `v<N>`.
    pub number: u64,
    pub target: Target,
    /// The forge's release id (0 for an OCI tag or a release not yet made).
    pub id: u64,
}

impl Rank {
    pub fn forge(number: u64, id: u64) -> Self {
        Rank {
            number,
            target: Target::Forge,
            id,
        }
    }

    pub fn oci(number: u64) -> Self {
        Rank {
            number,
            target: Target::Oci,
            id: 0,
        }
    }

    /// A release known by its number alone (one about to be published, or one a tenant can
    /// move to, already chosen per series): it ranks below any target's release of the same
    /// number, so on a tie the release already published stays.
    pub fn of_number(number: u64) -> Self {
        Rank::oci(number)
    }

    /// Whether `self` replaces `current` as the newest: only a strictly greater rank does, so
    /// on a complete tie the release seen first stays.
    pub fn replaces(self, current: Rank) -> bool {
        self > current
    }
}

impl Ord for Rank {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // The forge ranks above OCI: `Target` orders Forge first, so compare reversed.
        (self.number, other.target, self.id).cmp(&(other.number, self.target, other.id))
    }
}

impl PartialOrd for Rank {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// One series: a stack × minor.
pub type SeriesKey = (StackId, Minor);

/// The newest of `items` per series by [`Rank`] (the first seen on a complete tie), in series
/// order. `rank` names an item's release and rank; items without one are left out, and so are
/// releases that are not stable (`v0-sha-…`, custom channels).
pub fn newest_per_series<T>(
    items: impl IntoIterator<Item = T>,
    rank: impl Fn(&T) -> Option<(ReleaseName, Rank)>,
) -> BTreeMap<SeriesKey, T> {
    let mut out: BTreeMap<SeriesKey, (Rank, T)> = BTreeMap::new();
    for item in items {
        let Some((name, r)) = rank(&item) else {
            continue;
        };
        if !name.version.is_stable() {
            continue;
        }
        let key = (name.stack, name.minor);
        if out
            .get(&key)
            .is_none_or(|(current, _)| r.replaces(*current))
        {
            out.insert(key, (r, item));
        }
    }
    out.into_iter().map(|(k, (_, t))| (k, t)).collect()
}

/// One forge release of a series, with its parsed number.
#[derive(Debug, Clone)]
pub struct Numbered {
    pub n: u64,
    pub release: ReleaseInfo,
}

impl Numbered {
    pub fn rank(&self) -> Rank {
        Rank::forge(self.n, self.release.id)
    }
}

/// The releases of the cluster-stacks repository and the OCI repository, by series.
#[derive(Debug, Clone, Default)]
pub struct ReleaseIndex {
    /// Forge releases, drafts included, oldest first by [`Rank`].
    forge: BTreeMap<SeriesKey, Vec<Numbered>>,
    /// Every forge release as listed (names that are no releases too).
    listed: Vec<ReleaseInfo>,
    /// Stable numbers per series among the OCI tags.
    oci: BTreeMap<SeriesKey, BTreeSet<u64>>,
    /// Every OCI tag as listed; `None` when OCI is not a target.
    oci_tags: Option<Vec<String>>,
    warnings: Vec<String>,
}

impl ReleaseIndex {
    /// Index the forge's releases (drafts included) and, when OCI is a target, its tags.
    pub fn new(releases: Vec<ReleaseInfo>, oci_tags: Option<Vec<String>>) -> Self {
        let mut ix = ReleaseIndex::default();
        for r in &releases {
            match ReleaseName::parse(&r.tag) {
                Ok(name) if name.version.is_stable() => {
                    ix.forge
                        .entry((name.stack, name.minor))
                        .or_default()
                        .push(Numbered {
                            n: name.version.major,
                            release: r.clone(),
                        });
                }
                Ok(_) => {} // hash-mode and custom channels are not ours to number
                Err(_) => ix.warnings.push(format!(
                    "release `{}` is not a cluster-stack release name; ignored",
                    r.tag
                )),
            }
        }
        for v in ix.forge.values_mut() {
            v.sort_by_key(Numbered::rank);
        }
        if let Some(tags) = &oci_tags {
            let mut unparsable: Vec<&String> = Vec::new();
            for t in tags {
                match ReleaseName::parse(t) {
                    Ok(name) if name.version.is_stable() => {
                        ix.oci
                            .entry((name.stack, name.minor))
                            .or_default()
                            .insert(name.version.major);
                    }
                    Ok(_) => {}
                    Err(_) => unparsable.push(t),
                }
            }
            unparsable.dedup();
            for t in unparsable {
                ix.warnings.push(format!(
                    "OCI tag `{t}` skipped: not a cluster-stack release name CSO can parse"
                ));
            }
        }
        ix.listed = releases;
        ix.oci_tags = oci_tags;
        ix
    }

    /// The index after a run's own writes: `changes` (releases as the forge answered the
    /// run's writes, deleted drafts) and the OCI tags it pushed, applied to what was listed.
    /// The stages after `apply` read this instead of listing again: one listing per run.
    pub fn with_changes(
        &self,
        changes: &crate::outcome::IndexChanges,
        oci_pushed: &[String],
    ) -> ReleaseIndex {
        let written = |id: u64| changes.written.iter().find(|w| w.id == id);
        // Listed order kept: a release written to is replaced in place, a new one follows.
        let mut releases: Vec<ReleaseInfo> = self
            .listed
            .iter()
            .filter(|r| !changes.deleted.contains(&r.id))
            .map(|r| written(r.id).unwrap_or(r).clone())
            .collect();
        for w in &changes.written {
            if !self.listed.iter().any(|r| r.id == w.id) {
                releases.push(w.clone());
            }
        }
        let tags = self.oci_tags.clone().map(|mut tags| {
            for t in oci_pushed {
                if !tags.contains(t) {
                    tags.push(t.clone());
                }
            }
            tags
        });
        ReleaseIndex::new(releases, tags)
    }

    /// The same index without the forge's releases: what a run with `publish: [oci]` alone
    /// reads (the OCI tags only).
    pub fn oci_only(&self) -> ReleaseIndex {
        ReleaseIndex::new(Vec::new(), self.oci_tags.clone())
    }

    /// What the listings held that is not a release name CSO can parse.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Every forge release as listed, drafts included.
    pub fn listed(&self) -> &[ReleaseInfo] {
        &self.listed
    }

    /// Every OCI tag as listed; `None` when OCI is not a target.
    pub fn oci_tags(&self) -> Option<&[String]> {
        self.oci_tags.as_deref()
    }

    /// Whether the OCI repository holds `tag`.
    pub fn in_oci(&self, tag: &str) -> bool {
        self.oci_tags().is_some_and(|t| t.iter().any(|x| x == tag))
    }

    /// The series' forge releases, drafts included, oldest first.
    pub fn forge(&self, stack: &StackId, minor: Minor) -> &[Numbered] {
        self.forge
            .get(&(stack.clone(), minor))
            .map_or(&[], Vec::as_slice)
    }

    /// Every series with a forge release (drafts included).
    pub fn forge_series(&self) -> impl Iterator<Item = (&SeriesKey, &[Numbered])> {
        self.forge.iter().map(|(k, v)| (k, v.as_slice()))
    }

    /// The newest published forge release of the series.
    pub fn newest_on_forge(&self, stack: &StackId, minor: Minor) -> Option<&ReleaseInfo> {
        self.forge(stack, minor)
            .iter()
            .filter(|r| !r.release.draft)
            .max_by_key(|r| r.rank())
            .map(|r| &r.release)
    }

    /// The highest stable number of the series among the OCI tags.
    pub fn newest_in_oci(&self, stack: &StackId, minor: Minor) -> Option<u64> {
        self.oci
            .get(&(stack.clone(), minor))
            .and_then(|s| s.last().copied())
    }

    /// Every series with an OCI tag, and its newest number.
    pub fn oci_series(&self) -> impl Iterator<Item = (&SeriesKey, u64)> {
        self.oci.iter().filter_map(|(k, s)| Some((k, *s.last()?)))
    }

    /// The newest published release of the series on either target, by [`Rank`].
    pub fn newest(&self, stack: &StackId, minor: Minor) -> Option<Newest<'_>> {
        let forge = self.newest_on_forge(stack, minor).map(|r| Newest {
            rank: Rank::forge(number_of(&r.tag), r.id),
            forge: Some(r),
        });
        let oci = self.newest_in_oci(stack, minor).map(|n| Newest {
            rank: Rank::oci(n),
            forge: None,
        });
        match (forge, oci) {
            (Some(f), Some(o)) if o.rank.replaces(f.rank) => Some(o),
            (f, o) => f.or(o),
        }
    }

    /// The high-water mark: the highest number any forge release (drafts included) or OCI tag
    /// of the series carries.
    pub fn high_water(&self, stack: &StackId, minor: Minor) -> Option<u64> {
        self.forge(stack, minor)
            .iter()
            .map(|r| r.n)
            .chain(self.newest_in_oci(stack, minor))
            .max()
    }

    /// The tags of every published forge release (drafts left out), in series order.
    pub fn published_on_forge(&self) -> impl Iterator<Item = &str> {
        self.forge
            .values()
            .flatten()
            .filter(|r| !r.release.draft)
            .map(|r| r.release.tag.as_str())
    }
}

/// The newest published release of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Newest<'a> {
    pub rank: Rank,
    /// The forge's release, when the newest is on the forge.
    pub forge: Option<&'a ReleaseInfo>,
}

fn number_of(tag: &str) -> u64 {
    ReleaseName::parse(tag).map_or(0, |n| n.version.major)
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

/// The release name `v<n>` of a series.
pub fn name_of(stack: &StackId, minor: Minor, n: u64) -> ReleaseName {
    ReleaseName {
        stack: stack.clone(),
        minor,
        version: StackVersion::stable(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(id: u64, tag: &str, draft: bool) -> ReleaseInfo {
        ReleaseInfo {
            id,
            tag: tag.into(),
            name: Some(tag.into()),
            draft,
            prerelease: false,
            body: String::new(),
            assets: Vec::new(),
            html_url: format!("https://forge/{id}"),
            published_at: None,
        }
    }

    fn stack() -> StackId {
        "openstack/scs2".parse().unwrap()
    }

    fn m(s: &str) -> Minor {
        s.parse().unwrap()
    }

    fn tags(list: &[&str]) -> Option<Vec<String>> {
        Some(list.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn a_runs_own_writes_update_the_index_as_a_new_listing_would_show_them() {
        let before = ReleaseIndex::new(
            vec![
                rel(1, "openstack-scs2-1-34-v1", false),
                rel(2, "openstack-scs2-1-34-v2", true),
                rel(3, "openstack-scs2-1-34-v2", true),
            ],
            tags(&["openstack-scs2-1-34-v1"]),
        );
        let mut changes = crate::outcome::IndexChanges::default();
        changes.wrote(rel(2, "openstack-scs2-1-34-v2", true));
        changes.deleted(3);
        changes.wrote(rel(2, "openstack-scs2-1-34-v2", false));
        changes.wrote(rel(4, "openstack-scs2-1-35-v1", false));
        let after = before.with_changes(&changes, &["openstack-scs2-1-34-v2".to_string()]);
        let listed_now = ReleaseIndex::new(
            vec![
                rel(1, "openstack-scs2-1-34-v1", false),
                rel(2, "openstack-scs2-1-34-v2", false),
                rel(4, "openstack-scs2-1-35-v1", false),
            ],
            tags(&["openstack-scs2-1-34-v1", "openstack-scs2-1-34-v2"]),
        );
        let ids = |ix: &ReleaseIndex| {
            ix.listed()
                .iter()
                .map(|r| (r.id, r.draft))
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&after), ids(&listed_now));
        assert_eq!(after.oci_tags(), listed_now.oci_tags());
        assert_eq!(
            after.newest(&stack(), m("1.34")).map(|n| n.rank),
            Some(Rank::forge(2, 2))
        );
        assert_eq!(after.high_water(&stack(), m("1.35")), Some(1));
        assert!(after.oci_only().listed().is_empty());
        assert_eq!(after.oci_only().newest_in_oci(&stack(), m("1.34")), Some(2));
    }

    #[test]
    fn the_newest_is_the_highest_number_not_the_last_listed_nor_lexically_greatest() {
        let ix = ReleaseIndex::new(
            vec![
                rel(1, "openstack-scs2-1-34-v10", false),
                rel(2, "openstack-scs2-1-34-v9", false),
            ],
            None,
        );
        let newest = ix.newest(&stack(), m("1.34")).unwrap();
        assert_eq!(newest.rank, Rank::forge(10, 1));
        assert_eq!(newest.forge.unwrap().tag, "openstack-scs2-1-34-v10");
    }

    #[test]
    fn a_draft_is_never_the_newest_release_but_counts_for_the_high_water_mark() {
        let ix = ReleaseIndex::new(
            vec![
                rel(1, "openstack-scs2-1-34-v2", false),
                rel(2, "openstack-scs2-1-34-v3", true),
            ],
            None,
        );
        assert_eq!(
            ix.newest_on_forge(&stack(), m("1.34")).unwrap().tag,
            "openstack-scs2-1-34-v2"
        );
        assert_eq!(ix.high_water(&stack(), m("1.34")), Some(3));
        assert_eq!(
            ix.published_on_forge().collect::<Vec<_>>(),
            ["openstack-scs2-1-34-v2"]
        );
    }

    #[test]
    fn at_an_equal_number_the_forge_release_ranks_above_the_oci_tag() {
        let ix = ReleaseIndex::new(
            vec![rel(5, "openstack-scs2-1-34-v3", false)],
            tags(&["openstack-scs2-1-34-v3"]),
        );
        let newest = ix.newest(&stack(), m("1.34")).unwrap();
        assert_eq!(newest.rank.target, Target::Forge);
        assert!(newest.forge.is_some());
        assert!(Rank::forge(3, 0) > Rank::oci(3));
        assert!(!Rank::oci(3).replaces(Rank::forge(3, 0)));
    }

    #[test]
    fn a_higher_number_in_oci_is_newer_than_the_forge_release() {
        let ix = ReleaseIndex::new(
            vec![rel(5, "openstack-scs2-1-34-v3", false)],
            tags(&["openstack-scs2-1-34-v4", "openstack-scs2-1-34-v2"]),
        );
        let newest = ix.newest(&stack(), m("1.34")).unwrap();
        assert_eq!(newest.rank, Rank::oci(4));
        assert_eq!(newest.forge, None);
        assert_eq!(ix.high_water(&stack(), m("1.34")), Some(4));
    }

    #[test]
    fn between_two_forge_releases_of_one_number_the_one_created_last_is_newer() {
        let ix = ReleaseIndex::new(
            vec![
                rel(8, "openstack-scs2-1-34-v3", false),
                rel(4, "openstack-scs2-1-34-v3", false),
            ],
            None,
        );
        assert_eq!(ix.newest_on_forge(&stack(), m("1.34")).unwrap().id, 8);
        let ids: Vec<u64> = ix
            .forge(&stack(), m("1.34"))
            .iter()
            .map(|r| r.release.id)
            .collect();
        assert_eq!(ids, [4, 8], "oldest first");
    }

    #[test]
    fn on_a_complete_tie_the_first_seen_stays() {
        let items = [
            ("openstack-scs2-1-34-v3", "a"),
            ("openstack-scs2-1-34-v3", "b"),
        ];
        let got = newest_per_series(items, |(t, _)| {
            let n = ReleaseName::parse(t).ok()?;
            let r = Rank::oci(n.version.major);
            Some((n, r))
        });
        assert_eq!(got[&(stack(), m("1.34"))].1, "a");
    }

    #[test]
    fn names_csos_cannot_parse_warn_and_other_channels_are_not_numbered() {
        let ix = ReleaseIndex::new(
            vec![
                rel(1, "latest", false),
                rel(2, "openstack-scs2-1-34-v2", false),
                rel(3, "openstack-scs2-1-34-v0-sha-azlfam7", false),
            ],
            tags(&["latest", "latest", "openstack-scs2-1-34-v0-sha-azlfam7"]),
        );
        assert_eq!(ix.warnings().len(), 2, "{:?}", ix.warnings());
        assert!(ix.warnings()[0].contains("release `latest`"));
        assert!(ix.warnings()[1].contains("OCI tag `latest`"));
        assert_eq!(ix.high_water(&stack(), m("1.34")), Some(2));
        assert_eq!(ix.newest_in_oci(&stack(), m("1.34")), None);
        assert_eq!(ix.listed().len(), 3, "the listing is kept whole");
    }

    #[test]
    fn series_are_kept_apart() {
        let ix = ReleaseIndex::new(
            vec![rel(1, "openstack-scs2-1-33-v7", false)],
            tags(&["openstack-scs2-1-35-v1"]),
        );
        assert_eq!(ix.newest(&stack(), m("1.34")), None);
        assert_eq!(ix.high_water(&stack(), m("1.33")), Some(7));
        assert_eq!(ix.newest_in_oci(&stack(), m("1.35")), Some(1));
    }

    #[test]
    fn the_badge_goes_to_the_newest_minors_newest_release() {
        assert_eq!(
            latest_of_repository(["openstack-scs2-1-34-v9", "openstack-scs2-1-35-v1"]).as_deref(),
            Some("openstack-scs2-1-35-v1")
        );
    }
}
