//! `calculateDiffsWithExpectation`: how many pods to scale and to update this reconcile.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{CloneSetParams, PodInfo, state};
use crate::kruise::{FeatureGates, intstr, revision};

/// Default `updateStrategy.maxUnavailable`.
pub const DEFAULT_MAX_UNAVAILABLE: &str =
    crate::api::kinds::WorkloadKind::CloneSet.default_max_unavailable();

/// Port of sync/cloneset_sync_utils.go::expectationDiffs (v1.8.4).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExpectationDiffs {
    pub scale_up_num: i32,
    pub scale_up_num_old_revision: i32,
    pub scale_down_num: i32,
    pub scale_down_num_old_revision: i32,
    pub scale_up_limit: i32,
    pub delete_ready_limit: i32,
    pub use_surge: i32,
    pub use_surge_old_revision: i32,
    /// Positive: update that many old pods; negative: roll that many new pods back.
    pub update_num: i32,
    pub update_max_unavailable: i32,
}

impl ExpectationDiffs {
    /// No scale and no update work.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Which test classifies a pod as "new": Update() uses the plain revision test, Scale() uses
/// `revision.IsPodUpdate` (PreparingUpdate counts as new with `PreparingUpdateAsUpdate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsPodUpdateMode {
    RevisionOnly,
    RevisionOrPreparingUpdate,
}

impl IsPodUpdateMode {
    /// Whether `pod` counts as being on `update_revision`.
    pub fn test(self, pod: &PodInfo, update_revision: &str, gates: &FeatureGates) -> bool {
        match self {
            Self::RevisionOnly => revision::equal_to_revision_hash(&pod.revision, update_revision),
            Self::RevisionOrPreparingUpdate => {
                revision::is_pod_update(&pod.revision, &pod.lifecycle_state, update_revision, gates)
            }
        }
    }
}

/// The resolved strategy numbers `calculateDiffsWithExpectation` works with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrategyNumbers {
    pub partition: i32,
    pub max_surge: i32,
    pub max_unavailable: i32,
    pub scale_max_unavailable: i32,
}

/// Resolves partition (Kruise float parser; an invalid one counts as 0), maxSurge (rounded up,
/// 0 when paused), maxUnavailable (default 20%, rounded up only without surge) and the scale
/// strategy's maxUnavailable (unlimited when unset). Invalid values count as 0.
pub fn strategy_numbers(cs: &CloneSetParams) -> StrategyNumbers {
    let replicas = cs.replicas;
    let partition =
        intstr::calculate_partition_replicas(cs.partition.as_ref(), Some(replicas)).unwrap_or(0);
    let mut max_surge = cs.max_surge.as_ref().map_or(0, |v| {
        intstr::value_from_int_or_percent(v, replicas, true).unwrap_or(0)
    });
    if cs.paused {
        max_surge = 0;
    }
    let default_unavailable = IntOrString::String(DEFAULT_MAX_UNAVAILABLE.to_owned());
    let max_unavailable = intstr::value_from_int_or_percent(
        cs.max_unavailable.as_ref().unwrap_or(&default_unavailable),
        replicas,
        max_surge == 0,
    )
    .unwrap_or(0);
    let scale_max_unavailable = cs.scale_max_unavailable.as_ref().map_or(i32::MAX, |v| {
        intstr::value_from_int_or_percent(v, replicas, true).unwrap_or(0)
    });
    StrategyNumbers {
        partition,
        max_surge,
        max_unavailable,
        scale_max_unavailable,
    }
}

#[derive(Default)]
struct Counts {
    new: i32,
    new_active: i32,
    old: i32,
    old_active: i32,
    unavailable_new: i32,
    unavailable_old: i32,
    to_delete_new: i32,
    to_delete_old: i32,
    pre_deleting_new: i32,
    pre_deleting_old: i32,
}

/// Port of sync/cloneset_sync_utils.go::calculateDiffsWithExpectation (v1.8.4).
#[allow(clippy::too_many_arguments)]
pub fn calculate_diffs(
    cs: &CloneSetParams,
    pods: &[PodInfo],
    current_revision: &str,
    update_revision: &str,
    mode: IsPodUpdateMode,
    gates: &FeatureGates,
    now: i64,
) -> ExpectationDiffs {
    let mut res = ExpectationDiffs::default();
    let replicas = cs.replicas;
    let n = strategy_numbers(cs);
    let mut c = Counts::default();
    for pod in pods {
        let is_new = mode.test(pod, update_revision, gates);
        let (total, active, pre_deleting, to_delete, unavailable) = if is_new {
            (
                &mut c.new,
                &mut c.new_active,
                &mut c.pre_deleting_new,
                &mut c.to_delete_new,
                &mut c.unavailable_new,
            )
        } else {
            (
                &mut c.old,
                &mut c.old_active,
                &mut c.pre_deleting_old,
                &mut c.to_delete_old,
                &mut c.unavailable_old,
            )
        };
        *total += 1;
        if pod.lifecycle_state == state::PREPARING_DELETE {
            *pre_deleting += 1;
        } else {
            *active += 1;
            if cs.is_specified_delete(pod) {
                *to_delete += 1;
            } else if !pod.is_available(cs.min_ready_seconds, now) {
                *unavailable += 1;
            }
        }
    }

    let mut update_old_diff = c.old_active - n.partition;
    let mut update_new_diff = c.new_active - (replicas - n.partition);
    let total_unavailable =
        c.pre_deleting_new + c.pre_deleting_old + c.unavailable_new + c.unavailable_old;
    if update_revision == current_revision || !gates.enabled("CloneSetPartitionRollback") {
        update_old_diff = update_old_diff.max(0);
        update_new_diff = update_new_diff.min(0);
    }

    if n.max_surge > 0 {
        let (mut scale_surge, mut scale_old_surge) = (0, 0);
        let to_delete = c.to_delete_new + c.to_delete_old;
        if to_delete > 0 {
            scale_surge = (total_unavailable + to_delete - n.max_unavailable)
                .max(0)
                .min(to_delete);
            if scale_surge > c.to_delete_new {
                scale_old_surge = scale_surge - c.to_delete_new;
            }
        }
        let (mut update_surge, mut update_old_surge) = (0, 0);
        let opposite = (update_old_diff > 0 && update_new_diff < 0)
            || (update_old_diff < 0 && update_new_diff > 0);
        if opposite {
            if update_old_diff.abs() <= update_new_diff.abs() {
                update_surge = update_old_diff.abs();
                if update_old_diff < 0 {
                    update_old_surge = update_surge;
                }
            } else {
                update_surge = update_new_diff.abs();
                if update_new_diff > 0 {
                    update_old_surge = update_surge;
                }
            }
        }
        if scale_surge >= update_surge {
            res.use_surge = n.max_surge.min(scale_surge);
            res.use_surge_old_revision = res.use_surge.min(scale_old_surge);
        } else {
            res.use_surge = n.max_surge.min(update_surge);
            res.use_surge_old_revision = res.use_surge.min(update_old_surge);
        }
    }

    let pod_count = i32::try_from(pods.len()).unwrap_or(i32::MAX);
    let mut current_total = pod_count;
    let mut current_old = c.old;
    if cs.exclude_preparing_delete {
        current_total -= c.pre_deleting_old + c.pre_deleting_new;
        current_old -= c.pre_deleting_old;
    }
    let expected_total = replicas + res.use_surge;
    let expected_old = n.partition + res.use_surge_old_revision;

    let up = expected_total - current_total;
    if up > 0 {
        res.scale_up_num = up;
        res.scale_up_num_old_revision = (expected_old - current_old).max(0);
        res.scale_up_limit = up.min(
            n.scale_max_unavailable
                .saturating_sub(total_unavailable)
                .max(0),
        );
    }
    let down = current_total - c.to_delete_old - c.to_delete_new - expected_total;
    if down > 0 {
        res.scale_down_num = down;
        res.scale_down_num_old_revision = (current_old - c.to_delete_old - expected_old).max(0);
    }
    if c.to_delete_new > 0 || c.to_delete_old > 0 || res.scale_down_num > 0 {
        res.delete_ready_limit =
            (n.max_unavailable + (pod_count - replicas) - total_unavailable).max(0);
    }

    res.update_num = if update_old_diff.abs() <= update_new_diff.abs() {
        update_old_diff
    } else {
        -update_new_diff
    };
    if res.update_num != 0 {
        res.update_max_unavailable = n.max_unavailable + pod_count - replicas;
    }
    res
}
