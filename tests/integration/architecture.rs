//! The structure the docs describe is the structure the code has.
//!
//! The module graph in `docs/architecture.md` is generated from the code's own `crate::`
//! references (so it cannot go stale), it has no cycles, every dependency points down the
//! layers below, and nothing below the CLI reads the environment or the clock.
//!
//! Regenerate the graph with `STACKBOT_BLESS=1 cargo test --test integration architecture::`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first. A module may use modules of lower layers only: that is what
/// "the data flows one way" means in code. Adding a module means placing it here.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "vocabulary",
        &[
            "model", "clock", "env", "net", "error", "mutation", "yaml", "body",
        ],
    ),
    ("configuration and state", &["config", "lock"]),
    ("pure stages on trees", &["render", "package"]),
    ("adapters to the world", &["upstream", "forge", "oci"]),
    ("the release index", &["index"]),
    ("the standard", &["compliance"]),
    (
        "deciding",
        &["resolve", "plan", "tenants", "status", "adopt"],
    ),
    ("observing and executing", &["observe", "apply"]),
    ("output", &["report"]),
    ("the pipeline", &["pipeline"]),
    ("the edge", &["cli"]),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
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

/// The top-level module a file belongs to (`src/plan/series.rs` → `plan`).
fn module_of(path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root().join("src")).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.trim_end_matches(".rs");
    (!matches!(name, "lib" | "main")).then(|| name.to_string())
}

/// `module → modules it references`, from `crate::x` paths (grouped imports included).
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| module_of(f)).collect();
    let single = regex::Regex::new(r"\bcrate::([a-z_]+)").unwrap();
    let group = regex::Regex::new(r"\bcrate::\{([^}]*)\}").unwrap();
    let head = regex::Regex::new(r"(?:^|,)\s*([a-z_]+)").unwrap();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let Some(m) = module_of(f) else { continue };
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        let mut used: Vec<String> = single
            .captures_iter(&code)
            .map(|c| c[1].to_string())
            .collect();
        for g in group.captures_iter(&code) {
            used.extend(head.captures_iter(&g[1]).map(|c| c[1].to_string()));
        }
        let entry = graph.entry(m.clone()).or_default();
        for u in used {
            if u != m && modules.contains(&u) {
                entry.insert(u);
            }
        }
    }
    graph
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&module))
}

#[test]
fn every_module_has_a_layer_and_depends_only_on_lower_layers() {
    let graph = module_graph();
    let mut problems = Vec::new();
    for (m, deps) in &graph {
        let Some(lm) = layer_of(m) else {
            problems.push(format!(
                "module `{m}` has no layer in tests/integration/architecture.rs LAYERS"
            ));
            continue;
        };
        for d in deps {
            match layer_of(d) {
                Some(ld) if ld < lm => {}
                Some(ld) => problems.push(format!(
                    "`{m}` ({}) uses `{d}` ({}): dependencies must point to lower layers",
                    LAYERS[lm].0, LAYERS[ld].0
                )),
                None => {}
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_module_graph_has_no_cycles() {
    let graph = module_graph();
    // Kahn's algorithm: whatever cannot be ordered is on a cycle.
    let mut indegree: BTreeMap<&str, usize> = graph.keys().map(|k| (k.as_str(), 0)).collect();
    for deps in graph.values() {
        for d in deps {
            *indegree.entry(d.as_str()).or_default() += 1;
        }
    }
    let mut ready: Vec<&str> = indegree
        .iter()
        .filter(|(_, n)| **n == 0)
        .map(|(k, _)| *k)
        .collect();
    let mut seen = 0;
    while let Some(m) = ready.pop() {
        seen += 1;
        for d in graph.get(m).into_iter().flatten() {
            let n = indegree.get_mut(d.as_str()).unwrap();
            *n -= 1;
            if *n == 0 {
                ready.push(d);
            }
        }
    }
    let on_cycle: Vec<_> = indegree
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, _)| *k)
        .collect();
    assert_eq!(seen, indegree.len(), "modules on a cycle: {on_cycle:?}");
}

/// The Mermaid graph of the modules, by layer.
fn mermaid(graph: &BTreeMap<String, BTreeSet<String>>) -> String {
    let mut s = String::from("```mermaid\nflowchart BT\n");
    for (i, (name, modules)) in LAYERS.iter().enumerate() {
        let present: Vec<&&str> = modules.iter().filter(|m| graph.contains_key(**m)).collect();
        if present.is_empty() {
            continue;
        }
        s.push_str(&format!("  subgraph L{i}[\"{name}\"]\n"));
        for m in present {
            s.push_str(&format!("    {m}\n"));
        }
        s.push_str("  end\n");
    }
    for (m, deps) in graph {
        for d in deps {
            s.push_str(&format!("  {m} --> {d}\n"));
        }
    }
    s.push_str("```\n");
    s
}

#[test]
fn the_architecture_doc_shows_the_current_module_graph() {
    let path = root().join("docs/architecture.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (start, end) = ("<!-- module-graph:start -->\n", "<!-- module-graph:end -->");
    let (Some(a), Some(b)) = (doc.find(start), doc.find(end)) else {
        panic!("docs/architecture.md lacks the {start:?} … {end:?} markers");
    };
    let generated = mermaid(&module_graph());
    let current = &doc[a + start.len()..b];
    if current != generated && std::env::var_os("STACKBOT_BLESS").is_some() {
        let fresh = format!("{}{start}{generated}{}", &doc[..a], &doc[b..]);
        std::fs::write(&path, fresh).unwrap();
        return;
    }
    assert!(
        current == generated,
        "docs/architecture.md shows a stale module graph; regenerate it with\n  \
         STACKBOT_BLESS=1 cargo test --test integration architecture::\nand commit the result."
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

#[test]
fn nothing_below_the_cli_reads_the_environment_or_the_clock() {
    let forbidden = regex::Regex::new(
        r"std::env::var|env::var_os|env::vars|Utc::now\(|Local::now\(|Instant::now\(|SystemTime::now\(|thread::sleep\(|\bSystemClock\b|Env::from_process",
    )
    .unwrap();
    // The edge itself, and the two values that carry the world into the library.
    let allowed = ["cli", "clock.rs", "env.rs", "main.rs"];
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut offenders = Vec::new();
    for f in files {
        let rel = f.strip_prefix(root().join("src")).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap();
        if allowed.contains(&first) {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(&f).unwrap());
        // Unit tests may use the real clock for timeouts.
        let code = code.split("#[cfg(test)]").next().unwrap_or("");
        // Test doubles (the `test-doubles` feature, never shipped) may construct the real
        // clock for their callers' convenience.
        let code = strip_test_doubles(code);
        let code = code.as_str();
        for m in forbidden.find_iter(code) {
            offenders.push(format!("{}: {}", rel.display(), m.as_str()));
        }
    }
    assert!(
        offenders.is_empty(),
        "read the environment or the clock below the CLI (take an `Env` / `SharedClock` instead):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn every_doc_a_source_comment_points_at_exists() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let re = regex::Regex::new(r"docs/[a-z0-9-]+\.md").unwrap();
    let mut missing = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for m in re.find_iter(&text) {
            if !root().join(m.as_str()).exists() {
                missing.push(format!("{}: {}", f.display(), m.as_str()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "pointers to docs that do not exist:\n{}",
        missing.join("\n")
    );
}

/// Where the forge may be called: `forge` itself (the adapters and their helpers), `observe`
/// (reads), `apply` (writes) and the dashboard writer (`pipeline/dashboard.rs`, which keeps
/// one issue: read it, then edit it). Every other module gets facts from observe and hands
/// decisions to apply, so "observe gathers, plan decides, apply executes" holds for every
/// command. Paths relative to `src/`; a directory allows everything under it.
const FORGE_CALLERS: &[&str] = &["forge/", "observe/", "apply/", "pipeline/dashboard.rs"];

/// The names of the `Forge` trait's methods and of the `forge` helpers that take a forge
/// (`read_subtree`, `upsert_comment`), read from `src/forge/mod.rs`. `kind` is left out: it
/// names the adapter (for messages) and never talks to the forge.
fn forge_method_names() -> BTreeSet<String> {
    let src = code_only(&std::fs::read_to_string(root().join("src/forge/mod.rs")).unwrap());
    let start = src
        .find("pub trait Forge")
        .expect("src/forge/mod.rs defines `trait Forge`");
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
/// and attributes not counted). A function longer than a screen does more than one thing:
/// split it at its seams. Unit tests are exempt (a test reads top to bottom as a scenario).
const MAX_FUNCTION_LINES: usize = 100;

/// Functions allowed to be longer, each with the reason: the ones that were longer when the
/// check came (issue #24), each to be split and then removed from here (the test fails when an
/// entry is no longer needed). Nothing new goes on this list.
const LONG_FUNCTIONS: &[(&str, &str)] = &[
    (
        "src/compliance/mod.rs::evaluate_on",
        "the SCS 0210 rule as one reading of the standard's test, kept whole to diff against it (tests/integration/scs0210_oracle.rs)",
    ),
    (
        "src/package/chart.rs::glob_match",
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
        let first = code[..start].lines().count().max(1);
        let lines = code[start..=j.min(b.len() - 1)].lines().count();
        out.push((c[1].to_string(), first, lines));
    }
    out
}

#[test]
fn no_function_is_longer_than_the_limit() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut offenders = Vec::new();
    let mut excepted_seen = BTreeSet::new();
    for f in files {
        let rel = f.strip_prefix(root().join("src")).unwrap();
        let rel = rel.to_string_lossy().replace('\\', "/");
        let code = code_only(&std::fs::read_to_string(&f).unwrap());
        let code = code.split("#[cfg(test)]").next().unwrap_or("");
        for (name, line, len) in functions(code) {
            if len <= MAX_FUNCTION_LINES {
                continue;
            }
            let id = format!("src/{rel}::{name}");
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
