//! What the workload controllers (CloneSet, Advanced StatefulSet, Advanced DaemonSet) share:
//! their context, the head and tail of a reconcile (who the workload is once its expectations
//! are met, when to look again), ownership by controller reference, settling and pruning
//! ControllerRevisions, and the wiring that queues a workload when it, its pods or its
//! ControllerRevisions change.

use std::{fmt::Debug, future::Future, sync::Arc, time::Duration};

use k8s_openapi::{
    api::apps::v1::ControllerRevision, apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use kube::{Api, Resource, api::PostParams, runtime::controller::Action};
use tokio_util::sync::CancellationToken;

use super::{
    Shared,
    cache::{Cache, Change, Informer},
    expectations::Expectations,
    key, key_of,
    recorder::Recorder,
    runner::{self, Queue, ReconcileError},
    write,
};
use crate::kruise::cloneset::reconcile::revisions::{ActiveRevisions, equal_revision};

/// How often a workload is looked at when nothing happens.
pub const RESYNC: Duration = Duration::from_secs(300);
/// How long to wait for unsatisfied expectations before looking again (a watch event usually
/// comes first).
pub const EXPECTATION_RECHECK: Duration = Duration::from_secs(1);

/// A workload controller's context: the shared handles, its expectations and its event
/// recorder.
pub struct Ctx {
    pub shared: Arc<Shared>,
    pub expectations: Expectations,
    pub recorder: Recorder,
}

/// Who a workload is, as its reconcile uses it.
pub struct Identity {
    pub ns: String,
    pub name: String,
    pub uid: String,
    /// Its expectations key ([`key`](super::key)).
    pub key: String,
}

impl Ctx {
    /// The workload's identity once the cache shows every pod write it expects; `None` until
    /// then (look again after [`EXPECTATION_RECHECK`]).
    pub fn settled<K: Resource>(&self, obj: &K) -> Option<Identity> {
        let meta = obj.meta();
        let ns = meta.namespace.clone().unwrap_or_default();
        let name = meta.name.clone().unwrap_or_default();
        let uid = meta.uid.clone().unwrap_or_default();
        let key = key(&ns, &name);
        let pods = &self.shared.cache.pods;
        let lookup = |pod_name: &str| super::seen(pods.get(&ns, pod_name).as_deref());
        if !self.expectations.satisfied(&key, lookup) {
            return None;
        }
        Some(Identity { ns, name, uid, key })
    }
}

/// When to look at a workload again: after the seconds its reconcile asked for, else after
/// [`RESYNC`].
pub fn requeue(after_seconds: Option<i64>) -> Action {
    Action::requeue(
        after_seconds
            .and_then(|s| u64::try_from(s).ok())
            .map_or(RESYNC, Duration::from_secs),
    )
}

/// Deletes the revisions of `revs` that `names` names (each with its UID as precondition);
/// a name not among them is skipped.
pub async fn delete_revisions(
    api: &Api<ControllerRevision>,
    revs: &[ControllerRevision],
    names: &[String],
) -> Result<(), ReconcileError> {
    for rev_name in names {
        if let Some(rev) = revs
            .iter()
            .find(|r| r.metadata.name.as_deref() == Some(rev_name))
        {
            write::delete(
                api,
                rev_name,
                rev.metadata.uid.as_deref().unwrap_or_default(),
            )
            .await?;
        }
    }
    Ok(())
}

/// Wires a workload controller's triggers now ([`wire_workload`], plus what `wire_more` adds)
/// and returns its loop, which starts once the cache has its first lists and runs until
/// `shutdown`. `own` picks the workload kind's informer; `component` names the events' source.
pub fn workload_controller<K, F, Fut>(
    name: &'static str,
    component: &'static str,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
    own: fn(&Cache) -> &Informer<K>,
    wire_more: impl FnOnce(&Cache, &Queue<K>),
    reconcile: F,
) -> impl Future<Output = ()> + Send + 'static
where
    K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
    F: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, ReconcileError>> + Send + 'static,
{
    let (queue, inbox) = runner::queue::<K>();
    let ctx = Arc::new(Ctx {
        recorder: shared.recorder.for_component(component),
        shared: shared.clone(),
        expectations: Expectations::default(),
    });
    {
        let ctx = ctx.clone();
        wire_workload(&shared.cache, own(&shared.cache), &queue, move |key| {
            ctx.expectations.forget(key)
        });
    }
    wire_more(&shared.cache, &queue);
    async move {
        shared.cache.ready().await;
        let store = own(&shared.cache).store();
        runner::run(name, store, inbox, ctx, 8, reconcile, shutdown).await;
    }
}

/// Copies of the objects of `informer` in `ns` whose controller has `uid`.
pub fn owned_copies<K>(informer: &Informer<K>, ns: &str, uid: &str) -> Vec<K>
where
    K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
{
    informer
        .filter(ns, |o| controlled_by(o.meta(), uid))
        .iter()
        .map(|o| (**o).clone())
        .collect()
}

/// True when `meta`'s controller reference points at the object with `uid`.
pub fn controlled_by(meta: &ObjectMeta, uid: &str) -> bool {
    meta.owner_references
        .iter()
        .flatten()
        .any(|r| r.controller == Some(true) && r.uid == uid)
}

/// The name of the Kruise workload of `kind` (`apps.kruise.io`) that controls `meta`, if any: a
/// core StatefulSet's pods carry the same kind under `apps/v1` and are not ours.
pub fn owner_name<'a>(meta: &'a ObjectMeta, kind: &str) -> Option<&'a str> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|r| {
            r.controller == Some(true)
                && r.kind == kind
                && r.api_version.starts_with("apps.kruise.io/")
        })
        .map(|r| r.name.as_str())
}

/// Queues the workload of `kind` that controls `meta`, if any.
pub fn enqueue_owner<K: Resource<DynamicType = ()>>(queue: &Queue<K>, meta: &ObjectMeta) {
    if let Some(name) = owner_name(meta, &K::kind(&())) {
        queue.enqueue(meta.namespace.as_deref().unwrap_or_default(), name);
    }
}

/// The current and update revisions of a CloneSet or Advanced StatefulSet, as the server has
/// them.
pub struct Revisions {
    pub current: ControllerRevision,
    pub update: ControllerRevision,
}

/// Settles the update revision `active` picked on the server, and records it in `revs`: a new
/// one is created (an existing one of its name and contents is taken instead), an older equal
/// one re-numbered. `None` on a hash collision (a revision of that name with other contents):
/// the caller bumps its `collisionCount`, and the next reconcile hashes again.
pub async fn settle_revisions(
    api: &Api<ControllerRevision>,
    active: &ActiveRevisions,
    revs: &mut Vec<ControllerRevision>,
) -> Result<Option<Revisions>, ReconcileError> {
    let mut update = active.update.clone();
    if active.create {
        match api.create(&PostParams::default(), &update).await {
            Ok(created) => update = created,
            Err(err) if write::code(&err) == Some(409) => {
                let rev_name = update.metadata.name.clone().unwrap_or_default();
                let existing = api.get(&rev_name).await?;
                if !equal_revision(&existing, &update) {
                    return Ok(None);
                }
                update = existing;
            }
            Err(err) => return Err(err.into()),
        }
        revs.push(update.clone());
    } else if active.renumber {
        update = api
            .replace(
                update.metadata.name.as_deref().unwrap_or_default(),
                &PostParams::default(),
                &update,
            )
            .await?;
        if let Some(r) = revs
            .iter_mut()
            .find(|r| r.metadata.name == update.metadata.name)
        {
            *r = update.clone();
        }
    }
    let current = if active.current.metadata.name == update.metadata.name {
        update.clone()
    } else {
        active.current.clone()
    };
    Ok(Some(Revisions { current, update }))
}

/// Wires a workload kind's informer, the pods and the ControllerRevisions to its queue: a
/// change to the workload queues it (a deletion forgets its expectations), a change to a pod or
/// a revision queues its controlling workload, and a relist of the workloads or the pods queues
/// them all.
pub fn wire_workload<K>(
    cache: &Cache,
    own: &Informer<K>,
    queue: &Queue<K>,
    forget: impl Fn(&str) + Send + Sync + 'static,
) where
    K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
{
    let all = runner::watch_own(own, queue, move |obj| forget(&key_of(obj)));
    {
        let q = queue.clone();
        cache.pods.on_change(move |change| match change {
            Change::Applied { old, new } => {
                enqueue_owner(&q, &new.metadata);
                if let Some(old) = old {
                    enqueue_owner(&q, &old.metadata);
                }
            }
            Change::Deleted(pod) => enqueue_owner(&q, &pod.metadata),
            Change::Resynced => all(),
        });
    }
    let q = queue.clone();
    cache.revisions.on_change(move |change| match change {
        Change::Applied { new, .. } => enqueue_owner(&q, &new.metadata),
        Change::Deleted(rev) => enqueue_owner(&q, &rev.metadata),
        Change::Resynced => {}
    });
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    use super::*;

    fn owned_by(kind: &str, api_version: &str, controller: bool) -> ObjectMeta {
        ObjectMeta {
            owner_references: Some(vec![OwnerReference {
                api_version: api_version.into(),
                kind: kind.into(),
                name: "owner".into(),
                uid: "u-1".into(),
                controller: Some(controller),
                ..Default::default()
            }]),
            ..Default::default()
        }
    }

    #[test]
    fn only_the_kruise_controller_reference_names_the_owner() {
        let kruise = owned_by("StatefulSet", "apps.kruise.io/v1beta1", true);
        assert_eq!(owner_name(&kruise, "StatefulSet"), Some("owner"));
        assert_eq!(owner_name(&kruise, "DaemonSet"), None);
        let core = owned_by("StatefulSet", "apps/v1", true);
        assert_eq!(owner_name(&core, "StatefulSet"), None);
        let not_controller = owned_by("CloneSet", "apps.kruise.io/v1alpha1", false);
        assert_eq!(owner_name(&not_controller, "CloneSet"), None);
        assert!(controlled_by(&kruise, "u-1"));
        assert!(!controlled_by(&not_controller, "u-1"));
        assert!(!controlled_by(&kruise, "u-2"));
    }
}
