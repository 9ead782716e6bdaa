//! stackbot's core: every stage that decides, and the vocabulary they share.
//!
//! The pipeline is `upstream → resolve → render → package → plan → apply`, and every stage up
//! to `plan` is a pure function of its inputs (see `docs/architecture.md`). This crate is
//! those stages (resolve, render, plan, the release index, SCS 0210 compliance, status, the
//! tenants' planning, adopt, report formatting), the configuration and lock types, and the
//! data the edges hand in: upstream's raw answers and their parsers, the forge's data types,
//! the OCI manifests, time and the environment as values.
//!
//! It has no I/O dependency: no git2, tokio, reqwest, octocrab, oci-client or any HTTP client
//! (the crate graph keeps it so; `cargo tree -p stackbot-core -e normal` shows it), and it
//! cannot read the clock or the environment (`clippy.toml` beside this crate's manifest
//! disallows them). The forge, the registry and the network are `stackbot-forge` and
//! `stackbot-net`; the binary (`stackbot`) wires them together.

pub mod adopt;
pub mod body;
pub mod clock;
pub mod compliance;
pub mod config;
pub mod env;
pub mod error;
pub mod forge;
pub mod gate;
pub mod index;
pub mod init;
pub mod lock;
pub mod model;
pub mod oci;
pub mod outcome;
pub mod package;
pub mod plan;
pub mod render;
pub mod report;
pub mod resolve;
pub mod status;
pub mod tenants;
pub mod upstream;
pub mod yaml;
