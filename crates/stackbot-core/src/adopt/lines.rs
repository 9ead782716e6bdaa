//! Where a literal sits in a text file: line, YAML field path and enclosing list items.
//!
//! Adoption must keep every byte, so it cannot parse YAML into values and write it back; it
//! works on the text and only needs to know *where* a match is. Block-style YAML (what stack
//! files are written in, Helm templates included) is read line by line: indentation, `- `
//! items and `key:` prefixes give the field path (`dependencies[0].version`) and the list item
//! a value belongs to. Flow style and odd layouts degrade gracefully to "no path", which only
//! removes context, never bytes.

/// One line of a file as adoption sees it.
#[derive(Debug, Clone)]
pub struct Line {
    /// Byte offset of the first character.
    pub start: usize,
    /// Byte offset after the last character (before the newline).
    pub end: usize,
    /// Field path, e.g. `dependencies[0].version` (empty outside YAML or for prose).
    pub path: String,
    /// The key written on this line, if any (`version` in `  version: 1.2.3`).
    pub key: Option<String>,
    /// Indices (into [`LineIndex::items`]) of the list items enclosing this line, outermost first.
    pub items: Vec<usize>,
}

/// A `- ` list item: its lines and its direct `key: scalar` fields.
#[derive(Debug, Clone)]
pub struct Item {
    /// First and last line (inclusive, 0-based).
    pub first: usize,
    pub last: usize,
    /// Direct fields of the item (`key`, unquoted scalar value), including the one on the dash line.
    pub fields: Vec<(String, String)>,
}

/// Line and list-item structure of one text file.
#[derive(Debug, Clone)]
pub struct LineIndex {
    pub lines: Vec<Line>,
    pub items: Vec<Item>,
}

struct Frame {
    indent: usize,
    label: String,
    /// `Some(index into items)` for a list-item frame.
    item: Option<usize>,
    /// Indentation of the item's fields (dash indent + 2) for item frames.
    field_indent: usize,
}

/// `key: rest` at the start of `s` (after indentation and an optional `- `).
pub(crate) fn split_key(s: &str) -> Option<(String, &str)> {
    let (key, rest) = if let Some(q) = s.strip_prefix('"').or_else(|| s.strip_prefix('\'')) {
        let quote = s.as_bytes()[0] as char;
        let close = q.find(quote)?;
        let rest = q[close + 1..].strip_prefix(':')?;
        (q[..close].to_string(), rest)
    } else {
        let colon = s.find(':')?;
        let key = &s[..colon];
        if key.is_empty()
            || key.contains(['#', '{', '[', '"', '\'', ' '])
            || key.starts_with(['-', '&', '*', '!', '|', '>', '%', '@', '`'])
        {
            return None;
        }
        (key.to_string(), &s[colon + 1..])
    };
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    Some((key, rest))
}

/// A scalar as written after `key:`, without quotes and trailing comments.
pub(crate) fn scalar(rest: &str) -> String {
    let t = rest.trim();
    for q in ['"', '\''] {
        if let Some(inner) = t.strip_prefix(q)
            && let Some(end) = inner.find(q)
        {
            return inner[..end].to_string();
        }
    }
    match t.find(" #") {
        Some(i) => t[..i].trim_end().to_string(),
        None => t.to_string(),
    }
}

impl LineIndex {
    /// Index `text`. Never fails: unknown shapes simply get no path.
    pub fn new(text: &str) -> LineIndex {
        let mut lines = Vec::new();
        let mut items: Vec<Item> = Vec::new();
        let mut stack: Vec<Frame> = Vec::new();
        // Index of the last item popped at a given indent, to number siblings.
        let mut last_item_at: Vec<(usize, usize)> = Vec::new();
        for (n, l) in crate::yaml::block::lines(text, 0..text.len())
            .iter()
            .enumerate()
        {
            let (trimmed, indent) = (l.body(), l.indent);
            let blank = trimmed.trim().is_empty() || trimmed.starts_with('#');
            let mut key = None;
            if !blank && !trimmed.starts_with("---") {
                while stack.last().is_some_and(|f| f.indent >= indent) {
                    let f = stack.pop().expect("checked");
                    if let Some(i) = f.item {
                        items[i].last = n.saturating_sub(1);
                        last_item_at.retain(|(ind, _)| *ind < f.indent);
                        last_item_at.push((f.indent, sibling_number(&f.label)));
                    }
                }
                last_item_at.retain(|(ind, _)| *ind <= indent);
                let mut body = trimmed;
                let mut body_indent = indent;
                if trimmed == "-" || trimmed.starts_with("- ") {
                    let number = last_item_at
                        .iter()
                        .find(|(ind, _)| *ind == indent)
                        .map_or(0, |(_, k)| k + 1);
                    let parent_is_key = stack.last().is_some_and(|f| f.item.is_none());
                    let label = if parent_is_key {
                        format!("[{number}]")
                    } else {
                        format!(".[{number}]")
                    };
                    items.push(Item {
                        first: n,
                        last: n,
                        fields: Vec::new(),
                    });
                    stack.push(Frame {
                        indent,
                        label,
                        item: Some(items.len() - 1),
                        field_indent: indent + 2,
                    });
                    let after = trimmed[1..].trim_start_matches(' ');
                    body_indent = indent + (trimmed.len() - after.len());
                    body = after;
                }
                if let Some((k, rest)) = split_key(body) {
                    if let Some(item) = stack
                        .iter()
                        .rev()
                        .find(|f| f.item.is_some())
                        .filter(|f| f.field_indent == body_indent)
                        .and_then(|f| f.item)
                    {
                        let value = scalar(rest);
                        if !value.is_empty() && !matches!(value.as_str(), "|" | ">" | "|-" | ">-") {
                            items[item].fields.push((k.clone(), value));
                        }
                    }
                    stack.push(Frame {
                        indent: body_indent,
                        label: k.clone(),
                        item: None,
                        field_indent: 0,
                    });
                    key = Some(k);
                }
            }
            let path = path_of(&stack);
            let enclosing = stack.iter().filter_map(|f| f.item).collect();
            lines.push(Line {
                start: l.start,
                end: l.end,
                path,
                key,
                items: enclosing,
            });
        }
        let total = lines.len();
        for f in stack {
            if let Some(i) = f.item {
                items[i].last = total.saturating_sub(1);
            }
        }
        LineIndex { lines, items }
    }

    /// The 0-based line holding byte `offset`.
    pub fn line_at(&self, offset: usize) -> usize {
        self.lines
            .partition_point(|l| l.start <= offset)
            .saturating_sub(1)
    }
}

fn sibling_number(label: &str) -> usize {
    label
        .trim_start_matches('.')
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .unwrap_or(0)
}

fn path_of(stack: &[Frame]) -> String {
    let mut out = String::new();
    for f in stack {
        if f.item.is_some() {
            out.push_str(f.label.trim_start_matches('.'));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&f.label);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_keys_and_list_items() {
        let text = "apiVersion: v2\ndependencies:\n  - alias: cilium\n    name: cilium\n    version: 1.16.6\n  - name: other\n    version: \"2.0.0\" # pinned\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.lines[0].path, "apiVersion");
        assert_eq!(idx.lines[4].path, "dependencies[0].version");
        assert_eq!(idx.lines[6].path, "dependencies[1].version");
        assert_eq!(idx.lines[4].key.as_deref(), Some("version"));
        assert_eq!(idx.items.len(), 2);
        assert_eq!(idx.items[0].first, 2);
        assert_eq!(idx.items[0].last, 4);
        assert_eq!(
            idx.items[1].fields,
            [
                ("name".to_string(), "other".to_string()),
                ("version".to_string(), "2.0.0".to_string())
            ]
        );
        assert_eq!(idx.lines[4].items, [0]);
        assert_eq!(idx.line_at(text.find("1.16.6").unwrap()), 4);
    }

    #[test]
    fn nested_lists_and_top_level_sequences() {
        let text = "- kubernetes: 1.32.13\n  occm: 2.32.1\n- kubernetes: 1.33.10\n  occm: 2.33.1\nimages:\n  - name: img\n    versions:\n      - version: 'v1.33.4'\n        url: https://x/v1.33.4.qcow2\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.lines[1].path, "[0].occm");
        assert_eq!(idx.lines[3].path, "[1].occm");
        assert_eq!(idx.lines[8].path, "images[0].versions[0].url");
        let inner = *idx.lines[8].items.last().unwrap();
        assert_eq!(
            idx.items[inner].fields[0],
            ("version".to_string(), "v1.33.4".to_string())
        );
        assert_eq!(idx.lines[8].items.len(), 2);
    }

    #[test]
    fn prose_gets_no_path() {
        let idx = LineIndex::new("# Title\n\nSome text: with a colon\n");
        assert_eq!(idx.lines[0].path, "");
        assert_eq!(idx.lines[1].path, "");
    }
}
