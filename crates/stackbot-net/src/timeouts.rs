//! The one timeout policy of every HTTP client (issue 31, item 1): how long a connection may
//! take to open, and how long an open one may stay silent. Both the GitHub forge and the
//! upstream reader take their values from here.
//!
//! There is deliberately no whole-request bound for GitHub: a release asset of a few hundred
//! MB uploads for longer than any bound that would also catch a hung read; a silent
//! connection is caught by [`READ`] instead. Upstream sources are read whole and small, so the
//! upstream reader adds its own whole-request bound ([`UPSTREAM_REQUEST`], a setting of its
//! client) on top.

use std::time::Duration;

/// Opening a connection (TCP and TLS): a host that takes longer is treated as unreachable
/// (`net::failure::Cause::Timeout`, retried by the one retry policy).
pub const CONNECT: Duration = Duration::from_secs(15);

/// Longest silence on an open connection while an answer is awaited or read.
pub const READ: Duration = Duration::from_secs(120);

/// Default whole-request bound of an upstream read (a schedule, a CHECKSUM, a Helm index):
/// a source that trickles must not hold the run.
pub const UPSTREAM_REQUEST: Duration = Duration::from_secs(60);
