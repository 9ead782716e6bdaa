//! Secrets never leave the process except towards the forge or API that needs them (issue 7,
//! item 4). Every scenario that takes a token runs with a recognisable canary value at the
//! most verbose log level (`-vvv`), and the canary — plain, base64, or as git's basic-auth
//! pair — must not appear in any stdout, stderr, error, written file, commit, tag, release
//! note, pull request, or comment. Plain `http://` towards a non-loopback host is refused by
//! every client before it connects.

use crate::support;
use crate::support::upstream_server;

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use base64::Engine as _;
use support::fake_github::FakeGithub;
use upstream_server::UpstreamServer;

const CANARY: &str = "ghp_STACKBOTSECRETCANARY0123456789abcdef";
const TOKEN_ENV: &str = "STACKBOT_CANARY_TOKEN";

use crate::support::config::DemoConfig;
use crate::support::root;

/// Every spelling of the canary that could leak: itself, base64 of it and of the
/// `x-access-token:<token>` pair git sends, and a distinctive fragment.
fn spellings(token: &str) -> Vec<String> {
    let b64 = base64::engine::general_purpose::STANDARD;
    vec![
        token.to_string(),
        b64.encode(token),
        b64.encode(format!("x-access-token:{token}")),
        b64.encode(format!("{token}:")),
        token[4..24].to_string(),
    ]
}

/// Fails naming `what` and the spelling if any spelling of `token` is in `haystack`.
fn assert_clean(what: &str, haystack: &[u8], token: &str) {
    let text = String::from_utf8_lossy(haystack);
    for s in spellings(token) {
        assert!(
            !text.contains(&s),
            "the token leaked into {what} (as {s:?})"
        );
    }
}

/// Every regular file below `dir`.
fn assert_files_clean(dir: &Path, token: &str) {
    for e in walk(dir) {
        let bytes = std::fs::read(&e).unwrap();
        assert_clean(&format!("file {}", e.display()), &bytes, token);
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd {
        let e = e.unwrap();
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            out.extend(walk(&e.path()));
        } else if ft.is_file() {
            out.push(e.path());
        }
    }
    out
}

fn assert_output_clean(what: &str, out: &Output, token: &str) {
    assert_clean(&format!("{what} stdout"), &out.stdout, token);
    assert_clean(&format!("{what} stderr"), &out.stderr, token);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked at"), "{what}: {stderr}");
}

const TENANT_FILE: &str = "# acme production\napiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: openstack-scs2-1-34\n  namespace: cluster\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"1.34\"\n  autoSubscribe: false\n  noProvider: true\n  versions: [v0]  # pinned\n";

/// The demo configuration on the fake GitHub, with one tenant repository.
fn github_config(dir: &Path, fake: &FakeGithub) -> PathBuf {
    DemoConfig::new()
        .on_github(&fake.api_url(), &fake.upload_url(), TOKEN_ENV)
        .tenant("acme")
        .write(dir)
}

fn stackbot(dir: &Path, cfg: &Path, token: &str, args: &[&str]) -> Output {
    Command::cargo_bin("stackbot")
        .unwrap()
        .current_dir(dir)
        .env(TOKEN_ENV, token)
        .env("GITHUB_TOKEN", token)
        .env("NO_COLOR", "1")
        .env("STACKBOT_LOG", "trace")
        .env_remove("GITHUB_ACTIONS")
        .args(["-vvv", "-c", cfg.to_str().unwrap(), "--now", "2026-05-01"])
        .args(args)
        .output()
        .unwrap()
}

fn fake_with_repos(token: &str) -> FakeGithub {
    crate::support::fake_github::demo::start(token, &["acme/gitops"], TENANT_FILE)
}

#[test]
fn release_plan_and_tenants_on_the_fake_github_never_leak_the_token() {
    let fake = fake_with_repos(CANARY);
    let dir = tempfile::tempdir().unwrap();
    let cfg = github_config(dir.path(), &fake);

    let mut outputs = Vec::new();
    for (what, args) in [
        ("plan", vec!["plan"]),
        (
            "plan --format markdown",
            vec!["--format", "markdown", "plan"],
        ),
        ("release", vec!["release"]),
        (
            "release --format json (no-op)",
            vec!["--format", "json", "release"],
        ),
        ("tenants", vec!["tenants"]),
        ("tenants --dry-run", vec!["tenants", "--dry-run"]),
    ] {
        let out = stackbot(dir.path(), &cfg, CANARY, &args);
        assert_output_clean(what, &out, CANARY);
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        outputs.push(out);
    }
    // The run really did publish and propose: the scan covered real bodies.
    let snap = fake.snapshot();
    let stacks = &snap.repos["scs/cluster-stacks"];
    assert!(!stacks.releases.is_empty(), "release published nothing");
    assert!(
        !snap.repos["acme/gitops"].pulls.is_empty(),
        "no tenant pull request was opened: {:?}",
        snap.repos["acme/gitops"]
    );
    // Verbose logs were really on.
    assert!(
        outputs
            .iter()
            .any(|o| String::from_utf8_lossy(&o.stderr).contains("DEBUG")
                || String::from_utf8_lossy(&o.stderr).contains("TRACE")),
        "no debug logging seen"
    );
    // Commits, tags, release notes, assets' names, PR titles and bodies, comments, files.
    assert_clean(
        "the forge state",
        &serde_json::to_vec(&snap).unwrap(),
        CANARY,
    );
    assert_clean(
        "the forge state (debug)",
        format!("{snap:?}").as_bytes(),
        CANARY,
    );
    // Rendered stacks, packages, caches: anything written next to the config.
    assert_files_clean(dir.path(), CANARY);
}

/// Every secret spelling of a GitHub App run: each line of the private key's body, the whole
/// body on one line, and the prefixes every JWT (`eyJhbGciOiJSUzI1NiI…`) and installation
/// token (`ghs_`) starts with.
fn app_secret_spellings(pem: &str) -> Vec<String> {
    let body: Vec<&str> = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let mut out: Vec<String> = body.iter().map(|l| l.to_string()).collect();
    out.push(body.concat());
    out.push("eyJhbGciOiJSUzI1NiI".into());
    out.push("ghs_".into());
    out
}

#[test]
fn a_github_app_s_key_jwts_and_installation_tokens_never_leak() {
    const APP: u64 = 77;
    const KEY_ENV: &str = "STACKBOT_CANARY_APP_KEY";
    let pem =
        std::fs::read_to_string(root().join("tests/fixtures/github/app/test-app-private-key.pem"))
            .unwrap();
    let fake = fake_with_repos("ghp_no_personal_token_is_accepted");
    fake.register_app(APP, &pem);
    fake.install_app(APP, "scs");
    fake.install_app(APP, "acme");
    let dir = tempfile::tempdir().unwrap();
    let cfg = github_config(dir.path(), &fake);
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        &format!("    token_env: {TOKEN_ENV}\n"),
        &format!(
            "    token_env: {TOKEN_ENV}\n    app: {{id: {APP}, private_key_env: {KEY_ENV}}}\n"
        ),
    );
    std::fs::write(&cfg, text).unwrap();
    let secrets = app_secret_spellings(&pem);
    for args in [vec!["release"], vec!["tenants"], vec!["plan"]] {
        let out = Command::cargo_bin("stackbot")
            .unwrap()
            .current_dir(dir.path())
            .env(KEY_ENV, &pem)
            .env_remove(TOKEN_ENV)
            .env_remove("GITHUB_TOKEN")
            .env("NO_COLOR", "1")
            .env("STACKBOT_LOG", "trace")
            .env_remove("GITHUB_ACTIONS")
            .args(["-vvv", "-c", cfg.to_str().unwrap(), "--now", "2026-05-01"])
            .args(&args)
            .output()
            .unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{args:?}: {all}");
        for s in &secrets {
            assert!(
                !all.contains(s.as_str()),
                "{args:?}: App secret leaked ({s:?})"
            );
        }
    }
    let snap = fake.snapshot();
    assert!(!snap.repos["scs/cluster-stacks"].releases.is_empty());
    assert!(!snap.repos["acme/gitops"].pulls.is_empty());
    let state = format!("{snap:?}");
    for s in &secrets {
        assert!(
            !state.contains(s.as_str()),
            "App secret in the forge state ({s:?})"
        );
    }
    for f in walk(dir.path()) {
        let bytes = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).to_string();
        for s in &secrets {
            assert!(!bytes.contains(s.as_str()), "App secret in {}", f.display());
        }
    }
}

#[test]
fn a_rejected_token_is_not_echoed_in_errors() {
    let fake = fake_with_repos("ghp_theRIGHTtokenISdifferent_000000000");
    let dir = tempfile::tempdir().unwrap();
    let cfg = github_config(dir.path(), &fake);
    let before = fake.snapshot();
    for args in [vec!["release"], vec!["tenants"]] {
        let out = stackbot(dir.path(), &cfg, CANARY, &args);
        assert_output_clean(&args.join(" "), &out, CANARY);
        assert_ne!(out.status.code(), Some(0), "{args:?} with a bad token");
    }
    assert_eq!(fake.snapshot(), before, "a bad token changes nothing");
    assert_files_clean(dir.path(), CANARY);
}

#[test]
fn detect_sends_the_token_only_to_the_github_api_and_never_writes_it() {
    let fixtures = root().join("tests/fixtures/upstream");
    let s = UpstreamServer::start();
    let text = std::fs::read_to_string(fixtures.join("kubernetes-releases.json")).unwrap();
    let releases: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    s.paginate_json(
        "/github/repos/kubernetes/kubernetes/releases",
        &releases,
        25,
    );
    s.serve_dir("/dl", &fixtures.join("dl.k8s.io/release"));
    s.serve_dir("/capi", &fixtures.join("capi-images"));
    s.serve_dir("/web", &fixtures);
    s.serve_dir("/cve", &fixtures.join("cve"));
    for (path, file) in [
        ("/cpo/index.yaml", "helm-index-cpo.yaml"),
        ("/cilium/index.yaml", "helm-index-cilium.yaml"),
        (
            "/metrics-server/index.yaml",
            "helm-index-metrics-server.yaml",
        ),
    ] {
        s.set(path, 200, std::fs::read(fixtures.join(file)).unwrap());
    }
    let u = s.url();
    let dir = tempfile::tempdir().unwrap();
    // The GitHub API itself on loopback (not a mirror), so the token is really sent to it.
    let demo = std::fs::read_to_string(root().join("examples/local/stackbot.yaml")).unwrap();
    let cfg = dir.path().join("stackbot.yaml");
    std::fs::write(
        &cfg,
        demo.replace(
            "github_api: https://api.github.com",
            &format!("github_api: {u}/github"),
        ),
    )
    .unwrap();
    let mut args: Vec<String> = [
        "detect",
        "--live",
        "--save",
        "saved.json",
        "--cache-dir",
        "cache",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for (from, to) in [
        ("https://dl.k8s.io/release", format!("{u}/dl")),
        (
            "https://raw.githubusercontent.com/kubernetes/website/main/data/releases/schedule.yaml",
            format!("{u}/web/k8s-schedule.yaml"),
        ),
        (
            "https://nbg1.your-objectstorage.com/osism/openstack-k8s-capi-images",
            format!("{u}/capi"),
        ),
        (
            "https://kubernetes.github.io/cloud-provider-openstack",
            format!("{u}/cpo"),
        ),
        ("https://helm.cilium.io", format!("{u}/cilium")),
        (
            "https://kubernetes.io/docs/reference/issues-security/official-cve-feed/index.json",
            format!("{u}/cve/index.json"),
        ),
        (
            "https://cveawg.mitre.org/api/cve",
            format!("{u}/cve/records"),
        ),
        (
            "https://kubernetes-sigs.github.io/metrics-server",
            format!("{u}/metrics-server"),
        ),
    ] {
        args.push("--mirror".into());
        args.push(format!("{from}={to}"));
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    for format in ["text", "json"] {
        let mut a = vec!["--format", format];
        a.extend(&argv);
        let out = stackbot(dir.path(), &cfg, CANARY, &a);
        assert_output_clean(&format!("detect --format {format}"), &out, CANARY);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(dir.path().join("saved.json").is_file());
    assert_files_clean(dir.path(), CANARY);
    let seen = s.seen();
    assert!(
        seen.iter().any(|r| r.authorization.is_some()),
        "the token was used"
    );
    for r in &seen {
        if r.authorization.is_some() {
            assert!(
                r.target.starts_with("/github/"),
                "the token went to {}",
                r.target
            );
        }
    }
}

/// `http://` towards 192.0.2.1 (TEST-NET-1, never routed): each client must refuse before
/// connecting, so each command fails fast and names the rule.
#[test]
fn plain_http_to_a_non_loopback_host_is_refused_by_every_client() {
    let dir = tempfile::tempdir().unwrap();

    // GitHub forge.
    let fake = fake_with_repos(CANARY);
    let cfg = github_config(dir.path(), &fake);
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        text.replace(&fake.api_url(), "http://192.0.2.1/api/v3"),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let out = stackbot(dir.path(), &cfg, CANARY, &["tenants"]);
    assert_output_clean("tenants over http", &out, CANARY);
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("plain http://"), "{err}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(8),
        "refused before connecting (a connect to 192.0.2.1 would hang)"
    );

    // Upstream client: a mirror (or a configured URL) on plain http to a remote host.
    let demo = root().join("examples/local/stackbot.yaml");
    let out = stackbot(
        dir.path(),
        &demo,
        CANARY,
        &[
            "detect",
            "--live",
            "--mirror",
            "https://api.github.com=http://192.0.2.1/github",
            "--mirror",
            "https://dl.k8s.io/release=http://192.0.2.1/dl",
            "--mirror",
            "https://nbg1.your-objectstorage.com=http://192.0.2.1/img",
            "--mirror",
            "https://kubernetes.github.io=http://192.0.2.1/charts",
            "--mirror",
            "https://helm.cilium.io=http://192.0.2.1/cilium",
            "--mirror",
            "https://kubernetes-sigs.github.io=http://192.0.2.1/ms",
            "--mirror",
            "https://raw.githubusercontent.com=http://192.0.2.1/raw",
            "--mirror",
            "https://kubernetes.io=http://192.0.2.1/k8s",
            "--mirror",
            "https://cveawg.mitre.org=http://192.0.2.1/cve",
        ],
    );
    assert_output_clean("detect over http", &out, CANARY);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(all.contains("plain http://"), "{all}");
    assert!(
        !all.contains("refused the connection") && !all.contains("could not reach"),
        "nothing was contacted: {all}"
    );

    // OCI registry.
    use stackbot::oci::target::{Credentials, OciTarget};
    let err = OciTarget::new(
        "192.0.2.1:5000",
        "192.0.2.1:5000/scs/stacks",
        true,
        Credentials::Anonymous,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("plain HTTP is only allowed"), "{err}");
    assert!(
        OciTarget::new(
            "127.0.0.1:5000",
            "127.0.0.1:5000/scs/stacks",
            true,
            Credentials::Anonymous
        )
        .is_ok()
    );
}
