//! The NodePodProbe controller: the IO shell around
//! `kruise::probe_marker::reconcile::{wants_node_pod_probe, plan_node_probe}`.
//!
//! Every Ready, non-virtual node gets a NodePodProbe of its name (the daemon on the node runs
//! the probes listed there and writes their results into its status); a node that goes takes
//! its NodePodProbe along. When results change, each probed pod gets the marker's condition
//! (`podConditionType`: True for Succeeded) and the labels and annotations of the matching
//! `markerPolicy` (those of the other state removed); entries of pods that are gone are pruned.
//! Upstream's controller records no events; it logs.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::{Api, api::ObjectMeta, runtime::controller::Action, runtime::reflector::Store};

use super::{
    Ctx, Shared,
    cache::Change,
    expectations::Expect,
    key_of, podwrite,
    runner::{self, Queue, ReconcileError},
    write,
};
use crate::{
    api::{NodePodProbe, PodProbeMarker},
    kruise::{
        cloneset::reconcile::pods::is_active,
        probe_marker::reconcile::{plan_node_probe, wants_node_pod_probe},
    },
};

/// How often a NodePodProbe is looked at when nothing happens.
const RESYNC: Duration = Duration::from_secs(300);
/// How long to wait for our pod writes to show in the cache.
const EXPECTATION_RECHECK: Duration = Duration::from_secs(1);

fn node_of(pod: &Pod) -> Option<&str> {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .filter(|n| !n.is_empty())
}

/// Queues the NodePodProbe of `pod`'s node when it lists the pod.
fn enqueue_for_pod(queue: &Queue<NodePodProbe>, probes: &Store<NodePodProbe>, pod: &Pod) {
    let Some(node) = node_of(pod) else {
        return;
    };
    let Some(npp) = probes.get(&kube::runtime::reflector::ObjectRef::new(node)) else {
        return;
    };
    let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    if npp
        .spec
        .pod_probes
        .iter()
        .any(|p| p.namespace == ns && p.name == name)
    {
        queue.enqueue("", node);
    }
}

/// Wires the cache's changes to the queues now, and returns the controllers' loops (one makes
/// the NodePodProbe of each node, one reconciles each NodePodProbe).
pub fn controller(
    shared: Arc<Shared>,
    shutdown: tokio_util::sync::CancellationToken,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let (queue, inbox) = runner::queue::<NodePodProbe>();
    let (nodes_queue, nodes_inbox) = runner::queue::<Node>();
    let cache = &shared.cache;
    let ctx = Ctx::new(shared.clone());
    // Upstream looks at a NodePodProbe when it appears and when its status changes; no other
    // kind's relist queues them all.
    let _ = runner::watch_own_if(
        &cache.node_probes,
        &queue,
        |old, new| old.is_none_or(|o| o.status != new.status),
        |_| {},
    );
    {
        let q = queue.clone();
        let probes = cache.node_probes.store();
        cache.pods.on_change(move |change| match change {
            Change::Applied {
                old: Some(old),
                new,
            } if is_active(old) && !is_active(new) => {
                enqueue_for_pod(&q, &probes, new);
            }
            Change::Applied { .. } | Change::Resynced => {}
            Change::Deleted(pod) => enqueue_for_pod(&q, &probes, pod),
        });
    }
    {
        let q = queue.clone();
        let nq = nodes_queue.clone();
        let nodes = cache.nodes.store();
        let probes = cache.node_probes.store();
        cache.nodes.on_change(move |change| match change {
            Change::Applied { new, .. } => {
                let name = new.metadata.name.as_deref().unwrap_or_default();
                let has = probes
                    .get(&kube::runtime::reflector::ObjectRef::new(name))
                    .is_some();
                if new.metadata.deletion_timestamp.is_some() && has {
                    q.enqueue("", name);
                } else if !has && wants_node_pod_probe(new) {
                    nq.enqueue_obj(*new);
                }
            }
            Change::Deleted(node) => {
                q.enqueue("", node.metadata.name.as_deref().unwrap_or_default())
            }
            Change::Resynced => {
                for node in nodes.state() {
                    nq.enqueue_obj(&node);
                }
            }
        });
    }
    async move {
        shared.cache.ready().await;
        let nodes = runner::run(
            "nodepodprobe-node",
            shared.cache.nodes.store(),
            nodes_inbox,
            ctx.clone(),
            1,
            ensure_one,
            shutdown.clone(),
        );
        let probes = runner::run(
            "nodepodprobe",
            shared.cache.node_probes.store(),
            inbox,
            ctx,
            3,
            reconcile_one,
            shutdown,
        );
        futures::join!(nodes, probes);
    }
}

/// Creates the node's NodePodProbe when it should have one and has none.
///
/// Port of pkg/controller/nodepodprobe/node_pod_probe_controller.go::syncNodePodProbe, the
/// not-found branch (v1.8.4).
async fn ensure_one(node: Arc<Node>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    let name = node.metadata.name.clone().unwrap_or_default();
    if !wants_node_pod_probe(&node) || ctx.shared.cache.node_probes.get("", &name).is_some() {
        return Ok(Action::await_change());
    }
    let api: Api<NodePodProbe> = Api::all(ctx.shared.client.clone());
    let npp = NodePodProbe {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            ..ObjectMeta::default()
        },
        ..NodePodProbe::default()
    };
    match write::create(&api, &npp).await {
        Ok(_) => tracing::info!(node = %name, "created the node's NodePodProbe"),
        Err(err) if write::code(&err) == Some(409) => {}
        Err(err) => return Err(err.into()),
    }
    Ok(Action::await_change())
}

async fn reconcile_one(npp: Arc<NodePodProbe>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    let shared = &ctx.shared;
    let cache = &shared.cache;
    let name = npp.metadata.name.clone().unwrap_or_default();
    let lookup = |pod_key: &str| {
        let (ns, pod) = pod_key.split_once('/')?;
        super::seen(cache.pods.get(ns, pod).as_deref())
    };
    if !ctx.expectations.satisfied(&name, lookup) {
        return Ok(Action::requeue(EXPECTATION_RECHECK));
    }
    let node = cache.nodes.get("", &name);
    // The pods its spec and status name.
    let mut wanted: BTreeMap<(String, String), ()> = BTreeMap::new();
    for p in &npp.spec.pod_probes {
        wanted.insert((p.namespace.clone(), p.name.clone()), ());
    }
    for s in npp.status.iter().flat_map(|s| s.pod_probe_statuses.iter()) {
        wanted.insert((s.namespace.clone(), s.name.clone()), ());
    }
    let pods: Vec<Pod> = wanted
        .keys()
        .filter_map(|(ns, pod)| cache.pods.get(ns, pod).map(|p| (*p).clone()))
        .collect();
    let markers: Vec<PodProbeMarker> = cache
        .probe_markers
        .all()
        .iter()
        .filter(|m| {
            wanted
                .keys()
                .any(|(ns, _)| m.metadata.namespace.as_deref() == Some(ns))
        })
        .map(|m| (**m).clone())
        .collect();
    let plan = plan_node_probe(&npp, node.as_deref(), &pods, &markers);
    let api: Api<NodePodProbe> = Api::all(shared.client.clone());
    if plan.delete {
        write::delete(&api, &name, npp.metadata.uid.as_deref().unwrap_or_default()).await?;
        tracing::info!(nodepodprobe = %name, "deleted the NodePodProbe of a node that is gone");
        ctx.expectations.forget(&name);
        return Ok(Action::await_change());
    }
    if let Some(spec) = &plan.spec {
        let mut next = (*npp).clone();
        next.spec = spec.clone();
        write::replace(&api, &next).await?;
        tracing::debug!(nodepodprobe = %name, "pruned the probes of pods that are gone");
    }
    for (i, desired) in &plan.pods {
        let pod = &pods[*i];
        let pod_key = key_of(pod);
        let expects = write_pod_change(shared, pod, desired)
            .await
            .inspect_err(|err| {
                tracing::warn!(nodepodprobe = %name, pod = %pod_key,
                "writing probe results to the pod failed: {}", write::describe(err));
            })?;
        for expect in expects {
            if let Expect::Updated {
                resource_version, ..
            } = expect
            {
                ctx.expectations.expect(
                    &name,
                    [Expect::Updated {
                        name: pod_key.clone(),
                        resource_version,
                    }],
                );
            }
        }
        tracing::debug!(nodepodprobe = %name, pod = %pod_key, "wrote probe results to the pod");
    }
    Ok(Action::requeue(RESYNC))
}

/// Writes the change from `base` to `desired` (conditions through pods/status, labels and
/// annotations through the pod), re-applied to the fresh pod on a conflict (`podwrite`).
pub(super) async fn write_pod_change(
    shared: &Shared,
    base: &Pod,
    desired: &Pod,
) -> Result<Vec<Expect>, kube::Error> {
    let conditions = |p: &Pod| p.status.as_ref().and_then(|s| s.conditions.clone());
    let status = (conditions(desired) != conditions(base)).then(|| {
        let mut p = base.clone();
        p.status.get_or_insert_with(Default::default).conditions = conditions(desired);
        p
    });
    let metadata = (desired.metadata.labels != base.metadata.labels
        || desired.metadata.annotations != base.metadata.annotations)
        .then(|| {
            let mut p = base.clone();
            p.metadata.labels = desired.metadata.labels.clone();
            p.metadata.annotations = desired.metadata.annotations.clone();
            p
        });
    let ns = base.metadata.namespace.as_deref().unwrap_or_default();
    let name = base.metadata.name.as_deref().unwrap_or_default();
    let api: Api<Pod> = Api::namespaced(shared.client.clone(), ns);
    podwrite::update(&api, name, Some(base), status.as_ref(), metadata.as_ref()).await
}
