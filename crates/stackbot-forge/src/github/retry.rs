//! When and how long to wait before trying again: bounded exponential backoff for ambiguous
//! failures, and GitHub's own instructions (`Retry-After`, `x-ratelimit-reset`) for rate limits.

use std::time::Duration;

use chrono::{DateTime, Utc};
use http::{HeaderMap, StatusCode};

/// How hard to try before giving up. Bounded in attempts *and* in the longest wait we accept
/// from a `Retry-After`, so a run never hangs on a throttled API.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Retries after the first attempt (per call).
    pub max_retries: u32,
    /// First backoff delay; doubled per retry, with ±50 % jitter.
    pub base_delay: Duration,
    /// Cap of one backoff delay.
    pub max_delay: Duration,
    /// Longest `Retry-After` / rate-limit reset we wait for; longer ones fail as transient.
    pub max_rate_limit_wait: Duration,
}

impl RetryPolicy {
    /// Conservative defaults for a real GitHub; faster backoff for a loopback test server.
    pub fn for_host(loopback: bool) -> Self {
        RetryPolicy {
            max_retries: 6,
            base_delay: if loopback {
                Duration::from_millis(20)
            } else {
                Duration::from_secs(1)
            },
            max_delay: if loopback {
                Duration::from_millis(500)
            } else {
                Duration::from_secs(30)
            },
            max_rate_limit_wait: Duration::from_secs(300),
        }
    }

    /// The delay before retry number `n` (0-based), with jitter.
    pub fn backoff(&self, n: u32) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(1u32 << n.min(16))
            .min(self.max_delay);
        let jitter = 0.5 + fastrand::f64();
        exp.mul_f64(jitter)
    }
}

/// Rate-limit classification of a 403/429: `Some(wait)` if the server asks us to slow down.
/// `now` is the run's clock (the reset header is a wall-clock epoch second).
pub fn rate_limit_wait(
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    now: DateTime<Utc>,
) -> Option<Duration> {
    if status != StatusCode::FORBIDDEN && status != StatusCode::TOO_MANY_REQUESTS {
        return None;
    }
    let header = |n: &str| headers.get(n).and_then(|v| v.to_str().ok());
    if let Some(secs) = header("retry-after").and_then(|s| s.trim().parse::<u64>().ok()) {
        return Some(Duration::from_secs(secs));
    }
    if header("x-ratelimit-remaining").map(str::trim) == Some("0") {
        let now = u64::try_from(now.timestamp()).unwrap_or(0);
        let reset = header("x-ratelimit-reset")
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(now + 60);
        return Some(Duration::from_secs(reset.saturating_sub(now).max(1)));
    }
    let text = String::from_utf8_lossy(body).to_ascii_lowercase();
    if status == StatusCode::TOO_MANY_REQUESTS || text.contains("rate limit") {
        // GitHub: without headers, wait at least a minute before retrying.
        return Some(Duration::from_secs(60));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn rate_limits_wait_for_retry_after_then_the_reset_then_a_minute() {
        let now: DateTime<Utc> = "2026-05-01T12:00:00Z".parse().unwrap();
        let t = now.timestamp();
        let w = |s: StatusCode, h: &[(&'static str, &str)], b: &str| {
            rate_limit_wait(s, &headers(h), b.as_bytes(), now)
        };
        assert_eq!(
            w(StatusCode::TOO_MANY_REQUESTS, &[("retry-after", "7")], ""),
            Some(Duration::from_secs(7))
        );
        let reset = (t + 90).to_string();
        assert_eq!(
            w(
                StatusCode::FORBIDDEN,
                &[
                    ("x-ratelimit-remaining", "0"),
                    ("x-ratelimit-reset", &reset)
                ],
                ""
            ),
            Some(Duration::from_secs(90))
        );
        let past = (t - 5).to_string();
        assert_eq!(
            w(
                StatusCode::FORBIDDEN,
                &[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", &past)],
                ""
            ),
            Some(Duration::from_secs(1)),
            "a reset in the past waits a moment, not forever"
        );
        assert_eq!(
            w(
                StatusCode::FORBIDDEN,
                &[],
                "{\"message\":\"API rate limit exceeded\"}"
            ),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            w(
                StatusCode::FORBIDDEN,
                &[],
                "{\"message\":\"Resource not accessible\"}"
            ),
            None
        );
        assert_eq!(w(StatusCode::NOT_FOUND, &[("retry-after", "1")], ""), None);
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy::for_host(false);
        assert!(p.backoff(0) <= Duration::from_millis(1500));
        assert!(p.backoff(20) <= Duration::from_secs(45));
        assert!(p.backoff(3) >= Duration::from_secs(4));
    }
}
