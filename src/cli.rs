//! Command-line surface (PRODUCT §2). Parsing only: no IO, no clients.
//!
//! clap exits with code 2 on a usage error, which is the contract's usage exit code.

use std::{net::SocketAddr, path::PathBuf};

use clap::{Args, Parser, Subcommand};

/// kruise-tui: a terminal operations console for OpenKruise.
#[derive(Debug, Parser)]
#[command(
    name = "kruise-tui",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub console: ConsoleArgs,
}

/// Which cluster to talk to: the usual kubeconfig flags.
#[derive(Debug, Clone, Default, Args)]
pub struct KubeArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, value_name = "PATH", global = true)]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: the current context).
    #[arg(long, value_name = "NAME", global = true)]
    pub context: Option<String>,
    /// Namespace to show (default: the context's namespace).
    #[arg(
        short = 'n',
        long,
        value_name = "NS",
        conflicts_with = "all_namespaces",
        global = true
    )]
    pub namespace: Option<String>,
    /// Show all namespaces.
    #[arg(short = 'A', long = "all-namespaces", global = true)]
    pub all_namespaces: bool,
}

/// Flags of the console itself (no subcommand).
#[derive(Debug, Clone, Default, Args)]
pub struct ConsoleArgs {
    #[command(flatten)]
    pub kube: KubeArgs,
    /// Colour theme: a shipped name (default-dark, default-light, high-contrast) or a user theme.
    #[arg(long, value_name = "NAME")]
    pub theme: Option<String>,
    /// Keymap: a shipped name (default) or a user keymap.
    #[arg(long, value_name = "NAME")]
    pub keymap: Option<String>,
    /// Start the embedded cluster in-process, seeded with the demo scenario, and run the console on it.
    #[arg(long)]
    pub demo: bool,
    /// With --demo: about how many pods the seeded scenario holds in all.
    #[arg(long, value_name = "N", requires = "demo")]
    pub pods: Option<usize>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the embedded cluster on loopback for kubectl and the console.
    DemoServer(DemoServerArgs),
    /// Run simulated nodes and a simulated kubelet against any API server (like kwok).
    SimNodes(SimNodesArgs),
    /// What-if: which pods a partition change would update or roll back, in order.
    Plan(PlanArgs),
    /// Configuration helpers.
    #[command(subcommand)]
    Config(ConfigCommand),
}

#[derive(Debug, Clone, Args)]
pub struct DemoServerArgs {
    /// Loopback address to listen on (port 0 picks a free port).
    #[arg(long, value_name = "127.0.0.1:PORT", default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Where to write a kubeconfig for kubectl (default: the XDG state dir).
    #[arg(long, value_name = "PATH")]
    pub kubeconfig_out: Option<PathBuf>,
    /// About how many pods the seeded scenario holds in all.
    #[arg(long, value_name = "N")]
    pub pods: Option<usize>,
    /// Do not run the simulated nodes' controllers (pods stay as created).
    #[arg(long)]
    pub no_controllers: bool,
    /// Start empty: no demo scenario.
    #[arg(long)]
    pub no_seed: bool,
}

#[derive(Debug, Clone, Args)]
pub struct SimNodesArgs {
    #[command(flatten)]
    pub kube: KubeArgs,
    /// How many simulated nodes to register.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub nodes: usize,
}

#[derive(Debug, Clone, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub kube: KubeArgs,
    /// The workload, as KIND/NAME (cloneset|clone|cs, asts, ads, ...).
    #[arg(value_name = "KIND/NAME")]
    pub target: String,
    /// The proposed partition: a number or a percent ("3", "40%").
    #[arg(long, value_name = "VALUE")]
    pub partition: String,
}

#[derive(Debug, Clone, Subcommand)]
pub enum ConfigCommand {
    /// Print where themes, keymaps, logs and the journal live.
    Paths,
}
