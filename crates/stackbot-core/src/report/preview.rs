//! The PR preview: what merging a change to templates or `stackbot.yaml` would release.
//!
//! `plan --format markdown` maps its plan into a [`Preview`] (plain data, no model types, so
//! the planner and this renderer evolve independently) and prints [`render`]'s output; the
//! preview workflow posts it as the one sticky comment found by [`MARKER`]. The comment must
//! stay under GitHub's limit however large the diff is, and say so when it was cut; the job
//! summary gets the full text (see [`emitted`]).

use super::github::Actions;
use super::markdown::{self, Block, COMMENT_LIMIT, SUMMARY_LIMIT};

/// Hidden marker identifying the bot's preview comment; exactly one comment carries it.
pub const MARKER: &str = "<!-- stackbot:preview -->";

/// A release that merging would cause.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct PreviewRelease {
    /// Release tag, e.g. `openstack-scs2-1-34-v3`.
    pub tag: String,
    /// `provider/name`.
    pub stack: String,
    /// Kubernetes minor, e.g. `1.34`.
    pub minor: String,
    /// Kubernetes version, e.g. `v1.34.7`.
    pub kubernetes: String,
    /// Cluster-stack version, e.g. `v3`.
    pub version: String,
    /// Asset file names.
    pub assets: Vec<String>,
}

/// One rendered file's unified diff (empty `unified` for a binary or unchanged file).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct FileDiff {
    /// Path relative to the repository root.
    pub path: String,
    /// Unified diff text (`---`/`+++` headers optional).
    pub unified: String,
}

/// The rendered-file changes of one stack × minor.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct StackDiff {
    /// `provider/name`.
    pub stack: String,
    /// Kubernetes minor, e.g. `1.34`.
    pub minor: String,
    pub files: Vec<FileDiff>,
}

/// A tenant pull request that would follow the releases.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct TenantLine {
    pub tenant: String,
    /// `owner/name`.
    pub repository: String,
    /// Bot branch, e.g. `stackbot/openstack-scs2`.
    pub branch: String,
    pub action: crate::tenants::Action,
    /// Files the PR changes.
    pub files: Vec<String>,
    /// The unified diff of those files (empty when unknown or nothing changes).
    pub diff: String,
}

/// Everything the preview shows.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct Preview {
    /// The commit the plan was computed for (shown so readers know the comment is current).
    pub commit: Option<String>,
    pub releases: Vec<PreviewRelease>,
    pub diffs: Vec<StackDiff>,
    pub tenants: Vec<TenantLine>,
    /// Free-form remarks, e.g. "openstack/scs2 1.35: waiting for node image".
    pub notes: Vec<String>,
}

/// Rendering options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Maximum size in bytes (≥ characters); [`COMMENT_LIMIT`] for a PR comment.
    pub limit: usize,
    /// Link to the job summary holding the full preview, used in the truncation note.
    pub summary_url: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            limit: COMMENT_LIMIT,
            summary_url: None,
        }
    }
}

/// Added and removed line counts of a unified diff (headers excluded).
pub fn diff_stat(unified: &str) -> (usize, usize) {
    let (mut add, mut del) = (0, 0);
    for l in unified.lines() {
        if l.starts_with("+++") || l.starts_with("---") {
            continue;
        }
        if l.starts_with('+') {
            add += 1;
        } else if l.starts_with('-') {
            del += 1;
        }
    }
    (add, del)
}

/// Render the preview as Markdown, at most `opts.limit` bytes, starting with [`MARKER`] and
/// containing it exactly once. When the diff does not fit, the note says so explicitly and
/// points to the job summary.
pub fn render(p: &Preview, opts: &Options) -> String {
    let whole = match &opts.summary_url {
        Some(url) => format!("the [job summary]({url})"),
        None => "the job summary".to_string(),
    };
    // A comment goes through the one body fitter (under GitHub's limit); the job summary's
    // larger limit likewise.
    let limit = if opts.limit == COMMENT_LIMIT {
        markdown::BODY_MAX
    } else {
        opts.limit
    };
    markdown::fit_body("", &blocks(p), "", limit, &whole).text
}

/// The two previews: the full one for the job summary (`None` outside GitHub Actions, or
/// without a summary file), up to the summary limit, and the comment-sized one for the PR,
/// linking to the run. The edge appends the first and prints the second.
pub fn emitted(p: &Preview, actions: &Actions) -> (Option<String>, String) {
    let full = actions.step_summary.is_some().then(|| {
        render(
            p,
            &Options {
                limit: SUMMARY_LIMIT,
                summary_url: None,
            },
        )
    });
    let comment = render(
        p,
        &Options {
            limit: COMMENT_LIMIT,
            summary_url: actions.run_url.clone(),
        },
    );
    (full, comment)
}

/// Neutralise the marker inside content we do not control, so the comment carries it once.
fn defuse_marker(s: &str) -> String {
    s.replace("stackbot:preview", "stackbot\u{200B}:preview")
}

/// The preview comment's sections in order: the head (what merging would do), notes,
/// releases, tenant pull requests, rendered changes, tenant changes. Only the diffs are
/// code blocks, so only they give way when the comment is too long.
fn blocks(p: &Preview) -> Vec<Block> {
    let files: usize = p.diffs.iter().map(|d| d.files.len()).sum();
    let mut out = vec![Block::Text(head(p, files))];
    if !p.notes.is_empty() {
        out.push(Block::Text(format!("\n{}", markdown::bullets(&p.notes))));
    }
    if !p.releases.is_empty() {
        out.push(releases(p));
    }
    if !p.tenants.is_empty() {
        out.push(tenants(p));
    }
    if files > 0 {
        rendered_changes(p, &mut out);
    }
    tenant_changes(p, &mut out);
    out
}

/// The marker, the commit, and one sentence on what merging would do.
fn head(p: &Preview, files: usize) -> String {
    let esc = markdown::escape_inline;
    let mut head = format!("{MARKER}\n## stackbot preview\n\n");
    if let Some(c) = &p.commit {
        head.push_str(&format!("Planned for commit {}.\n\n", esc(c)));
    }
    let tenant_prs = p
        .tenants
        .iter()
        .filter(|t| t.action != crate::tenants::Action::None)
        .count();
    if p.releases.is_empty() && files == 0 && tenant_prs == 0 {
        head.push_str("Merging this pull request changes no rendered file, publishes no release and opens no tenant pull request.\n");
    } else {
        head.push_str(&format!(
            "Merging this pull request would publish **{}** release{}, change **{files}** rendered file{} and open, update or close **{tenant_prs}** tenant pull request{}.\n",
            p.releases.len(),
            plural(p.releases.len()),
            plural(files),
            plural(tenant_prs),
        ));
    }
    head
}

/// A `###` section holding a table, every cell escaped.
fn table_block(title: &str, header: &[&str], rows: impl Iterator<Item = Vec<String>>) -> Block {
    let rows: Vec<Vec<String>> = rows
        .map(|r| r.iter().map(|c| markdown::escape_inline(c)).collect())
        .collect();
    Block::Text(format!(
        "\n### {title}\n\n{}",
        markdown::table(header, &rows)
    ))
}

fn releases(p: &Preview) -> Block {
    let rows = p.releases.iter().map(|r| {
        let (tag, stack, minor) = (r.tag.clone(), r.stack.clone(), r.minor.clone());
        let (kubernetes, version) = (r.kubernetes.clone(), r.version.clone());
        vec![tag, stack, minor, kubernetes, version, r.assets.join(", ")]
    });
    let header = ["Tag", "Stack", "Minor", "Kubernetes", "Version", "Assets"];
    table_block("Releases", &header, rows)
}

fn tenants(p: &Preview) -> Block {
    let rows = p.tenants.iter().map(|t| {
        let (who, repo, branch) = (t.tenant.clone(), t.repository.clone(), t.branch.clone());
        vec![who, repo, branch, t.action.to_string(), t.files.join(", ")]
    });
    let header = ["Tenant", "Repository", "Branch", "Action", "Files"];
    table_block("Tenant pull requests", &header, rows)
}

/// Per stack × minor, each changed file's diff (folded, with its line counts).
fn rendered_changes(p: &Preview, out: &mut Vec<Block>) {
    let esc = markdown::escape_inline;
    out.push(Block::Text("\n### Rendered changes\n".into()));
    for d in &p.diffs {
        if d.files.is_empty() {
            continue;
        }
        let (add, del) = d.files.iter().fold((0, 0), |(a, r), f| {
            let (x, y) = diff_stat(&f.unified);
            (a + x, r + y)
        });
        out.push(Block::Text(format!(
            "\n#### {} {}: {} file{} (+{add} −{del})\n\n",
            esc(&d.stack),
            esc(&d.minor),
            d.files.len(),
            plural(d.files.len()),
        )));
        for f in &d.files {
            out.push(if f.unified.is_empty() {
                let summary = format!("<code>{}</code> (+0 −0)", markdown::escape_html(&f.path));
                Block::Text(markdown::details(
                    &summary,
                    "Binary or metadata-only change.\n",
                ))
            } else {
                diff_block(&f.path, &f.unified)
            });
        }
    }
}

/// Per tenant pull request that changes files, the diff of those files (folded).
fn tenant_changes(p: &Preview, out: &mut Vec<Block>) {
    let esc = markdown::escape_inline;
    let changing: Vec<&TenantLine> = p
        .tenants
        .iter()
        .filter(|t| t.action != crate::tenants::Action::None && !t.diff.is_empty())
        .collect();
    if changing.is_empty() {
        return;
    }
    out.push(Block::Text("\n### Tenant changes\n".into()));
    for t in changing {
        out.push(Block::Text(format!(
            "\n#### {} ({}): {} pull request\n\n",
            esc(&t.tenant),
            esc(&t.repository),
            esc(&t.action.to_string()),
        )));
        out.push(diff_block(&t.files.join(", "), &t.diff));
    }
}

/// A folded diff of `what` (file names) with its line counts.
fn diff_block(what: &str, unified: &str) -> Block {
    let (add, del) = diff_stat(unified);
    Block::Code {
        summary_html: format!(
            "<code>{}</code> (+{add} −{del})",
            markdown::escape_html(what)
        ),
        info: "diff".into(),
        content: defuse_marker(unified),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Preview {
        Preview {
            commit: Some("0123abc".into()),
            releases: vec![PreviewRelease {
                tag: "openstack-scs2-1-34-v3".into(),
                stack: "openstack/scs2".into(),
                minor: "1.34".into(),
                kubernetes: "v1.34.7".into(),
                version: "v3".into(),
                assets: vec!["metadata.yaml".into(), "hashes.json".into()],
            }],
            diffs: vec![StackDiff {
                stack: "openstack/scs2".into(),
                minor: "1.34".into(),
                files: vec![FileDiff {
                    path: "cluster-stacks/openstack/scs2/1-34/csctl.yaml".into(),
                    unified: "--- a/csctl.yaml\n+++ b/csctl.yaml\n@@ -1 +1 @@\n-  kubernetesVersion: v1.34.6\n+  kubernetesVersion: v1.34.7\n".into(),
                }],
            }],
            tenants: vec![TenantLine {
                tenant: "team|a".into(),
                repository: "org/gitops-a".into(),
                branch: "stackbot/openstack-scs2".into(),
                action: crate::tenants::Action::Open,
                files: vec!["clusterstacks.yaml".into()],
                diff: "--- a/clusterstacks.yaml\n+++ b/clusterstacks.yaml\n@@ -1 +1 @@\n-  versions: [v2]\n+  versions: [v3]\n".into(),
            }],
            notes: vec![],
        }
    }

    #[test]
    fn tenant_pull_requests_show_their_diffs() {
        let md = render(&sample(), &Options::default());
        let at = md.find("### Tenant changes").expect("a tenant section");
        let section = &md[at..];
        assert!(section.contains("#### team\\|a (org/gitops-a): open pull request"));
        assert!(section.contains("<summary><code>clusterstacks.yaml</code> (+1 −1)</summary>"));
        assert!(section.contains("+  versions: [v3]\n"));
        let mut quiet = sample();
        quiet.tenants[0].action = crate::tenants::Action::None;
        assert!(!render(&quiet, &Options::default()).contains("### Tenant changes"));
    }

    /// A first release of two series: many small files, one huge file in the second series.
    fn two_series(huge: usize) -> Preview {
        let small = |i: usize| FileDiff {
            path: format!("f{i}.yaml"),
            unified: format!("--- /dev/null\n+++ b/f{i}.yaml\n@@ -0,0 +1 @@\n+key: {i}\n"),
        };
        let mut p = sample();
        p.diffs = ["1.33", "1.34"]
            .iter()
            .map(|m| StackDiff {
                stack: "openstack/scs2".into(),
                minor: m.to_string(),
                files: (0..5).map(small).collect(),
            })
            .collect();
        p.diffs[0].files.push(FileDiff {
            path: "huge.yaml".into(),
            unified: (0..huge)
                .map(|i| format!("+line {i} of the long one\n"))
                .collect(),
        });
        p
    }

    #[test]
    fn an_over_long_preview_keeps_every_series_headline_and_cuts_the_longest_diff_first() {
        let p = two_series(10_000);
        let opts = Options {
            limit: COMMENT_LIMIT,
            summary_url: Some("https://example.invalid/run/1".into()),
        };
        let md = render(&p, &opts);
        assert!(md.len() <= COMMENT_LIMIT, "{}", md.len());
        for headline in [
            "#### openstack/scs2 1.33: 6 files",
            "#### openstack/scs2 1.34: 5 files",
        ] {
            assert!(md.contains(headline), "{headline} was dropped");
        }
        // Every short diff is whole, in both series; the tenant diff too.
        assert_eq!(md.matches("+key: 4\n").count(), 2);
        assert!(md.contains("+  versions: [v3]\n"));
        // Only the long one was cut, and it says by how much.
        assert!(md.contains("+line 0 of the long one\n"));
        assert!(!md.contains("+line 9999 of the long one\n"));
        assert!(md.contains("more lines cut\n"));
        assert!(md.contains("The whole is in the [job summary](https://example.invalid/run/1)"));
        assert_eq!(
            md.matches("<details>").count(),
            md.matches("</details>").count()
        );
        // Under the limit nothing is cut.
        let whole = render(&two_series(10), &opts);
        assert!(
            !whole.contains("Cut to stay under") && whole.contains("+line 9 of the long one\n")
        );
    }

    #[test]
    fn starts_with_the_marker_exactly_once() {
        let mut p = sample();
        // Content that quotes the marker must not produce a second one.
        p.diffs[0].files[0]
            .unified
            .push_str(&format!("+{MARKER}\n"));
        p.tenants[0].tenant = MARKER.into();
        let md = render(&p, &Options::default());
        assert!(md.starts_with(MARKER));
        assert_eq!(md.matches(MARKER).count(), 1);
    }

    #[test]
    fn shows_releases_tenants_and_a_collapsed_diff_per_file() {
        let md = render(&sample(), &Options::default());
        assert!(md.contains("| openstack-scs2-1-34-v3 | openstack/scs2 | 1.34 | v1.34.7 | v3 |"));
        assert!(md.contains("### Tenant pull requests"));
        assert!(md.contains("| team\\|a | org/gitops-a |"));
        assert!(md.contains("#### openstack/scs2 1.34"));
        assert!(md.contains(
            "<details>\n<summary><code>cluster-stacks/openstack/scs2/1-34/csctl.yaml</code> (+1 −1)</summary>"
        ));
        assert!(md.contains("```diff\n--- a/csctl.yaml\n"));
        assert!(md.contains("+  kubernetesVersion: v1.34.7\n```\n"));
        assert!(md.contains("would publish **1** release, change **1** rendered file"));
        assert!(!md.contains("Cut to stay under"));
    }

    #[test]
    fn says_so_when_nothing_changes() {
        let md = render(&Preview::default(), &Options::default());
        assert!(md.contains("changes no rendered file, publishes no release"));
    }

    #[test]
    fn a_diff_with_fences_cannot_escape_its_code_block() {
        let mut p = sample();
        p.diffs[0].files[0].unified = "+```\n+# not a heading\n+</details>\n".into();
        let md = render(&p, &Options::default());
        assert!(md.contains("````diff\n+```\n+# not a heading\n+</details>\n````\n"));
    }

    #[test]
    fn huge_diffs_are_cut_under_the_limit_with_an_explicit_note() {
        let mut p = sample();
        let big: String = (0..20_000)
            .map(|i| format!("+replicas: {i} # padding padding\n"))
            .collect();
        p.diffs[0].files = (0..5)
            .map(|i| FileDiff {
                path: format!("f{i}.yaml"),
                unified: big.clone(),
            })
            .collect();
        let md = render(
            &p,
            &Options {
                limit: COMMENT_LIMIT,
                summary_url: Some("https://example.invalid/run/1".into()),
            },
        );
        assert!(md.chars().count() <= COMMENT_LIMIT);
        assert!(md.len() <= COMMENT_LIMIT);
        assert!(
            md.contains("Cut to stay under GitHub's 65,536-character limit"),
            "{md}"
        );
        assert!(md.contains("The whole is in the [job summary](https://example.invalid/run/1)"));
        // Releases, tenants and every file's summary line survive truncation.
        assert!(md.contains("### Releases"));
        assert!(md.contains("### Tenant pull requests"));
        for i in 0..5 {
            assert!(md.contains(&format!("<code>f{i}.yaml</code>")), "f{i}");
        }
        assert_eq!(md.matches(MARKER).count(), 1);
        assert_eq!(
            md.matches("<details>").count(),
            md.matches("</details>").count()
        );
    }

    #[test]
    fn the_full_preview_is_for_the_job_summary_and_a_fitting_one_for_the_comment() {
        let actions = Actions {
            enabled: true,
            step_summary: Some("summary.md".into()),
            run_url: Some("https://github.com/o/r/actions/runs/7".into()),
            ..Actions::default()
        };
        let mut p = sample();
        p.diffs[0].files[0].unified = (0..10_000).map(|i| format!("+line {i}\n")).collect();
        let (full, comment) = emitted(&p, &actions);
        let full = full.expect("a summary file is named");
        assert!(comment.len() <= COMMENT_LIMIT);
        assert!(comment.contains("the [job summary](https://github.com/o/r/actions/runs/7)"));
        assert!(
            full.len() > COMMENT_LIMIT,
            "the summary is not cut at the comment limit"
        );
        assert!(full.contains("+line 9999\n"));
        assert!(!full.contains("Cut to stay under"));

        let (none, outside) = emitted(&sample(), &Actions::default());
        assert_eq!(none, None, "outside Actions nothing is for a summary");
        assert_eq!(outside, render(&sample(), &Options::default()));
    }

    #[test]
    fn diff_stat_ignores_headers() {
        assert_eq!(diff_stat("--- a\n+++ b\n@@\n-x\n+y\n+z\n ctx\n"), (2, 1));
    }
}
