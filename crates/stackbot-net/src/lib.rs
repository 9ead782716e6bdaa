//! The network: the HTTP client upstream is read with (timeouts, bounded retries, the ETag
//! cache, mirrors, size limits) and the helpers every client shares (the loopback check, the
//! `Link` parser, origin comparison).
//!
//! A crate of its own so that core compiles without an HTTP stack. The process's one tokio
//! runtime lives here ([`runtime::runtime`]), and so does the one HTTP policy of upstream and
//! GitHub (issue 31, item 1): [`retry`] (what is retried, how long to wait), [`timeouts`],
//! [`client`], the one async reqwest engine, and [`cache`], the one store of answers for
//! conditional requests (docs/http.md, "What is shared").

// The core modules this crate's code names as `crate::clock`, `crate::config`, ...: the paths
// the code had when upstream was a module of one crate, kept so the split moved files only.
use stackbot_core::{clock, config};

pub mod atomic;
pub mod cache;
pub mod charts;
pub mod client;
pub mod net;
pub mod retry;
pub mod runtime;
pub mod timeouts;
pub mod upstream;
