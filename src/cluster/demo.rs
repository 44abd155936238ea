//! `kruise-tui demo-server`, `--demo`'s in-process cluster, and the seeded demo scenario.
//!
//! `story` is the scenario as a user would have made it (written through the API; the
//! controllers do the rest), `cluster` runs the embedded server with the simulated nodes, the
//! controllers and the story.

pub mod cluster;
pub mod story;

use anyhow::{Context as _, Result};
use tokio_util::sync::CancellationToken;

pub use cluster::{CONTEXT, DemoCluster, DemoOptions, NAMESPACE};

use crate::{cli::DemoServerArgs, config::Paths};

/// `kruise-tui demo-server`: serve until Ctrl-C or SIGTERM, printing `ready <url>` on stdout
/// once the cluster serves with the scenario seeded.
pub fn run_demo_server(args: DemoServerArgs) -> Result<()> {
    crate::cluster::sim::init_stderr_logging();
    let kubeconfig_out = match args.kubeconfig_out {
        Some(path) => path,
        None => Paths::resolve()?.demo_kubeconfig,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let demo = DemoCluster::start(DemoOptions {
            listen: args.listen,
            kubeconfig_out,
            pods: args.pods,
            seed: !args.no_seed,
            nodes: !args.no_nodes,
            controllers: !args.no_controllers,
            kruise_webhooks: !args.no_kruise_webhooks,
            remove_kubeconfig: false,
        })
        .await?;
        eprintln!(
            "demo-server: kubeconfig written to {} (namespace {NAMESPACE}); Ctrl-C to stop",
            demo.kubeconfig_path().display()
        );
        println!("ready {}", demo.url());
        let shutdown = CancellationToken::new();
        crate::cluster::sim::cancel_on_signal(shutdown.clone()).await;
        demo.shutdown().await;
        Ok(())
    })
}

/// For `kruise-tui --demo`: the embedded cluster in this process, seeded (unless `seed` is
/// false) with about `pods` pods, with simulated nodes, and a private kubeconfig for the
/// console. Call `shutdown()` when the console exits.
pub async fn start_in_process(pods: Option<usize>, seed: bool) -> Result<DemoCluster> {
    let paths = Paths::resolve()?;
    let kubeconfig_out = paths
        .state_dir
        .join(format!("demo-{}.kubeconfig", std::process::id()));
    DemoCluster::start(DemoOptions {
        listen: std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        kubeconfig_out,
        pods,
        seed,
        nodes: true,
        controllers: true,
        kruise_webhooks: true,
        remove_kubeconfig: true,
    })
    .await
}
