//! stackbot: a release bot for SCS Cluster Stacks.
//!
//! The pipeline is `upstream → resolve → render → package → plan → apply`, and every stage
//! up to `plan` is a pure function of its inputs (see `docs/architecture.md`). The forge, git,
//! HTTP and OCI registry are thin adapters behind traits, so a dry run is the same plan, not
//! executed.
//!
//! The workspace's crates, bottom up: `stackbot-package` (byte-level packaging), `stackbot-core`
//! (everything that decides; no I/O dependency), `stackbot-net` (HTTP), `stackbot-forge` (the
//! forge and the OCI registry), and this package: the binary's edge (`cli`), the loop
//! (`pipeline`), reading the world (`observe`) and writing to it (`apply`).
//!
//! The crates' modules are re-exported here under the paths they had before the split
//! (`stackbot::model`, `stackbot::forge::local`, `stackbot::upstream::http`, ...), so the tests,
//! examples and benchmarks name one crate. Where one old module now spans two crates, the
//! higher crate's module re-exports the lower one's (`stackbot_forge::oci` re-exports
//! `stackbot_core::oci`, `stackbot_net::upstream` re-exports `stackbot_core::upstream`,
//! `stackbot_forge` re-exports the forge's data types of `stackbot_core::forge`). Core touches
//! no file: `config`, `lock`, `render`, `package` and `report::github` below add the reader and
//! writer of their files (`files`) to core's module of that name.

pub use stackbot_core::{
    adopt, body, compliance, error, gate, index, init, model, outcome, plan, resolve, status,
    tenants, yaml,
};
/// The forge: the `Forge` trait, the local and GitHub forges, the test doubles.
pub use stackbot_forge as forge;
pub use stackbot_forge::oci;
pub use stackbot_net::{charts, net, upstream};

/// Time as a value ([`stackbot_core::clock`]) and the real clock, which only the edge
/// constructs.
pub mod clock {
    pub use crate::process::SystemClock;
    pub use stackbot_core::clock::*;
}

/// The environment as a value ([`stackbot_core::env`]) and its one reader of the process
/// environment, called at the edge.
pub mod env {
    pub use crate::process::from_process;
    pub use stackbot_core::env::*;
}

/// The configuration ([`stackbot_core::config`]) and its one reader of the file.
pub mod config {
    pub use crate::files::load_config as load;
    pub use stackbot_core::config::*;
}

/// The lock ([`stackbot_core::lock`]) and its reader and writer on disk.
pub mod lock {
    pub use crate::files::{load_lock as load, save_lock as save, write_atomic};
    pub use stackbot_core::lock::*;
}

/// Rendering ([`stackbot_core::render`]) and the template and stack trees on disk.
pub mod render {
    pub use crate::files::render::*;
    pub use stackbot_core::render::*;
}

/// Packaging ([`stackbot_core::package`]) and the stack and release directories on disk.
pub mod package {
    pub use crate::files::package::*;
    pub use stackbot_core::package::*;
}

/// Reports ([`stackbot_core::report`]); `report::github` adds the Actions files' writer.
pub mod report {
    pub use stackbot_core::report::*;
    /// GitHub Actions: workflow commands and environment files, and their writer.
    pub mod github {
        pub use crate::files::actions::*;
        pub use stackbot_core::report::github::*;
    }
}

pub mod apply;
pub mod cli;
pub mod fan_out;
pub mod files;
pub mod observe;
pub mod pipeline;
mod process;
