//! Block-style YAML read as text, line by line: the lines of a file with their byte offsets
//! and indentation, its documents, and the line number of an offset. Shared by the readers
//! that must keep every byte (tenant edits in `tenants::scan`, adoption in `adopt`), which
//! locate things in the text instead of parsing it into values.

use std::ops::Range;

/// One physical line: byte offsets into the whole file.
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    /// First byte of the line.
    pub start: usize,
    /// End of the content (before `\r\n` / `\n`).
    pub end: usize,
    /// After the line terminator (== `end` on a last line without one).
    pub next: usize,
    /// Leading spaces.
    pub indent: usize,
    /// The line's text without its terminator.
    pub text: &'a str,
}

impl<'a> Line<'a> {
    /// Text after the indentation.
    pub fn body(&self) -> &'a str {
        &self.text[self.indent..]
    }
    /// Blank or comment-only lines carry no structure.
    pub fn is_content(&self) -> bool {
        let b = self.body().trim_start();
        !b.is_empty() && !b.starts_with('#')
    }
}

/// Split `src[range]` into lines (a trailing `\r` is part of the terminator).
pub fn lines(src: &str, range: Range<usize>) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut pos = range.start;
    while pos < range.end {
        let nl = src[pos..range.end].find('\n').map(|i| pos + i);
        let (end, next) = match nl {
            Some(i) if i > pos && src.as_bytes()[i - 1] == b'\r' => (i - 1, i + 1),
            Some(i) => (i, i + 1),
            None => (range.end, range.end),
        };
        let text = &src[pos..end];
        let indent = text.bytes().take_while(|&b| b == b' ').count();
        out.push(Line {
            start: pos,
            end,
            next,
            indent,
            text,
        });
        pos = next;
    }
    out
}

/// Whether a line is a document separator (`---` alone, or followed by a space or comment).
pub fn is_separator(line: &str) -> bool {
    line.strip_prefix("---")
        .is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t']))
}

/// Byte ranges of the documents of a multi-document file. Each range starts at its `---`
/// line (except a first document without one), so concatenating the ranges gives the file
/// back byte for byte.
pub fn split_documents(src: &str) -> Vec<Range<usize>> {
    let mut starts = vec![0];
    for l in lines(src, 0..src.len()) {
        if l.start > 0 && is_separator(l.text) {
            starts.push(l.start);
        }
    }
    let mut out = Vec::new();
    for (i, &s) in starts.iter().enumerate() {
        let e = starts.get(i + 1).copied().unwrap_or(src.len());
        out.push(s..e);
    }
    out
}

/// 1-based line number of a byte offset, for error messages.
pub fn line_number(src: &str, offset: usize) -> usize {
    src[..offset.min(src.len())].matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_concatenate_back_to_the_file() {
        let src = "# head\n---\na: 1\n--- # two\nb: 2\r\n---\n";
        let docs = split_documents(src);
        assert_eq!(docs.len(), 4);
        let joined: String = docs.iter().map(|r| &src[r.clone()]).collect();
        assert_eq!(joined, src);
        assert!(src[docs[2].clone()].starts_with("--- # two"));
    }

    #[test]
    fn separators_need_a_break_after_the_dashes() {
        assert!(is_separator("---"));
        assert!(is_separator("--- # c"));
        assert!(!is_separator("----"));
        assert!(!is_separator("---x"));
    }
}
