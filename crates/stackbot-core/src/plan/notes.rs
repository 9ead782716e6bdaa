//! The words of a release: commit message summary, release notes and the SCS deadline line.
//!
//! Notes compare against what the previous release *shipped* (its recorded release set), never
//! against the base branch, so a resumed run writes the same notes as an uninterrupted one.

use crate::model::ReleaseSet;
use crate::package::Versions;

use super::Desired;

pub(crate) fn commit_summary(d: &Desired) -> String {
    format!(
        "Kubernetes {}, node image {}.\n\nRendered by stackbot from the release set in stackbot.lock.",
        d.set.kubernetes, d.set.node_image.name
    )
}

/// Why this release is not the newest patch: the record detection kept of each patch it
/// stepped over ([`crate::resolve::HeldBack::skipped`]); empty when it is the newest.
fn stepped_over(d: &Desired) -> String {
    if d.stepped_over.is_empty() {
        return String::new();
    }
    let mut s = String::from("### Newer patches not in this release\n\n");
    for p in &d.stepped_over {
        s.push_str(&format!("- {p}\n"));
    }
    s.push('\n');
    s
}

/// The SCS 0210 line of the notes: the deadline of the rule that governed the series on the
/// day of the release (the model `detect` and `status` gave that day, for what the series
/// offered before it), met or missed.
pub fn deadline_line(d: &crate::compliance::Deadlines, now: chrono::NaiveDate) -> String {
    match d.words() {
        Some(w) if d.overdue => {
            format!("SCS 0210 deadline: {w} — **missed** (released {now}).\n")
        }
        Some(w) => format!("SCS 0210 deadline: {w} — met (released {now}).\n"),
        None if d.scs0210.verdict == crate::compliance::Verdict::Unknown => format!(
            "SCS 0210 deadline: unknown ({}).\n",
            d.scs0210.unknown.join("; ")
        ),
        None => format!(
            "SCS 0210 deadline: none applied (no newer patch was waiting; released {now}).\n"
        ),
    }
}

/// The release notes: what is in the release and what changed since the previous one.
pub fn release_notes(
    tag: &str,
    d: &Desired,
    previous: Option<&ReleaseSet>,
    versions: &Versions,
    fixed: &[crate::compliance::CveFact],
    deadline: &crate::compliance::Deadlines,
    now: chrono::NaiveDate,
) -> String {
    let set = &d.set;
    let mut s = format!("## {tag}\n\n");
    let change = |old: Option<String>, new: &str| match old {
        Some(o) if o != new => format!(" (was {o})"),
        Some(_) => " (unchanged)".to_string(),
        None => String::new(),
    };
    s.push_str(&format!(
        "- Kubernetes: **{}**{}\n",
        set.kubernetes,
        change(
            previous.map(|p| p.kubernetes.to_string()),
            &set.kubernetes.to_string()
        )
    ));
    s.push_str(&format!(
        "- Node image: `{}`{}\n  - URL: {}\n  - sha256: `{}`\n",
        set.node_image.name,
        change(
            previous.map(|p| p.node_image.name.clone()),
            &set.node_image.name
        ),
        set.node_image.url,
        set.node_image.sha256
    ));
    s.push_str(&format!(
        "- Versions: clusterStack {}, clusterAddon {}, nodeImage {}\n",
        versions.cluster_stack.dot(),
        versions.cluster_addon.dot(),
        versions.node_image.dot()
    ));
    if !set.components.is_empty() {
        s.push_str("\n| component | chart | version | change |\n|---|---|---|---|\n");
        for (key, c) in &set.components {
            let was = previous
                .and_then(|p| p.components.get(key))
                .map(|p| p.version.clone());
            let what = match was {
                None if previous.is_some() => "new".to_string(),
                None => String::new(),
                Some(w) if w == c.version => "unchanged".to_string(),
                Some(w) => format!("{w} → {}", c.version),
            };
            s.push_str(&format!(
                "| {key} | {} | {} | {what} |\n",
                c.chart, c.version
            ));
        }
        if let Some(p) = previous {
            for key in p
                .components
                .keys()
                .filter(|k| !set.components.contains_key(*k))
            {
                s.push_str(&format!("| {key} | | | removed |\n"));
            }
        }
    }
    s.push('\n');
    s.push_str(&stepped_over(d));
    if !fixed.is_empty() {
        // What tenants route on: the critical CVEs this release fixes, compared with what the
        // series' previous release shipped.
        s.push_str("### Critical CVEs fixed\n\n");
        for c in fixed {
            let score = c.score.map_or(String::new(), |x| format!(", CVSS {x}"));
            let affected: Vec<String> = c.affected.iter().map(ToString::to_string).collect();
            s.push_str(&format!(
                "- [{}]({}){score}: affected {}\n",
                c.id,
                c.url,
                affected.join(", ")
            ));
        }
        s.push('\n');
    }
    s.push_str(&deadline_line(deadline, now));
    s
}
