//! What a run reads of an OCI release beside its files: the manifest's creation date (the
//! date `status` shows) and the Kubernetes version of its `metadata.yaml` (by the one rule,
//! [`kubernetes_of`]). Read once per run and tag: the observation that pulled a series' latest
//! release notes what it read ([`OciReads::note`]), and the tenants and the status ask
//! [`OciReads::get`], which reads a tag only the first time (a manifest and one blob). Why: each
//! of the three read the same manifest and `metadata.yaml` again, so one run paid for them three
//! times and could see three answers.

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
    read: super::Memo<String, Option<OciRelease>>,
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
        self.read.get_or(tag.clone(), || {
            let read = registry.manifest_and_file(&tag, "metadata.yaml")?;
            Ok(read.map(|(manifest, meta)| OciRelease::of(name, &manifest, meta.as_deref())))
        })
    }

    /// Note what another stage read of `tag` (the observation's pull of a series' latest).
    pub fn note(&self, tag: &str, release: OciRelease) {
        self.read.insert(tag.to_string(), Some(release));
    }

    /// Forget `tags` (this run pushed them: a tag read as missing before exists now).
    pub fn forget<'t>(&self, tags: impl IntoIterator<Item = &'t str>) {
        for t in tags {
            self.read.remove(&t.to_string());
        }
    }
}
