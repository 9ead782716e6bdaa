//! upstream → resolve: what upstream published, and what each stack × minor could release.

use crate::model::ReleaseSet;
use crate::plan::Skipped;
use crate::resolve::{Report, needed, resolve};
use crate::upstream::http::RequestStats;
use crate::upstream::{DetectOptions, Key, Source, UpstreamData, UpstreamError, collect, snapshot};

use super::Context;

/// Read upstream (live, or from a snapshot) and resolve every stack × minor as of
/// `ctx.today`. Returns the report, everything read (what `--save` writes) and the request
/// counters of the run (all zero on replay).
pub fn detect(
    ctx: &Context,
    opts: &DetectOptions,
) -> Result<(Report, UpstreamData, RequestStats), UpstreamError> {
    detect_with(ctx, opts, false)
}

/// [`detect`], and with `schedule` also the Kubernetes schedule when no stack needs it for
/// `minors: supported` (the status report shows every minor's end of life). A snapshot that
/// lacks it is not asked for it: a replay never reads the network.
pub fn detect_with(
    ctx: &Context,
    opts: &DetectOptions,
    schedule: bool,
) -> Result<(Report, UpstreamData, RequestStats), UpstreamError> {
    detect_knowing(ctx, opts, schedule, checkout_lock(ctx).as_ref())
}

/// The checkout's `stackbot.lock` (beside `stackbot.yaml`): `None` when there is none or it
/// cannot be read (what it would say is unknown; `release` and `render --check` report why).
/// A run reads it once ([`super::desired::offered`]) and passes it on.
pub fn checkout_lock(ctx: &Context) -> Option<crate::lock::Lock> {
    let path = ctx.loaded.base_dir.join(crate::lock::LOCK_FILE);
    path.exists()
        .then(|| crate::lock::load(&path).ok())
        .flatten()
}

/// [`detect_with`] against `checkout`, the checkout's lock as the run read it
/// ([`checkout_lock`]): what was last released, for the no-downgrade marks and the verdicts.
pub fn detect_knowing(
    ctx: &Context,
    opts: &DetectOptions,
    schedule: bool,
    checkout: Option<&crate::lock::Lock>,
) -> Result<(Report, UpstreamData, RequestStats), UpstreamError> {
    let config = &ctx.loaded.config;
    let opts = DetectOptions {
        clock: opts.clock.clone().or_else(|| Some(ctx.clock.clone())),
        ..opts.clone()
    };
    let opts = &opts;
    let mut source = Source::open(&ctx.loaded, opts)?;
    let (live, data_as_of) = match &source {
        Source::Replay(r) => (false, r.as_of()),
        Source::Http(_) => (true, None),
    };
    // Security facts are read live, and replayed when the snapshot recorded them (an older
    // snapshot has none: its verdicts say so instead of reading the network).
    let security = source.records(&Key::CveFeed);
    let schedule = schedule && source.records(&Key::Schedule);
    let mut data = UpstreamData {
        limits: ctx.loaded.config.limits.upstream,
        origin: if live {
            crate::upstream::Origin::Live {
                at: ctx.clock.now(),
            }
        } else {
            crate::upstream::Origin::Snapshot {
                recorded_for: data_as_of,
            }
        },
        ..UpstreamData::default()
    };
    collect(&mut source, &mut data, |d| {
        let mut keys = needed(config, d, ctx.today);
        // The verdict needs end of life whatever `minors` says.
        if keys.is_empty() && (schedule || security) && !d.has(&Key::Schedule) {
            keys.push(Key::Schedule);
        }
        if keys.is_empty() && security {
            keys = crate::compliance::needed(d);
        }
        keys
    });
    if let Some(path) = &opts.save {
        snapshot::save_as_of(path, &data, Some(ctx.today))?;
    }
    let mut report = resolve(config, &data, ctx.today);
    mark_degraded(&mut report, checkout);
    assess(&mut report, &data, ctx, checkout, live);
    if !live {
        report.snapshot = Some(crate::upstream::snapshot::SnapshotInfo { as_of: data_as_of });
    }
    let stats = source.stats();
    tracing::info!(
        "upstream: {} checked against {}",
        crate::report::detect::checked_words(&report),
        match (live, data_as_of) {
            (true, _) => format!(
                "live sources ({} requests, {} answered 304 from the cache)",
                stats.requests, stats.not_modified
            ),
            (false, Some(day)) => format!("the snapshot of {day}"),
            (false, None) => "a snapshot".to_string(),
        }
    );
    Ok((report, data, stats))
}

/// Mark the stack × minors whose release set is older than what the checkout's
/// `stackbot.lock` records (the last release's set), by the no-downgrade rule
/// ([`crate::plan::guard`]): `release` keeps those where they are. No readable lock marks
/// nothing (`release` reports it).
fn mark_degraded(report: &mut Report, checkout: Option<&crate::lock::Lock>) {
    let Some(lock) = checkout else {
        return;
    };
    for m in &mut report.minors {
        if let (Some(set), Some(recorded)) = (&m.release_set, lock.get(&m.stack, m.minor)) {
            m.degraded = crate::plan::guard::regressions(set, recorded);
        }
    }
}

/// Give every stack × minor its SCS 0210 verdict for what the checkout's `stackbot.lock` says
/// was last released (the minor window when nothing was), and the deadline that comes with
/// it: the same rule `status` applies to the releases on the forge. It also records the
/// verdict's sources that could not be read (live: now; replayed: marked so in the
/// snapshot): `detect` and `release` exit 1 for them.
fn assess(
    report: &mut Report,
    data: &UpstreamData,
    ctx: &Context,
    checkout: Option<&crate::lock::Lock>,
    live: bool,
) {
    let inputs = crate::compliance::Inputs::from_data(data);
    assess_against(report, &inputs, checkout, ctx.today);
    // A live run could not read what fails now; a replay, what its snapshot marks as failed
    // (docs/status.md: `detect` exits 1 either way).
    report.unreadable = if live {
        inputs.problems()
    } else {
        inputs.problems_recorded(data)
    };
    for p in &report.unreadable {
        let w = format!("SCS 0210 verdicts are unknown where they depend on it: {p}");
        if !report.warnings.contains(&w) {
            report.warnings.push(w);
        }
    }
    if !live && !data.has(&Key::CveFeed) {
        report.warnings.push(
            "the snapshot has no CVE data (recorded before stackbot read the Kubernetes CVE feed): critical-CVE verdicts are unknown; re-record it with `stackbot detect --save FILE`".into(),
        );
    }
}

/// The deadline model ([`crate::compliance::deadlines`]) of every stack × minor against `lock`
/// (what the base branch records as last released; a series it lacks was never released, so
/// the minor window applies; `None`: what is released is unknown, so no rule is evaluated and
/// only the newest patch's own clock is shown). The fields are the ones `status` gives. Pure.
pub fn assess_against(
    report: &mut Report,
    inputs: &crate::compliance::Inputs,
    lock: Option<&crate::lock::Lock>,
    today: chrono::NaiveDate,
) {
    use crate::compliance::Offered;
    for m in &mut report.minors {
        let offered = match lock {
            None => Offered::Unknown {
                cause: "no readable stackbot.lock: what is released is not known".into(),
            },
            Some(lock) => match lock.get(&m.stack, m.minor) {
                Some(set) => Offered::Version {
                    kubernetes: set.kubernetes,
                },
                None => Offered::Nothing,
            },
        };
        let known = !matches!(offered, Offered::Unknown { .. });
        let d = crate::compliance::deadlines(offered, &m.patches, inputs, today);
        m.due = d.due;
        m.due_for = d.due_for;
        m.due_window = d.governing;
        m.days_left = d.days_left;
        m.overdue = d.overdue;
        m.newest_unreleased = d.newest_unreleased.clone();
        m.cves = d
            .offered
            .version()
            .map(|v| crate::compliance::critical_cves(v, inputs))
            .unwrap_or_default();
        m.scs0210 = known.then_some(d.scs0210);
    }
    for n in &mut report.new_minors {
        let d = crate::compliance::deadlines(Offered::Nothing, &n.patches, inputs, today);
        n.due = d.due;
        n.due_for = d.due_for;
        n.due_window = d.governing;
        n.days_left = d.days_left;
        n.overdue = d.overdue;
    }
}

/// What the forge's base branch records as last released (`stackbot.lock`), telling a base
/// branch that has none (`Some(None)`: nothing released) from a forge that could not be read
/// (`None`). Read-only.
pub fn base_lock_or_none(
    ctx: &Context,
    forge: &dyn crate::forge::Forge,
) -> Option<Option<crate::lock::Lock>> {
    let target = super::release::target(ctx).ok()?;
    crate::observe::base_lock(forge, target.scope()).ok()
}

/// The options a release run detects with: the selection's snapshot and cache directory, and
/// the upstream token named by `upstream.token_env`.
pub fn options(
    ctx: &Context,
    snapshot: Option<std::path::PathBuf>,
    cache_dir: Option<std::path::PathBuf>,
) -> DetectOptions {
    DetectOptions {
        snapshot,
        cache_dir,
        token: ctx.env.non_empty(&ctx.loaded.config.upstream.token_env),
        replay: ctx.replay.clone(),
        ..Default::default()
    }
}

/// The complete release sets of a report, and a [`Skipped`] line (with what is missing) for
/// every stack × minor without one.
pub fn complete_sets(report: Report) -> (Vec<ReleaseSet>, Vec<Skipped>) {
    let mut sets = Vec::new();
    let mut skipped = Vec::new();
    for m in report.minors {
        match m.release_set {
            Some(s) => sets.push(s),
            None => {
                // Errors of any patch the walk passed over, then what the newest patch lacks.
                let why = m
                    .held_back
                    .errors
                    .iter()
                    .chain(&m.missing)
                    .cloned()
                    .collect();
                let reason = crate::plan::SkipReason::NoCompleteSet { why };
                skipped.push(Skipped::stack_minor(&m.stack, m.minor, reason));
            }
        }
    }
    (sets, skipped)
}

/// What detection found, kept for the status report: the report, and the end of life of every
/// minor the Kubernetes schedule lists (empty when the schedule was not read).
#[derive(Debug, Clone)]
pub struct Detected {
    pub report: Report,
    pub end_of_life: std::collections::BTreeMap<crate::model::Minor, chrono::NaiveDate>,
    /// What the SCS 0210 verdicts read.
    pub compliance: crate::compliance::Inputs,
    /// The same, as the sources that fail now last answered (reports only).
    pub last_known: Option<(
        crate::compliance::Inputs,
        Option<chrono::DateTime<chrono::Utc>>,
    )>,
    /// Where each of those facts came from (ages as of the day the data was read or recorded
    /// for; the status counts them again on its own day).
    pub sources: Vec<crate::compliance::SourceReading>,
}

impl Detected {
    /// Keep `report` with the end-of-life dates `data` holds.
    pub fn new(report: Report, data: &UpstreamData) -> Self {
        let end_of_life = match data.get(&Key::Schedule) {
            Some(crate::upstream::Fetched::Ok { body }) => {
                crate::upstream::lifecycle::parse_schedule(body, &data.limits)
                    .map(|(l, _)| l)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|l| Some((l.minor, l.end_of_life?)))
                    .collect()
            }
            _ => Default::default(),
        };
        let compliance = crate::compliance::Inputs::from_data(data);
        Detected {
            report,
            end_of_life,
            sources: sources(data, &compliance),
            compliance,
            last_known: crate::compliance::last_known(data),
        }
    }
}

/// Where each fact the verdicts read came from ([`crate::compliance::sources`]), with ages as
/// of the day the data was read or recorded for: `detect --format json` and `status` (through
/// [`Detected`]) both report these, each aged on its own day by [`crate::compliance::aged`].
pub fn sources(
    data: &UpstreamData,
    inputs: &crate::compliance::Inputs,
) -> Vec<crate::compliance::SourceReading> {
    let day = match data.origin {
        crate::upstream::Origin::Live { at } => at.date_naive(),
        crate::upstream::Origin::Snapshot {
            recorded_for: Some(d),
        } => d,
        _ => chrono::NaiveDate::MIN,
    };
    crate::compliance::sources(data, inputs, day)
}
