//! Partition preview for the plan API: given an Advanced StatefulSet, its pods and a proposed
//! partition, which pods would update, in what order, what blocks them, and where the rollout
//! converges.

use std::collections::BTreeMap;

use super::{
    AstsPod, AstsSpec, RollingUpdate, UpdateAction, is_current_revision_needed,
    ordinals::{replica_slots, replicas_range},
    rolling_update_step, sort_pods_to_update,
};
use crate::kruise::{FeatureGates, KruiseVersion};

/// Where a rollout ends when nothing else changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionFinalState {
    /// Ordinals whose pods end on a revision other than the update revision, ascending.
    pub old_revision_ordinals: Vec<i32>,
    /// Ordinals whose pods end on the update revision, ascending.
    pub update_revision_ordinals: Vec<i32>,
}

/// A pod in the update order of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedPod {
    /// Pod ordinal.
    pub ordinal: i32,
    /// Pod name.
    pub name: String,
    /// Its revision now.
    pub revision: String,
}

/// The preview of a partition change (see [`plan_partition`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AstsPartitionPlan {
    /// The partition the plan was made for.
    pub partition: i32,
    /// Pods not yet on the update revision that the partition lets update, in update order.
    pub to_update: Vec<PlannedPod>,
    /// Pods on the update revision that the new partition would keep "old": an Advanced
    /// StatefulSet never rolls them back by partition (use `rollout undo`).
    pub updated_below_partition: Vec<i32>,
    /// What the next reconcile does: pods updated now, in order.
    pub this_pass: Vec<(i32, UpdateAction)>,
    /// Pod at which the next pass stops, waiting for unavailable pods.
    pub blocked_at: Option<i32>,
    /// Pods counted unavailable before the next pass.
    pub unavailable: Vec<String>,
    /// `maxUnavailable` in force.
    pub max_unavailable: i32,
    /// The rolling phase is paused.
    pub paused: bool,
    /// Where the rollout converges with this partition.
    pub final_state: PartitionFinalState,
}

impl AstsPartitionPlan {
    /// Number of pods expected on the update revision once converged.
    pub fn expected_updated_replicas(&self) -> usize {
        self.final_state.update_revision_ordinals.len()
    }
}

fn with_partition(spec: &AstsSpec, partition: i32) -> AstsSpec {
    let mut spec = spec.clone();
    let mut rolling = spec.rolling_update.take().unwrap_or(RollingUpdate {
        max_unavailable: None,
        ..Default::default()
    });
    rolling.partition = partition;
    spec.rolling_update = Some(rolling);
    spec
}

/// Previews setting `spec.updateStrategy.rollingUpdate.partition` to `partition`.
///
/// `pods` are the set's live pods; `can_update_in_place` tells whether a pod's revision diff
/// allows an in-place update (only consulted for InPlaceIfPossible/InPlaceOnly).
#[allow(clippy::too_many_arguments)]
pub fn plan_partition(
    spec: &AstsSpec,
    gates: &FeatureGates,
    version: KruiseVersion,
    pods: &[AstsPod],
    current_revision: &str,
    update_revision: &str,
    partition: i32,
    can_update_in_place: &dyn Fn(&AstsPod) -> bool,
) -> Result<AstsPartitionPlan, String> {
    let spec = with_partition(spec, partition);
    let (slots, _) = replica_slots(&spec, gates, pods);
    let order = sort_pods_to_update(
        spec.rolling_update.as_ref(),
        update_revision,
        spec.replicas,
        &slots,
        gates,
        version,
    );
    let to_update: Vec<PlannedPod> = order
        .iter()
        .filter_map(|&i| slots.get(i).and_then(Option::as_ref))
        .filter(|p| p.revision != update_revision)
        .map(|p| PlannedPod {
            ordinal: p.ordinal(),
            name: p.name.clone(),
            revision: p.revision.clone(),
        })
        .collect();
    let mut updated_below_partition: Vec<i32> = slots
        .iter()
        .enumerate()
        .filter(|(i, _)| !order.contains(i))
        .filter_map(|(_, s)| s.as_ref())
        .filter(|p| p.revision == update_revision)
        .map(AstsPod::ordinal)
        .collect();
    updated_below_partition.sort_unstable();
    let step = rolling_update_step(
        &spec,
        gates,
        version,
        update_revision,
        &slots,
        can_update_in_place,
    )?;
    let final_state = converge_partition(
        &spec,
        gates,
        version,
        pods,
        current_revision,
        update_revision,
    )?;
    Ok(AstsPartitionPlan {
        partition,
        to_update,
        updated_below_partition,
        this_pass: step.updated,
        blocked_at: step.blocked_at,
        unavailable: step.unavailable_before,
        max_unavailable: step.max_unavailable,
        paused: step.paused,
        final_state,
    })
}

/// Simulates reconciles until nothing changes: missing pods are created at the revision
/// [`is_current_revision_needed`] picks and become Running and Ready at once, condemned pods go
/// away, and each rolling pass deletes (or updates in place) what [`rolling_update_step`] picks.
/// Pods never fail. Port of the behaviour asserted by upstream's
/// `TestStatefulSetControlRollingUpdateWithPartition` (v1.8.4).
pub fn converge_partition(
    spec: &AstsSpec,
    gates: &FeatureGates,
    version: KruiseVersion,
    pods: &[AstsPod],
    current_revision: &str,
    update_revision: &str,
) -> Result<PartitionFinalState, String> {
    let range = replicas_range(spec, gates);
    let mut live: BTreeMap<i32, AstsPod> = pods.iter().map(|p| (p.ordinal(), p.clone())).collect();
    let set_name = pods
        .iter()
        .find_map(|p| p.name.rsplit_once('-').map(|(set, _)| set.to_owned()))
        .unwrap_or_else(|| "pod".to_owned());
    let bound = 4 * (range.slot_count() + live.len()) + 16;
    for _ in 0..bound {
        let mut changed = false;
        let current = live
            .values()
            .filter(|p| p.revision == current_revision)
            .count();
        let status_current = i32::try_from(current).unwrap_or(i32::MAX);
        let listed: Vec<AstsPod> = live.values().cloned().collect();
        let (mut slots, condemned) = replica_slots(spec, gates, &listed);
        for pod in condemned {
            live.remove(&pod.ordinal());
            changed = true;
        }
        for idx in 0..slots.len() {
            let ordinal = range.start + i32::try_from(idx).unwrap_or(i32::MAX);
            if slots[idx].is_some() || !range.contains(ordinal) {
                continue;
            }
            let revision = if is_current_revision_needed(
                spec,
                gates,
                status_current,
                update_revision,
                ordinal,
                &slots,
            ) {
                current_revision
            } else {
                update_revision
            };
            let pod = AstsPod {
                name: format!("{set_name}-{ordinal}"),
                revision: revision.to_owned(),
                phase: "Running".to_owned(),
                ready: true,
                ready_for_seconds: Some(i64::from(i32::MAX)),
                ..Default::default()
            };
            slots[idx] = Some(pod.clone());
            live.insert(ordinal, pod);
            changed = true;
        }
        let step = rolling_update_step(spec, gates, version, update_revision, &slots, &|_| true)?;
        for ordinal in &step.specified_deleted {
            live.remove(ordinal);
            changed = true;
        }
        for (ordinal, action) in &step.updated {
            changed = true;
            match action {
                UpdateAction::Delete => {
                    live.remove(ordinal);
                }
                UpdateAction::InPlace => {
                    if let Some(pod) = live.get_mut(ordinal) {
                        pod.revision = update_revision.to_owned();
                    }
                }
            }
        }
        if !changed {
            let mut state = PartitionFinalState::default();
            for (ordinal, pod) in &live {
                if pod.revision == update_revision {
                    state.update_revision_ordinals.push(*ordinal);
                } else {
                    state.old_revision_ordinals.push(*ordinal);
                }
            }
            return Ok(state);
        }
    }
    Err("the rollout did not converge".to_owned())
}
