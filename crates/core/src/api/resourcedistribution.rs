//! ResourceDistribution (resourcedistributions.apps.kruise.io/v1alpha1, cluster-scoped): copies
//! one Secret or ConfigMap (`spec.resource`, kept as written) into the target namespaces and
//! keeps the copies in sync.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct ResourceDistribution {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: ResourceDistributionSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ResourceDistributionStatus>,
}
crate::impl_resource!(
    ResourceDistribution,
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "ResourceDistribution",
    plural = "resourcedistributions",
    scope = ClusterResourceScope
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDistributionSpec {
    /// The Secret or ConfigMap to copy, a whole manifest (apiVersion, kind, metadata, data).
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub resource: Value,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub targets: ResourceDistributionTargets,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDistributionTargets {
    /// Every namespace but kube-system, kube-public and the excluded ones.
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub all_namespaces: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excluded_namespaces: Option<NamespaceList>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub included_namespaces: Option<NamespaceList>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_label_selector: Option<LabelSelector>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NamespaceList {
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub list: Vec<NamespaceName>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NamespaceName {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub name: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDistributionStatus {
    /// Namespaces the resource should be in.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub desired: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub succeeded: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub failed: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub conditions: Vec<ResourceDistributionCondition>,
}

/// A failure kind (GetSourceFailed, CreateFailed, UpdateFailed, ConflictOccurred, ...) and the
/// namespaces it hit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDistributionCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub failed_namespace: Vec<String>,
}
