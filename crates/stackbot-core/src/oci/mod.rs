//! Publishing releases to an OCI repository, byte for byte the way csctl pushes them.
//!
//! The SCS cluster-stacks releases live in an OCI registry and the Cluster Stack Operator's
//! Helm chart reads from there by default (`--source oci`), so a release that only exists as
//! a forge release reaches half the users. This module keeps the split the rest of the bot
//! uses: [`manifest`] and [`verify`] are pure functions of the release files (unit-tested
//! without I/O; numbering over tags is the release index's, [`crate::index`]); [`publish`]
//! holds what `plan` needs to describe a push and what a push did. Where and as whom to push
//! (`target`: config + env, secrets redacted) and the thin adapter over the `oci-client` crate
//! that reconciles one tag (`registry`: push only what is missing, never overwrite a published
//! tag) are `stackbot_forge::oci`, which re-exports this module.

pub mod manifest;
pub mod publish;
pub mod verify;

pub use manifest::{BuiltManifest, PushDescription, ReleaseFacts, build_manifest, describe_push};
pub use publish::{Published, PushOutcome, VerifyReport};

/// Everything that can go wrong talking to a registry or checking what it holds. Messages
/// never contain credentials: registry answers are passed through `stackbot_forge`'s
/// `oci::target::Credentials::redact`.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    /// The OCI target is misconfigured (missing registry, bad repository, half-set
    /// credentials, plain HTTP to a remote host). Nothing was contacted.
    #[error("OCI target: {message}\n  hint: {hint}")]
    Config { message: String, hint: String },
    /// The release files cannot be pushed as they are (e.g. a file name CSO could not use).
    #[error("release files: {0}")]
    Release(String),
    /// The tag exists with other content. Published tags are immutable for consumers (CSO
    /// treats an existing download directory as final), so the bot never overwrites one.
    #[error(
        "tag `{tag}` in `{repository}` already points to manifest {existing}, but this release's manifest is {wanted}; \
nothing was pushed\n  hint: a published tag is never overwritten: release a new version, or delete the tag in the registry by hand if it is known to be broken"
    )]
    TagConflict {
        repository: String,
        tag: String,
        existing: String,
        wanted: String,
    },
    /// The registry refused or failed a request.
    #[error("{action} `{reference}`: {message}")]
    Registry {
        action: &'static str,
        reference: String,
        message: String,
    },
    /// What the registry holds for a tag is not the release the bot published.
    #[error("verification of `{reference}` failed:\n  - {}", problems.join("\n  - "))]
    Verify {
        reference: String,
        problems: Vec<String>,
    },
}

impl OciError {
    /// Whether the error is the user's input (exit code 2) rather than a runtime failure.
    pub fn is_invalid_input(&self) -> bool {
        matches!(self, OciError::Config { .. } | OciError::Release(_))
    }
}

/// `sha256:<hex>` of some bytes: the only digest algorithm csctl, oras and CSO use.
pub fn sha256_digest(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(bytes)))
}
