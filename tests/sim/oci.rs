//! The OCI publish target of a world: a real registry (Debian's `docker-registry`, on
//! loopback) that the bot pushes releases to, that the checks list and pull, and where a
//! maintainer withdraws a release by deleting its manifest. The checks read it with plain
//! HTTP requests of the distribution API (tags list, manifest, blobs), never with the bot's
//! registry client: what they see is what any OCI client (CSO, oras) would get.

use std::collections::BTreeMap;

use crate::registry::TestRegistry;

pub const REPOSITORY: &str = "kaas/cluster-stacks";
/// The media type the bot pushes release manifests with (and CSO asks for).
const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// The layer annotation naming a release file (oras's file store).
const TITLE: &str = "org.opencontainers.image.title";

pub struct Oci {
    server: TestRegistry,
}

/// A plain HTTP client (the registry is on loopback without TLS; reqwest still wants a
/// crypto provider chosen, as the bot's own clients do).
fn client() -> reqwest::blocking::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::blocking::Client::new()
}

impl Oci {
    /// A fresh registry (the test fails, saying what to install, when there is none).
    pub fn start() -> Oci {
        Oci {
            server: TestRegistry::start(),
        }
    }

    /// A client per use: a pooled connection kept idle between two runs of a simulation can
    /// hang on a registry that dropped it.
    fn get(&self, path: &str) -> Option<reqwest::blocking::Response> {
        let r = client()
            .get(format!(
                "http://{}/v2/{REPOSITORY}/{path}",
                self.server.addr
            ))
            .header("Accept", MANIFEST)
            .send()
            .ok()?;
        r.status().is_success().then_some(r)
    }

    /// The `publish:` (`[oci]` or `[forge, oci]`) and `oci:` sections.
    pub fn yaml(&self, publish: &str) -> String {
        format!(
            "publish: {publish}\noci:\n  registry: \"{a}\"\n  repository: \"{a}/{REPOSITORY}\"\n  plain_http: true\n",
            a = self.server.addr
        )
    }

    /// Every tag of the repository (`GET /v2/<name>/tags/list`; a repository nobody pushed to
    /// yet answers 404: no tags).
    pub fn tags(&self) -> Vec<String> {
        let mut t: Vec<String> = self
            .get("tags/list")
            .and_then(|r| r.json::<serde_json::Value>().ok())
            .and_then(|v| {
                Some(
                    v["tags"]
                        .as_array()?
                        .iter()
                        .filter_map(|t| Some(t.as_str()?.to_string()))
                        .collect(),
                )
            })
            .unwrap_or_default();
        t.sort();
        t
    }

    /// The manifest of `tag` and its digest (`Docker-Content-Digest`).
    fn manifest(&self, tag: &str) -> Option<(serde_json::Value, String)> {
        let r = self.get(&format!("manifests/{tag}"))?;
        let digest = r
            .headers()
            .get("Docker-Content-Digest")?
            .to_str()
            .ok()?
            .to_string();
        Some((r.json().ok()?, digest))
    }

    /// The files of a release, as CSO downloads them: every layer with a title, by title.
    pub fn pull(&self, tag: &str) -> Option<BTreeMap<String, Vec<u8>>> {
        let (m, _) = self.manifest(tag)?;
        let mut files = BTreeMap::new();
        for layer in m["layers"].as_array()? {
            let (Some(title), Some(digest)) = (
                layer["annotations"][TITLE].as_str(),
                layer["digest"].as_str(),
            ) else {
                continue;
            };
            let bytes = self.get(&format!("blobs/{digest}"))?.bytes().ok()?;
            files.insert(title.to_string(), bytes.to_vec());
        }
        Some(files)
    }

    /// Withdraw a release: delete its manifest (every tag pointing at it goes with it), as
    /// `DELETE /v2/<name>/manifests/<digest>` does.
    pub fn delete(&self, tag: &str) -> bool {
        let Some((_, digest)) = self.manifest(tag) else {
            return false;
        };
        let url = format!(
            "http://{}/v2/{REPOSITORY}/manifests/{digest}",
            self.server.addr
        );
        client()
            .delete(url)
            .send()
            .is_ok_and(|r| r.status().is_success())
    }
}
