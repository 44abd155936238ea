//! ContainerRecreateRequest constants, the manager's sync-container-statuses annotation entry
//! and accessors (`apis/apps/v1alpha1/containerrecreaterequest_types.go`, v1.8.4). The API
//! types themselves are the shared ones in [`crate::api::containerrecreaterequest`].

use serde::{Deserialize, Serialize};

pub use crate::api::containerrecreaterequest::{
    ContainerRecreateRequest, ContainerRecreateRequestContainer,
    ContainerRecreateRequestContainerContext, ContainerRecreateRequestContainerRecreateState,
    ContainerRecreateRequestSpec, ContainerRecreateRequestStatus, ContainerRecreateRequestStrategy,
    ProbeHandler,
};

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

/// One entry of the `crr.apps.kruise.io/sync-container-statuses` annotation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrrSyncContainerStatus {
    pub name: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub ready: bool,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
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
