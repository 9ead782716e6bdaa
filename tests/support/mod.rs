//! Shared test support. Each test file does `mod support;` and uses what it needs.
#![allow(dead_code)]

pub mod fake_github;
pub mod forge_conformance;
pub mod tenant_world;
