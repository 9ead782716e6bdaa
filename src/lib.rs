//! stackbot: a release bot for SCS Cluster Stacks.
//!
//! The pipeline is `upstream → resolve → render → package → plan → apply`, and every stage
//! up to `plan` is a pure function of its inputs (see `docs/architecture.md`). The forge, git,
//! HTTP and OCI registry are thin adapters behind traits, so a dry run is the same plan, not
//! executed.

pub mod adopt;
pub mod apply;
pub mod body;
pub mod cli;
pub mod clock;
pub mod compliance;
pub mod config;
pub mod env;
pub mod error;
pub mod forge;
pub mod index;
pub mod lock;
pub mod model;
pub mod mutation;
pub mod net;
pub mod observe;
pub mod oci;
pub mod package;
pub mod pipeline;
pub mod plan;
pub mod render;
pub mod report;
pub mod resolve;
pub mod status;
pub mod tenants;
pub mod upstream;
pub mod yaml;
