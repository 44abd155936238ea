//! The controllers' shared informer cache: one cluster-wide watch and reflector store per kind,
//! read by every controller, with a fan-out of each change to the controllers' trigger mappers.
//!
//! Upstream's controller-runtime shares one informer per kind between all controllers; so do we:
//! the CloneSet, Advanced StatefulSet, DaemonSet, SidecarSet, PUB and PodProbeMarker controllers
//! all read the one pod store. A relist (watch restart) cannot report the objects that vanished
//! meanwhile, so it is announced as [`Change::Resynced`] and every controller re-queues its keys.

use std::{
    collections::{BTreeMap, HashMap},
    fmt::Debug,
    sync::{Arc, Mutex},
};

use futures::{Stream, StreamExt as _};
use kruise_client::watchlist::{ListModes, Lister};
use kube::{
    Api, Client, Resource,
    api::DynamicObject,
    core::ApiResource,
    runtime::{
        WatchStreamExt as _,
        reflector::{self, Store, store::Writer},
        watcher::{self, Event},
    },
};
use serde::de::DeserializeOwned;
use tokio::task::JoinSet;

/// One change to a kind's store, as the trigger mappers see it.
#[derive(Debug)]
pub enum Change<'a, K> {
    /// Added or modified (`old` is what the store held before, if anything).
    Applied { old: Option<Arc<K>>, new: &'a K },
    /// Deleted (its last known state).
    Deleted(&'a K),
    /// The watch relisted: anything may have changed, including deletions it cannot name.
    Resynced,
}

type Handler<K> = Box<dyn Fn(&Change<'_, K>) + Send + Sync>;

/// The store's objects by namespace, then by name: a controller reads one namespace's objects
/// without a scan of the whole cluster (at 100,000 pods, a CloneSet reconcile walked them all).
type NsIndex<K> = Arc<std::sync::RwLock<HashMap<String, BTreeMap<String, Arc<K>>>>>;

/// The writer of a kind's store and of its namespace index, applied together.
struct Feed<K: Resource<DynamicType = ()> + Clone + 'static> {
    writer: Writer<K>,
    store: Store<K>,
    index: NsIndex<K>,
}

impl<K> Feed<K>
where
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    fn apply(&mut self, event: &Event<K>) {
        self.writer.apply_watcher_event(event);
        let Ok(mut index) = self.index.write() else {
            return;
        };
        let place = |obj: &K| {
            let meta = obj.meta();
            (
                meta.namespace.clone().unwrap_or_default(),
                meta.name.clone().unwrap_or_default(),
            )
        };
        match event {
            Event::Apply(obj) => {
                if let Some(stored) = self.store.get(&reflector::ObjectRef::from_obj(obj)) {
                    let (ns, name) = place(obj);
                    index.entry(ns).or_default().insert(name, stored);
                }
            }
            Event::Delete(obj) => {
                let (ns, name) = place(obj);
                if let Some(names) = index.get_mut(&ns) {
                    names.remove(&name);
                    if names.is_empty() {
                        index.remove(&ns);
                    }
                }
            }
            // A (re)list swapped the whole store in: index it again, once.
            Event::InitDone => {
                index.clear();
                for obj in self.store.state() {
                    let (ns, name) = place(&obj);
                    index.entry(ns).or_default().insert(name, obj);
                }
            }
            Event::Init | Event::InitApply(_) => {}
        }
    }
}

/// A kind's store and the handlers that hear about its changes.
pub struct Informer<K: Resource<DynamicType = ()> + Clone + 'static> {
    store: Store<K>,
    index: NsIndex<K>,
    writer: Mutex<Option<Feed<K>>>,
    handlers: Arc<Mutex<Vec<Handler<K>>>>,
    /// True once the first list is in the store. Waiters wait on this, not on
    /// `Store::wait_until_ready`: kube-runtime's one-shot behind it keeps a single waker, so of
    /// several tasks waiting at once only the last would ever wake.
    listed: tokio::sync::watch::Sender<bool>,
}

impl<K> Informer<K>
where
    K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
{
    fn new() -> Self {
        let (store, writer) = reflector::store();
        let index = NsIndex::default();
        Self {
            writer: Mutex::new(Some(Feed {
                writer,
                store: store.clone(),
                index: index.clone(),
            })),
            store,
            index,
            handlers: Arc::new(Mutex::new(Vec::new())),
            listed: tokio::sync::watch::channel(false).0,
        }
    }

    /// The store (a cheap clone of the reader).
    pub fn store(&self) -> Store<K> {
        self.store.clone()
    }

    /// Every object in the store, by namespace and name (see [`Informer::filter`]).
    pub fn all(&self) -> Vec<Arc<K>> {
        let mut out = self.store.state();
        out.sort_by(|a, b| {
            let (a, b) = (a.meta(), b.meta());
            (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name))
        });
        out
    }

    /// The object `namespace/name` (namespace `""` for cluster-scoped kinds).
    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        let mut key = reflector::ObjectRef::<K>::new(name);
        if !namespace.is_empty() {
            key = key.within(namespace);
        }
        self.store.get(&key)
    }

    /// Objects in `namespace` matching `keep`, by name. The store's own order is a hash map's:
    /// sorting makes every tie in the controllers' orderings (pods alike in phase, readiness,
    /// restarts and age) fall by name, as it does for the plan API, which reads a LIST (in key
    /// order), so a prediction names the pods the controller then picks.
    pub fn filter(&self, namespace: &str, keep: impl Fn(&K) -> bool) -> Vec<Arc<K>> {
        let Ok(index) = self.index.read() else {
            return Vec::new();
        };
        index.get(namespace).map_or_else(Vec::new, |names| {
            names.values().filter(|o| keep(o)).cloned().collect()
        })
    }

    /// Registers a handler for every later change. Handlers must be cheap (map to keys, send).
    pub fn on_change(&self, handler: impl Fn(&Change<'_, K>) + Send + Sync + 'static) {
        if let Ok(mut handlers) = self.handlers.lock() {
            handlers.push(Box::new(handler));
        }
    }

    /// Waits until the first list is in the store (any number of tasks may wait at once).
    pub async fn ready(&self) {
        let mut rx = self.listed.subscribe();
        let _ = rx.wait_for(|listed| *listed).await;
    }

    /// The kind is not served: its store is ready, empty, and never changes.
    fn run_empty(&self) {
        if let Some(mut writer) = self.writer.lock().ok().and_then(|mut w| w.take()) {
            writer.apply(&Event::Init);
            writer.apply(&Event::InitDone);
        }
        // Its (empty) list is complete: waiters must not wait for a watch that never starts.
        self.listed.send_replace(true);
    }

    /// Starts watching with `stream`; the store fills and handlers are called for each change.
    fn run<S>(&self, tasks: &mut JoinSet<()>, name: &'static str, stream: S)
    where
        S: Stream<Item = Result<Event<K>, watcher::Error>> + Send + 'static,
    {
        let Some(mut writer) = self.writer.lock().ok().and_then(|mut w| w.take()) else {
            return;
        };
        let store = self.store.clone();
        let handlers = self.handlers.clone();
        let listed = self.listed.clone();
        tasks.spawn(async move {
            let mut stream = std::pin::pin!(stream);
            let mut relisting = false;
            let mut listed_once = false;
            while let Some(item) = stream.next().await {
                let event = match item {
                    Ok(event) => event,
                    Err(err) => {
                        tracing::warn!(kind = name, "controllers: watch error (retrying): {err}");
                        continue;
                    }
                };
                let old = match &event {
                    Event::Apply(obj) => store.get(&reflector::ObjectRef::from_obj(obj)),
                    _ => None,
                };
                writer.apply(&event);
                if matches!(event, Event::InitDone) {
                    listed.send_replace(true);
                }
                let Ok(handlers) = handlers.lock() else {
                    continue;
                };
                let change = match &event {
                    Event::Apply(obj) => Change::Applied { old, new: obj },
                    Event::Delete(obj) => Change::Deleted(obj),
                    Event::Init => {
                        relisting = true;
                        continue;
                    }
                    Event::InitApply(_) => continue,
                    Event::InitDone => {
                        relisting = false;
                        if !listed_once {
                            tracing::debug!(kind = name, "controllers: first list done");
                        }
                        listed_once = true;
                        Change::Resynced
                    }
                };
                if relisting {
                    continue;
                }
                for handler in handlers.iter() {
                    handler(&change);
                }
            }
        });
    }
}

/// Watches the whole cluster for `K` at its Rust type's version, managedFields dropped; by
/// streaming list where `lister`'s server allows it.
pub fn watch_typed<K>(
    client: &Client,
    lister: &Lister,
) -> impl Stream<Item = Result<Event<K>, watcher::Error>> + use<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + 'static,
{
    watcher(lister, Api::<K>::all(client.clone())).modify(|obj: &mut K| {
        obj.meta_mut().managed_fields = None;
    })
}

/// Watches the whole cluster for the kind at `ar` (another served version), mapping each object
/// into `K` with `convert`; an object that does not map is skipped with a warning.
pub fn watch_mapped<K>(
    client: &Client,
    lister: &Lister,
    ar: &ApiResource,
    convert: fn(&str, serde_json::Value) -> Result<K, serde_json::Error>,
) -> impl Stream<Item = Result<Event<K>, watcher::Error>> + use<K>
where
    K: Resource<DynamicType = ()> + Clone + Debug + Send + 'static,
{
    let version = ar.version.clone();
    let kind = ar.kind.clone();
    kruise_client::events::map_events(
        watcher(lister, Api::<DynamicObject>::all_with(client.clone(), ar)),
        move |mut obj: DynamicObject| {
            obj.metadata.managed_fields = None;
            let name = obj.metadata.name.clone().unwrap_or_default();
            match serde_json::to_value(&obj).and_then(|v| convert(&version, v)) {
                Ok(converted) => Some(converted),
                Err(err) => {
                    tracing::warn!(%kind, %name, %err, "controllers: cannot read an object; skipping it");
                    None
                }
            }
        },
    )
}

/// A streaming list first, paged lists of 500 where the server refuses them.
fn watcher<K>(
    lister: &Lister,
    api: Api<K>,
) -> impl Stream<Item = Result<Event<K>, watcher::Error>> + use<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    lister
        .watcher(api, watcher::Config::default().page_size(500), |_| {})
        .default_backoff()
}

/// The informers of every kind the controllers read.
pub struct Cache {
    pub pods: Informer<k8s_openapi::api::core::v1::Pod>,
    pub nodes: Informer<k8s_openapi::api::core::v1::Node>,
    pub pvcs: Informer<k8s_openapi::api::core::v1::PersistentVolumeClaim>,
    pub revisions: Informer<k8s_openapi::api::apps::v1::ControllerRevision>,
    pub clonesets: Informer<crate::api::CloneSet>,
    pub statefulsets: Informer<crate::api::StatefulSet>,
    pub daemonsets: Informer<crate::api::DaemonSet>,
    pub sidecarsets: Informer<crate::api::SidecarSet>,
    pub crrs: Informer<crate::api::ContainerRecreateRequest>,
    pub probe_markers: Informer<crate::api::PodProbeMarker>,
    pub node_probes: Informer<crate::api::NodePodProbe>,
    pub pubs: Informer<crate::api::PodUnavailableBudget>,
    /// Built-in workloads, for the PUB controller's replica counts (upstream's controller
    /// finder).
    pub deployments: Informer<k8s_openapi::api::apps::v1::Deployment>,
    pub replicasets: Informer<k8s_openapi::api::apps::v1::ReplicaSet>,
    pub k8s_statefulsets: Informer<k8s_openapi::api::apps::v1::StatefulSet>,
    /// Kruise Rollout (`rollouts.kruise.io` v1beta1), watched only when served.
    pub rollouts: Informer<crate::api::rollout::Rollout>,
    pub batchreleases: Informer<crate::api::rollout::BatchRelease>,
    tasks: Mutex<JoinSet<()>>,
}

/// The served version of each kind whose version the server may choose (CloneSet: v1alpha1 or
/// v1beta1, read and written at the version the server serves newest).
#[derive(Debug, Clone, Default)]
pub struct Versions {
    /// Set when CloneSets are served only (or preferably) at a version other than v1alpha1.
    pub cloneset: Option<ApiResource>,
    /// Set when Advanced DaemonSets are stored at v1beta1 (Kruise v1.9): read and written there,
    /// so no field is lost to a version without a conversion webhook.
    pub daemonset: Option<ApiResource>,
    /// Set when SidecarSets are stored at v1beta1 (Kruise v1.9).
    pub sidecarset: Option<ApiResource>,
    /// The Kruise kinds the server serves (`CloneSet`, `SidecarSet`, ...): a kind it lacks is
    /// not watched, its store stays empty and its controller idle.
    pub served: std::collections::BTreeSet<String>,
    /// Whether `rollouts.kruise.io/v1beta1` (Rollout and BatchRelease) is served.
    pub rollouts: bool,
}

impl Versions {
    /// Every Kruise kind served (for tests and in-process clusters that serve them all).
    pub fn all_served() -> Self {
        Self {
            cloneset: None,
            daemonset: None,
            sidecarset: None,
            served: KRUISE_KINDS.iter().map(|k| (*k).to_owned()).collect(),
            rollouts: false,
        }
    }

    fn serves(&self, kind: &str) -> bool {
        self.served.contains(kind)
    }
}

/// The Kruise kinds the controllers watch.
pub const KRUISE_KINDS: [&str; 8] = [
    "CloneSet",
    "StatefulSet",
    "DaemonSet",
    "SidecarSet",
    "ContainerRecreateRequest",
    "PodProbeMarker",
    "NodePodProbe",
    "PodUnavailableBudget",
];

impl Cache {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            pods: Informer::new(),
            nodes: Informer::new(),
            pvcs: Informer::new(),
            revisions: Informer::new(),
            clonesets: Informer::new(),
            statefulsets: Informer::new(),
            daemonsets: Informer::new(),
            sidecarsets: Informer::new(),
            crrs: Informer::new(),
            probe_markers: Informer::new(),
            node_probes: Informer::new(),
            pubs: Informer::new(),
            deployments: Informer::new(),
            replicasets: Informer::new(),
            k8s_statefulsets: Informer::new(),
            rollouts: Informer::new(),
            batchreleases: Informer::new(),
            tasks: Mutex::new(JoinSet::new()),
        })
    }

    /// Starts every watch. Register handlers before: changes before registration are not replayed
    /// (the first list is, as [`Change::Resynced`]).
    pub fn start(&self, client: &Client, versions: &Versions) {
        let Ok(mut tasks) = self.tasks.lock() else {
            return;
        };
        let t = &mut *tasks;
        // One cache watches one server: what it refuses is remembered for this cache's watches.
        let lister = &Lister::with_memory("controllers", ListModes::new());
        self.pods.run(t, "Pod", watch_typed(client, lister));
        self.nodes.run(t, "Node", watch_typed(client, lister));
        self.pvcs
            .run(t, "PersistentVolumeClaim", watch_typed(client, lister));
        self.revisions
            .run(t, "ControllerRevision", watch_typed(client, lister));
        match (&versions.cloneset, versions.serves("CloneSet")) {
            (_, false) => self.clonesets.run_empty(),
            (Some(ar), true) => self.clonesets.run(
                t,
                "CloneSet",
                watch_mapped(client, lister, ar, crate::api::cloneset::from_served_json),
            ),
            (None, true) => self
                .clonesets
                .run(t, "CloneSet", watch_typed(client, lister)),
        }
        macro_rules! kruise {
            ($informer:ident, $kind:literal) => {
                if versions.serves($kind) {
                    self.$informer.run(t, $kind, watch_typed(client, lister));
                } else {
                    self.$informer.run_empty();
                }
            };
        }
        kruise!(statefulsets, "StatefulSet");
        match (&versions.daemonset, versions.serves("DaemonSet")) {
            (_, false) => self.daemonsets.run_empty(),
            (Some(ar), true) => self.daemonsets.run(
                t,
                "DaemonSet",
                watch_mapped(client, lister, ar, crate::api::daemonset::from_served_json),
            ),
            (None, true) => self
                .daemonsets
                .run(t, "DaemonSet", watch_typed(client, lister)),
        }
        match (&versions.sidecarset, versions.serves("SidecarSet")) {
            (_, false) => self.sidecarsets.run_empty(),
            (Some(ar), true) => self.sidecarsets.run(
                t,
                "SidecarSet",
                watch_mapped(client, lister, ar, crate::api::sidecarset::from_served_json),
            ),
            (None, true) => self
                .sidecarsets
                .run(t, "SidecarSet", watch_typed(client, lister)),
        }
        kruise!(crrs, "ContainerRecreateRequest");
        kruise!(probe_markers, "PodProbeMarker");
        kruise!(node_probes, "NodePodProbe");
        kruise!(pubs, "PodUnavailableBudget");
        self.deployments
            .run(t, "Deployment", watch_typed(client, lister));
        self.replicasets
            .run(t, "ReplicaSet", watch_typed(client, lister));
        self.k8s_statefulsets
            .run(t, "apps/v1 StatefulSet", watch_typed(client, lister));
        if versions.rollouts {
            self.rollouts.run(t, "Rollout", watch_typed(client, lister));
            self.batchreleases
                .run(t, "BatchRelease", watch_typed(client, lister));
        } else {
            self.rollouts.run_empty();
            self.batchreleases.run_empty();
        }
    }

    /// Waits until every store has its first list (any number of tasks may wait: each informer
    /// signals its own readiness).
    pub async fn ready(&self) {
        futures::join!(
            self.pods.ready(),
            self.nodes.ready(),
            self.pvcs.ready(),
            self.revisions.ready(),
            self.clonesets.ready(),
            self.statefulsets.ready(),
            self.daemonsets.ready(),
        );
        futures::join!(
            self.sidecarsets.ready(),
            self.crrs.ready(),
            self.probe_markers.ready(),
            self.node_probes.ready(),
            self.pubs.ready(),
        );
        futures::join!(
            self.deployments.ready(),
            self.replicasets.ready(),
            self.k8s_statefulsets.ready(),
            self.rollouts.ready(),
            self.batchreleases.ready(),
        );
    }

    /// Stops every watch.
    pub async fn stop(&self) {
        let tasks = match self.tasks.lock() {
            Ok(mut t) => Some(std::mem::take(&mut *t)),
            Err(_) => None,
        };
        if let Some(mut tasks) = tasks {
            tasks.shutdown().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::{api::core::v1::Pod, apimachinery::pkg::apis::meta::v1::ObjectMeta};
    use kube::runtime::watcher::Event;

    use super::*;

    fn pod(ns: &str, name: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                namespace: Some(ns.into()),
                name: Some(name.into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn reads_come_out_by_name_whatever_the_store_order() {
        let informer = Informer::<Pod>::new();
        let mut writer = informer
            .writer
            .lock()
            .ok()
            .and_then(|mut w| w.take())
            .unwrap();
        writer.apply(&Event::Init);
        for name in [
            "web-q", "web-b", "web-x", "web-a", "web-m", "web-f", "web-c",
        ] {
            writer.apply(&Event::InitApply(pod("demo", name)));
        }
        writer.apply(&Event::InitApply(pod("a-ns", "zz")));
        writer.apply(&Event::InitDone);
        let names = |v: Vec<Arc<Pod>>| -> Vec<String> {
            v.iter()
                .map(|p| p.metadata.name.clone().unwrap_or_default())
                .collect()
        };
        assert_eq!(
            names(informer.filter("demo", |_| true)),
            [
                "web-a", "web-b", "web-c", "web-f", "web-m", "web-q", "web-x"
            ]
        );
        assert_eq!(names(informer.all())[0], "zz", "a-ns sorts first");
        // Later changes reach the namespace index: a new pod, a deleted one, one modified.
        writer.apply(&Event::Apply(pod("demo", "web-d")));
        writer.apply(&Event::Delete(pod("demo", "web-q")));
        let mut changed = pod("demo", "web-a");
        changed.metadata.labels = Some([("v".to_owned(), "2".to_owned())].into());
        writer.apply(&Event::Apply(changed));
        assert_eq!(
            names(informer.filter("demo", |_| true)),
            [
                "web-a", "web-b", "web-c", "web-d", "web-f", "web-m", "web-x"
            ]
        );
        assert!(
            informer.filter("demo", |p| p.metadata.labels.is_some())[0]
                .metadata
                .name
                .as_deref()
                == Some("web-a")
        );
        writer.apply(&Event::Delete(pod("a-ns", "zz")));
        assert!(informer.filter("a-ns", |_| true).is_empty());
    }
}
