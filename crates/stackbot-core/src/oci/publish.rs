//! The OCI side of the release sequence that is pure: which configuration publishes to OCI,
//! the creation annotation of a run's day, the settings `plan` describes pushes with, and what
//! a push did. The registry client, the target with its credentials and the publisher are
//! `stackbot_forge::oci` (which re-exports all of this under the same paths).

use super::OciError;
use super::manifest::{PushDescription, ReleaseFacts, describe_push};
use crate::config::{Config, OciConfig};
use crate::model::FileTree;

/// The `oci:` section when `publish` lists `oci`, else `None`.
pub fn oci_config(config: &Config) -> Option<&OciConfig> {
    if config.publishes_on_oci() {
        config.oci.as_ref()
    } else {
        None
    }
}

/// The creation annotation for a run on `now`, when the config asks for one: midnight UTC of
/// the run's date, so `plan` and `apply` of the same day compute the same digest.
pub fn created_for(config: &OciConfig, now: chrono::NaiveDate) -> Option<String> {
    config
        .created_annotation
        .then(|| format!("{}T00:00:00Z", now.format("%Y-%m-%d")))
}

/// What `plan` needs to describe OCI pushes, resolved once at the CLI edge: the target
/// reference and the creation annotation. No credentials, no connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciPlanSettings {
    /// Full repository reference (`registry.scs.community/kaas/cluster-stacks`).
    pub target: String,
    /// RFC 3339 creation annotation, when `oci.created_annotation` is on.
    pub created: Option<String>,
    /// `publish` lists only `oci`: no forge release (tags and commits still go to the
    /// repository), and the latest release of a series is read from the registry.
    pub only: bool,
}

impl OciPlanSettings {
    /// Describe pushing `assets` as `tag` (pure).
    pub fn describe(&self, tag: &str, assets: &FileTree) -> Result<PushDescription, OciError> {
        let facts = ReleaseFacts::from_files(assets)?;
        describe_push(&self.target, tag, assets, &facts, self.created.as_deref())
    }
}

/// What one publication did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Published {
    pub reference: String,
    pub tag: String,
    #[serde(flatten)]
    pub outcome: PushOutcome,
    pub verified: VerifyReport,
}

/// What a push did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PushOutcome {
    /// The manifest was put under the tag.
    Pushed {
        digest: String,
        /// Blobs uploaded now; the others were already in the repository.
        blobs_uploaded: usize,
        blobs_reused: usize,
    },
    /// The tag already held exactly this manifest: nothing was written.
    AlreadyPresent { digest: String },
}

impl PushOutcome {
    /// The manifest digest under the tag after the push.
    pub fn digest(&self) -> &str {
        match self {
            PushOutcome::Pushed { digest, .. } | PushOutcome::AlreadyPresent { digest } => digest,
        }
    }
}

/// What verification checked, for reports.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VerifyReport {
    pub reference: String,
    pub digest: String,
    pub layers: usize,
}
