//! The process's clock and environment: the only readers of the real clock and of the process
//! environment, at the edge (the CLI constructs both once per run). Core cannot call them
//! (`crates/stackbot-core/clippy.toml` disallows the clock and the environment there); the
//! library re-exports them as `stackbot::clock::SystemClock` and `stackbot::env::from_process`.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use stackbot_core::clock::Clock;
use stackbot_core::env::Env;

/// The real clock. Constructed only at the edge (the CLI); everything below receives it.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
    fn instant(&self) -> Instant {
        Instant::now()
    }
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}

/// The real process environment (variables whose name or value is not UTF-8 are left out).
/// Called once, at the edge (the CLI).
pub fn from_process() -> Env {
    Env::from_pairs(
        std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
    )
}
