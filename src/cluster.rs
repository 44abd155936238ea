//! The embedded cluster: a loopback Kubernetes API server, object store with watch, simulated
//! nodes and kubelet.

use anyhow::Result;

use crate::cli::{DemoServerArgs, SimNodesArgs};

/// `kruise-tui demo-server`.
pub fn run_demo_server(_args: DemoServerArgs) -> Result<()> {
    anyhow::bail!("demo-server: not built yet")
}

/// `kruise-tui sim-nodes`.
pub fn run_sim_nodes(_args: SimNodesArgs) -> Result<()> {
    anyhow::bail!("sim-nodes: not built yet")
}
