//! ImageListPullJob (imagelistpulljobs.apps.kruise.io/v1alpha1): pre-pulls a list of images on
//! selected nodes, through one ImagePullJob per image.

use k8s_openapi::apimachinery::pkg::{
    apis::meta::v1::{LabelSelector, ObjectMeta, Time},
    util::intstr::IntOrString,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::CompletionPolicy;
use super::imagepulljob::{ImagePullJobNodeSelector, PullPolicy, SandboxConfig};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct ImageListPullJob {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: ImageListPullJobSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ImageListPullJobStatus>,
}
crate::impl_resource!(
    ImageListPullJob,
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "ImageListPullJob",
    plural = "imagelistpulljobs",
    scope = NamespaceResourceScope
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageListPullJobSpec {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub images: Vec<String>,
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
pub struct ImageListPullJobStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    /// ImagePullJobs (one per image) the list job wants.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub desired: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub active: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub completed: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub succeeded: i32,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub failed_image_statuses: Vec<FailedImageStatus>,
}

/// An image whose ImagePullJob failed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailedImageStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_job: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
