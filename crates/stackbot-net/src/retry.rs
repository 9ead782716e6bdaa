//! The one retry policy of every HTTP client (issue 31, item 1): which failures are tried
//! again, how long to wait first, and when to give up. The GitHub forge and the upstream
//! reader both decide here; each keeps only its loop (docs/http.md, R1 and R2).
//!
//! - **By method** ([`transport_may_retry`]): a client repeats reads on its own, never a write.
//!   A write that may have taken effect (a `502` after GitHub acted, a dropped connection) is
//!   repeated only by a caller that first looked whether it did (the forge's
//!   `write_checked`), or that knows it is idempotent.
//! - **By answer** ([`classify_status`]): a rate limit (`Retry-After`, GitHub's
//!   `x-ratelimit-remaining: 0` and `x-ratelimit-reset` on a `403`/`429`) waits as long as the
//!   server says; a `5xx` may heal in seconds; anything else is a definite answer. A transport
//!   failure heals or not by its cause (`net::failure::Cause::heals_in_seconds`).
//! - **How long** ([`RetryPolicy::wait`]): the server's wait if it gave one, else exponential
//!   backoff with jitter; a server's wait beyond [`RetryPolicy::max_rate_limit_wait`] gives up
//!   at once (a run fails as transient rather than hang, or retry before it is allowed to).
//!
//! Hand-written, not reqwest-retry 0.9: its `RetryableStrategy::handle` sees the outcome
//! only, never the request, so it cannot keep a POST from being repeated (R1); its policies
//! count attempts, read neither `Retry-After` nor `x-ratelimit-reset` and cap no wait (R2);
//! and it sleeps on tokio's clock, where these waits run on the run's clock (the
//! simulator's in the tests). Nor octocrab's `RetryConfig`: it repeats a POST after a `5xx`.

use std::time::Duration;

use chrono::{DateTime, Utc};
use http::{HeaderMap, Method, StatusCode};

/// How hard to try before giving up. Bounded in attempts *and* in the longest wait accepted
/// from a server, so a run never hangs on a throttled host.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Retries after the first attempt (per call).
    pub max_retries: u32,
    /// First backoff delay; doubled per retry, with ±50 % jitter.
    pub base_delay: Duration,
    /// Cap of one backoff delay (jitter included).
    pub max_delay: Duration,
    /// Longest `Retry-After` / rate-limit reset waited for; longer ones fail as transient.
    pub max_rate_limit_wait: Duration,
}

/// A failed attempt that trying again may mend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The server refused before acting and said how long to wait (a rate limit).
    RateLimited(Duration),
    /// A `5xx` (with its `Retry-After`, if any) or a transport failure that heals in seconds:
    /// the request may or may not have been performed.
    Transient(Option<Duration>),
}

/// Why [`RetryPolicy::wait`] says stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GiveUp {
    /// Every retry is spent.
    Exhausted,
    /// The server asks for a longer wait than [`RetryPolicy::max_rate_limit_wait`].
    TooLong(Duration),
    /// This wait would end after the caller's deadline ([`Waits::by`]).
    Deadline(Duration),
}

impl RetryPolicy {
    /// GitHub's defaults: conservative for a real host, fast backoff for a loopback test server.
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

    /// The delay before retry number `n` (0-based): `base_delay · 2ⁿ` with ±50 % jitter (so
    /// clients that failed together do not retry together), at most `max_delay`.
    pub fn backoff(&self, n: u32) -> Duration {
        let exp = self.base_delay.saturating_mul(1u32 << n.min(16));
        exp.mul_f64(0.5 + fastrand::f64()).min(self.max_delay)
    }

    /// How long to wait before retry number `n` (0-based) after `failure`, or why not to.
    /// A wait too long is said before spent retries: it is the more useful reason.
    pub fn wait(&self, n: u32, failure: Failure) -> Result<Duration, GiveUp> {
        let asked = match failure {
            Failure::RateLimited(w) | Failure::Transient(Some(w)) => Some(w),
            Failure::Transient(None) => None,
        };
        if let Some(w) = asked
            && w > self.max_rate_limit_wait
        {
            return Err(GiveUp::TooLong(w));
        }
        if n >= self.max_retries {
            return Err(GiveUp::Exhausted);
        }
        Ok(asked.unwrap_or_else(|| self.backoff(n)))
    }
}

/// What one attempt of [`run`] came to.
#[derive(Debug)]
pub enum Step<T, E> {
    /// Success, or a definite answer the caller reads (a `404`): the loop returns it.
    Done(T),
    /// A failure no retry mends (a refusal, a name that does not resolve): returned as is.
    Stop(E),
    /// A failure a retry may mend, as the policy classifies it; `E` is what the loop ends
    /// with if it gives up after it.
    Again(Failure, E),
}

/// How [`run`] ended without a [`Step::Done`].
#[derive(Debug)]
pub enum Ended<E> {
    /// An attempt said [`Step::Stop`].
    Stopped(E),
    /// The policy (or the deadline) said stop after `attempts` attempts; `last` is the last
    /// attempt's failure.
    GaveUp { why: GiveUp, attempts: u32, last: E },
}

/// Where [`run`] waits, and until when it may.
#[derive(Debug, Clone, Copy, Default)]
pub struct Waits<'a> {
    /// The run's clock, which sleeps (the simulator's advances instead). `None` (a client
    /// built without one, in a unit test of the client) retries at once.
    pub clock: Option<&'a dyn crate::clock::Clock>,
    /// No wait may end after this instant of the clock: a caller's deadline (a dispatch's
    /// send-by time, the registry's bound on a whole call). The loop then gives up with
    /// [`GiveUp::Deadline`].
    pub by: Option<DateTime<Utc>>,
}

/// The one retry loop of every HTTP client (upstream, the GitHub forge, the OCI registry):
/// send `attempt` (told its 0-based number), and while it says [`Step::Again`], wait as the
/// policy says ([`RetryPolicy::wait`]) and send again. `retrying` is told each retry before
/// its wait (to log and count it). What differs between the clients is theirs to say: which
/// failures are [`Step::Again`] (a write that is unsafe to repeat never is), what to do before
/// each attempt (a write budget, a look whether an ambiguous write took effect), and the
/// numbers of `policy`.
pub async fn run<T, E>(
    policy: &RetryPolicy,
    waits: Waits<'_>,
    mut attempt: impl AsyncFnMut(u32) -> Step<T, E>,
    mut retrying: impl FnMut(u32, Duration, &E),
) -> Result<T, Ended<E>> {
    let mut n = 0;
    loop {
        let (failure, last) = match attempt(n).await {
            Step::Done(t) => return Ok(t),
            Step::Stop(e) => return Err(Ended::Stopped(e)),
            Step::Again(failure, e) => (failure, e),
        };
        let wait = policy
            .wait(n, failure)
            .and_then(|wait| match (waits.clock, waits.by) {
                (Some(clock), Some(by))
                    if clock.now() + chrono::Duration::from_std(wait).unwrap_or_default() > by =>
                {
                    Err(GiveUp::Deadline(wait))
                }
                _ => Ok(wait),
            });
        let wait = match wait {
            Ok(wait) => wait,
            Err(why) => {
                let attempts = n + 1;
                return Err(Ended::GaveUp {
                    why,
                    attempts,
                    last,
                });
            }
        };
        retrying(n, wait, &last);
        if let Some(clock) = waits.clock {
            clock.sleep(wait);
        }
        n += 1;
    }
}

/// Whether a client may repeat a request of this method on its own: reads only. A write is
/// repeated by the caller that knows whether it is safe (R1).
pub fn transport_may_retry(method: &Method) -> bool {
    *method == Method::GET || *method == Method::HEAD
}

/// What a non-success answer means for retrying: `None` is a definite answer (a `404`, a
/// `422`, a `403` that is not a rate limit). `now` is the run's clock.
pub fn classify_status(
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    now: DateTime<Utc>,
) -> Option<Failure> {
    if let Some(wait) = rate_limit_wait(status, headers, body, now) {
        return Some(Failure::RateLimited(wait));
    }
    status
        .is_server_error()
        .then(|| Failure::Transient(retry_after(headers)))
}

/// `Retry-After` in seconds (the HTTP-date form is not used by the hosts read here).
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let v = crate::net::header(headers, http::header::RETRY_AFTER)?;
    v.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// Whether the answer says the rate limit is spent (`x-ratelimit-remaining: 0`).
pub fn rate_limit_exhausted(headers: &HeaderMap) -> bool {
    crate::net::header(headers, "x-ratelimit-remaining").map(str::trim) == Some("0")
}

/// Rate-limit classification of a `403`/`429`: `Some(wait)` if the server asks to slow down.
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
    if let Some(wait) = retry_after(headers) {
        return Some(wait);
    }
    if rate_limit_exhausted(headers) {
        let now = u64::try_from(now.timestamp()).unwrap_or(0);
        let reset = crate::net::header(headers, "x-ratelimit-reset")
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
    fn server_errors_are_transient_and_other_refusals_definite() {
        let now: DateTime<Utc> = "2026-05-01T12:00:00Z".parse().unwrap();
        let c = |s: u16, h: &[(&'static str, &str)]| {
            classify_status(StatusCode::from_u16(s).unwrap(), &headers(h), b"", now)
        };
        assert_eq!(c(502, &[]), Some(Failure::Transient(None)));
        assert_eq!(
            c(503, &[("retry-after", "0")]),
            Some(Failure::Transient(Some(Duration::ZERO)))
        );
        assert_eq!(
            c(429, &[]),
            Some(Failure::RateLimited(Duration::from_secs(60)))
        );
        for definite in [400, 401, 403, 404, 409, 422] {
            assert_eq!(c(definite, &[]), None, "{definite}");
        }
    }

    #[test]
    fn only_reads_are_repeated_by_a_client() {
        assert!(transport_may_retry(&Method::GET));
        assert!(transport_may_retry(&Method::HEAD));
        for w in [Method::POST, Method::PATCH, Method::PUT, Method::DELETE] {
            assert!(!transport_may_retry(&w), "{w}");
        }
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy::for_host(false);
        assert!(p.backoff(0) >= Duration::from_millis(500));
        assert!(p.backoff(0) <= Duration::from_millis(1500));
        assert!(p.backoff(3) >= Duration::from_secs(4));
        assert_eq!(p.backoff(20), Duration::from_secs(30));
    }

    #[test]
    fn the_server_s_wait_is_taken_unless_it_is_too_long_and_retries_are_counted() {
        let p = RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(350),
            max_rate_limit_wait: Duration::from_secs(30),
        };
        let seven = Duration::from_secs(7);
        assert_eq!(p.wait(0, Failure::RateLimited(seven)), Ok(seven));
        assert_eq!(p.wait(1, Failure::Transient(Some(seven))), Ok(seven));
        let hour = Duration::from_secs(3600);
        assert_eq!(
            p.wait(0, Failure::RateLimited(hour)),
            Err(GiveUp::TooLong(hour))
        );
        assert_eq!(
            p.wait(2, Failure::RateLimited(hour)),
            Err(GiveUp::TooLong(hour)),
            "the longer wait is the reason named"
        );
        let first = p.wait(0, Failure::Transient(None)).unwrap();
        assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(150));
        assert_eq!(p.wait(2, Failure::Transient(None)), Err(GiveUp::Exhausted));
    }

    /// [`run`] on a manual clock: `results` are the attempts' steps in order.
    fn run_steps(
        policy: &RetryPolicy,
        by: Option<Duration>,
        results: Vec<Step<&'static str, &'static str>>,
    ) -> (
        Result<&'static str, Ended<&'static str>>,
        Vec<u32>,
        Duration,
    ) {
        let start: DateTime<Utc> = "2026-05-01T12:00:00Z".parse().unwrap();
        let clock = crate::clock::ManualClock::new(start);
        let before = crate::clock::Clock::instant(&clock);
        let waits = Waits {
            clock: Some(&clock),
            by: by.map(|d| start + chrono::Duration::from_std(d).unwrap()),
        };
        let mut steps = results.into_iter();
        let mut retried = Vec::new();
        let attempt = async |_| steps.next().expect("no attempt beyond the steps given");
        let ended =
            crate::runtime::runtime()
                .unwrap()
                .block_on(run(policy, waits, attempt, |n, _, _| retried.push(n)));
        (
            ended,
            retried,
            crate::clock::Clock::instant(&clock) - before,
        )
    }

    #[test]
    fn the_loop_repeats_what_may_mend_until_done_and_stops_on_a_definite_answer() {
        let p = RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(100),
            max_rate_limit_wait: Duration::from_secs(30),
        };
        let again = || Step::Again(Failure::RateLimited(Duration::from_secs(1)), "503");
        let (got, retried, waited) = run_steps(&p, None, vec![again(), Step::Done("ok")]);
        assert_eq!((got.unwrap(), retried), ("ok", vec![0]));
        assert_eq!(
            waited,
            Duration::from_secs(1),
            "the server's wait, on the run's clock"
        );

        let (got, retried, _) = run_steps(&p, None, vec![again(), Step::Stop("404")]);
        assert!(matches!(got, Err(Ended::Stopped("404"))), "{got:?}");
        assert_eq!(retried, vec![0]);

        let (got, retried, _) = run_steps(&p, None, vec![again(), again(), again()]);
        assert!(
            matches!(
                got,
                Err(Ended::GaveUp {
                    why: GiveUp::Exhausted,
                    attempts: 3,
                    last: "503"
                })
            ),
            "{got:?}"
        );
        assert_eq!(
            retried,
            vec![0, 1],
            "two retries, then the policy says stop"
        );

        let (got, retried, waited) = run_steps(&p, Some(Duration::from_millis(500)), vec![again()]);
        assert!(
            matches!(
                got,
                Err(Ended::GaveUp {
                    why: GiveUp::Deadline(_),
                    attempts: 1,
                    ..
                })
            ),
            "a wait past the deadline is not begun: {got:?}"
        );
        assert_eq!((retried, waited), (vec![], Duration::ZERO));
    }
}
