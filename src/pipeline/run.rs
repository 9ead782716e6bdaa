//! One run's facts, read once: the configuration and clock ([`Context`]), where it releases
//! ([`Target`], with its OCI client), the forge, and the release index.
//!
//! Why: every stage of `release` (plan, apply, tenants, the status on the dashboard) needs the
//! same target and the same "which releases exist". Rebuilt per stage, the target made a new
//! OCI client (and runtime) each time and the forge's release list was read three times per
//! run, so the stages could see different answers and an hourly run paid for each listing.
//! A [`Run`] is built once at the start of a command and passed down; the index is listed the
//! first time a stage needs it, and `apply`'s writes are folded into it
//! ([`Run::record`]) so the stages after it read what the run left, without listing again.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::forge::{Forge, PullInfo};
use crate::index::ReleaseIndex;
use crate::observe::{ForgeReleases, ObserveError};
use crate::outcome::Outcome;

use super::release::Target;
use super::{Context, Error};

/// The facts every stage of one run shares. See the module documentation.
pub struct Run<'a> {
    pub ctx: &'a Context,
    pub forge: &'a dyn Forge,
    /// Where and how this run releases, built once (with its OCI client when OCI is on).
    pub target: Target,
    /// The release index once listed, and whether the forge's releases were part of it.
    index: Mutex<Option<Listed>>,
    /// The pull requests of each release branch as this run read them (observe) and left them
    /// (apply): the status at the end of the run reads them here, not from the forge again.
    release_pulls: Mutex<BTreeMap<String, Vec<PullInfo>>>,
    /// The OCI releases this run read (manifest date, Kubernetes version), each once: the
    /// observation's pulls are noted here ([`Run::note_observed`]), the tenants and the status
    /// read through it.
    pub oci_reads: crate::observe::oci::OciReads,
    /// The Kubernetes versions of forge releases this run read (the status and the tenants
    /// by one rule, a `metadata.yaml` downloaded once).
    pub forge_versions: crate::observe::versions::ForgeVersions,
    /// What the conformance gate and the status read of candidate pre-releases (their
    /// records, each once per run).
    pub gate_records: crate::observe::gate::Records,
    /// What a commit holds (its file list, its files), as this run read it: the tenants' base
    /// branches, read by the tenant stage and the status at the end of the run.
    pub contents: crate::observe::contents::Contents,
}

struct Listed {
    index: ReleaseIndex,
    with_forge: bool,
}

impl<'a> Run<'a> {
    /// The run of `ctx` on `forge`: the target is built here, once (a configuration that
    /// names no valid repository or OCI target fails here, as input).
    pub fn new(ctx: &'a Context, forge: &'a dyn Forge) -> Result<Self, Error> {
        Ok(Run {
            ctx,
            forge,
            target: super::release::target(ctx)?,
            index: Mutex::new(None),
            release_pulls: Mutex::new(BTreeMap::new()),
            oci_reads: Default::default(),
            forge_versions: Default::default(),
            gate_records: Default::default(),
            contents: Default::default(),
        })
    }

    /// The index the release stage plans against: every forge release (drafts included) and,
    /// when OCI is a target, the OCI tags. A repository that does not exist is an error.
    pub fn index(&self) -> Result<ReleaseIndex, ObserveError> {
        self.listed(ForgeReleases::Required)
    }

    /// The index of what is published for tenants and the status report: the forge's releases
    /// only when `publish` lists the forge (with `publish: [oci]` alone the forge's release
    /// list is not read at all), the OCI tags when OCI is a target. `reads` says what a
    /// repository that does not exist means when the forge's releases are read; whatever it
    /// says, they are read only when `publish` lists the forge.
    pub fn published(&self, reads: ForgeReleases) -> Result<ReleaseIndex, ObserveError> {
        let on_forge = self.ctx.loaded.config.publishes_on_forge();
        let reads = if on_forge {
            reads
        } else {
            ForgeReleases::Unread
        };
        let index = self.listed(reads)?;
        Ok(match reads {
            ForgeReleases::Unread => index.oci_only(),
            _ => index,
        })
    }

    /// The index the conformance gate's status reads: every forge release (the candidates'
    /// pre-releases hold the gate's records whatever `publish` says) and the OCI tags. With
    /// `publish: [oci]` alone this lists the forge's releases once more than [`Run::published`].
    pub fn gate_index(&self) -> Result<ReleaseIndex, ObserveError> {
        self.listed(ForgeReleases::MissingIsEmpty)
    }

    /// Fold what `outcome`'s writes did (releases created, published, deleted; OCI tags
    /// pushed) into the index, as a new listing would show it. Nothing to do before the index
    /// was listed.
    pub fn record(&self, outcome: &Outcome) {
        let pushed: Vec<String> = outcome.oci.iter().map(|p| p.tag.clone()).collect();
        self.oci_reads.forget(pushed.iter().map(String::as_str));
        if let Some(l) = self.index.lock().expect("index lock").as_mut() {
            l.index = l.index.with_changes(&outcome.index_changes, &pushed);
        }
    }

    /// Note what the observation read of each series' latest OCI release (it pulled the
    /// release's files), so the tenants and the status do not read its manifest and
    /// `metadata.yaml` again.
    pub fn note_observed(&self, observed: &crate::plan::Observed) {
        for l in observed
            .series
            .values()
            .filter_map(|so| so.oci_latest.as_ref())
        {
            let read = crate::observe::oci::OciRelease {
                created: l.created,
                kubernetes: l.kubernetes,
            };
            self.oci_reads.note(&l.tag, read);
        }
    }

    /// Note the release branches' pull requests as `observed` read them and `outcome` left
    /// them (what a pull request step opened, updated or kept comes first).
    pub fn record_release_pulls(
        &self,
        observed: &BTreeMap<String, Vec<PullInfo>>,
        outcome: &Outcome,
    ) {
        let mut known = self.release_pulls.lock().expect("release pulls lock");
        for (branch, pulls) in observed {
            known.insert(branch.clone(), pulls.clone());
        }
        for p in &outcome.release_pulls {
            let list = known.entry(p.head.clone()).or_default();
            list.retain(|o| o.number != p.number);
            list.insert(0, p.clone());
        }
    }

    /// The pull requests of release branch `branch` as this run read or left them; `None`
    /// when the run did not read that branch.
    pub fn release_pulls_of(&self, branch: &str) -> Option<Vec<PullInfo>> {
        let known = self.release_pulls.lock().expect("release pulls lock");
        known.get(branch).cloned()
    }

    /// The index, listed on the first call only (again only when the forge's releases are
    /// wanted and the first listing left them out).
    fn listed(&self, forge_releases: ForgeReleases) -> Result<ReleaseIndex, ObserveError> {
        let with_forge = forge_releases != ForgeReleases::Unread;
        let mut slot = self.index.lock().expect("index lock");
        if let Some(l) = slot.as_ref().filter(|l| l.with_forge || !with_forge) {
            return Ok(l.index.clone());
        }
        let (forge, repo, oci) = (self.forge, &self.target.repo, self.target.oci.as_deref());
        let index = crate::observe::published(forge, repo, forge_releases, oci)?;
        *slot = Some(Listed {
            index: index.clone(),
            with_forge,
        });
        Ok(index)
    }
}
