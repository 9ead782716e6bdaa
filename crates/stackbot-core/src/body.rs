//! Bodies for the forge: every issue body, pull request body and comment fits under GitHub's
//! limit by construction.
//!
//! GitHub refuses a body or comment of 65,536 characters or more, and the content the bot
//! writes is not its own to bound (a tenant file of 10,000 documents, release notes, diffs).
//! So every writer builds its body from [`Block`]s and passes it through [`fit_body`], which
//! counts every part, cuts what does not fit at a line or item, and says what it cut and where
//! the whole is. Pure text; vocabulary every layer may use (the Markdown helpers that escape
//! hostile text live in `report::markdown`).

/// GitHub rejects issue/PR bodies and comments longer than this many characters.
pub const COMMENT_LIMIT: usize = 65_536;

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

/// A collapsed section. `summary_html` must already be HTML-safe (see
/// `report::markdown::escape_html`);
/// `body` is Markdown (the blank line after `</summary>` makes GitHub render it).
pub fn details(summary_html: &str, body: &str) -> String {
    let mut out = format!("<details>\n<summary>{summary_html}</summary>\n\n{body}");
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("\n</details>\n");
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

/// Like [`fit`], but no block other than a `Code` block is dropped (the headlines and tables a
/// reader needs): the `Code` blocks give way, the longest first. One cap on the bytes of code
/// any block may keep is lowered until the whole fits, so every block at or under the cap
/// stays whole and the longest are cut the most, at a line boundary, down to their summary
/// line and a line saying how many lines were left out. `note` is appended when anything was
/// cut. When the other blocks alone do not fit, this is [`fit`] (cut in order).
pub fn fit_longest_first(blocks: &[Block], limit: usize, note: &str) -> Fitted {
    let full: Vec<String> = blocks.iter().map(Block::render).collect();
    if full.iter().map(String::len).sum::<usize>() <= limit {
        return Fitted {
            text: full.concat(),
            truncated: false,
            cut: Vec::new(),
        };
    }
    let Some(budget) = limit.checked_sub(note.len()) else {
        return fit(blocks, limit, note);
    };
    let rendered_at = |cap: usize| -> Vec<(String, Option<String>)> {
        blocks
            .iter()
            .zip(&full)
            .map(|(b, r)| match b {
                Block::Code {
                    summary_html,
                    info,
                    content,
                } if content.len() > cap => {
                    let (text, kept, all) = capped(summary_html, info, content, cap);
                    (
                        text,
                        Some(format!("{summary_html} (after {kept} of {all} lines)")),
                    )
                }
                _ => (r.clone(), None),
            })
            .collect()
    };
    let size = |cap: usize| rendered_at(cap).iter().map(|(t, _)| t.len()).sum::<usize>();
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
            _ => 0,
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
    let parts = rendered_at(lo);
    let mut text: String = parts.iter().map(|(t, _)| t.as_str()).collect();
    text.push_str(note);
    Fitted {
        text,
        truncated: true,
        cut: parts.into_iter().filter_map(|(_, c)| c).collect(),
    }
}

/// A code block keeping the whole lines of `content` that fit in `cap` bytes, plus a line
/// saying how many were cut; with how many lines it kept of how many.
fn capped(summary_html: &str, info: &str, content: &str, cap: usize) -> (String, usize, usize) {
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
    (
        details(summary_html, &fence(&body, info)),
        kept,
        lines.len(),
    )
}

/// GitHub refuses an issue body, pull request body or comment of 65,536 characters or more:
/// every body the bot writes is at most this many bytes (bytes ≥ characters).
pub const BODY_MAX: usize = COMMENT_LIMIT - 1;

/// Room [`fit_body`] keeps for its note saying what was cut.
const NOTE_ROOM: usize = 1024;

/// The one function every issue body, pull request body and comment goes through: `head`
/// (markers, the opening words) and `tail` (a trailer) are always kept, `blocks` in between as
/// far as `limit` allows ([`fit_longest_first`]: the longest code gives way first), every part
/// counted. When something is cut, a note says what, and
/// where the whole of it is (`whole`: "the pull request's *Files changed* tab", a link to the
/// job summary). Never longer than `limit`.
pub fn fit_body(head: &str, blocks: &[Block], tail: &str, limit: usize, whole: &str) -> Fitted {
    let tail = truncate_str(tail, limit / 4);
    let head = truncate_str(head, limit - tail.len());
    let avail = limit - head.len() - tail.len();
    let all = fit_longest_first(blocks, avail, "");
    if !all.truncated {
        return Fitted {
            text: format!("{head}{}{tail}", all.text),
            ..all
        };
    }
    let note_room = NOTE_ROOM.min(avail);
    let part = fit_longest_first(blocks, avail - note_room, "");
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
