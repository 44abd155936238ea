//! The object store: every object as a `serde_json::Value` plus its pre-serialized JSON, one global
//! resourceVersion counter, a bounded window of change events for watch resume, and the indexes
//! garbage collection needs (uid → object, owner uid → dependents).
//!
//! The store enforces storage rules (uids, timestamps, generation, resourceVersion preconditions,
//! finalizers holding deleted objects). Request semantics (status subresources, patches,
//! validation, admission) live in the HTTP layer; in-process callers can use [`Store`] directly to
//! seed objects fast (no admission, no schema validation).

mod delete;
mod lag;
mod obj;
mod snapshot;
mod write;

pub use delete::{DeleteRequest, Deleted};
pub use lag::Lag;
pub use obj::Obj;

use std::{
    collections::{BTreeMap, HashMap, HashSet, VecDeque},
    sync::{Arc, Mutex, MutexGuard},
};

use crate::kruise::KruiseVersion;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::{
    builtin,
    resources::{Registry, ResourceInfo},
    status::ApiError,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change, as delivered to watchers.
#[derive(Debug)]
pub struct StoreEvent {
    pub rv: u64,
    pub etype: EventType,
    pub key: Arc<str>,
    pub namespace: String,
    pub obj: Arc<Obj>,
    pub old: Option<Arc<Obj>>,
}

type ObjKey = (Arc<str>, String, String);
/// One resource's objects by (namespace, name).
type Table = BTreeMap<(String, String), Arc<Obj>>;

struct Subscriber {
    key: Option<Arc<str>>,
    namespace: Option<String>,
    tx: mpsc::UnboundedSender<Arc<StoreEvent>>,
    /// A client's watch: closed when it lags by more than the window holds (see [`Lag`]).
    lag: Option<Arc<Lag>>,
}

struct Inner {
    rv: u64,
    tables: HashMap<Arc<str>, Table>,
    window: VecDeque<Arc<StoreEvent>>,
    window_cap: usize,
    /// The JSON bytes of the objects the window's events carry, and their bound.
    window_bytes: usize,
    window_max_bytes: usize,
    compacted: u64,
    subscribers: Vec<Subscriber>,
    registry: Arc<Registry>,
    uids: HashMap<String, ObjKey>,
    dependents: HashMap<String, HashSet<ObjKey>>,
}

impl Inner {
    /// Drops the oldest events beyond the window's bounds (like etcd compaction: a watch from
    /// before the oldest kept event gets 410 Gone).
    fn trim_window(&mut self) {
        while self.window.len() > self.window_cap
            || (self.window_bytes > self.window_max_bytes && self.window.len() > 1)
        {
            let Some(e) = self.window.pop_front() else {
                break;
            };
            self.window_bytes = self.window_bytes.saturating_sub(e.obj.weight());
            self.compacted = e.rv;
        }
    }
}

/// Where a new watch starts.
#[derive(Debug, Clone, Copy)]
pub enum WatchFrom {
    /// Synthetic ADDED events for every current object, then changes.
    InitialState,
    /// Changes after this resourceVersion (410 Gone if it left the window).
    Version(u64),
}

/// A registered watch: events to replay, then the live channel.
pub struct Subscription {
    pub replay: Vec<Arc<StoreEvent>>,
    pub initial: Vec<Arc<Obj>>,
    pub rv: u64,
    pub rx: mpsc::UnboundedReceiver<Arc<StoreEvent>>,
    /// For a client's watch ([`Store::watch_client`]): its backlog; the store closes it (and
    /// stops queueing) once the watcher lags by more than the watch window holds.
    pub lag: Option<Arc<Lag>>,
}

/// How a delete cascades to dependents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    Background,
    Foreground,
    Orphan,
}

/// The result of a list.
pub struct ListResult {
    pub items: Vec<Arc<Obj>>,
    pub rv: u64,
    pub continue_after: Option<(String, String)>,
    /// With a continue token: how many objects (matching or not) the listed range holds after
    /// this page (what etcd counts for `remainingItemCount`).
    pub remaining: usize,
}

const CRD_KEY: &str = "apiextensions.k8s.io/customresourcedefinitions";
const NS_KEY: &str = "/namespaces";
/// Events kept for watch resume (all resources together); older versions get 410 Gone.
pub const DEFAULT_WINDOW: usize = 20_000;
/// ... and at most this many bytes of their objects' JSON (about 5,000 pod changes): a real
/// server's watch cache keeps a few minutes of history, not a fixed count of whole objects,
/// and creating 100,000 pods must not hold 20,000 superseded pods alive.
pub const DEFAULT_WINDOW_BYTES: usize = 24 << 20;

/// The object store (share it as `Arc<Store>`).
pub struct Store {
    inner: Mutex<Inner>,
    builtin: Vec<ResourceInfo>,
    /// The Kruise release whose CRDs this store was created with (and whose conversion and
    /// admission rules it follows).
    kruise_version: KruiseVersion,
}

impl Store {
    /// A store with the default namespaces, the built-in Kruise CRDs of `kruise_version` and
    /// Kruise Rollout's.
    pub fn new(kruise_version: KruiseVersion) -> anyhow::Result<Arc<Store>> {
        Self::with_crds(kruise_version, true)
    }

    /// A store with the default namespaces, the built-in Kruise CRDs of `kruise_version`, and
    /// Kruise Rollout's when `kruise_rollout` (a cluster with Kruise but without Kruise Rollout
    /// serves none of `rollouts.kruise.io`).
    pub fn with_crds(
        kruise_version: KruiseVersion,
        kruise_rollout: bool,
    ) -> anyhow::Result<Arc<Store>> {
        let builtin = builtin::builtin_resources();
        let store = Arc::new(Store {
            kruise_version,
            inner: Mutex::new(Inner {
                rv: 1,
                tables: HashMap::new(),
                window: VecDeque::new(),
                window_cap: DEFAULT_WINDOW,
                window_bytes: 0,
                window_max_bytes: DEFAULT_WINDOW_BYTES,
                compacted: 1,
                subscribers: Vec::new(),
                registry: Arc::new(Registry::new(builtin.clone(), &[])),
                uids: HashMap::new(),
                dependents: HashMap::new(),
            }),
            builtin,
        });
        for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            store.create(
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
            )?;
        }
        for crd in builtin::kruise_crds(kruise_version)? {
            store.create(crd)?;
        }
        if kruise_rollout {
            for crd in builtin::kruise_rollout_crds()? {
                store.create(crd)?;
            }
        }
        // A real server's watch cache starts from a list at start-up: nothing older can be
        // watched from (a watch from resourceVersion 1 is "too old"), as here.
        store.compact();
        Ok(store)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The Kruise release this store serves the CRDs of.
    pub fn kruise_version(&self) -> KruiseVersion {
        self.kruise_version
    }

    /// The current resource table.
    pub fn registry(&self) -> Arc<Registry> {
        self.lock().registry.clone()
    }

    /// The latest resourceVersion.
    pub fn current_rv(&self) -> u64 {
        self.lock().rv
    }

    /// Drop the event window (like etcd compaction): watches from older versions get 410 Gone.
    pub fn compact(&self) {
        let mut g = self.lock();
        g.window.clear();
        g.window_bytes = 0;
        g.compacted = g.rv;
    }

    /// How many events the watch window keeps.
    pub fn set_event_window(&self, n: usize) {
        let mut g = self.lock();
        g.window_cap = n.max(1);
        g.trim_window();
    }

    /// How many bytes of object JSON the watch window keeps (at least its newest event).
    pub fn set_event_window_bytes(&self, bytes: usize) {
        let mut g = self.lock();
        g.window_max_bytes = bytes;
        g.trim_window();
    }

    /// The watch window's size: events and their objects' JSON bytes.
    pub fn event_window(&self) -> (usize, usize) {
        let g = self.lock();
        (g.window.len(), g.window_bytes)
    }

    fn resource_for(&self, v: &Value) -> Result<Arc<ResourceInfo>, ApiError> {
        let api_version = v["apiVersion"].as_str().unwrap_or("");
        let kind = v["kind"].as_str().unwrap_or("");
        self.registry().by_kind(api_version, kind).ok_or_else(|| {
            ApiError::bad_request(format!("no resource serves {api_version} {kind}"))
        })
    }

    /// Delete an object by apiVersion, kind, namespace and name (background cascade).
    pub fn delete_value(
        &self,
        api_version: &str,
        kind: &str,
        ns: &str,
        name: &str,
    ) -> Result<(), ApiError> {
        let res = self.registry().by_kind(api_version, kind).ok_or_else(|| {
            ApiError::bad_request(format!("no resource serves {api_version} {kind}"))
        })?;
        self.delete(&res, ns, name, None, None, Propagation::Background)
            .map(|_| ())
    }

    /// Create an object from its full JSON (apiVersion/kind pick the resource). For seeding.
    pub fn create(&self, mut v: Value) -> Result<Value, ApiError> {
        let res = self.resource_for(&v)?;
        // Defaults are not admission: a seeded pod is held as a real server would hold it.
        if res.group.is_empty() && res.kind == "Pod" {
            super::poddefaults::defaults(&mut v);
        }
        let ns = v["metadata"]["namespace"]
            .as_str()
            .unwrap_or("default")
            .to_string();
        self.insert(&res, &ns, v).map(|o| o.value())
    }

    /// Replace an object (apiVersion/kind/metadata pick it); a set resourceVersion is a precondition.
    pub fn update(&self, v: Value) -> Result<Value, ApiError> {
        let res = self.resource_for(&v)?;
        let ns = v["metadata"]["namespace"]
            .as_str()
            .unwrap_or("default")
            .to_string();
        let name = v["metadata"]["name"].as_str().unwrap_or("").to_string();
        self.replace(&res, &ns, &name, v).map(|o| o.value())
    }

    /// Read one object by apiVersion, kind, namespace (ignored for cluster kinds) and name, as
    /// served at that version.
    pub fn get_value(&self, api_version: &str, kind: &str, ns: &str, name: &str) -> Option<Value> {
        let res = self.registry().by_kind(api_version, kind)?;
        self.get(&res, ns, name)
            .ok()
            .map(|o| super::read::output_value(&res, &o))
    }

    /// All objects of a kind (every namespace when `ns` is None), as served at `api_version`.
    pub fn list_values(&self, api_version: &str, kind: &str, ns: Option<&str>) -> Vec<Value> {
        let Some(res) = self.registry().by_kind(api_version, kind) else {
            return Vec::new();
        };
        self.list(&res, ns, &|_| true, None, None)
            .items
            .iter()
            .map(|o| super::read::output_value(&res, o))
            .collect()
    }

    fn nskey(res: &ResourceInfo, ns: &str) -> String {
        if res.namespaced {
            ns.to_string()
        } else {
            String::new()
        }
    }

    pub fn get(&self, res: &ResourceInfo, ns: &str, name: &str) -> Result<Arc<Obj>, ApiError> {
        let g = self.lock();
        g.tables
            .get(&res.key)
            .and_then(|t| t.get(&(Self::nskey(res, ns), name.to_string())))
            .cloned()
            .ok_or_else(|| ApiError::not_found(&res.plural, &res.group, name))
    }

    /// Find an object by uid.
    pub fn get_by_uid(&self, uid: &str) -> Option<(Arc<str>, Arc<Obj>)> {
        let g = self.lock();
        let (key, ns, name) = g.uids.get(uid)?;
        let obj = g.tables.get(key)?.get(&(ns.clone(), name.clone()))?.clone();
        Some((key.clone(), obj))
    }

    /// Objects whose ownerReferences name this uid.
    pub fn dependents_of(&self, uid: &str) -> Vec<(Arc<str>, Arc<Obj>)> {
        let g = self.lock();
        g.dependents
            .get(uid)
            .into_iter()
            .flatten()
            .filter_map(|(k, ns, n)| {
                let o = g.tables.get(k)?.get(&(ns.clone(), n.clone()))?;
                Some((k.clone(), o.clone()))
            })
            .collect()
    }

    /// Every object in a namespace, with its storage key.
    pub fn in_namespace(&self, ns: &str) -> Vec<(Arc<str>, Arc<Obj>)> {
        let g = self.lock();
        let mut out = Vec::new();
        for (k, t) in &g.tables {
            for ((ons, _), o) in t.range((ns.to_string(), String::new())..) {
                if ons != ns {
                    break;
                }
                out.push((k.clone(), o.clone()));
            }
        }
        out
    }

    /// List matching objects in key order, paged by `limit` after `after` (namespace, name).
    pub fn list(
        &self,
        res: &ResourceInfo,
        ns: Option<&str>,
        filter: &dyn Fn(&Obj) -> bool,
        limit: Option<usize>,
        after: Option<(String, String)>,
    ) -> ListResult {
        let g = self.lock();
        let mut items = Vec::new();
        let mut continue_after = None;
        let mut remaining = 0;
        if let Some(t) = g.tables.get(&res.key) {
            let ns_key = ns.filter(|_| res.namespaced).map(str::to_string);
            let start = match (&after, &ns_key) {
                (Some(a), _) => std::ops::Bound::Excluded(a.clone()),
                (None, Some(n)) => std::ops::Bound::Included((n.clone(), String::new())),
                (None, None) => std::ops::Bound::Unbounded,
            };
            let in_range = |ons: &String| ns_key.as_ref().is_none_or(|n| n == ons);
            let mut range = t.range((start, std::ops::Bound::Unbounded));
            for ((ons, oname), o) in range.by_ref() {
                if !in_range(ons) {
                    break;
                }
                if !filter(o) {
                    continue;
                }
                if limit.is_some_and(|l| items.len() >= l) {
                    continue_after = items
                        .last()
                        .map(|_: &Arc<Obj>| (ons.clone(), oname.clone()));
                    break;
                }
                items.push(o.clone());
            }
            if continue_after.is_some() {
                remaining = 1 + range.take_while(|((ons, _), _)| in_range(ons)).count();
            }
            if continue_after.is_some() {
                // The token names the last returned item, not the first unreturned one.
                continue_after = items.last().map(|o: &Arc<Obj>| {
                    (
                        Self::nskey(res, o.head["metadata"]["namespace"].as_str().unwrap_or("")),
                        o.head["metadata"]["name"]
                            .as_str()
                            .unwrap_or("")
                            .to_string(),
                    )
                });
            }
        }
        ListResult {
            items,
            rv: g.rv,
            continue_after,
            remaining,
        }
    }

    /// Up to `n` keys (namespace, name) of `res` from `from` on, in key order, while the
    /// namespace starts with `ns_prefix` (those namespaces sort together).
    pub fn pod_keys_after(
        &self,
        res: &ResourceInfo,
        ns_prefix: &str,
        from: std::ops::Bound<(String, String)>,
        n: usize,
    ) -> Vec<(String, String)> {
        let g = self.lock();
        let Some(t) = g.tables.get(&res.key) else {
            return Vec::new();
        };
        t.range((from, std::ops::Bound::Unbounded))
            .map(|(k, _)| k)
            .skip_while(|(ns, _)| ns.as_str() < ns_prefix)
            .take_while(|(ns, _)| ns.starts_with(ns_prefix))
            .take(n)
            .cloned()
            .collect()
    }

    /// Register a watch on one resource (or all when `key` is None), optionally one namespace.
    /// For the server's own loops (GC, aggregation, logs, exec): their queue is not bounded.
    pub fn watch(
        &self,
        key: Option<Arc<str>>,
        namespace: Option<String>,
        from: WatchFrom,
    ) -> Result<Subscription, ApiError> {
        self.subscribe(key, namespace, from, None)
    }

    /// Register a client's watch, as [`watch`](Self::watch), with a bounded backlog: once it
    /// lags by more than the watch window holds, the store stops queueing for it and
    /// [`Lag::closed`] fires (the real server terminates a watcher that cannot keep up).
    pub fn watch_client(
        &self,
        key: Option<Arc<str>>,
        namespace: Option<String>,
        from: WatchFrom,
    ) -> Result<Subscription, ApiError> {
        self.subscribe(key, namespace, from, Some(Lag::new()))
    }

    fn subscribe(
        &self,
        key: Option<Arc<str>>,
        namespace: Option<String>,
        from: WatchFrom,
        lag: Option<Arc<Lag>>,
    ) -> Result<Subscription, ApiError> {
        let mut g = self.lock();
        let (tx, rx) = mpsc::unbounded_channel();
        let matches = |e: &StoreEvent| {
            key.as_ref().is_none_or(|k| *k == e.key)
                && namespace.as_ref().is_none_or(|n| *n == e.namespace)
        };
        let mut replay = Vec::new();
        let mut initial = Vec::new();
        match from {
            WatchFrom::Version(v) => {
                if v < g.compacted {
                    return Err(ApiError::gone(format!(
                        "too old resource version: {v} ({})",
                        g.compacted
                    )));
                }
                replay = g
                    .window
                    .iter()
                    .filter(|e| e.rv > v && matches(e))
                    .cloned()
                    .collect();
            }
            WatchFrom::InitialState => {
                let tables: Vec<&Table> = match &key {
                    Some(k) => g.tables.get(k).into_iter().collect(),
                    None => g.tables.values().collect(),
                };
                for t in tables {
                    for ((ons, _), o) in t {
                        if namespace.as_ref().is_none_or(|n| n == ons) {
                            initial.push(o.clone());
                        }
                    }
                }
            }
        }
        let rv = g.rv;
        g.subscribers.push(Subscriber {
            key,
            namespace,
            tx,
            lag: lag.clone(),
        });
        Ok(Subscription {
            replay,
            initial,
            rv,
            rx,
            lag,
        })
    }
}
