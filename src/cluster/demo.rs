//! `kruise-tui demo-server`, `--demo`'s in-process cluster, and the seeded demo scenario.

pub mod scenario;
pub mod seed;

use anyhow::Result;

use crate::cli::DemoServerArgs;

/// `kruise-tui demo-server`.
pub fn run_demo_server(_args: DemoServerArgs) -> Result<()> {
    anyhow::bail!("demo-server: not built yet")
}
