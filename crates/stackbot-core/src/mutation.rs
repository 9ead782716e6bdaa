//! Test-only mutations: switches that disable one guard each, so the world simulator can prove
//! that every invariant it checks can fail (issue 23, "mutation check"). A checker that stays
//! green with the guard gone tests nothing.
//!
//! Only with the cargo feature `mutation`, which no build that ships enables: the test suite
//! turns it on through the package's dev-dependency on itself (`Cargo.toml`), so `cargo test`
//! builds it and `cargo build`, `cargo install` and the release binaries do not. Without the
//! feature [`active`] is a constant `false` and every guard is what it always was.

/// The guards a mutation can disable, by the name of the simulator's invariant that catches it.
pub const NAMES: &[&str] = &[
    "no-downgrade",
    "number-never-reused",
    "declined-stays-closed",
    "transient-never-exit-2",
    "upstream-error-exits-1",
    "gone-exits-0-with-a-warning",
    "failure-exits-1",
    "tenant-failure-exits-3",
    "no-rewrite-on-base-move",
    "merges-recognised-by-content",
    "merged-tenant-gets-next-release",
    "tenants-follow-every-target",
    "no-duplicates",
    "cost-bounded-by-series-and-tenants",
    "every-target-gets-the-latest-release",
    "overlapping-runs-take-turns",
    "only-configured-minors-released",
    "cluster-upgrade-one-minor-per-step",
    "cluster-upgrade-waits-for-approval",
    "clusters-on-a-supported-minor-at-end-of-life",
];

#[cfg(feature = "mutation")]
static ACTIVE: std::sync::RwLock<Option<&'static str>> = std::sync::RwLock::new(None);

/// Whether the guard `name` is disabled (always `false` without the `mutation` feature).
#[cfg(feature = "mutation")]
pub fn active(name: &str) -> bool {
    ACTIVE.read().map(|a| *a == Some(name)).unwrap_or(false)
}

/// Whether the guard `name` is disabled (always `false` without the `mutation` feature).
#[cfg(not(feature = "mutation"))]
#[inline(always)]
pub fn active(_name: &str) -> bool {
    false
}

/// Disable the guard `name` (one of [`NAMES`]) for the whole process until [`set`]`(None)`;
/// the mutation test runs its worlds one after another.
#[cfg(feature = "mutation")]
pub fn set(name: Option<&'static str>) {
    assert!(
        name.is_none_or(|n| NAMES.contains(&n)),
        "unknown mutation {name:?}"
    );
    *ACTIVE.write().expect("mutation switch") = name;
}
