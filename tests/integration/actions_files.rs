//! GitHub Actions' files as the program writes them (`stackbot::report::github::ActionsFiles`)
//! and the runner reads them back (`support::runner::parse_env_file`): the job summary stays
//! within GitHub's limit, step outputs survive multi-line values, nothing is written outside
//! Actions.

use std::collections::BTreeMap;

use stackbot::report::github::{Actions, ActionsFiles, error_annotation};
use stackbot::report::markdown::SUMMARY_LIMIT;

use crate::support::runner::parse_env_file;

#[test]
fn summary_and_outputs_are_appended_to_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    let output = dir.path().join("output");
    // As `Actions::from_lookup` reads them from the runner's variables (core's tests).
    let a = Actions {
        enabled: true,
        step_summary: Some(summary.clone()),
        output: Some(output.clone()),
        ..Actions::default()
    };
    assert!(a.append_summary("## one").unwrap());
    assert!(a.append_summary("## two\n").unwrap());
    assert_eq!(
        std::fs::read_to_string(&summary).unwrap(),
        "## one\n## two\n"
    );
    let tags = "openstack-scs2-1-33-v2\nopenstack-scs2-1-34-v3";
    assert!(a.set_output("tags", tags).unwrap());
    assert!(a.set_output("released", "2").unwrap());
    let text = std::fs::read_to_string(&output).unwrap();
    assert!(text.starts_with("tags<<ghadelimiter_"));
    assert_eq!(
        parse_env_file(&text),
        BTreeMap::from([
            ("tags".to_string(), tags.to_string()),
            ("released".to_string(), "2".to_string())
        ]),
        "the runner reads back what was set"
    );
    assert!(a.set_output("bad=key", "x").is_err());
}

#[test]
fn outside_actions_nothing_is_written() {
    let a = Actions::default();
    assert!(!a.append_summary("x").unwrap());
    assert!(!a.set_output("k", "v").unwrap());
    assert!(!a.annotate(&error_annotation(&anyhow::anyhow!("x"), None)));
}

#[test]
fn summary_never_grows_past_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "x".repeat(SUMMARY_LIMIT - 100)).unwrap();
    let a = Actions {
        step_summary: Some(summary.clone()),
        ..Actions::default()
    };
    a.append_summary(&"y".repeat(10_000)).unwrap();
    let len = std::fs::metadata(&summary).unwrap().len() as usize;
    assert!(len <= SUMMARY_LIMIT, "{len}");
    assert!(
        std::fs::read_to_string(&summary)
            .unwrap()
            .contains("truncated")
    );
}
