//! The PodUnavailableBudget status controller: the IO shell around
//! `kruise::pub_budget::sync`.
//!
//! Per pass, as upstream's: find the PUB's pods and expected count (targetRef through the
//! workload, selector through the pods' controllers), annotate unannotated pods with
//! `kruise.io/related-pub`, and write the status. The pod webhook writes the same status when
//! it lets a pod go (one fewer `unavailableAllowed`, the pod in `disruptedPods`), so the status
//! write carries the resourceVersion it was computed from; after a conflict the PUB is read
//! again and its status recomputed over the same pods (upstream's RetryOnConflict with a
//! fresh read), never written over the webhook's. Runs only when a PUB feature gate is on.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::api::core::v1::Pod;
use kube::{
    Api,
    api::{Patch, PatchParams},
    runtime::controller::Action,
};
use serde_json::json;

use super::{
    Shared,
    cache::{Cache, Change},
    recorder::Recorder,
    runner::{self, Queue, ReconcileError},
    write,
};
use crate::{
    api::PodUnavailableBudget,
    api::kinds::{self, KindInfo},
    kruise::pub_budget::{
        RELATED_PUB_ANNOTATION, is_pod_ready, is_pod_state_consistent,
        resolve::REPLICAS_UNKNOWN,
        sync::{self, Workload},
    },
};

/// How often a PUB is looked at when nothing happens.
const RESYNC: Duration = Duration::from_secs(300);
/// Upstream's ConflictRetry: 4 tries, 500 ms apart.
const CONFLICT_RETRIES: usize = 4;
const CONFLICT_BACKOFF: Duration = Duration::from_millis(500);

pub struct Ctx {
    shared: Arc<Shared>,
    recorder: Recorder,
}

fn controller_of(
    meta: &kube::api::ObjectMeta,
) -> Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
}

/// The workload a pod belongs to as `(group, kind, name)`: its controller, or the Deployment
/// above its ReplicaSet.
fn workload_of(cache: &Cache, pod: &Pod) -> Option<(String, String, String)> {
    let owner = controller_of(&pod.metadata)?;
    let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
    if kinds::of_owner(owner) == Some(&kinds::REPLICASET)
        && let Some(rs) = cache.replicasets.get(ns, &owner.name)
        && let Some(dep) =
            controller_of(&rs.metadata).filter(|d| kinds::of_owner(d) == Some(&kinds::DEPLOYMENT))
    {
        return Some((
            kinds::group_of(&dep.api_version).to_owned(),
            dep.kind.clone(),
            dep.name.clone(),
        ));
    }
    Some((
        kinds::group_of(&owner.api_version).to_owned(),
        owner.kind.clone(),
        owner.name.clone(),
    ))
}

/// Queues the PUBs guarding a pod: the one it names, and those of its namespace whose selector
/// takes it or whose targetRef is its workload.
fn enqueue_pubs_of_pod(queue: &Queue<PodUnavailableBudget>, cache: &Cache, pod: &Pod) {
    let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
    let named = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(RELATED_PUB_ANNOTATION))
        .filter(|n| !n.is_empty());
    if let Some(name) = named {
        queue.enqueue(ns, name);
    }
    let empty = BTreeMap::new();
    let labels = pod.metadata.labels.as_ref().unwrap_or(&empty);
    let workload = workload_of(cache, pod);
    for p in cache.pubs.filter(ns, |_| true) {
        let guards = match &p.spec.target_ref {
            Some(t) => workload.as_ref().is_some_and(|(g, k, n)| {
                g == kinds::group_of(&t.api_version) && *k == t.kind && *n == t.name
            }),
            None => super::selects(p.spec.selector.as_ref(), labels),
        };
        if guards {
            queue.enqueue_obj(&p);
        }
    }
}

/// Queues the PUBs of a workload whose replica count changed: by targetRef, or by a selector
/// that takes its pod template.
fn enqueue_pubs_of_workload(
    queue: &Queue<PodUnavailableBudget>,
    cache: &Cache,
    kind: &KindInfo,
    meta: &kube::api::ObjectMeta,
    template_labels: Option<&BTreeMap<String, String>>,
) {
    let ns = meta.namespace.as_deref().unwrap_or_default();
    let name = meta.name.as_deref().unwrap_or_default();
    let empty = BTreeMap::new();
    let labels = template_labels.unwrap_or(&empty);
    for p in cache.pubs.filter(ns, |_| true) {
        let guards = match &p.spec.target_ref {
            Some(t) => {
                kinds::find_by_api_version(&t.api_version, &t.kind) == Some(kind) && t.name == name
            }
            None => super::selects(p.spec.selector.as_ref(), labels),
        };
        if guards {
            queue.enqueue_obj(&p);
        }
    }
}

/// Whether a pod change can change a PUB's numbers (upstream: isPodAvailableChanged, plus
/// label and annotation changes that move the pod between PUBs).
fn pod_change_matters(old: &Pod, new: &Pod) -> bool {
    if old.metadata.resource_version == new.metadata.resource_version {
        return false;
    }
    if old.metadata.deletion_timestamp.is_some() {
        return false;
    }
    let available = |p: &Pod| is_pod_ready(p) && is_pod_state_consistent(p);
    new.metadata.deletion_timestamp.is_some()
        || available(old) != available(new)
        || old.metadata.labels != new.metadata.labels
        || old
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(RELATED_PUB_ANNOTATION))
            != new
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(RELATED_PUB_ANNOTATION))
}

/// Registers a handler queueing PUBs when a workload of kind `K` is created, deleted or
/// changes its replica count.
fn watch_workload<K>(
    queue: &Queue<PodUnavailableBudget>,
    shared: &Arc<Shared>,
    informer: &super::cache::Informer<K>,
    kind: &'static KindInfo,
    replicas: fn(&K) -> Option<i32>,
    template_labels: fn(&K) -> Option<&BTreeMap<String, String>>,
) where
    K: kube::Resource<DynamicType = ()> + Clone + std::fmt::Debug + Send + Sync + 'static,
{
    let q = queue.clone();
    let shared = shared.clone();
    informer.on_change(move |change| {
        let obj = match change {
            Change::Applied {
                old: Some(old),
                new,
            } if replicas(old) == replicas(new) => return,
            Change::Applied { new, .. } => *new,
            Change::Deleted(obj) => *obj,
            Change::Resynced => return,
        };
        enqueue_pubs_of_workload(&q, &shared.cache, kind, obj.meta(), template_labels(obj));
    });
}

/// Wires the cache's changes to the queue now, and returns the controller's loop. Without a
/// PUB feature gate the controller does not run (as upstream's is not added).
pub fn controller(
    shared: Arc<Shared>,
    shutdown: tokio_util::sync::CancellationToken,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let enabled = shared.gates.enabled("PodUnavailableBudgetDeleteGate")
        || shared.gates.enabled("PodUnavailableBudgetUpdateGate");
    let (queue, inbox) = runner::queue::<PodUnavailableBudget>();
    let ctx = Arc::new(Ctx {
        recorder: shared
            .recorder
            .for_component("podunavailablebudget-controller"),
        shared: shared.clone(),
    });
    if enabled {
        register(&queue, &shared);
    }
    async move {
        if !enabled {
            return;
        }
        shared.cache.ready().await;
        runner::run(
            "podunavailablebudget",
            shared.cache.pubs.store(),
            inbox,
            ctx,
            3,
            reconcile_one,
            shutdown,
        )
        .await;
    }
}

fn register(queue: &Queue<PodUnavailableBudget>, shared: &Arc<Shared>) {
    let cache = &shared.cache;
    let resync = runner::watch_own(&cache.pubs, queue, |_| {});
    {
        let q = queue.clone();
        let shared = shared.clone();
        cache.pods.on_change(move |change| {
            let cache = &shared.cache;
            match change {
                Change::Applied { old: None, new } => enqueue_pubs_of_pod(&q, cache, new),
                Change::Applied {
                    old: Some(old),
                    new,
                } => {
                    if pod_change_matters(old, new) {
                        enqueue_pubs_of_pod(&q, cache, new);
                        if old.metadata.labels != new.metadata.labels {
                            enqueue_pubs_of_pod(&q, cache, old);
                        }
                    }
                }
                Change::Deleted(pod) => enqueue_pubs_of_pod(&q, cache, pod),
                Change::Resynced => resync(),
            }
        });
    }
    watch_workload(
        queue,
        shared,
        &cache.clonesets,
        &kinds::CLONESET,
        |w| w.spec.replicas,
        |w| {
            w.spec
                .template
                .metadata
                .as_ref()
                .and_then(|m| m.labels.as_ref())
        },
    );
    watch_workload(
        queue,
        shared,
        &cache.statefulsets,
        &kinds::ADVANCED_STATEFULSET,
        |w| w.spec.replicas,
        |w| {
            w.spec
                .template
                .metadata
                .as_ref()
                .and_then(|m| m.labels.as_ref())
        },
    );
    watch_workload(
        queue,
        shared,
        &cache.deployments,
        &kinds::DEPLOYMENT,
        |w| w.spec.as_ref().and_then(|s| s.replicas),
        |w| {
            w.spec
                .as_ref()
                .and_then(|s| s.template.metadata.as_ref())
                .and_then(|m| m.labels.as_ref())
        },
    );
    watch_workload(
        queue,
        shared,
        &cache.k8s_statefulsets,
        &kinds::STATEFULSET,
        |w| w.spec.as_ref().and_then(|s| s.replicas),
        |w| {
            w.spec
                .as_ref()
                .and_then(|s| s.template.metadata.as_ref())
                .and_then(|m| m.labels.as_ref())
        },
    );
}

fn workload<K: kube::Resource<DynamicType = ()>>(obj: &K, replicas: i32) -> Workload {
    let meta = obj.meta();
    Workload {
        api_version: K::api_version(&()).into_owned(),
        kind: K::kind(&()).into_owned(),
        name: meta.name.clone().unwrap_or_default(),
        uid: meta.uid.clone().unwrap_or_default(),
        replicas,
        deleting: meta.deletion_timestamp.is_some(),
        controller_uid: controller_of(meta).map(|o| o.uid.clone()),
    }
}

/// The workloads of namespace `ns` the controller finder knows (replicas default to 1, as
/// the API server defaults them).
fn workloads(cache: &Cache, ns: &str) -> Vec<Workload> {
    let mut out = Vec::new();
    for w in cache.clonesets.filter(ns, |_| true) {
        out.push(workload(&*w, w.spec.replicas.unwrap_or(1)));
    }
    for w in cache.statefulsets.filter(ns, |_| true) {
        out.push(workload(&*w, w.spec.replicas.unwrap_or(1)));
    }
    for w in cache.daemonsets.filter(ns, |_| true) {
        out.push(workload(&*w, REPLICAS_UNKNOWN));
    }
    for w in cache.deployments.filter(ns, |_| true) {
        let replicas = w.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        out.push(workload(&*w, replicas));
    }
    for w in cache.replicasets.filter(ns, |_| true) {
        let replicas = w.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        out.push(workload(&*w, replicas));
    }
    for w in cache.k8s_statefulsets.filter(ns, |_| true) {
        let replicas = w.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        out.push(workload(&*w, replicas));
    }
    out
}

async fn reconcile_one(
    pub_: Arc<PodUnavailableBudget>,
    ctx: Arc<Ctx>,
) -> Result<Action, ReconcileError> {
    if pub_.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let cache = &ctx.shared.cache;
    let ns = pub_.metadata.namespace.clone().unwrap_or_default();
    let name = pub_.metadata.name.clone().unwrap_or_default();
    let cached: Vec<Arc<Pod>> = cache.pods.filter(&ns, |_| true);
    let pods: Vec<&Pod> = cached.iter().map(|p| &**p).collect();
    let now = jiff::Timestamp::now();
    let outcome = match sync::sync(&pub_, &pods, &workloads(cache, &ns), now) {
        Ok(outcome) => outcome,
        Err(failure) => {
            ctx.recorder.record_all(&*pub_, failure.events);
            return Err(ReconcileError::new(failure.message));
        }
    };
    ctx.recorder.record_all(&*pub_, outcome.events.clone());
    for (pod_name, event) in &outcome.pod_events {
        if let Some(pod) = pods
            .iter()
            .find(|p| p.metadata.name.as_deref() == Some(pod_name))
        {
            ctx.recorder.record(*pod, event.clone());
        }
    }
    let pod_api: Api<Pod> = Api::namespaced(ctx.shared.client.clone(), &ns);
    for pod_name in &outcome.annotate {
        let patch = json!({"metadata": {"annotations": {RELATED_PUB_ANNOTATION: name}}});
        match pod_api
            .patch(pod_name, &PatchParams::default(), &Patch::Strategic(patch))
            .await
        {
            Ok(_) => {}
            Err(err) if write::code(&err) == Some(404) => {}
            Err(err) => return Err(err.into()),
        }
    }
    let recheck = write_status(&ctx, &pub_, &pods, &outcome, now).await?;
    Ok(Action::requeue(recheck.map_or(RESYNC, |s| {
        Duration::from_secs(u64::try_from(s).unwrap_or(0) + 1)
    })))
}

/// Writes the status computed from `pub_` (the cached PUB); after a conflict re-reads the PUB
/// and recomputes over the same pods. Returns when to look again for expiring records.
async fn write_status(
    ctx: &Ctx,
    pub_: &PodUnavailableBudget,
    pods: &[&Pod],
    outcome: &sync::Outcome,
    now: jiff::Timestamp,
) -> Result<Option<i64>, ReconcileError> {
    let ns = pub_.metadata.namespace.clone().unwrap_or_default();
    let name = pub_.metadata.name.clone().unwrap_or_default();
    let api: Api<PodUnavailableBudget> = Api::namespaced(ctx.shared.client.clone(), &ns);
    let mut current = pub_.clone();
    let mut pass = outcome.status.clone();
    for attempt in 0..CONFLICT_RETRIES {
        if !pass.changed {
            return Ok(pass.recheck_after_seconds);
        }
        current.status = pass.status.clone();
        match write::replace_status(&api, &current).await {
            Ok(_) => {
                let s = &pass.status;
                tracing::debug!(pub_budget = %format!("{ns}/{name}"), unavailable_allowed = s.unavailable_allowed,
                    current_available = s.current_available, desired_available = s.desired_available,
                    total_replicas = s.total_replicas, disrupted = s.disrupted_pods.len(),
                    unavailable = s.unavailable_pods.len(), "status updated");
                return Ok(pass.recheck_after_seconds);
            }
            Err(err) if write::code(&err) == Some(409) => {
                tracing::debug!(pub_budget = %format!("{ns}/{name}"), attempt, "status conflict; reading the PUB again");
                tokio::time::sleep(CONFLICT_BACKOFF).await;
                current = api.get(&name).await?;
                pass = sync::status_pass(&current, pods, &outcome.resolved, now)
                    .map_err(ReconcileError::new)?;
            }
            Err(err) => return Err(err.into()),
        }
    }
    Err(ReconcileError::transient(format!(
        "the status of PodUnavailableBudget {ns}/{name} kept changing under the write"
    )))
}
