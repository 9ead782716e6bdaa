//! A counting HTTP proxy on loopback, in front of a test server (the real OCI registry of
//! [`super::registry`]): every request it forwards is noted (method, path, status), so a test
//! can say what a run read and how often, which the registry itself does not tell.
//!
//! One request per connection: the proxy forwards the request with `Connection: close`, relays
//! the whole answer and closes, so it never has to find where one answer ends and the next
//! request starts (the registry, asked to close, says `Connection: close` and the client opens a
//! new connection for the next request). The `Host` header is forwarded as the client sent it,
//! so the URLs the registry answers with (an upload's `Location`) point at the proxy again.
//!
//! It can also fail a request on purpose ([`CountingProxy::fail_once`]): answer a status
//! itself, or drop the connection before or after the server got the request, so a test can
//! show what the client's retry policy does with it.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// One forwarded request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub method: String,
    /// The request target as sent (`/v2/kaas/cluster-stacks/tags/list?n=100`).
    pub target: String,
    /// The request target without its query (`/v2/kaas/cluster-stacks/manifests/<tag>`).
    pub path: String,
    /// The answer's status code (0: no answer).
    pub status: u16,
}

/// How the proxy fails one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Answer this status itself (an empty body); the server never sees the request.
    Status(u16),
    /// Close the connection without an answer; the server never sees the request.
    Drop,
    /// Forward the request, then close the connection without relaying the answer: the
    /// server acted, the client cannot know.
    DropAnswer,
}

/// A fault waiting for its request: the first whose method is `method` and whose path
/// contains `path_part`.
#[derive(Debug, Clone)]
struct Pending {
    method: String,
    path_part: String,
    fault: Fault,
}

/// A running proxy; it stops with the test process.
pub struct CountingProxy {
    /// `127.0.0.1:<port>`: what the client is pointed at instead of the server.
    pub addr: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    faults: Arc<Mutex<Vec<Pending>>>,
}

impl CountingProxy {
    /// Forward to `upstream` (`host:port`).
    pub fn start(upstream: &str) -> CountingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().unwrap().to_string();
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let faults: Arc<Mutex<Vec<Pending>>> = Arc::default();
        let (up, log, pending) = (upstream.to_string(), seen.clone(), faults.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let (up, log, pending) = (up.clone(), log.clone(), pending.clone());
                std::thread::spawn(move || {
                    let _ = forward(conn, &up, &pending, &log);
                });
            }
        });
        CountingProxy { addr, seen, faults }
    }

    /// Fail the next `method` request whose path contains `path_part` with `fault` (once;
    /// faults queued for the same request apply in the order given).
    pub fn fail_once(&self, method: &str, path_part: &str, fault: Fault) {
        self.faults.lock().unwrap().push(Pending {
            method: method.to_string(),
            path_part: path_part.to_string(),
            fault,
        });
    }

    /// The requests forwarded since the last call, in order (and forget them).
    pub fn take(&self) -> Vec<Seen> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

/// Relay one request and its answer, logging it in `log` before the client gets any answer
/// (so a test that read its answer finds it logged); `None` when the client sent none.
fn forward(
    client: TcpStream,
    upstream: &str,
    faults: &Mutex<Vec<Pending>>,
    log: &Mutex<Vec<Seen>>,
) -> Option<()> {
    let mut from_client = BufReader::new(client.try_clone().ok()?);
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        if from_client.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" || line == "\n" {
            break;
        }
        head.push(line);
    }
    let request_line = head.first()?.trim_end().to_string();
    let mut parts = request_line.split(' ');
    let method = parts.next()?.to_string();
    let target = parts.next()?;
    let path = target.split('?').next().unwrap_or(target).to_string();
    let mut out = format!("{request_line}\r\n");
    let (mut length, mut chunked) = (0usize, false);
    for line in &head[1..] {
        let (name, value) = line.split_once(':').unwrap_or((line, ""));
        match name.trim().to_ascii_lowercase().as_str() {
            "connection" | "keep-alive" => continue,
            "content-length" => length = value.trim().parse().unwrap_or(0),
            "transfer-encoding" => chunked = value.to_ascii_lowercase().contains("chunked"),
            _ => {}
        }
        out.push_str(line);
    }
    out.push_str("Connection: close\r\n\r\n");
    let body = read_body(&mut from_client, length, chunked)?;
    let fault = {
        let mut faults = faults.lock().unwrap();
        let due = faults
            .iter()
            .position(|f| f.method == method && path.contains(&f.path_part));
        due.map(|i| faults.remove(i).fault)
    };
    let record = |status| {
        log.lock().unwrap().push(Seen {
            method: method.clone(),
            target: target.to_string(),
            path: path.clone(),
            status,
        })
    };
    let mut client = client;
    match fault {
        Some(Fault::Status(code)) => {
            let answer = format!(
                "HTTP/1.1 {code} Injected\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            record(code);
            let _ = client.write_all(answer.as_bytes());
            let _ = client.shutdown(Shutdown::Both);
            return Some(());
        }
        Some(Fault::Drop) => {
            record(0);
            let _ = client.shutdown(Shutdown::Both);
            return Some(());
        }
        Some(Fault::DropAnswer) | None => {}
    }
    let mut answer = Vec::new();
    let relayed = TcpStream::connect(upstream).and_then(|mut server| {
        server.write_all(out.as_bytes())?;
        server.write_all(&body)?;
        server.read_to_end(&mut answer)
    });
    let status = std::str::from_utf8(&answer[..answer.len().min(16)])
        .ok()
        .and_then(|h| h.split(' ').nth(1)?.parse().ok())
        .unwrap_or(0);
    // The client must not reuse the connection the proxy closes.
    let head_end = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(answer.len());
    let says_close = String::from_utf8_lossy(&answer[..head_end])
        .to_ascii_lowercase()
        .contains("\r\nconnection:");
    if !says_close && let Some(eol) = answer.windows(2).position(|w| w == b"\r\n") {
        answer.splice(eol + 2..eol + 2, b"Connection: close\r\n".iter().copied());
    }
    record(if fault.is_some() { 0 } else { status });
    if relayed.is_ok() && fault.is_none() {
        let _ = client.write_all(&answer);
    }
    let _ = client.shutdown(Shutdown::Both);
    Some(())
}

/// A request's body as sent: `length` bytes, or every chunk up to the last and its (empty)
/// trailer.
fn read_body(
    from_client: &mut BufReader<TcpStream>,
    length: usize,
    chunked: bool,
) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    if chunked {
        // Relayed as sent, up to the last chunk and its (empty) trailer.
        loop {
            let mut size = String::new();
            from_client.read_line(&mut size).ok()?;
            body.extend_from_slice(size.as_bytes());
            let n = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            if n == 0 {
                let mut end = String::new();
                from_client.read_line(&mut end).ok()?;
                body.extend_from_slice(end.as_bytes());
                break;
            }
            let mut chunk = vec![0; n + 2];
            from_client.read_exact(&mut chunk).ok()?;
            body.extend_from_slice(&chunk);
        }
    } else {
        body.resize(length, 0);
        from_client.read_exact(&mut body).ok()?;
    }
    Some(body)
}
