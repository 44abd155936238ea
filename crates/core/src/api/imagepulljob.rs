//! ImagePullJob (imagepulljobs.apps.kruise.io/v1alpha1): pre-pulls an image on selected nodes.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::{
    apis::meta::v1::{LabelSelector, ObjectMeta, Time},
    util::intstr::IntOrString,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::CompletionPolicy;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct ImagePullJob {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: ImagePullJobSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ImagePullJobStatus>,
}
crate::impl_resource!(
    ImagePullJob,
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "ImagePullJob",
    plural = "imagepulljobs",
    scope = NamespaceResourceScope
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePullJobSpec {
    pub image: String,
    /// Names of secrets in the job's namespace.
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub pull_secrets: Vec<String>,
    /// Nodes to pull on, by name or labels; `None` means all nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<ImagePullJobNodeSelector>,
    /// Pull on the nodes of the pods matching this selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_policy: Option<PullPolicy>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub completion_policy: CompletionPolicy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_config: Option<SandboxConfig>,
    /// Always | IfNotPresent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePullJobNodeSelector {
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub names: Vec<String>,
    #[serde(flatten)]
    pub label_selector: LabelSelector,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PullPolicy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_limit: Option<i32>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SandboxConfig {
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

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePullJobStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub desired: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub active: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub succeeded: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub failed: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub failed_nodes: Vec<String>,
}
