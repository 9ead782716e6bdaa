//! The test helpers, one set for every test binary (the integration tests, the world
//! simulator and its gated world, the examples that include it): each does `mod support;` and
//! uses what it needs. `root()` and `copy_dir` are defined once (`shared`); test
//! configurations are built by one builder (`config::DemoConfig`); release-test data is in
//! `release`; the fake GitHub, the real registry, the upstream server and the tenant world are
//! beside them.
#![allow(dead_code)]

pub mod capi;
pub mod config;
pub mod counting_proxy;
pub mod fake_github;
pub mod forge_conformance;
pub mod gotemplate;
pub mod helm;
pub mod read_log;
pub mod registry;
pub mod release;
pub mod runner;
pub mod shared;
pub mod tenant_world;
pub mod upstream_server;

// Not every binary that includes `support` uses both.
#[allow(unused_imports)]
pub use shared::{copy_dir, local_release, root};
