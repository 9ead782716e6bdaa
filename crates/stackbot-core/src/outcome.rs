//! What `apply` did, as data: the release report ([`crate::report`]) formats it, so it lives in
//! core while `apply` itself (which writes to the forge and the registry) is the binary's.

use crate::plan::Skipped;

/// What `apply` did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Outcome {
    /// Tags published by this run (including ones an earlier run had started).
    pub released: Vec<String>,
    pub skipped: Vec<Skipped>,
    /// Release pull requests opened or updated (pull-request mode).
    pub pull_requests: Vec<String>,
    /// The same release pull requests as the forge has them once the run is done (open, on
    /// their release branch): the `release` summary says `release PR open` of their series
    /// from these, without asking the forge again.
    #[serde(skip)]
    pub release_pulls: Vec<crate::forge::PullInfo>,
    /// Every write, in order, for the log.
    pub actions: Vec<String>,
    /// OCI publications (pushed or found already present), each verified.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub oci: Vec<crate::oci::Published>,
    /// Releases that could not be finished for a reason of their own (a tag pointing at
    /// another commit, a draft deleted meanwhile): the other releases went on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<Skipped>,
    /// What the writes did to the forge's release list, so the run's release index is brought
    /// up to date ([`crate::index::ReleaseIndex::with_changes`]) instead of being listed again
    /// by the stages that follow (tenants, status, the dashboard).
    #[serde(skip)]
    pub index_changes: IndexChanges,
}

/// The forge releases and OCI tags a run's writes made or removed, each as the forge or
/// registry answered the last write to it.
#[derive(Debug, Clone, Default)]
pub struct IndexChanges {
    /// Releases created or published, as the forge answered (a draft that was published
    /// appears once, published).
    pub written: Vec<crate::forge::ReleaseInfo>,
    /// Ids of the releases deleted (stale or duplicate drafts).
    pub deleted: Vec<u64>,
}

impl IndexChanges {
    /// Note `release` as the forge answered a write to it (the last answer wins).
    pub fn wrote(&mut self, release: crate::forge::ReleaseInfo) {
        self.written.retain(|r| r.id != release.id);
        self.written.push(release);
    }

    /// Note `asset` as uploaded to `release` (as it was read before, or as written already).
    pub fn uploaded(
        &mut self,
        release: &crate::forge::ReleaseInfo,
        asset: crate::forge::AssetInfo,
    ) {
        let mut r = self
            .written
            .iter()
            .find(|w| w.id == release.id)
            .unwrap_or(release)
            .clone();
        r.assets.retain(|a| a.name != asset.name);
        r.assets.push(asset);
        self.wrote(r);
    }

    /// Add what a later stage of the same run wrote (the gate's writes, then apply's).
    pub fn extend(&mut self, later: IndexChanges) {
        for id in later.deleted {
            self.deleted(id);
        }
        for r in later.written {
            self.wrote(r);
        }
    }

    /// Note that release `id` was deleted.
    pub fn deleted(&mut self, id: u64) {
        self.written.retain(|r| r.id != id);
        self.deleted.push(id);
    }
}
