//! A subset of Go's `text/template` with the Sprig and Helm functions cluster-stack charts
//! and ClusterClass patches use, over `serde_json::Value` data.
//!
//! Simulated, not Go: actions `{{ }}` with `{{-`/`-}}` trimming and `/* */` comments; fields
//! (`.a.b`), variables (`$x := …`, `$`), string/raw-string/number/bool/nil literals, pipelines
//! and parenthesised sub-pipelines; `if`/`else if`/`else`, `range` (with `else`), `with`,
//! `define`, `template`; functions `and or not eq ne lt gt len index print printf
//! quote squote toJson default trunc trimSuffix trimPrefix trim contains replace upper lower
//! toString include`. Missing map keys are "no value" (`<no value>` when printed); a field
//! of no value is an error, as in Go. Numbers print like Go's `%v` of a float64 (JSON data).

use std::collections::BTreeMap;

use serde_json::Value;

#[derive(Debug, Clone)]
enum Tok {
    Field(Vec<String>),
    Var(String, Vec<String>),
    Ident(String),
    Str(String),
    Num(f64),
    Bool(bool),
    Nil,
    Pipe,
    Open,
    Close,
    Declare,
    Assign,
    Comma,
}

#[derive(Debug, Clone)]
enum Arg {
    Field(Vec<String>),
    Var(String, Vec<String>),
    Func(String),
    Lit(Value),
    Sub(Box<Pipeline>, Vec<String>),
}

#[derive(Debug, Clone)]
struct Command {
    args: Vec<Arg>,
}

#[derive(Debug, Clone)]
struct Pipeline {
    decl: Vec<String>,
    assign: bool,
    cmds: Vec<Command>,
}

#[derive(Debug, Clone)]
enum Node {
    Text(String),
    Action(Pipeline),
    If(Pipeline, Vec<Node>, Vec<Node>),
    Range(Pipeline, Vec<Node>, Vec<Node>),
    With(Pipeline, Vec<Node>, Vec<Node>),
    Template(String, Option<Pipeline>),
}

/// A set of parsed templates (a file and the `define`s it and its siblings contain).
#[derive(Debug, Default, Clone)]
pub struct Templates {
    named: BTreeMap<String, Vec<Node>>,
}

fn lex_action(s: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let b: Vec<char> = s.chars().collect();
    let mut i = 0;
    let ident_char = |c: char| c.is_alphanumeric() || c == '_';
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '|' {
            out.push(Tok::Pipe);
            i += 1;
        } else if c == '(' {
            out.push(Tok::Open);
            i += 1;
        } else if c == ')' {
            out.push(Tok::Close);
            i += 1;
            // `(…).field`
            if i < b.len() && b[i] == '.' {
                let mut path = Vec::new();
                while i < b.len() && b[i] == '.' {
                    i += 1;
                    let st = i;
                    while i < b.len() && ident_char(b[i]) {
                        i += 1;
                    }
                    path.push(b[st..i].iter().collect());
                }
                out.push(Tok::Field(path));
            }
        } else if c == ',' {
            out.push(Tok::Comma);
            i += 1;
        } else if c == ':' && b.get(i + 1) == Some(&'=') {
            out.push(Tok::Declare);
            i += 2;
        } else if c == '=' {
            out.push(Tok::Assign);
            i += 1;
        } else if c == '"' {
            out.push(lex_string(&b, &mut i)?);
        } else if c == '`' {
            let st = i + 1;
            i += 1;
            while i < b.len() && b[i] != '`' {
                i += 1;
            }
            if i >= b.len() {
                return Err("unterminated raw string".into());
            }
            out.push(Tok::Str(b[st..i].iter().collect()));
            i += 1;
        } else if c == '.' || c == '$' {
            out.push(lex_path(&b, &mut i));
        } else if c.is_ascii_digit()
            || (c == '-' && b.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let st = i;
            i += 1;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == '.') {
                i += 1;
            }
            let t: String = b[st..i].iter().collect();
            out.push(Tok::Num(t.parse().map_err(|_| format!("bad number {t}"))?));
        } else if ident_char(c) {
            out.push(lex_word(&b, &mut i));
        } else {
            return Err(format!("unexpected `{c}` in action `{s}`"));
        }
    }
    Ok(out)
}

/// A quoted string at `b[*i]` (the opening quote), with Go's escapes; `*i` moves past it.
fn lex_string(b: &[char], i: &mut usize) -> Result<Tok, String> {
    let mut v = String::new();
    *i += 1;
    while *i < b.len() && b[*i] != '"' {
        if b[*i] == '\\' {
            *i += 1;
            v.push(match b.get(*i) {
                Some('n') => '\n',
                Some('t') => '\t',
                Some(x) => *x,
                None => return Err("unterminated string".into()),
            });
        } else {
            v.push(b[*i]);
        }
        *i += 1;
    }
    if *i >= b.len() {
        return Err("unterminated string".into());
    }
    *i += 1;
    Ok(Tok::Str(v))
}

/// A field path (`.a.b`) or a variable with its path (`$x.a`) at `b[*i]`; `*i` moves past it.
fn lex_path(b: &[char], i: &mut usize) -> Tok {
    let ident_char = |c: char| c.is_alphanumeric() || c == '_';
    let var = b[*i] == '$';
    let st = *i;
    *i += 1;
    let mut name = String::new();
    if var {
        while *i < b.len() && ident_char(b[*i]) {
            name.push(b[*i]);
            *i += 1;
        }
    } else {
        *i = st;
    }
    let mut path = Vec::new();
    while *i < b.len() && b[*i] == '.' {
        *i += 1;
        let s2 = *i;
        while *i < b.len() && ident_char(b[*i]) {
            *i += 1;
        }
        let seg: String = b[s2..*i].iter().collect();
        if !seg.is_empty() {
            path.push(seg);
        }
    }
    if var {
        Tok::Var(name, path)
    } else {
        Tok::Field(path)
    }
}

/// A word at `b[*i]`: `true`, `false`, `nil` or a function name; `*i` moves past it.
fn lex_word(b: &[char], i: &mut usize) -> Tok {
    let ident_char = |c: char| c.is_alphanumeric() || c == '_';
    let st = *i;
    while *i < b.len() && ident_char(b[*i]) {
        *i += 1;
    }
    let w: String = b[st..*i].iter().collect();
    match w.as_str() {
        "true" => Tok::Bool(true),
        "false" => Tok::Bool(false),
        "nil" => Tok::Nil,
        _ => Tok::Ident(w),
    }
}

fn parse_pipeline(toks: &[Tok], pos: &mut usize) -> Result<Pipeline, String> {
    let mut decl = Vec::new();
    let mut assign = false;
    // `$a := …` / `$a, $b := …`
    let mut look = *pos;
    let mut names = Vec::new();
    while let Some(Tok::Var(n, p)) = toks.get(look) {
        if !p.is_empty() {
            break;
        }
        names.push(n.clone());
        look += 1;
        if matches!(toks.get(look), Some(Tok::Comma)) {
            look += 1;
        } else {
            break;
        }
    }
    if !names.is_empty() && matches!(toks.get(look), Some(Tok::Declare | Tok::Assign)) {
        assign = matches!(toks.get(look), Some(Tok::Assign));
        decl = names;
        *pos = look + 1;
    }
    let mut cmds = Vec::new();
    let mut args = Vec::new();
    while let Some(t) = toks.get(*pos) {
        match t {
            Tok::Close => break,
            Tok::Pipe => {
                cmds.push(Command {
                    args: std::mem::take(&mut args),
                });
                *pos += 1;
            }
            Tok::Open => {
                *pos += 1;
                let sub = parse_pipeline(toks, pos)?;
                if !matches!(toks.get(*pos), Some(Tok::Close)) {
                    return Err("missing `)`".into());
                }
                *pos += 1;
                let mut path = Vec::new();
                if let Some(Tok::Field(p)) = toks.get(*pos)
                    && matches!(toks.get(*pos - 1), Some(Tok::Close))
                {
                    // only a field glued to `)` (lexer emits it right after Close)
                    path = p.clone();
                    *pos += 1;
                }
                args.push(Arg::Sub(Box::new(sub), path));
            }
            Tok::Field(p) => {
                args.push(Arg::Field(p.clone()));
                *pos += 1;
            }
            Tok::Var(n, p) => {
                args.push(Arg::Var(n.clone(), p.clone()));
                *pos += 1;
            }
            Tok::Ident(w) => {
                args.push(Arg::Func(w.clone()));
                *pos += 1;
            }
            Tok::Str(s) => {
                args.push(Arg::Lit(Value::String(s.clone())));
                *pos += 1;
            }
            Tok::Num(n) => {
                args.push(Arg::Lit(serde_json::json!(n)));
                *pos += 1;
            }
            Tok::Bool(v) => {
                args.push(Arg::Lit(Value::Bool(*v)));
                *pos += 1;
            }
            Tok::Nil => {
                args.push(Arg::Lit(Value::Null));
                *pos += 1;
            }
            Tok::Comma | Tok::Declare | Tok::Assign => return Err("unexpected token".into()),
        }
    }
    if !args.is_empty() {
        cmds.push(Command { args });
    }
    if cmds.is_empty() {
        return Err("empty pipeline".into());
    }
    Ok(Pipeline { decl, assign, cmds })
}

fn pipeline(src: &str) -> Result<Pipeline, String> {
    let toks = lex_action(src)?;
    let mut pos = 0;
    let p = parse_pipeline(&toks, &mut pos)?;
    if pos != toks.len() {
        return Err(format!("unexpected `)` in `{src}`"));
    }
    Ok(p)
}

/// Split text into (text, action) pieces, applying the trim markers.
fn scan(src: &str) -> Result<Vec<(String, Option<String>)>, String> {
    let mut out: Vec<(String, Option<String>)> = Vec::new();
    let mut rest = src;
    let mut trim_next = false;
    loop {
        let Some(open) = rest.find("{{") else {
            let mut t = rest.to_string();
            if trim_next {
                t = t.trim_start().to_string();
            }
            out.push((t, None));
            return Ok(out);
        };
        let mut text = rest[..open].to_string();
        if trim_next {
            text = text.trim_start().to_string();
        }
        let mut inner_start = open + 2;
        if rest[inner_start..].starts_with("- ")
            || rest[inner_start..].starts_with("-\n")
            || rest[inner_start..].starts_with("-\t")
        {
            text = text.trim_end().to_string();
            inner_start += 1;
        }
        let after = &rest[inner_start..];
        // Comments may contain `}}`-free text only up to `*/`.
        let inner_trimmed = after.trim_start();
        let close = if inner_trimmed.starts_with("/*") {
            let c = after.find("*/").ok_or("unterminated comment")?;
            after[c..]
                .find("}}")
                .map(|e| c + e)
                .ok_or("unterminated comment")?
        } else {
            find_close(after)?
        };
        let mut inner = &after[..close];
        trim_next = false;
        if inner.ends_with(" -") || inner.ends_with("\n-") || inner.ends_with("\t-") {
            inner = &inner[..inner.len() - 1];
            trim_next = true;
        }
        out.push((text, Some(inner.trim().to_string())));
        rest = &after[close + 2..];
    }
}

/// The `}}` closing an action, skipping strings.
fn find_close(s: &str) -> Result<usize, String> {
    let b = s.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'`' => {
                i += 1;
                while i < b.len() && b[i] != b'`' {
                    i += 1;
                }
            }
            b'}' if b[i + 1] == b'}' => return Ok(i),
            _ => {}
        }
        i += 1;
    }
    Err(format!("unclosed action in `{}`", &s[..s.len().min(60)]))
}

enum Stop {
    End,
    Else(Option<String>),
    Eof,
}

fn parse_nodes(
    items: &[(String, Option<String>)],
    pos: &mut usize,
    defs: &mut BTreeMap<String, Vec<Node>>,
) -> Result<(Vec<Node>, Stop), String> {
    let mut nodes = Vec::new();
    while *pos < items.len() {
        let (text, action) = &items[*pos];
        *pos += 1;
        if !text.is_empty() {
            nodes.push(Node::Text(text.clone()));
        }
        let Some(a) = action else { continue };
        if a.starts_with("/*") {
            continue;
        }
        let (word, rest) = match a.split_once(char::is_whitespace) {
            Some((w, r)) => (w, r.trim()),
            None => (a.as_str(), ""),
        };
        match word {
            "end" => return Ok((nodes, Stop::End)),
            "else" => {
                return Ok((
                    nodes,
                    Stop::Else(Some(rest.to_string()).filter(|r| !r.is_empty())),
                ));
            }
            "if" | "with" | "range" => {
                let cond = pipeline(rest)?;
                let (body, stop) = parse_nodes(items, pos, defs)?;
                let els = match stop {
                    Stop::End => Vec::new(),
                    Stop::Else(None) => match parse_nodes(items, pos, defs)? {
                        (e, Stop::End) => e,
                        _ => return Err(format!("`{word}` without end")),
                    },
                    Stop::Else(Some(chain)) => {
                        // `else if …` / `else with …`: a nested block sharing our `end`.
                        let (w2, r2) = chain
                            .split_once(char::is_whitespace)
                            .unwrap_or((&chain, ""));
                        let c2 = pipeline(r2.trim())?;
                        let (b2, s2) = parse_nodes(items, pos, defs)?;
                        let e2 = match s2 {
                            Stop::End => Vec::new(),
                            Stop::Else(None) => match parse_nodes(items, pos, defs)? {
                                (e, Stop::End) => e,
                                _ => return Err("else without end".into()),
                            },
                            _ => return Err("nested else-if chains are not simulated".into()),
                        };
                        vec![match w2 {
                            "if" => Node::If(c2, b2, e2),
                            "with" => Node::With(c2, b2, e2),
                            other => return Err(format!("else {other} is not simulated")),
                        }]
                    }
                    Stop::Eof => return Err(format!("`{word}` without end")),
                };
                nodes.push(match word {
                    "if" => Node::If(cond, body, els),
                    "with" => Node::With(cond, body, els),
                    _ => Node::Range(cond, body, els),
                });
            }
            "define" => {
                let name = match lex_action(rest)?.first() {
                    Some(Tok::Str(s)) => s.clone(),
                    _ => return Err("define needs a name".into()),
                };
                let (body, stop) = parse_nodes(items, pos, defs)?;
                if !matches!(stop, Stop::End) {
                    return Err("define without end".into());
                }
                defs.insert(name, body);
            }
            "template" => {
                let toks = lex_action(rest)?;
                let Some(Tok::Str(name)) = toks.first() else {
                    return Err("template needs a name".into());
                };
                let arg = if toks.len() > 1 {
                    let mut p = 1;
                    Some(parse_pipeline(&toks, &mut p)?)
                } else {
                    None
                };
                nodes.push(Node::Template(name.clone(), arg));
            }
            _ => nodes.push(Node::Action(pipeline(a)?)),
        }
    }
    Ok((nodes, Stop::Eof))
}

impl Templates {
    /// Parse `src` as template `name`, collecting its `define`s.
    pub fn add(&mut self, name: &str, src: &str) -> Result<(), String> {
        let items = scan(src).map_err(|e| format!("{name}: {e}"))?;
        let mut pos = 0;
        let mut defs = BTreeMap::new();
        let (nodes, stop) =
            parse_nodes(&items, &mut pos, &mut defs).map_err(|e| format!("{name}: {e}"))?;
        if !matches!(stop, Stop::Eof) {
            return Err(format!("{name}: unexpected end/else"));
        }
        self.named.extend(defs);
        self.named.insert(name.to_string(), nodes);
        Ok(())
    }

    /// Execute template `name` with `data` as dot.
    pub fn execute(&self, name: &str, data: &Value) -> Result<String, String> {
        let nodes = self
            .named
            .get(name)
            .ok_or_else(|| format!("no template {name:?}"))?;
        let mut out = String::new();
        let mut scope = Scope {
            t: self,
            vars: vec![("$".to_string(), data.clone())],
        };
        scope.exec(nodes, data, &mut out)?;
        Ok(out)
    }
}

/// Parse and execute one template (a CAPI `enabledIf` or `valueFrom.template`).
pub fn render(src: &str, data: &Value) -> Result<String, String> {
    let mut t = Templates::default();
    t.add("tpl", src)?;
    t.execute("tpl", data)
}

struct Scope<'a> {
    t: &'a Templates,
    vars: Vec<(String, Value)>,
}

/// Go's truth: false, 0, nil, empty string, array or map are false.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// `fmt.Sprint` of a JSON-decoded Go value.
pub fn go_string(v: &Value) -> String {
    match v {
        Value::Null => "<no value>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or_default();
            if f.fract() == 0.0 && f.abs() < 1e21 {
                format!("{}", f as i64)
            } else {
                format!("{f}")
            }
        }
        Value::String(s) => s.clone(),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(go_string).collect::<Vec<_>>().join(" ")
        ),
        Value::Object(o) => format!(
            "map[{}]",
            o.iter()
                .map(|(k, v)| format!("{k}:{}", go_string(v)))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

fn field(v: &Value, path: &[String], what: &str) -> Result<Value, String> {
    let mut cur = v.clone();
    for (i, k) in path.iter().enumerate() {
        cur = match &cur {
            Value::Object(o) => o.get(k).cloned().unwrap_or(Value::Null),
            Value::Null if i > 0 || what != "." => {
                return Err(format!(
                    "nil pointer evaluating interface {{}}.{k} ({what}{})",
                    path[..i]
                        .iter()
                        .map(|p| format!(".{p}"))
                        .collect::<String>()
                ));
            }
            Value::Null => Value::Null,
            other => return Err(format!("can't evaluate field {k} in {}", go_string(other))),
        };
    }
    Ok(cur)
}

fn quote_go(s: &str) -> String {
    serde_json::to_string(s).expect("string")
}

impl Scope<'_> {
    fn var(&self, name: &str) -> Result<Value, String> {
        let key = if name.is_empty() {
            "$".to_string()
        } else {
            format!("${name}")
        };
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| *n == key)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| format!("undefined variable {key}"))
    }

    fn exec(&mut self, nodes: &[Node], dot: &Value, out: &mut String) -> Result<(), String> {
        let depth = self.vars.len();
        for n in nodes {
            match n {
                Node::Text(t) => out.push_str(t),
                Node::Action(p) => {
                    let v = self.pipe(p, dot)?;
                    if p.decl.is_empty() {
                        out.push_str(&go_string(&v));
                    }
                }
                Node::If(c, then, els) => {
                    let v = self.pipe(c, dot)?;
                    if truthy(&v) {
                        self.exec(then, dot, out)?;
                    } else {
                        self.exec(els, dot, out)?;
                    }
                }
                Node::With(c, then, els) => {
                    let v = self.pipe(c, dot)?;
                    if truthy(&v) {
                        self.exec(then, &v, out)?;
                    } else {
                        self.exec(els, dot, out)?;
                    }
                }
                Node::Range(c, body, els) => {
                    let v = self.pipe(c, dot)?;
                    let items: Vec<(Value, Value)> = match &v {
                        Value::Array(a) => a
                            .iter()
                            .enumerate()
                            .map(|(i, x)| (serde_json::json!(i), x.clone()))
                            .collect(),
                        Value::Object(o) => {
                            let mut keys: Vec<&String> = o.keys().collect();
                            keys.sort();
                            keys.into_iter()
                                .map(|k| (Value::String(k.clone()), o[k].clone()))
                                .collect()
                        }
                        Value::Null => Vec::new(),
                        other => {
                            return Err(format!("range can't iterate over {}", go_string(other)));
                        }
                    };
                    if items.is_empty() {
                        self.exec(els, dot, out)?;
                    }
                    for (k, x) in items {
                        let mark = self.vars.len();
                        match c.decl.as_slice() {
                            [e] => self.vars.push((format!("${e}"), x.clone())),
                            [i, e] => {
                                self.vars.push((format!("${i}"), k));
                                self.vars.push((format!("${e}"), x.clone()));
                            }
                            _ => {}
                        }
                        self.exec(body, &x, out)?;
                        self.vars.truncate(mark);
                    }
                }
                Node::Template(name, arg) => {
                    let data = match arg {
                        Some(p) => self.pipe(p, dot)?,
                        None => Value::Null,
                    };
                    out.push_str(&self.t.execute(name, &data)?);
                }
            }
        }
        self.vars.truncate(depth.max(1));
        Ok(())
    }

    fn pipe(&mut self, p: &Pipeline, dot: &Value) -> Result<Value, String> {
        let mut prev: Option<Value> = None;
        for c in &p.cmds {
            prev = Some(self.command(c, dot, prev)?);
        }
        let v = prev.unwrap_or(Value::Null);
        if !p.decl.is_empty() {
            let name = format!("${}", p.decl[p.decl.len() - 1]);
            if p.assign {
                if let Some(slot) = self.vars.iter_mut().rev().find(|(n, _)| *n == name) {
                    slot.1 = v.clone();
                }
            } else if p.decl.len() == 1 {
                self.vars.push((name, v.clone()));
            }
        }
        Ok(v)
    }

    fn arg(&mut self, a: &Arg, dot: &Value) -> Result<Value, String> {
        match a {
            Arg::Field(p) => field(dot, p, "."),
            Arg::Var(n, p) => field(&self.var(n)?, p, &format!("${n}")),
            Arg::Lit(v) => Ok(v.clone()),
            Arg::Sub(p, path) => {
                let v = self.pipe(p, dot)?;
                field(&v, path, "(…)")
            }
            Arg::Func(f) => self.call(f, Vec::new(), dot),
        }
    }

    fn command(&mut self, c: &Command, dot: &Value, prev: Option<Value>) -> Result<Value, String> {
        match &c.args[0] {
            Arg::Func(f) if c.args.len() > 1 || prev.is_some() || is_func(f) => {
                // `and`/`or` evaluate lazily, as Go ≥ 1.18 does.
                if f == "and" || f == "or" {
                    let mut last = Value::Null;
                    let mut all: Vec<&Arg> = c.args[1..].iter().collect();
                    let tail;
                    if let Some(p) = prev {
                        tail = Arg::Lit(p);
                        all.push(&tail);
                    }
                    for a in all {
                        last = self.arg(a, dot)?;
                        if (f == "and") != truthy(&last) {
                            return Ok(last);
                        }
                    }
                    return Ok(last);
                }
                let mut args = Vec::new();
                for a in &c.args[1..] {
                    args.push(self.arg(a, dot)?);
                }
                if let Some(p) = prev {
                    args.push(p);
                }
                self.call(f, args, dot)
            }
            first => {
                if c.args.len() > 1 || prev.is_some() {
                    return Err("can't give arguments to a non-function".into());
                }
                self.arg(first, dot)
            }
        }
    }

    fn call(&mut self, f: &str, a: Vec<Value>, _dot: &Value) -> Result<Value, String> {
        let s = |i: usize| -> String { a.get(i).map(go_string).unwrap_or_default() };
        let str_of = |v: &Value| -> String {
            match v {
                Value::String(x) => x.clone(),
                Value::Null => String::new(),
                other => go_string(other),
            }
        };
        Ok(match f {
            "not" => Value::Bool(!truthy(a.first().unwrap_or(&Value::Null))),
            "eq" => {
                let first = a.first().ok_or("eq needs arguments")?;
                Value::Bool(a[1..].iter().any(|x| eq(first, x)))
            }
            "ne" => Value::Bool(!eq(
                a.first().ok_or("ne needs 2 arguments")?,
                a.get(1).ok_or("ne needs 2 arguments")?,
            )),
            "lt" | "gt" | "le" | "ge" => {
                let (x, y) = (
                    a[0].as_f64().ok_or("compare numbers only")?,
                    a[1].as_f64().ok_or("compare numbers only")?,
                );
                Value::Bool(match f {
                    "lt" => x < y,
                    "gt" => x > y,
                    "le" => x <= y,
                    _ => x >= y,
                })
            }
            "len" => serde_json::json!(match &a[0] {
                Value::Array(x) => x.len(),
                Value::Object(x) => x.len(),
                Value::String(x) => x.len(),
                _ => return Err("len of a non-collection".into()),
            }),
            "index" => {
                let mut cur = a[0].clone();
                for k in &a[1..] {
                    cur = match (&cur, k) {
                        (Value::Array(x), Value::Number(n)) => x
                            .get(n.as_f64().unwrap_or(0.0) as usize)
                            .cloned()
                            .unwrap_or(Value::Null),
                        (Value::Object(x), Value::String(k)) => {
                            x.get(k).cloned().unwrap_or(Value::Null)
                        }
                        _ => Value::Null,
                    };
                }
                cur
            }
            "print" => Value::String(a.iter().map(go_string).collect::<Vec<_>>().concat()),
            "printf" => Value::String(printf(&s(0), &a[1..])?),
            "toString" => Value::String(str_of(&a[0])),
            "quote" => Value::String(
                a.iter()
                    .filter(|v| !v.is_null())
                    .map(|v| quote_go(&str_of(v)))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            "squote" => Value::String(
                a.iter()
                    .filter(|v| !v.is_null())
                    .map(|v| format!("'{}'", str_of(v)))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            "toJson" => Value::String(serde_json::to_string(&a[0]).expect("json")),
            "default" => {
                let given = a.get(1).cloned().unwrap_or(Value::Null);
                if truthy(&given) { given } else { a[0].clone() }
            }
            "trunc" => {
                let n = a[0].as_f64().ok_or("trunc needs a number")? as usize;
                Value::String(str_of(&a[1]).chars().take(n).collect())
            }
            "trimSuffix" => Value::String(
                str_of(&a[1])
                    .strip_suffix(&s(0))
                    .map(str::to_string)
                    .unwrap_or_else(|| str_of(&a[1])),
            ),
            "trimPrefix" => Value::String(
                str_of(&a[1])
                    .strip_prefix(&s(0))
                    .map(str::to_string)
                    .unwrap_or_else(|| str_of(&a[1])),
            ),
            "trim" => Value::String(str_of(&a[0]).trim().to_string()),
            "contains" => Value::Bool(str_of(&a[1]).contains(&s(0))),
            "replace" => Value::String(str_of(&a[2]).replace(&s(0), &s(1))),
            "upper" => Value::String(str_of(&a[0]).to_uppercase()),
            "lower" => Value::String(str_of(&a[0]).to_lowercase()),
            "include" => Value::String(self.t.execute(&s(0), a.get(1).unwrap_or(&Value::Null))?),
            other => return Err(format!("function {other:?} is not simulated")),
        })
    }
}

fn is_func(f: &str) -> bool {
    matches!(f, "and" | "or" | "not" | "print" | "printf")
}

fn eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn printf(fmt: &str, args: &[Value]) -> Result<String, String> {
    let mut out = String::new();
    let mut it = args.iter();
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some('s') | Some('v') | Some('d') => {
                out.push_str(&go_string(it.next().unwrap_or(&Value::Null)))
            }
            Some('q') => out.push_str(&quote_go(&go_string(it.next().unwrap_or(&Value::Null)))),
            other => return Err(format!("printf verb {other:?} is not simulated")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn go_template_basics() {
        let d = json!({"a": "x", "n": 50.0, "list": ["p", "q"], "o": {"k": "v"}, "f": false});
        let r = |s: &str| render(s, &d).unwrap();
        assert_eq!(r("{{ .a }}-{{ .n }}"), "x-50");
        assert_eq!(r("{{ if .f }}y{{ else }}n{{ end }}"), "n");
        assert_eq!(r("{{ if .missing }}y{{end}}"), "");
        assert_eq!(r("{{ .missing }}"), "<no value>");
        assert_eq!(
            r("a\n  {{- range .list }}\n- {{ . }}\n  {{- end }}\n"),
            "a\n- p\n- q\n"
        );
        assert_eq!(r("{{ and .o .o.k }}"), "v");
        assert_eq!(r("{{ and .missing .missing.k }}"), "<no value>");
        assert!(render("{{ .missing.k }}", &d).is_err());
        assert_eq!(r(r#"{{ eq .a "x" }} {{ ne .a "" }}"#), "true true");
        assert_eq!(
            r("{{ .list | toJson }} {{ .a | quote }}"),
            r#"["p","q"] "x""#
        );
        assert_eq!(
            r(r#"{{- /* c */ -}} {{ printf "%s-%s" .a "b" | trunc 3 }}"#),
            "x-b"
        );
        assert_eq!(r(r#"{{ $n := default "d" .missing }}{{ $n }}"#), "d");
        assert_eq!(r("{{ `{{ raw }}` }}"), "{{ raw }}");
    }

    #[test]
    fn defines_and_include() {
        let mut t = Templates::default();
        t.add("h", r#"{{- define "x" -}}[{{ .v }}]{{- end }}"#)
            .unwrap();
        t.add("m", r#"a {{ include "x" . }} {{ template "x" . }}"#)
            .unwrap();
        assert_eq!(t.execute("m", &json!({"v": 1})).unwrap(), "a [1] [1]");
    }
}
