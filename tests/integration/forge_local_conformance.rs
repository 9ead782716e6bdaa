//! The local forge passes the same trait specification as the GitHub forge.

use crate::support;

use stackbot::forge::local::LocalForge;
use stackbot::forge::{Forge, RepoRef};

#[test]
fn the_local_forge_meets_the_forge_specification() {
    let tmp = tempfile::tempdir().unwrap();
    let seed = tmp.path().join("seed");
    std::fs::create_dir_all(seed.join("providers")).unwrap();
    std::fs::write(seed.join("README.md"), "# cluster stacks\n").unwrap();
    std::fs::write(seed.join("providers/csctl.yaml"), "apiVersion: v1\n").unwrap();
    let repo = RepoRef::parse("scs/cluster-stacks").unwrap();
    let forge = LocalForge::new(tmp.path().join("forge"), "stackbot", "bot@example.com")
        .with_seed(repo.clone(), &seed);
    forge.ensure_repo(&repo, "main").unwrap();
    support::forge_conformance::conformance(&forge, &repo);
}
