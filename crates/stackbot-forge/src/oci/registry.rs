//! The registry adapter: reconcile one tag with a release, list tags, pull a release back.
//!
//! Built on the `oci-client` crate (the ORAS project's Rust client) for the distribution
//! protocol: auth challenges, token and basic auth, blob upload sessions and digest-checked
//! downloads. `oci-client` is async; the bot's shell is synchronous, so each call blocks on
//! the process's one runtime (never call these methods from inside another async runtime).
//!
//! The one HTTP policy of stackbot_net holds here too: the connect and read timeouts of
//! [`stackbot_net::timeouts`], and every call through [`stackbot_net::retry::run`] with its
//! classification (a `5xx`, a rate limit, a connection failure that heals), a bounded number
//! of retries and a bounded total time ([`TOTAL`]). Reads are repeated; of the writes, only
//! those whose repetition is safe, each saying why where it is sent. oci-client's errors
//! carry the status but not the headers, so a `Retry-After` is not seen: the policy backs
//! off instead, and a `429` waits its minute. The loop is stackbot_net's, not oci-client's:
//! oci-client retries nothing itself.
//!
//! Reconciliation, not scripting: a push first reads the tag. Same manifest digest: done.
//! Different digest: refuse, naming both, before uploading anything. Absent: upload only the
//! blobs the registry lacks (content-addressed, so a push interrupted after some blobs is
//! completed by the next run), then put the manifest under the tag. The registry offers no
//! compare-and-swap on tags, so two bots pushing the same tag at once are kept apart by the
//! release sequence's own concurrency guard, not here.

use std::collections::BTreeSet;

use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use stackbot_core::clock::SharedClock;
use stackbot_net::retry::{self, Ended, Failure, RetryPolicy, Step, Waits};

use super::manifest::{
    BuiltManifest, MANIFEST_MEDIA_TYPE, Manifest, ReleaseFacts, check_file_name,
};
use super::publish::{PushOutcome, VerifyReport};
use super::target::{Credentials, OciTarget, host_of};
use super::{OciError, sha256_digest, verify};
use crate::RELEASE_FILE_CEILING;
use crate::model::{FileTree, ReleaseName};

/// Manifest types asked for when reading a tag: ours, plus whatever else might sit under a
/// tag, so a conflicting non-OCI manifest is reported rather than mistaken for "absent".
const ACCEPT: &[&str] = &[
    MANIFEST_MEDIA_TYPE,
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
];

/// The longest a registry call may take with its retries (with a clock: see
/// [`Registry::with_clock`]); a wait that would end later gives up, transient.
pub const TOTAL: std::time::Duration = std::time::Duration::from_secs(300);

/// Page size asked for when listing tags.
pub const DEFAULT_PAGE_SIZE: usize = 100;
/// Upper bound on tag pages, so a registry that ignores `last` cannot loop us forever.
const MAX_PAGES: usize = 10_000;
/// Largest single file read alone (`pull_file`: a release's `metadata.yaml`, about 250 bytes).
const ONE_FILE_CEILING: u64 = 1 << 20;

/// What a blob is read into: refused with `FileTooLarge` past `max` bytes, before they are
/// held, so a registry that sends more than the manifest declares costs no more memory.
struct Capped {
    bytes: Vec<u8>,
    max: u64,
}

impl tokio::io::AsyncWrite for Capped {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let result = if this.bytes.len() as u64 + buf.len() as u64 > this.max {
            Err(too_large_io(format!(
                "the registry sent more than the {} bytes the manifest declares",
                this.max
            )))
        } else {
            this.bytes.extend_from_slice(buf);
            Ok(buf.len())
        };
        std::task::Poll::Ready(result)
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

fn too_large_io(why: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::FileTooLarge, why)
}

fn too_large(why: String) -> OciDistributionError {
    OciDistributionError::IoError(too_large_io(why))
}

/// A manifest's bytes and one file of its release (`None`: no layer carries that title).
pub type ManifestAndFile = (Vec<u8>, Option<Vec<u8>>);

/// A connection to one OCI repository.
pub struct Registry {
    target: OciTarget,
    client: Client,
    auth: RegistryAuth,
    /// The process's one runtime (stackbot_net::runtime), shared with the GitHub forge.
    rt: &'static tokio::runtime::Runtime,
    page_size: usize,
    /// The one retry policy's numbers for this host (fast backoff on loopback).
    policy: RetryPolicy,
    /// The run's clock the retries wait on; without one they are sent again at once.
    clock: Option<SharedClock>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

fn is_not_found(e: &OciDistributionError) -> bool {
    match e {
        OciDistributionError::ImageManifestNotFoundError(_) => true,
        OciDistributionError::ServerError { code, .. } => *code == 404,
        OciDistributionError::RegistryError { envelope, .. } => envelope.errors.iter().any(|e| {
            matches!(
                e.code,
                OciErrorCode::ManifestUnknown
                    | OciErrorCode::NameUnknown
                    | OciErrorCode::NotFound
                    | OciErrorCode::BlobUnknown
            )
        }),
        _ => false,
    }
}

fn is_unauthorized(e: &OciDistributionError) -> bool {
    match e {
        OciDistributionError::UnauthorizedError { .. }
        | OciDistributionError::AuthenticationFailure(_) => true,
        OciDistributionError::ServerError { code, .. } => *code == 401 || *code == 403,
        OciDistributionError::RegistryError { envelope, .. } => envelope
            .errors
            .iter()
            .any(|e| matches!(e.code, OciErrorCode::Unauthorized | OciErrorCode::Denied)),
        _ => false,
    }
}

impl Registry {
    /// Prepare a client for `target`. Contacts nothing.
    pub fn connect(target: OciTarget) -> Result<Self, OciError> {
        crate_crypto_provider();
        let config = ClientConfig {
            protocol: if target.plain_http {
                ClientProtocol::Http
            } else {
                ClientProtocol::Https
            },
            // Release blobs are small; one PUT per blob is simpler for every registry.
            use_monolithic_push: true,
            connect_timeout: Some(stackbot_net::timeouts::CONNECT),
            read_timeout: Some(stackbot_net::timeouts::READ),
            ..Default::default()
        };
        let client = Client::try_from(config).map_err(|e| OciError::Registry {
            action: "creating a client for",
            reference: target.reference(),
            message: target.credentials.redact(&e.to_string()),
        })?;
        let auth = match &target.credentials {
            Credentials::Anonymous => RegistryAuth::Anonymous,
            Credentials::Bearer(t) => RegistryAuth::Bearer(t.expose().to_string()),
            Credentials::Basic { username, password } => {
                RegistryAuth::Basic(username.clone(), password.expose().to_string())
            }
        };
        let rt = stackbot_net::runtime::runtime().map_err(|e| OciError::Registry {
            action: "starting the I/O runtime for",
            reference: target.reference(),
            message: e.to_string(),
        })?;
        // Keyed like oci-client looks it up (`docker.io` resolves to `index.docker.io`), so
        // blob and manifest requests, which do not store auth themselves, find it.
        let probe = Reference::with_tag(
            target.registry.clone(),
            target.repository.clone(),
            "latest".into(),
        );
        rt.block_on(client.store_auth_if_needed(probe.resolve_registry(), &auth));
        let policy = RetryPolicy {
            max_retries: 4,
            max_rate_limit_wait: std::time::Duration::from_secs(60),
            ..RetryPolicy::for_host(super::target::is_loopback(&target.registry))
        };
        Ok(Registry {
            target,
            client,
            auth,
            rt,
            page_size: DEFAULT_PAGE_SIZE,
            policy,
            clock: None,
        })
    }

    /// Wait between retries on the run's `clock` (and bound a call by [`TOTAL`] on it).
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// What the one retry policy makes of a failed call: `None` is a definite answer.
    fn failure(&self, e: &OciDistributionError) -> Option<Failure> {
        let now = self
            .clock
            .as_ref()
            .map_or(chrono::DateTime::UNIX_EPOCH, |c| c.now());
        let by_status = |status: http::StatusCode, body: &[u8]| {
            retry::classify_status(status, &http::HeaderMap::new(), body, now)
        };
        match e {
            OciDistributionError::ServerError { code, message, .. } => {
                by_status(http::StatusCode::from_u16(*code).ok()?, message.as_bytes())
            }
            OciDistributionError::RegistryError { envelope, .. }
                if envelope
                    .errors
                    .iter()
                    .any(|e| e.code == OciErrorCode::Toomanyrequests) =>
            {
                by_status(http::StatusCode::TOO_MANY_REQUESTS, b"")
            }
            // A `HEAD` (blob_exists) reports a status as reqwest's error.
            OciDistributionError::RequestError(r) if r.status().is_some() => {
                by_status(r.status()?, b"")
            }
            // A blob past its bound (`Capped`): asked again, it is as large.
            OciDistributionError::IoError(io) if io.kind() == std::io::ErrorKind::FileTooLarge => {
                None
            }
            OciDistributionError::RequestError(_) | OciDistributionError::IoError(_) => {
                stackbot_net::net::failure::classify(e, host_of(&self.target.registry))
                    .heals_in_seconds()
                    .then_some(Failure::Transient(None))
            }
            _ => None,
        }
    }

    /// `call` under the one retry loop: sent again while [`Registry::failure`] says a retry
    /// may mend it. Only for calls whose repetition is safe (the caller says why).
    fn retried<T>(
        &self,
        mut call: impl AsyncFnMut() -> Result<T, OciDistributionError>,
    ) -> Result<T, OciDistributionError> {
        let waits = Waits {
            clock: self.clock.as_deref(),
            by: self
                .clock
                .as_ref()
                .map(|c| c.now() + chrono::Duration::from_std(TOTAL).unwrap_or_default()),
        };
        let attempt = async |_| match call().await {
            Ok(t) => Step::Done(t),
            Err(e) => match self.failure(&e) {
                Some(f) => Step::Again(f, e),
                None => Step::Stop(e),
            },
        };
        let retrying = |n: u32, wait: std::time::Duration, e: &OciDistributionError| {
            tracing::info!(
                "registry {}: attempt {} failed ({}); retrying in {} ms",
                self.target.reference(),
                n + 1,
                self.target.credentials.redact(&e.to_string()),
                wait.as_millis()
            );
        };
        self.rt
            .block_on(retry::run(&self.policy, waits, attempt, retrying))
            .map_err(|(Ended::Stopped(e) | Ended::GaveUp { last: e, .. })| e)
    }

    /// Ask for `n` tags per page (tests use small pages to exercise pagination).
    pub fn with_page_size(mut self, n: usize) -> Self {
        self.page_size = n.max(1);
        self
    }

    /// The target this registry pushes to.
    pub fn target(&self) -> &OciTarget {
        &self.target
    }

    fn reference(&self, tag: &str) -> Reference {
        Reference::with_tag(
            self.target.registry.clone(),
            self.target.repository.clone(),
            tag.to_string(),
        )
    }

    /// `registry/repository:tag`, for messages.
    fn tagged(&self, tag: &str) -> String {
        format!("{}:{tag}", self.target.reference())
    }

    /// The manifest `json` under `tag`, read as an OCI image manifest.
    fn parse_manifest(&self, tag: &str, json: &[u8]) -> Result<Manifest, OciError> {
        serde_json::from_slice(json).map_err(|e| OciError::Verify {
            reference: self.tagged(tag),
            problems: vec![format!("the manifest is not an OCI image manifest: {e}")],
        })
    }

    fn err(&self, action: &'static str, what: &str, e: OciDistributionError) -> OciError {
        let reference = format!("{}{what}", self.target.reference());
        let message = if is_unauthorized(&e) {
            format!(
                "the registry refused access with {} credentials ({e}); set the access token or \
username/password variables named in the `oci:` config (defaults `OCI_ACCESS_TOKEN`, `OCI_USERNAME`, `OCI_PASSWORD`)",
                self.target.credentials.kind()
            )
        } else {
            e.to_string()
        };
        OciError::Registry {
            action,
            reference,
            message: self.target.credentials.redact(&message),
        }
    }

    /// The manifest under `tag`: its exact bytes and their digest, or `None` if the tag
    /// does not exist (or the repository does not exist yet).
    pub fn manifest(&self, tag: &str) -> Result<Option<(Vec<u8>, String)>, OciError> {
        let reference = self.reference(tag);
        // A read: repeated freely.
        match self.retried(async || {
            self.client
                .pull_manifest_raw(&reference, &self.auth, ACCEPT)
                .await
        }) {
            Ok((bytes, _)) => {
                // Our own hash of the bytes, not the registry's label for them.
                let digest = sha256_digest(&bytes);
                Ok(Some((bytes.to_vec(), digest)))
            }
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(self.err("reading tag", &format!(":{tag}"), e)),
        }
    }

    /// Whether the repository holds a blob.
    pub fn blob_exists(&self, digest: &str) -> Result<bool, OciError> {
        let reference = self.reference("latest");
        // A read (`HEAD`): repeated freely.
        self.retried(async || self.client.blob_exists(&reference, digest).await)
            .map_err(|e| self.err("checking blob in", &format!("@{digest}"), e))
    }

    /// Upload one blob (the registry checks it against `digest`). Content-addressed, so
    /// uploading a blob twice is harmless; [`Registry::push_built`] skips blobs that exist.
    pub fn upload_blob(&self, digest: &str, bytes: &[u8]) -> Result<(), OciError> {
        let reference = self.reference("latest");
        // Repeated: content-addressed. The registry keeps the bytes under their digest and
        // checks them, so a second upload of a blob an ambiguous first one did store leaves
        // the same blob; an upload session the first left open is the registry's to expire.
        self.retried(async || {
            self.client
                .push_blob(&reference, bytes.to_vec(), digest)
                .await
        })
        .map_err(|e| self.err("uploading blob to", &format!("@{digest}"), e))?;
        Ok(())
    }

    /// Publish `files` under `tag`, reconciling with what the tag already holds (see the
    /// module docs). `created` adds an RFC 3339 creation annotation, only when configured.
    pub fn push_release(
        &self,
        tag: &str,
        files: &FileTree,
        facts: &ReleaseFacts,
        created: Option<&str>,
    ) -> Result<PushOutcome, OciError> {
        ReleaseName::parse(tag).map_err(|e| OciError::Release(e.to_string()))?;
        let built = super::manifest::build_manifest(files, facts, created)?;
        self.push_built(tag, files, &built)
    }

    /// [`Registry::push_release`] for a manifest already built (e.g. the one `plan` showed).
    pub fn push_built(
        &self,
        tag: &str,
        files: &FileTree,
        built: &BuiltManifest,
    ) -> Result<PushOutcome, OciError> {
        if let Some((json, existing)) = self.manifest(tag)? {
            if super::manifest::same_release(&json, built) {
                return Ok(PushOutcome::AlreadyPresent { digest: existing });
            }
            return Err(OciError::TagConflict {
                repository: self.target.reference(),
                tag: tag.to_string(),
                existing,
                wanted: built.digest.clone(),
            });
        }
        let (mut uploaded, mut reused) = (0, 0);
        for (digest, bytes) in built.blobs(files) {
            if self.blob_exists(digest)? {
                reused += 1;
                continue;
            }
            self.upload_blob(digest, bytes)?;
            uploaded += 1;
        }
        self.put_manifest(tag, built)?;
        tracing::info!(
            reference = %self.tagged(tag),
            digest = %built.digest,
            uploaded, reused, "pushed release"
        );
        Ok(PushOutcome::Pushed {
            digest: built.digest.clone(),
            blobs_uploaded: uploaded,
            blobs_reused: reused,
        })
    }

    /// One blob's bytes, checked against `digest` while downloading. A read: repeated
    /// freely, each attempt from the start. Held whole, so bounded: by the size the manifest
    /// declares (a registry that sends more is wrong) and by `ceiling`, since a manifest is
    /// written by whoever may push and can declare any size. Past either, refused, and not
    /// asked again ([`Registry::failure`]).
    fn pull_blob(
        &self,
        reference: &Reference,
        digest: &str,
        (declared, ceiling): (u64, u64),
    ) -> Result<Vec<u8>, OciDistributionError> {
        if declared > ceiling {
            return Err(too_large(format!(
                "the manifest declares {declared} bytes for blob {digest}, more than the {ceiling} bytes a release file may have"
            )));
        }
        self.retried(async || {
            let mut out = Capped {
                bytes: Vec::with_capacity(usize::try_from(declared).unwrap_or(0)),
                max: declared,
            };
            self.client.pull_blob(reference, digest, &mut out).await?;
            Ok(out.bytes)
        })
    }

    /// Put `built` under `tag`, which [`Registry::push_built`] just read as absent. Not
    /// repeated blindly: between our attempts another pusher may have put another manifest
    /// there, which a repeated `PUT` would overwrite. So after a failure that may have taken
    /// effect, the tag is read first: our digest is done, another is a conflict, and only a
    /// tag still absent gets the `PUT` again (the same bytes: what the first attempt would
    /// have left).
    fn put_manifest(&self, tag: &str, built: &BuiltManifest) -> Result<(), OciError> {
        let reference = self.reference(tag);
        let conflict = |existing: String| OciError::TagConflict {
            repository: self.target.reference(),
            tag: tag.to_string(),
            existing,
            wanted: built.digest.clone(),
        };
        let (mut conflicting, mut sent) = (None, false);
        let put = self.retried(async || {
            if std::mem::replace(&mut sent, true) {
                match self
                    .client
                    .pull_manifest_raw(&reference, &self.auth, ACCEPT)
                    .await
                {
                    Ok((bytes, _)) if sha256_digest(&bytes) == built.digest => return Ok(()),
                    Ok((bytes, _)) => {
                        conflicting = Some(sha256_digest(&bytes));
                        return Ok(());
                    }
                    Err(e) if is_not_found(&e) => {}
                    Err(e) => return Err(e),
                }
            }
            let media = reqwest::header::HeaderValue::from_static(MANIFEST_MEDIA_TYPE);
            self.client
                .push_manifest_raw(&reference, built.json.clone(), media)
                .await
                .map(drop)
        });
        put.map_err(|e| self.err("pushing manifest to", &format!(":{tag}"), e))?;
        conflicting.map_or(Ok(()), |existing| Err(conflict(existing)))
    }

    /// Every tag in the repository, following pagination (`n` + `last`) until a page brings
    /// nothing new. An empty or not-yet-created repository has no tags.
    pub fn list_tags(&self) -> Result<Vec<String>, OciError> {
        let reference = self.reference("latest");
        let mut seen = BTreeSet::new();
        let mut all = Vec::new();
        let mut last: Option<String> = None;
        for _ in 0..MAX_PAGES {
            // A read: repeated freely.
            let page = match self.retried(async || {
                let n = Some(self.page_size);
                let after = last.as_deref();
                self.client
                    .list_tags(&reference, &self.auth, n, after)
                    .await
            }) {
                Ok(p) => p.tags,
                Err(e) if is_not_found(&e) => Vec::new(),
                Err(e) => return Err(self.err("listing tags of", "", e)),
            };
            let before = all.len();
            for tag in &page {
                if seen.insert(tag.clone()) {
                    all.push(tag.clone());
                }
            }
            // Stop on an empty page or one with nothing new (a registry ignoring `last`).
            // Never stop on a short page: registries may cap `n` below what was asked.
            if all.len() == before {
                return Ok(all);
            }
            last = page.last().cloned();
        }
        Ok(all)
    }

    /// Download the release under `tag` as CSO does: every titled layer becomes a file of
    /// that name (layer digests are verified while downloading).
    pub fn pull_release(&self, tag: &str) -> Result<FileTree, OciError> {
        self.pull_release_and_manifest(tag).map(|(_, files)| files)
    }

    /// [`Registry::pull_release`] with the manifest's bytes, for a reader that also wants its
    /// annotations (the creation date): the manifest is fetched once.
    pub fn pull_release_and_manifest(&self, tag: &str) -> Result<(Vec<u8>, FileTree), OciError> {
        let (json, _) = self.manifest(tag)?.ok_or_else(|| OciError::Registry {
            action: "pulling",
            reference: self.tagged(tag),
            message: "the tag does not exist".into(),
        })?;
        let manifest = self.parse_manifest(tag, &json)?;
        let reference = self.reference(tag);
        let mut files = FileTree::new();
        for layer in &manifest.layers {
            let Some(title) = layer.title() else {
                tracing::warn!(digest = %layer.digest, "skipping untitled layer (CSO skips it too)");
                continue;
            };
            let bad = |problem: String| OciError::Verify {
                reference: self.tagged(tag),
                problems: vec![problem],
            };
            check_file_name(title).map_err(bad)?;
            if files.contains_key(title) {
                return Err(bad(format!("two layers are titled `{title}`")));
            }
            let out = self
                .pull_blob(
                    &reference,
                    layer.digest.as_str(),
                    (layer.size, RELEASE_FILE_CEILING),
                )
                .map_err(|e| self.err("downloading", &format!("@{}", layer.digest), e))?;
            files.insert(title.to_string(), out);
        }
        Ok((json, files))
    }

    /// One file of the release under `tag`, the layer titled `name`: the manifest and that one
    /// blob, nothing else (what a reader needs from a release's `metadata.yaml` without paying
    /// for its archives). `None` when the tag does not exist or holds no such file.
    pub fn pull_file(&self, tag: &str, name: &str) -> Result<Option<Vec<u8>>, OciError> {
        Ok(self
            .manifest_and_file(tag, name)?
            .and_then(|(_, file)| file))
    }

    /// [`Registry::pull_file`] with the manifest's bytes, for a reader that also wants its
    /// annotations (the creation date): the same two requests, the manifest not fetched twice.
    /// `None` when the tag does not exist; the file is `None` when no layer carries that title.
    pub fn manifest_and_file(
        &self,
        tag: &str,
        name: &str,
    ) -> Result<Option<ManifestAndFile>, OciError> {
        let Some((json, _)) = self.manifest(tag)? else {
            return Ok(None);
        };
        let manifest = self.parse_manifest(tag, &json)?;
        let Some(layer) = manifest.layers.iter().find(|l| l.title() == Some(name)) else {
            return Ok(Some((json, None)));
        };
        let out = self
            .pull_blob(
                &self.reference(tag),
                layer.digest.as_str(),
                (layer.size, ONE_FILE_CEILING),
            )
            .map_err(|e| self.err("downloading", &format!("@{}", layer.digest), e))?;
        Ok(Some((json, Some(out))))
    }

    /// Pull the manifest of `tag` back and check it against the packaged `files`: every
    /// layer digest against the file and `SHA256SUMS`, every blob present, and the file set
    /// CSO requires.
    pub fn verify(&self, tag: &str, files: &FileTree) -> Result<VerifyReport, OciError> {
        self.verify_as(tag, files, None)
    }

    /// [`Registry::verify`] for the conformance gate's candidate `tag` of `stable`
    /// ([`verify::check_candidate`]).
    pub fn verify_candidate(
        &self,
        tag: &str,
        files: &FileTree,
        stable: &ReleaseName,
    ) -> Result<VerifyReport, OciError> {
        self.verify_as(tag, files, Some(stable))
    }

    pub(super) fn verify_as(
        &self,
        tag: &str,
        files: &FileTree,
        of: Option<&ReleaseName>,
    ) -> Result<VerifyReport, OciError> {
        let reference = self.tagged(tag);
        let (json, digest) = self.manifest(tag)?.ok_or_else(|| OciError::Verify {
            reference: reference.clone(),
            problems: vec!["the tag does not exist".into()],
        })?;
        let mut problems = match of {
            Some(stable) => verify::check_candidate(tag, &json, files, stable),
            None => verify::check(tag, &json, files),
        };
        let layers = match serde_json::from_slice::<Manifest>(&json) {
            Ok(m) => {
                for d in std::iter::once(&m.config).chain(&m.layers) {
                    if !self.blob_exists(&d.digest)? {
                        problems.push(format!("blob {} is missing from the registry", d.digest));
                    }
                }
                m.layers.len()
            }
            Err(_) => 0,
        };
        if problems.is_empty() {
            Ok(VerifyReport {
                reference,
                digest,
                layers,
            })
        } else {
            Err(OciError::Verify {
                reference,
                problems,
            })
        }
    }
}

/// reqwest with `rustls-no-provider` panics unless a process-wide crypto provider is set.
/// Installing is idempotent: a second install (here or elsewhere in the bot) is a no-op.
fn crate_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
