//! The OCI publish target of a world: a real registry (Debian's `docker-registry`, on
//! loopback) that the bot pushes releases to, that the checks list and pull, and where a
//! maintainer withdraws a release by deleting its manifest.

use stackbot::model::FileTree;
use stackbot::oci::{Credentials, OciTarget, Registry};

use crate::registry::TestRegistry;

pub const REPOSITORY: &str = "kaas/cluster-stacks";

pub struct Oci {
    server: TestRegistry,
    target: OciTarget,
}

impl Oci {
    /// A fresh registry; `None` when `STACKBOT_SKIP_REGISTRY=1` says to skip registry tests.
    pub fn start() -> Option<Oci> {
        let server = TestRegistry::start()?;
        let target = OciTarget::new(
            &server.addr,
            &format!("{}/{REPOSITORY}", server.addr),
            true,
            Credentials::Anonymous,
        )
        .expect("loopback target");
        Some(Oci { server, target })
    }

    /// A client per use: the bot's runs use short-lived clients too, and a pooled connection
    /// kept idle between two runs of a simulation can hang on a registry that dropped it.
    fn client(&self) -> Registry {
        Registry::connect(self.target.clone()).expect("registry client")
    }

    /// The `publish:` and `oci:` sections: publish to the registry only.
    pub fn yaml(&self) -> String {
        format!(
            "publish: [oci]\noci:\n  registry: \"{a}\"\n  repository: \"{a}/{REPOSITORY}\"\n  plain_http: true\n",
            a = self.server.addr
        )
    }

    /// Every tag of the repository.
    pub fn tags(&self) -> Vec<String> {
        let mut t = self.client().list_tags().unwrap_or_default();
        t.sort();
        t
    }

    /// The files of a release, as CSO downloads them.
    pub fn pull(&self, tag: &str) -> Option<FileTree> {
        self.client().pull_release(tag).ok()
    }

    /// Withdraw a release: delete its manifest (every tag pointing at it goes with it), as
    /// `DELETE /v2/<name>/manifests/<digest>` does.
    pub fn delete(&self, tag: &str) -> bool {
        let Ok(Some((_, digest))) = self.client().manifest(tag) else {
            return false;
        };
        let url = format!(
            "http://{}/v2/{REPOSITORY}/manifests/{digest}",
            self.server.addr
        );
        reqwest::blocking::Client::new()
            .delete(url)
            .send()
            .is_ok_and(|r| r.status().is_success())
    }
}
