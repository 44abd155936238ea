//! Terminal setup and restore: raw mode + alternate screen on entry, restored on every exit path.
//!
//! `ratatui::try_init` installs a panic hook that restores the terminal before the panic message
//! prints; [`TerminalGuard`] restores it when the console returns or fails.

use anyhow::{Context as _, Result};
use ratatui::DefaultTerminal;

/// Owns the terminal while the console runs; dropping it restores the terminal.
pub struct TerminalGuard {
    terminal: DefaultTerminal,
}

impl TerminalGuard {
    /// Enters raw mode and the alternate screen, with the restoring panic hook.
    pub fn enter() -> Result<Self> {
        let terminal = ratatui::try_init().context("cannot set up the terminal")?;
        Ok(Self { terminal })
    }

    pub fn terminal(&mut self) -> &mut DefaultTerminal {
        &mut self.terminal
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        if let Err(err) = ratatui::try_restore() {
            tracing::error!(%err, "cannot restore the terminal");
        }
    }
}
