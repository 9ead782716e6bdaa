//! One fact, one answer (issue 29, items 2 and 5): on the README demo (local forge, bundled
//! upstream snapshot), run by the real binary at dates from before the first release to past
//! two ends of life (1.33: 2026-06-28, 1.34: 2026-10-27), every surface states the same
//! deadline, overdue flag, waiting cause, critical CVEs and changed lines:
//!
//! - `detect` and `status` (JSON): the same fields with the same values per stack × minor;
//! - the `release` summary: each series' line (text: its state, deadline, days and what it waits
//!   for) and `series[]` (JSON) as `status` after it, also in pull-request mode (`release PR
//!   open` vs `releasable`) and with `publish: [oci]` alone;
//! - release notes: the deadline `status` gave the series that day before the release, met or
//!   missed as its `overdue` said;
//! - tenant pull requests: the critical CVEs `status` names for the proposed release, with the
//!   patch fixing them and what that patch waits for; the *Changes* lines are the diff's;
//! - `plan` (text and JSON `series[]`), the timeline (`timeline[]`), the dashboard issue
//!   (Markdown) and the GitHub job summary (`$GITHUB_STEP_SUMMARY`): state, deadline, days,
//!   waiting cause and critical CVEs as `status` gives them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{copy_dir, root};

/// A copy of the demo, driven through the binary.
struct Demo {
    dir: tempfile::TempDir,
}

impl Demo {
    fn new() -> Demo {
        Demo::configured(|c| c)
    }

    /// The demo with its configuration changed by `edit`.
    fn configured(edit: impl FnOnce(String) -> String) -> Demo {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(
            &root().join("examples/local"),
            &dir.path().join("examples/local"),
        );
        copy_dir(&root().join("templates"), &dir.path().join("templates"));
        let config = dir.path().join("examples/local/stackbot.yaml");
        let text = std::fs::read_to_string(&config).unwrap();
        std::fs::write(&config, edit(text)).unwrap();
        Demo { dir }
    }

    /// One `release` run on `day`, then `status`, then the run again in JSON (it finds
    /// nothing more to do): the summary text, the JSON `series[]`, the status after.
    fn release(&self, day: &str) -> (String, Value, Value) {
        let (code, text, err) = self.run(day, &["release"]);
        assert!(code.is_some_and(|c| c <= 1), "release on {day}: {err}");
        let after = self.json(day, "status");
        let (_, json_out, _) = self.run(day, &["--format", "json", "release"]);
        let rerun: Value = serde_json::from_str(&json_out).unwrap();
        (text, rerun["series"].clone(), after)
    }

    fn run(&self, day: &str, args: &[&str]) -> (Option<i32>, String, String) {
        crate::status::demo_cli(self.dir.path(), day, args)
    }

    /// `release --format json` on `day` as the GitHub Action runs it, with the job summary
    /// written to `summary` (emptied first): the run's JSON report.
    fn release_summarised(&self, day: &str, summary: &Path) -> Value {
        std::fs::write(summary, "").unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_stackbot"))
            .current_dir(self.dir.path())
            .args(["-c", "examples/local/stackbot.yaml", "--now", day])
            .args(["--format", "json", "release"])
            .env("NO_COLOR", "1")
            .env("GITHUB_STEP_SUMMARY", summary)
            .env_remove("GITHUB_TOKEN")
            .env_remove("GITHUB_ACTIONS")
            .output()
            .unwrap();
        assert!(
            out.status.code().is_some_and(|c| c <= 1),
            "release on {day}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn json(&self, day: &str, cmd: &str) -> Value {
        let (code, out, err) = self.run(day, &["--format", "json", cmd]);
        assert!(code.is_some_and(|c| c <= 1), "{cmd} on {day}: {err}");
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{cmd} on {day}: {e}: {err}"))
    }

    fn forge(&self) -> PathBuf {
        self.dir.path().join(".stackbot/forge")
    }

    /// Every release of the cluster-stacks repository: tag → notes.
    fn notes(&self) -> BTreeMap<String, String> {
        json_files(
            &self.forge().join("releases/scs/cluster-stacks"),
            "release.json",
        )
        .into_iter()
        .map(|r| (str_of(&r["tag"]), str_of(&r["body"])))
        .collect()
    }

    /// Every tenant pull request (open ones last written).
    fn pulls(&self) -> Vec<Value> {
        json_files(&self.forge().join("pulls"), "")
    }
}

fn str_of(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// The JSON files under `dir` (recursively), named `name` (any `*.json` when empty).
fn json_files(dir: &Path, name: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(json_files(&p, name));
        } else if (name.is_empty() && p.extension().is_some_and(|x| x == "json"))
            || p.file_name().is_some_and(|n| n == name)
        {
            let text = std::fs::read_to_string(&p).unwrap();
            out.push(serde_json::from_str(&text).unwrap());
        }
    }
    out
}

/// The facts every surface must agree on, of one `stacks[]` row of `status` (or a `minors[]`
/// row of `detect`, or a `series[]` row of `release`).
fn facts(row: &Value) -> Value {
    let cves: Vec<Value> = row["cves"]
        .as_array()
        .map(|c| c.iter().map(|x| x["id"].clone()).collect())
        .unwrap_or_default();
    serde_json::json!({
        "due": row["due"],
        "due_for": row["due_for"],
        "due_window": row["due_window"],
        "days_left": row["days_left"],
        "overdue": row["overdue"],
        "newest_unreleased": row["newest_unreleased"],
        "verdict": row["scs0210"]["verdict"],
        "cves": cves,
    })
}

fn by_minor<'a>(rows: &'a Value, minor: &str) -> &'a Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r["minor"] == minor)
        .unwrap_or_else(|| panic!("no row for {minor}: {rows}"))
}

/// `33 days overdue`, `1 day left`, `due today`: the words of `days_left`.
fn days_words(days_left: i64) -> String {
    match days_left {
        0 => "due today".into(),
        1 => "1 day left".into(),
        n if n > 1 => format!("{n} days left"),
        -1 => "1 day overdue".into(),
        n => format!("{} days overdue", -n),
    }
}

/// The lines of the old file a unified diff removes (`-` lines), by their number.
fn removed_lines(diff: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut line = 0;
    for l in diff.lines() {
        if let Some(h) = l.strip_prefix("@@ -") {
            let start = h.split([',', ' ']).next().unwrap();
            line = start.parse::<usize>().unwrap();
        } else if l.starts_with("---") || l.starts_with("+++") {
        } else if l.starts_with('-') {
            out.push(line);
            line += 1;
        } else if l.starts_with(' ') {
            line += 1;
        }
    }
    out
}

/// The line numbers a *Changes* item names (`line 15`, `lines 8, 10`, `lines 15–17`).
fn named_lines(item: &str) -> Vec<usize> {
    let Some(at) = item.find(" line") else {
        return Vec::new();
    };
    let rest = item[at..]
        .trim_start_matches(" lines ")
        .trim_start_matches(" line ");
    let spec: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, ',' | ' ' | '–'))
        .collect();
    let mut out = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('–') {
            Some((a, b)) => out.extend(a.parse::<usize>().unwrap()..=b.parse().unwrap()),
            None => out.push(part.parse().unwrap()),
        }
    }
    out
}

/// The word `status` and the release summary use for a JSON `state`.
fn state_word(state: &Value) -> String {
    match state.as_str().unwrap_or_default() {
        "release_pull_request" => "release PR open".into(),
        "failed_conformance" => "failed conformance".into(),
        "in_test" => "in test".into(),
        "untracked" => "not tracked".into(),
        s => s.to_string(),
    }
}

/// A `release` run's summary says of each series what `status` says after the run: its
/// `series[]` rows (JSON) carry status's facts and state; its text line (released, skipped,
/// waiting) names the state, the deadline with its days, and the image or chart it waits for.
fn summary_says_what_status_says(day: &str, text: &str, series: &Value, after: &Value) {
    for m in MINORS {
        let row = by_minor(&after["stacks"], m);
        let summary = by_minor(series, m);
        assert_eq!(
            facts(summary),
            facts(row),
            "{day} {m}: release series[] and status"
        );
        assert_eq!(summary["state"], row["state"], "{day} {m}: state");
        let prefix = format!("openstack-scs2-{}", m.replace('.', "-"));
        let mine: Vec<&str> = text
            .lines()
            .filter(|l| {
                l.contains(&format!("{prefix}:"))
                    || l.contains(&format!("{prefix}-v"))
                    || l.contains(&format!("openstack/scs2 {m}:"))
            })
            .filter(|l| !l.starts_with("tenant ") && !l.starts_with("OCI: "))
            .collect();
        assert!(!mine.is_empty(), "{day} {m}: no summary line in\n{text}");
        let line = mine.join("\n");
        if row["state"] == "current" {
            assert!(
                !line.contains("SCS 0210 deadline"),
                "{day} {m} is current: {line}"
            );
            continue;
        }
        let state = state_word(&row["state"]);
        assert!(
            line.contains(&format!("; {state}")),
            "{day} {m}: status says {state}: {line}"
        );
        if let Some(due) = row["due"].as_str() {
            let days = days_words(row["days_left"].as_i64().unwrap());
            assert!(
                line.contains(&format!("SCS 0210 deadline {due} ({days}")),
                "{day} {m}: status says {due}, {days}: {line}"
            );
        }
        for w in row["waiting_for"].as_array().unwrap() {
            let what = str_of(&w["what"]);
            match w["kind"].as_str() {
                Some("node_image" | "chart" | "release_pull_request") => {
                    assert!(line.contains(&what), "{day} {m}: waits for {what}: {line}")
                }
                Some("release_run") => assert!(
                    line.contains(&format!("the next release run ({what})")),
                    "{day} {m}: releasable: {line}"
                ),
                _ => {}
            }
        }
        if row["state"] == "release_pull_request" {
            assert!(
                !line.contains("the next release run") && !line.contains("to be opened"),
                "{day} {m}: a release PR is open, not releasable: {line}"
            );
        }
    }
}

const MINORS: [&str; 4] = ["1.33", "1.34", "1.35", "1.36"];

#[test]
fn every_surface_gives_the_same_deadline_overdue_waiting_cause_cves_and_lines() {
    let demo = Demo::new();
    // Before any release, the release day, the patch window's last day, a month later, 1.33's
    // end of life and after it, past 1.34's end of life too.
    let days = [
        ("2026-04-01", false),
        ("2026-05-01", true),
        ("2026-05-16", true),
        ("2026-06-01", true),
        ("2026-06-28", true),
        ("2026-07-01", true),
        ("2026-10-28", true),
    ];
    let mut checked_notes = 0;
    let mut checked_pulls = 0;
    let mut saw_overdue_cve = false;
    for (day, release) in days {
        // detect and status, before the run: the same facts per stack × minor.
        let detect = demo.json(day, "detect");
        let before = demo.json(day, "status");
        for m in MINORS {
            assert_eq!(
                facts(by_minor(&detect["minors"], m)),
                facts(by_minor(&before["stacks"], m)),
                "{day} {m}: detect and status"
            );
        }
        if !release {
            continue;
        }
        let notes_before = demo.notes();
        // The release summary: each series' line says what `status` says after the run.
        let (text, series, after) = demo.release(day);
        summary_says_what_status_says(day, &text, &series, &after);

        // Release notes of this run: the deadline `status` gave that day before the run.
        for (tag, notes) in demo.notes() {
            if notes_before.contains_key(&tag) {
                continue;
            }
            let minor = MINORS
                .iter()
                .find(|m| tag.contains(&format!("-{}-v", m.replace('.', "-"))))
                .unwrap();
            let row = by_minor(&before["stacks"], minor);
            let line = notes
                .lines()
                .find(|l| l.starts_with("SCS 0210 deadline"))
                .unwrap_or_else(|| panic!("{tag}: no deadline line:\n{notes}"));
            match row["due"].as_str() {
                Some(due) => {
                    assert!(
                        line.contains(due),
                        "{tag} on {day}: status said {due}: {line}"
                    );
                    let missed = line.contains("**missed**");
                    assert_eq!(
                        missed,
                        row["overdue"] == true,
                        "{tag} on {day}: overdue {} in status: {line}",
                        row["overdue"]
                    );
                }
                None => assert!(
                    line.contains("none applied"),
                    "{tag} on {day}: status had no deadline: {line}"
                ),
            }
            checked_notes += 1;
        }

        // Tenant pull requests: the risk and the changed lines.
        for pull in demo.pulls() {
            if pull["state"] != "open" {
                continue;
            }
            let body = str_of(&pull["body"]);
            let title = str_of(&pull["title"]);
            for m in MINORS {
                let prefix = format!("openstack-scs2-{}-v", m.replace('.', "-"));
                if !title.contains(&prefix) {
                    continue;
                }
                let row = by_minor(&after["stacks"], m);
                let proposed_is_latest = row["latest_release"]["tag"]
                    .as_str()
                    .is_some_and(|t| title.contains(t));
                if !proposed_is_latest {
                    continue;
                }
                let cves = row["cves"].as_array().unwrap();
                if cves.is_empty() {
                    assert!(!body.contains("Still affected"), "{title}: {body}");
                }
                for c in cves {
                    let id = str_of(&c["id"]);
                    assert!(body.contains("**Still affected:**"), "{title}: {body}");
                    let row_line = body
                        .lines()
                        .find(|l| l.contains(&format!("[{id}]")) && l.contains(&prefix))
                        .unwrap_or_else(|| panic!("{title} on {day}: {id} not named:\n{body}"));
                    if let Some(fixed) = c["fixed_in"].as_str() {
                        assert!(row_line.contains(fixed), "{row_line}");
                    }
                    for w in row["waiting_for"].as_array().unwrap() {
                        if w["kind"] == "node_image" {
                            assert!(row_line.contains(&str_of(&w["what"])), "{row_line}");
                        }
                    }
                    if row["due_window"] == "critical-cve" && row["overdue"] == true {
                        saw_overdue_cve = true;
                    }
                }
            }
            let diff = body
                .split("```diff\n")
                .nth(1)
                .and_then(|d| d.split("```").next())
                .unwrap_or_default();
            let changes: Vec<usize> = body
                .lines()
                .filter(|l| l.starts_with("- `") && l.contains(" line"))
                .filter(|l| !l.contains("new ClusterStack"))
                .flat_map(named_lines)
                .collect();
            if !diff.is_empty() {
                assert_eq!(
                    changes,
                    removed_lines(diff),
                    "{title} on {day}: Changes vs diff\n{body}"
                );
                checked_pulls += 1;
            }
        }
    }
    assert!(checked_notes >= 2, "the demo releases 1.33 and 1.34");
    assert!(checked_pulls >= 2, "acme and globex get pull requests");
    assert!(
        saw_overdue_cve,
        "globex's release stays affected by CVE-2026-0001 past its deadline"
    );
}

#[test]
fn removed_and_named_lines_read_as_meant() {
    let diff =
        "--- a/x\n+++ b/x\n@@ -12,4 +12,4 @@\n a\n b\n c\n-  versions: []\n+  versions: [v1]\n";
    assert_eq!(removed_lines(diff), [15]);
    assert_eq!(named_lines("- `x.yaml` line 15: 1.33 `[]` → `[v1]`"), [15]);
    assert_eq!(
        named_lines("- `x.yaml` lines 8, 10–11: Cluster `a` → `b`"),
        [8, 10, 11]
    );
}

/// The number of the release pull request a `status` row waits for.
fn release_pull_number(row: &Value) -> Option<u64> {
    row["waiting_for"]
        .as_array()?
        .iter()
        .find(|w| w["kind"] == "release_pull_request")
        .and_then(|w| str_of(&w["what"]).rsplit('#').next()?.parse().ok())
}

/// Pull-request mode (`forge.mode: pull-request`): a series whose release pull request is open
/// is `release PR open` in the summary as in `status` (never "the next release run"); once a
/// maintainer declines it, the series is `releasable` in both; once merged, the release is
/// published and the summary says what the series waits for next, as `status` does.
#[test]
fn in_pull_request_mode_the_summary_says_release_pr_open_or_releasable_as_status_does() {
    let demo = Demo::configured(|c| c.replace("  mode: direct\n", "  mode: pull-request\n"));
    let maintainer = stackbot::forge::local::LocalForge::new(
        demo.forge(),
        "Maintainer",
        "maintainer@example.org",
    );
    let repo = stackbot::forge::RepoRef::parse("scs/cluster-stacks").unwrap();
    let mut states = Vec::new();
    let mut check = |day: &str| {
        let (text, series, after) = demo.release(day);
        summary_says_what_status_says(day, &text, &series, &after);
        for m in ["1.33", "1.34"] {
            states.push((
                day.to_string(),
                m,
                state_word(&by_minor(&series, m)["state"]),
            ));
        }
        after
    };
    // The release pull requests are opened, then found open by the next run.
    check("2026-05-01");
    let after = check("2026-05-02");
    let pr_33 = release_pull_number(by_minor(&after["stacks"], "1.33")).expect("1.33 PR");
    let pr_34 = release_pull_number(by_minor(&after["stacks"], "1.34")).expect("1.34 PR");
    // 1.34's is declined, 1.33's merged.
    maintainer.close_pull_by_hand(&repo, pr_34).unwrap();
    maintainer.merge_pull(&repo, pr_33).unwrap();
    let after = check("2026-05-03");
    assert_eq!(
        by_minor(&after["stacks"], "1.33")["latest_release"]["tag"],
        "openstack-scs2-1-33-v1",
        "the merged release pull request is published"
    );
    check("2026-06-01");
    let said = |day: &str, m: &str| {
        states
            .iter()
            .find(|(d, x, _)| d == day && *x == m)
            .map(|(_, _, s)| s.clone())
            .unwrap()
    };
    assert_eq!(said("2026-05-01", "1.33"), "release PR open", "{states:?}");
    assert_eq!(said("2026-05-02", "1.34"), "release PR open", "{states:?}");
    assert_eq!(said("2026-05-03", "1.34"), "releasable", "{states:?}");
    assert_eq!(said("2026-06-01", "1.33"), "waiting", "{states:?}");
}

/// `publish: [oci]` alone: the releases are the registry's, the forge has none. The summary's
/// series lines still say what `status` says (the latest release's Kubernetes version, the
/// deadline, what the series waits for), on the release day, a month later and at 1.33's end
/// of life; a current series is not called behind.
#[test]
fn with_oci_alone_the_summary_says_what_status_says() {
    let reg = crate::support::registry::TestRegistry::start();
    let demo = Demo::configured(|c| {
        format!(
            "{c}\npublish: [oci]\noci:\n  registry: \"{0}\"\n  repository: \"{0}/kaas/cluster-stacks\"\n  plain_http: true\n",
            reg.addr
        )
    });
    let mut current = 0;
    for day in ["2026-05-01", "2026-06-01", "2026-06-28"] {
        let (text, series, after) = demo.release(day);
        summary_says_what_status_says(day, &text, &series, &after);
        let row = by_minor(&after["stacks"], "1.34");
        assert_eq!(
            row["latest_release"]["tag"], "openstack-scs2-1-34-v1",
            "{day}: released to the registry: {row}"
        );
        if row["state"] == "current" {
            current += 1;
        }
    }
    assert_eq!(current, 3, "1.34 v1.34.7 stays current in the registry");
}

/// The Markdown a reader sees, as text: escapes undone (`\_` → `_`, `&lt;` → `<`).
fn unescape(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut chars = md.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek().is_some_and(|n| "\\`*_[]|~".contains(*n)) {
            out.push(chars.next().unwrap());
        } else {
            out.push(c);
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The dashboard issue's body on the local forge (the one issue of the repository).
fn dashboard_body(demo: &Demo) -> String {
    let dir = demo.forge().join("issues/scs/cluster-stacks");
    let mut bodies: Vec<(u64, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .map(|e| {
            let n = e
                .path()
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .parse()
                .unwrap();
            (n, std::fs::read_to_string(e.path()).unwrap())
        })
        .collect();
    bodies.sort();
    assert_eq!(bodies.len(), 1, "one dashboard issue");
    bodies.pop().unwrap().1
}

/// Each dashboard row (`| openstack/scs2 | 1.33 | …`) states what `status` states of the
/// series: its state, the deadline with its days, what it waits for, the critical CVEs.
fn dashboard_says_what_status_says(day: &str, body: &str, status: &Value) {
    let body = unescape(body);
    for m in MINORS {
        let row = by_minor(&status["stacks"], m);
        let line = body
            .lines()
            .find(|l| l.starts_with(&format!("| openstack/scs2 | {m} |")))
            .unwrap_or_else(|| panic!("{day} {m}: no dashboard row in\n{body}"));
        let state = state_word(&row["state"]);
        assert!(line.contains(&state), "{day} {m}: {state}: {line}");
        if let Some(due) = row["due"].as_str() {
            let days = days_words(row["days_left"].as_i64().unwrap());
            assert!(
                line.contains(&format!("{due} ({days}")),
                "{day} {m}: {due}, {days}: {line}"
            );
        }
        for w in row["waiting_for"].as_array().unwrap() {
            if matches!(w["kind"].as_str(), Some("node_image" | "chart")) {
                let what = str_of(&w["what"]);
                assert!(line.contains(&what), "{day} {m}: waits for {what}: {line}");
            }
        }
        for c in row["cves"].as_array().unwrap() {
            let id = str_of(&c["id"]);
            assert!(line.contains(&id), "{day} {m}: {id}: {line}");
        }
    }
}

/// The timeline's newest unreleased patch of each series has the deadline the series' row
/// gives it (`newest_unreleased.release_by`).
fn timeline_says_what_status_says(day: &str, status: &Value) {
    for m in MINORS {
        let row = by_minor(&status["stacks"], m);
        let Some(n) = row["newest_unreleased"].as_object() else {
            continue;
        };
        if row["tracked"] != true {
            continue;
        }
        let entry = status["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["minor"] == m && e["kubernetes"] == n["kubernetes"]);
        if let Some(e) = entry {
            assert_eq!(
                e["due"], n["release_by"],
                "{day} {m}: timeline and status for {}",
                n["kubernetes"]
            );
        }
    }
}

/// The surfaces the first sweep left out say what `status` says at the same dates: `plan`
/// (text and JSON `series[]`) before each run, the timeline (`status` JSON `timeline[]`), and
/// after a release run the dashboard issue (Markdown) and the GitHub job summary
/// (`$GITHUB_STEP_SUMMARY`, written whenever it is set).
#[test]
fn plan_the_dashboard_the_timeline_and_the_job_summary_say_what_status_says() {
    let demo = Demo::new();
    let summary = demo.dir.path().join("step-summary.md");
    let days = [
        "2026-04-01",
        "2026-05-01",
        "2026-06-01",
        "2026-06-28",
        "2026-10-28",
    ];
    for day in days {
        let before = demo.json(day, "status");
        let plan = demo.json(day, "plan");
        let (_, plan_text, _) = demo.run(day, &["plan"]);
        summary_says_what_status_says(day, &plan_text, &plan["series"], &before);
        timeline_says_what_status_says(day, &before);
        if day == "2026-04-01" {
            continue;
        }
        let json = demo.release_summarised(day, &summary);
        let after = demo.json(day, "status");
        let md = unescape(&std::fs::read_to_string(&summary).unwrap());
        assert!(md.starts_with("## stackbot release"), "{md}");
        summary_says_what_status_says(day, &md, &json["series"], &after);
        dashboard_says_what_status_says(day, &dashboard_body(&demo), &after);
        timeline_says_what_status_says(day, &after);
    }
}

/// The Kubernetes schedule of the bundled snapshot: each minor's release day and end of life.
const SCHEDULE: [(&str, &str, &str); 4] = [
    ("1.33", "2025-04-23", "2026-06-28"),
    ("1.34", "2025-08-27", "2026-10-27"),
    ("1.35", "2025-12-17", "2027-02-28"),
    ("1.36", "2026-04-22", "2027-06-28"),
];

/// The minors `minors: supported` tracks on `day`, by the standard's test's rule
/// (`K8sBranchInfo.is_supported`: released, and `now < eol`): the oracle of the sweep below.
fn supported_on(day: &str) -> Vec<String> {
    SCHEDULE
        .iter()
        .filter(|(_, released, eol)| *released <= day && day < *eol)
        .map(|(m, _, _)| m.to_string())
        .collect()
}

/// The minors of `rows` (`stacks[]`, `series[]`, `minors[]`) whose `tracked` is not `false`.
fn tracked_rows(rows: &Value) -> Vec<String> {
    rows.as_array()
        .unwrap()
        .iter()
        .filter(|r| r["tracked"] != false)
        .map(|r| str_of(&r["minor"]))
        .collect()
}

/// The minors a summary's lines (text or Markdown) speak of as a series: `openstack-scs2-1-33:`,
/// `openstack-scs2-1-33-v1`, `openstack/scs2 1.33:`, tenant lines and the job summary's full
/// JSON result (its `<details>`) aside.
fn summary_minors(text: &str) -> Vec<String> {
    let text = text.split("<details>").next().unwrap_or_default();
    SCHEDULE
        .iter()
        .map(|(m, _, _)| m.to_string())
        .filter(|m| {
            let prefix = format!("openstack-scs2-{}", m.replace('.', "-"));
            text.lines()
                .filter(|l| !l.trim_start().starts_with("tenant ") && !l.contains("tenant `"))
                .any(|l| {
                    l.contains(&format!("{prefix}:"))
                        || l.contains(&format!("{prefix}-v"))
                        || l.contains(&format!("openstack/scs2 {m}:"))
                })
        })
        .collect()
}

/// Which minors are tracked has one answer (`model::scs::supported_on`, through detection) on
/// every surface. With `minors: supported`, at dates from before the first release to past two
/// ends of life, including each end-of-life day and the day before it: `detect` (`minors[]`),
/// `status` (`stacks[]` with `tracked`), `plan` (`series[]` and its lines), the `release`
/// summary (`series[]` and its lines), the job summary, the dashboard's stack rows and the
/// timeline (never a minor no longer tracked) all name the minors the standard's test calls
/// supported that day. And a tenant pull request never says that a release run will ship the
/// fix of a minor no longer tracked (on 1.33's end-of-life day it said "the next release run
/// ships it" of v1.33.11).
#[test]
fn every_surface_tracks_the_same_minors_up_to_their_end_of_life() {
    let demo = Demo::configured(|c| {
        c.replace(
            "    minors: [\"1.33\", \"1.34\", \"1.35\", \"1.36\"]\n",
            "    minors: supported\n",
        )
    });
    let saw_untracked_fix = tracked_sweep(&demo, supported_on);
    assert!(
        saw_untracked_fix,
        "globex's release of 1.33 stays affected past 1.33's end of life"
    );
}

/// With the demo's explicit `minors` list the configuration decides alone: every surface
/// tracks the four listed minors on every day of the sweep, past their end of life too (where
/// `status` says `past_end_of_life` and the verdict fails instead).
#[test]
fn with_an_explicit_list_every_surface_tracks_the_listed_minors_on_every_day() {
    let listed = |_: &str| MINORS.iter().map(|m| m.to_string()).collect();
    assert!(
        !tracked_sweep(&Demo::new(), listed),
        "no minor is untracked"
    );
}

/// The sweep of the two tests above: on each day, every surface's tracked minors are
/// `want(day)`; returns whether a tenant pull request named the fix of an untracked minor.
fn tracked_sweep(demo: &Demo, want: impl Fn(&str) -> Vec<String>) -> bool {
    let summary = demo.dir.path().join("step-summary.md");
    let days = [
        "2026-04-01",
        "2026-05-01",
        "2026-06-27",
        "2026-06-28",
        "2026-10-26",
        "2026-10-27",
        "2026-10-28",
    ];
    let mut saw_untracked_fix = false;
    for day in days {
        let want = want(day);
        let detect = demo.json(day, "detect");
        assert_eq!(tracked_rows(&detect["minors"]), want, "{day}: detect");
        assert_eq!(detect["new_minors"], serde_json::json!([]), "{day}: detect");
        let status = demo.json(day, "status");
        assert_eq!(tracked_rows(&status["stacks"]), want, "{day}: status");
        let plan = demo.json(day, "plan");
        assert_eq!(tracked_rows(&plan["series"]), want, "{day}: plan series[]");
        let (_, plan_text, _) = demo.run(day, &["plan"]);
        assert_eq!(summary_minors(&plan_text), want, "{day}: plan\n{plan_text}");
        if day == "2026-04-01" {
            continue;
        }
        let json = demo.release_summarised(day, &summary);
        assert_eq!(
            tracked_rows(&json["series"]),
            want,
            "{day}: release series[]"
        );
        let md = unescape(&std::fs::read_to_string(&summary).unwrap());
        assert_eq!(summary_minors(&md), want, "{day}: job summary\n{md}");
        let (_, text, _) = demo.run(day, &["release"]);
        assert_eq!(summary_minors(&text), want, "{day}: release\n{text}");
        let after = demo.json(day, "status");
        let board = unescape(&dashboard_body(demo));
        let rows: Vec<String> = SCHEDULE
            .iter()
            .map(|(m, _, _)| m.to_string())
            .filter(|m| {
                board.lines().any(|l| {
                    l.starts_with(&format!("| openstack/scs2 | {m} |"))
                        && !l.contains("not tracked")
                })
            })
            .collect();
        assert_eq!(rows, want, "{day}: dashboard\n{board}");
        for e in after["timeline"].as_array().unwrap() {
            assert!(want.contains(&str_of(&e["minor"])), "{day}: timeline {e}");
        }
        // The tenant pull requests' *Still affected* rows: a fix of a minor no longer tracked
        // waits for no release run.
        for pull in demo.pulls().iter().filter(|p| p["state"] == "open") {
            let body = str_of(&pull["body"]);
            for row in body.lines().filter(|l| l.starts_with("| openstack-scs2-")) {
                let cells: Vec<&str> = row.split(" | ").collect();
                let Some(fix) = cells.get(3).and_then(|v| v.strip_prefix('v')) else {
                    continue;
                };
                let minor = fix.rsplit_once('.').map_or(fix, |(m, _)| m);
                if !want.iter().any(|m| m == minor) {
                    saw_untracked_fix = true;
                    assert!(
                        !row.contains("release run ships it"),
                        "{day}: {minor} is not tracked: {row}"
                    );
                    assert!(row.contains("no longer tracks"), "{day}: {row}");
                }
            }
        }
    }
    saw_untracked_fix
}

/// A forge release's Kubernetes version has one answer in a run (`observe::versions`): when its
/// notes and its `metadata.yaml` disagree (here the asset is replaced by hand to say v1.34.6,
/// the notes say v1.34.7), `status` (and so the dashboard) and the tenant pull request that
/// proposes the release name the same version. The status read the notes first and the
/// tenants the file first, so the pull request said v1.34.6 where `status` said v1.34.7.
#[test]
fn a_release_whose_notes_and_metadata_disagree_has_one_kubernetes_version() {
    let demo = Demo::new();
    demo.release("2026-05-01");
    let tag = "openstack-scs2-1-34-v1";
    let releases = demo.forge().join("releases/scs/cluster-stacks");
    let dir = crate::support::local_release(&releases, tag);
    std::fs::write(
        dir.join("assets/metadata.yaml"),
        "apiVersion: metadata.clusterstack.x-k8s.io/v1alpha1\nversions:\n  kubernetes: v1.34.6\n",
    )
    .unwrap();
    let (_, _, after) = demo.release("2026-05-02");
    let said = str_of(&by_minor(&after["stacks"], "1.34")["latest_release"]["kubernetes"]);
    assert!(said.starts_with("v1.34."), "{after}");
    let acme = demo
        .pulls()
        .into_iter()
        .find(|p| p["state"] == "open" && str_of(&p["title"]).contains(tag))
        .expect("acme's pull request proposes 1.34");
    let body = str_of(&acme["body"]);
    let row = body
        .lines()
        .find(|l| l.starts_with(&format!("| [{tag}]")))
        .unwrap_or_else(|| panic!("{body}"));
    assert!(
        row.ends_with(&format!("| {said} |")),
        "status says {said}: {row}"
    );
}
