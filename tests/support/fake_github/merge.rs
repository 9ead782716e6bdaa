//! A three-way merge of file trees, line by line, as git merges text: what the fake's merge
//! button, "Update branch" and rebase need, and what a test uses to ask "would this branch
//! conflict with its base?". Changes of both sides that touch or overlap the same lines of the
//! common ancestor conflict unless they are identical; binary files conflict when both sides
//! changed them differently.

use std::collections::BTreeMap;
use std::ops::Range;

/// One side's change of the ancestor: the ancestor lines replaced, and by what.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hunk {
    old: Range<usize>,
    new: Vec<String>,
}

fn lines(s: &str) -> Vec<&str> {
    s.split_inclusive('\n').collect()
}

fn hunks(base: &[&str], side: &[&str]) -> Vec<Hunk> {
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, base, side);
    let mut out: Vec<Hunk> = Vec::new();
    for op in ops {
        if matches!(op, similar::DiffOp::Equal { .. }) {
            continue;
        }
        let (old, new) = (op.old_range(), op.new_range());
        let text: Vec<String> = side[new].iter().map(|s| s.to_string()).collect();
        match out.last_mut() {
            Some(h) if h.old.end == old.start => {
                h.old.end = old.end;
                h.new.extend(text);
            }
            _ => out.push(Hunk { old, new: text }),
        }
    }
    out
}

/// Merge text: `None` when the two sides' changes conflict.
pub fn merge_text(base: &str, ours: &str, theirs: &str) -> Option<String> {
    if ours == theirs || theirs == base {
        return Some(ours.to_string());
    }
    if ours == base {
        return Some(theirs.to_string());
    }
    let b = lines(base);
    let (a, c) = (hunks(&b, &lines(ours)), hunks(&b, &lines(theirs)));
    let mut all: Vec<&Hunk> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < c.len() {
        match (a.get(i), c.get(j)) {
            (Some(x), Some(y)) => {
                // Touching or overlapping changes conflict, as in git.
                let meet = x.old.start <= y.old.end && y.old.start <= x.old.end;
                if meet {
                    if x != y {
                        return None;
                    }
                    all.push(x);
                    i += 1;
                    j += 1;
                } else if x.old.start < y.old.start {
                    all.push(x);
                    i += 1;
                } else {
                    all.push(y);
                    j += 1;
                }
            }
            (Some(x), None) => {
                all.push(x);
                i += 1;
            }
            (None, Some(y)) => {
                all.push(y);
                j += 1;
            }
            (None, None) => unreachable!(),
        }
    }
    let mut out = String::new();
    let mut pos = 0;
    for h in all {
        for l in &b[pos..h.old.start] {
            out.push_str(l);
        }
        for l in &h.new {
            out.push_str(l);
        }
        pos = h.old.end;
    }
    for l in &b[pos..] {
        out.push_str(l);
    }
    Some(out)
}

/// Path → bytes.
pub type Files = BTreeMap<String, Vec<u8>>;

/// Merge two trees against their common ancestor; `Err` names the conflicting paths.
pub fn merge_trees(base: &Files, ours: &Files, theirs: &Files) -> Result<Files, Vec<String>> {
    let mut out = Files::new();
    let mut conflicts = Vec::new();
    let paths: std::collections::BTreeSet<&String> = base
        .keys()
        .chain(ours.keys())
        .chain(theirs.keys())
        .collect();
    for p in paths {
        let (b, o, t) = (base.get(p), ours.get(p), theirs.get(p));
        let merged = if o == t || t == b {
            Ok(o.cloned())
        } else if o == b {
            Ok(t.cloned())
        } else {
            match (b, o, t) {
                (Some(b), Some(o), Some(t)) => match (
                    std::str::from_utf8(b),
                    std::str::from_utf8(o),
                    std::str::from_utf8(t),
                ) {
                    (Ok(b), Ok(o), Ok(t)) => {
                        merge_text(b, o, t).map(|s| Some(s.into_bytes())).ok_or(())
                    }
                    _ => Err(()),
                },
                _ => Err(()),
            }
        };
        match merged {
            Ok(Some(bytes)) => {
                out.insert(p.clone(), bytes);
            }
            Ok(None) => {}
            Err(()) => conflicts.push(p.clone()),
        }
    }
    if conflicts.is_empty() {
        Ok(out)
    } else {
        Err(conflicts)
    }
}

/// The changes `after` makes to `before`, replayed onto `onto` (a cherry-pick).
pub fn cherry_pick(before: &Files, after: &Files, onto: &Files) -> Result<Files, Vec<String>> {
    merge_trees(before, onto, after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separate_changes_merge_and_touching_ones_conflict() {
        let base = "a\nb\nc\nd\ne\n";
        let ours = "A\nb\nc\nd\ne\n";
        let theirs = "a\nb\nc\nd\nE\n";
        assert_eq!(merge_text(base, ours, theirs).unwrap(), "A\nb\nc\nd\nE\n");
        assert_eq!(merge_text(base, "a\nB\nc\nd\ne\n", "a\nb\nC\nd\ne\n"), None);
        assert_eq!(
            merge_text(base, "a\nB\nc\nd\ne\n", "a\nB\nc\nd\ne\n").unwrap(),
            "a\nB\nc\nd\ne\n"
        );
    }
}
