//! Mapping a release [`Plan`] (and tenant plans) into the [`Preview`] the PR comment shows.
//!
//! Kept apart from the renderer so the renderer stays a function of plain data, and the
//! preview shows exactly what `apply` would write: the diff is computed from the same
//! `base_files` and `rendered` trees the release commit is built from.

use crate::model::FileTree;
use crate::plan::Plan;

use super::preview::{FileDiff, Preview, PreviewRelease, TenantLine};

/// The unified diff (three lines of context) from `old` to `new` under the headers given: the
/// one diff format of every preview, `--check` and `init`; `None` when either is not UTF-8.
pub fn unified(a_name: &str, b_name: &str, old: &[u8], new: &[u8]) -> Option<String> {
    let (a, b) = (
        std::str::from_utf8(old).ok()?,
        std::str::from_utf8(new).ok()?,
    );
    let diff = similar::TextDiff::from_lines(a, b);
    Some(
        diff.unified_diff()
            .context_radius(3)
            .header(a_name, b_name)
            .to_string(),
    )
}

/// One unified diff per changed file between two trees, paths shown under `prefix`.
/// Binary files get an empty diff (the renderer says "binary change").
pub fn tree_diffs(prefix: &str, before: &FileTree, after: &FileTree) -> Vec<FileDiff> {
    let paths: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    let join = |p: &str| {
        if prefix.is_empty() {
            p.to_string()
        } else {
            format!("{}/{p}", prefix.trim_end_matches('/'))
        }
    };
    let mut out = Vec::new();
    for path in paths {
        let (a, b) = (before.get(path), after.get(path));
        if a == b {
            continue;
        }
        let full = join(path);
        let unified = unified(
            &a.map_or("/dev/null".to_string(), |_| format!("a/{full}")),
            &b.map_or("/dev/null".to_string(), |_| format!("b/{full}")),
            a.map_or(&[], |v| v),
            b.map_or(&[], |v| v),
        );
        out.push(FileDiff {
            path: full,
            unified: unified.unwrap_or_default(),
        });
    }
    out
}

/// The preview of a release plan: its releases, the rendered diff of each, skipped series and
/// warnings as notes, and the tenant lines carried in `plan.tenants` (JSON objects with
/// `tenant`, `repository`, `branch`, `action` and `files`).
pub fn preview(plan: &Plan, commit: Option<String>) -> Preview {
    let releases = plan
        .releases
        .iter()
        .map(|r| PreviewRelease {
            tag: r.tag.clone(),
            stack: r.stack.clone(),
            minor: r.minor.clone(),
            kubernetes: r.kubernetes.clone(),
            version: r.version.clone(),
            assets: r.assets.iter().map(|a| a.name.clone()).collect(),
        })
        .collect();
    let diffs = super::text::release_diffs(plan)
        .into_iter()
        .filter(|d| !d.files.is_empty())
        .collect();
    let mut notes: Vec<String> = plan
        .skipped
        .iter()
        .map(|s| format!("{}: {}", s.what, s.reason))
        .collect();
    notes.extend(
        plan.degraded
            .iter()
            .map(|d| format!("{d}; a deliberate downgrade needs `--allow-downgrade`")),
    );
    notes.extend(
        plan.failed
            .iter()
            .map(|f| format!("failed {}: {}", f.what, f.reason)),
    );
    notes.extend(plan.warnings.iter().cloned());
    Preview {
        commit,
        releases,
        diffs,
        tenants: plan.tenants.iter().filter_map(tenant_from_json).collect(),
        notes,
    }
}

/// A tenant line from its JSON form; `None` when it has no tenant name.
pub fn tenant_from_json(v: &serde_json::Value) -> Option<TenantLine> {
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
    let tenant = s("tenant");
    if tenant.is_empty() {
        return None;
    }
    let files = v
        .get("files")
        .and_then(|f| f.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|f| {
                    f.as_str()
                        .or_else(|| f.get("path").and_then(|p| p.as_str()))
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    Some(TenantLine {
        tenant,
        repository: s("repository"),
        branch: s("branch"),
        action: v
            .get("action")
            .and_then(|a| serde_json::from_value(a.clone()).ok())
            .unwrap_or_default(),
        files,
        diff: s("diff"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{PlannedAsset, PlannedRelease, PlannedVersions, Skipped};
    use crate::tenants::plan::Action;

    fn tree(files: &[(&str, &str)]) -> FileTree {
        files
            .iter()
            .map(|(p, c)| (p.to_string(), c.as_bytes().to_vec()))
            .collect()
    }

    fn release() -> PlannedRelease {
        PlannedRelease {
            tag: "openstack-scs2-1-34-v3".into(),
            stack: "openstack/scs2".into(),
            minor: "1.34".into(),
            kubernetes: "v1.34.7".into(),
            version: "v3".into(),
            versions: PlannedVersions {
                cluster_stack: "v3".into(),
                cluster_addon: "v2".into(),
                node_image: "v1".into(),
            },
            assets: vec![PlannedAsset {
                name: "metadata.yaml".into(),
                size: 10,
                sha256: "00".into(),
            }],
            resumed: false,
            notes: String::new(),
            steps: vec![],
            asset_bytes: FileTree::new(),
            path: "cluster-stacks/openstack/scs2/1-34".into(),
            base_files: tree(&[
                ("csctl.yaml", "kubernetesVersion: v1.34.6\n"),
                ("gone.yaml", "x\n"),
                ("same.yaml", "same\n"),
            ]),
            rendered: tree(&[
                ("csctl.yaml", "kubernetesVersion: v1.34.7\n"),
                ("new.yaml", "y\n"),
                ("same.yaml", "same\n"),
            ]),
        }
    }

    #[test]
    fn the_preview_diff_is_the_release_commit_diff() {
        let plan = Plan {
            releases: vec![release()],
            skipped: vec![Skipped {
                what: crate::plan::Subject::StackMinor {
                    stack: "openstack/scs2".parse().unwrap(),
                    minor: "1.33".parse().unwrap(),
                },
                reason: crate::plan::SkipReason::Said("waiting for node image".into()),
            }],
            tenants: vec![serde_json::json!({
                "tenant": "team-a", "repository": "org/a", "branch": "stackbot/openstack-scs2",
                "action": "open", "files": [{"path": "clusterstack.yaml"}]
            })],
            ..Plan::default()
        };
        let p = preview(&plan, Some("abc".into()));
        assert_eq!(p.releases[0].assets, vec!["metadata.yaml"]);
        let files: Vec<&str> = p.diffs[0].files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            files,
            vec![
                "cluster-stacks/openstack/scs2/1-34/csctl.yaml",
                "cluster-stacks/openstack/scs2/1-34/gone.yaml",
                "cluster-stacks/openstack/scs2/1-34/new.yaml",
            ],
            "unchanged files are left out"
        );
        let csctl = &p.diffs[0].files[0].unified;
        assert!(csctl.contains("-kubernetesVersion: v1.34.6\n+kubernetesVersion: v1.34.7\n"));
        assert!(p.diffs[0].files[1].unified.contains("+++ /dev/null"));
        assert!(p.diffs[0].files[2].unified.contains("--- /dev/null"));
        assert_eq!(p.notes, vec!["openstack/scs2 1.33: waiting for node image"]);
        assert_eq!(p.tenants[0].files, vec!["clusterstack.yaml"]);
        assert_eq!(p.tenants[0].action, Action::Open);
    }

    #[test]
    fn binary_files_have_no_text_diff() {
        let before = FileTree::from([("a.bin".to_string(), vec![0xff, 0x00])]);
        let after = FileTree::from([("a.bin".to_string(), vec![0xfe, 0x00])]);
        let d = tree_diffs("x", &before, &after);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].path, "x/a.bin");
        assert!(d[0].unified.is_empty());
    }
}
