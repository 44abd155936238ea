//! BroadcastJob (broadcastjobs.apps.kruise.io/v1alpha1, short name `bcj`): runs a pod to
//! completion on every matching node.

use k8s_openapi::{
    api::core::v1::PodTemplateSpec,
    apimachinery::pkg::{
        apis::meta::v1::{ObjectMeta, Time},
        util::intstr::IntOrString,
    },
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::CompletionPolicy;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct BroadcastJob {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: BroadcastJobSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<BroadcastJobStatus>,
}
crate::impl_resource!(
    BroadcastJob,
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "BroadcastJob",
    plural = "broadcastjobs",
    scope = NamespaceResourceScope
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BroadcastJobSpec {
    /// Pods running at once (number or percent of nodes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<IntOrString>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub template: PodTemplateSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_policy: Option<CompletionPolicy>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub paused: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<FailurePolicy>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailurePolicy {
    /// Continue | FailFast | Pause.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_limit: Option<i32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BroadcastJobStatus {
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub conditions: Vec<JobCondition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub active: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub succeeded: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub failed: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub desired: i32,
    /// running | paused | failed | completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_probe_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
