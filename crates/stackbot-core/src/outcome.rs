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
}
