//! Advanced StatefulSet (apps.kruise.io/v1beta1) rollout logic, ported sans-IO from Kruise v1.8.4
//! `pkg/controller/statefulset`: ordinals and reserved ordinals ([`ordinals`]), the update order
//! and the rolling-update pass ([`update`]), and the partition plan used by the console to
//! preview a partition change ([`plan`]), status counts ([`status`]) and the mapping from
//! Kubernetes Pods ([`convert`]).
//!
//! Inputs are the small plain structs below; the caller maps API objects onto them. Nothing here
//! reads a clock: readiness ages are given in seconds.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::{Deserialize, Serialize};

pub mod convert;
pub mod ordinals;
pub mod plan;
pub mod reconcile;
pub mod status;
pub mod update;

#[cfg(test)]
mod proptests;

/// `unorderedUpdate.priorityStrategy` and its terms: the shared update-sort model.
pub use crate::kruise::updatesort::{OrderTerm, PriorityStrategy, WeightTerm};
pub use ordinals::{
    ReplicasRange, parse_ordinal, replica_slots, replicas_range, reserve_ordinal_set,
};
pub use plan::{AstsPartitionPlan, PartitionFinalState, converge_partition, plan_partition};
pub use status::{AstsStatusCounts, compute_status};
pub use update::{
    RollingStep, UpdateAction, is_current_revision_needed, rolling_update_step, sort_pods_to_update,
};

/// Pod label holding the revision (`controller-revision-hash`).
pub const REVISION_LABEL: &str = "controller-revision-hash";
/// Pod label asking the controller to delete the pod (presence only).
pub const SPECIFIED_DELETE_LABEL: &str = "apps.kruise.io/specified-delete";
/// Lifecycle state label.
pub const LIFECYCLE_STATE_LABEL: &str = "lifecycle.apps.kruise.io/state";

/// `spec.podManagementPolicy`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PodManagementPolicy {
    /// Monotonic: one pod at a time, in ordinal order (the default).
    #[default]
    OrderedReady,
    /// Burst: pods are created and deleted in parallel.
    Parallel,
}

/// `spec.updateStrategy.type`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum UpdateStrategyType {
    /// Rolling update (the default).
    #[default]
    RollingUpdate,
    /// Pods are only replaced when deleted by hand.
    OnDelete,
}

/// `rollingUpdate.podUpdatePolicy`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PodUpdatePolicy {
    /// Delete and recreate (the default).
    #[default]
    ReCreate,
    /// In place when the revision diff allows it, else recreate.
    InPlaceIfPossible,
    /// In place only.
    InPlaceOnly,
}

/// `rollingUpdate.unorderedUpdate`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnorderedUpdate {
    /// Optional priority among the pods waiting for the update.
    #[serde(default)]
    pub priority_strategy: Option<PriorityStrategy>,
}

/// `spec.updateStrategy.rollingUpdate` after defaulting.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdate {
    /// Number of pods kept on the old revision (int32, not a percent).
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub partition: i32,
    /// Default 1; a percent rounds down and the result is at least 1.
    #[serde(default)]
    pub max_unavailable: Option<IntOrString>,
    /// Stops the rolling phase.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub paused: bool,
    /// Present means unordered update (Parallel only).
    #[serde(default)]
    pub unordered_update: Option<UnorderedUpdate>,
    /// How a pod is updated.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub pod_update_policy: PodUpdatePolicy,
    /// `rollingUpdate.minReadySeconds`.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub min_ready_seconds: i32,
}

/// The parts of an Advanced StatefulSet spec the rollout logic reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AstsSpec {
    /// `spec.replicas` (defaulted to 1 by the API).
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub replicas: i32,
    /// `spec.reserveOrdinals`: ints or `"a-b"` ranges.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub reserve_ordinals: Vec<IntOrString>,
    /// `spec.ordinals.start` (needs the `StatefulSetStartOrdinal` gate).
    #[serde(default)]
    pub ordinals_start: Option<i32>,
    /// `spec.podManagementPolicy`.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub pod_management_policy: PodManagementPolicy,
    /// `spec.updateStrategy.type`.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub update_strategy_type: UpdateStrategyType,
    /// `spec.updateStrategy.rollingUpdate` (None = unset).
    #[serde(default)]
    pub rolling_update: Option<RollingUpdate>,
}

/// One pod of the set, as the rollout logic sees it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AstsPod {
    /// Pod name `<set>-<ordinal>`.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub name: String,
    /// Value of the `controller-revision-hash` label.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub revision: String,
    /// `status.phase` (`""` = not created yet).
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub phase: String,
    /// Ready condition is True.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub ready: bool,
    /// Seconds since the Ready condition turned True (None = unknown / zero time).
    #[serde(default)]
    pub ready_for_seconds: Option<i64>,
    /// Has a deletionTimestamp.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub terminating: bool,
    /// `lifecycle.apps.kruise.io/state` (`""` = absent).
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub lifecycle_state: String,
    /// Carries `apps.kruise.io/specified-delete`.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub specified_delete: bool,
    /// An in-place update of this pod is still in progress.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub in_place_update_pending: bool,
    /// Pod labels (for priority strategies).
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub labels: BTreeMap<String, String>,
}

impl AstsPod {
    /// The ordinal parsed from the name, or -1 (`getOrdinal`).
    pub fn ordinal(&self) -> i32 {
        parse_ordinal(&self.name)
    }

    /// Port of pkg/controller/statefulset/stateful_set_utils.go::isHealthy (v1.8.4).
    pub fn is_healthy(&self) -> bool {
        matches!(self.lifecycle_state.as_str(), "" | "Normal")
            && self.phase == "Running"
            && self.ready
            && !self.terminating
    }

    /// Port of pkg/controller/statefulset/stateful_set_utils.go::isRunningAndAvailable (v1.8.4).
    pub fn is_running_and_available(&self, min_ready_seconds: i32) -> bool {
        if !matches!(self.lifecycle_state.as_str(), "" | "Normal") {
            return false;
        }
        if self.phase != "Running" || !self.ready {
            return false;
        }
        if min_ready_seconds <= 0 {
            return true;
        }
        self.ready_for_seconds
            .is_some_and(|age| age >= i64::from(min_ready_seconds))
    }
}

/// Whether `pod_revision` names revision `revision`: equal, or equal after the last `-`
/// (Port of pkg/util/revision/revision.go::EqualToRevisionHash (v1.8.4)).
pub fn equal_to_revision_hash(pod_revision: &str, revision: &str) -> bool {
    if pod_revision == revision {
        return true;
    }
    let suffix = |s: &str| s.rsplit_once('-').map_or(s, |(_, tail)| tail).to_owned();
    suffix(pod_revision) == suffix(revision)
}

/// Port of pkg/util/revision/revision.go::IsPodUpdate (v1.8.4).
pub fn is_pod_update(
    pod: &AstsPod,
    update_revision: &str,
    gates: &crate::kruise::FeatureGates,
) -> bool {
    if gates.enabled("PreparingUpdateAsUpdate") && pod.lifecycle_state == "PreparingUpdate" {
        return true;
    }
    equal_to_revision_hash(&pod.revision, update_revision)
}
