//! The `[rollout]` section of the user's `config.toml`: the batch plan the rollout view shows and
//! `]` / `[` step through.
//!
//! ```toml
//! [rollout]
//! batches = [1, "10%", "25%", "50%", "100%"]   # pods updated at each step
//! stall = "10m"    # triage calls a rollout stuck after this long without progress
//! ```
//! `stall` is a number of seconds or a duration like `"90s"`, `"10m"`, `"1h30m"`.
//! An entry is a pod count (≥ 1) or a percent of the pods (`"1%"`..`"100%"`). A bad entry, or a
//! `batches` that is not a list, is a warning and the default plan applies. No IO here.

use std::fmt;

/// One step of the batch plan: how many pods are updated once it is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batch {
    Pods(u32),
    Percent(u32),
}

impl Batch {
    /// The pods updated at this step out of `replicas` (a percent rounds up, never above
    /// `replicas`).
    pub fn pods(self, replicas: i32) -> i32 {
        let n = i64::from(replicas.max(0));
        let pods = match self {
            Batch::Pods(p) => i64::from(p),
            Batch::Percent(p) => (n * i64::from(p) + 99) / 100,
        };
        pods.min(n) as i32
    }

    fn parse(value: &toml::Value) -> Result<Batch, String> {
        match value {
            toml::Value::Integer(n) if *n >= 1 && *n <= i64::from(u32::MAX) => {
                Ok(Batch::Pods(*n as u32))
            }
            toml::Value::Integer(n) => Err(format!("{n} is not a pod count (1 or more)")),
            toml::Value::String(s) => {
                let digits = s.trim().strip_suffix('%').ok_or_else(|| {
                    format!("{s:?} is neither a pod count nor a percent like \"25%\"")
                })?;
                match digits.trim().parse::<u32>() {
                    Ok(p @ 1..=100) => Ok(Batch::Percent(p)),
                    Ok(p) => Err(format!("{p}% is not between 1% and 100%")),
                    Err(_) => Err(format!("{s:?} is not a percent like \"25%\"")),
                }
            }
            other => Err(format!(
                "expected a pod count or a percent, found {}",
                other.type_str()
            )),
        }
    }
}

impl fmt::Display for Batch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Batch::Pods(n) => write!(f, "{n}"),
            Batch::Percent(p) => write!(f, "{p}%"),
        }
    }
}

/// What the rollout view and the batch keys use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolloutConfig {
    pub batches: Vec<Batch>,
    /// Triage calls a rollout stuck when it made no progress for this long.
    pub stall_seconds: i64,
}

/// `stall` by default: Deployment's progressDeadlineSeconds default.
pub const DEFAULT_STALL_SECONDS: i64 = 600;

/// `90`, `"90s"`, `"10m"`, `"1h30m"` → seconds (at least 1). jiff reads the text, so its
/// friendly spellings (`"1h 30m"`, `"10 minutes"`) are taken too; days are not (say `"24h"`).
fn parse_stall(value: &toml::Value) -> Result<i64, String> {
    let secs = match value {
        toml::Value::Integer(n) => *n,
        toml::Value::String(s) => {
            let s = s.trim();
            match s.parse::<i64>() {
                Ok(n) => n,
                Err(_) => s
                    .parse::<jiff::SignedDuration>()
                    .map_err(|_| {
                        format!("{s:?} is not a duration like \"90s\", \"10m\" or \"1h30m\"")
                    })?
                    .as_secs(),
            }
        }
        other => {
            return Err(format!(
                "expected seconds or a duration, found {}",
                other.type_str()
            ));
        }
    };
    if secs < 1 {
        return Err(format!("{secs} seconds is not a duration (1 or more)"));
    }
    Ok(secs)
}

impl Default for RolloutConfig {
    /// `1, 10%, 25%, 50%, 100%` (PRODUCT §4).
    fn default() -> Self {
        RolloutConfig {
            batches: vec![
                Batch::Pods(1),
                Batch::Percent(10),
                Batch::Percent(25),
                Batch::Percent(50),
                Batch::Percent(100),
            ],
            stall_seconds: DEFAULT_STALL_SECONDS,
        }
    }
}

impl RolloutConfig {
    /// Reads the `[rollout]` table of a parsed `config.toml` (origin names the file in
    /// warnings). Anything wrong leaves the default plan in force.
    pub fn from_table(table: &toml::Table, origin: &str) -> (RolloutConfig, Vec<String>) {
        let mut warnings = Vec::new();
        let Some(section) = table.get("rollout") else {
            return (RolloutConfig::default(), warnings);
        };
        let Some(section) = section.as_table() else {
            warnings.push(format!(
                "{origin}: `rollout` must be a table; using the default batches"
            ));
            return (RolloutConfig::default(), warnings);
        };
        for key in section.keys().filter(|k| *k != "batches" && *k != "stall") {
            warnings.push(format!("{origin}: unknown key `rollout.{key}` (ignored)"));
        }
        let stall_seconds = match section.get("stall").map(parse_stall) {
            None => DEFAULT_STALL_SECONDS,
            Some(Ok(s)) => s,
            Some(Err(why)) => {
                warnings.push(format!(
                    "{origin}: `rollout.stall`: {why}; using the default ({}m)",
                    DEFAULT_STALL_SECONDS / 60
                ));
                DEFAULT_STALL_SECONDS
            }
        };
        let (batches, warnings) = Self::batches(section, origin, warnings);
        (
            RolloutConfig {
                batches,
                stall_seconds,
            },
            warnings,
        )
    }

    fn batches(
        section: &toml::Table,
        origin: &str,
        mut warnings: Vec<String>,
    ) -> (Vec<Batch>, Vec<String>) {
        let Some(batches) = section.get("batches") else {
            return (RolloutConfig::default().batches, warnings);
        };
        let default = || RolloutConfig::default().batches;
        let shown = || {
            default()
                .iter()
                .map(Batch::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(items) = batches.as_array() else {
            warnings.push(format!(
                "{origin}: `rollout.batches` must be a list like [1, \"10%\", \"50%\"]; using \
                 the default ({})",
                shown()
            ));
            return (default(), warnings);
        };
        let mut parsed = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match Batch::parse(item) {
                Ok(b) => parsed.push(b),
                Err(why) => {
                    warnings.push(format!(
                        "{origin}: `rollout.batches` entry {}: {why}; using the default ({})",
                        i + 1,
                        shown()
                    ));
                    return (default(), warnings);
                }
            }
        }
        if parsed.is_empty() {
            warnings.push(format!(
                "{origin}: `rollout.batches` is empty; using the default ({})",
                shown()
            ));
            return (default(), warnings);
        }
        (parsed, warnings)
    }

    /// The steps for `replicas` pods: the pods updated at each, increasing, duplicates merged,
    /// ending with every pod (the rollout always finishes). Each step keeps the entry it came
    /// from (the first that reaches that count).
    pub fn steps(&self, replicas: i32) -> Vec<(i32, Batch)> {
        let mut steps: Vec<(i32, Batch)> = Vec::new();
        if replicas <= 0 {
            return steps;
        }
        let mut all: Vec<(i32, Batch)> = self
            .batches
            .iter()
            .map(|b| (b.pods(replicas), *b))
            .filter(|(n, _)| *n > 0)
            .collect();
        all.sort_by_key(|(n, _)| *n);
        for (n, b) in all {
            if steps.last().is_none_or(|(last, _)| *last < n) {
                steps.push((n, b));
            }
        }
        if steps.last().is_none_or(|(last, _)| *last < replicas) {
            steps.push((replicas, Batch::Percent(100)));
        }
        steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> (RolloutConfig, Vec<String>) {
        let table: toml::Table = toml::from_str(text).expect("toml");
        RolloutConfig::from_table(&table, "config.toml")
    }

    #[test]
    fn the_default_plan_on_ten_pods() {
        let steps = RolloutConfig::default().steps(10);
        let pods: Vec<i32> = steps.iter().map(|(n, _)| *n).collect();
        // 1 and 10% of 10 are both one pod; 25% of 10 rounds up to 3.
        assert_eq!(pods, [1, 3, 5, 10]);
        assert_eq!(steps[1].1, Batch::Percent(25));
        assert_eq!(RolloutConfig::default().steps(0), []);
        assert_eq!(
            RolloutConfig::default()
                .steps(1)
                .iter()
                .map(|s| s.0)
                .collect::<Vec<_>>(),
            [1]
        );
    }

    #[test]
    fn user_batches_are_read_and_bad_ones_warn() {
        let (cfg, warnings) = load("[rollout]\nbatches = [2, \"50%\"]\n");
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(cfg.batches, [Batch::Pods(2), Batch::Percent(50)]);
        // The last step always finishes the rollout.
        assert_eq!(
            cfg.steps(8).iter().map(|s| s.0).collect::<Vec<_>>(),
            [2, 4, 8]
        );
        for (text, why) in [
            (
                "[rollout]\nbatches = [1, \"150%\"]",
                "150% is not between 1% and 100%",
            ),
            ("[rollout]\nbatches = [0]", "0 is not a pod count"),
            (
                "[rollout]\nbatches = [\"abc\"]",
                "\"abc\" is neither a pod count",
            ),
            ("[rollout]\nbatches = \"1,2\"", "must be a list"),
            ("[rollout]\nbatches = []", "is empty"),
            ("rollout = 3", "must be a table"),
        ] {
            let (cfg, warnings) = load(text);
            assert_eq!(cfg, RolloutConfig::default(), "{text}");
            assert_eq!(warnings.len(), 1, "{text}: {warnings:?}");
            assert!(warnings[0].contains(why), "{text}: {warnings:?}");
        }
        let (_, warnings) = load("[rollout]\nbatch = [1]");
        assert!(warnings[0].contains("unknown key `rollout.batch`"));
    }

    #[test]
    fn stall_reads_seconds_and_durations_and_warns_on_nonsense() {
        assert_eq!(
            RolloutConfig::default().stall_seconds,
            DEFAULT_STALL_SECONDS
        );
        for (text, want) in [
            ("90", 90),
            ("\"90s\"", 90),
            ("\"10m\"", 600),
            ("\"1h\"", 3600),
            ("\"1h30m\"", 5400),
            ("\"120\"", 120),
            ("\"2 minutes\"", 120),
        ] {
            let (config, warnings) = load(&format!("[rollout]\nstall = {text}"));
            assert_eq!(config.stall_seconds, want, "{text}");
            assert!(warnings.is_empty(), "{warnings:?}");
        }
        for bad in ["0", "\"soon\"", "\"5d\"", "\"-5m\"", "\"500ms\"", "[1]"] {
            let (config, warnings) = load(&format!("[rollout]\nstall = {bad}"));
            assert_eq!(config.stall_seconds, DEFAULT_STALL_SECONDS, "{bad}");
            assert!(warnings[0].contains("`rollout.stall`"), "{warnings:?}");
        }
        // The batches are read beside it.
        let (config, _) = load("[rollout]\nstall = \"2m\"\nbatches = [2]");
        assert_eq!(
            (config.stall_seconds, config.batches),
            (120, vec![Batch::Pods(2)])
        );
    }
}
