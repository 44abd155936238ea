//! Shared by the ContainerRecreateRequest and PodProbeMarker end-to-end tests: a [`Testbed`]
//! (in the test's own namespace) whose simulated nodes and controllers run either in-process
//! with the embedded cluster, or beside a bare embedded server as separate clients (the path
//! `kruise-tui sim-nodes` and `kruise-tui controllers` take against a real cluster, and the one
//! an existing cluster always takes), plus polling and pod helpers. Needs
//! `support/testbed.rs` included as `testbed` next to it.
#![allow(dead_code)]

use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_tui::cluster::sim::{self, SimOptions, nodes::SIM_NODE_LABEL};
use kube::{
    Api, Client,
    api::{ListParams, PostParams},
};
use serde_json::Value;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::testbed::Testbed;

/// A running test cluster.
pub struct Cluster {
    pub tb: Testbed,
    /// Its default namespace is the test's.
    pub client: Client,
    side: Option<(CancellationToken, Vec<JoinHandle<anyhow::Result<()>>>)>,
}

/// The test bed whose simulated nodes and controllers run in-process.
pub async fn start() -> Cluster {
    let tb = Testbed::start().await;
    Cluster {
        client: tb.client.clone(),
        tb,
        side: None,
    }
}

/// A bare embedded server (no nodes, no controllers of its own); the simulated nodes and the
/// controllers run beside it as separate tasks, each with its own client, as
/// `kruise-tui sim-nodes` and `kruise-tui controllers` would against any API server. On an
/// existing cluster the test bed's own (this process's, beside that server) are those.
pub async fn start_beside() -> Cluster {
    let tb = Testbed::start_bare().await;
    let mut c = Cluster {
        client: tb.client.clone(),
        tb,
        side: None,
    };
    if c.tb.embedded().is_none() {
        return c;
    }
    let stop = CancellationToken::new();
    let sim_client = c.tb.new_client().await;
    let ctl_client = c.tb.new_client().await;
    let sim = tokio::spawn(sim::run(sim_client, SimOptions::default(), stop.clone()));
    let options = kruise_tui::controllers::Options {
        identity: "beside-test".to_owned(),
        ..kruise_tui::controllers::Options::default()
    };
    let controllers = tokio::spawn(kruise_tui::controllers::run(
        ctl_client,
        options,
        stop.clone(),
    ));
    c.side = Some((stop, vec![sim, controllers]));
    c
}

impl Cluster {
    /// The test's namespace.
    pub fn ns(&self) -> &str {
        self.tb.ns()
    }

    /// Waits for the simulated nodes to be registered.
    pub async fn nodes(&self) -> Vec<Node> {
        let api: Api<Node> = Api::all(self.client.clone());
        let simulated = ListParams::default().labels(&format!("{SIM_NODE_LABEL}=true"));
        wait_for("three simulated nodes", || async {
            let nodes = api.list(&simulated).await.ok()?.items;
            (nodes.len() == 3).then_some(nodes)
        })
        .await
    }

    pub fn pods(&self) -> Api<Pod> {
        Api::default_namespaced(self.client.clone())
    }

    /// Creates a pod from JSON (in the test's namespace) and waits until it is Ready.
    pub async fn ready_pod(&self, pod: Value) -> Pod {
        let pod: Pod = serde_json::from_value(pod).expect("a pod");
        let name = pod.metadata.name.clone().expect("a named pod");
        self.pods()
            .create(&PostParams::default(), &pod)
            .await
            .expect("pod created");
        self.wait_ready(&name).await
    }

    /// Waits until pod `name` is Ready.
    pub async fn wait_ready(&self, name: &str) -> Pod {
        let pods = self.pods();
        wait_for(&format!("pod {name} Ready"), || async {
            pods.get(name).await.ok().filter(is_ready)
        })
        .await
    }

    /// Stops the side tasks (their errors fail the test) and the cluster.
    pub async fn finish(self) {
        if let Some((stop, tasks)) = self.side {
            stop.cancel();
            for task in tasks {
                task.await.expect("task ran").expect("task stopped cleanly");
            }
        }
        self.tb.shutdown().await;
    }
}

pub fn is_ready(p: &Pod) -> bool {
    condition(p, "Ready").is_some_and(|c| c == "True")
}

/// A pod condition's status.
pub fn condition(p: &Pod, type_: &str) -> Option<String> {
    p.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| c.status.clone())
}

/// A container's (restartCount, containerID).
pub fn container(p: &Pod, name: &str) -> (i32, String) {
    p.status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
        .find(|c| c.name == name)
        .map(|c| (c.restart_count, c.container_id.clone().unwrap_or_default()))
        .unwrap_or((-1, String::new()))
}

/// Polls `check` every 100 ms until it gives a value; panics after 60 s naming `what`.
pub async fn wait_for<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    for _ in 0..600 {
        if let Some(v) = check().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("not reached in 60 s: {what}");
}
