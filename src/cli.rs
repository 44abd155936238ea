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
    /// Send no mutating request: actions say "read-only" and do nothing.
    #[arg(long, global = true)]
    pub readonly: bool,
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
    /// Also run the embedded Kruise controllers against this cluster (for clusters with the
    /// Kruise CRDs but no kruise-manager; refused when one is running).
    #[arg(long, conflicts_with = "demo")]
    pub controllers: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the embedded cluster on loopback for kubectl and the console.
    DemoServer(DemoServerArgs),
    /// Run simulated nodes and a simulated kubelet against any API server (like kwok).
    SimNodes(SimNodesArgs),
    /// Run the embedded Kruise controllers (headless) against any cluster with the Kruise CRDs.
    Controllers(ControllersArgs),
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
    /// Do not run the embedded Kruise controllers (Kruise objects stay as written).
    #[arg(long)]
    pub no_controllers: bool,
    /// Do not run the simulated nodes and kubelet (pods stay Pending).
    #[arg(long)]
    pub no_nodes: bool,
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
pub struct ControllersArgs {
    #[command(flatten)]
    pub kube: KubeArgs,
    /// Kruise feature gates, e.g. `CloneSetPartitionRollback=true,PreparingUpdateAsUpdate=false`.
    #[arg(long, value_name = "A=true,B=false", value_parser = parse_gates)]
    pub feature_gates: Option<crate::kruise::FeatureGates>,
    /// Run even when a kruise-manager appears to be running in the cluster.
    #[arg(long)]
    pub force: bool,
}

fn parse_gates(spec: &str) -> Result<crate::kruise::FeatureGates, String> {
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let name = part.split_once('=').map_or(part, |(n, _)| n).trim();
        if !crate::kruise::FeatureGates::is_known(name) {
            return Err(format!("unrecognized feature gate: {name}"));
        }
    }
    crate::kruise::FeatureGates::parse(spec)
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
