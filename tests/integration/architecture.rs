//! The structure the docs describe is the structure the code has.
//!
//! The layering is the crate graph: `stackbot-core` cannot call the forge, the network or the
//! registry because it does not depend on the crates that hold them, and the compiler keeps it
//! so. What the crate graph does not keep is checked here: the graph in `docs/architecture.md`
//! is generated from the workspace's manifests (so it cannot go stale), core's dependency tree
//! holds no I/O crate, the binary's own modules call the forge only through observe, apply and
//! the dashboard writer, nothing below the CLI reads the environment or the clock where clippy
//! does not forbid it, no function is longer than the limit, and every doc a comment names
//! exists.
//!
//! Regenerate the graph with `STACKBOT_BLESS=1 cargo test --test integration architecture::`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::root;

/// The cargo that builds this test (it runs the checks on the manifests and the lock file).
fn cargo() -> Command {
    let mut c = Command::new(option_env!("CARGO").unwrap_or("cargo"));
    c.current_dir(root());
    c
}

/// The source directories of every package of the workspace: the binary's `src/` and each
/// crate's `crates/<name>/src/`.
fn source_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![root().join("src")];
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    dirs.extend(crates);
    dirs
}

/// Every `.rs` file of every package, with its path relative to the repository root.
fn workspace_sources() -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    for d in source_dirs() {
        rust_files(&d, &mut files);
    }
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let rel = f
                .strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, f)
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Source without comments (doc links are not dependencies) and without string contents.
/// A quote as a character literal (`'"'`, `'\"'`) is blanked: it opens no string.
fn code_only(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let b = src.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\'' && b.get(i + 1) == Some(&b'"') && b.get(i + 2) == Some(&b'\'') {
            out.push_str("' '");
            i += 3;
        } else if b[i] == b'\''
            && b.get(i + 1) == Some(&b'\\')
            && b.get(i + 2) == Some(&b'"')
            && b.get(i + 3) == Some(&b'\'')
        {
            out.push_str("' '");
            i += 4;
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'"' {
            out.push('"');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            out.push('"');
            i += 1;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// The I/O crates: what core must not depend on, and what the crate graph names beside each
/// crate that uses one directly.
const IO_CRATES: &[&str] = &[
    "git2",
    "tokio",
    "reqwest",
    "octocrab",
    "oci-client",
    "hyper",
    "hyper-util",
    "h2",
    "ureq",
    "curl",
    "isahc",
];

/// The workspace's manifests as `cargo metadata --no-deps` reads them.
fn metadata() -> serde_json::Value {
    let out = cargo()
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `cargo test --locked` and `cargo clippy --all-targets` at the root (the README's and
/// .ci/run's commands) check every crate only because every member is a default member.
#[test]
fn cargo_at_the_root_covers_every_crate() {
    let meta = metadata();
    let ids = |key: &str| -> BTreeSet<String> {
        meta[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    let (members, default) = (ids("workspace_members"), ids("workspace_default_members"));
    assert!(members.len() >= 5, "workspace members: {members:?}");
    let left_out: Vec<&String> = members.difference(&default).collect();
    assert!(
        left_out.is_empty(),
        "Cargo.toml `default-members` leaves out {left_out:?}: `cargo test --locked` at the root would not test them"
    );
}

/// `package → (workspace packages it depends on, I/O crates it depends on directly)`, normal
/// dependencies only (what ships), from `cargo metadata`.
fn crate_graph() -> BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> {
    let meta = metadata();
    let packages = meta["packages"].as_array().unwrap();
    let members: BTreeSet<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    let mut graph = BTreeMap::new();
    for p in packages {
        let (mut uses, mut io) = (BTreeSet::new(), BTreeSet::new());
        for d in p["dependencies"].as_array().unwrap() {
            let name = d["name"].as_str().unwrap();
            if !d["kind"].is_null() {
                continue;
            }
            if members.contains(name) {
                uses.insert(name.to_string());
            } else if IO_CRATES.contains(&name) {
                io.insert(name.to_string());
            }
        }
        graph.insert(p["name"].as_str().unwrap().to_string(), (uses, io));
    }
    graph
}

/// The Mermaid graph of the crates; arrows point from a crate to what it uses.
fn mermaid(graph: &BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>) -> String {
    let id = |name: &str| name.replace('-', "_");
    let mut s = String::from("```mermaid\nflowchart BT\n");
    for (name, (_, io)) in graph {
        let label = if io.is_empty() {
            name.clone()
        } else {
            let io: Vec<&str> = io.iter().map(String::as_str).collect();
            format!("{name}<br/><small>{}</small>", io.join(", "))
        };
        s.push_str(&format!("  {}[\"{label}\"]\n", id(name)));
    }
    for (name, (uses, _)) in graph {
        for d in uses {
            s.push_str(&format!("  {} --> {}\n", id(name), id(d)));
        }
    }
    s.push_str("```\n");
    s
}

#[test]
fn the_architecture_doc_draws_the_current_crate_graph() {
    let path = root().join("docs/architecture.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (start, end) = ("<!-- crate-graph:start -->\n", "<!-- crate-graph:end -->");
    let (Some(a), Some(b)) = (doc.find(start), doc.find(end)) else {
        panic!("docs/architecture.md lacks the {start:?} … {end:?} markers");
    };
    let graph = crate_graph();
    assert!(
        graph.contains_key("stackbot") && graph.contains_key("stackbot-core"),
        "cargo metadata did not list the workspace: {:?}",
        graph.keys()
    );
    let generated = mermaid(&graph);
    let current = &doc[a + start.len()..b];
    if current != generated && std::env::var_os("STACKBOT_BLESS").is_some() {
        let fresh = format!("{}{start}{generated}{}", &doc[..a], &doc[b..]);
        std::fs::write(&path, fresh).unwrap();
        return;
    }
    assert!(
        current == generated,
        "docs/architecture.md shows a stale crate graph; regenerate it with\n  \
         STACKBOT_BLESS=1 cargo test --test integration architecture::\nand commit the result."
    );
}

/// Core decides and has no I/O: nothing in its dependency tree (normal dependencies, its own
/// features) is git2, tokio, an HTTP client or the OCI client, so `cargo build -p
/// stackbot-core` compiles none of them.
#[test]
fn core_depends_on_no_io_crate() {
    let out = cargo()
        .args([
            "tree",
            "-p",
            "stackbot-core",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(["--offline", "--locked"])
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8(out.stdout).unwrap();
    let names: BTreeSet<&str> = tree.lines().filter_map(|l| l.split(' ').next()).collect();
    assert!(names.contains("serde"), "cargo tree listed nothing: {tree}");
    let io: Vec<&&str> = IO_CRATES.iter().filter(|c| names.contains(**c)).collect();
    assert!(
        io.is_empty(),
        "stackbot-core depends on I/O crates {io:?} (cargo tree -p stackbot-core -e normal -i <crate> shows through which); \
         move the code that needs them to stackbot-net or stackbot-forge"
    );
}

/// Code below the CLI gets the environment and the clock as values ([`stackbot::env::Env`],
/// [`stackbot::clock::Clock`]); only the edge reads them.
/// `code` without the items behind `#[cfg(any(test, feature = "test-doubles"))]` (up to the
/// end of the item: the first line back at the attribute's indentation that closes it).
fn strip_test_doubles(code: &str) -> String {
    let mut out = Vec::new();
    // (indent of the attribute, whether the item's first line is still to come)
    let mut skipping: Option<(String, bool)> = None;
    for line in code.lines() {
        if let Some((indent, first)) = &mut skipping {
            // A one-line item (`mod x;`) ends where it starts; a block at its closing brace.
            let done = (*first && line.trim_end().ends_with(';'))
                || line.starts_with(&format!("{indent}}}"));
            *first = false;
            if done {
                skipping = None;
            }
            continue;
        }
        // (`code_only` has blanked the feature's name, a string literal.)
        if line.trim_start().starts_with("#[cfg(any(test, feature = ") {
            let indent = &line[..line.len() - line.trim_start().len()];
            skipping = Some((indent.to_string(), true));
            continue;
        }
        out.push(line);
    }
    out.join("\n")
}

/// What reads the process environment or the real clock.
const WORLD_READERS: &str = r"std::env::var|env::var_os|env::vars|Utc::now\(|Local::now\(|Instant::now\(|SystemTime::now\(|thread::sleep\(|\bSystemClock\b|\bfrom_process\b";

/// The files allowed to read them: the edge (the CLI, `main.rs`, `process.rs` with the
/// real clock and the process environment, and `lib.rs`, which re-exports them). Core is not
/// scanned: its `clippy.toml` disallows the same calls, which
/// `core_clippy_disallows_the_clock_and_the_environment` keeps.
const EDGE: &[&str] = &[
    "src/cli/",
    "src/main.rs",
    "src/lib.rs",
    "src/process.rs",
    "crates/stackbot-core/",
];

#[test]
fn nothing_below_the_cli_reads_the_environment_or_the_clock() {
    let forbidden = regex::Regex::new(WORLD_READERS).unwrap();
    let mut offenders = Vec::new();
    for (rel, f) in workspace_sources() {
        if EDGE.iter().any(|e| rel.starts_with(e)) {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(&f).unwrap());
        // Unit tests may use the real clock for timeouts.
        let code = code.split("#[cfg(test)]").next().unwrap_or("");
        // Test doubles (the `test-doubles` feature, never shipped) may construct the real
        // clock for their callers' convenience.
        let code = strip_test_doubles(code);
        for m in forbidden.find_iter(&code) {
            offenders.push(format!("{rel}: {}", m.as_str()));
        }
    }
    assert!(
        offenders.is_empty(),
        "read the environment or the clock below the CLI (take an `Env` / `SharedClock` instead):\n{}",
        offenders.join("\n")
    );
}

/// Core is kept from the clock, the environment, files and the process's streams by clippy
/// (`disallowed-methods` and `disallowed-macros` in the `clippy.toml` beside its manifest,
/// which `cargo clippy -- -D warnings` makes an error), not by the scan above: the file must
/// name every reader and writer.
#[test]
fn core_clippy_disallows_the_clock_the_environment_files_and_streams() {
    let path = root().join("crates/stackbot-core/clippy.toml");
    let config = std::fs::read_to_string(&path).expect("crates/stackbot-core/clippy.toml");
    let missing: Vec<&str> = [
        "std::env::var",
        "std::env::vars",
        "std::env::var_os",
        "std::env::vars_os",
        "chrono::Utc::now",
        "chrono::Local::now",
        "std::time::SystemTime::now",
        "std::time::Instant::now",
        "std::thread::sleep",
        "std::fs::read",
        "std::fs::read_to_string",
        "std::fs::read_dir",
        "std::fs::write",
        "std::fs::create_dir_all",
        "std::fs::rename",
        "std::fs::remove_dir_all",
        "std::fs::metadata",
        "std::fs::symlink_metadata",
        "std::fs::File::open",
        "std::fs::File::create",
        "std::fs::OpenOptions::open",
        "std::io::stdout",
        "std::io::stderr",
        "std::process::Command::new",
        "std::println",
        "std::eprintln",
    ]
    .into_iter()
    .filter(|m| !config.contains(&format!("\"{m}\"")))
    .collect();
    assert!(
        missing.is_empty(),
        "{} does not disallow {missing:?}",
        path.display()
    );
}

/// stackbot-package, below core, is kept from the same by the same lists: the two files
/// disallow the same paths, so neither drifts from the other.
#[test]
fn the_package_crate_disallows_what_core_disallows() {
    let paths = |rel: &str| -> std::collections::BTreeSet<String> {
        let text = std::fs::read_to_string(root().join(rel)).expect(rel);
        let re = regex::Regex::new(r#"path = "([^"]+)""#).unwrap();
        re.captures_iter(&text).map(|c| c[1].to_string()).collect()
    };
    let core = paths("crates/stackbot-core/clippy.toml");
    assert!(core.contains("std::fs::read"), "{core:?}");
    assert_eq!(paths("crates/stackbot-package/clippy.toml"), core);
}

#[test]
fn every_doc_a_source_comment_points_at_exists() {
    let re = regex::Regex::new(r"docs/[a-z0-9-]+\.md").unwrap();
    let mut missing = Vec::new();
    for (rel, f) in workspace_sources() {
        let text = std::fs::read_to_string(&f).unwrap();
        for m in re.find_iter(&text) {
            if !root().join(m.as_str()).exists() {
                missing.push(format!("{rel}: {}", m.as_str()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "pointers to docs that do not exist:\n{}",
        missing.join("\n")
    );
}

/// Where the binary may call the forge: `observe` (reads), `apply` (writes) and the dashboard
/// writer (`pipeline/dashboard.rs`, which keeps one issue: read it, then edit it). Every other
/// module gets facts from observe and hands decisions to apply, so "observe gathers, plan
/// decides, apply executes" holds for every command. Core cannot call the forge at all (it
/// does not depend on `stackbot-forge`), so only the binary's `src/` is scanned. Paths relative
/// to `src/`; a directory allows everything under it.
const FORGE_CALLERS: &[&str] = &["observe/", "apply/", "pipeline/dashboard.rs"];

/// Where the `Forge` trait is defined.
const FORGE_TRAIT: &str = "crates/stackbot-forge/src/lib.rs";

/// The names of the `Forge` trait's methods and of the `forge` helpers that take a forge
/// (`read_subtree`, `upsert_comment`), read from [`FORGE_TRAIT`]. `kind` is left out: it
/// names the adapter (for messages) and never talks to the forge.
fn forge_method_names() -> BTreeSet<String> {
    let src = code_only(&std::fs::read_to_string(root().join(FORGE_TRAIT)).unwrap());
    let start = src
        .find("pub trait Forge")
        .unwrap_or_else(|| panic!("{FORGE_TRAIT} defines `trait Forge`"));
    let body = &src[start..];
    // The trait's body ends at the first `}` in column 0.
    let end = body.find("\n}").expect("the trait's body ends");
    let method = regex::Regex::new(r"\bfn ([a-z_][a-z0-9_]*)").unwrap();
    let mut names: BTreeSet<String> = method
        .captures_iter(&body[..end])
        .map(|c| c[1].to_string())
        .collect();
    let helper = regex::Regex::new(r"pub fn ([a-z_][a-z0-9_]*)\(\s*forge: &dyn Forge").unwrap();
    names.extend(helper.captures_iter(&src).map(|c| c[1].to_string()));
    names.remove("kind");
    names
}

#[test]
fn only_observe_apply_and_the_dashboard_writer_call_the_forge() {
    let names = forge_method_names();
    assert!(
        names.contains("list_releases") && names.contains("upsert_comment"),
        "the Forge trait was not read: {names:?}"
    );
    let alternatives: Vec<&str> = names.iter().map(String::as_str).collect();
    // A method call (`.list_releases(`) or a helper call (`upsert_comment(`).
    let call = regex::Regex::new(&format!(r"(?:\.|\b)({})\(", alternatives.join("|"))).unwrap();
    let definition = regex::Regex::new(r"\bfn\s+$").unwrap();
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut offenders = Vec::new();
    for f in files {
        let rel = f.strip_prefix(root().join("src")).unwrap();
        let rel = rel.to_string_lossy().replace('\\', "/");
        if FORGE_CALLERS.iter().any(|a| rel.starts_with(a)) {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(&f).unwrap());
        // Unit tests may drive a forge.
        let code = code.split("#[cfg(test)]").next().unwrap_or("");
        for m in call.captures_iter(code) {
            let at = m.get(0).unwrap().start();
            // `fn read_file(` defines a method of the same name; it does not call the forge.
            if definition.is_match(&code[..at]) {
                continue;
            }
            let line = code[..at].lines().count().max(1);
            offenders.push(format!("src/{rel}:{line}: {}", &m[1]));
        }
    }
    assert!(
        offenders.is_empty(),
        "the forge is called outside observe / apply / the dashboard writer ({FORGE_CALLERS:?}); \
         read through observe, write through apply:\n{}",
        offenders.join("\n")
    );
}

/// The longest a function may be, in lines from its `fn` to its closing brace (doc comments
/// and attributes not counted), in every crate and in the test harness (`tests/`,
/// `benches/`). A function longer than a screen does more than one thing: split it at its
/// seams. Tests are exempt (a test reads top to bottom as a scenario).
const MAX_FUNCTION_LINES: usize = 100;

/// Functions allowed to be longer, each with the reason: the ones that were longer when the
/// check came (issue #24), each to be split and then removed from here (the test fails when an
/// entry is no longer needed). Nothing new goes on this list.
const LONG_FUNCTIONS: &[(&str, &str)] = &[
    (
        "crates/stackbot-core/src/compliance/mod.rs::judge",
        "the SCS 0210 rule as one reading of the standard's test, kept whole to diff against it (tests/integration/scs0210_oracle.rs)",
    ),
    (
        "crates/stackbot-package/src/chart.rs::glob_match",
        "a port of Go's path/filepath.Match, kept in its shape to compare with the original",
    ),
];

/// Every function of `code` (`fn` items, methods included) with its first line and its length
/// in lines: from the line of `fn` to the line of the brace that closes its body. `code` is
/// [`code_only`]'s (no comments, no string contents; character literals are blanked here), so
/// braces balance.
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let re = regex::Regex::new(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)").unwrap();
    // Character literals (`'{'`, `b'}'`) hold no braces that count (lifetimes are left alone).
    let chars = regex::Regex::new(r"'(?:\\.|[^'\\\n])'").unwrap();
    let code = &chars.replace_all(code, "' '").into_owned();
    let b = code.as_bytes();
    let mut out = Vec::new();
    for c in re.captures_iter(code) {
        let start = c.get(0).unwrap().start();
        // The body opens at the first `{` before any `;` (a `;` first: a declaration).
        let mut i = c.get(0).unwrap().end();
        let mut depth_paren = 0i32;
        while i < b.len() {
            match b[i] {
                b'(' | b'<' | b'[' => depth_paren += 1,
                b')' | b'>' | b']' => depth_paren -= 1,
                b';' if depth_paren <= 0 => break,
                b'{' if depth_paren <= 0 => break,
                _ => {}
            }
            i += 1;
        }
        if i >= b.len() || b[i] != b'{' {
            continue;
        }
        let mut depth = 0i32;
        let mut j = i;
        while j < b.len() {
            match b[j] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        let first = code[..start].matches('\n').count() + 1;
        let lines = code[start..=j.min(b.len() - 1)].lines().count();
        out.push((c[1].to_string(), first, lines));
    }
    out
}

/// Whether the function whose `fn` is at `start` of `code` is a test (`#[test]`, also inside
/// `proptest!`, or `#[tokio::test]`): the attributes right above it say so.
fn is_test(code: &str, start: usize) -> bool {
    for line in code[..start].lines().rev() {
        let line = line.trim();
        if line.is_empty() || line == "pub" || line == "async" {
            continue;
        }
        if !line.starts_with("#[") {
            return false;
        }
        if line.starts_with("#[test") || line.starts_with("#[tokio::test") {
            return true;
        }
    }
    false
}

/// The harness around the crates: the test helpers and the harness functions of every test
/// binary (the fake GitHub, the simulator, the scenario builders), and the benchmark programs; tests
/// themselves are exempt, as unit tests are in the crates.
fn harness_sources() -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    for dir in ["tests", "benches"] {
        rust_files(&root().join(dir), &mut files);
    }
    files.sort();
    files
        .into_iter()
        .filter(|f| !f.starts_with(root().join("tests/fixtures")))
        .map(|f| {
            let rel = f
                .strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, f)
        })
        .collect()
}

#[test]
fn no_function_is_longer_than_the_limit() {
    let mut offenders = Vec::new();
    let mut excepted_seen = BTreeSet::new();
    for (rel, f) in workspace_sources().into_iter().chain(harness_sources()) {
        let code = code_only(&std::fs::read_to_string(&f).unwrap());
        let code = code.split("#[cfg(test)]").next().unwrap_or("");
        for (name, line, len) in functions(code) {
            if len <= MAX_FUNCTION_LINES || is_test(code, line_start(code, line)) {
                continue;
            }
            let id = format!("{rel}::{name}");
            if LONG_FUNCTIONS.iter().any(|(x, _)| *x == id) {
                excepted_seen.insert(id);
                continue;
            }
            offenders.push(format!("{id} (line {line}): {len} lines"));
        }
    }
    let stale: Vec<&str> = LONG_FUNCTIONS
        .iter()
        .map(|(x, _)| *x)
        .filter(|x| !excepted_seen.contains(*x))
        .collect();
    assert!(
        stale.is_empty(),
        "LONG_FUNCTIONS lists functions that are short now (or gone); remove them: {stale:?}"
    );
    assert!(
        offenders.is_empty(),
        "functions longer than {MAX_FUNCTION_LINES} lines (split them at their seams):\n{}",
        offenders.join("\n")
    );
}

/// Where line `line` (1-based) of `code` starts.
fn line_start(code: &str, line: usize) -> usize {
    code.split_inclusive('\n')
        .take(line - 1)
        .map(str::len)
        .sum()
}

#[test]
fn tests_are_told_from_the_harness_by_their_attribute() {
    let code =
        "#[test]\nfn a() {}\n#[tokio::test(flavor = x)]\nasync fn b() {}\n#[allow(x)]\nfn c() {}\n";
    let at = |name: &str| code.find(&format!("fn {name}")).unwrap();
    assert!(is_test(code, line_start(code, 2)) && is_test(code, at("a")));
    assert!(is_test(code, at("b")), "async test");
    assert!(!is_test(code, at("c")), "a helper with an attribute");
}

#[test]
fn the_function_length_check_measures_from_fn_to_the_closing_brace() {
    let code = "fn a() {\n    if x == '}' { y }\n}\nfn decl(x: u8);\nimpl T { fn b(&self) -> Vec<u8> {\n vec![]\n } }\n";
    let got = functions(code);
    assert_eq!(
        got,
        [("a".to_string(), 1, 3), ("b".to_string(), 5, 3)],
        "a declaration without a body is not a function to measure"
    );
}

/// Errors are classified in one place (issue 29, "Types where prose is parsed today"):
/// `pipeline::exit::class_of_chain` asks each error of the chain whether it is input. No other
/// code of the binary asks (`is_invalid_input()`) and remaps the answer into an error of its
/// own: a remap loses the cause, and a second rule can disagree with the first.
#[test]
fn only_the_exit_module_asks_an_error_whether_it_is_input() {
    let mut askers = Vec::new();
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    for f in files {
        let rel = f
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "src/pipeline/exit.rs" {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(&f).unwrap());
        if code.contains(".is_invalid_input()") {
            askers.push(rel);
        }
    }
    assert!(
        askers.is_empty(),
        "classify in pipeline::exit instead: {askers:?}"
    );
}
