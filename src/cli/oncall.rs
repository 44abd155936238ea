//! The on-call subcommands' arguments: `triage`, `report`, `journal`, `top`.

use clap::Args;

use super::args;

/// `kruise-tui triage`.
#[derive(Debug, Clone, Args)]
pub struct TriageArgs {
    /// Triage every context of the kubeconfig at once (with --context a,b: those contexts).
    #[arg(long)]
    pub all_contexts: bool,
    /// text (a worst-first table) or json (one object per line).
    #[arg(short = 'o', long, value_name = "text|json", default_value = "text")]
    pub output: TriageOutput,
    /// How long one context may take to answer (connect, discover, list).
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = args::duration)]
    pub timeout: std::time::Duration,
}

/// How `triage` and `journal` print.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum TriageOutput {
    #[default]
    Text,
    Json,
}

/// `kruise-tui report`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// The incident window: this far back from now (10m, 2h, 90m).
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = args::duration)]
    pub since: std::time::Duration,
    /// Write the Markdown to this file instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

/// `kruise-tui journal`.
#[derive(Debug, Clone, Args)]
pub struct JournalArgs {
    /// text (one line per action, UTC and local time) or json (the journal's lines).
    #[arg(short = 'o', long, value_name = "text|json", default_value = "text")]
    pub output: TriageOutput,
    /// Only what was sent this far back from now (10m, 2h).
    #[arg(long, value_name = "DURATION", value_parser = args::duration)]
    pub since: Option<std::time::Duration>,
}

/// `kruise-tui top`.
#[derive(Debug, Clone, Args)]
pub struct TopArgs {
    /// A workload as KIND/NAME (cs/web, asts/db, ads/agent), or `pods` for every pod of the
    /// namespace (narrowed by -l).
    #[arg(value_name = "KIND/NAME|pods", value_parser = TopTarget::parse)]
    pub target: TopTarget,
    /// With `pods`: only the pods this label selector selects (as kubectl's -l).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// One line per container under each pod.
    #[arg(long)]
    pub containers: bool,
    /// text (a table and the total) or json (one object).
    #[arg(short = 'o', long, value_name = "text|json", default_value = "text")]
    pub output: TriageOutput,
}

/// What `top` measures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopTarget {
    /// Every pod of the namespace.
    Pods,
    /// The pods a workload controls.
    Workload(args::WorkloadArg),
}

impl TopTarget {
    pub fn parse(text: &str) -> Result<TopTarget, String> {
        match text {
            "pods" | "pod" | "po" => Ok(TopTarget::Pods),
            _ => args::WorkloadArg::rollout(text).map(TopTarget::Workload),
        }
    }
}
