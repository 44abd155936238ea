//! Scripted key sessions of the console against a live test bed (fixtures/console/live.rs: the
//! embedded cluster with its controllers and simulated nodes, or an existing one under
//! KRUISE_TUI_TEST_KUBECONFIG), as a user drives it.
//!
//! One test binary, linked once, instead of one per file: each module was a `tests/*.rs` binary
//! of its own, and keeps its tests and their names under the module's name. On an existing
//! cluster the test bed's once-per-process nodes and controllers now serve all of them.

#[path = "../support/kubectl.rs"]
mod kubectl;
#[path = "../fixtures/console/live.rs"]
mod live;
#[path = "../support/testbed.rs"]
mod testbed;
#[path = "../support/workloads.rs"]
mod workloads;

mod session_advanced;
mod session_live;
mod session_logs;
mod session_oncall;
mod session_recovery;
mod session_seed;
mod session_seed_images;
mod session_seed_spread;
mod session_seed_state;
mod session_timings;
mod session_whatif;
