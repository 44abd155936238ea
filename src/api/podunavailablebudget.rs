//! PodUnavailableBudget (podunavailablebudgets.policy.kruise.io/v1alpha1, short name `pub`):
//! limits how many matched pods may be unavailable, guarding delete, eviction and update.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::{
    apis::meta::v1::{LabelSelector, ObjectMeta, Time},
    util::intstr::IntOrString,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::TargetReference;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodUnavailableBudget {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: PodUnavailableBudgetSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<PodUnavailableBudgetStatus>,
}
crate::impl_resource!(
    PodUnavailableBudget,
    group = "policy.kruise.io",
    version = "v1alpha1",
    kind = "PodUnavailableBudget",
    plural = "podunavailablebudgets",
    scope = NamespaceResourceScope
);

/// Exactly one of `selector` and `target_ref`, and of `max_unavailable` and `min_available`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodUnavailableBudgetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ref: Option<TargetReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_available: Option<IntOrString>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodUnavailableBudgetStatus {
    #[serde(default)]
    pub observed_generation: i64,
    /// Pods the webhook let go (deleted/evicted/updated), by name, not yet seen by the controller.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub disrupted_pods: BTreeMap<String, Time>,
    /// Pods made unavailable by an update the webhook allowed, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unavailable_pods: BTreeMap<String, Time>,
    #[serde(default)]
    pub unavailable_allowed: i32,
    #[serde(default)]
    pub current_available: i32,
    #[serde(default)]
    pub desired_available: i32,
    #[serde(default)]
    pub total_replicas: i32,
}
