//! A tiny, span-exact locator for block-style YAML, so edits can splice bytes instead of
//! re-serialising a document (re-serialising is what destroys comments, quoting and
//! indentation in other bots). It understands just enough YAML to find a key's value
//! and the items of a sequence; anything it does not understand is refused, and every
//! edit is verified afterwards by a real parser (see `edit.rs`), so a locator mistake
//! becomes an error, never a corrupted file.

use std::ops::Range;

pub use crate::yaml::block::{Line, is_separator, line_number, lines, split_documents};

/// How a scalar is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    Single,
    Double,
}

impl Style {
    /// Write `value` (a simple token such as `v3` or `1.34`) in this style.
    pub fn write(self, value: &str) -> String {
        match self {
            Style::Plain => value.to_string(),
            Style::Single => format!("'{value}'"),
            Style::Double => format!("\"{value}\""),
        }
    }
}

/// A single-line scalar: its exact byte span (quotes included) and style.
#[derive(Debug, Clone)]
pub struct Scalar {
    pub span: Range<usize>,
    pub style: Style,
    /// The value as written between the quotes (escapes are not interpreted: version
    /// strings never contain any, and the verifier re-parses anyway).
    pub raw: String,
}

/// What follows `key:` on the key's own line.
#[derive(Debug, Clone)]
pub enum Inline {
    /// Nothing (or only a comment): the value is on the following lines, or null.
    Empty {
        colon_end: usize,
    },
    Scalar(Scalar),
    /// A one-line flow sequence `[a, "b"]`: bracket span and items.
    Flow {
        span: Range<usize>,
        items: Vec<Scalar>,
    },
    /// Something this locator does not edit (alias, block scalar, flow mapping, multi-line flow...).
    Other(String),
}

/// Where something could not be located or understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanError {
    pub offset: usize,
    pub message: String,
}

fn err(offset: usize, message: impl Into<String>) -> ScanError {
    ScanError {
        offset,
        message: message.into(),
    }
}

/// Parse one scalar starting exactly at `src[at..]`, limited to `limit` (end of line).
fn scalar_at(src: &str, at: usize, limit: usize) -> Result<Scalar, ScanError> {
    let s = &src[at..limit];
    let b = s.as_bytes();
    match b.first() {
        Some(b'"') => {
            let mut i = 1;
            while i < b.len() {
                match b[i] {
                    b'\\' => i += 2,
                    b'"' => {
                        return Ok(Scalar {
                            span: at..at + i + 1,
                            style: Style::Double,
                            raw: s[1..i].to_string(),
                        });
                    }
                    _ => i += 1,
                }
            }
            Err(err(at, "a double-quoted value continues on the next line"))
        }
        Some(b'\'') => {
            let mut i = 1;
            while i < b.len() {
                if b[i] == b'\'' {
                    if b.get(i + 1) == Some(&b'\'') {
                        i += 2;
                        continue;
                    }
                    return Ok(Scalar {
                        span: at..at + i + 1,
                        style: Style::Single,
                        raw: s[1..i].to_string(),
                    });
                }
                i += 1;
            }
            Err(err(at, "a single-quoted value continues on the next line"))
        }
        _ => {
            // A plain scalar ends at ` #` or the end of the line.
            let mut end = s.len();
            if let Some(i) = s.find(" #").or_else(|| s.find("\t#")) {
                end = i;
            }
            let raw = s[..end].trim_end();
            if raw.is_empty() {
                return Err(err(at, "expected a value"));
            }
            Ok(Scalar {
                span: at..at + raw.len(),
                style: Style::Plain,
                raw: raw.to_string(),
            })
        }
    }
}

/// Skip spaces and node properties (`&anchor`, `!tag`) at `src[pos..limit]`.
fn skip_props(src: &str, mut pos: usize, limit: usize) -> usize {
    loop {
        while pos < limit && matches!(src.as_bytes()[pos], b' ' | b'\t') {
            pos += 1;
        }
        if pos < limit && matches!(src.as_bytes()[pos], b'&' | b'!') {
            while pos < limit && !matches!(src.as_bytes()[pos], b' ' | b'\t') {
                pos += 1;
            }
            continue;
        }
        return pos;
    }
}

/// Classify what follows a key's colon on the same line.
pub fn inline_value(src: &str, after_colon: usize, line_end: usize) -> Result<Inline, ScanError> {
    let pos = skip_props(src, after_colon, line_end);
    let rest = &src[pos..line_end];
    if rest.is_empty() || rest.starts_with('#') {
        return Ok(Inline::Empty {
            colon_end: after_colon,
        });
    }
    match rest.as_bytes()[0] {
        b'*' => Ok(Inline::Other("an alias".into())),
        b'|' | b'>' => Ok(Inline::Other("a block scalar".into())),
        b'{' => Ok(Inline::Other("a flow mapping".into())),
        b'[' => flow_sequence(src, pos, line_end),
        _ => Ok(Inline::Scalar(scalar_at(src, pos, line_end)?)),
    }
}

fn flow_sequence(src: &str, open: usize, line_end: usize) -> Result<Inline, ScanError> {
    let mut items = Vec::new();
    let mut pos = open + 1;
    loop {
        while pos < line_end && matches!(src.as_bytes()[pos], b' ' | b'\t') {
            pos += 1;
        }
        if pos >= line_end {
            return Ok(Inline::Other(
                "a flow sequence spanning several lines".into(),
            ));
        }
        match src.as_bytes()[pos] {
            b']' => {
                return Ok(Inline::Flow {
                    span: open..pos + 1,
                    items,
                });
            }
            b'[' | b'{' | b'*' | b'&' | b'!' | b'#' => {
                return Ok(Inline::Other("a nested or decorated flow sequence".into()));
            }
            b',' => pos += 1,
            b'"' | b'\'' => {
                let s = scalar_at(src, pos, line_end)?;
                pos = s.span.end;
                items.push(s);
            }
            _ => {
                let end = src[pos..line_end]
                    .find([',', ']'])
                    .map(|i| pos + i)
                    .unwrap_or(line_end);
                let raw = src[pos..end].trim_end();
                if raw.contains(" #") || raw.contains(':') {
                    return Ok(Inline::Other("a flow sequence this bot cannot edit".into()));
                }
                items.push(Scalar {
                    span: pos..pos + raw.len(),
                    style: Style::Plain,
                    raw: raw.to_string(),
                });
                pos = end;
            }
        }
    }
}

/// A located mapping entry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Index of the key's line in the line list.
    pub line: usize,
    /// Byte right after the `:`.
    pub after_colon: usize,
    /// Lines `[line + 1, value_end)` hold the entry's block value (possibly none).
    pub value_end: usize,
}

/// Indentation of the first content line in `lines[from..to]`.
pub fn first_content_indent(lines: &[Line], from: usize, to: usize) -> Option<usize> {
    lines[from..to]
        .iter()
        .find(|l| l.is_content())
        .map(|l| l.indent)
}

/// Find `key:` among the lines `[from, to)` of a block mapping indented by `indent`.
pub fn find_key(lines: &[Line], from: usize, to: usize, indent: usize, key: &str) -> Option<Entry> {
    for i in from..to {
        let l = &lines[i];
        if !l.is_content() || l.indent != indent {
            continue;
        }
        let body = l.body();
        let after = [key.to_string(), format!("\"{key}\""), format!("'{key}'")]
            .iter()
            .find_map(|k| body.strip_prefix(k.as_str()).map(|r| (k.len(), r)))
            .and_then(|(n, r)| {
                let r2 = r.trim_start_matches([' ', '\t']);
                let ws = r.len() - r2.len();
                r2.strip_prefix(':').and_then(|r3| {
                    (r3.is_empty() || r3.starts_with([' ', '\t'])).then_some(n + ws + 1)
                })
            });
        if let Some(n) = after {
            let mut end = i + 1;
            while end < to {
                let m = &lines[end];
                if m.is_content() {
                    let b = m.body();
                    let item = b == "-" || b.starts_with("- ");
                    if m.indent < indent || (m.indent == indent && !item) {
                        break;
                    }
                }
                end += 1;
            }
            return Some(Entry {
                line: i,
                after_colon: l.start + l.indent + n,
                value_end: end,
            });
        }
    }
    None
}

/// The block-sequence items in `lines[from..to]`: each `- scalar` line and its scalar.
pub fn block_items(
    src: &str,
    lines: &[Line],
    from: usize,
    to: usize,
) -> Result<Vec<(usize, Scalar)>, ScanError> {
    let Some(indent) = first_content_indent(lines, from, to) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate().take(to).skip(from) {
        if !l.is_content() {
            continue;
        }
        let body = l.body();
        if l.indent != indent || !body.starts_with("- ") {
            return Err(err(
                l.start,
                "expected a list of plain versions (`- v2`), found something else",
            ));
        }
        let at = skip_props(src, l.start + l.indent + 2, l.end);
        match src.as_bytes().get(at) {
            Some(b'*' | b'[' | b'{' | b'|' | b'>') | None => {
                return Err(err(l.start, "expected a version string in this list item"));
            }
            _ => {}
        }
        out.push((i, scalar_at(src, at, l.end)?));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_keep_their_exact_span() {
        let src = "k: \"1.33\" # c";
        match inline_value(src, 2, src.len()).unwrap() {
            Inline::Scalar(s) => {
                assert_eq!(&src[s.span.clone()], "\"1.33\"");
                assert_eq!(s.style, Style::Double);
                assert_eq!(s.raw, "1.33");
            }
            other => panic!("{other:?}"),
        }
        let src = "k: &a v1  # c";
        match inline_value(src, 2, src.len()).unwrap() {
            Inline::Scalar(s) => assert_eq!(&src[s.span], "v1"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn flow_sequences_list_their_items() {
        let src = "versions: [ v1, 'v2' ,\"v3\"] # x";
        match inline_value(src, 9, src.len()).unwrap() {
            Inline::Flow { span, items } => {
                assert_eq!(&src[span], "[ v1, 'v2' ,\"v3\"]");
                let raws: Vec<_> = items.iter().map(|s| s.raw.as_str()).collect();
                assert_eq!(raws, ["v1", "v2", "v3"]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn keys_are_found_only_at_their_indentation() {
        let src = "spec:\n  x: |\n    versions: no\n  versions:\n  - v1\n  # c\n  - v2\nother: 1\n";
        let ls = lines(src, 0..src.len());
        let spec = find_key(&ls, 0, ls.len(), 0, "spec").unwrap();
        assert_eq!(spec.value_end, 7);
        let v = find_key(&ls, 1, spec.value_end, 2, "versions").unwrap();
        assert_eq!(v.line, 3);
        let items = block_items(src, &ls, v.line + 1, v.value_end).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].1.raw, "v2");
    }
}
