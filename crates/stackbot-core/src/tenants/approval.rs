//! Approval on the dashboard (`policy.upgrade.clusters: approval`), decided purely.
//!
//! A step waiting for approval is a checkbox line in a section of the dashboard issue. A
//! person ticks it; the next run opens exactly the ticked steps. Unticking withdraws: the bot
//! closes the step's pull request (as closed by the bot, so ticking again proposes it again).
//! The ticks live where people put them, in the issue body, so nothing else has to remember
//! them; the bot writes the section only when the steps waiting change, and takes the ticks
//! from the body as it reads it right before writing, so a tick is never lost to its own
//! write.
//!
//! The section has one writer, the tenant stage (`stackbot::pipeline::tenants`); the status
//! part of the dashboard is written by `stackbot::pipeline::dashboard`, which carries the
//! section over unchanged ([`carry`]).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

/// Starts the approval section of the dashboard body.
pub const START: &str = "<!-- stackbot:approvals -->";
/// Ends it.
pub const END: &str = "<!-- stackbot:approvals-end -->";
const ITEM: &str = "<!-- stackbot:approve ";

/// One step that needs a person's approval: which tenant, its branch (the step's identity),
/// what it does, and whether the dashboard has it ticked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Approval {
    pub tenant: String,
    pub branch: String,
    pub words: String,
    pub approved: bool,
}

/// `(tenant, branch)` of every step listed in `body`'s section, with whether it is ticked.
pub fn read(body: &str) -> BTreeMap<(String, String), bool> {
    let mut out = BTreeMap::new();
    for line in section(body).lines() {
        let t = line.trim_start();
        let ticked = if t.starts_with("- [x]") || t.starts_with("- [X]") {
            true
        } else if t.starts_with("- [ ]") {
            false
        } else {
            continue;
        };
        let Some(at) = t.find(ITEM) else { continue };
        let rest = &t[at + ITEM.len()..];
        let Some(end) = rest.find("-->") else {
            continue;
        };
        let mut words = rest[..end].split_whitespace();
        if let (Some(tenant), Some(branch)) = (words.next(), words.next()) {
            out.insert((tenant.to_string(), branch.to_string()), ticked);
        }
    }
    out
}

/// The ticked steps of `body`.
pub fn ticked(body: &str) -> BTreeSet<(String, String)> {
    read(body)
        .into_iter()
        .filter_map(|(k, t)| t.then_some(k))
        .collect()
}

/// The section of `body` (empty when it has none).
pub fn section(body: &str) -> &str {
    match (body.find(START), body.find(END)) {
        (Some(s), Some(e)) if e > s => &body[s..e + END.len()],
        _ => "",
    }
}

fn line(a: &Approval, ticked: bool) -> String {
    format!(
        "- [{}] `{}`: {} {ITEM}{} {} -->\n",
        if ticked { "x" } else { " " },
        a.tenant,
        a.words,
        a.tenant,
        a.branch
    )
}

/// The section listing `items` (the steps of the tenants this run planned) with the ticks of
/// `body` (the issue as read right now), plus the lines of `body` for tenants this run did not
/// plan (`kept`: another shard, `--tenant`, a tenant that failed), unchanged. Empty without
/// any step.
pub fn render(body: &str, items: &[Approval], planned: &BTreeSet<String>) -> String {
    let current = read(body);
    let mut lines: Vec<(String, String, String)> = Vec::new();
    for a in items {
        let ticked = current
            .get(&(a.tenant.clone(), a.branch.clone()))
            .copied()
            .unwrap_or(false);
        lines.push((a.tenant.clone(), a.branch.clone(), line(a, ticked)));
    }
    for l in section(body).lines() {
        let t = l.trim_start();
        if let Some(at) = t.find(ITEM) {
            let mut words = t[at + ITEM.len()..].split_whitespace();
            if let (Some(tenant), Some(branch)) = (words.next(), words.next())
                && !planned.contains(tenant)
            {
                lines.push((tenant.into(), branch.into(), format!("{t}\n")));
            }
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    lines.sort();
    lines.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    let mut out = format!(
        "{START}\n### Waiting for approval\n\nTick a step to let stackbot open its pull request on its next run; untick it to withdraw the pull request.\n\n"
    );
    for (_, _, l) in lines {
        out.push_str(&l);
    }
    out.push_str(END);
    out.push('\n');
    out
}

/// `body` with its section replaced by `new` (inserted before `footer`, or at the end, when it
/// has none; removed when `new` is empty).
pub fn splice(body: &str, new: &str, footer: &str) -> String {
    let old = section(body);
    if !old.is_empty() {
        let at = body.find(old).expect("a part of body");
        // The section's own line break goes with it; `new` brings its own.
        let rest = &body[at + old.len()..];
        let rest = rest.strip_prefix('\n').unwrap_or(rest);
        return format!("{}{new}{rest}", &body[..at]);
    }
    if new.is_empty() {
        return body.to_string();
    }
    match body.find(footer) {
        Some(at) => format!("{}{new}{}", &body[..at], &body[at..]),
        None if body.is_empty() || body.ends_with('\n') => format!("{body}{new}"),
        None => format!("{body}\n{new}"),
    }
}

/// How many bytes the section of `body` takes, with its line break (0 without one): the room
/// the status report leaves for it.
pub fn section_len(body: &str) -> usize {
    match section(body).len() {
        0 => 0,
        n => n + 1,
    }
}

/// The new dashboard body `fresh` with the section of the current body `existing` carried
/// over unchanged: the status writer never touches the approvals.
pub fn carry(existing: Option<&str>, fresh: &str, footer: &str) -> String {
    match existing.map(section) {
        Some(s) if !s.is_empty() => splice(fresh, &format!("{s}\n"), footer),
        _ => fresh.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(tenant: &str, branch: &str) -> Approval {
        Approval {
            tenant: tenant.into(),
            branch: branch.into(),
            words: format!("Cluster `prod` → 1.34 ({branch})"),
            approved: false,
        }
    }

    const FOOTER: &str = "<!-- footer -->";

    #[test]
    fn ticks_are_read_kept_and_lines_of_tenants_not_planned_stay() {
        let planned: BTreeSet<String> = ["acme".to_string(), "globex".to_string()].into();
        let body = format!("status\n{FOOTER}\nchanged today\n");
        let s = render(&body, &[step("acme", "b1"), step("globex", "b2")], &planned);
        let body = splice(&body, &s, FOOTER);
        assert!(
            body.starts_with("status\n<!-- stackbot:approvals -->"),
            "{body}"
        );
        assert!(
            body.ends_with(&format!("{END}\n{FOOTER}\nchanged today\n")),
            "{body}"
        );
        assert!(ticked(&body).is_empty());

        // A person ticks acme's step.
        let body = body.replace("- [ ] `acme`", "- [x] `acme`");
        assert_eq!(
            ticked(&body),
            [("acme".to_string(), "b1".to_string())].into()
        );
        // A run of acme alone keeps its tick and globex's line.
        let only: BTreeSet<String> = ["acme".to_string()].into();
        let s = render(&body, &[step("acme", "b1")], &only);
        assert_eq!(splice(&body, &s, FOOTER), body, "nothing to write");
        // acme's step is gone (merged): its line goes, globex's stays.
        let s = render(&body, &[], &only);
        let after = splice(&body, &s, FOOTER);
        assert!(!after.contains("b1") && after.contains("b2"), "{after}");
        // No step at all: no section.
        let s = render(&after, &[], &planned);
        assert_eq!(
            splice(&after, &s, FOOTER),
            format!("status\n{FOOTER}\nchanged today\n")
        );
    }

    #[test]
    fn the_status_writer_carries_the_section_over() {
        let planned: BTreeSet<String> = ["acme".to_string()].into();
        let old = splice(
            &format!("old status\n{FOOTER}\n"),
            &render("", &[step("acme", "b1")], &planned).replace("[ ]", "[x]"),
            FOOTER,
        );
        let new = carry(Some(&old), &format!("new status\n{FOOTER}\n"), FOOTER);
        assert!(
            new.starts_with("new status\n<!-- stackbot:approvals -->"),
            "{new}"
        );
        assert_eq!(ticked(&new), ticked(&old));
        assert_eq!(carry(None, "x\n", FOOTER), "x\n");
    }
}
