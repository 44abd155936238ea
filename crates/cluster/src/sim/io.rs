//! The simulator's API calls: register nodes, heartbeats, node Leases, bind, write pod status,
//! delete, and the daemon's CRR and NodePodProbe status writes.
//! Each is one request (or a small fallback chain) against any API server through kube-rs.

use anyhow::{Context as _, Result};
use jiff::Timestamp;
use k8s_openapi::{
    api::{
        coordination::v1::Lease,
        core::v1::{Binding, Event, Namespace, Node, ObjectReference, Pod, PodStatus},
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use kube::{
    Api, Client,
    api::{DeleteParams, Patch, PatchParams, PostParams, Preconditions},
};

use super::{
    events::{PodEvent, event_object},
    nodes,
};
use crate::api::{
    ContainerRecreateRequest, NodePodProbe,
    containerrecreaterequest::ContainerRecreateRequestContainerRecreateState,
};
use kruise_client::errors::Plain as _;

/// The outcome of one pod request, for the driver's bookkeeping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Done,
    /// The pod changed under us (409) or is gone (404): the watch brings the news.
    Stale,
    /// The binding subresource is not served here; spec.nodeName was set instead.
    BoundWithoutBindingSubresource,
}

fn status_code(err: &kube::Error) -> Option<u16> {
    match err {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

fn stale_or(err: kube::Error, what: &str) -> Result<Outcome> {
    match status_code(&err) {
        Some(404 | 409) => Ok(Outcome::Stale),
        _ => Err(err).plain().context(what.to_owned()),
    }
}

/// Creates the simulated node `index`, or refreshes it if it exists; returns the stored Node.
pub async fn register_node(client: &Client, index: usize) -> Result<Node> {
    let api: Api<Node> = Api::all(client.clone());
    let node = nodes::node_object(index, Timestamp::now());
    let name = nodes::node_name(index);
    match api.create(&PostParams::default(), &node).await {
        Ok(_) => {}
        Err(err) if status_code(&err) == Some(409) => {
            // Already registered (a previous run): make sure our labels are on it.
            let patch = serde_json::json!({ "metadata": { "labels": node.metadata.labels } });
            api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .plain()
                .with_context(|| format!("cannot update node {name}"))?;
        }
        Err(err) => {
            return Err(err)
                .plain()
                .with_context(|| format!("cannot register node {name}"));
        }
    }
    heartbeat(client, index, None)
        .await?
        .with_context(|| format!("node {name} went right after it was registered"))
}

/// Posts a node heartbeat: the Ready condition with a fresh lastHeartbeatTime. `None`: the
/// node is gone (someone deleted it).
pub async fn heartbeat(
    client: &Client,
    index: usize,
    existing: Option<&Node>,
) -> Result<Option<Node>> {
    let api: Api<Node> = Api::all(client.clone());
    let name = nodes::node_name(index);
    let status = nodes::heartbeat(
        existing.and_then(|n| n.status.as_ref()),
        index,
        Timestamp::now(),
    );
    let patch = serde_json::json!({ "status": status });
    match api
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(node) => Ok(Some(node)),
        Err(err) if status_code(&err) == Some(404) => Ok(None),
        Err(err) => Err(err)
            .plain()
            .with_context(|| format!("cannot post the heartbeat of node {name}")),
    }
}

/// Renews `node`'s Lease in kube-node-lease from `last` (the Lease as last stored, if known), as
/// the kubelet does: an update carrying its resourceVersion; re-read on a conflict, created
/// when absent (with the namespace, should the server lack it). Returns the stored Lease.
pub async fn renew_lease(client: &Client, node: &Node, last: Option<Lease>) -> Result<Lease> {
    let api: Api<Lease> = Api::namespaced(client.clone(), nodes::NODE_LEASE_NAMESPACE);
    let name = node.metadata.name.clone().unwrap_or_default();
    let context = || format!("cannot renew the Lease of node {name}");
    let mut last = last;
    for _ in 0..3 {
        let current = match last.take() {
            Some(lease) => Some(lease),
            None => api.get_opt(&name).await.plain().with_context(context)?,
        };
        let lease = nodes::node_lease(current.as_ref(), node, Timestamp::now());
        let result = match current {
            Some(_) => api.replace(&name, &PostParams::default(), &lease).await,
            None => match api.create(&PostParams::default(), &lease).await {
                Err(err) if status_code(&err) == Some(404) => {
                    ensure_namespace(client, nodes::NODE_LEASE_NAMESPACE).await?;
                    api.create(&PostParams::default(), &lease).await
                }
                other => other,
            },
        };
        match result {
            Ok(stored) => return Ok(stored),
            // Changed or gone under us, or created meanwhile: read it again and retry.
            Err(err) if matches!(status_code(&err), Some(404 | 409)) => {}
            Err(err) => return Err(err).plain().with_context(context),
        }
    }
    anyhow::bail!("{}: it kept changing under us", context())
}

/// Creates namespace `name` unless it exists (a real cluster always has kube-node-lease).
async fn ensure_namespace(client: &Client, name: &str) -> Result<()> {
    let api: Api<Namespace> = Api::all(client.clone());
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..Default::default()
        },
        ..Default::default()
    };
    match api.create(&PostParams::default(), &ns).await {
        Ok(_) => Ok(()),
        Err(err) if status_code(&err) == Some(409) => Ok(()),
        Err(err) => Err(err)
            .plain()
            .with_context(|| format!("cannot create namespace {name}")),
    }
}

/// Binds `pod` to `node` through pods/binding, falling back to setting spec.nodeName when the
/// server has no binding subresource.
pub async fn bind(client: &Client, pod: &Pod, node: &str, use_binding: bool) -> Result<Outcome> {
    let (ns, name) = names(pod)?;
    let api: Api<Pod> = Api::namespaced(client.clone(), ns);
    if use_binding {
        let binding = Binding {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some(ns.to_owned()),
                uid: pod.metadata.uid.clone(),
                ..Default::default()
            },
            target: ObjectReference {
                api_version: Some("v1".into()),
                kind: Some("Node".into()),
                name: Some(node.to_owned()),
                ..Default::default()
            },
        };
        let result: Result<serde_json::Value, _> = api
            .create_subresource("binding", name, &PostParams::default(), &binding)
            .await;
        match result {
            Ok(_) => return Ok(Outcome::Done),
            // 404 on a pod we just saw, or 405: no binding subresource here. Try spec.nodeName.
            Err(err) if matches!(status_code(&err), Some(404 | 405)) => {}
            Err(err) => return stale_or(err, &format!("cannot bind pod {ns}/{name} to {node}")),
        }
    }
    let mut patch = serde_json::json!({ "spec": { "nodeName": node } });
    if let Some(rv) = &pod.metadata.resource_version {
        patch["metadata"] = serde_json::json!({ "resourceVersion": rv });
    }
    match api
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) if use_binding => Ok(Outcome::BoundWithoutBindingSubresource),
        Ok(_) => Ok(Outcome::Done),
        Err(err) => stale_or(err, &format!("cannot set nodeName of pod {ns}/{name}")),
    }
}

/// Writes `status` with the pod's resourceVersion as precondition (PUT pods/status).
pub async fn write_status(client: &Client, pod: &Pod, status: PodStatus) -> Result<Outcome> {
    let (ns, name) = names(pod)?;
    let api: Api<Pod> = Api::namespaced(client.clone(), ns);
    let updated = Pod {
        metadata: pod.metadata.clone(),
        spec: pod.spec.clone(),
        status: Some(status),
    };
    match api
        .replace_status(name, &PostParams::default(), &updated)
        .await
    {
        Ok(_) => Ok(Outcome::Done),
        Err(err) => stale_or(err, &format!("cannot write the status of pod {ns}/{name}")),
    }
}

/// Deletes `pod` with grace 0, as the kubelet does once its containers are gone. The UID
/// precondition keeps a same-named successor safe.
pub async fn delete_now(client: &Client, pod: &Pod) -> Result<Outcome> {
    let (ns, name) = names(pod)?;
    let api: Api<Pod> = Api::namespaced(client.clone(), ns);
    let params = DeleteParams {
        grace_period_seconds: Some(0),
        preconditions: Some(Preconditions {
            uid: pod.metadata.uid.clone(),
            resource_version: None,
        }),
        ..Default::default()
    };
    match api.delete(name, &params).await {
        Ok(_) => Ok(Outcome::Done),
        Err(err) => stale_or(err, &format!("cannot delete pod {ns}/{name}")),
    }
}

fn names(pod: &Pod) -> Result<(&str, &str)> {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
    let name = pod
        .metadata
        .name
        .as_deref()
        .context("a pod without a name")?;
    Ok((ns, name))
}

/// Reports `events` about `pod` (best effort: a failure is logged, never retried).
pub async fn post_events(client: &Client, pod: &Pod, events: &[PodEvent], host: Option<&str>) {
    let Ok((ns, _)) = names(pod) else {
        return;
    };
    let api: Api<Event> = Api::namespaced(client.clone(), ns);
    for event in events {
        let object = event_object(pod, event, host, Timestamp::now());
        if let Err(err) = api.create(&PostParams::default(), &object).await {
            tracing::debug!(
                "sim-nodes: cannot post event {}: {}",
                event.reason,
                kruise_client::errors::text(&err)
            );
        }
    }
}

/// Which of the kinds kruise-daemon works on the server serves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DaemonKinds {
    pub crrs: bool,
    pub node_probes: bool,
}

/// Asks discovery whether apps.kruise.io/v1alpha1 serves ContainerRecreateRequests and
/// NodePodProbes (a cluster without the Kruise CRDs serves neither: nothing to watch).
pub async fn kruise_daemon_kinds(client: &Client) -> DaemonKinds {
    match client
        .list_api_group_resources("apps.kruise.io/v1alpha1")
        .await
    {
        Ok(list) => DaemonKinds {
            crrs: list
                .resources
                .iter()
                .any(|r| r.name == "containerrecreaterequests"),
            node_probes: list.resources.iter().any(|r| r.name == "nodepodprobes"),
        },
        Err(err) => {
            tracing::debug!(
                "sim-nodes: apps.kruise.io/v1alpha1 discovery: {}",
                kruise_client::errors::text(&err)
            );
            DaemonKinds::default()
        }
    }
}

/// Writes a CRR's status with its resourceVersion as precondition (PUT .../status).
pub async fn write_crr_status(client: &Client, crr: &ContainerRecreateRequest) -> Result<Outcome> {
    let ns = crr.metadata.namespace.as_deref().unwrap_or("default");
    let name = crr
        .metadata
        .name
        .as_deref()
        .context("a ContainerRecreateRequest without a name")?;
    let api: Api<ContainerRecreateRequest> = Api::namespaced(client.clone(), ns);
    match api.replace_status(name, &PostParams::default(), crr).await {
        Ok(_) => Ok(Outcome::Done),
        Err(err) => stale_or(
            err,
            &format!("cannot write the status of ContainerRecreateRequest {ns}/{name}"),
        ),
    }
}

/// Merge-patches a CRR's `status.containerRecreateStates` (as kruise-daemon does: no
/// resourceVersion precondition, the states are the daemon's alone).
pub async fn patch_crr_states(
    client: &Client,
    namespace: &str,
    name: &str,
    states: &[ContainerRecreateRequestContainerRecreateState],
) -> Result<Outcome> {
    let api: Api<ContainerRecreateRequest> = Api::namespaced(client.clone(), namespace);
    let patch = serde_json::json!({"status": {"containerRecreateStates": states}});
    match api
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => Ok(Outcome::Done),
        Err(err) => stale_or(
            err,
            &format!("cannot patch the states of ContainerRecreateRequest {namespace}/{name}"),
        ),
    }
}

/// Writes a NodePodProbe's status with its resourceVersion as precondition.
pub async fn write_node_probe_status(client: &Client, npp: &NodePodProbe) -> Result<Outcome> {
    let name = npp
        .metadata
        .name
        .as_deref()
        .context("a NodePodProbe without a name")?;
    let api: Api<NodePodProbe> = Api::all(client.clone());
    match api.replace_status(name, &PostParams::default(), npp).await {
        Ok(_) => Ok(Outcome::Done),
        Err(err) => stale_or(
            err,
            &format!("cannot write the status of NodePodProbe {name}"),
        ),
    }
}
