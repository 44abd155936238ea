//! Advanced DaemonSet (daemonsets.apps.kruise.io/v1alpha1).
//!
//! The model is v1alpha1-shaped at every Kruise version: v1.9.0's v1beta1
//! `spec.scaleStrategy.partitionedScaling` is carried as the v1alpha1 annotation
//! `daemonset.kruise.io/progressive-create-pod: "true"`, and `status.updateRevision` as
//! `status.daemonSetHash`.

use k8s_openapi::{
    api::core::v1::PodTemplateSpec,
    apimachinery::pkg::{
        apis::meta::v1::{LabelSelector, ObjectMeta},
        util::intstr::IntOrString,
    },
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{Lifecycle, WorkloadCondition};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct DaemonSet {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: DaemonSetSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<DaemonSetStatus>,
}
crate::impl_resource!(
    DaemonSet,
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "DaemonSet",
    plural = "daemonsets",
    scope = NamespaceResourceScope
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetSpec {
    #[serde(default)]
    pub selector: LabelSelector,
    #[serde(default)]
    pub template: PodTemplateSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy: Option<DaemonSetUpdateStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// How many pods may be created at once on new nodes (default 250).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_replicas: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetUpdateStrategy {
    /// RollingUpdate | OnDelete.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateDaemonSet>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateDaemonSet {
    /// Standard | Surging | InPlaceIfPossible.
    #[serde(
        default,
        rename = "rollingUpdateType",
        skip_serializing_if = "Option::is_none"
    )]
    pub rolling_update_type: Option<String>,
    /// Only nodes whose labels match are updated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Nodes kept at the old revision: a number, or (v1.9.0, where the field is int-or-string)
    /// a percent of the last `status.desiredNumberScheduled`, rounded down. v1.8.4's schema
    /// has it as an int32, which reads as [`IntOrString::Int`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetStatus {
    #[serde(default)]
    pub current_number_scheduled: i32,
    #[serde(default)]
    pub number_misscheduled: i32,
    #[serde(default)]
    pub desired_number_scheduled: i32,
    #[serde(default)]
    pub number_ready: i32,
    #[serde(default)]
    pub observed_generation: i64,
    #[serde(default)]
    pub updated_number_scheduled: i32,
    #[serde(default)]
    pub number_available: i32,
    #[serde(default)]
    pub number_unavailable: i32,
    #[serde(default)]
    pub daemon_set_hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<WorkloadCondition>,
}

/// Reads an Advanced DaemonSet served at `version` (v1alpha1, or v1beta1 — the storage version
/// since Kruise v1.9 — converted as upstream's conversion webhook does).
pub fn from_served_json(
    version: &str,
    value: serde_json::Value,
) -> Result<DaemonSet, serde_json::Error> {
    crate::api::conversion::from_served("apps.kruise.io", "DaemonSet", "v1alpha1", version, value)
}

/// Reads an Advanced DaemonSet at the version its `apiVersion` names (v1alpha1 when it names
/// none).
pub fn from_any_served_json(value: serde_json::Value) -> Result<DaemonSet, serde_json::Error> {
    let version = crate::api::conversion::version_of(&value).to_owned();
    from_served_json(&version, value)
}

/// Writes an Advanced DaemonSet in the shape served at `version` (the inverse of
/// [`from_served_json`]).
pub fn to_served_json(
    version: &str,
    ds: &DaemonSet,
) -> Result<serde_json::Value, serde_json::Error> {
    crate::api::conversion::to_served("apps.kruise.io", "DaemonSet", "v1alpha1", version, ds)
}
