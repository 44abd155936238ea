//! What the Rollout controller reads of its workload, from the shared cache: the four
//! partition kinds as a [`WorkloadInfo`] (upstream's `ControllerFinder.GetWorkloadForRef`),
//! built by the port's constructors the BatchRelease controller uses too.

use crate::api::rollout::Rollout;
use crate::cache::Cache;
use crate::kruise::rollout::WorkloadInfo;
use crate::kruise::rollout::controller::target_kind;
use crate::kruise::rollout::workload::TargetKind;

/// The workload `rollout.spec.workloadRef` names, from the cache (None when missing or of a
/// kind the port does not drive).
pub fn find(cache: &Cache, rollout: &Rollout) -> Option<WorkloadInfo> {
    let ns = rollout.metadata.namespace.as_deref().unwrap_or_default();
    let name = rollout.spec.workload_ref.name.as_str();
    match target_kind(rollout)? {
        TargetKind::CloneSet => cache
            .clonesets
            .get(ns, name)
            .map(|w| WorkloadInfo::from_cloneset(&w)),
        TargetKind::AdvancedStatefulSet => cache
            .statefulsets
            .get(ns, name)
            .map(|w| WorkloadInfo::from_advanced_statefulset(&w)),
        TargetKind::StatefulSet => cache
            .k8s_statefulsets
            .get(ns, name)
            .map(|w| WorkloadInfo::from_statefulset(&w)),
        TargetKind::AdvancedDaemonSet => cache
            .daemonsets
            .get(ns, name)
            .map(|w| WorkloadInfo::from_daemonset(&w)),
    }
}
