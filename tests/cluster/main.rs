//! The integration tests that start an API server: the embedded one (`EmbeddedCluster`, the demo
//! cluster, `kruise-tui demo-server`) or kube_mock's, driven with kube-rs, the console's kube
//! layer, kubectl and the binary's commands; the simulated nodes, but no Kruise controllers.
//!
//! One test binary, linked once, instead of one per file: each module was a `tests/*.rs` binary
//! of its own, and keeps its tests and their names under the module's name.

#[path = "../fixtures/cluster/common.rs"]
mod common;
#[path = "../fixtures/console/harness.rs"]
mod harness;
#[path = "../kube_mock/mod.rs"]
mod kube_mock;
#[path = "../support/kubectl.rs"]
mod kubectl;
#[path = "../support/msgs.rs"]
mod msgs;

mod actions_act;
mod cluster_admission;
mod cluster_builtin;
mod cluster_churn;
mod cluster_cloneset_admission;
mod cluster_kube;
mod cluster_kubectl;
mod cluster_logs_exec;
mod cluster_pods;
mod cluster_rbac;
mod cluster_rollout_crds;
mod cluster_seed_kinds;
mod cluster_watch;
mod cluster_webhook_daemonset;
mod cluster_webhooks;
mod demo_cluster;
mod demo_server;
mod kube_cluster;
mod kube_layer;
mod kube_rbac_console;
mod kube_stale_rows;
mod kube_versions;
mod kube_watchlist;
mod metrics;
mod plan_e2e;
mod sim_nodes;
