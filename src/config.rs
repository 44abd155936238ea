//! Themes, keymaps and paths: built-in defaults plus user overrides.
//!
//! [`load`] is what the runtime calls once at start: it never fails; every problem with a user
//! file (unknown name, bad TOML, unknown role/action, bad colour or key, duplicate binding) is a
//! warning the console shows, and the defaults stay in force for whatever was bad.

pub mod keymap;
pub mod logs;
pub mod paths;
pub mod rollout;
pub mod theme;

use std::path::Path;

pub use keymap::{Action, Key, Keymap};
pub use logs::LogsConfig;
pub use paths::{Paths, print_paths};
pub use rollout::{Batch, RolloutConfig};
pub use theme::{Role, Theme};

/// What the console runs with, plus the warnings to show it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedConfig {
    pub theme: Theme,
    pub keymap: Keymap,
    /// `[rollout]` of `config.toml`: the batch plan.
    pub rollout: RolloutConfig,
    /// `[logs]` of `config.toml`: the Log view's buffer.
    pub logs: LogsConfig,
    pub warnings: Vec<String>,
}

impl Default for LoadedConfig {
    /// The shipped defaults, no user files.
    fn default() -> Self {
        LoadedConfig {
            theme: Theme::default_theme(),
            keymap: Keymap::default_keymap(),
            rollout: RolloutConfig::default(),
            logs: LogsConfig::default(),
            warnings: Vec::new(),
        }
    }
}

/// Loads the theme and keymap named on the command line (or the defaults), applying the user's
/// files from `paths.themes_dir` / `paths.keymaps_dir`:
/// - a shipped name (`default-dark`, `default`...) with a user file of the same name: the user
///   file overrides single roles / actions of the shipped one;
/// - another name: the user file `NAME.toml`, on top of its `extends` (or the default).
///
/// The `[rollout]` section of `paths.config_dir/config.toml` sets the batch plan.
pub fn load(theme: Option<&str>, keymap: Option<&str>, paths: &Paths) -> LoadedConfig {
    let mut warnings = Vec::new();
    let theme = load_theme(
        theme.unwrap_or(theme::DEFAULT_THEME),
        &paths.themes_dir,
        &mut warnings,
    );
    let keymap = load_keymap(
        keymap.unwrap_or(keymap::DEFAULT_KEYMAP),
        &paths.keymaps_dir,
        &mut warnings,
    );
    let (rollout, logs) = load_settings(&paths.config_dir, &mut warnings);
    LoadedConfig {
        theme,
        keymap,
        rollout,
        logs,
        warnings,
    }
}

/// Reads `config.toml` (absent: defaults). Unreadable or invalid TOML is a warning.
fn load_settings(dir: &Path, warnings: &mut Vec<String>) -> (RolloutConfig, LogsConfig) {
    let path = dir.join("config.toml");
    let origin = path.display().to_string();
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Default::default();
        }
        Err(err) => {
            warnings.push(format!("{origin}: cannot read ({err}); using the defaults"));
            return Default::default();
        }
    };
    let table: toml::Table = match toml::from_str(&text) {
        Ok(t) => t,
        Err(err) => {
            warnings.push(format!(
                "{origin}: not valid TOML ({}); using the defaults",
                theme::first_line(&err.to_string())
            ));
            return Default::default();
        }
    };
    for key in table.keys().filter(|k| *k != "rollout" && *k != "logs") {
        warnings.push(format!("{origin}: unknown section `{key}` (ignored)"));
    }
    let (rollout, more) = RolloutConfig::from_table(&table, &origin);
    warnings.extend(more);
    let (logs, more) = LogsConfig::from_table(&table, &origin);
    warnings.extend(more);
    (rollout, logs)
}

/// Reads `dir/NAME.toml` if it exists; an unreadable file is a warning.
fn read_user_file(
    dir: &Path,
    what: &str,
    name: &str,
    warnings: &mut Vec<String>,
) -> Option<(String, String)> {
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        warnings.push(format!(
            "{what} name `{name}` is not a plain name; using the default"
        ));
        return None;
    }
    let path = dir.join(format!("{name}.toml"));
    match std::fs::read_to_string(&path) {
        Ok(text) => Some((text, path.display().to_string())),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => {
            warnings.push(format!(
                "{what} {}: cannot read ({err}); using the default",
                path.display()
            ));
            None
        }
    }
}

fn load_theme(name: &str, dir: &Path, warnings: &mut Vec<String>) -> Theme {
    let user = read_user_file(dir, "theme", name, warnings);
    let mut theme = match Theme::builtin(name) {
        Some(t) => t,
        None => match &user {
            Some((text, origin)) => {
                let base = theme::extends_of(text).unwrap_or_else(|| theme::DEFAULT_THEME.into());
                Theme::builtin(&base).unwrap_or_else(|| {
                    warnings.push(format!(
                        "theme {origin}: extends unknown theme `{base}`; using {}",
                        theme::DEFAULT_THEME
                    ));
                    Theme::default_theme()
                })
            }
            None => {
                warnings.push(format!(
                    "unknown theme `{name}`, using {} (shipped: {}; no {name}.toml in {})",
                    theme::DEFAULT_THEME,
                    names(&theme::BUILTIN),
                    dir.display(),
                ));
                return Theme::default_theme();
            }
        },
    };
    theme.name = name.to_owned();
    if let Some((text, origin)) = user {
        warnings.extend(theme.apply_toml(&text, &origin));
    }
    theme
}

fn load_keymap(name: &str, dir: &Path, warnings: &mut Vec<String>) -> Keymap {
    let user = read_user_file(dir, "keymap", name, warnings);
    let mut keymap = match Keymap::builtin(name) {
        Some(k) => k,
        None => match &user {
            Some((text, origin)) => {
                let base = theme::extends_of(text).unwrap_or_else(|| keymap::DEFAULT_KEYMAP.into());
                Keymap::builtin(&base).unwrap_or_else(|| {
                    warnings.push(format!(
                        "keymap {origin}: extends unknown keymap `{base}`; using {}",
                        keymap::DEFAULT_KEYMAP
                    ));
                    Keymap::default_keymap()
                })
            }
            None => {
                warnings.push(format!(
                    "unknown keymap `{name}`, using {} (shipped: {}; no {name}.toml in {})",
                    keymap::DEFAULT_KEYMAP,
                    names(&keymap::BUILTIN),
                    dir.display(),
                ));
                return Keymap::default_keymap();
            }
        },
    };
    keymap.name = name.to_owned();
    if let Some((text, origin)) = user {
        warnings.extend(keymap.apply_toml(&text, &origin));
    }
    keymap
}

fn names(builtin: &[(&str, &str)]) -> String {
    builtin
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}
