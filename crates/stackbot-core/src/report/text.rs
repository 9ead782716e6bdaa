//! Plain-text renderings of plans and run outcomes (`--format text`), kept apart from the CLI
//! so the command layer only chooses a format and prints.

use std::fmt::Write as _;

use crate::outcome::Outcome;
use crate::plan::{self, Plan};
use crate::tenants::TenantReport;

use super::preview::StackDiff;

/// A value in a terminal table or line, `-` when there is none.
pub fn dash<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |x| x.to_string())
}

/// A terminal table: columns padded to their widest cell, two spaces apart, no trailing blanks.
pub fn columns(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", padded.join("  ").trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
    out
}

/// The unified diffs of the rendered files of every planned release (base branch → rendered),
/// one entry per release (possibly without files).
pub fn release_diffs(p: &Plan) -> Vec<StackDiff> {
    p.releases
        .iter()
        .map(|r| StackDiff {
            stack: r.stack.clone(),
            minor: r.minor.clone(),
            files: super::from_plan::tree_diffs(&r.path, &r.base_files, &r.rendered),
        })
        .collect()
}

/// The unified diffs `release --dry-run` prints after the plan: every rendered file of every
/// release, then every tenant file a tenant pull request would change.
pub fn plan_diffs(p: &Plan) -> String {
    let mut s = String::new();
    for d in release_diffs(p) {
        for f in d.files {
            if f.unified.is_empty() {
                s.push_str(&format!("(binary or empty) {}\n", f.path));
            } else {
                s.push_str(&f.unified);
            }
        }
    }
    for t in p
        .tenants
        .iter()
        .filter_map(super::from_plan::tenant_from_json)
    {
        if t.action == crate::tenants::Action::None || t.diff.is_empty() {
            continue;
        }
        s.push_str(&format!(
            "# tenant {} ({}, {}): {}\n{}",
            t.tenant, t.repository, t.branch, t.action, t.diff
        ));
        if !t.diff.ends_with('\n') {
            s.push('\n');
        }
    }
    s
}

/// Human-readable plan.
pub fn plan_text(p: &Plan) -> String {
    let mut s = String::new();
    if p.releases.is_empty() {
        if p.skipped.iter().all(|k| is_current(k) && !is_behind(p, k)) {
            s.push_str("Nothing to release: every stack × minor is up to date.\n");
        } else {
            s.push_str("Nothing to release now; the skipped stack × minors below say why.\n");
        }
    }
    for r in &p.releases {
        let _ = writeln!(
            s,
            "release {} ({} {}, Kubernetes {}, clusterAddon {}, nodeImage {}){}{}",
            r.tag,
            r.stack,
            r.minor,
            r.kubernetes,
            r.versions.cluster_addon,
            r.versions.node_image,
            if r.resumed {
                " — finishing an interrupted run"
            } else {
                ""
            },
            series_tail(&p.series, &r.tag)
        );
        for step in &r.steps {
            let _ = writeln!(s, "  - {}", describe(step));
        }
        for a in &r.assets {
            let _ = writeln!(
                s,
                "    asset {} ({} bytes, sha256 {})",
                a.name,
                a.size,
                &a.sha256[..12]
            );
        }
    }
    for step in &p.cleanup {
        let _ = writeln!(s, "cleanup: {}", describe(step));
    }
    // Each series' line says where it stands as `status` does (`Plan::series`).
    for k in &p.skipped {
        let tail = series_tail(&p.series, &k.what.to_string());
        let _ = writeln!(s, "skip {}: {}{tail}", k.what, k.reason);
    }
    for d in &p.degraded {
        let _ = writeln!(
            s,
            "{d}{}",
            if d.transient {
                "; an upstream error: `release` exits 1"
            } else {
                "; `--allow-downgrade` releases it anyway"
            }
        );
    }
    for f in &p.failed {
        let _ = writeln!(s, "failed {}: {}", f.what, f.reason);
    }
    for t in p
        .tenants
        .iter()
        .filter_map(crate::report::from_plan::tenant_from_json)
        .filter(|t| t.action != crate::tenants::Action::None)
    {
        let _ = writeln!(
            s,
            "tenant {} ({}, {}): {} pull request changing {}",
            t.tenant,
            t.repository,
            t.branch,
            t.action,
            t.files.join(", ")
        );
    }
    s
}

pub fn describe(step: &plan::Step) -> String {
    match step {
        plan::Step::Commit { branch, files, .. } => {
            format!("commit {} file(s) to {branch}", files.len())
        }
        plan::Step::ReleasePull {
            branch,
            base,
            files,
            push,
            pull,
            ..
        } => {
            let push = match push {
                plan::BranchPush::Keep => {
                    format!("{branch} already holds the {} file(s)", files.len())
                }
                plan::BranchPush::Create => format!("create {branch} with {} file(s)", files.len()),
                plan::BranchPush::Reset { from } => format!(
                    "rebuild {branch} (was {}) on {base} with {} file(s)",
                    &from[..from.len().min(12)],
                    files.len()
                ),
            };
            let pull = match pull {
                plan::PullAction::Open => format!("open a pull request into {base}"),
                plan::PullAction::Update { number, .. } => format!("update pull request #{number}"),
                plan::PullAction::Keep { number, .. } => {
                    format!("pull request #{number} is up to date")
                }
            };
            format!("{push}; {pull}")
        }
        plan::Step::Tag { tag, commit, .. } => match commit {
            Some(c) => format!("tag {tag} at {}", &c[..c.len().min(12)]),
            None => format!("tag {tag} on that commit"),
        },
        plan::Step::Draft { tag } => format!("draft release {tag} with every asset"),
        plan::Step::Publish { tag, latest } => {
            if *latest {
                format!("publish {tag} as the Latest release")
            } else {
                format!("publish {tag}")
            }
        }
        plan::Step::Announce { number, tag } => {
            format!("comment on the merged pull request #{number} that it is published as {tag}")
        }
        plan::Step::DeleteDraft { id, tag, reason } => {
            format!("delete draft {id} of {tag} ({reason})")
        }
        plan::Step::OciPush {
            tag,
            target,
            manifest_digest,
            layers,
            ..
        } => {
            let mut s = format!("push {tag} to OCI {target} (manifest {manifest_digest})");
            for l in layers {
                let _ = write!(
                    s,
                    "\n      layer {} {} ({})",
                    l.file, l.digest, l.media_type
                );
            }
            s
        }
    }
}

/// The summary of a `release` run: what was released, pushed, skipped, and each tenant's
/// pull request.
pub fn outcome_text(out: &Outcome, p: &Plan, tenants: &[TenantReport]) -> String {
    let mut s = String::new();
    nothing_to_release(&mut s, out, p);
    published(&mut s, out, p);
    for k in &out.skipped {
        let tail = series_tail(&p.series, &k.what.to_string());
        let verb = match (is_current(k), tail.is_empty()) {
            (true, true) => "up to date",
            // Nothing new to release, yet the series is behind its newest patch.
            (true, false) => "waiting",
            (false, _) => "skipped",
        };
        let _ = writeln!(s, "{verb} {}: {}{tail}", k.what, k.reason);
    }
    for d in &p.degraded {
        let _ = writeln!(s, "{d}");
    }
    for f in p.failed.iter().chain(&out.failed) {
        let _ = writeln!(s, "failed {}: {}", f.what, f.reason);
    }
    for t in tenants {
        if let Some(line) = tenant_line(t) {
            s.push_str(&line);
        }
    }
    s
}

/// A series skipped because nothing changed since its last release: up to date.
fn is_current(k: &crate::plan::Skipped) -> bool {
    k.reason.is_unchanged()
}

/// A series skipped as unchanged that still waits for its newest patch (status: not current).
fn is_behind(p: &Plan, k: &crate::plan::Skipped) -> bool {
    is_current(k) && !series_tail(&p.series, &k.what.to_string()).is_empty()
}

/// `; waiting, waits for node image … (critical CVE: 33 days overdue); SCS 0210 deadline 2026-04-29 (33
/// days overdue, critical CVE, for v1.33.11)`: where a series not current stands after the run,
/// in the words of `status` (its rows, [`Plan::series`], also in the job summary): its state (`releasable`, `release PR
/// open`, `waiting`, …), what it waits for, the deadline. `what` is the series prefix
/// (`openstack-scs2-1-33`), a release tag of it, or `openstack/scs2 1.33`.
pub fn series_tail(series: &[crate::status::StackStatus], what: &str) -> String {
    let Some(st) = series.iter().find(|st| {
        let prefix = crate::model::series_prefix(&st.stack, st.minor);
        what == prefix
            || what == format!("{} {}", st.stack, st.minor)
            || what
                .strip_prefix(&prefix)
                .is_some_and(|rest| rest.starts_with("-v"))
    }) else {
        return String::new();
    };
    if st.state == crate::status::StackState::Current {
        return String::new();
    }
    let mut out = format!("; {}", st.state.word());
    let waits: Vec<String> = st
        .waiting_for
        .iter()
        .map(crate::report::status::waiting_short)
        .collect();
    if !waits.is_empty() {
        let _ = write!(out, ", waits for {}", waits.join(", "));
    }
    if let Some(d) = st.deadlines.words() {
        let _ = write!(out, "; SCS 0210 deadline {d}");
    }
    out
}

/// The opening line of a run that published nothing. "Up to date" only when it is true of
/// every series: a series waiting for upstream (no node image yet) is listed below, and the
/// summary must not contradict that list.
fn nothing_to_release(s: &mut String, out: &Outcome, p: &Plan) {
    let oci_pushed = out
        .oci
        .iter()
        .any(|o| matches!(o.outcome, crate::oci::PushOutcome::Pushed { .. }));
    if !out.released.is_empty() || !out.pull_requests.is_empty() || oci_pushed {
        return;
    }
    let current = (out.skipped.iter())
        .filter(|k| is_current(k) && !is_behind(p, k))
        .count();
    let waiting =
        out.skipped.len() - current + p.degraded.len() + p.failed.len() + out.failed.len();
    if waiting == 0 {
        s.push_str("Nothing to release: every stack × minor is up to date.\n");
    } else {
        let _ = writeln!(
            s,
            "Nothing to release now: {current} stack × minor up to date, {waiting} waiting or held back (below)."
        );
    }
}

/// What the run published: releases, OCI pushes (verified), release pull requests.
fn published(s: &mut String, out: &Outcome, p: &Plan) {
    for t in &out.released {
        match p.releases.iter().find(|r| &r.tag == t) {
            Some(r) => {
                let _ = writeln!(
                    s,
                    "released {t} (Kubernetes {}, {} assets){}",
                    r.kubernetes,
                    r.assets.len(),
                    series_tail(&p.series, t)
                );
            }
            None => {
                let _ = writeln!(s, "released {t}");
            }
        }
    }
    for o in &out.oci {
        let what = match &o.outcome {
            crate::oci::PushOutcome::Pushed { .. } => "pushed",
            crate::oci::PushOutcome::AlreadyPresent { .. } => "already in",
        };
        let _ = writeln!(
            s,
            "OCI: {} {what} {} ({}, verified)",
            o.tag,
            o.reference,
            o.outcome.digest()
        );
    }
    for u in &out.pull_requests {
        let _ = writeln!(s, "release pull request: {u}");
    }
}

/// A tenant's line (with its newline), unless it had nothing to propose.
fn tenant_line(t: &TenantReport) -> Option<String> {
    use crate::tenants::Outcome as T;
    if t.outcome == T::Unchanged && t.pull.is_none() {
        return None; // nothing to propose
    }
    let pr = t.pull.map(|n| format!(" #{n}")).unwrap_or_default();
    let what = match t.outcome {
        T::Opened => format!("opened pull request{pr}"),
        T::Updated => format!("updated pull request{pr}"),
        T::Unchanged => format!("pull request{pr} already up to date"),
        T::Closed => format!("closed pull request{pr}"),
        T::Blocked => format!(
            "blocked: {}",
            t.note
                .as_deref()
                .unwrap_or("the bot branch has commits by someone else")
        ),
        T::Planned => "planned".to_string(),
        T::Failed => format!("failed: {}", t.error.as_deref().unwrap_or("?")),
    };
    Some(format!(
        "tenant {} ({}{}): {what}{}\n",
        t.tenant,
        t.repository,
        t.branch
            .as_deref()
            .map(|b| format!(", {b}"))
            .unwrap_or_default(),
        if t.releases.is_empty() {
            String::new()
        } else {
            format!(" for {}", t.releases.join(", "))
        }
    ))
}
