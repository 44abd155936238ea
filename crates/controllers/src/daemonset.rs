//! The Advanced DaemonSet controller: the IO shell around `kruise::daemonset::reconcile`.
//!
//! It reads the set, its pods, the nodes and its revisions from the shared cache, waits for its
//! expectations, constructs the history (creating or re-numbering the current revision), runs
//! the pure reconcile and applies what it returns: pod creations in slow-start batches of 1, 2,
//! 4, ... (stopping after a failed batch, as upstream), then updates and deletions, the status
//! and the pruned revisions, with upstream's events. Node changes that matter (labels, taints,
//! schedulability, conditions) queue every set; heartbeats do not.

use std::sync::Arc;

use k8s_openapi::api::{
    apps::v1::ControllerRevision,
    core::v1::{Node, Pod},
};
use kube::{
    Api,
    api::{Patch, PatchParams, PostParams},
    runtime::controller::Action,
};

use super::{
    Shared,
    cache::Change,
    expectations::Expect,
    owned::{self, Ctx, Identity},
    podwrite,
    runner::{self, ReconcileError},
    write,
};
use crate::{
    api::DaemonSet,
    kruise::daemonset::{
        HASH_LABEL,
        reconcile::{self, Input, Op, PodWrite, history},
    },
};

/// Port of `shouldIgnoreNodeUpdate`: only the heartbeat (resourceVersion, condition times)
/// changed; the same labels, spec and set of True conditions.
fn only_heartbeat(old: &Node, new: &Node) -> bool {
    let true_conditions = |n: &Node| {
        let mut types: Vec<String> = n
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .into_iter()
            .flatten()
            .filter(|c| c.status == "True")
            .map(|c| c.type_.clone())
            .collect();
        types.sort();
        types
    };
    old.metadata.labels == new.metadata.labels
        && old.metadata.annotations == new.metadata.annotations
        && old.spec == new.spec
        && true_conditions(old) == true_conditions(new)
}

/// Wires the cache's changes to the queue now, and returns the controller's loop (runs until
/// `shutdown`, once the cache has its first lists).
pub fn controller(
    shared: Arc<Shared>,
    shutdown: tokio_util::sync::CancellationToken,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    owned::workload_controller(
        "daemonset",
        "daemonset-controller",
        shared,
        shutdown,
        |cache| &cache.daemonsets,
        |cache, queue| {
            let resync = runner::enqueue_all(queue, cache.daemonsets.store());
            cache.nodes.on_change(move |change| match change {
                Change::Applied {
                    old: Some(old),
                    new,
                } if only_heartbeat(old, new) => {}
                _ => resync(),
            });
        },
        reconcile_one,
    )
}

async fn reconcile_one(ds: Arc<DaemonSet>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    let shared = &ctx.shared;
    let cache = &shared.cache;
    let Some(Identity {
        ns,
        uid,
        key: owner_key,
        ..
    }) = ctx.settled(&*ds)
    else {
        return Ok(Action::requeue(owned::EXPECTATION_RECHECK));
    };
    let pods: Vec<Pod> = owned::owned_copies(&cache.pods, &ns, &uid);
    let nodes: Vec<Node> = cache.nodes.all().iter().map(|n| (**n).clone()).collect();
    let revs: Vec<ControllerRevision> = owned::owned_copies(&cache.revisions, &ns, &uid);
    let (cur, old) = construct_history(shared, &ds, &revs, &pods).await?;
    let outcome = reconcile::reconcile(&Input {
        ds: &ds,
        pods: &pods,
        nodes: &nodes,
        cur: &cur,
        old: &old,
        now: jiff::Timestamp::now().as_second(),
        version: shared.version,
    });
    for e in &outcome.errors {
        tracing::warn!(daemonset = %owner_key, "{e}");
    }
    ctx.recorder.record_all(&*ds, outcome.events.clone());
    let write_result = apply_pod_writes(&ctx, &ds, &owner_key, &ns, &pods, &outcome.pods).await;
    if let Some(status) = &outcome.status {
        let mut updated = (*ds).clone();
        updated.status = Some(status.clone());
        write_status(shared, &updated).await?;
    }
    let rev_api: Api<ControllerRevision> = Api::namespaced(shared.client.clone(), &ns);
    owned::delete_revisions(&rev_api, &old, &outcome.delete_revisions).await?;
    write_result?;
    if let Some(first) = outcome.errors.first() {
        return Err(ReconcileError::new(first.clone()));
    }
    tracing::debug!(daemonset = %owner_key, writes = outcome.pods.len(), "synced");
    Ok(owned::requeue(outcome.requeue_after))
}

/// Port of `constructHistory`'s writes: returns the current revision (created or re-numbered
/// when needed) and the old ones.
async fn construct_history(
    shared: &Shared,
    ds: &DaemonSet,
    revs: &[ControllerRevision],
    pods: &[Pod],
) -> Result<(ControllerRevision, Vec<ControllerRevision>), ReconcileError> {
    let ns = ds.metadata.namespace.clone().unwrap_or_default();
    let api: Api<ControllerRevision> = Api::namespaced(shared.client.clone(), &ns);
    let h = history::construct_history(ds, revs, pods);
    for rev in &h.relabel {
        api.replace(
            rev.metadata.name.as_deref().unwrap_or_default(),
            &PostParams::default(),
            rev,
        )
        .await?;
    }
    if !h.relabel_pods.is_empty() {
        let pod_api: Api<Pod> = Api::namespaced(shared.client.clone(), &ns);
        for (pod, hash) in &h.relabel_pods {
            let patch = serde_json::json!({"metadata": {"labels": {HASH_LABEL: hash}}});
            pod_api
                .patch(pod, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
        }
    }
    owned::delete_revisions(&api, revs, &h.dedup).await?;
    if let Some(new) = &h.create {
        return match api.create(&PostParams::default(), new).await {
            Ok(created) => Ok((created, h.old)),
            Err(err) if write::code(&err) == Some(409) => {
                let rev_name = new.metadata.name.clone().unwrap_or_default();
                let existing = api.get(&rev_name).await?;
                if history::matches(ds, &existing) {
                    return Ok((existing, h.old));
                }
                // A hash collision: count it; the next reconcile hashes again.
                let mut bumped = ds.clone();
                let st = bumped.status.get_or_insert_with(Default::default);
                st.collision_count = Some(st.collision_count.unwrap_or(0) + 1);
                write_status(shared, &bumped).await?;
                Err(ReconcileError::transient(format!(
                    "found a hash collision for DaemonSet {} - bumping collisionCount",
                    ds.metadata.name.as_deref().unwrap_or_default()
                )))
            }
            Err(err) => Err(err.into()),
        };
    }
    let Some(mut cur) = h.cur else {
        return Err(ReconcileError::new("no current revision"));
    };
    if h.renumber {
        cur = api
            .replace(
                cur.metadata.name.as_deref().unwrap_or_default(),
                &PostParams::default(),
                &cur,
            )
            .await?;
    }
    Ok((cur, h.old))
}

/// Applies the pod writes: creations in slow-start batches (stopping after a batch with a
/// failure), then the others; every write is attempted, the first failure returned.
async fn apply_pod_writes(
    ctx: &Ctx,
    ds: &DaemonSet,
    owner_key: &str,
    ns: &str,
    bases: &[Pod],
    writes: &[PodWrite],
) -> Result<(), ReconcileError> {
    let api: Api<Pod> = Api::namespaced(ctx.shared.client.clone(), ns);
    let creates: Vec<(&PodWrite, &Pod, &str)> = writes
        .iter()
        .filter_map(|w| match &w.op {
            Op::Create { node, pod } => Some((w, &**pod, node.as_str())),
            _ => None,
        })
        .collect();
    let mut first_err: Option<ReconcileError> = None;
    let mut pos = 0;
    let mut batch = 1;
    while pos < creates.len() {
        let end = (pos + batch).min(creates.len());
        let results = futures::future::join_all(
            creates[pos..end]
                .iter()
                .map(|(_, pod, _)| write::create(&api, pod)),
        )
        .await;
        let mut failed = false;
        for ((w, _, node), result) in creates[pos..end].iter().zip(results) {
            match result {
                Ok(written) => {
                    ctx.expectations.expect(
                        owner_key,
                        [Expect::Created {
                            name: written.name.clone(),
                        }],
                    );
                    ctx.recorder.record_all(ds, w.success_event(&written.name));
                    tracing::info!(daemonset = %owner_key, pod = %written.name, %node, "pod created");
                }
                Err(err) => {
                    ctx.recorder
                        .record_all(ds, w.failure_event(&write::describe(&err)));
                    failed = true;
                    first_err.get_or_insert(err.into());
                }
            }
        }
        if failed {
            break;
        }
        pos = end;
        batch *= 2;
    }
    for w in writes.iter().filter(|w| !matches!(w.op, Op::Create { .. })) {
        let base = bases
            .iter()
            .find(|p| p.metadata.name.as_deref() == Some(w.name.as_str()));
        let result = match &w.op {
            Op::Delete { uid } => podwrite::delete(&api, &w.name, uid).await,
            Op::Update { status, pod } => {
                podwrite::update(&api, &w.name, base, status.as_deref(), pod.as_deref()).await
            }
            Op::Create { .. } => continue,
        };
        match result {
            Ok(expect) => {
                ctx.expectations.expect(owner_key, expect);
                ctx.recorder.record_all(ds, w.success_event(&w.name));
                tracing::info!(daemonset = %owner_key, pod = %w.name, why = ?w.why, "pod written");
            }
            Err(err) => {
                ctx.recorder
                    .record_all(ds, w.failure_event(&write::describe(&err)));
                first_err.get_or_insert(err.into());
            }
        }
    }
    first_err.map_or(Ok(()), Err)
}

/// Writes the set's status (its resourceVersion is the precondition).
async fn write_status(shared: &Shared, ds: &DaemonSet) -> Result<(), ReconcileError> {
    crate::served::replace_status(
        &shared.client,
        shared.versions.daemonset.as_ref(),
        ds,
        crate::api::daemonset::to_served_json,
    )
    .await?;
    Ok(())
}
