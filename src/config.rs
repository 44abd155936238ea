//! Themes, keymaps and paths: built-in defaults plus user overrides.

use anyhow::Result;

/// `kruise-tui config paths`.
pub fn print_paths() -> Result<()> {
    anyhow::bail!("config paths: not built yet")
}
