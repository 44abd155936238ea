//! Cached row models, rebuilt from the reflector stores on `StoreChanged` (never per frame).
//!
//! Rows are sorted by namespace then name. Text that never changes between rebuilds (ready x/y,
//! status, short hashes, the lowercase filter key) is computed here; ages and "is this pod on the
//! update revision" are resolved at render time for the visible rows only.

use std::{
    collections::{HashMap, HashSet},
    hash::{BuildHasherDefault, Hasher},
    sync::Arc,
};

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::{
    apis::meta::v1::{LabelSelector, ObjectMeta},
    util::intstr::IntOrString,
};

use super::{msg::Kind, route::Owner, stores::Stores};
use crate::{
    api::{CloneSet, DaemonSet, SlimPod, StatefulSet},
    kruise::selector,
};

/// The label Kruise reads for deletion protection.
pub const PROTECTION_LABEL: &str = "policy.kruise.io/delete-protection";
/// The pod label holding the revision a pod was built from.
pub const REVISION_LABEL: &str = "controller-revision-hash";

/// One row of the Workloads view.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadRow {
    pub kind: Kind,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub selector: LabelSelector,
    /// Desired pods (spec.replicas; desiredNumberScheduled for a DaemonSet).
    pub desired: i32,
    pub ready: i32,
    pub updated: i32,
    /// Pods expected on the update revision (desired − partition), when known.
    pub expected: Option<i32>,
    /// The partition as written ("3", "40%"), if set.
    pub partition: Option<String>,
    pub paused: bool,
    pub current_revision: String,
    pub update_revision: String,
    /// `Always` / `Cascading` (or whatever the label holds) when protected.
    pub protection: Option<String>,
    pub created: Option<Timestamp>,
    /// Lowercase "namespace/name kind" for the filter.
    pub search: String,
}

impl WorkloadRow {
    pub fn key(&self) -> String {
        format!("{:?}/{}/{}", self.kind, self.namespace, self.name)
    }

    /// `key() == key`, without allocating.
    pub fn has_key(&self, key: &str) -> bool {
        key_is(key, &[self.kind.debug_name(), &self.namespace, &self.name])
    }

    /// True while pods still have to move to the update revision.
    pub fn rolling(&self) -> bool {
        (!self.current_revision.is_empty() && self.current_revision != self.update_revision)
            || self.expected.is_some_and(|e| self.updated < e)
    }

    pub fn owner(&self) -> Owner {
        Owner {
            kind: self.kind,
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            uid: self.uid.clone(),
            selector: self.selector.clone(),
        }
    }
}

/// One row of the Pods view.
#[derive(Debug, Clone, PartialEq)]
pub struct PodRow {
    pub pod: Arc<SlimPod>,
    pub namespace: String,
    pub name: String,
    pub ready: String,
    pub all_ready: bool,
    /// Phase, or the reason that matters more (CrashLoopBackOff, Terminating, Evicted...).
    pub status: String,
    pub restarts: i32,
    pub node: String,
    /// The pod's `controller-revision-hash` label.
    pub revision: String,
    /// UID of the pod's controller ownerReference, if any.
    pub owner_uid: Option<String>,
    pub created: Option<Timestamp>,
    pub search: String,
}

impl PodRow {
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// `key() == key`, without allocating.
    pub fn has_key(&self, key: &str) -> bool {
        key_is(key, &[&self.namespace, &self.name])
    }

    /// Whether this pod belongs to `owner`: its controller ownerReference is `owner`, or it has
    /// no controller and `owner`'s selector selects it.
    pub fn belongs_to(&self, owner: &Owner) -> bool {
        if self.namespace != owner.namespace {
            return false;
        }
        match &self.owner_uid {
            Some(uid) => *uid == owner.uid,
            None => {
                !selector::is_empty(&owner.selector)
                    && selector::matches(&owner.selector, &self.pod.metadata.labels)
                        .unwrap_or(false)
            }
        }
    }
}

/// Whether revision label `pod_rev` names revision `rev`: equal, or equal after the last `-`
/// (CloneSet writes `<name>-<hash>` or just `<hash>`; DaemonSet pods carry the bare hash).
pub fn same_revision(pod_rev: &str, rev: &str) -> bool {
    pod_rev == rev || short_hash(pod_rev) == short_hash(rev)
}

/// The part of a revision name after the last `-`.
pub fn short_hash(rev: &str) -> &str {
    rev.rsplit_once('-').map_or(rev, |(_, h)| h)
}

/// All workloads in scope, sorted, with an index from UID to row.
pub fn build_workloads(
    stores: &Stores,
    namespace: Option<&str>,
) -> (Vec<WorkloadRow>, HashMap<String, usize>) {
    let in_ns = |m: &ObjectMeta| namespace.is_none_or(|ns| m.namespace.as_deref() == Some(ns));
    let mut rows: Vec<WorkloadRow> = Vec::new();
    rows.extend(
        stores
            .clonesets
            .state()
            .iter()
            .filter(|o| in_ns(&o.metadata))
            .map(|o| cloneset_row(o)),
    );
    rows.extend(
        stores
            .statefulsets
            .state()
            .iter()
            .filter(|o| in_ns(&o.metadata))
            .map(|o| statefulset_row(o)),
    );
    rows.extend(
        stores
            .daemonsets
            .state()
            .iter()
            .filter(|o| in_ns(&o.metadata))
            .map(|o| daemonset_row(o)),
    );
    rows.sort_by(|a, b| (&a.namespace, &a.name, a.kind).cmp(&(&b.namespace, &b.name, b.kind)));
    let index = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.uid.is_empty())
        .map(|(i, r)| (r.uid.clone(), i))
        .collect();
    (rows, index)
}

/// All pods in scope, sorted. Rows of pods whose object did not change since `previous` was
/// built (the store hands out the same `Arc`) are reused in their sorted order; only new or
/// changed pods are built and sorted, then merged in (no full re-sort on every change).
pub fn build_pods(
    stores: &Stores,
    namespace: Option<&str>,
    previous: &[Arc<PodRow>],
) -> Vec<Arc<PodRow>> {
    let state = stores.pods.state();
    // Pointers identify objects: `previous` holds its Arcs, so an address it knows cannot have
    // been reused by a newer object.
    let current: PtrSet = state.iter().map(Arc::as_ptr).collect();
    let known: PtrSet = previous.iter().map(|r| Arc::as_ptr(&r.pod)).collect();
    let in_ns =
        |p: &SlimPod| namespace.is_none_or(|ns| p.metadata.namespace.as_deref() == Some(ns));
    let kept = previous
        .iter()
        .filter(|r| current.contains(&Arc::as_ptr(&r.pod)) && in_ns(&r.pod));
    let mut fresh: Vec<Arc<PodRow>> = state
        .into_iter()
        .filter(|p| !known.contains(&Arc::as_ptr(p)) && in_ns(p))
        .map(|p| Arc::new(pod_row(p)))
        .collect();
    let order = |a: &PodRow, b: &PodRow| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name));
    fresh.sort_unstable_by(|a, b| order(a, b));
    // Merge two sorted runs.
    let mut out = Vec::with_capacity(current.len());
    let mut fresh = fresh.into_iter().peekable();
    for row in kept {
        while let Some(f) = fresh.next_if(|f| order(f, row).is_lt()) {
            out.push(f);
        }
        out.push(Arc::clone(row));
    }
    out.extend(fresh);
    out
}

/// A set of object addresses, hashed by the address itself (no SipHash over 10,000 pointers).
type PtrSet = HashSet<*const SlimPod, BuildHasherDefault<PtrHasher>>;

/// Hashes one pointer-sized integer by mixing its bits (allocation addresses are 8/16-aligned).
#[derive(Default)]
struct PtrHasher(u64);

impl Hasher for PtrHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8 | u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64 >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Whether `key` is `a/b` (or `a/b/c`) without building the string.
fn key_is(key: &str, parts: &[&str]) -> bool {
    let mut rest = key;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            match rest.strip_prefix('/') {
                Some(r) => rest = r,
                None => return false,
            }
        }
        match rest.strip_prefix(part) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    rest.is_empty()
}

struct Common {
    namespace: String,
    name: String,
    uid: String,
    protection: Option<String>,
    created: Option<Timestamp>,
}

fn common(meta: &ObjectMeta) -> Common {
    Common {
        namespace: meta.namespace.clone().unwrap_or_default(),
        name: meta.name.clone().unwrap_or_default(),
        uid: meta.uid.clone().unwrap_or_default(),
        protection: meta
            .labels
            .as_ref()
            .and_then(|l| l.get(PROTECTION_LABEL))
            .filter(|v| !v.is_empty())
            .cloned(),
        created: meta.creation_timestamp.as_ref().map(|t| t.0),
    }
}

fn search_key(kind: &str, ns: &str, name: &str) -> String {
    format!("{ns}/{name} {kind}").to_lowercase()
}

/// `partition` as a pod count out of `replicas` (percent rounds up, as Kruise does).
fn intstr_text(v: &IntOrString) -> String {
    match v {
        IntOrString::Int(n) => n.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

fn cloneset_row(cs: &CloneSet) -> WorkloadRow {
    let c = common(&cs.metadata);
    let status = cs.status.clone().unwrap_or_default();
    let desired = cs.spec.replicas.unwrap_or(1);
    let strategy = &cs.spec.update_strategy;
    // What the controller converges to for the spec as it is now (the embedded port of
    // `calculateStatus`), so a partition change shows before any controller reports it.
    let expected = Some(crate::kruise::intstr::expected_updated_replicas(
        strategy.partition.as_ref(),
        desired,
    ));
    WorkloadRow {
        kind: Kind::CloneSet,
        search: search_key("cloneset cs", &c.namespace, &c.name),
        selector: cs.spec.selector.clone(),
        desired,
        ready: status.ready_replicas,
        updated: status.updated_replicas,
        expected,
        partition: strategy.partition.as_ref().map(intstr_text),
        paused: strategy.paused,
        current_revision: status.current_revision,
        update_revision: status.update_revision,
        namespace: c.namespace,
        name: c.name,
        uid: c.uid,
        protection: c.protection,
        created: c.created,
    }
}

fn statefulset_row(sts: &StatefulSet) -> WorkloadRow {
    let c = common(&sts.metadata);
    let status = sts.status.clone().unwrap_or_default();
    let desired = sts.spec.replicas.unwrap_or(1);
    let rolling = sts
        .spec
        .update_strategy
        .as_ref()
        .and_then(|s| s.rolling_update.clone())
        .unwrap_or_default();
    let partition = rolling.partition.unwrap_or(0).clamp(0, desired.max(0));
    WorkloadRow {
        kind: Kind::StatefulSet,
        search: search_key("statefulset asts", &c.namespace, &c.name),
        selector: sts.spec.selector.clone(),
        desired,
        ready: status.ready_replicas,
        updated: status.updated_replicas,
        expected: Some((desired - partition).max(0)),
        partition: rolling.partition.map(|p| p.to_string()),
        paused: rolling.paused,
        current_revision: status.current_revision,
        update_revision: status.update_revision,
        namespace: c.namespace,
        name: c.name,
        uid: c.uid,
        protection: c.protection,
        created: c.created,
    }
}

fn daemonset_row(ds: &DaemonSet) -> WorkloadRow {
    let c = common(&ds.metadata);
    let status = ds.status.clone().unwrap_or_default();
    let desired = status.desired_number_scheduled;
    let rolling = ds
        .spec
        .update_strategy
        .as_ref()
        .and_then(|s| s.rolling_update.clone())
        .unwrap_or_default();
    // A percent (Kruise v1.9.0) is of the last desired node count, rounded down.
    let partition = rolling
        .partition
        .as_ref()
        .map_or(0, |p| {
            crate::kruise::daemonset::resolve_partition(
                p,
                desired,
                crate::kruise::KruiseVersion::V1_9,
            )
            .unwrap_or(0)
        })
        .clamp(0, desired.max(0));
    WorkloadRow {
        kind: Kind::DaemonSet,
        search: search_key("daemonset ads", &c.namespace, &c.name),
        selector: ds.spec.selector.clone(),
        desired,
        ready: status.number_ready,
        updated: status.updated_number_scheduled,
        expected: Some((desired - partition).max(0)),
        partition: rolling.partition.as_ref().map(intstr_text),
        paused: rolling.paused,
        // An Advanced DaemonSet reports only the hash of its current template.
        current_revision: String::new(),
        update_revision: status.daemon_set_hash,
        namespace: c.namespace,
        name: c.name,
        uid: c.uid,
        protection: c.protection,
        created: c.created,
    }
}

pub(crate) fn pod_row(pod: Arc<SlimPod>) -> PodRow {
    let meta = &pod.metadata;
    let namespace = meta.namespace.as_deref().unwrap_or_default().to_owned();
    let name = meta.name.as_deref().unwrap_or_default().to_owned();
    let statuses = &pod.status.container_statuses;
    let total = pod.spec.containers.len().max(statuses.len());
    let ready_count = statuses.iter().filter(|s| s.ready).count();
    let status = pod_status(&pod);
    let node = pod.spec.node_name.as_deref().unwrap_or_default().to_owned();
    let owner_uid = meta.controller().map(|r| r.uid.to_string());
    PodRow {
        search: format!("{namespace}/{name} {status} {node}").to_lowercase(),
        ready: format!("{ready_count}/{total}"),
        all_ready: total > 0 && ready_count == total,
        restarts: statuses.iter().map(|s| s.restart_count).sum(),
        revision: meta
            .labels
            .get(REVISION_LABEL)
            .unwrap_or_default()
            .to_owned(),
        created: meta.creation_timestamp.as_ref().map(|t| t.0),
        owner_uid,
        namespace,
        name,
        status,
        node,
        pod,
    }
}

/// What `kubectl get pods` would print as STATUS, roughly: Terminating, a container's waiting
/// or terminated reason (CrashLoopBackOff, ErrImagePull, Error...), the pod's reason, the phase.
pub fn pod_status(pod: &SlimPod) -> String {
    if pod.metadata.deletion_timestamp.is_some() {
        return "Terminating".to_owned();
    }
    let statuses = &pod.status.container_statuses;
    let waiting = statuses
        .iter()
        .find_map(|s| s.state.as_ref()?.waiting.as_ref()?.reason.clone());
    let terminated = || {
        statuses
            .iter()
            .find_map(|s| s.state.as_ref()?.terminated.as_ref()?.reason.clone())
    };
    waiting
        .or_else(terminated)
        .or_else(|| pod.status.reason.clone())
        .or_else(|| pod.status.phase.clone())
        .map_or_else(|| "Unknown".to_owned(), String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_compare_by_suffix() {
        assert!(same_revision("web-7d9f", "web-7d9f"));
        assert!(same_revision("7d9f", "web-7d9f"));
        assert!(!same_revision("web-6c8b", "web-7d9f"));
        assert_eq!(short_hash("web-a-7d9f"), "7d9f");
        assert!(key_is("a/b", &["a", "b"]));
        assert!(!key_is("a/bc", &["a", "b"]));
        assert!(!key_is("ab", &["a", "b"]));
    }

    fn pod(ns: &str, name: &str) -> SlimPod {
        let mut p = SlimPod::default();
        p.metadata.namespace = Some(ns.into());
        p.metadata.name = Some(name.into());
        p
    }

    #[test]
    fn incremental_pod_rebuild_stays_sorted_and_reuses_rows() {
        use kube::runtime::{reflector, watcher::Event};
        let (pods, mut w) = crate::app::stores::pod_store();
        let (clonesets, _) = reflector::store();
        let (statefulsets, _) = reflector::store();
        let (daemonsets, _) = reflector::store();
        let stores = Stores {
            clonesets,
            statefulsets,
            daemonsets,
            pods,
            oncall: crate::app::stores::OncallStores::new().0,
        };
        for (ns, n) in [("b", "x"), ("a", "z"), ("a", "m")] {
            w.apply_watcher_event(&Event::Apply(pod(ns, n)));
        }
        let first = build_pods(&stores, None, &[]);
        let names = |rows: &[Arc<PodRow>]| rows.iter().map(|r| r.key()).collect::<Vec<_>>();
        assert_eq!(names(&first), ["a/m", "a/z", "b/x"]);
        w.apply_watcher_event(&Event::Apply(pod("a", "a")));
        w.apply_watcher_event(&Event::Apply(pod("c", "c")));
        w.apply_watcher_event(&Event::Delete(pod("a", "z")));
        let mut changed = pod("b", "x");
        changed.status.phase = Some("Failed".into());
        w.apply_watcher_event(&Event::Apply(changed));
        let second = build_pods(&stores, None, &first);
        assert_eq!(names(&second), ["a/a", "a/m", "b/x", "c/c"]);
        assert!(Arc::ptr_eq(&first[0], &second[1]), "unchanged a/m reused");
        assert_eq!(second[2].status, "Failed", "changed b/x rebuilt");
        assert_eq!(
            names(&build_pods(&stores, Some("a"), &second)),
            ["a/a", "a/m"]
        );
    }

    #[test]
    fn expected_follows_the_spec_partition_not_a_stale_status() {
        let row = |partition: IntOrString| {
            let mut cs = CloneSet::default();
            cs.spec.replicas = Some(5);
            cs.spec.update_strategy.partition = Some(partition);
            // A status written before the partition changed must not win.
            cs.status = Some(crate::api::cloneset::CloneSetStatus {
                expected_updated_replicas: Some(5),
                ..Default::default()
            });
            cloneset_row(&cs).expected
        };
        assert_eq!(
            row(IntOrString::String("40%".into())),
            Some(3),
            "40% of 5 rounds up to 2"
        );
        assert_eq!(row(IntOrString::Int(3)), Some(2));
        // Upstream leaves one pod to update when a percent other than 100% covers every pod.
        assert_eq!(row(IntOrString::String("99%".into())), Some(1));
        assert_eq!(row(IntOrString::String("100%".into())), Some(0));
        assert_eq!(
            row(IntOrString::String("x".into())),
            Some(0),
            "invalid partition: 0"
        );
    }

    #[test]
    fn an_ads_percent_partition_is_floored_over_the_desired_nodes() {
        let row = |partition: IntOrString| {
            let mut ds = DaemonSet::default();
            ds.spec.update_strategy = Some(crate::api::daemonset::DaemonSetUpdateStrategy {
                rolling_update: Some(crate::api::daemonset::RollingUpdateDaemonSet {
                    partition: Some(partition),
                    ..Default::default()
                }),
                ..Default::default()
            });
            ds.status = Some(crate::api::daemonset::DaemonSetStatus {
                desired_number_scheduled: 4,
                ..Default::default()
            });
            let r = daemonset_row(&ds);
            (r.partition, r.expected)
        };
        assert_eq!(
            row(IntOrString::String("25%".into())),
            (Some("25%".to_owned()), Some(3))
        );
        assert_eq!(
            row(IntOrString::String("99%".into())),
            (Some("99%".to_owned()), Some(1)),
            "99% of 4 is 3.96: 3 nodes held"
        );
        assert_eq!(row(IntOrString::Int(1)), (Some("1".to_owned()), Some(3)));
    }
}
