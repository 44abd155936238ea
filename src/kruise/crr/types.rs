//! ContainerRecreateRequest API types (`apis/apps/v1alpha1/containerrecreaterequest_types.go`,
//! v1.8.4) as plain serde data.

use k8s_openapi::api::core::v1::{ContainerPort, ExecAction, HTTPGetAction, TCPSocketAction};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};

/// A ContainerRecreateRequest (namespaced, `apps.kruise.io/v1alpha1`, short name `crr`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequest {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: CrrSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<CrrStatus>,
}
crate::impl_resource!(
    ContainerRecreateRequest,
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "ContainerRecreateRequest",
    plural = "containerrecreaterequests",
    scope = NamespaceResourceScope
);

/// `ContainerRecreateRequestSpec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrrSpec {
    #[serde(default)]
    pub pod_name: String,
    #[serde(default)]
    pub containers: Vec<CrrContainer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<CrrStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i32>,
}

/// `ContainerRecreateRequestContainer`: users set `name`; the webhook fills the rest.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrrContainer {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_stop: Option<ProbeHandler>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<Vec<ContainerPort>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_context: Option<CrrContainerContext>,
}

/// Kruise's `ProbeHandler` (the preStop copied from the pod).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbeHandler {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<ExecAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_get: Option<HTTPGetAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_socket: Option<TCPSocketAction>,
}

/// `ContainerRecreateRequestContainerContext`: the container as it was at creation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrrContainerContext {
    #[serde(rename = "containerID", default)]
    pub container_id: String,
    #[serde(default)]
    pub restart_count: i32,
}

/// `ContainerRecreateRequestStrategy`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrrStrategy {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub failure_policy: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ordered_recreate: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub force_recreate: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unready_grace_period_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_started_seconds: i32,
}

fn is_zero(v: &i32) -> bool {
    *v == 0
}

/// Failure policy: a failed container completes the CRR at once (the default).
pub const FAILURE_POLICY_FAIL: &str = "Fail";
/// Failure policy: failed containers are ignored.
pub const FAILURE_POLICY_IGNORE: &str = "Ignore";

/// CRR and container phases.
pub mod phase {
    pub const PENDING: &str = "Pending";
    pub const RECREATING: &str = "Recreating";
    pub const SUCCEEDED: &str = "Succeeded";
    pub const FAILED: &str = "Failed";
    pub const COMPLETED: &str = "Completed";
}

/// `ContainerRecreateRequestStatus`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrrStatus {
    #[serde(default)]
    pub phase: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub container_recreate_states: Vec<CrrContainerRecreateState>,
}

/// `ContainerRecreateRequestContainerRecreateState`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrrContainerRecreateState {
    pub name: String,
    #[serde(default)]
    pub phase: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_killed: bool,
}

/// One entry of the `crr.apps.kruise.io/sync-container-statuses` annotation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrrSyncContainerStatus {
    pub name: String,
    #[serde(default)]
    pub ready: bool,
    #[serde(default)]
    pub restart_count: i32,
    #[serde(rename = "containerID", default)]
    pub container_id: String,
}

impl ContainerRecreateRequest {
    /// `status.phase` ("" when unset).
    pub fn phase(&self) -> &str {
        self.status
            .as_ref()
            .map(|s| s.phase.as_str())
            .unwrap_or_default()
    }

    /// A label ("" when absent).
    pub fn label(&self, key: &str) -> &str {
        self.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(key))
            .map(String::as_str)
            .unwrap_or_default()
    }
}
