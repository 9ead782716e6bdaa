//! Approval on the dashboard (`policy.upgrade.clusters: approval`, issue 22), on the local
//! forge (where the dashboard's body is a file a person edits) and the fake GitHub.
//!
//! The promises:
//! - a step waiting for approval opens nothing: it is a checkbox on the dashboard issue;
//! - the next run opens exactly the ticked steps; unticking withdraws (the pull request is
//!   closed by the bot, so ticking again proposes it again);
//! - a run with nothing new makes no write, and the ticks people made are kept;
//! - once a step is merged its line goes, and the next step waits for its own tick.

use crate::support;

use stackbot::forge::local::{LocalForge, MergeMethod};
use stackbot::forge::{Forge, PullState};
use stackbot::tenants::{Action, Outcome, TenantReport};
use support::tenant_world::{STACKS, World, repo, stack_doc};

const ACME: &str = "acme/gitops";
const STACKS_FILE: &str = "clusterstacks/prod.yaml";
const CLUSTER_FILE: &str = "clusters/prod.yaml";
const STEP_34: &str = "stackbot/upgrade-openstack-scs2-team-a-prod-1-34";
const STEP_35: &str = "stackbot/upgrade-openstack-scs2-team-a-prod-1-35";
const POLICY: &str = "    clusters: [\"clusters/*.yaml\"]\n    policy: {minor: ignore, upgrade: {clusters: approval}}\n";

fn world<F: Forge>(w: fn(&[support::tenant_world::Tenant], &str) -> World<F>) -> World<F> {
    let stacks = stack_doc("1.33", "[v1, v2]");
    let c = "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: prod\n  namespace: team-a\nspec:\n  topology:\n    class: openstack-scs2-1-33-v2\n    version: v1.33.5\n";
    let w = w(
        &[(
            "acme",
            ACME,
            &[(STACKS_FILE, stacks.as_str()), (CLUSTER_FILE, c)],
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

/// The dashboard issue's body.
fn dashboard<F: Forge>(w: &World<F>) -> String {
    let issues = w.bot.inner().list_issues(&repo(STACKS), None).unwrap();
    assert_eq!(issues.len(), 1, "{issues:?}");
    issues[0].body.clone()
}

/// A person ticks (or unticks) the step on the dashboard: in the web UI on GitHub, in the
/// issue's body file on the local forge.
trait Tick {
    fn tick(&self, branch: &str, on: bool);
}

fn flip(body: &str, branch: &str, on: bool) -> String {
    body.lines()
        .map(|l| {
            if l.contains(branch) {
                if on {
                    l.replace("- [ ]", "- [x]")
                } else {
                    l.replace("- [x]", "- [ ]")
                }
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

impl Tick for World<LocalForge> {
    fn tick(&self, branch: &str, on: bool) {
        let f = self.bot.inner();
        let issue = &f.list_issues(&repo(STACKS), None).unwrap()[0];
        let path = f.issue_body_path(&repo(STACKS), issue.number);
        let body = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, flip(&body, branch, on)).unwrap();
    }
}

impl Tick for World<stackbot::forge::github::GithubForge> {
    fn tick(&self, branch: &str, on: bool) {
        let f = self.bot.inner();
        let issue = &f.list_issues(&repo(STACKS), None).unwrap()[0];
        f.update_issue(
            &repo(STACKS),
            issue.number,
            &issue.title,
            &flip(&issue.body, branch, on),
        )
        .unwrap();
    }
}

fn nothing_written<F: Forge>(w: &World<F>) {
    let (writes, tally) = w.writes();
    assert_eq!(writes, 0, "{tally}");
}

fn the_ticked_steps_are_opened_and_an_untick_withdraws<F: Forge>(w: World<F>)
where
    World<F>: Tick,
{
    w.publish("openstack-scs2-1-34-v1", "v1.34.2");
    let r = w.run();
    let step = line(&r, STEP_34);
    assert_eq!(step.action, Action::None, "{step:?}");
    assert!(
        step.note
            .as_deref()
            .unwrap_or("")
            .contains("waits for approval"),
        "{step:?}"
    );
    assert!(w.pulls_of(ACME, STEP_34).is_empty());
    let body = dashboard(&w);
    assert!(
        body.contains(&format!(
            "- [ ] `acme`: Cluster `team-a/prod` from 1.33 to 1.34 (`openstack-scs2-1-34-v1`, Kubernetes v1.34.2) <!-- stackbot:approve acme {STEP_34} -->"
        )),
        "{body}"
    );
    w.run();
    nothing_written(&w);

    w.tick(STEP_34, true);
    let r = w.run();
    assert_eq!(line(&r, STEP_34).outcome, Outcome::Opened, "{r:#?}");
    assert!(dashboard(&w).contains("- [x] `acme`"), "the tick is kept");
    w.run();
    nothing_written(&w);

    w.tick(STEP_34, false);
    let r = w.run();
    let step = line(&r, STEP_34);
    assert_eq!(
        (step.action, &step.outcome),
        (Action::Close, &Outcome::Closed)
    );
    let pull = &w.pulls_of(ACME, STEP_34)[0];
    assert_eq!(pull.state, PullState::Closed);
    assert!(
        w.comments(ACME, pull.number)[0].contains("unticked on the dashboard"),
        "{:?}",
        w.comments(ACME, pull.number)
    );
    w.run();
    nothing_written(&w);

    // Ticked again: proposed again, a new pull request.
    w.tick(STEP_34, true);
    let r = w.run();
    assert_eq!(line(&r, STEP_34).outcome, Outcome::Opened, "{r:#?}");
    let pulls = w.pulls_of(ACME, STEP_34);
    assert_eq!(pulls.len(), 2);

    // Merged: its line goes, and the next step waits for its own tick.
    w.humans.merge(ACME, pulls[0].number, MergeMethod::Merge);
    w.publish("openstack-scs2-1-35-v1", "v1.35.1");
    let r = w.run();
    assert_eq!(line(&r, STEP_35).action, Action::None, "{r:#?}");
    assert!(w.pulls_of(ACME, STEP_35).is_empty());
    let body = dashboard(&w);
    assert!(!body.contains(STEP_34), "{body}");
    assert!(
        body.contains("- [ ] `acme`: Cluster `team-a/prod` from 1.34 to 1.35"),
        "{body}"
    );
    w.run();
    nothing_written(&w);
}

#[test]
fn the_ticked_steps_are_opened_and_an_untick_withdraws_local() {
    the_ticked_steps_are_opened_and_an_untick_withdraws(world(World::local_with));
}

#[test]
fn the_ticked_steps_are_opened_and_an_untick_withdraws_github() {
    the_ticked_steps_are_opened_and_an_untick_withdraws(world(World::github_with));
}

/// A run that cannot tell whether a step is due (the schedule was not read) keeps the step's
/// line and tick: transient trouble never withdraws an approved pull request.
#[test]
fn an_unknown_end_of_life_keeps_the_tick_and_the_pull_request() {
    use stackbot::compliance::{Inputs, Lifecycles, Security};
    let stacks = stack_doc("1.33", "[v1, v2]");
    let c = "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: prod\n  namespace: team-a\nspec:\n  topology:\n    class: openstack-scs2-1-33-v2\n    version: v1.33.5\n";
    let w = World::local_with(
        &[(
            "acme",
            ACME,
            &[(STACKS_FILE, stacks.as_str()), (CLUSTER_FILE, c)],
        )],
        "    clusters: [\"clusters/*.yaml\"]\n    policy: {minor: ignore, upgrade: {clusters: approval, before_end_of_life_days: 90}}\n",
    );
    w.publish("openstack-scs2-1-33-v2", "v1.33.5");
    w.publish("openstack-scs2-1-34-v1", "v1.34.2");
    let known = Inputs {
        odd_tags: Vec::new(),
        releases: Ok(Vec::new()),
        lifecycles: Lifecycles::Known(
            [("1.33".parse().unwrap(), "2026-06-28".parse().unwrap())].into(),
        ),
        security: Security::Unknown("not read".into()),
    };
    w.run_with(&known);
    w.tick(STEP_34, true);
    let r = w.run_with(&known);
    assert_eq!(line(&r, STEP_34).outcome, Outcome::Opened, "{r:#?}");

    // The schedule is not read: the step cannot be judged, and is left as it is.
    let r = w.run();
    let step = line(&r, STEP_34);
    assert_eq!(step.action, Action::None, "{step:?}");
    nothing_written(&w);
    assert!(dashboard(&w).contains("- [x] `acme`"), "{}", dashboard(&w));
    assert_eq!(w.pulls_of(ACME, STEP_34)[0].state, PullState::Open);
    w.run_with(&known);
    nothing_written(&w);
}

/// The dashboard issue's body, empty when there is none yet.
fn dashboard_or_empty<F: Forge>(w: &World<F>) -> String {
    let issues = w.bot.inner().list_issues(&repo(STACKS), None).unwrap();
    issues.first().map(|i| i.body.clone()).unwrap_or_default()
}

/// A step is listed for approval only once it is due, and a tick given is kept until the step
/// opens. Found by the world simulator (seed 2026, github+oci world): a run that could not read
/// the schedule listed a step months before it was due; a person ticked it; the next run,
/// knowing the step was not due, dropped the line and its tick; when the step came due it was
/// listed again unticked, and the team, having ticked, never saw its pull request before the
/// end of life.
fn a_step_is_listed_once_due_and_its_tick_is_kept<F: Forge>(w: World<F>)
where
    World<F>: Tick,
{
    use stackbot::compliance::{Inputs, Lifecycles, Security};
    let eol = |day: &str| Inputs {
        odd_tags: Vec::new(),
        releases: Ok(Vec::new()),
        lifecycles: Lifecycles::Known([("1.33".parse().unwrap(), day.parse().unwrap())].into()),
        security: Security::Unknown("not read".into()),
    };
    // The runs' day is 2026-05-01: with 90 days before the end of life, 2026-06-28 makes the
    // step due, 2026-12-28 does not.
    let (due, not_due) = (eol("2026-06-28"), eol("2026-12-28"));
    w.publish("openstack-scs2-1-34-v1", "v1.34.2");

    // Not due: nothing listed, nothing opened.
    let r = w.run_with(&not_due);
    assert!(
        r.iter().all(|x| x.branch.as_deref() != Some(STEP_34)),
        "{r:#?}"
    );
    assert!(!dashboard_or_empty(&w).contains(STEP_34));
    // The schedule not read: whether the step is due is unknown, so it is not listed either.
    let r = w.run();
    assert!(line(&r, STEP_34).approval.is_none(), "{r:#?}");
    assert!(
        !dashboard_or_empty(&w).contains(STEP_34),
        "a step that may not be due is not listed: {}",
        dashboard_or_empty(&w)
    );
    w.run_with(&not_due);
    assert!(!dashboard_or_empty(&w).contains(STEP_34));
    assert!(w.pulls_of(ACME, STEP_34).is_empty());

    // Due: listed, unticked; a person ticks it.
    w.run_with(&due);
    assert!(
        dashboard(&w).contains("- [ ] `acme`: Cluster `team-a/prod` from 1.33 to 1.34"),
        "{}",
        dashboard(&w)
    );
    w.tick(STEP_34, true);
    // Not due after all (the schedule moved the end of life), or not known this run: the line
    // and its tick stay, nothing is opened.
    for unknown in [false, true] {
        let r = if unknown {
            w.run()
        } else {
            w.run_with(&not_due)
        };
        let step = line(&r, STEP_34);
        assert_eq!(step.action, Action::None, "{step:?}");
        assert!(dashboard(&w).contains("- [x] `acme`"), "{}", dashboard(&w));
        assert!(w.pulls_of(ACME, STEP_34).is_empty());
    }
    w.run_with(&not_due);
    nothing_written(&w);
    // Due again: the tick opens the step.
    let r = w.run_with(&due);
    assert_eq!(line(&r, STEP_34).outcome, Outcome::Opened, "{r:#?}");
    assert!(dashboard(&w).contains("- [x] `acme`"), "{}", dashboard(&w));
}

fn before_end_of_life<F: Forge>(
    w: fn(&[support::tenant_world::Tenant], &str) -> World<F>,
) -> World<F> {
    let stacks = stack_doc("1.33", "[v1, v2]");
    let c = "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: prod\n  namespace: team-a\nspec:\n  topology:\n    class: openstack-scs2-1-33-v2\n    version: v1.33.5\n";
    let w = w(
        &[(
            "acme",
            ACME,
            &[(STACKS_FILE, stacks.as_str()), (CLUSTER_FILE, c)],
        )],
        "    clusters: [\"clusters/*.yaml\"]\n    policy: {minor: ignore, upgrade: {clusters: approval, before_end_of_life_days: 90}}\n",
    );
    w.publish("openstack-scs2-1-33-v2", "v1.33.5");
    w
}

#[test]
fn a_step_is_listed_once_due_and_its_tick_is_kept_local() {
    a_step_is_listed_once_due_and_its_tick_is_kept(before_end_of_life(World::local_with));
}

#[test]
fn a_step_is_listed_once_due_and_its_tick_is_kept_github() {
    a_step_is_listed_once_due_and_its_tick_is_kept(before_end_of_life(World::github_with));
}
