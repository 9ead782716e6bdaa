use super::*;

pub(super) fn stable() -> ReleaseName {
    ReleaseName::parse("openstack-scs2-1-34-v3").unwrap()
}

pub(super) fn assets() -> FileTree {
    let mut t = FileTree::new();
    t.insert(
        "openstack-scs2-1-34-cluster-class-v3.tgz".into(),
        b"class".to_vec(),
    );
    t.insert("metadata.yaml".into(), b"versions: {}".to_vec());
    t
}

fn at(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

pub(super) fn candidate(attempts: &[(u32, &str)], results: &[(u32, Outcome)]) -> Candidate {
    let a = assets();
    Candidate {
        tag: candidate_name(&stable(), &a).to_string(),
        published: true,
        html_url: "file:///c".into(),
        record: Some(CandidateRecord {
            stable: stable().to_string(),
            digest: content_digest(&a),
        }),
        assets: a
            .iter()
            .map(|(n, b)| (n.clone(), hex::encode(Sha256::digest(b))))
            .collect(),
        attempts: attempts
            .iter()
            .map(|(n, t)| Attempt {
                attempt: *n,
                started_at: at(t),
                start: 1,
            })
            .collect(),
        results: results
            .iter()
            .map(|(n, o)| AttemptResult {
                attempt: *n,
                finished_at: at("2026-12-01T12:00:00Z"),
                outcome: *o,
                summary: None,
                detail: String::new(),
                evidence: Vec::new(),
                url: None,
            })
            .collect(),
        runs: Vec::new(),
        dispatches: Vec::new(),
    }
}

fn decide_on(c: Option<&Candidate>, runner: Option<&Runner>, now: &str) -> Decision {
    decide_in(c, runner, now, InRegistry::NotATarget)
}

/// [`decide_on`] for a stack that publishes to OCI too (`publish: [forge, oci]`), the
/// registry's candidate tag as `registry` says.
pub(super) fn decide_in(
    c: Option<&Candidate>,
    runner: Option<&Runner>,
    now: &str,
    registry: InRegistry<'_>,
) -> Decision {
    decide_where(c, runner, now, true, registry)
}

/// [`decide_in`] with where the forge pre-release holds the assets (`on_forge`: `publish`
/// lists `forge`).
pub(super) fn decide_where(
    c: Option<&Candidate>,
    runner: Option<&Runner>,
    now: &str,
    on_forge: bool,
    registry: InRegistry<'_>,
) -> Decision {
    let a = assets();
    let tag = stable().to_string();
    decide(&Facts {
        stable: &tag,
        assets: &a,
        candidate: c,
        on_forge,
        registry,
        runner,
        now: at(now),
        timeout: chrono::Duration::hours(6),
    })
}

#[test]
fn the_candidate_is_a_hash_mode_name_of_its_content_that_cso_parses() {
    let a = assets();
    let c = candidate_name(&stable(), &a);
    let tag = c.to_string();
    assert!(tag.starts_with("openstack-scs2-1-34-v0-sha-"), "{tag}");
    assert_eq!(tag.split('-').count(), 7, "CSO splits on `-` into 7 parts");
    assert!(!c.version.is_stable());
    assert_eq!(ReleaseName::parse(&tag).unwrap(), c);
    let mut b = a.clone();
    b.insert("metadata.yaml".into(), b"other".to_vec());
    assert_ne!(
        candidate_name(&stable(), &b),
        c,
        "other bytes, other candidate"
    );
    assert_eq!(
        candidate_name(&stable(), &a),
        c,
        "same bytes, same candidate"
    );
}

#[test]
fn the_candidate_carries_every_asset_and_the_chart_under_its_own_version() {
    let a = assets();
    let c = candidate_name(&stable(), &a);
    let ca = candidate_assets(&stable(), &a);
    for (n, b) in &a {
        assert_eq!(ca.get(n), Some(b), "{n} byte for byte");
    }
    let alias = format!("openstack-scs2-1-34-cluster-class-{}.tgz", c.version.dot());
    assert_eq!(ca.get(&alias).map(Vec::as_slice), Some(&b"class"[..]));
    assert_eq!(ca.len(), a.len() + 1);
}

#[test]
fn the_record_survives_the_notes() {
    let r = CandidateRecord {
        stable: "openstack-scs2-1-34-v3".into(),
        digest: "ab".repeat(32),
    };
    let notes = r.notes("openstack-scs2-1-34-v0-sha-abababa", None, true);
    assert_eq!(CandidateRecord::parse(&notes), Some(r.clone()));
    assert!(notes.contains("versions: [v0-sha.abababa]"), "{notes}");
    assert!(!notes.contains("OCI"), "{notes}");
    let reference = "127.0.0.1:5000/kaas/cluster-stacks:openstack-scs2-1-34-v0-sha-abababa";
    for here in [true, false] {
        let notes = r.notes("openstack-scs2-1-34-v0-sha-abababa", Some(reference), here);
        assert_eq!(CandidateRecord::parse(&notes), Some(r.clone()));
        assert!(notes.contains(&format!("`{reference}`")), "{notes}");
        assert_eq!(notes.contains("holds the gate's records"), !here, "{notes}");
    }
    assert_eq!(CandidateRecord::parse("plain notes"), None);
}

#[test]
fn a_release_goes_candidate_then_test_then_promotion() {
    assert_eq!(
        decide_on(None, None, "2026-12-01T10:00:00Z"),
        Decision::Publish
    );
    let mut unpublished = candidate(&[], &[]);
    unpublished.published = false;
    assert_eq!(
        decide_on(Some(&unpublished), None, "2026-12-01T10:00:00Z"),
        Decision::Publish,
        "a half-made candidate is finished first"
    );
    let fresh = candidate(&[], &[]);
    assert_eq!(
        decide_on(Some(&fresh), None, "2026-12-01T10:00:00Z"),
        Decision::Start {
            attempt: 1,
            start: 1
        }
    );
    let passed = candidate(&[(1, "2026-12-01T10:00:00Z")], &[(1, Outcome::Passed)]);
    assert!(matches!(
        decide_on(Some(&passed), None, "2026-12-01T13:00:00Z"),
        Decision::Promote(r) if r.attempt == 1
    ));
    let failed = candidate(&[(1, "2026-12-01T10:00:00Z")], &[(1, Outcome::Failed)]);
    assert!(matches!(
        decide_on(Some(&failed), None, "2026-12-01T13:00:00Z"),
        Decision::Rejected(_)
    ));
}

#[test]
fn a_running_test_starts_nothing_until_it_ends_or_overruns() {
    let c = candidate(&[(1, "2026-12-01T10:00:00Z")], &[]);
    assert_eq!(
        decide_on(Some(&c), Some(&Runner::Running), "2026-12-01T11:00:00Z"),
        Decision::Wait {
            since: at("2026-12-01T10:00:00Z"),
            attempt: 1
        }
    );
    assert!(matches!(
        decide_on(Some(&c), Some(&Runner::Running), "2026-12-01T16:30:00Z"),
        Decision::Record(r) if r.outcome == Outcome::Lost
    ));
    assert!(matches!(
        decide_on(Some(&c), Some(&Runner::Gone), "2026-12-01T11:00:00Z"),
        Decision::Record(r) if r.outcome == Outcome::Lost
    ));
    let done = Runner::Finished(Finished {
        exit_code: Some(0),
        signal: None,
        result: Some(Ok(Summary {
            passed: 3,
            ..Summary::default()
        })),
    });
    assert!(matches!(
        decide_on(Some(&c), Some(&done), "2026-12-01T11:00:00Z"),
        Decision::Record(r) if r.outcome == Outcome::Passed && r.summary.as_ref().unwrap().passed == 3
    ));
}

#[test]
fn a_cancelled_or_lost_run_is_retried_once_then_reported() {
    let once = candidate(&[(1, "2026-12-01T10:00:00Z")], &[(1, Outcome::Cancelled)]);
    assert_eq!(
        decide_on(Some(&once), None, "2026-12-01T11:00:00Z"),
        Decision::Start {
            attempt: 2,
            start: 1
        }
    );
    let twice = candidate(
        &[(1, "2026-12-01T10:00:00Z"), (2, "2026-12-01T11:00:00Z")],
        &[(1, Outcome::Cancelled), (2, Outcome::Lost)],
    );
    assert!(matches!(
        decide_on(Some(&twice), None, "2026-12-01T12:00:00Z"),
        Decision::GaveUp(rs) if rs.len() == 2
    ));
}

#[test]
fn a_candidate_of_other_content_is_refused() {
    let mut c = candidate(&[], &[]);
    c.record.as_mut().unwrap().digest = "00".repeat(32);
    assert!(matches!(
        decide_on(Some(&c), None, "2026-12-01T10:00:00Z"),
        Decision::Conflict(_)
    ));
    let mut tampered = candidate(&[], &[]);
    tampered
        .assets
        .insert("metadata.yaml".into(), "00".repeat(32));
    assert!(matches!(
        decide_on(Some(&tampered), None, "2026-12-01T10:00:00Z"),
        Decision::Conflict(m) if m.contains("metadata.yaml")
    ));
    c.record = None;
    assert!(matches!(
        decide_on(Some(&c), None, "2026-12-01T10:00:00Z"),
        Decision::Conflict(_)
    ));
}

#[test]
fn only_a_clean_exit_with_a_result_and_no_failure_passes() {
    let ok = Some(Ok(Summary {
        passed: 2,
        ..Summary::default()
    }));
    let fin = |exit_code, signal, result| Finished {
        exit_code,
        signal,
        result,
    };
    assert_eq!(
        outcome_of(&fin(Some(0), None, ok.clone())).0,
        Outcome::Passed
    );
    assert_eq!(
        outcome_of(&fin(Some(1), None, ok.clone())).0,
        Outcome::Failed
    );
    assert_eq!(outcome_of(&fin(Some(0), None, None)).0, Outcome::Failed);
    assert_eq!(
        outcome_of(&fin(Some(0), None, Some(Err("bad".into())))).0,
        Outcome::Failed
    );
    let failing = Some(Ok(Summary {
        passed: 1,
        failed: 1,
        ..Summary::default()
    }));
    assert_eq!(outcome_of(&fin(Some(0), None, failing)).0, Outcome::Failed);
    assert_eq!(
        outcome_of(&fin(None, Some(15), ok.clone())).0,
        Outcome::Cancelled
    );
    assert_eq!(outcome_of(&fin(Some(143), None, ok)).0, Outcome::Cancelled);
}

#[test]
fn a_workflow_run_passes_only_on_success_with_a_passing_artifact() {
    let ok = Some(Ok(Summary {
        passed: 2,
        ..Summary::default()
    }));
    let failing = Some(Ok(Summary {
        passed: 1,
        failed: 1,
        failed_tests: vec!["[sig-apps] x".into()],
        ..Summary::default()
    }));
    let run = |conclusion: &str, result: Option<Result<Summary, String>>| Concluded {
        conclusion: Some(conclusion.to_string()),
        url: "https://github.example/runs/7".into(),
        result,
    };
    let outcome = |c: &Concluded| conclusion_outcome(c).0;
    assert_eq!(outcome(&run("success", ok.clone())), Outcome::Passed);
    assert_eq!(
        outcome(&run("success", None)),
        Outcome::Failed,
        "no evidence"
    );
    assert_eq!(
        outcome(&run("success", Some(Ok(Summary::default())))),
        Outcome::Failed,
        "an artifact without a passed test is no evidence"
    );
    assert_eq!(outcome(&run("success", failing.clone())), Outcome::Failed);
    assert_eq!(outcome(&run("failure", ok.clone())), Outcome::Failed);
    assert_eq!(outcome(&run("failure", None)), Outcome::Failed);
    assert_eq!(outcome(&run("cancelled", ok.clone())), Outcome::Cancelled);
    for other in [
        "timed_out",
        "stale",
        "startup_failure",
        "skipped",
        "neutral",
    ] {
        assert_eq!(outcome(&run(other, ok.clone())), Outcome::Lost, "{other}");
    }
    let c = candidate(&[(1, "2026-12-01T10:00:00Z")], &[]);
    let Decision::Record(r) = decide_on(
        Some(&c),
        Some(&Runner::Concluded(run("failure", failing))),
        "2026-12-01T11:00:00Z",
    ) else {
        panic!("a completed run is recorded");
    };
    assert_eq!(r.outcome, Outcome::Failed);
    assert_eq!(r.url.as_deref(), Some("https://github.example/runs/7"));
    assert_eq!(r.summary.unwrap().failed_tests, ["[sig-apps] x"]);
}

#[test]
fn a_dispatch_whose_run_never_appears_is_lost_after_the_grace() {
    let c = candidate(&[(1, "2026-12-01T10:00:00Z")], &[]);
    assert!(matches!(
        decide_on(
            Some(&c),
            Some(&Runner::Unseen { dispatched: true }),
            "2026-12-01T10:05:00Z"
        ),
        Decision::Wait { attempt: 1, .. }
    ));
    assert!(matches!(
        decide_on(
            Some(&c),
            Some(&Runner::Unseen { dispatched: true }),
            "2026-12-01T11:00:00Z"
        ),
        Decision::Record(r) if r.outcome == Outcome::Lost
    ));
}

#[test]
fn the_run_of_an_attempt_is_the_first_dispatch_run_since_its_start_that_names_it() {
    use crate::forge::WorkflowRun;
    let run = |id, title: &str, event: &str, created: &str| WorkflowRun {
        id,
        display_title: title.into(),
        event: event.into(),
        status: "queued".into(),
        conclusion: None,
        created_at: Some(at(created)),
        html_url: format!("https://github.example/runs/{id}"),
    };
    let id = gate_id("openstack-scs2-1-34-v0-sha-15e670f", 1);
    assert_eq!(id, "openstack-scs2-1-34-v0-sha-15e670f#1");
    let since = at("2026-12-01T10:00:00Z");
    let runs = [
        // newest first, as GitHub lists them
        run(
            9,
            &format!("Conformance {id}"),
            "workflow_dispatch",
            "2026-12-01T10:02:00Z",
        ),
        run(
            8,
            &format!("Conformance {id}"),
            "workflow_dispatch",
            "2026-12-01T10:01:00Z",
        ),
        run(
            7,
            &format!("Conformance {id}2"),
            "workflow_dispatch",
            "2026-12-01T10:01:00Z",
        ),
        run(
            6,
            &format!("Conformance {id}"),
            "push",
            "2026-12-01T10:01:00Z",
        ),
        run(
            5,
            &format!("Conformance {id}"),
            "workflow_dispatch",
            "2026-11-30T10:00:00Z",
        ),
    ];
    assert_eq!(correlate(&runs, &id, since).map(|r| r.id), Some(8));
    assert_eq!(correlate(&runs[2..], &id, since).map(|r| r.id), None);
    let skewed = [run(4, &id, "workflow_dispatch", "2026-12-01T09:58:00Z")];
    assert_eq!(
        correlate(&skewed, &id, since).map(|r| r.id),
        Some(4),
        "GitHub's clock may be a little behind this machine's"
    );
    assert!(names_attempt(&format!("x {id} y"), &id));
    assert!(!names_attempt(&format!("x {id}0"), &id));
}

#[test]
fn an_attempt_that_never_began_is_started_again_under_the_same_attempt_at_most_three_times() {
    let mut c = candidate(&[(1, "2026-12-01T10:00:00Z")], &[]);
    // Locally, a missing launch marker proves it: started again at once.
    assert_eq!(
        decide_on(Some(&c), Some(&Runner::NotStarted), "2026-12-01T10:01:00Z"),
        Decision::Start {
            attempt: 1,
            start: 2
        }
    );
    // On GitHub, an unacknowledged dispatch may still be on its way (runs overlap, a run
    // appears seconds after its dispatch): waited for, then started again.
    let unacked = Runner::Unseen { dispatched: false };
    assert!(matches!(
        decide_on(Some(&c), Some(&unacked), "2026-12-01T10:05:00Z"),
        Decision::Wait { attempt: 1, .. }
    ));
    assert_eq!(
        decide_on(Some(&c), Some(&unacked), "2026-12-01T10:20:00Z"),
        Decision::Start {
            attempt: 1,
            start: 2
        }
    );
    // The grace counts from the newest start.
    c.attempts.push(Attempt {
        attempt: 1,
        started_at: at("2026-12-01T11:00:00Z"),
        start: 2,
    });
    assert!(matches!(
        decide_on(Some(&c), Some(&unacked), "2026-12-01T11:05:00Z"),
        Decision::Wait { attempt: 1, .. }
    ));
    assert_eq!(c.first_started(1), Some(at("2026-12-01T10:00:00Z")));
    assert_eq!(
        c.since(),
        Some(at("2026-12-01T10:00:00Z")),
        "in test since the first"
    );
    // A crash loop ends: the third start that never began is a lost attempt, and the retry
    // is the next attempt's first start.
    c.attempts.push(Attempt {
        attempt: 1,
        started_at: at("2026-12-01T12:00:00Z"),
        start: 3,
    });
    let Decision::Record(r) =
        decide_on(Some(&c), Some(&Runner::NotStarted), "2026-12-01T12:01:00Z")
    else {
        panic!("the third start that never began is recorded");
    };
    assert_eq!((r.attempt, r.outcome), (1, Outcome::Lost));
    assert!(r.detail.contains("never began in 3 starts"), "{}", r.detail);
    c.results.push(r);
    assert_eq!(
        decide_on(Some(&c), None, "2026-12-01T12:02:00Z"),
        Decision::Start {
            attempt: 2,
            start: 1
        }
    );
}

#[test]
fn a_record_without_a_start_is_a_first_start_and_starts_have_their_own_names() {
    let old: Attempt =
        serde_json::from_str(r#"{"attempt":1,"started_at":"2026-12-01T10:00:00Z"}"#).unwrap();
    assert_eq!(old.start, 1);
    assert_eq!(attempt_asset(1, 1), "gate-attempt-1.json");
    assert_eq!(attempt_asset(1, 2), "gate-attempt-1-start-2.json");
    assert!(is_gate_asset(&attempt_asset(2, 3)) && is_gate_asset(&dispatch_asset(1)));
    let mut c = candidate(&[(1, "2026-12-01T10:00:00Z")], &[]);
    assert!(!c.dispatched(1));
    c.dispatches.push(DispatchRecord {
        attempt: 1,
        start: 1,
        unanswered: None,
    });
    assert!(c.dispatched(1) && !c.dispatched(2));
}
