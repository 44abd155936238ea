//! UnitedDeployment (uniteddeployments.apps.kruise.io/v1alpha1, short name `ud`): one workload
//! template split into per-topology subsets (each a StatefulSet, Advanced StatefulSet, CloneSet
//! or Deployment).

use std::collections::BTreeMap;

use k8s_openapi::{
    api::{
        apps::v1::{DeploymentSpec, StatefulSetSpec as NativeStatefulSetSpec},
        core::v1::{NodeSelectorTerm, Toleration},
    },
    apimachinery::pkg::{
        apis::meta::v1::{LabelSelector, ObjectMeta},
        util::intstr::IntOrString,
    },
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cloneset::CloneSetSpec;
use super::common::WorkloadCondition;
use super::statefulset::StatefulSetSpec;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct UnitedDeployment {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: UnitedDeploymentSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<UnitedDeploymentStatus>,
}
crate::impl_resource!(
    UnitedDeployment,
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "UnitedDeployment",
    plural = "uniteddeployments",
    scope = NamespaceResourceScope
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default)]
    pub selector: LabelSelector,
    #[serde(default)]
    pub template: SubsetTemplate,
    #[serde(default)]
    pub topology: Topology,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy: Option<UnitedDeploymentUpdateStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
}

/// Exactly one template is set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubsetTemplate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stateful_set_template: Option<NativeStatefulSetTemplateSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advanced_stateful_set_template: Option<AdvancedStatefulSetTemplateSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clone_set_template: Option<CloneSetTemplateSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment_template: Option<DeploymentTemplateSpec>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NativeStatefulSetTemplateSpec {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: NativeStatefulSetSpec,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdvancedStatefulSetTemplateSpec {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: StatefulSetSpec,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CloneSetTemplateSpec {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: CloneSetSpec,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DeploymentTemplateSpec {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: DeploymentSpec,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Topology {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subsets: Vec<Subset>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_strategy: Option<UnitedDeploymentScheduleStrategy>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Subset {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector_term: Option<NodeSelectorTerm>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_replicas: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_replicas: Option<IntOrString>,
    /// Strategic-merge patch applied to this subset's workload template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentScheduleStrategy {
    /// Fixed (default) | Adaptive.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<AdaptiveUnitedDeploymentStrategy>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdaptiveUnitedDeploymentStrategy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reschedule_critical_seconds: Option<i32>,
    /// Kruise v1.8 (renamed `unschedulableDuration` in v1.9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unschedulable_last_seconds: Option<i32>,
    /// Kruise v1.9: seconds a pod may stay unschedulable before its subset counts as such.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unschedulable_duration: Option<i32>,
    /// Kruise v1.9: keep unschedulable pods (reserved) instead of deleting them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserve_unschedulable_pods: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentUpdateStrategy {
    /// Manual.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manual_update: Option<ManualUpdate>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ManualUpdate {
    /// Partition per subset name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub partitions: BTreeMap<String, i32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentStatus {
    #[serde(default)]
    pub observed_generation: i64,
    #[serde(default)]
    pub replicas: i32,
    #[serde(default)]
    pub ready_replicas: i32,
    #[serde(default)]
    pub updated_replicas: i32,
    #[serde(default)]
    pub updated_ready_replicas: i32,
    #[serde(default)]
    pub current_revision: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub subset_replicas: BTreeMap<String, i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subset_statuses: Vec<UnitedDeploymentSubsetStatus>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<WorkloadCondition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_status: Option<UpdateStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    /// Kruise v1.9: pods kept while unschedulable (adaptive strategy with reservation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved_pods: Option<i32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UnitedDeploymentSubsetStatus {
    pub name: String,
    #[serde(default)]
    pub replicas: i32,
    #[serde(default)]
    pub partition: i32,
    /// Kruise v1.9.
    #[serde(
        default,
        rename = "readyReplicas",
        skip_serializing_if = "Option::is_none"
    )]
    pub ready_replicas: Option<i32>,
    /// Kruise v1.9.
    #[serde(
        default,
        rename = "reservedPods",
        skip_serializing_if = "Option::is_none"
    )]
    pub reserved_pods: Option<i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<WorkloadCondition>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStatus {
    #[serde(default)]
    pub updated_revision: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub current_partitions: BTreeMap<String, i32>,
}
