//! `SlimPod`: the projection of a Pod that the views and the Kruise logic need, and nothing more.
//!
//! It deserializes straight from a Pod's JSON (unknown fields are skipped), so the pod store never
//! holds whole Pods. `managedFields` is dropped by the watcher before objects are stored.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimPod {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: SlimPodSpec,
    #[serde(default)]
    pub status: SlimPodStatus,
}
crate::impl_resource!(
    SlimPod,
    group = "",
    version = "v1",
    kind = "Pod",
    plural = "pods",
    scope = NamespaceResourceScope
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimPodSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    #[serde(default)]
    pub containers: Vec<SlimContainer>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub init_containers: Vec<SlimContainer>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readiness_gates: Vec<SlimReadinessGate>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimContainer {
    pub name: String,
    #[serde(default)]
    pub image: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimReadinessGate {
    pub condition_type: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimPodStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_ip: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<SlimPodCondition>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub container_statuses: Vec<SlimContainerStatus>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimPodCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimContainerStatus {
    pub name: String,
    #[serde(default)]
    pub ready: bool,
    #[serde(default)]
    pub restart_count: i32,
    #[serde(default)]
    pub image: String,
    #[serde(default, rename = "imageID")]
    pub image_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<SlimContainerState>,
}

/// The container's state summarised: which of running/waiting/terminated, with reason and time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimContainerState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<SlimStateDetail>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<SlimStateDetail>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminated: Option<SlimStateDetail>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimStateDetail {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_group_api_version_has_no_slash() {
        assert_eq!(<SlimPod as k8s_openapi::Resource>::API_VERSION, "v1");
        assert_eq!(
            <crate::api::CloneSet as k8s_openapi::Resource>::API_VERSION,
            "apps.kruise.io/v1alpha1"
        );
    }
}
