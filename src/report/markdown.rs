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
    /// Kept whole or not at all, and named in the note when dropped.
    Section { label: String, text: String },
    /// A bulleted list under `title` that may be cut after any item (a line then says how
    /// many were left out).
    List { title: String, items: Vec<String> },
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
            Block::Section { text, .. } => text.clone(),
            Block::List { title, items } => {
                let mut s = title.clone();
                for i in items {
                    s.push_str(&format!("- {i}\n"));
                }
                s
            }
            Block::Code {
                summary_html,
                info,
                content,
            } => details(summary_html, &fence(content, info)),
        }
    }

    /// What the note calls the block when it is cut or dropped (`None`: an unnamed part).
    fn label(&self) -> Option<String> {
        match self {
            Block::Text(_) => None,
            Block::Section { label, .. } => Some(label.clone()),
            Block::List { title, .. } => Some(title.trim().trim_matches('*').trim().to_string()),
            Block::Code { summary_html, .. } => Some(summary_html.clone()),
        }
    }
}

/// The result of [`fit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fitted {
    pub text: String,
    /// True when something was cut or dropped (and the note was appended).
    pub truncated: bool,
    /// What was cut or dropped, in words, in order (for the note of [`fit_body`]).
    pub cut: Vec<String>,
}

/// Join `blocks` in order while the result stays within `limit` bytes (bytes ≥ characters,
/// so this also holds GitHub's character limit). When a block does not fit, a code block is
/// cut at a line boundary and a list after an item if a useful part fits, everything after
/// is dropped, and `note` is appended. The output is never longer than `limit`, note
/// included; `cut` names what was cut or dropped.
pub fn fit(blocks: &[Block], limit: usize, note: &str) -> Fitted {
    let full: Vec<String> = blocks.iter().map(Block::render).collect();
    let total: usize = full.iter().map(String::len).sum();
    if total <= limit {
        return Fitted {
            text: full.concat(),
            truncated: false,
            cut: Vec::new(),
        };
    }
    let note = truncate_str(note, limit);
    let budget = limit - note.len();
    let mut out = String::new();
    let mut cut = Vec::new();
    let mut dropped_from = blocks.len();
    for (i, (block, rendered)) in blocks.iter().zip(&full).enumerate() {
        if out.len() + rendered.len() <= budget {
            out.push_str(rendered);
            continue;
        }
        let room = budget - out.len();
        let partial = match block {
            Block::Code {
                summary_html,
                info,
                content,
            } => cut_code(summary_html, info, content, room).map(|(text, kept, all)| {
                (
                    text,
                    format!("{summary_html} (after {kept} of {all} lines)"),
                )
            }),
            Block::List { title, items } => cut_list(title, items, room),
            _ => None,
        };
        if let Some((text, said)) = partial {
            out.push_str(&text);
            cut.push(said);
            dropped_from = i + 1;
        } else {
            dropped_from = i;
        }
        break;
    }
    let rest = &blocks[dropped_from.min(blocks.len())..];
    cut.extend(rest.iter().filter_map(Block::label));
    let unnamed = rest.iter().filter(|b| b.label().is_none()).count();
    if unnamed > 0 {
        cut.push(format!(
            "{unnamed} more part{}",
            if unnamed == 1 { "" } else { "s" }
        ));
    }
    out.push_str(note);
    Fitted {
        text: out,
        truncated: true,
        cut,
    }
}

/// GitHub refuses an issue body, pull request body or comment of 65,536 characters or more:
/// every body the bot writes is at most this many bytes (bytes ≥ characters).
pub const BODY_MAX: usize = COMMENT_LIMIT - 1;

/// Room [`fit_body`] keeps for its note saying what was cut.
const NOTE_ROOM: usize = 1024;

/// The one function every issue body, pull request body and comment goes through: `head`
/// (markers, the opening words) and `tail` (a trailer) are always kept, `blocks` in between as
/// far as `limit` allows, every part counted. When something is cut, a note says what, and
/// where the whole of it is (`whole`: "the pull request's *Files changed* tab", a link to the
/// job summary). Never longer than `limit`.
pub fn fit_body(head: &str, blocks: &[Block], tail: &str, limit: usize, whole: &str) -> Fitted {
    let tail = truncate_str(tail, limit / 4);
    let head = truncate_str(head, limit - tail.len());
    let avail = limit - head.len() - tail.len();
    let all = fit(blocks, avail, "");
    if !all.truncated {
        return Fitted {
            text: format!("{head}{}{tail}", all.text),
            ..all
        };
    }
    let note_room = NOTE_ROOM.min(avail);
    let part = fit(blocks, avail - note_room, "");
    let note = format!(
        "\n> [!NOTE]\n> Cut to stay under GitHub's 65,536-character limit: {}. The whole is in {whole}.\n",
        part.cut.join("; ")
    );
    let note = truncate_str(&note, note_room);
    Fitted {
        text: format!("{head}{}{note}{tail}", part.text),
        truncated: true,
        cut: part.cut,
    }
}

/// The longest prefix of `items` whose rendered list fits in `room` bytes, with a last item
/// saying how many were left out; `None` if not one item fits.
fn cut_list(title: &str, items: &[String], room: usize) -> Option<(String, String)> {
    let more = |n: usize| format!("- … and {n} more\n");
    let budget = room.checked_sub(title.len() + more(items.len()).len())?;
    let mut used = 0;
    let mut kept = 0;
    for i in items {
        let line = i.len() + 3;
        if used + line > budget {
            break;
        }
        used += line;
        kept += 1;
    }
    if kept == 0 {
        return None;
    }
    let mut s = title.to_string();
    for i in &items[..kept] {
        s.push_str(&format!("- {i}\n"));
    }
    s.push_str(&more(items.len() - kept));
    let label = title.trim().trim_matches('*').trim();
    Some((
        s,
        format!("{label} (after {kept} of {} items)", items.len()),
    ))
}

/// The longest prefix of `content` (whole lines, plus a line saying how many were left out)
/// whose rendered block fits in `room` bytes; `None` if not even one line fits. Linear: the
/// wrapper's size is computed once, with the fence sized for the whole content (a prefix never
/// needs a longer one).
fn cut_code(
    summary_html: &str,
    info: &str,
    content: &str,
    room: usize,
) -> Option<(String, usize, usize)> {
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
    (rendered.len() <= room).then_some((rendered, kept, lines.len()))
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

    #[test]
    fn fit_body_counts_every_part_and_says_what_was_cut() {
        let items: Vec<String> = (0..10_000)
            .map(|i| format!("change {i} of a long list"))
            .collect();
        let blocks = vec![
            Block::List {
                title: "\n**Changes**\n\n".into(),
                items,
            },
            Block::Section {
                label: "the release notes of v3".into(),
                text: "notes\n".into(),
            },
            Block::Code {
                summary_html: "the diff".into(),
                info: "diff".into(),
                content: "+a\n".into(),
            },
        ];
        let f = fit_body(
            "HEAD\n",
            &blocks,
            "\nTRAILER\n",
            BODY_MAX,
            "the *Files changed* tab",
        );
        assert!(f.truncated);
        assert!(f.text.chars().count() < 65_536, "{}", f.text.len());
        assert!(f.text.starts_with("HEAD\n") && f.text.ends_with("\nTRAILER\n"));
        let kept = f.text.matches("- change ").count();
        assert!(kept > 1000 && kept < 10_000, "{kept}");
        assert!(
            f.text
                .contains(&format!("- … and {} more\n", 10_000 - kept))
        );
        assert!(
            f.text.contains(&format!("Cut to stay under GitHub's 65,536-character limit: Changes (after {kept} of 10000 items); the release notes of v3; the diff. The whole is in the *Files changed* tab.")),
            "{}",
            &f.text[f.text.len() - 400..]
        );
        // Nothing to cut: no note.
        let small = fit_body("H\n", &blocks[1..], "T\n", BODY_MAX, "x");
        assert!(!small.truncated && !small.text.contains("Cut to stay"));
        // A head or tail alone over the limit still yields a body within it.
        let huge = fit_body(
            &"h".repeat(100_000),
            &blocks,
            &"t".repeat(100_000),
            BODY_MAX,
            "x",
        );
        assert!(huge.text.len() <= BODY_MAX);
    }

    #[test]
    fn truncate_respects_char_boundaries() {
        assert_eq!(truncate_str("äöü", 3), "ä");
        assert_eq!(truncate_str("abc", 10), "abc");
    }
}
