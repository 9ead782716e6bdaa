//! The one timeout policy of every HTTP client (issue 31, item 1): how long a connection may
//! take to open, and how long an open one may stay silent. Both the GitHub forge and the
//! upstream reader take their values from here.
//!
//! There is deliberately no separate whole-request bound for GitHub. [`READ`] is reqwest's
//! read timeout, and in reqwest 0.13 its timer starts when the request is sent and is not
//! reset until the response headers arrive: for GitHub it bounds sending the body plus the
//! server's work to 120 s in total, so an asset upload that takes longer (a slow uplink)
//! fails as ambiguous. Today's assets upload in seconds. Upstream sources are read whole and small, so the
//! upstream reader adds its own whole-request bound ([`UPSTREAM_REQUEST`], a setting of its
//! client) on top.

use std::time::Duration;

/// Opening a connection (TCP and TLS): a host that takes longer is treated as unreachable
/// (`net::failure::Cause::Timeout`, retried by the one retry policy).
pub const CONNECT: Duration = Duration::from_secs(15);

/// reqwest's read timeout: from sending the request until its headers arrive (not reset by
/// the upload), then between chunks of the body.
pub const READ: Duration = Duration::from_secs(120);

/// Default whole-request bound of an upstream read (a schedule, a CHECKSUM, a Helm index):
/// a source that trickles must not hold the run.
pub const UPSTREAM_REQUEST: Duration = Duration::from_secs(60);
