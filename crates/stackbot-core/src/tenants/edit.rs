//! Format-preserving edits of tenant YAML files.
//!
//! Users keep comments, quoting, indentation and several documents per file in their GitOps
//! repositories, and bots that re-serialise YAML lose them (Renovate and Dependabot users keep
//! reporting diffs that rewrite whole files for a one-line bump). So an
//! edit here is a list of byte splices computed by [`super::scan`], and every result is
//! verified before it is accepted: the edited documents must re-parse to exactly the intended
//! values and every other document must be byte-identical. If not, the edit is refused.

use std::ops::Range;

use yaml_serde::Value;

use super::scan::{self, Inline, Line, Scalar, ScanError, Style};
use crate::model::{Minor, StackId};
use crate::yaml::{get, get_str};

/// Why a tenant file cannot be read or edited. Always names the file, and the line when known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct EditError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

/// A parsed tenant file: its text, document ranges and each document's value.
#[derive(Debug, Clone)]
pub struct TenantFile {
    pub path: String,
    pub text: String,
    pub docs: Vec<Range<usize>>,
    /// Each document's value; `Null` for documents that are neither a ClusterStack nor a
    /// Cluster (never read or edited, so never kept).
    pub values: Vec<Value>,
    /// 1-based line where each document starts, counted once (a file of 10,000 documents must
    /// not cost 10,000 scans from its start).
    pub doc_lines: Vec<usize>,
    /// What the file was read within; the edited result is verified within the same.
    pub limits: crate::yaml::Limits,
}

/// The release channel a `ClusterStack` follows (`spec.channel`). Only the stable channel
/// lists the releases stackbot publishes; any other (the operator's `custom`) is left alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Channel {
    Stable,
    /// Any other channel, as written.
    Other(String),
}

impl Channel {
    /// The channel `spec.channel` names; absent is the operator's default, stable.
    pub fn parse(written: Option<&str>) -> Self {
        match written.unwrap_or("stable") {
            "stable" => Channel::Stable,
            other => Channel::Other(other.to_string()),
        }
    }
}

/// A `ClusterStack` resource found in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackDoc {
    /// Index of the document in the file.
    pub doc: usize,
    /// 1-based line where the document starts.
    pub line: usize,
    pub stack: StackId,
    pub minor: Minor,
    /// `spec.channel` (default `stable`).
    pub channel: Channel,
    /// `spec.autoSubscribe` (default `true`).
    pub auto_subscribe: bool,
    /// `spec.versions`, `None` when the key is absent.
    pub versions: Option<Vec<String>>,
}

/// A Cluster API `Cluster` resource found in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterDoc {
    pub doc: usize,
    pub line: usize,
    /// `metadata.name` (empty when missing).
    pub name: String,
    /// `metadata.namespace`, if written.
    pub namespace: Option<String>,
    /// `spec.topology.class`, e.g. `openstack-scs2-1-33-v2`.
    pub class: String,
    /// `spec.topology.version`, e.g. `v1.33.4`.
    pub version: String,
}

/// One intended change to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// Make `spec.versions` of a ClusterStack document exactly this list. Kept items must stay
    /// in their order, new ones are appended (the only shapes a release produces).
    SetVersions { doc: usize, versions: Vec<String> },
    /// Insert, right after document `after_doc`, a copy of it for another minor with these
    /// versions (name and `kubernetesVersion` adjusted).
    AddMinor {
        after_doc: usize,
        from: Minor,
        minor: Minor,
        versions: Vec<String>,
    },
    /// Point a Cluster at another class and Kubernetes version.
    BumpCluster {
        doc: usize,
        class: String,
        version: String,
    },
}

fn set(v: &mut Value, path: &[&str], new: Value) -> bool {
    let Some((last, parents)) = path.split_last() else {
        return false;
    };
    let mut cur = v;
    for k in parents {
        match cur.get_mut(*k) {
            Some(n) => cur = n,
            None => return false,
        }
    }
    match cur.as_mapping_mut() {
        Some(m) => {
            m.insert(Value::String((*last).to_string()), new);
            true
        }
        None => false,
    }
}

impl TenantFile {
    /// Decode and parse a file within `limits` (checked over the whole file before any value
    /// is built: a file over them is refused naming the limit, and costs no more memory than
    /// the limits allow); non-UTF-8 or invalid YAML is an error naming the line.
    pub fn parse(
        path: &str,
        bytes: &[u8],
        limits: &crate::yaml::Limits,
    ) -> Result<TenantFile, EditError> {
        let over = |e: crate::yaml::YamlError| EditError {
            file: path.into(),
            line: e.line,
            message: e.message,
        };
        if bytes.len() as u64 > limits.max_bytes {
            return Err(over(crate::yaml::too_large(path, bytes.len(), limits)));
        }
        let text = std::str::from_utf8(bytes)
            .map_err(|e| EditError {
                file: path.into(),
                line: None,
                message: format!("not a UTF-8 text file ({e}); is it really YAML?"),
            })?
            .to_string();
        crate::yaml::check(&text, path, limits).map_err(over)?;
        let docs = scan::split_documents(&text);
        let mut values = Vec::with_capacity(docs.len());
        for r in &docs {
            let v = yaml_serde::from_str::<Value>(&text[r.clone()]).map_err(|e| EditError {
                file: path.into(),
                line: Some(
                    scan::line_number(&text, r.start) + e.location().map_or(0, |l| l.line() - 1),
                ),
                message: format!("not valid YAML: {e}"),
            })?;
            // Only ClusterStack and Cluster documents are ever read or edited: the others'
            // values are not kept (a 50 MB ConfigMap would otherwise stay in memory twice).
            let kept = matches!(get_str(&v, &["kind"]), Some("ClusterStack" | "Cluster"));
            values.push(if kept { v } else { Value::Null });
        }
        let mut doc_lines = Vec::with_capacity(docs.len());
        let (mut line, mut at) = (1, 0);
        for r in &docs {
            line += text.as_bytes()[at..r.start]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            at = r.start;
            doc_lines.push(line);
        }
        Ok(TenantFile {
            path: path.into(),
            text,
            docs,
            values,
            doc_lines,
            limits: *limits,
        })
    }

    /// 1-based line of a byte offset, counted from the start of its document
    /// ([`TenantFile::doc_lines`]), not of the file: every edit of a file of 10,000 documents
    /// is located, and counting from the file's start each time made that quadratic (28 s of
    /// CPU for one tenant file in a debug build).
    fn line_of(&self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        let doc = self
            .docs
            .partition_point(|r| r.start <= offset)
            .saturating_sub(1);
        match (self.docs.get(doc), self.doc_lines.get(doc)) {
            (Some(r), Some(first)) => {
                first
                    + self.text.as_bytes()[r.start..offset]
                        .iter()
                        .filter(|b| **b == b'\n')
                        .count()
            }
            _ => scan::line_number(&self.text, offset),
        }
    }

    fn error(&self, offset: usize, message: impl Into<String>) -> EditError {
        EditError {
            file: self.path.clone(),
            line: Some(self.line_of(offset)),
            message: message.into(),
        }
    }

    /// Every `ClusterStack` (`clusterstack.x-k8s.io/*`) document of `stack`.
    pub fn cluster_stacks(&self, stack: &StackId) -> Result<Vec<StackDoc>, EditError> {
        let mut out = Vec::new();
        for (i, v) in self.values.iter().enumerate() {
            let api = get_str(v, &["apiVersion"]).unwrap_or("");
            if !api.starts_with("clusterstack.x-k8s.io/")
                || get_str(v, &["kind"]) != Some("ClusterStack")
            {
                continue;
            }
            let at = self.docs[i].start;
            let (Some(p), Some(n)) = (
                get_str(v, &["spec", "provider"]),
                get_str(v, &["spec", "name"]),
            ) else {
                continue;
            };
            if p != stack.provider || n != stack.name {
                continue;
            }
            let minor = match get(v, &["spec", "kubernetesVersion"]) {
                Some(Value::String(s)) => s.parse::<Minor>().map_err(|e| self.error(at, format!("ClusterStack {p}/{n}: spec.kubernetesVersion: {e}")))?,
                Some(_) => return Err(self.error(at, format!("ClusterStack {p}/{n}: spec.kubernetesVersion must be a quoted string such as \"1.34\" (as a number, 1.30 reads as 1.3)"))),
                None => return Err(self.error(at, format!("ClusterStack {p}/{n} has no spec.kubernetesVersion"))),
            };
            let versions = match get(v, &["spec", "versions"]) {
                None | Some(Value::Null) => None,
                Some(Value::Sequence(s)) => Some(
                    s.iter()
                        .map(|x| {
                            x.as_str().map(str::to_string).ok_or_else(|| {
                                self.error(at, "spec.versions must list strings such as `v2`")
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                ),
                Some(_) => return Err(self.error(at, "spec.versions must be a list")),
            };
            out.push(StackDoc {
                doc: i,
                line: self.doc_lines[i],
                stack: stack.clone(),
                minor,
                channel: Channel::parse(get_str(v, &["spec", "channel"])),
                auto_subscribe: get(v, &["spec", "autoSubscribe"])
                    .and_then(Value::as_bool)
                    .unwrap_or(true),
                versions,
            });
        }
        Ok(out)
    }

    /// Every Cluster API `Cluster` document with a topology class and version.
    pub fn clusters(&self) -> Vec<ClusterDoc> {
        let mut out = Vec::new();
        for (i, v) in self.values.iter().enumerate() {
            let api = get_str(v, &["apiVersion"]).unwrap_or("");
            if !api.starts_with("cluster.x-k8s.io/") || get_str(v, &["kind"]) != Some("Cluster") {
                continue;
            }
            if let (Some(c), Some(ver)) = (
                get_str(v, &["spec", "topology", "class"]),
                get_str(v, &["spec", "topology", "version"]),
            ) {
                out.push(ClusterDoc {
                    doc: i,
                    line: self.doc_lines[i],
                    name: get_str(v, &["metadata", "name"])
                        .unwrap_or_default()
                        .to_string(),
                    namespace: get_str(v, &["metadata", "namespace"]).map(str::to_string),
                    class: c.to_string(),
                    version: ver.to_string(),
                });
            }
        }
        out
    }

    /// The lines (1-based, in the file as it is) that `edit` changes, the ones its diff
    /// shows as removed: the span of `spec.versions`' value, of a Cluster's class and version,
    /// or, for a new document, the last line of the one it is inserted after. `line 15`,
    /// `lines 15–17`, `lines 8, 10`; `None` when the edit cannot be located (then [`apply`]
    /// fails with the reason).
    ///
    /// [`apply`]: TenantFile::apply
    pub fn changed_lines(&self, edit: &Edit) -> Option<String> {
        let text = &self.text;
        let last_of = |r: &Range<usize>| self.line_of(r.end.max(r.start + 1) - 1);
        let mut lines: Vec<usize> = Vec::new();
        let mut add = |r: Range<usize>| {
            lines.extend(self.line_of(r.start)..=last_of(&r));
        };
        match edit {
            Edit::SetVersions { doc, versions } => {
                for (r, _) in versions_splices(text, self.docs.get(*doc)?.clone(), versions).ok()? {
                    add(r);
                }
            }
            Edit::BumpCluster { doc, .. } => {
                for key in ["class", "version"] {
                    let r = self.docs.get(*doc)?.clone();
                    add(scalar_at_path(text, r, &["spec", "topology", key])
                        .ok()?
                        .span);
                }
            }
            Edit::AddMinor { after_doc, .. } => {
                let end = self.docs.get(*after_doc)?.end;
                lines.push(self.line_of(end.saturating_sub(1)));
            }
        }
        lines.sort_unstable();
        lines.dedup();
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for l in lines {
            match runs.last_mut() {
                Some((_, last)) if *last + 1 == l => *last = l,
                _ => runs.push((l, l)),
            }
        }
        let words: Vec<String> = runs
            .iter()
            .map(|&(a, b)| {
                if a == b {
                    a.to_string()
                } else {
                    format!("{a}–{b}")
                }
            })
            .collect();
        match runs.as_slice() {
            [] => None,
            [(a, b)] if a == b => Some(format!("line {a}")),
            _ => Some(format!("lines {}", words.join(", "))),
        }
    }

    /// Apply `edits` and verify the result; returns the new file text.
    pub fn apply(&self, edits: &[Edit]) -> Result<String, EditError> {
        let mut splices: Vec<(Range<usize>, String)> = Vec::new();
        // expected[i]: None = byte-identical, Some(v) = must parse to v.
        let mut expected: Vec<Option<Value>> = vec![None; self.docs.len()];
        let mut inserted: Vec<Vec<Value>> = vec![Vec::new(); self.docs.len()];
        for e in edits {
            match e {
                Edit::SetVersions { doc, versions } => {
                    let r = self.docs[*doc].clone();
                    splices.extend(
                        versions_splices(&self.text, r.clone(), versions)
                            .map_err(|e| self.scan_err(e))?,
                    );
                    let want = expected[*doc].get_or_insert_with(|| self.values[*doc].clone());
                    set(want, &["spec", "versions"], string_seq(versions));
                }
                Edit::BumpCluster {
                    doc,
                    class,
                    version,
                } => {
                    let r = self.docs[*doc].clone();
                    let want = expected[*doc].get_or_insert_with(|| self.values[*doc].clone());
                    for (key, new) in [("class", class), ("version", version)] {
                        let s = scalar_at_path(&self.text, r.clone(), &["spec", "topology", key])
                            .map_err(|e| self.scan_err(e))?;
                        splices.push((s.span.clone(), s.style.write(new)));
                        set(want, &["spec", "topology", key], Value::String(new.clone()));
                    }
                }
                Edit::AddMinor {
                    after_doc,
                    from,
                    minor,
                    versions,
                } => {
                    let (text, value) = self
                        .copy_for_minor(*after_doc, *from, *minor, versions)
                        .map_err(|e| self.scan_err(e))?;
                    let end = self.docs[*after_doc].end;
                    splices.push((end..end, text));
                    inserted[*after_doc].push(value);
                }
            }
        }
        splices.sort_by_key(|(r, _)| (r.start, r.end));
        let mut out = String::with_capacity(self.text.len() + 256);
        let mut pos = 0;
        for (r, t) in &splices {
            if r.start < pos {
                return Err(self.error(r.start, "two edits overlap here; edit this file by hand"));
            }
            out.push_str(&self.text[pos..r.start]);
            out.push_str(t);
            pos = r.end;
        }
        out.push_str(&self.text[pos..]);
        self.verify(&out, &expected, &inserted)?;
        Ok(out)
    }

    fn scan_err(&self, e: ScanError) -> EditError {
        self.error(e.offset, format!("{}; edit this file by hand", e.message))
    }

    /// The text of a copy of document `doc` for `minor`, and the value it must parse to.
    fn copy_for_minor(
        &self,
        doc: usize,
        from: Minor,
        minor: Minor,
        versions: &[String],
    ) -> Result<(String, Value), ScanError> {
        let src = &self.text[self.docs[doc].clone()];
        let eol = if src.contains("\r\n") { "\r\n" } else { "\n" };
        // The copy always gets its own separator; the source's own `---` line is not repeated.
        let first = scan::lines(src, 0..src.len());
        let body_start = match first.first() {
            Some(l) if scan::is_separator(l.text) => l.next,
            _ => 0,
        };
        let body = &src[body_start..];
        let has_versions = get(&self.values[doc], &["spec", "versions"]).is_some();
        let mut splices = if has_versions {
            versions_splices(body, 0..body.len(), versions)?
        } else {
            Vec::new()
        };
        let kv = scalar_at_path(body, 0..body.len(), &["spec", "kubernetesVersion"])?;
        splices.push((kv.span.clone(), kv.style.write(&minor.to_string())));
        let mut want = self.values[doc].clone();
        if has_versions {
            set(&mut want, &["spec", "versions"], string_seq(versions));
        }
        set(
            &mut want,
            &["spec", "kubernetesVersion"],
            Value::String(minor.to_string()),
        );
        if get(&self.values[doc], &["metadata", "name"]).is_some() {
            // The copy must not keep the old name: two resources would fight over it.
            let name = scalar_at_path(body, 0..body.len(), &["metadata", "name"]).map_err(|e| {
                ScanError {
                    offset: self.docs[doc].start,
                    message: format!("cannot rename the copy for {minor}: {}", e.message),
                }
            })?;
            let new = rename_for_minor(&name.raw, from, minor);
            splices.push((name.span.clone(), name.style.write(&new)));
            set(&mut want, &["metadata", "name"], Value::String(new));
        }
        splices.sort_by_key(|(r, _)| r.start);
        let mut out = String::new();
        if !src.ends_with('\n') {
            out.push_str(eol);
        }
        out.push_str("---");
        out.push_str(eol);
        let mut pos = 0;
        for (r, t) in &splices {
            out.push_str(&body[pos..r.start]);
            out.push_str(t);
            pos = r.end;
        }
        out.push_str(&body[pos..]);
        Ok((out, want))
    }

    fn verify(
        &self,
        out: &str,
        expected: &[Option<Value>],
        inserted: &[Vec<Value>],
    ) -> Result<(), EditError> {
        let fail = |m: String| EditError {
            file: self.path.clone(),
            line: None,
            message: format!(
                "refusing the edit: {m} (this is a bug in stackbot; please report it and edit this file by hand)"
            ),
        };
        let docs = scan::split_documents(out);
        let want_count = self.docs.len() + inserted.iter().map(Vec::len).sum::<usize>();
        if docs.len() != want_count {
            return Err(fail(format!(
                "the result has {} documents instead of {want_count}",
                docs.len()
            )));
        }
        let parse = |r: &Range<usize>| {
            crate::yaml::from_str::<Value>(&out[r.clone()], &self.path, &self.limits)
                .map_err(|e| fail(format!("the result does not parse: {e}")))
        };
        let mut k = 0;
        for (i, old) in self.docs.iter().enumerate() {
            let got = &docs[k];
            match &expected[i] {
                None => {
                    let before = &self.text[old.clone()];
                    let after = &out[got.clone()];
                    let grew_eol = !before.ends_with('\n')
                        && !inserted[i].is_empty()
                        && after
                            .strip_prefix(before)
                            .is_some_and(|r| r == "\n" || r == "\r\n");
                    if before != after && !grew_eol {
                        return Err(fail(format!(
                            "document {} (line {}) would change although it was not meant to",
                            i + 1,
                            scan::line_number(&self.text, old.start)
                        )));
                    }
                }
                Some(v) => {
                    if &parse(got)? != v {
                        return Err(fail(format!(
                            "document {} (line {}) does not say what was intended after the edit",
                            i + 1,
                            scan::line_number(&self.text, old.start)
                        )));
                    }
                }
            }
            k += 1;
            for v in &inserted[i] {
                if &parse(&docs[k])? != v {
                    return Err(fail(format!(
                        "the new document after line {} does not say what was intended",
                        scan::line_number(&self.text, old.start)
                    )));
                }
                k += 1;
            }
        }
        Ok(())
    }
}

fn string_seq(v: &[String]) -> Value {
    Value::Sequence(v.iter().cloned().map(Value::String).collect())
}

/// `openstack-scs2-1-33` → `openstack-scs2-1-34`; a name without the old minor gets the new one appended.
pub fn rename_for_minor(name: &str, from: Minor, to: Minor) -> String {
    let (fd, td) = (from.dashed(), to.dashed());
    let (fo, to_dot) = (from.to_string(), to.to_string());
    if name.contains(&fd) {
        name.replace(&fd, &td)
    } else if name.contains(&fo) {
        name.replace(&fo, &to_dot)
    } else {
        format!("{name}-{td}")
    }
}

/// Walk block mappings from a document's root to the entry at `path`.
fn locate<'a>(
    src: &'a str,
    doc: Range<usize>,
    path: &[&str],
) -> Result<(Vec<Line<'a>>, scan::Entry), ScanError> {
    let lines = scan::lines(src, doc.clone());
    let mut from = match lines.first() {
        Some(l) if scan::is_separator(l.text) => 1,
        _ => 0,
    };
    let mut to = lines.len();
    let mut entry = None;
    for key in path {
        let indent = scan::first_content_indent(&lines, from, to).ok_or_else(|| ScanError {
            offset: doc.start,
            message: format!("cannot find `{}` in block style", path.join(".")),
        })?;
        let e = scan::find_key(&lines, from, to, indent, key).ok_or_else(|| ScanError {
            offset: lines.get(from).map_or(doc.start, |l| l.start),
            message: format!(
                "cannot find `{}` written in block style (flow mappings are not edited)",
                path.join(".")
            ),
        })?;
        from = e.line + 1;
        to = e.value_end;
        entry = Some(e);
    }
    Ok((lines, entry.expect("path is not empty")))
}

fn scalar_at_path(src: &str, doc: Range<usize>, path: &[&str]) -> Result<Scalar, ScanError> {
    let (lines, e) = locate(src, doc, path)?;
    let l = &lines[e.line];
    match scan::inline_value(src, e.after_colon, l.end)? {
        Inline::Scalar(s) => Ok(s),
        _ => Err(ScanError {
            offset: l.start,
            message: format!("`{}` is not a one-line value", path.join(".")),
        }),
    }
}

/// The style new items get: the style of the last existing item, plain if none.
fn style_of(items: &[Scalar]) -> Style {
    items.last().map_or(Style::Plain, |s| s.style)
}

/// Check that `new` is `old` with some items dropped and some appended; returns which old
/// items stay and which values are appended.
fn diff_list(
    old: &[Scalar],
    new: &[String],
    at: usize,
) -> Result<(Vec<bool>, Vec<String>), ScanError> {
    let mut keep = vec![false; old.len()];
    let mut j = 0;
    for (i, o) in old.iter().enumerate() {
        if j < new.len() && new[j] == o.raw {
            keep[i] = true;
            j += 1;
        }
    }
    if new[j..].iter().any(|n| old.iter().any(|o| &o.raw == n)) {
        return Err(ScanError {
            offset: at,
            message: "spec.versions would be reordered".into(),
        });
    }
    Ok((keep, new[j..].to_vec()))
}

/// The splices that turn `spec.versions` of the document at `doc` into `new`.
fn versions_splices(
    src: &str,
    doc: Range<usize>,
    new: &[String],
) -> Result<Vec<(Range<usize>, String)>, ScanError> {
    let (lines, e) = locate(src, doc, &["spec", "versions"])?;
    let key = &lines[e.line];
    let unsupported = |what: String| ScanError {
        offset: key.start,
        message: format!("spec.versions is {what}, which this bot does not edit"),
    };
    match scan::inline_value(src, e.after_colon, key.end)? {
        Inline::Flow { span, items } => {
            let (keep, added) = diff_list(&items, new, key.start)?;
            let inner = &src[span.start + 1..span.end - 1];
            let (lead, trail, sep) = match (items.first(), items.last()) {
                (Some(f), Some(l)) => {
                    let lead = &src[span.start + 1..f.span.start];
                    let trail = &src[l.span.end..span.end - 1];
                    let sep = items
                        .get(1)
                        .map(|s| &src[f.span.end..s.span.start])
                        .unwrap_or(", ");
                    (lead, trail, sep)
                }
                _ => ("", if inner.trim().is_empty() { "" } else { inner }, ", "),
            };
            let style = style_of(&items);
            let mut parts: Vec<String> = items
                .iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(s, _)| src[s.span.clone()].to_string())
                .collect();
            parts.extend(added.iter().map(|a| style.write(a)));
            Ok(vec![(span, format!("[{lead}{}{trail}]", parts.join(sep)))])
        }
        Inline::Empty { colon_end } => {
            let items = scan::block_items(src, &lines, e.line + 1, e.value_end)?;
            if items.is_empty() {
                // `versions:` (null): write the list inline.
                let list: Vec<String> = new.to_vec();
                return Ok(vec![(
                    colon_end..colon_end,
                    format!(" [{}]", list.join(", ")),
                )]);
            }
            let (keep, added) = diff_list(
                &items.iter().map(|(_, s)| s.clone()).collect::<Vec<_>>(),
                new,
                key.start,
            )?;
            let mut out = Vec::new();
            for ((li, _), k) in items.iter().zip(&keep) {
                if !k {
                    let l = &lines[*li];
                    out.push((l.start..l.next, String::new()));
                }
            }
            if !added.is_empty() {
                let (li, last) = items.last().expect("not empty");
                let l = &lines[*li];
                let prefix = &src[l.start..last.span.start];
                let prefix = if prefix.contains(['&', '!']) {
                    format!("{}- ", " ".repeat(l.indent))
                } else {
                    prefix.to_string()
                };
                let eol = &src[l.end..l.next];
                let mut text = String::new();
                let at = if eol.is_empty() {
                    for a in &added {
                        text.push_str(if src.contains("\r\n") { "\r\n" } else { "\n" });
                        text.push_str(&prefix);
                        text.push_str(&last.style.write(a));
                    }
                    l.end
                } else {
                    for a in &added {
                        text.push_str(&prefix);
                        text.push_str(&last.style.write(a));
                        text.push_str(eol);
                    }
                    l.next
                };
                out.push((at..at, text));
            }
            Ok(out)
        }
        Inline::Scalar(_) => Err(unsupported("a single value, not a list".into())),
        Inline::Other(what) => Err(unsupported(what)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: crate::yaml::Limits = crate::yaml::Limits {
        max_bytes: 1 << 20,
        max_depth: 64,
        max_nodes: 100_000,
        setting: Some("limits.tenant_files"),
    };

    fn stack() -> StackId {
        StackId::new("openstack", "scs2").unwrap()
    }

    #[test]
    fn a_line_counted_from_its_document_is_the_line_counted_from_the_file() {
        let text = "# head\n---\na: 1\n\n--- # two\nb: 2\r\nc: |\n  x\n---\n---\nlast: 1";
        let f = TenantFile::parse("f.yaml", text.as_bytes(), &LIMITS).unwrap();
        assert!(f.docs.len() >= 4, "{:?}", f.docs);
        for offset in 0..=text.len() + 3 {
            assert_eq!(
                f.line_of(offset),
                scan::line_number(text, offset),
                "offset {offset}"
            );
        }
    }

    const TWO: &str = "# tenant a\napiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: openstack-scs2-1-33 # name\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"1.33\"\n  versions:\n    - v1 # first\n    - v2\n---\nkind: ConfigMap\napiVersion: v1\n";

    #[test]
    fn finds_cluster_stacks_by_kind_and_spec() {
        let f = TenantFile::parse("a.yaml", TWO.as_bytes(), &LIMITS).unwrap();
        let docs = f.cluster_stacks(&stack()).unwrap();
        assert_eq!(docs.len(), 1);
        assert_eq!(docs[0].minor.to_string(), "1.33");
        assert_eq!(
            docs[0].versions.as_deref(),
            Some(&["v1".to_string(), "v2".to_string()][..])
        );
        assert!(
            f.cluster_stacks(&StackId::new("openstack", "scs").unwrap())
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn appending_and_dropping_touches_only_the_list_lines() {
        let f = TenantFile::parse("a.yaml", TWO.as_bytes(), &LIMITS).unwrap();
        let out = f
            .apply(&[Edit::SetVersions {
                doc: 0,
                versions: vec!["v2".into(), "v3".into()],
            }])
            .unwrap();
        assert_eq!(
            out,
            TWO.replace("    - v1 # first\n    - v2\n", "    - v2\n    - v3\n")
        );
    }

    #[test]
    fn a_new_minor_is_a_copy_after_the_old_document() {
        let f = TenantFile::parse("a.yaml", TWO.as_bytes(), &LIMITS).unwrap();
        let m33: Minor = "1.33".parse().unwrap();
        let m34: Minor = "1.34".parse().unwrap();
        let out = f
            .apply(&[Edit::AddMinor {
                after_doc: 0,
                from: m33,
                minor: m34,
                versions: vec!["v1".into()],
            }])
            .unwrap();
        let (first, rest) = out.split_at(TWO.find("---\nkind: ConfigMap").unwrap());
        assert_eq!(first, &TWO[..first.len()]);
        assert!(rest.starts_with("---\n# tenant a\napiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: openstack-scs2-1-34 # name\n"));
        assert!(rest.contains(
            "kubernetesVersion: \"1.34\"\n  versions:\n    - v1 # first\n---\nkind: ConfigMap"
        ));
    }

    #[test]
    fn invalid_yaml_names_file_and_line() {
        let e = TenantFile::parse("t/x.yaml", b"a: 1\n---\nb: [\n", &LIMITS).unwrap_err();
        assert_eq!(e.file, "t/x.yaml");
        assert!(e.line.unwrap() >= 3, "{e}");
    }

    #[test]
    fn an_alias_is_refused_not_rewritten() {
        let src = "apiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nx: &v [v1]\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"1.33\"\n  versions: *v\n";
        let f = TenantFile::parse("a.yaml", src.as_bytes(), &LIMITS).unwrap();
        let e = f
            .apply(&[Edit::SetVersions {
                doc: 0,
                versions: vec!["v1".into(), "v2".into()],
            }])
            .unwrap_err();
        assert_eq!(e.line, Some(8));
        assert!(e.message.contains("alias"), "{e}");
    }
}
