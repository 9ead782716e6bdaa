//! Reading a tenant's bot branch and pull request by content, purely: whose commits are on
//! the branch, whether it already holds the desired content, and what a human declined.
//!
//! Everything the next run needs is kept where it reads it anyway: the commit trailer
//! (`Stackbot-Content: <id>`) says which content a bot commit holds, and the hidden marker in
//! the pull request body says which stack, content and releases the pull request proposed.
//! A closed pull request therefore remembers what a human declined even after its branch is
//! deleted, and a re-worded tenant file does not make the same releases look new.

use std::collections::BTreeMap;

use super::plan::{FileEdit, Observed};
use crate::forge::{CommitInfo, PullInfo, PullState};
use crate::model::StackId;

/// The trailer of a bot commit naming the content it holds.
pub const CONTENT_TRAILER: &str = "Stackbot-Content:";

/// Added to a pull request body when the bot itself closes the pull request (the tenant
/// caught up): such a pull request was not declined by a human.
pub const CLOSED_BY_BOT: &str = "<!-- stackbot:closed-by-stackbot -->";

/// The hidden marker of a tenant pull request body.
pub fn marker(stack: &StackId, content: &str, releases: &[String]) -> String {
    format!(
        "<!-- stackbot:tenant {stack} content={content} releases={} -->",
        releases.join(",")
    )
}

/// What a pull request body's marker says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub stack: String,
    pub content: String,
    /// `None` for markers written before releases were recorded.
    pub releases: Option<Vec<String>>,
}

/// The marker of `body`, if it carries one.
pub fn parse_marker(body: &str) -> Option<Marker> {
    let start = body.find("<!-- stackbot:tenant ")?;
    let rest = &body[start + "<!-- stackbot:tenant ".len()..];
    let inner = &rest[..rest.find("-->")?];
    let mut words = inner.split_whitespace();
    let stack = words.next()?.to_string();
    let mut m = Marker {
        stack,
        content: String::new(),
        releases: None,
    };
    for w in words {
        if let Some(c) = w.strip_prefix("content=") {
            m.content = c.to_string();
        } else if let Some(r) = w.strip_prefix("releases=") {
            m.releases = Some(
                r.split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect(),
            );
        }
    }
    Some(m)
}

/// A merge commit that brings the base into the branch (GitHub's "Update branch", or `git
/// merge main` by hand): one of its parents is not on the branch, so it comes from the base.
/// `on_branch` are the commits the branch has and the base lacks.
fn is_base_merge(c: &CommitInfo, on_branch: &[CommitInfo]) -> bool {
    c.parents.len() > 1
        && c.parents
            .iter()
            .any(|p| !on_branch.iter().any(|b| &b.sha == p))
}

/// Commits on the branch (and not on the base) that are neither the bot's nor merges of the
/// base into the branch: a person's edits, which the bot never pushes over.
pub fn human_commits(on_branch: &[CommitInfo], bot_email: &str) -> Vec<String> {
    on_branch
        .iter()
        .filter(|c| !c.is_by(bot_email) && !is_base_merge(c, on_branch))
        .map(|c| c.sha.clone())
        .collect()
}

/// Whether the branch holds exactly the content `id`: its newest commit by the bot carries the
/// trailer, and everything after it only merged the base in.
pub fn holds(on_branch: &[CommitInfo], id: &str, bot_email: &str) -> bool {
    let trailer = format!("{CONTENT_TRAILER} {id}");
    match on_branch
        .iter()
        .rposition(|c| c.is_by(bot_email) && c.parents.len() <= 1)
    {
        Some(i) => {
            on_branch[i].message.lines().any(|l| l.trim() == trailer)
                && on_branch[i + 1..]
                    .iter()
                    .all(|c| is_base_merge(c, on_branch))
        }
        None => false,
    }
}

/// Whether the branch's files are exactly the desired ones: every file the bot edits as it
/// wants it, every other stack and cluster file as the base has it. This is how a branch that
/// a person brought up to date ("Update branch" after the base changed an edited file) is
/// recognised as current: its bot commit's trailer names the content of the older base, but
/// rebuilding it would force-push the same files over the person's merge.
pub fn holds_files(
    branch: Option<&BTreeMap<String, Vec<u8>>>,
    observed: &Observed,
    edits: &[FileEdit],
) -> bool {
    let Some(branch) = branch else {
        return false;
    };
    !edits.is_empty()
        && observed
            .stack_files
            .iter()
            .chain(&observed.cluster_files)
            .all(|(path, base)| {
                let want = edits
                    .iter()
                    .find(|e| &e.path == path)
                    .map_or(base, |e| &e.after);
                branch.get(path) == Some(want)
            })
}

/// Whether `pull` is a pull request of `stack` a human closed without merging while it
/// proposed every release in `releases`: proposing them again would reopen what was declined.
/// Pull requests the bot closed itself, and merged ones, declined nothing.
pub fn declined(pull: &PullInfo, stack: &StackId, content: &str, releases: &[String]) -> bool {
    if pull.state != PullState::Closed || pull.body.contains(CLOSED_BY_BOT) {
        return false;
    }
    let Some(m) = parse_marker(&pull.body) else {
        return false;
    };
    if m.stack != stack.to_string() {
        return false;
    }
    match m.releases {
        Some(old) => !releases.is_empty() && releases.iter().all(|r| old.contains(r)),
        None => m.content == content,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOT: &str = "bot@x";

    fn c(sha: &str, email: &str, parents: &[&str], message: &str) -> CommitInfo {
        CommitInfo {
            sha: sha.into(),
            author_name: "n".into(),
            author_email: email.into(),
            message: message.into(),
            parents: parents.iter().map(|p| p.to_string()).collect(),
            by_app: false,
        }
    }

    fn stack() -> StackId {
        "openstack/scs2".parse().unwrap()
    }

    #[test]
    fn a_branch_holds_the_desired_files_only_when_every_file_is_as_wanted() {
        let observed = Observed {
            stack_files: BTreeMap::from([
                ("a.yaml".to_string(), b"base a".to_vec()),
                ("b.yaml".to_string(), b"base b".to_vec()),
            ]),
            ..Observed::default()
        };
        let edits = [FileEdit {
            path: "a.yaml".into(),
            before: b"base a".to_vec(),
            after: b"want a".to_vec(),
        }];
        let files = |a: &str, b: &str| {
            BTreeMap::from([
                ("a.yaml".to_string(), a.as_bytes().to_vec()),
                ("b.yaml".to_string(), b.as_bytes().to_vec()),
            ])
        };
        assert!(holds_files(
            Some(&files("want a", "base b")),
            &observed,
            &edits
        ));
        assert!(!holds_files(
            Some(&files("base a", "base b")),
            &observed,
            &edits
        ));
        assert!(!holds_files(
            Some(&files("want a", "old b")),
            &observed,
            &edits
        ));
        assert!(!holds_files(None, &observed, &edits), "files not read");
        assert!(!holds_files(
            Some(&files("base a", "base b")),
            &observed,
            &[]
        ));
    }

    #[test]
    fn a_merge_of_the_base_is_not_a_human_edit_but_a_commit_is() {
        let bot = c("b1", BOT, &["m0"], "Update\n\nStackbot-Content: abc\n");
        let update = c("u1", "jane@x", &["b1", "m5"], "Merge branch 'main'");
        assert!(human_commits(&[bot.clone(), update.clone()], BOT).is_empty());
        assert!(holds(&[bot.clone(), update.clone()], "abc", BOT));
        assert!(!holds(&[bot.clone(), update.clone()], "def", BOT));
        let edit = c("h1", "jane@x", &["u1"], "fix");
        let on = [bot.clone(), update, edit];
        assert_eq!(human_commits(&on, BOT), ["h1"]);
        assert!(!holds(&on, "abc", BOT));
        // Merging two branch-only lines is a person's doing.
        let side = c("s1", "jane@x", &["m0"], "side");
        let join = c("j1", "jane@x", &["b1", "s1"], "join");
        assert_eq!(human_commits(&[bot, side, join], BOT), ["s1", "j1"]);
        assert!(!holds(&[], "abc", BOT));
    }

    #[test]
    fn the_marker_round_trips_and_old_markers_still_parse() {
        let rel = vec![
            "openstack-scs2-1-33-v3".to_string(),
            "openstack-scs2-1-34-v1".into(),
        ];
        let m = parse_marker(&format!("x\n{}\nbody", marker(&stack(), "abc", &rel))).unwrap();
        assert_eq!(m.stack, "openstack/scs2");
        assert_eq!(m.content, "abc");
        assert_eq!(m.releases, Some(rel));
        let old = parse_marker("<!-- stackbot:tenant openstack/scs2 content=abc -->").unwrap();
        assert_eq!((old.content.as_str(), old.releases), ("abc", None));
        assert_eq!(parse_marker("no marker"), None);
    }

    #[test]
    fn only_a_human_close_of_the_same_releases_is_a_decline() {
        let rel = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let pull = |state, extra: &str| PullInfo {
            number: 7,
            head: "stackbot/openstack-scs2".into(),
            base: "main".into(),
            title: "t".into(),
            body: format!(
                "{}\n{extra}",
                marker(&stack(), "abc", &rel(&["a-1-33-v3", "a-1-34-v1"]))
            ),
            state,
            html_url: String::new(),
            created_at: None,
            merged_at: None,
            labels: Vec::new(),
            auto_merge: false,
        };
        let closed = pull(PullState::Closed, "");
        assert!(declined(&closed, &stack(), "zzz", &rel(&["a-1-33-v3"])));
        assert!(declined(
            &closed,
            &stack(),
            "zzz",
            &rel(&["a-1-34-v1", "a-1-33-v3"])
        ));
        assert!(!declined(&closed, &stack(), "abc", &rel(&["a-1-33-v4"])));
        assert!(!declined(&closed, &stack(), "abc", &[]));
        assert!(!declined(
            &pull(PullState::Merged, ""),
            &stack(),
            "abc",
            &rel(&["a-1-33-v3"])
        ));
        assert!(!declined(
            &pull(PullState::Open, ""),
            &stack(),
            "abc",
            &rel(&["a-1-33-v3"])
        ));
        let by_bot = pull(PullState::Closed, CLOSED_BY_BOT);
        assert!(!declined(&by_bot, &stack(), "abc", &rel(&["a-1-33-v3"])));
        let other: StackId = "openstack/scs".parse().unwrap();
        assert!(!declined(&closed, &other, "abc", &rel(&["a-1-33-v3"])));
    }
}
