//! `kruise-tui plan KIND/NAME --partition V`: reads the live workload and its pods and prints the
//! embedded logic's plan.

use anyhow::Result;

use crate::cli::PlanArgs;

/// `kruise-tui plan KIND/NAME --partition V`.
pub fn run_plan(_args: PlanArgs) -> Result<()> {
    anyhow::bail!("plan: not built yet")
}
