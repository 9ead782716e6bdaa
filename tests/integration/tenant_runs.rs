//! Tenant propagation over many runs while people act between them (issue 12, items 2, 3 and
//! the promise "a tenant whose PR was merged gets the next release"). Every scenario runs on
//! the local forge and on the fake GitHub.
//!
//! The promises:
//! - a tenant branch is rewritten only when its desired content changes or the files it
//!   changes changed on the base, never because the base moved: a run after an unrelated
//!   commit on the tenant's base makes zero writes;
//! - a pull request a human closed is not reopened for the same releases (also when its
//!   branch was deleted, also after the file was re-worded elsewhere); a newer release opens a
//!   new one;
//! - merges of every kind (merge commit, squash, rebase, with or without "Update branch"
//!   before) are recognised by content: the tenant is up to date, and the next release opens
//!   a new pull request from the leftover branch;
//! - "Update branch" on an open bot pull request is not a human edit; a human commit still
//!   blocks, visibly.

use crate::support;

use stackbot::forge::Forge;
use stackbot::forge::PullState;
use stackbot::forge::local::MergeMethod;
use stackbot::tenants::{Action, Outcome};
use support::tenant_world::{BRANCH, World, report, stack_doc};

const ACME: &str = "acme/gitops";
const FILE: &str = "clusterstacks/prod.yaml";

fn acme_file() -> String {
    stack_doc("1.33", "[v1, v2]")
}

fn acme<F: Forge>(w: fn(&[support::tenant_world::Tenant]) -> World<F>) -> World<F> {
    let f = acme_file();
    w(&[("acme", ACME, &[(FILE, f.as_str())])])
}

/// An unrelated commit on the tenant's base, as Renovate makes them.
fn renovate<F: Forge>(w: &World<F>) {
    w.humans.commit(
        ACME,
        "main",
        &[("apps/podinfo.yaml", Some("replicas: 3\n"))],
        "Renovate: bump podinfo",
    );
}

/// A person re-words the tenant file on the base, away from the lines the bot edits; returns
/// the new file.
fn reword<F: Forge>(w: &World<F>, r: &str) -> String {
    let reworded = acme_file().replace("# production stacks", "# production stacks (EU)");
    w.humans
        .commit(r, "main", &[(FILE, Some(&reworded))], "reword");
    reworded
}

/// Opens the first pull request (v3) and returns its number.
fn first_pull<F: Forge>(w: &World<F>) -> u64 {
    w.publish("openstack-scs2-1-33-v3", "v1.33.5");
    let r = w.run();
    assert_eq!(report(&r, "acme").outcome, Outcome::Opened, "{r:?}");
    w.pulls(ACME)[0].number
}

// ---- item 2: the base moving is not a reason to write ----

fn an_unrelated_commit_on_the_base_makes_no_write<F: Forge>(w: World<F>) {
    first_pull(&w);
    let head = w.head(ACME, BRANCH);
    renovate(&w);
    let r = w.run();
    let (writes, tally) = w.writes();
    println!(
        "a run after an unrelated base commit, one tenant: {}",
        w.cost()
    );
    assert_eq!(writes, 0, "{tally}");
    assert_eq!(
        (report(&r, "acme").action, &report(&r, "acme").outcome),
        (Action::None, &Outcome::Unchanged),
        "{r:?}"
    );
    assert_eq!(w.head(ACME, BRANCH), head, "the branch was not rewritten");
}

#[test]
fn an_unrelated_commit_on_the_base_makes_no_write_local() {
    an_unrelated_commit_on_the_base_makes_no_write(acme(World::local));
}

#[test]
fn an_unrelated_commit_on_the_base_makes_no_write_github() {
    an_unrelated_commit_on_the_base_makes_no_write(acme(World::github));
}

fn a_change_to_the_edited_file_on_the_base_rebuilds_the_branch<F: Forge>(w: World<F>) {
    first_pull(&w);
    let reworded = reword(&w, ACME);
    let r = w.run();
    assert_eq!(
        (report(&r, "acme").action, &report(&r, "acme").outcome),
        (Action::Update, &Outcome::Updated),
        "{r:?}"
    );
    assert_eq!(
        w.file(ACME, BRANCH, FILE),
        reworded.replace("[v1, v2]", "[v2, v3]"),
        "rebuilt on the new base: the tenant's edit and the bot's"
    );
    w.run();
    assert_eq!(w.writes().0, 0, "{}", w.writes().1);
}

#[test]
fn a_change_to_the_edited_file_on_the_base_rebuilds_the_branch_local() {
    a_change_to_the_edited_file_on_the_base_rebuilds_the_branch(acme(World::local));
}

#[test]
fn a_change_to_the_edited_file_on_the_base_rebuilds_the_branch_github() {
    a_change_to_the_edited_file_on_the_base_rebuilds_the_branch(acme(World::github));
}

/// The world simulator's finding (seed 4, run 47): the base changes the edited file away from
/// the bot's lines, a person presses "Update branch", and the branch then holds exactly the
/// desired files. Rebuilding it would force-push the same content over the person's merge.
fn update_branch_after_the_edited_file_changed_is_not_rebuilt<F: Forge>(w: World<F>) {
    let n = first_pull(&w);
    let reworded = reword(&w, ACME);
    let updated = w.humans.update_branch(ACME, n);
    let want = reworded.replace("[v1, v2]", "[v2, v3]");
    assert_eq!(
        w.file(ACME, BRANCH, FILE),
        want,
        "the merge holds both edits"
    );
    let r = w.run();
    assert_eq!(
        w.head(ACME, BRANCH).as_deref(),
        Some(updated.as_str()),
        "the branch was not rewritten: {r:?}"
    );
    assert_eq!(w.file(ACME, BRANCH, FILE), want);
    assert_ne!(report(&r, "acme").outcome, Outcome::Failed, "{r:?}");
    // The pull request's words may follow the new base (its diff); then nothing is left.
    w.run();
    assert_eq!(w.writes().0, 0, "{}", w.writes().1);
    assert_eq!(w.head(ACME, BRANCH).as_deref(), Some(updated.as_str()));
}

#[test]
fn update_branch_after_the_edited_file_changed_is_not_rebuilt_local() {
    update_branch_after_the_edited_file_changed_is_not_rebuilt(acme(World::local));
}

#[test]
fn update_branch_after_the_edited_file_changed_is_not_rebuilt_github() {
    update_branch_after_the_edited_file_changed_is_not_rebuilt(acme(World::github));
}

// ---- item 2: a declined pull request stays declined ----

fn a_closed_pull_request_is_not_reopened_for_the_same_releases<F: Forge>(
    w: World<F>,
    delete_branch: bool,
) {
    let n = first_pull(&w);
    w.humans.close(ACME, n);
    if delete_branch {
        w.humans.delete_branch(ACME, BRANCH);
    }
    // The base moves, and the tenant file is re-worded elsewhere: still the same releases.
    renovate(&w);
    let r = w.run();
    assert_eq!(w.writes().0, 0, "{}", w.writes().1);
    let acme = report(&r, "acme");
    assert_eq!(
        (acme.action, &acme.outcome),
        (Action::None, &Outcome::Unchanged)
    );
    assert!(
        acme.note.as_deref().unwrap_or("").contains("closed"),
        "{acme:?}"
    );
    let reworded = reword(&w, ACME);
    w.run();
    assert_eq!(w.writes().0, 0, "{}", w.writes().1);
    assert_eq!(w.pulls(ACME).len(), 1);
    assert_eq!(w.pulls(ACME)[0].state, PullState::Closed);

    // A newer release may open a new pull request.
    w.publish("openstack-scs2-1-33-v4", "v1.33.6");
    let r = w.run();
    assert_eq!(report(&r, "acme").outcome, Outcome::Opened, "{r:?}");
    let pulls = w.pulls(ACME);
    assert_eq!(pulls.len(), 2);
    assert_eq!(pulls[0].state, PullState::Open);
    assert!(pulls[0].title.contains("openstack-scs2-1-33-v4"));
    assert_eq!(
        w.file(ACME, BRANCH, FILE),
        reworded.replace("[v1, v2]", "[v2, v4]")
    );
}

#[test]
fn a_closed_pull_request_is_not_reopened_local() {
    a_closed_pull_request_is_not_reopened_for_the_same_releases(acme(World::local), false);
}

#[test]
fn a_closed_pull_request_is_not_reopened_github() {
    a_closed_pull_request_is_not_reopened_for_the_same_releases(acme(World::github), false);
}

#[test]
fn a_closed_pull_request_with_its_branch_deleted_is_not_reopened_local() {
    a_closed_pull_request_is_not_reopened_for_the_same_releases(acme(World::local), true);
}

#[test]
fn a_closed_pull_request_with_its_branch_deleted_is_not_reopened_github() {
    a_closed_pull_request_is_not_reopened_for_the_same_releases(acme(World::github), true);
}

// ---- item 3 and "a tenant whose PR was merged gets the next release" ----

/// v3 → PR → (base moves, "Update branch") → merged with `method`, branch left → the tenant
/// is up to date (no write) → v4 → a new pull request moving v3 to v4.
fn a_merged_tenant_gets_the_next_release<F: Forge>(
    w: World<F>,
    method: MergeMethod,
    update_branch: bool,
) {
    let n = first_pull(&w);
    if update_branch {
        renovate(&w);
        w.humans.update_branch(ACME, n);
    }
    w.humans.merge(ACME, n, method);
    assert_eq!(
        w.file(ACME, "main", FILE),
        acme_file().replace("[v1, v2]", "[v2, v3]")
    );

    let r = w.run();
    assert_eq!(w.writes().0, 0, "{}", w.writes().1);
    let acme = report(&r, "acme");
    assert_eq!(
        (acme.action, &acme.outcome),
        (Action::None, &Outcome::Unchanged),
        "{r:?}"
    );

    w.publish("openstack-scs2-1-33-v4", "v1.33.6");
    let r = w.run();
    let acme = report(&r, "acme");
    assert_eq!(
        (acme.action, &acme.outcome),
        (Action::Open, &Outcome::Opened),
        "{r:?}"
    );
    let pulls = w.pulls(ACME);
    assert_eq!(pulls.len(), 2, "{pulls:?}");
    assert_eq!(pulls[0].state, PullState::Open);
    assert!(
        pulls[0].title.contains("openstack-scs2-1-33-v4"),
        "{}",
        pulls[0].title
    );
    assert!(
        pulls[0].body.contains("+  versions: [v3, v4]  # pinned"),
        "{}",
        pulls[0].body
    );
    assert_eq!(
        w.file(ACME, BRANCH, FILE),
        acme_file().replace("[v1, v2]", "[v3, v4]")
    );
    w.run();
    assert_eq!(w.writes().0, 0, "{}", w.writes().1);
}

macro_rules! merged {
    ($($name:ident: $world:expr, $method:expr, $update:expr;)*) => {$(
        #[test]
        fn $name() {
            a_merged_tenant_gets_the_next_release(acme($world), $method, $update);
        }
    )*};
}

merged! {
    merge_commit_then_next_release_local: World::local, MergeMethod::Merge, false;
    merge_commit_then_next_release_github: World::github, MergeMethod::Merge, false;
    squash_then_next_release_local: World::local, MergeMethod::Squash, false;
    squash_then_next_release_github: World::github, MergeMethod::Squash, false;
    rebase_then_next_release_local: World::local, MergeMethod::Rebase, false;
    rebase_then_next_release_github: World::github, MergeMethod::Rebase, false;
    update_branch_merge_commit_then_next_release_local: World::local, MergeMethod::Merge, true;
    update_branch_merge_commit_then_next_release_github: World::github, MergeMethod::Merge, true;
    update_branch_squash_then_next_release_local: World::local, MergeMethod::Squash, true;
    update_branch_squash_then_next_release_github: World::github, MergeMethod::Squash, true;
    update_branch_rebase_then_next_release_local: World::local, MergeMethod::Rebase, true;
    update_branch_rebase_then_next_release_github: World::github, MergeMethod::Rebase, true;
}

// ---- "Update branch" is not a human edit; a human edit still blocks ----

fn update_branch_on_an_open_pull_request_is_not_a_human_edit<F: Forge>(w: World<F>) {
    let n = first_pull(&w);
    renovate(&w);
    let updated = w.humans.update_branch(ACME, n);
    let r = w.run();
    assert_eq!(w.writes().0, 0, "{}", w.writes().1);
    assert_eq!(report(&r, "acme").outcome, Outcome::Unchanged, "{r:?}");
    assert_eq!(w.head(ACME, BRANCH).as_deref(), Some(updated.as_str()));

    w.publish("openstack-scs2-1-33-v4", "v1.33.6");
    let r = w.run();
    let acme = report(&r, "acme");
    assert_eq!(
        (acme.action, &acme.outcome),
        (Action::Update, &Outcome::Updated),
        "{r:?}"
    );
    assert_eq!(acme.pull, Some(n));
    assert_eq!(
        w.file(ACME, BRANCH, FILE),
        acme_file().replace("[v1, v2]", "[v2, v4]")
    );
    assert_eq!(w.file(ACME, BRANCH, "apps/podinfo.yaml"), "replicas: 3\n");
    assert!(w.comments(ACME, n).is_empty());
}

#[test]
fn update_branch_on_an_open_pull_request_is_not_a_human_edit_local() {
    update_branch_on_an_open_pull_request_is_not_a_human_edit(acme(World::local));
}

#[test]
fn update_branch_on_an_open_pull_request_is_not_a_human_edit_github() {
    update_branch_on_an_open_pull_request_is_not_a_human_edit(acme(World::github));
}

fn a_human_edit_on_an_open_pull_request_blocks_visibly<F: Forge>(w: World<F>) {
    let n = first_pull(&w);
    let human = w.humans.commit(
        ACME,
        BRANCH,
        &[("clusterstacks/notes.txt", Some("tested on staging\n"))],
        "note",
    );
    w.publish("openstack-scs2-1-33-v4", "v1.33.6");
    let r = w.run();
    let acme = report(&r, "acme");
    assert_eq!(acme.outcome, Outcome::Blocked, "{r:?}");
    assert_eq!(acme.pull, Some(n));
    let note = acme.note.as_deref().unwrap_or("");
    assert!(
        note.contains(&human[..12]) && note.contains("close"),
        "{note}"
    );
    assert_eq!(w.head(ACME, BRANCH).as_deref(), Some(human.as_str()));
    assert_eq!(w.comments(ACME, n).len(), 1);
    w.run();
    assert_eq!(w.writes().0, 0, "{}", w.writes().1);

    // Merged as it is (squash): the tenant is not wedged, the next release comes.
    w.humans.merge(ACME, n, MergeMethod::Squash);
    w.publish("openstack-scs2-1-33-v5", "v1.33.7");
    let r = w.run();
    assert_eq!(report(&r, "acme").outcome, Outcome::Opened, "{r:?}");
    assert_eq!(
        w.file(ACME, BRANCH, FILE),
        acme_file().replace("[v1, v2]", "[v3, v5]")
    );
}

#[test]
fn a_human_edit_on_an_open_pull_request_blocks_visibly_local() {
    a_human_edit_on_an_open_pull_request_blocks_visibly(acme(World::local));
}

#[test]
fn a_human_edit_on_an_open_pull_request_blocks_visibly_github() {
    a_human_edit_on_an_open_pull_request_blocks_visibly(acme(World::github));
}

// ---- a pull request the bot closed itself declined nothing ----

fn a_pull_request_the_bot_closed_is_proposed_again_when_needed<F: Forge>(w: World<F>) {
    let n = first_pull(&w);
    let by_hand = acme_file().replace("[v1, v2]", "[v2, v3]");
    w.humans
        .commit(ACME, "main", &[(FILE, Some(&by_hand))], "bump by hand");
    let r = w.run();
    assert_eq!(report(&r, "acme").outcome, Outcome::Closed, "{r:?}");
    // The tenant goes back: the same release is needed again, and proposed again.
    w.humans
        .commit(ACME, "main", &[(FILE, Some(&acme_file()))], "revert");
    let r = w.run();
    assert_eq!(report(&r, "acme").outcome, Outcome::Opened, "{r:?}");
    let pulls = w.pulls(ACME);
    assert_eq!((pulls.len(), pulls[1].number), (2, n));
    assert_eq!(pulls[0].state, PullState::Open);
    w.run();
    assert_eq!(w.writes().0, 0, "{}", w.writes().1);
}

#[test]
fn a_pull_request_the_bot_closed_is_proposed_again_when_needed_local() {
    a_pull_request_the_bot_closed_is_proposed_again_when_needed(acme(World::local));
}

#[test]
fn a_pull_request_the_bot_closed_is_proposed_again_when_needed_github() {
    a_pull_request_the_bot_closed_is_proposed_again_when_needed(acme(World::github));
}

// ---- issue 12, item 8: what is in the way is named, per tenant, with what to do ----

fn two_tenants_on_github() -> World<stackbot::forge::github::GithubForge> {
    let f = acme_file();
    World::github(&[
        ("acme", ACME, &[(FILE, f.as_str())]),
        ("beta", "beta/gitops", &[(FILE, f.as_str())]),
    ])
}

#[test]
fn an_archived_tenant_repository_is_reported_as_archived_github() {
    let w = two_tenants_on_github();
    w.fake.as_ref().unwrap().archive_repo(ACME);
    w.publish("openstack-scs2-1-33-v3", "v1.33.5");
    let r = w.run();
    assert_eq!(report(&r, "beta").outcome, Outcome::Opened, "{r:?}");
    let acme = report(&r, "acme");
    assert_eq!(acme.outcome, Outcome::Failed, "{r:?}");
    let e = acme.error.as_deref().unwrap();
    assert!(e.contains("archived") && e.contains("unarchive"), "{e}");
    assert!(!e.contains("authentication") && !e.contains("token"), "{e}");
}

#[test]
fn a_protected_bot_branch_is_reported_as_protected_github() {
    use support::fake_github::humans::Protection;
    let w = two_tenants_on_github();
    let fake = w.fake.as_ref().unwrap();
    // A classic rule on every branch: the bot cannot even create its branch.
    fake.protect_branch(ACME, "*", Protection::Classic);
    w.publish("openstack-scs2-1-33-v3", "v1.33.5");
    let r = w.run();
    assert_eq!(report(&r, "beta").outcome, Outcome::Opened, "{r:?}");
    let e = report(&r, "acme").error.clone().unwrap_or_default();
    assert!(
        e.contains("protected") && e.contains("exempt `stackbot/*`"),
        "{r:?}"
    );
    assert!(!e.contains("authentication") && !e.contains("token"), "{e}");

    // A ruleset that blocks force pushes, added once the bot's pull request is open: the
    // rebuild for the next release is refused, and said so.
    fake.protect_branch("beta/gitops", "stackbot/*", Protection::Ruleset);
    reword(&w, "beta/gitops");
    let r = w.run();
    let beta = report(&r, "beta");
    assert_eq!(beta.outcome, Outcome::Failed, "{r:?}");
    let e = beta.error.as_deref().unwrap();
    assert!(
        e.contains("protected") && e.contains("Cannot force-push to this branch"),
        "{e}"
    );
}
