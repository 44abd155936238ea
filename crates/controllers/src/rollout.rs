//! The Rollout controller of Kruise Rollout (`pkg/controller/rollout`): the IO shell around
//! `kruise::rollout::controller::reconcile`.
//!
//! It reads the Rollout, its workload (by `spec.workloadRef`) and its BatchRelease (same name)
//! from the shared cache, asks the port, and applies the outcome in upstream's order: the
//! finalizer, the workload's `workload-type` label, the hash annotation, the BatchRelease
//! writes and the workload's in-progressing removal, then the status as a whole replace on a
//! fresh read with retry on conflict (`updateRolloutStatusInternal`), then the events (reason
//! `Progressing`). Rollouts it does not drive (blue-green, canary-style Deployment, other
//! kinds) are left alone. Runs only when `rollouts.kruise.io/v1beta1` is served.

pub mod workload;

use std::{sync::Arc, time::Duration};

use kube::{
    Api, Client,
    api::{Patch, PatchParams},
    runtime::controller::Action,
};
use serde_json::{Value, json};

use super::{
    Shared,
    cache::{Cache, Change},
    recorder::Recorder,
    runner::{self, Queue, ReconcileError},
    write,
};
use crate::api::keys;
use crate::api::rollout::{BatchRelease, Rollout};
use crate::kruise::events::EventRecord;
use crate::kruise::rollout::controller::{
    BrAction, EVENT_REASON, FinalizerOp, Outcome, reconcile, target_kind,
};
use crate::kruise::rollout::workload::TargetKind;

/// Upstream's `retry.DefaultBackoff` for the status write: 4 tries, 10 ms apart (and more).
const STATUS_RETRIES: usize = 5;
const STATUS_BACKOFF: Duration = Duration::from_millis(20);

pub struct Ctx {
    shared: Arc<Shared>,
    recorder: Recorder,
}

/// Whether the server serves Rollouts and BatchReleases at `rollouts.kruise.io/v1beta1`.
pub async fn served(client: &Client) -> bool {
    kruise_client::discovery::kruise_rollout_served(client).await == (true, true)
}

/// Queues the Rollouts of `ns` whose `workloadRef` names `(group, kind, name)`.
fn enqueue_rollouts_of(
    queue: &Queue<Rollout>,
    cache: &Cache,
    group: &str,
    kind: &str,
    meta: &kube::api::ObjectMeta,
) {
    let ns = meta.namespace.as_deref().unwrap_or_default();
    let name = meta.name.as_deref().unwrap_or_default();
    for r in cache
        .rollouts
        .filter(ns, |r| r.spec.workload_ref.names(group, kind, name))
    {
        queue.enqueue_obj(&r);
    }
}

fn watch_workload<K>(
    queue: &Queue<Rollout>,
    shared: &Arc<Shared>,
    informer: &super::cache::Informer<K>,
    group: &'static str,
    kind: &'static str,
) where
    K: kube::Resource<DynamicType = ()> + Clone + std::fmt::Debug + Send + Sync + 'static,
{
    let q = queue.clone();
    let shared = shared.clone();
    informer.on_change(move |change| {
        let obj = match change {
            Change::Applied { new, .. } => *new,
            Change::Deleted(obj) => *obj,
            Change::Resynced => return,
        };
        enqueue_rollouts_of(&q, &shared.cache, group, kind, obj.meta());
    });
}

fn register(queue: &Queue<Rollout>, shared: &Arc<Shared>) {
    let cache = &shared.cache;
    let resync = runner::watch_own(&cache.rollouts, queue, |_| {});
    {
        // enqueueRequestForBatchRelease: the Rollout of the same name.
        let q = queue.clone();
        cache.batchreleases.on_change(move |change| match change {
            Change::Applied { new, .. } => q.enqueue_obj_as(&new.metadata),
            Change::Deleted(br) => q.enqueue_obj_as(&br.metadata),
            Change::Resynced => resync(),
        });
    }
    watch_workload(
        queue,
        shared,
        &cache.clonesets,
        "apps.kruise.io",
        "CloneSet",
    );
    watch_workload(
        queue,
        shared,
        &cache.statefulsets,
        "apps.kruise.io",
        "StatefulSet",
    );
    watch_workload(
        queue,
        shared,
        &cache.k8s_statefulsets,
        "apps",
        "StatefulSet",
    );
    watch_workload(
        queue,
        shared,
        &cache.daemonsets,
        "apps.kruise.io",
        "DaemonSet",
    );
}

trait EnqueueAs {
    fn enqueue_obj_as(&self, meta: &kube::api::ObjectMeta);
}

impl EnqueueAs for Queue<Rollout> {
    fn enqueue_obj_as(&self, meta: &kube::api::ObjectMeta) {
        self.enqueue(
            meta.namespace.as_deref().unwrap_or_default(),
            meta.name.as_deref().unwrap_or_default(),
        );
    }
}

/// Wires the cache's changes to the queue now, and returns the controller's loop.
pub fn controller(
    shared: Arc<Shared>,
    shutdown: tokio_util::sync::CancellationToken,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let (queue, inbox) = runner::queue::<Rollout>();
    let ctx = Arc::new(Ctx {
        recorder: shared.recorder.for_component("rollout-controller"),
        shared: shared.clone(),
    });
    register(&queue, &shared);
    async move {
        shared.cache.ready().await;
        runner::run(
            "rollout",
            shared.cache.rollouts.store(),
            inbox,
            ctx,
            1,
            reconcile_one,
            shutdown,
        )
        .await;
    }
}

/// The dynamic API of the workload a Rollout names (merge patches only).
fn workload_api(client: &Client, rollout: &Rollout) -> Option<Api<kube::api::DynamicObject>> {
    let r = &rollout.spec.workload_ref;
    let ns = rollout.metadata.namespace.as_deref().unwrap_or_default();
    let (group, version) = match r.api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", r.api_version.as_str()),
    };
    let plural = match target_kind(rollout)? {
        TargetKind::CloneSet => "clonesets",
        TargetKind::AdvancedStatefulSet | TargetKind::StatefulSet => "statefulsets",
        TargetKind::AdvancedDaemonSet => "daemonsets",
    };
    let gvk = kube::api::GroupVersionKind::gvk(group, version, &r.kind);
    let ar = kube::core::ApiResource::from_gvk_with_plural(&gvk, plural);
    Some(Api::namespaced_with(client.clone(), ns, &ar))
}

async fn merge_patch<K>(api: &Api<K>, name: &str, body: &Value) -> Result<(), kube::Error>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.patch(name, &PatchParams::default(), &Patch::Merge(body))
        .await
        .map(|_| ())
}

async fn reconcile_one(rollout: Arc<Rollout>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    let shared = &ctx.shared;
    let cache = &shared.cache;
    let ns = rollout.metadata.namespace.clone().unwrap_or_default();
    let name = rollout.metadata.name.clone().unwrap_or_default();
    let workload = workload::find(cache, &rollout);
    let br = cache.batchreleases.get(&ns, &name);
    let now = jiff::Timestamp::now();
    let outcome = reconcile(&rollout, workload.as_ref(), br.as_deref(), now);
    if outcome.unsupported {
        return Ok(Action::await_change());
    }
    apply(shared, &rollout, br.as_deref(), &outcome).await?;
    for message in &outcome.events {
        ctx.recorder.record(
            &*rollout,
            EventRecord::normal(EVENT_REASON, message.clone()),
        );
    }
    Ok(match outcome.requeue_at {
        Some(at) => {
            let wait = jiff::Timestamp::now().duration_until(at);
            let wait = Duration::try_from(wait).unwrap_or(Duration::ZERO);
            Action::requeue(wait.max(Duration::from_millis(100)))
        }
        None => Action::await_change(),
    })
}

/// Applies the port's writes in upstream's order.
async fn apply(
    shared: &Shared,
    rollout: &Rollout,
    br: Option<&BatchRelease>,
    outcome: &Outcome,
) -> Result<(), ReconcileError> {
    let client = &shared.client;
    let ns = rollout.metadata.namespace.clone().unwrap_or_default();
    let name = rollout.metadata.name.clone().unwrap_or_default();
    let api: Api<Rollout> = Api::namespaced(client.clone(), &ns);
    if let Some(op) = outcome.finalizer {
        let next = super::with_finalizer(rollout, keys::ROLLOUT_FINALIZER, op == FinalizerOp::Add);
        let body = json!({"metadata": {
            "finalizers": next.metadata.finalizers,
            "resourceVersion": rollout.metadata.resource_version,
        }});
        match merge_patch(&api, &name, &body).await {
            Ok(()) => {}
            // The finalizer was the last thing holding a deleted Rollout: it is gone.
            Err(e) if op == FinalizerOp::Remove && write::code(&e) == Some(404) => return Ok(()),
            Err(e) => return Err(e.into()),
        }
        if op == FinalizerOp::Remove {
            return Ok(());
        }
    }
    let workload_api = workload_api(client, rollout);
    let workload_name = rollout.spec.workload_ref.name.clone();
    let mut workload_patches = outcome.workload_patches.iter();
    // The label first (patchWorkloadRolloutWebhookLabel), then the hash annotation.
    let label_first = outcome
        .workload_patches
        .first()
        .filter(|p| p["metadata"].get("labels").is_some());
    if let (Some(p), Some(wapi)) = (label_first, workload_api.as_ref()) {
        workload_patches.next();
        merge_patch(wapi, &workload_name, p).await?;
    }
    for p in &outcome.rollout_patches {
        merge_patch(&api, &name, p).await?;
    }
    // Finalising removes the in-progressing annotation before any BatchRelease write.
    if let Some(wapi) = workload_api.as_ref() {
        for p in workload_patches {
            merge_patch(wapi, &workload_name, p).await?;
        }
    }
    let br_api: Api<BatchRelease> = Api::namespaced(client.clone(), &ns);
    for action in &outcome.batch_release {
        match action {
            BrAction::Create(obj) => match write::create(&br_api, obj).await {
                Ok(_) => {}
                Err(e) if write::code(&e) == Some(409) => {}
                Err(e) => return Err(e.into()),
            },
            BrAction::Update(obj) => {
                write::replace(&br_api, obj).await?;
            }
            BrAction::Patch(body) => merge_patch(&br_api, &name, body).await?,
            BrAction::Delete => {
                let uid = br.and_then(|b| b.metadata.uid.clone()).unwrap_or_default();
                write::delete(&br_api, &name, &uid).await?;
            }
        }
    }
    if let Some(status) = &outcome.status {
        write_status(&api, &name, status).await?;
    }
    Ok(())
}

/// `updateRolloutStatusInternal`: read the Rollout afresh, replace its whole status, retry on
/// conflict. A Rollout gone meanwhile is not an error.
async fn write_status(
    api: &Api<Rollout>,
    name: &str,
    status: &crate::api::rollout::RolloutStatus,
) -> Result<(), ReconcileError> {
    let mut last = None;
    for _ in 0..STATUS_RETRIES {
        let mut fresh = match api.get(name).await {
            Ok(r) => r,
            Err(e) if write::code(&e) == Some(404) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        fresh.status = Some(status.clone());
        fresh.metadata.managed_fields = None;
        match write::replace_status(api, &fresh).await {
            Ok(_) => return Ok(()),
            Err(e) if write::code(&e) == Some(409) => {
                last = Some(e);
                tokio::time::sleep(STATUS_BACKOFF).await;
            }
            Err(e) if write::code(&e) == Some(404) => return Ok(()),
            Err(e) => return Err(e.into()),
        }
    }
    Err(last.map_or_else(|| ReconcileError::transient("status conflict"), Into::into))
}
