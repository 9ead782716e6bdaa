//! Low-level facts about URLs that several clients must agree on: which hosts are loopback,
//! when two URLs share an origin, and where a `Link` header's `rel="next"` points.
//!
//! These rules decide where a token may be sent (same origin only), where plain `http://` is
//! tolerated (loopback only) and which page comes next. Each is written once, here, so the
//! GitHub forge, the upstream client and the OCI target cannot drift apart: comparing origins
//! as text once sent GitHub Enterprise uploads to the wrong host because `https://ghe:443` and
//! `https://GHE` were "different".

use std::fmt;
use std::net::IpAddr;

pub mod failure;

/// `Accept` value of the GitHub REST API.
pub const GITHUB_JSON: &str = "application/vnd.github+json";
/// The REST API version every request to GitHub pins (`X-GitHub-Api-Version`).
pub const GITHUB_API_VERSION: &str = "2022-11-28";

/// Whether a host name or address is this machine: `localhost`, 127.0.0.0/8 or `::1`
/// (IPv6 literals with or without brackets).
pub fn is_loopback_host(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    let h = h.strip_suffix('.').unwrap_or(h);
    h.eq_ignore_ascii_case("localhost") || h.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether a request to `scheme://host` may go out: `https` anywhere, plain `http` only to a
/// loopback host (a token or a checksum could otherwise be read or changed on the way).
pub fn scheme_allowed(scheme: &str, host: &str) -> bool {
    if scheme.eq_ignore_ascii_case("https") {
        true
    } else if scheme.eq_ignore_ascii_case("http") {
        is_loopback_host(host)
    } else {
        false
    }
}

/// The origin of a URL (RFC 6454): scheme, host and port, normalised so that different
/// spellings of the same server compare equal: scheme and host are case-insensitive, a
/// trailing dot on the host is dropped, and a missing port is the scheme's default
/// (`https://ghe.example` == `https://GHE.example:443`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    /// The origin of an absolute URL; `None` for relative references, URLs without a host, or
    /// schemes without a known default port and no explicit one.
    pub fn of(uri: &http::Uri) -> Option<Origin> {
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let host = uri.host()?.to_ascii_lowercase();
        let host = host.strip_suffix('.').unwrap_or(&host).to_string();
        if host.is_empty() {
            return None;
        }
        let port = match uri.port_u16() {
            Some(p) => p,
            None => default_port(&scheme)?,
        };
        Some(Origin { scheme, host, port })
    }

    /// Parse an absolute URL and take its origin.
    pub fn parse(url: &str) -> Option<Origin> {
        Origin::of(&url.trim().parse().ok()?)
    }

    /// `http`, `https`, ...
    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    /// The host, lower-case (IPv6 literals keep their brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port, explicit or the scheme's default.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether the host is this machine.
    pub fn is_loopback(&self) -> bool {
        is_loopback_host(&self.host)
    }
}

impl fmt::Display for Origin {
    /// `scheme://host`, with `:port` only when it is not the scheme's default.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme, self.host)?;
        if default_port(&self.scheme) != Some(self.port) {
            write!(f, ":{}", self.port)?;
        }
        Ok(())
    }
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

/// One link of a `Link` header (RFC 8288): its target and its relation types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub target: String,
    pub rels: Vec<String>,
}

/// Every link of a `Link` header value (several header lines may be joined with `,`).
/// Malformed parts are skipped rather than guessed at.
pub fn parse_links(header: &str) -> Vec<Link> {
    let mut out = Vec::new();
    let mut rest = header;
    loop {
        rest = rest.trim_start_matches(|c: char| c == ',' || c.is_whitespace());
        let Some(after_lt) = rest.strip_prefix('<') else {
            // Not a link: skip to the next comma outside quotes, if any.
            match split_outside_quotes(rest, ',') {
                Some((_, tail)) => {
                    rest = tail;
                    continue;
                }
                None => return out,
            }
        };
        let Some(end) = after_lt.find('>') else {
            return out;
        };
        let target = after_lt[..end].trim().to_string();
        let after = &after_lt[end + 1..];
        let (params, tail) = split_outside_quotes(after, ',').unwrap_or((after, ""));
        let mut rels = Vec::new();
        for p in params.split(';') {
            let Some((k, v)) = p.split_once('=') else {
                continue;
            };
            if k.trim().eq_ignore_ascii_case("rel") {
                rels.extend(
                    v.trim()
                        .trim_matches('"')
                        .split_whitespace()
                        .map(str::to_ascii_lowercase),
                );
            }
        }
        out.push(Link { target, rels });
        rest = tail;
    }
}

/// A header's value as text; `None` when it is absent or not visible ASCII.
pub fn header(headers: &http::HeaderMap, name: impl http::header::AsHeaderName) -> Option<&str> {
    headers.get(name)?.to_str().ok()
}

/// All `Link` header lines of an answer, joined as one value (what [`parse_links`] reads).
pub fn link_header(headers: &http::HeaderMap) -> Option<String> {
    let all: Vec<&str> = headers
        .get_all(http::header::LINK)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    (!all.is_empty()).then(|| all.join(", "))
}

/// The `rel="next"` target of a `Link` header value, if any.
pub fn next_link(header: &str) -> Option<String> {
    parse_links(header)
        .into_iter()
        .find(|l| l.rels.iter().any(|r| r == "next"))
        .map(|l| l.target)
}

/// Split at the first `sep` that is not inside double quotes.
fn split_outside_quotes(s: &str, sep: char) -> Option<(&str, &str)> {
    let mut quoted = false;
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c == sep && !quoted => return Some((&s[..i], &s[i + c.len_utf8()..])),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_localhost_127_slash_8_and_ipv6_one() {
        for h in [
            "localhost",
            "LOCALHOST",
            "127.0.0.1",
            "127.8.9.10",
            "[::1]",
            "::1",
        ] {
            assert!(is_loopback_host(h), "{h}");
        }
        for h in [
            "128.0.0.1",
            "example.com",
            "localhost.example.com",
            "[::2]",
            "",
        ] {
            assert!(!is_loopback_host(h), "{h}");
        }
        assert!(scheme_allowed("https", "example.com"));
        assert!(scheme_allowed("HTTP", "127.0.0.1"));
        assert!(!scheme_allowed("http", "example.com"));
        assert!(!scheme_allowed("ftp", "127.0.0.1"));
    }

    #[test]
    fn origins_ignore_case_default_ports_and_paths() {
        let o = |s: &str| Origin::parse(s).unwrap();
        assert_eq!(o("https://GHE.example:443"), o("https://ghe.example"));
        assert_eq!(
            o("HTTPS://ghe.example./api/v3?x=1"),
            o("https://ghe.example/api/uploads")
        );
        assert_eq!(o("http://127.0.0.1:80/x"), o("http://127.0.0.1"));
        assert_ne!(o("https://ghe.example:8443"), o("https://ghe.example"));
        assert_ne!(o("http://ghe.example"), o("https://ghe.example"));
        assert_ne!(o("https://uploads.github.com"), o("https://api.github.com"));
        assert_eq!(
            o("https://GHE.example:443/").to_string(),
            "https://ghe.example"
        );
        assert_eq!(o("http://[::1]:8080").to_string(), "http://[::1]:8080");
        assert!(o("http://[::1]:8080").is_loopback());
        assert_eq!(Origin::parse("/relative/path"), None);
        assert_eq!(Origin::parse("not a url"), None);
    }

    #[test]
    fn link_header_next_is_found_among_others_in_any_spelling() {
        let h = "<https://api.github.com/repos/o/r/releases?page=1>; rel=\"prev\", \
                 <https://api.github.com/repos/o/r/releases?page=3>; rel=\"next\"";
        assert_eq!(
            next_link(h).as_deref(),
            Some("https://api.github.com/repos/o/r/releases?page=3")
        );
        assert_eq!(next_link("<x>; rel=\"last\""), None);
        assert_eq!(
            next_link("<a?page=2>; rel=next").as_deref(),
            Some("a?page=2")
        );
        assert_eq!(
            next_link("<a?q=x,y&page=2>; REL = \"next last\"").as_deref(),
            Some("a?q=x,y&page=2")
        );
        assert_eq!(
            next_link("garbage, <b?page=2>; title=\"a, b\"; rel=\"next\"").as_deref(),
            Some("b?page=2")
        );
        assert_eq!(next_link(""), None);
        assert_eq!(next_link("<unterminated; rel=\"next\""), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// A `Link` header is an untrusted answer: parsing it returns, never panics (it was
        /// part of upstream's `parsers_never_panic` before the parsers and the client moved
        /// into separate crates).
        #[test]
        fn link_parsing_never_panics(header in ".{0,300}") {
            let _ = next_link(&header);
            let _ = parse_links(&header);
        }
    }
}
