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

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    use super::*;
    use crate::kruise::statefulset::PodManagementPolicy;

    fn pods(new: &[i32]) -> Vec<AstsPod> {
        (0..6)
            .map(|o| AstsPod {
                name: format!("web-{o}"),
                revision: if new.contains(&o) { "web-2" } else { "web-1" }.to_owned(),
                phase: "Running".to_owned(),
                ready: true,
                ..Default::default()
            })
            .collect()
    }

    fn spec() -> AstsSpec {
        AstsSpec {
            replicas: 6,
            pod_management_policy: PodManagementPolicy::Parallel,
            rolling_update: Some(RollingUpdate {
                max_unavailable: Some(IntOrString::Int(2)),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn plan_lists_order_pass_block_and_final_state() {
        let gates = FeatureGates::new();
        let plan = plan_partition(
            &spec(),
            &gates,
            KruiseVersion::V1_8,
            &pods(&[]),
            "web-1",
            "web-2",
            3,
            &|_| false,
        );
        let plan = plan.unwrap_or_else(|e| panic!("{e}"));
        let order: Vec<i32> = plan.to_update.iter().map(|p| p.ordinal).collect();
        assert_eq!(order, vec![5, 4, 3]);
        assert_eq!(
            plan.this_pass,
            vec![(5, UpdateAction::Delete), (4, UpdateAction::Delete)]
        );
        assert_eq!(plan.blocked_at, Some(3));
        assert_eq!(plan.final_state.old_revision_ordinals, vec![0, 1, 2]);
        assert_eq!(plan.expected_updated_replicas(), 3);
    }

    #[test]
    fn raising_the_partition_does_not_roll_back() {
        let gates = FeatureGates::new();
        let plan = plan_partition(
            &spec(),
            &gates,
            KruiseVersion::V1_8,
            &pods(&[4, 5]),
            "web-1",
            "web-2",
            5,
            &|_| false,
        );
        let plan = plan.unwrap_or_else(|e| panic!("{e}"));
        assert!(plan.to_update.is_empty() && plan.this_pass.is_empty());
        assert_eq!(plan.updated_below_partition, vec![4]);
        assert_eq!(plan.final_state.update_revision_ordinals, vec![4, 5]);
    }

    #[test]
    fn in_place_policy_updates_without_deleting() {
        let gates = FeatureGates::new();
        let mut s = spec();
        if let Some(r) = s.rolling_update.as_mut() {
            r.pod_update_policy = crate::kruise::statefulset::PodUpdatePolicy::InPlaceIfPossible;
        }
        let plan = plan_partition(
            &s,
            &gates,
            KruiseVersion::V1_8,
            &pods(&[]),
            "web-1",
            "web-2",
            0,
            &|p| p.name != "web-5",
        );
        let plan = plan.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            plan.this_pass,
            vec![(5, UpdateAction::Delete), (4, UpdateAction::InPlace)]
        );
        assert_eq!(plan.expected_updated_replicas(), 6);
    }
}
