//! A forge release's Kubernetes version, by one rule for every reader: `status` (and so the
//! dashboard and the `release` summary) and the tenants' releases ask [`ForgeVersions::of`].
//! Why: the status read the notes first and the tenants `metadata.yaml` first, so a release
//! whose two said different versions had two answers in one run. The rule: the first version
//! of the release's minor its notes name (no request: the bot writes it there first), else
//! `versions.kubernetes` of its `metadata.yaml` (one download, once per run), by
//! [`kubernetes_of`].

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::forge::{Forge, ForgeError, ReleaseInfo, RepoRef};
use crate::model::{KubeVersion, ReleaseName};
use crate::tenants::releases::kubernetes_of;

/// The Kubernetes versions of forge releases one run has read, by release id.
#[derive(Debug, Default)]
pub struct ForgeVersions {
    read: Mutex<BTreeMap<u64, Option<KubeVersion>>>,
}

impl ForgeVersions {
    /// The Kubernetes version of release `r` (named `name`): from its notes, else from its
    /// `metadata.yaml`, downloaded the first time this run asks only; `None` when neither names
    /// one. A download that fails is the caller's to report (and is tried again if asked again).
    pub fn of(
        &self,
        forge: &dyn Forge,
        repo: &RepoRef,
        name: &ReleaseName,
        r: &ReleaseInfo,
    ) -> Result<Option<KubeVersion>, ForgeError> {
        if let Some(k) = kubernetes_of(name, None, &r.body) {
            return Ok(Some(k));
        }
        let Some(asset) = r.assets.iter().find(|a| a.name == "metadata.yaml") else {
            return Ok(None);
        };
        if let Some(known) = self.read.lock().expect("versions lock").get(&r.id) {
            return Ok(*known);
        }
        let meta = forge.download_asset(repo, r.id, asset)?;
        let k = kubernetes_of(name, Some(&meta), &r.body);
        self.read.lock().expect("versions lock").insert(r.id, k);
        Ok(k)
    }
}
