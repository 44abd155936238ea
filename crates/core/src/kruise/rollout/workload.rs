//! What the Rollout and BatchRelease controllers read of a workload: upstream's `util.Workload`
//! (`ControllerFinder.GetWorkloadForRef`) and the BatchRelease's `WorkloadInfo`, in one struct.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// The workload kinds a partition-style release drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TargetKind {
    /// `apps.kruise.io` CloneSet (`partitionstyle/cloneset`).
    CloneSet,
    /// `apps.kruise.io` StatefulSet (`partitionstyle/statefulset`).
    AdvancedStatefulSet,
    /// `apps/v1` StatefulSet (`partitionstyle/statefulset`).
    StatefulSet,
    /// `apps.kruise.io` DaemonSet (`partitionstyle/daemonset`).
    AdvancedDaemonSet,
}

/// One workload as both controllers see it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkloadInfo {
    pub kind: Option<TargetKind>,
    pub name: String,
    pub namespace: String,
    pub uid: String,
    pub generation: i64,
    /// `status.observedGeneration`.
    pub observed_generation: i64,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    /// R: CloneSet and StatefulSets `spec.replicas`, ADS `status.desiredNumberScheduled`.
    pub replicas: i32,
    /// `status.replicas` (ADS: desiredNumberScheduled).
    pub status_replicas: i32,
    /// `status.updatedReplicas` (ADS: updatedNumberScheduled).
    pub updated_replicas: i32,
    /// CloneSet `status.updatedReadyReplicas`; for the StatefulSets and ADS the BatchRelease
    /// counts it from pods (upstream's `ParseWorkloadStatus` gives 0).
    pub updated_ready_replicas: i32,
    /// Full `status.currentRevision` (ADS: "").
    pub current_revision: String,
    /// Full `status.updateRevision` (ADS: `daemonSetHash`).
    pub update_revision: String,
    /// Rollout's `stableRevision`: CloneSet the suffix after the last `-` of currentRevision,
    /// StatefulSets the full currentRevision, ADS "".
    pub stable_revision: String,
    /// Rollout's `canaryRevision`: CloneSet the suffix of updateRevision, others the full one.
    pub canary_revision: String,
    /// `IsInRollback` (never for ADS).
    pub in_rollback: bool,
    /// The current partition as written (None when unset).
    pub partition: Option<IntOrString>,
    pub paused: bool,
    /// ASTS `rollingUpdate.unorderedUpdate` is set.
    pub unordered_update: bool,
    /// `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// `spec.selector` (the pods the workload owns).
    pub selector: Option<LabelSelector>,
}

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use crate::api::cloneset::CloneSet;
use crate::api::daemonset::DaemonSet;
use crate::api::statefulset::StatefulSet;

impl TargetKind {
    /// `(group, kind)` as a `workloadRef` names it.
    pub fn group_kind(self) -> (&'static str, &'static str) {
        match self {
            TargetKind::CloneSet => ("apps.kruise.io", "CloneSet"),
            TargetKind::AdvancedStatefulSet => ("apps.kruise.io", "StatefulSet"),
            TargetKind::StatefulSet => ("apps", "StatefulSet"),
            TargetKind::AdvancedDaemonSet => ("apps.kruise.io", "DaemonSet"),
        }
    }

    /// The kind a `workloadRef` (`apiVersion` + `kind`) names, when it is one of the four.
    pub fn from_ref(api_version: &str, kind: &str) -> Option<TargetKind> {
        let group = api_version.split_once('/').map(|(g, _)| g).unwrap_or("");
        match (group, kind) {
            ("apps.kruise.io", "CloneSet") => Some(TargetKind::CloneSet),
            ("apps.kruise.io", "StatefulSet") => Some(TargetKind::AdvancedStatefulSet),
            ("apps", "StatefulSet") => Some(TargetKind::StatefulSet),
            ("apps.kruise.io", "DaemonSet") => Some(TargetKind::AdvancedDaemonSet),
            _ => None,
        }
    }
}

/// The suffix after the last `-` (CloneSet's revisions as the Rollout records them).
fn suffix(revision: &str) -> String {
    revision
        .rsplit_once('-')
        .map(|(_, s)| s)
        .unwrap_or(revision)
        .to_owned()
}

/// `ControllerFinder` computes rollback only for a workload in a release (it returns before
/// that when the in-progressing annotation is absent).
fn in_progressing(meta: &ObjectMeta) -> bool {
    meta.annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(crate::api::keys::ROLLOUT_IN_PROGRESSING))
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
        deleting: meta.deletion_timestamp.is_some(),
        ..WorkloadInfo::default()
    }
}

impl WorkloadInfo {
    /// A CloneSet (`getKruiseCloneSet` + `partitionstyle/cloneset`).
    pub fn from_cloneset(cs: &CloneSet) -> WorkloadInfo {
        let status = cs.status.clone().unwrap_or_default();
        let strategy = &cs.spec.update_strategy;
        WorkloadInfo {
            observed_generation: status.observed_generation,
            replicas: cs.spec.replicas.unwrap_or(1),
            status_replicas: status.replicas,
            updated_replicas: status.updated_replicas,
            updated_ready_replicas: status.updated_ready_replicas,
            stable_revision: suffix(&status.current_revision),
            canary_revision: suffix(&status.update_revision),
            in_rollback: in_progressing(&cs.metadata)
                && status.current_revision == status.update_revision
                && status.updated_replicas != status.replicas,
            current_revision: status.current_revision,
            update_revision: status.update_revision,
            partition: strategy.partition.clone(),
            paused: strategy.paused,
            selector: Some(cs.spec.selector.clone()),
            ..base(TargetKind::CloneSet, &cs.metadata)
        }
    }

    /// An Advanced StatefulSet (`getStatefulSetLikeWorkload` + `partitionstyle/statefulset`);
    /// `updated_ready_replicas` is left 0: the BatchRelease counts it from pods.
    pub fn from_advanced_statefulset(sts: &StatefulSet) -> WorkloadInfo {
        let status = sts.status.clone().unwrap_or_default();
        let rolling = sts
            .spec
            .update_strategy
            .as_ref()
            .and_then(|u| u.rolling_update.as_ref());
        WorkloadInfo {
            observed_generation: status.observed_generation,
            replicas: sts.spec.replicas.unwrap_or(1),
            status_replicas: status.replicas,
            updated_replicas: status.updated_replicas,
            stable_revision: status.current_revision.clone(),
            canary_revision: status.update_revision.clone(),
            in_rollback: in_progressing(&sts.metadata)
                && status.current_revision == status.update_revision
                && status.updated_replicas != status.replicas,
            current_revision: status.current_revision,
            update_revision: status.update_revision,
            partition: rolling.and_then(|r| r.partition).map(IntOrString::Int),
            paused: rolling.is_some_and(|r| r.paused),
            unordered_update: rolling.is_some_and(|r| r.unordered_update.is_some()),
            selector: Some(sts.spec.selector.clone()),
            ..base(TargetKind::AdvancedStatefulSet, &sts.metadata)
        }
    }

    /// A native `apps/v1` StatefulSet (same path as the Advanced one).
    pub fn from_statefulset(sts: &apps::StatefulSet) -> WorkloadInfo {
        let spec = sts.spec.clone().unwrap_or_default();
        let status = sts.status.clone().unwrap_or_default();
        let current = status.current_revision.unwrap_or_default();
        let update = status.update_revision.unwrap_or_default();
        let updated = status.updated_replicas.unwrap_or(0);
        WorkloadInfo {
            observed_generation: status.observed_generation.unwrap_or(0),
            replicas: spec.replicas.unwrap_or(1),
            status_replicas: status.replicas,
            updated_replicas: updated,
            stable_revision: current.clone(),
            canary_revision: update.clone(),
            in_rollback: in_progressing(&sts.metadata)
                && current == update
                && updated != status.replicas,
            current_revision: current,
            update_revision: update,
            partition: spec
                .update_strategy
                .as_ref()
                .and_then(|u| u.rolling_update.as_ref())
                .and_then(|r| r.partition)
                .map(IntOrString::Int),
            selector: Some(spec.selector.clone()),
            ..base(TargetKind::StatefulSet, &sts.metadata)
        }
    }

    /// An Advanced DaemonSet, read at the model (v1alpha1) version: R is
    /// `desiredNumberScheduled`, the revision `daemonSetHash`, no rollback detection.
    pub fn from_daemonset(ds: &DaemonSet) -> WorkloadInfo {
        let status = ds.status.clone().unwrap_or_default();
        let rolling = ds
            .spec
            .update_strategy
            .as_ref()
            .and_then(|u| u.rolling_update.as_ref());
        WorkloadInfo {
            observed_generation: status.observed_generation,
            replicas: status.desired_number_scheduled,
            status_replicas: status.desired_number_scheduled,
            updated_replicas: status.updated_number_scheduled,
            stable_revision: String::new(),
            canary_revision: status.daemon_set_hash.clone(),
            in_rollback: false,
            current_revision: String::new(),
            update_revision: status.daemon_set_hash,
            partition: rolling.and_then(|r| r.partition.clone()),
            paused: rolling.is_some_and(|r| r.paused),
            selector: Some(ds.spec.selector.clone()),
            ..base(TargetKind::AdvancedDaemonSet, &ds.metadata)
        }
    }

    /// Whether the BatchRelease's control-info annotation is on the workload
    /// (`IsControlledByBatchRelease` compares its UID with the BR's; see
    /// [`WorkloadInfo::controlled_by`]).
    pub fn control_info(&self) -> Option<&str> {
        self.annotations
            .get(crate::api::keys::BATCH_RELEASE_CONTROL_INFO)
            .map(String::as_str)
    }

    /// `IsControlledByBatchRelease`: the control-info owner reference names this BR's UID.
    pub fn controlled_by(&self, br_uid: &str) -> bool {
        self.control_info()
            .and_then(|s| {
                serde_json::from_str::<k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference>(s).ok()
            })
            .is_some_and(|o| o.uid == br_uid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::cloneset::CloneSetStatus;

    #[test]
    fn cloneset_revisions_are_suffixes_and_rollback_needs_equal_revisions_and_mixed_pods() {
        let mut cs = CloneSet::default();
        cs.spec.replicas = Some(10);
        cs.status = Some(CloneSetStatus {
            replicas: 10,
            updated_replicas: 3,
            current_revision: "demo-abc".into(),
            update_revision: "demo-xyz".into(),
            ..CloneSetStatus::default()
        });
        let w = WorkloadInfo::from_cloneset(&cs);
        assert_eq!(w.stable_revision, "abc");
        assert_eq!(w.canary_revision, "xyz");
        assert_eq!(w.update_revision, "demo-xyz");
        assert!(!w.in_rollback);
        if let Some(s) = cs.status.as_mut() {
            s.update_revision = "demo-abc".into();
        }
        assert!(
            !WorkloadInfo::from_cloneset(&cs).in_rollback,
            "not in a release"
        );
        cs.metadata.annotations = Some(
            [(
                crate::api::keys::ROLLOUT_IN_PROGRESSING.to_owned(),
                "{}".to_owned(),
            )]
            .into(),
        );
        assert!(WorkloadInfo::from_cloneset(&cs).in_rollback);
    }

    #[test]
    fn daemonset_replicas_are_the_desired_count_and_never_in_rollback() {
        let ds = DaemonSet {
            status: Some(crate::api::daemonset::DaemonSetStatus {
                desired_number_scheduled: 4,
                updated_number_scheduled: 4,
                daemon_set_hash: "h1".into(),
                ..Default::default()
            }),
            ..DaemonSet::default()
        };
        let w = WorkloadInfo::from_daemonset(&ds);
        assert_eq!((w.replicas, w.canary_revision.as_str()), (4, "h1"));
        assert_eq!(w.stable_revision, "");
        assert!(!w.in_rollback);
    }

    #[test]
    fn native_statefulset_reads_the_rolling_partition() {
        let sts: apps::StatefulSet = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "s", "namespace": "d"},
            "spec": {"replicas": 3, "selector": {}, "serviceName": "s", "template": {},
                     "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}},
            "status": {"replicas": 3, "updatedReplicas": 1, "currentRevision": "s-1", "updateRevision": "s-2"}
        }))
        .unwrap_or_default();
        let w = WorkloadInfo::from_statefulset(&sts);
        assert_eq!(w.partition, Some(IntOrString::Int(2)));
        assert_eq!(w.stable_revision, "s-1");
        assert_eq!(w.kind, Some(TargetKind::StatefulSet));
    }
}
