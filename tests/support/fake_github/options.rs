//! How a fake is set up, and the faults a test injects.

use std::collections::BTreeMap;
use std::time::Duration;

use axum::http::Method;

use super::ratelimit::RateLimitOptions;

/// How strictly requests and answers are checked against GitHub's OpenAPI description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conformance {
    /// Every request must address an operation stackbot declares; everything is validated.
    Enforce,
    /// Requests to operations outside the description are served unchecked (replaying
    /// recordings that also create repositories or labels); the rest is validated.
    KnownOperationsOnly,
    /// Every request must address a declared operation and be valid, as with `Enforce`, but
    /// answers are not re-validated: for long simulations, where the fake's answers are the
    /// same code paths the other tests validate and serialising each answer twice dominates.
    Requests,
    /// No checks.
    Off,
}

/// How the fake is set up.
#[derive(Debug, Clone)]
pub struct FakeOptions {
    /// The token the fake accepts. Requests with another token get `401 Bad credentials`;
    /// writes without a token get `401 Requires authentication`; reads without one see no drafts.
    /// `None`: any token is accepted.
    pub token: Option<String>,
    /// Path prefix of the API (`""` like api.github.com, `"/api/v3"` like GitHub Enterprise).
    pub api_prefix: String,
    /// Uploads on the API host under this prefix (`"/api/uploads"` like GitHub Enterprise);
    /// `None`: a separate upload host, like uploads.github.com.
    pub upload_prefix: Option<String>,
    /// How the fake spells its host in the URLs it writes (`upload_url`, `Link`, `Location`,
    /// `url` fields). Default `127.0.0.1`; e.g. `LOCALHOST` is the same origin spelled
    /// differently, as GitHub Enterprise may write `HOST:443`.
    pub url_host: String,
    pub rate_limit: RateLimitOptions,
    pub conformance: Conformance,
}

impl Default for FakeOptions {
    fn default() -> Self {
        FakeOptions {
            token: None,
            api_prefix: String::new(),
            upload_prefix: None,
            url_host: "127.0.0.1".into(),
            rate_limit: RateLimitOptions::default(),
            conformance: Conformance::Enforce,
        }
    }
}

impl FakeOptions {
    /// GitHub Enterprise paths (`/api/v3`, uploads under `/api/uploads` on the same host).
    pub fn enterprise(mut self) -> Self {
        self.api_prefix = "/api/v3".into();
        self.upload_prefix = Some("/api/uploads".into());
        self
    }

    pub fn with_token(mut self, token: &str) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Spell the host differently in the URLs the fake writes (same origin, other text).
    pub fn with_url_host(mut self, host: &str) -> Self {
        self.url_host = host.into();
        self
    }

    /// Requests per window with a token (default 5000, like GitHub).
    pub fn with_rate_limit(mut self, limit: u64) -> Self {
        self.rate_limit.limit = limit;
        self
    }

    pub fn with_conformance(mut self, c: Conformance) -> Self {
        self.conformance = c;
        self
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Answer this status without applying the request.
    Status(u16),
    /// Apply the request, then answer this status (the nasty case: it *did* happen).
    AfterSuccess(u16),
    /// Drop the connection without applying.
    Drop,
    /// Apply, then drop the connection before the answer is complete.
    DropAfterSuccess,
    /// Answer normally, but only after this delay.
    Delay(Duration),
    /// `403` secondary rate limit with `Retry-After: secs`, not applied.
    SecondaryRateLimit(u64),
    /// `429 Too Many Requests` (a secondary limit) with `Retry-After: secs`, not applied.
    TooManyRequests(u64),
    /// Apply, then answer with this many bytes more than the answer holds (a server or proxy
    /// that sends more than the listing said).
    Longer(usize),
}

/// A fault on the n-th request (1-based) of one route, e.g. `POST /repos/{owner}/{repo}/releases`.
#[derive(Debug, Clone)]
pub struct RouteFault {
    pub method: Method,
    pub route: String,
    pub nth: usize,
    pub fault: Fault,
}

/// Seeded random faults over every request.
#[derive(Debug, Clone)]
pub struct RandomFaults {
    pub seed: u64,
    /// Probability of a 500/502/503 answer.
    pub server_error: f64,
    /// Probability of a dropped connection.
    pub drop: f64,
    /// Probability of a secondary rate limit (`403` + `Retry-After`).
    pub rate_limit: f64,
    /// For writes hit by a 5xx or drop: probability that the write was applied first.
    pub after_success: f64,
    /// `Retry-After` seconds of injected rate limits.
    pub retry_after: u64,
}

impl RandomFaults {
    /// 10 % 5xx, 3 % dropped connections, 1 % secondary rate limit; half the failed writes applied.
    pub fn flaky(seed: u64) -> Self {
        RandomFaults {
            seed,
            server_error: 0.10,
            drop: 0.03,
            rate_limit: 0.01,
            after_success: 0.5,
            retry_after: 1,
        }
    }
}

/// Fault injection, replaced as a whole per test with [`FakeGithub::set_faults`].
#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// Keyed by the 1-based index of the write (POST/PATCH/PUT/DELETE) since the last reset.
    pub on_write: BTreeMap<usize, Fault>,
    /// Faults on the n-th request of a route.
    pub on_route: Vec<RouteFault>,
    pub random: Option<RandomFaults>,
    /// Added to every answer (GitHub-like latency for benchmarks).
    pub latency: Duration,
}

impl Faults {
    pub fn write(k: usize, fault: Fault) -> Self {
        Faults {
            on_write: [(k, fault)].into(),
            ..Faults::default()
        }
    }

    pub fn route(method: Method, route: &str, nth: usize, fault: Fault) -> Self {
        Faults {
            on_route: vec![RouteFault {
                method,
                route: route.into(),
                nth,
                fault,
            }],
            ..Faults::default()
        }
    }

    pub fn random(r: RandomFaults) -> Self {
        Faults {
            random: Some(r),
            ..Faults::default()
        }
    }
}
