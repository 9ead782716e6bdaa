//! Write kept text and expressions as a Tera template that renders back to the same bytes.
//!
//! Stack files are full of `{{ … }}` that belong to Helm, CSO's `overwrite.yaml` or cloud-init,
//! so kept text containing a Tera delimiter goes into `{% raw %}…{% endraw %}`. Tera's raw
//! body ends at the first `{% endraw %}` (any spacing, `-` trims), so text containing that is
//! split around it and the tag itself is written as a string expression.

use super::literals::Segment;

fn needs_raw(s: &str) -> bool {
    s.contains("{{") || s.contains("{%") || s.contains("{#") || s.ends_with('{')
}

/// Where the next `{% endraw %}`-like tag starts in `s` (`{%`, optional `-`, spaces, `endraw`).
fn find_endraw(s: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(i) = s[from..].find("{%") {
        let at = from + i;
        let rest = &s[at + 2..];
        let rest = rest.strip_prefix('-').unwrap_or(rest);
        let trimmed = rest.trim_start();
        if trimmed.starts_with("endraw") {
            // Whole tag up to its `%}`, or to the end.
            let end = s[at..].find("%}").map_or(s.len(), |e| at + e + 2);
            return Some((at, end));
        }
        from = at + 2;
    }
    None
}

/// A string literal Tera reads back as `s`.
fn tera_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn push_text(out: &mut String, text: &str) {
    if !needs_raw(text) {
        out.push_str(text);
        return;
    }
    let mut rest = text;
    while let Some((s, e)) = find_endraw(rest) {
        if s > 0 {
            push_raw(out, &rest[..s]);
        }
        out.push_str("{{ ");
        out.push_str(&tera_string(&rest[s..e]));
        out.push_str(" }}");
        rest = &rest[e..];
    }
    if !rest.is_empty() {
        push_raw(out, rest);
    }
}

fn push_raw(out: &mut String, text: &str) {
    if needs_raw(text) {
        out.push_str("{% raw %}");
        out.push_str(text);
        out.push_str("{% endraw %}");
    } else {
        out.push_str(text);
    }
}

/// The template text for `segments`.
pub fn template(segments: &[Segment]) -> String {
    let mut out = String::new();
    for s in segments {
        match s {
            Segment::Text(t) => push_text(&mut out, t),
            Segment::Value { meaning, .. } => out.push_str(&meaning.expr()),
        }
    }
    out
}

/// A whole file kept as it is, as a template (for stack files whose name ends in `.tera`).
pub fn verbatim(text: &str) -> String {
    template(&[Segment::Text(text.to_string())])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(t: &str) -> String {
        let mut tera = tera::Tera::new();
        tera.autoescape_on(Vec::<&str>::new());
        tera.add_raw_template("t", t).unwrap();
        tera.render("t", &tera::Context::new()).unwrap()
    }

    #[test]
    fn kept_text_renders_back_byte_for_byte() {
        for text in [
            "plain\n",
            "name: {{ .Release.Name }}-{{ .Chart.Version }}\n",
            "{% if x %}{# c #}\n",
            "trailing {",
            "{",
            "a {% endraw %} b {%- endraw -%} c",
            "{%endraw%}",
            "{% raw %}x",
            "{{{ a }}}",
            "quote \" back\\slash\n\ttab\r\n",
            "",
        ] {
            assert_eq!(render(&verbatim(text)), text, "{text:?}");
        }
    }

    #[test]
    fn expressions_next_to_braces_stay_separate() {
        let segs = [
            Segment::Text("x{".into()),
            Segment::Value {
                literal: "1.34".into(),
                meaning: super::super::literals::Meaning::MinorDotted,
            },
            Segment::Text("}{{ .Helm }}".into()),
        ];
        let t = template(&segs);
        let mut tera = tera::Tera::new();
        tera.add_raw_template("t", &t).unwrap();
        let mut ctx = tera::Context::new();
        ctx.insert("minor", &serde_json::json!({"dotted": "1.35"}));
        assert_eq!(tera.render("t", &ctx).unwrap(), "x{1.35}{{ .Helm }}");
    }
}
