//! Command-line surface (PRODUCT §2). Parsing only: no IO, no clients.
//!
//! clap exits with code 2 on a usage error, which is the contract's usage exit code.

use std::{net::SocketAddr, path::PathBuf};

use clap::{Args, CommandFactory as _, Parser, Subcommand, error::ErrorKind};

pub mod args;
pub mod oncall;

pub use oncall::{JournalArgs, ReportArgs, TopArgs, TopTarget, TriageArgs, TriageOutput};

use args::{ImageArg, PartitionArg, WorkloadArg};

/// kruise-tui: a terminal operations console for OpenKruise.
///
/// The kubeconfig flags (`--kubeconfig --context -n -A --readonly`) go before or after any
/// subcommand, as kubectl's global flags do (those that talk to no cluster ignore them); the
/// console's own flags go with no subcommand.
#[derive(Debug, Parser)]
#[command(name = "kruise-tui", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub console: ConsoleArgs,
}

impl Cli {
    /// Parses the command line; a usage error (clap's, or a flag that does not go with the
    /// subcommand given) prints the usage and exits with code 2.
    pub fn parse_checked() -> Cli {
        Self::checked(Cli::parse())
    }

    /// [`Cli::parse_checked`] over the given arguments (the first is the program name).
    pub fn try_parse_checked<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let cli = Cli::try_parse_from(args)?;
        match cli.problem() {
            Some(err) => Err(err),
            None => Ok(cli),
        }
    }

    fn checked(cli: Cli) -> Cli {
        if let Some(err) = cli.problem() {
            err.exit();
        }
        cli
    }

    /// What clap cannot see alone: a flag where it means nothing, a value the workload's kind
    /// never takes.
    fn problem(&self) -> Option<clap::Error> {
        if let Some(message) = self.misplaced() {
            return Some(Cli::command().error(ErrorKind::ArgumentConflict, message));
        }
        let message = self.invalid_for_kind()?;
        Some(Cli::command().error(ErrorKind::ValueValidation, message))
    }

    /// A percent partition for a kind whose partition counts pods (Advanced StatefulSet): wrong
    /// whatever the cluster holds. (An Advanced DaemonSet's is a percent from Kruise v1.9.0 on;
    /// a v1.8.4 cluster's schema refuses one.)
    fn invalid_for_kind(&self) -> Option<String> {
        let (target, partition, arg) = match self.command.as_ref()? {
            Command::Plan(a) => (&a.target, &a.partition, "--partition <VALUE>"),
            Command::Rollout(RolloutCommand::Partition(a)) => (&a.target, &a.value, "<VALUE>"),
            _ => return None,
        };
        (partition.is_percent() && !target.kind.workload.is_some_and(|w| w.partition_percent()))
            .then(|| {
                format!(
                    "invalid value '{}' for '{arg}': the partition of {} is a number of pods, not \
                 a percent",
                    partition.text,
                    target.resource_name()
                )
            })
    }

    /// A flag given where it means nothing: a console flag with a subcommand, `-A` with one
    /// object. The kubeconfig flags go with every subcommand, as kubectl's global flags do, and
    /// those that talk to no cluster (`config paths`, `demo-server`) ignore them.
    fn misplaced(&self) -> Option<String> {
        let command = self.command.as_ref()?;
        let c = &self.console;
        let console_flag = [
            (c.theme.is_some(), "--theme"),
            (c.keymap.is_some(), "--keymap"),
            (c.demo, "--demo"),
            (c.pods.is_some(), "--pods"),
            (c.controllers, "--controllers"),
        ]
        .into_iter()
        .find(|(set, _)| *set);
        let name = command.name();
        if let Some((_, flag)) = console_flag {
            return Some(format!(
                "{flag} is a flag of the console (kruise-tui with no subcommand), not of {name}"
            ));
        }
        match command {
            Command::Plan(_)
            | Command::Rollout(_)
            | Command::Set(_)
            | Command::Scale(_)
            | Command::Restart(_)
            | Command::Protect(_)
                if c.kube.all_namespaces =>
            {
                Some(format!(
                    "--all-namespaces does not apply to {name}: it acts on one object (use -n NAMESPACE)"
                ))
            }
            Command::Top(t) if c.kube.all_namespaces && t.target != TopTarget::Pods => Some(
                "--all-namespaces does not apply to top KIND/NAME: it measures one workload (use -n NAMESPACE, or top pods -A)".to_owned(),
            ),
            Command::Triage(t) if t.all_contexts && c.kube.context.is_some() => Some(
                "--all-contexts and --context exclude each other (--context a,b names the contexts)"
                    .to_owned(),
            ),
            _ => None,
        }
    }
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
        global = true,
        value_parser = args::namespace_name
    )]
    pub namespace: Option<String>,
    /// Show all namespaces.
    #[arg(short = 'A', long = "all-namespaces", global = true)]
    pub all_namespaces: bool,
    /// Send no mutating request: actions say "read-only" and do nothing.
    #[arg(long, global = true)]
    pub readonly: bool,
}

impl KubeArgs {
    /// `--context a,b` read as a list of contexts (the on-call subcommands take several);
    /// None without `--context`.
    pub fn context_list(&self) -> Option<Vec<String>> {
        self.context.as_ref().map(|list| {
            list.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        })
    }

    /// The kubeconfig and context these flags choose, for [`kruise_client::connect`].
    pub fn source(&self) -> kruise_client::connect::Source {
        kruise_client::connect::Source {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
        }
    }
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
    /// With --demo: which Kruise release the demo cluster is.
    #[arg(long, value_name = "1.9|1.8", requires = "demo", default_value = "1.9")]
    pub kruise_version: KruiseRelease,
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
    /// Walk a rollout: status, history, partition, pause, resume, undo; a Kruise Rollout
    /// (rollout/NAME): status, approve, pause, resume, undo.
    #[command(subcommand)]
    Rollout(RolloutCommand),
    /// Change a workload's template.
    #[command(subcommand)]
    Set(SetCommand),
    /// Set a workload's replica count; with --pods, scale down by deleting exactly those pods.
    Scale(ScaleArgs),
    /// Restart containers in place (ContainerRecreateRequests): one pod, several, or every pod
    /// of a workload one after another, the PodUnavailableBudget permitting.
    Restart(RestartArgs),
    /// Set or remove deletion protection (policy.kruise.io/delete-protection) on an object.
    Protect(ProtectArgs),
    /// What is unhealthy now, worst first: in the current context, in --context a,b, or in
    /// every context of the kubeconfig (--all-contexts). All namespaces unless -n. Exit 0 when
    /// nothing is, 1 when something is (or a context cannot be read).
    Triage(TriageArgs),
    /// A Markdown timeline of an incident window: what this tool sent (the journal), the
    /// Events of what it touched, and the problems triage saw; --context/-n narrow it.
    Report(ReportArgs),
    /// The action journal: every mutating request this tool sent, with its result.
    Journal(JournalArgs),
    /// CPU and memory of a workload's pods (or of the namespace's: `top pods`) from
    /// metrics.k8s.io, with requests/limits and the total; exit 1 when no metrics API answers.
    Top(TopArgs),
    /// Configuration helpers.
    #[command(subcommand)]
    Config(ConfigCommand),
}

impl Command {
    /// The subcommand as typed (`rollout status`), for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Command::DemoServer(_) => "demo-server",
            Command::SimNodes(_) => "sim-nodes",
            Command::Controllers(_) => "controllers",
            Command::Plan(_) => "plan",
            Command::Rollout(r) => match r {
                RolloutCommand::Status(_) => "rollout status",
                RolloutCommand::History(_) => "rollout history",
                RolloutCommand::Undo(_) => "rollout undo",
                RolloutCommand::Pause(_) => "rollout pause",
                RolloutCommand::Resume(_) => "rollout resume",
                RolloutCommand::Partition(_) => "rollout partition",
                RolloutCommand::Approve(_) => "rollout approve",
            },
            Command::Set(SetCommand::Image(_)) => "set image",
            Command::Scale(_) => "scale",
            Command::Restart(_) => "restart",
            Command::Protect(_) => "protect",
            Command::Triage(_) => "triage",
            Command::Report(_) => "report",
            Command::Journal(_) => "journal",
            Command::Top(_) => "top",
            Command::Config(ConfigCommand::Paths) => "config paths",
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct DemoServerArgs {
    /// Loopback address to listen on (port 0 picks a free port).
    #[arg(
        long,
        value_name = "127.0.0.1:PORT",
        default_value = "127.0.0.1:0",
        value_parser = args::loopback
    )]
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
    /// Serve the Kruise CRDs without the Kruise admission webhooks (no defaulting, validation,
    /// deletion protection or budgets): the shape of a real cluster where `kruise-tui
    /// controllers` runs without kruise-manager.
    #[arg(long)]
    pub no_kruise_webhooks: bool,
    /// Serve no Kruise Rollout (`rollouts.kruise.io`): the shape of a cluster with Kruise but
    /// without Kruise Rollout installed.
    #[arg(long)]
    pub no_kruise_rollout: bool,
    /// Refuse streaming lists (watches with `sendInitialEvents`) with 422, as a v1.33 server
    /// (WatchList gate off) or an aggregated API does: clients then list in pages.
    #[arg(long)]
    pub no_streaming_lists: bool,
    /// Serve no resource metrics API (`metrics.k8s.io`, what metrics-server adds): the shape
    /// of a cluster without metrics-server, where `kubectl top` says the API is not available.
    #[arg(long)]
    pub no_metrics: bool,
    /// Start empty: no demo scenario.
    #[arg(long)]
    pub no_seed: bool,
    /// Make this many pod status changes a second, spread round-robin over the bulk pods (a
    /// status-only change each, readiness and restarts untouched): a steady load for watchers.
    #[arg(long, value_name = "PER_SECOND", default_value_t = 0)]
    pub churn: u32,
    /// Which Kruise release the cluster is: its CRDs (1.9 stores seven kinds as v1beta1),
    /// conversions, webhooks and controllers.
    #[arg(long, value_name = "1.9|1.8", default_value = "1.9")]
    pub kruise_version: KruiseRelease,
}

/// A Kruise release the embedded cluster and the controllers can follow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum KruiseRelease {
    /// v1.9.0, the current release.
    #[default]
    #[value(name = "1.9", alias = "1.9.0", alias = "v1.9", alias = "v1.9.0")]
    V1_9,
    /// v1.8.4.
    #[value(name = "1.8", alias = "1.8.4", alias = "v1.8", alias = "v1.8.4")]
    V1_8,
}

impl From<KruiseRelease> for crate::kruise::KruiseVersion {
    fn from(r: KruiseRelease) -> Self {
        match r {
            KruiseRelease::V1_9 => Self::V1_9,
            KruiseRelease::V1_8 => Self::V1_8,
        }
    }
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
    /// Follow this Kruise release's rules (default: the release the cluster's Kruise CRDs are
    /// from, told by which versions they store).
    #[arg(long, value_name = "1.9|1.8")]
    pub kruise_version: Option<KruiseRelease>,
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

/// The KIND of `KIND/NAME`: `cloneset|clone|cs|clonesets`, `asts|statefulset.apps.kruise.io`,
/// `ads|daemonset.apps.kruise.io` (plural names and `kind.group` too).
const WORKLOAD_HELP: &str = "The workload, as KIND/NAME: cloneset|clone|cs, \
    asts|statefulset.apps.kruise.io or ads|daemonset.apps.kruise.io (plurals too)";

#[derive(Debug, Clone, Args)]
pub struct PlanArgs {
    #[arg(value_name = "KIND/NAME", help = WORKLOAD_HELP, value_parser = WorkloadArg::rollout)]
    pub target: WorkloadArg,
    /// The proposed partition: a number or a percent ("3", "40%").
    #[arg(
        long,
        value_name = "VALUE",
        allow_negative_numbers = true,
        value_parser = PartitionArg::parse
    )]
    pub partition: PartitionArg,
}

/// The KIND of `KIND/NAME` for the verbs a Kruise Rollout takes too.
const ROLLOUT_OR_WORKLOAD_HELP: &str = "The workload, as KIND/NAME: cloneset|clone|cs, \
    asts|statefulset.apps.kruise.io or ads|daemonset.apps.kruise.io (plurals too); or a Kruise \
    Rollout: rollout|ro|rollouts.rollouts.kruise.io/NAME";

/// Overrides the refusal of a direct edit on a workload a Kruise Rollout is releasing.
const FORCE_HELP: &str = "Act on the workload even while a Kruise Rollout releases it (the \
    Rollout owns its partition and pause: its controllers undo or stall on the edit)";

#[derive(Debug, Clone, Subcommand)]
pub enum RolloutCommand {
    /// The rollout's numbers (updated / expected / ready / available, revisions, partition,
    /// paused); with --watch, follow it until it completes. For a Kruise Rollout: its phase,
    /// step i/N and state, each step, the time left in a timed pause and its BatchRelease.
    Status(RolloutStatusArgs),
    /// The workload's revisions (ControllerRevisions): number, name, pods, change cause, and
    /// which is current and which the update.
    History(RolloutHistoryArgs),
    /// Roll back: the whole pod template of the previous revision (or --to-revision N) replaces
    /// the current one; the partition still holds back what it held.
    Undo(RolloutUndoArgs),
    /// Pause the rollout: no pod is updated until it is resumed (scaling goes on).
    Pause(WorkloadTarget),
    /// Resume a paused rollout.
    Resume(WorkloadTarget),
    /// Set the partition: how many pods (a number, or a percent for a CloneSet) stay on older
    /// revisions; prints the pods the controller moves next.
    Partition(RolloutPartitionArgs),
    /// Approve a Kruise Rollout's current step (the step paused waiting for approval), as
    /// kubectl-kruise does, checked and re-sent until the Rollout moves on.
    Approve(RolloutApproveArgs),
}

#[derive(Debug, Clone, Args)]
pub struct WorkloadTarget {
    #[arg(value_name = "KIND/NAME", help = ROLLOUT_OR_WORKLOAD_HELP, value_parser = WorkloadArg::rollout_or_workload)]
    pub target: WorkloadArg,
    #[arg(long, help = FORCE_HELP)]
    pub force: bool,
}

#[derive(Debug, Clone, Args)]
pub struct RolloutApproveArgs {
    /// The Kruise Rollout, as rollout/NAME (ro/NAME, rollouts.rollouts.kruise.io/NAME).
    #[arg(value_name = "rollout/NAME", value_parser = WorkloadArg::kruise_rollout)]
    pub target: WorkloadArg,
    /// The step to approve (1-based), refused unless it is the one waiting for approval
    /// (default: the current step).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(1..))]
    pub step: Option<i32>,
}

#[derive(Debug, Clone, Args)]
pub struct RolloutStatusArgs {
    #[arg(value_name = "KIND/NAME", help = ROLLOUT_OR_WORKLOAD_HELP, value_parser = WorkloadArg::rollout_or_workload)]
    pub target: WorkloadArg,
    /// Follow the rollout until it completes (exit 0) or --timeout passes (exit 1).
    #[arg(short, long)]
    pub watch: bool,
    /// With --watch (implied): give up after this long (30s, 2m, 1h30m; 0 waits forever).
    #[arg(long, value_name = "DURATION", value_parser = args::duration)]
    pub timeout: Option<std::time::Duration>,
}

#[derive(Debug, Clone, Args)]
pub struct RolloutHistoryArgs {
    #[arg(value_name = "KIND/NAME", help = WORKLOAD_HELP, value_parser = WorkloadArg::rollout)]
    pub target: WorkloadArg,
    /// Print the pod template of this revision (0, as in kubectl, lists them all).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(0..))]
    pub revision: Option<i64>,
}

#[derive(Debug, Clone, Args)]
pub struct RolloutUndoArgs {
    #[arg(value_name = "KIND/NAME", help = ROLLOUT_OR_WORKLOAD_HELP, value_parser = WorkloadArg::rollout_or_workload)]
    pub target: WorkloadArg,
    #[arg(long, help = FORCE_HELP)]
    pub force: bool,
    /// The revision to go back to (`rollout history` lists them); default: the newest whose
    /// template differs from the current one (what 0 means, as in kubectl).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(0..))]
    pub to_revision: Option<i64>,
}

#[derive(Debug, Clone, Args)]
pub struct RolloutPartitionArgs {
    #[arg(value_name = "KIND/NAME", help = WORKLOAD_HELP, value_parser = WorkloadArg::rollout)]
    pub target: WorkloadArg,
    /// The partition: a number of pods ("3") or, for a CloneSet, a percent ("40%").
    #[arg(
        value_name = "VALUE",
        allow_negative_numbers = true,
        value_parser = PartitionArg::parse
    )]
    pub value: PartitionArg,
    #[arg(long, help = FORCE_HELP)]
    pub force: bool,
}

#[derive(Debug, Clone, Subcommand)]
pub enum SetCommand {
    /// Set container images in the pod template (a new revision; the partition decides which
    /// pods move).
    Image(SetImageArgs),
}

#[derive(Debug, Clone, Args)]
pub struct SetImageArgs {
    #[arg(value_name = "KIND/NAME", help = WORKLOAD_HELP, value_parser = WorkloadArg::rollout)]
    pub target: WorkloadArg,
    /// One or more CONTAINER=IMAGE.
    #[arg(value_name = "CONTAINER=IMAGE", required = true, value_parser = ImageArg::parse)]
    pub images: Vec<ImageArg>,
}

#[derive(Debug, Clone, Args)]
pub struct ScaleArgs {
    /// The workload, as KIND/NAME: cloneset|clone|cs or asts|statefulset.apps.kruise.io.
    #[arg(value_name = "KIND/NAME", value_parser = WorkloadArg::scalable)]
    pub target: WorkloadArg,
    /// The replica count.
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = clap::value_parser!(i32).range(0..)
    )]
    pub replicas: i32,
    /// CloneSet: the pods to delete (`scaleStrategy.podsToDelete`), comma-separated.
    #[arg(
        long,
        value_name = "POD,...",
        value_delimiter = ',',
        value_parser = args::pod_in_list
    )]
    pub pods: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct RestartArgs {
    /// A pod, several pods, or one workload as KIND/NAME (cs/web, asts/db, ads/agent): many
    /// pods restart one after another, each waiting for its PodUnavailableBudget and Ready
    /// again before the next (Ctrl-C stops after the pod in flight).
    #[arg(value_name = "POD|KIND/NAME", required = true, num_args = 1.., value_parser = args::RestartTarget::parse)]
    pub targets: Vec<args::RestartTarget>,
    /// A container to restart (repeat for more; default: every container of the pod).
    #[arg(short = 'c', long = "container", value_name = "CONTAINER", value_parser = args::container_name)]
    pub containers: Vec<String>,
    /// Wait until the restart completed and the pod is Ready again (and, while the pod's
    /// PodUnavailableBudget allows no disruption, wait for it rather than refuse).
    #[arg(long)]
    pub wait: bool,
    /// How long each wait may take with --wait.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = args::duration)]
    pub timeout: std::time::Duration,
    /// Fail (stop at the first container that fails) or Ignore.
    #[arg(long, value_name = "Fail|Ignore", default_value = "Fail", value_parser = args::failure_policy)]
    pub failure_policy: String,
    /// Recreate the next container only once the previous one is ready.
    #[arg(long)]
    pub ordered_recreate: bool,
    /// Seconds the pod is kept not-ready before a container stops.
    #[arg(long, value_name = "SECONDS", default_value_t = 3, value_parser = clap::value_parser!(i64).range(0..))]
    pub unready_grace_period_seconds: i64,
    /// Seconds a recreated container must run to count as succeeded.
    #[arg(long, value_name = "SECONDS", default_value_t = 3, value_parser = clap::value_parser!(i32).range(0..))]
    pub min_started_seconds: i32,
    /// Seconds after which the request fails if not finished (1 or more).
    #[arg(long, value_name = "SECONDS", default_value_t = 300, value_parser = clap::value_parser!(i64).range(1..))]
    pub active_deadline_seconds: i64,
    /// Seconds a finished request is kept.
    #[arg(long, value_name = "SECONDS", default_value_t = 1800, value_parser = clap::value_parser!(i32).range(0..))]
    pub ttl_seconds_after_finished: i32,
}

#[derive(Debug, Clone, Args)]
pub struct ProtectArgs {
    /// The object, as KIND/NAME: ns, crd, cs, asts, ud, deploy, rs, sts, svc, ing (and their
    /// other spellings).
    #[arg(value_name = "KIND/NAME", value_parser = args::ProtectedArg::parse)]
    pub target: args::ProtectedArg,
    /// always, cascading or off.
    #[arg(value_name = "always|cascading|off", value_parser = args::ProtectionValue::parse)]
    pub value: args::ProtectionValue,
}

#[derive(Debug, Clone, Subcommand)]
pub enum ConfigCommand {
    /// Print where themes, keymaps, logs and the journal live.
    Paths,
}
