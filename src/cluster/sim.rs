//! Simulated nodes and kubelet, against any API server (like kwok): `kruise-tui sim-nodes`.
//!
//! The decisions are pure (`kubelet::decide`, `schedule::pick_node`, `nodes::node_object`);
//! `driver` is the thin IO loop that watches pods and nodes with kube-rs, applies those
//! decisions, and keeps one sorted deadline queue instead of per-pod tasks or polling.

pub mod ids;
pub mod kubelet;
pub mod nodes;
pub mod schedule;

use anyhow::Result;

use crate::cli::SimNodesArgs;

/// `kruise-tui sim-nodes`.
pub fn run_sim_nodes(_args: SimNodesArgs) -> Result<()> {
    anyhow::bail!("sim-nodes: not built yet")
}
