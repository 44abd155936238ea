//! WorkloadSpread (workloadspreads.apps.kruise.io/v1alpha1, short name `ws`): spreads a
//! workload's pods over subsets of nodes with per-subset limits and patches.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{NodeSelectorTerm, PreferredSchedulingTerm, Toleration},
    apimachinery::pkg::{
        apis::meta::v1::{LabelSelector, ObjectMeta, Time},
        util::intstr::IntOrString,
    },
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{TargetReference, WorkloadCondition};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct WorkloadSpread {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: WorkloadSpreadSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<WorkloadSpreadStatus>,
}
crate::impl_resource!(
    WorkloadSpread,
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "WorkloadSpread",
    plural = "workloadspreads",
    scope = NamespaceResourceScope
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ref: Option<TargetReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_filter: Option<TargetFilter>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub subsets: Vec<WorkloadSpreadSubset>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_strategy: Option<WorkloadSpreadScheduleStrategy>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub replicas_path_list: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadSubset {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_node_selector_term: Option<NodeSelectorTerm>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub preferred_node_selector_terms: Vec<PreferredSchedulingTerm>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub tolerations: Vec<Toleration>,
    /// Pods allowed in this subset (number or percent); `None` means unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_replicas: Option<IntOrString>,
    /// Strategic-merge patch applied to the pods of this subset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadScheduleStrategy {
    /// Fixed (default) | Adaptive.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<AdaptiveWorkloadSpreadStrategy>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdaptiveWorkloadSpreadStrategy {
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub disable_simulation_schedule: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reschedule_critical_seconds: Option<i32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadStatus {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub observed_generation: i64,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub subset_statuses: Vec<WorkloadSpreadSubsetStatus>,
    /// Subset statuses per workload revision (rolling updates).
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub versioned_subset_statuses: BTreeMap<String, Vec<WorkloadSpreadSubsetStatus>>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadSubsetStatus {
    pub name: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub replicas: i32,
    /// Pods still allowed; -1 means unlimited.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub missing_replicas: i32,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub creating_pods: BTreeMap<String, Time>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub deleting_pods: BTreeMap<String, Time>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub conditions: Vec<WorkloadCondition>,
}
