//! Packaging: turn a csctl stack directory into the release assets csctl and `helm package`
//! would produce, but reproducibly and with the checks csctl leaves to the operator.
//!
//! The byte-level mechanics (dirhash, the Helm chart port, archives, reading a stack
//! directory) are the `stackbot-package` crate, re-exported here under their old paths
//! (`package::dirhash`, `package::chart`, ...); what needs the model stays here: `csctl.yaml`,
//! `metadata.yaml` and version selection, component version bumps, the release assets.
//!
//! Everything here except [`read_stack_dir`] is pure (writing a release is the binary's:
//! `stackbot::package::write_release`): a [`FileTree`]
//! goes in, a [`Release`] (file name → bytes) comes out, so the whole pipeline is unit-tested
//! without touching the disk and `render` output can be packaged straight from memory.
//!
//! [`FileTree`]: crate::model::FileTree

pub use stackbot_package::*;

pub mod csctl;
pub mod metadata;
pub mod release;
pub mod template;
pub mod versions;

pub use metadata::{Metadata, VersionSelection, Versions};
pub use release::{Release, SHA256SUMS, package, sha256sums};
