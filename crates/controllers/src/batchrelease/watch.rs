//! What wakes a BatchRelease (research §8 "Watches"): the BatchRelease itself (its own watch,
//! on generation, annotation or deletion changes), its workload (mapped through the
//! control-info annotation, else by `workloadRef`), and the workload's pods (mapped through
//! their owner workload's control-info).

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
};

use futures::StreamExt as _;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::{
    Api, Client,
    runtime::{
        WatchStreamExt as _,
        reflector::{self, Store, store::Writer},
        watcher::{self, Event},
    },
};

use crate::{Shared, api::keys, api::rollout::BatchRelease, cache::Change, runner::Queue};

/// The BatchRelease named by a workload's control-info annotation.
fn control_info_name(meta: &ObjectMeta) -> Option<String> {
    let raw = meta
        .annotations
        .as_ref()?
        .get(keys::BATCH_RELEASE_CONTROL_INFO)?;
    serde_json::from_str::<OwnerReference>(raw)
        .ok()
        .map(|o| o.name)
}

/// Queues the BatchRelease(s) of workload `(group, kind)` `meta`: the one its control-info
/// names, else every BatchRelease of the namespace whose `workloadRef` names it.
pub fn enqueue_for_workload(
    queue: &Queue<BatchRelease>,
    store: &Store<BatchRelease>,
    group: &str,
    kind: &str,
    meta: &ObjectMeta,
) {
    let ns = meta.namespace.as_deref().unwrap_or_default();
    if let Some(name) = control_info_name(meta) {
        queue.enqueue(ns, &name);
        return;
    }
    let name = meta.name.as_deref().unwrap_or_default();
    for br in store.state() {
        let same_ns = br.metadata.namespace.as_deref() == Some(ns);
        let names = br
            .spec
            .workload_ref
            .as_ref()
            .is_some_and(|r| r.names(group, kind, name));
        if same_ns && names {
            queue.enqueue_obj(&br);
        }
    }
}

/// A workload informer's changes → its BatchReleases.
pub fn on_workload<K>(
    queue: &Queue<BatchRelease>,
    store: &Store<BatchRelease>,
    group: &'static str,
    kind: &'static str,
) -> impl Fn(&Change<'_, K>) + Send + Sync + 'static
where
    K: kube::Resource<DynamicType = ()>,
{
    let (queue, store) = (queue.clone(), store.clone());
    move |change| {
        let meta = match change {
            Change::Applied { new, .. } => new.meta(),
            Change::Deleted(obj) => obj.meta(),
            Change::Resynced => return,
        };
        enqueue_for_workload(&queue, &store, group, kind, meta);
    }
}

/// The pod's controlling owner `(apiVersion group, kind, name)`.
pub fn pod_owner(meta: &ObjectMeta) -> Option<(&str, &str, &str)> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
        .map(|r| {
            let group = r.api_version.split_once('/').map_or("", |(g, _)| g);
            (group, r.kind.as_str(), r.name.as_str())
        })
}

/// Pod changes that matter to a batch: created, deleted, revision label, batch labels or
/// readiness changed.
pub fn pod_matters(
    old: Option<&k8s_openapi::api::core::v1::Pod>,
    new: &k8s_openapi::api::core::v1::Pod,
) -> bool {
    let Some(old) = old else { return true };
    old.metadata.labels != new.metadata.labels
        || crate::api::pod::is_ready(old) != crate::api::pod::is_ready(new)
        || old.metadata.deletion_timestamp != new.metadata.deletion_timestamp
}

/// Pod changes → the BatchRelease of the owner workload's control-info.
pub fn on_pod(
    shared: &Arc<Shared>,
    queue: &Queue<BatchRelease>,
) -> impl Fn(&Change<'_, k8s_openapi::api::core::v1::Pod>) + Send + Sync + 'static {
    let (queue, shared) = (queue.clone(), shared.clone());
    move |change| {
        let pod = match change {
            Change::Applied { old, new } => {
                if !pod_matters(old.as_deref(), new) {
                    return;
                }
                *new
            }
            Change::Deleted(pod) => *pod,
            Change::Resynced => return,
        };
        let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
        let Some((group, kind, name)) = pod_owner(&pod.metadata) else {
            return;
        };
        let cache = &shared.cache;
        let meta = match (group, kind) {
            ("apps.kruise.io", "CloneSet") => {
                cache.clonesets.get(ns, name).map(|o| o.metadata.clone())
            }
            ("apps.kruise.io", "StatefulSet") => {
                cache.statefulsets.get(ns, name).map(|o| o.metadata.clone())
            }
            ("apps", "StatefulSet") => cache
                .k8s_statefulsets
                .get(ns, name)
                .map(|o| o.metadata.clone()),
            ("apps.kruise.io", "DaemonSet") => {
                cache.daemonsets.get(ns, name).map(|o| o.metadata.clone())
            }
            _ => None,
        };
        if let Some(br) = meta.as_ref().and_then(control_info_name) {
            queue.enqueue(ns, &br);
        }
    }
}

/// What of a BatchRelease, when it changes, is worth a reconcile (upstream's predicate:
/// generation, annotations, deletion).
#[derive(PartialEq)]
struct Seen {
    generation: Option<i64>,
    annotations: Option<BTreeMap<String, String>>,
    deleting: bool,
    finalizers: Option<Vec<String>>,
}

impl Seen {
    fn of(br: &BatchRelease) -> Self {
        Self {
            generation: br.metadata.generation,
            annotations: br.metadata.annotations.clone(),
            deleting: br.metadata.deletion_timestamp.is_some(),
            finalizers: br.metadata.finalizers.clone(),
        }
    }
}

/// Watches BatchReleases cluster-wide into `writer`, queueing the ones that changed in a way
/// that matters (every one after a relist).
pub async fn run_own_watch(
    client: Client,
    writer: Writer<BatchRelease>,
    queue: Queue<BatchRelease>,
) {
    let api: Api<BatchRelease> = Api::all(client);
    let seen: Mutex<BTreeMap<String, Seen>> = Mutex::default();
    let stream = reflector::reflector(
        writer,
        watcher::watcher(api, watcher::Config::default()).default_backoff(),
    );
    let mut stream = std::pin::pin!(stream);
    let mut relisted: Vec<BatchRelease> = Vec::new();
    while let Some(item) = stream.next().await {
        let event = match item {
            Ok(e) => e,
            Err(err) => {
                tracing::warn!(
                    kind = "BatchRelease",
                    "controllers: watch error (retrying): {err}"
                );
                continue;
            }
        };
        match event {
            Event::Apply(br) => {
                let key = crate::key_of(&br);
                let now = Seen::of(&br);
                let changed = seen
                    .lock()
                    .map(|mut s| {
                        s.insert(key, now)
                            .is_none_or(|before| before != Seen::of(&br))
                    })
                    .unwrap_or(true);
                if changed {
                    queue.enqueue_obj(&br);
                }
            }
            Event::Delete(br) => {
                if let Ok(mut s) = seen.lock() {
                    s.remove(&crate::key_of(&br));
                }
            }
            Event::Init => relisted.clear(),
            Event::InitApply(br) => relisted.push(br),
            Event::InitDone => {
                if let Ok(mut s) = seen.lock() {
                    s.clear();
                    for br in &relisted {
                        s.insert(crate::key_of(br), Seen::of(br));
                    }
                }
                for br in relisted.drain(..) {
                    queue.enqueue_obj(&br);
                }
            }
        }
    }
}
