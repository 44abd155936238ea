//! CloneSet (apps.kruise.io). One internal model (the v1alpha1 shape); v1beta1 objects map into it.

use k8s_openapi::{
    api::core::v1::PodTemplateSpec,
    apimachinery::pkg::{
        apis::meta::v1::{LabelSelector, ObjectMeta},
        util::intstr::IntOrString,
    },
};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CloneSet {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: CloneSetSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<CloneSetStatus>,
}
crate::impl_resource!(
    CloneSet,
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "CloneSet",
    plural = "clonesets",
    scope = NamespaceResourceScope
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default)]
    pub selector: LabelSelector,
    #[serde(default)]
    pub template: PodTemplateSpec,
    #[serde(default)]
    pub update_strategy: CloneSetUpdateStrategy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetUpdateStrategy {
    /// ReCreate | InPlaceIfPossible | InPlaceOnly.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetStatus {
    #[serde(default)]
    pub observed_generation: i64,
    #[serde(default)]
    pub replicas: i32,
    #[serde(default)]
    pub ready_replicas: i32,
    #[serde(default)]
    pub available_replicas: i32,
    #[serde(default)]
    pub updated_replicas: i32,
    #[serde(default)]
    pub updated_ready_replicas: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_updated_replicas: Option<i32>,
    #[serde(default)]
    pub update_revision: String,
    #[serde(default)]
    pub current_revision: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
}

/// Reads a CloneSet as served in `version` into the one internal model.
///
/// v1alpha1 is the internal shape. v1beta1 (upstream HEAD) moves `partition`, `paused` (and
/// `podUpdatePolicy`) under `updateStrategy.rollingUpdate`; they are lifted back up here.
pub fn from_served_json(
    version: &str,
    mut value: serde_json::Value,
) -> Result<CloneSet, serde_json::Error> {
    if version != "v1alpha1" {
        if let Some(strategy) = value
            .pointer_mut("/spec/updateStrategy")
            .and_then(|s| s.as_object_mut())
        {
            if let Some(serde_json::Value::Object(rolling)) = strategy.remove("rollingUpdate") {
                for (key, v) in rolling {
                    strategy.entry(key).or_insert(v);
                }
            }
        }
    }
    serde_json::from_value(value)
}
