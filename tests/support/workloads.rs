//! A [`Testbed`] (the embedded cluster with simulated nodes and the Kruise controllers, or an
//! existing cluster with them running beside it) for the workload controller tests, in the
//! test's own namespace: start it, poll until a condition holds, read pods and events. Needs
//! `support/testbed.rs` included as `testbed` next to it.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Event, Pod};
use kube::{Api, Client, api::ListParams};

use crate::testbed::Testbed;

/// A running test bed and a client for it (its default namespace the test's).
pub struct Cluster {
    pub tb: Testbed,
    pub client: Client,
}

impl Cluster {
    /// Starts the test bed: the server, three simulated nodes and the controllers.
    pub async fn start() -> Cluster {
        let tb = Testbed::start().await;
        Cluster {
            client: tb.client.clone(),
            tb,
        }
    }

    /// The test's namespace.
    pub fn ns(&self) -> &str {
        self.tb.ns()
    }

    pub fn pods(&self) -> Api<Pod> {
        Api::default_namespaced(self.client.clone())
    }

    /// The pods labelled `app=<app>`, sorted by name.
    pub async fn pods_of(&self, app: &str) -> Vec<Pod> {
        let mut pods = self
            .pods()
            .list(&ListParams::default().labels(&format!("app={app}")))
            .await
            .expect("pods list")
            .items;
        pods.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        pods
    }

    /// The (reason, message) of every event about the object `name`.
    pub async fn events_of(&self, name: &str) -> Vec<(String, String)> {
        let api: Api<Event> = Api::default_namespaced(self.client.clone());
        api.list(&ListParams::default())
            .await
            .expect("events list")
            .items
            .into_iter()
            .filter(|e| e.involved_object.name.as_deref() == Some(name))
            .map(|e| (e.reason.unwrap_or_default(), e.message.unwrap_or_default()))
            .collect()
    }

    pub async fn shutdown(self) {
        self.tb.shutdown().await;
    }
}

/// Polls `check` every 100 ms until it returns Some, failing with `what` after `secs` seconds.
pub async fn wait_for<T, F, Fut>(secs: u64, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Ready=True and not terminating.
pub fn is_ready(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_none()
        && pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

pub fn label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .map(String::as_str)
}

pub fn name(pod: &Pod) -> &str {
    pod.metadata.name.as_deref().unwrap_or_default()
}

pub fn uid(pod: &Pod) -> &str {
    pod.metadata.uid.as_deref().unwrap_or_default()
}

/// The first container's spec image.
pub fn image(pod: &Pod) -> &str {
    pod.spec
        .as_ref()
        .and_then(|s| s.containers.first())
        .and_then(|c| c.image.as_deref())
        .unwrap_or_default()
}

/// The first container's restart count.
pub fn restarts(pod: &Pod) -> i32 {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|c| c.first())
        .map_or(0, |c| c.restart_count)
}

/// The node the pod is bound to.
pub fn node(pod: &Pod) -> &str {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or_default()
}

/// Samples the pods labelled `app=<app>` every 100 ms until stopped, returning the most pods of
/// `replicas` seen unavailable at once (missing, terminating or not Ready).
pub struct UnavailableSampler {
    stop: tokio_util::sync::CancellationToken,
    task: tokio::task::JoinHandle<i32>,
}

impl UnavailableSampler {
    pub fn start(api: Api<Pod>, app: &str, replicas: i32) -> Self {
        let stop = tokio_util::sync::CancellationToken::new();
        let selector = format!("app={app}");
        let token = stop.clone();
        let task = tokio::spawn(async move {
            let mut worst = 0;
            while !token.is_cancelled() {
                if let Ok(list) = api.list(&ListParams::default().labels(&selector)).await {
                    let ready = list.items.iter().filter(|p| is_ready(p)).count();
                    let ready = i32::try_from(ready).unwrap_or(i32::MAX);
                    worst = worst.max(replicas - ready);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            worst
        });
        Self { stop, task }
    }

    /// Stops sampling; the worst unavailability seen.
    pub async fn finish(self) -> i32 {
        self.stop.cancel();
        self.task.await.expect("the sampler ran")
    }
}
