//! Typed values of the JSON annotations Kruise writes on pods: the in-place update state and
//! grace spec (`apps/pub/inplace_update.go`, `pkg/util/inplaceupdate`) and the per-SidecarSet
//! upgrade specs (`pkg/control/sidecarcontrol`). Field order, `null`s and omitted empties follow
//! Go's encoding, so what we write reads back byte for byte in upstream's format.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::ResourceRequirements,
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
};
use serde::{Deserialize, Serialize};

use super::keys;
use crate::kruise::selector::Labels;

/// `apps.kruise.io/inplace-update-state` (also each value of
/// `kruise.io/sidecarset-inplace-update-state`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateState {
    /// The revision being updated to.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub revision: String,
    /// When the whole update started (not reset after a grace period).
    #[serde(default)]
    pub update_timestamp: Option<Time>,
    /// Container statuses captured just before the image patch; `null` until then.
    #[serde(default)]
    pub last_container_statuses: Option<BTreeMap<String, InPlaceUpdateContainerStatus>>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub update_env_from_metadata: bool,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub update_resources: bool,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub update_images: bool,
    /// Work left for lower-priority containers (container launch priority).
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub next_container_images: BTreeMap<String, String>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub next_container_ref_metadata: BTreeMap<String, ObjectMeta>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub next_container_resources: BTreeMap<String, ResourceRequirements>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_check_before_next: Option<InPlaceUpdatePreCheckBeforeNext>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub container_batches_record: Vec<InPlaceUpdateContainerBatch>,
}

impl InPlaceUpdateState {
    /// Reads the state from a pod's annotations (the current key, else the legacy one).
    /// `Ok(None)` when the pod has neither; an error when the value is not valid JSON.
    pub fn from_annotations(
        annotations: Option<&(impl Labels + ?Sized)>,
    ) -> Result<Option<Self>, serde_json::Error> {
        let value = annotations.and_then(|a| {
            a.label(keys::INPLACE_UPDATE_STATE)
                .or_else(|| a.label(keys::INPLACE_UPDATE_STATE_LEGACY))
        });
        value.map(serde_json::from_str).transpose()
    }

    /// True while containers of a lower launch priority still wait for their turn.
    pub fn has_pending_batches(&self) -> bool {
        !self.next_container_images.is_empty()
            || !self.next_container_ref_metadata.is_empty()
            || !self.next_container_resources.is_empty()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateContainerStatus {
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        rename = "imageID",
        skip_serializing_if = "String::is_empty"
    )]
    pub image_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdatePreCheckBeforeNext {
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub containers_required_ready: Vec<String>,
}

/// One patch batch of an in-place update.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InPlaceUpdateContainerBatch {
    #[serde(default)]
    pub timestamp: Option<Time>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub containers: Vec<String>,
}

/// `apps.kruise.io/inplace-update-grace`: the update waiting for `gracePeriodSeconds`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateGraceSpec {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub revision: String,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub container_images: BTreeMap<String, String>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub container_ref_metadata: BTreeMap<String, ObjectMeta>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub container_resources: BTreeMap<String, ResourceRequirements>,
    /// A JSON merge patch of pod metadata, base64-encoded as Go writes `[]byte`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta_data_patch: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub update_env_from_metadata: bool,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "is_zero"
    )]
    pub grace_seconds: i32,
    /// Fields of newer versions, kept so a rewrite loses nothing.
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

impl InPlaceUpdateGraceSpec {
    /// Reads the pending spec from a pod's annotations (the current key, else the legacy one).
    pub fn from_annotations(
        annotations: Option<&(impl Labels + ?Sized)>,
    ) -> Result<Option<Self>, serde_json::Error> {
        let value = annotations.and_then(|a| {
            a.label(keys::INPLACE_UPDATE_GRACE)
                .or_else(|| a.label(keys::INPLACE_UPDATE_GRACE_LEGACY))
        });
        value.map(serde_json::from_str).transpose()
    }
}

/// One value of the pod annotations `kruise.io/sidecarset-hash` and
/// `kruise.io/sidecarset-hash-without-image` (a JSON object keyed by SidecarSet name).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetUpgradeSpec {
    #[serde(default)]
    pub update_timestamp: Option<Time>,
    /// The SidecarSet's hash annotation when this pod's sidecars were written.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub hash: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub sidecar_set_name: String,
    /// Sorted sidecar container names; may be `null`.
    #[serde(default)]
    pub sidecar_list: Option<Vec<String>>,
    /// The SidecarSet's `status.latestRevision` at that time.
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub controller_revision: String,
}

/// Parses a pod's `kruise.io/sidecarset-hash` (or `-without-image`) annotation value, keyed by
/// SidecarSet name. Falls back to the legacy `{"<set>":"<hash>"}` format; anything else (or a
/// missing annotation) reads as no entries, as upstream does.
pub fn sidecarset_upgrade_specs(value: Option<&str>) -> BTreeMap<String, SidecarSetUpgradeSpec> {
    let Some(value) = value else {
        return BTreeMap::new();
    };
    if let Ok(specs) = serde_json::from_str(value) {
        return specs;
    }
    match serde_json::from_str::<BTreeMap<String, String>>(value) {
        Ok(legacy) => legacy
            .into_iter()
            .map(|(name, hash)| {
                let spec = SidecarSetUpgradeSpec {
                    hash,
                    sidecar_set_name: name.clone(),
                    ..SidecarSetUpgradeSpec::default()
                };
                (name, spec)
            })
            .collect(),
        Err(_) => BTreeMap::new(),
    }
}

/// One holder in the `KruisePodReady` condition message (a JSON list): while any holder is
/// present the condition stays False. CRR uses `{"userAgent":"ContainerRecreateRequest",
/// "key":"<ns>/<crr>"}`, lifecycle hooks `{"userAgent":"Lifecycle","key":"preUpdateHook"}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodReadinessHolder {
    pub user_agent: String,
    pub key: String,
}

/// Parses the `KruisePodReady` condition message; an empty or non-list message has no holders.
pub fn pod_readiness_holders(message: Option<&str>) -> Vec<PodReadinessHolder> {
    message
        .and_then(|m| serde_json::from_str(m).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inplace_state_round_trips_byte_for_byte() {
        let written = r#"{"revision":"rev_new","updateTimestamp":"2022-03-22T09:06:55Z","lastContainerStatuses":{"c1":{"imageID":"image-id-xyz"}},"updateImages":true,"containerBatchesRecord":[{"timestamp":"2022-03-22T09:06:55Z","containers":["c1"]}]}"#;
        let state: InPlaceUpdateState = serde_json::from_str(written).unwrap();
        assert!(state.update_images);
        assert_eq!(
            state.last_container_statuses.as_ref().unwrap()["c1"].image_id,
            "image-id-xyz"
        );
        assert_eq!(serde_json::to_string(&state).unwrap(), written);
    }

    #[test]
    fn inplace_state_writes_null_statuses_until_captured() {
        let state = InPlaceUpdateState {
            revision: "r2".into(),
            next_container_images: BTreeMap::from([("main".into(), "nginx:v2".into())]),
            ..Default::default()
        };
        assert!(state.has_pending_batches());
        assert_eq!(
            serde_json::to_string(&state).unwrap(),
            r#"{"revision":"r2","updateTimestamp":null,"lastContainerStatuses":null,"nextContainerImages":{"main":"nginx:v2"}}"#
        );
    }

    #[test]
    fn inplace_state_reads_current_then_legacy_key() {
        let mut annotations = BTreeMap::new();
        assert_eq!(
            InPlaceUpdateState::from_annotations(Some(&annotations)).unwrap(),
            None
        );
        annotations.insert(
            keys::INPLACE_UPDATE_STATE_LEGACY.into(),
            r#"{"revision":"old"}"#.into(),
        );
        let state = InPlaceUpdateState::from_annotations(Some(&annotations))
            .unwrap()
            .unwrap();
        assert_eq!(state.revision, "old");
        annotations.insert(
            keys::INPLACE_UPDATE_STATE.into(),
            r#"{"revision":"new"}"#.into(),
        );
        let state = InPlaceUpdateState::from_annotations(Some(&annotations))
            .unwrap()
            .unwrap();
        assert_eq!(state.revision, "new");
        annotations.insert(keys::INPLACE_UPDATE_STATE.into(), "{not json".into());
        assert!(InPlaceUpdateState::from_annotations(Some(&annotations)).is_err());
    }

    #[test]
    fn grace_spec_keeps_unknown_fields() {
        let written = r#"{"revision":"rev_new","containerImages":{"c1":"foo2"},"graceSeconds":3630,"newTemplate":{"x":1}}"#;
        let annotations =
            BTreeMap::from([(keys::INPLACE_UPDATE_GRACE.to_string(), written.to_string())]);
        let spec = InPlaceUpdateGraceSpec::from_annotations(Some(&annotations))
            .unwrap()
            .unwrap();
        assert_eq!(spec.grace_seconds, 3630);
        assert_eq!(spec.container_images["c1"], "foo2");
        assert_eq!(serde_json::to_string(&spec).unwrap(), written);
    }

    #[test]
    fn sidecarset_hashes_read_current_and_legacy_formats() {
        let current = r#"{"log":{"updateTimestamp":"2024-01-02T03:04:05Z","hash":"h1","sidecarSetName":"log","sidecarList":["agent"],"controllerRevision":"log-abc"}}"#;
        let specs = sidecarset_upgrade_specs(Some(current));
        assert_eq!(specs["log"].hash, "h1");
        assert_eq!(specs["log"].controller_revision, "log-abc");
        assert_eq!(serde_json::to_string(&specs).unwrap(), current);

        let legacy = sidecarset_upgrade_specs(Some(r#"{"log":"h0"}"#));
        assert_eq!(
            (
                legacy["log"].hash.as_str(),
                legacy["log"].sidecar_set_name.as_str()
            ),
            ("h0", "log")
        );
        assert!(sidecarset_upgrade_specs(Some("garbage")).is_empty());
        assert!(sidecarset_upgrade_specs(None).is_empty());

        let null_list = sidecarset_upgrade_specs(Some(r#"{"s":{"hash":"aaa"}}"#));
        assert_eq!(
            serde_json::to_string(&null_list["s"]).unwrap(),
            r#"{"updateTimestamp":null,"hash":"aaa","sidecarSetName":"","sidecarList":null}"#
        );
    }

    #[test]
    fn readiness_holders_parse_from_the_condition_message() {
        let msg = r#"[{"userAgent":"ContainerRecreateRequest","key":"default/crr-1"}]"#;
        let holders = pod_readiness_holders(Some(msg));
        assert_eq!(holders[0].user_agent, "ContainerRecreateRequest");
        assert_eq!(holders[0].key, "default/crr-1");
        assert_eq!(serde_json::to_string(&holders).unwrap(), msg);
        assert!(pod_readiness_holders(Some("")).is_empty());
        assert!(pod_readiness_holders(None).is_empty());
    }
}
