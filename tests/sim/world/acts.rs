//! The acts of the simulated people, one method each: what `World::act` dispatches to. Each
//! returns `Some(())` when the person did it and `None` when there was nothing to do or the
//! forge refused (the act is then not counted).

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};

use super::super::actors::{Human, MAINTAINER, RENOVATE, member};
use super::super::forge::{Files, MergeMethod, PrState};
use super::super::ledger::{Declined, Merged, Withdrawal};
use super::super::observe::{self, STACKS};
use super::super::tenants::{self, BRANCH};
use super::super::{invariants, read};
use super::{World, stacks_repo};

impl World {
    /// How an act reads in the log: withdrawing says where the release was deleted.
    pub(super) fn act_label(&self, h: &Human) -> String {
        match (h, &self.oci) {
            (Human::Withdraw { delete_tag: false }, Some(_)) if self.sc.oci_too => {
                "release deleted on the forge and in OCI (git tag kept)".to_string()
            }
            (Human::Withdraw { delete_tag: true }, Some(_)) if self.sc.oci_too => {
                "release deleted on the forge and in OCI, git tag deleted".to_string()
            }
            (Human::Withdraw { delete_tag: false }, Some(_)) => {
                "OCI release deleted (git tag kept)".to_string()
            }
            (Human::Withdraw { delete_tag: true }, Some(_)) => {
                "OCI release and git tag deleted".to_string()
            }
            _ => h.label(),
        }
    }

    pub(super) fn act_merge(
        &mut self,
        tenant: usize,
        pull: u64,
        kind: MergeMethod,
        delete_branch: bool,
        attempt: u32,
        now: DateTime<Utc>,
    ) -> Option<()> {
        // The run the merge follows (the ledger's runs so far).
        let runs = self.ledger.runs.len();
        let b = self.backend.as_ref();
        let t = &self.tenants[tenant];
        self.tenant_obs_open(tenant, pull)?;
        match b.merge(&t.repo, pull, kind, member(t.name)) {
            Ok(_) => {
                if delete_branch {
                    b.delete_branch(&t.repo, BRANCH);
                }
                self.ledger.merged.push(Merged {
                    tenant: t.name,
                    pull,
                    kind,
                    after_run: runs,
                    branch_kept: !delete_branch,
                });
                Some(())
            }
            Err(e) => {
                *self
                    .humans
                    .entry(format!(
                        "merge refused by the forge ({})",
                        e.split(" in ").next().unwrap_or(&e)
                    ))
                    .or_default() += 1;
                if attempt < 3 {
                    let rng = if self.tenants[tenant].upgrade.is_some() {
                        &mut self.up_rng
                    } else {
                        &mut self.rng
                    };
                    let later = now + Duration::hours(rng.i64(24..72));
                    self.agenda.at(
                        later,
                        Human::Merge {
                            tenant,
                            pull,
                            kind,
                            delete_branch,
                            attempt: attempt + 1,
                        },
                    );
                }
                None
            }
        }
    }

    pub(super) fn act_update_branch(&mut self, tenant: usize, pull: u64) -> Option<()> {
        let b = self.backend.as_ref();
        let t = &self.tenants[tenant];
        self.tenant_obs_open(tenant, pull)?;
        b.update_branch(&t.repo, pull, member(t.name)).ok()?;
        Some(())
    }

    pub(super) fn act_decline(&mut self, tenant: usize, pull: u64, runs: usize) -> Option<()> {
        let b = self.backend.as_ref();
        let t = &self.tenants[tenant];
        let obs = self.tenant_obs_open(tenant, pull)?;
        self.ledger.declined.push(Declined {
            tenant: t.name,
            pull,
            proposal: obs.branch_proposal()?,
            after_run: runs,
            how: "closed",
        });
        b.close_pull(&t.repo, pull);
        Some(())
    }

    pub(super) fn act_delete_branch(&mut self, tenant: usize, runs: usize) -> Option<()> {
        let b = self.backend.as_ref();
        let t = &self.tenants[tenant];
        let obs = self.tenant_obs(tenant)?;
        obs.branch.as_ref()?;
        if let Some(p) = obs.open_pull() {
            self.ledger.declined.push(Declined {
                tenant: t.name,
                pull: p.number,
                proposal: obs.branch_proposal()?,
                after_run: runs,
                how: "deleted the branch of",
            });
        }
        b.delete_branch(&t.repo, BRANCH);
        Some(())
    }

    pub(super) fn act_commit_on_branch(
        &mut self,
        tenant: usize,
        pull: u64,
        now: DateTime<Utc>,
    ) -> Option<()> {
        let b = self.backend.as_ref();
        let t = &self.tenants[tenant];
        let obs = self.tenant_obs_open(tenant, pull)?;
        let head = obs.branch.as_ref()?;
        let text = b.file_at(&t.repo, head, t.stack_file)?;
        let mut text = String::from_utf8_lossy(&text).into_owned();
        text.push_str(&format!(
            "# reviewed by {} on {}\n",
            t.name,
            now.format("%Y-%m-%d")
        ));
        let sha = b
            .push(
                &t.repo,
                BRANCH,
                &BTreeMap::from([(t.stack_file.to_string(), Some(text.into_bytes()))]),
                "Note the review",
                member(t.name),
            )
            .ok()?;
        self.ledger
            .human_commits
            .entry(t.name)
            .or_default()
            .insert(sha);
        Some(())
    }

    pub(super) fn act_renovate(
        &mut self,
        tenant: usize,
        same_file: bool,
        now: DateTime<Utc>,
    ) -> Option<()> {
        let b = self.backend.as_ref();
        if !self.active[tenant] {
            return None;
        }
        let t = &self.tenants[tenant];
        let main = b.head(&t.repo, "main")?;
        let (path, text) = if same_file {
            let old =
                String::from_utf8_lossy(&b.file_at(&t.repo, &main, t.stack_file)?).into_owned();
            let (first, rest) = old.split_once('\n').unwrap_or((&old, ""));
            let base = first.split(" (touched").next().unwrap_or(first);
            (
                t.stack_file.to_string(),
                format!("{base} (touched {})\n{rest}", now.format("%Y-%m-%d %H:%M")),
            )
        } else {
            let old = String::from_utf8_lossy(&b.file_at(&t.repo, &main, "apps/podinfo.yaml")?)
                .into_owned();
            let n = if t.upgrade.is_some() {
                self.up_rng.u32(1..999)
            } else {
                self.rng.u32(1..999)
            };
            let new = regex::Regex::new(r"podinfo:6\.7\.\d+")
                .expect("regex")
                .replace(&old, format!("podinfo:6.7.{n}").as_str())
                .into_owned();
            ("apps/podinfo.yaml".to_string(), new)
        };
        b.push(
            &t.repo,
            "main",
            &BTreeMap::from([(path, Some(text.into_bytes()))]),
            "chore(deps): update",
            RENOVATE,
        )
        .ok()?;
        Some(())
    }

    pub(super) fn act_withdraw(&mut self, delete_tag: bool, runs: usize) -> Option<()> {
        let b = self.backend.as_ref();
        let mut candidates: Vec<(String, DateTime<Utc>)> = self
            .ledger
            .latest_per_series()
            .values()
            .map(|p| (p.tag.clone(), p.at))
            .collect();
        if candidates.is_empty() {
            return None;
        }
        candidates.sort_by_key(|(_, at)| std::cmp::Reverse(*at));
        let pick = if self.rng.f64() < 0.7 {
            0
        } else {
            self.rng.usize(0..candidates.len())
        };
        let tag = candidates[pick].0.clone();
        b.delete_release(STACKS, &tag);
        if let Some(oci) = &self.oci {
            oci.delete(&tag);
        }
        if delete_tag {
            b.delete_tag(STACKS, &tag);
        }
        if let Some(p) = self.ledger.published.get_mut(&tag) {
            p.withdrawn = Some(Withdrawal {
                after_run: runs,
                tag_deleted: delete_tag,
            });
        }
        Some(())
    }

    pub(super) fn act_edit_template(&mut self, now: DateTime<Utc>) -> Option<()> {
        self.edits += 1;
        let files = [
            "cluster-addon/ccm/values.yaml",
            "cluster-addon/csi/values.yaml",
            "cluster-addon/cni/values.yaml",
            "cluster-addon/metrics-server/values.yaml",
            "cluster-class/values.yaml",
        ];
        let f = self
            .dir
            .path()
            .join("templates/openstack/scs2")
            .join(files[self.rng.usize(0..files.len())]);
        let mut text = std::fs::read_to_string(&f).ok()?;
        self.template_edits.push((f.clone(), text.clone()));
        text.push_str(&format!(
            "# maintainer note {} ({})\n",
            self.edits,
            now.format("%Y-%m-%d")
        ));
        std::fs::write(&f, text).ok()?;
        Some(())
    }

    pub(super) fn act_stacks_commit(&mut self, now: DateTime<Utc>) -> Option<()> {
        let b = self.backend.as_ref();
        let main = b.head(STACKS, "main")?;
        let mut text =
            String::from_utf8_lossy(&b.file_at(STACKS, &main, "README.md")?).into_owned();
        text.push_str(&format!("\nUpdated {}.\n", now.format("%Y-%m-%d")));
        b.push(
            STACKS,
            "main",
            &BTreeMap::from([("README.md".to_string(), Some(text.into_bytes()))]),
            "docs: update the README",
            MAINTAINER,
        )
        .ok()?;
        Some(())
    }

    pub(super) fn act_merge_release(
        &mut self,
        pull: u64,
        kind: MergeMethod,
        attempt: u32,
        now: DateTime<Utc>,
    ) -> Option<()> {
        let b = self.backend.as_ref();
        let open = b
            .pulls(STACKS)
            .iter()
            .any(|p| p.number == pull && p.state == PrState::Open);
        if !open {
            return None; // superseded or closed by the bot meanwhile
        }
        match b.merge(STACKS, pull, kind, MAINTAINER) {
            Ok(_) => {
                if let Some(p) = b.pulls(STACKS).iter().find(|p| p.number == pull) {
                    b.delete_branch(STACKS, &p.head);
                }
                Some(())
            }
            Err(_) if attempt < 3 => {
                let later = now + Duration::hours(self.rng.i64(2..24));
                self.agenda.at(
                    later,
                    Human::MergeRelease {
                        pull,
                        kind,
                        attempt: attempt + 1,
                    },
                );
                None
            }
            Err(_) => None,
        }
    }

    pub(super) fn act_repo_gone(
        &mut self,
        tenant: usize,
        gone: bool,
        now: DateTime<Utc>,
    ) -> Option<()> {
        let b = self.backend.as_ref();
        if !self.active[tenant] || self.gone.contains(&tenant) == gone {
            return None;
        }
        b.take_away(&self.tenants[tenant].repo, gone);
        if gone {
            self.gone.insert(tenant);
            let back = now + Duration::days(self.acts.i64(1..10));
            self.agenda.at(
                back,
                Human::RepoGone {
                    tenant,
                    gone: false,
                },
            );
        } else {
            self.gone.remove(&tenant);
        }
        Some(())
    }

    pub(super) fn act_rebuild_image(&mut self) -> Option<()> {
        let latest: Vec<String> = self
            .ledger
            .latest_per_series()
            .values()
            .filter_map(|p| p.kubernetes.map(|k| k.to_string()))
            .collect();
        if latest.is_empty() {
            return None;
        }
        let pick = latest[self.acts.usize(0..latest.len())].clone();
        self.upstream.rebuild_image(&pick);
        Some(())
    }

    pub(super) fn act_revert_template(&mut self) -> Option<()> {
        let (f, old) = self.template_edits.pop()?;
        std::fs::write(&f, old).ok()?;
        Some(())
    }

    pub(super) fn act_clock_back(&mut self, hours: i64) -> Option<()> {
        self.clock_back = Some(hours);
        Some(())
    }

    pub(super) fn act_set_minors(&mut self, explicit: bool, now: DateTime<Utc>) -> Option<()> {
        let now_supported = self.upstream.timeline.supported_at(now);
        self.minors = if explicit {
            let list: Vec<u64> = now_supported.iter().skip(1).map(|m| m.minor).collect();
            (!list.is_empty()).then_some(list)
        } else {
            None
        };
        if explicit && self.minors.is_none() {
            return None;
        }
        self.minors_history.push((now, self.minors.clone()));
        self.rewrite_config();
        Some(())
    }

    pub(super) fn act_by_hand(&mut self, tenant: usize, move_minor: bool) -> Option<()> {
        let b = self.backend.as_ref();
        if !self.active[tenant] {
            return None;
        }
        let t = self.tenants[tenant].clone();
        let main = b.head(&t.repo, "main")?;
        let file = b.file_at(&t.repo, &main, t.stack_file)?;
        let mut stacks =
            tenants::Proposal::of(&Files::from([(t.stack_file.to_string(), file)])).stacks;
        if move_minor {
            let avail = invariants::available(&self.ledger);
            let top = *stacks.keys().max()?;
            let next = *avail.keys().find(|m| **m > top)?;
            stacks.remove(&top);
            stacks.insert(next, Vec::new());
        } else {
            let (_, list) = stacks
                .iter_mut()
                .rev()
                .find(|(_, l)| l.iter().max().is_some_and(|n| *n >= 2))?;
            let newest = *list.iter().max()?;
            *list = vec![newest - 1];
        }
        let text = t.stack_file_by_hand(&stacks);
        b.push(
            &t.repo,
            "main",
            &BTreeMap::from([(t.stack_file.to_string(), Some(text.into_bytes()))]),
            if move_minor {
                "Move the cluster stack to the next minor"
            } else {
                "Pin the cluster stack back"
            },
            member(t.name),
        )
        .ok()?;
        Some(())
    }

    pub(super) fn act_merge_upgrade(
        &mut self,
        tenant: usize,
        pull: u64,
        kind: MergeMethod,
        delete_branch: bool,
        attempt: u32,
        now: DateTime<Utc>,
    ) -> Option<()> {
        let b = self.backend.as_ref();
        let t = self.tenants[tenant].clone();
        let obs = observe::upgrades(b, &t)?;
        let (p, _) = obs
            .open()
            .find(|(p, _)| p.number == pull)
            .map(|(p, f)| (p.clone(), f.clone()))?;
        match b.merge(&t.repo, pull, kind, member(t.name)) {
            Ok(_) => {
                if delete_branch {
                    b.delete_branch(&t.repo, &p.head);
                }
                self.ledger.upgrade_merged += 1;
                // Where each Cluster runs now, against before the merge.
                let now_on = observe::upgrades(b, &t)?;
                for c in &obs.clusters {
                    let id = format!("{}-{}", c.namespace, c.name);
                    let (Some(from), Some(to)) = (
                        c.version_minor(),
                        now_on.cluster(&id).and_then(|c| c.version_minor()),
                    ) else {
                        continue;
                    };
                    if from != to {
                        self.ledger
                            .cluster_moves
                            .push(super::super::ledger::ClusterMove {
                                tenant: t.name,
                                cluster: id,
                                from,
                                to,
                                at: now,
                            });
                    }
                }
                Some(())
            }
            Err(e) => {
                *self
                    .humans
                    .entry(format!(
                        "Cluster upgrade merge refused by the forge ({})",
                        e.split(" in ").next().unwrap_or(&e)
                    ))
                    .or_default() += 1;
                if attempt < 6 {
                    let later = now + Duration::hours(self.up_rng.i64(12..48));
                    self.agenda.at(
                        later,
                        Human::MergeUpgrade {
                            tenant,
                            pull,
                            kind,
                            delete_branch,
                            attempt: attempt + 1,
                        },
                    );
                }
                None
            }
        }
    }

    pub(super) fn act_decline_upgrade(
        &mut self,
        tenant: usize,
        pull: u64,
        now: DateTime<Utc>,
        runs: usize,
    ) -> Option<()> {
        let b = self.backend.as_ref();
        let t = self.tenants[tenant].clone();
        let obs = observe::upgrades(b, &t)?;
        let (p, files) = obs.open().find(|(p, _)| p.number == pull)?;
        let (id, _) = read::upgrade_branch(&p.head)?;
        let class = read::clusters(files.as_ref()?.get(t.cluster_file?)?)
            .into_iter()
            .find(|c| format!("{}-{}", c.namespace, c.name) == id)?
            .class;
        self.ledger
            .upgrade_declined
            .push(super::super::ledger::UpgradeDeclined {
                tenant: t.name,
                pull,
                branch: p.head.clone(),
                class,
                at: now,
                after_run: runs,
            });
        b.close_pull(&t.repo, pull);
        Some(())
    }

    pub(super) fn act_tick(&mut self, tenant: usize, branch: String, runs: usize) -> Option<()> {
        let name = self.tenants[tenant].name;
        // Not listed any more (merged, withdrawn): nothing to tick; a later listing is
        // planned again. A tick given stays planned: the person ticked, and does not
        // come back to tick again (the bot keeps a tick until the step opens; a run
        // that dropped it, listing the step again unticked, left its Cluster on a minor
        // past its end of life: `clusters-on-a-supported-minor-at-end-of-life`).
        let Some((number, title, body)) = self.dashboard() else {
            self.tick_planned.remove(&(tenant, branch));
            return None;
        };
        let mut ticked = false;
        let new: String = body
            .split_inclusive('\n')
            .map(|l| {
                let listed = read::approvals(l);
                if !ticked
                    && listed
                        .first()
                        .is_some_and(|(t, b, on)| t == name && *b == branch && !on)
                {
                    ticked = true;
                    l.replacen("- [ ]", "- [x]", 1)
                } else {
                    l.to_string()
                }
            })
            .collect();
        if !ticked {
            self.tick_planned.remove(&(tenant, branch));
            return None;
        }
        let person = self.backend.person(&self.loaded, self.clock.clone());
        if person
            .update_issue(&stacks_repo(), number, &title, &new)
            .is_err()
        {
            self.tick_planned.remove(&(tenant, branch));
            return None;
        }
        self.ledger.ticked.insert((name, branch), runs);
        Some(())
    }

    pub(super) fn act_join(&mut self, tenant: usize) -> Option<()> {
        let b = self.backend.as_ref();
        let t = self.tenants[tenant].clone();
        b.create_repo(&t.repo, &t.initial_files());
        self.active[tenant] = true;
        self.rewrite_config();
        Some(())
    }
}
