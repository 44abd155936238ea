//! The Advanced StatefulSet controller: the IO shell around `kruise::statefulset::reconcile`.
//!
//! It reads the set, its pods, revisions and its namespace's claims from the shared cache, waits
//! for its expectations, settles the update revision (creating or re-numbering it), runs the
//! pure reconcile and applies what it returns in order, stopping at the first failure as
//! upstream does: claims before their pod, pods, then the status (with a failed write's
//! condition) and the pruned revisions, with upstream's events.

use std::{sync::Arc, time::Duration};

use k8s_openapi::api::{
    apps::v1::ControllerRevision,
    core::v1::{PersistentVolumeClaim, Pod},
};
use kube::{Api, core::Selector, runtime::controller::Action};

use super::{
    Shared,
    expectations::Expect,
    owned::{self, Ctx, Identity, Revisions},
    podwrite,
    runner::ReconcileError,
    write,
};
use crate::{
    api::StatefulSet,
    kruise::statefulset::reconcile::{self, Input, Op, PodWrite, claim_event, revisions, status},
};

/// Wires the cache's changes to the queue now, and returns the controller's loop (runs until
/// `shutdown`, once the cache has its first lists).
pub fn controller(
    shared: Arc<Shared>,
    shutdown: tokio_util::sync::CancellationToken,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    owned::workload_controller(
        "statefulset",
        "statefulset-controller",
        shared,
        shutdown,
        |cache| &cache.statefulsets,
        |_, _| {},
        reconcile_one,
    )
}

async fn reconcile_one(set: Arc<StatefulSet>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    let shared = &ctx.shared;
    let cache = &shared.cache;
    let Some(Identity {
        ns,
        name,
        uid,
        key: owner_key,
    }) = ctx.settled(&*set)
    else {
        return Ok(Action::requeue(owned::EXPECTATION_RECHECK));
    };
    let pods: Vec<Pod> = owned::owned_copies(&cache.pods, &ns, &uid);
    let prefixes: Vec<String> = set
        .spec
        .volume_claim_templates
        .iter()
        .map(|t| format!("{}-{name}-", t.metadata.name.as_deref().unwrap_or_default()))
        .collect();
    let claims: Vec<PersistentVolumeClaim> = if prefixes.is_empty() {
        Vec::new()
    } else {
        cache
            .pvcs
            .filter(&ns, |c| {
                let n = c.metadata.name.as_deref().unwrap_or_default();
                prefixes.iter().any(|p| n.starts_with(p.as_str()))
            })
            .iter()
            .map(|c| (**c).clone())
            .collect()
    };
    let mut revs: Vec<ControllerRevision> = owned::owned_copies(&cache.revisions, &ns, &uid);

    let active = revisions::active_revisions(&set, &revs);
    let rev_api: Api<ControllerRevision> = Api::namespaced(shared.client.clone(), &ns);
    let Some(Revisions { current, update }) =
        owned::settle_revisions(&rev_api, &active, &mut revs).await?
    else {
        // A hash collision: count it and let the next reconcile hash again.
        let mut bumped = (*set).clone();
        let st = bumped.status.get_or_insert_with(Default::default);
        st.collision_count = Some(st.collision_count.unwrap_or(0) + 1);
        write_status(shared, &bumped).await?;
        return Ok(Action::requeue(Duration::from_millis(100)));
    };
    let label_selector = Selector::try_from(set.spec.selector.clone())
        .map(|s| s.to_string())
        .unwrap_or_default();
    let outcome = reconcile::reconcile(&Input {
        set: &set,
        pods: &pods,
        claims: &claims,
        revisions: &revs,
        current: &current,
        update: &update,
        collision_count: active.collision_count,
        label_selector,
        gates: &shared.gates,
        version: shared.version,
        now: jiff::Timestamp::now().as_second(),
    });
    for e in &outcome.errors {
        tracing::warn!(statefulset = %owner_key, "{e}");
    }
    ctx.recorder.record_all(&*set, outcome.events.clone());
    let mut new_status = outcome.status.clone();
    let write_result = apply_pod_writes(&ctx, &set, &owner_key, &ns, &pods, &outcome.pods).await;
    if let Err((w, err)) = &write_result
        && !err.transient
        && let Some((type_, message)) = w.failure_condition(&err.message)
    {
        let now = jiff::Timestamp::now().as_second();
        status::set_condition(&mut new_status, set.status.as_ref(), type_, message, now);
    }
    // The status is written even when a pod write failed, as upstream does.
    if status::should_write(set.status.as_ref(), &new_status) {
        let mut updated = (*set).clone();
        updated.status = Some(new_status);
        write_status(shared, &updated).await?;
    }
    owned::delete_revisions(&rev_api, &revs, &outcome.delete_revisions).await?;
    if let Err((_, err)) = write_result {
        return Err(err);
    }
    if let Some(first) = outcome.errors.first() {
        return Err(ReconcileError::new(first.clone()));
    }
    tracing::debug!(statefulset = %owner_key, writes = outcome.pods.len(), "synced");
    Ok(owned::requeue(outcome.requeue_after))
}

/// Applies the pod writes in order; stops at the first failure (its events recorded) and
/// returns it with the write that failed.
async fn apply_pod_writes<'a>(
    ctx: &Ctx,
    set: &StatefulSet,
    owner_key: &str,
    ns: &str,
    bases: &[Pod],
    writes: &'a [PodWrite],
) -> Result<(), (&'a PodWrite, ReconcileError)> {
    let api: Api<Pod> = Api::namespaced(ctx.shared.client.clone(), ns);
    let claims_api: Api<PersistentVolumeClaim> = Api::namespaced(ctx.shared.client.clone(), ns);
    let set_name = set.metadata.name.as_deref().unwrap_or_default();
    for w in writes {
        let claims = match &w.op {
            Op::Create { claims, .. } | Op::Claims { claims } => claims.as_slice(),
            _ => &[],
        };
        for claim in claims {
            let claim_name = claim.metadata.name.as_deref().unwrap_or_default();
            match write::create(&claims_api, claim).await {
                Ok(_) => ctx
                    .recorder
                    .record(set, claim_event(set_name, &w.name, claim_name, None)),
                // Already there (the cache had not shown it yet).
                Err(err) if write::code(&err) == Some(409) => {}
                Err(err) => {
                    let msg = write::describe(&err);
                    ctx.recorder
                        .record(set, claim_event(set_name, &w.name, claim_name, Some(&msg)));
                    let msg = format!("failed to create PVC {claim_name}: {msg}");
                    ctx.recorder
                        .record_all(set, w.failure_events(set_name, &msg));
                    return Err((w, ReconcileError::new(msg)));
                }
            }
        }
        let base = bases
            .iter()
            .find(|p| p.metadata.name.as_deref() == Some(w.name.as_str()));
        let result = match &w.op {
            Op::Claims { .. } => Ok(Vec::new()),
            Op::Create { pod, .. } => write::create(&api, pod).await.map(|_| {
                vec![Expect::Created {
                    name: w.name.clone(),
                }]
            }),
            Op::Delete { uid } => podwrite::delete(&api, &w.name, uid).await,
            Op::Update { status, pod } => {
                podwrite::update(&api, &w.name, base, status.as_deref(), pod.as_deref()).await
            }
        };
        match result {
            Ok(expect) => {
                ctx.expectations.expect(owner_key, expect);
                ctx.recorder.record_all(set, w.success_events(set_name));
                tracing::info!(statefulset = %owner_key, pod = %w.name, why = ?w.why, "pod written");
            }
            // A create of a stable name that exists: the cache is behind; retry soon, quietly.
            Err(err) if matches!(w.op, Op::Create { .. }) && write::code(&err) == Some(409) => {
                return Err((w, ReconcileError::transient(write::describe(&err))));
            }
            Err(err) => {
                let msg = write::describe(&err);
                ctx.recorder
                    .record_all(set, w.failure_events(set_name, &msg));
                return Err((w, err.into()));
            }
        }
    }
    Ok(())
}

/// Writes the set's status (its resourceVersion is the precondition).
async fn write_status(shared: &Shared, set: &StatefulSet) -> Result<(), ReconcileError> {
    let ns = set.metadata.namespace.clone().unwrap_or_default();
    let api: Api<StatefulSet> = Api::namespaced(shared.client.clone(), &ns);
    write::replace_status(&api, set).await?;
    Ok(())
}
