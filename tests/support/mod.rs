//! The test helpers, one set for every test binary (the integration tests, the world
//! simulator and its gated world, the benchmark programs): the crate `stackbot-testkit`
//! (never published), a dev-dependency of the root package, so it is compiled once and not
//! again inside each binary that uses it. Each binary names it `support` (`use
//! stackbot_testkit as support;`) and uses what it needs. `root()` and `copy_dir` are defined
//! once (`shared`); test configurations are built by one builder (`config::DemoConfig`);
//! release-test data is in `release`; the fake GitHub, the real registry, the upstream server
//! and the tenant world are beside them.

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

pub use shared::{copy_dir, local_release, root};
