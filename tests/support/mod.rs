//! Shared test support. Each test file does `mod support;` and uses what it needs.
#![allow(dead_code)]

pub mod capi;
pub mod fake_github;
pub mod forge_conformance;
pub mod gotemplate;
pub mod helm;
pub mod registry;
pub mod runner;
pub mod shared;
pub mod tenant_world;
pub mod upstream_server;
