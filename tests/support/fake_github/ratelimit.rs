//! GitHub's primary rate limit: a budget of requests per identity (token, or the client address
//! without one) per window. Every answer carries `x-ratelimit-*`; a counted request spends one
//! unit; `304 Not Modified` answers and `GET /rate_limit` spend none (GitHub documents both);
//! once the budget is spent, requests are refused (403, or 429) until the window resets.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How the primary limit behaves.
#[derive(Debug, Clone)]
pub struct RateLimitOptions {
    /// Requests per window with a token (GitHub: 5000 per hour for a user token).
    pub limit: u64,
    /// Requests per window without a token (GitHub: 60 per hour per address).
    pub anonymous_limit: u64,
    /// Length of a window (GitHub: one hour from the first counted request).
    pub window: Duration,
    /// Status of a refusal once the budget is spent (GitHub sends 403, sometimes 429).
    pub exhausted_status: u16,
}

impl Default for RateLimitOptions {
    fn default() -> Self {
        RateLimitOptions {
            limit: 5000,
            anonymous_limit: 60,
            window: Duration::from_secs(3600),
            exhausted_status: 403,
        }
    }
}

/// The budget of one identity, as the `x-ratelimit-*` headers report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimitStatus {
    pub limit: u64,
    pub remaining: u64,
    pub used: u64,
    /// Unix seconds when the window resets.
    pub reset: u64,
}

#[derive(Debug)]
struct Bucket {
    used: u64,
    started: Instant,
    reset: u64,
}

#[derive(Debug, Default)]
pub struct RateLimiter {
    pub opts: RateLimitOptions,
    buckets: HashMap<String, Bucket>,
    /// Units spent by everyone since the last reset of the counters.
    pub units: u64,
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl RateLimiter {
    pub fn new(opts: RateLimitOptions) -> Self {
        RateLimiter {
            opts,
            buckets: HashMap::new(),
            units: 0,
        }
    }

    fn limit_of(&self, identity: &str) -> u64 {
        if identity.starts_with("anonymous:") {
            self.opts.anonymous_limit
        } else {
            self.opts.limit
        }
    }

    fn bucket(&mut self, identity: &str) -> &mut Bucket {
        let window = self.opts.window;
        let b = self
            .buckets
            .entry(identity.to_string())
            .or_insert_with(|| Bucket {
                used: 0,
                started: Instant::now(),
                reset: unix_now() + window.as_secs().max(1),
            });
        if b.started.elapsed() >= window {
            *b = Bucket {
                used: 0,
                started: Instant::now(),
                reset: unix_now() + window.as_secs().max(1),
            };
        }
        b
    }

    pub fn status(&mut self, identity: &str) -> RateLimitStatus {
        let limit = self.limit_of(identity);
        let b = self.bucket(identity);
        RateLimitStatus {
            limit,
            remaining: limit.saturating_sub(b.used),
            used: b.used,
            reset: b.reset,
        }
    }

    /// Whether the identity has spent its budget.
    pub fn exhausted(&mut self, identity: &str) -> bool {
        self.status(identity).remaining == 0
    }

    /// Spend one unit.
    pub fn spend(&mut self, identity: &str) {
        let limit = self.limit_of(identity);
        let b = self.bucket(identity);
        if b.used < limit {
            b.used += 1;
        }
        self.units += 1;
    }

    /// Set what an identity has spent in the current window (tests: start near exhaustion).
    pub fn set_used(&mut self, identity: &str, used: u64) {
        self.bucket(identity).used = used;
    }

    /// Start a new window for everyone (what waiting until `x-ratelimit-reset` achieves).
    pub fn reset_windows(&mut self) {
        self.buckets.clear();
    }
}
