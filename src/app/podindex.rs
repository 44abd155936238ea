//! The pod rows and their indexes, kept up to date change by change.
//!
//! A pod event costs work proportional to the change, not to the cluster: the sorted rows are
//! patched in place (one binary search per changed pod; a merge only when pods come or go), and
//! the indexes the views, triage and predictions read are patched with them:
//! - pods by controller UID (a workload's pods without a scan of every pod),
//! - the pods that need attention (not all containers ready, or crash-looping): all triage
//!   reads of pods, so a healthy cluster of 100,000 pods triages in microseconds,
//! - when each pod's restart count last rose (triage's crash-loop window).

use std::{
    collections::{BTreeMap, HashMap},
    sync::Arc,
};

use jiff::Timestamp;

use super::{msg::PodKey, rows, rows::PodRow, stores::Stores};
use crate::api::SlimPod;

/// Indexes over the pod rows (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct PodIndex {
    /// Controller UID → its pods, sorted by name.
    by_owner: HashMap<String, Vec<Arc<PodRow>>>,
    /// Pods that need attention, by key.
    attention: BTreeMap<PodKey, Arc<PodRow>>,
    /// When each pod's restart count last rose (while the console watched).
    restart_rose: HashMap<PodKey, Timestamp>,
}

/// Whether a pod needs triage's attention: a container not ready, or crash-looping.
pub fn needs_attention(p: &PodRow) -> bool {
    !p.all_ready || crash_looping(p)
}

/// A container waiting in `CrashLoopBackOff` (or the pod's status says so).
pub fn crash_looping(pod: &PodRow) -> bool {
    pod.status == "CrashLoopBackOff"
        || pod.pod.status.container_statuses.iter().any(|c| {
            c.state
                .as_ref()
                .and_then(|s| s.waiting.as_ref())
                .and_then(|w| w.reason.as_deref())
                == Some("CrashLoopBackOff")
        })
}

fn key_of(p: &PodRow) -> PodKey {
    PodKey {
        namespace: p.namespace.clone(),
        name: p.name.clone(),
    }
}

impl PodIndex {
    /// The indexes of `pods` (sorted rows), with no restart history.
    pub fn build(pods: &[Arc<PodRow>]) -> Self {
        let mut index = PodIndex::default();
        for p in pods {
            index.insert(p);
        }
        index
    }

    /// The indexes of `pods` after a whole-store rebuild: restart stamps of pods still there
    /// carry over from `old`, and a count that rose since `previous` (the rows before) is
    /// stamped `now`.
    pub fn rebuild(
        pods: &[Arc<PodRow>],
        previous: &[Arc<PodRow>],
        old: &PodIndex,
        now: Timestamp,
    ) -> Self {
        let mut index = Self::build(pods);
        for p in pods {
            let key = key_of(p);
            match find(previous, &p.namespace, &p.name) {
                Some(before) if before.pod.metadata.uid != p.pod.metadata.uid => {}
                Some(before) if p.restarts > before.restarts => {
                    index.restart_rose.insert(key, now);
                }
                _ => {
                    if let Some(t) = old.restart_rose.get(&key) {
                        index.restart_rose.insert(key, *t);
                    }
                }
            }
        }
        index
    }

    /// Replaces `old` (a pod's previous row, if any) with `new` (its row now, if it still
    /// exists) in every index.
    pub fn replace(
        &mut self,
        old: Option<&Arc<PodRow>>,
        new: Option<&Arc<PodRow>>,
        now: Timestamp,
    ) {
        if let Some(old) = old {
            self.remove(old);
        }
        match (old, new) {
            // A new pod under the same name (a StatefulSet's) has no history.
            (Some(old), Some(new)) if old.pod.metadata.uid != new.pod.metadata.uid => {
                self.restart_rose.remove(&key_of(old));
            }
            (Some(old), Some(new)) if new.restarts > old.restarts => {
                self.restart_rose.insert(key_of(new), now);
            }
            (Some(old), None) => {
                self.restart_rose.remove(&key_of(old));
            }
            _ => {}
        }
        if let Some(new) = new {
            self.insert(new);
        }
    }

    fn insert(&mut self, p: &Arc<PodRow>) {
        if let Some(uid) = &p.owner_uid {
            let list = self.by_owner.entry(uid.clone()).or_default();
            let at = list.partition_point(|q| q.name < p.name);
            list.insert(at, Arc::clone(p));
        }
        if needs_attention(p) {
            self.attention.insert(key_of(p), Arc::clone(p));
        }
    }

    fn remove(&mut self, p: &Arc<PodRow>) {
        if let Some(uid) = &p.owner_uid
            && let Some(list) = self.by_owner.get_mut(uid)
        {
            if let Ok(at) = list.binary_search_by(|q| q.name.as_str().cmp(&p.name)) {
                list.remove(at);
            }
            if list.is_empty() {
                self.by_owner.remove(uid);
            }
        }
        self.attention.remove(&key_of(p));
    }

    /// The pods whose controller has this UID, sorted by name.
    pub fn owned(&self, uid: &str) -> &[Arc<PodRow>] {
        self.by_owner
            .get(uid)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The pods that need attention (see [`needs_attention`]), in key order.
    pub fn attention(&self) -> impl Iterator<Item = &Arc<PodRow>> {
        self.attention.values()
    }

    /// When this pod's restart count last rose while watched.
    pub fn restart_rose(&self, namespace: &str, name: &str) -> Option<Timestamp> {
        self.restart_rose
            .get(&PodKey {
                namespace: namespace.to_owned(),
                name: name.to_owned(),
            })
            .copied()
    }

    /// Forgets restart stamps older than `window` seconds (nothing reads them any more).
    pub fn forget_restarts_before(&mut self, now: Timestamp, window: i64) {
        self.restart_rose
            .retain(|_, t| now.as_second() - t.as_second() < window);
    }
}

/// The row of pod `namespace/name` in sorted `pods`.
pub fn find<'a>(pods: &'a [Arc<PodRow>], namespace: &str, name: &str) -> Option<&'a Arc<PodRow>> {
    position(pods, namespace, name).ok().map(|i| &pods[i])
}

/// Where pod `namespace/name` is (Ok) or would go (Err) in sorted `pods`.
pub fn position(pods: &[Arc<PodRow>], namespace: &str, name: &str) -> Result<usize, usize> {
    pods.binary_search_by(|p| (p.namespace.as_str(), p.name.as_str()).cmp(&(namespace, name)))
}

/// The pods of one namespace in sorted `pods`.
pub fn in_namespace<'a>(pods: &'a [Arc<PodRow>], namespace: &str) -> &'a [Arc<PodRow>] {
    &pods[namespace_range(pods, namespace)]
}

/// Where the pods of one namespace are in sorted `pods` (for callers that keep row indexes).
pub fn namespace_range(pods: &[Arc<PodRow>], namespace: &str) -> std::ops::Range<usize> {
    let start = pods.partition_point(|p| p.namespace.as_str() < namespace);
    let end = start + pods[start..].partition_point(|p| p.namespace == namespace);
    start..end
}

/// What applying a batch of pod changes did to the rows.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Patched {
    /// Some row changed.
    pub changed: bool,
    /// Rows came or went, or a pod changed owner: row positions and owner lists moved.
    pub moved: bool,
}

/// Applies the changed pods `keys` (read from the store) to the sorted `pods` and `index`.
pub fn apply(
    stores: &Stores,
    namespace: Option<&str>,
    pods: &mut Vec<Arc<PodRow>>,
    index: &mut PodIndex,
    mut keys: Vec<PodKey>,
    now: Timestamp,
) -> Patched {
    keys.sort_unstable();
    keys.dedup();
    let mut out = Patched::default();
    let mut inserts: Vec<Arc<PodRow>> = Vec::new();
    let mut removals: Vec<usize> = Vec::new();
    for key in keys {
        if namespace.is_some_and(|ns| ns != key.namespace) {
            continue;
        }
        let obj: Option<Arc<SlimPod>> = stores.pods.get(&key.namespace, &key.name);
        match (position(pods, &key.namespace, &key.name), obj) {
            (Ok(i), Some(obj)) => {
                if Arc::ptr_eq(&pods[i].pod, &obj) {
                    continue;
                }
                let row = Arc::new(rows::pod_row(obj));
                out.moved |= row.owner_uid != pods[i].owner_uid;
                index.replace(Some(&pods[i]), Some(&row), now);
                pods[i] = row;
                out.changed = true;
            }
            (Ok(i), None) => {
                index.replace(Some(&pods[i]), None, now);
                removals.push(i);
            }
            (Err(_), Some(obj)) => {
                let row = Arc::new(rows::pod_row(obj));
                index.replace(None, Some(&row), now);
                inserts.push(row);
            }
            (Err(_), None) => {}
        }
    }
    if inserts.is_empty() && removals.is_empty() {
        return out;
    }
    out.changed = true;
    out.moved = true;
    // `keys` was sorted, so are `inserts` and `removals`: one merge pass.
    let old = std::mem::take(pods);
    let mut merged = Vec::with_capacity(old.len() + inserts.len() - removals.len().min(old.len()));
    let mut removals = removals.into_iter().peekable();
    let mut inserts = inserts.into_iter().peekable();
    for (i, row) in old.into_iter().enumerate() {
        if removals.next_if_eq(&i).is_some() {
            continue;
        }
        while let Some(new) =
            inserts.next_if(|n| (&n.namespace, &n.name) < (&row.namespace, &row.name))
        {
            merged.push(new);
        }
        merged.push(row);
    }
    merged.extend(inserts);
    *pods = merged;
    out
}

#[cfg(test)]
mod tests;
