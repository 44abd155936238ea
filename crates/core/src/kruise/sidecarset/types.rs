//! SidecarSet API types (`apis/apps/v1alpha1/sidecarset_types.go`, v1.8.4) as plain serde data.

use k8s_openapi::api::core::v1::{Container, LocalObjectReference, ObjectFieldSelector, Volume};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A SidecarSet (cluster-scoped, `apps.kruise.io/v1alpha1`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct SidecarSet {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: SidecarSetSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<SidecarSetStatus>,
}
crate::impl_resource!(
    SidecarSet,
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "SidecarSet",
    plural = "sidecarsets",
    scope = ClusterResourceScope
);

/// `SidecarSetSpec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub init_containers: Vec<SidecarContainer>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub containers: Vec<SidecarContainer>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub volumes: Vec<Volume>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub update_strategy: SidecarSetUpdateStrategy,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub injection_strategy: SidecarSetInjectionStrategy,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub image_pull_secrets: Vec<LocalObjectReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub patch_pod_metadata: Vec<SidecarSetPatchPodMetadata>,
}

/// A sidecar: a core container plus Kruise's injection and upgrade settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarContainer {
    #[serde(flatten)]
    pub container: Container,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub pod_inject_policy: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub upgrade_strategy: SidecarContainerUpgradeStrategy,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub share_volume_policy: ShareVolumePolicy,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub transfer_env: Vec<TransferEnvVar>,
}

impl SidecarContainer {
    /// The container name.
    pub fn name(&self) -> &str {
        &self.container.name
    }

    /// Whether this sidecar is upgraded with the hot-upgrade twin scheme.
    pub fn is_hot_upgrade(&self) -> bool {
        self.upgrade_strategy.upgrade_type == HOT_UPGRADE
    }
}

/// `podInjectPolicy` value placing the sidecar before the app containers.
pub const BEFORE_APP_CONTAINER: &str = "BeforeAppContainer";
/// `podInjectPolicy` value placing the sidecar after the app containers.
pub const AFTER_APP_CONTAINER: &str = "AfterAppContainer";
/// `upgradeType` of the twin-container scheme.
pub const HOT_UPGRADE: &str = "HotUpgrade";
/// `upgradeType` of a plain in-place image change (the default).
pub const COLD_UPGRADE: &str = "ColdUpgrade";

/// `SidecarContainerUpgradeStrategy`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarContainerUpgradeStrategy {
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub upgrade_type: String,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub hot_upgrade_empty_image: String,
}

/// `ShareVolumePolicy`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareVolumePolicy {
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        rename = "type",
        skip_serializing_if = "String::is_empty"
    )]
    pub type_: String,
}

/// `TransferEnvVar`: env copied from an app container.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TransferEnvVar {
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub source_container_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_container_name_from: Option<SourceContainerNameSource>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub env_name: String,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub env_names: Vec<String>,
}

/// `SourceContainerNameSource`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceContainerNameSource {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_ref: Option<ObjectFieldSelector>,
}

/// `SidecarSetUpdateStrategy`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetUpdateStrategy {
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        rename = "type",
        skip_serializing_if = "String::is_empty"
    )]
    pub type_: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub paused: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_strategy: Option<UpdatePriorityStrategy>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub scatter_strategy: Vec<UpdateScatterTerm>,
}

/// `updateStrategy.type` that stops in-place upgrades altogether.
pub const NOT_UPDATE: &str = "NotUpdate";
/// `updateStrategy.type` default.
pub const ROLLING_UPDATE: &str = "RollingUpdate";

/// `UpdatePriorityStrategy` (`apis/apps/pub`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityStrategy {
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub order_priority: Vec<UpdatePriorityOrderTerm>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub weight_priority: Vec<UpdatePriorityWeightTerm>,
}

/// `UpdatePriorityOrderTerm`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityOrderTerm {
    pub ordered_key: String,
}

/// `UpdatePriorityWeightTerm`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityWeightTerm {
    pub weight: i32,
    pub match_selector: LabelSelector,
}

/// `UpdateScatterTerm`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct UpdateScatterTerm {
    pub key: String,
    pub value: String,
}

/// `SidecarSetInjectionStrategy`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetInjectionStrategy {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub paused: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<SidecarSetInjectRevision>,
}

/// `SidecarSetInjectRevision`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetInjectRevision {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_name: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub policy: String,
}

/// `SidecarSetPatchPodMetadata`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetPatchPodMetadata {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub annotations: BTreeMap<String, String>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub patch_policy: String,
}

/// Patch policy: set a key only when absent (the default).
pub const PATCH_RETAIN: &str = "Retain";
/// Patch policy: always set the key.
pub const PATCH_OVERWRITE: &str = "Overwrite";
/// Patch policy: RFC 7386 merge of JSON values.
pub const PATCH_MERGE_JSON: &str = "MergePatchJson";

/// `SidecarSetStatus`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetStatus {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub observed_generation: i64,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub matched_pods: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub updated_pods: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub ready_pods: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub updated_ready_pods: i32,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub latest_revision: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
}

impl SidecarSet {
    /// The set's name.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// One of the set's own annotations ("" when absent).
    pub fn annotation(&self, key: &str) -> &str {
        self.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(key))
            .map(String::as_str)
            .unwrap_or_default()
    }

    /// `status.latestRevision` ("" when unset).
    pub fn latest_revision(&self) -> &str {
        self.status
            .as_ref()
            .map(|s| s.latest_revision.as_str())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::Resource as _;

    use super::SidecarSet;

    #[test]
    fn a_sidecarset_writes_its_type_meta() {
        let v = serde_json::to_value(SidecarSet::default()).expect("serializes");
        assert_eq!(v["apiVersion"], SidecarSet::API_VERSION);
        assert_eq!(v["kind"], SidecarSet::KIND);
    }
}
