//! Network failures said plainly (issue 34, item 6): an unreachable source is reported by
//! what failed (the DNS lookup of a host, a refused connection, TLS, a timeout), a failure
//! that cannot heal in seconds is not retried, and a run without network ends at once and
//! lists every host it could not reach. Names under `.invalid` never resolve (RFC 6761), on
//! any machine, with or without network; the other failures are real sockets on 127.0.0.1.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use stackbot::upstream::http::{HttpClient, HttpOptions};

use crate::support::root;

fn client(attempts: u32, timeout: Duration) -> HttpClient {
    HttpClient::new(HttpOptions {
        attempts,
        backoff: Duration::from_millis(1),
        timeout,
        ..HttpOptions::default()
    })
    .unwrap()
}

#[test]
fn a_name_that_does_not_resolve_is_said_so_and_not_retried() {
    let c = client(5, Duration::from_secs(10));
    let err = c
        .get("https://charts.lookup-test.invalid/index.yaml", None)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("the DNS lookup of charts.lookup-test.invalid failed"),
        "{err}"
    );
    assert_eq!(c.stats().requests, 1, "a DNS failure is not retried");
    // The next request to that host does not wait for the resolver again.
    let again = c
        .get("https://charts.lookup-test.invalid/other.yaml", None)
        .unwrap_err();
    assert!(again.to_string().contains("DNS lookup"), "{again}");
    assert_eq!(c.stats().requests, 1, "answered from what the run knows");
}

#[test]
fn a_refused_connection_is_named_and_retried() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let c = client(3, Duration::from_secs(10));
    let err = c
        .get(&format!("http://127.0.0.1:{port}/index.yaml"), None)
        .unwrap_err();
    assert!(
        err.to_string().contains("127.0.0.1 refused the connection"),
        "{err}"
    );
    assert_eq!(
        c.stats().requests,
        3,
        "a refused connection may heal: retried"
    );
}

/// A server on loopback that accepts and then does `then` with each connection.
fn server(then: fn(std::net::TcpStream)) -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            std::thread::spawn(move || then(s));
        }
    });
    port
}

#[test]
fn a_server_that_never_answers_is_a_timeout() {
    let port = server(|s| {
        std::thread::sleep(Duration::from_secs(5));
        drop(s);
    });
    let c = client(1, Duration::from_millis(300));
    let err = c
        .get(&format!("http://127.0.0.1:{port}/slow"), None)
        .unwrap_err();
    assert!(
        err.to_string().contains("127.0.0.1 did not answer in time"),
        "{err}"
    );
}

#[test]
fn a_tls_handshake_with_a_plain_server_is_a_tls_failure_and_not_retried() {
    let port = server(|mut s| {
        let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        std::thread::sleep(Duration::from_millis(200));
    });
    let c = client(4, Duration::from_secs(10));
    let err = c
        .get(&format!("https://127.0.0.1:{port}/index.yaml"), None)
        .unwrap_err();
    assert!(
        err.to_string().contains("TLS with 127.0.0.1 failed"),
        "{err}"
    );
    assert_eq!(c.stats().requests, 1, "TLS does not heal in seconds");
}

/// The demo configuration with every host moved under `.invalid`, publishing to GitHub.
fn offline_config(dir: &Path) -> PathBuf {
    let ex = root().join("examples/local");
    let demo = std::fs::read_to_string(ex.join("stackbot.yaml")).unwrap();
    let start = demo.find("\nstacks:").unwrap();
    let end = demo.find("\n# The local forge").unwrap();
    let stacks = demo[start..end].replace(
        "../../templates",
        &root().join("templates").display().to_string(),
    );
    let hosts = regex::Regex::new(r"https://([A-Za-z0-9.-]+)").unwrap();
    let stacks = hosts.replace_all(&stacks, "https://$1.offline-test.invalid");
    let text = format!(
        "upstream:\n  github_api: https://api.offline-test.invalid\n  \
         markers_url: https://dl.offline-test.invalid/release\n  \
         schedule_url: https://raw.offline-test.invalid/schedule.yaml\n  \
         cve_feed_url: https://feed.offline-test.invalid/index.json\n  \
         cve_record_url: https://cve.offline-test.invalid/{{id}}\n\
         {stacks}\nforge:\n  kind: github\n  repository: scs/cluster-stacks\n  \
         github:\n    api_url: https://forge.offline-test.invalid\n"
    );
    let p = dir.join("stackbot.yaml");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn a_run_without_network_makes_no_retry_and_lists_every_host_it_could_not_reach() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = offline_config(dir.path());
    let out = Command::new(env!("CARGO_BIN_EXE_stackbot"))
        .args(["-v", "-c"])
        .arg(&cfg)
        .args(["--now", "2026-05-01", "plan"])
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_TOKEN")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "transient: {err}");
    assert!(
        err.contains(
            "the DNS lookup of forge.offline-test.invalid failed (no network, no DNS server, or no such host)"
        ),
        "the forge failure says what failed: {err}"
    );
    assert!(!err.contains("retrying"), "nothing was retried: {err}");
    let listed = err
        .split("could not reach ")
        .nth(1)
        .unwrap_or_else(|| panic!("no list of unreachable hosts: {err}"));
    for host in [
        "forge.offline-test.invalid",
        "api.offline-test.invalid",
        "raw.offline-test.invalid",
    ] {
        assert!(
            listed.contains(&format!("the DNS lookup of {host} failed")),
            "{host}: {err}"
        );
    }
    assert!(listed.contains("is this machine offline?"), "{err}");
}

#[test]
fn a_forge_that_refuses_every_connection_is_listed_among_the_hosts_not_reached() {
    // A refused connection may heal, so the GitHub client retries it; when the retries are
    // spent the host is as unreachable as one that does not resolve, and the list says so.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let cfg = offline_config(dir.path());
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        "api_url: https://forge.offline-test.invalid\n",
        &format!("api_url: http://127.0.0.1:{port}\n    max_retries: 2\n"),
    );
    std::fs::write(&cfg, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_stackbot"))
        .args(["-c"])
        .arg(&cfg)
        .args(["--now", "2026-05-01", "plan"])
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_TOKEN")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "transient: {err}");
    let listed = err
        .split("could not reach ")
        .nth(1)
        .unwrap_or_else(|| panic!("no list of unreachable hosts: {err}"));
    assert!(
        listed.contains("127.0.0.1 refused the connection"),
        "the refused forge is listed: {err}"
    );
}
