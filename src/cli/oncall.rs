//! The on-call subcommands' arguments: `triage`.

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

/// How `triage` prints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum TriageOutput {
    #[default]
    Text,
    Json,
}
