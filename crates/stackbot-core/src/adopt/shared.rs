//! Content a stack shares across its minors, told apart from the facts of one minor.
//!
//! Upstream keeps lists that cover every minor in each minor's tree: the openstack-image-manager
//! list (`kubernetes.yaml`: every node image with its build date) and the version table
//! (`versions.yaml`: one row per supported minor). They are identical in the releases of
//! different minors (cb69170 for 1.33, a931cdb for 1.34), so templating the adopted minor's
//! literals in them would render another minor wrong (its row twice, the adopted image lost).
//! Instead each list becomes a loop over what the lock knows (`images`, `table`), and the
//! entries for other versions go to the lock's `history`.
//!
//! A list is templated only when every entry has the same shape, the entries are sorted, and
//! the adopted minor's entry agrees with the release set; otherwise the reason (file, line) is
//! returned and the caller limits the setup to the adopted minor.

use std::ops::Range;

use chrono::NaiveDate;

use super::facts::{StackFacts, is_yaml};
use super::lines::{scalar, split_key};
use super::literals::{Meaning, Segment, key_names, says_kubernetes};
use crate::lock::{KnownImage, TableRow};
use crate::model::{KubeVersion, NodeImage};
use crate::yaml::block::{Line, lines};

/// A shared list found in a file.
#[derive(Debug, Clone)]
pub enum Shared {
    /// Templated as a loop: `body` replaces the byte range `list` of the file; the text
    /// around it is adopted as usual.
    Loop {
        list: Range<usize>,
        body: Vec<Segment>,
        images: Vec<KnownImage>,
        rows: Vec<TableRow>,
        /// The build date the list gives the adopted minor's image.
        build_date: Option<NaiveDate>,
    },
    /// A shared list that cannot be rendered faithfully for another minor.
    Unfaithful { line: usize, why: String },
}

/// Docs are shared across minors: upstream leaves a README's example at the minor it was
/// written for (`kubernetesVersion: "1.33"` in the 1.34 release too).
pub fn is_docs(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    name.ends_with(".md")
        || name.ends_with(".rst")
        || name.ends_with(".adoc")
        || name == "readme"
        || name == "readme.txt"
}

/// The first line of docs naming another patch of `k`'s minor (`v1.33.4` in a v1.33.10
/// tree): such docs were written for another release and are shared across minors (scs2's
/// README at cb69170 and a931cdb). Docs naming the tree's own version are its own (the
/// openstack/scs README of 2025 follows each minor) and are templated like any file.
pub fn written_for_another_patch(text: &str, k: KubeVersion) -> Option<usize> {
    let prefix = format!("{}.{}.", k.major, k.minor);
    text.lines()
        .position(|l| {
            let b = l.as_bytes();
            l.match_indices(&prefix).any(|(i, _)| {
                let glued = i > 0 && (b[i - 1].is_ascii_digit() || b[i - 1] == b'.');
                let digits: String = l[i + prefix.len()..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                !glued && !digits.is_empty() && digits.parse::<u64>().ok() != Some(k.patch)
            })
        })
        .map(|i| i + 1)
}

/// A `key: value` on a line (after indentation and an optional `- `): key, the value as
/// YAML reads it, and the byte range of that value in the file.
fn field(l: &Line) -> Option<(String, String, Range<usize>)> {
    let body = l.body().strip_prefix("- ").unwrap_or(l.body());
    let body_at = l.start + (l.text.len() - body.len());
    let (key, rest) = split_key(body)?;
    let value = scalar(rest);
    if value.is_empty() {
        return Some((key, value, 0..0));
    }
    let rest_at = body_at + (body.len() - rest.len());
    let at = rest_at + rest.find(&value)?;
    let end = at + value.len();
    Some((key, value, at..end))
}

/// The items of a block sequence starting at line `first` (whose dash is at `indent`), up
/// to the first line less indented: (first line, last line) per item.
fn items(ls: &[Line], first: usize, indent: usize) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (i, l) in ls.iter().enumerate().skip(first) {
        if !l.is_content() {
            continue;
        }
        if l.indent == indent && l.text[indent..].starts_with("- ") {
            out.push((i, i));
        } else if l.indent > indent && !out.is_empty() {
            out.last_mut().expect("non-empty").1 = i;
        } else {
            break;
        }
    }
    out
}

/// The shape of an item: its text with the spans in `holes` replaced by their expressions,
/// as segments.
fn shape(text: &str, range: Range<usize>, mut holes: Vec<(Range<usize>, String)>) -> Vec<Segment> {
    holes.sort_by_key(|(r, _)| r.start);
    let mut segs = Vec::new();
    let mut pos = range.start;
    for (r, expr) in holes {
        if r.start > pos {
            segs.push(Segment::Text(text[pos..r.start].to_string()));
        }
        segs.push(Segment::Value {
            literal: text[r.clone()].to_string(),
            meaning: Meaning::Expr(expr),
        });
        pos = r.end;
    }
    if range.end > pos {
        segs.push(Segment::Text(text[pos..range.end].to_string()));
    }
    segs
}

fn same_shape(a: &[Segment], b: &[Segment]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (Segment::Text(p), Segment::Text(q)) => p == q,
            (Segment::Value { meaning: m, .. }, Segment::Value { meaning: n, .. }) => m == n,
            _ => false,
        })
}

fn parse_version(v: &str) -> Option<KubeVersion> {
    let with_v = if v.starts_with('v') {
        v.to_string()
    } else {
        format!("v{v}")
    };
    with_v.parse().ok()
}

fn unfaithful(line: usize, why: String) -> Option<Shared> {
    Some(Shared::Unfaithful { line, why })
}

/// One entry of an image list: its values and where they are.
struct ImageEntry {
    version: KubeVersion,
    url: String,
    sha256: Option<String>,
    build_date: Option<NaiveDate>,
    holes: Vec<(Range<usize>, String)>,
}

/// Read the entry on lines `a..=b` (its dash at `indent`).
fn image_entry(ls: &[Line], a: usize, b: usize, indent: usize) -> Result<ImageEntry, Shared> {
    let no = |line: usize, why: String| Shared::Unfaithful { line, why };
    let mut holes = Vec::new();
    let (mut version, mut url, mut sha256, mut build_date) = (None, None, None, None);
    for (i, l) in ls.iter().enumerate().take(b + 1).skip(a) {
        // Only the entry's own fields (the dash line's indentation + 2).
        if l.indent != indent && l.indent != indent + 2 {
            continue;
        }
        let Some((key, value, span)) = field(l) else {
            continue;
        };
        match key.as_str() {
            "version" => {
                version = parse_version(&value).filter(|v| v.to_string() == value);
                holes.push((span, "{{ image.version }}".to_string()));
            }
            "url" => {
                url = Some(value.clone());
                holes.push((span, "{{ image.url }}".to_string()));
            }
            "checksum" => {
                let Some(hex) = value.strip_prefix("sha256:") else {
                    return Err(no(
                        i + 1,
                        format!("checksum `{value}` is not a sha256: stackbot records sha256 only"),
                    ));
                };
                sha256 = Some(hex.to_string());
                let at = span.start + "sha256:".len();
                holes.push((at..span.end, "{{ image.sha256 }}".to_string()));
            }
            "build_date" => {
                build_date = NaiveDate::parse_from_str(&value, "%Y-%m-%d")
                    .ok()
                    .filter(|d| d.format("%Y-%m-%d").to_string() == value);
                if build_date.is_none() {
                    return Err(no(
                        i + 1,
                        format!("build_date `{value}` is not a day (YYYY-MM-DD)"),
                    ));
                }
                holes.push((span, "{{ image.build_date }}".to_string()));
            }
            _ => {}
        }
    }
    let (Some(version), Some(url)) = (version, url) else {
        return Err(no(
            a + 1,
            "an image entry without a `version: v<major>.<minor>.<patch>` and `url`".into(),
        ));
    };
    Ok(ImageEntry {
        version,
        url,
        sha256,
        build_date,
        holes,
    })
}

/// First and last line of a list item.
type ItemLines = (usize, usize);

/// Where values sit in an item, and the expressions replacing them.
type Holes = Vec<(Range<usize>, String)>;

/// The `versions:` list of an image list: the indentation of its dashes and its entries.
/// `None` when the file has no such list.
fn versions_block(ls: &[Line]) -> Option<Result<(usize, Vec<ItemLines>), Shared>> {
    if !ls.iter().any(|l| l.text.trim_end() == "images:") {
        return None;
    }
    let heads: Vec<usize> = ls
        .iter()
        .enumerate()
        .filter(|(_, l)| l.text.trim() == "versions:")
        .map(|(i, _)| i)
        .collect();
    let &head = heads.first()?;
    if heads.len() > 1 {
        return Some(Err(Shared::Unfaithful {
            line: heads[1] + 1,
            why: "a second image with its own `versions:` list: stackbot templates one image list"
                .into(),
        }));
    }
    let first = (head + 1..ls.len()).find(|&i| ls[i].is_content())?;
    let indent = ls[first].indent;
    if indent <= ls[head].indent {
        return None;
    }
    let entries = items(ls, first, indent);
    (!entries.is_empty()).then_some(Ok((indent, entries)))
}

/// Keep the first item's shape in `body`; whether `segs` is written like it.
fn same_as_first(body: &mut Option<Vec<Segment>>, segs: Vec<Segment>) -> bool {
    match body {
        None => {
            *body = Some(segs);
            true
        }
        Some(first) => same_shape(first, &segs),
    }
}

/// `{% for … %}`, the body, `{% endfor %}`.
fn looped(head: &str, body: Vec<Segment>) -> Vec<Segment> {
    let tag = |t: &str| Segment::Value {
        literal: String::new(),
        meaning: Meaning::Expr(t.to_string()),
    };
    let mut segs = vec![tag(head)];
    segs.extend(body);
    segs.push(tag("{% endfor %}"));
    segs
}

/// Why the adopted minor's row is not what the release set renders, if it is not.
fn own_row_disagrees(row: &TableRow, facts: &StackFacts) -> Option<String> {
    if row.kubernetes != facts.kubernetes {
        return Some(format!(
            "the row for {} says {}, but the stack is {}",
            row.kubernetes.minor(),
            row.kubernetes,
            facts.kubernetes
        ));
    }
    row.components.iter().find_map(|(key, v)| {
        let pinned = facts.components.iter().find(|c| &c.key == key);
        pinned.is_none_or(|c| &c.version != v).then(|| {
            format!(
                "the row for {} gives component `{key}` {v}, but the stack pins {}",
                facts.kubernetes.minor(),
                pinned.map_or("none".to_string(), |c| c.version.clone())
            )
        })
    })
}

/// The openstack-image-manager list (`images: [{name, versions: [...]}]`) in `text`, if the
/// file holds one.
pub fn image_list(path: &str, text: &str, facts: &StackFacts) -> Option<Shared> {
    if !is_yaml(path) {
        return None;
    }
    let ls = lines(text, 0..text.len());
    let (indent, entries) = match versions_block(&ls)? {
        Ok(found) => found,
        Err(u) => return Some(u),
    };
    let base = ls
        .iter()
        .filter_map(field)
        .find(|(k, _, _)| k == "name")
        .map(|(_, v, _)| v);
    let sep = ls
        .iter()
        .filter_map(field)
        .find(|(k, _, _)| k == "separator")
        .map_or("-".to_string(), |(_, v, _)| v);
    let mut images: Vec<KnownImage> = Vec::new();
    let mut body: Option<Vec<Segment>> = None;
    let mut own_date = None;
    let mut own_found = false;
    for &(a, b) in &entries {
        let e = match image_entry(&ls, a, b, indent) {
            Ok(e) => e,
            Err(u) => return Some(u),
        };
        let (version, url, sha, date) = (e.version, e.url, e.sha256, e.build_date);
        let range = ls[a].start..ls[b].next;
        if !same_as_first(&mut body, shape(text, range, e.holes)) {
            return unfaithful(
                a + 1,
                format!(
                    "the entry for {version} is written differently from the first entry, so a new entry cannot be written like the others"
                ),
            );
        }
        if images.last().is_some_and(|p| p.kubernetes >= version) {
            return unfaithful(
                a + 1,
                format!(
                    "{version} comes after a newer or equal version: the list is not sorted by version"
                ),
            );
        }
        if version == facts.kubernetes {
            own_found = true;
            own_date = date;
            let pinned = facts.node_image.as_ref().map(|i| &i.image);
            if pinned.is_none_or(|p| {
                p.url != url || (!p.sha256.is_empty() && Some(&p.sha256) != sha.as_ref())
            }) {
                return unfaithful(
                    a + 1,
                    format!("the entry for {version} is not the node image the stack pins"),
                );
            }
        }
        images.push(KnownImage {
            kubernetes: version,
            node_image: NodeImage {
                name: base
                    .as_ref()
                    .map(|b| format!("{b}{sep}{version}"))
                    .unwrap_or_default(),
                url,
                sha256: sha.unwrap_or_default(),
                build_date: date,
            },
        });
    }
    if !own_found {
        return unfaithful(
            entries[0].0 + 1,
            format!(
                "the list has no entry for the stack's own {}: where the next image goes is unknown",
                facts.kubernetes
            ),
        );
    }
    let segs = looped(
        "{% for image in images %}",
        body.expect("at least one entry"),
    );
    let list = ls[entries[0].0].start..ls[entries.last().expect("non-empty").1].next;
    images.retain(|i| i.kubernetes != facts.kubernetes);
    Some(Shared::Loop {
        list,
        body: segs,
        images,
        rows: Vec::new(),
        build_date: own_date,
    })
}

fn component_expr(key: &str) -> String {
    format!(
        "{{{{ {} }}}}",
        super::literals::key_path("row.components", key)
    )
}

/// A table row's fields: (line, key, value, span of the value).
type RowFields = Vec<(usize, String, String, Range<usize>)>;

/// Every row a flat mapping with one Kubernetes version; `None` when the file is not such a
/// table.
fn table_rows(ls: &[Line], rows: &[(usize, usize)]) -> Option<Vec<(usize, usize, RowFields)>> {
    let mut parsed = Vec::new();
    for &(a, b) in rows {
        let mut fields = Vec::new();
        for (i, l) in ls.iter().enumerate().take(b + 1).skip(a) {
            if !l.is_content() {
                continue;
            }
            if l.indent != if i == a { 0 } else { 2 } {
                return None;
            }
            let (k, v, span) = field(l)?;
            fields.push((i, k, v, span));
        }
        let kube = fields
            .iter()
            .filter(|(_, k, v, _)| says_kubernetes(k) && parse_version(v).is_some())
            .count();
        if kube != 1 {
            return None;
        }
        parsed.push((a, b, fields));
    }
    Some(parsed)
}

/// A row's values (keys named as components) and the expressions replacing them.
fn table_row(fields: &RowFields, facts: &StackFacts) -> Result<(TableRow, Holes), Shared> {
    let mut holes = Vec::new();
    let mut row = TableRow {
        kubernetes: facts.kubernetes,
        components: Default::default(),
    };
    for (i, k, v, span) in fields {
        if says_kubernetes(k)
            && let Some(version) = parse_version(v)
        {
            row.kubernetes = version;
            let expr = if v.starts_with('v') {
                "{{ row.kubernetes.version }}"
            } else {
                "{{ row.kubernetes.major }}.{{ row.kubernetes.minor }}.{{ row.kubernetes.patch }}"
            };
            holes.push((span.clone(), expr.to_string()));
            continue;
        }
        let named: Vec<_> = facts
            .components
            .iter()
            .filter(|c| key_names(k, c))
            .collect();
        let [c] = named.as_slice() else {
            return Err(Shared::Unfaithful {
                line: i + 1,
                why: format!(
                    "field `{k}` names {} of the components the stack pins, so its value for another minor is unknown",
                    if named.is_empty() { "none" } else { "several" }
                ),
            });
        };
        row.components.insert(c.key.clone(), v.clone());
        holes.push((span.clone(), component_expr(&c.key)));
    }
    Ok((row, holes))
}

/// The version table (`versions.yaml`: a list of `{kubernetes: X.Y.Z, <component>: version}`
/// rows), if the file is one.
pub fn version_table(path: &str, text: &str, facts: &StackFacts) -> Option<Shared> {
    if !is_yaml(path) {
        return None;
    }
    let ls = lines(text, 0..text.len());
    let first = (0..ls.len()).find(|&i| ls[i].is_content() && ls[i].text.trim() != "---")?;
    if ls[first].indent != 0 || !ls[first].text.starts_with("- ") {
        return None;
    }
    let rows = items(&ls, first, 0);
    let last = rows.last()?.1;
    // The whole document is the table (a comment may follow).
    if ls[last + 1..].iter().any(Line::is_content) {
        return None;
    }
    let parsed = table_rows(&ls, &rows)?;
    let mut body: Option<Vec<Segment>> = None;
    let mut history = Vec::new();
    let mut own = false;
    let mut prev: Option<KubeVersion> = None;
    for (a, b, fields) in &parsed {
        let (row, holes) = match table_row(fields, facts) {
            Ok(r) => r,
            Err(u) => return Some(u),
        };
        let range = ls[*a].start..ls[*b].next;
        if !same_as_first(&mut body, shape(text, range, holes)) {
            return unfaithful(
                a + 1,
                format!(
                    "the row for {} is written differently from the first row, so a new row cannot be written like the others",
                    row.kubernetes
                ),
            );
        }
        if prev.is_some_and(|p| p.minor() >= row.kubernetes.minor()) {
            return unfaithful(
                a + 1,
                format!(
                    "the row for {} follows one for the same or a newer minor: one row per minor, sorted",
                    row.kubernetes
                ),
            );
        }
        prev = Some(row.kubernetes);
        if row.kubernetes.minor() == facts.kubernetes.minor() {
            own = true;
            if let Some(why) = own_row_disagrees(&row, facts) {
                return unfaithful(a + 1, why);
            }
        } else {
            history.push(row);
        }
    }
    if !own {
        return unfaithful(
            first + 1,
            format!(
                "the table has no row for the stack's own minor {}: where its row goes is unknown",
                facts.kubernetes.minor()
            ),
        );
    }
    let segs = looped("{% for row in table %}", body.expect("at least one row"));
    Some(Shared::Loop {
        list: ls[first].start..ls[last].next,
        body: segs,
        images: Vec::new(),
        rows: history,
        build_date: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adopt::facts::{FoundComponent, FoundImage};
    use crate::model::StackId;

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
                    name: "img-v1.33.10".into(),
                    url: "https://img/v1.33.10.qcow2".into(),
                    sha256: "e".repeat(64),
                    build_date: None,
                },
                version: Some("v1.33.10".parse().unwrap()),
                files: vec!["image.yaml".into()],
            }),
            components: vec![
                comp("ccm", "openstack-cloud-controller-manager", "2.33.1"),
                comp("csi", "openstack-cinder-csi", "2.33.1"),
            ],
            notes: vec![],
        }
    }

    fn entry(v: &str, sha: char, date: &str) -> String {
        format!(
            "      - version: '{v}'\n        url: https://img/{v}.qcow2\n        checksum: \"sha256:{}\"\n        build_date: {date}\n",
            sha.to_string().repeat(64)
        )
    }

    fn list(entries: &[String]) -> String {
        format!(
            "---\nimages:\n  - name: img\n    separator: \"-\"\n    versions:\n{}",
            entries.concat()
        )
    }

    #[test]
    fn an_image_list_becomes_a_loop_and_its_other_entries_history() {
        let text = list(&[
            entry("v1.32.13", 'a', "2025-12-17"),
            entry("v1.33.10", 'e', "2026-03-20"),
        ]);
        let Some(Shared::Loop {
            list: range,
            images,
            build_date,
            ..
        }) = image_list("kubernetes.yaml", &text, &facts())
        else {
            panic!("templated");
        };
        assert_eq!(&text[range.end..], "", "the list ends the file");
        assert!(text[range].starts_with("      - version: 'v1.32.13'"));
        assert_eq!(build_date, "2026-03-20".parse().ok());
        assert_eq!(images.len(), 1);
        assert_eq!(images[0].node_image.name, "img-v1.32.13");
        assert_eq!(images[0].node_image.build_date, "2025-12-17".parse().ok());
    }

    #[test]
    fn an_image_list_stackbot_cannot_continue_says_where_and_why() {
        let f = facts();
        let why = |text: &str| match image_list("kubernetes.yaml", text, &f) {
            Some(Shared::Unfaithful { line, why }) => format!("{line}: {why}"),
            other => panic!("{other:?}"),
        };
        // Not sorted.
        let unsorted = list(&[
            entry("v1.33.10", 'e', "2026-03-20"),
            entry("v1.32.13", 'a', "2025-12-17"),
        ]);
        assert!(
            why(&unsorted).starts_with("10: v1.32.13 comes after"),
            "{}",
            why(&unsorted)
        );
        // Written differently (no build date in one entry).
        let odd = list(&[
            entry("v1.32.13", 'a', "2025-12-17").replace("        build_date: 2025-12-17\n", ""),
            entry("v1.33.10", 'e', "2026-03-20"),
        ]);
        assert!(why(&odd).contains("written differently"), "{}", why(&odd));
        // No entry for the stack's own image.
        let without = list(&[entry("v1.32.13", 'a', "2025-12-17")]);
        assert!(why(&without).contains("no entry for the stack's own v1.33.10"));
        // Not an image list at all.
        assert!(image_list("values.yaml", "a: 1\n", &f).is_none());
    }

    #[test]
    fn a_version_table_becomes_a_loop_over_rows_by_minor() {
        let text = "- kubernetes: 1.32.13\n  cinder_csi: 2.32.2\n  occm: 2.32.1\n- kubernetes: 1.33.10\n  cinder_csi: 2.33.1\n  occm: 2.33.1\n";
        let Some(Shared::Loop { body, rows, .. }) = version_table("versions.yaml", text, &facts())
        else {
            panic!("templated");
        };
        assert_eq!(
            crate::adopt::tera_text::template(&body),
            "{% for row in table %}- kubernetes: {{ row.kubernetes.major }}.{{ row.kubernetes.minor }}.{{ row.kubernetes.patch }}\n  cinder_csi: {{ row.components.csi }}\n  occm: {{ row.components.ccm }}\n{% endfor %}"
        );
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].kubernetes.to_string(), "v1.32.13");
        assert_eq!(rows[0].components["csi"], "2.32.2");
        // A key naming no component: its value for another minor is unknown.
        let unknown = text.replace("cinder_csi", "storage");
        match version_table("versions.yaml", &unknown, &facts()) {
            Some(Shared::Unfaithful { line, why }) => {
                assert_eq!(line, 2);
                assert!(why.contains("field `storage` names none"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        // The stack's own row must agree with what the charts pin.
        let stale = text.replace("occm: 2.33.1", "occm: 2.33.0");
        assert!(matches!(
            version_table("versions.yaml", &stale, &facts()),
            Some(Shared::Unfaithful { line: 4, .. })
        ));
    }

    #[test]
    fn docs_are_told_by_their_name() {
        assert!(is_docs("README.md"));
        assert!(is_docs("docs/usage.MD"));
        assert!(!is_docs("cluster-class/values.yaml"));
    }

    #[test]
    fn docs_written_for_another_patch_are_shared() {
        let k: KubeVersion = "v1.33.10".parse().unwrap();
        let readme = "kubernetesVersion: \"1.33\"\n    version: v1.33.4\n";
        assert_eq!(written_for_another_patch(readme, k), Some(2));
        let own = "kubernetesVersion: \"1.33\"\n    version: v1.33.10\n see 11.33.4\n";
        assert_eq!(
            written_for_another_patch(own, k),
            None,
            "its own patch; 11.33.4 is no version of 1.33"
        );
    }
}
