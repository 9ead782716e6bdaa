//! Publishing releases to an OCI repository: the I/O half. The pure half (manifests,
//! verification, what `plan` describes, [`OciError`]) is `stackbot_core::oci`, re-exported
//! here so `stackbot::oci::…` names both. [`target`] resolves where and as whom to push (the
//! config and the environment, secrets redacted); [`registry`] is the thin adapter over the
//! `oci-client` crate that reconciles one tag (push only what is missing, never overwrite a
//! published tag); [`publish`] connects the two for a run.

pub use stackbot_core::oci::*;

pub mod publish;
pub mod registry;
pub mod target;

pub use publish::{Held, Publisher};
pub use registry::Registry;
pub use target::{Credentials, OciTarget};
