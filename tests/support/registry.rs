//! A real OCI registry for tests: Debian's `docker-registry` (the CNCF distribution
//! registry), started on a free loopback port with its storage in a temp dir, optionally
//! behind htpasswd basic auth, and killed when dropped.
//!
//! `.ci/run` installs the package. A missing binary fails the test with instructions: a test
//! that needs the registry never passes without it (it used to return early, green, when
//! `STACKBOT_SKIP_REGISTRY=1` was set). To leave the registry tests out of a local run, filter
//! them by name (`cargo test -- --skip oci`), which the summary shows as filtered, not passed.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running registry.
pub struct TestRegistry {
    child: Child,
    /// `127.0.0.1:<port>`: the registry host for `OciTarget`.
    pub addr: String,
    dir: tempfile::TempDir,
}

fn binary() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("STACKBOT_REGISTRY_BIN") {
        return Some(PathBuf::from(p)).filter(|p| p.exists());
    }
    let default = PathBuf::from("/usr/bin/docker-registry");
    if default.exists() {
        return Some(default);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("docker-registry"))
            .find(|p| p.exists())
    })
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind a loopback port")
        .port()
}

/// Whether the socket listening on loopback `port` is `child`'s (another test's registry may
/// answer on a port both were handed). Read from `/proc` (the listening socket's inode among
/// the child's file descriptors); where `/proc` cannot say, the child still running 200 ms
/// after the answer (it would have exited with "address already in use").
fn listens_on(child: &mut Child, port: u16) -> bool {
    let listening = std::fs::read_to_string("/proc/net/tcp")
        .ok()
        .and_then(|tcp| {
            // sl local_address rem_address st ... inode: `0100007F:<port hex>`, state 0A = LISTEN.
            tcp.lines().skip(1).find_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let local_port = u16::from_str_radix(f.get(1)?.split_once(':')?.1, 16).ok()?;
                (local_port == port && f.get(3) == Some(&"0A"))
                    .then(|| f.get(9).map(|i| i.to_string()))?
            })
        });
    let fds = std::fs::read_dir(format!("/proc/{}/fd", child.id()));
    if let (Some(inode), Ok(fds)) = (listening, fds) {
        let socket = format!("socket:[{inode}]");
        return fds.flatten().any(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == socket.as_str())
        });
    }
    std::thread::sleep(Duration::from_millis(200));
    matches!(child.try_wait(), Ok(None))
}

/// Status code of `GET /v2/`, or `None` while the registry is not answering.
fn probe(addr: &str) -> Option<u16> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(
        s,
        "GET /v2/ HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut buf = [0u8; 32];
    let n = s.read(&mut buf).ok()?;
    let head = String::from_utf8_lossy(&buf[..n]);
    head.split_whitespace().nth(1)?.parse().ok()
}

fn htpasswd_line(user: &str, password: &str) -> String {
    let out = Command::new("htpasswd")
        .args(["-Bbn", user, password])
        .output()
        .expect(
            "`htpasswd` not found: run the OCI registry install step of .ci/run \
(apt-get install -y docker-registry apache2-utils)",
        );
    assert!(out.status.success(), "htpasswd failed");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

impl TestRegistry {
    /// A registry without auth (anonymous push and pull).
    pub fn start() -> Self {
        Self::launch(None)
    }

    /// A registry that requires HTTP basic auth for everything.
    pub fn start_with_basic_auth(user: &str, password: &str) -> Self {
        Self::launch(Some((user, password)))
    }

    /// Another registry (another address) holding a copy of what this one holds now: a world
    /// copied with its registry, to run on from one state more than once. Copy only while no
    /// request is under way.
    pub fn fork(&self) -> Self {
        Self::launch_from(None, Some(&self.storage()))
    }

    fn launch(auth: Option<(&str, &str)>) -> Self {
        Self::launch_from(auth, None)
    }

    fn launch_from(auth: Option<(&str, &str)>, seed: Option<&Path>) -> Self {
        let bin = binary().unwrap_or_else(|| {
            panic!(
                "docker-registry not found ($STACKBOT_REGISTRY_BIN, /usr/bin/docker-registry, PATH): \
run the OCI registry install step of .ci/run (apt-get install -y docker-registry apache2-utils)"
            )
        });
        // The port is free when probed but could be taken before the registry binds it:
        // retry a few times rather than flake.
        let mut last_err = String::new();
        for _ in 0..5 {
            let dir = tempfile::tempdir().expect("temp dir");
            if let Some(seed) = seed.filter(|s| s.exists()) {
                super::copy_dir(seed, &dir.path().join("data"));
            }
            let port = free_port();
            let addr = format!("127.0.0.1:{port}");
            let config = write_config(dir.path(), &addr, auth);
            // Its log goes to a file: a pipe nobody reads fills up after some hundred
            // requests and then blocks every request that logs (long simulations hang).
            let log_path = dir.path().join("registry.log");
            let log = std::fs::File::create(&log_path).expect("registry log");
            // Garbage collection only once the heap reaches 64 MiB (Go 1.19's GOMEMLIMIT, as
            // Debian's build has): by default the registry collects every few MiB it allocates,
            // and `BENCHMARKS.md` measured the OCI tests at a quarter less CPU this way.
            let mut child = Command::new(&bin)
                .env("GOGC", "off")
                .env("GOMEMLIMIT", "64MiB")
                .arg("serve")
                .arg(&config)
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
            let deadline = Instant::now() + Duration::from_secs(15);
            loop {
                if let Some(code) = probe(&addr) {
                    // Parallel tests can be handed the same free port: then the answer comes
                    // from another test's registry and ours exits ("address already in use").
                    // Only a matching answer from the socket our child listens on is ours.
                    let expected = if auth.is_some() { 401 } else { 200 };
                    if code == expected && listens_on(&mut child, port) {
                        return TestRegistry { child, addr, dir };
                    }
                    let _ = child.kill();
                    let _ = child.wait();
                    last_err = format!("{addr} answered /v2/ with {code} from another server");
                    break;
                }
                if let Ok(Some(status)) = child.try_wait() {
                    let err = std::fs::read_to_string(&log_path).unwrap_or_default();
                    last_err = format!("registry exited with {status}: {err}");
                    break;
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    last_err = "registry did not answer /v2/ within 15 s".into();
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        panic!("could not start the test registry: {last_err}");
    }

    /// stackbot's own registry client on this registry's `kaas/cluster-stacks` repository
    /// (plain HTTP, anonymous), to read back what a test published.
    pub fn client(&self) -> stackbot::oci::Registry {
        use stackbot::oci::{Credentials, OciTarget, Registry};
        let repository = format!("{}/kaas/cluster-stacks", self.addr);
        let target = OciTarget::new(&self.addr, &repository, true, Credentials::Anonymous);
        Registry::connect(target.unwrap()).unwrap()
    }

    /// Where the registry stores blobs and manifests (to inspect or corrupt).
    pub fn storage(&self) -> PathBuf {
        self.dir.path().join("data")
    }
}

fn write_config(dir: &Path, addr: &str, auth: Option<(&str, &str)>) -> PathBuf {
    let mut config = format!(
        "version: 0.1\n\
log:\n  level: error\n  accesslog:\n    disabled: true\n\
storage:\n  filesystem:\n    rootdirectory: {data}\n  delete:\n    enabled: true\n\
http:\n  addr: {addr}\n  secret: stackbot-test-registry\n",
        data = dir.join("data").display()
    );
    if let Some((user, password)) = auth {
        let file = dir.join("htpasswd");
        std::fs::write(&file, format!("{}\n", htpasswd_line(user, password))).unwrap();
        config.push_str(&format!(
            "auth:\n  htpasswd:\n    realm: stackbot-test\n    path: {}\n",
            file.display()
        ));
    }
    let path = dir.join("config.yml");
    std::fs::write(&path, config).unwrap();
    path
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
