//! Tracing to a file in the XDG state dir, never to the terminal (it would corrupt the screen).
//!
//! The filter comes from `KRUISE_TUI_LOG`, else `RUST_LOG`, else `info` for this crate and `warn`
//! for dependencies.

use std::{fs::OpenOptions, path::Path, sync::Mutex};

use anyhow::{Context as _, Result};
use tracing_subscriber::EnvFilter;

const DEFAULT_FILTER: &str = "warn,kruise_tui=info";

/// The filter directives in effect: `KRUISE_TUI_LOG`, then `RUST_LOG`, then the default.
pub fn filter_directives() -> String {
    ["KRUISE_TUI_LOG", "RUST_LOG"]
        .iter()
        .find_map(|var| std::env::var(var).ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| DEFAULT_FILTER.to_owned())
}

/// Sends tracing output to `log_file` (appending; its directory is created). Calling it again in
/// the same process keeps the first subscriber.
pub fn init(log_file: &Path) -> Result<()> {
    if let Some(dir) = log_file.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the log directory {}", dir.display()))?;
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_file)
        .with_context(|| format!("cannot open the log file {}", log_file.display()))?;
    let directives = filter_directives();
    let filter = EnvFilter::try_new(&directives).unwrap_or_else(|err| {
        // A bad filter must not stop the console; say so in the log itself.
        eprintln!("kruise-tui: ignoring the log filter {directives:?}: {err}");
        EnvFilter::new(DEFAULT_FILTER)
    });
    let installed = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(Mutex::new(file))
        .with_ansi(false)
        .try_init();
    if installed.is_ok() {
        tracing::info!(version = env!("CARGO_PKG_VERSION"), "kruise-tui starting");
    }
    Ok(())
}
