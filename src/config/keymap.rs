//! Keymaps: user intents ([`Action`]) bound to keys, parsed from TOML; help is generated from them.
//!
//! A keymap file is a table `[keys]` of `action = ["key", ...]`. Keys are written `j`, `G`, `?`,
//! `ctrl-c`, `enter`, `esc`, `up`, `pgdown`, `home`, `tab`, `space`, `f1`... A user file may
//! start with `extends = "NAME"` and rebind single actions (its list replaces that action's keys).
//! Parsing never fails: unknown actions, unparsable keys, duplicate bindings and actions left
//! unbound become warnings, and the base binding is kept. No IO here (see `config::load`).

use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::theme::first_line;

/// What a key asks the console to do (normal mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Open,
    Back,
    Quit,
    Help,
    Command,
    Filter,
    Yaml,
    Events,
    NextBatch,
    PrevBatch,
    Partition,
    Pause,
    Undo,
    Image,
    Scale,
    Mark,
    Restart,
    Protect,
    Delete,
    WhatIf,
    Logs,
    Shell,
    Container,
    Report,
}

impl Action {
    /// In the order help lists them.
    pub const ALL: [Action; 30] = [
        Action::Command,
        Action::Filter,
        Action::Open,
        Action::Back,
        Action::Yaml,
        Action::Events,
        Action::NextBatch,
        Action::PrevBatch,
        Action::Partition,
        Action::Pause,
        Action::Undo,
        Action::Image,
        Action::Scale,
        Action::Mark,
        Action::Restart,
        Action::Protect,
        Action::Delete,
        Action::WhatIf,
        Action::Logs,
        Action::Shell,
        Action::Container,
        Action::Report,
        Action::Help,
        Action::Quit,
        Action::Up,
        Action::Down,
        Action::PageUp,
        Action::PageDown,
        Action::Top,
        Action::Bottom,
    ];

    /// The name used in keymap files.
    pub fn name(self) -> &'static str {
        match self {
            Action::Up => "up",
            Action::Down => "down",
            Action::PageUp => "page-up",
            Action::PageDown => "page-down",
            Action::Top => "top",
            Action::Bottom => "bottom",
            Action::Open => "open",
            Action::Back => "back",
            Action::Quit => "quit",
            Action::Help => "help",
            Action::Command => "command",
            Action::Filter => "filter",
            Action::Yaml => "yaml",
            Action::Events => "events",
            Action::NextBatch => "next-batch",
            Action::PrevBatch => "prev-batch",
            Action::Partition => "partition",
            Action::Pause => "pause",
            Action::Undo => "undo",
            Action::Image => "image",
            Action::Scale => "scale",
            Action::Mark => "mark",
            Action::Restart => "restart",
            Action::Protect => "protect",
            Action::Delete => "delete",
            Action::WhatIf => "what-if",
            Action::Logs => "logs",
            Action::Shell => "shell",
            Action::Container => "container",
            Action::Report => "report",
        }
    }

    /// What help says the action does.
    pub fn description(self) -> &'static str {
        match self {
            Action::Up => "move up / scroll up",
            Action::Down => "move down / scroll down",
            Action::PageUp => "page up",
            Action::PageDown => "page down",
            Action::Top => "go to the first row",
            Action::Bottom => "go to the last row",
            Action::Open => "drill down (workload → rollout → pod)",
            Action::Back => "back / close / clear filter",
            Action::Quit => "quit",
            Action::Help => "this help",
            Action::Command => "command (:cs :pods :journal :ns :ctx…)",
            Action::Filter => "filter rows (live)",
            Action::Yaml => "YAML of the selection",
            Action::Events => "events of the selection",
            Action::NextBatch => "next batch (lower the partition)",
            Action::PrevBatch => "previous batch (raise the partition)",
            Action::Partition => "set the partition (number or %)",
            Action::Pause => "pause / resume the rollout",
            Action::Undo => "undo to a revision (journal: revert)",
            Action::Image => "set container images",
            Action::Scale => "scale (marked pods are deleted)",
            Action::Mark => "mark / unmark a pod (rollout view)",
            Action::Restart => "restart containers in place (pods)",
            Action::Protect => "delete protection off/Always/Cascading",
            Action::Delete => "delete (confirm shows its guards)",
            Action::WhatIf => "what-if: simulate the pending action",
            Action::Logs => "log of the pod / container",
            Action::Shell => "shell in the pod (kubectl exec -it)",
            Action::Container => "next container (pod detail, log)",
            Action::Report => "incident report (journal: from entry)",
        }
    }

    pub fn from_name(name: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// One key with its modifiers. Shift is folded into the character (`G`, `?`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
    pub alt: bool,
}

impl Key {
    /// The key of a terminal event, normalised like parsed keys.
    pub fn from_event(ev: &KeyEvent) -> Key {
        let code = match ev.code {
            KeyCode::BackTab => KeyCode::Tab,
            other => other,
        };
        Key {
            code,
            ctrl: ev.modifiers.contains(KeyModifiers::CONTROL),
            alt: ev.modifiers.contains(KeyModifiers::ALT),
        }
    }

    /// Parses `ctrl-c`, `G`, `pgdown`, `?`, `-`...
    pub fn parse(text: &str) -> Result<Key, String> {
        let mut ctrl = false;
        let mut alt = false;
        let mut rest = text;
        loop {
            let lower = rest.to_ascii_lowercase();
            if rest.chars().count() > 2 && lower.starts_with("ctrl-") {
                ctrl = true;
                rest = &rest[5..];
            } else if rest.chars().count() > 2 && lower.starts_with("alt-") {
                alt = true;
                rest = &rest[4..];
            } else {
                break;
            }
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) if !c.is_whitespace() => {
                KeyCode::Char(if ctrl { c.to_ascii_lowercase() } else { c })
            }
            _ => match rest.to_ascii_lowercase().as_str() {
                "enter" | "return" => KeyCode::Enter,
                "esc" | "escape" => KeyCode::Esc,
                "up" => KeyCode::Up,
                "down" => KeyCode::Down,
                "left" => KeyCode::Left,
                "right" => KeyCode::Right,
                "pgup" | "pageup" => KeyCode::PageUp,
                "pgdown" | "pgdn" | "pagedown" => KeyCode::PageDown,
                "home" => KeyCode::Home,
                "end" => KeyCode::End,
                "tab" => KeyCode::Tab,
                "backspace" => KeyCode::Backspace,
                "delete" | "del" => KeyCode::Delete,
                "space" => KeyCode::Char(' '),
                f if f.len() > 1 && f.starts_with('f') => match f[1..].parse::<u8>() {
                    Ok(n @ 1..=12) => KeyCode::F(n),
                    _ => return Err(format!("`{text}` is not a key")),
                },
                _ => return Err(format!("`{text}` is not a key")),
            },
        };
        Ok(Key { code, ctrl, alt })
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("ctrl-")?;
        }
        if self.alt {
            f.write_str("alt-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Enter => f.write_str("enter"),
            KeyCode::Esc => f.write_str("esc"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::PageUp => f.write_str("pgup"),
            KeyCode::PageDown => f.write_str("pgdn"),
            KeyCode::Home => f.write_str("home"),
            KeyCode::End => f.write_str("end"),
            KeyCode::Tab => f.write_str("tab"),
            KeyCode::Backspace => f.write_str("backspace"),
            KeyCode::Delete => f.write_str("del"),
            KeyCode::F(n) => write!(f, "f{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// The active bindings: for each action (in [`Action::ALL`] order) its keys.
#[derive(Debug, Clone, PartialEq)]
pub struct Keymap {
    pub name: String,
    bindings: Vec<(Action, Vec<Key>)>,
}

/// The keymaps shipped in `keymaps/`, built into the binary.
pub const BUILTIN: [(&str, &str); 1] = [("default", include_str!("../../keymaps/default.toml"))];

/// The keymap used when none is named.
pub const DEFAULT_KEYMAP: &str = "default";

impl Keymap {
    fn empty(name: &str) -> Keymap {
        Keymap {
            name: name.to_owned(),
            bindings: Action::ALL.iter().map(|a| (*a, Vec::new())).collect(),
        }
    }

    /// The shipped keymap `name`, if there is one.
    pub fn builtin(name: &str) -> Option<Keymap> {
        let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
        let mut keymap = Keymap::empty(name);
        // Shipped files are checked by tests (no warnings, every action bound).
        let _ = keymap.apply_toml(text, name);
        Some(keymap)
    }

    /// The default keymap (always present).
    pub fn default_keymap() -> Keymap {
        Keymap::builtin(DEFAULT_KEYMAP).unwrap_or_else(|| Keymap::empty(DEFAULT_KEYMAP))
    }

    /// The action bound to `key`, if any.
    pub fn action(&self, key: &Key) -> Option<Action> {
        self.bindings
            .iter()
            .find(|(_, keys)| keys.contains(key))
            .map(|(a, _)| *a)
    }

    /// The keys of `action` (empty if unbound).
    pub fn keys(&self, action: Action) -> &[Key] {
        self.bindings
            .iter()
            .find(|(a, _)| *a == action)
            .map(|(_, k)| k.as_slice())
            .unwrap_or(&[])
    }

    /// The first key of `action` as text, for hints ("?" for help).
    pub fn hint(&self, action: Action) -> String {
        self.keys(action)
            .first()
            .map(Key::to_string)
            .unwrap_or_else(|| "(unbound)".to_owned())
    }

    /// Every action with its keys, in help order.
    pub fn iter(&self) -> impl Iterator<Item = (Action, &[Key])> {
        self.bindings.iter().map(|(a, k)| (*a, k.as_slice()))
    }

    /// Rebinds the actions listed in `text` (origin names the file in warnings).
    pub fn apply_toml(&mut self, text: &str, origin: &str) -> Vec<String> {
        let mut warnings = Vec::new();
        let table: toml::Table = match toml::from_str(text) {
            Ok(t) => t,
            Err(err) => {
                warnings.push(format!(
                    "keymap {origin}: not valid TOML ({}); using defaults",
                    first_line(&err.to_string())
                ));
                return warnings;
            }
        };
        for key in table.keys() {
            if key != "keys" && key != "extends" && key != "name" {
                warnings.push(format!(
                    "keymap {origin}: unknown section `{key}` (ignored)"
                ));
            }
        }
        let Some(keys) = table.get("keys") else {
            return warnings;
        };
        let Some(keys) = keys.as_table() else {
            warnings.push(format!(
                "keymap {origin}: `keys` must be a table; using defaults"
            ));
            return warnings;
        };
        for (name, value) in keys {
            let Some(action) = Action::from_name(name) else {
                warnings.push(format!(
                    "keymap {origin}: unknown action `{name}` (ignored)"
                ));
                continue;
            };
            match self.parse_binding(action, value) {
                Ok(parsed) => self.set(action, parsed),
                Err(why) => warnings.push(format!(
                    "keymap {origin}: `{name}`: {why}; keeping its default keys"
                )),
            }
        }
        warnings
    }

    fn parse_binding(&self, action: Action, value: &toml::Value) -> Result<Vec<Key>, String> {
        let items: Vec<&toml::Value> = match value {
            toml::Value::String(_) => vec![value],
            toml::Value::Array(a) => a.iter().collect(),
            other => return Err(format!("expected a key list, found {}", other.type_str())),
        };
        let mut keys = Vec::new();
        for item in items {
            let text = item
                .as_str()
                .ok_or_else(|| format!("expected key strings, found {}", item.type_str()))?;
            let key = Key::parse(text)?;
            if keys.contains(&key) {
                return Err(format!("`{text}` is listed twice"));
            }
            if let Some(other) = self.action(&key).filter(|a| *a != action) {
                return Err(format!(
                    "duplicate binding: `{text}` is already bound to `{}`",
                    other.name()
                ));
            }
            keys.push(key);
        }
        if keys.is_empty() {
            return Err("an action must keep at least one key".to_owned());
        }
        Ok(keys)
    }

    fn set(&mut self, action: Action, keys: Vec<Key>) {
        if let Some(slot) = self.bindings.iter_mut().find(|(a, _)| *a == action) {
            slot.1 = keys;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_keys() {
        assert_eq!(
            Key::parse("ctrl-c"),
            Ok(Key {
                code: KeyCode::Char('c'),
                ctrl: true,
                alt: false
            })
        );
        assert_eq!(Key::parse("G").map(|k| k.code), Ok(KeyCode::Char('G')));
        assert_eq!(Key::parse("-").map(|k| k.code), Ok(KeyCode::Char('-')));
        assert_eq!(Key::parse("pgdown").map(|k| k.code), Ok(KeyCode::PageDown));
        assert!(Key::parse("hyper-x").is_err());
        assert!(Key::parse("").is_err());
    }

    #[test]
    fn shifted_event_matches_plain_char() {
        let ev = KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT);
        assert_eq!(
            Key::from_event(&ev),
            Key::parse("G").unwrap_or_else(|e| panic!("{e}"))
        );
    }
}
