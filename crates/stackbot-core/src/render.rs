//! Render a cluster-stack directory from a template tree and a release set.
//!
//! The rule is deliberately small so reviewers can predict the output: a file ending in
//! `.tera` is rendered with the release set as context and written without the suffix; every
//! other file is copied byte for byte (Helm's `{{ .Values.x }}` passes through untouched).
//! Rendering is strict (an undefined variable is an error naming the file and line) and
//! hermetic: Tera 2 ships no `get_env` or file-reading function and we register none, so a
//! template can only see the release set.
//!
//! Nothing here touches the disk: the edge reads the template tree and writes the output
//! (`stackbot::render::load_templates`, `replace_dir`); [`render_stack`] is a pure function,
//! which is what makes `render --check` a byte comparison.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::{self, MinorSelection, StackConfig, VersionRule};
use crate::model::{
    Component, FileTree, KubeVersion, Minor, NodeImage, ReleaseSet, StackId, series_prefix,
};

/// Suffix marking a file as a Tera template.
pub const TERA_SUFFIX: &str = ".tera";

/// A template directory read into memory: `/`-separated relative path → bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateTree {
    /// Where it was read from (for messages).
    pub root: PathBuf,
    pub files: FileTree,
}

/// Why a template tree could not be read or rendered. Template problems name the file and,
/// where Tera knows it, the line.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("{}: cannot read: {source}\n  hint: check the stack's `templates` path in stackbot.yaml", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {what}\n  hint: templates may hold only directories and regular files", path.display())]
    Unsupported { path: PathBuf, what: String },
    #[error(
        "{file}: not UTF-8, so it cannot be a Tera template\n  hint: drop the `.tera` suffix to copy it verbatim"
    )]
    NotUtf8 { file: String },
    #[error("{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Template {
        /// Template path relative to the template root, including `.tera`.
        file: String,
        line: Option<usize>,
        message: String,
    },
    #[error(
        "{file}: rendering it and copying `{other}` would both write `{target}`\n  hint: keep only one of them"
    )]
    Collision {
        file: String,
        other: String,
        target: String,
    },
    #[error("release set is for `{set}` but the stack is `{stack}`")]
    WrongStack { set: StackId, stack: StackId },
    #[error("rendered {file}: {message}\n  hint: {hint}")]
    Output {
        file: String,
        message: String,
        hint: String,
    },
    /// The release set contradicts what the lock knows of the stack's images.
    #[error(
        "{message}\n  hint: one image per Kubernetes version, one checksum per image: correct the release set, or the stack's `history` in stackbot.lock"
    )]
    Contradiction { message: String },
    /// Chart archives the rendered `Chart.lock`s lock and the templates do not vendor.
    #[error(
        "{}\n  hint: `stackbot render --release-set FILE` fetches each from its chart repository (checked against the index's digest) into the templates; or vendor it there yourself (`helm dependency update`) and commit it",
        archives.iter().map(|a| a.to_string()).collect::<Vec<_>>().join("\n")
    )]
    MissingArchives { archives: Vec<NeededArchive> },
    /// A vendored archive is not the one the release set pins.
    #[error(
        "{file}: sha256 {got}, but the release set records {want} for component `{component}`: Helm would deploy another archive than the one pinned\n  hint: compare the archive with the chart repository's; replace it, or correct the component's `digest` in stackbot.lock"
    )]
    ArchiveDigest {
        file: String,
        component: String,
        want: String,
        got: String,
    },
    #[error("template directory {} holds no files", root.display())]
    Empty { root: PathBuf },
    #[error(
        "template directory {} does not exist\n  hint: check the stack's `templates:` in stackbot.yaml (relative to the file's folder), or create the templates (`stackbot adopt`)",
        root.display()
    )]
    Missing { root: PathBuf },
}

impl RenderError {
    /// Show template paths below `root` (as the user typed it in stackbot.yaml), so the
    /// message points at a file an editor can open.
    pub fn under_root(mut self, root: &Path) -> Self {
        if let RenderError::Template { file, .. }
        | RenderError::NotUtf8 { file }
        | RenderError::Collision { file, .. } = &mut self
        {
            *file = root
                .join(&*file)
                .to_string_lossy()
                .trim_start_matches("./")
                .to_string();
        }
        self
    }

    /// Whether the error is the user's input (templates, release set) rather than the machine
    /// (I/O): decides exit code 2 versus 1 at the CLI edge.
    pub fn is_invalid_input(&self) -> bool {
        !matches!(self, RenderError::Io { .. })
    }
}

impl TemplateTree {
    /// The templates read from `root` (the edge reads the tree: `stackbot::render::load_templates`);
    /// a tree without a file is refused, naming `root`.
    pub fn new(root: &Path, files: FileTree) -> Result<TemplateTree, RenderError> {
        if files.is_empty() {
            return Err(RenderError::Empty {
                root: root.to_path_buf(),
            });
        }
        Ok(TemplateTree {
            root: root.to_path_buf(),
            files,
        })
    }
}

/// The output directory of one stack × minor: `<output>/<major>-<minor>`, resolved against
/// the config file's directory.
pub fn output_dir(loaded: &config::Loaded, stack: &StackConfig, minor: Minor) -> PathBuf {
    loaded.resolve(&stack.output).join(minor.dashed())
}

#[derive(Serialize)]
struct StackCtx<'a> {
    provider: &'a str,
    name: &'a str,
}

#[derive(Serialize)]
struct MinorCtx {
    major: u64,
    minor: u64,
    dashed: String,
    dotted: String,
}

#[derive(Serialize)]
struct KubeCtx {
    version: String,
    major: u64,
    minor: u64,
    patch: u64,
}

#[derive(Serialize)]
struct NodeImageCtx<'a> {
    name: &'a str,
    url: &'a str,
    sha256: &'a str,
}

/// One entry of the cumulative image list (`images`): a node image for one Kubernetes patch.
/// `build_date` is left out when unknown, so a template using it fails naming the line.
#[derive(Serialize)]
struct ImageCtx {
    /// `v1.34.7`
    version: String,
    name: String,
    url: String,
    sha256: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    build_date: Option<String>,
}

/// One row of the version table (`table`): the newest patch of a minor and its components'
/// versions by key.
#[derive(Serialize)]
struct RowCtx {
    kubernetes: KubeCtx,
    minor: MinorCtx,
    components: std::collections::BTreeMap<String, String>,
}

#[derive(Serialize)]
struct ComponentCtx<'a> {
    chart: &'a str,
    repository: &'a str,
    version: &'a str,
    digest: Option<&'a str>,
    /// Left out when unknown, so a template using it fails naming the line.
    #[serde(skip_serializing_if = "Option::is_none")]
    locked_at: Option<&'a str>,
}

/// What a template rendering `<dir>/Chart.lock` sees as `chart_lock`.
#[derive(Serialize)]
struct ChartLockCtx {
    /// The digest Helm computes for this lock and `<dir>/Chart.yaml` (`resolver.HashReq`).
    digest: String,
}

/// Everything a template can see. Field names are the template contract documented in
/// `templates/README.md`; `published_at` is RFC 3339 or null, `published_date` `YYYY-MM-DD`
/// or null.
#[derive(Serialize)]
struct RenderCtx<'a> {
    stack: StackCtx<'a>,
    minor: MinorCtx,
    kubernetes: KubeCtx,
    node_image: NodeImageCtx<'a>,
    components: std::collections::BTreeMap<&'a str, ComponentCtx<'a>>,
    published_at: Option<String>,
    published_date: Option<String>,
    /// Content shared across minors: every node image the stack listed or released (this
    /// set's included), sorted by version.
    images: Vec<ImageCtx>,
    /// The version table: one row per minor the lock knows (this set's included), sorted.
    table: Vec<RowCtx>,
}

fn kube_ctx(k: KubeVersion) -> KubeCtx {
    KubeCtx {
        version: k.to_string(),
        major: k.major,
        minor: k.minor,
        patch: k.patch,
    }
}

fn minor_ctx(m: Minor) -> MinorCtx {
    MinorCtx {
        major: m.major,
        minor: m.minor,
        dashed: m.dashed(),
        dotted: m.to_string(),
    }
}

fn context<'a>(
    set: &'a ReleaseSet,
    images: Vec<crate::lock::KnownImage>,
    table: Vec<crate::lock::TableRow>,
) -> RenderCtx<'a> {
    let m = set.minor();
    let k = set.kubernetes;
    RenderCtx {
        images: images
            .into_iter()
            .map(|i| ImageCtx {
                version: i.kubernetes.to_string(),
                name: i.node_image.name,
                url: i.node_image.url,
                sha256: i.node_image.sha256,
                build_date: i
                    .node_image
                    .build_date
                    .map(|d| d.format("%Y-%m-%d").to_string()),
            })
            .collect(),
        table: table
            .into_iter()
            .map(|r| RowCtx {
                kubernetes: kube_ctx(r.kubernetes),
                minor: minor_ctx(r.kubernetes.minor()),
                components: r.components,
            })
            .collect(),
        stack: StackCtx {
            provider: &set.stack.provider,
            name: &set.stack.name,
        },
        minor: minor_ctx(m),
        kubernetes: kube_ctx(k),
        node_image: NodeImageCtx {
            name: &set.node_image.name,
            url: &set.node_image.url,
            sha256: &set.node_image.sha256,
        },
        components: set
            .components
            .iter()
            .map(|(key, c)| {
                (
                    key.as_str(),
                    ComponentCtx {
                        chart: &c.chart,
                        repository: &c.repository,
                        version: &c.version,
                        digest: c.digest.as_deref(),
                        locked_at: c.locked_at.as_deref(),
                    },
                )
            })
            .collect(),
        published_at: set
            .published_at
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
        published_date: set
            .published_at
            .map(|t| t.date_naive().format("%Y-%m-%d").to_string()),
    }
}

/// Turn a Tera error into one that names the template file and line.
fn template_error(file: &str, e: &tera::Error) -> RenderError {
    let (line, message) = match e.kind() {
        tera::ErrorKind::SyntaxError(r) | tera::ErrorKind::RenderingError(r) => {
            (Some(r.span().start_line), r.message().to_string())
        }
        _ => {
            // Other kinds (unknown function, missing template) carry a pre-rendered report
            // with ` --> name:line:col`; take the line from there and the first line as text.
            let text = e.to_string();
            let line = text
                .split_once(&format!("--> {file}:"))
                .and_then(|(_, rest)| rest.split(':').next())
                .and_then(|n| n.trim().parse().ok());
            let first = text.lines().next().unwrap_or_default();
            (
                line,
                first.strip_prefix("error: ").unwrap_or(first).to_string(),
            )
        }
    };
    RenderError::Template {
        file: file.to_string(),
        line,
        message,
    }
}

/// Render the stack directory for one release set. Pure: same inputs, same bytes.
///
/// `known` is the lock the set belongs to (it need not hold `set` yet): content shared across
/// minors (the cumulative image list, the version table) is rendered from it with `set` in
/// its place.
///
/// After rendering, the names CSO depends on are checked against the release set
/// (`csctl.yaml` fields, the cluster-class chart name), so a template edit cannot reproduce
/// the `3c6ca6c` mistake of a chart named for the previous minor.
pub fn render_stack(
    t: &TemplateTree,
    stack: &StackConfig,
    set: &ReleaseSet,
    known: &crate::lock::Lock,
) -> Result<FileTree, RenderError> {
    let id = stack.id();
    if set.stack != id {
        return Err(RenderError::WrongStack {
            set: set.stack.clone(),
            stack: id,
        });
    }
    let mut tera = tera::Tera::new();
    tera.autoescape_on(Vec::<&str>::new());
    let mut rendered_names = Vec::new();
    for (path, bytes) in &t.files {
        if let Some(target) = path.strip_suffix(TERA_SUFFIX) {
            if target.is_empty() || target.ends_with('/') {
                return Err(RenderError::Template {
                    file: path.clone(),
                    line: None,
                    message: "a template needs a name before `.tera`".into(),
                });
            }
            if t.files.contains_key(target) {
                return Err(RenderError::Collision {
                    file: path.clone(),
                    other: target.to_string(),
                    target: target.to_string(),
                });
            }
            let text = std::str::from_utf8(bytes)
                .map_err(|_| RenderError::NotUtf8 { file: path.clone() })?;
            tera.add_raw_template(path, text)
                .map_err(|e| template_error(path, &e))?;
            rendered_names.push((path.clone(), target.to_string()));
        }
    }
    let images = known
        .known_images(set)
        .map_err(|message| RenderError::Contradiction { message })?;
    let undated: Vec<String> = images
        .iter()
        .filter(|i| i.node_image.build_date.is_none())
        .map(|i| i.kubernetes.to_string())
        .collect();
    let table = known.table(set);
    let ctx = tera::Context::from_serialize(&context(set, images, table)).map_err(|e| {
        RenderError::Template {
            file: "<context>".into(),
            line: None,
            message: e.to_string(),
        }
    })?;
    let mut out = FileTree::new();
    for (path, bytes) in &t.files {
        if !path.ends_with(TERA_SUFFIX) {
            out.insert(path.clone(), bytes.clone());
        }
    }
    let render_one = |name: &str, ctx: &tera::Context| {
        tera.render(name, ctx).map_err(|e| {
            let mut err = template_error(name, &e);
            if let RenderError::Template { message, .. } = &mut err {
                if message.contains("build_date") && !undated.is_empty() {
                    message.push_str(&format!(
                        " (the build date of node image {} is unknown: record `build_date` under its `node_image` in stackbot.lock; upstream writes the day the image entered the list)",
                        undated.join(", ")
                    ));
                } else if message.contains("locked_at") {
                    message.push_str(
                        " (when the component's chart was locked is unknown: `render --release-set` records it when it fetches the chart archive; or set `locked_at` under the component in stackbot.lock)",
                    );
                }
            }
            err
        })
    };
    // A `Chart.lock` renders after its `Chart.yaml` ([`render_lock`]).
    let (locks, others): (Vec<_>, Vec<_>) = rendered_names
        .into_iter()
        .partition(|(_, target)| chart_dir_of_lock(target).is_some());
    for (name, target) in others {
        out.insert(target, render_one(&name, &ctx)?.into_bytes());
    }
    for (name, target) in locks {
        let text = render_lock(&name, &target, &out, &ctx, &render_one)?;
        out.insert(target, text.into_bytes());
    }
    vendor_charts(&mut out, t, set)?;
    check_output(&out, set)?;
    Ok(out)
}

/// Render the template `name` of the `Chart.lock` at `target`, after its `Chart.yaml`: its
/// `chart_lock.digest` is Helm's digest of that `Chart.yaml` and the lock's dependencies,
/// taken from a first rendering (they cannot depend on the digest). Without a `Chart.yaml`
/// there is no `chart_lock`.
fn render_lock(
    name: &str,
    target: &str,
    out: &FileTree,
    ctx: &tera::Context,
    render_one: &dyn Fn(&str, &tera::Context) -> Result<String, RenderError>,
) -> Result<String, RenderError> {
    let dir = chart_dir_of_lock(target).expect("a Chart.lock");
    let Some(chart) = out.get(&format!("{dir}Chart.yaml")) else {
        return render_one(name, ctx);
    };
    let with = |digest: String| {
        let mut c = ctx.clone();
        c.insert("chart_lock", &ChartLockCtx { digest });
        c
    };
    let draft = render_one(name, &with(String::new()))?;
    let digest =
        stackbot_package::chartlock::digest(chart, draft.as_bytes(), dir).map_err(|e| {
            RenderError::Output {
                file: target.to_string(),
                message: e.to_string(),
                hint: "fix the template that produces it".into(),
            }
        })?;
    render_one(name, &with(digest))
}

/// The chart directory (`cluster-addon/`, or `` at the top) of a `Chart.lock` path.
fn chart_dir_of_lock(path: &str) -> Option<&str> {
    if path == "Chart.lock" {
        Some("")
    } else {
        path.strip_suffix("Chart.lock").filter(|d| d.ends_with('/'))
    }
}

/// Check the fields CSO and csctl key on, in whatever the templates produced.
fn check_output(out: &FileTree, set: &ReleaseSet) -> Result<(), RenderError> {
    let parse = |file: &str| -> Result<Option<yaml_serde::Value>, RenderError> {
        let Some(bytes) = out.get(file) else {
            return Ok(None);
        };
        yaml_serde::from_slice(bytes)
            .map(Some)
            .map_err(|e| RenderError::Output {
                file: file.into(),
                message: format!("not valid YAML: {e}"),
                hint: "fix the template that produces it".into(),
            })
    };
    let expect = |file: &str, v: &yaml_serde::Value, path: &[&str], want: String, hint: &str| {
        let got = crate::yaml::get_str(v, path);
        if got == Some(want.as_str()) {
            Ok(())
        } else {
            Err(RenderError::Output {
                file: file.into(),
                message: format!(
                    "`{}` is {}, expected `{want}`",
                    path.join("."),
                    got.map(|g| format!("`{g}`"))
                        .unwrap_or_else(|| "missing".into())
                ),
                hint: format!("derive it from the release set in the template: {hint}"),
            })
        }
    };
    if let Some(v) = parse("csctl.yaml")? {
        let k = set.kubernetes.to_string();
        for (path, want, hint) in [
            (
                &["config", "kubernetesVersion"][..],
                k,
                "`{{ kubernetes.version }}`",
            ),
            (
                &["config", "clusterStackName"],
                set.stack.name.clone(),
                "`{{ stack.name }}`",
            ),
            (
                &["config", "provider", "type"],
                set.stack.provider.clone(),
                "`{{ stack.provider }}`",
            ),
        ] {
            expect("csctl.yaml", &v, path, want, hint)?;
        }
    }
    if let Some(v) = parse("cluster-class/Chart.yaml")? {
        expect(
            "cluster-class/Chart.yaml",
            &v,
            &["name"],
            format!("{}-cluster-class", series_prefix(&set.stack, set.minor())),
            "`{{ stack.provider }}-{{ stack.name }}-{{ minor.dashed }}-cluster-class` (CSO looks the chart up by this name)",
        )?;
    }
    Ok(())
}

/// A chart archive a rendering needs (its `Chart.lock` locks it) that the templates do not
/// hold: what `render --release-set` fetches from the chart repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeededArchive {
    /// The chart directory, `cluster-addon/` (the archive goes to its `charts/`).
    pub dir: String,
    pub chart: String,
    pub version: String,
    pub repository: String,
    /// The release set's component that pins this chart version, if one does.
    pub component: Option<String>,
    /// The sha256 (hex) the release set records for the archive, if it does.
    pub digest: Option<String>,
}

impl NeededArchive {
    /// Where the archive lives, in the templates and in the rendering.
    pub fn path(&self) -> String {
        format!("{}charts/{}-{}.tgz", self.dir, self.chart, self.version)
    }
}

impl std::fmt::Display for NeededArchive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}Chart.lock locks {} {} from {}, and the templates hold no {}",
            self.dir,
            self.chart,
            self.version,
            self.repository,
            self.path()
        )
    }
}

/// The archives a release set needs that the templates do not vendor, predicted from the
/// templates before rendering: for each component whose chart the templates vendor in some
/// version (`<dir>charts/<chart>-<version>.tgz`, beside a `Chart.yaml`), the archive of the
/// version the set pins, when that one is not there. Rendering names any other it misses
/// ([`RenderError::MissingArchives`]).
pub fn archives_to_fetch(t: &TemplateTree, set: &ReleaseSet) -> Vec<NeededArchive> {
    let exact = |v: &str| semver::Version::parse(v).is_ok();
    let mut out = Vec::new();
    for (key, c) in &set.components {
        let mut dirs: Vec<&str> = t
            .files
            .keys()
            .filter_map(|p| {
                let (dir, file) = p.rsplit_once("charts/")?;
                let version = file
                    .strip_prefix(&format!("{}-", c.chart))?
                    .strip_suffix(".tgz")?;
                let is_chart = t.files.contains_key(&format!("{dir}Chart.yaml"))
                    || t.files
                        .contains_key(&format!("{dir}Chart.yaml{TERA_SUFFIX}"));
                (exact(version) && is_chart && (dir.is_empty() || dir.ends_with('/')))
                    .then_some(dir)
            })
            .collect();
        dirs.dedup();
        for dir in dirs {
            let need = NeededArchive {
                dir: dir.to_string(),
                chart: c.chart.clone(),
                version: c.version.clone(),
                repository: c.repository.clone(),
                component: Some(key.clone()),
                digest: c.digest.clone(),
            };
            if !t.files.contains_key(&need.path()) {
                out.push(need);
            }
        }
    }
    out
}

/// Why fetched archive bytes are not the ones to vendor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchiveMismatch {
    #[error("the index lists no digest for it, so the download cannot be checked")]
    NoIndexDigest,
    #[error("it hashes to sha256 {got}, but the index's digest is {index}")]
    Index { index: String, got: String },
    #[error("it hashes to sha256 {got} as the index says, but the release set pins {pinned}")]
    Pinned { pinned: String, got: String },
}

/// Check downloaded archive bytes against the index's digest and the release set's pin;
/// the sha256 (hex) to record when they agree.
pub fn check_fetched(
    need: &NeededArchive,
    index_digest: Option<&str>,
    bytes: &[u8],
) -> Result<String, ArchiveMismatch> {
    let got = archive_digest(bytes);
    let index = index_digest.ok_or(ArchiveMismatch::NoIndexDigest)?;
    if !digest_matches(index, &got) {
        return Err(ArchiveMismatch::Index {
            index: index.to_string(),
            got,
        });
    }
    if let Some(pinned) = &need.digest
        && !digest_matches(pinned, &got)
    {
        return Err(ArchiveMismatch::Pinned {
            pinned: pinned.clone(),
            got,
        });
    }
    Ok(got)
}

/// The sha256 (hex) of `bytes`, as a Helm index writes an archive's `digest`.
pub fn archive_digest(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// Whether `got` (hex) is the digest `want` records (hex, or `sha256:`-prefixed).
pub fn digest_matches(want: &str, got: &str) -> bool {
    want.strip_prefix("sha256:")
        .unwrap_or(want)
        .eq_ignore_ascii_case(got)
}

fn same_repository(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// Bring the vendored chart archives of every chart directory that vendors some
/// (`<dir>charts/*.tgz`) in line with what its rendered `Chart.lock` locks, as
/// `helm dependency build` would: the archive of each locked version is the one the rendering
/// holds, another version's archive of the same chart (the templates keep one per minor) is
/// left out. An archive the templates do not hold is [`RenderError::MissingArchives`]; one
/// that does not hash to the digest its component records is refused. A `Chart.yaml`
/// naming an exact version the `Chart.lock` does not lock is refused (Helm would deploy the
/// locked one); without a `Chart.lock`, `Chart.yaml`'s exact versions are what is locked.
fn vendor_charts(
    out: &mut FileTree,
    t: &TemplateTree,
    set: &ReleaseSet,
) -> Result<(), RenderError> {
    let mut missing = Vec::new();
    let charts: Vec<String> = out
        .keys()
        .filter_map(|p| p.strip_suffix("Chart.yaml"))
        .filter(|d| d.is_empty() || d.ends_with('/'))
        .map(str::to_string)
        .collect();
    for dir in charts {
        let archives: Vec<String> = out
            .keys()
            .filter(|p| {
                p.strip_prefix(&format!("{dir}charts/"))
                    .is_some_and(|f| f.ends_with(".tgz") && !f.contains('/'))
            })
            .cloned()
            .collect();
        if archives.is_empty() && !out.contains_key(&format!("{dir}Chart.lock")) {
            continue;
        }
        let Some(locked) = locked_dependencies(out, t, &dir)? else {
            continue;
        };
        if archives.is_empty() {
            // Nothing vendored: `helm package` (or csctl) brings the dependencies.
            continue;
        }
        for dep in &locked {
            if let Some(need) = vendor_one(out, set, &dir, &archives, dep)? {
                missing.push(need);
            }
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(RenderError::MissingArchives { archives: missing })
    }
}

/// A dependency as `(name, version, repository)`.
type Dep = (String, String, String);

/// Exact chart versions only: a range (`~1.18.0`) is a constraint Helm resolves, not a pin.
pub(crate) fn exact_version(v: &str) -> bool {
    semver::Version::parse(v.strip_prefix('v').unwrap_or(v)).is_ok()
}

/// The dependencies of a `Chart.yaml` or `Chart.lock` document that name a version.
fn dependencies(v: &yaml_serde::Value) -> Vec<Dep> {
    v.get("dependencies")
        .and_then(|d| d.as_sequence())
        .map(|seq| {
            seq.iter()
                .filter_map(|d| {
                    let name = d.get("name")?.as_str()?.to_string();
                    let version = crate::yaml::scalar_text(d.get("version")?)?;
                    let repo = d
                        .get("repository")
                        .and_then(|r| r.as_str())
                        .unwrap_or_default()
                        .to_string();
                    Some((name, version, repo))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What the chart in `dir` locks: its rendered `Chart.lock`'s dependencies (a templated lock
/// must carry Helm's digest), or without one `Chart.yaml`'s exact versions. `None` when the
/// `Chart.yaml` is not YAML (reported elsewhere). Refuses a `Chart.yaml` naming an exact
/// version the lock does not lock.
fn locked_dependencies(
    out: &FileTree,
    t: &TemplateTree,
    dir: &str,
) -> Result<Option<Vec<Dep>>, RenderError> {
    let chart_file = format!("{dir}Chart.yaml");
    let lock_file = format!("{dir}Chart.lock");
    let Ok(chart) = yaml_serde::from_slice::<yaml_serde::Value>(&out[&chart_file]) else {
        return Ok(None);
    };
    let output = |file: &str, e: stackbot_package::PackageError| RenderError::Output {
        file: file.to_string(),
        message: e.to_string(),
        hint: "fix the template that produces it".into(),
    };
    let wanted: Vec<Dep> = dependencies(&chart)
        .into_iter()
        .filter(|(_, v, _)| exact_version(v))
        .collect();
    let Some(bytes) = out.get(&lock_file) else {
        return Ok(Some(wanted));
    };
    let locked: Vec<Dep> = stackbot_package::chartlock::locked(bytes, &lock_file)
        .map_err(|e| output(&lock_file, e))?
        .into_iter()
        .map(|l| (l.name, l.version, l.repository))
        .collect();
    if t.files.contains_key(&format!("{lock_file}{TERA_SUFFIX}")) {
        let computed = stackbot_package::chartlock::digest(&out[&chart_file], bytes, dir)
            .map_err(|e| output(&chart_file, e))?;
        let written = stackbot_package::chartlock::written_digest(bytes);
        if written.as_deref() != Some(computed.as_str()) {
            return Err(RenderError::Output {
                file: lock_file.clone(),
                message: format!(
                    "`digest` is {} but Helm computes {computed} from {chart_file} and the lock: `helm dependency build` would refuse it as out of sync",
                    written
                        .map(|w| format!("`{w}`"))
                        .unwrap_or_else(|| "missing".into())
                ),
                hint: "write `digest: {{ chart_lock.digest }}` in the template".into(),
            });
        }
    }
    for (name, version, _) in &wanted {
        if let Some((_, other, _)) = locked.iter().find(|(n, v, _)| n == name && v != version) {
            return Err(RenderError::Output {
                file: chart_file.clone(),
                message: format!(
                    "dependency `{name}` is {version} but {lock_file} locks {other}: Helm would deploy the locked chart, not {version}"
                ),
                hint: format!(
                    "render the version in {lock_file} from the release set like in Chart.yaml (`{{{{ components.<key>.version }}}}`) and its digest as `{{{{ chart_lock.digest }}}}`"
                ),
            });
        }
    }
    Ok(Some(locked))
}

/// One locked dependency of the chart in `dir`: other versions' archives leave the output,
/// the locked one must hash to its component's digest; `Some` when it is missing.
fn vendor_one(
    out: &mut FileTree,
    set: &ReleaseSet,
    dir: &str,
    archives: &[String],
    (name, version, repository): &Dep,
) -> Result<Option<NeededArchive>, RenderError> {
    let own = format!("{dir}charts/{name}-{version}.tgz");
    for other in archives {
        let is_other_version = other
            .strip_prefix(&format!("{dir}charts/{name}-"))
            .and_then(|r| r.strip_suffix(".tgz"))
            .is_some_and(exact_version);
        if is_other_version && *other != own {
            out.remove(other);
        }
    }
    let component = set.components.iter().find(|(_, c)| {
        c.chart == *name && c.version == *version && same_repository(&c.repository, repository)
    });
    let digest = component.and_then(|(_, c)| c.digest.clone());
    let Some(bytes) = out.get(&own) else {
        return Ok(Some(NeededArchive {
            dir: dir.to_string(),
            chart: name.clone(),
            version: version.clone(),
            repository: repository.clone(),
            component: component.map(|(k, _)| k.clone()),
            digest,
        }));
    };
    if let Some(want) = &digest
        && !digest_matches(want, &archive_digest(bytes))
    {
        return Err(RenderError::ArchiveDigest {
            file: own,
            component: component.map(|(k, _)| k.clone()).unwrap_or_default(),
            want: want.clone(),
            got: archive_digest(bytes),
        });
    }
    Ok(None)
}

/// A unified diff from `old` (what is on disk) to `new` (what rendering produces), with paths
/// shown under `label` (the output directory). Empty when the trees are identical. Binary
/// files are reported, not printed.
pub fn diff_trees(old: &FileTree, new: &FileTree, label: &str) -> String {
    let mut out = String::new();
    let paths: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for path in paths {
        let (a, b) = (old.get(path), new.get(path));
        if a == b {
            continue;
        }
        let a_name = if a.is_some() {
            format!("a/{label}/{path}")
        } else {
            "/dev/null".to_string()
        };
        let b_name = if b.is_some() {
            format!("b/{label}/{path}")
        } else {
            "/dev/null".to_string()
        };
        let (at, bt) = (a.map_or(&[][..], |v| v), b.map_or(&[][..], |v| v));
        match crate::report::from_plan::unified(&a_name, &b_name, at, bt) {
            Some(diff) => out.push_str(&diff),
            None => out.push_str(&format!("Binary files {a_name} and {b_name} differ\n")),
        }
    }
    out
}

/// A plausible release set built from the configuration alone, for `validate` when the lock
/// has no set for a stack: the first listed minor (or 1.34) at patch 0, the node image from
/// the pattern with an all-zero sha256, pinned or series versions. It exercises every
/// template variable without any network.
pub fn sample_release_set(stack: &StackConfig) -> ReleaseSet {
    let minor = match &stack.minors {
        MinorSelection::List(l) => l.first().and_then(|m| m.parse::<Minor>().ok()),
        MinorSelection::Keyword(_) => None,
    }
    .unwrap_or(Minor {
        major: 1,
        minor: 34,
    });
    let kubernetes = KubeVersion {
        major: minor.major,
        minor: minor.minor,
        patch: 0,
    };
    let (name, url) = stack.node_image.expand(kubernetes);
    let components = stack
        .components
        .iter()
        .map(|(key, rule)| {
            let version = match &rule.version {
                VersionRule::Pin(v) => v.clone(),
                VersionRule::Series(p) => {
                    format!("{}.0", p.replace("{minor}", &minor.minor.to_string()))
                }
                VersionRule::Range(_) => "0.0.0".into(),
            };
            (
                key.clone(),
                Component {
                    chart: rule.chart.clone(),
                    repository: rule.repository.clone(),
                    version,
                    digest: None,
                    locked_at: None,
                },
            )
        })
        .collect();
    ReleaseSet {
        stack: stack.id(),
        kubernetes,
        published_at: Some(chrono::DateTime::UNIX_EPOCH),
        node_image: if stack.node_image.is_none() {
            NodeImage::default()
        } else {
            NodeImage {
                name,
                url,
                sha256: "0".repeat(64),
                build_date: Some(chrono::DateTime::UNIX_EPOCH.date_naive()),
            }
        },
        components,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::Lock;
    use std::collections::BTreeMap;

    fn stack() -> StackConfig {
        let text = r#"
stacks:
  - provider: openstack
    name: scs2
    templates: t
    output: o
    minors: ["1.34"]
    node_image:
      url: "https://img/{minor}/{version}.qcow2"
      name: "ubuntu-capi-image-{version}"
    components:
      ccm:
        chart: openstack-cloud-controller-manager
        repository: https://kubernetes.github.io/cloud-provider-openstack
        version: { series: "2.{minor}" }
"#;
        config::parse(text, Path::new("stackbot.yaml"))
            .unwrap()
            .stacks
            .remove(0)
    }

    fn set() -> ReleaseSet {
        let mut components = BTreeMap::new();
        components.insert(
            "ccm".to_string(),
            Component {
                chart: "openstack-cloud-controller-manager".into(),
                repository: "https://kubernetes.github.io/cloud-provider-openstack".into(),
                version: "2.34.2".into(),
                digest: None,
                locked_at: None,
            },
        );
        ReleaseSet {
            stack: StackId::new("openstack", "scs2").unwrap(),
            kubernetes: "v1.34.7".parse().unwrap(),
            published_at: Some("2026-04-15T15:49:00Z".parse().unwrap()),
            node_image: NodeImage {
                name: "ubuntu-capi-image-v1.34.7".into(),
                url: "https://img/1.34/v1.34.7.qcow2".into(),
                sha256: "f".repeat(64),
                build_date: None,
            },
            components,
        }
    }

    fn tree(files: &[(&str, &str)]) -> TemplateTree {
        TemplateTree {
            root: PathBuf::from("t"),
            files: files
                .iter()
                .map(|(p, c)| (p.to_string(), c.as_bytes().to_vec()))
                .collect(),
        }
    }

    fn render(files: &[(&str, &str)]) -> Result<FileTree, RenderError> {
        render_stack(&tree(files), &stack(), &set(), &Lock::default())
    }

    #[test]
    fn vendored_archives_follow_the_rendered_chart_lock_as_helm_dependency_build_does() {
        let chart = "apiVersion: v2\nname: x\nversion: v1\ndependencies:\n  - name: openstack-cloud-controller-manager\n    repository: https://kubernetes.github.io/cloud-provider-openstack\n    version: {{ components.ccm.version }}\n";
        let lock = "dependencies:\n- name: openstack-cloud-controller-manager\n  repository: https://kubernetes.github.io/cloud-provider-openstack\n  version: {{ components.ccm.version }}\ndigest: {{ chart_lock.digest }}\n";
        let archive =
            |v: &str| format!("cluster-addon/charts/openstack-cloud-controller-manager-{v}.tgz");
        // The templates keep one archive per minor: the locked one is rendered, the other not.
        let out = render(&[
            ("cluster-addon/Chart.yaml.tera", chart),
            ("cluster-addon/Chart.lock.tera", lock),
            (&archive("2.34.2"), "new"),
            (&archive("2.33.1"), "old"),
        ])
        .unwrap();
        assert_eq!(out[&archive("2.34.2")], b"new");
        assert!(!out.contains_key(&archive("2.33.1")));
        let rendered_lock = &out["cluster-addon/Chart.lock"];
        assert!(String::from_utf8_lossy(rendered_lock).contains("version: 2.34.2"));
        assert_eq!(
            stackbot_package::chartlock::written_digest(rendered_lock).unwrap(),
            stackbot_package::chartlock::digest(
                &out["cluster-addon/Chart.yaml"],
                rendered_lock,
                "cluster-addon/"
            )
            .unwrap(),
            "chart_lock.digest is Helm's digest of what was rendered"
        );
        // Only the other minor's archive: named as missing, for `render --release-set` to fetch.
        let err = render(&[
            ("cluster-addon/Chart.yaml.tera", chart),
            ("cluster-addon/Chart.lock.tera", lock),
            (&archive("2.33.1"), "old"),
        ])
        .unwrap_err();
        let RenderError::MissingArchives { archives } = &err else {
            panic!("{err}");
        };
        assert_eq!(archives.len(), 1);
        assert_eq!(archives[0].path(), archive("2.34.2"));
        assert_eq!(archives[0].component.as_deref(), Some("ccm"));
        assert!(err.to_string().contains("render --release-set"), "{err}");
        // A Chart.lock written as it is, locking another version than Chart.yaml names: Helm
        // would deploy the locked chart. Refused, with or without archives.
        let stale = "dependencies:\n- name: openstack-cloud-controller-manager\n  repository: https://kubernetes.github.io/cloud-provider-openstack\n  version: 2.33.1\ndigest: sha256:00\n";
        for with_archive in [true, false] {
            let mut files = vec![
                ("cluster-addon/Chart.yaml.tera", chart),
                ("cluster-addon/Chart.lock", stale),
            ];
            let old = archive("2.33.1");
            if with_archive {
                files.push((&old, "old"));
            }
            let err = render(&files).unwrap_err().to_string();
            assert!(
                err.starts_with("rendered cluster-addon/Chart.yaml: dependency `openstack-cloud-controller-manager` is 2.34.2 but cluster-addon/Chart.lock locks 2.33.1"),
                "{err}"
            );
        }
        // A templated lock whose digest is not Helm's is refused: helm dependency build would.
        let err = render(&[
            ("cluster-addon/Chart.yaml.tera", chart),
            (
                "cluster-addon/Chart.lock.tera",
                &lock.replace("{{ chart_lock.digest }}", "sha256:00"),
            ),
            (&archive("2.34.2"), "new"),
        ])
        .unwrap_err()
        .to_string();
        assert!(err.contains("out of sync"), "{err}");
    }

    #[test]
    fn a_vendored_archive_must_hash_to_the_digest_the_release_set_pins() {
        let chart = "apiVersion: v2\nname: x\nversion: v1\ndependencies:\n  - name: openstack-cloud-controller-manager\n    repository: https://kubernetes.github.io/cloud-provider-openstack\n    version: {{ components.ccm.version }}\n";
        let t = tree(&[
            ("cluster-addon/Chart.yaml.tera", chart),
            (
                "cluster-addon/charts/openstack-cloud-controller-manager-2.34.2.tgz",
                "bytes",
            ),
        ]);
        let mut s = set();
        s.components.get_mut("ccm").unwrap().digest = Some(archive_digest(b"bytes"));
        assert!(render_stack(&t, &stack(), &s, &Lock::default()).is_ok());
        s.components.get_mut("ccm").unwrap().digest = Some(archive_digest(b"other"));
        let err = render_stack(&t, &stack(), &s, &Lock::default()).unwrap_err();
        assert!(matches!(err, RenderError::ArchiveDigest { .. }), "{err}");
        assert!(err.is_invalid_input());
        // Before rendering: which archives the set needs that the templates lack.
        assert!(archives_to_fetch(&t, &set()).is_empty());
        let mut next = set();
        next.components.get_mut("ccm").unwrap().version = "2.34.3".into();
        let need = archives_to_fetch(&t, &next);
        assert_eq!(
            need.iter().map(NeededArchive::path).collect::<Vec<_>>(),
            vec!["cluster-addon/charts/openstack-cloud-controller-manager-2.34.3.tgz"]
        );
        // Downloaded bytes: the index's digest decides, then the set's pin.
        let mut n = need[0].clone();
        let good = archive_digest(b"new");
        assert_eq!(check_fetched(&n, Some(&good), b"new"), Ok(good.clone()));
        assert!(matches!(
            check_fetched(&n, Some(&good), b"evil"),
            Err(ArchiveMismatch::Index { .. })
        ));
        assert_eq!(
            check_fetched(&n, None, b"new"),
            Err(ArchiveMismatch::NoIndexDigest)
        );
        n.digest = Some(format!("sha256:{}", archive_digest(b"pinned")));
        assert!(matches!(
            check_fetched(&n, Some(&good), b"new"),
            Err(ArchiveMismatch::Pinned { .. })
        ));
    }

    #[test]
    fn shared_lists_render_from_the_lock_with_the_set_in_its_place() {
        let t = tree(&[(
            "k.yaml.tera",
            "{% for image in images %}{{ image.version }} {{ image.build_date }}\n{% endfor %}{% for row in table %}{{ row.kubernetes.version }} {{ row.components.ccm }}\n{% endfor %}",
        )]);
        let mut lock = Lock::default();
        let mut old = set();
        old.kubernetes = "v1.34.6".parse().unwrap();
        old.node_image.url = "https://img/1.34/v1.34.6.qcow2".into();
        old.node_image.build_date = "2026-03-20".parse().ok();
        lock.upsert(old);
        let mut new = set();
        new.node_image.build_date = "2026-04-16".parse().ok();
        // The set replaces 1.34.6 as the 1.34 row; 1.34.6's image stays listed.
        lock.upsert(new.clone());
        let out = render_stack(&t, &stack(), &new, &lock).unwrap();
        assert_eq!(
            text(&out, "k.yaml"),
            "v1.34.6 2026-03-20\nv1.34.7 2026-04-16\nv1.34.7 2.34.2\n"
        );
        // One version, two checksums: a contradiction, not a choice.
        let mut other = new.clone();
        other.node_image.sha256 = "0".repeat(64);
        lock.history.get_mut(&other.stack).unwrap().images[0].kubernetes =
            "v1.34.7".parse().unwrap();
        let err = render_stack(&t, &stack(), &other, &lock)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("two node images for v1.34.7"), "{err}");
    }

    fn text(out: &FileTree, p: &str) -> String {
        String::from_utf8(out[p].clone()).unwrap()
    }

    #[test]
    fn tera_files_are_rendered_and_lose_their_suffix() {
        let out = render(&[(
            "versions.yaml.tera",
            "k: {{ kubernetes.version }} m: {{ minor.dashed }}/{{ minor.dotted }} ccm: {{ components.ccm.version }} at: {{ published_date }}\n",
        )])
        .unwrap();
        assert_eq!(out.keys().collect::<Vec<_>>(), ["versions.yaml"]);
        assert_eq!(
            text(&out, "versions.yaml"),
            "k: v1.34.7 m: 1-34/1.34 ccm: 2.34.2 at: 2026-04-15\n"
        );
    }

    #[test]
    fn other_files_are_copied_byte_for_byte_including_helm_syntax() {
        let helm = "metadata:\n  name: {{ .Release.Name }}-{{ .Chart.Version }}\n  x: {{ `{{ .builtin.cluster.name }}` }}\n";
        let binary: Vec<u8> = vec![0, 159, 146, 150, b'{', b'{'];
        let mut t = tree(&[("cluster-class/templates/cc.yaml", helm)]);
        t.files.insert("charts/x.tgz".into(), binary.clone());
        let out = render_stack(&t, &stack(), &set(), &Lock::default()).unwrap();
        assert_eq!(text(&out, "cluster-class/templates/cc.yaml"), helm);
        assert_eq!(out["charts/x.tgz"], binary);
    }

    #[test]
    fn undefined_variable_names_file_and_line() {
        let err =
            render(&[("dir/a.yaml.tera", "ok: 1\nbad: {{ node_image.checksum }}\n")]).unwrap_err();
        let msg = err.to_string();
        assert!(
            matches!(&err, RenderError::Template { file, line: Some(2), .. } if file == "dir/a.yaml.tera"),
            "{err:?}"
        );
        assert!(msg.starts_with("dir/a.yaml.tera:2: "), "{msg}");
        assert!(msg.contains("checksum"), "{msg}");
        assert!(err.is_invalid_input());
    }

    #[test]
    fn syntax_error_names_file_and_line() {
        let err = render(&[("x.tera", "a\nb\n{{ kubernetes. }}\n")]).unwrap_err();
        assert!(
            matches!(&err, RenderError::Template { file, line: Some(3), .. } if file == "x.tera"),
            "{err:?}"
        );
    }

    #[test]
    fn templates_cannot_read_the_environment_or_files() {
        for (src, what) in [
            ("{{ get_env(name='HOME') }}", "get_env"),
            ("{{ read_file(path='/etc/passwd') }}", "read_file"),
            ("{% include '/etc/passwd' %}", "passwd"),
        ] {
            let err = render(&[("x.yaml.tera", &format!("line\n{src}\n"))]).unwrap_err();
            let msg = err.to_string();
            assert!(msg.starts_with("x.yaml.tera"), "{msg}");
            assert!(msg.contains(what), "{what}: {msg}");
        }
    }

    #[test]
    fn component_keys_with_dashes_are_reachable() {
        let mut s = set();
        let c = s.components["ccm"].clone();
        s.components.insert("metrics-server".into(), c);
        let out = render_stack(
            &tree(&[("v.tera", "{{ components[\"metrics-server\"].chart }}")]),
            &stack(),
            &s,
            &Lock::default(),
        )
        .unwrap();
        assert_eq!(text(&out, "v"), "openstack-cloud-controller-manager");
    }

    #[test]
    fn maps_iterate_in_key_order_on_every_render() {
        let mut s = set();
        for key in [
            "zeta", "alpha", "mu", "beta", "omega", "kappa", "delta", "eta",
        ] {
            let c = s.components["ccm"].clone();
            s.components.insert(key.into(), c);
        }
        let t = tree(&[("a.tera", "{% for k, c in components %}{{ k }} {% endfor %}")]);
        for _ in 0..20 {
            let out = render_stack(&t, &stack(), &s, &Lock::default()).unwrap();
            assert_eq!(
                text(&out, "a"),
                "alpha beta ccm delta eta kappa mu omega zeta "
            );
        }
    }

    #[test]
    fn a_template_and_a_plain_file_for_the_same_target_collide() {
        let err = render(&[("a.yaml", "x"), ("a.yaml.tera", "y")]).unwrap_err();
        assert!(matches!(err, RenderError::Collision { .. }), "{err:?}");
    }

    #[test]
    fn wrong_cluster_class_chart_name_is_refused() {
        let err = render(&[(
            "cluster-class/Chart.yaml.tera",
            "apiVersion: v2\nname: openstack-scs2-1-33-cluster-class\nversion: v1\n",
        )])
        .unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("cluster-class/Chart.yaml"), "{msg}");
        assert!(msg.contains("openstack-scs2-1-34-cluster-class"), "{msg}");
        let ok = render(&[(
            "cluster-class/Chart.yaml.tera",
            "apiVersion: v2\nname: {{ stack.provider }}-{{ stack.name }}-{{ minor.dashed }}-cluster-class\nversion: v1\n",
        )]);
        assert!(ok.is_ok(), "{ok:?}");
    }

    #[test]
    fn csctl_yaml_must_carry_the_release_set_version() {
        let err = render(&[(
            "csctl.yaml",
            "config:\n  kubernetesVersion: v1.34.6\n  clusterStackName: scs2\n  provider:\n    type: openstack\n",
        )])
        .unwrap_err();
        assert!(err.to_string().contains("v1.34.7"), "{err}");
    }

    #[test]
    fn a_set_for_another_stack_is_refused() {
        let mut s = set();
        s.stack = StackId::new("openstack", "scs").unwrap();
        let err = render_stack(&tree(&[("a", "b")]), &stack(), &s, &Lock::default()).unwrap_err();
        assert!(matches!(err, RenderError::WrongStack { .. }));
    }

    #[test]
    fn sample_set_follows_the_config_rules() {
        let s = sample_release_set(&stack());
        assert_eq!(s.kubernetes.to_string(), "v1.34.0");
        assert_eq!(s.node_image.url, "https://img/1.34/v1.34.0.qcow2");
        assert_eq!(s.components["ccm"].version, "2.34.0");
    }

    #[test]
    fn diff_shows_changed_added_and_removed_files() {
        let old: FileTree = [
            ("same".to_string(), b"x\n".to_vec()),
            ("changed".to_string(), b"a\nb\n".to_vec()),
            ("gone".to_string(), b"bye\n".to_vec()),
        ]
        .into();
        let mut new = old.clone();
        new.insert("changed".into(), b"a\nc\n".to_vec());
        new.remove("gone");
        new.insert("bin".into(), vec![0xff, 0]);
        let d = diff_trees(&old, &new, "out/1-34");
        assert!(
            d.contains("--- a/out/1-34/changed\n+++ b/out/1-34/changed"),
            "{d}"
        );
        assert!(d.contains("-b\n+c\n"), "{d}");
        assert!(d.contains("--- a/out/1-34/gone\n+++ /dev/null"), "{d}");
        assert!(
            d.contains("Binary files /dev/null and b/out/1-34/bin differ"),
            "{d}"
        );
        assert!(!d.contains("same"), "{d}");
        assert_eq!(diff_trees(&old, &old, "x"), "");
    }
}
