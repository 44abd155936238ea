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
}
