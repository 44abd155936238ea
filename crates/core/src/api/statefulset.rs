//! Advanced StatefulSet (statefulsets.apps.kruise.io). One internal model, the v1beta1 storage
//! shape; v1alpha1 objects (also served) map into it through [`from_served_json`].

use k8s_openapi::{
    api::core::v1::{PersistentVolumeClaim, PodTemplateSpec},
    apimachinery::pkg::{
        apis::meta::v1::{LabelSelector, ObjectMeta},
        util::intstr::IntOrString,
    },
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{InPlaceUpdateStrategy, Lifecycle, UpdatePriorityStrategy, WorkloadCondition};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct StatefulSet {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: StatefulSetSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<StatefulSetStatus>,
}
crate::impl_resource!(
    StatefulSet,
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "StatefulSet",
    plural = "statefulsets",
    scope = NamespaceResourceScope
);

impl StatefulSet {
    /// Reads an Advanced StatefulSet served as `version`; see [`from_served_json`].
    pub fn from_served_json(
        version: &str,
        value: serde_json::Value,
    ) -> Result<StatefulSet, serde_json::Error> {
        from_served_json(version, value)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub selector: LabelSelector,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub template: PodTemplateSpec,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub volume_claim_templates: Vec<PersistentVolumeClaim>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_name: Option<String>,
    /// OrderedReady | Parallel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_management_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy: Option<StatefulSetUpdateStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Ordinals (or `"a-b"` ranges) skipped when creating pods.
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub reserve_ordinals: Vec<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_strategy: Option<StatefulSetScaleStrategy>,
    #[serde(
        default,
        rename = "persistentVolumeClaimRetentionPolicy",
        skip_serializing_if = "Option::is_none"
    )]
    pub pvc_retention_policy: Option<PersistentVolumeClaimRetentionPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordinals: Option<StatefulSetOrdinals>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_claim_update_strategy: Option<VolumeClaimUpdateStrategy>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetUpdateStrategy {
    /// RollingUpdate | OnDelete.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateStatefulSetStrategy>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateStatefulSetStrategy {
    /// Pods with ordinal >= partition are updated (counts reserved ordinals as in upstream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// ReCreate | InPlaceIfPossible | InPlaceOnly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_update_policy: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub paused: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unordered_update: Option<UnorderedUpdateStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_update_strategy: Option<InPlaceUpdateStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
}

/// With Parallel pod management: update pods in priority order instead of by ordinal.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnorderedUpdateStrategy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_strategy: Option<UpdatePriorityStrategy>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetScaleStrategy {
    /// Limit on unavailable pods while scaling (Parallel pod management).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
}

/// What happens to PVCs from `volumeClaimTemplates`: Retain | Delete.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaimRetentionPolicy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_deleted: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_scaled: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetOrdinals {
    /// First ordinal (gate `StatefulSetStartOrdinal`); default 0.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub start: i32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VolumeClaimUpdateStrategy {
    /// OnDelete | OnPodRollingUpdate.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetStatus {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub observed_generation: i64,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub replicas: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub ready_replicas: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub available_replicas: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub current_replicas: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub updated_replicas: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub updated_ready_replicas: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub updated_available_replicas: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub current_revision: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub update_revision: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub conditions: Vec<WorkloadCondition>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub volume_claims: Vec<VolumeClaimStatus>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VolumeClaimStatus {
    pub volume_claim_name: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub compatible_replicas: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub compatible_ready_replicas: i32,
}

/// `spec` fields of the v1beta1 schema that the v1alpha1 schema (Kruise v1.8.4) lacks: an API
/// server prunes them from objects written as v1alpha1.
pub const V1BETA1_ONLY_SPEC_FIELDS: [&str; 6] = [
    "lifecycle",
    "ordinals",
    "persistentVolumeClaimRetentionPolicy",
    "reserveOrdinals",
    "scaleStrategy",
    "volumeClaimUpdateStrategy",
];

/// Reads an Advanced StatefulSet served as `version` into the internal (v1beta1) model.
///
/// In v1.8.4 the v1alpha1 schema is the v1beta1 schema minus [`V1BETA1_ONLY_SPEC_FIELDS`] and the
/// status fields `updatedReadyReplicas`, `updatedAvailableReplicas` and `volumeClaims`: no field
/// moved or changed type, so a v1alpha1 object reads as is, with those fields left at their
/// defaults. Older servers' v1alpha1 `reserveOrdinals` (plain integers) read as int-or-string.
/// Any other version is an error.
pub fn from_served_json(
    version: &str,
    value: serde_json::Value,
) -> Result<StatefulSet, serde_json::Error> {
    match version {
        "v1alpha1" | "v1beta1" => serde_json::from_value(value),
        other => Err(<serde_json::Error as serde::de::Error>::custom(format!(
            "Advanced StatefulSet version {other:?} is not supported (expected v1alpha1 or v1beta1)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn v1alpha1_reads_into_the_v1beta1_model() {
        let obj = json!({
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "StatefulSet",
            "metadata": {"name": "db"},
            "spec": {
                "replicas": 4,
                "podManagementPolicy": "Parallel",
                "reserveOrdinals": [1, 3],
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {
                    "partition": 2, "paused": true, "podUpdatePolicy": "InPlaceIfPossible",
                    "maxUnavailable": "50%", "minReadySeconds": 5,
                    "unorderedUpdate": {"priorityStrategy": {"orderPriority": [{"orderedKey": "k"}]}}
                }}
            },
            "status": {"replicas": 4, "updatedReplicas": 1, "updateRevision": "db-2"}
        });
        let sts = from_served_json("v1alpha1", obj).unwrap();
        assert_eq!(sts.spec.pod_management_policy.as_deref(), Some("Parallel"));
        assert_eq!(
            sts.spec.reserve_ordinals,
            vec![IntOrString::Int(1), IntOrString::Int(3)]
        );
        let rolling = sts.spec.update_strategy.unwrap().rolling_update.unwrap();
        assert_eq!(rolling.partition, Some(2));
        assert!(rolling.paused);
        assert_eq!(
            rolling.pod_update_policy.as_deref(),
            Some("InPlaceIfPossible")
        );
        assert_eq!(rolling.min_ready_seconds, Some(5));
        let order = &rolling.unordered_update.unwrap().priority_strategy.unwrap();
        assert_eq!(order.order_priority[0].ordered_key, "k");
        let status = sts.status.unwrap();
        assert_eq!(status.updated_ready_replicas, 0);
        assert_eq!(status.update_revision, "db-2");
    }

    #[test]
    fn v1beta1_fields_round_trip() {
        let obj = json!({
            "metadata": {"name": "db"},
            "spec": {
                "reserveOrdinals": [1, "5-7"],
                "ordinals": {"start": 2},
                "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"},
                "scaleStrategy": {"maxUnavailable": 1},
                "lifecycle": {"preDelete": {"labelsHandler": {"hold": "true"}, "markPodNotReady": true}}
            }
        });
        let sts = StatefulSet::from_served_json("v1beta1", obj).unwrap();
        assert_eq!(sts.spec.ordinals.as_ref().unwrap().start, 2);
        assert_eq!(
            sts.spec.reserve_ordinals[1],
            IntOrString::String("5-7".into())
        );
        let policy = sts.spec.pvc_retention_policy.as_ref().unwrap();
        assert_eq!(policy.when_deleted.as_deref(), Some("Delete"));
        let hook = sts
            .spec
            .lifecycle
            .as_ref()
            .unwrap()
            .pre_delete
            .as_ref()
            .unwrap();
        assert!(hook.mark_pod_not_ready);
        let back: StatefulSet =
            serde_json::from_value(serde_json::to_value(&sts).unwrap()).unwrap();
        assert_eq!(back, sts);
    }

    #[test]
    fn unknown_version_is_an_error() {
        let err = from_served_json("v1", json!({})).unwrap_err();
        assert!(err.to_string().contains("\"v1\""), "{err}");
    }
}
