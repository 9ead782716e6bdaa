//! Auto-merge of tenant patch pull requests (`policy.patch: automerge`,
//! `policy.automerge_security`, issue 22), on the local forge and the fake GitHub.
//!
//! The promises:
//! - a patch pull request is opened with the forge's native auto-merge requested, and merged
//!   by the forge once its required checks pass; then the tenant is up to date with 0 writes;
//! - a pull request that brings a new minor is never auto-merged;
//! - a tenant that turns auto-merge on gets it on its open pull request, without a push;
//! - when the forge refuses (auto-merge not allowed in the repository, no required check), the
//!   pull request says so once, in its body, and the next runs make 0 writes until the content
//!   changes;
//! - `automerge_security: true` auto-merges a pull request that fixes a critical CVE and no
//!   other.

use crate::support;

use stackbot::compliance::{Inputs, Lifecycles, Security};
use stackbot::config::PolicyAction;
use stackbot::forge::{Forge, PullState};
use stackbot::tenants::Outcome;
use stackbot::upstream::cve::{Cve, Version, VersionRange};
use support::tenant_world::{BRANCH, World, report, stack_doc};

const ACME: &str = "acme/gitops";
const FILE: &str = "clusterstacks/prod.yaml";

fn acme<F: Forge>(
    w: fn(&[support::tenant_world::Tenant], &str) -> World<F>,
    policy: &str,
) -> World<F> {
    let f = stack_doc("1.33", "[v1, v2]");
    let w = w(&[("acme", ACME, &[(FILE, f.as_str())])], policy);
    // On GitHub: "Allow auto-merge" on, and a required status check on `main`.
    if let Some(fake) = &w.fake {
        fake.set_auto_merge(ACME, true, true);
    }
    w
}

const AUTOMERGE: &str = "    policy: {patch: automerge}\n";

fn nothing_written<F: Forge>(w: &World<F>) {
    let (writes, tally) = w.writes();
    assert_eq!(writes, 0, "{tally}");
}

fn a_patch_is_merged_once_its_checks_pass<F: Forge>(w: World<F>) {
    w.publish("openstack-scs2-1-33-v3", "v1.33.5");
    let r = w.run();
    assert_eq!(report(&r, "acme").outcome, Outcome::Opened, "{r:?}");
    let pull = &w.pulls(ACME)[0];
    assert!(pull.auto_merge, "auto-merge is requested on opening");
    w.run();
    nothing_written(&w);

    assert!(w.humans.checks_pass(ACME, pull.number));
    assert_eq!(w.pulls(ACME)[0].state, PullState::Merged);
    assert!(w.file(ACME, "main", FILE).contains("[v2, v3]"));
    w.run();
    nothing_written(&w);

    w.publish("openstack-scs2-1-33-v4", "v1.33.6");
    w.run();
    let pulls = w.pulls(ACME);
    assert_eq!(pulls.len(), 2);
    assert!(pulls[0].auto_merge && pulls[0].state == PullState::Open);
}

#[test]
fn a_patch_is_merged_once_its_checks_pass_local() {
    a_patch_is_merged_once_its_checks_pass(acme(World::local_with, AUTOMERGE));
}

#[test]
fn a_patch_is_merged_once_its_checks_pass_github() {
    a_patch_is_merged_once_its_checks_pass(acme(World::github_with, AUTOMERGE));
}

fn a_new_minor_is_left_to_people<F: Forge>(w: World<F>) {
    w.publish("openstack-scs2-1-34-v1", "v1.34.2");
    let r = w.run();
    assert_eq!(report(&r, "acme").outcome, Outcome::Opened, "{r:?}");
    let pull = &w.pulls(ACME)[0];
    assert!(!pull.auto_merge, "a new minor is never auto-merged");
    assert!(!w.humans.checks_pass(ACME, pull.number));
    assert_eq!(w.pulls(ACME)[0].state, PullState::Open);
    w.run();
    nothing_written(&w);
}

#[test]
fn a_new_minor_is_left_to_people_local() {
    a_new_minor_is_left_to_people(acme(World::local_with, AUTOMERGE));
}

#[test]
fn a_new_minor_is_left_to_people_github() {
    a_new_minor_is_left_to_people(acme(World::github_with, AUTOMERGE));
}

fn turning_automerge_on_requests_it_without_a_push<F: Forge>(mut w: World<F>) {
    w.publish("openstack-scs2-1-33-v3", "v1.33.5");
    w.run();
    let head = w.head(ACME, BRANCH);
    assert!(!w.pulls(ACME)[0].auto_merge);
    w.loaded.config.tenants[0].policy.patch = PolicyAction::Automerge;
    let r = w.run();
    assert_eq!(report(&r, "acme").outcome, Outcome::Updated, "{r:?}");
    assert!(w.pulls(ACME)[0].auto_merge);
    assert_eq!(w.head(ACME, BRANCH), head, "nothing pushed");
    w.run();
    nothing_written(&w);
}

#[test]
fn turning_automerge_on_requests_it_without_a_push_local() {
    turning_automerge_on_requests_it_without_a_push(acme(World::local_with, ""));
}

#[test]
fn turning_automerge_on_requests_it_without_a_push_github() {
    turning_automerge_on_requests_it_without_a_push(acme(World::github_with, ""));
}

/// GitHub refuses: auto-merge is off in the repository, then on but without a required check.
#[test]
fn an_unavailable_auto_merge_is_said_once_github() {
    let w = acme(World::github_with, AUTOMERGE);
    let fake = w.fake.clone().unwrap();
    fake.set_auto_merge(ACME, false, false);
    w.publish("openstack-scs2-1-33-v3", "v1.33.5");
    let r = w.run();
    assert_eq!(report(&r, "acme").outcome, Outcome::Opened, "{r:?}");
    let pull = &w.pulls(ACME)[0];
    assert!(!pull.auto_merge);
    assert!(
        pull.body.contains(
            "Auto-merge is not available:** Auto merge is not allowed for this repository"
        ),
        "{}",
        pull.body
    );
    for _ in 0..2 {
        w.run();
        nothing_written(&w);
    }
    assert_eq!(w.pulls(ACME)[0].body, pull.body, "said once");

    // New content asks again; GitHub now refuses for another reason, said once again.
    fake.set_auto_merge(ACME, true, false);
    w.publish("openstack-scs2-1-33-v4", "v1.33.6");
    w.run();
    let pull = &w.pulls(ACME)[0];
    assert!(
        pull.body.contains("Pull request is in clean status"),
        "{}",
        pull.body
    );
    assert_eq!(pull.body.matches("Auto-merge is not available").count(), 1);
    w.run();
    nothing_written(&w);
}

fn inputs() -> Inputs {
    Inputs {
        odd_tags: Vec::new(),
        releases: Ok(Vec::new()),
        lifecycles: Lifecycles::Unknown("not read".into()),
        security: Security::Known {
            cves: vec![Cve {
                id: "CVE-2026-1000".into(),
                score: Some(9.1),
                critical: true,
                affected: vec![VersionRange {
                    lower: Version(1, 33, 0),
                    upper: Some(Version(1, 33, 5)),
                    inclusive: false,
                }],
            }],
            unreadable: Vec::new(),
        },
    }
}

fn only_a_security_fix_is_auto_merged<F: Forge>(w: World<F>) {
    // v2, which the tenant lists, ships v1.33.4 (its notes say so); v3 fixes the CVE.
    w.publish("openstack-scs2-1-33-v2", "v1.33.4");
    w.publish("openstack-scs2-1-33-v3", "v1.33.5");
    w.run_with(&inputs());
    let pull = &w.pulls(ACME)[0];
    assert!(pull.title.starts_with("Security fix:"), "{}", pull.title);
    assert!(pull.auto_merge);
    assert!(w.humans.checks_pass(ACME, pull.number));

    // v4 fixes nothing critical: a pull request for people.
    w.publish("openstack-scs2-1-33-v4", "v1.33.6");
    w.run_with(&inputs());
    let pull = &w.pulls(ACME)[0];
    assert_eq!(pull.state, PullState::Open);
    assert!(!pull.auto_merge && !pull.title.contains("Security"));
    w.run_with(&inputs());
    nothing_written(&w);
}

const SECURITY: &str = "    policy: {automerge_security: true}\n";

#[test]
fn only_a_security_fix_is_auto_merged_local() {
    only_a_security_fix_is_auto_merged(acme(World::local_with, SECURITY));
}

#[test]
fn only_a_security_fix_is_auto_merged_github() {
    only_a_security_fix_is_auto_merged(acme(World::github_with, SECURITY));
}
