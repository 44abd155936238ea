//! ContainerRecreateRequest (containerrecreaterequests.apps.kruise.io/v1alpha1, short name `crr`):
//! restart containers of a running pod in place.

use k8s_openapi::{
    api::core::v1::{ContainerPort, ExecAction, HTTPGetAction, TCPSocketAction},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct ContainerRecreateRequest {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: ContainerRecreateRequestSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ContainerRecreateRequestStatus>,
}
crate::impl_resource!(
    ContainerRecreateRequest,
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "ContainerRecreateRequest",
    plural = "containerrecreaterequests",
    scope = NamespaceResourceScope
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestSpec {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub pod_name: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub containers: Vec<ContainerRecreateRequestContainer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<ContainerRecreateRequestStrategy>,
    /// Seconds after creation before the request is marked failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<i64>,
    /// Seconds after completion before the request is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestContainer {
    pub name: String,
    /// Synced from the pod's container by the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_stop: Option<ProbeHandler>,
    /// Synced from the pod's container by the webhook (`Some(vec![])` when the pod's container
    /// lists `ports: []`, which the webhook's patch keeps writing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<Vec<ContainerPort>>,
    /// The container's ID and restart count when the request was created (set by the webhook).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_context: Option<ContainerRecreateRequestContainerContext>,
}

/// A preStop handler: exec, httpGet or tcpSocket.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProbeHandler {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<ExecAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_get: Option<HTTPGetAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_socket: Option<TCPSocketAction>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestContainerContext {
    #[serde(
        rename = "containerID",
        default,
        deserialize_with = "crate::api::common::null_as_default"
    )]
    pub container_id: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub restart_count: i32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestStrategy {
    /// Fail (default) | Ignore ("" when unset, like Go's omitempty string).
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub failure_policy: String,
    /// Recreate the next container only after the previous one is running again.
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub ordered_recreate: bool,
    /// Kill without preStop and without waiting.
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub force_recreate: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
    /// Mark the pod not-ready this long before stopping the containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unready_grace_period_seconds: Option<i64>,
    /// A recreated container counts as started after running this long (0 when unset).
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "is_zero"
    )]
    pub min_started_seconds: i32,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestStatus {
    /// Pending | Recreating | Succeeded | Failed | Completed.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub phase: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub message: String,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub container_recreate_states: Vec<ContainerRecreateRequestContainerRecreateState>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestContainerRecreateState {
    pub name: String,
    /// Pending | Recreating | Failed | Succeeded.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub phase: String,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub message: String,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub is_killed: bool,
}

fn is_zero(v: &i32) -> bool {
    *v == 0
}
