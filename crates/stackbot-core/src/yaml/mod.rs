//! Reading YAML nobody here controls, within limits of size, nesting and nodes produced.
//!
//! Tenant files belong to other teams and upstream documents to nobody; either may be hostile
//! or broken. `yaml_serde` alone is not enough for them: its alias counter counts references,
//! not the nodes they produce (one anchor of 10,000 scalars referenced 10,000 times builds
//! 100,000,000 nodes: gigabytes), and it loads a whole document before its recursion limit
//! looks at it (100,000 flow levels take minutes in the scanner first). So every foreign
//! document is first read here as a stream of events, with three limits enforced as the
//! events arrive ([`Limits`]): bytes before parsing, nesting depth at each collection, and
//! nodes produced, where an alias counts as every node it repeats. The first event past a
//! limit stops the read with an error naming the document, the line and the limit (the
//! setting that raises it). Each event costs constant work, apart from the scanner's
//! bookkeeping, which is bounded by the depth limit: reading is linear in the input.
//!
//! Pure: no I/O. Used by every parse of foreign YAML ([`from_str`] for documents built whole,
//! [`Reader`] for the streamed Helm index).

pub mod block;
mod parser;

pub use parser::{Event, SyntaxError};

use std::collections::HashMap;

use serde::de::DeserializeOwned;

/// `yaml_serde` refuses anything deeper than this itself (a fixed recursion limit), so a
/// depth limit above it would only move the refusal into a less helpful message.
pub const DEPTH_CEILING: usize = 128;

/// The bounds of one kind of foreign document. `setting` names where a user raises them
/// (e.g. `limits.tenant_files`), so every refusal can say so; `None` for a file of a fixed
/// format whose genuine instances are far below the bounds (`metadata.yaml`), where a refusal
/// says the file is not genuine rather than point at a setting that does not govern it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest document accepted, in bytes; refused before parsing.
    pub max_bytes: u64,
    /// Deepest nesting of collections (a top-level mapping is depth 1); an alias counts at the
    /// depth its content reaches where it is used.
    pub max_depth: usize,
    /// Most nodes (scalars, sequences, mappings) a file may produce, each alias counted as
    /// every node it repeats: the alias-expansion budget, and what bounds the memory of the
    /// values built from the file.
    pub max_nodes: u64,
    /// The configuration key of these limits, named in every refusal; `None`: built in.
    pub setting: Option<&'static str>,
}

/// Which limit a document went past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Bytes,
    Depth,
    Nodes,
}

impl Limit {
    /// The key below the limits' setting.
    pub fn key(self) -> &'static str {
        match self {
            Limit::Bytes => "max_bytes",
            Limit::Depth => "max_depth",
            Limit::Nodes => "max_nodes",
        }
    }
}

/// Why a foreign YAML document was not read. Always names the document (a file path or a
/// URL) and, when known, the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{document}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct YamlError {
    /// The file or URL.
    pub document: String,
    pub line: Option<usize>,
    /// `Some` when a limit refused the document (`None`: a syntax error).
    pub limit: Option<Limit>,
    pub message: String,
}

impl YamlError {
    fn over(source: &str, line: Option<usize>, limit: Limit, what: String, l: &Limits) -> Self {
        let value = match limit {
            Limit::Bytes => l.max_bytes,
            Limit::Depth => l.max_depth as u64,
            Limit::Nodes => l.max_nodes,
        };
        YamlError {
            document: source.to_string(),
            line,
            limit: Some(limit),
            message: match l.setting {
                Some(setting) => format!(
                    "{what}: over the limit `{setting}.{}` ({value}); refused without reading further (raise the limit in stackbot.yaml if this document is genuine)",
                    limit.key()
                ),
                None => format!(
                    "{what}: over this file's built-in limit `{}` ({value}); refused without reading further (no file of this format comes near it: replace the file with one csctl or stackbot wrote)",
                    limit.key()
                ),
            },
        }
    }
}

/// One open collection: the depth below it and, when anchored, its anchor and the node count
/// when it opened (so its size is known when it closes).
struct Open {
    anchor: Option<Vec<u8>>,
    nodes_at_start: u64,
    deepest: usize,
}

/// What an anchor repeats when an alias names it.
#[derive(Clone, Copy)]
struct Anchored {
    nodes: u64,
    /// Levels of nesting it adds where it is used (0 for a scalar).
    height: usize,
}

/// A stream of events of one document (or file of documents), refused at the first event
/// past a limit. Anchors are forgotten at each document's end, as YAML scopes them.
pub struct Reader<'a> {
    parser: parser::Parser<'a>,
    source: &'a str,
    limits: Limits,
    open: Vec<Open>,
    /// Every node produced so far (anchors' sizes are measured in it).
    nodes: u64,
    /// The nodes counted against `max_nodes`: all of them, or (streaming) only those aliases
    /// repeat.
    budgeted: u64,
    /// Written nodes count against `max_nodes` (a document built whole); `false` when the
    /// reader keeps nothing of what streams past, so only aliases' repeats can cost.
    count_written: bool,
    anchors: HashMap<Vec<u8>, Anchored>,
    line: usize,
}

impl<'a> Reader<'a> {
    /// A reader over `text` from `source` (a path or URL for messages); refuses a text over
    /// `limits.max_bytes` before any parsing.
    pub fn new(text: &'a str, source: &'a str, limits: &Limits) -> Result<Self, YamlError> {
        if text.len() as u64 > limits.max_bytes {
            return Err(too_large(source, text.len(), limits));
        }
        Ok(Reader {
            parser: parser::Parser::new(text.as_bytes()),
            source,
            limits: *limits,
            open: Vec::new(),
            nodes: 0,
            budgeted: 0,
            count_written: true,
            anchors: HashMap::new(),
            line: 1,
        })
    }

    /// A reader for a document that is searched as it streams and never built (a Helm
    /// index): its size is bounded by `max_bytes` and what the caller keeps, so `max_nodes`
    /// bounds only the nodes aliases repeat.
    pub fn streaming(text: &'a str, source: &'a str, limits: &Limits) -> Result<Self, YamlError> {
        Ok(Reader {
            count_written: false,
            ..Reader::new(text, source, limits)?
        })
    }

    /// The line the last event started on.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The depth of the collection the next event belongs to (0 at a document's top).
    pub fn depth(&self) -> usize {
        self.open.len()
    }

    /// The next event, `None` at the end of the stream. A syntax error is an error naming the
    /// line; a limit an error naming the limit.
    pub fn next_event(&mut self) -> Option<Result<Event, YamlError>> {
        let (event, line) = match self.parser.next_event()? {
            Ok(e) => e,
            Err(e) => {
                return Some(Err(YamlError {
                    document: self.source.to_string(),
                    line: Some(e.line),
                    limit: None,
                    message: format!("not valid YAML: {}", e.message),
                }));
            }
        };
        self.line = line;
        Some(self.account(&event).map(|()| event))
    }

    /// Count `event` against the limits.
    fn account(&mut self, event: &Event) -> Result<(), YamlError> {
        match event {
            Event::Scalar { anchor, .. } => {
                self.produce(1, 0, false)?;
                if let Some(a) = anchor {
                    let scalar = Anchored {
                        nodes: 1,
                        height: 0,
                    };
                    self.anchors.insert(a.clone(), scalar);
                }
            }
            Event::SequenceStart { anchor } | Event::MappingStart { anchor } => {
                self.produce(1, 0, false)?;
                if self.open.len() >= self.limits.max_depth {
                    return Err(self.refuse(
                        Limit::Depth,
                        format!("nested deeper than {} levels", self.limits.max_depth),
                    ));
                }
                let depth = self.open.len() + 1;
                self.open.push(Open {
                    anchor: anchor.clone(),
                    nodes_at_start: self.nodes - 1,
                    deepest: depth,
                });
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(),
            Event::Alias { anchor } => self.alias(anchor)?,
            Event::DocumentEnd => self.anchors.clear(),
            Event::StreamStart | Event::StreamEnd | Event::DocumentStart => {}
        }
        Ok(())
    }

    /// A collection closed: record its size under its anchor, and its depth in its parent.
    fn close(&mut self) {
        let Some(o) = self.open.pop() else { return };
        let depth = self.open.len() + 1;
        if let Some(parent) = self.open.last_mut() {
            parent.deepest = parent.deepest.max(o.deepest);
        }
        if let Some(a) = o.anchor {
            let anchored = Anchored {
                nodes: self.nodes - o.nodes_at_start,
                height: o.deepest - depth + 1,
            };
            self.anchors.insert(a, anchored);
        }
    }

    /// An alias repeats its anchor's nodes, at the depth where it stands.
    fn alias(&mut self, anchor: &[u8]) -> Result<(), YamlError> {
        let name = String::from_utf8_lossy(anchor).into_owned();
        if self
            .open
            .iter()
            .any(|o| o.anchor.as_deref() == Some(anchor))
        {
            return Err(YamlError {
                document: self.source.to_string(),
                line: Some(self.line),
                limit: Some(Limit::Nodes),
                message: format!(
                    "alias `*{name}` is used inside the node it names: it would repeat itself without end"
                ),
            });
        }
        // An unknown anchor is `yaml_serde`'s error to report; it repeats nothing.
        let a = self.anchors.get(anchor).copied().unwrap_or(Anchored {
            nodes: 1,
            height: 0,
        });
        if self.open.len() + a.height > self.limits.max_depth {
            return Err(self.refuse(
                Limit::Depth,
                format!(
                    "alias `*{name}` nests deeper than {} levels",
                    self.limits.max_depth
                ),
            ));
        }
        self.produce(a.nodes, self.open.len() + a.height, true)
            .map_err(|mut e| {
                e.message = format!("alias `*{name}` repeats {} nodes; {}", a.nodes, e.message);
                e
            })
    }

    /// `n` more nodes, reaching `depth`; `repeated` when an alias produces them.
    fn produce(&mut self, n: u64, depth: usize, repeated: bool) -> Result<(), YamlError> {
        self.nodes = self.nodes.saturating_add(n);
        if repeated || self.count_written {
            self.budgeted = self.budgeted.saturating_add(n);
        }
        if let Some(o) = self.open.last_mut() {
            o.deepest = o.deepest.max(depth);
        }
        if self.budgeted > self.limits.max_nodes {
            return Err(self.refuse(
                Limit::Nodes,
                format!("more than {} nodes", self.limits.max_nodes),
            ));
        }
        Ok(())
    }

    fn refuse(&self, limit: Limit, what: String) -> YamlError {
        YamlError::over(self.source, Some(self.line), limit, what, &self.limits)
    }

    /// Skip the rest of the node whose start event was just read (a collection; nothing for a
    /// scalar or alias), counting it against the limits all the same.
    pub fn skip_node(&mut self, start: &Event) -> Result<(), YamlError> {
        if !matches!(
            start,
            Event::MappingStart { .. } | Event::SequenceStart { .. }
        ) {
            return Ok(());
        }
        let depth = self.depth();
        while self.depth() >= depth {
            match self.next_event() {
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => break,
            }
        }
        Ok(())
    }
}

/// The refusal of a document of `len` bytes, over `limits.max_bytes`.
pub fn too_large(source: &str, len: usize, limits: &Limits) -> YamlError {
    YamlError::over(source, None, Limit::Bytes, format!("{len} bytes"), limits)
}

/// Read the whole of `text` against `limits`. A syntax error is left to the parser that
/// builds the value (it reports it in its own words at the same place); a limit is an error.
pub fn check(text: &str, source: &str, limits: &Limits) -> Result<(), YamlError> {
    let mut r = Reader::new(text, source, limits)?;
    while let Some(e) = r.next_event() {
        match e {
            Ok(_) => {}
            Err(e) if e.limit.is_some() => return Err(e),
            Err(_) => return Ok(()),
        }
    }
    Ok(())
}

/// Parse a foreign document into `T` after [`check`]: the value built can never be larger
/// than the limits allow. Syntax errors name `source` and the line like limit errors do.
pub fn from_str<T: DeserializeOwned>(
    text: &str,
    source: &str,
    limits: &Limits,
) -> Result<T, YamlError> {
    check(text, source, limits)?;
    yaml_serde::from_str(text).map_err(|e| YamlError {
        document: source.to_string(),
        line: e.location().map(|l| l.line()),
        limit: None,
        message: format!("not valid YAML: {e}"),
    })
}

/// [`from_str`] for bytes that must be UTF-8 text.
pub fn from_slice<T: DeserializeOwned>(
    bytes: &[u8],
    source: &str,
    limits: &Limits,
) -> Result<T, YamlError> {
    if bytes.len() as u64 > limits.max_bytes {
        return Err(too_large(source, bytes.len(), limits));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| YamlError {
        document: source.to_string(),
        line: None,
        limit: None,
        message: format!("not UTF-8 text ({e})"),
    })?;
    from_str(text, source, limits)
}

/// The value at a path of mapping keys (`["spec", "versions"]`), if every key is there.
pub fn get<'a>(v: &'a yaml_serde::Value, path: &[&str]) -> Option<&'a yaml_serde::Value> {
    path.iter().try_fold(v, |v, k| v.get(*k))
}

/// The string at a path of mapping keys, if it is one.
pub fn get_str<'a>(v: &'a yaml_serde::Value, path: &[&str]) -> Option<&'a str> {
    get(v, path)?.as_str()
}

/// A string or number as written (a chart version `1.2` that YAML reads as a number).
pub fn scalar_text(v: &yaml_serde::Value) -> Option<String> {
    match v {
        yaml_serde::Value::String(s) => Some(s.clone()),
        yaml_serde::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
