//! The integration tests of the Kruise controllers end to end: on the test bed (support/testbed.rs:
//! the embedded cluster with simulated nodes, or an existing one under
//! KRUISE_TUI_TEST_KUBECONFIG), `kruise-tui controllers` against a cluster, and the binary's
//! workload commands (cmd_*) on what the controllers do.
//!
//! One test binary, linked once, instead of one per file: each module was a `tests/*.rs` binary
//! of its own, and keeps its tests and their names under the module's name. On an existing
//! cluster the test bed's once-per-process nodes and controllers now serve all of them.

#[path = "../support/cli.rs"]
mod cli;
#[path = "../support/daemon_e2e.rs"]
mod daemon_e2e;
#[path = "../support/kubectl.rs"]
mod kubectl;
#[path = "../support/served.rs"]
mod served;
#[path = "../support/testbed.rs"]
mod testbed;
#[path = "../support/workloads.rs"]
mod workloads;

mod cmd_recovery;
mod cmd_report;
mod cmd_restart_many;
mod cmd_rollout;
mod cmd_top;
mod cmd_triage;
mod cmd_workloads;
mod controllers_cloneset;
mod controllers_cloneset_progress;
mod controllers_cmd;
mod controllers_crr;
mod controllers_daemonset;
mod controllers_probe_marker;
mod controllers_pub;
mod controllers_sidecarset;
mod controllers_statefulset;
mod kruise_versions;
mod rollout_batchrelease;
mod rollout_commands;
mod rollout_controller;
mod rollout_e2e;
