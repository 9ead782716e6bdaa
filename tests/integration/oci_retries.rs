//! The registry client under the one retry policy (`stackbot_net::retry`): a real registry
//! behind a proxy that fails one request on purpose. A read or a safe write that failed in a
//! way a retry may mend is sent exactly once more and the push or read succeeds; a write that
//! may have taken effect is looked up before it is repeated; a definite refusal is not retried.

use crate::oci_registry::release;
use crate::support::counting_proxy::{CountingProxy, Fault, Seen};
use crate::support::registry::TestRegistry;

use stackbot::oci::manifest::ReleaseFacts;
use stackbot::oci::{Credentials, OciTarget, PushOutcome, Registry};

const TAG: &str = "openstack-scs2-1-34-v0-sha-azlfam7";
/// The release's six files and the empty config.
const BLOBS: usize = 7;

/// A registry, a proxy in front of it, and stackbot's client pointed at the proxy.
fn behind_proxy() -> (TestRegistry, CountingProxy, Registry) {
    let reg = TestRegistry::start();
    let proxy = CountingProxy::start(&reg.addr);
    let repository = format!("{}/kaas/cluster-stacks", proxy.addr);
    let target = OciTarget::new(&proxy.addr, &repository, true, Credentials::Anonymous).unwrap();
    (reg, proxy, Registry::connect(target).unwrap())
}

/// The statuses of the requests of `method` whose path contains `part`, in order.
fn statuses(seen: &[Seen], method: &str, part: &str) -> Vec<u16> {
    seen.iter()
        .filter(|s| s.method == method && s.path.contains(part))
        .map(|s| s.status)
        .collect()
}

fn push(registry: &Registry) -> PushOutcome {
    let files = release();
    let facts = ReleaseFacts::from_files(&files).unwrap();
    registry.push_release(TAG, &files, &facts, None).unwrap()
}

#[test]
fn a_503_on_each_read_is_retried_once_and_the_push_succeeds() {
    let (reg, proxy, registry) = behind_proxy();
    proxy.fail_once("GET", "/manifests/", Fault::Status(503));
    proxy.fail_once("HEAD", "/blobs/", Fault::Status(503));
    assert!(matches!(
        push(&registry),
        PushOutcome::Pushed {
            blobs_uploaded: 7,
            ..
        }
    ));
    let seen = proxy.take();
    assert_eq!(
        statuses(&seen, "GET", "/manifests/"),
        vec![503, 404],
        "the tag is read twice: the 503, then its one retry"
    );
    let heads = statuses(&seen, "HEAD", "/blobs/");
    assert_eq!(heads.len(), BLOBS + 1, "one blob check retried: {heads:?}");
    assert_eq!(heads.iter().filter(|s| **s == 503).count(), 1);
    assert!(reg.client().verify(TAG, &release()).is_ok());

    // Reading it back: a 503 on a blob download, then its one retry.
    proxy.fail_once("GET", "/blobs/", Fault::Status(503));
    assert_eq!(registry.pull_release(TAG).unwrap(), release());
    let gets = statuses(&proxy.take(), "GET", "/blobs/");
    assert_eq!(
        gets.len(),
        6 + 1,
        "six layers, one download retried: {gets:?}"
    );
    assert_eq!(gets[0], 503);
}

#[test]
fn a_dropped_blob_upload_is_sent_again_and_a_dropped_manifest_answer_is_looked_up() {
    let (reg, proxy, registry) = behind_proxy();
    // The first upload never reaches the registry; blobs are content-addressed, so sending
    // one again is safe whether or not it arrived.
    proxy.fail_once("PUT", "/blobs/uploads/", Fault::Drop);
    // The manifest reaches the registry, its answer is lost: the client must find it under
    // the tag instead of putting it again.
    proxy.fail_once("PUT", "/manifests/", Fault::DropAnswer);
    let outcome = push(&registry);
    assert!(
        matches!(
            outcome,
            PushOutcome::Pushed {
                blobs_uploaded: 7,
                ..
            }
        ),
        "{outcome:?}"
    );
    let seen = proxy.take();
    let uploads = statuses(&seen, "PUT", "/blobs/uploads/");
    assert_eq!(
        uploads.len(),
        BLOBS + 1,
        "one upload sent again: {uploads:?}"
    );
    assert_eq!(uploads[0], 0, "the dropped one");
    assert_eq!(
        statuses(&seen, "PUT", "/manifests/"),
        vec![0],
        "the manifest is put once: its lost answer is looked up, not repeated"
    );
    assert_eq!(
        statuses(&seen, "GET", "/manifests/"),
        vec![404, 200],
        "the reconcile read, then the look after the lost answer"
    );
    assert!(reg.client().verify(TAG, &release()).is_ok());
}

#[test]
fn a_manifest_put_that_never_arrived_is_put_again_after_looking() {
    let (reg, proxy, registry) = behind_proxy();
    proxy.fail_once("PUT", "/manifests/", Fault::Drop);
    assert!(matches!(push(&registry), PushOutcome::Pushed { .. }));
    let seen = proxy.take();
    assert_eq!(statuses(&seen, "PUT", "/manifests/"), vec![0, 201]);
    assert_eq!(statuses(&seen, "GET", "/manifests/"), vec![404, 404]);
    assert!(reg.client().verify(TAG, &release()).is_ok());
}

#[test]
fn a_4xx_is_a_definite_answer_and_not_retried() {
    let (_reg, proxy, registry) = behind_proxy();
    proxy.fail_once("GET", "/manifests/", Fault::Status(403));
    assert!(
        registry.manifest(TAG).is_err(),
        "a 403 is not the tag's absence"
    );
    assert_eq!(statuses(&proxy.take(), "GET", "/manifests/"), vec![403]);
    proxy.fail_once("GET", "/tags/list", Fault::Status(400));
    assert!(registry.list_tags().is_err());
    assert_eq!(statuses(&proxy.take(), "GET", "/tags/list"), vec![400]);
}

#[test]
fn the_publisher_a_run_builds_waits_on_the_runs_clock_before_a_retry() {
    // The publisher `release` builds (`oci::publish::for_run`) carries the run's clock, so a
    // retry waits (backs off) on it: never sent back to back to a registry that is failing.
    let reg = TestRegistry::start();
    let proxy = CountingProxy::start(&reg.addr);
    let config = yaml_serde::from_str::<stackbot::config::Config>(&format!(
        "stacks: []\npublish: [oci]\noci:\n  registry: \"{0}\"\n  repository: \"{0}/kaas/cluster-stacks\"\n  plain_http: true\n",
        proxy.addr
    ))
    .unwrap();
    let day = chrono::NaiveDate::from_ymd_opt(2026, 5, 1).unwrap();
    let start = day.and_hms_opt(0, 0, 0).unwrap().and_utc();
    let clock = std::sync::Arc::new(stackbot::clock::ManualClock::new(start));
    let (_, publisher) =
        stackbot::oci::publish::for_run(&config, day, clock.clone(), |_| None).unwrap();
    let publisher = publisher.expect("publish lists oci");

    proxy.fail_once("GET", "/manifests/", Fault::Status(503));
    publisher.publish(TAG, &release()).unwrap();
    assert_eq!(
        statuses(&proxy.take(), "GET", "/manifests/")[..2],
        [503, 404],
        "the 503, then its one retry"
    );
    use stackbot::clock::Clock;
    assert!(
        clock.now() > start,
        "the retry waited on the run's clock (it stands at {})",
        clock.now()
    );
}
