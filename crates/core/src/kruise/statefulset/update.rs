//! Which pods an Advanced StatefulSet updates, in what order, and one rolling-update pass.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{
    AstsPod, AstsSpec, PodUpdatePolicy, RollingUpdate, UpdateStrategyType, is_pod_update,
    ordinals::start_ordinal,
};
use crate::kruise::{FeatureGates, KruiseVersion, intstr, updatesort};

/// Port of pkg/controller/statefulset/stateful_update_utils.go::sortPodsToUpdate (v1.8.4).
///
/// Returns slot indexes (`ordinal - start`) in update order, capped at `replicas - partition`.
/// Ordered mode walks the slots from the highest down to index `partition`, skipping holes.
/// Unordered mode lists pods already updated (or terminating) first, then the waiting pods in
/// descending slot order re-sorted by the priority strategy; the updated pods use up the cap
/// first.
pub fn sort_pods_to_update(
    rolling: Option<&RollingUpdate>,
    update_revision: &str,
    total_replicas: i32,
    slots: &[Option<AstsPod>],
    gates: &FeatureGates,
    version: KruiseVersion,
) -> Vec<usize> {
    let update_min = rolling.map_or(0, |r| r.partition);
    let max_update = i64::from(total_replicas) - i64::from(update_min);
    if max_update <= 0 {
        return Vec::new();
    }
    let max_update = usize::try_from(max_update).unwrap_or(usize::MAX);
    let unordered = rolling.and_then(|r| r.unordered_update.as_ref());
    let Some(unordered) = unordered else {
        let floor = usize::try_from(update_min).unwrap_or(0);
        return (0..slots.len())
            .rev()
            .take_while(|&i| i >= floor)
            .filter(|&i| slots[i].is_some())
            .take(max_update)
            .collect();
    };
    let mut updated = Vec::new();
    let mut waiting = Vec::new();
    for (i, slot) in slots.iter().enumerate().rev() {
        let Some(pod) = slot else { continue };
        if pod.terminating || is_pod_update(pod, update_revision, gates) {
            updated.push(i);
        } else {
            waiting.push(i);
        }
    }
    if let Some(strategy) = &unordered.priority_strategy {
        let labels: Vec<_> = slots
            .iter()
            .map(|s| s.as_ref().map(|p| &p.labels))
            .collect();
        updatesort::priority_sort(strategy, &labels, &mut waiting, version);
    }
    updated.extend(waiting);
    updated.truncate(max_update);
    updated
}

/// Port of pkg/controller/statefulset/stateful_set_utils.go::isCurrentRevisionNeeded (v1.8.4).
///
/// Whether a pod newly created at `ordinal` gets the current revision (true) or the update
/// revision. `status_current_replicas` is only read when `rollingUpdate` is unset. Slots beyond
/// the array are treated as holes (upstream would index out of range).
pub fn is_current_revision_needed(
    spec: &AstsSpec,
    gates: &FeatureGates,
    status_current_replicas: i32,
    update_revision: &str,
    ordinal: i32,
    slots: &[Option<AstsPod>],
) -> bool {
    if spec.update_strategy_type != UpdateStrategyType::RollingUpdate {
        return false;
    }
    let start = start_ordinal(spec, gates);
    let Some(rolling) = &spec.rolling_update else {
        return i64::from(ordinal) < i64::from(start) + i64::from(status_current_replicas);
    };
    if rolling.unordered_update.is_none() {
        let idx = usize::try_from(i64::from(ordinal) - i64::from(start)).unwrap_or(0);
        let below = slots.iter().take(idx).filter(|s| s.is_some()).count();
        return i64::try_from(below).unwrap_or(i64::MAX) < i64::from(rolling.partition);
    }
    let not_updated = slots
        .iter()
        .flatten()
        .filter(|p| p.ordinal() != ordinal && !is_pod_update(p, update_revision, gates))
        .count();
    i64::try_from(not_updated).unwrap_or(i64::MAX) < i64::from(rolling.partition)
}

/// `maxUnavailable` of the rolling phase: 1 without `rollingUpdate`, else the value scaled
/// against `replicas` rounding down, at least 1.
pub fn max_unavailable(spec: &AstsSpec) -> Result<i32, String> {
    let Some(rolling) = &spec.rolling_update else {
        return Ok(1);
    };
    let value = rolling
        .max_unavailable
        .clone()
        .unwrap_or(IntOrString::Int(1));
    Ok(
        intstr::scaled_value_apimachinery(&value, spec.replicas, false)
            .map_err(|e| e.to_string())?
            .max(1),
    )
}

/// What the pass does to one pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateAction {
    /// Deleted (recreated later by the scale phase at the revision [`is_current_revision_needed`] picks).
    Delete,
    /// Updated in place.
    InPlace,
}

/// The outcome of one rolling-update pass.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RollingStep {
    /// The pass did nothing because the strategy is paused.
    pub paused: bool,
    /// `maxUnavailable` in force.
    pub max_unavailable: i32,
    /// Names of the pods counted unavailable before the pass.
    pub unavailable_before: Vec<String>,
    /// Specified-delete pods deleted (highest ordinal first).
    pub specified_deleted: Vec<i32>,
    /// Pods updated for the new revision, in order, with how.
    pub updated: Vec<(i32, UpdateAction)>,
    /// The pod whose update waits for unavailable pods (the pass stopped there).
    pub blocked_at: Option<i32>,
}

impl RollingStep {
    /// Ordinals deleted for the update (the `podsDeletedForUpdate` vector field).
    pub fn deleted_for_update(&self) -> Vec<i32> {
        self.updated
            .iter()
            .filter(|(_, a)| *a == UpdateAction::Delete)
            .map(|(o, _)| *o)
            .collect()
    }
}

/// Port of pkg/controller/statefulset/stateful_set_control.go::rollingUpdateStatefulsetPods
/// (v1.8.4), with handleSpecifiedDeletedPods, after refresh and update expectations passed.
///
/// `can_update_in_place` says whether the revision diff of a pod allows an in-place update (the
/// caller decides from the ControllerRevisions); lifecycle hooks are not modelled here.
pub fn rolling_update_step(
    spec: &AstsSpec,
    gates: &FeatureGates,
    version: KruiseVersion,
    update_revision: &str,
    slots: &[Option<AstsPod>],
    can_update_in_place: &dyn Fn(&AstsPod) -> bool,
) -> Result<RollingStep, String> {
    if spec.rolling_update.as_ref().is_some_and(|r| r.paused) {
        // Upstream returns before scaling maxUnavailable.
        return Ok(RollingStep {
            paused: true,
            max_unavailable: max_unavailable(spec).unwrap_or(1),
            ..Default::default()
        });
    }
    let mut step = RollingStep {
        max_unavailable: max_unavailable(spec)?,
        ..Default::default()
    };
    let min_ready = spec
        .rolling_update
        .as_ref()
        .map_or(0, |r| r.min_ready_seconds);
    let mut unavailable: BTreeSet<String> = BTreeSet::new();
    for pod in slots.iter().flatten() {
        if !pod.is_healthy()
            || pod.in_place_update_pending
            || !pod.is_running_and_available(min_ready)
        {
            unavailable.insert(pod.name.clone());
        }
    }
    step.unavailable_before = unavailable.iter().cloned().collect();
    let max = usize::try_from(step.max_unavailable).unwrap_or(1);

    let mut specified: BTreeSet<String> = BTreeSet::new();
    for pod in slots.iter().rev().flatten() {
        if !pod.specified_delete {
            continue;
        }
        if unavailable.len() >= max && !unavailable.contains(&pod.name) {
            continue;
        }
        specified.insert(pod.name.clone());
        step.specified_deleted.push(pod.ordinal());
        unavailable.insert(pod.name.clone());
    }

    let order = sort_pods_to_update(
        spec.rolling_update.as_ref(),
        update_revision,
        spec.replicas,
        slots,
        gates,
        version,
    );
    let policy = spec.rolling_update.as_ref().map(|r| r.pod_update_policy);
    for idx in order {
        let Some(pod) = slots.get(idx).and_then(Option::as_ref) else {
            continue;
        };
        if pod.revision == update_revision {
            continue;
        }
        if unavailable.len() >= max && !unavailable.contains(&pod.name) {
            step.blocked_at = Some(pod.ordinal());
            return Ok(step);
        }
        if !specified.contains(&pod.name) && !pod.terminating {
            let in_place = match policy {
                Some(PodUpdatePolicy::InPlaceIfPossible) => can_update_in_place(pod),
                Some(PodUpdatePolicy::InPlaceOnly) => {
                    if !can_update_in_place(pod) {
                        return Err(format!(
                            "find strategy is InPlaceOnly but Pod {} can not update in-place",
                            pod.name
                        ));
                    }
                    true
                }
                _ => false,
            };
            let action = if in_place {
                UpdateAction::InPlace
            } else {
                UpdateAction::Delete
            };
            step.updated.push((pod.ordinal(), action));
            unavailable.insert(pod.name.clone());
        }
    }
    Ok(step)
}
