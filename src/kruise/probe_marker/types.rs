//! PodProbeMarker and NodePodProbe API types (`apis/apps/v1alpha1/pod_probe_marker_types.go`,
//! `nodepodprobe_types.go`, v1.8.4) as plain serde data.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Probe;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use serde::{Deserialize, Serialize};

/// A PodProbeMarker (namespaced).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PodProbeMarker {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: PodProbeMarkerSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<PodProbeMarkerStatus>,
}
crate::impl_resource!(
    PodProbeMarker,
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "PodProbeMarker",
    plural = "podprobemarkers",
    scope = NamespaceResourceScope
);

/// `PodProbeMarkerSpec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PodProbeMarkerSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    #[serde(default)]
    pub probes: Vec<PodContainerProbe>,
}

/// `PodContainerProbe`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodContainerProbe {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub container_name: String,
    /// `ContainerProbeSpec` (a core Probe inlined); None when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<Probe>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub marker_policy: Vec<ProbeMarkerPolicy>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub pod_condition_type: String,
}

/// `ProbeMarkerPolicy`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeMarkerPolicy {
    #[serde(default)]
    pub state: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// `PodProbeMarkerStatus`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodProbeMarkerStatus {
    #[serde(default)]
    pub observed_generation: i64,
    #[serde(default)]
    pub matched_pods: i64,
}

/// A NodePodProbe (cluster-scoped, one per node).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePodProbe {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
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

/// `NodePodProbeSpec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePodProbeSpec {
    #[serde(default)]
    pub pod_probes: Vec<PodProbe>,
}

/// `PodProbe`: the probes of one pod.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PodProbe {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(default, rename = "IP", skip_serializing_if = "String::is_empty")]
    pub ip: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<ContainerProbe>,
}

/// `ContainerProbe`: `name` is `<ppmName>#<probeName>`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerProbe {
    pub name: String,
    #[serde(default)]
    pub container_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<Probe>,
}

/// `NodePodProbeStatus`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePodProbeStatus {
    #[serde(default)]
    pub pod_probe_statuses: Vec<PodProbeStatus>,
}

/// `PodProbeStatus`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodProbeStatus {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub uid: String,
    #[serde(default)]
    pub probe_states: Vec<ContainerProbeState>,
}

/// `ContainerProbeState`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerProbeState {
    pub name: String,
    #[serde(default)]
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_probe_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}
