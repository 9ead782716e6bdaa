use super::*;

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

fn setup(shards: u32) -> Setup {
    Setup {
        pin: ActionPin::new("SovereignCloudStack/stackbot", SHA, "v0.1.0").unwrap(),
        stackbot_version: "0.1.0".into(),
        repository: "SovereignCloudStack/cluster-stacks".into(),
        base_branch: "main".into(),
        api_url: None,
        config: "stackbot.yaml".into(),
        tenant_shards: shards,
        cron_minute: 17,
        dispatches_gate: false,
    }
}

fn yaml(text: &str) -> serde_json::Value {
    yaml_serde::from_str(text).unwrap_or_else(|e| panic!("not YAML ({e}):\n{text}"))
}

#[test]
fn the_action_is_pinned_by_a_full_commit_sha_and_nothing_else() {
    let pin = ActionPin::new("o/stackbot", &SHA.to_ascii_uppercase(), "0.1.0").unwrap();
    assert_eq!(pin.uses(), format!("o/stackbot@{SHA} # v0.1.0"));
    for bad in [
        "v0",
        "v0.1.0",
        "main",
        &SHA[..39],
        &format!("{SHA}0"),
        &"g".repeat(40),
    ] {
        assert_eq!(
            ActionPin::new("o/stackbot", bad, "v0.1.0"),
            Err(InitError::NotASha(bad.to_string())),
            "{bad}"
        );
    }
    assert!(matches!(
        ActionPin::new("stackbot", SHA, "v0.1.0"),
        Err(InitError::BadRepository(_))
    ));
    assert!(matches!(
        ActionPin::new("o/s", SHA, "latest"),
        Err(InitError::BadVersion(_))
    ));
    let hint = InitError::NotASha("v0".into()).to_string();
    assert!(hint.contains("refs/tags/v0.1.0^{}"), "{hint}");
}

#[test]
fn adopted_stack_entries_share_one_configuration_with_the_github_forge() {
    let adopted = "# header\nstacks:\n  - provider: openstack\n    name: scs2\n    templates: t/a\n    output: o/a\n    minors: supported\n";
    let other = "stacks:\n  - provider: docker\n    name: scs\n    templates: t/b\n    output: o/b\n    minors: [\"1.34\"]\nforge:\n  kind: local\n";
    let a = stack_entries(adopted).unwrap();
    let b = stack_entries(other).unwrap();
    assert!(!b.contains("forge"), "the entries end at the next key: {b}");
    assert_eq!(stack_entries("forge:\n  kind: local\n"), None);
    let text = config_text(&[a, b], &setup(0));
    let cfg = crate::config::parse(&text, std::path::Path::new("stackbot.yaml"))
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let ids: Vec<String> = cfg.stacks.iter().map(|s| s.id().to_string()).collect();
    assert_eq!(ids, ["openstack/scs2", "docker/scs"]);
    assert_eq!(cfg.forge.kind, crate::config::ForgeKind::Github);
    assert_eq!(cfg.forge.repository, "SovereignCloudStack/cluster-stacks");
    assert_eq!(cfg.forge.mode, crate::config::ReleaseMode::PullRequest);
    assert_eq!(
        cfg.upstream.cache_dir.as_deref(),
        Some(std::path::Path::new(".stackbot/cache"))
    );
    assert!(cfg.tenants.is_empty());
    assert_eq!(cfg.forge.github.writes_per_hour, None);
    // Shards share one token's hourly write budget.
    let sharded = config_text(&[stack_entries(adopted).unwrap()], &setup(3));
    let cfg = crate::config::parse(&sharded, std::path::Path::new("stackbot.yaml")).unwrap();
    assert_eq!(cfg.forge.github.writes_per_hour, Some(150));
}

fn uses_of(doc: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for job in doc["jobs"].as_object().unwrap().values() {
        for step in job["steps"].as_array().unwrap() {
            if let Some(u) = step.get("uses").and_then(|u| u.as_str()) {
                out.push(u.to_string());
            }
        }
    }
    out
}

#[test]
fn the_release_workflow_runs_hourly_one_at_a_time_through_the_pinned_action() {
    let text = workflows::release(&setup(0));
    assert_eq!(text, workflows::release(&setup(0)), "deterministic");
    let doc = yaml(&text);
    assert_eq!(doc["on"]["schedule"][0]["cron"], "17 * * * *");
    let inputs = doc["on"]["workflow_dispatch"]["inputs"]
        .as_object()
        .unwrap();
    for i in ["dry-run", "stack", "minor", "allow-downgrade", "republish"] {
        assert!(inputs.contains_key(i), "dispatch input {i}");
    }
    assert_eq!(doc["concurrency"]["cancel-in-progress"], false);
    assert_eq!(doc["permissions"], serde_json::json!({}));
    let jobs = doc["jobs"].as_object().unwrap();
    assert_eq!(jobs.keys().collect::<Vec<_>>(), ["release"]);
    let pin = format!("SovereignCloudStack/stackbot@{SHA}");
    assert!(uses_of(&doc).contains(&pin));
    assert!(text.contains(&format!("{pin} # v0.1.0\n")), "{text}");
    for u in uses_of(&doc) {
        assert!(
            u == pin
                || workflows::PINNED
                    .iter()
                    .any(|p| u == format!("{}@{}", p.action, p.commit)),
            "unpinned: {u}"
        );
    }
    let step = &jobs["release"]["steps"].as_array().unwrap()[2];
    assert_eq!(step["with"]["command"], "release");
    assert!(step["with"].get("skip-tenants").is_none());
}

#[test]
fn tenant_shards_follow_the_release_job_as_a_matrix() {
    let doc = yaml(&workflows::release(&setup(4)));
    let jobs = doc["jobs"].as_object().unwrap();
    let release = &jobs["release"]["steps"].as_array().unwrap()[2]["with"];
    assert_eq!(release["skip-tenants"], "true");
    let tenants = &jobs["tenants"];
    assert_eq!(tenants["needs"], "release");
    assert_eq!(
        tenants["strategy"]["matrix"]["shard"],
        serde_json::json!([1, 2, 3, 4])
    );
    assert_eq!(tenants["strategy"]["fail-fast"], false);
    let with = &tenants["steps"].as_array().unwrap()[2]["with"];
    assert_eq!(with["command"], "tenants");
    assert_eq!(with["shard"], "${{ matrix.shard }}/4");
    assert_eq!(
        tenants["permissions"],
        serde_json::json!({"contents": "read"})
    );
    assert!(matches!(
        Setup {
            tenant_shards: 257,
            ..setup(0)
        }
        .check(),
        Err(InitError::BadShards(257))
    ));
}

#[test]
fn the_preview_plans_read_only_and_only_the_comment_job_writes() {
    let doc = yaml(&workflows::preview(&setup(0)));
    assert!(doc["on"].get("pull_request_target").is_none());
    let paths = doc["on"]["pull_request"]["paths"].as_array().unwrap();
    for p in ["stackbot.yaml", "templates/**", "cluster-stacks/**"] {
        assert!(paths.iter().any(|x| x == p), "{p}");
    }
    let plan = &doc["jobs"]["plan"];
    assert_eq!(plan["permissions"], serde_json::json!({"contents": "read"}));
    let with = &plan["steps"].as_array().unwrap()[1]["with"];
    assert_eq!(with["command"], "plan");
    assert_eq!(with["format"], "markdown");
    let comment = &doc["jobs"]["comment"];
    assert!(
        comment["if"]
            .as_str()
            .unwrap()
            .contains("head.repo.full_name == github.repository")
    );
    assert!(comment["steps"][0].get("uses").is_none(), "runs no PR code");
    // The renderer's marker (report::preview::MARKER; tests/integration/workflows.rs checks
    // the two are the same).
    assert!(workflows::preview(&setup(0)).contains("<!-- stackbot:preview -->"));
}

#[test]
fn comparing_says_create_unchanged_or_update_with_the_diff() {
    let desired = BTreeMap::from([
        ("a".to_string(), b"one\n".to_vec()),
        ("b".to_string(), b"two\n".to_vec()),
        ("c".to_string(), b"three\n".to_vec()),
    ]);
    let changes = compare(&desired, |p| match p {
        "b" => Some(b"two\n".to_vec()),
        "c" => Some(b"3\n".to_vec()),
        _ => None,
    });
    assert_eq!(changes[0].change, Change::Create);
    assert_eq!(changes[1].change, Change::Unchanged);
    let Change::Update { diff } = &changes[2].change else {
        panic!("{:?}", changes[2]);
    };
    assert!(
        diff.contains("--- a/c\n+++ b/c\n") && diff.contains("-3\n+three\n"),
        "{diff}"
    );
}

#[test]
fn the_answer_cache_is_ignored_once() {
    let once = gitignore(Some("target/"));
    assert_eq!(
        once,
        "target/\n# stackbot's answer cache and local state (stackbot init)\n.stackbot/\n"
    );
    assert_eq!(gitignore(Some(&once)), once);
    assert_eq!(gitignore(Some("/.stackbot\n")), "/.stackbot\n");
    assert!(gitignore(None).ends_with(".stackbot/\n"));
}

#[test]
fn the_release_job_may_dispatch_workflows_only_when_a_stack_has_a_workflow_gate() {
    let release = |dispatches_gate| {
        let doc = yaml(&workflows::release(&Setup {
            dispatches_gate,
            ..setup(0)
        }));
        doc["jobs"]["release"]["permissions"].clone()
    };
    let without = release(false);
    assert!(without.get("actions").is_none(), "{without}");
    assert_eq!(without["contents"], "write");
    let with = release(true);
    assert_eq!(with["actions"], "write", "a workflow_dispatch needs it");
    let mut rest = with.as_object().unwrap().clone();
    rest.remove("actions");
    assert_eq!(
        serde_json::Value::Object(rest),
        without,
        "nothing else changes"
    );
}
