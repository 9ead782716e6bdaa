//! What a failed connection was, said plainly: the DNS lookup of a host, a refused
//! connection, TLS, a timeout, or a connection dropped half-way, and whether trying again in a
//! few seconds can help.
//!
//! Both HTTP clients (the upstream reader and the GitHub forge) hand their transport error
//! here, whatever library produced it: [`classify`] walks the error's `source()` chain and
//! looks at what every HTTP stack ends in (`std::io::Error` kinds, rustls errors, resolver
//! messages), so it survives a change of HTTP crates. A run without network used to retry a
//! DNS failure seven times and end after a minute with "client error (Connect)"; now a DNS
//! failure is not retried, later requests to that host fail at once with the same cause
//! ([`known_unresolvable`]), and the command lists every host it could not reach
//! ([`take_unreached`]) before it exits.

use std::collections::BTreeMap;
use std::error::Error as StdError;
use std::fmt;
use std::sync::Mutex;

/// Why a request got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// The host name did not resolve: no network, no DNS server, or no such name.
    Dns { host: String },
    /// Nothing accepted the connection (no server on that port, or a firewall rejects it).
    Refused { host: String },
    /// The TLS handshake failed (an untrusted or expired certificate, a protocol mismatch).
    Tls { host: String, detail: String },
    /// No answer in time, while connecting or reading.
    Timeout { host: String },
    /// The connection was reset or closed before the answer was complete.
    Dropped { host: String },
    /// Anything else the transport reported.
    Other { host: String, detail: String },
}

impl Cause {
    /// The host the request was for.
    pub fn host(&self) -> &str {
        match self {
            Cause::Dns { host }
            | Cause::Refused { host }
            | Cause::Tls { host, .. }
            | Cause::Timeout { host }
            | Cause::Dropped { host }
            | Cause::Other { host, .. } => host,
        }
    }

    /// Whether a retry within seconds can succeed. A name that does not resolve (no
    /// network) and a certificate that is not trusted stay so for longer than any backoff;
    /// a refused connection, a timeout or a dropped connection are what restarts, load and
    /// flaky links produce, and a retry often gets through.
    pub fn heals_in_seconds(&self) -> bool {
        !matches!(self, Cause::Dns { .. } | Cause::Tls { .. })
    }

    /// Whether the failure came before any byte of the request went out (no name, no
    /// connection, no TLS session), so the server certainly did not act on it. A timeout may
    /// be one while reading, after the request was sent, so it is not.
    pub fn before_sending(&self) -> bool {
        matches!(
            self,
            Cause::Dns { .. } | Cause::Refused { .. } | Cause::Tls { .. }
        )
    }

    /// A short name of the kind of failure (`dns`, `refused`, `tls`, `timeout`, `dropped`,
    /// `other`), for logs and JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Cause::Dns { .. } => "dns",
            Cause::Refused { .. } => "refused",
            Cause::Tls { .. } => "tls",
            Cause::Timeout { .. } => "timeout",
            Cause::Dropped { .. } => "dropped",
            Cause::Other { .. } => "other",
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Dns { host } => write!(
                f,
                "the DNS lookup of {host} failed (no network, no DNS server, or no such host)"
            ),
            Cause::Refused { host } => write!(f, "{host} refused the connection"),
            Cause::Tls { host, detail } => write!(f, "TLS with {host} failed: {detail}"),
            Cause::Timeout { host } => write!(f, "{host} did not answer in time"),
            Cause::Dropped { host } => {
                write!(f, "the connection to {host} was closed before the answer")
            }
            Cause::Other { host, detail } => write!(f, "{host}: {detail}"),
        }
    }
}

/// How specific a cause is: the most specific one found in a chain wins.
fn rank(c: &Cause) -> u8 {
    match c {
        Cause::Dns { .. } => 5,
        Cause::Tls { .. } => 4,
        Cause::Refused { .. } => 3,
        Cause::Timeout { .. } => 2,
        Cause::Dropped { .. } => 1,
        Cause::Other { .. } => 0,
    }
}

/// The resolver's words for "this name does not resolve", as glibc, musl, macOS and the
/// HTTP stacks above them print them.
const DNS_WORDS: &[&str] = &[
    "dns error",
    "failed to lookup address",
    "name or service not known",
    "temporary failure in name resolution",
    "no address associated with hostname",
    "nodename nor servname provided",
    "name does not resolve",
    "no such host",
];

/// One link of an error chain.
fn cause_of(e: &(dyn StdError + 'static), host: &str) -> Option<Cause> {
    let host = host.to_string();
    let text = e.to_string().to_ascii_lowercase();
    if DNS_WORDS.iter().any(|w| text.contains(w)) {
        return Some(Cause::Dns { host });
    }
    if let Some(t) = e.downcast_ref::<rustls::Error>() {
        return Some(Cause::Tls {
            host,
            detail: t.to_string(),
        });
    }
    if let Some(io) = e.downcast_ref::<std::io::Error>() {
        use std::io::ErrorKind as K;
        match io.kind() {
            K::ConnectionRefused => return Some(Cause::Refused { host }),
            K::TimedOut => return Some(Cause::Timeout { host }),
            K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => {
                return Some(Cause::Dropped { host });
            }
            _ => {}
        }
    }
    if text.contains("certificate") || text.contains("handshake") {
        return Some(Cause::Tls {
            host,
            detail: e.to_string(),
        });
    }
    if text.contains("connection refused") {
        return Some(Cause::Refused { host });
    }
    if text.contains("timed out") || text.contains("deadline has elapsed") {
        return Some(Cause::Timeout { host });
    }
    if [
        "connection reset",
        "broken pipe",
        "connection closed",
        "unexpected eof",
    ]
    .iter()
    .any(|w| text.contains(w))
    {
        return Some(Cause::Dropped { host });
    }
    None
}

/// The next link of a chain. An `io::Error` wrapping another error (TLS stacks wrap theirs,
/// sometimes twice) answers `source()` with the wrapped error's source, skipping the wrapped
/// error itself: it is the next link here.
fn next<'a>(e: &'a (dyn StdError + 'static)) -> Option<&'a (dyn StdError + 'static)> {
    match e
        .downcast_ref::<std::io::Error>()
        .and_then(|io| io.get_ref())
    {
        Some(inner) => Some(inner as &(dyn StdError + 'static)),
        None => e.source(),
    }
}

/// Classify a transport error (any error type, with its `source()` chain) for a request to
/// `host`: the most specific cause anywhere in the chain, else `Other` with the innermost
/// message (the outer ones of HTTP stacks say only "error sending request").
pub fn classify(err: &(dyn StdError + 'static), host: &str) -> Cause {
    let mut best: Option<Cause> = None;
    let mut innermost = err.to_string();
    let mut cur: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(c) = cause_of(e, host)
            && best.as_ref().is_none_or(|b| rank(&c) > rank(b))
        {
            best = Some(c);
        }
        innermost = e.to_string();
        cur = next(e);
    }
    best.unwrap_or(Cause::Other {
        host: host.to_string(),
        detail: innermost,
    })
}

/// One host the process could not reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreached {
    pub cause: Cause,
    /// The first URL (or request) that failed.
    pub first: String,
    /// How many requests to it failed.
    pub requests: usize,
}

/// Hosts this process could not reach, by host. A fact about the machine's network for the
/// lifetime of the process, reported once by the command line; every client records here.
static UNREACHED: Mutex<BTreeMap<String, Unreached>> = Mutex::new(BTreeMap::new());

fn unreached() -> std::sync::MutexGuard<'static, BTreeMap<String, Unreached>> {
    UNREACHED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Record a request that got no answer (after its retries).
pub fn record(what: &str, cause: &Cause) {
    let mut map = unreached();
    let entry = map
        .entry(cause.host().to_ascii_lowercase())
        .or_insert_with(|| Unreached {
            cause: cause.clone(),
            first: what.to_string(),
            requests: 0,
        });
    entry.requests += 1;
    if rank(cause) > rank(&entry.cause) {
        entry.cause = cause.clone();
    }
}

/// The DNS failure recorded for `host` in this process, if any: a second lookup would fail
/// the same way, so a client fails the request at once instead of waiting for the resolver.
pub fn known_unresolvable(host: &str) -> Option<Cause> {
    unreached()
        .get(&host.to_ascii_lowercase())
        .map(|u| u.cause.clone())
        .filter(|c| matches!(c, Cause::Dns { .. }))
}

/// Every host recorded since the last call, in host order; the record starts empty again.
pub fn take_unreached() -> Vec<Unreached> {
    std::mem::take(&mut *unreached()).into_values().collect()
}

/// The lines the command prints when it could not reach some hosts.
pub fn report(list: &[Unreached]) -> String {
    let mut s = format!(
        "could not reach {} host{}:\n",
        list.len(),
        if list.len() == 1 { "" } else { "s" }
    );
    for u in list {
        let more = match u.requests {
            1 => String::new(),
            n => format!(" ({n} requests)"),
        };
        s.push_str(&format!("  - {}: first {}{more}\n", u.cause, u.first));
    }
    if list.iter().all(|u| matches!(u.cause, Cause::Dns { .. })) {
        s.push_str("  hint: no host name resolved: is this machine offline? The next run, with network, finishes the job\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error with a source, as HTTP stacks nest them.
    #[derive(Debug)]
    struct Wrapped(&'static str, Box<dyn StdError + Send + Sync>);
    impl fmt::Display for Wrapped {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }
    impl StdError for Wrapped {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            Some(self.1.as_ref())
        }
    }

    fn chain(inner: impl StdError + Send + Sync + 'static) -> Wrapped {
        Wrapped(
            "error sending request",
            Box::new(Wrapped("client error (Connect)", Box::new(inner))),
        )
    }

    fn io(kind: std::io::ErrorKind, msg: &str) -> std::io::Error {
        std::io::Error::new(kind, msg.to_string())
    }

    #[test]
    fn each_transport_failure_is_named_by_what_failed() {
        use std::io::ErrorKind as K;
        let h = "api.github.com";
        let dns = chain(io(
            K::Other,
            "failed to lookup address information: Name or service not known",
        ));
        assert_eq!(classify(&dns, h), Cause::Dns { host: h.into() });
        assert_eq!(
            classify(&dns, h).to_string(),
            "the DNS lookup of api.github.com failed (no network, no DNS server, or no such host)"
        );
        let refused = chain(io(
            K::ConnectionRefused,
            "Connection refused (os error 111)",
        ));
        assert_eq!(classify(&refused, h), Cause::Refused { host: h.into() });
        let timeout = chain(io(K::TimedOut, "connection timed out"));
        assert_eq!(classify(&timeout, h), Cause::Timeout { host: h.into() });
        let reset = chain(io(K::ConnectionReset, "Connection reset by peer"));
        assert_eq!(classify(&reset, h), Cause::Dropped { host: h.into() });
        // As TLS stacks hand it up: inside an `io::Error`, inside another.
        let tls = chain(std::io::Error::other(std::io::Error::new(
            K::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        )));
        assert!(
            matches!(classify(&tls, h), Cause::Tls { ref detail, .. } if detail.contains("UnknownIssuer")),
            "{:?}",
            classify(&tls, h)
        );
        let other = chain(io(K::Other, "something odd"));
        assert_eq!(
            classify(&other, h),
            Cause::Other {
                host: h.into(),
                detail: "something odd".into()
            },
            "the innermost message, not `error sending request`"
        );
    }

    #[test]
    fn only_what_heals_in_seconds_is_worth_a_retry() {
        let h = || "x".to_string();
        assert!(!Cause::Dns { host: h() }.heals_in_seconds());
        assert!(
            !Cause::Tls {
                host: h(),
                detail: String::new()
            }
            .heals_in_seconds()
        );
        for c in [
            Cause::Refused { host: h() },
            Cause::Timeout { host: h() },
            Cause::Dropped { host: h() },
        ] {
            assert!(c.heals_in_seconds(), "{c}");
        }
    }

    #[test]
    fn unreached_hosts_are_listed_once_each_and_dns_failures_are_remembered() {
        // Names under `.invalid` never resolve (RFC 6761) and no other test records them.
        let a = Cause::Dns {
            host: "a.unreached-test.invalid".into(),
        };
        assert_eq!(known_unresolvable("A.unreached-test.invalid"), None);
        record("GET https://a.unreached-test.invalid/1", &a);
        record("GET https://a.unreached-test.invalid/2", &a);
        assert_eq!(
            known_unresolvable("A.unreached-test.invalid"),
            Some(a.clone())
        );
        let list: Vec<Unreached> = take_unreached()
            .into_iter()
            .filter(|u| u.cause.host().ends_with("unreached-test.invalid"))
            .collect();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].requests, 2);
        assert_eq!(list[0].first, "GET https://a.unreached-test.invalid/1");
        let text = report(&list);
        assert!(text.starts_with("could not reach 1 host:\n"), "{text}");
        assert!(text.contains("the DNS lookup of a.unreached-test.invalid failed"));
        assert!(text.contains("(2 requests)") && text.contains("is this machine offline?"));
    }
}
