//! The OCI side of the release sequence, in the shape `plan` and `apply` need. The pure parts
//! (`oci_config`, `created_for`, `OciPlanSettings`, what a push did) are
//! `stackbot_core::oci::publish`, re-exported here; this file adds what needs the target's
//! credentials or the registry.
//!
//! `plan` calls [`describe`] (no registry contact, no credentials: the digest is a function
//! of the files); observing calls [`Publisher::tags`] so numbering accounts for every OCI tag;
//! `apply` calls [`Publisher::publish`] after the forge release (or alone when `publish` is
//! only `oci`), which pushes and then verifies what it pushed.

pub use stackbot_core::oci::publish::*;

use super::OciError;
use super::manifest::{PushDescription, ReleaseFacts, describe_push};
use super::registry::Registry;
use super::target::OciTarget;
use crate::config::Config;
use crate::model::{FileTree, ReleaseName};

/// What pushing `assets` as `tag` will do, for `plan` / `release --dry-run`. `None` when
/// `publish` does not list `oci`. Reads `OCI_REGISTRY`/`OCI_REPOSITORY` through `env` when the
/// config leaves them out; never needs credentials.
pub fn describe(
    config: &Config,
    now: chrono::NaiveDate,
    tag: &str,
    assets: &FileTree,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<PushDescription>, OciError> {
    let Some(oci) = oci_config(config) else {
        return Ok(None);
    };
    let target = OciTarget::from_config(oci, env)?;
    let facts = ReleaseFacts::from_files(assets)?;
    let created = created_for(oci, now);
    describe_push(&target.reference(), tag, assets, &facts, created.as_deref()).map(Some)
}

/// The [`OciPlanSettings`] of a run: `None` when `publish` does not list `oci`.
fn plan_settings(
    config: &Config,
    now: chrono::NaiveDate,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<OciPlanSettings>, OciError> {
    let Some(oci) = oci_config(config) else {
        return Ok(None);
    };
    let target = OciTarget::from_config(oci, env)?;
    Ok(Some(OciPlanSettings {
        target: target.reference(),
        created: created_for(oci, now),
        only: !config.publishes_on_forge(),
    }))
}

/// The OCI parts of `apply::Target` for a run: `(settings.oci, oci)`, both `None` unless
/// `publish` lists `oci`. The CLI calls this once with `|k| std::env::var(k).ok()`; errors
/// are invalid input ([`OciError::is_invalid_input`]) except a failing client setup.
/// `clock` is the run's: the registry's retries wait on it and a call's retries are bounded
/// by it (without one, a retry would go out at once and a `429` be repeated back to back).
pub fn for_run(
    config: &Config,
    now: chrono::NaiveDate,
    clock: stackbot_core::clock::SharedClock,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(Option<OciPlanSettings>, Option<std::sync::Arc<Publisher>>), OciError> {
    let settings = plan_settings(config, now, &env)?;
    let publisher = Publisher::from_config(config, now, &env)?
        .map(|p| std::sync::Arc::new(p.with_clock(clock)));
    Ok((settings, publisher))
}

/// What a tag holds: each file's sha256 (its layer, by title) and the manifest's digest (our
/// own hash of its bytes), which pins exactly these bytes whatever the tag says later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub layers: std::collections::BTreeMap<String, String>,
    pub digest: String,
}

/// A connected OCI target plus the run's settings.
#[derive(Debug)]
pub struct Publisher {
    registry: Registry,
    created: Option<String>,
}

impl Publisher {
    /// `None` when `publish` does not list `oci`. Contacts nothing yet.
    pub fn from_config(
        config: &Config,
        now: chrono::NaiveDate,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, OciError> {
        let Some(oci) = oci_config(config) else {
            return Ok(None);
        };
        let target = OciTarget::from_config(oci, env)?;
        Ok(Some(Publisher {
            registry: Registry::connect(target)?,
            created: created_for(oci, now),
        }))
    }

    /// Wait between the registry's retries on the run's `clock` ([`Registry::with_clock`]).
    pub fn with_clock(mut self, clock: stackbot_core::clock::SharedClock) -> Self {
        self.registry = self.registry.with_clock(clock);
        self
    }

    /// The underlying registry (pull, verify, list).
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Every tag of the repository: the run's [`stackbot_core::index::ReleaseIndex`] reads them.
    pub fn tags(&self) -> Result<Vec<String>, OciError> {
        self.registry.list_tags()
    }

    /// Push `assets` as `tag` (a no-op if already there) and verify the result.
    pub fn publish(&self, tag: &str, assets: &FileTree) -> Result<Published, OciError> {
        self.publish_as(tag, assets, None)
    }

    /// Push the conformance gate's candidate `tag` of `stable` (its assets: `stable`'s, byte
    /// for byte, and the chart's second name) and verify it as a candidate
    /// ([`Registry::verify_candidate`]).
    pub fn publish_candidate(
        &self,
        tag: &str,
        assets: &FileTree,
        stable: &ReleaseName,
    ) -> Result<Published, OciError> {
        self.publish_as(tag, assets, Some(stable))
    }

    fn publish_as(
        &self,
        tag: &str,
        assets: &FileTree,
        of: Option<&ReleaseName>,
    ) -> Result<Published, OciError> {
        let facts = ReleaseFacts::from_files(assets)?;
        let outcome = self
            .registry
            .push_release(tag, assets, &facts, self.created.as_deref())?;
        let verified = self.registry.verify_as(tag, assets, of)?;
        Ok(Published {
            reference: self.registry.target().reference(),
            tag: tag.to_string(),
            outcome,
            verified,
        })
    }

    /// What the registry holds under `tag` (one manifest read, no blob): `None` when the tag
    /// does not exist.
    pub fn held(&self, tag: &str) -> Result<Option<Held>, OciError> {
        Ok(self.registry.manifest(tag)?.map(|(json, digest)| Held {
            layers: super::manifest::layer_sha256s(&json),
            digest,
        }))
    }

    /// `<registry>/<repository>:<tag>`, the reference CSO and `oras pull` use.
    pub fn reference_of(&self, tag: &str) -> String {
        format!("{}:{tag}", self.registry.target().reference())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(yaml: &str) -> Config {
        yaml_serde::from_str(yaml).unwrap()
    }

    #[test]
    fn only_configs_that_publish_to_oci_describe_a_push() {
        let forge_only = config(
            "stacks: []\noci: {registry: r.example, repository: r.example/kaas/cluster-stacks}\n",
        );
        let assets = FileTree::new();
        let now = chrono::NaiveDate::from_ymd_opt(2026, 5, 1).unwrap();
        assert!(
            describe(&forge_only, now, "openstack-scs2-1-34-v1", &assets, |_| {
                None
            })
            .unwrap()
            .is_none()
        );
        let both = config("stacks: []\npublish: [github, oci]\noci: {created_annotation: true}\n");
        let env = |k: &str| match k {
            "OCI_REGISTRY" => Some("r.example".to_string()),
            "OCI_REPOSITORY" => Some("r.example/kaas/cluster-stacks".to_string()),
            _ => None,
        };
        let mut assets = FileTree::new();
        assets.insert(
            "metadata.yaml".into(),
            b"versions:\n    clusterStack: v1\n    kubernetes: v1.34.7\n".to_vec(),
        );
        assets.insert(
            "hashes.json".into(),
            br#"{"clusterStack":"abcdefghi"}"#.to_vec(),
        );
        let d = describe(&both, now, "openstack-scs2-1-34-v1", &assets, env)
            .unwrap()
            .unwrap();
        assert_eq!(d.target, "r.example/kaas/cluster-stacks");
        assert_eq!(
            d.annotations["org.opencontainers.image.created"],
            "2026-05-01T00:00:00Z"
        );
        assert_eq!(d.annotations["hash"], "abcdefg");
    }
}
