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
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct PodUnavailableBudget {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: PodUnavailableBudgetSpec,
    /// Always present (defaulted when absent): the webhook updates it in place.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub status: PodUnavailableBudgetStatus,
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

/// Times in the two maps are RFC3339 strings kept exactly as stored (the webhook writes them back).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodUnavailableBudgetStatus {
    /// `metadata.generation` last acted on.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub observed_generation: i64,
    /// Pods the webhook let go (deleted/evicted), by name, with the admission time, not yet
    /// seen by the controller.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    #[schemars(with = "BTreeMap<String, Time>")]
    pub disrupted_pods: BTreeMap<String, String>,
    /// Pods made unavailable by an update the webhook allowed, by name, with the admission time.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    #[schemars(with = "BTreeMap<String, Time>")]
    pub unavailable_pods: BTreeMap<String, String>,
    /// How many more pods may become unavailable.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub unavailable_allowed: i32,
    /// Available pods counted.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub current_available: i32,
    /// Pods that must stay available.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub desired_available: i32,
    /// Replicas the budget is computed over.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub total_replicas: i32,
}
