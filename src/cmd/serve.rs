//! The long-running subcommands: `demo-server` (the embedded cluster for kubectl and the
//! console), `sim-nodes` (simulated nodes against any API server) and `controllers` (the
//! reconcilers, headless). Each turns its flags into the options of the crate that does the work
//! and runs until Ctrl-C or SIGTERM.

use anyhow::{Context as _, Result};
use tokio_util::sync::CancellationToken;

use crate::{
    cli::{ControllersArgs, DemoServerArgs, SimNodesArgs},
    cluster::{
        demo::{DemoCluster, DemoOptions, NAMESPACE},
        sim::{SimOptions, nodes::NODE_LEASE_NAMESPACE},
    },
    config::Paths,
    controllers::{self, Options, detect},
    kube::connect::connect,
};
use kruise_client::process::{cancel_on_signal, init_stderr_logging};

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// `kruise-tui demo-server`: serve until Ctrl-C or SIGTERM, printing `ready <url>` on stdout
/// once the cluster serves with the scenario seeded.
pub fn demo_server(args: DemoServerArgs) -> Result<()> {
    init_stderr_logging();
    let kubeconfig_out = match args.kubeconfig_out {
        Some(path) => path,
        None => Paths::resolve()?.demo_kubeconfig,
    };
    runtime()?.block_on(async {
        let mut demo = DemoCluster::start(DemoOptions {
            listen: args.listen,
            kubeconfig_out,
            pods: args.pods,
            seed: !args.no_seed,
            nodes: !args.no_nodes,
            controllers: !args.no_controllers,
            kruise_webhooks: !args.no_kruise_webhooks,
            remove_kubeconfig: false,
            kruise_version: args.kruise_version.into(),
            kruise_rollout: !args.no_kruise_rollout,
            streaming_lists: !args.no_streaming_lists,
            metrics: !args.no_metrics,
        })
        .await?;
        demo.start_churn(args.churn);
        eprintln!(
            "demo-server: kubeconfig written to {} (namespace {NAMESPACE}); Ctrl-C to stop",
            demo.kubeconfig_path().display()
        );
        println!("ready {}", demo.url());
        let shutdown = CancellationToken::new();
        cancel_on_signal(shutdown.clone()).await;
        demo.shutdown().await;
        Ok(())
    })
}

/// `kruise-tui sim-nodes`: registers the nodes and runs them until Ctrl-C or SIGTERM.
pub fn sim_nodes(args: SimNodesArgs) -> Result<()> {
    init_stderr_logging();
    runtime()?.block_on(async {
        let connection = connect(&args.kube.source(), None).await?;
        let shutdown = CancellationToken::new();
        tokio::spawn(cancel_on_signal(shutdown.clone()));
        let opts = SimOptions {
            nodes: args.nodes,
            ..SimOptions::default()
        };
        eprintln!(
            "sim-nodes: simulating {} node(s) (sim-node-0..) against {}, their Leases in {}; \
             Ctrl-C to stop",
            opts.nodes, connection.cluster_url, NODE_LEASE_NAMESPACE
        );
        crate::cluster::sim::run(connection.client, opts, shutdown).await
    })
}

/// `kruise-tui controllers`: the controllers, headless, until Ctrl-C or SIGTERM.
pub fn controllers(args: ControllersArgs) -> Result<()> {
    init_stderr_logging();
    runtime()?.block_on(async {
        let connection = connect(&args.kube.source(), None).await?;
        if !args.force {
            controllers::refuse_if_kruise_manager(&connection.client).await?;
            controllers::refuse_if_kruise_rollout_manager(&connection.client).await?;
        }
        let shutdown = CancellationToken::new();
        tokio::spawn(cancel_on_signal(shutdown.clone()));
        // The release whose rules to follow: the flag, else the one the installed CRDs are
        // from (their served versions tell v1.9 from v1.8), else the current one.
        let version = match args.kruise_version {
            Some(release) => release.into(),
            None => crate::kube::discovery::discover_kruise(&connection.client)
                .await
                .ok()
                .and_then(|apis| kruise_client::release::version_from_apis(&apis))
                .unwrap_or_default(),
        };
        let opts = Options {
            gates: args.feature_gates.unwrap_or_default(),
            version,
            ..Options::default()
        };
        eprintln!(
            "controllers: reconciling Kruise objects on {} as {}, with Kruise {} rules; Ctrl-C to stop",
            connection.cluster_url,
            opts.identity,
            opts.version.name()
        );
        let webhooks = detect::kruise_webhooks(&connection.client).await;
        let rollouts = controllers::rollout::served(&connection.client).await;
        let mut notices = detect::webhook_notice(&webhooks);
        if rollouts {
            let registered = detect::kruise_rollout_webhook(&connection.client).await;
            notices.extend(detect::rollout_webhook_notice(registered, webhooks.embedded));
        }
        for line in controllers::banner(&opts.gates, rollouts, notices) {
            eprintln!("{line}");
        }
        controllers::run(connection.client, opts, shutdown).await
    })
}
