//! Simulated nodes and kubelet, against any API server (like kwok): `kruise-tui sim-nodes`.
//!
//! The decisions are pure (`kubelet::decide`, `schedule::pick_node`, `nodes::node_object`, and
//! for the simulated kruise-daemon `recreate::plan` and `probes::NodeProber::pass`); `driver` is
//! the thin IO loop that watches pods, nodes, ContainerRecreateRequests and NodePodProbes with
//! kube-rs, applies those decisions through `io`, and keeps one sorted deadline queue
//! (`deadlines`) instead of per-object tasks or polling.
//!
//! Steering the simulated daemon (documented in README's "Using it" too):
//! - `sim.kruise-tui.io/probe-<probe name>: "fail"` on a pod makes that PodProbeMarker probe
//!   fail on its next periods (`failureThreshold` of them); without it, or with `"succeed"`, a
//!   probe succeeds while its container runs (a container that is not running fails it);
//! - `sim.kruise-tui.io/kill-<container>: "fail"` on a pod makes a CRR's kill of that container
//!   fail (`kill container error: ...`), so the CRR's `failurePolicy` decides what follows.

pub mod deadlines;
pub mod driver;
pub mod events;
pub mod ids;
pub mod io;
pub mod kubelet;
pub mod logs;
pub mod nodes;
pub mod probes;
pub mod recreate;
pub mod schedule;
pub mod shell;

use anyhow::{Context as _, Result};
use tokio_util::sync::CancellationToken;

pub use driver::{SimOptions, run};

use crate::cli::SimNodesArgs;

/// `kruise-tui sim-nodes`: registers the nodes and runs them until Ctrl-C or SIGTERM.
pub fn run_sim_nodes(args: SimNodesArgs) -> Result<()> {
    init_stderr_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let connection = crate::kube::connect::connect(&args.kube, None).await?;
        let shutdown = CancellationToken::new();
        tokio::spawn(cancel_on_signal(shutdown.clone()));
        let opts = SimOptions {
            nodes: args.nodes,
            ..SimOptions::default()
        };
        eprintln!(
            "sim-nodes: simulating {} node(s) (sim-node-0..) against {}, their Leases in {}; \
             Ctrl-C to stop",
            opts.nodes,
            connection.cluster_url,
            nodes::NODE_LEASE_NAMESPACE
        );
        run(connection.client, opts, shutdown).await
    })
}

/// Cancels `token` on Ctrl-C or SIGTERM.
pub async fn cancel_on_signal(token: CancellationToken) {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
    token.cancel();
}

/// Warnings from the headless commands go to stderr (`RUST_LOG` filters them), and the
/// controllers' word that a failing object reconciles again.
pub fn init_stderr_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new("warn,kruise_tui::controllers::runner=info")
    });
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colours only for a person at a terminal, not in a log file or a pipe.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}
