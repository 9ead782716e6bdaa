//! GitHub Actions expressions, the subset the workflows and the action use: context paths,
//! literals, `== != < > <= >=`, `&& || !`, parentheses and the status functions. Values
//! follow GitHub's rules: `a || b` is `a` when truthy, else `b`; strings compare without
//! case; values of different types compare as numbers (`null` and `''` are 0). Anything else
//! panics, naming the expression.

use std::collections::BTreeMap;

use super::{Outcome, StepRecord};

/// A value.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
}

impl Val {
    pub fn truthy(&self) -> bool {
        match self {
            Val::Null => false,
            Val::Bool(b) => *b,
            Val::Num(n) => *n != 0.0 && !n.is_nan(),
            Val::Str(s) => !s.is_empty(),
        }
    }

    /// As it is spliced into text.
    pub fn text(&self) -> String {
        match self {
            Val::Null => String::new(),
            Val::Bool(b) => b.to_string(),
            Val::Num(n) if n.fract() == 0.0 => format!("{}", *n as i64),
            Val::Num(n) => n.to_string(),
            Val::Str(s) => s.clone(),
        }
    }

    fn num(&self) -> f64 {
        match self {
            Val::Null => 0.0,
            Val::Bool(b) => f64::from(u8::from(*b)),
            Val::Num(n) => *n,
            Val::Str(s) if s.trim().is_empty() => 0.0,
            Val::Str(s) => s.trim().parse().unwrap_or(f64::NAN),
        }
    }

    fn loose_eq(&self, other: &Val) -> bool {
        match (self, other) {
            (Val::Str(a), Val::Str(b)) => a.eq_ignore_ascii_case(b),
            (Val::Null, Val::Null) => true,
            (Val::Bool(a), Val::Bool(b)) => a == b,
            _ => self.num() == other.num(),
        }
    }
}

/// What an expression can read.
pub struct Context<'a> {
    pub inputs: &'a BTreeMap<String, String>,
    pub github: &'a BTreeMap<String, String>,
    pub secrets: &'a BTreeMap<String, String>,
    pub vars: &'a BTreeMap<String, String>,
    pub steps: &'a [StepRecord],
    /// Further contexts by name (`matrix`, `needs`): the rest of the path is the key.
    pub extra: &'a BTreeMap<String, BTreeMap<String, String>>,
    pub runner_temp: String,
    /// Whether an earlier step failed (`success()`, `failure()`).
    pub failed: bool,
}

impl Context<'_> {
    fn lookup(&self, path: &str) -> Val {
        let (head, rest) = path.split_once('.').unwrap_or((path, ""));
        let map = |m: &BTreeMap<String, String>| m.get(rest).cloned().map_or(Val::Null, Val::Str);
        match head {
            "inputs" => map(self.inputs),
            "github" => map(self.github),
            "secrets" => map(self.secrets),
            "vars" => map(self.vars),
            "runner" => match rest {
                "temp" => Val::Str(self.runner_temp.clone()),
                "os" => Val::Str("Linux".into()),
                _ => panic!("unsupported `runner.{rest}`"),
            },
            "steps" => self.step(rest),
            _ => match self.extra.get(head) {
                Some(m) => map(m),
                None => panic!("unsupported context in `{path}`"),
            },
        }
    }

    fn step(&self, rest: &str) -> Val {
        let (id, what) = rest.split_once('.').expect("steps.<id>.<what>");
        let Some(s) = self
            .steps
            .iter()
            .rev()
            .find(|s| s.id.as_deref() == Some(id))
        else {
            return Val::Null;
        };
        if let Some(key) = what.strip_prefix("outputs.") {
            return s.outputs.get(key).cloned().map_or(Val::Null, Val::Str);
        }
        assert!(
            what == "outcome" || what == "conclusion",
            "unsupported `steps.{rest}`"
        );
        Val::Str(
            match s.outcome {
                Outcome::Success => "success",
                Outcome::Failure(_) => "failure",
                Outcome::Skipped | Outcome::NotEmulated(_) => "skipped",
            }
            .into(),
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Lit(Val),
    Op(&'static str),
}

fn tokens(src: &str) -> Vec<Tok> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' {
            let mut s = String::new();
            i += 1;
            loop {
                assert!(i < b.len(), "unterminated string in `{src}`");
                if b[i] == b'\'' {
                    if b.get(i + 1) == Some(&b'\'') {
                        s.push('\'');
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                let ch = src[i..].chars().next().unwrap();
                s.push(ch);
                i += ch.len_utf8();
            }
            out.push(Tok::Lit(Val::Str(s)));
        } else if let Some(op) = ["==", "!=", "<=", ">=", "&&", "||"]
            .into_iter()
            .find(|op| src[i..].starts_with(op))
        {
            out.push(Tok::Op(op));
            i += 2;
        } else if let Some(op) = ["!", "(", ")", "<", ">"]
            .into_iter()
            .find(|op| src[i..].starts_with(op))
        {
            out.push(Tok::Op(op));
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            out.push(Tok::Lit(Val::Num(src[start..i].parse().unwrap())));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b"_.-".contains(&b[i])) {
                i += 1;
            }
            let word = &src[start..i];
            out.push(match word {
                "true" => Tok::Lit(Val::Bool(true)),
                "false" => Tok::Lit(Val::Bool(false)),
                "null" => Tok::Lit(Val::Null),
                w => Tok::Ident(w.to_string()),
            });
        } else {
            panic!("unsupported character `{c}` in expression `{src}`");
        }
    }
    out
}

struct Parser<'a, 'c> {
    toks: Vec<Tok>,
    at: usize,
    ctx: &'a Context<'c>,
    src: &'a str,
}

impl Parser<'_, '_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }

    fn eat(&mut self, op: &'static str) -> bool {
        if self.peek() == Some(&Tok::Op(op)) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> Val {
        let mut v = self.and();
        while self.eat("||") {
            let r = self.and();
            if !v.truthy() {
                v = r;
            }
        }
        v
    }

    fn and(&mut self) -> Val {
        let mut v = self.unary();
        while self.eat("&&") {
            let r = self.unary();
            if v.truthy() {
                v = r;
            }
        }
        v
    }

    fn unary(&mut self) -> Val {
        if self.eat("!") {
            return Val::Bool(!self.unary().truthy());
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Val {
        let left = self.primary();
        let Some(Tok::Op(op)) = self.peek().cloned() else {
            return left;
        };
        if !matches!(op, "==" | "!=" | "<" | ">" | "<=" | ">=") {
            return left;
        }
        self.at += 1;
        let right = self.primary();
        Val::Bool(match op {
            "==" => left.loose_eq(&right),
            "!=" => !left.loose_eq(&right),
            "<" => left.num() < right.num(),
            ">" => left.num() > right.num(),
            "<=" => left.num() <= right.num(),
            _ => left.num() >= right.num(),
        })
    }

    fn primary(&mut self) -> Val {
        let tok = self.toks.get(self.at).cloned();
        self.at += 1;
        match tok {
            Some(Tok::Lit(v)) => v,
            Some(Tok::Op("(")) => {
                let v = self.or();
                assert!(self.eat(")"), "missing `)` in `{}`", self.src);
                v
            }
            Some(Tok::Ident(name)) if self.peek() == Some(&Tok::Op("(")) => {
                self.at += 1;
                assert!(
                    self.eat(")"),
                    "only functions without arguments: `{}`",
                    self.src
                );
                Val::Bool(match name.as_str() {
                    "always" => true,
                    "success" => !self.ctx.failed,
                    "failure" => self.ctx.failed,
                    "cancelled" => false,
                    f => panic!("unsupported function `{f}()` in `{}`", self.src),
                })
            }
            Some(Tok::Ident(path)) => self.ctx.lookup(&path),
            other => panic!("unexpected {other:?} in `{}`", self.src),
        }
    }
}

/// Evaluate one expression (the text inside `${{ }}`).
pub fn eval(src: &str, ctx: &Context<'_>) -> Val {
    let mut p = Parser {
        toks: tokens(src),
        at: 0,
        ctx,
        src,
    };
    let v = p.or();
    assert!(p.at == p.toks.len(), "trailing tokens in `{src}`");
    v
}

/// Replace every `${{ … }}` in `text` by its value.
pub fn interpolate(text: &str, ctx: &Context<'_>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find("}}")
            .expect("an expression ends with }}")
            + start;
        out.push_str(&eval(&rest[start + 3..end], ctx).text());
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// Whether a step with this `if:` runs: without a status function, `success() && (…)`.
pub fn condition(cond: Option<&str>, ctx: &Context<'_>) -> bool {
    let Some(c) = cond else {
        return !ctx.failed;
    };
    let c = c.trim();
    let c = c
        .strip_prefix("${{")
        .and_then(|c| c.strip_suffix("}}"))
        .unwrap_or(c);
    let has_status = ["always(", "success(", "failure(", "cancelled("]
        .iter()
        .any(|f| c.contains(f));
    let v = eval(c, ctx).truthy();
    if has_status { v } else { v && !ctx.failed }
}
