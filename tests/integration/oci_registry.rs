//! OCI publishing against a real registry (Debian's `docker-registry`) on loopback, and
//! tag pagination against a spec-following fake (the Debian registry ignores `n`/`last`).

use crate::support::registry as registry_support;
use crate::support::shared;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use registry_support::TestRegistry;
use stackbot::index::ReleaseIndex;
use stackbot::model::{FileTree, StackId};
use stackbot::oci::manifest::{ReleaseFacts, SHA256SUMS, build_manifest};
use stackbot::oci::target::Secret;
use stackbot::oci::{Credentials, OciError, OciTarget, PushOutcome, Registry};

const TAG: &str = "openstack-scs2-1-34-v0-sha-azlfam7";

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// The release csctl wrote for the scs2 reference stack (text assets verbatim from the
/// recorded output; archives stood in by gzip of their recorded entry lists), with the
/// `SHA256SUMS` the packager adds.
pub(crate) fn release() -> FileTree {
    let path = shared::fixture("csctl-output/scs2-a931cdb.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["release"], TAG);
    let mut files = FileTree::new();
    for (name, asset) in doc["assets"].as_object().unwrap() {
        let bytes = match asset.get("text") {
            Some(t) => t.as_str().unwrap().as_bytes().to_vec(),
            None => gzip(asset["tar"].to_string().as_bytes()),
        };
        files.insert(name.clone(), bytes);
    }
    let sums: String = files
        .iter()
        .map(|(n, b)| format!("{}  {n}\n", sha256_hex(b)))
        .collect();
    files.insert(SHA256SUMS.into(), sums.into_bytes());
    files
}

fn target(reg: &TestRegistry, credentials: Credentials) -> OciTarget {
    target_at(&reg.addr, credentials)
}

/// `kaas/cluster-stacks` on the plain-HTTP registry at `addr`.
fn target_at(addr: &str, credentials: Credentials) -> OciTarget {
    OciTarget::new(
        addr,
        &format!("{addr}/kaas/cluster-stacks"),
        true,
        credentials,
    )
    .unwrap()
}

fn write_dir(dir: &Path, files: &FileTree) {
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

fn read_dir(dir: &Path) -> FileTree {
    let mut out = FileTree::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        out.insert(
            entry.file_name().into_string().unwrap(),
            std::fs::read(entry.path()).unwrap(),
        );
    }
    out
}

#[test]
fn push_verify_and_pull_reconstruct_the_release_directory_byte_for_byte() {
    let reg = TestRegistry::start();
    // The release directory as the packager leaves it on disk.
    let tmp = tempfile::tempdir().unwrap();
    let release_dir = tmp.path().join(TAG);
    std::fs::create_dir(&release_dir).unwrap();
    write_dir(&release_dir, &release());
    let files = read_dir(&release_dir);
    let facts = ReleaseFacts::from_files(&files).unwrap();

    let registry = Registry::connect(target(&reg, Credentials::Anonymous)).unwrap();
    assert_eq!(registry.list_tags().unwrap(), Vec::<String>::new());
    let expected = build_manifest(&files, &facts, None).unwrap().digest;
    let outcome = registry.push_release(TAG, &files, &facts, None).unwrap();
    assert_eq!(
        outcome,
        PushOutcome::Pushed {
            digest: expected.clone(),
            // 6 files + the empty config
            blobs_uploaded: 7,
            blobs_reused: 0
        }
    );
    assert_eq!(registry.list_tags().unwrap(), vec![TAG.to_string()]);
    let report = registry.verify(TAG, &files).unwrap();
    assert_eq!(
        (report.digest.as_str(), report.layers),
        (expected.as_str(), 6)
    );

    // A consumer (another connection, anonymous) pulls it into a fresh directory.
    let puller = Registry::connect(target(&reg, Credentials::Anonymous)).unwrap();
    let pulled_dir = tmp.path().join("pulled");
    std::fs::create_dir(&pulled_dir).unwrap();
    write_dir(&pulled_dir, &puller.pull_release(TAG).unwrap());
    assert_eq!(read_dir(&pulled_dir), read_dir(&release_dir));

    // The annotations CSO and csctl read, and no timestamp.
    let (json, _) = registry.manifest(TAG).unwrap().unwrap();
    let manifest: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(
        manifest["annotations"],
        serde_json::json!({"hash": "azlfam7", "kubernetesVersion": "v1.34.7"})
    );
    assert_eq!(
        manifest["artifactType"],
        "application/vnd.scs.cluster-stacks.v1"
    );
}

#[test]
fn re_push_is_a_no_op_and_a_conflicting_push_changes_nothing() {
    let reg = TestRegistry::start();
    let registry = Registry::connect(target(&reg, Credentials::Anonymous)).unwrap();
    let files = release();
    let facts = ReleaseFacts::from_files(&files).unwrap();
    let first = registry.push_release(TAG, &files, &facts, None).unwrap();

    let again = registry.push_release(TAG, &files, &facts, None).unwrap();
    assert_eq!(
        again,
        PushOutcome::AlreadyPresent {
            digest: first.digest().to_string()
        }
    );

    let mut changed = files.clone();
    changed.insert("clusteraddon.yaml".into(), b"addonStages: {}\n".to_vec());
    let new_blob = stackbot::oci::sha256_digest(b"addonStages: {}\n");
    let wanted = build_manifest(&changed, &facts, None).unwrap().digest;
    let err = registry
        .push_release(TAG, &changed, &facts, None)
        .unwrap_err();
    match &err {
        OciError::TagConflict {
            existing,
            wanted: w,
            ..
        } => {
            assert_eq!(existing, first.digest());
            assert_eq!(w, &wanted);
        }
        other => panic!("expected a tag conflict, got {other}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains(first.digest()) && msg.contains(&wanted),
        "{msg}"
    );
    // Nothing changed: the tag still holds the first manifest, the new file was not uploaded.
    assert_eq!(registry.manifest(TAG).unwrap().unwrap().1, first.digest());
    assert!(!registry.blob_exists(&new_blob).unwrap());
    registry.verify(TAG, &files).unwrap();
}

#[test]
fn an_interrupted_push_is_completed_by_the_next_run() {
    let reg = TestRegistry::start();
    let registry = Registry::connect(target(&reg, Credentials::Anonymous)).unwrap();
    let files = release();
    let facts = ReleaseFacts::from_files(&files).unwrap();
    let built = build_manifest(&files, &facts, None).unwrap();
    // The state a crash leaves after three blob uploads and before the manifest.
    for (digest, bytes) in built.blobs(&files).into_iter().take(3) {
        registry.upload_blob(digest, bytes).unwrap();
    }
    assert!(registry.manifest(TAG).unwrap().is_none());
    assert!(registry.verify(TAG, &files).is_err());

    let outcome = registry.push_release(TAG, &files, &facts, None).unwrap();
    assert_eq!(
        outcome,
        PushOutcome::Pushed {
            digest: built.digest.clone(),
            blobs_uploaded: 4,
            blobs_reused: 3
        }
    );
    registry.verify(TAG, &files).unwrap();
    assert_eq!(registry.pull_release(TAG).unwrap(), files);
}

#[test]
fn every_tag_is_listed_and_numbers_come_from_all_of_them() {
    let reg = TestRegistry::start();
    // Small pages: this registry ignores `n`, and the lister must still terminate with
    // every tag exactly once.
    let registry = Registry::connect(target(&reg, Credentials::Anonymous))
        .unwrap()
        .with_page_size(2);
    let files = release();
    let facts = ReleaseFacts::from_files(&files).unwrap();
    let tags = [
        "openstack-scs2-1-34-v1",
        "openstack-scs2-1-34-v2",
        "openstack-scs2-1-34-v10",
        "openstack-scs2-1-33-v11",
        "not-a-release",
    ];
    for tag in tags {
        // Same content under several tags: blobs are reused, only manifests are written.
        registry
            .push_built(tag, &files, &build_manifest(&files, &facts, None).unwrap())
            .unwrap();
    }
    let mut listed = registry.list_tags().unwrap();
    listed.sort();
    let mut want: Vec<String> = tags.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(listed, want);
    let stack = StackId::new("openstack", "scs2").unwrap();
    assert_eq!(
        ReleaseIndex::new(Vec::new(), Some(listed.clone()))
            .newest_in_oci(&stack, "1.34".parse().unwrap()),
        Some(10)
    );
}

#[test]
fn basic_auth_is_used_and_credentials_never_reach_messages() {
    const PASSWORD: &str = "correct-horse-battery";
    let reg = TestRegistry::start_with_basic_auth("bot", PASSWORD);
    let files = release();
    let facts = ReleaseFacts::from_files(&files).unwrap();
    let good = Credentials::Basic {
        username: "bot".into(),
        password: Secret::new(PASSWORD),
    };
    let registry = Registry::connect(target(&reg, good)).unwrap();
    assert!(!format!("{registry:?}").contains(PASSWORD));
    let pushed = registry.push_release(TAG, &files, &facts, None).unwrap();
    assert!(matches!(pushed, PushOutcome::Pushed { .. }));
    assert_eq!(registry.pull_release(TAG).unwrap(), files);
    registry.verify(TAG, &files).unwrap();

    // Anonymous: refused, with a message that says what to set.
    let anonymous = Registry::connect(target(&reg, Credentials::Anonymous)).unwrap();
    let msg = anonymous.list_tags().unwrap_err().to_string();
    assert!(msg.contains("OCI_USERNAME"), "{msg}");

    // A wrong password is refused, and appears in no message.
    const WRONG: &str = "wrong-password-1234";
    let bad = Registry::connect(target(
        &reg,
        Credentials::Basic {
            username: "bot".into(),
            password: Secret::new(WRONG),
        },
    ))
    .unwrap();
    for err in [
        bad.list_tags().unwrap_err(),
        bad.push_release("openstack-scs2-1-34-v9", &files, &facts, None)
            .unwrap_err(),
    ] {
        let msg = format!("{err} {err:?}");
        assert!(!msg.contains(WRONG) && !msg.contains(PASSWORD), "{msg}");
        assert!(msg.contains("refused access"), "{msg}");
    }
    assert_eq!(registry.list_tags().unwrap(), vec![TAG.to_string()]);
}

/// A distribution-spec tag lister: sorted tags, `n` capped at `cap`, `last` honoured,
/// `Link` header while more remain. Counts requests.
fn paginating_fake(tags: Vec<String>, cap: usize) -> (String, Arc<AtomicUsize>) {
    use axum::extract::{Query, State};
    use axum::http::header;
    use axum::response::IntoResponse;
    use axum::routing::get;

    #[derive(Clone)]
    struct St {
        tags: Arc<Vec<String>>,
        cap: usize,
        hits: Arc<AtomicUsize>,
    }
    async fn list(
        State(st): State<St>,
        Query(q): Query<BTreeMap<String, String>>,
    ) -> impl IntoResponse {
        st.hits.fetch_add(1, Ordering::SeqCst);
        let n: usize = q
            .get("n")
            .and_then(|n| n.parse().ok())
            .unwrap_or(usize::MAX);
        let n = n.min(st.cap);
        let rest: Vec<&String> = st
            .tags
            .iter()
            .filter(|t| q.get("last").is_none_or(|l| t.as_str() > l.as_str()))
            .collect();
        let page: Vec<&String> = rest.iter().take(n).copied().collect();
        let mut headers = axum::http::HeaderMap::new();
        if rest.len() > page.len() {
            let link = format!(
                "</v2/kaas/cluster-stacks/tags/list?n={n}&last={}>; rel=\"next\"",
                page.last().unwrap()
            );
            headers.insert(header::LINK, link.parse().unwrap());
        }
        (
            headers,
            axum::Json(serde_json::json!({"name": "kaas/cluster-stacks", "tags": page})),
        )
    }

    let mut sorted = tags;
    sorted.sort();
    let hits = Arc::new(AtomicUsize::new(0));
    let state = St {
        tags: Arc::new(sorted),
        cap,
        hits: hits.clone(),
    };
    let app = axum::Router::new()
        .route("/v2/", get(|| async { "{}" }))
        .route("/v2/kaas/cluster-stacks/tags/list", get(list))
        .with_state(state);
    (serve(app), hits)
}

/// Serve `app` on a free loopback port, from a thread of its own; its address.
fn serve(app: axum::Router) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    addr
}

#[test]
fn tag_listing_follows_pages_even_when_the_registry_caps_page_size() {
    let tags: Vec<String> = (1..=23)
        .map(|i| format!("openstack-scs2-1-34-v{i}"))
        .collect();
    for (page_size, cap) in [(10, 1000), (100, 5)] {
        let (addr, hits) = paginating_fake(tags.clone(), cap);
        let registry = Registry::connect(target_at(&addr, Credentials::Anonymous))
            .unwrap()
            .with_page_size(page_size);
        let mut listed = registry.list_tags().unwrap();
        listed.sort();
        let mut want = tags.clone();
        want.sort();
        assert_eq!(listed, want, "page size {page_size}, cap {cap}");
        let pages = 23usize.div_ceil(page_size.min(cap));
        // Every page, plus the empty one that ends the listing.
        assert_eq!(hits.load(Ordering::SeqCst), pages + 1);
        let stack = StackId::new("openstack", "scs2").unwrap();
        assert_eq!(
            ReleaseIndex::new(Vec::new(), Some(listed.clone()))
                .newest_in_oci(&stack, "1.34".parse().unwrap()),
            Some(23)
        );
    }
}

#[test]
fn publisher_from_config_pushes_verifies_and_recognises_its_release_on_another_day() {
    let reg = TestRegistry::start();
    let config: stackbot::config::Config = yaml_serde::from_str(&format!(
        "stacks: []\npublish: [forge, oci]\noci:\n  registry: \"{0}\"\n  repository: \"{0}/kaas/cluster-stacks\"\n  plain_http: true\n  created_annotation: true\n",
        reg.addr
    ))
    .unwrap();
    let files = release();
    let day = |d| chrono::NaiveDate::from_ymd_opt(2026, 5, d).unwrap();
    let first = stackbot::oci::Publisher::from_config(&config, day(1), |_| None)
        .unwrap()
        .unwrap();
    let planned = stackbot::oci::publish::describe(&config, day(1), TAG, &files, |_| None)
        .unwrap()
        .unwrap();
    let published = first.publish(TAG, &files).unwrap();
    assert!(matches!(published.outcome, PushOutcome::Pushed { .. }));
    // What plan showed is what was pushed.
    assert_eq!(published.outcome.digest(), planned.manifest_digest);
    assert_eq!(published.verified.digest, planned.manifest_digest);

    // The next day's run builds another timestamp, and still finds nothing to do.
    let next = stackbot::oci::Publisher::from_config(&config, day(2), |_| None)
        .unwrap()
        .unwrap();
    let again = next.publish(TAG, &files).unwrap();
    assert_eq!(
        again.outcome,
        PushOutcome::AlreadyPresent {
            digest: planned.manifest_digest.clone()
        }
    );
    assert_eq!(next.tags().unwrap(), vec![TAG.to_string()]);
}

/// A registry that serves one manifest, whose `metadata.yaml` layer declares `declared` bytes,
/// and `sent` bytes for every blob asked for. Counts blob requests.
fn lying_registry(declared: u64, sent: usize) -> (String, Arc<AtomicUsize>) {
    use axum::http::header;
    use axum::routing::get;
    use stackbot::oci::manifest::{MANIFEST_MEDIA_TYPE, TITLE_ANNOTATION};

    let files = release();
    let facts = ReleaseFacts::from_files(&files).unwrap();
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&build_manifest(&files, &facts, None).unwrap().json).unwrap();
    for layer in manifest["layers"].as_array_mut().unwrap() {
        if layer["annotations"][TITLE_ANNOTATION] == "metadata.yaml" {
            layer["size"] = declared.into();
        }
    }
    let manifest = serde_json::to_vec(&manifest).unwrap();
    let digest = format!("sha256:{}", sha256_hex(&manifest));
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    let manifest_route = get(move || {
        let headers = [
            (header::CONTENT_TYPE, MANIFEST_MEDIA_TYPE.to_string()),
            (
                header::HeaderName::from_static("docker-content-digest"),
                digest.clone(),
            ),
        ];
        let body = manifest.clone();
        async move { (headers, body) }
    });
    let blob_route = get(move || {
        counted.fetch_add(1, Ordering::SeqCst);
        async move { vec![b'x'; sent] }
    });
    let app = axum::Router::new()
        .route("/v2/", get(|| async { "{}" }))
        .route("/v2/kaas/cluster-stacks/manifests/{tag}", manifest_route)
        .route("/v2/kaas/cluster-stacks/blobs/{digest}", blob_route);
    (serve(app), hits)
}

#[test]
fn a_blob_past_what_its_manifest_declares_or_past_the_ceiling_is_refused_and_not_asked_again() {
    // `metadata.yaml` read alone from a registry whose manifest declares `declared` bytes for
    // it and which sends `sent`: the refusal, and how often the blob was asked for.
    let refusal = |declared: u64, sent: usize| {
        let (addr, hits) = lying_registry(declared, sent);
        let e = Registry::connect(target_at(&addr, Credentials::Anonymous))
            .unwrap()
            .manifest_and_file(TAG, "metadata.yaml")
            .unwrap_err()
            .to_string();
        (e, hits.load(Ordering::SeqCst))
    };
    // 2 MiB sent where 10 bytes are declared: refused at the 11th byte, once (asked again, it
    // would be as large).
    let (e, asked) = refusal(10, 2 << 20);
    assert!(
        e.contains("more than the 10 bytes the manifest declares"),
        "{e}"
    );
    assert_eq!(asked, 1, "not retried: {e}");
    // 2 MiB declared for one file: refused before a byte is downloaded.
    let (e, asked) = refusal(2 << 20, 2 << 20);
    assert!(
        e.contains("more than the 1048576 bytes a release file may have"),
        "{e}"
    );
    assert_eq!(asked, 0, "{e}");
    // Within both bounds the bytes are read, and then the digest refuses them (they are not
    // the file's): the bounds are not what stops it.
    let (e, asked) = refusal(10, 10);
    assert!(!e.contains("declares") && !e.contains("may have"), "{e}");
    assert!(e.contains("Invalid digest"), "{e}");
    assert_eq!(asked, 1, "{e}");
}
