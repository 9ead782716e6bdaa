//! A YAML emitter that writes what Go's `sigs.k8s.io/yaml.Marshal` (goyaml.v2) writes, for
//! the JSON-shaped values helm serialises (`Chart.yaml`, `Chart.lock` inside a chart
//! archive): keys in goyaml's "natural" order, indentless sequences, 2-space indent,
//! goyaml's quoting decisions and its line folding at column 80.
//!
//! Only block style is produced, as goyaml does for non-empty collections.

use serde_json::Value;

const BEST_WIDTH: usize = 80;
const INDENT: usize = 2;

/// Serialise a JSON-shaped value as goyaml.v2 would.
pub fn to_string(v: &Value) -> String {
    let mut e = Emitter {
        out: String::new(),
        column: 0,
    };
    match v {
        Value::Object(m) if !m.is_empty() => e.mapping(m, 0),
        Value::Array(a) if !a.is_empty() => e.sequence(a, 0),
        other => {
            e.inline(other, 0, false);
            e.newline();
        }
    }
    e.out
}

struct Emitter {
    out: String,
    column: usize,
}

impl Emitter {
    fn put(&mut self, s: &str) {
        self.out.push_str(s);
        self.column += s.chars().count();
    }
    fn newline(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }
    fn indent_to(&mut self, n: usize) {
        self.newline();
        for _ in 0..n {
            self.put(" ");
        }
    }

    /// A block mapping whose keys start at column `indent` (the cursor is already there for
    /// the first key).
    fn mapping(&mut self, m: &serde_json::Map<String, Value>, indent: usize) {
        let mut keys: Vec<&String> = m.keys().collect();
        keys.sort_by(|a, b| natural_cmp(a, b));
        for (i, k) in keys.into_iter().enumerate() {
            if i > 0 {
                for _ in 0..indent {
                    self.put(" ");
                }
            }
            self.scalar_str(k, indent, true);
            self.put(":");
            self.value_after_key(&m[k], indent);
        }
    }

    fn value_after_key(&mut self, v: &Value, indent: usize) {
        match v {
            Value::Object(m) if !m.is_empty() => {
                self.newline();
                for _ in 0..indent + INDENT {
                    self.put(" ");
                }
                self.mapping(m, indent + INDENT);
            }
            // Sequences in a mapping are indentless in goyaml.
            Value::Array(a) if !a.is_empty() => {
                self.newline();
                for _ in 0..indent {
                    self.put(" ");
                }
                self.sequence(a, indent);
            }
            other => {
                self.put(" ");
                self.inline(other, indent + INDENT, false);
                self.newline();
            }
        }
    }

    fn sequence(&mut self, a: &[Value], indent: usize) {
        for (i, item) in a.iter().enumerate() {
            if i > 0 {
                for _ in 0..indent {
                    self.put(" ");
                }
            }
            self.put("-");
            match item {
                Value::Object(m) if !m.is_empty() => {
                    self.put(" ");
                    self.mapping(m, indent + INDENT);
                }
                Value::Array(s) if !s.is_empty() => {
                    self.put(" ");
                    self.sequence(s, indent + INDENT);
                }
                other => {
                    self.put(" ");
                    self.inline(other, indent + INDENT, false);
                    self.newline();
                }
            }
        }
    }

    /// A scalar or empty collection on the current line; continuation lines (folding) are
    /// indented to `indent`.
    fn inline(&mut self, v: &Value, indent: usize, key: bool) {
        match v {
            Value::Null => self.put("null"),
            Value::Bool(b) => self.put(if *b { "true" } else { "false" }),
            Value::Number(n) => self.put(&n.to_string()),
            Value::String(s) => self.scalar_str(s, indent, key),
            Value::Array(_) => self.put("[]"),
            Value::Object(_) => self.put("{}"),
        }
    }

    fn scalar_str(&mut self, s: &str, indent: usize, key: bool) {
        let a = analyze(s);
        let wants_plain = resolves_to_str(s);
        let style = if s.contains('\n') && !key {
            if a.block_allowed {
                Style::Literal
            } else {
                Style::Double
            }
        } else if !wants_plain {
            Style::Double
        } else if !a.block_plain_allowed || (s.is_empty() && key) {
            if a.single_allowed {
                Style::Single
            } else {
                Style::Double
            }
        } else {
            Style::Plain
        };
        let allow_breaks = !key;
        match style {
            Style::Plain => self.write_plain(s, indent, allow_breaks),
            Style::Single => self.write_single(s, indent, allow_breaks),
            Style::Double => self.write_double(s, indent, allow_breaks),
            Style::Literal => self.write_literal(s, indent),
        }
    }

    fn write_plain(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && chars.get(i + 1) != Some(&' ')
                {
                    self.indent_to(indent);
                } else {
                    self.put(" ");
                }
                spaces = true;
            } else {
                self.out.push(c);
                self.column += 1;
                spaces = false;
            }
        }
    }

    fn write_single(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        let chars: Vec<char> = s.chars().collect();
        self.put("'");
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i != 0
                    && i != chars.len() - 1
                    && chars.get(i + 1) != Some(&' ')
                {
                    self.indent_to(indent);
                } else {
                    self.put(" ");
                }
                spaces = true;
            } else {
                if c == '\'' {
                    self.put("'");
                }
                self.out.push(c);
                self.column += 1;
                spaces = false;
            }
        }
        self.put("'");
    }

    fn write_double(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        let chars: Vec<char> = s.chars().collect();
        self.put("\"");
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !is_printable(c) || c == '\u{feff}' || is_break(c) || c == '"' || c == '\\' {
                let esc = match c {
                    '\0' => "\\0".to_string(),
                    '\x07' => "\\a".to_string(),
                    '\x08' => "\\b".to_string(),
                    '\t' => "\\t".to_string(),
                    '\n' => "\\n".to_string(),
                    '\x0b' => "\\v".to_string(),
                    '\x0c' => "\\f".to_string(),
                    '\r' => "\\r".to_string(),
                    '\x1b' => "\\e".to_string(),
                    '"' => "\\\"".to_string(),
                    '\\' => "\\\\".to_string(),
                    '\u{85}' => "\\N".to_string(),
                    '\u{a0}' => "\\_".to_string(),
                    '\u{2028}' => "\\L".to_string(),
                    '\u{2029}' => "\\P".to_string(),
                    c if (c as u32) <= 0xff => format!("\\x{:02X}", c as u32),
                    c if (c as u32) <= 0xffff => format!("\\u{:04X}", c as u32),
                    c => format!("\\U{:08X}", c as u32),
                };
                self.put(&esc);
                spaces = false;
            } else if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i != 0
                    && i != chars.len() - 1
                {
                    self.indent_to(indent);
                    if chars.get(i + 1) == Some(&' ') {
                        self.put("\\");
                    }
                } else {
                    self.put(" ");
                }
                spaces = true;
            } else {
                self.out.push(c);
                self.column += 1;
                spaces = false;
            }
        }
        self.put("\"");
    }

    fn write_literal(&mut self, s: &str, indent: usize) {
        self.put("|");
        if s.starts_with(' ') || s.starts_with('\n') {
            self.put(&INDENT.to_string());
        }
        let trailing = s.len() - s.trim_end_matches('\n').len();
        match trailing {
            0 => self.put("-"),
            1 => {}
            _ => self.put("+"),
        }
        let body = s.strip_suffix('\n').unwrap_or(s);
        for line in body.split('\n') {
            self.newline();
            if !line.is_empty() {
                for _ in 0..indent {
                    self.put(" ");
                }
                self.put(line);
            }
        }
    }
}

enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_printable(c: char) -> bool {
    let u = c as u32;
    u == 0x0a
        || (0x20..=0x7e).contains(&u)
        || u == 0x85
        || (0xa0..=0xd7ff).contains(&u)
        || ((0xe000..=0xfffd).contains(&u) && u != 0xfeff)
        || (0x10000..=0x10ffff).contains(&u)
}

struct Analysis {
    block_plain_allowed: bool,
    single_allowed: bool,
    block_allowed: bool,
}

/// libyaml's `yaml_emitter_analyze_scalar`, for block context.
fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            block_plain_allowed: true,
            single_allowed: true,
            block_allowed: false,
        };
    }
    let chars: Vec<char> = s.chars().collect();
    let blank = |i: usize| i >= chars.len() || matches!(chars[i], ' ' | '\t') || is_break(chars[i]);
    let mut block_ind = s.starts_with("---") || s.starts_with("...");
    let (mut special, mut line_breaks) = (false, false);
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut prev_space, mut prev_break) = (false, false);
    let mut preceded_by_ws = true;
    let mut followed_by_ws = blank(1);
    for (i, &c) in chars.iter().enumerate() {
        if i == 0 {
            if "#,[]{}&*!|>'\"%@`".contains(c) || (c == '-' && followed_by_ws) {
                block_ind = true;
            }
            if (c == '?' || c == ':') && followed_by_ws {
                block_ind = true;
            }
        } else if (c == ':' && followed_by_ws) || (c == '#' && preceded_by_ws) {
            block_ind = true;
        }
        if !is_printable(c) || c == '\u{feff}' {
            special = true;
        }
        if is_break(c) {
            line_breaks = true;
        }
        let last = i == chars.len() - 1;
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if last {
                trailing_space = true;
            }
            if prev_break {
                break_space = true;
            }
            prev_space = true;
            prev_break = false;
        } else if is_break(c) {
            if i == 0 {
                leading_break = true;
            }
            if last {
                trailing_break = true;
            }
            if prev_space {
                space_break = true;
            }
            prev_break = true;
            prev_space = false;
        } else {
            prev_space = false;
            prev_break = false;
        }
        preceded_by_ws = blank(i);
        followed_by_ws = blank(i + 2);
    }
    let mut block_plain = true;
    let mut single = true;
    let mut block = true;
    if leading_space || leading_break || trailing_space || trailing_break {
        block_plain = false;
    }
    if trailing_space {
        block = false;
    }
    if break_space {
        block_plain = false;
        single = false;
    }
    if space_break || special {
        block_plain = false;
        single = false;
        block = false;
    }
    if line_breaks || block_ind {
        block_plain = false;
    }
    Analysis {
        block_plain_allowed: block_plain,
        single_allowed: single,
        block_allowed: block,
    }
}

/// goyaml.v2 `resolve("", s)` yields `!!str` (and not a base-60 float): only then may the
/// string be written plain; otherwise goyaml double-quotes it.
fn resolves_to_str(s: &str) -> bool {
    const SPECIAL: &[&str] = &[
        "", "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true",
        "True", "TRUE", "n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE",
        ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
        "-.Inf", "-.INF", "<<",
    ];
    if SPECIAL.contains(&s) {
        return false;
    }
    let first = s.as_bytes()[0];
    if first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.') {
        let plain = s.replace('_', "");
        if is_go_int(&plain) || is_yaml_float(&plain) {
            return false;
        }
        if first.is_ascii_digit() && is_timestamp(s) {
            return false;
        }
    }
    !is_base60_float(s)
}

fn all_digits_radix(s: &str, radix: u32) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_digit(radix))
}

/// `strconv.ParseInt(s, 0, 64)` or `ParseUint` would succeed (ignoring range).
fn is_go_int(s: &str) -> bool {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    if let Some(r) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        return all_digits_radix(r, 16) && r.len() <= 16;
    }
    if let Some(r) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
        return all_digits_radix(r, 2) && r.len() <= 64;
    }
    if let Some(r) = body.strip_prefix("0o").or_else(|| body.strip_prefix("0O")) {
        return all_digits_radix(r, 8);
    }
    if body.len() > 1 && body.starts_with('0') {
        return all_digits_radix(&body[1..], 8);
    }
    all_digits_radix(body, 10) && body.len() <= 20
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn is_yaml_float(s: &str) -> bool {
    let b = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (mant, exp) = match b.find(['e', 'E']) {
        Some(i) => (&b[..i], Some(&b[i + 1..])),
        None => (b, None),
    };
    let mant_ok = if let Some(frac) = mant.strip_prefix('.') {
        all_digits_radix(frac, 10)
    } else {
        match mant.split_once('.') {
            Some((int, frac)) => {
                all_digits_radix(int, 10) && (frac.is_empty() || all_digits_radix(frac, 10))
            }
            None => all_digits_radix(mant, 10),
        }
    };
    let exp_ok = exp.is_none_or(|e| all_digits_radix(e.strip_prefix(['+', '-']).unwrap_or(e), 10));
    mant_ok && exp_ok
}

// Compiled once: these are asked about every plain scalar of every packaged file.
static TIMESTAMP: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2}))|(?: [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?))?$",
    )
    .expect("static regex")
});
static BASE60_FLOAT: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$").expect("static regex")
});

fn is_timestamp(s: &str) -> bool {
    TIMESTAMP.is_match(s)
}

fn is_base60_float(s: &str) -> bool {
    BASE60_FLOAT.is_match(s)
}

/// goyaml's `keyList.Less` for string keys: letters compare by code point, runs of digits
/// compare numerically, and a non-letter sorts before a letter.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            return if bl {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let (mut an, mut bn): (i64, i64) = (0, 0);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an.wrapping_mul(10).wrapping_add(ar[ai] as i64 - '0' as i64);
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn.wrapping_mul(10).wrapping_add(br[bi] as i64 - '0' as i64);
            bi += 1;
        }
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn chart_yaml_of_scs2_matches_helm_output() {
        let v = json!({"name": "openstack-scs2-1-34-cluster-class", "version": "v0-sha.azlfam7",
            "description": "This chart installs and configures: * Openstack scs2 Cluster Class ",
            "apiVersion": "v2", "type": "application"});
        assert_eq!(
            to_string(&v),
            "apiVersion: v2\ndescription: 'This chart installs and configures: * Openstack scs2 Cluster Class '\nname: openstack-scs2-1-34-cluster-class\ntype: application\nversion: v0-sha.azlfam7\n"
        );
    }

    #[test]
    fn quotes_what_would_resolve_to_another_type() {
        for (s, out) in [
            ("1.16", "\"1.16\""),
            ("true", "\"true\""),
            ("yes", "\"yes\""),
            ("", "\"\""),
            ("0755", "\"0755\""),
            ("2024-01-02", "\"2024-01-02\""),
            ("1:20", "\"1:20\""),
            ("1.2.3", "1.2.3"),
            ("v1", "v1"),
            ("- x", "'- x'"),
            ("a: b", "'a: b'"),
            ("it's", "it's"),
            ("#x", "'#x'"),
            ("a\tb", "\"a\\tb\""),
        ] {
            assert_eq!(to_string(&json!({"k": s})), format!("k: {out}\n"), "{s:?}");
        }
    }

    #[test]
    fn nested_collections_use_goyaml_layout() {
        let v = json!({"dependencies": [{"name": "cilium", "repository": "https://x", "version": "1.18.9"}],
            "annotations": {"b": "1x", "a": "z"}, "keywords": [], "deprecated": true});
        assert_eq!(
            to_string(&v),
            "annotations:\n  a: z\n  b: 1x\ndependencies:\n- name: cilium\n  repository: https://x\n  version: 1.18.9\ndeprecated: true\nkeywords: []\n"
        );
    }

    #[test]
    fn long_strings_fold_after_column_80() {
        let words = vec!["word"; 30].join(" ");
        let out = to_string(&json!({ "description": words }));
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines.len() > 1, "{out}");
        assert!(lines[1].starts_with("  word"));
        assert_eq!(
            out.replace("\n  ", " ").trim_end(),
            format!("description: {words}")
        );
    }

    #[test]
    fn natural_order_matches_goyaml() {
        let mut k = vec!["b", "a10", "a9", "A", "_x", "apiVersion", "appVersion"];
        k.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(k, ["_x", "A", "a9", "a10", "apiVersion", "appVersion", "b"]);
    }
}
