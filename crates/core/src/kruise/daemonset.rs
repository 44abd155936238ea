//! Advanced DaemonSet (apps.kruise.io/v1alpha1; v1beta1 from v1.9.0) rollout logic, ported sans-IO
//! from Kruise v1.8.4 `pkg/controller/daemonset`, with v1.9.0's changes behind [`KruiseVersion`](crate::kruise::KruiseVersion)
//! (a percent partition, [`partition_nodes`]): which nodes may update under partition and selector, the surge and
//! unavailability budgets, one rolling-update pass ([`update`]) and the partition preview for the
//! plan API ([`plan`]), which nodes should run the pod ([`scheduling`]) and the mapping from
//! Kubernetes objects ([`convert`]), and the validating webhook ([`validate`]).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString};
use serde::{Deserialize, Serialize};

pub mod convert;
pub mod plan;
pub mod reconcile;
pub mod scheduling;
pub mod update;
pub mod validate;

#[cfg(test)]
mod tests;

pub use plan::{DsPartitionPlan, plan_partition};
pub use scheduling::{NodeFit, node_should_run_daemon_pod, nodes_that_should_run};
pub use update::{
    DsRollingStep, filter_nodes_to_update, find_updated_pods_on_node, partition_nodes,
    resolve_partition, rolling_update_step, updated_desired_node_counts,
};

/// Pod label holding the bare template hash.
pub const HASH_LABEL: &str = "controller-revision-hash";
/// Deprecated pod label holding the template generation.
pub const TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";

/// `spec.updateStrategy.type`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum DsUpdateStrategyType {
    /// Rolling update (the default).
    #[default]
    RollingUpdate,
    /// Pods are replaced only when deleted by hand.
    OnDelete,
}

/// `rollingUpdate.rollingUpdateType`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RollingUpdateType {
    /// Delete then create (the default).
    #[default]
    Standard,
    /// In place when the diff is image-only and the pod has the InPlaceUpdateReady gate.
    InPlaceIfPossible,
    /// Deprecated; the defaulter rewrites it to Standard with maxSurge 1.
    Surging,
}

/// `spec.updateStrategy.rollingUpdate`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DsRollingUpdate {
    /// Standard or InPlaceIfPossible.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub rolling_update_type: RollingUpdateType,
    /// Nodes kept on the old revision: a number or (v1.9.0) a percent of
    /// [`DsSpec::desired_number_scheduled`], rounded down ([`resolve_partition`]).
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub partition: IntOrString,
    /// Only nodes matching this selector update.
    #[serde(default)]
    pub selector: Option<LabelSelector>,
    /// Rounded up against the desired node count; unset is 0.
    #[serde(default)]
    pub max_unavailable: Option<IntOrString>,
    /// Rounded up against the desired node count; unset is 0.
    #[serde(default)]
    pub max_surge: Option<IntOrString>,
    /// Stops the rolling update (pods are still created and deleted).
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub paused: bool,
}

/// The parts of an Advanced DaemonSet spec the rollout logic reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DsSpec {
    /// `spec.updateStrategy.type`.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub update_strategy_type: DsUpdateStrategyType,
    /// `spec.updateStrategy.rollingUpdate`.
    #[serde(default)]
    pub rolling_update: Option<DsRollingUpdate>,
    /// `spec.minReadySeconds`.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub min_ready_seconds: i32,
    /// The `deprecated.daemonset.template.generation` annotation, if parseable.
    #[serde(default)]
    pub template_generation: Option<i64>,
    /// `spec.burstReplicas` scaled (default 250): in-place updates per pass.
    #[serde(default)]
    pub burst_replicas: Option<i32>,
    /// `status.desiredNumberScheduled` as last written: what a percent partition scales against.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub desired_number_scheduled: i32,
}

/// One daemon pod.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DsPod {
    /// Pod name.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub name: String,
    /// `controller-revision-hash` label.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub hash: String,
    /// `pod-template-generation` label.
    #[serde(default)]
    pub template_generation: Option<String>,
    /// Has a deletionTimestamp.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub terminating: bool,
    /// Ready condition is True.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub ready: bool,
    /// Seconds since Ready turned True (None = unknown).
    #[serde(default)]
    pub ready_for_seconds: Option<i64>,
    /// `lifecycle.apps.kruise.io/state`.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub lifecycle_state: String,
}

impl DsPod {
    /// Port of k8s.io/kubernetes/pkg/api/v1/pod::IsPodAvailable (v1.8.4 pin).
    pub fn is_available(&self, min_ready_seconds: i32) -> bool {
        self.ready
            && (min_ready_seconds <= 0
                || self
                    .ready_for_seconds
                    .is_some_and(|age| age >= i64::from(min_ready_seconds)))
    }

    /// Port of pkg/controller/daemonset/daemonset_util.go::isPodPreDeleting (v1.8.4).
    pub fn is_pre_deleting(&self) -> bool {
        self.lifecycle_state == "PreparingDelete"
    }

    /// Port of k8s.io/kubernetes/pkg/controller/daemon/util::IsPodUpdated (v1.8.4 pin).
    pub fn is_updated(&self, hash: &str, template_generation: Option<i64>) -> bool {
        let template_matches = template_generation
            .is_some_and(|g| self.template_generation.as_deref() == Some(g.to_string().as_str()));
        let hash_matches = !hash.is_empty() && self.hash == hash;
        hash_matches || template_matches
    }
}

/// A node, for the update selector.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DsNode {
    /// Node name.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub name: String,
    /// Node labels.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub labels: BTreeMap<String, String>,
}

/// Daemon pods by node name.
pub type NodeToPods = BTreeMap<String, Vec<DsPod>>;
