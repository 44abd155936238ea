//! `kruise-tui demo-server`, `--demo`'s in-process cluster, and the seeded demo scenario.
//!
//! `story` is the scenario as a user would have made it (written through the API; the
//! controllers do the rest), `cluster` runs the embedded server with the simulated nodes, the
//! controllers and the story.

pub mod churn;
pub mod cluster;
pub mod story;

use std::path::PathBuf;

use anyhow::Result;

pub use cluster::{CONTEXT, DemoCluster, DemoOptions, NAMESPACE};

/// For `kruise-tui --demo`: the embedded cluster in this process, seeded (unless `seed` is
/// false) with about `pods` pods, with simulated nodes, and a private kubeconfig for the
/// console at `kubeconfig_out` (removed at shutdown). Call `shutdown()` when the console exits.
pub async fn start_in_process(
    pods: Option<usize>,
    seed: bool,
    kubeconfig_out: PathBuf,
    kruise_version: crate::kruise::KruiseVersion,
) -> Result<DemoCluster> {
    DemoCluster::start(DemoOptions {
        listen: std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        kubeconfig_out,
        pods,
        seed,
        nodes: true,
        controllers: true,
        kruise_webhooks: true,
        remove_kubeconfig: true,
        kruise_version,
        kruise_rollout: true,
        streaming_lists: true,
        metrics: true,
    })
    .await
}
