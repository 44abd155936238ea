//! Types shared by several Kruise kinds: lifecycle hooks, update priority and scatter rules,
//! in-place update strategy, workload conditions and target references.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Lifecycle hooks of CloneSet, Advanced StatefulSet and Advanced DaemonSet pods.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Lifecycle {
    /// Hook before a pod is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_delete: Option<LifecycleHook>,
    /// Hook before a pod is updated in place, and after it has been updated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_update: Option<LifecycleHook>,
    /// Hook after a pod is created, before it becomes Normal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_normal: Option<LifecycleHook>,
}

/// One lifecycle hook: the labels/finalizers that hold the pod in its preparing state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleHook {
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub labels_handler: BTreeMap<String, String>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub finalizers_handler: Vec<String>,
    /// Sets the `KruisePodReady` condition to False while preparing delete/update.
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub mark_pod_not_ready: bool,
}

/// Rules for the order in which pods are updated (weight terms or ordered-key terms).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityStrategy {
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub weight_priority: Vec<UpdatePriorityWeightTerm>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub order_priority: Vec<UpdatePriorityOrderTerm>,
}

/// Pods matching `match_selector` get `weight` (1-100) added to their priority.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityWeightTerm {
    pub weight: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub match_selector: LabelSelector,
}

/// Pods are sorted by the last integer in the value of label `ordered_key`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityOrderTerm {
    pub ordered_key: String,
}

/// One scatter term: pods with label `key=value` are spread across update batches.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UpdateScatterTerm {
    pub key: String,
    pub value: String,
}

/// In-place update options.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateStrategy {
    /// Seconds between marking the pod not-ready and updating its containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_period_seconds: Option<i32>,
}

/// A workload condition (CloneSet, Advanced StatefulSet, Advanced DaemonSet, UnitedDeployment...).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadCondition {
    #[serde(rename = "type")]
    pub type_: String,
    /// True, False or Unknown.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A reference to a workload by apiVersion, kind and name (PUB, PersistentPodState,
/// WorkloadSpread).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetReference {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub api_version: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub kind: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub name: String,
}

/// When a job (BroadcastJob, ImagePullJob) counts as finished and how long it is kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompletionPolicy {
    /// Always | Never.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i32>,
}

/// Deserializes an explicit `null` (e.g. an empty `metadata:` or `containers:` in hand-written
/// YAML) as the type's default, like a missing field.
pub fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Option::unwrap_or_default)
}
