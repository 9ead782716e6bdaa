//! GitHub-flavoured Markdown building blocks that stay correct for hostile input.
//!
//! Everything the bot writes into a PR body, comment or job summary contains names and file
//! contents it does not control (tenant names, template files, diffs). A stray `|` breaks a
//! table, a backtick run breaks out of a code fence, `@someone` pings a stranger, and a body
//! over 65,536 characters is rejected by GitHub outright. These helpers make each of those
//! impossible by construction.

/// GitHub rejects issue/PR bodies and comments longer than this many characters.
pub const COMMENT_LIMIT: usize = 65_536;

/// GitHub shows at most 1 MiB of `$GITHUB_STEP_SUMMARY` per step.
pub const SUMMARY_LIMIT: usize = 1024 * 1024;

/// Escape text for inline Markdown (paragraphs, list items, table cells): no emphasis, links,
/// HTML, table breaks or @-mentions can be produced by the input. Newlines become spaces, so a
/// value can never end a table row or start a block. Characters that only matter at the start
/// of a line (`#`, `-`, `+`, `=`, `>`, `1.`) are escaped there; elsewhere punctuation is left
/// alone so versions, tags and URLs stay readable (and URLs stay clickable).
pub fn escape_inline(text: &str) -> String {
    let body = text.trim_start();
    let mut out = String::with_capacity(body.len() + 8);
    let mut rest = body;
    // A leading block marker (or an ordered-list number) would start a block in a list item;
    // CommonMark needs a space (or the end) after it, so `-x` or `1.34` stay as they are.
    let ends_marker = |at: usize| body[at..].chars().next().is_none_or(char::is_whitespace);
    let hashes = body.bytes().take_while(|b| *b == b'#').count();
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    if (hashes > 0 && ends_marker(hashes))
        || (body.starts_with(['-', '+', '='])
            && (ends_marker(1) || body[1..].starts_with(&body[..1])))
    {
        out.push('\\');
    } else if digits > 0
        && matches!(body.as_bytes().get(digits), Some(b'.' | b')'))
        && ends_marker(digits + 1)
    {
        out.push_str(&body[..digits]);
        out.push('\\');
        rest = &body[digits..];
    }
    for c in rest.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            // A zero-width space after `@` keeps the text readable and stops the mention.
            '@' => out.push_str("@&#8203;"),
            '\r' | '\n' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Escape text for an HTML context such as `<summary>`, where Markdown is not interpreted.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '@' => out.push_str("@&#8203;"),
            '\r' | '\n' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Length of the longest run of `ch` in `text`.
fn longest_run(text: &str, ch: char) -> usize {
    let (mut best, mut cur) = (0, 0);
    for c in text.chars() {
        if c == ch {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

/// A fenced code block that `content` cannot close early: the fence is one backtick longer
/// than the longest backtick run inside (CommonMark closes a fence only with at least as many
/// backticks as opened it). `info` is the language tag, e.g. `diff`.
pub fn fence(content: &str, info: &str) -> String {
    let ticks = "`".repeat((longest_run(content, '`') + 1).max(3));
    let mut out = String::with_capacity(content.len() + 2 * ticks.len() + info.len() + 3);
    out.push_str(&ticks);
    out.push_str(info);
    out.push('\n');
    out.push_str(content);
    if !content.is_empty() && !content.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&ticks);
    out.push('\n');
    out
}

/// A collapsed section. `summary_html` must already be HTML-safe (see [`escape_html`]);
/// `body` is Markdown (the blank line after `</summary>` makes GitHub render it).
pub fn details(summary_html: &str, body: &str) -> String {
    let mut out = format!("<details>\n<summary>{summary_html}</summary>\n\n{body}");
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("\n</details>\n");
    out
}

/// A table. Cells must be inline Markdown already escaped with [`escape_inline`] (which also
/// escapes `|`), so no value can add or drop a column.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = String::new();
    out.push_str("| ");
    out.push_str(&headers.join(" | "));
    out.push_str(" |\n|");
    for _ in headers {
        out.push_str(" --- |");
    }
    out.push('\n');
    for row in rows {
        out.push_str("| ");
        let cells: Vec<&str> = (0..headers.len())
            .map(|i| row.get(i).map_or("", String::as_str))
            .collect();
        out.push_str(&cells.join(" | "));
        out.push_str(" |\n");
    }
    out
}

/// One piece of a document that [`fit`] may keep, cut or drop as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    /// Kept whole or not at all.
    Text(String),
    /// A collapsed code block that may be cut at a line boundary to use the remaining space.
    Code {
        /// HTML-safe summary line.
        summary_html: String,
        /// Fence info string, e.g. `diff`.
        info: String,
        /// The code.
        content: String,
    },
}

impl Block {
    fn render(&self) -> String {
        match self {
            Block::Text(t) => t.clone(),
            Block::Code {
                summary_html,
                info,
                content,
            } => details(summary_html, &fence(content, info)),
        }
    }
}

/// The result of [`fit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fitted {
    pub text: String,
    /// True when something was cut or dropped (and the note was appended).
    pub truncated: bool,
}

/// Join `blocks` in order while the result stays within `limit` bytes (bytes ≥ characters,
/// so this also holds GitHub's character limit). When a block does not fit, a code block is
/// cut at a line boundary if a useful part fits, everything after is dropped, and `note` is
/// appended. The output is never longer than `limit`, note included.
pub fn fit(blocks: &[Block], limit: usize, note: &str) -> Fitted {
    let full: Vec<String> = blocks.iter().map(Block::render).collect();
    let total: usize = full.iter().map(String::len).sum();
    if total <= limit {
        return Fitted {
            text: full.concat(),
            truncated: false,
        };
    }
    let note = if note.len() > limit {
        truncate_str(note, limit)
    } else {
        note
    };
    let budget = limit - note.len();
    let mut out = String::new();
    for (block, rendered) in blocks.iter().zip(&full) {
        if out.len() + rendered.len() <= budget {
            out.push_str(rendered);
            continue;
        }
        if let Block::Code {
            summary_html,
            info,
            content,
        } = block
            && let Some(cut) = cut_code(summary_html, info, content, budget - out.len())
        {
            out.push_str(&cut);
        }
        break;
    }
    out.push_str(note);
    Fitted {
        text: out,
        truncated: true,
    }
}

/// The longest prefix of `content` (whole lines, plus a line saying how many were left out)
/// whose rendered block fits in `room` bytes; `None` if not even one line fits. Linear: the
/// wrapper's size is computed once, with the fence sized for the whole content (a prefix never
/// needs a longer one).
fn cut_code(summary_html: &str, info: &str, content: &str, room: usize) -> Option<String> {
    let lines: Vec<&str> = content.split_inclusive('\n').collect();
    let ticks = (longest_run(content, '`') + 1).max(3);
    let wrapper = details(summary_html, "").len() + 2 * ticks + info.len() + 3;
    let cut_line = |rest: usize| format!("… {rest} more lines cut\n");
    let worst_note = cut_line(lines.len()).len();
    let budget = room.checked_sub(wrapper + worst_note + 1)?;
    let mut used = 0;
    let mut kept = 0;
    for line in &lines {
        if used + line.len() > budget {
            break;
        }
        used += line.len();
        kept += 1;
    }
    if kept == 0 {
        return None;
    }
    let mut body: String = lines[..kept].concat();
    if !body.ends_with('\n') {
        body.push('\n');
    }
    body.push_str(&cut_line(lines.len() - kept));
    let rendered = details(summary_html, &fence(&body, info));
    debug_assert!(rendered.len() <= room);
    (rendered.len() <= room).then_some(rendered)
}

/// Like [`fit`], but no `Text` block is dropped (the headlines and tables a reader needs):
/// the `Code` blocks give way, the longest first. One cap on the bytes of code any block may
/// keep is lowered until the whole fits, so every block at or under the cap stays whole and
/// the longest are cut the most, at a line boundary, down to their summary line and a line
/// saying how many lines were left out. `note` is appended when anything was cut. When the
/// text blocks alone do not fit, this is [`fit`] (cut in order).
pub fn fit_longest_first(blocks: &[Block], limit: usize, note: &str) -> Fitted {
    let full: Vec<String> = blocks.iter().map(Block::render).collect();
    if full.iter().map(String::len).sum::<usize>() <= limit {
        return Fitted {
            text: full.concat(),
            truncated: false,
        };
    }
    let Some(budget) = limit.checked_sub(note.len()) else {
        return fit(blocks, limit, note);
    };
    let rendered_at = |cap: usize| -> Vec<String> {
        blocks
            .iter()
            .zip(&full)
            .map(|(b, r)| match b {
                Block::Code {
                    summary_html,
                    info,
                    content,
                } if content.len() > cap => capped(summary_html, info, content, cap),
                _ => r.clone(),
            })
            .collect()
    };
    let size = |cap: usize| rendered_at(cap).iter().map(String::len).sum::<usize>();
    if size(0) > budget {
        return fit(blocks, limit, note);
    }
    // The largest cap that fits, by binary search. Size grows with the cap but for a few
    // bytes where the first kept line replaces the longer "all lines cut" note; the search
    // only ever keeps a cap that fits, so at worst it settles on a slightly smaller one.
    let longest = blocks
        .iter()
        .map(|b| match b {
            Block::Code { content, .. } => content.len(),
            Block::Text(_) => 0,
        })
        .max()
        .unwrap_or(0);
    let (mut lo, mut hi) = (0, longest);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if size(mid) <= budget {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut text = rendered_at(lo).concat();
    text.push_str(note);
    Fitted {
        text,
        truncated: true,
    }
}

/// A code block keeping the whole lines of `content` that fit in `cap` bytes, plus a line
/// saying how many were cut.
fn capped(summary_html: &str, info: &str, content: &str, cap: usize) -> String {
    let lines: Vec<&str> = content.split_inclusive('\n').collect();
    let mut used = 0;
    let kept = lines
        .iter()
        .take_while(|l| {
            used += l.len();
            used <= cap
        })
        .count();
    let mut body: String = lines[..kept].concat();
    if !body.is_empty() && !body.ends_with('\n') {
        body.push('\n');
    }
    let cut = lines.len() - kept;
    body.push_str(&if kept == 0 {
        format!("… all {cut} lines cut to fit; the full diff is in the job summary\n")
    } else {
        format!("… {cut} more lines cut\n")
    });
    details(summary_html, &fence(&body, info))
}

/// Cut `s` to at most `max` bytes at a character boundary.
pub fn truncate_str(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_escaping_neutralises_markdown_html_and_mentions() {
        let e = escape_inline("*a*_b_ [x](y) <img> a|b `c` @team #1 ~~s~~ line\nbreak & co");
        assert!(!e.contains("<img>"));
        assert!(e.contains("&lt;img&gt;"));
        assert!(e.contains(r"\*a\*"));
        assert!(e.contains(r"\[x\](y)"));
        assert!(e.contains(r"a\|b"));
        assert!(e.contains(r"\`c\`"));
        assert!(e.contains("@&#8203;team"));
        assert!(e.contains("&amp; co"));
        assert!(!e.contains('\n'));
        // Every `|` is escaped, so a table cell cannot split.
        assert!(e.match_indices('|').all(|(i, _)| &e[i - 1..i] == "\\"));
    }

    #[test]
    fn plain_names_versions_and_urls_stay_readable() {
        assert_eq!(escape_inline("scs2"), "scs2");
        assert_eq!(escape_inline("tenant a"), "tenant a");
        assert_eq!(
            escape_inline("openstack-scs2-1-34-v3 (v1.34.7)"),
            "openstack-scs2-1-34-v3 (v1.34.7)"
        );
        assert_eq!(
            escape_inline("see https://example.org/a-b.qcow2"),
            "see https://example.org/a-b.qcow2"
        );
    }

    #[test]
    fn leading_block_markers_are_escaped() {
        assert_eq!(escape_inline("# not a heading"), "\\# not a heading");
        assert_eq!(escape_inline("- not a list"), "\\- not a list");
        assert_eq!(escape_inline("1. not a list"), "1\\. not a list");
        assert_eq!(escape_inline("> not a quote"), "&gt; not a quote");
        assert_eq!(escape_inline("1.34"), "1.34");
        assert_eq!(escape_inline("-x"), "-x");
        assert_eq!(escape_inline("---"), "\\---");
    }

    #[test]
    fn html_escaping_for_summaries() {
        assert_eq!(
            escape_html("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn fence_is_longer_than_any_backtick_run_inside() {
        let content = "+ ```yaml\n+ ````\n";
        let f = fence(content, "diff");
        assert!(f.starts_with("`````diff\n"));
        assert!(f.ends_with("\n`````\n"));
        assert!(f.contains(content));
        assert!(fence("x", "").starts_with("```\nx\n```"));
    }

    #[test]
    fn table_keeps_its_columns() {
        let t = table(
            &["A", "B"],
            &[vec![escape_inline("x|y"), escape_inline("z")], vec![]],
        );
        assert_eq!(t, "| A | B |\n| --- | --- |\n| x\\|y | z |\n|  |  |\n");
    }

    #[test]
    fn fit_keeps_everything_when_it_fits() {
        let blocks = vec![Block::Text("a\n".into()), Block::Text("b\n".into())];
        let f = fit(&blocks, 100, "NOTE");
        assert_eq!(f.text, "a\nb\n");
        assert!(!f.truncated);
    }

    #[test]
    fn fit_cuts_code_at_a_line_and_appends_the_note() {
        let content: String = (0..1000).map(|i| format!("+line {i}\n")).collect();
        let blocks = vec![
            Block::Text("head\n".into()),
            Block::Code {
                summary_html: "f".into(),
                info: "diff".into(),
                content,
            },
            Block::Text("TRAILER\n".into()),
        ];
        let f = fit(&blocks, 2000, "\nNOTE\n");
        assert!(f.truncated);
        assert!(f.text.len() <= 2000);
        assert!(f.text.starts_with("head\n"));
        assert!(f.text.ends_with("\nNOTE\n"));
        assert!(f.text.contains("more lines cut"));
        assert!(f.text.contains("</details>"), "the cut block is closed");
        assert!(!f.text.contains("TRAILER"));
        // The fence is closed: an even number of fence lines.
        assert_eq!(f.text.matches("```").count() % 2, 0);
    }

    #[test]
    fn fit_never_exceeds_the_limit_even_for_a_huge_note() {
        let blocks = vec![Block::Text("x".repeat(50))];
        let f = fit(&blocks, 10, &"n".repeat(40));
        assert!(f.text.len() <= 10);
    }

    fn code(name: &str, lines: usize) -> Block {
        Block::Code {
            summary_html: name.into(),
            info: "diff".into(),
            content: (0..lines).map(|i| format!("+{name} {i}\n")).collect(),
        }
    }

    #[test]
    fn fitting_longest_first_keeps_every_text_and_short_code_whole() {
        let blocks = vec![
            Block::Text("# head\n".into()),
            code("long", 2000),
            Block::Text("## second\n".into()),
            code("short", 3),
            Block::Text("TRAILER\n".into()),
        ];
        let f = fit_longest_first(&blocks, 4000, "\nNOTE\n");
        assert!(f.truncated && f.text.len() <= 4000, "{}", f.text.len());
        for kept in [
            "# head\n",
            "## second\n",
            "TRAILER\n",
            "+short 2\n",
            "+long 0\n",
        ] {
            assert!(f.text.contains(kept), "{kept}");
        }
        assert!(!f.text.contains("+long 1999\n"));
        assert!(f.text.contains("more lines cut\n") && f.text.ends_with("\nNOTE\n"));
        assert_eq!(
            f.text.matches("```").count() % 2,
            0,
            "every fence is closed"
        );
        // Room for little more than the summaries: the code gives way, the texts stay.
        let tight = fit_longest_first(&blocks, 400, "\nNOTE\n");
        assert!(
            tight.text.len() <= 400 && tight.text.contains("TRAILER\n"),
            "{}",
            tight.text
        );
        assert!(tight.text.contains("lines cut"));
        // Texts alone too long: cut in order, like `fit`.
        let texts = vec![Block::Text("x".repeat(300)), code("c", 10)];
        assert_eq!(fit_longest_first(&texts, 100, "N"), fit(&texts, 100, "N"));
        // Everything fits: nothing changes.
        let small = vec![Block::Text("a\n".into()), code("c", 2)];
        assert!(!fit_longest_first(&small, 10_000, "N").truncated);
    }

    #[test]
    fn truncate_respects_char_boundaries() {
        assert_eq!(truncate_str("äöü", 3), "ä");
        assert_eq!(truncate_str("abc", 10), "abc");
    }
}
