//! CloneSet (apps.kruise.io). One internal model (the v1alpha1 shape); v1beta1 objects map into it
//! through [`from_served_json`] and back through [`to_served_json`] (see `cloneset/v1beta1.rs`).

mod v1beta1;

use k8s_openapi::{
    api::core::v1::{PersistentVolumeClaim, PodTemplateSpec},
    apimachinery::pkg::{
        apis::meta::v1::{LabelSelector, ObjectMeta, Time},
        util::intstr::IntOrString,
    },
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{InPlaceUpdateStrategy, Lifecycle, UpdatePriorityStrategy, UpdateScatterTerm};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct CloneSet {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
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

impl CloneSet {
    /// Reads a CloneSet as served in `version` (`v1alpha1` or `v1beta1`); see [`from_served_json`].
    pub fn from_served_json(
        version: &str,
        value: serde_json::Value,
    ) -> Result<CloneSet, serde_json::Error> {
        from_served_json(version, value)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub selector: LabelSelector,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub template: PodTemplateSpec,
    /// Claims created per pod instance, named `<vct-name>-<cs-name>-<instance-id>`.
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub volume_claim_templates: Vec<PersistentVolumeClaim>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_strategy: Option<CloneSetScaleStrategy>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub update_strategy: CloneSetUpdateStrategy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
    /// Upstream HEAD only (both versions; not in the v1.8.4 schema, which prunes it): seconds
    /// before a stalled rollout gets the `Progressing` condition with reason
    /// `ProgressDeadlineExceeded`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_deadline_seconds: Option<i32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetScaleStrategy {
    /// Names of pods to delete; names of pods that do not exist are dropped by the controller.
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub pods_to_delete: Vec<String>,
    /// Limit on unavailable pods while scaling up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// When true, a new pod does not reuse the PVCs left by a deleted instance.
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        rename = "disablePVCReuse",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub disable_pvc_reuse: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetUpdateStrategy {
    /// ReCreate | InPlaceIfPossible | InPlaceOnly (and OnDelete, mapped from v1beta1).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub paused: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_strategy: Option<UpdatePriorityStrategy>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub scatter_strategy: Vec<UpdateScatterTerm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_update_strategy: Option<InPlaceUpdateStrategy>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetStatus {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub observed_generation: i64,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub replicas: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub ready_replicas: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub available_replicas: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub updated_replicas: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub updated_ready_replicas: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub updated_available_replicas: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_updated_replicas: Option<i32>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub update_revision: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub current_revision: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub conditions: Vec<CloneSetCondition>,
}

/// A CloneSet condition (`CloneSetCondition`): the shared workload condition plus v1.9.0's
/// `lastUpdateTime`, which the `Progressing` condition's deadline runs from (#2108; the v1.8.4
/// schema has no such field, and the other workloads' conditions never had it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetCondition {
    #[serde(rename = "type")]
    pub type_: String,
    /// True, False or Unknown.
    pub status: String,
    /// When the condition was last written with a new status or reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Reads a CloneSet as served in `version` into the one internal model.
///
/// v1alpha1 is the internal shape. v1beta1 (upstream HEAD) nests `partition`, `paused`,
/// `maxUnavailable`, `maxSurge`, the priority/scatter/in-place strategies and `podUpdatePolicy`
/// under `updateStrategy.rollingUpdate`, and inverts `disablePVCReuse` into `enablePVCReuse`;
/// those are mapped back here. Any other version is an error.
pub fn from_served_json(
    version: &str,
    mut value: serde_json::Value,
) -> Result<CloneSet, serde_json::Error> {
    match version {
        "v1alpha1" => {}
        "v1beta1" => v1beta1::to_internal(&mut value),
        other => return Err(unknown_version(other)),
    }
    serde_json::from_value(value)
}

/// Writes the internal model in the shape served as `version` (the inverse of
/// [`from_served_json`]), with `apiVersion` and `kind` set.
pub fn to_served_json(
    version: &str,
    cloneset: &CloneSet,
) -> Result<serde_json::Value, serde_json::Error> {
    let mut value = serde_json::to_value(cloneset)?;
    match version {
        "v1alpha1" => {}
        "v1beta1" => v1beta1::from_internal(&mut value),
        other => return Err(unknown_version(other)),
    }
    if let Some(object) = value.as_object_mut() {
        object.insert(
            "apiVersion".into(),
            format!("apps.kruise.io/{version}").into(),
        );
        object.insert("kind".into(), "CloneSet".into());
    }
    Ok(value)
}

/// Rewrites a v1beta1 CloneSet JSON object into the v1alpha1 shape, in place (the conversion
/// webhook's direction to v1alpha1).
pub fn v1beta1_to_internal(value: &mut serde_json::Value) {
    v1beta1::to_internal(value);
}

/// Rewrites a v1alpha1 CloneSet JSON object into the v1beta1 shape, in place.
pub fn internal_to_v1beta1(value: &mut serde_json::Value) {
    v1beta1::from_internal(value);
}

fn unknown_version(version: &str) -> serde_json::Error {
    <serde_json::Error as serde::de::Error>::custom(format!(
        "CloneSet version {version:?} is not supported (expected v1alpha1 or v1beta1)"
    ))
}
