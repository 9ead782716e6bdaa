//! The full pipeline (`stackbot release`: render, package, tag, publish, then the tenant pull
//! requests) as a user runs it, against the fake GitHub, interrupted at every write request
//! (issue 7, item 1). A clean run records the ordered writes; then for every k the k-th write
//! fails before it takes effect (500) or after it did (502 once applied), retries off so the
//! failure reaches the run; a second run must finish the job, ending in the clean run's state
//! with no duplicate release, draft, tag, pull request or comment.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use support::fake_github::{FakeGithub, Fault, Faults, Snapshot, demo};

const TOKEN: &str = "ghp_crashSWEEPtoken_0123456789";
const TOKEN_ENV: &str = "STACKBOT_SWEEP_TOKEN";

use crate::support::config::DemoConfig;

/// The demo stacks (4 minors, 2 complete as of 2026-05-01) on the fake GitHub, no retries,
/// two tenants.
fn config(dir: &Path, fake: &FakeGithub) -> PathBuf {
    DemoConfig::new()
        .on_github(&fake.api_url(), &fake.upload_url(), TOKEN_ENV)
        .max_retries(0)
        .tenant("acme")
        .tenant("globex")
        .write(dir)
}

fn world() -> (FakeGithub, tempfile::TempDir, PathBuf) {
    let fake = demo::start(
        TOKEN,
        &["acme/gitops", "globex/gitops"],
        demo::PINNED_CLUSTERSTACK,
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &fake);
    (fake, dir, cfg)
}

fn release(dir: &Path, cfg: &Path) -> Output {
    Command::cargo_bin("stackbot")
        .unwrap()
        .current_dir(dir)
        .env(TOKEN_ENV, TOKEN)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .args([
            "-c",
            cfg.to_str().unwrap(),
            "--now",
            "2026-05-01",
            "release",
        ])
        .output()
        .unwrap()
}

/// Each fake listens on its own port, which pull request bodies link to; it is replaced by
/// `FORGE`. Everything else — files, history, tags, release notes and assets, pull requests
/// (with the release notes they embed), comments and the dashboard issue — must match
/// exactly; of the dashboard only its content counts (its footer says when it last changed).
fn comparable(mut s: Snapshot, fake: &FakeGithub) -> Snapshot {
    let base = format!("http://{}", fake.addr());
    for r in s.repos.values_mut() {
        for rel in &mut r.releases {
            rel.body = rel.body.replace(&base, "FORGE");
        }
        for p in &mut r.pulls {
            p.body = p.body.replace(&base, "FORGE");
        }
        for c in &mut r.comments {
            c.body = c.body.replace(&base, "FORGE");
        }
        for i in &mut r.issues {
            i.body = stackbot::status::dashboard::content(&i.body).replace(&base, "FORGE");
        }
    }
    s
}

/// The first difference, readably (the snapshots hold whole file trees).
fn first_difference(got: &Snapshot, want: &Snapshot) -> String {
    for (name, w) in &want.repos {
        let Some(g) = got.repos.get(name) else {
            return format!("repository {name} missing");
        };
        if g.branches.keys().ne(w.branches.keys()) {
            return format!(
                "{name}: branches {:?} vs {:?}",
                g.branches.keys(),
                w.branches.keys()
            );
        }
        for (b, wb) in &w.branches {
            let gb = &g.branches[b];
            if gb.history != wb.history {
                return format!("{name} {b}: history {:?} vs {:?}", gb.history, wb.history);
            }
            for (f, wf) in &wb.files {
                if gb.files.get(f) != Some(wf) {
                    return format!("{name} {b}: file {f} differs");
                }
            }
            if gb.files.len() != wb.files.len() {
                return format!("{name} {b}: file sets differ");
            }
        }
        if g.tags != w.tags {
            return format!("{name}: tags {:?} vs {:?}", g.tags.keys(), w.tags.keys());
        }
        if g.releases != w.releases {
            return format!("{name}: releases {:#?} vs {:#?}", g.releases, w.releases);
        }
        if g.pulls != w.pulls {
            let (gb, wb): (Vec<&str>, Vec<&str>) = (
                g.pulls.iter().map(|p| p.body.as_str()).collect(),
                w.pulls.iter().map(|p| p.body.as_str()).collect(),
            );
            let diff = similar::TextDiff::from_lines(wb.join("\n"), gb.join("\n"))
                .unified_diff()
                .to_string();
            return format!("{name}: pull requests differ:\n{diff}");
        }
        if g.comments != w.comments {
            return format!("{name}: comments {:#?} vs {:#?}", g.comments, w.comments);
        }
        if g.issues != w.issues {
            return format!("{name}: issues {:#?} vs {:#?}", g.issues, w.issues);
        }
    }
    "extra repositories".into()
}

fn assert_no_duplicates(s: &Snapshot, what: &str) {
    for (name, r) in &s.repos {
        assert!(
            r.releases.iter().all(|r| !r.draft),
            "{what}: draft left in {name}"
        );
        let mut tags: Vec<&str> = r.releases.iter().map(|r| r.tag.as_str()).collect();
        tags.dedup();
        assert_eq!(tags.len(), r.releases.len(), "{what}: one release per tag");
        let mut open: Vec<&str> = r
            .pulls
            .iter()
            .filter(|p| p.state == "open")
            .map(|p| p.head.as_str())
            .collect();
        let n = open.len();
        open.sort();
        open.dedup();
        assert_eq!(
            open.len(),
            n,
            "{what}: one open pull request per branch in {name}"
        );
        let mut comments: Vec<(u64, &str)> = r
            .comments
            .iter()
            .map(|c| (c.issue, c.body.as_str()))
            .collect();
        let n = comments.len();
        comments.sort();
        comments.dedup();
        assert_eq!(comments.len(), n, "{what}: duplicate comment in {name}");
        let dashboards = r
            .issues
            .iter()
            .filter(|i| i.body.contains(stackbot::status::dashboard::MARKER))
            .count();
        assert!(
            dashboards <= 1,
            "{what}: {dashboards} dashboard issues in {name}"
        );
    }
}

/// The clean run's state and its ordered writes.
fn clean() -> (Snapshot, Vec<String>) {
    let (fake, dir, cfg) = world();
    let out = release(dir.path(), &cfg);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let snap = fake.snapshot();
    assert!(!snap.repos["scs/cluster-stacks"].releases.is_empty());
    for t in ["acme", "globex"] {
        assert_eq!(
            snap.repos[&format!("{t}/gitops")].pulls.len(),
            1,
            "the clean run opens one pull request per tenant"
        );
    }
    let writes = fake.write_log().into_iter().map(|w| w.route).collect();
    (comparable(snap, &fake), writes)
}

fn sweep(fault: Fault) -> (usize, usize) {
    let (want, writes) = clean();
    assert!(writes.len() >= 20, "release + 2 tenants: {writes:?}");
    let mut recovered = 0;
    // `SWEEP_FROM=k` starts at the k-th write, to debug one interruption point.
    let from: usize = std::env::var("SWEEP_FROM")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    for k in from..=writes.len() {
        let (fake, dir, cfg) = world();
        fake.set_faults(Faults::write(k, fault.clone()));
        let first = release(dir.path(), &cfg);
        let stderr = String::from_utf8_lossy(&first.stderr);
        assert!(!stderr.contains("panicked at"), "{stderr}");
        fake.clear_faults();
        let second = release(dir.path(), &cfg);
        let what = format!("write {k} ({}) failed with {fault:?}", writes[k - 1]);
        assert!(
            second.status.success(),
            "{what}: the re-run failed:\n{}",
            String::from_utf8_lossy(&second.stderr)
        );
        let got = comparable(fake.snapshot(), &fake);
        assert_no_duplicates(&got, &what);
        assert!(
            got == want,
            "{what}: the re-run did not reach the clean state: {}",
            first_difference(&got, &want)
        );
        recovered += 1;
    }
    eprintln!(
        "crash sweep ({fault:?}): {recovered} of {} interruption points recover",
        writes.len()
    );
    (recovered, writes.len())
}

#[test]
fn a_write_failing_before_it_takes_effect_is_finished_by_the_next_run() {
    let (recovered, total) = sweep(Fault::Status(500));
    assert_eq!(recovered, total);
}

#[test]
fn a_write_failing_after_it_took_effect_is_finished_by_the_next_run() {
    let (recovered, total) = sweep(Fault::AfterSuccess(502));
    assert_eq!(recovered, total);
}
