//! The pod store: `SlimPod`s by (namespace, name), written by the pod watch, read by the app.
//!
//! kube-runtime's `Store` keys every object by an `ObjectRef` of four owned strings (name,
//! namespace, resourceVersion, UID) and its `Writer` clones every object it is given. This one
//! takes pods by value (no second copy on the way in) and keys them by the pod's own shared
//! name and interned namespace (no copy at all). Readers get `Arc`s, as from kube's store: an
//! unchanged pod is the same `Arc` until an event replaces it.

use std::{
    borrow::Borrow,
    collections::HashMap,
    hash::{BuildHasherDefault, Hash, Hasher},
    sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard},
};

use kube::runtime::watcher::Event;

use crate::api::{
    SlimPod,
    pod::{Str, intern::FxHasher},
};

/// A pod's key: its namespace and name (the pod's own `Str`s, shared).
#[derive(Clone, Debug)]
pub struct PodName {
    pub namespace: Str,
    pub name: Str,
}

impl PodName {
    pub fn of(pod: &SlimPod) -> Self {
        PodName {
            namespace: pod.metadata.namespace.clone().unwrap_or_default(),
            name: pod.metadata.name.clone().unwrap_or_default(),
        }
    }
}

/// What a key is looked up by: a `PodName` or two borrowed strings (no allocation to look up).
trait Pair {
    fn pair(&self) -> (&str, &str);
}

impl Pair for PodName {
    fn pair(&self) -> (&str, &str) {
        (&self.namespace, &self.name)
    }
}

impl Pair for (&str, &str) {
    fn pair(&self) -> (&str, &str) {
        *self
    }
}

impl Hash for dyn Pair + '_ {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.pair().hash(state);
    }
}

impl PartialEq for dyn Pair + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.pair() == other.pair()
    }
}

impl Eq for dyn Pair + '_ {}

impl Hash for PodName {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self as &dyn Pair).hash(state);
    }
}

impl PartialEq for PodName {
    fn eq(&self, other: &Self) -> bool {
        self.pair() == other.pair()
    }
}

impl Eq for PodName {}

impl<'a> Borrow<dyn Pair + 'a> for PodName {
    fn borrow(&self) -> &(dyn Pair + 'a) {
        self
    }
}

type PodMap = HashMap<PodName, Arc<SlimPod>, BuildHasherDefault<FxHasher>>;

/// Read handle of the pod store (cheap to clone).
#[derive(Clone, Default)]
pub struct PodStore {
    map: Arc<RwLock<PodMap>>,
}

impl PodStore {
    // A poisoned lock means a writer panicked mid-insert; the map itself is still whole.
    fn read(&self) -> RwLockReadGuard<'_, PodMap> {
        self.map.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, PodMap> {
        self.map.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The pod `namespace/name`, if the store has it.
    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<SlimPod>> {
        self.read().get(&(namespace, name) as &dyn Pair).cloned()
    }

    /// Every pod (in no particular order).
    pub fn state(&self) -> Vec<Arc<SlimPod>> {
        self.read().values().cloned().collect()
    }

    pub fn len(&self) -> usize {
        self.read().len()
    }

    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }
}

/// The one writer of a [`PodStore`]: the pod watch (tests write fixtures through it too).
pub struct PodWriter {
    store: PodStore,
    /// A relist's pods, swapped in whole when it ends (as kube's `Writer` does).
    buffer: Option<PodMap>,
}

impl PodWriter {
    pub fn as_reader(&self) -> PodStore {
        self.store.clone()
    }

    /// Inserts or replaces a pod (taken by value: stored as is).
    pub fn apply(&mut self, pod: SlimPod) {
        let key = PodName::of(&pod);
        self.store.write().insert(key, Arc::new(pod));
    }

    pub fn delete(&mut self, namespace: &str, name: &str) -> Option<Arc<SlimPod>> {
        self.store.write().remove(&(namespace, name) as &dyn Pair)
    }

    /// A relist starts: its pods collect aside until [`PodWriter::relist_done`].
    pub fn relist_start(&mut self) {
        self.buffer = Some(PodMap::default());
    }

    pub fn relist_apply(&mut self, pod: SlimPod) {
        let key = PodName::of(&pod);
        self.buffer
            .get_or_insert_with(PodMap::default)
            .insert(key, Arc::new(pod));
    }

    /// The relist ended: its pods replace the store's at once.
    pub fn relist_done(&mut self) {
        let fresh = self.buffer.take().unwrap_or_default();
        *self.store.write() = fresh;
    }

    /// Applies a kube watcher event of `SlimPod`s (a copy of each pod; fixtures and tests).
    pub fn apply_watcher_event(&mut self, event: &Event<SlimPod>) {
        match event {
            Event::Apply(pod) => self.apply(pod.clone()),
            Event::Delete(pod) => {
                let (ns, name) = pod.key();
                self.delete(ns, name);
            }
            Event::Init => self.relist_start(),
            Event::InitApply(pod) => self.relist_apply(pod.clone()),
            Event::InitDone => self.relist_done(),
        }
    }
}

/// A fresh, empty pod store and its writer.
pub fn pod_store() -> (PodStore, PodWriter) {
    let store = PodStore::default();
    (
        store.clone(),
        PodWriter {
            store,
            buffer: None,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(ns: &str, name: &str, phase: &str) -> SlimPod {
        let mut p = SlimPod::default();
        p.metadata.namespace = Some(ns.into());
        p.metadata.name = Some(Str::new(name));
        p.status.phase = Some(phase.into());
        p
    }

    #[test]
    fn pods_are_kept_by_namespace_and_name_and_replaced_in_place() {
        let (store, mut w) = pod_store();
        w.apply(pod("a", "x", "Pending"));
        w.apply(pod("b", "x", "Pending"));
        w.apply(pod("a", "x", "Running"));
        assert_eq!(store.len(), 2);
        let got = store.get("a", "x").expect("a/x");
        assert_eq!(got.status.phase.as_deref(), Some("Running"));
        assert!(store.get("a", "y").is_none() && store.get("c", "x").is_none());
        // The name is the pod's own (the key shares it).
        let key = PodName::of(&got);
        assert!(Str::ptr_eq(&key.name, got.metadata.name.as_ref().unwrap()));
        assert_eq!(
            w.delete("a", "x").map(|p| p.key().1.to_owned()).as_deref(),
            Some("x")
        );
        assert_eq!(store.len(), 1);
    }

    #[test]
    fn a_relist_replaces_the_store_only_when_it_ends() {
        let (store, mut w) = pod_store();
        w.apply_watcher_event(&Event::Apply(pod("a", "old", "Running")));
        w.apply_watcher_event(&Event::Init);
        w.apply_watcher_event(&Event::InitApply(pod("a", "new", "Running")));
        assert!(store.get("a", "old").is_some() && store.get("a", "new").is_none());
        w.apply_watcher_event(&Event::InitDone);
        assert!(store.get("a", "old").is_none() && store.get("a", "new").is_some());
        w.apply_watcher_event(&Event::Delete(pod("a", "new", "")));
        assert!(store.is_empty());
    }
}
