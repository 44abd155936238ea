//! The demo cluster: the embedded API server on loopback, the kubeconfig that reaches it, the
//! seeded scenario and the simulated nodes, started and stopped as one.

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
};

use anyhow::{Context as _, Result};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{
    churn::{self, ChurnOptions},
    story::{self, StoryOptions},
};
use crate::{
    kruise::KruiseVersion,
    server::{EmbeddedCluster, ServerOptions},
    sim::{self, SimOptions},
};

/// The namespace the demo scenario lives in (the kubeconfig's default namespace).
pub const NAMESPACE: &str = "demo";

/// The kubeconfig context name.
pub const CONTEXT: &str = "kruise-tui-demo";

/// How to start a demo cluster.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    pub listen: SocketAddr,
    pub kubeconfig_out: PathBuf,
    /// About how many pods the scenario holds (None: the base scenario).
    pub pods: Option<usize>,
    pub seed: bool,
    /// Run the simulated nodes (scheduler and kubelet).
    pub nodes: bool,
    /// Run the embedded Kruise controllers.
    pub controllers: bool,
    /// Install the embedded Kruise admission webhooks. Without them the cluster has the shape
    /// of a real one where `kruise-tui controllers` runs and no kruise-manager does: the Kruise
    /// CRDs are served, nothing defaults, validates or guards Kruise objects.
    pub kruise_webhooks: bool,
    /// Delete the kubeconfig on shutdown (a private one for `--demo`).
    pub remove_kubeconfig: bool,
    /// Which Kruise release the cluster is: its CRDs, conversions, webhooks and controllers.
    pub kruise_version: KruiseVersion,
    /// Serve Kruise Rollout's CRDs (and, with the controllers and webhooks, run Kruise Rollout).
    pub kruise_rollout: bool,
    /// Serve streaming lists (`sendInitialEvents`); false refuses them as v1.33 does.
    pub streaming_lists: bool,
    /// Serve the resource metrics API (`metrics.k8s.io`) from the simulated containers' usage;
    /// false answers as a cluster without metrics-server.
    pub metrics: bool,
}

/// A running demo cluster.
pub struct DemoCluster {
    cluster: EmbeddedCluster,
    kubeconfig: PathBuf,
    remove_kubeconfig: bool,
    sim: Option<(CancellationToken, JoinHandle<Result<()>>)>,
    controllers: Option<(CancellationToken, JoinHandle<Result<()>>)>,
    epilogue: Option<JoinHandle<()>>,
    churn: Option<(CancellationToken, JoinHandle<()>)>,
    /// Which pods a churn changes: the bulk ones when there are any.
    churn_prefix: String,
    seeded: usize,
}

impl DemoCluster {
    /// Starts the server, writes the kubeconfig, seeds the scenario and starts the simulated
    /// nodes. Returns once everything is in place.
    pub async fn start(opts: DemoOptions) -> Result<DemoCluster> {
        let cluster = EmbeddedCluster::start(ServerOptions {
            listen: opts.listen,
            token: None,
            kruise_version: opts.kruise_version,
            kruise_rollout: opts.kruise_rollout,
            streaming_lists: opts.streaming_lists,
            metrics: opts.metrics,
        })
        .await?;
        write_private(
            &opts.kubeconfig_out,
            &cluster.kubeconfig_yaml(CONTEXT, NAMESPACE),
        )?;
        let client = cluster.client().await?;
        // Kruise's webhooks guard every write, the story's included. Deletion protection is on
        // so the demo's protected objects really are protected.
        if opts.kruise_webhooks {
            crate::install_kruise_webhooks(&cluster, demo_gates());
        }
        let sim = opts.nodes.then(|| {
            let token = CancellationToken::new();
            let options = SimOptions {
                nodes: story::node_count(opts.pods),
                kruise_version: opts.kruise_version,
                ..SimOptions::default()
            };
            let task = tokio::spawn(sim::run(client.clone(), options, token.clone()));
            (token, task)
        });
        let controllers = opts.controllers.then(|| {
            let token = CancellationToken::new();
            let options = kruise_controllers::Options {
                gates: demo_gates(),
                version: opts.kruise_version,
                ..kruise_controllers::Options::default()
            };
            let task = tokio::spawn(kruise_controllers::run(
                client.clone(),
                options,
                token.clone(),
            ));
            (token, task)
        });
        let story_opts = StoryOptions {
            namespace: NAMESPACE.to_owned(),
            pods: opts.pods,
            controllers: opts.controllers,
            kruise_rollout: opts.kruise_rollout,
        };
        let (seeded, epilogue) = if opts.seed {
            let seeded = story::play(&client, &story_opts)
                .await
                .context("cannot play the demo scenario")?;
            let client = client.clone();
            let epilogue = tokio::spawn(async move { story::epilogue(&client, &story_opts).await });
            (seeded, Some(epilogue))
        } else {
            // Empty, but the kubeconfig's namespace exists.
            let ns = story::namespace_obj(NAMESPACE);
            (usize::from(story::create(&client, &ns).await?), None)
        };
        Ok(DemoCluster {
            cluster,
            kubeconfig: opts.kubeconfig_out,
            remove_kubeconfig: opts.remove_kubeconfig,
            sim,
            controllers,
            epilogue,
            churn: None,
            churn_prefix: story::churn_namespace_prefix(NAMESPACE, opts.pods),
            seeded,
        })
    }

    /// The kubeconfig that reaches this cluster (token included).
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    /// The URL the kubeconfig points at.
    pub fn url(&self) -> String {
        self.cluster.https_url()
    }

    /// How many objects the story created (namespaces included).
    pub fn seeded_objects(&self) -> usize {
        self.seeded
    }

    /// A kube client for this cluster (in-process callers need no kubeconfig).
    pub async fn client(&self) -> Result<kube::Client> {
        self.cluster.client().await
    }

    /// The embedded server itself (for tests that stop and restart serving).
    pub fn cluster(&self) -> &EmbeddedCluster {
        &self.cluster
    }

    /// Starts `per_second` pod status changes a second, spread round-robin over the bulk pods
    /// (over the demo namespace's pods when there are none): `demo-server --churn`. Each is a
    /// status-only change a watcher sees as MODIFIED (see [`churn`](super::churn)). Zero stops
    /// a running churn.
    pub fn start_churn(&mut self, per_second: u32) {
        if let Some((token, _)) = self.churn.take() {
            token.cancel();
        }
        if per_second == 0 {
            return;
        }
        let token = CancellationToken::new();
        let task = churn::spawn(
            self.cluster.store(),
            ChurnOptions {
                per_second,
                namespace_prefix: self.churn_prefix.clone(),
            },
            token.clone(),
        );
        self.churn = Some((token, task));
    }

    /// Stops the controllers, the simulated nodes and the server; removes a private kubeconfig.
    ///
    /// Everything is told to stop at once, and what has not stopped within [`SHUTDOWN_GRACE`]
    /// is aborted: with 100,000 pods the controllers and the simulator may be mid-way through
    /// a backlog of requests to a busy server, and Ctrl-C must not wait for it.
    pub async fn shutdown(self) {
        if let Some(epilogue) = self.epilogue {
            epilogue.abort();
        }
        let mut tasks: Vec<(&str, JoinHandle<Result<()>>)> = Vec::new();
        if let Some((token, task)) = self.churn {
            token.cancel();
            task.abort();
        }
        if let Some((token, task)) = self.controllers {
            token.cancel();
            tasks.push(("the controllers", task));
        }
        if let Some((token, task)) = self.sim {
            token.cancel();
            tasks.push(("the simulated nodes", task));
        }
        let deadline = tokio::time::Instant::now() + SHUTDOWN_GRACE;
        for (what, mut task) in tasks {
            match tokio::time::timeout_at(deadline, &mut task).await {
                Ok(Ok(Err(err))) => tracing::warn!("demo: {what} stopped with an error: {err:#}"),
                Ok(_) => {}
                Err(_) => {
                    tracing::warn!("demo: {what} did not stop in time; stopped them");
                    task.abort();
                }
            }
        }
        self.cluster.shutdown().await;
        if self.remove_kubeconfig {
            let _ = std::fs::remove_file(&self.kubeconfig);
        }
    }
}

/// How long [`DemoCluster::shutdown`] lets the controllers and the simulated nodes finish
/// (release the leader lease, end their requests) before it aborts them.
pub const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// The Kruise feature gates the demo runs with: deletion protection and PUB gates on (so the
/// demo's protected objects are protected) and partition rollback on (so raising a partition
/// rolls pods back).
pub fn demo_gates() -> crate::kruise::FeatureGates {
    crate::kruise::FeatureGates::new()
        .with("ResourcesDeletionProtection", true)
        .with("PodUnavailableBudgetUpdateGate", true)
        .with("CloneSetPartitionRollback", true)
}

/// Writes `contents` to `path` readable by the user only (it holds the token).
fn write_private(path: &Path, contents: &str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options
        .open(path)
        .with_context(|| format!("cannot write the kubeconfig {}", path.display()))?;
    std::io::Write::write_all(&mut file, contents.as_bytes())
        .with_context(|| format!("cannot write the kubeconfig {}", path.display()))?;
    Ok(())
}
