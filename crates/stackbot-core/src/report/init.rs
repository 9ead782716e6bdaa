//! `stackbot init`'s report: what it wrote, what it left as it was, and the diff of every
//! file that differs from what this stackbot would write (text for people, JSON for scripts).

use crate::init::{ActionPin, Change, FileChange};

/// One run of `init`, as the command saw it.
pub struct Report<'a> {
    pub changes: &'a [FileChange],
    /// Paths actually written.
    pub written: &'a [String],
    pub notes: &'a [String],
    pub dry_run: bool,
    pub update: bool,
    pub pin: &'a ActionPin,
}

/// Files of a template or rendered stack are listed by their directory: one line each
/// instead of dozens (`templates/<provider>/<name>/`, `cluster-stacks/<p>/<n>/<minor>/`).
fn group_of(path: &str) -> String {
    let depth = match path.split('/').next() {
        Some("templates") => 3,
        Some("cluster-stacks") => 4,
        _ => return path.to_string(),
    };
    let parts: Vec<&str> = path.split('/').collect();
    if parts.len() <= depth {
        return path.to_string();
    }
    format!("{}/", parts[..depth].join("/"))
}

impl Report<'_> {
    fn word(&self, c: &FileChange) -> &'static str {
        let written = self.written.contains(&c.path);
        match (&c.change, written, self.dry_run) {
            (Change::Create, _, true) => "would create",
            (Change::Create, _, false) => "created",
            (Change::Unchanged, _, _) => "unchanged",
            (Change::Update { .. }, true, _) => "updated",
            (Change::Update { .. }, false, true) => "would update",
            (Change::Update { .. }, false, false) => "differs",
        }
    }

    /// One line per file (per directory for stack trees), each differing file's diff below it.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let mut groups: Vec<(String, &'static str, usize)> = Vec::new();
        for c in self.changes {
            let word = self.word(c);
            let group = group_of(&c.path);
            match groups.last_mut() {
                Some((g, w, n)) if *g == group && *w == word && group.ends_with('/') => *n += 1,
                _ => groups.push((group, word, 1)),
            }
        }
        for (group, word, n) in &groups {
            if group.ends_with('/') {
                let files = if *n == 1 { "file" } else { "files" };
                out.push_str(&format!("{word:<12} {group} ({n} {files})\n"));
            } else {
                out.push_str(&format!("{word:<12} {group}\n"));
            }
        }
        let differing: Vec<(&FileChange, &String)> = (self.changes.iter())
            .filter_map(|c| match &c.change {
                Change::Update { diff } => Some((c, diff)),
                _ => None,
            })
            .collect();
        for (c, diff) in &differing {
            out.push_str(&format!("\n{}", diff_or_binary(diff, &c.path)));
        }
        for n in self.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        out.push_str(&format!("action: {}\n", self.pin.uses()));
        let left = (differing.iter())
            .filter(|(c, _)| !self.written.contains(&c.path))
            .count();
        if left > 0 && !self.dry_run {
            out.push_str(&format!(
                "{left} file{} differ{} from what this stackbot writes and {} kept as {}; `stackbot init --update` writes {}\n",
                if left == 1 { "" } else { "s" },
                if left == 1 { "s" } else { "" },
                if left == 1 { "was" } else { "were" },
                if left == 1 { "it is" } else { "they are" },
                if left == 1 { "it" } else { "them" },
            ));
        }
        if self.changes.iter().all(|c| c.change == Change::Unchanged) {
            out.push_str("nothing to change: the setup is what this stackbot writes\n");
        } else if !self.dry_run && !self.written.is_empty() && !self.update {
            out.push_str(
                "next: review and commit these files, then follow docs/github-setup.md (the `stackbot` environment, the token, the first dry run)\n",
            );
        }
        out
    }

    /// `{files: [{path, change, written, diff?}], notes, action, dry_run}`.
    pub fn json(&self) -> String {
        let files: Vec<serde_json::Value> = self
            .changes
            .iter()
            .map(|c| {
                let mut v = serde_json::json!({
                    "path": c.path,
                    "change": match c.change {
                        Change::Create => "create",
                        Change::Unchanged => "unchanged",
                        Change::Update { .. } => "update",
                    },
                    "written": self.written.contains(&c.path),
                });
                if let Change::Update { diff } = &c.change {
                    v["diff"] = diff.clone().into();
                }
                v
            })
            .collect();
        let v = serde_json::json!({
            "files": files,
            "notes": self.notes,
            "action": self.pin.uses(),
            "dry_run": self.dry_run,
        });
        serde_json::to_string_pretty(&v).expect("the report serializes") + "\n"
    }
}

fn diff_or_binary(diff: &str, path: &str) -> String {
    if diff.is_empty() {
        format!("(binary) {path} differs\n")
    } else {
        diff.to_string()
    }
}
