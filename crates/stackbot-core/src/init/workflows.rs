//! The two workflows `stackbot init` writes into the cluster-stacks repository: the hourly
//! release (optionally followed by a matrix of tenant shards) and the pull-request preview.
//!
//! Both are thin: a checkout and the reusable action, pinned by full commit SHA with the
//! version in a comment. Everything stackbot-specific (install and verify the binary, the
//! answer cache, summaries, attestations) lives in the action, so a new stackbot release
//! changes one line here. The text is generated, not templated by the user: the same inputs
//! always give the same bytes (re-running `init` shows no diff).

use super::Setup;

/// A third-party action the generated workflows use, pinned like every action in stackbot's
/// own workflows (full commit SHA, version comment). One table, so a bump is one edit and
/// the tests can check every pin the generated files contain against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pinned {
    pub action: &'static str,
    pub commit: &'static str,
    pub version: &'static str,
}

impl Pinned {
    /// `owner/name@sha # vX.Y.Z`, as it goes after `uses:`.
    pub fn uses(&self) -> String {
        format!("{}@{} # {}", self.action, self.commit, self.version)
    }
}

/// `actions/checkout`.
pub const CHECKOUT: Pinned = Pinned {
    action: "actions/checkout",
    commit: "08c6903cd8c0fde910a37f88322edcfb5dd907a8",
    version: "v5.0.0",
};

/// `actions/create-github-app-token`: the App token when `vars.STACKBOT_APP_ID` is set.
pub const APP_TOKEN: Pinned = Pinned {
    action: "actions/create-github-app-token",
    commit: "fee1f7d63c2ff003460e3d139729b119787bc349",
    version: "v2.2.2",
};

/// Every third-party action a generated workflow may use.
pub const PINNED: &[Pinned] = &[CHECKOUT, APP_TOKEN];

/// Where the generated release workflow lives in the cluster-stacks repository.
pub const RELEASE_PATH: &str = ".github/workflows/stackbot-release.yml";
/// Where the generated preview workflow lives.
pub const PREVIEW_PATH: &str = ".github/workflows/stackbot-preview.yml";

fn header(setup: &Setup, what: &str) -> String {
    format!(
        "# {what}\n\
         # Written by `stackbot init` (stackbot {version}); the action is pinned to the commit of\n\
         # stackbot {pin_version}. Running `stackbot init` again shows what it would change here and\n\
         # writes nothing that was edited without --update. Set-up, token and the first release:\n\
         # https://github.com/{repo}/blob/{pin_version}/docs/github-setup.md\n",
        version = setup.stackbot_version,
        pin_version = setup.pin.version,
        repo = setup.pin.repository,
    )
}

/// The `with:` lines of the action that every job passes: the config and the token.
fn common_with(setup: &Setup) -> String {
    let mut s = String::new();
    if setup.config != "stackbot.yaml" {
        s.push_str(&format!("          config: {}\n", yaml_str(&setup.config)));
    }
    s.push_str(
        "          # The App token when vars.STACKBOT_APP_ID is set, else a fine-grained token, else the\n          \
         # workflow's own (this repository only; its pull requests trigger no CI).\n          \
         token: ${{ steps.app.outputs.token || secrets.STACKBOT_TOKEN || github.token }}\n          \
         # For `forge.github.app` in stackbot.yaml (stackbot mints per-repository tokens itself).\n          \
         app-private-key: ${{ secrets.STACKBOT_APP_PRIVATE_KEY }}\n          \
         build-from-source: ${{ vars.STACKBOT_BUILD_FROM_SOURCE == 'true' }}\n",
    );
    s
}

/// Check out and mint the optional App token: the first steps of every job that writes.
fn checkout_and_token() -> String {
    format!(
        "      - name: Check out\n        \
         uses: {checkout}\n        \
         with:\n          \
         persist-credentials: false\n\
         \n      \
         # Optional: a GitHub App installation token, so that tenant pull requests trigger the\n      \
         # tenants' CI (pull requests opened with the workflow's token do not).\n      \
         - name: Mint a GitHub App token\n        \
         id: app\n        \
         if: vars.STACKBOT_APP_ID != ''\n        \
         uses: {app}\n        \
         with:\n          \
         app-id: ${{{{ vars.STACKBOT_APP_ID }}}}\n          \
         private-key: ${{{{ secrets.STACKBOT_APP_PRIVATE_KEY }}}}\n          \
         owner: ${{{{ github.repository_owner }}}}\n          \
         # Comma-separated: this repository plus the tenant repositories.\n          \
         repositories: ${{{{ vars.STACKBOT_APP_REPOSITORIES }}}}\n          \
         permission-contents: write\n          \
         permission-pull-requests: write\n          \
         permission-issues: write\n",
        checkout = CHECKOUT.uses(),
        app = APP_TOKEN.uses(),
    )
}

const DISPATCH_INPUTS: &str = "  workflow_dispatch:
    inputs:
      dry-run:
        description: Only show what would happen (the plan and every diff); change nothing.
        type: boolean
        default: false
      stack:
        description: Only this stack, as provider/name (e.g. openstack/scs2). Empty for all.
        type: string
        default: \"\"
      minor:
        description: Only this Kubernetes minor (e.g. 1.34). Empty for all.
        type: string
        default: \"\"
      # The overrides of docs/operations.md: a human's explicit decision, never the hourly default.
      allow-downgrade:
        description: Release a series even when its release set is older than its latest release (a deliberate downgrade).
        type: boolean
        default: false
      republish:
        description: Publish the content of these withdrawn releases again, under new numbers (tags separated by spaces). Empty for none.
        type: string
        default: \"\"
";

fn release_job(setup: &Setup, sharded: bool) -> String {
    let skip = if sharded {
        "          # The tenant pull requests are the `tenants` jobs' (below).\n          skip-tenants: \"true\"\n"
    } else {
        ""
    };
    format!(
        "  release:\n    \
         name: Release cluster stacks\n    \
         runs-on: ubuntu-24.04\n    \
         timeout-minutes: 60\n    \
         # Secrets live in this environment: restrict it to the default branch, add no reviewers\n    \
         # (the hourly run would wait for a human).\n    \
         environment: stackbot\n    \
         permissions:\n      \
         contents: write # commit rendered stacks, create tags and releases\n      \
         pull-requests: write # release pull requests (forge.mode: pull-request)\n      \
         issues: write # the status dashboard issue\n      \
         id-token: write # sign the attestations of the published assets (Sigstore, GitHub's OIDC token)\n      \
         attestations: write # store those attestations\n\
         {actions}    \
         outputs:\n      \
         tags: ${{{{ steps.stackbot.outputs.tags }}}}\n      \
         pull-requests: ${{{{ steps.stackbot.outputs.pull-requests }}}}\n      \
         compliant: ${{{{ steps.stackbot.outputs.compliant }}}}\n    \
         steps:\n\
         {checkout}\n      \
         - name: stackbot release\n        \
         id: stackbot\n        \
         uses: {pin}\n        \
         with:\n          \
         command: release\n          \
         # On the hourly schedule `inputs` is empty: the defaults below apply.\n          \
         dry-run: ${{{{ inputs.dry-run || false }}}}\n          \
         stack: ${{{{ inputs.stack }}}}\n          \
         minor: ${{{{ inputs.minor }}}}\n          \
         allow-downgrade: ${{{{ inputs.allow-downgrade || false }}}}\n          \
         republish: ${{{{ inputs.republish }}}}\n\
         {skip}{common}",
        checkout = checkout_and_token(),
        pin = setup.pin.uses(),
        common = common_with(setup),
        actions = if setup.dispatches_gate {
            "      actions: write # dispatch the conformance gate's workflow (gate.workflow), read its runs, cancel an overrun one\n"
        } else {
            ""
        },
    )
}

fn tenants_job(setup: &Setup, shards: u32) -> String {
    let list: Vec<String> = (1..=shards).map(|i| i.to_string()).collect();
    format!(
        "\n  # The tenant fan-out, in {shards} shards by a stable hash of the tenant name, after the\n  \
         # releases exist. Every shard's writes count against the same token's hourly budget:\n  \
         # keep `forge.github.writes_per_hour` at about 450/{shards} (docs/github-setup.md).\n  \
         tenants:\n    \
         name: Tenants (shard ${{{{ matrix.shard }}}}/{shards})\n    \
         needs: release\n    \
         # Also when some series failed (exit 1): the releases that exist still reach the tenants.\n    \
         if: ${{{{ !cancelled() }}}}\n    \
         runs-on: ubuntu-24.04\n    \
         timeout-minutes: 60\n    \
         environment: stackbot\n    \
         permissions:\n      \
         contents: read # the releases of this repository; tenant repositories use the App or PAT token\n    \
         strategy:\n      \
         fail-fast: false\n      \
         matrix:\n        \
         shard: [{list}]\n    \
         steps:\n\
         {checkout}\n      \
         - name: stackbot tenants\n        \
         uses: {pin}\n        \
         with:\n          \
         command: tenants\n          \
         shard: ${{{{ matrix.shard }}}}/{shards}\n          \
         dry-run: ${{{{ inputs.dry-run || false }}}}\n          \
         # The release job reports the status; one report per run is enough.\n          \
         status: \"false\"\n\
         {common}",
        list = list.join(", "),
        checkout = checkout_and_token(),
        pin = setup.pin.uses(),
        common = common_with(setup),
    )
}

/// `.github/workflows/stackbot-release.yml`: hourly and on demand, one run at a time; with
/// `tenant_shards` ≥ 2 the release job skips the tenants and a matrix of shards follows it.
pub fn release(setup: &Setup) -> String {
    let sharded = setup.tenant_shards >= 2;
    let mut s = header(
        setup,
        "stackbot: the hourly release bot. Detects upstream Kubernetes releases, renders, packages,\n\
         # tags, publishes and attests the cluster stacks of stackbot.yaml, opens the tenant pull\n\
         # requests and keeps the status dashboard issue current.",
    );
    s.push_str(&format!(
        "name: stackbot release\n\n\
         on:\n  \
         schedule:\n    \
         - cron: \"{minute} * * * *\"\n\
         {DISPATCH_INPUTS}\n\
         permissions: {{}}\n\n\
         # One run at a time, never cancelled half-way: a second run waits; every step checks\n\
         # \"already done?\" first, so even an overlap would publish nothing twice.\n\
         concurrency:\n  \
         group: stackbot-release\n  \
         cancel-in-progress: false\n\n\
         jobs:\n\
         {release}",
        minute = setup.cron_minute,
        release = release_job(setup, sharded),
    ));
    if sharded {
        s.push_str(&tenants_job(setup, setup.tenant_shards));
    }
    s
}

/// The paths whose change a preview is about.
fn preview_paths(setup: &Setup) -> Vec<String> {
    let mut paths = vec![
        setup.config.clone(),
        "stackbot.lock".to_string(),
        "templates/**".to_string(),
        "cluster-stacks/**".to_string(),
        RELEASE_PATH.to_string(),
        PREVIEW_PATH.to_string(),
    ];
    paths.dedup();
    paths
}

/// `.github/workflows/stackbot-preview.yml`: on pull requests touching the setup, one sticky
/// comment with the releases, the rendered and tenant diffs. The plan runs the untrusted PR
/// head with a read-only token (`pull_request`, never `pull_request_target`); the comment
/// job runs no PR code and skips fork PRs, which get the job summary only.
pub fn preview(setup: &Setup) -> String {
    let mut s = header(
        setup,
        "stackbot: preview on the pull request what merging it would release: the releases, the\n\
         # rendered-file diffs per stack and minor, and the tenant pull requests with their diffs.",
    );
    let paths: String = preview_paths(setup)
        .iter()
        .map(|p| format!("      - {}\n", yaml_str(p)))
        .collect();
    let config = if setup.config == "stackbot.yaml" {
        String::new()
    } else {
        format!("          config: {}\n", yaml_str(&setup.config))
    };
    s.push_str(&format!(
        "name: stackbot preview\n\n\
         on:\n  \
         pull_request:\n    \
         paths:\n{paths}\n\
         permissions: {{}}\n\n\
         concurrency:\n  \
         group: stackbot-preview-${{{{ github.event.pull_request.number }}}}\n  \
         cancel-in-progress: true\n\n\
         jobs:\n  \
         plan:\n    \
         name: Plan the releases this change would cause\n    \
         runs-on: ubuntu-24.04\n    \
         timeout-minutes: 30\n    \
         permissions:\n      \
         contents: read # check out the PR head\n    \
         outputs:\n      \
         preview: ${{{{ steps.stackbot.outputs.preview }}}}\n    \
         steps:\n      \
         - name: Check out the PR head\n        \
         uses: {checkout}\n        \
         with:\n          \
         ref: ${{{{ github.event.pull_request.head.sha }}}}\n          \
         persist-credentials: false\n\n      \
         # The full preview goes to the job summary; the comment-sized one to the output.\n      \
         - name: stackbot plan\n        \
         id: stackbot\n        \
         uses: {pin}\n        \
         with:\n          \
         command: plan\n          \
         format: markdown\n{config}          \
         # Read-only here (fork PRs included): raises the upstream API rate limit.\n          \
         token: ${{{{ github.token }}}}\n          \
         status: \"false\"\n\n  \
         {comment}",
        checkout = CHECKOUT.uses(),
        pin = setup.pin.uses(),
        comment = COMMENT_JOB,
    ));
    s
}

/// The job that posts the sticky comment: the marker finds our one comment, which is updated
/// in place (duplicates a race left are deleted). It runs no PR code.
const COMMENT_JOB: &str = r#"comment:
    name: Sticky preview comment
    needs: plan
    # Fork PRs have no write token: they get the job summary only.
    if: github.event.pull_request.head.repo.full_name == github.repository
    runs-on: ubuntu-24.04
    timeout-minutes: 5
    permissions:
      pull-requests: write # create or update the one preview comment
    steps:
      - name: Create or update the comment
        env:
          GH_TOKEN: ${{ github.token }}
          BODY: ${{ needs.plan.outputs.preview }}
          PR: ${{ github.event.pull_request.number }}
          REPO: ${{ github.repository }}
        run: |
          marker='<!-- stackbot:preview -->'
          body="$RUNNER_TEMP/body.md"
          printf '%s\n' "$BODY" > "$body"
          grep -qF "$marker" "$body" || { echo "::error::the preview has no marker"; exit 1; }
          # Our own comments carrying the marker, oldest first.
          ids=$(gh api --paginate "repos/$REPO/issues/$PR/comments" \
            --jq ".[] | select(.user.login == \"github-actions[bot]\" and (.body | contains(\"$marker\"))) | .id")
          first=$(echo "$ids" | head -n1)
          if [ -z "$first" ]; then
            gh api --method POST "repos/$REPO/issues/$PR/comments" -F "body=@$body" --silent
          else
            gh api --method PATCH "repos/$REPO/issues/comments/$first" -F "body=@$body" --silent
            echo "$ids" | tail -n +2 | while read -r dup; do
              if [ -n "$dup" ]; then gh api --method DELETE "repos/$REPO/issues/comments/$dup" --silent; fi
            done
          fi
"#;

/// A YAML scalar: plain when it reads back as the same string, else double-quoted.
fn yaml_str(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
        && s.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '.');
    if plain {
        s.to_string()
    } else {
        serde_json::to_string(s).expect("strings serialize")
    }
}
