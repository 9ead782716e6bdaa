//! Minor upgrades of tenant `Cluster` resources (`policy.upgrade.clusters`, issue 22), over
//! several runs with people acting between them, on the local forge and the fake GitHub.
//!
//! The promises:
//! - a Cluster moves one minor at a time: one pull request per Cluster × minor step, on its own
//!   branch, which also makes the tenant's `ClusterStack` list the release when it does not;
//! - the next step is proposed only once the previous one is merged;
//! - the body says what to do before and after merging, how to roll back, and links the
//!   Kubernetes and Cluster API upgrade notes;
//! - the promises of every tenant pull request hold: a run after a run that did everything
//!   makes no write, the base moving is no reason to write, a declined step is not proposed
//!   again for the same release, a person's commits are never pushed over, a step the Cluster
//!   took another way is closed;
//! - a step that fixes a critical CVE says so in its title and body and carries the tenant's
//!   security label.

use crate::support;

use stackbot::compliance::{Inputs, Lifecycles, Security};
use stackbot::forge::local::MergeMethod;
use stackbot::forge::{Forge, PullState};
use stackbot::tenants::{Action, Outcome, TenantReport};
use stackbot::upstream::cve::{Cve, Version, VersionRange};
use support::tenant_world::{World, stack_doc};

const ACME: &str = "acme/gitops";
const STACKS_FILE: &str = "clusterstacks/prod.yaml";
const CLUSTER_FILE: &str = "clusters/prod.yaml";
const STEP_34: &str = "stackbot/upgrade-openstack-scs2-team-a-prod-1-34";
const STEP_35: &str = "stackbot/upgrade-openstack-scs2-team-a-prod-1-35";

/// Upgrades on, the stack pull request limited to patches (so each scenario watches the
/// upgrade pull requests alone).
const POLICY: &str = "    clusters: [\"clusters/*.yaml\"]\n    policy: {minor: ignore, upgrade: {clusters: pull-request}}\n";

fn cluster(class: &str, version: &str) -> String {
    format!(
        "# the production cluster\napiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: prod\n  namespace: team-a\nspec:\n  topology:\n    class: {class}  # pinned by stackbot\n    version: {version}\n    controlPlane:\n      replicas: 3\n"
    )
}

fn world<F: Forge>(w: fn(&[support::tenant_world::Tenant], &str) -> World<F>) -> World<F> {
    let stacks = stack_doc("1.33", "[v1, v2]");
    let c = cluster("openstack-scs2-1-33-v2", "v1.33.5");
    let w = w(
        &[(
            "acme",
            ACME,
            &[(STACKS_FILE, stacks.as_str()), (CLUSTER_FILE, c.as_str())],
        )],
        POLICY,
    );
    w.publish("openstack-scs2-1-33-v2", "v1.33.5");
    w
}

fn line<'a>(r: &'a [TenantReport], branch: &str) -> &'a TenantReport {
    r.iter()
        .find(|x| x.branch.as_deref() == Some(branch))
        .unwrap_or_else(|| panic!("no report for {branch}: {r:#?}"))
}

fn upgrade_lines(r: &[TenantReport]) -> Vec<&TenantReport> {
    r.iter()
        .filter(|x| {
            x.branch
                .as_deref()
                .is_some_and(|b| b.starts_with("stackbot/upgrade-"))
        })
        .collect()
}

fn nothing_written<F: Forge>(w: &World<F>) {
    let (writes, tally) = w.writes();
    assert_eq!(writes, 0, "{tally}");
}

fn one_minor_at_a_time_and_the_next_only_after_the_merge<F: Forge>(w: World<F>) {
    // Two newer minors: only the next one is proposed.
    w.publish("openstack-scs2-1-34-v1", "v1.34.2");
    w.publish("openstack-scs2-1-35-v1", "v1.35.1");
    let r = w.run();
    let ups = upgrade_lines(&r);
    assert_eq!(ups.len(), 1, "{r:#?}");
    assert_eq!(
        (ups[0].branch.as_deref(), ups[0].action, &ups[0].outcome),
        (Some(STEP_34), Action::Open, &Outcome::Opened)
    );
    assert_eq!(ups[0].files, [STACKS_FILE, CLUSTER_FILE]);
    assert_eq!(
        w.file(ACME, STEP_34, CLUSTER_FILE),
        cluster("openstack-scs2-1-34-v1", "v1.34.2"),
        "class and version change, comments and layout stay"
    );
    let stacks = w.file(ACME, STEP_34, STACKS_FILE);
    assert!(
        stacks.starts_with(&stack_doc("1.33", "[v1, v2]")),
        "the 1.33 ClusterStack stays: {stacks}"
    );
    assert!(
        stacks.contains("kubernetesVersion: \"1.34\"") && stacks.contains("versions: [v1]"),
        "a ClusterStack for 1.34 listing the release is added: {stacks}"
    );
    let pull = &w.pulls_of(ACME, STEP_34)[0];
    assert_eq!(
        pull.title,
        "Upgrade Cluster team-a/prod to Kubernetes 1.34 (openstack-scs2-1-34-v1)"
    );
    for words in [
        "**Before merging**",
        "**After merging**",
        "**Rollback**",
        "https://github.com/kubernetes/kubernetes/blob/master/CHANGELOG/CHANGELOG-1.34.md",
        "https://cluster-api.sigs.k8s.io/tasks/upgrading-clusters",
        "| now | `openstack-scs2-1-33-v2` | v1.33.5 |",
    ] {
        assert!(pull.body.contains(words), "{words} missing:\n{}", pull.body);
    }
    assert!(w.pulls_of(ACME, STEP_35).is_empty());

    w.run();
    nothing_written(&w);

    w.humans.merge(ACME, pull.number, MergeMethod::Squash);
    let r = w.run();
    let ups = upgrade_lines(&r);
    assert_eq!(ups.len(), 1, "{r:#?}");
    assert_eq!(
        (ups[0].branch.as_deref(), &ups[0].outcome),
        (Some(STEP_35), &Outcome::Opened)
    );
    assert_eq!(
        w.file(ACME, STEP_35, CLUSTER_FILE),
        cluster("openstack-scs2-1-35-v1", "v1.35.1")
    );
    assert_eq!(w.pulls_of(ACME, STEP_34)[0].state, PullState::Merged);
    w.run();
    nothing_written(&w);
}

#[test]
fn one_minor_at_a_time_and_the_next_only_after_the_merge_local() {
    one_minor_at_a_time_and_the_next_only_after_the_merge(world(World::local_with));
}

#[test]
fn one_minor_at_a_time_and_the_next_only_after_the_merge_github() {
    one_minor_at_a_time_and_the_next_only_after_the_merge(world(World::github_with));
}

fn a_declined_step_stays_declined_until_a_newer_release<F: Forge>(w: World<F>) {
    w.publish("openstack-scs2-1-34-v1", "v1.34.2");
    w.run();
    let n = w.pulls_of(ACME, STEP_34)[0].number;
    w.humans.close(ACME, n);
    w.humans.delete_branch(ACME, STEP_34);
    // The base moves meanwhile.
    w.humans.commit(
        ACME,
        "main",
        &[("apps/podinfo.yaml", Some("replicas: 3\n"))],
        "Renovate: bump podinfo",
    );
    let r = w.run();
    nothing_written(&w);
    let step = line(&r, STEP_34);
    assert_eq!(step.action, Action::None);
    assert!(
        step.note
            .as_deref()
            .unwrap_or("")
            .contains("closed by a human"),
        "{step:?}"
    );

    w.publish("openstack-scs2-1-34-v2", "v1.34.3");
    let r = w.run();
    assert_eq!(line(&r, STEP_34).outcome, Outcome::Opened, "{r:#?}");
    let pulls = w.pulls_of(ACME, STEP_34);
    assert_eq!(pulls.len(), 2);
    assert!(pulls[0].title.contains("openstack-scs2-1-34-v2"));
    w.run();
    nothing_written(&w);
}

#[test]
fn a_declined_step_stays_declined_until_a_newer_release_local() {
    a_declined_step_stays_declined_until_a_newer_release(world(World::local_with));
}

#[test]
fn a_declined_step_stays_declined_until_a_newer_release_github() {
    a_declined_step_stays_declined_until_a_newer_release(world(World::github_with));
}

fn the_base_moving_is_no_reason_to_write_and_a_person_is_never_pushed_over<F: Forge>(w: World<F>) {
    w.publish("openstack-scs2-1-34-v1", "v1.34.2");
    w.run();
    let head = w.head(ACME, STEP_34);
    w.humans.commit(
        ACME,
        "main",
        &[("apps/podinfo.yaml", Some("replicas: 3\n"))],
        "Renovate: bump podinfo",
    );
    w.run();
    nothing_written(&w);
    assert_eq!(
        w.head(ACME, STEP_34),
        head,
        "no force-push because the base moved"
    );

    // A person adjusts the upgrade on the bot's branch; a newer release must not push over it.
    let adjusted =
        cluster("openstack-scs2-1-34-v1", "v1.34.2").replace("replicas: 3", "replicas: 5");
    let by_jane = w.humans.commit(
        ACME,
        STEP_34,
        &[(CLUSTER_FILE, Some(&adjusted))],
        "scale the control plane for the upgrade",
    );
    w.publish("openstack-scs2-1-34-v2", "v1.34.3");
    let r = w.run();
    let step = line(&r, STEP_34);
    assert_eq!(step.outcome, Outcome::Blocked, "{step:?}");
    assert_eq!(w.head(ACME, STEP_34).as_deref(), Some(by_jane.as_str()));
    assert_eq!(w.file(ACME, STEP_34, CLUSTER_FILE), adjusted);
    let n = w.pulls_of(ACME, STEP_34)[0].number;
    assert_eq!(w.comments(ACME, n).len(), 1, "one comment says why");
    w.run();
    assert_eq!(w.comments(ACME, n).len(), 1, "and only once");
}

#[test]
fn the_base_moving_is_no_reason_to_write_and_a_person_is_never_pushed_over_local() {
    the_base_moving_is_no_reason_to_write_and_a_person_is_never_pushed_over(world(
        World::local_with,
    ));
}

#[test]
fn the_base_moving_is_no_reason_to_write_and_a_person_is_never_pushed_over_github() {
    the_base_moving_is_no_reason_to_write_and_a_person_is_never_pushed_over(world(
        World::github_with,
    ));
}

fn a_step_taken_by_hand_closes_the_pull_request<F: Forge>(w: World<F>) {
    w.publish("openstack-scs2-1-34-v1", "v1.34.2");
    w.run();
    let n = w.pulls_of(ACME, STEP_34)[0].number;
    // The team upgrades on main itself, with the release it wanted.
    let stacks = format!(
        "{}---\n{}",
        stack_doc("1.33", "[v1, v2]"),
        stack_doc("1.34", "[v1]")
    );
    w.humans.commit(
        ACME,
        "main",
        &[
            (
                CLUSTER_FILE,
                Some(&cluster("openstack-scs2-1-34-v1", "v1.34.2")),
            ),
            (STACKS_FILE, Some(&stacks)),
        ],
        "upgrade prod to 1.34",
    );
    let r = w.run();
    let step = line(&r, STEP_34);
    assert_eq!(
        (step.action, &step.outcome),
        (Action::Close, &Outcome::Closed),
        "{r:#?}"
    );
    assert_eq!(w.pulls_of(ACME, STEP_34)[0].state, PullState::Closed);
    assert_eq!(w.pulls_of(ACME, STEP_34)[0].number, n);
    w.run();
    nothing_written(&w);
}

#[test]
fn a_step_taken_by_hand_closes_the_pull_request_local() {
    a_step_taken_by_hand_closes_the_pull_request(world(World::local_with));
}

#[test]
fn a_step_taken_by_hand_closes_the_pull_request_github() {
    a_step_taken_by_hand_closes_the_pull_request(world(World::github_with));
}

/// What detection reads, with one critical CVE affecting v1.33.0–v1.33.5 and an end of life.
fn inputs(eol_133: &str) -> Inputs {
    let range = VersionRange {
        lower: Version(1, 33, 0),
        upper: Some(Version(1, 33, 6)),
        inclusive: false,
    };
    Inputs {
        odd_tags: Vec::new(),
        releases: Ok(Vec::new()),
        lifecycles: Lifecycles::Known([("1.33".parse().unwrap(), eol_133.parse().unwrap())].into()),
        security: Security::Known {
            cves: vec![Cve {
                id: "CVE-2026-1000".into(),
                score: Some(9.1),
                critical: true,
                affected: vec![range],
            }],
            unreadable: Vec::new(),
        },
    }
}

fn a_step_fixing_a_critical_cve_says_so_and_is_labelled<F: Forge>(w: World<F>) {
    w.publish("openstack-scs2-1-34-v1", "v1.34.2");
    let r = w.run_with(&inputs("2026-10-28"));
    assert_eq!(line(&r, STEP_34).outcome, Outcome::Opened, "{r:#?}");
    let pull = &w.pulls_of(ACME, STEP_34)[0];
    assert!(
        pull.title
            .starts_with("Security fix: Upgrade Cluster team-a/prod"),
        "{}",
        pull.title
    );
    assert!(pull.body.contains("CVE-2026-1000"), "{}", pull.body);
    assert_eq!(pull.labels, ["security"]);
    w.run_with(&inputs("2026-10-28"));
    nothing_written(&w);
}

#[test]
fn a_step_fixing_a_critical_cve_says_so_and_is_labelled_local() {
    a_step_fixing_a_critical_cve_says_so_and_is_labelled(world(World::local_with));
}

#[test]
fn a_step_fixing_a_critical_cve_says_so_and_is_labelled_github() {
    a_step_fixing_a_critical_cve_says_so_and_is_labelled(world(World::github_with));
}

/// `before_end_of_life_days`: the step waits until the Cluster's minor is that close to its end
/// of life; a run that could not read the schedule proposes nothing and says why.
#[test]
fn a_step_waits_for_the_end_of_life_window() {
    let stacks = stack_doc("1.33", "[v1, v2]");
    let c = cluster("openstack-scs2-1-33-v2", "v1.33.5");
    let w = World::local_with(
        &[(
            "acme",
            ACME,
            &[(STACKS_FILE, stacks.as_str()), (CLUSTER_FILE, c.as_str())],
        )],
        "    clusters: [\"clusters/*.yaml\"]\n    policy: {minor: ignore, upgrade: {clusters: pull-request, before_end_of_life_days: 60}}\n",
    );
    w.publish("openstack-scs2-1-34-v1", "v1.34.2");
    // The world's day is 2026-05-01: an end of life on 2026-08-01 is 92 days away.
    let r = w.run_with(&inputs("2026-08-01"));
    assert!(upgrade_lines(&r).is_empty(), "{r:#?}");
    nothing_written(&w);
    let r = w.run();
    let step = line(&r, STEP_34);
    assert!(
        step.note
            .as_deref()
            .unwrap_or("")
            .contains("end of life of 1.33 is unknown"),
        "{step:?}"
    );
    nothing_written(&w);
    // 61 days before the end of life: not yet; 60: due.
    let r = w.run_with(&inputs("2026-07-01"));
    assert!(upgrade_lines(&r).is_empty(), "{r:#?}");
    let r = w.run_with(&inputs("2026-06-30"));
    assert_eq!(line(&r, STEP_34).outcome, Outcome::Opened, "{r:#?}");
}

/// Found by the world simulator (issue 22): the newest releases of the next minor were withdrawn,
/// so the step moves the Cluster to an older live one. The tenant's ClusterStack for that minor
/// still lists the withdrawn (newer) ones, and keeping only the newest `keep` (2) would drop the
/// release the Cluster moves to, leaving it on a ClusterClass its ClusterStack does not provide.
fn the_release_a_cluster_moves_to_is_listed_even_beside_newer_withdrawn_ones<F: Forge>(
    w: fn(&[support::tenant_world::Tenant], &str) -> World<F>,
) {
    let stacks = format!(
        "{}---\n{}",
        stack_doc("1.33", "[v1, v2]"),
        stack_doc("1.34", "[v2, v3]")
    );
    let c = cluster("openstack-scs2-1-33-v2", "v1.33.5");
    let w = w(
        &[(
            "acme",
            ACME,
            &[(STACKS_FILE, stacks.as_str()), (CLUSTER_FILE, c.as_str())],
        )],
        POLICY,
    );
    w.publish("openstack-scs2-1-33-v2", "v1.33.5");
    // 1.34 v2 and v3 were withdrawn (their releases deleted): v1 is the newest live release.
    w.publish("openstack-scs2-1-34-v1", "v1.34.2");
    let r = w.run();
    assert_eq!(line(&r, STEP_34).outcome, Outcome::Opened, "{r:#?}");
    assert_eq!(
        w.file(ACME, STEP_34, CLUSTER_FILE),
        cluster("openstack-scs2-1-34-v1", "v1.34.2")
    );
    let stacks = w.file(ACME, STEP_34, STACKS_FILE);
    let doc_134 = stacks
        .split("---\n")
        .find(|d| d.contains("kubernetesVersion: \"1.34\""))
        .unwrap_or_else(|| panic!("no 1.34 ClusterStack: {stacks}"));
    let versions = doc_134
        .lines()
        .find(|l| l.trim_start().starts_with("versions:"))
        .unwrap_or_else(|| panic!("no versions: {doc_134}"));
    assert!(
        versions.contains("v1,") || versions.contains("v1]"),
        "the ClusterStack provides the class the Cluster moves to: {versions}"
    );
}

#[test]
fn the_release_a_cluster_moves_to_is_listed_even_beside_newer_withdrawn_ones_local() {
    the_release_a_cluster_moves_to_is_listed_even_beside_newer_withdrawn_ones(World::local_with);
}

#[test]
fn the_release_a_cluster_moves_to_is_listed_even_beside_newer_withdrawn_ones_github() {
    the_release_a_cluster_moves_to_is_listed_even_beside_newer_withdrawn_ones(World::github_with);
}

/// What detection reads when the release a Cluster moves to (v1.34.2) is still affected by a
/// critical CVE that v1.34.3, published upstream, fixes (its release is not out yet).
fn inputs_with_a_fix_waiting() -> Inputs {
    let range = VersionRange {
        lower: Version(1, 34, 0),
        upper: Some(Version(1, 34, 3)),
        inclusive: false,
    };
    let release = |v: &str| stackbot::upstream::kubernetes::KubeRelease {
        version: v.parse().unwrap(),
        published_at: Some("2026-04-20T00:00:00Z".parse().unwrap()),
    };
    Inputs {
        odd_tags: Vec::new(),
        releases: Ok(vec![release("v1.34.2"), release("v1.34.3")]),
        lifecycles: Lifecycles::Known(
            [("1.33".parse().unwrap(), "2026-06-28".parse().unwrap())].into(),
        ),
        security: Security::Known {
            cves: vec![Cve {
                id: "CVE-2026-2000".into(),
                score: Some(8.8),
                critical: true,
                affected: vec![range],
            }],
            unreadable: Vec::new(),
        },
    }
}

/// The *Still affected* table rows of a pull request body.
fn still_affected_rows(body: &str) -> Vec<&str> {
    let Some(at) = body.find("**Still affected:**") else {
        return Vec::new();
    };
    body[at..]
        .lines()
        .skip_while(|l| !l.starts_with("|---"))
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .collect()
}

/// Issue 29 item 5: a Cluster-upgrade pull request whose release is still affected by a
/// critical CVE says so exactly as the ClusterStack pull request proposing the same release does
/// (one computation): the CVE, its score, the patch that fixes it and what that patch waits for.
/// A run that did not read the CVE data keeps the section (no write); once the CVE no longer
/// affects the release, the section goes.
fn a_step_to_a_release_still_affected_by_a_critical_cve_says_so<F: Forge>(
    w: fn(&[support::tenant_world::Tenant], &str) -> World<F>,
) {
    // The tenant lists a 1.34 ClusterStack already, so its stack pull request proposes the same
    // release the upgrade step moves the Cluster to.
    let stacks = format!(
        "{}---\n{}",
        stack_doc("1.33", "[v1, v2]"),
        stack_doc("1.34", "[]")
    );
    let c = cluster("openstack-scs2-1-33-v2", "v1.33.5");
    let w = w(
        &[(
            "acme",
            ACME,
            &[(STACKS_FILE, stacks.as_str()), (CLUSTER_FILE, c.as_str())],
        )],
        POLICY,
    );
    w.publish("openstack-scs2-1-33-v2", "v1.33.5");
    w.publish("openstack-scs2-1-34-v1", "v1.34.2");
    let r = w.run_with(&inputs_with_a_fix_waiting());
    assert_eq!(line(&r, STEP_34).outcome, Outcome::Opened, "{r:#?}");
    let step = w.pulls_of(ACME, STEP_34).remove(0);
    let stack = w
        .pulls_of(ACME, "stackbot/openstack-scs2")
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no stack pull request: {r:#?}"));
    assert!(
        stack.title.contains("openstack-scs2-1-34-v1"),
        "{}",
        stack.title
    );
    let rows = still_affected_rows(&step.body);
    assert_eq!(rows.len(), 1, "{}", step.body);
    for words in [
        "openstack-scs2-1-34-v1 (v1.34.2)",
        "[CVE-2026-2000](",
        "| 8.8 |",
        "| v1.34.3 |",
    ] {
        assert!(rows[0].contains(words), "{words}: {}", rows[0]);
    }
    assert_eq!(
        rows,
        still_affected_rows(&stack.body),
        "the upgrade and the stack pull request say the same of the same release"
    );
    // It is not a fix: no security title or label for what the step does not fix.
    assert!(!step.title.starts_with("Security fix:"), "{}", step.title);

    // `stackbot tenants` without CVE data: the section stays, nothing is written.
    w.run();
    nothing_written(&w);
    assert_eq!(w.pulls_of(ACME, STEP_34)[0].body, step.body);

    // Data that says the release is no longer affected: the section goes.
    let mut fixed = inputs_with_a_fix_waiting();
    if let Security::Known { cves, .. } = &mut fixed.security {
        cves.clear();
    }
    w.run_with(&fixed);
    let now = &w.pulls_of(ACME, STEP_34)[0];
    assert!(still_affected_rows(&now.body).is_empty(), "{}", now.body);
    assert!(!now.body.contains("Still affected"), "{}", now.body);
}

#[test]
fn a_step_to_a_release_still_affected_by_a_critical_cve_says_so_local() {
    a_step_to_a_release_still_affected_by_a_critical_cve_says_so(World::local_with);
}

#[test]
fn a_step_to_a_release_still_affected_by_a_critical_cve_says_so_github() {
    a_step_to_a_release_still_affected_by_a_critical_cve_says_so(World::github_with);
}
