//! People between runs: tenant teams merging (with every button), declining, updating and
//! editing the bot's pull requests, Renovate moving their `main`, maintainers withdrawing
//! releases, editing templates and committing to the cluster-stacks repository, new tenants.
//! Each event is seeded; what it does depends on the world at the moment it happens.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};

use super::forge::{MergeMethod, PrState, Who};
use super::tenants::{BRANCH, Persona};

/// Something a person does.
#[derive(Debug, Clone)]
pub enum Human {
    Merge {
        tenant: usize,
        pull: u64,
        kind: MergeMethod,
        delete_branch: bool,
        attempt: u32,
    },
    UpdateBranch {
        tenant: usize,
        pull: u64,
    },
    Decline {
        tenant: usize,
        pull: u64,
    },
    /// Delete the bot branch (closing its open pull request, if any).
    DeleteBranch {
        tenant: usize,
    },
    /// A team member pushes an edit to the bot's branch.
    CommitOnBranch {
        tenant: usize,
        pull: u64,
    },
    /// An unrelated commit on the tenant's `main` (Renovate, Flux, a person).
    Renovate {
        tenant: usize,
        same_file: bool,
    },
    /// A maintainer deletes the newest release of a series (and maybe its tag).
    Withdraw {
        delete_tag: bool,
    },
    /// A maintainer edits a template (a comment: the rendered tree, and so its hash, change).
    EditTemplate,
    /// A maintainer commits to the cluster-stacks repository's `main` (docs).
    StacksCommit,
    /// A tenant is added to the configuration.
    Join {
        tenant: usize,
    },
    /// A team changes its ClusterStack file on `main` by hand: pins its newest minor back to
    /// the release before the newest, or moves it to the next minor with a release.
    ByHand {
        tenant: usize,
        move_minor: bool,
    },
    /// A maintainer reverts the last template edit (the old content comes back).
    RevertTemplate,
    /// The runner's clock is behind by this many hours for the next run (a stale `--now`, an
    /// NTP step back); upstream is what it is.
    ClockBack {
        hours: i64,
    },
    /// A maintainer replaces `minors: supported` by an explicit list without the oldest
    /// supported minor (`explicit`), or goes back to `supported`.
    SetMinors {
        explicit: bool,
    },
    /// A tenant's repository is taken away (deleted on the local forge, archived on GitHub)
    /// or, later, brought back as it was.
    RepoGone {
        tenant: usize,
        gone: bool,
    },
    /// Upstream rebuilds the node image of the newest release of a series: its `CHECKSUM`
    /// names a new sha256 for the same Kubernetes patch.
    RebuildImage,
    /// A team merges a Cluster upgrade pull request (issue 22).
    MergeUpgrade {
        tenant: usize,
        pull: u64,
        kind: MergeMethod,
        delete_branch: bool,
        attempt: u32,
    },
    /// A team closes a Cluster upgrade pull request without merging it.
    DeclineUpgrade {
        tenant: usize,
        pull: u64,
    },
    /// A person ticks a step of their tenant on the dashboard (`clusters: approval`).
    Tick {
        tenant: usize,
        branch: String,
    },
    /// A maintainer merges a release pull request of the cluster-stacks repository
    /// (`mode: pull-request`).
    MergeRelease {
        pull: u64,
        kind: MergeMethod,
        attempt: u32,
    },
}

/// Who does it.
pub const MAINTAINER: Who = ("Maria Maintainer", "maria@scs.example");
pub const RENOVATE: Who = (
    "renovate[bot]",
    "29139614+renovate[bot]@users.noreply.github.com",
);

pub fn member(tenant: &str) -> Who {
    use std::sync::{Mutex, OnceLock};
    // One address per tenant name for the whole process (a handful of short strings).
    static EMAILS: OnceLock<Mutex<BTreeMap<String, &'static str>>> = OnceLock::new();
    let mut m = EMAILS.get_or_init(Default::default).lock().unwrap();
    let email = *m
        .entry(tenant.to_string())
        .or_insert_with(|| Box::leak(format!("ops@{tenant}.example").into_boxed_str()));
    ("Team Member", email)
}

impl Human {
    /// The tenant the event happens in, if any.
    pub fn tenant(&self) -> Option<usize> {
        match self {
            Human::Merge { tenant, .. }
            | Human::UpdateBranch { tenant, .. }
            | Human::Decline { tenant, .. }
            | Human::DeleteBranch { tenant }
            | Human::CommitOnBranch { tenant, .. }
            | Human::Renovate { tenant, .. }
            | Human::Join { tenant }
            | Human::ByHand { tenant, .. }
            | Human::MergeUpgrade { tenant, .. }
            | Human::DeclineUpgrade { tenant, .. }
            | Human::Tick { tenant, .. }
            | Human::RepoGone { tenant, .. } => Some(*tenant),
            Human::Withdraw { .. }
            | Human::EditTemplate
            | Human::StacksCommit
            | Human::MergeRelease { .. }
            | Human::RevertTemplate
            | Human::RebuildImage
            | Human::ClockBack { .. }
            | Human::SetMinors { .. } => None,
        }
    }

    /// The event's kind, for the report.
    pub fn label(&self) -> String {
        match self {
            Human::Merge { kind, .. } => match kind {
                MergeMethod::Merge => "merge (merge commit)".into(),
                MergeMethod::Squash => "merge (squash)".into(),
                MergeMethod::Rebase => "merge (rebase)".into(),
            },
            Human::UpdateBranch { .. } => "\"Update branch\" (merge main into the PR)".into(),
            Human::Decline { .. } => "pull request closed (declined)".into(),
            Human::DeleteBranch { .. } => "bot branch deleted".into(),
            Human::CommitOnBranch { .. } => "human commit on the bot branch".into(),
            Human::Renovate {
                same_file: false, ..
            } => "unrelated commit on tenant main".into(),
            Human::Renovate {
                same_file: true, ..
            } => "unrelated commit on tenant main (same file)".into(),
            Human::Withdraw { delete_tag: false } => "release deleted (tag kept)".into(),
            Human::Withdraw { delete_tag: true } => "release and tag deleted".into(),
            Human::EditTemplate => "template edited".into(),
            Human::StacksCommit => "unrelated commit on cluster-stacks main".into(),
            Human::Join { .. } => "tenant added".into(),
            Human::MergeRelease { .. } => "release pull request merged".into(),
            Human::MergeUpgrade { .. } => "Cluster upgrade pull request merged".into(),
            Human::DeclineUpgrade { .. } => "Cluster upgrade pull request closed (declined)".into(),
            Human::Tick { .. } => "Cluster upgrade step ticked on the dashboard".into(),
            Human::ByHand {
                move_minor: false, ..
            } => "tenant pinned its ClusterStack back by hand".into(),
            Human::ByHand {
                move_minor: true, ..
            } => "tenant moved its ClusterStack to another minor by hand".into(),
            Human::RevertTemplate => "template edit reverted".into(),
            Human::RebuildImage => "node image rebuilt upstream (new CHECKSUM, same patch)".into(),
            Human::RepoGone { gone: true, .. } => {
                "tenant repository deleted (local) or archived (GitHub)".into()
            }
            Human::RepoGone { gone: false, .. } => "tenant repository restored".into(),
            Human::ClockBack { .. } => "runner clock behind (next run)".into(),
            Human::SetMinors { explicit: true } => {
                "`minors:` set to an explicit list without the oldest minor".into()
            }
            Human::SetMinors { explicit: false } => "`minors:` back to `supported`".into(),
        }
    }
}

/// When events happen.
#[derive(Debug, Default)]
pub struct Agenda {
    events: BTreeMap<DateTime<Utc>, Vec<Human>>,
}

impl Agenda {
    pub fn at(&mut self, t: DateTime<Utc>, h: Human) {
        self.events.entry(t).or_default().push(h);
    }

    /// Events due up to `t`, in time order.
    pub fn due(&mut self, t: DateTime<Utc>) -> Vec<(DateTime<Utc>, Human)> {
        let later = self.events.split_off(&(t + Duration::seconds(1)));
        let due = std::mem::replace(&mut self.events, later);
        due.into_iter()
            .flat_map(|(t, hs)| hs.into_iter().map(move |h| (t, h)))
            .collect()
    }

    pub fn len(&self) -> usize {
        self.events.values().map(Vec::len).sum()
    }
}

pub fn hours(rng: &mut fastrand::Rng, lo: i64, hi: i64) -> Duration {
    Duration::hours(rng.i64(lo..=hi.max(lo))) + Duration::minutes(rng.i64(0..60))
}

pub fn weighted<T: Copy>(rng: &mut fastrand::Rng, items: &[(T, u32)]) -> T {
    let total: u32 = items.iter().map(|(_, w)| w).sum();
    let mut r = rng.u32(0..total.max(1));
    for (x, w) in items {
        if r < *w {
            return *x;
        }
        r -= w;
    }
    items[0].0
}

/// A team's plan for a bot pull request it just saw open.
pub fn react(
    rng: &mut fastrand::Rng,
    agenda: &mut Agenda,
    now: DateTime<Utc>,
    tenant: usize,
    pull: u64,
    p: &Persona,
) {
    let decide = now + hours(rng, p.delay_hours.0, p.delay_hours.1);
    if rng.f64() < p.decline {
        agenda.at(decide, Human::Decline { tenant, pull });
        if rng.f64() < 0.3 {
            agenda.at(decide + hours(rng, 1, 48), Human::DeleteBranch { tenant });
        }
        return;
    }
    let mut step = now + hours(rng, 1, (p.delay_hours.1 / 2).max(2));
    if rng.f64() < p.human_commit {
        agenda.at(step, Human::CommitOnBranch { tenant, pull });
        step += hours(rng, 1, 24);
    }
    if rng.f64() < p.update_branch {
        agenda.at(step, Human::UpdateBranch { tenant, pull });
        step += hours(rng, 1, 24);
    }
    agenda.at(
        decide.max(step),
        Human::Merge {
            tenant,
            pull,
            kind: weighted(rng, p.merge),
            delete_branch: rng.f64() < p.delete_branch,
            attempt: 1,
        },
    );
}

/// The team of [`super::world::Scenario::update_after_main_moved`]: 20 minutes after the run
/// that opened the bot's pull request, a commit on `main` changes the ClusterStack file the bot
/// edits (a line the bot does not touch, so the merge is clean); 20 minutes later "Update
/// branch" merges it into the pull request, before the next hourly run could rebuild the branch
/// from the new file itself. The pull request stays open for the runs that follow.
pub fn update_after_main_moved(agenda: &mut Agenda, now: DateTime<Utc>, tenant: usize, pull: u64) {
    agenda.at(
        now + Duration::minutes(20),
        Human::Renovate {
            tenant,
            same_file: true,
        },
    );
    agenda.at(
        now + Duration::minutes(40),
        Human::UpdateBranch { tenant, pull },
    );
}

/// Background events of a tenant team from `from` to `until`: Renovate on `main`.
pub fn background(
    rng: &mut fastrand::Rng,
    agenda: &mut Agenda,
    from: DateTime<Utc>,
    until: DateTime<Utc>,
    tenant: usize,
    p: &Persona,
) {
    let mut t = from;
    loop {
        // Exponential gaps with the persona's mean.
        let gap = -(1.0 - rng.f64()).ln() * p.renovate_days * 24.0;
        t += Duration::minutes((gap * 60.0) as i64 + 1);
        if t >= until {
            break;
        }
        let same_file = rng.f64() < p.renovate_same_file;
        agenda.at(t, Human::Renovate { tenant, same_file });
    }
}

/// Maintainer events over the window.
pub fn maintainers(
    rng: &mut fastrand::Rng,
    agenda: &mut Agenda,
    from: DateTime<Utc>,
    until: DateTime<Utc>,
) {
    let mut plan = |mean_days: f64, make: &mut dyn FnMut(&mut fastrand::Rng) -> Human| {
        let mut t = from + Duration::days(7);
        loop {
            let gap = -(1.0 - rng.f64()).ln() * mean_days * 24.0;
            t += Duration::minutes((gap * 60.0) as i64 + 1);
            if t >= until {
                break;
            }
            let h = make(rng);
            agenda.at(t, h);
        }
    };
    plan(40.0, &mut |r| Human::Withdraw {
        delete_tag: r.bool(),
    });
    plan(70.0, &mut |_| Human::EditTemplate);
    plan(30.0, &mut |_| Human::StacksCommit);
}

/// The pull request number of the newest open bot pull request in `pulls`.
pub fn open_bot_pull(pulls: &[super::forge::Pull]) -> Option<u64> {
    pulls
        .iter()
        .rev()
        .find(|p| p.head == BRANCH && p.state == PrState::Open)
        .map(|p| p.number)
}

/// The acts of issue 23, from their own generator (`rng`), so the worlds that existed before
/// keep their sequence of people: tenants editing their ClusterStack by hand, a template edit
/// reverted, the runner's clock behind, `minors:` made explicit for a while.
pub fn by_hand(
    rng: &mut fastrand::Rng,
    agenda: &mut Agenda,
    from: DateTime<Utc>,
    until: DateTime<Utc>,
    tenants: usize,
) {
    let mut every = |mean_days: f64, make: &mut dyn FnMut(&mut fastrand::Rng) -> Human| {
        let mut t = from + Duration::days(10);
        loop {
            let gap = -(1.0 - rng.f64()).ln() * mean_days * 24.0;
            t += Duration::minutes((gap * 60.0) as i64 + 1);
            if t >= until {
                break;
            }
            let h = make(rng);
            agenda.at(t, h);
        }
    };
    every(30.0, &mut |r| Human::ByHand {
        tenant: r.usize(0..tenants),
        move_minor: false,
    });
    every(60.0, &mut |r| Human::ByHand {
        tenant: r.usize(0..tenants),
        move_minor: true,
    });
    every(45.0, &mut |_| Human::RevertTemplate);
    every(40.0, &mut |_| Human::RebuildImage);
    every(90.0, &mut |r| Human::RepoGone {
        tenant: r.usize(0..tenants),
        gone: true,
    });
    every(25.0, &mut |r| Human::ClockBack {
        hours: r.i64(1..72),
    });
    let days = (until - from).num_days();
    if days > 60 {
        let at = from + Duration::days(rng.i64(20..days / 2));
        agenda.at(at, Human::SetMinors { explicit: true });
        agenda.at(
            at + Duration::days(rng.i64(20..60)),
            Human::SetMinors { explicit: false },
        );
    }
}
