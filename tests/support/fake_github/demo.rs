//! The fake GitHub as the GitHub tests of the demo set it up: the stacks repository and one
//! GitOps repository per tenant, each holding one ClusterStack.

use super::{FakeGithub, FakeOptions};

/// The demo's stacks repository on the fake GitHub.
pub const STACKS_REPO: &str = "scs/cluster-stacks";

/// A tenant's ClusterStack for the demo's 1.34 series, pinned to `v0` (no release yet), with
/// an inline comment a format-preserving edit must keep.
pub const PINNED_CLUSTERSTACK: &str = "apiVersion: clusterstack.x-k8s.io/v1alpha1\nkind: ClusterStack\nmetadata:\n  name: openstack-scs2-1-34\n  namespace: cluster\nspec:\n  provider: openstack\n  name: scs2\n  kubernetesVersion: \"1.34\"\n  autoSubscribe: false\n  noProvider: true\n  versions: [v0]  # pinned\n";

/// A fake GitHub accepting `token`, with [`STACKS_REPO`] and, for each of `tenant_repos`
/// (`owner/name`), a repository whose `clusterstacks/a.yaml` is `tenant_file`.
pub fn start(token: &str, tenant_repos: &[&str], tenant_file: &str) -> FakeGithub {
    let fake = FakeGithub::start_with(FakeOptions::default().with_token(token));
    fake.create_repo(STACKS_REPO, "main", &[("README.md", b"# stacks\n")]);
    for repo in tenant_repos {
        fake.create_repo(
            repo,
            "main",
            &[("clusterstacks/a.yaml", tenant_file.as_bytes())],
        );
    }
    fake
}
