//! SidecarSet (sidecarsets.apps.kruise.io/v1alpha1, cluster-scoped): sidecar containers injected
//! into matching pods and upgraded in place.

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
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<Volume>,
    #[serde(default)]
    pub update_strategy: SidecarSetUpdateStrategy,
    #[serde(default)]
    pub injection_strategy: SidecarSetInjectionStrategy,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_pull_secrets: Vec<LocalObjectReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patch_pod_metadata: Vec<SidecarSetPatchPodMetadata>,
}

/// A sidecar container: a full core/v1 Container plus the injection and upgrade settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarContainer {
    #[serde(flatten)]
    pub container: Container,
    /// BeforeAppContainer (default) | AfterAppContainer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_inject_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_strategy: Option<SidecarContainerUpgradeStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_volume_policy: Option<ShareVolumePolicy>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transfer_env: Vec<TransferEnvVar>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarContainerUpgradeStrategy {
    /// ColdUpgrade (default) | HotUpgrade.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_type: Option<String>,
    /// Image of the idle twin container in a hot upgrade.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_upgrade_empty_image: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ShareVolumePolicy {
    /// enabled | disabled.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
}

/// Env copied into the sidecar from an app container of the pod.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransferEnvVar {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_container_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_container_name_from: Option<SourceContainerNameSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_name: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
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
    /// RollingUpdate (default) | NotUpdate.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
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
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scatter_strategy: Vec<UpdateScatterTerm>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetInjectionStrategy {
    /// New pods get no sidecars while paused.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetPatchPodMetadata {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// Retain (default) | Overwrite | MergePatchJson.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_policy: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetStatus {
    #[serde(default)]
    pub observed_generation: i64,
    #[serde(default)]
    pub matched_pods: i32,
    #[serde(default)]
    pub updated_pods: i32,
    #[serde(default)]
    pub ready_pods: i32,
    #[serde(default)]
    pub updated_ready_pods: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_revision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
}

#[cfg(test)]
mod tests {
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
        assert_eq!(c.pod_inject_policy.as_deref(), Some("AfterAppContainer"));
        let up = c.upgrade_strategy.as_ref().unwrap();
        assert_eq!(up.upgrade_type.as_deref(), Some("HotUpgrade"));
        assert_eq!(c.transfer_env[0].env_name.as_deref(), Some("TZ"));
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
}
