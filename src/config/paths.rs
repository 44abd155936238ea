//! Where kruise-tui keeps its files (XDG on Linux, via `directories`).
//!
//! `KRUISE_TUI_CONFIG_DIR` and `KRUISE_TUI_STATE_DIR` override the config and state roots (tests
//! and users who keep their dotfiles elsewhere).

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use directories::ProjectDirs;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// User configuration root: `config.toml`, `themes/`, `keymaps/`.
    pub config_dir: PathBuf,
    pub themes_dir: PathBuf,
    pub keymaps_dir: PathBuf,
    /// State root: logs, the action journal, the demo kubeconfig.
    pub state_dir: PathBuf,
    pub log_file: PathBuf,
    pub journal_file: PathBuf,
    pub demo_kubeconfig: PathBuf,
}

impl Paths {
    /// Resolves the paths for this user (nothing is created).
    pub fn resolve() -> Result<Self> {
        let dirs = ProjectDirs::from("io", "openkruise", "kruise-tui");
        let config_dir = match std::env::var_os("KRUISE_TUI_CONFIG_DIR") {
            Some(dir) => PathBuf::from(dir),
            None => dirs
                .as_ref()
                .map(|d| d.config_dir().to_path_buf())
                .context(
                    "cannot find a home directory for the config dir; set KRUISE_TUI_CONFIG_DIR",
                )?,
        };
        let state_dir = match std::env::var_os("KRUISE_TUI_STATE_DIR") {
            Some(dir) => PathBuf::from(dir),
            None => dirs
                .as_ref()
                .map(|d| {
                    d.state_dir()
                        .unwrap_or_else(|| d.data_local_dir())
                        .to_path_buf()
                })
                .context(
                    "cannot find a home directory for the state dir; set KRUISE_TUI_STATE_DIR",
                )?,
        };
        Ok(Self::under(config_dir, state_dir))
    }

    /// The layout under explicit roots.
    pub fn under(config_dir: PathBuf, state_dir: PathBuf) -> Self {
        Self {
            themes_dir: config_dir.join("themes"),
            keymaps_dir: config_dir.join("keymaps"),
            config_dir,
            log_file: state_dir.join("kruise-tui.log"),
            journal_file: state_dir.join("journal.jsonl"),
            demo_kubeconfig: state_dir.join("demo.kubeconfig"),
            state_dir,
        }
    }
}

/// `kruise-tui config paths`.
pub fn print_paths() -> Result<()> {
    let paths = Paths::resolve()?;
    println!("config   {}", paths.config_dir.display());
    println!("themes   {}", paths.themes_dir.display());
    println!("keymaps  {}", paths.keymaps_dir.display());
    println!("state    {}", paths.state_dir.display());
    println!("log      {}", paths.log_file.display());
    println!("journal  {}", paths.journal_file.display());
    println!("demo     {}", paths.demo_kubeconfig.display());
    Ok(())
}
