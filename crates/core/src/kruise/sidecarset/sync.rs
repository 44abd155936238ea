//! One SidecarSet controller pass as the controller shell runs it, sans IO, in upstream's
//! order: register the latest ControllerRevision ([`revisions`]), compute and write the status
//! ([`matched_and_status`], [`status_changed`]), then — once the pods it last upgraded show in
//! the cache — reset finished hot upgrades, mark pods that cannot be upgraded in place and
//! upgrade the next pods ([`plan_pods`]). Each pod write is a whole desired pod computed by a
//! function the shell re-applies to a freshly read pod after a conflict ([`flip_pod`],
//! [`upgrade_pod`]).
//!
//! Port of pkg/controller/sidecarset/sidecarset_processor.go::UpdateSidecarSet (v1.8.4).

pub mod revisions;

use k8s_openapi::api::core::v1::{Pod, PodCondition};

use super::{
    SIDECARSET_UPGRADABLE_CONDITION,
    matching::NamespaceLabels,
    reconcile::{
        ReconcileContext, calculate_status, flip_hot_upgrading, is_matching_pod,
        set_upgradable_condition,
    },
    upgrade::next_upgrade_pods,
};
use crate::api::sidecarset::{NOT_UPDATE, SidecarContainer, SidecarSet, SidecarSetStatus};
use crate::kruise::{KruiseVersion, events::EventRecord};

/// The matched pods (indexes into `pods`) and the status they give, with `latest_revision`
/// and `collision_count` from the revision registration.
///
/// Port of sidecarset_processor.go::getMatchingPods and calculateStatus (v1.8.4).
pub fn matched_and_status(
    set: &SidecarSet,
    pods: &[Pod],
    namespaces: &NamespaceLabels,
    latest_revision: &str,
    collision_count: i32,
) -> (Vec<usize>, SidecarSetStatus) {
    let matched: Vec<usize> = (0..pods.len())
        .filter(|&i| is_matching_pod(set, &pods[i], namespaces))
        .collect();
    let refs: Vec<&Pod> = matched.iter().map(|&i| &pods[i]).collect();
    let status = calculate_status(set, &refs, latest_revision, collision_count);
    (matched, status)
}

/// Whether `new` must be written over `old` (a newer generation, or any count, the latest
/// revision or the collision count differs).
///
/// Port of sidecarset_processor.go::inconsistentStatus (v1.8.4).
pub fn status_changed(old: Option<&SidecarSetStatus>, new: &SidecarSetStatus) -> bool {
    let default = SidecarSetStatus::default();
    let old = old.unwrap_or(&default);
    new.observed_generation > old.observed_generation
        || new.matched_pods != old.matched_pods
        || new.updated_pods != old.updated_pods
        || new.ready_pods != old.ready_pods
        || new.updated_ready_pods != old.updated_ready_pods
        || new.latest_revision != old.latest_revision
        || new.collision_count != old.collision_count
}

/// Why a pass upgrades no pod (for the logs), or None when it looked for pods to upgrade.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// `updateStrategy.type: NotUpdate`.
    NotUpdate,
    /// Every matched pod already runs the set's hash.
    AllUpdated,
    /// `updateStrategy.paused`.
    Paused,
    /// v1.9.0: this pass flips finished hot upgrades and does nothing else.
    HotUpgradeFlips,
}

/// What the pods part of a pass writes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodPlan {
    /// Finished hot upgrades whose idle twin goes back to the empty image: `(index, pod)`.
    pub flips: Vec<(usize, Pod)>,
    /// Pods that cannot be upgraded in place, with their `SidecarSetUpgradable` condition set
    /// to false for this set (only those whose condition changes).
    pub not_upgradable: Vec<(usize, Pod)>,
    /// How many pods were found not upgradable (the event counts them all).
    pub not_upgradable_count: usize,
    /// In-place upgrades this round, in upgrade order: `(index, pod)`.
    pub upgrades: Vec<(usize, Pod)>,
    /// Events about the SidecarSet.
    pub events: Vec<EventRecord>,
    /// Why nothing is upgraded, when that was decided before looking at pods.
    pub hold: Option<Hold>,
}

/// Resets the finished hot upgrade of `pod` (idle twins back to the empty image, version
/// annotations, in-place state). None when the pod is not a finished hot upgrade.
///
/// Port of sidecarset_hotupgrade.go::flipPodSidecarContainerDo with the selection of
/// UpdateSidecarSet step 3 (v1.8.4).
pub fn flip_pod(set: &SidecarSet, pod: &Pod, now: jiff::Timestamp) -> Option<Pod> {
    let mut out = pod.clone();
    flip_hot_upgrading(set, &mut out, now).then_some(out)
}

/// `pod` with its sidecars upgraded to the set in place: images, hash annotations, in-place
/// state, the injected list, patchPodMetadata and the `SidecarSetUpgradable` condition.
///
/// Port of sidecarset_processor.go::updatePodSidecarAndHash (v1.8.4).
pub fn upgrade_pod(set: &SidecarSet, pod: &Pod, ctx: ReconcileContext<'_>) -> Pod {
    let mut out = pod.clone();
    super::reconcile::upgrade_pod(set, &mut out, ctx);
    out
}

/// The pod's `SidecarSetUpgradable` condition, if any.
pub fn upgradable_condition(pod: &Pod) -> Option<&PodCondition> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == SIDECARSET_UPGRADABLE_CONDITION)
}

/// The pods part of a pass, over the matched pods of [`matched_and_status`] and the status
/// they gave. The caller runs it only once its update expectations are satisfied.
///
/// Port of UpdateSidecarSet steps 3 to 7 and updatePods (v1.8.4; the v1.9.0 order with
/// [`KruiseVersion::V1_9`]).
pub fn plan_pods(
    set: &SidecarSet,
    pods: &[Pod],
    matched: &[usize],
    status: &SidecarSetStatus,
    ctx: ReconcileContext<'_>,
) -> PodPlan {
    let mut plan = PodPlan::default();
    let strategy = &set.spec.update_strategy;
    if ctx.version == KruiseVersion::V1_9 {
        // v1.9.0 (#2156): NotUpdate and paused are checked before the flips
        if strategy.type_ == NOT_UPDATE {
            plan.hold = Some(Hold::NotUpdate);
            return plan;
        }
        if strategy.paused {
            plan.hold = Some(Hold::Paused);
            return plan;
        }
    }
    if set
        .spec
        .containers
        .iter()
        .any(SidecarContainer::is_hot_upgrade)
    {
        plan.flips = matched
            .iter()
            .filter_map(|&i| flip_pod(set, &pods[i], ctx.now).map(|p| (i, p)))
            .collect();
    }
    // v1.9.0: a pass that flips returns; the pods are looked at again once the flips are seen
    if ctx.version == KruiseVersion::V1_9 && !plan.flips.is_empty() {
        plan.hold = Some(Hold::HotUpgradeFlips);
        return plan;
    }
    plan.hold = if strategy.type_ == NOT_UPDATE {
        Some(Hold::NotUpdate)
    } else if status.updated_pods >= status.matched_pods {
        Some(Hold::AllUpdated)
    } else if strategy.paused {
        Some(Hold::Paused)
    } else {
        None
    };
    if plan.hold.is_some() {
        return plan;
    }
    // The strategy decides on the pods as read; a pod whose hot upgrade was just reset is
    // upgraded from its reset state (upstream re-reads it before writing).
    let view: Vec<Pod> = matched.iter().map(|&i| pods[i].clone()).collect();
    let next = next_upgrade_pods(set, &view);
    plan.not_upgradable_count = next.not_upgradable.len();
    for &k in &next.not_upgradable {
        let mut pod = view[k].clone();
        if set_upgradable_condition(&mut pod, set.name(), false, ctx.now) {
            plan.not_upgradable.push((matched[k], pod));
        }
    }
    if plan.not_upgradable_count > 0 {
        plan.events.push(EventRecord::normal(
            "NotUpgradablePods",
            format!(
                "SidecarSet in-place update detected {} not upgradable pod(s) in this round, will skip them.",
                plan.not_upgradable_count
            ),
        ));
    }
    for k in next.upgrade {
        let index = matched[k];
        let base = plan
            .flips
            .iter()
            .find(|(i, _)| *i == index)
            .map_or(&pods[index], |(_, p)| p);
        plan.upgrades.push((index, upgrade_pod(set, base, ctx)));
    }
    plan
}

/// The event a hot-upgrade reset records on the pod.
pub fn reset_event(error: Option<&str>) -> EventRecord {
    match error {
        None => EventRecord::normal(
            "ResetContainerSucceed",
            "reset sidecar container image empty successfully",
        ),
        Some(e) => EventRecord::warning(
            "ResetContainerFailed",
            format!("reset sidecar container image empty failed: {e}"),
        ),
    }
}

#[cfg(test)]
mod tests;
