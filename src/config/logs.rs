//! The `[logs]` section of the user's `config.toml`: how many lines a Log view keeps.
//!
//! ```toml
//! [logs]
//! buffer_lines = 5000   # the newest lines kept per Log view (older ones are dropped, and said so)
//! ```
//! A bad value is a warning and the default applies. No IO here.

/// The Log view's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogsConfig {
    /// The newest lines a Log view keeps (also the `tailLines` it asks for).
    pub buffer_lines: usize,
}

/// The default buffer: 5,000 lines (a few MB at worst, and more than a screenful of search).
pub const DEFAULT_BUFFER_LINES: usize = 5_000;
/// Upper bound of `buffer_lines`: a million lines of a chatty container is already ~100 MB.
pub const MAX_BUFFER_LINES: usize = 1_000_000;

impl Default for LogsConfig {
    fn default() -> Self {
        LogsConfig {
            buffer_lines: DEFAULT_BUFFER_LINES,
        }
    }
}

impl LogsConfig {
    /// Reads the `[logs]` table of a parsed `config.toml` (origin names the file in warnings).
    pub fn from_table(table: &toml::Table, origin: &str) -> (LogsConfig, Vec<String>) {
        let mut warnings = Vec::new();
        let Some(section) = table.get("logs") else {
            return (LogsConfig::default(), warnings);
        };
        let Some(section) = section.as_table() else {
            warnings.push(format!(
                "{origin}: `logs` must be a table; using the default buffer of \
                 {DEFAULT_BUFFER_LINES} lines"
            ));
            return (LogsConfig::default(), warnings);
        };
        for key in section.keys().filter(|k| *k != "buffer_lines") {
            warnings.push(format!("{origin}: unknown key `logs.{key}` (ignored)"));
        }
        let Some(value) = section.get("buffer_lines") else {
            return (LogsConfig::default(), warnings);
        };
        match value.as_integer() {
            Some(n) if n >= 1 && n as u64 <= MAX_BUFFER_LINES as u64 => (
                LogsConfig {
                    buffer_lines: n as usize,
                },
                warnings,
            ),
            _ => {
                warnings.push(format!(
                    "{origin}: `logs.buffer_lines` must be a number of lines from 1 to \
                     {MAX_BUFFER_LINES}, not {value}; using {DEFAULT_BUFFER_LINES}"
                ));
                (LogsConfig::default(), warnings)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (LogsConfig, Vec<String>) {
        let table: toml::Table = toml::from_str(text).unwrap_or_default();
        LogsConfig::from_table(&table, "config.toml")
    }

    #[test]
    fn buffer_lines_is_read_and_bad_values_warn() {
        assert_eq!(read("").0.buffer_lines, DEFAULT_BUFFER_LINES);
        assert_eq!(read("[logs]\nbuffer_lines = 200").0.buffer_lines, 200);
        for bad in [
            "buffer_lines = 0",
            "buffer_lines = \"many\"",
            "buffer_lines = -3",
        ] {
            let (c, w) = read(&format!("[logs]\n{bad}"));
            assert_eq!(c.buffer_lines, DEFAULT_BUFFER_LINES, "{bad}");
            assert!(w[0].contains("logs.buffer_lines"), "{w:?}");
        }
        let (_, w) = read("[logs]\nlines = 3");
        assert!(w[0].contains("unknown key `logs.lines`"), "{w:?}");
        let (_, w) = read("logs = 3");
        assert!(w[0].contains("`logs` must be a table"), "{w:?}");
    }
}
