//! What the Rollout controller reads of its workload, from the shared cache: the four
//! partition kinds as a [`WorkloadInfo`] (upstream's `ControllerFinder.GetWorkloadForRef`).

use std::collections::BTreeMap;

use kube::api::ObjectMeta;

use crate::api::rollout::Rollout;
use crate::cache::Cache;
use crate::kruise::rollout::WorkloadInfo;
use crate::kruise::rollout::controller::target_kind;
use crate::kruise::rollout::workload::TargetKind;

/// The suffix after the last `-` (CloneSet revisions as the Rollout records them).
fn suffix(revision: &str) -> String {
    revision
        .rsplit_once('-')
        .map_or(revision, |(_, s)| s)
        .to_owned()
}

fn base(kind: TargetKind, meta: &ObjectMeta) -> WorkloadInfo {
    WorkloadInfo {
        kind: Some(kind),
        name: meta.name.clone().unwrap_or_default(),
        namespace: meta.namespace.clone().unwrap_or_default(),
        uid: meta.uid.clone().unwrap_or_default(),
        generation: meta.generation.unwrap_or(0),
        labels: meta.labels.clone().unwrap_or_default(),
        annotations: meta.annotations.clone().unwrap_or_default(),
        ..WorkloadInfo::default()
    }
}

fn in_progressing(annotations: &BTreeMap<String, String>) -> bool {
    annotations.contains_key(crate::api::keys::ROLLOUT_IN_PROGRESSING)
}

/// A CloneSet (`getKruiseCloneSet`).
pub fn cloneset(cs: &crate::api::CloneSet) -> WorkloadInfo {
    let mut w = base(TargetKind::CloneSet, &cs.metadata);
    let status = cs.status.clone().unwrap_or_default();
    w.observed_generation = status.observed_generation;
    w.replicas = cs.spec.replicas.unwrap_or(1);
    w.status_replicas = status.replicas;
    w.updated_replicas = status.updated_replicas;
    w.updated_ready_replicas = status.updated_ready_replicas;
    w.stable_revision = suffix(&status.current_revision);
    w.canary_revision = suffix(&status.update_revision);
    w.in_rollback = in_progressing(&w.annotations)
        && status.current_revision == status.update_revision
        && status.updated_replicas != status.replicas;
    w.current_revision = status.current_revision;
    w.update_revision = status.update_revision;
    w
}

/// The status numbers of a StatefulSet-like workload.
#[derive(Clone, Copy)]
struct StsStatus<'a> {
    observed_generation: i64,
    status_replicas: i32,
    updated: i32,
    current: &'a str,
    update: &'a str,
}

/// A StatefulSet-like workload (`getStatefulSetLikeWorkload`): full revisions.
fn statefulset_like(
    kind: TargetKind,
    meta: &ObjectMeta,
    replicas: i32,
    st: &StsStatus<'_>,
) -> WorkloadInfo {
    let StsStatus {
        observed_generation,
        status_replicas,
        updated,
        current,
        update,
    } = *st;
    let mut w = base(kind, meta);
    w.observed_generation = observed_generation;
    w.replicas = replicas;
    w.status_replicas = status_replicas;
    w.updated_replicas = updated;
    w.current_revision = current.to_owned();
    w.update_revision = update.to_owned();
    w.stable_revision = current.to_owned();
    w.canary_revision = update.to_owned();
    w.in_rollback =
        in_progressing(&w.annotations) && update == current && updated != status_replicas;
    w
}

/// An Advanced StatefulSet.
pub fn advanced_statefulset(sts: &crate::api::StatefulSet) -> WorkloadInfo {
    let s = sts.status.clone().unwrap_or_default();
    statefulset_like(
        TargetKind::AdvancedStatefulSet,
        &sts.metadata,
        sts.spec.replicas.unwrap_or(1),
        &StsStatus {
            observed_generation: s.observed_generation,
            status_replicas: s.replicas,
            updated: s.updated_replicas,
            current: &s.current_revision,
            update: &s.update_revision,
        },
    )
}

/// A native StatefulSet.
pub fn statefulset(sts: &k8s_openapi::api::apps::v1::StatefulSet) -> WorkloadInfo {
    let s = sts.status.clone().unwrap_or_default();
    statefulset_like(
        TargetKind::StatefulSet,
        &sts.metadata,
        sts.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1),
        &StsStatus {
            observed_generation: s.observed_generation.unwrap_or(0),
            status_replicas: s.replicas,
            updated: s.updated_replicas.unwrap_or(0),
            current: s.current_revision.as_deref().unwrap_or_default(),
            update: s.update_revision.as_deref().unwrap_or_default(),
        },
    )
}

/// An Advanced DaemonSet (`getKruiseDaemonSet`): no stable revision, never in rollback.
pub fn daemonset(ds: &crate::api::DaemonSet) -> WorkloadInfo {
    let mut w = base(TargetKind::AdvancedDaemonSet, &ds.metadata);
    let s = ds.status.clone().unwrap_or_default();
    w.observed_generation = s.observed_generation;
    w.replicas = s.desired_number_scheduled;
    w.status_replicas = s.desired_number_scheduled;
    w.updated_replicas = s.updated_number_scheduled;
    w.update_revision = s.daemon_set_hash.clone();
    w.canary_revision = suffix(&s.daemon_set_hash);
    w
}

/// The workload `rollout.spec.workloadRef` names, from the cache (None when missing or of a
/// kind the port does not drive).
pub fn find(cache: &Cache, rollout: &Rollout) -> Option<WorkloadInfo> {
    let ns = rollout.metadata.namespace.as_deref().unwrap_or_default();
    let name = rollout.spec.workload_ref.name.as_str();
    match target_kind(rollout)? {
        TargetKind::CloneSet => cache.clonesets.get(ns, name).map(|w| cloneset(&w)),
        TargetKind::AdvancedStatefulSet => cache
            .statefulsets
            .get(ns, name)
            .map(|w| advanced_statefulset(&w)),
        TargetKind::StatefulSet => cache
            .k8s_statefulsets
            .get(ns, name)
            .map(|w| statefulset(&w)),
        TargetKind::AdvancedDaemonSet => cache.daemonsets.get(ns, name).map(|w| daemonset(&w)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cloneset_is_read_with_revision_suffixes_and_rollback_only_while_in_progressing() {
        let mut cs = crate::api::CloneSet::default();
        cs.spec.replicas = Some(10);
        cs.status = Some(crate::api::cloneset::CloneSetStatus {
            current_revision: "echo-6d8f".into(),
            update_revision: "echo-6d8f".into(),
            replicas: 10,
            updated_replicas: 4,
            ..Default::default()
        });
        let w = cloneset(&cs);
        assert_eq!(
            (w.stable_revision.as_str(), w.canary_revision.as_str()),
            ("6d8f", "6d8f")
        );
        assert!(!w.in_rollback, "not in progressing");
        cs.metadata.annotations = Some(BTreeMap::from([(
            crate::api::keys::ROLLOUT_IN_PROGRESSING.to_owned(),
            "{}".to_owned(),
        )]));
        assert!(cloneset(&cs).in_rollback);
    }
}
