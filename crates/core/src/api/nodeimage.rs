//! NodeImage (nodeimages.apps.kruise.io/v1alpha1, cluster-scoped): one per node, named after
//! it; the images (and tags) kruise-daemon should keep pulled there, and their pull state.
//! ImagePullJobs write their image into the NodeImages of the nodes they select.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::imagepulljob::SandboxConfig;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct NodeImage {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: NodeImageSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<NodeImageStatus>,
}
crate::impl_resource!(
    NodeImage,
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "NodeImage",
    plural = "nodeimages",
    scope = ClusterResourceScope
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeImageSpec {
    /// Image name (without tag) -> what to pull of it.
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub images: BTreeMap<String, ImageSpec>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageSpec {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pull_secrets: Vec<ReferenceObject>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_config: Option<SandboxConfig>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub tags: Vec<ImageTagSpec>,
}

/// A secret by namespace and name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReferenceObject {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageTagSpec {
    pub tag: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<Time>,
    /// Always | IfNotPresent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<String>,
    /// The ImagePullJobs that asked for this tag.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owner_references: Vec<ObjectReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_policy: Option<ImageTagPullPolicy>,
    /// Bumped to ask for a new pull of the same tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageTagPullPolicy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_limit: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeImageStatus {
    /// Tags the spec asks for on this node.
    #[serde(default)]
    pub desired: i32,
    #[serde(default)]
    pub pulling: i32,
    #[serde(default)]
    pub succeeded: i32,
    #[serde(default)]
    pub failed: i32,
    /// Kruise v1.9: tags waiting for a pull slot (node-side pull concurrency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_sync_status: Option<SyncStatus>,
    /// Image name -> the state of each of its tags.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub image_statuses: BTreeMap<String, ImageStatus>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_at: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImageStatus {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub tags: Vec<ImageTagStatus>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageTagStatus {
    pub tag: String,
    /// Waiting | Pulling | Succeeded | Failed.
    pub phase: String,
    /// Percent pulled (0-100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
    #[serde(default, rename = "imageID", skip_serializing_if = "Option::is_none")]
    pub image_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
}

impl NodeImage {
    /// The pull phase of `image` (`name:tag`, or a name meaning tag `latest`) on this node:
    /// `Some(phase)` from the status, `Some("Waiting")` when only the spec asks for it, `None`
    /// when the node image does not know it.
    pub fn phase_of(&self, image: &str) -> Option<&str> {
        let (name, tag) = split_image(image);
        let status = self
            .status
            .as_ref()
            .and_then(|s| s.image_statuses.get(name))
            .and_then(|s| s.tags.iter().find(|t| t.tag == tag));
        if let Some(t) = status {
            return Some(t.phase.as_str());
        }
        let wanted = self
            .spec
            .images
            .get(name)
            .is_some_and(|i| i.tags.iter().any(|t| t.tag == tag));
        wanted.then_some("Waiting")
    }
}

/// `repo/name:tag` -> (`repo/name`, `tag`); no tag means `latest`. A `:` in a registry port
/// (`host:5000/name`) is not a tag separator; a digest (`@sha256:...`) is kept as the tag.
pub fn split_image(image: &str) -> (&str, &str) {
    if let Some((name, digest)) = image.split_once('@') {
        return (name, digest);
    }
    match image.rsplit_once(':') {
        Some((name, tag)) if !tag.contains('/') => (name, tag),
        _ => (image, "latest"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_split_into_name_and_tag() {
        assert_eq!(split_image("nginx:1.25"), ("nginx", "1.25"));
        assert_eq!(split_image("nginx"), ("nginx", "latest"));
        assert_eq!(
            split_image("reg.local:5000/team/app"),
            ("reg.local:5000/team/app", "latest")
        );
        assert_eq!(
            split_image("reg.local:5000/app:v2"),
            ("reg.local:5000/app", "v2")
        );
        assert_eq!(split_image("app@sha256:ab"), ("app", "sha256:ab"));
    }

    #[test]
    fn phase_comes_from_status_then_spec() {
        let ni: NodeImage = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "node-1"},
            "spec": {"images": {
                "nginx": {"tags": [{"tag": "1.25"}, {"tag": "1.26"}]}
            }},
            "status": {"desired": 2, "succeeded": 1, "imageStatuses": {
                "nginx": {"tags": [{"tag": "1.25", "phase": "Succeeded"}]}
            }}
        }))
        .unwrap();
        assert_eq!(ni.phase_of("nginx:1.25"), Some("Succeeded"));
        assert_eq!(ni.phase_of("nginx:1.26"), Some("Waiting"));
        assert_eq!(ni.phase_of("nginx:1.27"), None);
        assert_eq!(ni.phase_of("redis:7"), None);
    }
}
