//! Adopt an existing csctl stack directory: turn it into templates, a release set and a
//! configuration from which `stackbot render` writes the very same bytes.
//!
//! Pure: a [`FileTree`] goes in, an [`Adoption`] comes out, and before it is returned the
//! adoption is proven by rendering it with the ordinary renderer and comparing every byte
//! with the input. The command (`stackbot adopt`) only reads the directory and writes the
//! result.
//!
//! Stages: [`facts`] reads what the tree pins (stack, Kubernetes version, node image, chart
//! components); [`literals`] finds where those values appear and what each occurrence
//! means; [`tera_text`] writes the templates; [`setup`] writes `stackbot.yaml` and the lock.

pub mod facts;
pub mod lines;
pub mod literals;
pub mod setup;
pub mod shared;
pub mod tera_text;

use std::path::PathBuf;

use serde::Serialize;

use crate::config::StackConfig;
use crate::lock::{History, Lock};
use crate::model::{FileTree, KubeVersion, ReleaseSet, StackId};
use crate::render::{self, TERA_SUFFIX, TemplateTree};

pub use literals::Replacement;

/// Why a tree cannot be adopted. `Refused` is the tree's (exit 2): it names the file, and
/// where known the line and field, and says what to change.
#[derive(Debug, thiserror::Error)]
pub enum AdoptError {
    #[error("{file}{}{}: {message}\n  hint: {hint}",
        line.map(|l| format!(":{l}")).unwrap_or_default(),
        field.as_ref().map(|f| format!(": field `{f}`")).unwrap_or_default())]
    Refused {
        file: String,
        line: Option<usize>,
        field: Option<String>,
        message: String,
        hint: String,
    },
    /// The adopted setup did not render back to the input: a stackbot bug, never written.
    #[error(
        "{file}: the adopted templates render differently from the stack ({what}); nothing was written\n  hint: this is a stackbot bug: please report it with the stack directory"
    )]
    RoundTrip { file: String, what: String },
}

impl AdoptError {
    pub(crate) fn refused(
        file: &str,
        line: Option<usize>,
        field: Option<String>,
        message: String,
        hint: &str,
    ) -> Self {
        AdoptError::Refused {
            file: file.to_string(),
            line,
            field,
            message,
            hint: hint.to_string(),
        }
    }

    /// The input is at fault (exit 2), not stackbot.
    pub fn is_invalid_input(&self) -> bool {
        matches!(self, AdoptError::Refused { .. })
    }
}

/// Where the adopted setup lives, relative to the directory holding `stackbot.yaml`.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Template directory, e.g. `templates/openstack/scs2`.
    pub templates: PathBuf,
    /// Output directory, e.g. `cluster-stacks/openstack/scs2` (minors go below it).
    pub output: PathBuf,
    /// How the source directory is named in the generated comments.
    pub source: String,
}

impl Layout {
    /// The layout this repository uses: `templates/<provider>/<name>` and
    /// `cluster-stacks/<provider>/<name>`.
    pub fn conventional(stack: &StackId, source: &str) -> Layout {
        Layout {
            templates: PathBuf::from("templates")
                .join(&stack.provider)
                .join(&stack.name),
            output: PathBuf::from("cluster-stacks")
                .join(&stack.provider)
                .join(&stack.name),
            source: source.to_string(),
        }
    }
}

/// One adopted file.
#[derive(Debug, Clone, Serialize)]
pub struct AdoptedFile {
    /// Path in the stack directory.
    pub path: String,
    /// Path in the template directory (`<path>.tera` when templated).
    pub template: String,
    pub replacements: Vec<Replacement>,
}

/// The result: everything `stackbot adopt` writes, plus what it found.
#[derive(Debug, Clone, Serialize)]
pub struct Adoption {
    pub stack: StackId,
    pub kubernetes: KubeVersion,
    /// `stackbot.yaml` text.
    #[serde(skip)]
    pub config: String,
    /// The release set the tree was built from.
    pub release_set: ReleaseSet,
    /// Template tree (relative paths → bytes).
    #[serde(skip)]
    pub templates: FileTree,
    /// Templated files with what was replaced (files copied verbatim are not listed).
    pub files: Vec<AdoptedFile>,
    /// How many files are copied byte for byte.
    pub verbatim: usize,
    /// What a maintainer should review.
    pub notes: Vec<String>,
    /// The stack entry of `config`, parsed.
    #[serde(skip)]
    pub stack_config: StackConfig,
    /// Content shared across minors that the adopted release set does not hold: the other
    /// entries of the image list and the version table (recorded in the lock).
    #[serde(skip)]
    pub history: History,
    /// Why the setup renders only the adopted minor faithfully (`file:line: reason`); empty
    /// when every supported minor renders as upstream would write it. When not empty,
    /// `minors:` lists the adopted minor alone.
    pub limits: Vec<String>,
}

impl Adoption {
    /// The lock holding the adopted release set and the stack's history.
    pub fn lock(&self) -> Lock {
        let mut lock = Lock::default();
        self.add_to(&mut lock);
        lock
    }

    /// Record the adopted release set and the history in `lock` (an existing setup's).
    pub fn add_to(&self, lock: &mut Lock) {
        let h = lock.history.entry(self.stack.clone()).or_default();
        for known in &self.history.images {
            h.remember(known.clone());
        }
        for row in &self.history.rows {
            if !h
                .rows
                .iter()
                .any(|r| r.kubernetes.minor() == row.kubernetes.minor())
            {
                h.rows.push(row.clone());
            }
        }
        h.rows.sort_by_key(|r| r.kubernetes);
        lock.upsert(self.release_set.clone());
    }
}

/// The cluster-class chart must already carry the name CSO looks up; otherwise rendering
/// (which enforces it) can never reproduce the tree.
fn check_chart_name(tree: &FileTree, stack: &StackId, k: KubeVersion) -> Result<(), AdoptError> {
    let file = "cluster-class/Chart.yaml";
    let Some(bytes) = tree.get(file) else {
        return Ok(());
    };
    let Ok(doc) = yaml_serde::from_slice::<yaml_serde::Value>(bytes) else {
        return Err(AdoptError::refused(
            file,
            None,
            None,
            "is not valid YAML".into(),
            "fix the chart so Helm can read it, then adopt again",
        ));
    };
    let expected = format!(
        "{}-cluster-class",
        crate::model::series_prefix(stack, k.minor())
    );
    let found = doc.get("name").and_then(|n| n.as_str()).unwrap_or_default();
    if found != expected {
        let line = std::str::from_utf8(bytes)
            .ok()
            .and_then(|t| t.lines().position(|l| l.starts_with("name:")))
            .map(|i| i + 1);
        return Err(AdoptError::refused(
            file,
            line,
            Some("name".into()),
            format!(
                "is `{found}` but csctl.yaml says Kubernetes {k}: CSO looks the class up as `{expected}`, so this chart name and the version disagree"
            ),
            &format!(
                "set `name: {expected}` (or correct `kubernetesVersion` in csctl.yaml), then adopt again"
            ),
        ));
    }
    Ok(())
}

/// What adopting the files found beyond their own templates.
#[derive(Default)]
struct Found {
    notes: Vec<String>,
    history: History,
    limits: Vec<String>,
    /// The build date the image list gives the pinned image.
    build_date: Option<chrono::NaiveDate>,
}

type Segments = (Vec<literals::Segment>, Vec<Replacement>);

/// A shared list's file: the text around the list adopted as usual, the list a loop.
fn loop_segments(
    path: &str,
    t: &str,
    list: std::ops::Range<usize>,
    body: Vec<literals::Segment>,
    facts: &facts::StackFacts,
    found: &mut Found,
) -> Result<Segments, AdoptError> {
    let (mut segs, mut reps) = literals::segments(path, &t[..list.start], facts, &mut found.notes)?;
    reps.push(Replacement {
        line: t[..list.start].matches('\n').count() + 1,
        field: String::new(),
        literal: t[list.clone()]
            .lines()
            .next()
            .unwrap_or_default()
            .to_string(),
        expression: "a loop over what the lock knows of every minor (content shared across minors)"
            .into(),
    });
    segs.extend(body);
    let (after, _) = literals::segments(path, &t[list.end..], facts, &mut found.notes)?;
    segs.extend(after);
    Ok((segs, reps))
}

/// A `Chart.lock` locking a vendored chart whose version follows the minor: its versions
/// are templated like any literal, its `digest` becomes `{{ chart_lock.digest }}` (what Helm
/// computes from the rendered `Chart.yaml` and lock) and its `generated` the component's
/// `locked_at`. `None` for any other file, and for a lock that does not lock such a chart.
fn chart_lock_segments(
    path: &str,
    t: &str,
    tree: &FileTree,
    facts: &facts::StackFacts,
    found: &mut Found,
) -> Result<Option<Segments>, AdoptError> {
    let Some(dir) = path
        .strip_suffix("Chart.lock")
        .filter(|d| d.is_empty() || d.ends_with('/'))
    else {
        return Ok(None);
    };
    let chart_file = format!("{dir}Chart.yaml");
    let Some(c) = facts.components.iter().find(|c| {
        c.file == chart_file && c.locked_at.is_some() && setup::follows_minor(c, facts.kubernetes)
    }) else {
        return Ok(None);
    };
    let computed = tree
        .get(&chart_file)
        .and_then(|chart| stackbot_package::chartlock::digest(chart, t.as_bytes(), dir).ok());
    // (start, end, meaning) of the values to template, in order.
    let mut values: Vec<(usize, usize, literals::Meaning)> = Vec::new();
    let mut at = 0;
    for (n, line) in t.split_inclusive('\n').enumerate() {
        let body = line.trim_end_matches(['\n', '\r']);
        let value = |key: &str| {
            let v = body.strip_prefix(key)?;
            let (q, v) = match v.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
                Some(inner) => (1, inner),
                None => (0, v),
            };
            let start = at + key.len() + q;
            Some((start, start + v.len(), v))
        };
        if let Some((start, end, v)) = value("digest: ") {
            if computed.as_deref() == Some(v) {
                values.push((
                    start,
                    end,
                    literals::Meaning::Expr("{{ chart_lock.digest }}".into()),
                ));
            } else {
                found.notes.push(format!(
                    "{path}:{}: `digest` is not what Helm computes from {chart_file} and this lock (`helm dependency build` would refuse it): kept as written, so rendering another minor refuses until it is `{{{{ chart_lock.digest }}}}`",
                    n + 1
                ));
            }
        } else if let Some((start, end, v)) = value("generated: ")
            && c.locked_at.as_deref() == Some(v)
        {
            let expr = format!(
                "{{{{ {}.locked_at }}}}",
                literals::key_path("components", &c.key)
            );
            values.push((start, end, literals::Meaning::Expr(expr)));
        }
        at += line.len();
    }
    let mut segs = Vec::new();
    let mut reps = Vec::new();
    let mut pos = 0;
    // The text before each value, and after the last, is adopted as usual.
    let values = values.into_iter().map(|(s, e, m)| (s, e, Some(m)));
    for (start, end, meaning) in values.chain([(t.len(), t.len(), None)]) {
        let offset = t[..pos].matches('\n').count();
        let (gap, gap_reps) = literals::segments(path, &t[pos..start], facts, &mut found.notes)?;
        segs.extend(gap);
        reps.extend(gap_reps.into_iter().map(|mut r| {
            r.line += offset;
            r
        }));
        let Some(meaning) = meaning else { break };
        reps.push(Replacement {
            line: t[..start].matches('\n').count() + 1,
            field: String::new(),
            literal: t[start..end].to_string(),
            expression: meaning.expr(),
        });
        segs.push(literals::Segment::Value {
            literal: t[start..end].to_string(),
            meaning,
        });
        pos = end;
    }
    Ok(Some((segs, reps)))
}

/// The segments and replacements of one file; `None` for docs, which are shared across
/// minors and copied as written.
fn file_segments(
    path: &str,
    bytes: &[u8],
    tree: &FileTree,
    facts: &facts::StackFacts,
    found: &mut Found,
) -> Result<Option<Segments>, AdoptError> {
    let Ok(t) = std::str::from_utf8(bytes) else {
        let k = facts.kubernetes.to_string();
        if bytes.windows(k.len()).any(|w| w == k.as_bytes()) {
            found.notes.push(format!(
                "{path}: binary, copied as it is although it mentions {k}"
            ));
        }
        return Ok(Some((Vec::new(), Vec::new())));
    };
    if shared::is_docs(path)
        && let Some(line) = shared::written_for_another_patch(t, facts.kubernetes)
    {
        found.notes.push(format!(
            "{path}:{line}: docs written for another patch than {}: shared across minors, copied as written (upstream leaves such an example as it is)",
            facts.kubernetes
        ));
        return Ok(None);
    }
    if let Some(lock) = chart_lock_segments(path, t, tree, facts, found)? {
        return Ok(Some(lock));
    }
    let shared =
        shared::image_list(path, t, facts).or_else(|| shared::version_table(path, t, facts));
    Ok(Some(match shared {
        Some(shared::Shared::Loop {
            list,
            body,
            images,
            rows,
            build_date,
        }) => {
            for known in images {
                found.history.remember(known);
            }
            found.history.rows.extend(rows);
            found.build_date = build_date.or(found.build_date);
            loop_segments(path, t, list, body, facts, found)?
        }
        other => {
            if let Some(shared::Shared::Unfaithful { line, why }) = other {
                found.limits.push(format!("{path}:{line}: {why}"));
            }
            literals::segments(path, t, facts, &mut found.notes)?
        }
    }))
}

/// Adopt a stack tree. Pure; the result is verified to render back to `tree` byte for byte.
pub fn adopt(
    tree: &FileTree,
    layout_for: impl Fn(&StackId) -> Layout,
) -> Result<Adoption, AdoptError> {
    let facts = facts::discover(tree)?;
    check_chart_name(tree, &facts.stack, facts.kubernetes)?;
    let layout = layout_for(&facts.stack);
    let mut found = Found {
        notes: facts.notes.clone(),
        ..Found::default()
    };
    let mut templates = FileTree::new();
    let mut files = Vec::new();
    let mut verbatim = 0;
    for (path, bytes) in tree {
        let (segments, replacements) =
            file_segments(path, bytes, tree, &facts, &mut found)?.unwrap_or_default();
        let is_tera_name = path.ends_with(TERA_SUFFIX);
        if replacements.is_empty() && !is_tera_name {
            templates.insert(path.clone(), bytes.clone());
            verbatim += 1;
            continue;
        }
        let Ok(text) = std::str::from_utf8(bytes) else {
            return Err(AdoptError::refused(
                path,
                None,
                None,
                "is named `*.tera` but is not UTF-8 text, so it cannot be kept as a template"
                    .into(),
                "rename the file, then adopt again",
            ));
        };
        let body = if replacements.is_empty() {
            tera_text::verbatim(text)
        } else {
            tera_text::template(&segments)
        };
        let target = format!("{path}{TERA_SUFFIX}");
        if tree.contains_key(&target) {
            return Err(AdoptError::refused(
                &target,
                None,
                None,
                format!("its name is the template name `{path}` needs"),
                "rename one of the two files, then adopt again",
            ));
        }
        templates.insert(target.clone(), body.into_bytes());
        files.push(AdoptedFile {
            path: path.clone(),
            template: target,
            replacements,
        });
    }
    let Found {
        mut notes,
        mut history,
        limits,
        build_date,
    } = found;
    let mut release_set = setup::release_set(&facts);
    release_set.node_image.build_date = build_date;
    history.rows.sort_by_key(|r| r.kubernetes);
    for l in &limits {
        notes.push(format!(
            "warning: `minors:` is limited to {}: {l}",
            facts.kubernetes.minor()
        ));
    }
    let config = setup::config_text(&facts, &layout, &limits);
    let stack_config = crate::config::parse(&config, std::path::Path::new("stackbot.yaml"))
        .map_err(|e| AdoptError::RoundTrip {
            file: "stackbot.yaml".into(),
            what: e.to_string(),
        })?
        .stacks
        .remove(0);
    let mut known = Lock::default();
    known.history.insert(facts.stack.clone(), history.clone());
    known.upsert(release_set.clone());
    verify(tree, &templates, &stack_config, &release_set, &known)?;
    notes.dedup();
    Ok(Adoption {
        stack: facts.stack.clone(),
        kubernetes: facts.kubernetes,
        config,
        release_set,
        templates,
        files,
        verbatim,
        notes,
        stack_config,
        history,
        limits,
    })
}

/// Render the adoption with the ordinary renderer and compare every byte with the input.
fn verify(
    tree: &FileTree,
    templates: &FileTree,
    stack: &StackConfig,
    set: &ReleaseSet,
    known: &Lock,
) -> Result<(), AdoptError> {
    let t = TemplateTree {
        root: PathBuf::from("templates"),
        files: templates.clone(),
    };
    let out = render::render_stack(&t, stack, set, known).map_err(|e| AdoptError::RoundTrip {
        file: "(render)".into(),
        what: e.to_string(),
    })?;
    for path in tree.keys().chain(out.keys()) {
        if tree.get(path) != out.get(path) {
            return Err(AdoptError::RoundTrip {
                file: path.clone(),
                what: match (tree.get(path), out.get(path)) {
                    (Some(_), None) => "missing from the rendering".into(),
                    (None, Some(_)) => "rendered but not in the stack".into(),
                    _ => "content differs".into(),
                },
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &[u8])]) -> FileTree {
        files
            .iter()
            .map(|(p, b)| (p.to_string(), b.to_vec()))
            .collect()
    }

    const CSCTL: &[u8] = b"apiVersion: csctl.clusterstack.x-k8s.io/v1alpha1\nconfig:\n  kubernetesVersion: v1.31.4\n  clusterStackName: demo\n  provider:\n    type: docker\n";
    const CHART: &[u8] = b"apiVersion: v2\nname: docker-demo-1-31-cluster-class\nversion: v1\n";

    fn run(extra: &[(&str, &[u8])]) -> Result<Adoption, AdoptError> {
        let mut files = vec![("csctl.yaml", CSCTL), ("cluster-class/Chart.yaml", CHART)];
        files.extend_from_slice(extra);
        adopt(&tree(&files), |id| Layout::conventional(id, "demo"))
    }

    fn template(a: &Adoption, path: &str) -> String {
        String::from_utf8(a.templates[path].clone()).unwrap()
    }

    #[test]
    fn helm_and_tera_syntax_next_to_versions_survive() {
        let values = b"image: kindest/node:v1.31.4\nname: {{ .Release.Name }}-{% raw %}{{ x }}\nend: {% endraw %} {# c #}\n";
        let a = run(&[("cluster-class/templates/values.yaml", values)]).unwrap();
        let t = template(&a, "cluster-class/templates/values.yaml.tera");
        assert!(
            t.starts_with("image: kindest/node:{{ kubernetes.version }}"),
            "{t}"
        );
        assert!(t.contains("{{ \"{% endraw %}\" }}"), "{t}");
        assert_eq!(a.files.len(), 3, "csctl.yaml, Chart.yaml and values.yaml");
    }

    #[test]
    fn files_named_tera_are_kept_as_literal_templates() {
        let a = run(&[("notes.txt.tera", b"{{ not tera }} 1.31\n")]).unwrap();
        let t = template(&a, "notes.txt.tera.tera");
        assert!(t.contains("{% raw %}"), "{t}");
        assert!(t.contains("{{ minor.dotted }}"), "{t}");
    }

    #[test]
    fn binary_files_are_copied_and_flagged_when_they_mention_the_version() {
        let bin: &[u8] = b"\xff\xfeversion v1.31.4\x00";
        let a = run(&[("blob.bin", bin)]).unwrap();
        assert_eq!(a.templates["blob.bin"], bin);
        assert!(
            a.notes.iter().any(|n| n.starts_with("blob.bin: binary")),
            "{:?}",
            a.notes
        );
    }

    #[test]
    fn a_single_addon_chart_names_its_components_by_alias() {
        let chart = b"apiVersion: v2\nname: docker-demo-1-31-cluster-addon\nversion: v1\ndependencies:\n  - name: cilium\n    alias: cni\n    repository: https://helm.cilium.io/\n    version: 1.16.6\n  - name: metrics-server\n    repository: https://kubernetes-sigs.github.io/metrics-server/\n    version: ~3.12.0\n";
        let a = run(&[("cluster-addon/Chart.yaml", chart)]).unwrap();
        assert_eq!(a.release_set.components.keys().collect::<Vec<_>>(), ["cni"]);
        let t = template(&a, "cluster-addon/Chart.yaml.tera");
        assert!(
            t.contains("name: docker-demo-{{ minor.dashed }}-cluster-addon"),
            "{t}"
        );
        assert!(t.contains("version: {{ components.cni.version }}"), "{t}");
        assert!(t.contains("version: ~3.12.0"), "ranges stay: {t}");
        assert!(a.notes.iter().any(|n| n.contains("a range Helm resolves")));
        assert!(
            a.config.contains("version: { pin: \"1.16.6\" }"),
            "{}",
            a.config
        );
    }

    #[test]
    fn a_component_at_the_kubernetes_version_is_told_apart_by_its_field() {
        let chart = b"apiVersion: v2\nname: x\nversion: v1\ndependencies:\n  - name: kube-thing\n    repository: https://charts.example.org\n    version: 1.31.4\n";
        let a = run(&[
            ("cluster-addon/thing/Chart.yaml", chart),
            ("versions.yaml", b"kubernetes: 1.31.4\nthing: 1.31.4\n"),
        ])
        .unwrap();
        let t = template(&a, "versions.yaml.tera");
        assert_eq!(
            t,
            "kubernetes: {{ kubernetes.major }}.{{ kubernetes.minor }}.{{ kubernetes.patch }}\nthing: {{ components.thing.version }}\n"
        );
        let err = run(&[
            ("cluster-addon/thing/Chart.yaml", chart),
            ("notes.yaml", b"pinned: 1.31.4\n"),
        ])
        .unwrap_err();
        assert!(err.is_invalid_input());
        assert!(
            err.to_string().starts_with("notes.yaml:1: field `pinned`: `1.31.4` is the Kubernetes version and also the version of component `thing`"),
            "{err}"
        );
    }

    #[test]
    fn a_chart_named_for_another_minor_is_refused_naming_the_line() {
        let err = adopt(
            &tree(&[
                ("csctl.yaml", CSCTL),
                (
                    "cluster-class/Chart.yaml",
                    b"apiVersion: v2\nname: docker-demo-1-30-cluster-class\nversion: v1\n",
                ),
            ]),
            |id| Layout::conventional(id, "demo"),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("cluster-class/Chart.yaml:2: field `name`:"),
            "{msg}"
        );
        assert!(msg.contains("docker-demo-1-31-cluster-class"), "{msg}");
    }

    #[test]
    fn two_checksums_for_one_image_are_refused() {
        let orc = |sha: &str| {
            format!(
                "apiVersion: openstack.k-orc.cloud/v1alpha1\nkind: Image\nmetadata:\n  name: img-v1.31.4\nspec:\n  resource:\n    content:\n      download:\n        url: https://x/img-v1.31.4.qcow2\n        hash:\n          algorithm: sha256\n          value: {sha}\n"
            )
        };
        let (a, b) = (orc(&"a".repeat(64)), orc(&"b".repeat(64)));
        let err = run(&[("a.yaml", a.as_bytes()), ("b.yaml", b.as_bytes())]).unwrap_err();
        assert!(err.to_string().contains("has sha256"), "{err}");
        let ok = run(&[("a.yaml", a.as_bytes())]).unwrap();
        assert_eq!(ok.release_set.node_image.name, "img-v1.31.4");
        assert!(
            ok.config.contains("name: \"img-{version}\""),
            "{}",
            ok.config
        );
    }
}
