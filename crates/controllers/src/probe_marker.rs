//! The PodProbeMarker controller: the IO shell around `kruise::probe_marker::reconcile::plan_marker`.
//!
//! For each marker it lists the probes of every matched pod (active, Initialized, on a node) in
//! that node's NodePodProbe (`<marker>#<probe>`), keeps its `kruise.io/node-pod-probe-cleanup`
//! finalizer so a deleted marker's probes are removed first, and writes `status.matchedPods`.
//! Pods on virtual-kubelet nodes are marked from their conditions behind
//! `EnablePodProbeMarkerOnServerless`. Upstream's controller records no events; it logs.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::api::core::v1::Pod;
use kube::{Api, runtime::controller::Action};

use super::{
    Ctx, Shared,
    cache::Change,
    expectations::Expect,
    key, key_of,
    runner::{self, Queue, ReconcileError},
    with_finalizer, write,
};
use crate::{
    api::{NodePodProbe, PodProbeMarker},
    kruise::{
        cloneset::reconcile::pods::is_active,
        probe_marker::{
            CLEANUP_FINALIZER,
            reconcile::{is_virtual_node, plan_marker},
        },
    },
};

/// How often a marker is looked at when nothing happens.
const RESYNC: Duration = Duration::from_secs(300);
/// How long to wait for our NodePodProbe writes to show in the cache.
const EXPECTATION_RECHECK: Duration = Duration::from_secs(1);

fn matches(ppm: &PodProbeMarker, pod: &Pod) -> bool {
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    super::selects(ppm.spec.selector.as_ref(), &labels)
}

fn initialized(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.type_ == "Initialized" && c.status == "True")
        })
}

/// Queues the markers of `pod`'s namespace that select it.
fn enqueue_for_pod(
    queue: &Queue<PodProbeMarker>,
    markers: &kube::runtime::reflector::Store<PodProbeMarker>,
    pod: &Pod,
) {
    let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
    for ppm in markers.state_filter(|m| {
        m.metadata.namespace.as_deref().unwrap_or_default() == ns && matches(m, pod)
    }) {
        queue.enqueue_obj(&ppm);
    }
}

/// Whether a pod change matters to its markers: upstream's (it became Initialized, or its IP
/// changed), and also when it stops being active or goes (so `matchedPods` follows).
fn pod_changed(old: &Pod, new: &Pod) -> bool {
    let ip = |p: &Pod| p.status.as_ref().and_then(|s| s.pod_ip.clone());
    (!initialized(old) && initialized(new))
        || ip(old) != ip(new)
        || is_active(old) != is_active(new)
}

/// Wires the cache's changes to the queue now, and returns the controller's loop.
pub fn controller(
    shared: Arc<Shared>,
    shutdown: tokio_util::sync::CancellationToken,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let (queue, inbox) = runner::queue::<PodProbeMarker>();
    let cache = &shared.cache;
    let ctx = Ctx::new(shared.clone());
    let all = {
        let ctx = ctx.clone();
        runner::watch_own(&cache.probe_markers, &queue, move |ppm| {
            ctx.expectations.forget(&key_of(ppm));
        })
    };
    {
        let q = queue.clone();
        let all = all.clone();
        let markers = cache.probe_markers.store();
        cache.pods.on_change(move |change| match change {
            Change::Applied {
                old: Some(old),
                new,
            } if pod_changed(old, new) => {
                enqueue_for_pod(&q, &markers, new);
            }
            Change::Applied { .. } => {}
            Change::Deleted(pod) => enqueue_for_pod(&q, &markers, pod),
            Change::Resynced => all(),
        });
    }
    {
        // A node's NodePodProbe may appear after its pods were matched: look again.
        let all = all.clone();
        cache.node_probes.on_change(move |change| {
            if matches!(change, Change::Applied { old: None, .. }) {
                all();
            }
        });
    }
    async move {
        shared.cache.ready().await;
        runner::run(
            "podprobemarker",
            shared.cache.probe_markers.store(),
            inbox,
            ctx,
            3,
            reconcile_one,
            shutdown,
        )
        .await;
    }
}

async fn reconcile_one(ppm: Arc<PodProbeMarker>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    let shared = &ctx.shared;
    let cache = &shared.cache;
    let ns = ppm.metadata.namespace.clone().unwrap_or_default();
    let name = ppm.metadata.name.clone().unwrap_or_default();
    let owner = key(&ns, &name);
    let lookup = |node: &str| super::seen(cache.node_probes.get("", node).as_deref());
    if !ctx.expectations.satisfied(&owner, lookup) {
        return Ok(Action::requeue(EXPECTATION_RECHECK));
    }
    let pods: Vec<Pod> = cache
        .pods
        .filter(&ns, |p| matches(&ppm, p))
        .iter()
        .map(|p| (**p).clone())
        .collect();
    let probes: BTreeMap<String, Arc<NodePodProbe>> = cache
        .node_probes
        .all()
        .into_iter()
        .filter_map(|n| Some((n.metadata.name.clone()?, n)))
        .collect();
    let mut specs: BTreeMap<String, _> = probes
        .iter()
        .map(|(node, npp)| (node.clone(), npp.spec.clone()))
        .collect();
    let virtual_node = |node: &str| {
        cache
            .nodes
            .get("", node)
            .is_some_and(|n| is_virtual_node(&n))
    };
    let plan = plan_marker(
        shared.version,
        &ppm,
        &pods,
        &virtual_node,
        &mut specs,
        shared.gates.enabled("EnablePodProbeMarkerOnServerless"),
    );
    for e in &plan.sync.errors {
        tracing::debug!(podprobemarker = %owner, "{e}");
    }
    let api: Api<PodProbeMarker> = Api::namespaced(shared.client.clone(), &ns);
    let mut current = (*ppm).clone();
    if plan.add_finalizer {
        let next = with_finalizer(&current, CLEANUP_FINALIZER, true);
        let written = write::replace(&api, &next).await?;
        current = next;
        current.metadata.resource_version = Some(written.resource_version);
        tracing::debug!(podprobemarker = %owner, "added the PodProbeMarker finalizer");
    }
    let npp_api: Api<NodePodProbe> = Api::all(shared.client.clone());
    for node in &plan.sync.changed_nodes {
        let (Some(npp), Some(spec)) = (probes.get(node), specs.get(node)) else {
            continue;
        };
        let mut next = (**npp).clone();
        next.spec = spec.clone();
        let written = write::replace(&npp_api, &next).await.inspect_err(|err| {
            tracing::warn!(podprobemarker = %owner, nodepodprobe = %node, "updating NodePodProbe failed: {}", write::describe(err));
        })?;
        ctx.expectations.expect(
            &owner,
            [Expect::Updated {
                name: node.clone(),
                resource_version: written.resource_version,
            }],
        );
        tracing::debug!(podprobemarker = %owner, nodepodprobe = %node, "updated NodePodProbe");
    }
    for (i, desired) in &plan.sync.pod_updates {
        super::node_probe::write_pod_change(shared, &pods[*i], desired).await?;
    }
    if let Some(status) = &plan.status {
        let mut next = current.clone();
        next.status = Some(status.clone());
        let written = write::replace_status(&api, &next).await?;
        current.metadata.resource_version = Some(written.resource_version);
    }
    if plan.sync.remove_finalizer {
        write::replace(&api, &with_finalizer(&current, CLEANUP_FINALIZER, false)).await?;
        tracing::debug!(podprobemarker = %owner, "removed the PodProbeMarker finalizer");
    }
    Ok(Action::requeue(RESYNC))
}
