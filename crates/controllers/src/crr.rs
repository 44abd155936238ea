//! The ContainerRecreateRequest controller (the manager side): the IO shell around
//! `kruise::crr::manager::plan`.
//!
//! It completes a CRR whose pod is gone or replaced (`pod has gone`), that no daemon picked up
//! within a minute, or that ran past `activeDeadlineSeconds` (phase `Completed` with upstream's
//! message: upstream never writes a CRR phase `Failed`, the message and the per-container
//! states tell a failure); it syncs the pod's container statuses into the CRR while it is
//! `Recreating` (the daemon needs them to call a container `Succeeded`), holds the pod
//! not-ready through `KruisePodReady` for `unreadyGracePeriodSeconds`, drops the
//! `crr.apps.kruise.io/active` label once completed and deletes the CRR
//! `ttlSecondsAfterFinished` later. Upstream's controller records no events; it logs.

use std::{sync::Arc, time::Duration};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use kube::{
    Api,
    api::{Patch, PatchParams},
    runtime::{controller::Action, reflector::Store},
};

use super::{
    Ctx, Shared,
    cache::Change,
    expectations::Expect,
    key, key_of,
    runner::{self, Queue, ReconcileError},
    with_finalizer, write,
};
use crate::{
    api::ContainerRecreateRequest,
    kruise::crr::{ACTIVE_KEY, POD_UID_KEY, UNREADY_ACQUIRED_KEY, manager},
};

/// How often a CRR is looked at when nothing happens.
const RESYNC: Duration = Duration::from_secs(300);

/// How long to wait for our own last write to show in the cache before looking again.
const EXPECTATION_RECHECK: Duration = Duration::from_secs(1);

/// Queues the unfinished CRRs of `pod` (by its UID label), as upstream's pod event handler.
fn enqueue_for_pod(
    queue: &Queue<ContainerRecreateRequest>,
    crrs: &Store<ContainerRecreateRequest>,
    pod: &Pod,
) {
    let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
    let uid = pod.metadata.uid.as_deref().unwrap_or_default();
    for crr in crrs.state_filter(|c| {
        c.metadata.namespace.as_deref().unwrap_or_default() == ns
            && c.label(POD_UID_KEY) == uid
            && c.metadata.deletion_timestamp.is_none()
            && c.status
                .as_ref()
                .is_none_or(|s| s.completion_time.is_none())
    }) {
        queue.enqueue_obj(&crr);
    }
}

/// Wires the cache's changes to the queue now, and returns the controller's loop.
pub fn controller(
    shared: Arc<Shared>,
    shutdown: tokio_util::sync::CancellationToken,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let (queue, inbox) = runner::queue::<ContainerRecreateRequest>();
    let cache = &shared.cache;
    let ctx = Ctx::new(shared.clone());
    let all = {
        let ctx = ctx.clone();
        runner::watch_own(&cache.crrs, &queue, move |crr| {
            ctx.expectations.forget(&key_of(crr));
        })
    };
    {
        let q = queue.clone();
        let crrs = cache.crrs.store();
        cache.pods.on_change(move |change| match change {
            Change::Applied { old: None, new } => enqueue_for_pod(&q, &crrs, new),
            Change::Applied {
                old: Some(old),
                new,
            } => {
                let deleting = old.metadata.deletion_timestamp.is_none()
                    && new.metadata.deletion_timestamp.is_some();
                let statuses =
                    |p: &Pod| p.status.as_ref().and_then(|s| s.container_statuses.clone());
                if deleting || statuses(old) != statuses(new) {
                    enqueue_for_pod(&q, &crrs, new);
                }
            }
            Change::Deleted(pod) => enqueue_for_pod(&q, &crrs, pod),
            Change::Resynced => all(),
        });
    }
    async move {
        shared.cache.ready().await;
        runner::run(
            "containerrecreaterequest",
            shared.cache.crrs.store(),
            inbox,
            ctx,
            3,
            reconcile_one,
            shutdown,
        )
        .await;
    }
}

async fn reconcile_one(
    crr: Arc<ContainerRecreateRequest>,
    ctx: Arc<Ctx>,
) -> Result<Action, ReconcileError> {
    let shared = &ctx.shared;
    let ns = crr.metadata.namespace.clone().unwrap_or_default();
    let name = crr.metadata.name.clone().unwrap_or_default();
    let key = key(&ns, &name);
    let lookup = |n: &str| super::seen(shared.cache.crrs.get(&ns, n).as_deref());
    if !ctx.expectations.satisfied(&key, lookup) {
        // Our last write is not in the cache yet; its watch event queues the CRR again.
        return Ok(Action::requeue(EXPECTATION_RECHECK));
    }
    let pod = shared.cache.pods.get(&ns, &crr.spec.pod_name);
    let plan = manager::plan(&crr, pod.as_deref(), Timestamp::now());
    tracing::debug!(crr = %key, phase = crr.phase(), ?plan, "reconciling");
    let api: Api<ContainerRecreateRequest> = Api::namespaced(shared.client.clone(), &ns);
    let pods: Api<Pod> = Api::namespaced(shared.client.clone(), &ns);
    let params = PatchParams::default();

    // The resourceVersion of our last write of the CRR: the next reconcile waits to see it.
    let mut written: Option<String> = None;
    if plan.add_finalizer {
        written = Some(
            write::replace(&api, &with_finalizer(&*crr, UNREADY_ACQUIRED_KEY, true))
                .await?
                .resource_version,
        );
    }
    if let (Some(status), Some(pod)) = (&plan.pod_status, &pod) {
        let mut next = (**pod).clone();
        next.status = Some(status.clone());
        write::replace_status(&pods, &next).await?;
        tracing::info!(crr = %key, pod = %crr.spec.pod_name,
            "CRR {} the pod's KruisePodReady", if plan.remove_finalizer { "released" } else { "holds" });
    }
    if plan.remove_finalizer {
        written = Some(
            write::replace(&api, &with_finalizer(&*crr, UNREADY_ACQUIRED_KEY, false))
                .await?
                .resource_version,
        );
    }
    if !plan.annotations.is_empty() {
        let patch = serde_json::json!({"metadata": {"annotations": plan.annotations}});
        let patched = api.patch(&name, &params, &Patch::Merge(&patch)).await?;
        written = patched.metadata.resource_version;
    }
    if plan.remove_active_label {
        let patch = serde_json::json!({"metadata": {"labels": {ACTIVE_KEY: null}}});
        let patched = api.patch(&name, &params, &Patch::Merge(&patch)).await?;
        written = patched.metadata.resource_version;
    }
    if let Some(status) = &plan.status {
        let mut next = (*crr).clone();
        next.status = Some(status.clone());
        written = Some(write::replace_status(&api, &next).await?.resource_version);
        tracing::info!(crr = %key, "completed CRR as failure: {}", status.message);
    }
    if plan.delete {
        write::delete(&api, &name, crr.metadata.uid.as_deref().unwrap_or_default()).await?;
        tracing::info!(crr = %key, "deleted CRR for ttlSecondsAfterFinished");
        ctx.expectations.forget(&key);
        return Ok(Action::await_change());
    }
    if let Some(resource_version) = written {
        ctx.expectations.expect(
            &key,
            [Expect::Updated {
                name: name.clone(),
                resource_version,
            }],
        );
    }
    Ok(Action::requeue(
        plan.requeue_after_seconds
            .and_then(|s| u64::try_from(s).ok())
            .map_or(RESYNC, |s| Duration::from_secs(s.max(1))),
    ))
}
