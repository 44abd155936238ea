//! SidecarSet (sidecarsets.apps.kruise.io/v1alpha1, cluster-scoped): sidecar containers injected
//! into matching pods and upgraded in place.
//!
//! One type for the console, the controllers and the port (`kruise::sidecarset`). Its fields take
//! Go's shapes (`apis/apps/v1alpha1/sidecarset_types.go`, v1.8.4): a Go `string` is a `String`
//! ("" when unset), a non-pointer struct is a struct, a pointer is an `Option`; `null` reads as
//! the zero value, as Go's decoder does.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{Container, LocalObjectReference, ObjectFieldSelector, Volume},
    apimachinery::pkg::{
        apis::meta::v1::{LabelSelector, ObjectMeta},
        util::intstr::IntOrString,
    },
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{UpdatePriorityStrategy, UpdateScatterTerm};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
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

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetSpec {
    /// Pods to inject into; `None` matches nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Restricts injection to one namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Restricts injection to namespaces matching this selector.
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

/// A sidecar container: a full core/v1 Container plus the injection and upgrade settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarContainer {
    #[serde(flatten)]
    pub container: Container,
    /// [`BEFORE_APP_CONTAINER`] (the default) | [`AFTER_APP_CONTAINER`].
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

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarContainerUpgradeStrategy {
    /// [`COLD_UPGRADE`] (the default) | [`HOT_UPGRADE`].
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub upgrade_type: String,
    /// Image of the idle twin container in a hot upgrade.
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub hot_upgrade_empty_image: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ShareVolumePolicy {
    /// enabled | disabled.
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        rename = "type",
        skip_serializing_if = "String::is_empty"
    )]
    pub type_: String,
}

/// Env copied into the sidecar from an app container of the pod.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
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

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceContainerNameSource {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_ref: Option<ObjectFieldSelector>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetUpdateStrategy {
    /// [`ROLLING_UPDATE`] (the default) | [`NOT_UPDATE`].
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        rename = "type",
        skip_serializing_if = "String::is_empty"
    )]
    pub type_: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub paused: bool,
    /// Only matching pods are upgraded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Number or percent of matched pods kept at the old version.
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

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetInjectionStrategy {
    /// New pods get no sidecars while paused.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub paused: bool,
    /// Inject a fixed historical revision instead of the latest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<SidecarSetInjectRevision>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetInjectRevision {
    /// Matches label `apps.kruise.io/sidecarset-custom-version` of a ControllerRevision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_version: Option<String>,
    /// Name of a ControllerRevision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_name: Option<String>,
    /// Always | Partial.
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub policy: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetPatchPodMetadata {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub annotations: BTreeMap<String, String>,
    /// [`PATCH_RETAIN`] (the default) | [`PATCH_OVERWRITE`] | [`PATCH_MERGE_JSON`].
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

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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

/// Reads a SidecarSet served at `version` (v1alpha1, or v1beta1 — the storage version since
/// Kruise v1.9 — converted as upstream's conversion webhook does: `customVersion` becomes the
/// custom-version label; a namespace is a `kubernetes.io/metadata.name` selector).
pub fn from_served_json(
    version: &str,
    value: serde_json::Value,
) -> Result<SidecarSet, serde_json::Error> {
    crate::api::conversion::from_served("apps.kruise.io", "SidecarSet", "v1alpha1", version, value)
}

/// Writes a SidecarSet in the shape served at `version` (the inverse of [`from_served_json`]).
pub fn to_served_json(
    version: &str,
    set: &SidecarSet,
) -> Result<serde_json::Value, serde_json::Error> {
    crate::api::conversion::to_served("apps.kruise.io", "SidecarSet", "v1alpha1", version, set)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::Resource as _;
    use serde_json::json;

    use super::*;

    #[test]
    fn sidecar_container_keeps_container_and_kruise_fields() {
        let value = json!({
            "metadata": {"name": "log"},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "containers": [{
                    "name": "agent", "image": "agent:1",
                    "podInjectPolicy": "AfterAppContainer",
                    "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"},
                    "shareVolumePolicy": {"type": "enabled"},
                    "transferEnv": [{"sourceContainerName": "main", "envName": "TZ"}]
                }],
                "updateStrategy": {"partition": "50%", "paused": true},
                "injectionStrategy": {"revision": {"customVersion": "v2", "policy": "Always"}}
            }
        });
        let set: SidecarSet = serde_json::from_value(value.clone()).unwrap();
        let c = &set.spec.containers[0];
        assert_eq!(c.container.name, "agent");
        assert_eq!(c.container.image.as_deref(), Some("agent:1"));
        assert_eq!(c.pod_inject_policy, AFTER_APP_CONTAINER);
        assert_eq!(c.upgrade_strategy.upgrade_type, HOT_UPGRADE);
        assert!(c.is_hot_upgrade());
        assert_eq!(c.transfer_env[0].env_name, "TZ");
        assert!(set.spec.update_strategy.paused);
        assert_eq!(
            set.spec.update_strategy.partition,
            Some(IntOrString::String("50%".into()))
        );
        let rev = set.spec.injection_strategy.revision.as_ref().unwrap();
        assert_eq!(rev.custom_version.as_deref(), Some("v2"));
        assert_eq!(
            serde_json::to_value(&set).unwrap()["spec"]["containers"],
            value["spec"]["containers"]
        );
    }

    #[test]
    fn null_reads_as_the_go_zero_value() {
        let set: SidecarSet = serde_json::from_value(json!({
            "spec": {"containers": [{"name": "a", "podInjectPolicy": null, "upgradeStrategy": null}],
                     "updateStrategy": null, "volumes": null},
            "status": {"latestRevision": null, "matchedPods": null}
        }))
        .unwrap();
        assert_eq!(set.spec.containers[0].pod_inject_policy, "");
        assert!(!set.spec.containers[0].is_hot_upgrade());
        assert_eq!(set.latest_revision(), "");
    }

    #[test]
    fn a_sidecarset_writes_its_type_meta() {
        let v = serde_json::to_value(SidecarSet::default()).expect("serializes");
        assert_eq!(v["apiVersion"], SidecarSet::API_VERSION);
        assert_eq!(v["kind"], SidecarSet::KIND);
    }
}
