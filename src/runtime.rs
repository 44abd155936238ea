//! The console's runtime: terminal setup and restore (panic hook), tracing to a file, the
//! `tokio::select!` loop over terminal events, store messages and ticks, and effect dispatch.

use anyhow::Result;

use crate::cli::ConsoleArgs;

/// Runs the console (or, with `--demo`, the embedded cluster plus the console).
pub fn run_console(_args: ConsoleArgs) -> Result<()> {
    anyhow::bail!("console: not built yet")
}
