//! Themes: semantic roles (not widget internals) mapped to styles, parsed from TOML.
//!
//! A theme file is a flat table of `role = STYLE`, where STYLE is a colour (`"red"`, `"#1e90ff"`,
//! `"244"`) meaning the foreground, or `{ fg, bg, bold, italic, underline, dim, reversed }`.
//! A user file may start with `extends = "NAME"` and override single roles. Parsing never fails:
//! every bad entry becomes a warning and the base style of that role is kept.
//! Must not depend on ratatui widgets, kube or tokio (only `ratatui::style`).

use ratatui::style::{Color, Modifier, Style};

/// Every role a view may style. Names are the TOML keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    Text,
    Muted,
    Border,
    Title,
    HeaderKey,
    HeaderValue,
    TableHeader,
    RowSelected,
    StatusOk,
    StatusProgress,
    StatusWarn,
    StatusError,
    RevisionCurrent,
    RevisionUpdate,
    BadgeProtected,
    BannerError,
    BannerWarn,
    BannerInfo,
    Prompt,
    HelpKey,
    YamlKey,
}

impl Role {
    pub const ALL: [Role; 21] = [
        Role::Text,
        Role::Muted,
        Role::Border,
        Role::Title,
        Role::HeaderKey,
        Role::HeaderValue,
        Role::TableHeader,
        Role::RowSelected,
        Role::StatusOk,
        Role::StatusProgress,
        Role::StatusWarn,
        Role::StatusError,
        Role::RevisionCurrent,
        Role::RevisionUpdate,
        Role::BadgeProtected,
        Role::BannerError,
        Role::BannerWarn,
        Role::BannerInfo,
        Role::Prompt,
        Role::HelpKey,
        Role::YamlKey,
    ];

    /// The TOML key of the role.
    pub fn name(self) -> &'static str {
        match self {
            Role::Text => "text",
            Role::Muted => "muted",
            Role::Border => "border",
            Role::Title => "title",
            Role::HeaderKey => "header.key",
            Role::HeaderValue => "header.value",
            Role::TableHeader => "table.header",
            Role::RowSelected => "row.selected",
            Role::StatusOk => "status.ok",
            Role::StatusProgress => "status.progress",
            Role::StatusWarn => "status.warn",
            Role::StatusError => "status.error",
            Role::RevisionCurrent => "revision.current",
            Role::RevisionUpdate => "revision.update",
            Role::BadgeProtected => "badge.protected",
            Role::BannerError => "banner.error",
            Role::BannerWarn => "banner.warn",
            Role::BannerInfo => "banner.info",
            Role::Prompt => "prompt",
            Role::HelpKey => "help.key",
            Role::YamlKey => "yaml.key",
        }
    }

    pub fn from_name(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == name)
    }

    fn index(self) -> usize {
        Role::ALL.iter().position(|r| *r == self).unwrap_or(0)
    }
}

/// A resolved theme: one style per role.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub name: String,
    styles: [Style; Role::ALL.len()],
}

/// The themes shipped in `themes/`, built into the binary.
pub const BUILTIN: [(&str, &str); 3] = [
    (
        "default-dark",
        include_str!("../../themes/default-dark.toml"),
    ),
    (
        "default-light",
        include_str!("../../themes/default-light.toml"),
    ),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
];

/// The theme used when none is named.
pub const DEFAULT_THEME: &str = "default-dark";

impl Theme {
    pub fn style(&self, role: Role) -> Style {
        self.styles[role.index()]
    }

    /// A theme with every role unstyled (the base under the shipped default).
    fn plain(name: &str) -> Theme {
        Theme {
            name: name.to_owned(),
            styles: [Style::default(); Role::ALL.len()],
        }
    }

    /// The shipped theme `name`, if there is one.
    pub fn builtin(name: &str) -> Option<Theme> {
        let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
        let mut theme = Theme::plain(name);
        // Shipped files are checked by tests; a warning here would be a build defect.
        let _ = theme.apply_toml(text, name);
        Some(theme)
    }

    /// The default theme (always present).
    pub fn default_theme() -> Theme {
        Theme::builtin(DEFAULT_THEME).unwrap_or_else(|| Theme::plain(DEFAULT_THEME))
    }

    /// Overlays the roles set in `text` onto this theme; returns the warnings (file `origin`).
    /// `extends` is read by the caller ([`extends_of`]) and ignored here.
    pub fn apply_toml(&mut self, text: &str, origin: &str) -> Vec<String> {
        let mut warnings = Vec::new();
        let table: toml::Table = match toml::from_str(text) {
            Ok(t) => t,
            Err(err) => {
                warnings.push(format!(
                    "theme {origin}: not valid TOML ({}); using defaults",
                    first_line(&err.to_string())
                ));
                return warnings;
            }
        };
        for (key, value) in &table {
            if key == "extends" || key == "name" {
                continue;
            }
            let Some(role) = Role::from_name(key) else {
                warnings.push(format!("theme {origin}: unknown role `{key}` (ignored)"));
                continue;
            };
            match parse_style(value) {
                Ok(style) => self.styles[role.index()] = style,
                Err(why) => warnings.push(format!(
                    "theme {origin}: role `{key}`: {why}; keeping the default"
                )),
            }
        }
        warnings
    }
}

/// The `extends = "NAME"` of a theme or keymap file, if it parses and has one.
pub fn extends_of(text: &str) -> Option<String> {
    let table: toml::Table = toml::from_str(text).ok()?;
    table.get("extends")?.as_str().map(str::to_owned)
}

pub(crate) fn first_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_owned()
}

fn parse_color(value: &toml::Value) -> Result<Color, String> {
    let s = value
        .as_str()
        .ok_or_else(|| format!("expected a colour string, found {}", value.type_str()))?;
    s.parse::<Color>()
        .map_err(|_| format!("`{s}` is not a colour (use a name, \"#rrggbb\" or 0-255)"))
}

fn parse_style(value: &toml::Value) -> Result<Style, String> {
    if value.is_str() {
        return Ok(Style::default().fg(parse_color(value)?));
    }
    let table = value.as_table().ok_or_else(|| {
        format!(
            "expected a colour or a table {{ fg, bg, bold, ... }}, found {}",
            value.type_str()
        )
    })?;
    let mut style = Style::default();
    for (key, v) in table {
        match key.as_str() {
            "fg" => style = style.fg(parse_color(v)?),
            "bg" => style = style.bg(parse_color(v)?),
            "bold" | "italic" | "underline" | "dim" | "reversed" => {
                let on = v
                    .as_bool()
                    .ok_or_else(|| format!("`{key}` must be true or false"))?;
                let m = match key.as_str() {
                    "bold" => Modifier::BOLD,
                    "italic" => Modifier::ITALIC,
                    "underline" => Modifier::UNDERLINED,
                    "dim" => Modifier::DIM,
                    _ => Modifier::REVERSED,
                };
                if on {
                    style = style.add_modifier(m);
                }
            }
            other => return Err(format!("unknown style key `{other}`")),
        }
    }
    Ok(style)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlay_keeps_other_roles_and_reports_bad_entries() {
        let mut theme = Theme::default_theme();
        let before = theme.style(Role::Text);
        let warnings = theme.apply_toml(
            "\"status.error\" = \"#ff0000\"\nbogus = \"red\"\nprompt = { fg = \"nope\" }\n",
            "t",
        );
        assert_eq!(
            theme.style(Role::StatusError).fg,
            Some(Color::Rgb(255, 0, 0))
        );
        assert_eq!(theme.style(Role::Text), before);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("unknown role `bogus`"));
        assert!(warnings[1].contains("`nope` is not a colour"));
    }
}
