//! Per-pod decisions of the community SidecarSet control: which pod containers belong to the
//! set, whether their in-place upgrade has landed (consistent), whether the pod counts as
//! ready, and whether it can be upgraded in place at all.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;

use super::{
    SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION, SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER,
    pod_state::{inplace_update_states, pod_annotation, pod_sidecar_set_without_image_revision},
};
use crate::api::{pod::is_running_and_ready, sidecarset::SidecarSet};

/// The pod container names a set owns: cold sidecars by name, hot ones as both twins.
///
/// Port of pkg/control/sidecarcontrol/util.go::GetSidecarContainersInPod (v1.8.4).
pub fn sidecar_containers_in_pod(set: &SidecarSet) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for c in &set.spec.containers {
        if c.is_hot_upgrade() {
            let (a, b) = hot_upgrade_twin_names(c.name());
            names.insert(a);
            names.insert(b);
        } else {
            names.insert(c.name().to_owned());
        }
    }
    names
}

/// `<name>-1`, `<name>-2`.
///
/// Port of pkg/control/sidecarcontrol/util_hotupgrade.go::GetHotUpgradeContainerName (v1.8.4).
pub fn hot_upgrade_twin_names(name: &str) -> (String, String) {
    (format!("{name}-1"), format!("{name}-2"))
}

/// `(working, empty)` twin of a hot sidecar, from the working-container annotation (the
/// `-1` twin works when the annotation is silent).
///
/// Port of pkg/control/sidecarcontrol/util_hotupgrade.go::GetPodHotUpgradeContainers (v1.8.4).
pub fn pod_hot_upgrade_containers(name: &str, pod: &Pod) -> (String, String) {
    let (one, two) = hot_upgrade_twin_names(name);
    let working: BTreeMap<String, String> = serde_json::from_str(pod_annotation(
        pod,
        SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER,
    ))
    .unwrap_or_default();
    if working.get(name) == Some(&two) {
        (two, one)
    } else {
        (one, two)
    }
}

/// Whether the pod is neither finished nor being deleted.
///
/// Port of k8s controller.IsPodActive (as used by sidecarcontrol.IsActivePod).
pub fn is_pod_active(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    pod.metadata.deletion_timestamp.is_none()
        && phase != Some("Succeeded")
        && phase != Some("Failed")
}

/// RunningAndReady, and every hot sidecar's idle twin carries the empty image.
///
/// Port of pkg/control/sidecarcontrol/sidecarset_control.go::IsPodReady (v1.8.4).
pub fn is_pod_ready(set: &SidecarSet, pod: &Pod) -> bool {
    let mut empty_images: BTreeMap<String, &str> = BTreeMap::new();
    for c in set.spec.containers.iter().filter(|c| c.is_hot_upgrade()) {
        let (_, empty) = pod_hot_upgrade_containers(c.name(), pod);
        empty_images.insert(empty, c.upgrade_strategy.hot_upgrade_empty_image.as_str());
    }
    let spec_containers = pod.spec.iter().flat_map(|s| s.containers.iter());
    for c in spec_containers {
        if let Some(empty) = empty_images.get(&c.name)
            && !empty.is_empty()
            && c.image.as_deref().unwrap_or_default() != *empty
        {
            return false;
        }
    }
    is_running_and_ready(pod)
}

/// Whether the in-place upgrade of the given containers has landed: false only when a
/// recorded pre-upgrade imageID is still the current one while the spec image differs from
/// the status image.
///
/// Port of pkg/control/sidecarcontrol/util.go::IsSidecarContainerUpdateCompleted (v1.8.4).
pub fn is_sidecar_container_update_completed(
    pod: &Pod,
    sidecar_sets: &BTreeSet<String>,
    containers: &BTreeSet<String>,
) -> bool {
    let Some(states) = inplace_update_states(pod) else {
        return false;
    };
    let mut last: BTreeMap<&str, &str> = BTreeMap::new();
    for (set_name, state) in &states {
        if !sidecar_sets.contains(set_name) {
            continue;
        }
        for (name, status) in state.last_container_statuses.iter().flatten() {
            last.insert(name, &status.image_id);
        }
    }
    let spec_images: BTreeMap<&str, &str> = pod
        .spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .map(|c| (c.name.as_str(), c.image.as_deref().unwrap_or_default()))
        .collect();
    let statuses = pod
        .status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten());
    for cs in statuses {
        if !containers.contains(&cs.name) {
            continue;
        }
        if let Some(image_id) = last.get(cs.name.as_str())
            && *image_id == cs.image_id
            && spec_images
                .get(cs.name.as_str())
                .copied()
                .unwrap_or_default()
                != cs.image
        {
            return false;
        }
    }
    true
}

/// Whether the listed sidecar containers (all of the set's when empty) run what their spec
/// says.
///
/// Port of pkg/control/sidecarcontrol/sidecarset_control.go::IsPodStateConsistent (v1.8.4).
pub fn is_pod_state_consistent(set: &SidecarSet, pod: &Pod, containers: &BTreeSet<String>) -> bool {
    let spec_containers: Vec<_> = pod.spec.iter().flat_map(|s| s.containers.iter()).collect();
    let statuses: Vec<_> = pod
        .status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
        .collect();
    if spec_containers.len() != statuses.len() {
        return false;
    }
    let containers = if containers.is_empty() {
        sidecar_containers_in_pod(set)
    } else {
        containers.clone()
    };
    let image_ids: BTreeMap<&str, &str> = statuses
        .iter()
        .map(|cs| (cs.name.as_str(), cs.image_id.as_str()))
        .collect();
    let mut all_digest = true;
    for c in spec_containers
        .iter()
        .filter(|c| containers.contains(&c.name))
    {
        let image = c.image.as_deref().unwrap_or_default();
        if !is_image_digest(image) {
            all_digest = false;
            break;
        }
        if !is_container_image_equal(
            image,
            image_ids.get(c.name.as_str()).copied().unwrap_or_default(),
        ) {
            return false;
        }
    }
    if all_digest {
        return true;
    }
    let sets = BTreeSet::from([set.name().to_owned()]);
    is_sidecar_container_update_completed(pod, &sets, &containers)
}

/// `(canUpgrade, consistent)`: the pod's without-image hash must equal the set's; a sidecar
/// that is Ready but not yet consistent means an upgrade is still landing.
///
/// Port of pkg/control/sidecarcontrol/sidecarset_control.go::IsSidecarSetUpgradable (v1.8.4).
pub fn is_sidecar_set_upgradable(set: &SidecarSet, pod: &Pod) -> (bool, bool) {
    if pod_sidecar_set_without_image_revision(set.name(), pod)
        != set.annotation(SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION)
    {
        return (false, false);
    }
    let ready: BTreeMap<&str, bool> = pod
        .status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
        .map(|cs| (cs.name.as_str(), cs.ready))
        .collect();
    for name in sidecar_containers_in_pod(set) {
        let only = BTreeSet::from([name.clone()]);
        if ready.get(name.as_str()).copied().unwrap_or(false)
            && !is_pod_state_consistent(set, pod, &only)
        {
            return (true, false);
        }
    }
    (true, true)
}

/// Whether every cold sidecar exists in the pod and every hot one has both twins and a
/// working-container entry.
///
/// Port of pkg/control/sidecarcontrol/util.go::IsPodConsistentWithSidecarSet (v1.8.4).
pub fn is_pod_consistent_with_sidecar_set(pod: &Pod, set: &SidecarSet) -> bool {
    let names: BTreeSet<&str> = pod
        .spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .map(|c| c.name.as_str())
        .collect();
    let working: BTreeMap<String, String> = serde_json::from_str(pod_annotation(
        pod,
        SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER,
    ))
    .unwrap_or_default();
    set.spec.containers.iter().all(|c| {
        if c.is_hot_upgrade() {
            let (a, b) = hot_upgrade_twin_names(c.name());
            names.contains(a.as_str())
                && names.contains(b.as_str())
                && working.contains_key(c.name())
        } else {
            names.contains(c.name())
        }
    })
}

/// Splits an image reference into `(normalized repository, tag, digest)`; the transport
/// prefix of a status imageID (`docker-pullable://`) is dropped.
fn parse_image(image: &str) -> (String, String, String) {
    let image = image.split_once("://").map_or(image, |(_, rest)| rest);
    let (name, digest) = image.split_once('@').unwrap_or((image, ""));
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let (repo, tag) = match name[last_slash..].rfind(':') {
        Some(i) => (&name[..last_slash + i], &name[last_slash + i + 1..]),
        None => (name, ""),
    };
    let first = repo.split('/').next().unwrap_or_default();
    let has_domain =
        repo.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    let repo = if has_domain {
        repo.to_owned()
    } else if repo.contains('/') {
        format!("docker.io/{repo}")
    } else {
        format!("docker.io/library/{repo}")
    };
    let tag = if tag.is_empty() && digest.is_empty() {
        "latest"
    } else {
        tag
    };
    (repo, tag.to_owned(), digest.to_owned())
}

/// Whether an image reference pins a digest.
///
/// Port of pkg/util/image.go::IsImageDigest (v1.8.4).
pub fn is_image_digest(image: &str) -> bool {
    !parse_image(image).2.is_empty()
}

/// Whether two references name the same image (repo and digest when both are digests, else
/// repo and tag).
///
/// Port of pkg/util/image.go::IsContainerImageEqual (v1.8.4).
pub fn is_container_image_equal(a: &str, b: &str) -> bool {
    let (ra, ta, da) = parse_image(a);
    let (rb, tb, db) = parse_image(b);
    if !da.is_empty() && !db.is_empty() {
        ra == rb && da == db
    } else {
        ra == rb && ta == tb
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_references() {
        assert!(is_image_digest("busybox@sha256:abc"));
        assert!(!is_image_digest("busybox:1.0"));
        assert!(is_container_image_equal(
            "docker.io/library/busybox@sha256:abc",
            "docker-pullable://busybox@sha256:abc"
        ));
        assert!(!is_container_image_equal(
            "busybox@sha256:abc",
            "busybox@sha256:def"
        ));
        assert!(is_container_image_equal(
            "nginx",
            "docker.io/library/nginx:latest"
        ));
        assert!(is_container_image_equal(
            "localhost:5000/a/b:1",
            "localhost:5000/a/b:1"
        ));
    }
}
