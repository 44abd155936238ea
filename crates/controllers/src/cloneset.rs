//! The CloneSet controller: the IO shell around `kruise::cloneset::reconcile`.
//!
//! It reads the CloneSet, its pods, claims and revisions from the shared cache, waits for its
//! expectations, settles the update revision (creating or re-numbering it), runs the pure
//! reconcile and applies what it returns: claims, pods (creations in slow-start batches of 1, 2,
//! 4, ... stopping at the first failure, as upstream), status, `podsToDelete`, pruned revisions,
//! with upstream's events.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::api::{
    apps::v1::ControllerRevision,
    core::v1::{PersistentVolumeClaim, Pod},
};
use kube::{
    Api,
    api::{DynamicObject, Patch, PatchParams},
    core::{ApiResource, Selector},
    runtime::controller::Action,
};

use super::{
    Shared,
    cache::Change,
    expectations::Expect,
    owned::{self, Ctx, Identity, Revisions, controlled_by, enqueue_owner},
    podwrite,
    runner::ReconcileError,
    write,
};
use crate::{
    api::CloneSet,
    kruise::cloneset::reconcile::{self, Input, PodOp, PodWrite, pods, revisions},
};

/// Wires the cache's changes to the queue now, and returns the controller's loop (runs until
/// `shutdown`, once the cache has its first lists).
pub fn controller(
    shared: Arc<Shared>,
    shutdown: tokio_util::sync::CancellationToken,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    owned::workload_controller(
        "cloneset",
        "cloneset-controller",
        shared,
        shutdown,
        |cache| &cache.clonesets,
        |cache, queue| {
            let q = queue.clone();
            cache.pvcs.on_change(move |change| match change {
                Change::Applied { new, .. } => enqueue_owner(&q, &new.metadata),
                Change::Deleted(pvc) => enqueue_owner(&q, &pvc.metadata),
                Change::Resynced => {}
            });
        },
        reconcile_one,
    )
}

async fn reconcile_one(cs: Arc<CloneSet>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    let shared = &ctx.shared;
    let cache = &shared.cache;
    let Some(Identity {
        ns,
        name,
        uid,
        key: owner_key,
    }) = ctx.settled(&*cs)
    else {
        return Ok(Action::requeue(owned::EXPECTATION_RECHECK));
    };
    let owned: Vec<Arc<Pod>> = cache.pods.filter(&ns, |p| controlled_by(&p.metadata, &uid));
    let all_pod_names: Vec<String> = owned
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    let mut active: Vec<Pod> = owned
        .iter()
        .filter(|p| pods::is_active(p))
        .map(|p| (**p).clone())
        .collect();
    // Ties in upstream's orders fall to list order: name order keeps this controller and the
    // plan API (which sorts the same way) in agreement.
    active.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let pvcs: Vec<PersistentVolumeClaim> = cache
        .pvcs
        .filter(&ns, |c| controlled_by(&c.metadata, &uid))
        .iter()
        .map(|c| (**c).clone())
        .collect();
    let mut revs: Vec<ControllerRevision> = owned::owned_copies(&cache.revisions, &ns, &uid);

    let active_revs = revisions::active_revisions(&cs, &revs);
    let rev_api: Api<ControllerRevision> = Api::namespaced(shared.client.clone(), &ns);
    let Some(Revisions { current, update }) =
        owned::settle_revisions(&rev_api, &active_revs, &mut revs).await?
    else {
        // A hash collision: count it and let the next reconcile hash again.
        bump_collision_count(shared, &cs).await?;
        return Ok(Action::requeue(Duration::from_millis(100)));
    };
    let label_selector = Selector::try_from(cs.spec.selector.clone())
        .map(|s| s.to_string())
        .unwrap_or_default();
    let nodes: Vec<(String, BTreeMap<String, String>)> = cache
        .nodes
        .all()
        .iter()
        .map(|n| {
            (
                n.metadata.name.clone().unwrap_or_default(),
                n.metadata.labels.clone().unwrap_or_default(),
            )
        })
        .collect();
    let input = Input {
        cs: &cs,
        pods: &active,
        all_pod_names: &all_pod_names,
        pvcs: &pvcs,
        revisions: &revs,
        current: &current,
        update: &update,
        collision_count: active_revs.collision_count,
        label_selector,
        nodes: &nodes,
        gates: &shared.gates,
        version: shared.version,
        now: jiff::Timestamp::now().as_second(),
    };
    let mut rng = super::rng();
    let outcome = reconcile::reconcile(&input, &mut rng);
    for e in &outcome.errors {
        tracing::warn!(cloneset = %owner_key, "{e}");
    }
    ctx.recorder.record_all(&*cs, outcome.events.clone());

    // Claims first, so the pods that mount them can start.
    let pvc_api: Api<PersistentVolumeClaim> = Api::namespaced(shared.client.clone(), &ns);
    for claim in &outcome.pvcs {
        match write::create(&pvc_api, claim).await {
            Ok(_) => {}
            Err(err) if write::code(&err) == Some(409) => {}
            Err(err) => {
                ctx.recorder.record(
                    &*cs,
                    crate::kruise::events::EventRecord::warning(
                        "FailedCreate",
                        format!(
                            "failed to create pvc: {}, pvc: {}",
                            write::describe(&err),
                            claim.metadata.name.as_deref().unwrap_or_default()
                        ),
                    ),
                );
                return Err(err.into());
            }
        }
    }
    let write_result = apply_pod_writes(&ctx, &cs, &owner_key, &ns, &active, &outcome.pods).await;

    // Status, then podsToDelete, then history; a failed pod write still updates the status, as
    // upstream does.
    if outcome.status_changed {
        let mut updated = (*cs).clone();
        updated.status = Some(outcome.status.clone());
        write_status(shared, &updated).await?;
    }
    if let Some(kept) = &outcome.pods_to_delete {
        let old = cs
            .spec
            .scale_strategy
            .as_ref()
            .map(|s| s.pods_to_delete.clone())
            .unwrap_or_default();
        // Upstream writes nil for an empty list: the field goes.
        let change = if kept.is_empty() {
            serde_json::json!({"op": "remove", "path": "/spec/scaleStrategy/podsToDelete"})
        } else {
            serde_json::json!({"op": "replace", "path": "/spec/scaleStrategy/podsToDelete", "value": kept})
        };
        let patch: json_patch::Patch = serde_json::from_value(serde_json::json!([
            {"op": "test", "path": "/spec/scaleStrategy/podsToDelete", "value": old},
            change,
        ]))
        .map_err(|e| ReconcileError::new(e.to_string()))?;
        patch_cloneset(shared, &ns, &name, &patch).await?;
    }
    owned::delete_revisions(&rev_api, &revs, &outcome.delete_revisions).await?;
    write_result?;
    Ok(owned::requeue(outcome.requeue_after))
}

/// Applies the pod writes in order; creations go in slow-start batches. Stops at the first
/// failure (its event recorded) and returns it.
async fn apply_pod_writes(
    ctx: &Ctx,
    cs: &CloneSet,
    owner_key: &str,
    ns: &str,
    bases: &[Pod],
    writes: &[PodWrite],
) -> Result<(), ReconcileError> {
    let api: Api<Pod> = Api::namespaced(ctx.shared.client.clone(), ns);
    let mut i = 0;
    let mut batch = 1;
    while i < writes.len() {
        if let PodOp::Create(_) = writes[i].op {
            // A slow-start batch of consecutive creations.
            let end = (i..writes.len())
                .take(batch)
                .take_while(|&j| matches!(writes[j].op, PodOp::Create(_)))
                .last()
                .map_or(i + 1, |j| j + 1);
            let creates: Vec<(&PodWrite, &Pod)> = writes[i..end]
                .iter()
                .filter_map(|w| match &w.op {
                    PodOp::Create(pod) => Some((w, &**pod)),
                    _ => None,
                })
                .collect();
            let results =
                futures::future::join_all(creates.iter().map(|(_, pod)| write::create(&api, pod)))
                    .await;
            let mut failed = None;
            for ((w, _), result) in creates.iter().zip(results) {
                match result {
                    Ok(_) => {
                        ctx.expectations.expect(
                            owner_key,
                            [Expect::Created {
                                name: w.name.clone(),
                            }],
                        );
                        ctx.recorder.record_all(cs, w.success_event());
                    }
                    Err(err) => {
                        ctx.recorder
                            .record_all(cs, w.failure_event(&write::describe(&err)));
                        failed.get_or_insert(err);
                    }
                }
            }
            if let Some(err) = failed {
                return Err(err.into());
            }
            i = end;
            batch *= 2;
            continue;
        }
        let w = &writes[i];
        let base = bases
            .iter()
            .find(|p| p.metadata.name.as_deref() == Some(w.name.as_str()));
        let result = apply_one(&api, base, w).await;
        match result {
            Ok(expect) => {
                ctx.expectations.expect(owner_key, expect);
                ctx.recorder.record_all(cs, w.success_event());
            }
            Err(err) => {
                ctx.recorder
                    .record_all(cs, w.failure_event(&write::describe(&err)));
                return Err(err.into());
            }
        }
        i += 1;
    }
    Ok(())
}

async fn apply_one(
    api: &Api<Pod>,
    base: Option<&Pod>,
    w: &PodWrite,
) -> Result<Vec<Expect>, kube::Error> {
    match &w.op {
        PodOp::Create(pod) => write::create(api, pod).await.map(|_| {
            vec![Expect::Created {
                name: w.name.clone(),
            }]
        }),
        PodOp::Delete { uid } => podwrite::delete(api, &w.name, uid).await,
        PodOp::Update { status, pod } => {
            podwrite::update(api, &w.name, base, status.as_deref(), pod.as_deref()).await
        }
    }
}

/// The served resource of CloneSets when it is not the Rust type's v1alpha1.
fn mapped(shared: &Shared) -> Option<&ApiResource> {
    shared.versions.cloneset.as_ref()
}

/// Writes the CloneSet's status at the served version; returns the new resourceVersion.
async fn write_status(shared: &Shared, cs: &CloneSet) -> Result<String, ReconcileError> {
    let written = crate::served::replace_status(
        &shared.client,
        mapped(shared),
        cs,
        crate::api::cloneset::to_served_json,
    )
    .await?;
    Ok(written.resource_version)
}

async fn patch_cloneset(
    shared: &Shared,
    ns: &str,
    name: &str,
    patch: &json_patch::Patch,
) -> Result<(), ReconcileError> {
    let params = PatchParams::default();
    match mapped(shared) {
        None => {
            let api: Api<CloneSet> = Api::namespaced(shared.client.clone(), ns);
            api.patch(name, &params, &Patch::<()>::Json(patch.clone()))
                .await?;
        }
        Some(ar) => {
            let api: Api<DynamicObject> = Api::namespaced_with(shared.client.clone(), ns, ar);
            api.patch(name, &params, &Patch::<()>::Json(patch.clone()))
                .await?;
        }
    }
    Ok(())
}

async fn bump_collision_count(shared: &Shared, cs: &CloneSet) -> Result<(), ReconcileError> {
    let mut updated = cs.clone();
    let status = updated.status.get_or_insert_with(Default::default);
    status.collision_count = Some(status.collision_count.unwrap_or(0) + 1);
    write_status(shared, &updated).await.map(|_| ())
}
