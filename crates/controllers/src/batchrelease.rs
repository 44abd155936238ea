//! The BatchRelease controller of Kruise Rollout (partition style: CloneSet, Advanced and
//! native StatefulSet, Advanced DaemonSet): the IO shell around
//! `kruise::rollout::batchrelease::reconcile`. It reads the BatchRelease, its workload and the
//! workload's pods from the caches, and applies the outcome in order: the finalizer, the
//! workload's merge patch (at the version the server serves the kind), the pods' label
//! patches, then the status (a whole-status replace carrying apiVersion and kind, with the
//! resourceVersion as precondition). It runs only where the rollouts.kruise.io CRDs are served.

mod watch;

use std::{sync::Arc, time::Duration};

use k8s_openapi::{api::core::v1::Pod, apimachinery::pkg::apis::meta::v1::Time};
use kube::{
    Api,
    api::{ApiResource, DynamicObject, Patch, PatchParams},
    runtime::{controller::Action, reflector},
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::{
    Shared,
    api::keys,
    api::rollout::BatchRelease,
    kruise::rollout::batchrelease::{FinalizerChange, Outcome, reconcile, target_kind},
    kruise::rollout::workload::{TargetKind, WorkloadInfo},
    owned,
    runner::{self, ReconcileError},
    with_finalizer, write,
};

/// When to look at a BatchRelease again when nothing asked for sooner.
const RESYNC: Duration = Duration::from_secs(60);

struct Ctx {
    shared: Arc<Shared>,
}

/// Wires the cache's changes to the queue now, and returns the controller's loop (its own
/// BatchRelease watch plus the reconciles; runs until `shutdown`).
pub fn controller(
    shared: Arc<Shared>,
    shutdown: CancellationToken,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let (queue, inbox) = runner::queue::<BatchRelease>();
    let (store, writer) = reflector::store::<BatchRelease>();
    let cache = &shared.cache;
    cache.clonesets.on_change(watch::on_workload(
        &queue,
        &store,
        "apps.kruise.io",
        "CloneSet",
    ));
    cache.statefulsets.on_change(watch::on_workload(
        &queue,
        &store,
        "apps.kruise.io",
        "StatefulSet",
    ));
    cache
        .k8s_statefulsets
        .on_change(watch::on_workload(&queue, &store, "apps", "StatefulSet"));
    cache.daemonsets.on_change(watch::on_workload(
        &queue,
        &store,
        "apps.kruise.io",
        "DaemonSet",
    ));
    cache.pods.on_change(watch::on_pod(&shared, &queue));
    let client = shared.client.clone();
    let ctx = Arc::new(Ctx {
        shared: shared.clone(),
    });
    async move {
        let own = tokio::spawn(watch::run_own_watch(client, writer, queue));
        ctx.shared.cache.ready().await;
        runner::run(
            "batchrelease",
            store,
            inbox,
            ctx,
            2,
            reconcile_one,
            shutdown,
        )
        .await;
        own.abort();
    }
}

/// The workload a BatchRelease names, from the cache, and its pods.
fn workload(
    shared: &Shared,
    kind: TargetKind,
    ns: &str,
    name: &str,
) -> Option<(WorkloadInfo, Vec<Pod>)> {
    let cache = &shared.cache;
    let info = match kind {
        TargetKind::CloneSet => cache
            .clonesets
            .get(ns, name)
            .map(|o| WorkloadInfo::from_cloneset(&o)),
        TargetKind::AdvancedStatefulSet => cache
            .statefulsets
            .get(ns, name)
            .map(|o| WorkloadInfo::from_advanced_statefulset(&o)),
        TargetKind::StatefulSet => cache
            .k8s_statefulsets
            .get(ns, name)
            .map(|o| WorkloadInfo::from_statefulset(&o)),
        TargetKind::AdvancedDaemonSet => cache
            .daemonsets
            .get(ns, name)
            .map(|o| WorkloadInfo::from_daemonset(&o)),
    }?;
    let pods = owned::owned_copies(&cache.pods, ns, &info.uid);
    Some((info, pods))
}

async fn reconcile_one(br: Arc<BatchRelease>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    let shared = &ctx.shared;
    let Some(kind) = target_kind(&br) else {
        return Ok(Action::await_change());
    };
    let ns = br.metadata.namespace.clone().unwrap_or_default();
    let name = br
        .spec
        .workload_ref
        .as_ref()
        .map(|r| r.name.clone())
        .unwrap_or_default();
    let found = workload(shared, kind, &ns, &name);
    let (info, pods) = match &found {
        Some((w, p)) => (Some(w), p.as_slice()),
        None => (None, &[][..]),
    };
    let now = Time(jiff::Timestamp::now());
    let outcome = reconcile(&br, info, pods, now);
    apply(shared, &br, kind, &ns, &name, &outcome).await
}

async fn apply(
    shared: &Shared,
    br: &BatchRelease,
    kind: TargetKind,
    ns: &str,
    workload_name: &str,
    outcome: &Outcome,
) -> Result<Action, ReconcileError> {
    let key = crate::key_of(br);
    let api: Api<BatchRelease> = Api::namespaced(shared.client.clone(), ns);
    match outcome.finalizer {
        FinalizerChange::None => {}
        change => {
            let present = change == FinalizerChange::Add;
            let next = with_finalizer(br, keys::BATCH_RELEASE_FINALIZER, present);
            write::replace(&api, &next).await?;
            tracing::info!(batchrelease = %key, present, "finalizer written");
            // The status write below needs the new resourceVersion: decide again.
            return Ok(Action::requeue(Duration::from_millis(100)));
        }
    }
    if let Some(patch) = &outcome.workload_patch {
        patch_workload(shared, kind, ns, workload_name, patch).await?;
        tracing::info!(batchrelease = %key, workload = workload_name, patch = %patch, "workload patched");
    }
    if !outcome.pod_patches.is_empty() {
        let pods: Api<Pod> = Api::namespaced(shared.client.clone(), ns);
        for p in &outcome.pod_patches {
            pods.patch(&p.name, &PatchParams::default(), &Patch::Merge(&p.body))
                .await?;
        }
        tracing::info!(batchrelease = %key, pods = outcome.pod_patches.len(), "pods labelled");
    }
    if outcome.status_changed {
        let mut next = br.clone();
        next.status = Some(outcome.status.clone());
        write::replace_status(&api, &next).await?;
        tracing::debug!(batchrelease = %key, message = %outcome.message, phase = ?outcome.status.phase, "status written");
    }
    Ok(outcome
        .requeue_after_seconds
        .map_or(Action::requeue(RESYNC), |s| {
            Action::requeue(Duration::from_secs(s))
        }))
}

/// The resource a kind is patched at: CloneSet and Advanced DaemonSet at the version the
/// server serves them (`Versions`), the StatefulSets at their only one.
fn resource(shared: &Shared, kind: TargetKind) -> ApiResource {
    match kind {
        TargetKind::CloneSet => shared
            .versions
            .cloneset
            .clone()
            .unwrap_or_else(|| ApiResource::erase::<crate::api::CloneSet>(&())),
        TargetKind::AdvancedStatefulSet => ApiResource::erase::<crate::api::StatefulSet>(&()),
        TargetKind::StatefulSet => {
            ApiResource::erase::<k8s_openapi::api::apps::v1::StatefulSet>(&())
        }
        TargetKind::AdvancedDaemonSet => shared
            .versions
            .daemonset
            .clone()
            .unwrap_or_else(|| ApiResource::erase::<crate::api::DaemonSet>(&())),
    }
}

/// A CloneSet patch as v1beta1 spells it: `updateStrategy.{partition,paused}` live under
/// `updateStrategy.rollingUpdate` there.
pub fn cloneset_patch_at(version: &str, patch: &Value) -> Value {
    let mut out = patch.clone();
    if version != "v1beta1" {
        return out;
    }
    if let Some(strategy) = out
        .pointer_mut("/spec/updateStrategy")
        .and_then(Value::as_object_mut)
    {
        let mut rolling = serde_json::Map::new();
        for field in ["partition", "paused"] {
            if let Some(v) = strategy.remove(field) {
                rolling.insert(field.into(), v);
            }
        }
        if !rolling.is_empty() {
            strategy.insert("rollingUpdate".into(), Value::Object(rolling));
        }
    }
    out
}

async fn patch_workload(
    shared: &Shared,
    kind: TargetKind,
    ns: &str,
    name: &str,
    patch: &Value,
) -> Result<(), ReconcileError> {
    let ar = resource(shared, kind);
    let body = match kind {
        TargetKind::CloneSet => cloneset_patch_at(&ar.version, patch),
        _ => patch.clone(),
    };
    let api: Api<DynamicObject> = Api::namespaced_with(shared.client.clone(), ns, &ar);
    api.patch(name, &PatchParams::default(), &Patch::Merge(&body))
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_cloneset_patch_moves_under_rolling_update_at_v1beta1_only() {
        let p = json!({"spec": {"updateStrategy": {"partition": "100%", "paused": false}}});
        assert_eq!(cloneset_patch_at("v1alpha1", &p), p);
        assert_eq!(
            cloneset_patch_at("v1beta1", &p),
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": "100%", "paused": false}}}})
        );
    }
}
