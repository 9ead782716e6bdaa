//! Where `../shared` (reference trees and fixtures) lives: env `STACKBOT_SHARED`, else
//! `<repo>/../shared`, else `/work/shared`.

use std::path::PathBuf;

/// The shared data directory; panics with a hint when none exists.
pub fn shared_dir() -> PathBuf {
    let candidates = [
        std::env::var_os("STACKBOT_SHARED").map(PathBuf::from),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared")),
        Some(PathBuf::from("/work/shared")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|p| p.join("reference").is_dir())
        .expect("../shared not found: set STACKBOT_SHARED to the shared data directory")
}

/// `reference/cluster-stacks/<commit>/providers/<provider>/<name>`.
#[allow(dead_code)]
pub fn reference_stack(commit: &str, provider: &str, name: &str) -> PathBuf {
    shared_dir()
        .join("reference/cluster-stacks")
        .join(commit)
        .join("providers")
        .join(provider)
        .join(name)
}
