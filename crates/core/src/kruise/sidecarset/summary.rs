//! What a console shows per pod for a SidecarSet: the recorded hash and revision, and the
//! controller's view of it (updated, upgradable, consistent, ready, hot-upgrade twins).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;

use super::{
    control::{
        is_pod_ready, is_pod_state_consistent, is_sidecar_set_upgradable,
        pod_hot_upgrade_containers,
    },
    history::RevisionRef,
    pod_state::{
        pod_sidecar_set_controller_revision, pod_sidecar_set_revision,
        pod_sidecar_set_without_image_revision,
    },
};
use crate::api::sidecarset::SidecarSet;

/// One pod's sidecar state for one set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodSidecarSummary {
    /// The set's hash recorded on the pod ("" when never injected).
    pub hash: String,
    pub without_image_hash: String,
    /// The ControllerRevision the pod's sidecars came from ("" when not recorded).
    pub controller_revision: String,
    /// The pod carries the set's current hash.
    pub updated: bool,
    /// Only images differ from the set, so an in-place upgrade is possible.
    pub upgradable: bool,
    /// The running sidecars match their spec (an in-place upgrade has landed).
    pub consistent: bool,
    /// Ready for the set (RunningAndReady, hot-upgrade idle twins on the empty image).
    pub ready: bool,
    /// Hot-upgrade sidecar -> `(working twin, idle twin)`.
    pub hot_upgrade: BTreeMap<String, (String, String)>,
}

/// The stored revision a pod's sidecars came from: the `controllerRevision` the pod
/// records, else the newest revision whose hash annotation equals the pod's hash.
pub fn pod_revision<'a>(
    set: &SidecarSet,
    pod: &Pod,
    revisions: &'a [RevisionRef],
) -> Option<&'a RevisionRef> {
    let recorded = pod_sidecar_set_controller_revision(set.name(), pod);
    if let Some(r) = revisions
        .iter()
        .find(|r| !recorded.is_empty() && r.name == recorded)
    {
        return Some(r);
    }
    let hash = pod_sidecar_set_revision(set.name(), pod);
    revisions
        .iter()
        .filter(|r| !hash.is_empty() && r.hash == hash)
        .max_by_key(|r| r.revision)
}

/// Summarizes `pod` for `set`.
pub fn pod_sidecar_summary(set: &SidecarSet, pod: &Pod) -> PodSidecarSummary {
    let name = set.name();
    PodSidecarSummary {
        hash: pod_sidecar_set_revision(name, pod),
        without_image_hash: pod_sidecar_set_without_image_revision(name, pod),
        controller_revision: pod_sidecar_set_controller_revision(name, pod),
        updated: super::pod_state::is_pod_sidecar_updated(set, pod),
        upgradable: is_sidecar_set_upgradable(set, pod).0,
        consistent: is_pod_state_consistent(set, pod, &BTreeSet::new()),
        ready: is_pod_ready(set, pod),
        hot_upgrade: set
            .spec
            .containers
            .iter()
            .filter(|c| c.is_hot_upgrade())
            .map(|c| {
                (
                    c.name().to_owned(),
                    pod_hot_upgrade_containers(c.name(), pod),
                )
            })
            .collect(),
    }
}
