//! What a run reads of an OCI release beside its files: the manifest's creation date (the
//! date `status` shows) and the Kubernetes version of its `metadata.yaml` (by the one rule,
//! [`kubernetes_of`]). Read once per run and tag: the observation that pulled a series' latest
//! release notes what it read ([`OciReads::note`]), and the tenants and the status ask
//! [`OciReads::get`], which reads a tag only the first time (a manifest and one blob). Why: each
//! of the three read the same manifest and `metadata.yaml` again, so one run paid for them three
//! times and could see three answers.

use std::collections::BTreeMap;
use std::sync::Mutex;

use chrono::{DateTime, Utc};

use crate::model::{KubeVersion, ReleaseName};
use crate::oci::{OciError, Registry};
use crate::tenants::releases::kubernetes_of;

/// One OCI release as the run read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciRelease {
    /// The manifest's creation annotation (`oci.created_annotation`), when it carries one.
    pub created: Option<DateTime<Utc>>,
    /// `versions.kubernetes` of its `metadata.yaml`; `None` when it has none or it is unreadable.
    pub kubernetes: Option<KubeVersion>,
}

impl OciRelease {
    /// The facts of release `name` from its manifest's bytes and its `metadata.yaml`.
    pub fn of(name: &ReleaseName, manifest: &[u8], metadata: Option<&[u8]>) -> OciRelease {
        let v: serde_json::Value = serde_json::from_slice(manifest).unwrap_or_default();
        let created = v["annotations"][crate::oci::manifest::CREATED_ANNOTATION]
            .as_str()
            .and_then(|c| DateTime::parse_from_rfc3339(c).ok())
            .map(|c| c.with_timezone(&Utc));
        OciRelease {
            created,
            kubernetes: kubernetes_of(name, metadata, ""),
        }
    }
}

/// The OCI releases one run has read, by tag (`None`: the tag does not exist).
#[derive(Debug, Default)]
pub struct OciReads {
    read: Mutex<BTreeMap<String, Option<OciRelease>>>,
}

impl OciReads {
    /// Release `name` as this run read it, reading it from `registry` (its manifest and its
    /// `metadata.yaml`: two requests) only the first time.
    pub fn get(
        &self,
        registry: &Registry,
        name: &ReleaseName,
    ) -> Result<Option<OciRelease>, OciError> {
        let tag = name.to_string();
        if let Some(known) = self.read.lock().expect("OCI reads lock").get(&tag) {
            return Ok(known.clone());
        }
        let read = registry
            .manifest_and_file(&tag, "metadata.yaml")?
            .map(|(manifest, metadata)| OciRelease::of(name, &manifest, metadata.as_deref()));
        self.read
            .lock()
            .expect("OCI reads lock")
            .insert(tag, read.clone());
        Ok(read)
    }

    /// Note what another stage read of `tag` (the observation's pull of a series' latest).
    pub fn note(&self, tag: &str, release: OciRelease) {
        self.read
            .lock()
            .expect("OCI reads lock")
            .insert(tag.to_string(), Some(release));
    }

    /// Forget `tags` (this run pushed them: a tag read as missing before exists now).
    pub fn forget<'t>(&self, tags: impl IntoIterator<Item = &'t str>) {
        let mut read = self.read.lock().expect("OCI reads lock");
        for t in tags {
            read.remove(t);
        }
    }
}
