//! How stackbot reaches the runners: `scripts/package-binary` packs a release archive,
//! `scripts/install-stackbot` (used by `action.yml`) downloads it from a
//! release served on loopback, and nothing runs unless the archive matches `SHA256SUMS` (and
//! its attestation, with a stand-in `gh`). `scripts/collect-published-assets` picks the
//! cluster-stack releases the action attests. Every script runs for real under bash; only
//! GitHub is replaced (a loopback HTTP server for the release downloads, a recording `gh`).

use crate::support::upstream_server;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;
use upstream_server::UpstreamServer;

const VERSION: &str = env!("CARGO_PKG_VERSION");
const REPO: &str = "example-org/stackbot";
/// The workflow that attests cluster-stack releases: the one `stackbot init` writes, which
/// calls the action (a composite action attests as its caller).
const SIGNER: &str = "example-org/stackbot/.github/workflows/stackbot-release.yml";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(bytes))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Output of a bash one-liner that sources the shared naming rules.
fn dist(call: &str) -> String {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(". scripts/lib/dist.sh && {call}"))
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{call}: {}", text(&out.stderr));
    text(&out.stdout).trim().to_string()
}

fn host_target() -> String {
    let t = dist("dist_host_target");
    assert!(
        !t.is_empty(),
        "these tests need a Linux x86_64 or aarch64 host"
    );
    t
}

fn asset_name() -> String {
    dist(&format!("dist_asset {VERSION} {}", host_target()))
}

/// `scripts/package-binary --binary BIN --out OUT`; returns the archive path.
fn package(binary: &Path, out: &Path) -> PathBuf {
    let o = Command::new(root().join("scripts/package-binary"))
        .arg("--binary")
        .arg(binary)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "package-binary: {}", text(&o.stderr));
    let path = PathBuf::from(text(&o.stdout).trim());
    assert_eq!(
        path.file_name().unwrap().to_string_lossy(),
        asset_name(),
        "package-binary and install-stackbot agree on the name"
    );
    path
}

/// The real stackbot, packed once per test process (packing the debug binary takes seconds).
pub(crate) fn genuine_archive() -> &'static (PathBuf, Vec<u8>) {
    static ARCHIVE: OnceLock<(PathBuf, Vec<u8>)> = OnceLock::new();
    ARCHIVE.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("distribution-genuine");
        let _ = std::fs::remove_dir_all(&dir);
        let path = package(Path::new(env!("CARGO_BIN_EXE_stackbot")), &dir);
        let bytes = std::fs::read(&path).unwrap();
        (path, bytes)
    })
}

/// A stand-in binary that claims this version and leaves a mark when it runs.
fn tripwire_archive(dir: &Path) -> Vec<u8> {
    let bin = dir.join("tripwire/stackbot");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::write(
        &bin,
        format!(
            "#!/bin/sh\nif [ -n \"$TRIPWIRE\" ]; then touch \"$TRIPWIRE\"; fi\necho 'stackbot {VERSION}'\n"
        ),
    )
    .unwrap();
    chmod_x(&bin);
    let out = dir.join("tripwire/out");
    std::fs::read(package(&bin, &out)).unwrap()
}

pub(crate) fn chmod_x(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A release as GitHub serves it: `<base>/v<version>/{archive, SHA256SUMS}`.
pub(crate) struct FakeRelease {
    server: UpstreamServer,
    _dir: tempfile::TempDir,
}

impl FakeRelease {
    /// Serve `archive` under its real name with the given `SHA256SUMS` text.
    pub(crate) fn serve(archive: &[u8], sums: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let release = dir.path().join(format!("v{VERSION}"));
        std::fs::create_dir_all(&release).unwrap();
        std::fs::write(release.join(asset_name()), archive).unwrap();
        std::fs::write(release.join("SHA256SUMS"), sums).unwrap();
        let server = UpstreamServer::start();
        server.serve_dir("/download", dir.path());
        FakeRelease { server, _dir: dir }
    }

    pub(crate) fn url(&self) -> String {
        format!("{}/download", self.server.url())
    }

    fn requested(&self) -> Vec<String> {
        self.server.seen().into_iter().map(|s| s.target).collect()
    }
}

pub(crate) fn sums_line(archive: &[u8]) -> String {
    format!("{}  {}\n", sha256_hex(archive), asset_name())
}

/// One install run: its output, the install prefix and the `GITHUB_PATH` file.
struct Install {
    out: Output,
    dest: PathBuf,
    github_path: PathBuf,
    tripwire: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Install {
    fn code(&self) -> i32 {
        self.out.status.code().unwrap_or(-1)
    }
    fn stderr(&self) -> String {
        text(&self.out.stderr)
    }
    fn installed(&self) -> PathBuf {
        self.dest.join("bin/stackbot")
    }
    fn github_path(&self) -> String {
        std::fs::read_to_string(&self.github_path).unwrap_or_default()
    }
    /// Asserts that stderr says `needle`, showing stderr when it does not.
    fn says(&self, needle: &str) {
        let err = self.stderr();
        assert!(err.contains(needle), "expected `{needle}` in:\n{err}");
    }
}

/// Run `scripts/install-stackbot` with `args`; `path_prefix` goes first on PATH (a fake `gh`).
fn install(args: &[&str], env: &[(&str, &str)], path_prefix: Option<&Path>) -> Install {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("prefix");
    let github_path = tmp.path().join("github_path");
    let tripwire = tmp.path().join("stackbot-ran");
    let mut path = std::env::var_os("PATH").unwrap();
    if let Some(p) = path_prefix {
        path = std::env::join_paths(
            std::iter::once(p.to_path_buf()).chain(std::env::split_paths(&path)),
        )
        .unwrap();
    }
    let out = Command::new(root().join("scripts/install-stackbot"))
        .arg("--dest")
        .arg(&dest)
        .args(args)
        .env_remove("GH_TOKEN")
        .env_remove("GITHUB_TOKEN")
        .env_remove("STACKBOT_RELEASE_URL")
        .env_remove("STACKBOT_FROM_SOURCE")
        .env_remove("STACKBOT_VERIFY_ATTESTATION")
        .env("PATH", path)
        .env("GITHUB_PATH", &github_path)
        .env("TRIPWIRE", &tripwire)
        .envs(env.iter().copied())
        .current_dir(tmp.path())
        .output()
        .unwrap();
    Install {
        out,
        dest,
        github_path,
        tripwire,
        _tmp: tmp,
    }
}

/// Install from `release` with the checksum check only (no `gh` involved).
fn install_unattested(release: &FakeRelease) -> Install {
    install(
        &[
            "--release-url",
            &release.url(),
            "--verify-attestation",
            "never",
        ],
        &[],
        None,
    )
}

/// A `gh` stand-in that records its arguments and answers `attestation verify` with `code`.
fn fake_gh_verifying(dir: &Path, code: i32) -> PathBuf {
    let bin = dir.join("gh-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let gh = bin.join("gh");
    std::fs::write(
        &gh,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> \"{log}\"\nprintf 'token=%s\\n' \"$GH_TOKEN\" >> \"{log}\"\n\
             [ \"$1 $2\" = 'attestation verify' ] || exit 64\n\
             [ {code} = 0 ] || echo 'verification failed: no attestations found' >&2\nexit {code}\n",
            log = dir.join("gh.log").display()
        ),
    )
    .unwrap();
    chmod_x(&gh);
    bin
}

#[test]
fn a_release_with_the_right_checksum_installs_this_version_and_puts_it_on_the_path() {
    let (_, archive) = genuine_archive();
    let release = FakeRelease::serve(archive, &sums_line(archive));
    let run = install_unattested(&release);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let version = Command::new(run.installed())
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(text(&version.stdout).trim(), format!("stackbot {VERSION}"));
    assert_eq!(
        run.github_path().trim(),
        run.dest.join("bin").display().to_string()
    );
    assert_eq!(
        release.requested(),
        vec![
            format!("/download/v{VERSION}/SHA256SUMS"),
            format!("/download/v{VERSION}/{}", asset_name()),
        ]
    );
    run.says("matches SHA256SUMS");
}

#[test]
fn a_wrong_checksum_stops_the_install_before_stackbot_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, genuine) = genuine_archive();
    // The release's SHA256SUMS vouches for the genuine archive; the archive served is another.
    let swapped = tripwire_archive(tmp.path());
    let release = FakeRelease::serve(&swapped, &sums_line(genuine));
    let run = install_unattested(&release);
    assert_eq!(run.code(), 1, "{}", run.stderr());
    run.says("checksum mismatch");
    assert!(
        run.stderr().contains(&sha256_hex(genuine)),
        "names the expected hash"
    );
    assert!(
        run.stderr().contains(&sha256_hex(&swapped)),
        "names the hash it got"
    );
    assert!(!run.tripwire.exists(), "the unverified binary ran");
    assert!(
        !run.installed().exists(),
        "an unverified binary was installed"
    );
    assert!(!run.dest.exists(), "the install prefix was touched");
    assert_eq!(run.github_path(), "", "PATH was changed for later steps");
}

#[test]
fn a_sha256sums_without_exactly_one_line_for_the_archive_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tripwire_archive(tmp.path());
    let other = "0".repeat(64) + "  stackbot-v0.0.1-x86_64-unknown-linux-gnu.tar.gz\n";
    for sums in [other.clone(), sums_line(&archive).repeat(2)] {
        let release = FakeRelease::serve(&archive, &sums);
        let run = install_unattested(&release);
        assert_eq!(run.code(), 1, "{sums}: {}", run.stderr());
        run.says("expected exactly one");
        assert!(!run.tripwire.exists() && !run.installed().exists());
    }
}

#[test]
fn a_version_without_a_release_fails_and_says_how_to_build_from_source() {
    let server = UpstreamServer::start();
    let run = install(
        &[
            "--release-url",
            &format!("{}/nothing-here", server.url()),
            "--verify-attestation",
            "never",
        ],
        &[],
        None,
    );
    assert_eq!(run.code(), 1, "{}", run.stderr());
    run.says(&format!("v{VERSION}"));
    run.says("--from-source");
    assert!(!run.installed().exists());
}

#[test]
fn plain_http_is_refused_unless_on_loopback() {
    let run = install(
        &[
            "--release-url",
            "http://mirror.example.org/stackbot",
            "--verify-attestation",
            "never",
        ],
        &[],
        None,
    );
    assert_eq!(run.code(), 2, "{}", run.stderr());
    run.says("https only");
}

#[test]
fn the_attestation_is_checked_against_the_binaries_workflow_before_the_binary_runs() {
    let (_, archive) = genuine_archive();
    let release = FakeRelease::serve(archive, &sums_line(archive));
    for (code, installs) in [(1, false), (0, true)] {
        let tmp = tempfile::tempdir().unwrap();
        let gh = fake_gh_verifying(tmp.path(), code);
        let run = install(
            &["--release-url", &release.url(), "--repo", REPO],
            &[("GH_TOKEN", "t0ken")],
            Some(&gh),
        );
        let log = std::fs::read_to_string(tmp.path().join("gh.log")).unwrap();
        let call = log.lines().next().unwrap();
        assert!(
            call.starts_with("attestation verify ")
                && call.ends_with(&format!(
                    "{} --repo {REPO} --signer-workflow {REPO}/.github/workflows/binaries.yml",
                    asset_name()
                )),
            "{call}"
        );
        assert!(log.contains("token=t0ken"), "gh gets the token");
        assert!(
            !run.stderr().contains("t0ken"),
            "the token is never printed"
        );
        assert_eq!(run.installed().exists(), installs, "{}", run.stderr());
        if installs {
            assert_eq!(run.code(), 0, "{}", run.stderr());
            run.says("attestation: verified");
        } else {
            assert_eq!(run.code(), 1, "{}", run.stderr());
            run.says("no attestations found");
        }
    }
}

#[test]
fn a_required_attestation_without_gh_is_refused() {
    let (_, archive) = genuine_archive();
    let release = FakeRelease::serve(archive, &sums_line(archive));
    // A PATH with what the script needs but no gh.
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in [
        "bash",
        "sed",
        "head",
        "uname",
        "mktemp",
        "rm",
        "curl",
        "awk",
        "grep",
        "sha256sum",
        "cut",
        "tar",
        "gzip",
        "install",
        "mkdir",
        "dirname",
        "cat",
        "tr",
    ] {
        if let Some(found) = std::env::split_paths(&std::env::var_os("PATH").unwrap())
            .map(|d| d.join(tool))
            .find(|p| p.is_file())
        {
            std::os::unix::fs::symlink(found, bin.join(tool)).unwrap();
        }
    }
    let out = Command::new(bin.join("bash"))
        .arg(root().join("scripts/install-stackbot"))
        .args([
            "--release-url",
            &release.url(),
            "--verify-attestation",
            "always",
        ])
        .arg("--dest")
        .arg(tmp.path().join("prefix"))
        .env_clear()
        .env("PATH", &bin)
        .env("GH_TOKEN", "t0ken")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("needs the GitHub CLI"),
        "{}",
        text(&out.stderr)
    );
    assert!(!tmp.path().join("prefix/bin/stackbot").exists());
}

// ---- the composite action, step by step as the runner executes it ----

/// The action with `command: validate` (the repository's own stackbot.yaml), the binaries
/// of `release`, a `gh` that vouches for any attestation, no cache and no status report
/// (those are the deployment test's, `tests/integration/deploy.rs`). Returns the steps that
/// ran (not skipped by their `if:`), with their exit codes.
fn run_action_validate(release: &FakeRelease, tmp: &Path) -> Vec<(String, i32)> {
    use crate::support::runner::{Outcome, Runner};
    let gh = fake_gh_verifying(tmp, 0);
    let mut runner = Runner::new(&root(), &tmp.join("runner-temp"));
    runner.path.push(gh);
    runner.github.insert("token".into(), "t0ken".into());
    runner.env.insert(
        "TRIPWIRE".into(),
        tmp.join("stackbot-ran").display().to_string(),
    );
    let with = BTreeMap::from([
        ("command".to_string(), "validate".to_string()),
        ("release-url".to_string(), release.url()),
        ("token".to_string(), "t0ken".to_string()),
        ("cache".to_string(), "false".to_string()),
        ("status".to_string(), "false".to_string()),
    ]);
    let run = runner.run_action(&root(), &with);
    for s in &run.steps {
        eprintln!("step `{}`: {:?}\n{}", s.name, s.outcome, s.stderr);
    }
    run.steps
        .iter()
        .filter_map(|s| match s.outcome {
            Outcome::Success => Some((s.name.clone(), 0)),
            Outcome::Failure(c) => Some((s.name.clone(), c)),
            _ => None,
        })
        .collect()
}

#[test]
fn the_action_installs_the_verified_binary_of_its_own_version_and_runs_it() {
    let (_, archive) = genuine_archive();
    let release = FakeRelease::serve(archive, &sums_line(archive));
    let tmp = tempfile::tempdir().unwrap();
    let ran = run_action_validate(&release, tmp.path());
    assert_eq!(
        ran,
        vec![
            ("Install stackbot".to_string(), 0),
            ("Run stackbot".to_string(), 0)
        ]
    );
    let log = std::fs::read_to_string(tmp.path().join("gh.log")).unwrap();
    assert!(
        log.starts_with("attestation verify "),
        "default: attestation checked: {log}"
    );
    // The run step ran the installed binary: its JSON result is the real `validate` answer.
    let result: Value = serde_json::from_slice(
        &std::fs::read(tmp.path().join("runner-temp/stackbot-result")).unwrap(),
    )
    .unwrap();
    assert_eq!(result["valid"], Value::Bool(true), "{result}");
}

#[test]
fn a_wrong_checksum_stops_the_action_before_stackbot_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, genuine) = genuine_archive();
    let swapped = tripwire_archive(tmp.path());
    let release = FakeRelease::serve(&swapped, &sums_line(genuine));
    let ran = run_action_validate(&release, tmp.path());
    assert_eq!(
        ran,
        vec![("Install stackbot".to_string(), 1)],
        "nothing after the install ran"
    );
    assert!(
        !tmp.path().join("stackbot-ran").exists(),
        "the swapped binary ran"
    );
    assert!(
        !tmp.path()
            .join("runner-temp/stackbot/bin/stackbot")
            .exists()
    );
    assert!(
        !tmp.path().join("gh.log").exists(),
        "the checksum is checked before anything else looks at the archive"
    );
}

// ---- which published cluster-stack releases the action attests ----

/// A `gh` stand-in over a directory of releases: `releases/<tag>/<asset>`,
/// `published/<tag>` (publishedAt) and `attested/<sha256>` (an attestation exists).
const FAKE_GH: &str = r#"#!/usr/bin/env bash
set -euo pipefail
state="$FAKE_GH_STATE"
printf '%s\n' "$*" >> "$state/calls"
sub="$1 $2"; shift 2
case "$sub" in
  "release list")
    filter=""
    while [ $# -gt 0 ]; do case "$1" in --jq) filter="$2"; shift 2 ;; *) shift ;; esac; done
    json="[]"
    for f in "$state"/published/*; do
      [ -e "$f" ] || continue
      json="$(jq -c --arg t "$(basename "$f")" --arg p "$(cat "$f")" '. + [{tagName: $t, publishedAt: $p}]' <<<"$json")"
    done
    jq -r "$filter" <<<"$json" ;;
  "release view")
    [ -d "$state/releases/$1" ] || { echo "release not found" >&2; exit 1; } ;;
  "release download")
    tag="$1"; shift; dir=.; pattern="*"
    while [ $# -gt 0 ]; do case "$1" in --dir) dir="$2"; shift 2 ;; --pattern) pattern="$2"; shift 2 ;; *) shift ;; esac; done
    [ -d "$state/releases/$tag" ] || { echo "release not found" >&2; exit 1; }
    mkdir -p "$dir"
    n=0
    for f in "$state/releases/$tag"/$pattern; do [ -e "$f" ] && cp "$f" "$dir/" && n=$((n + 1)); done
    [ "$n" -gt 0 ] || { echo "no assets match the file pattern" >&2; exit 1; } ;;
  "attestation verify")
    [ -e "$state/attested/$(sha256sum "$1" | cut -d' ' -f1)" ] || { echo "no attestations found" >&2; exit 1; } ;;
  *) echo "unexpected gh $sub" >&2; exit 64 ;;
esac
"#;

struct Forge {
    state: tempfile::TempDir,
    bin: PathBuf,
}

impl Forge {
    fn new() -> Self {
        let state = tempfile::tempdir().unwrap();
        let bin = state.path().join("bin");
        for d in ["bin", "releases", "published", "attested"] {
            std::fs::create_dir_all(state.path().join(d)).unwrap();
        }
        std::fs::write(bin.join("gh"), FAKE_GH).unwrap();
        chmod_x(&bin.join("gh"));
        Forge { state, bin }
    }

    /// A release with two assets and their SHA256SUMS, published `hours_ago`.
    fn release(&self, tag: &str, hours_ago: i64) -> Vec<u8> {
        let dir = self.state.path().join("releases").join(tag);
        std::fs::create_dir_all(&dir).unwrap();
        let mut sums = String::new();
        for (name, body) in [
            ("metadata.yaml", format!("tag: {tag}\n")),
            ("hashes.json", "{}".into()),
        ] {
            std::fs::write(dir.join(name), &body).unwrap();
            sums.push_str(&format!("{}  {name}\n", sha256_hex(body.as_bytes())));
        }
        std::fs::write(dir.join("SHA256SUMS"), &sums).unwrap();
        let at = chrono::Utc::now() - chrono::Duration::hours(hours_ago);
        std::fs::write(
            self.state.path().join("published").join(tag),
            at.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        )
        .unwrap();
        sums.into_bytes()
    }

    fn mark_attested(&self, sums: &[u8]) {
        std::fs::write(
            self.state.path().join("attested").join(sha256_hex(sums)),
            "",
        )
        .unwrap();
    }

    /// Run the collector with stackbot's result `released`; returns (exit code, stderr, tags
    /// collected under OUT).
    fn collect(&self, released: &[&str]) -> (i32, String, Vec<String>) {
        let tmp = tempfile::tempdir().unwrap();
        let result = tmp.path().join("release.json");
        std::fs::write(
            &result,
            serde_json::json!({ "released": released }).to_string(),
        )
        .unwrap();
        let out_dir = tmp.path().join("published");
        let path = std::env::join_paths(
            std::iter::once(self.bin.clone())
                .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
        )
        .unwrap();
        let out = Command::new(root().join("scripts/collect-published-assets"))
            .args(["--repo", REPO, "--signer-workflow", SIGNER, "--result"])
            .arg(&result)
            .arg("--out")
            .arg(&out_dir)
            .env("PATH", path)
            .env("FAKE_GH_STATE", self.state.path())
            .env_remove("GITHUB_WORKFLOW_REF")
            .env_remove("GITHUB_REPOSITORY")
            .env("GITHUB_OUTPUT", tmp.path().join("output"))
            .output()
            .unwrap();
        let mut tags: Vec<String> = std::fs::read_dir(&out_dir)
            .map(|rd| {
                rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        tags.sort();
        if out.status.success() {
            let output = std::fs::read_to_string(tmp.path().join("output")).unwrap();
            assert_eq!(output.trim(), format!("count={}", tags.len()));
            for t in &tags {
                let files: Vec<String> = std::fs::read_dir(out_dir.join(t))
                    .unwrap()
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect();
                assert_eq!(files.len(), 3, "{t}: SHA256SUMS and every asset: {files:?}");
            }
        }
        (out.status.code().unwrap_or(-1), text(&out.stderr), tags)
    }
}

#[test]
fn the_releases_of_this_run_are_collected_whole_for_attestation() {
    let forge = Forge::new();
    forge.release("openstack-scs2-1-33-v1", 0);
    forge.release("openstack-scs2-1-34-v1", 0);
    let (code, err, tags) = forge.collect(&["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(tags, ["openstack-scs2-1-33-v1", "openstack-scs2-1-34-v1"]);
}

#[test]
fn a_recent_release_a_crashed_run_left_unattested_is_collected_by_the_next_run() {
    let forge = Forge::new();
    forge.release("openstack-scs2-1-33-v2", 3); // published, then the run died
    let attested = forge.release("openstack-scs2-1-34-v2", 3);
    forge.mark_attested(&attested);
    forge.release("openstack-scs2-1-32-v5", 24 * 30); // long ago: not looked at again
    forge.release("v0.1.0", 1); // stackbot's own binaries: attested by binaries.yml
    let (code, err, tags) = forge.collect(&[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(tags, ["openstack-scs2-1-33-v2"]);
    let calls = std::fs::read_to_string(forge.state.path().join("calls")).unwrap();
    assert!(
        calls.contains(&format!("--repo {REPO} --signer-workflow {SIGNER}")),
        "an existing attestation counts only when the release workflow signed it: {calls}"
    );
    // The quiet hour after: nothing left to attest.
    forge.mark_attested(
        &std::fs::read(
            forge
                .state
                .path()
                .join("releases/openstack-scs2-1-33-v2/SHA256SUMS"),
        )
        .unwrap(),
    );
    let (code, err, tags) = forge.collect(&[]);
    assert_eq!((code, tags.len()), (0, 0), "{err}");
}

#[test]
fn under_github_actions_the_signer_is_the_running_workflow() {
    let forge = Forge::new();
    forge.release("openstack-scs2-1-33-v2", 2);
    let tmp = tempfile::tempdir().unwrap();
    let path = std::env::join_paths(
        std::iter::once(forge.bin.clone())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let out = Command::new(root().join("scripts/collect-published-assets"))
        .args(["--repo", REPO, "--out"])
        .arg(tmp.path().join("out"))
        .env("PATH", path)
        .env("FAKE_GH_STATE", forge.state.path())
        .env(
            "GITHUB_WORKFLOW_REF",
            format!("{REPO}/.github/workflows/stackbot-release.yml@refs/heads/main"),
        )
        .env("GITHUB_REPOSITORY", REPO)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let calls = std::fs::read_to_string(forge.state.path().join("calls")).unwrap();
    assert!(
        calls.contains(&format!("--repo {REPO} --signer-workflow {SIGNER}\n")),
        "the caller of the action, without its @ref: {calls}"
    );
    // Outside GitHub Actions, the signer must be named.
    let bare = Command::new(root().join("scripts/collect-published-assets"))
        .args(["--repo", REPO, "--out", "x"])
        .env_remove("GITHUB_WORKFLOW_REF")
        .output()
        .unwrap();
    assert_eq!(bare.status.code(), Some(2));
}

#[test]
fn assets_that_disagree_with_their_sha256sums_are_never_attested() {
    let forge = Forge::new();
    forge.release("openstack-scs2-1-34-v3", 0);
    std::fs::write(
        forge
            .state
            .path()
            .join("releases/openstack-scs2-1-34-v3/metadata.yaml"),
        "tampered\n",
    )
    .unwrap();
    let (code, err, _) = forge.collect(&["openstack-scs2-1-34-v3"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("refusing to attest"), "{err}");
}

#[test]
fn a_tag_published_only_to_oci_is_skipped_with_a_note() {
    let forge = Forge::new();
    let (code, err, tags) = forge.collect(&["openstack-scs2-1-34-v4"]);
    assert_eq!(code, 0, "{err}");
    assert!(tags.is_empty());
    assert!(err.contains("no forge release"), "{err}");
}

// ---- the moving major tag of stackbot's own releases ----

/// A `gh api` stand-in over a set of refs in `state/refs` (`tags/vX.Y.Z` → sha lines),
/// recording every call.
const FAKE_GH_REFS: &str = r#"#!/usr/bin/env bash
set -euo pipefail
state="$FAKE_GH_STATE"
printf '%s\n' "$*" >> "$state/calls"
[ "$1" = api ] || exit 64
shift
method=GET
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --method) method="$2"; shift 2 ;;
    --jq) shift 2 ;;
    --silent) shift ;;
    -f | -F) args+=("$2"); shift 2 ;;
    *) path="$1"; shift ;;
  esac
done
refs="$state/refs"
touch "$refs"
case "$method $path" in
  "GET repos/"*"/git/matching-refs/tags/"*)
    prefix="${path##*/git/matching-refs/}"
    grep "^$prefix" "$refs" | cut -d' ' -f1 | sed 's#^#refs/#' || true ;;
  "GET repos/"*"/git/ref/tags/"*)
    name="${path##*/git/ref/}"
    grep -q "^$name " "$refs" || { echo "Not Found" >&2; exit 1; } ;;
  "PATCH repos/"*"/git/refs/tags/"*)
    name="${path##*/git/refs/}"; sha="${args[0]#sha=}"
    sed -i "s#^$name .*#$name $sha#" "$refs" ;;
  "POST repos/"*"/git/refs")
    name="${args[0]#ref=refs/}"; sha="${args[1]#sha=}"
    echo "$name $sha" >> "$refs" ;;
  *) echo "unexpected $method $path" >&2; exit 64 ;;
esac
"#;

fn move_major(state: &Path, tag: &str, sha: &str) -> Output {
    let bin = state.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("gh"), FAKE_GH_REFS).unwrap();
    chmod_x(&bin.join("gh"));
    let path = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    Command::new(root().join("scripts/move-major-tag"))
        .args(["--repo", REPO, "--tag", tag, "--commit", sha])
        .env("PATH", path)
        .env("FAKE_GH_STATE", state)
        .output()
        .unwrap()
}

fn refs(state: &Path) -> String {
    std::fs::read_to_string(state.join("refs")).unwrap_or_default()
}

#[test]
fn the_major_tag_follows_the_newest_release_of_its_major_and_only_forward() {
    let tmp = tempfile::tempdir().unwrap();
    let s = tmp.path();
    let (a, b, c) = ("a".repeat(40), "b".repeat(40), "c".repeat(40));
    // The first release creates v0.
    std::fs::write(s.join("refs"), format!("tags/v0.1.0 {a}\n")).unwrap();
    let out = move_major(s, "v0.1.0", &a);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(refs(s).contains(&format!("tags/v0 {a}\n")), "{}", refs(s));
    // A newer one moves it.
    std::fs::write(s.join("refs"), refs(s) + &format!("tags/v0.2.0 {b}\n")).unwrap();
    assert!(move_major(s, "v0.2.0", &b).status.success());
    assert!(refs(s).contains(&format!("tags/v0 {b}\n")), "{}", refs(s));
    // A patch of the older minor, released later, leaves it at the newest.
    std::fs::write(s.join("refs"), refs(s) + &format!("tags/v0.1.1 {c}\n")).unwrap();
    let out = move_major(s, "v0.1.1", &c);
    assert!(out.status.success());
    assert!(text(&out.stderr).contains("v0.2.0 is newer than v0.1.1"));
    assert!(refs(s).contains(&format!("tags/v0 {b}\n")), "{}", refs(s));
    // A pre-release never moves it; a non-SHA is refused.
    assert!(move_major(s, "v0.3.0-rc.1", &c).status.success());
    assert!(refs(s).contains(&format!("tags/v0 {b}\n")));
    assert_eq!(move_major(s, "v0.3.0", "main").status.code(), Some(2));
}
