//! NodePodProbe (nodepodprobes.apps.kruise.io/v1alpha1, cluster-scoped, one per node): the probes
//! kruise-daemon runs on a node, and their results.

use k8s_openapi::{
    api::core::v1::Probe,
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct NodePodProbe {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: NodePodProbeSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<NodePodProbeStatus>,
}
crate::impl_resource!(
    NodePodProbe,
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "NodePodProbe",
    plural = "nodepodprobes",
    scope = ClusterResourceScope
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodePodProbeSpec {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub pod_probes: Vec<PodProbe>,
}

/// The probes for one pod on the node.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodProbe {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub name: String,
    // namespace, uid and IP are required by the CRD schema: Go writes them even when empty.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub namespace: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub uid: String,
    /// The pod IP ("" when unknown).
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        rename = "IP"
    )]
    pub ip: String,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub probes: Vec<ContainerProbe>,
}

/// One probe; `name` is `<PodProbeMarker name>#<probe name>`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerProbe {
    pub name: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub container_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<Probe>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodePodProbeStatus {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub pod_probe_statuses: Vec<PodProbeStatus>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodProbeStatus {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub name: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub namespace: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub uid: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub probe_states: Vec<ContainerProbeState>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerProbeState {
    pub name: String,
    /// Succeeded | Failed | Unknown ("" when not probed yet).
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_probe_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub message: String,
}
