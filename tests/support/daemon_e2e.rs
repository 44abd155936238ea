//! Shared by the ContainerRecreateRequest and PodProbeMarker end-to-end tests: an empty demo
//! cluster (namespace `demo`) with or without the built-in simulated nodes and controllers, or
//! with both started beside it as separate clients (the path `kruise-tui sim-nodes` and
//! `kruise-tui controllers` take against a real cluster), plus polling and pod helpers.
#![allow(dead_code)]

use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_tui::cluster::{
    demo::{DemoCluster, DemoOptions},
    sim::{self, SimOptions},
};
use kube::{
    Api, Client,
    api::{ListParams, PostParams},
};
use serde_json::Value;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub const NS: &str = "demo";

/// A running test cluster.
pub struct Cluster {
    pub demo: DemoCluster,
    pub client: Client,
    _dir: tempfile::TempDir,
    side: Option<(CancellationToken, Vec<JoinHandle<anyhow::Result<()>>>)>,
}

/// An empty demo cluster whose own simulated nodes and controllers run in-process.
pub async fn start() -> Cluster {
    start_with(true).await
}

/// An empty demo cluster with no nodes and no controllers of its own; the simulated nodes and
/// the controllers run beside it as separate tasks, each with its own client, as
/// `kruise-tui sim-nodes` and `kruise-tui controllers` would against any API server.
pub async fn start_beside() -> Cluster {
    let mut c = start_with(false).await;
    let stop = CancellationToken::new();
    let sim_client = c.demo.client().await.expect("sim client");
    let ctl_client = c.demo.client().await.expect("controllers client");
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

async fn start_with(in_process: bool) -> Cluster {
    let dir = tempfile::tempdir().expect("tempdir");
    let demo = DemoCluster::start(DemoOptions {
        listen: "127.0.0.1:0".parse().expect("address"),
        kubeconfig_out: dir.path().join("kubeconfig"),
        pods: None,
        seed: false,
        nodes: in_process,
        controllers: in_process,
        kruise_webhooks: true,
        remove_kubeconfig: true,
    })
    .await
    .expect("demo cluster starts");
    let client = demo.client().await.expect("client");
    Cluster {
        demo,
        client,
        _dir: dir,
        side: None,
    }
}

impl Cluster {
    /// Waits for the simulated nodes to be registered.
    pub async fn nodes(&self) -> Vec<Node> {
        let api: Api<Node> = Api::all(self.client.clone());
        wait_for("three simulated nodes", || async {
            let nodes = api.list(&ListParams::default()).await.ok()?.items;
            (nodes.len() == 3).then_some(nodes)
        })
        .await
    }

    pub fn pods(&self) -> Api<Pod> {
        Api::namespaced(self.client.clone(), NS)
    }

    /// Creates a pod from JSON (namespace demo) and waits until it is Ready.
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
        self.demo.shutdown().await;
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
