//! What a pod carries about its SidecarSets: the per-set hash annotations (both the current
//! object format and the legacy `{"set":"hash"}` format), the injected list and the in-place
//! update state recorded before an upgrade. The annotation values and their encoding are the
//! shared ones in [`crate::api::podstate`]; this module holds the upgrade logic around them.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

pub use crate::api::podstate::{
    InPlaceUpdateContainerStatus, InPlaceUpdateState, SidecarSetUpgradeSpec,
    sidecarset_upgrade_specs,
};

use super::{
    SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION,
    SIDECARSET_INPLACE_UPDATE_STATE_KEY,
};
use crate::api::sidecarset::SidecarSet;

impl SidecarSetUpgradeSpec {
    /// The `kruise.io/sidecarset-hash` entry recording that a pod runs `set` as it is now
    /// (its hash, sidecar list and latest revision), stamped `update_timestamp`.
    pub fn current(set: &SidecarSet, update_timestamp: Option<Time>) -> Self {
        Self {
            update_timestamp,
            hash: set.annotation(SIDECARSET_HASH_ANNOTATION).to_owned(),
            sidecar_set_name: set.name().to_owned(),
            sidecar_list: Some(sidecar_list(set)),
            controller_revision: set.latest_revision().to_owned(),
        }
    }
}

/// A pod annotation ("" when absent).
pub fn pod_annotation<'a>(pod: &'a Pod, key: &str) -> &'a str {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
        .unwrap_or_default()
}

/// The hash recorded on the pod for `set_name` under `key` ("" when absent or unparseable).
///
/// Port of pkg/control/sidecarcontrol/util.go::GetPodSidecarSetUpgradeSpecInAnnotations (v1.8.4).
pub fn pod_upgrade_spec(
    annotations: &BTreeMap<String, String>,
    key: &str,
    set_name: &str,
) -> SidecarSetUpgradeSpec {
    sidecarset_upgrade_specs(annotations.get(key).map(String::as_str))
        .remove(set_name)
        .unwrap_or_default()
}

/// The pod's recorded `kruise.io/sidecarset-hash` for the set.
///
/// Port of pkg/control/sidecarcontrol/util.go::GetPodSidecarSetRevision (v1.8.4).
pub fn pod_sidecar_set_revision(set_name: &str, pod: &Pod) -> String {
    let empty = BTreeMap::new();
    let ann = pod.metadata.annotations.as_ref().unwrap_or(&empty);
    pod_upgrade_spec(ann, SIDECARSET_HASH_ANNOTATION, set_name).hash
}

/// The pod's recorded without-image hash for the set.
///
/// Port of pkg/control/sidecarcontrol/util.go::GetPodSidecarSetWithoutImageRevision (v1.8.4).
pub fn pod_sidecar_set_without_image_revision(set_name: &str, pod: &Pod) -> String {
    let empty = BTreeMap::new();
    let ann = pod.metadata.annotations.as_ref().unwrap_or(&empty);
    pod_upgrade_spec(ann, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION, set_name).hash
}

/// The ControllerRevision name the pod's sidecars came from.
///
/// Port of pkg/control/sidecarcontrol/util.go::GetPodSidecarSetControllerRevision (v1.8.4).
pub fn pod_sidecar_set_controller_revision(set_name: &str, pod: &Pod) -> String {
    let empty = BTreeMap::new();
    let ann = pod.metadata.annotations.as_ref().unwrap_or(&empty);
    pod_upgrade_spec(ann, SIDECARSET_HASH_ANNOTATION, set_name).controller_revision
}

/// Whether the pod records the set's current hash.
///
/// Port of pkg/control/sidecarcontrol/util.go::IsPodSidecarUpdated (v1.8.4).
pub fn is_pod_sidecar_updated(set: &SidecarSet, pod: &Pod) -> bool {
    pod_sidecar_set_revision(set.name(), pod) == set.annotation(SIDECARSET_HASH_ANNOTATION)
}

/// Whether the pod's hash annotation has an entry for the set (object format).
///
/// Port of pkg/control/sidecarcontrol/util.go::IsPodInjectedSidecarSet (v1.8.4).
pub fn is_pod_injected_sidecar_set(pod: &Pod, set: &SidecarSet) -> bool {
    let raw = pod_annotation(pod, SIDECARSET_HASH_ANNOTATION);
    !raw.is_empty()
        && serde_json::from_str::<BTreeMap<String, SidecarSetUpgradeSpec>>(raw)
            .is_ok_and(|m| m.contains_key(set.name()))
}

/// The names recorded in `sidecarList`: every container plus native-sidecar init containers,
/// sorted.
pub fn sidecar_list(set: &SidecarSet) -> Vec<String> {
    let names: BTreeSet<String> = set
        .spec
        .containers
        .iter()
        .map(|c| c.container.name.clone())
        .chain(
            set.spec
                .init_containers
                .iter()
                .filter(|c| c.container.restart_policy.as_deref() == Some("Always"))
                .map(|c| c.container.name.clone()),
        )
        .collect();
    names.into_iter().collect()
}

/// Rewrites the set's entry of the pod's hash annotation to the set's current hash, and
/// converts a legacy without-image annotation to the object format (keeping its hashes).
///
/// Port of pkg/control/sidecarcontrol/util.go::UpdatePodSidecarSetHash (v1.8.4).
pub fn update_pod_sidecar_set_hash(
    annotations: &mut BTreeMap<String, String>,
    set: &SidecarSet,
    now: jiff::Timestamp,
) {
    let stamp = Some(Time(now));
    let mut hashes = sidecarset_upgrade_specs(
        annotations
            .get(SIDECARSET_HASH_ANNOTATION)
            .map(String::as_str),
    );
    for spec in hashes.values_mut() {
        if spec.update_timestamp.is_none() {
            spec.update_timestamp = stamp.clone();
        }
    }
    hashes.insert(
        set.name().to_owned(),
        SidecarSetUpgradeSpec::current(set, stamp.clone()),
    );
    if let Ok(encoded) = serde_json::to_string(&hashes) {
        annotations.insert(SIDECARSET_HASH_ANNOTATION.to_owned(), encoded);
    }
    let raw = annotations
        .get(SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION)
        .cloned()
        .unwrap_or_default();
    if serde_json::from_str::<BTreeMap<String, SidecarSetUpgradeSpec>>(&raw).is_err()
        && let Ok(legacy) = serde_json::from_str::<BTreeMap<String, String>>(&raw)
    {
        let converted: BTreeMap<String, SidecarSetUpgradeSpec> = legacy
            .into_iter()
            .map(|(name, hash)| {
                let spec = SidecarSetUpgradeSpec {
                    update_timestamp: stamp.clone(),
                    hash,
                    sidecar_set_name: name.clone(),
                    ..Default::default()
                };
                (name, spec)
            })
            .collect();
        if let Ok(encoded) = serde_json::to_string(&converted) {
            annotations.insert(SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION.to_owned(), encoded);
        }
    }
}

/// Parses `kruise.io/sidecarset-inplace-update-state` (None when present but malformed).
pub fn inplace_update_states(pod: &Pod) -> Option<BTreeMap<String, InPlaceUpdateState>> {
    let raw = pod_annotation(pod, SIDECARSET_INPLACE_UPDATE_STATE_KEY);
    if raw.is_empty() {
        return Some(BTreeMap::new());
    }
    serde_json::from_str(raw).ok()
}

/// Records, before an in-place upgrade, each changed container's current `imageID` under the
/// set's in-place state (merged with an existing entry), then rewrites the hash annotation.
///
/// Port of pkg/control/sidecarcontrol/sidecarset_control.go::UpdatePodAnnotationsInUpgrade (v1.8.4).
pub fn update_pod_annotations_in_upgrade(
    pod: &mut Pod,
    set: &SidecarSet,
    changed_containers: &[String],
    now: jiff::Timestamp,
) {
    record_inplace_update_state(pod, set, changed_containers, now);
    let annotations = pod.metadata.annotations.get_or_insert_with(BTreeMap::new);
    update_pod_sidecar_set_hash(annotations, set, now);
}

/// The in-place-state half of [`update_pod_annotations_in_upgrade`] (the hot-upgrade flip
/// records state without touching the hash).
pub fn record_inplace_update_state(
    pod: &mut Pod,
    set: &SidecarSet,
    changed_containers: &[String],
    now: jiff::Timestamp,
) {
    let mut states = inplace_update_states(pod).unwrap_or_default();
    let image_ids: BTreeMap<&str, &str> = pod
        .status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
        .map(|cs| (cs.name.as_str(), cs.image_id.as_str()))
        .collect();
    let mut recorded = BTreeMap::new();
    for name in changed_containers {
        let image_id = image_ids.get(name.as_str()).copied().unwrap_or_default();
        recorded.insert(name.clone(), image_id.to_owned());
    }
    let state = states
        .entry(set.name().to_owned())
        .or_insert_with(|| InPlaceUpdateState {
            revision: set.annotation(SIDECARSET_HASH_ANNOTATION).to_owned(),
            update_timestamp: Some(Time(now)),
            last_container_statuses: Some(BTreeMap::new()),
            ..InPlaceUpdateState::default()
        });
    let last = state
        .last_container_statuses
        .get_or_insert_with(BTreeMap::new);
    for (name, image_id) in recorded {
        last.insert(name, InPlaceUpdateContainerStatus { image_id });
    }
    let annotations = pod.metadata.annotations.get_or_insert_with(BTreeMap::new);
    if let Ok(encoded) = serde_json::to_string(&states) {
        annotations.insert(SIDECARSET_INPLACE_UPDATE_STATE_KEY.to_owned(), encoded);
    }
}
