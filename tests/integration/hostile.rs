//! The hostile and broken input corpus (issue 7, item 3): every case runs the real binary on a
//! scratch copy of the repository and asserts the documented exit code, a message naming the
//! file and the place (line, field or URL), no panic, and that nothing was written.
//!
//! The table of cases is also the documentation: `docs/reliability-corpus.md` is generated from
//! [`cases`] and checked by `corpus_table_in_docs_is_current` (regenerate with
//! `STACKBOT_BLESS=1 cargo test --test integration hostile::`).

use crate::support::copy_dir;
use crate::support::shared;
use crate::support::upstream_server;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use upstream_server::UpstreamServer;

use crate::support::root;

/// What a case gets to work with: a scratch repository and (for upstream cases) a fixture
/// server standing in for every upstream.
struct Ctx {
    dir: PathBuf,
    server: Option<UpstreamServer>,
}

impl Ctx {
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }
    fn write(&self, rel: &str, text: impl AsRef<[u8]>) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    fn edit(&self, rel: &str, from: &str, to: &str) {
        let text = std::fs::read_to_string(self.path(rel)).unwrap();
        assert!(text.contains(from), "{rel} does not contain {from:?}");
        std::fs::write(self.path(rel), text.replacen(from, to, 1)).unwrap();
    }
    fn server(&self) -> &UpstreamServer {
        self.server
            .as_ref()
            .expect("case needs the upstream server")
    }
}

/// Which exit code and which words the message must hold.
struct Case {
    id: &'static str,
    area: &'static str,
    /// One line for the table: what the input is.
    input: &'static str,
    /// Prepare the scratch repository; returns the command-line arguments.
    setup: fn(&Ctx) -> Vec<String>,
    code: i32,
    /// Substrings of stderr + stdout: the file and the place, and what is wrong.
    expect: &'static [&'static str],
    /// Needs the upstream fixture server.
    upstream: bool,
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

const TPL: &str = "templates/openstack/scs2";
const CHART_TPL: &str = "templates/openstack/scs2/cluster-class/Chart.yaml.tera";
const STACK: &str = "cluster-stacks/openstack/scs2/1-34";
const CHECKSUM_1_34_7: &str =
    "/capi/ubuntu-2404-kube-v1.34/ubuntu-2404-kube-v1.34.7.qcow2.CHECKSUM";
const SHA_1_34_7: &str = "f7bf12297833cca14de6d24081c8a01e99143651e4c01431b911375300550fe0";

fn add_to_template(c: &Ctx, text: &str) -> Vec<String> {
    let rel = format!("{TPL}/cluster-class/values.yaml.tera");
    let p = c.path(&rel);
    let rel = if p.exists() {
        rel
    } else {
        CHART_TPL.to_string()
    };
    let mut old = std::fs::read_to_string(c.path(&rel)).unwrap();
    old.push_str(text);
    c.write(&rel, old);
    args(&["render"])
}

fn render_with_sets(c: &Ctx, sets: &str) -> Vec<String> {
    c.write("sets.yaml", sets);
    args(&["render", "--release-set", "sets.yaml"])
}

/// One release set from the lock (1.34), as text, for mutation.
fn set_1_34() -> String {
    let lock = std::fs::read_to_string(root().join("stackbot.lock")).unwrap();
    let start = lock
        .find("- stack: openstack/scs2\n  kubernetes: v1.34")
        .unwrap();
    let rest = &lock[start + 2..];
    let end = rest.find("\n- stack:").map(|e| e + 1).unwrap_or(rest.len());
    format!("- {}", &rest[..end])
}

fn package(_: &Ctx) -> Vec<String> {
    args(&["package", STACK, "--out", "out", "--mode", "hash"])
}

/// A gzip'd tar with one entry whose name is written raw into the header (the `tar` crate
/// refuses to build such names, attackers do not).
fn evil_tgz(name: &str) -> Vec<u8> {
    let mut h = tar::Header::new_old();
    {
        let old = h.as_old_mut();
        old.name[..name.len()].copy_from_slice(name.as_bytes());
    }
    let data = b"apiVersion: v2\nname: evil\nversion: 1.0.0\n";
    h.set_size(data.len() as u64);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_cksum();
    let mut raw = Vec::new();
    raw.extend_from_slice(h.as_bytes());
    raw.extend_from_slice(data);
    raw.resize(512 + 512, 0);
    raw.extend_from_slice(&[0u8; 1024]);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&raw).unwrap();
    gz.finish().unwrap()
}

/// The demo config with every upstream pointed at the fixture server, read live.
fn detect(c: &Ctx) -> Vec<String> {
    detect_with(c, "demo/stackbot.yaml")
}

fn detect_with(c: &Ctx, config: &str) -> Vec<String> {
    let mut a = args(&["-c", config, "detect", "--live", "--now", "2026-05-01"]);
    for (from, to) in c.server().fixture_mirrors() {
        a.push("--mirror".into());
        a.push(format!("{from}={to}"));
    }
    a
}

fn fixture_server() -> UpstreamServer {
    UpstreamServer::with_fixtures()
}

const GOOD_TENANT: &str = "apiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: openstack-scs2-1-33\n  namespace: cluster\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"1.33\"\n  channel: stable\n  autoSubscribe: false\n  noProvider: true\n  versions: [v2]\n";

/// A local forge holding a published `openstack-scs2-1-33-v3` and one tenant repository
/// `acme/gitops` whose only file is `clusterstacks/a.yaml` = `tenant_file`; returns the
/// arguments of `stackbot tenants` on it.
fn tenants_on_local_forge(c: &Ctx, tenant_file: &str) -> Vec<String> {
    use stackbot::forge::{Forge, RepoRef, local::LocalForge};
    let cfg = "stacks:\n  - provider: openstack\n    name: scs2\n    templates: t\n    output: o\n    minors: [\"1.33\"]\n    node_image: {url: \"https://img/{version}.qcow2\", name: \"ubuntu-capi-image-{version}\"}\nforge:\n  repository: scs/cluster-stacks\n  local:\n    path: forge\ntenants:\n  - name: acme\n    repository: acme/gitops\n    files: [\"clusterstacks/*.yaml\"]\n    stacks: [openstack/scs2]\n";
    c.write("tenants.yaml", cfg);
    c.write("seed/acme/clusterstacks/a.yaml", tenant_file);
    c.write("seed/stacks/README.md", "stacks\n");
    let stacks = RepoRef::parse("scs/cluster-stacks").unwrap();
    let acme = RepoRef::parse("acme/gitops").unwrap();
    let f = LocalForge::new(c.path("forge"), "stackbot", "stackbot@example.org")
        .with_seed(stacks.clone(), c.path("seed/stacks"))
        .with_seed(acme.clone(), c.path("seed/acme"));
    f.ensure_repo(&stacks, "main").unwrap();
    f.ensure_repo(&acme, "main").unwrap();
    let tag = "openstack-scs2-1-33-v3";
    let head = f.branch_head(&stacks, "main").unwrap().unwrap();
    f.create_tag(&stacks, tag, &head, tag).unwrap();
    let r = f
        .create_draft_release(&stacks, tag, tag, "Kubernetes v1.33.5")
        .unwrap();
    let meta = "apiVersion: metadata.clusterstack.x-k8s.io/v1alpha1\nversions:\n    clusterStack: v3\n    kubernetes: v1.33.5\n    components:\n        clusterAddon: v1\n        nodeImage: v1\n";
    f.upload_asset(&stacks, r.id, "metadata.yaml", meta.as_bytes())
        .unwrap();
    f.publish_release(&stacks, r.id, true).unwrap();
    args(&["-c", "tenants.yaml", "tenants"])
}

/// The corpus. Keep ids stable: they are the rows of docs/reliability-corpus.md.
fn cases() -> Vec<Case> {
    [
        config_cases(),
        more_config_cases(),
        template_cases(),
        lock_cases(),
        cli_cases(),
        more_cli_cases(),
        package_cases(),
        more_package_cases(),
        tenant_file_cases(),
        upstream_cases(),
        more_upstream_cases(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The corpus: configuration.
fn config_cases() -> Vec<Case> {
    vec![
        Case {
            id: "config-not-yaml",
            area: "config",
            input: "stackbot.yaml is not YAML (unclosed flow sequence)",
            setup: |c| {
                c.write("stackbot.yaml", "stacks: [unclosed\n");
                args(&["validate"])
            },
            code: 2,
            expect: &["stackbot.yaml:"],
            upstream: false,
        },
        Case {
            id: "config-unknown-top-key",
            area: "config",
            input: "unknown top-level key `stackz` on line 3",
            setup: |c| {
                c.write("stackbot.yaml", "# typo below\nstacks: []\nstackz: 1\n");
                args(&["validate"])
            },
            code: 2,
            expect: &["stackbot.yaml:3", "stackz"],
            upstream: false,
        },
        Case {
            id: "config-unknown-stack-key",
            area: "config",
            input: "unknown key `templatez` inside a stack",
            setup: |c| {
                c.edit("stackbot.yaml", "    templates:", "    templatez:");
                args(&["validate"])
            },
            code: 2,
            expect: &["stackbot.yaml:", "templatez"],
            upstream: false,
        },
        Case {
            id: "config-wrong-type",
            area: "config",
            input: "`minors: 42` (a number, not a list or keyword)",
            setup: |c| {
                c.edit("stackbot.yaml", "minors: supported", "minors: 42");
                args(&["validate"])
            },
            code: 2,
            expect: &["stackbot.yaml:12", "stacks[0].minors", "quoted minors"],
            upstream: false,
        },
        Case {
            id: "config-bad-minor",
            area: "config",
            input: "`minors: [\"1.x\"]`",
            setup: |c| {
                c.edit("stackbot.yaml", "minors: supported", "minors: [\"1.x\"]");
                args(&["validate"])
            },
            code: 2,
            expect: &["stackbot.yaml:", "1.x"],
            upstream: false,
        },
        Case {
            id: "config-dash-in-stack-name",
            area: "config",
            input: "stack `name: scs-2` (a `-` would make release names ambiguous)",
            setup: |c| {
                c.edit("stackbot.yaml", "name: scs2", "name: scs-2");
                args(&["validate"])
            },
            code: 2,
            expect: &["stackbot.yaml", "scs-2"],
            upstream: false,
        },
        Case {
            id: "config-missing-file",
            area: "config",
            input: "`-c nope.yaml` does not exist",
            setup: |_| args(&["-c", "nope.yaml", "validate"]),
            code: 2,
            expect: &["nope.yaml", "-c FILE"],
            upstream: false,
        },
    ]
}

/// The corpus: configuration (continued).
fn more_config_cases() -> Vec<Case> {
    vec![
        Case {
            id: "config-empty",
            area: "config",
            input: "stackbot.yaml is empty",
            setup: |c| {
                c.write("stackbot.yaml", "");
                args(&["validate"])
            },
            code: 2,
            expect: &["stackbot.yaml"],
            upstream: false,
        },
        Case {
            id: "config-binary",
            area: "config",
            input: "stackbot.yaml holds bytes that are not UTF-8",
            setup: |c| {
                c.write("stackbot.yaml", [0xff, 0xfe, 0x00, 0x80, b'\n']);
                args(&["validate"])
            },
            code: 2,
            expect: &["stackbot.yaml"],
            upstream: false,
        },
        Case {
            id: "config-missing-templates",
            area: "config",
            input: "`templates: no/such/dir` (the template directory does not exist)",
            setup: |c| {
                c.edit(
                    "stackbot.yaml",
                    "templates: templates/openstack/scs2",
                    "templates: no/such/dir",
                );
                args(&["validate"])
            },
            code: 2,
            expect: &["no/such/dir"],
            upstream: false,
        },
    ]
}

/// The corpus: templates.
fn template_cases() -> Vec<Case> {
    vec![
        Case {
            id: "template-syntax-error",
            area: "template",
            input: "unclosed `{{` in a template",
            setup: |c| add_to_template(c, "\nbroken: {{ stack.name \n"),
            code: 2,
            expect: &["cluster-class/", ".tera"],
            upstream: false,
        },
        Case {
            id: "template-undefined-variable",
            area: "template",
            input: "`{{ no_such_variable }}`",
            setup: |c| add_to_template(c, "\nx: {{ no_such_variable }}\n"),
            code: 2,
            expect: &["cluster-class/", "no_such_variable"],
            upstream: false,
        },
        Case {
            id: "template-get-env",
            area: "template",
            input: "`{{ get_env(name=\"HOME\") }}` (reading the environment)",
            setup: |c| add_to_template(c, "\nhome: {{ get_env(name=\"HOME\") }}\n"),
            code: 2,
            expect: &["cluster-class/", "get_env"],
            upstream: false,
        },
        Case {
            id: "template-include-absolute",
            area: "template",
            input: "`{% include \"/etc/passwd\" %}`",
            setup: |c| add_to_template(c, "\n{% include \"/etc/passwd\" %}\n"),
            code: 2,
            expect: &["cluster-class/", "/etc/passwd"],
            upstream: false,
        },
        Case {
            id: "template-include-parent",
            area: "template",
            input: "`{% include \"../../../stackbot.yaml\" %}`",
            setup: |c| add_to_template(c, "\n{% include \"../../../stackbot.yaml\" %}\n"),
            code: 2,
            expect: &["cluster-class/", "stackbot.yaml"],
            upstream: false,
        },
        Case {
            id: "template-symlink-out",
            area: "template",
            input: "a symlink in the template tree pointing to /etc/passwd",
            setup: |c| {
                std::os::unix::fs::symlink("/etc/passwd", c.path(&format!("{TPL}/leak.yaml")))
                    .unwrap();
                args(&["render"])
            },
            code: 2,
            expect: &["leak.yaml", "symlink"],
            upstream: false,
        },
        Case {
            id: "template-fifo",
            area: "template",
            input: "a named pipe (special file) in the template tree",
            setup: |c| {
                mkfifo(&c.path(&format!("{TPL}/pipe")));
                args(&["render"])
            },
            code: 2,
            expect: &["pipe"],
            upstream: false,
        },
        Case {
            id: "template-3c6ca6c-chart-name",
            area: "template",
            input: "3c6ca6c: cluster-class chart still named for 1.33 while rendering 1.34",
            setup: |c| {
                c.edit(
                    CHART_TPL,
                    "{{ stack.provider }}-{{ stack.name }}-{{ minor.dashed }}-cluster-class",
                    "openstack-scs2-1-33-cluster-class",
                );
                args(&["render"])
            },
            code: 2,
            expect: &["Chart.yaml", "expected `openstack-scs2-1-34-cluster-class`"],
            upstream: false,
        },
    ]
}

/// The corpus: lock and release sets.
fn lock_cases() -> Vec<Case> {
    vec![
        Case {
            id: "lock-not-yaml",
            area: "release-set",
            input: "stackbot.lock is not YAML",
            setup: |c| {
                c.write("stackbot.lock", "release_sets: [\n");
                args(&["render"])
            },
            code: 2,
            expect: &["stackbot.lock"],
            upstream: false,
        },
        Case {
            id: "release-set-missing-file",
            area: "release-set",
            input: "`--release-set nope.yaml` does not exist",
            setup: |_| args(&["render", "--release-set", "nope.yaml"]),
            code: 2,
            expect: &["--release-set nope.yaml", "cannot read it"],
            upstream: false,
        },
        Case {
            id: "release-set-not-yaml",
            area: "release-set",
            input: "release-set file is not YAML",
            setup: |c| render_with_sets(c, "- stack: [\n"),
            code: 2,
            expect: &["sets.yaml"],
            upstream: false,
        },
        Case {
            id: "release-set-unknown-key",
            area: "release-set",
            input: "release set with an unknown key `kubernetez`",
            setup: |c| render_with_sets(c, &set_1_34().replace("  kubernetes:", "  kubernetez:")),
            code: 2,
            expect: &["sets.yaml", "kubernetez"],
            upstream: false,
        },
        Case {
            id: "release-set-bad-kubernetes",
            area: "release-set",
            input: "release set `kubernetes: 1.34.7` (no `v`)",
            setup: |c| {
                render_with_sets(
                    c,
                    &set_1_34().replace("kubernetes: v1.34", "kubernetes: 1.34"),
                )
            },
            code: 2,
            expect: &["sets.yaml", "1.34"],
            upstream: false,
        },
        Case {
            id: "release-set-bad-sha256",
            area: "release-set",
            input: "release set whose node image sha256 is 10 hex digits",
            setup: |c| {
                let s = set_1_34();
                let line = s
                    .lines()
                    .find(|l| l.trim_start().starts_with("sha256:"))
                    .unwrap();
                render_with_sets(c, &s.replace(line, "    sha256: 0123456789"))
            },
            code: 2,
            expect: &["sets.yaml", "sha256"],
            upstream: false,
        },
        Case {
            id: "release-set-untracked-minor",
            area: "release-set",
            input: "release set for a minor the stack does not track",
            setup: |c| {
                c.edit("stackbot.yaml", "minors: supported", "minors: [\"1.33\"]");
                render_with_sets(c, &set_1_34())
            },
            code: 2,
            expect: &["minor 1.34 is not in the stack's `minors`"],
            upstream: false,
        },
    ]
}

/// The corpus: command line.
fn cli_cases() -> Vec<Case> {
    vec![
        Case {
            id: "cli-unknown-subcommand",
            area: "cli",
            input: "`stackbot relase` (typo)",
            setup: |_| args(&["relase"]),
            code: 2,
            expect: &["relase"],
            upstream: false,
        },
        Case {
            id: "cli-unknown-flag",
            area: "cli",
            input: "`stackbot render --no-such-flag`",
            setup: |_| args(&["render", "--no-such-flag"]),
            code: 2,
            expect: &["--no-such-flag"],
            upstream: false,
        },
        Case {
            id: "cli-bad-now-date",
            area: "cli",
            input: "`--now 2026-13-01` (month 13)",
            setup: |_| args(&["--now", "2026-13-01", "validate"]),
            code: 2,
            expect: &["--now", "2026-13-01"],
            upstream: false,
        },
        Case {
            id: "cli-bad-now-word",
            area: "cli",
            input: "`--now yesterday`",
            setup: |_| args(&["--now", "yesterday", "validate"]),
            code: 2,
            expect: &["--now", "yesterday"],
            upstream: false,
        },
        Case {
            id: "cli-bad-format",
            area: "cli",
            input: "`--format yaml`",
            setup: |_| args(&["--format", "yaml", "validate"]),
            code: 2,
            expect: &["--format", "yaml"],
            upstream: false,
        },
        Case {
            id: "cli-bad-minor",
            area: "cli",
            input: "`render --minor 1.x`",
            setup: |_| args(&["render", "--minor", "1.x"]),
            code: 2,
            expect: &["--minor", "1.x"],
            upstream: false,
        },
        Case {
            id: "cli-bad-stack",
            area: "cli",
            input: "`render --stack scs2` (no provider)",
            setup: |_| args(&["render", "--stack", "scs2"]),
            code: 2,
            expect: &["--stack", "scs2"],
            upstream: false,
        },
        Case {
            id: "cli-unknown-stack",
            area: "cli",
            input: "`render --stack openstack/nope` (not configured)",
            setup: |_| args(&["render", "--stack", "openstack/nope"]),
            code: 2,
            expect: &["openstack/nope"],
            upstream: false,
        },
        Case {
            id: "cli-bad-package-version",
            area: "cli",
            input: "`package --version 2` (no `v`)",
            setup: |_| args(&["package", STACK, "--out", "out", "--version", "2"]),
            code: 2,
            expect: &["--version", "2"],
            upstream: false,
        },
        Case {
            id: "cli-bad-shard",
            area: "cli",
            input: "`tenants --shard 3/2`",
            setup: |_| args(&["tenants", "--dry-run", "--shard", "3/2"]),
            code: 2,
            expect: &["3/2"],
            upstream: false,
        },
    ]
}

/// The corpus: command line (continued).
fn more_cli_cases() -> Vec<Case> {
    vec![Case {
        id: "cli-bad-mirror",
        area: "cli",
        input: "`detect --mirror https://x` (no `=`)",
        setup: |_| args(&["detect", "--mirror", "https://x"]),
        code: 2,
        expect: &["--mirror", "FROM=TO"],
        upstream: false,
    }]
}

/// The corpus: packaging.
fn package_cases() -> Vec<Case> {
    vec![
        Case {
            id: "package-symlink-out",
            area: "package",
            input: "a symlink in the stack directory pointing to /etc/passwd",
            setup: |c| {
                std::os::unix::fs::symlink("/etc/passwd", c.path(&format!("{STACK}/leak")))
                    .unwrap();
                package(c)
            },
            code: 2,
            expect: &["leak", "symlink"],
            upstream: false,
        },
        Case {
            id: "package-fifo",
            area: "package",
            input: "a named pipe (special file) in the stack directory",
            setup: |c| {
                mkfifo(&c.path(&format!("{STACK}/pipe")));
                package(c)
            },
            code: 2,
            expect: &["pipe"],
            upstream: false,
        },
        Case {
            id: "package-archive-dotdot",
            area: "package",
            input: "vendored subchart .tgz with an entry `evil/../../escape`",
            setup: |c| {
                c.write(
                    &format!("{STACK}/cluster-class/charts/evil.tgz"),
                    evil_tgz("evil/../../escape"),
                );
                package(c)
            },
            code: 2,
            expect: &["cluster-class/charts/evil.tgz", "escape"],
            upstream: false,
        },
        Case {
            id: "package-archive-absolute",
            area: "package",
            input: "vendored subchart .tgz with an entry `/etc/evil`",
            setup: |c| {
                c.write(
                    &format!("{STACK}/cluster-class/charts/evil.tgz"),
                    evil_tgz("/etc/evil"),
                );
                package(c)
            },
            code: 2,
            expect: &[
                "cluster-class/charts/evil.tgz",
                "`/etc/evil` is an absolute path",
            ],
            upstream: false,
        },
        Case {
            id: "package-archive-garbage",
            area: "package",
            input: "vendored subchart .tgz that is not gzip",
            setup: |c| {
                c.write(
                    &format!("{STACK}/cluster-class/charts/evil.tgz"),
                    "<html>not an archive</html>",
                );
                package(c)
            },
            code: 2,
            expect: &["cluster-class/charts/evil.tgz"],
            upstream: false,
        },
        Case {
            id: "package-3c6ca6c",
            area: "package",
            input: "reference stack 3c6ca6c (cluster-class chart named for 1.33 in 1-34)",
            setup: |c| {
                copy_dir(
                    &shared::reference_stack("3c6ca6c", "openstack", "scs2"),
                    &c.path("ref"),
                );
                args(&["package", "ref", "--out", "out", "--mode", "hash"])
            },
            code: 2,
            expect: &[
                "cluster-class/Chart.yaml",
                "`name`",
                "openstack-scs2-1-34-cluster-class",
            ],
            upstream: false,
        },
    ]
}

/// The corpus: packaging (continued).
fn more_package_cases() -> Vec<Case> {
    vec![
        Case {
            id: "package-no-csctl",
            area: "package",
            input: "a stack directory without csctl.yaml",
            setup: |c| {
                std::fs::remove_file(c.path(&format!("{STACK}/csctl.yaml"))).unwrap();
                package(c)
            },
            code: 2,
            expect: &["csctl.yaml"],
            upstream: false,
        },
        Case {
            id: "hash-missing-dir",
            area: "package",
            input: "`hash` of a directory that does not exist",
            setup: |_| args(&["hash", "no/such/dir"]),
            code: 2,
            expect: &["no/such/dir"],
            upstream: false,
        },
    ]
}

/// The corpus: tenant files.
fn tenant_file_cases() -> Vec<Case> {
    vec![
        Case {
            id: "tenant-file-not-yaml",
            area: "tenants",
            input: "a tenant file whose second document is not YAML",
            setup: |c| tenants_on_local_forge(c, &format!("{GOOD_TENANT}---\nspec: [unclosed\n")),
            code: 3,
            expect: &["acme", "clusterstacks/a.yaml:", "not valid YAML"],
            upstream: false,
        },
        Case {
            id: "tenant-file-no-clusterstack",
            area: "tenants",
            input: "a tenant file matched by `files` holding no ClusterStack of the stack",
            setup: |c| tenants_on_local_forge(c, &GOOD_TENANT.replace("name: scs2", "name: scs")),
            code: 3,
            expect: &[
                "acme",
                "clusterstacks/*.yaml",
                "no ClusterStack resource of openstack/scs2",
            ],
            upstream: false,
        },
        Case {
            id: "tenant-unquoted-kubernetes-version",
            area: "tenants",
            input: "`kubernetesVersion: 1.33` unquoted (YAML reads a float)",
            setup: |c| tenants_on_local_forge(c, &GOOD_TENANT.replace("\"1.33\"", "1.33")),
            code: 3,
            expect: &["acme", "clusterstacks/a.yaml", "must be a quoted string"],
            upstream: false,
        },
        Case {
            id: "tenant-versions-alias",
            area: "tenants",
            input: "`spec.versions` is a YAML alias (editing it would change another node)",
            setup: |c| {
                tenants_on_local_forge(
                    c,
                    &GOOD_TENANT
                        .replace("metadata:\n", "x-versions: &v [v2]\nmetadata:\n")
                        .replace("versions: [v2]", "versions: *v"),
                )
            },
            code: 3,
            expect: &["acme", "clusterstacks/a.yaml:", "spec.versions is an alias"],
            upstream: false,
        },
        Case {
            id: "tenant-config-bad-repository",
            area: "tenants",
            input: "tenant `repository: acme` (not `owner/name`)",
            setup: |c| {
                let a = tenants_on_local_forge(c, GOOD_TENANT);
                c.edit(
                    "tenants.yaml",
                    "repository: acme/gitops",
                    "repository: acme",
                );
                a
            },
            code: 2,
            expect: &["tenants.yaml:", "repository `acme` is not `owner/name`"],
            upstream: false,
        },
    ]
}

/// The corpus: upstream answers.
fn upstream_cases() -> Vec<Case> {
    vec![
        Case {
            id: "upstream-snapshot-truncated",
            area: "upstream",
            input: "`detect --snapshot` of a truncated JSON file",
            setup: |c| {
                c.write("snap.json", "{\"fetched\": {\"https://dl.k8s.io");
                args(&[
                    "-c",
                    "demo/stackbot.yaml",
                    "detect",
                    "--snapshot",
                    "snap.json",
                ])
            },
            code: 2,
            expect: &["snap.json"],
            upstream: false,
        },
        Case {
            id: "upstream-helm-index-html",
            area: "upstream",
            input: "a Helm index answered with an HTML maintenance page (200)",
            setup: |c| {
                c.server().set(
                    "/cpo/index.yaml",
                    200,
                    "<html><body><h1>Maintenance</h1></body></html>",
                );
                detect(c)
            },
            code: 0,
            expect: &[
                "cloud-provider-openstack/index.yaml",
                "not a Helm repository index",
            ],
            upstream: true,
        },
        Case {
            id: "upstream-releases-truncated-json",
            area: "upstream",
            input: "page 2 of the GitHub releases list is truncated JSON",
            setup: |c| {
                c.server().set(
                    "/github/repos/kubernetes/kubernetes/releases?per_page=100&page=2",
                    200,
                    r#"[{"tag_name": "v1.3"#,
                );
                detect(c)
            },
            // A source the SCS 0210 verdicts depend on: `unknown`, and exit 1.
            code: 1,
            expect: &["page=2", "malformed or truncated"],
            upstream: true,
        },
        Case {
            id: "upstream-checksum-wrong-length",
            area: "upstream",
            input: "node-image CHECKSUM with a 10-digit hash",
            setup: |c| {
                c.server().set(
                    CHECKSUM_1_34_7,
                    200,
                    "0123456789  ubuntu-2404-kube-v1.34.7.qcow2\n",
                );
                detect(c)
            },
            code: 0,
            expect: &["ubuntu-2404-kube-v1.34.7.qcow2.CHECKSUM", "not a sha256"],
            upstream: true,
        },
        Case {
            id: "upstream-checksum-wrong-file",
            area: "upstream",
            input: "node-image CHECKSUM naming another file",
            setup: |c| {
                c.server().set(
                    CHECKSUM_1_34_7,
                    200,
                    format!("{SHA_1_34_7}  ubuntu-2404-kube-v1.34.6.qcow2\n"),
                );
                detect(c)
            },
            code: 0,
            expect: &[
                "ubuntu-2404-kube-v1.34.7.qcow2.CHECKSUM",
                "expected `ubuntu-2404-kube-v1.34.7.qcow2`",
            ],
            upstream: true,
        },
    ]
}

/// The corpus: upstream answers (continued).
fn more_upstream_cases() -> Vec<Case> {
    vec![
        Case {
            id: "upstream-helm-prereleases-only",
            area: "upstream",
            input: "a Helm index holding only pre-releases of the chart",
            setup: |c| {
                c.server().set(
                "/metrics-server/index.yaml",
                200,
                "apiVersion: v1\nentries:\n  metrics-server:\n  - name: metrics-server\n    version: 3.13.0-rc.1\n    urls: [metrics-server-3.13.0-rc.1.tgz]\n  - name: metrics-server\n    version: 3.14.0-beta.2\n    urls: [metrics-server-3.14.0-beta.2.tgz]\n",
            );
                detect(c)
            },
            code: 0,
            expect: &["metrics-server", "3.13.0"],
            upstream: true,
        },
        Case {
            id: "upstream-oversized",
            area: "upstream",
            input: "a Helm index larger than the 64 MiB response limit",
            setup: |c| {
                c.server()
                    .set("/cilium/index.yaml", 200, vec![b'#'; 64 * 1024 * 1024 + 1]);
                detect(c)
            },
            code: 0,
            expect: &["/cilium/index.yaml", "larger than 67108864 bytes"],
            upstream: true,
        },
        Case {
            id: "upstream-schedule-html",
            area: "upstream",
            input: "the Kubernetes schedule (needed by `minors: supported`) answered with an HTML error page",
            setup: |c| {
                c.server().set(
                    "/web/k8s-schedule.yaml",
                    200,
                    "<!DOCTYPE html><html><body>502 Bad Gateway</body></html>",
                );
                detect_with(c, "stackbot.yaml")
            },
            // A source the SCS 0210 verdicts depend on: `unknown`, and exit 1.
            code: 1,
            expect: &["Kubernetes schedule unusable", "schedule.yaml"],
            upstream: true,
        },
    ]
}

fn mkfifo(p: &Path) {
    let st = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap();
    assert!(st.success());
}

/// Everything `render`, `package` and `detect` read and write.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in ["stackbot.yaml", "stackbot.lock"] {
        std::fs::copy(root().join(f), dir.path().join(f)).unwrap();
    }
    copy_dir(&root().join("templates"), &dir.path().join("templates"));
    copy_dir(
        &root().join("cluster-stacks"),
        &dir.path().join("cluster-stacks"),
    );
    copy_dir(&root().join("examples/local"), &dir.path().join("demo"));
    dir
}

/// Every entry below `dir` but the HTTP cache: path → (kind, bytes or link target). Special
/// files are listed by kind only (reading a FIFO would block).
fn snapshot(dir: &Path) -> BTreeMap<String, (char, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (char, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let ft = e.file_type().unwrap();
            if ft.is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.insert(rel, ('l', t.to_string_lossy().as_bytes().to_vec()));
            } else if ft.is_dir() {
                out.insert(rel.clone(), ('d', Vec::new()));
                walk(root, &p, out);
            } else if ft.is_file() {
                out.insert(rel, ('f', std::fs::read(&p).unwrap()));
            } else {
                out.insert(rel, ('s', Vec::new()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    // The upstream HTTP cache (ETags) may fill during `detect`: it is not output.
    out.retain(|k, _| !k.starts_with(".stackbot"));
    out
}

fn run_case(case: &Case) -> Result<(), String> {
    let tmp = scratch();
    let ctx = Ctx {
        dir: tmp.path().to_path_buf(),
        server: case.upstream.then(fixture_server),
    };
    let argv = (case.setup)(&ctx);
    let before = snapshot(tmp.path());
    let out = Command::cargo_bin("stackbot")
        .unwrap()
        .current_dir(tmp.path())
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_TOKEN")
        .env("NO_COLOR", "1")
        .args(&argv)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let all = format!("{stdout}\n{stderr}");
    let mut problems = Vec::new();
    if out.status.code() != Some(case.code) {
        problems.push(format!(
            "exit code {:?}, expected {}",
            out.status.code(),
            case.code
        ));
    }
    if all.contains("panicked at") || all.contains("RUST_BACKTRACE") {
        problems.push("panicked".to_string());
    }
    for needle in case.expect {
        if !all.contains(needle) {
            problems.push(format!("output lacks {needle:?}"));
        }
    }
    let after = snapshot(tmp.path());
    if before != after {
        let changed: Vec<&String> = before
            .keys()
            .chain(after.keys())
            .filter(|k| before.get(*k) != after.get(*k))
            .collect();
        problems.push(format!("files changed: {changed:?}"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "case {} ({}): {}\n  argv: {argv:?}\n  stdout: {}\n  stderr: {}",
            case.id,
            case.input,
            problems.join("; "),
            stdout.chars().take(3000).collect::<String>(),
            stderr.chars().take(3000).collect::<String>()
        ))
    }
}

fn run_area(area: &str) {
    let cases: Vec<Case> = cases().into_iter().filter(|c| c.area == area).collect();
    assert!(!cases.is_empty());
    let failures: Vec<String> = cases.iter().filter_map(|c| run_case(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} {area} cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

#[test]
fn hostile_config() {
    run_area("config");
}

#[test]
fn hostile_templates() {
    run_area("template");
}

#[test]
fn hostile_release_sets() {
    run_area("release-set");
}

#[test]
fn hostile_command_lines() {
    run_area("cli");
}

#[test]
fn hostile_packages() {
    run_area("package");
}

#[test]
fn hostile_tenant_files() {
    run_area("tenants");
}

#[test]
fn hostile_upstream_answers() {
    run_area("upstream");
}

#[test]
fn the_corpus_is_large_and_ids_are_unique() {
    let cases = cases();
    assert!(cases.len() >= 40, "only {} cases", cases.len());
    let ids: std::collections::BTreeSet<_> = cases.iter().map(|c| c.id).collect();
    assert_eq!(ids.len(), cases.len(), "duplicate case ids");
}

/// The markdown table in docs/reliability-corpus.md, generated from [`cases`].
fn corpus_table() -> String {
    let cases = cases();
    let mut s = String::from(
        "# Hostile input corpus\n\n\
         Generated from `tests/integration/hostile.rs` (regenerate with `STACKBOT_BLESS=1 cargo test --test integration hostile::`).\n\
         Every row is a test: the real binary runs on a scratch copy of the repository; the test\n\
         asserts the exit code, that the output names the file and place (the \"message holds\"\n\
         column), that nothing panicked and that no file below the repository changed.\n\n",
    );
    s.push_str(&format!("{} cases.\n\n", cases.len()));
    s.push_str("| # | case | area | input | exit | message holds |\n|---|---|---|---|---|---|\n");
    for (i, c) in cases.iter().enumerate() {
        let holds: Vec<String> = c
            .expect
            .iter()
            .map(|e| format!("`{}`", e.replace('`', "'").replace('|', "\\|")))
            .collect();
        s.push_str(&format!(
            "| {} | `{}` | {} | {} | {} | {} |\n",
            i + 1,
            c.id,
            c.area,
            c.input.replace('|', "\\|"),
            c.code,
            holds.join(", ")
        ));
    }
    s
}

#[test]
fn corpus_table_in_docs_is_current() {
    let path = root().join("docs/reliability-corpus.md");
    let generated = corpus_table();
    if std::env::var_os("STACKBOT_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/reliability-corpus.md is stale: regenerate it with\n  \
         STACKBOT_BLESS=1 cargo test --test integration hostile::corpus_table\nand commit the result."
    );
}
