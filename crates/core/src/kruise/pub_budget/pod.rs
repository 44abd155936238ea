//! How a PodUnavailableBudget judges one pod: ready, consistent, active, and whether an update
//! may make it unavailable (`pkg/control/pubcontrol`, v1.8.4).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;
use serde::Deserialize;

use crate::api::pod::is_running_and_ready;

/// Label prefix marking a pod unavailable for PUB and Kruise workloads.
pub const UNAVAILABLE_LABEL_PREFIX: &str = "unavailable-pod.kruise.io/";
const INPLACE_STATE: &str = "apps.kruise.io/inplace-update-state";
const INPLACE_STATE_LEGACY: &str = "inplace-update-state";
const INPLACE_GRACE: &str = "apps.kruise.io/inplace-update-grace";
const INPLACE_GRACE_LEGACY: &str = "inplace-update-grace";
const SIDECAR_INJECTED_LIST: &str = "kruise.io/sidecarset-injected-list";
const SIDECAR_INPLACE_STATE: &str = "kruise.io/sidecarset-inplace-update-state";

fn annotations(pod: &Pod) -> Option<&BTreeMap<String, String>> {
    pod.metadata.annotations.as_ref()
}

fn annotation<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    annotations(pod)
        .and_then(|a| a.get(key))
        .map(String::as_str)
}

/// Port of apis/apps/pub/lifecycle.go::HasUnavailableLabel (v1.8.4).
pub fn has_unavailable_label(labels: Option<&BTreeMap<String, String>>) -> bool {
    labels.is_some_and(|l| l.keys().any(|k| k.starts_with(UNAVAILABLE_LABEL_PREFIX)))
}

/// Port of pkg/control/pubcontrol/pub_control.go::IsPodReady (v1.8.4): running and ready, not
/// terminating, and no `unavailable-pod.kruise.io/` label.
pub fn is_pod_ready(pod: &Pod) -> bool {
    is_running_and_ready(pod) && !has_unavailable_label(pod.metadata.labels.as_ref())
}

/// Port of k8s.io/kubernetes/pkg/controller::IsPodActive (v1.8.4 pin).
pub fn is_pod_active(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    phase != Some("Succeeded")
        && phase != Some("Failed")
        && pod.metadata.deletion_timestamp.is_none()
}

/// Port of pkg/control/pubcontrol/pub_control.go::IsPodUnavailableChanged (v1.8.4): the spec
/// changed, or an unavailable label was added.
pub fn is_pod_unavailable_changed(old: Option<&Pod>, new: Option<&Pod>) -> bool {
    let (Some(old), Some(new)) = (old, new) else {
        return true;
    };
    if old.spec != new.spec {
        return true;
    }
    !has_unavailable_label(old.metadata.labels.as_ref())
        && has_unavailable_label(new.metadata.labels.as_ref())
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LastStatus {
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        rename = "imageID"
    )]
    image_id: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct InPlaceState {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    last_container_statuses: BTreeMap<String, LastStatus>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    next_container_images: BTreeMap<String, serde_json::Value>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    next_container_ref_metadata: BTreeMap<String, serde_json::Value>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    next_container_resources: BTreeMap<String, serde_json::Value>,
}

/// The normalized repository and digest of an image reference (`repo@sha256:...`), if it has a
/// digest; `docker-pullable://` style prefixes of status image IDs are dropped and Docker Hub
/// names are expanded as `reference.ParseNormalizedNamed` does.
fn image_digest(image: &str) -> Option<(String, &str)> {
    let image = image.split_once("://").map_or(image, |(_, rest)| rest);
    let (repo, digest) = image.rsplit_once('@')?;
    if !digest.contains(':') {
        return None;
    }
    let repo = match repo.split_once('/') {
        None => format!("docker.io/library/{repo}"),
        Some((host, _)) if host.contains('.') || host.contains(':') || host == "localhost" => {
            repo.to_owned()
        }
        Some(_) => format!("docker.io/{repo}"),
    };
    Some((repo, digest))
}

/// Port of pkg/util/inplaceupdate/inplace_update_defaults.go::DefaultCheckInPlaceUpdateCompleted
/// (v1.8.4), without the env-from-metadata hash check (it needs the daemon's runtime meta).
pub fn check_in_place_update_completed(pod: &Pod) -> Result<(), String> {
    if annotation(pod, INPLACE_GRACE)
        .or_else(|| annotation(pod, INPLACE_GRACE_LEGACY))
        .is_some()
    {
        return Err("still in grace period of in-place update".to_owned());
    }
    let Some(raw) =
        annotation(pod, INPLACE_STATE).or_else(|| annotation(pod, INPLACE_STATE_LEGACY))
    else {
        return Ok(());
    };
    let mut state: InPlaceState = serde_json::from_str(raw).map_err(|e| e.to_string())?;
    if !state.next_container_images.is_empty()
        || !state.next_container_ref_metadata.is_empty()
        || !state.next_container_resources.is_empty()
    {
        return Err("existing containers to in-place update in next batches".to_owned());
    }
    let mut images: BTreeMap<&str, String> = BTreeMap::new();
    for c in pod.spec.iter().flat_map(|s| &s.containers) {
        let image = c.image.clone().unwrap_or_default();
        let image = if image.split(':').count() <= 1 {
            format!("{image}:latest")
        } else {
            image
        };
        images.insert(c.name.as_str(), image);
    }
    for cs in pod
        .status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
    {
        if let Some(old) = state.last_container_statuses.remove(&cs.name)
            && old.image_id == cs.image_id
            && images.get(cs.name.as_str()) != Some(&cs.image)
        {
            return Err(format!("container {} imageID not changed", cs.name));
        }
    }
    if !state.last_container_statuses.is_empty() {
        let names: Vec<&String> = state.last_container_statuses.keys().collect();
        return Err(format!("not found statuses of containers {names:?}"));
    }
    Ok(())
}

/// Injected sidecars whose in-place sidecar update is not finished
/// (Port of pkg/control/sidecarcontrol/util.go::IsSidecarContainerUpdateCompleted (v1.8.4)).
fn sidecars_update_completed(pod: &Pod, sets: &BTreeSet<&str>, sidecars: &BTreeSet<&str>) -> bool {
    let Some(raw) = annotation(pod, SIDECAR_INPLACE_STATE) else {
        return true;
    };
    let Ok(states) = serde_json::from_str::<BTreeMap<String, InPlaceState>>(raw) else {
        return false;
    };
    let statuses: BTreeMap<&str, (&str, &str)> = pod
        .status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
        .map(|cs| (cs.name.as_str(), (cs.image.as_str(), cs.image_id.as_str())))
        .collect();
    let specs: BTreeMap<&str, &str> = pod
        .spec
        .iter()
        .flat_map(|s| &s.containers)
        .map(|c| (c.name.as_str(), c.image.as_deref().unwrap_or_default()))
        .collect();
    for (set, state) in &states {
        if !sets.contains(set.as_str()) {
            continue;
        }
        for (name, last) in &state.last_container_statuses {
            if !sidecars.contains(name.as_str()) {
                continue;
            }
            let Some((image, image_id)) = statuses.get(name.as_str()) else {
                return false;
            };
            if last.image_id == *image_id && specs.get(name.as_str()) != Some(image) {
                return false;
            }
        }
    }
    true
}

/// Port of pkg/control/pubcontrol/pub_control.go::IsPodStateConsistent (v1.8.4).
///
/// All-digest pods compare each image digest with `status.imageID`; otherwise injected sidecars
/// must have finished their SidecarSet in-place update and the workload's in-place update must be
/// complete.
pub fn is_pod_state_consistent(pod: &Pod) -> bool {
    let containers = pod.spec.iter().flat_map(|s| &s.containers);
    let mut all_digest = true;
    for c in containers.clone() {
        let Some(digest) = image_digest(c.image.as_deref().unwrap_or_default()) else {
            all_digest = false;
            continue;
        };
        let status_digest = pod
            .status
            .iter()
            .flat_map(|s| s.container_statuses.iter().flatten())
            .find(|cs| cs.name == c.name)
            .and_then(|cs| image_digest(&cs.image_id));
        // Port of pkg/util/imagesutil.go::IsContainerImageEqual (v1.8.4): same repo and digest.
        if status_digest != Some(digest) {
            return false;
        }
    }
    if all_digest {
        return true;
    }
    let sets: BTreeSet<&str> = annotation(pod, SIDECAR_INJECTED_LIST)
        .map(|l| l.split(',').filter(|s| !s.is_empty()).collect())
        .unwrap_or_default();
    let sidecars: BTreeSet<&str> = containers
        .filter(|c| {
            c.env
                .iter()
                .flatten()
                .any(|e| e.name == "IS_INJECTED" && e.value.as_deref() == Some("true"))
        })
        .map(|c| c.name.as_str())
        .collect();
    if !sets.is_empty() && !sidecars.is_empty() && !sidecars_update_completed(pod, &sets, &sidecars)
    {
        return false;
    }
    check_in_place_update_completed(pod).is_ok()
}
