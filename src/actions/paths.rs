//! Where each field an action changes lives, per kind and served version.
//!
//! CloneSet v1alpha1 keeps `partition`, `paused`, `maxUnavailable` under `updateStrategy`;
//! CloneSet v1beta1 (upstream HEAD) and Advanced StatefulSet / DaemonSet keep them under
//! `updateStrategy.rollingUpdate`. An Advanced StatefulSet's and DaemonSet's partition is an
//! integer; a CloneSet's may be a percent.

/// The JSON pointers of the fields actions touch on one kind at one version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paths {
    pub partition: &'static str,
    pub paused: &'static str,
    /// `None`: the kind has no replica count (DaemonSet).
    pub replicas: Option<&'static str>,
    /// `None`: the kind cannot name pods to delete.
    pub pods_to_delete: Option<&'static str>,
    /// Whether the partition may be a percent.
    pub partition_percent: bool,
    pub template: &'static str,
    /// The status field naming the revision pods update to: `updateRevision`, or an Advanced
    /// DaemonSet's `daemonSetHash` at v1alpha1 (v1beta1, stored since Kruise v1.9, renamed it).
    pub update_revision: &'static str,
}

const UPDATE_REVISION: &str = "/status/updateRevision";

use crate::api::kinds::{KindInfo, WorkloadKind};

const TEMPLATE: &str = "/spec/template";

impl Paths {
    /// The paths for `kind` (a CloneSet, Advanced StatefulSet or Advanced DaemonSet) served at
    /// `version`; `None` for kinds without a rollout.
    pub fn of(kind: &KindInfo, version: &str) -> Option<Paths> {
        let workload = kind.workload?;
        let partition_percent = workload.partition_percent();
        match (workload, version) {
            (WorkloadKind::CloneSet, "v1alpha1") => Some(Paths {
                partition: "/spec/updateStrategy/partition",
                paused: "/spec/updateStrategy/paused",
                replicas: Some("/spec/replicas"),
                pods_to_delete: Some("/spec/scaleStrategy/podsToDelete"),
                partition_percent,
                template: TEMPLATE,
                update_revision: UPDATE_REVISION,
            }),
            (WorkloadKind::CloneSet, _) => Some(Paths {
                partition: "/spec/updateStrategy/rollingUpdate/partition",
                paused: "/spec/updateStrategy/rollingUpdate/paused",
                replicas: Some("/spec/replicas"),
                pods_to_delete: Some("/spec/scaleStrategy/podsToDelete"),
                partition_percent,
                template: TEMPLATE,
                update_revision: UPDATE_REVISION,
            }),
            (WorkloadKind::AdvancedStatefulSet, _) => Some(Paths {
                partition: "/spec/updateStrategy/rollingUpdate/partition",
                paused: "/spec/updateStrategy/rollingUpdate/paused",
                replicas: Some("/spec/replicas"),
                pods_to_delete: None,
                partition_percent,
                template: TEMPLATE,
                update_revision: UPDATE_REVISION,
            }),
            (WorkloadKind::AdvancedDaemonSet, _) => Some(Paths {
                partition: "/spec/updateStrategy/rollingUpdate/partition",
                paused: "/spec/updateStrategy/rollingUpdate/paused",
                replicas: None,
                pods_to_delete: None,
                partition_percent,
                template: TEMPLATE,
                update_revision: if version == "v1alpha1" {
                    "/status/daemonSetHash"
                } else {
                    UPDATE_REVISION
                },
            }),
        }
    }
}
