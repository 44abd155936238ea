//! PodProbeMarker (podprobemarkers.apps.kruise.io/v1alpha1): custom probes whose results become
//! pod conditions, labels and annotations.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::Probe,
    apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct PodProbeMarker {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
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

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodProbeMarkerSpec {
    /// None when absent, so validation can tell a missing selector from an empty one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub probes: Vec<PodContainerProbe>,
}

/// One probe run in `container_name` of every matched pod.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodContainerProbe {
    /// Probe name, unique in the marker; also the default pod condition type.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub name: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub container_name: String,
    /// The probe (`ContainerProbeSpec`, a core Probe inlined): a handler (exec, httpGet,
    /// tcpSocket, grpc) with its timing; None when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<Probe>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub marker_policy: Vec<ProbeMarkerPolicy>,
    /// Pod condition type written with the result ("" means `name`).
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub pod_condition_type: String,
}

/// Labels and annotations applied to the pod while the probe is in `state`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProbeMarkerPolicy {
    /// Succeeded | Failed.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub state: String,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub labels: BTreeMap<String, String>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub annotations: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodProbeMarkerStatus {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub observed_generation: i64,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub matched_pods: i64,
}
