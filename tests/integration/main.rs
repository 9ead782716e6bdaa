//! Every integration test in one binary: the crate is linked once, not once per file. The
//! helpers (`support`) are the crate `stackbot-testkit` (tests/support), compiled once for
//! every test binary and benchmark program. Each former test file is a module;
//! run one with `cargo test --test integration <module>::`. The world simulator stays a
//! binary of its own (`tests/world_sim.rs`): it is slow, and the developer loop skips it
//! with `cargo test --test integration`.

use stackbot_testkit as support;

mod actions_files;
mod adopt_cli;
mod adopt_pairs;
mod adopt_release;
mod architecture;
mod cli_errors;
mod cluster_stacks;
mod crash_sweep;
mod dashboard_github;
mod deploy;
mod detect;
mod distribution;
mod docs;
mod fake_github;
mod first_contact;
mod forge_github;
mod forge_github_real_behaviour;
mod forge_local_conformance;
mod gate;
mod gate_github;
mod gate_oci;
mod gate_pull_request;
mod github_app;
mod github_cache;
mod github_conformance;
mod github_origins;
mod github_recordings;
mod github_redirects;
mod hostile;
mod hostile_limits;
mod missing_data;
mod network_failures;
mod oci_registry;
mod oci_retries;
mod one_answer;
mod package_cli;
mod package_props;
mod parser_props;
mod plan_cli;
mod release_github;
mod release_github_cli;
mod release_local;
mod release_oci;
mod release_oci_over_runs;
mod release_over_runs;
mod release_over_runs_cli;
mod render_cli;
mod run_once;
mod run_once_reads;
mod scs0210_oracle;
mod scs2_parity;
mod secrets;
mod signed_commits;
mod status;
mod tenant_approvals;
mod tenant_automerge;
mod tenant_edit_props;
mod tenant_edits;
mod tenant_runs;
mod tenant_upgrades;
mod tenants_cli;
mod tenants_github;
mod tenants_local;
mod tenants_oci;
mod workflows;
