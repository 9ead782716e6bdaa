//! Find the version-bearing literals of one text file and decide what each one means.
//!
//! A literal is replaced only when its meaning is certain: it is one of the values the
//! release set pins (node image URL, name, sha256; the Kubernetes version in any spelling;
//! a component's chart version), it stands alone (not part of a longer number or word), and
//! its surroundings do not say it belongs to another version. When one literal could mean two
//! pinned values and nothing around it decides, adoption refuses rather than guess.

use super::AdoptError;
use super::facts::{FoundComponent, StackFacts};
use super::lines::LineIndex;
use crate::model::KubeVersion;

/// `map.key`, or `map["key"]` when the key is no Tera identifier (`metrics-server`).
pub(crate) fn key_path(map: &str, key: &str) -> String {
    if key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        format!("{map}.{key}")
    } else {
        format!("{map}[\"{key}\"]")
    }
}

/// What a replaced literal stands for; each maps to one template expression.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Meaning {
    NodeUrl,
    NodeName,
    NodeSha,
    /// `v1.34.7`
    KubeVersion,
    /// `1.34.7`
    KubePlain,
    /// `1.34` (also inside `v1.34`)
    MinorDotted,
    /// `1-34` (chart names, tags)
    MinorDashed,
    /// A component's chart version, by component key.
    Component(String),
    /// Template text written as it is: the loops and fields of content shared across minors
    /// (the cumulative image list, the version table).
    Expr(String),
}

impl Meaning {
    /// The Tera expression producing the literal from the release set.
    pub fn expr(&self) -> String {
        match self {
            Meaning::NodeUrl => "{{ node_image.url }}".into(),
            Meaning::NodeName => "{{ node_image.name }}".into(),
            Meaning::NodeSha => "{{ node_image.sha256 }}".into(),
            Meaning::KubeVersion => "{{ kubernetes.version }}".into(),
            Meaning::KubePlain => {
                "{{ kubernetes.major }}.{{ kubernetes.minor }}.{{ kubernetes.patch }}".into()
            }
            Meaning::MinorDotted => "{{ minor.dotted }}".into(),
            Meaning::MinorDashed => "{{ minor.dashed }}".into(),
            Meaning::Expr(e) => e.clone(),
            Meaning::Component(key) => {
                format!("{{{{ {}.version }}}}", key_path("components", key))
            }
        }
    }

    /// In words, for messages.
    pub fn describe(&self) -> String {
        match self {
            Meaning::NodeUrl => "the node image URL".into(),
            Meaning::NodeName => "the node image name".into(),
            Meaning::NodeSha => "the node image sha256".into(),
            Meaning::KubeVersion | Meaning::KubePlain => "the Kubernetes version".into(),
            Meaning::MinorDotted | Meaning::MinorDashed => "the Kubernetes minor".into(),
            Meaning::Component(k) => format!("the version of component `{k}`"),
            Meaning::Expr(_) => "content shared across minors".into(),
        }
    }
}

/// A piece of a file: kept text or a replaced literal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Text(String),
    Value { literal: String, meaning: Meaning },
}

/// One replacement, for the report.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Replacement {
    pub line: usize,
    /// YAML field path when known.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub field: String,
    pub literal: String,
    pub expression: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    /// Anything may surround it (URLs are distinctive).
    None,
    /// Hex digest: no hex digit around it.
    Hex,
    /// Names: no name character around it.
    Word,
    /// Versions: no digit, letter or `.<digit>` around it.
    Version,
}

struct Needle {
    literal: String,
    meanings: Vec<Meaning>,
    bound: Bound,
}

fn needles(facts: &StackFacts) -> Vec<Needle> {
    let mut out: Vec<Needle> = Vec::new();
    let mut push = |literal: String, meaning: Meaning, bound: Bound| {
        if literal.is_empty() {
            return;
        }
        if let Some(n) = out.iter_mut().find(|n| n.literal == literal) {
            if !n.meanings.contains(&meaning) {
                n.meanings.push(meaning);
            }
        } else {
            out.push(Needle {
                literal,
                meanings: vec![meaning],
                bound,
            });
        }
    };
    if let Some(img) = &facts.node_image {
        push(img.image.url.clone(), Meaning::NodeUrl, Bound::None);
        push(img.image.name.clone(), Meaning::NodeName, Bound::Word);
        push(img.image.sha256.clone(), Meaning::NodeSha, Bound::Hex);
    }
    let k = facts.kubernetes;
    push(k.to_string(), Meaning::KubeVersion, Bound::Version);
    push(
        format!("{}.{}.{}", k.major, k.minor, k.patch),
        Meaning::KubePlain,
        Bound::Version,
    );
    for c in &facts.components {
        push(
            c.version.clone(),
            Meaning::Component(c.key.clone()),
            Bound::Version,
        );
    }
    push(
        format!("{}.{}", k.major, k.minor),
        Meaning::MinorDotted,
        Bound::Version,
    );
    push(
        format!("{}-{}", k.major, k.minor),
        Meaning::MinorDashed,
        Bound::Version,
    );
    out
}

fn bounded(text: &str, start: usize, end: usize, bound: Bound) -> bool {
    let b = text.as_bytes();
    let before = start.checked_sub(1).map(|i| b[i]);
    let after = b.get(end).copied();
    let after2 = b.get(end + 1).copied();
    match bound {
        Bound::None => true,
        Bound::Hex => {
            !before.is_some_and(|c| c.is_ascii_hexdigit())
                && !after.is_some_and(|c| c.is_ascii_hexdigit())
        }
        Bound::Word => {
            let name = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.');
            let glued_after = after
                .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-'))
                || (after == Some(b'.') && after2.is_some_and(|c| c.is_ascii_digit()));
            !(before.is_some_and(name) || glued_after)
        }
        Bound::Version => {
            let lit = &text[start..end];
            // `v1.34` is fine, `x1.34` and `11.34` and `0.1.34` are not.
            let bad_before = match before {
                Some(b'v') if !lit.starts_with('v') => {
                    start >= 2 && b[start - 2].is_ascii_alphanumeric()
                }
                Some(c) => c.is_ascii_alphanumeric() || c == b'.',
                None => false,
            };
            let bad_after = after.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
                || (after == Some(b'.') && after2.is_some_and(|c| c.is_ascii_digit()))
                || (lit.contains('-')
                    && after == Some(b'-')
                    && after2.is_some_and(|c| c.is_ascii_digit()));
            !bad_before && !bad_after
        }
    }
}

/// Lowercase words of a key: `cinder_csi` → [cinder, csi], `kubernetesVersion` →
/// [kubernetes, version].
fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for ch in s.chars() {
        if !ch.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if ch.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = ch.is_ascii_lowercase() || ch.is_ascii_digit();
        cur.push(ch.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// What the surroundings of a literal say it is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Said {
    Kubernetes,
    Component(String),
}

/// Whether a key names a component: its words are all words of the chart or the component
/// key, or it is the chart's acronym (`occm` = openstack-cloud-controller-manager).
pub(crate) fn key_names(key: &str, c: &FoundComponent) -> bool {
    let kw = words(key);
    if kw.is_empty() {
        return false;
    }
    let mut cw = words(&c.chart);
    cw.extend(words(&c.key));
    let acronym: String = words(&c.chart)
        .iter()
        .filter_map(|w| w.chars().next())
        .collect();
    let joined: String = kw.concat();
    kw.iter().all(|w| cw.contains(w)) || (joined.len() > 1 && joined == acronym)
}

pub(crate) fn says_kubernetes(key: &str) -> bool {
    words(key)
        .iter()
        .any(|w| matches!(w.as_str(), "kubernetes" | "k8s" | "kube"))
}

/// What the field name, the list item and the stage directory say about a literal.
fn said(
    facts: &StackFacts,
    file: &str,
    key: Option<&str>,
    siblings: &[(String, String)],
    among: &[Meaning],
) -> Option<Said> {
    let candidates: Vec<&FoundComponent> = facts
        .components
        .iter()
        .filter(|c| among.contains(&Meaning::Component(c.key.clone())))
        .collect();
    // The Chart.yaml (or Chart.lock, values) of a stage speaks for that stage's components.
    let stage: Vec<&&FoundComponent> = candidates
        .iter()
        .filter(|c| {
            c.stage_dir()
                .is_some_and(|d| file.starts_with(&format!("{d}/")))
        })
        .collect();
    if stage.len() == 1 {
        return Some(Said::Component(stage[0].key.clone()));
    }
    // A dependency entry names its chart next to its version.
    let names: Vec<&str> = siblings
        .iter()
        .filter(|(k, _)| matches!(k.as_str(), "name" | "chart" | "alias"))
        .map(|(_, v)| v.as_str())
        .collect();
    let by_name: Vec<&&FoundComponent> = candidates
        .iter()
        .filter(|c| names.contains(&c.chart.as_str()))
        .collect();
    if by_name.len() == 1 {
        return Some(Said::Component(by_name[0].key.clone()));
    }
    let key = key?;
    if says_kubernetes(key) {
        return Some(Said::Kubernetes);
    }
    let by_key: Vec<&FoundComponent> = facts
        .components
        .iter()
        .filter(|c| key_names(key, c))
        .collect();
    (by_key.len() == 1).then(|| Said::Component(by_key[0].key.clone()))
}

/// `-v2` or `-v0-sha.abc1234` right after a `<provider>-<name>-<M>-<m>` prefix: a cluster-stack
/// release version, as in a ClusterClass name.
fn stack_version_after(rest: &str) -> Option<&str> {
    let v = rest.strip_prefix('-')?;
    let len = v
        .char_indices()
        .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
        .last()
        .map(|(i, c)| i + c.len_utf8())?;
    let candidate = v[..len].trim_end_matches(['.', '-']);
    crate::model::StackVersion::parse_dot(candidate)
        .ok()
        .map(|_| candidate)
}

/// Another patch of the stack's minor (`1.34.3` when the stack is `1.34.7`) in `s`.
fn other_patch_of_minor(s: &str, k: KubeVersion) -> bool {
    let prefix = format!("{}.{}.", k.major, k.minor);
    s.match_indices(&prefix).any(|(i, _)| {
        let b = s.as_bytes();
        if i > 0 && (b[i - 1].is_ascii_digit() || b[i - 1] == b'.') {
            return false;
        }
        let digits: String = s[i + prefix.len()..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        !digits.is_empty() && digits.parse::<u64>().ok() != Some(k.patch)
    })
}

/// A version-like value that is not one the stack pins (`1.33.4`, `v1.33.4`).
fn foreign_version(value: &str, facts: &StackFacts) -> bool {
    let v = value.strip_prefix('v').unwrap_or(value);
    let parts: Vec<&str> = v.split('.').collect();
    if parts.len() != 3
        || !parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        return false;
    }
    let k = facts.kubernetes;
    if parts[0] != k.major.to_string() {
        return false;
    }
    let plain = format!("{}.{}.{}", k.major, k.minor, k.patch);
    v != plain
        && !facts
            .components
            .iter()
            .any(|c| c.version.strip_prefix('v').unwrap_or(&c.version) == v)
}

/// The literals of `text` (file `file`) that carry a pinned value, with their meaning, as
/// segments; kept text in between. `notes` collects values left alone on purpose.
pub fn segments(
    file: &str,
    text: &str,
    facts: &StackFacts,
    notes: &mut Vec<String>,
) -> Result<(Vec<Segment>, Vec<Replacement>), AdoptError> {
    let reading = Reading {
        file,
        text,
        yaml: file.ends_with(".yaml") || file.ends_with(".yml") || file.ends_with(".tpl"),
        index: LineIndex::new(text),
        facts,
    };
    let needles = needles(facts);
    let mut accepted: Vec<(usize, usize, usize)> = occurrences(text, &needles)
        .into_iter()
        .filter(|&(start, _, ni)| reading.is_the_stacks(start, &needles[ni], notes))
        .collect();
    accepted.sort_by_key(|&(s, e, _)| (s, std::cmp::Reverse(e)));
    let mut segs = Vec::new();
    let mut reps = Vec::new();
    let mut pos = 0;
    for (start, end, ni) in accepted {
        if start < pos {
            continue;
        }
        let n = &needles[ni];
        let li = reading.index.line_at(start);
        let line = &reading.index.lines[li];
        let Some(meaning) = reading.meaning(li, n, notes)? else {
            continue;
        };
        if meaning == Meaning::MinorDashed {
            reading.note_release_version_after(li, end, notes);
        }
        if start > pos {
            segs.push(Segment::Text(text[pos..start].to_string()));
        }
        reps.push(Replacement {
            line: li + 1,
            field: line.path.clone(),
            literal: n.literal.clone(),
            expression: meaning.expr(),
        });
        segs.push(Segment::Value {
            literal: n.literal.clone(),
            meaning,
        });
        pos = end;
    }
    if pos < text.len() {
        segs.push(Segment::Text(text[pos..].to_string()));
    }
    Ok((segs, reps))
}

/// Every standalone occurrence of a needle in `text`: (start, end, needle index), overlaps
/// included (the longest at a position wins later).
fn occurrences(text: &str, needles: &[Needle]) -> Vec<(usize, usize, usize)> {
    let mut found = Vec::new();
    for (ni, n) in needles.iter().enumerate() {
        for (start, _) in text.match_indices(&n.literal) {
            let end = start + n.literal.len();
            if bounded(text, start, end, n.bound) {
                found.push((start, end, ni));
            }
        }
    }
    found
}

/// One file being adopted: what deciding a literal's meaning looks at around it.
struct Reading<'a> {
    file: &'a str,
    text: &'a str,
    yaml: bool,
    index: LineIndex,
    facts: &'a StackFacts,
}

impl Reading<'_> {
    /// Whether the occurrence of `n` at `start` is this stack's value, not history, another
    /// patch's minor or a coincidence in a field naming something else (noted).
    fn is_the_stacks(&self, start: usize, n: &Needle, notes: &mut Vec<String>) -> bool {
        let (index, facts) = (&self.index, self.facts);
        let li = index.line_at(start);
        let line = &index.lines[li];
        let line_text = &self.text[line.start..line.end];
        // Prose that mentions a version ("Requires Kubernetes version < 1.29") states a
        // fact about Kubernetes, not this minor's release: it stays as written.
        if self.yaml
            && !n
                .meanings
                .iter()
                .any(|m| matches!(m, Meaning::NodeUrl | Meaning::NodeName | Meaning::NodeSha))
            && let Some(what) = self.prose(li)
        {
            notes.push(format!(
                "{}:{}: `{}` in {what} is prose, not a per-minor fact: kept as written",
                self.file,
                li + 1,
                n.literal
            ));
            return false;
        }
        // A list item describing another Kubernetes version (history in kubernetes.yaml,
        // the other rows of versions.yaml) is not this stack's: keep it as written.
        if self.yaml
            && line.items.iter().any(|&i| {
                index.items[i].fields.iter().any(|(k, v)| {
                    (says_kubernetes(k) || k == "version") && foreign_version(v, facts)
                })
            })
        {
            return false;
        }
        let minor_form = n
            .meanings
            .iter()
            .all(|m| matches!(m, Meaning::MinorDotted | Meaning::MinorDashed));
        // `kube-v1.34/…-v1.34.3.qcow2`: that minor belongs to the other patch on the line.
        if minor_form && other_patch_of_minor(line_text, facts.kubernetes) {
            return false;
        }
        // A single-meaning version whose field names something else is a coincidence.
        if n.meanings.len() == 1
            && let Meaning::Component(_) | Meaning::KubePlain = &n.meanings[0]
        {
            let all: Vec<Meaning> = facts
                .components
                .iter()
                .map(|c| Meaning::Component(c.key.clone()))
                .chain([Meaning::KubePlain])
                .collect();
            let verdict = self.said(li, &all);
            let agrees = match (&verdict, &n.meanings[0]) {
                (None, _) => true,
                (Some(Said::Kubernetes), Meaning::KubePlain) => true,
                (Some(Said::Component(a)), Meaning::Component(b)) => a == b,
                _ => false,
            };
            if !agrees {
                notes.push(format!(
                    "{}:{}: `{}` equals {} but field `{}` names something else: kept as written",
                    self.file,
                    li + 1,
                    n.literal,
                    n.meanings[0].describe(),
                    line.path
                ));
                return false;
            }
        }
        true
    }

    /// Whether line `li` is prose: a comment, a description-like field, or a line of a block
    /// scalar (`description: |`) under such a field. Says which.
    fn prose(&self, li: usize) -> Option<String> {
        const PROSE: [&str; 7] = [
            "description",
            "summary",
            "help",
            "note",
            "notes",
            "message",
            "comment",
        ];
        let lines = &self.index.lines;
        let text = |i: usize| &self.text[lines[i].start..lines[i].end];
        let indent = |t: &str| t.len() - t.trim_start_matches(' ').len();
        let own = text(li);
        if own.trim_start().starts_with('#') {
            return Some("a comment".into());
        }
        let key_of = |t: &str| {
            let body = t.trim_start();
            let body = body.strip_prefix("- ").unwrap_or(body);
            super::lines::split_key(body).map(|(k, rest)| (k, rest.trim().to_string()))
        };
        if let Some((k, _)) = key_of(own)
            && PROSE.contains(&k.to_ascii_lowercase().as_str())
        {
            return Some(format!("field `{k}`"));
        }
        let mut at = indent(own);
        for j in (0..li).rev() {
            let t = text(j);
            if t.trim().is_empty() || indent(t) >= at {
                continue;
            }
            at = indent(t);
            if let Some((k, rest)) = key_of(t)
                && matches!(rest.as_str(), "|" | "|-" | "|+" | ">" | ">-" | ">+")
            {
                return PROSE
                    .contains(&k.to_ascii_lowercase().as_str())
                    .then(|| format!("the text of field `{k}`"));
            }
            if at == 0 {
                break;
            }
        }
        None
    }

    /// What [`said`] says of a literal on line `li`, among `among`.
    fn said(&self, li: usize, among: &[Meaning]) -> Option<Said> {
        let line = &self.index.lines[li];
        let siblings = line
            .items
            .last()
            .map(|&i| self.index.items[i].fields.clone())
            .unwrap_or_default();
        said(self.facts, self.file, line.key.as_deref(), &siblings, among)
    }

    /// The meaning of `n` on line `li`: its only one, or the one its surroundings name.
    /// `None` (noted) when they name another pinned value; refused when nothing decides.
    fn meaning(
        &self,
        li: usize,
        n: &Needle,
        notes: &mut Vec<String>,
    ) -> Result<Option<Meaning>, AdoptError> {
        if n.meanings.len() == 1 {
            return Ok(Some(n.meanings[0].clone()));
        }
        let line = &self.index.lines[li];
        Ok(Some(match self.said(li, &n.meanings) {
            Some(Said::Component(k)) if n.meanings.contains(&Meaning::Component(k.clone())) => {
                Meaning::Component(k)
            }
            Some(Said::Kubernetes) if n.meanings.contains(&Meaning::KubePlain) => {
                Meaning::KubePlain
            }
            Some(Said::Kubernetes) if n.meanings.contains(&Meaning::KubeVersion) => {
                Meaning::KubeVersion
            }
            Some(other) => {
                notes.push(format!(
                    "{}:{}: `{}` equals a pinned version but field `{}` names {}: kept as written",
                    self.file,
                    li + 1,
                    n.literal,
                    line.path,
                    match other {
                        Said::Kubernetes => "Kubernetes".to_string(),
                        Said::Component(k) => format!("component `{k}`"),
                    }
                ));
                return Ok(None);
            }
            None => {
                let what: Vec<String> = n.meanings.iter().map(Meaning::describe).collect();
                return Err(AdoptError::refused(
                    self.file,
                    Some(li + 1),
                    Some(line.path.clone()).filter(|p| !p.is_empty()),
                    format!(
                        "`{}` is {}: nothing here says which, and stackbot does not guess",
                        n.literal,
                        what.join(" and also ")
                    ),
                    "name the field after what it holds (e.g. the chart name), or give the components different versions, then adopt again",
                ));
            }
        }))
    }

    /// A dashed minor followed by a cluster-stack release version (`…-1-34-v2`): the version stays,
    /// since packaging chooses it, and the note says so.
    fn note_release_version_after(&self, li: usize, end: usize, notes: &mut Vec<String>) {
        let line = &self.index.lines[li];
        if let Some(version) = stack_version_after(&self.text[end..]) {
            notes.push(format!(
                "{}:{}: the release version `{version}` after `{}` is kept as written: release versions are chosen when packaging, not by the templates",
                self.file,
                li + 1,
                self.text[line.start..end]
                    .rsplit(char::is_whitespace)
                    .next()
                    .unwrap_or_default()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adopt::facts::FoundImage;
    use crate::model::{NodeImage, StackId};

    fn facts() -> StackFacts {
        let comp = |key: &str, chart: &str, version: &str| FoundComponent {
            key: key.into(),
            chart: chart.into(),
            repository: "https://charts".into(),
            version: version.into(),
            file: format!("cluster-addon/{key}/Chart.yaml"),
            vendored: false,
            archive_digest: None,
            locked_at: None,
        };
        StackFacts {
            stack: StackId::new("openstack", "scs2").unwrap(),
            kubernetes: "v1.33.10".parse().unwrap(),
            node_image: Some(FoundImage {
                primary: true,
                image: NodeImage {
                    name: "ubuntu-capi-image-v1.33.10".into(),
                    url: "https://img/kube-v1.33/ubuntu-2404-kube-v1.33.10.qcow2".into(),
                    sha256: "e".repeat(64),
                    build_date: None,
                },
                version: Some("v1.33.10".parse().unwrap()),
                files: vec!["image.yaml".into()],
            }),
            components: vec![
                comp("ccm", "openstack-cloud-controller-manager", "2.33.1"),
                comp("csi", "openstack-cinder-csi", "2.33.1"),
                comp("cni", "cilium", "1.18.9"),
            ],
            notes: vec![],
        }
    }

    fn render(file: &str, text: &str) -> Result<String, AdoptError> {
        let (segs, _) = segments(file, text, &facts(), &mut Vec::new())?;
        Ok(segs
            .iter()
            .map(|s| match s {
                Segment::Text(t) => t.clone(),
                Segment::Value { meaning, .. } => format!("<{}>", meaning.expr()),
            })
            .collect())
    }

    #[test]
    fn every_spelling_of_the_kubernetes_version_is_found() {
        assert_eq!(
            render(
                "a.yaml",
                "k: v1.33.10\np: 1.33.10\nm: \"1.33\"\nc: openstack-scs2-1-33-cluster-class\n"
            )
            .unwrap(),
            "k: <{{ kubernetes.version }}>\np: <{{ kubernetes.major }}.{{ kubernetes.minor }}.{{ kubernetes.patch }}>\nm: \"<{{ minor.dotted }}>\"\nc: openstack-scs2-<{{ minor.dashed }}>-cluster-class\n"
        );
    }

    #[test]
    fn longer_numbers_and_words_are_not_versions() {
        let text = "a: 11.33.10\nb: 1.33.100\nc: 10.1.33.5\nd: x1-33y\ne: 1.330\nuuid: ab21-33cd\n";
        assert_eq!(render("a.yaml", text).unwrap(), text);
    }

    #[test]
    fn the_node_image_wins_over_the_versions_inside_it() {
        assert_eq!(
            render("image.yaml", "url: https://img/kube-v1.33/ubuntu-2404-kube-v1.33.10.qcow2\nname: \"ubuntu-capi-image-v1.33.10\"\nsha: eeee\n").unwrap(),
            "url: <{{ node_image.url }}>\nname: \"<{{ node_image.name }}>\"\nsha: eeee\n"
        );
    }

    #[test]
    fn rows_of_other_versions_are_history_and_stay() {
        let text = "- kubernetes: 1.32.13\n  occm: 2.32.1\n- kubernetes: 1.33.10\n  cinder_csi: 2.33.1\n  occm: 2.33.1\n";
        assert_eq!(
            render("versions.yaml", text).unwrap(),
            "- kubernetes: 1.32.13\n  occm: 2.32.1\n- kubernetes: <{{ kubernetes.major }}.{{ kubernetes.minor }}.{{ kubernetes.patch }}>\n  cinder_csi: <{{ components.csi.version }}>\n  occm: <{{ components.ccm.version }}>\n"
        );
        let history = "versions:\n  - version: 'v1.33.4'\n    url: https://img/kube-v1.33/ubuntu-2404-kube-v1.33.4.qcow2\n";
        assert_eq!(render("kubernetes.yaml", history).unwrap(), history);
    }

    #[test]
    fn prose_that_mentions_a_version_is_not_a_per_minor_fact() {
        let text = "x:\n  description: |\n    none:\n      Requires Kubernetes version < 1.33\n  other: 1.33\n# pinned to 1.33 for now\nnote: works on 1.33\n";
        let mut notes = Vec::new();
        let (segs, _) = segments("cluster-class.yaml", text, &facts(), &mut notes).unwrap();
        let out: String = segs
            .iter()
            .map(|s| match s {
                Segment::Text(t) => t.clone(),
                Segment::Value { meaning, .. } => format!("<{}>", meaning.expr()),
            })
            .collect();
        assert_eq!(
            out,
            text.replace("other: 1.33", "other: <{{ minor.dotted }}>"),
            "only the field that is not prose"
        );
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(
            notes[0].starts_with(
                "cluster-class.yaml:4: `1.33` in the text of field `description` is prose"
            ),
            "{notes:?}"
        );
    }

    #[test]
    fn a_minor_next_to_another_patch_belongs_to_that_patch() {
        let text = "see https://img/kube-v1.33/ubuntu-2404-kube-v1.33.4.qcow2 for 1.33\n";
        assert_eq!(render("README.md", text).unwrap(), text);
    }

    #[test]
    fn a_shared_version_is_decided_by_the_stage_or_refused() {
        assert_eq!(
            render(
                "cluster-addon/csi/Chart.yaml",
                "dependencies:\n  - name: openstack-cinder-csi\n    version: 2.33.1\n"
            )
            .unwrap(),
            "dependencies:\n  - name: openstack-cinder-csi\n    version: <{{ components.csi.version }}>\n"
        );
        let err = render("notes.yaml", "pinned:\n  version: 2.33.1\n").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("notes.yaml:2: field `pinned.version`: `2.33.1`"),
            "{msg}"
        );
        assert!(
            msg.contains("component `ccm`") && msg.contains("component `csi`"),
            "{msg}"
        );
    }

    #[test]
    fn a_field_naming_another_component_keeps_its_value() {
        let mut notes = Vec::new();
        let (segs, _) = segments("x.yaml", "cilium: 2.33.1\n", &facts(), &mut notes).unwrap();
        assert_eq!(segs, [Segment::Text("cilium: 2.33.1\n".into())]);
        assert_eq!(notes.len(), 1, "{notes:?}");
    }

    #[test]
    fn key_words_and_acronyms_name_components() {
        let f = facts();
        assert!(key_names("occm", &f.components[0]));
        assert!(key_names("cinder_csi", &f.components[1]));
        assert!(!key_names("cinder_csi", &f.components[0]));
        assert!(key_names("cilium", &f.components[2]));
        assert!(!key_names("version", &f.components[2]));
        assert_eq!(words("kubernetesVersion"), ["kubernetes", "version"]);
    }
}
