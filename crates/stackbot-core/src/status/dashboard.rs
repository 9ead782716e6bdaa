//! The dashboard issue: which existing issue it is, and whether it needs an edit. Pure.
//!
//! One issue in the cluster-stacks repository carries [`MARKER`] (a hidden HTML comment).
//! The marker, not the title or a label, is its identity: a label only narrows the search
//! (anyone can remove it), and a run that crashed right after creating the issue finds it by
//! the marker next time instead of opening a second one. Everything after [`FOOTER`] (when it
//! was last changed, by which run) is ignored when comparing, so a run that changes nothing
//! writes nothing.

use crate::forge::{IssueInfo, IssueState};

/// Identifies the dashboard issue.
pub const MARKER: &str = "<!-- stackbot:dashboard -->";
/// Starts the part of the body that does not count as content.
pub const FOOTER: &str = "<!-- stackbot:dashboard-footer -->";

/// What the run does to the dashboard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// No issue carries the marker: open one.
    Create,
    /// The issue's title or content differs: edit it in place.
    Update { number: u64 },
    /// Nothing to do.
    Unchanged { number: u64 },
}

/// The dashboard among `issues`: the open issue carrying the marker with the lowest number,
/// else the closed one with the lowest number (a closed dashboard is still edited, never
/// replaced).
pub fn find(issues: &[IssueInfo]) -> Option<&IssueInfo> {
    let marked = || issues.iter().filter(|i| i.body.contains(MARKER));
    marked()
        .filter(|i| i.state == IssueState::Open)
        .min_by_key(|i| i.number)
        .or_else(|| marked().min_by_key(|i| i.number))
}

/// The body up to the footer: what is compared.
pub fn content(body: &str) -> &str {
    body.split(FOOTER).next().unwrap_or(body).trim_end()
}

/// Whether two bodies say the same (footers ignored).
pub fn same_content(a: &str, b: &str) -> bool {
    content(a) == content(b)
}

/// Decide against the existing dashboard (`None`: none found).
pub fn decide(existing: Option<&IssueInfo>, title: &str, body: &str) -> Action {
    match existing {
        None => Action::Create,
        Some(i) if i.title == title && same_content(&i.body, body) => {
            Action::Unchanged { number: i.number }
        }
        Some(i) => Action::Update { number: i.number },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issue(number: u64, body: &str, state: IssueState) -> IssueInfo {
        IssueInfo {
            number,
            title: "stackbot dashboard".into(),
            body: body.into(),
            state,
            labels: vec![],
            html_url: String::new(),
        }
    }

    fn body(content: &str, footer: &str) -> String {
        format!("{MARKER}\n{content}\n{FOOTER}\n{footer}\n")
    }

    #[test]
    fn the_marker_finds_the_dashboard_open_ones_first() {
        let all = [
            issue(3, "someone else's issue", IssueState::Open),
            issue(5, &body("old", ""), IssueState::Closed),
            issue(9, &body("x", ""), IssueState::Open),
            issue(12, &body("y", ""), IssueState::Open),
        ];
        assert_eq!(find(&all).unwrap().number, 9);
        assert_eq!(find(&all[..2]).unwrap().number, 5, "a closed one is reused");
        assert!(find(&all[..1]).is_none());
    }

    #[test]
    fn only_content_before_the_footer_counts() {
        let old = issue(
            7,
            &body("| 1.34 | current |", "last changed 09:00"),
            IssueState::Open,
        );
        let same = body("| 1.34 | current |", "last changed 10:00 by run 2");
        let changed = body("| 1.34 | overdue |", "last changed 10:00");
        let t = "stackbot dashboard";
        assert_eq!(
            decide(Some(&old), t, &same),
            Action::Unchanged { number: 7 }
        );
        assert_eq!(
            decide(Some(&old), t, &changed),
            Action::Update { number: 7 }
        );
        assert_eq!(
            decide(Some(&old), "renamed", &same),
            Action::Update { number: 7 }
        );
        assert_eq!(decide(None, t, &same), Action::Create);
    }
}
