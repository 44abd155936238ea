//! The kube-rs side: connection, discovery, one reflector per kind, and the effect executor.
//!
//! Everything that talks to an API server lives here; `app` and `view` never do.

pub mod connect;

use anyhow::Result;

use crate::cli::PlanArgs;

/// `kruise-tui plan KIND/NAME --partition V`.
pub fn run_plan(_args: PlanArgs) -> Result<()> {
    anyhow::bail!("plan: not built yet")
}
