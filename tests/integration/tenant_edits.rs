//! The tenant edit corpus: every `tests/fixtures/tenants/<case>/input.yaml` is planned like a
//! tenant file and the result must equal `expected.yaml` byte for byte (or fail with the text
//! of `expected.error`). Optional `case.yaml` sets releases (`name@kubernetes`), policy and
//! whether the input is a `clusters:` file.

use std::collections::BTreeMap;
use std::path::Path;

use stackbot::config::{PolicyAction, TenantConfig, TenantPolicy};
use stackbot::model::ReleaseName;
use stackbot::tenants::plan::{AvailableRelease, Observed, plan_tenant};

#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Case {
    releases: Option<Vec<String>>,
    keep: Option<u32>,
    patch: Option<PolicyAction>,
    minor: Option<PolicyAction>,
    kind: Option<String>,
}

const STACK_FILE: &str = "apiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: openstack-scs2-1-33\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"1.33\"\n  versions: [v2]\n";

fn releases(c: &Case) -> Vec<AvailableRelease> {
    let list = c
        .releases
        .clone()
        .unwrap_or_else(|| vec!["openstack-scs2-1-33-v3@v1.33.5".into()]);
    list.iter()
        .map(|s| {
            let (n, k) = s.split_once('@').expect("name@kubernetes");
            AvailableRelease {
                name: ReleaseName::parse(n).unwrap(),
                kubernetes: k.parse().unwrap(),
                html_url: format!("https://example.org/releases/{n}"),
                body: format!("Release {n}"),
                earlier: Default::default(),
            }
        })
        .collect()
}

fn run_case(dir: &Path) -> Result<(), String> {
    let input = std::fs::read(dir.join("input.yaml")).unwrap();
    let case: Case = match std::fs::read_to_string(dir.join("case.yaml")) {
        Ok(t) => yaml_serde::from_str(&t).unwrap(),
        Err(_) => Case::default(),
    };
    let clusters = case.kind.as_deref() == Some("clusters");
    let tenant = TenantConfig {
        name: "acme".into(),
        repository: "acme/gitops".into(),
        base_branch: "main".into(),
        files: vec![
            if clusters {
                "stacks.yaml"
            } else {
                "input.yaml"
            }
            .into(),
        ],
        stacks: vec!["openstack/scs2".into()],
        policy: TenantPolicy {
            patch: case.patch.unwrap_or(PolicyAction::PullRequest),
            minor: case.minor.unwrap_or(PolicyAction::PullRequest),
            keep: case.keep.unwrap_or(2),
            ..TenantPolicy::default()
        },
        clusters: if clusters {
            vec!["input.yaml".into()]
        } else {
            vec![]
        },
    };
    let mut observed = Observed {
        base_head: "0".repeat(40),
        ..Observed::default()
    };
    if clusters {
        observed
            .stack_files
            .insert("stacks.yaml".into(), STACK_FILE.as_bytes().to_vec());
        observed
            .cluster_files
            .insert("input.yaml".into(), input.clone());
    } else {
        observed
            .stack_files
            .insert("input.yaml".into(), input.clone());
    }
    let result = plan_tenant(
        &tenant,
        &releases(&case),
        &observed,
        &stackbot::tenants::Facts::unread("2026-05-01".parse().unwrap()),
        "bot@example.org",
    );
    if let Ok(want) = std::fs::read_to_string(dir.join("expected.error")) {
        let want = want.trim();
        return match result {
            Ok(_) => Err(format!(
                "expected an error containing `{want}`, got success"
            )),
            Err(e) if e.to_string().contains(want) => Ok(()),
            Err(e) => Err(format!("expected an error containing `{want}`, got `{e}`")),
        };
    }
    let plans = result.map_err(|e| format!("unexpected error: {e}"))?;
    let edited: BTreeMap<_, _> = plans[0]
        .files
        .iter()
        .map(|f| (f.path.clone(), f.after.clone()))
        .collect();
    let got = edited.get("input.yaml").cloned().unwrap_or(input);
    let want = std::fs::read(dir.join("expected.yaml")).unwrap();
    if got != want {
        return Err(format!(
            "bytes differ\n--- expected\n{}\n--- got\n{}",
            String::from_utf8_lossy(&want),
            String::from_utf8_lossy(&got)
        ));
    }
    Ok(())
}

#[test]
fn every_corpus_case_edits_exactly_the_expected_bytes() {
    let root = crate::support::root().join("tests/fixtures/tenants");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 20, "the corpus must hold at least 20 cases");
    let failures: Vec<String> = dirs
        .iter()
        .filter_map(|d| {
            run_case(d)
                .err()
                .map(|e| format!("{}: {e}", d.file_name().unwrap().to_string_lossy()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
