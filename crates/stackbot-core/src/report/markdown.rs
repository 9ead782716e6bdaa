//! GitHub-flavoured Markdown building blocks that stay correct for hostile input.
//!
//! Everything the bot writes into a PR body, comment or job summary contains names and file
//! contents it does not control (tenant names, template files, diffs). A stray `|` breaks a
//! table, a backtick run breaks out of a code fence, `@someone` pings a stranger, and a body
//! over 65,536 characters is rejected by GitHub outright. These helpers make each of those
//! impossible by construction.

pub use crate::body::{
    BODY_MAX, Block, COMMENT_LIMIT, Fitted, details, fence, fit, fit_body, fit_longest_first,
    truncate_str,
};

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

/// A bulleted list, one escaped item a line.
pub fn bullets<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    let line = |i: S| format!("- {}\n", escape_inline(i.as_ref()));
    items.into_iter().map(line).collect()
}

/// A table. Cells must be inline Markdown already escaped with [`escape_inline`] (which also
/// escapes `|`), so no value can add or drop a column.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let rule = " --- |".repeat(headers.len());
    let mut out = format!("| {} |\n|{rule}\n", headers.join(" | "));
    for row in rows {
        let cells: Vec<&str> = (0..headers.len())
            .map(|i| row.get(i).map_or("", String::as_str))
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
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
