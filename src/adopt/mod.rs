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
pub mod tera_text;

use std::path::PathBuf;

use serde::Serialize;

use crate::config::StackConfig;
use crate::lock::Lock;
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
}

impl Adoption {
    /// The lock holding the adopted release set.
    pub fn lock(&self) -> Lock {
        let mut lock = Lock::default();
        lock.upsert(self.release_set.clone());
        lock
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

/// Adopt a stack tree. Pure; the result is verified to render back to `tree` byte for byte.
pub fn adopt(
    tree: &FileTree,
    layout_for: impl Fn(&StackId) -> Layout,
) -> Result<Adoption, AdoptError> {
    let facts = facts::discover(tree)?;
    check_chart_name(tree, &facts.stack, facts.kubernetes)?;
    let layout = layout_for(&facts.stack);
    let mut notes = facts.notes.clone();
    let mut templates = FileTree::new();
    let mut files = Vec::new();
    let mut verbatim = 0;
    for (path, bytes) in tree {
        let text = std::str::from_utf8(bytes).ok();
        let (segments, replacements) = match text {
            Some(t) => literals::segments(path, t, &facts, &mut notes)?,
            None => {
                let k = facts.kubernetes.to_string();
                if bytes.windows(k.len()).any(|w| w == k.as_bytes()) {
                    notes.push(format!(
                        "{path}: binary, copied as it is although it mentions {k}"
                    ));
                }
                (Vec::new(), Vec::new())
            }
        };
        let is_tera_name = path.ends_with(TERA_SUFFIX);
        if replacements.is_empty() && !is_tera_name {
            templates.insert(path.clone(), bytes.clone());
            verbatim += 1;
            continue;
        }
        let Some(text) = text else {
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
    let release_set = setup::release_set(&facts);
    let config = setup::config_text(&facts, &layout);
    let stack_config = crate::config::parse(&config, std::path::Path::new("stackbot.yaml"))
        .map_err(|e| AdoptError::RoundTrip {
            file: "stackbot.yaml".into(),
            what: e.to_string(),
        })?
        .stacks
        .remove(0);
    verify(tree, &templates, &stack_config, &release_set)?;
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
    })
}

/// Render the adoption with the ordinary renderer and compare every byte with the input.
fn verify(
    tree: &FileTree,
    templates: &FileTree,
    stack: &StackConfig,
    set: &ReleaseSet,
) -> Result<(), AdoptError> {
    let t = TemplateTree {
        root: PathBuf::from("templates"),
        files: templates.clone(),
    };
    let out = render::render_stack(&t, stack, set).map_err(|e| AdoptError::RoundTrip {
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
