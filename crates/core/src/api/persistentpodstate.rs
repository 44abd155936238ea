//! PersistentPodState (persistentpodstates.apps.kruise.io/v1alpha1): remembers each pod's node
//! topology and annotations so a recreated pod of a StatefulSet lands where it was.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::TargetReference;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct PersistentPodState {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: PersistentPodStateSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<PersistentPodStateStatus>,
}
crate::impl_resource!(
    PersistentPodState,
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "PersistentPodState",
    plural = "persistentpodstates",
    scope = NamespaceResourceScope
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersistentPodStateSpec {
    /// The StatefulSet (native or Advanced) whose pods are tracked.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub target_ref: TargetReference,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_persistent_topology: Option<NodeTopologyTerm>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub preferred_persistent_topology: Vec<PreferredTopologyTerm>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub persistent_pod_annotations: Vec<PersistentPodAnnotation>,
    /// WhenScaled (default) | WhenDeleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_pod_state_retention_policy: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeTopologyTerm {
    /// Node label keys, e.g. `topology.kubernetes.io/zone`.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub node_topology_keys: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PreferredTopologyTerm {
    pub weight: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub preference: NodeTopologyTerm,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PersistentPodAnnotation {
    pub key: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersistentPodStateStatus {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub observed_generation: i64,
    /// By pod name.
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub pod_states: BTreeMap<String, PodState>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub node_topology_labels: BTreeMap<String, String>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub annotations: BTreeMap<String, String>,
}
