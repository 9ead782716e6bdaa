//! A forge release's Kubernetes version, by one rule for every reader: `status` (and so the
//! dashboard and the `release` summary) and the tenants' releases ask [`ForgeVersions::of`].
//! Why: the status read the notes first and the tenants `metadata.yaml` first, so a release
//! whose two said different versions had two answers in one run. The rule: the first version
//! of the release's minor its notes name (no request: the bot writes it there first), else
//! `versions.kubernetes` of its `metadata.yaml` (one download, once per run), by
//! [`kubernetes_of`].

use crate::forge::{Forge, ForgeError, ReleaseInfo, RepoRef};
use crate::model::{KubeVersion, ReleaseName};
use crate::package::metadata::kubernetes as metadata_kubernetes;
use crate::tenants::releases::kubernetes_of;

/// What a forge release says of its Kubernetes version ([`ForgeVersions::of`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kubernetes {
    /// Named by its notes or its `metadata.yaml`.
    Known(KubeVersion),
    /// Named nowhere: its notes name none and it has no `metadata.yaml` asset.
    NoneNamed,
    /// Its `metadata.yaml` downloaded but says no version: not YAML, over a limit, no
    /// `versions.kubernetes`, or not a Kubernetes version there. What is wrong, for a person to
    /// fix (the file is replaced by hand).
    Unreadable(String),
}

/// The Kubernetes versions of forge releases one run has read, by release id.
#[derive(Debug, Default)]
pub struct ForgeVersions {
    read: super::Memo<u64, Kubernetes>,
}

impl ForgeVersions {
    /// The Kubernetes version of release `r` (named `name`): from its notes, else from its
    /// `metadata.yaml`, downloaded the first time this run asks only; [`Kubernetes::NoneNamed`]
    /// when its notes name none and there is no `metadata.yaml`, [`Kubernetes::Unreadable`]
    /// when the file downloaded says none (with what is wrong). A download that fails is the
    /// caller's to report (and is tried again if asked again).
    pub fn of(
        &self,
        forge: &dyn Forge,
        repo: &RepoRef,
        name: &ReleaseName,
        r: &ReleaseInfo,
    ) -> Result<Kubernetes, ForgeError> {
        if let Some(k) = kubernetes_of(name, None, &r.body) {
            return Ok(Kubernetes::Known(k));
        }
        let Some(asset) = r.assets.iter().find(|a| a.name == "metadata.yaml") else {
            return Ok(Kubernetes::NoneNamed);
        };
        self.read.get_or(r.id, || {
            let meta = forge.download_asset(repo, r.id, asset)?;
            Ok(match metadata_kubernetes(&meta) {
                Ok(k) => Kubernetes::Known(k),
                Err(why) => Kubernetes::Unreadable(why),
            })
        })
    }
}
