//! Simulated nodes and kubelet, against any API server (like kwok).

use anyhow::Result;

use crate::cli::SimNodesArgs;

/// `kruise-tui sim-nodes`.
pub fn run_sim_nodes(_args: SimNodesArgs) -> Result<()> {
    anyhow::bail!("sim-nodes: not built yet")
}
