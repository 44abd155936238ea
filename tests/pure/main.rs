//! The integration tests that start nothing: the API types against the upstream CRD schemas, the
//! planner, the command line and the config files, the console's views (insta snapshots in
//! `snapshots/`) and scripted key sessions on ratatui's TestBackend, the event loop on tokio's
//! paused clock, and kruise_purity's look at src/kruise.
//!
//! One test binary, linked once, instead of one per file: each module was a `tests/*.rs` binary
//! of its own, and keeps its tests and their names under the module's name.

#[path = "../fixtures/console/acting.rs"]
mod acting;
#[path = "../fixtures/console/harness.rs"]
mod harness;

mod api_coverage;
mod api_kinds;
mod api_kube;
mod api_nulls;
mod api_schema;
mod api_seeds;
mod cli_args;
mod cli_rollout;
mod config_files;
mod kruise_purity;
mod plan_api;
mod plan_cmd;
mod plan_props;
mod rollout_fixture;
mod runtime_loop;
mod session_acting;
mod session_keys;
mod session_kruise_rollout;
mod view_acting;
mod view_kruise_rollout;
mod view_list_mode;
mod view_logs;
mod view_oncall;
mod view_progress;
mod view_recovery;
mod view_seed;
mod view_seed_images;
mod view_seed_spread;
mod view_seed_state;
mod view_snapshots;
mod view_triage_all;
mod view_usage;
mod view_whatif;
