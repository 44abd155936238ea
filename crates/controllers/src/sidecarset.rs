//! The SidecarSet controller: the IO shell around `kruise::sidecarset::sync`.
//!
//! Per pass, as upstream's processor: register the set's current spec as its latest
//! ControllerRevision (in `kruise-system`; create, reuse or bump, label the custom version,
//! prune the history), write the status, and once the pods it last upgraded show in the cache
//! (update expectations), reset finished hot upgrades, mark pods that cannot be upgraded in
//! place and upgrade the next pods in place. Pod writes carry their resourceVersion; after a
//! conflict the same decision is re-applied to the freshly read pod (upstream's
//! RetryOnConflict). Injection at pod creation is the admission hook in the embedded server.

use std::{
    collections::BTreeMap,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use k8s_openapi::api::{
    apps::v1::ControllerRevision,
    core::v1::{Namespace, Pod},
};
use kube::{
    Api,
    api::{ListParams, Patch, PatchParams},
    runtime::controller::Action,
};
use serde_json::json;

use super::{
    Shared,
    cache::Change,
    expectations::{Expect, Expectations},
    key_of,
    recorder::Recorder,
    runner::{self, Queue, ReconcileError},
    write,
};
use crate::{
    api,
    kruise::sidecarset::{
        SIDECARSET_LIST_ANNOTATION, SidecarSet, SidecarSetStatus,
        matching::NamespaceLabels,
        reconcile::ReconcileContext,
        restore::REVISION_NAMESPACE,
        sync::{self, Hold, revisions},
    },
};

/// How often a SidecarSet is looked at when nothing happens.
const RESYNC: Duration = Duration::from_secs(300);
/// How soon to look again while pods it upgraded are not yet in the cache (upstream: 1 s).
const EXPECTATION_RECHECK: Duration = Duration::from_secs(1);
/// How often a write is re-applied to a freshly read object after a conflict.
const CONFLICT_RETRIES: usize = 4;

pub struct Ctx {
    shared: Arc<Shared>,
    expectations: Expectations,
    recorder: Recorder,
    /// The revision namespace is known to exist.
    namespace_ready: AtomicBool,
}

/// Whether a pod change can change what a SidecarSet decides: a new resourceVersion with a
/// deletion, a readiness or container-state change, new labels, images or annotations
/// (upstream: isPodStatusChanged / isPodConsistentChanged / labels).
fn pod_change_matters(old: &Pod, new: &Pod) -> bool {
    if old.metadata.resource_version == new.metadata.resource_version {
        return false;
    }
    let statuses = |p: &Pod| {
        p.status
            .iter()
            .flat_map(|s| s.container_statuses.iter().flatten())
            .map(|c| (c.name.clone(), c.image_id.clone(), c.ready))
            .collect::<Vec<_>>()
    };
    let images = |p: &Pod| {
        p.spec
            .iter()
            .flat_map(|s| s.containers.iter())
            .map(|c| c.image.clone())
            .collect::<Vec<_>>()
    };
    (old.metadata.deletion_timestamp.is_none() && new.metadata.deletion_timestamp.is_some())
        || api::pod::is_running_and_ready(old) != api::pod::is_running_and_ready(new)
        || statuses(old) != statuses(new)
        || old.metadata.labels != new.metadata.labels
        || old.metadata.annotations != new.metadata.annotations
        || images(old) != images(new)
}

/// Queues the SidecarSets a pod belongs to: those its injected list names and those whose
/// namespace and selector take it.
fn enqueue_sets_of(queue: &Queue<api::SidecarSet>, sets: &[Arc<api::SidecarSet>], pod: &Pod) {
    let listed: Vec<&str> = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(SIDECARSET_LIST_ANNOTATION))
        .map(|l| l.split(',').filter(|n| !n.is_empty()).collect())
        .unwrap_or_default();
    let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
    let empty = BTreeMap::new();
    let labels = pod.metadata.labels.as_ref().unwrap_or(&empty);
    for set in sets {
        let name = set.metadata.name.as_deref().unwrap_or_default();
        let scoped = set
            .spec
            .namespace
            .as_deref()
            .is_none_or(|n| n.is_empty() || n == ns);
        let selected = scoped && super::selects(set.spec.selector.as_ref(), labels);
        if selected || listed.contains(&name) {
            queue.enqueue("", name);
        }
    }
}

/// Wires the cache's changes to the queue now, and returns the controller's loop.
pub fn controller(
    shared: Arc<Shared>,
    shutdown: tokio_util::sync::CancellationToken,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let (queue, inbox) = runner::queue::<api::SidecarSet>();
    let cache = &shared.cache;
    let ctx = Arc::new(Ctx {
        recorder: shared.recorder.for_component("sidecarset-controller"),
        shared: shared.clone(),
        expectations: Expectations::default(),
        namespace_ready: AtomicBool::new(false),
    });
    let resync = {
        let ctx = ctx.clone();
        runner::watch_own_if(
            &cache.sidecarsets,
            &queue,
            // Upstream reconciles on spec (generation) changes; labels carry the custom version
            // of the next revision.
            |old, new| {
                old.is_none_or(|old| {
                    old.metadata.generation != new.metadata.generation
                        || old.metadata.labels != new.metadata.labels
                })
            },
            move |set| {
                ctx.expectations
                    .forget(set.metadata.name.as_deref().unwrap_or_default());
            },
        )
    };
    {
        let q = queue.clone();
        let sets = cache.sidecarsets.store();
        cache.pods.on_change(move |change| match change {
            Change::Applied { old: None, new } => enqueue_sets_of(&q, &sets.state(), new),
            Change::Applied {
                old: Some(old),
                new,
            } => {
                if pod_change_matters(old, new) {
                    let sets = sets.state();
                    enqueue_sets_of(&q, &sets, new);
                    if old.metadata.labels != new.metadata.labels {
                        enqueue_sets_of(&q, &sets, old);
                    }
                }
            }
            Change::Deleted(pod) => enqueue_sets_of(&q, &sets.state(), pod),
            Change::Resynced => resync(),
        });
    }
    async move {
        shared.cache.ready().await;
        runner::run(
            "sidecarset",
            shared.cache.sidecarsets.store(),
            inbox,
            ctx,
            3,
            reconcile_one,
            shutdown,
        )
        .await;
    }
}

/// Namespace labels, read only for a set with a namespaceSelector (the cache has no
/// namespaces).
async fn namespace_labels(ctx: &Ctx, set: &SidecarSet) -> Result<NamespaceLabels, ReconcileError> {
    if set.spec.namespace_selector.is_none() {
        return Ok(NamespaceLabels::new());
    }
    let api: Api<Namespace> = Api::all(ctx.shared.client.clone());
    let list = api.list(&ListParams::default()).await?;
    Ok(list
        .items
        .into_iter()
        .filter_map(|ns| Some((ns.metadata.name?, ns.metadata.labels.unwrap_or_default())))
        .collect())
}

/// The pods a set may match: in its namespace scope and selected (the pure pass checks the
/// rest).
fn candidate_pods(ctx: &Ctx, set: &SidecarSet) -> Vec<Pod> {
    let Some(sel) = set.spec.selector.as_ref() else {
        return Vec::new();
    };
    let scope = set.spec.namespace.as_deref().filter(|n| !n.is_empty());
    ctx.shared
        .cache
        .pods
        .all()
        .iter()
        .filter(|p| scope.is_none_or(|ns| p.metadata.namespace.as_deref() == Some(ns)))
        .filter(|p| {
            let empty = BTreeMap::new();
            let labels = p.metadata.labels.as_ref().unwrap_or(&empty);
            crate::kruise::selector::matches(sel, labels).unwrap_or(false)
        })
        .map(|p| (**p).clone())
        .collect()
}

async fn reconcile_one(obj: Arc<api::SidecarSet>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    let set: &SidecarSet = &obj;
    let name = set.name().to_owned();
    let namespaces = namespace_labels(&ctx, set).await?;
    let pods = candidate_pods(&ctx, set);

    // 1. The latest revision, its custom version label, and the history kept.
    let (latest, collisions, history) = register_revision(&ctx, set).await?;
    let latest_name = latest.metadata.name.clone().unwrap_or_default();
    let (matched, status) =
        sync::matched_and_status(set, &pods, &namespaces, &latest_name, collisions);
    let matched_pods: Vec<&Pod> = matched.iter().map(|&i| &pods[i]).collect();
    let truncation = revisions::truncate(set, &history, &matched_pods);
    let rev_api: Api<ControllerRevision> =
        Api::namespaced(ctx.shared.client.clone(), REVISION_NAMESPACE);
    for rev_name in &truncation.delete {
        let uid = history
            .iter()
            .find(|r| r.metadata.name.as_deref() == Some(rev_name))
            .and_then(|r| r.metadata.uid.clone())
            .unwrap_or_default();
        if let Err(err) = write::delete(&rev_api, rev_name, &uid).await {
            tracing::warn!(sidecarset = %name, revision = %rev_name, "cannot prune a revision: {}", write::describe(&err));
        }
    }
    if let Some(err) = &truncation.error {
        tracing::warn!(sidecarset = %name, "{err}");
    }

    // 2. Status.
    if sync::status_changed(set.status.as_ref(), &status) {
        write_status(&ctx, &obj, &status).await?;
        tracing::debug!(sidecarset = %name, matched = status.matched_pods, updated = status.updated_pods,
            ready = status.ready_pods, updated_ready = status.updated_ready_pods, "status updated");
    }

    // 3. Upgrades wait until the pods upgraded last time show in the cache.
    let cache = &ctx.shared.cache;
    let lookup = |key: &str| {
        let (ns, pod) = key.split_once('/').unwrap_or(("", key));
        super::seen(cache.pods.get(ns, pod).as_deref())
    };
    if !ctx.expectations.satisfied(&name, lookup) {
        tracing::debug!(sidecarset = %name, "pods upgraded in flight; looking again soon");
        return Ok(Action::requeue(EXPECTATION_RECHECK));
    }

    // 4. Hot-upgrade resets, not-upgradable pods, upgrades.
    let mut current = set.clone();
    current.status = Some(status.clone());
    let all_sets: Vec<SidecarSet> = cache
        .sidecarsets
        .all()
        .iter()
        .map(|s| SidecarSet::clone(s))
        .collect();
    let rctx = ReconcileContext {
        all_sets: &all_sets,
        namespaces: &namespaces,
        now: jiff::Timestamp::now(),
    };
    let plan = sync::plan_pods(&current, &pods, &matched, &status, rctx);
    for (i, desired) in &plan.flips {
        let base = &pods[*i];
        let result = write_pod(&ctx, base, desired, |fresh| {
            sync::flip_pod(&current, fresh, rctx.now)
        })
        .await;
        match result {
            Ok(_) => ctx.recorder.record(base, sync::reset_event(None)),
            Err(err) => {
                let message = write::describe(&err);
                ctx.recorder.record(base, sync::reset_event(Some(&message)));
                return Err(err.into());
            }
        }
    }
    if let Some(hold) = plan.hold {
        let why = match hold {
            Hold::NotUpdate => "updateStrategy is NotUpdate",
            Hold::AllUpdated => "every matched pod is updated",
            Hold::Paused => "updateStrategy is paused",
        };
        tracing::debug!(sidecarset = %name, "no upgrade: {why}");
        return Ok(Action::requeue(RESYNC));
    }
    for (i, desired) in &plan.not_upgradable {
        patch_condition(&ctx, &pods[*i], desired).await?;
    }
    ctx.recorder.record_all(&*obj, plan.events.clone());
    for (i, desired) in &plan.upgrades {
        let base = &pods[*i];
        let redo = |fresh: &Pod| {
            let from = sync::flip_pod(&current, fresh, rctx.now).unwrap_or_else(|| fresh.clone());
            Some(sync::upgrade_pod(&current, &from, rctx))
        };
        let written = write_pod(&ctx, base, desired, redo).await?;
        ctx.expectations.expect(
            &name,
            [Expect::Updated {
                name: key_of(base),
                resource_version: written.resource_version,
            }],
        );
        patch_condition(&ctx, base, desired).await?;
        tracing::info!(sidecarset = %name, pod = %key_of(base), "upgraded the pod's sidecars in place");
    }
    Ok(Action::requeue(RESYNC))
}

/// Registers the set's current spec; returns the latest revision, the collision count and the
/// set's history after registration.
async fn register_revision(
    ctx: &Ctx,
    set: &SidecarSet,
) -> Result<(ControllerRevision, i32, Vec<ControllerRevision>), ReconcileError> {
    let stored: Vec<ControllerRevision> = ctx
        .shared
        .cache
        .revisions
        .filter(REVISION_NAMESPACE, |_| true)
        .iter()
        .map(|r| (**r).clone())
        .collect();
    let mut history = revisions::owned_revisions(set, &stored);
    let (registration, mut collisions) = revisions::register(set, &history);
    let api: Api<ControllerRevision> =
        Api::namespaced(ctx.shared.client.clone(), REVISION_NAMESPACE);
    let latest = match registration {
        revisions::Registration::Reuse(rev) => rev,
        revisions::Registration::Bump(rev) => {
            let name = rev.metadata.name.clone().unwrap_or_default();
            let written = api
                .replace(&name, &kube::api::PostParams::default(), &rev)
                .await?;
            tracing::info!(sidecarset = %set.name(), revision = %name, number = written.revision, "rolled back to an earlier revision");
            written
        }
        revisions::Registration::Create(rev) => {
            let (created, count) = create_revision(ctx, set, &api, rev, collisions).await?;
            collisions = count;
            created
        }
    };
    history.retain(|r| r.metadata.name != latest.metadata.name);
    history.push(latest.clone());
    let latest = match revisions::custom_version_to_label(set, &latest) {
        None => latest,
        Some(version) => {
            let patch = json!({"metadata": {"labels": {crate::kruise::sidecarset::SIDECARSET_CUSTOM_VERSION_LABEL: version}}});
            api.patch(
                latest.metadata.name.as_deref().unwrap_or_default(),
                &PatchParams::default(),
                &Patch::Strategic(patch),
            )
            .await?
        }
    };
    Ok((latest, collisions, history))
}

/// Creates a revision, bumping the collision count while its name is taken by other data.
async fn create_revision(
    ctx: &Ctx,
    set: &SidecarSet,
    api: &Api<ControllerRevision>,
    mut rev: ControllerRevision,
    mut collisions: i32,
) -> Result<(ControllerRevision, i32), ReconcileError> {
    ensure_namespace(ctx).await?;
    let data = rev.data.as_ref().map(|d| d.0.clone()).unwrap_or_default();
    for _ in 0..16 {
        match api.create(&kube::api::PostParams::default(), &rev).await {
            Ok(created) => {
                tracing::info!(sidecarset = %set.name(), revision = created.metadata.name.as_deref().unwrap_or_default(), "created a revision");
                return Ok((created, collisions));
            }
            Err(err) if write::code(&err) == Some(409) => {
                let name = rev.metadata.name.clone().unwrap_or_default();
                let existing = api.get(&name).await?;
                if revisions::records_set(set, &existing) {
                    return Ok((existing, collisions));
                }
                collisions = collisions.saturating_add(1);
                rev = revisions::new_revision(set, &data, rev.revision, collisions);
            }
            Err(err) => return Err(err.into()),
        }
    }
    Err(ReconcileError::new(format!(
        "cannot name a new revision of SidecarSet {}: every name tried is taken",
        set.name()
    )))
}

/// Creates the revision namespace when it does not exist (upstream's lives with
/// kruise-manager; without one, the controllers keep it there too).
async fn ensure_namespace(ctx: &Ctx) -> Result<(), ReconcileError> {
    if ctx.namespace_ready.load(Ordering::Relaxed) {
        return Ok(());
    }
    let api: Api<Namespace> = Api::all(ctx.shared.client.clone());
    if api.get_opt(REVISION_NAMESPACE).await?.is_none() {
        let ns = Namespace {
            metadata: kube::api::ObjectMeta {
                name: Some(REVISION_NAMESPACE.to_owned()),
                ..Default::default()
            },
            ..Default::default()
        };
        match api.create(&kube::api::PostParams::default(), &ns).await {
            Ok(_) => tracing::info!(
                namespace = REVISION_NAMESPACE,
                "created the namespace for SidecarSet revisions"
            ),
            Err(err) if write::code(&err) == Some(409) => {}
            Err(err) => return Err(err.into()),
        }
    }
    ctx.namespace_ready.store(true, Ordering::Relaxed);
    Ok(())
}

/// Writes the status; after a conflict re-reads the set and writes the same status over it.
async fn write_status(
    ctx: &Ctx,
    obj: &api::SidecarSet,
    status: &SidecarSetStatus,
) -> Result<(), ReconcileError> {
    // At the stored version (v1beta1 since Kruise v1.9), mapped.
    let (client, ar) = (&ctx.shared.client, ctx.shared.versions.sidecarset.as_ref());
    let mut current = obj.clone();
    let name = obj.metadata.name.clone().unwrap_or_default();
    let mut status = status.clone();
    for _ in 0..CONFLICT_RETRIES {
        status.observed_generation = current.metadata.generation.unwrap_or_default();
        current.status = Some(status.clone());
        match crate::served::replace_status(client, ar, &current, api::sidecarset::to_served_json)
            .await
        {
            Ok(_) => return Ok(()),
            Err(err) if err.transient => {
                current =
                    crate::served::get(client, ar, None, &name, api::sidecarset::from_served_json)
                        .await?;
            }
            Err(err) => return Err(err),
        }
    }
    Err(ReconcileError::transient(format!(
        "the status of SidecarSet {name} kept changing under the write"
    )))
}

/// Writes `desired` (decided on `base`) with `base`'s resourceVersion; after a conflict
/// re-reads the pod and writes what `redo` decides for it (None: nothing to do any more).
async fn write_pod(
    ctx: &Ctx,
    base: &Pod,
    desired: &Pod,
    redo: impl Fn(&Pod) -> Option<Pod>,
) -> Result<write::Written, kube::Error> {
    let ns = base.metadata.namespace.clone().unwrap_or_default();
    let name = base.metadata.name.clone().unwrap_or_default();
    let api: Api<Pod> = Api::namespaced(ctx.shared.client.clone(), &ns);
    let mut attempt = desired.clone();
    let mut tries = 0;
    loop {
        match write::replace(&api, &attempt).await {
            Err(err) if write::code(&err) == Some(409) && tries < CONFLICT_RETRIES => {
                tries += 1;
                let fresh = api.get(&name).await?;
                match redo(&fresh) {
                    Some(next) => attempt = next,
                    None => {
                        return Ok(write::Written {
                            name,
                            resource_version: fresh.metadata.resource_version.unwrap_or_default(),
                        });
                    }
                }
            }
            other => return other,
        }
    }
}

/// Patches the pod's `SidecarSetUpgradable` condition to what `desired` carries, when it
/// differs from `base`'s (upstream: a strategic merge patch of the status).
async fn patch_condition(ctx: &Ctx, base: &Pod, desired: &Pod) -> Result<(), ReconcileError> {
    let Some(condition) = sync::upgradable_condition(desired) else {
        return Ok(());
    };
    if sync::upgradable_condition(base) == Some(condition) {
        return Ok(());
    }
    let api: Api<Pod> = Api::namespaced(
        ctx.shared.client.clone(),
        base.metadata.namespace.as_deref().unwrap_or_default(),
    );
    let patch = json!({"status": {"conditions": [condition]}});
    api.patch_status(
        base.metadata.name.as_deref().unwrap_or_default(),
        &PatchParams::default(),
        &Patch::Strategic(patch),
    )
    .await?;
    Ok(())
}
