//! Update(): which pods wait to update, in what order, and how many may go now.

use super::{ExpectationDiffs, PodInfo, pod_sort, state};
use crate::kruise::{
    KruiseVersion, revision,
    updatesort::{self, Labels, PriorityStrategy, ScatterTerm},
};

/// The ordering knobs of `updateStrategy`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpdateOrder {
    pub priority: Option<PriorityStrategy>,
    pub scatter: Vec<ScatterTerm>,
}

/// Port of sync/cloneset_update.go::Update step 3 (v1.8.4): the pods waiting to update (forward:
/// not on `update_revision`; rollback: on it), skipping PreparingDelete pods and pods in an
/// in-place grace period (Updated pods are always candidates).
pub fn update_candidates(pods: &[PodInfo], update_num: i32, update_revision: &str) -> Vec<usize> {
    pods.iter()
        .enumerate()
        .filter(|(_, pod)| {
            let on_update = revision::equal_to_revision_hash(&pod.revision, update_revision);
            let waits = if update_num > 0 {
                !on_update
            } else {
                on_update
            };
            waits
                && match pod.lifecycle_state.as_str() {
                    state::PREPARING_DELETE => false,
                    state::UPDATED => true,
                    _ => !pod.in_place_grace,
                }
        })
        .map(|(i, _)| i)
        .collect()
}

/// Port of sync/cloneset_update.go::SortUpdateIndexes (v1.8.4): default ActivePods order, then
/// priority, then scatter, then PreparingUpdate pods first.
///
/// Upstream's default sort is `sort.Slice` (insertion sort, so input order on ties, up to 12
/// items); this port is stable at every size.
pub fn sort_update_indexes(
    pods: &[PodInfo],
    indexes: &[usize],
    order: &UpdateOrder,
    version: KruiseVersion,
) -> Vec<usize> {
    let mut out: Vec<usize> = indexes
        .iter()
        .copied()
        .filter(|&i| i < pods.len())
        .collect();
    out.sort_by(|&a, &b| pod_sort::ordering(pod_sort::active_pods_less, &pods[a], &pods[b]));
    let labels: Vec<Option<&Labels>> = if order.priority.is_some() || !order.scatter.is_empty() {
        pods.iter().map(|p| Some(&p.labels)).collect()
    } else {
        Vec::new()
    };
    if let Some(priority) = &order.priority {
        updatesort::priority_sort(priority, &labels, &mut out, version);
    }
    if !order.scatter.is_empty() {
        out = updatesort::scatter_sort(&order.scatter, &labels, &out);
    }
    out.sort_by_key(|&i| pods[i].lifecycle_state != state::PREPARING_UPDATE);
    out
}

/// Why a candidate was not let through by [`limit_update_indexes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitReason {
    /// Past `|updateNum|` (the partition keeps it where it is).
    Partition,
    /// Updating it would exceed maxUnavailable.
    MaxUnavailable,
}

/// The outcome of [`limit_update_indexes`]: the pods that go now, and why the rest wait.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limited {
    pub can_update: Vec<usize>,
    pub blocked: Vec<(usize, LimitReason)>,
}

/// Port of sync/cloneset_update.go::limitUpdateIndexes (v1.8.4): truncate to `|updateNum|`, then
/// walk in order while the unavailable pods on the target revision plus those chosen stay under
/// `updateMaxUnavailable`, and, for available candidates, while all unavailable pods do.
/// Indexes outside `pods` are ignored.
pub fn limit_update_indexes(
    pods: &[PodInfo],
    sorted: &[usize],
    diffs: &ExpectationDiffs,
    target_revision: &str,
    min_ready_seconds: i32,
    now: i64,
) -> Limited {
    let want = usize::try_from(diffs.update_num.unsigned_abs()).unwrap_or(usize::MAX);
    let mut out = Limited::default();
    let sorted: Vec<usize> = sorted.iter().copied().filter(|&i| i < pods.len()).collect();
    let (head, tail) = sorted.split_at(want.min(sorted.len()));
    out.blocked
        .extend(tail.iter().map(|&i| (i, LimitReason::Partition)));

    let mut unavailable = 0i32;
    let mut target_unavailable = 0i32;
    for pod in pods {
        if !pod.is_available(min_ready_seconds, now) {
            unavailable += 1;
            if revision::equal_to_revision_hash(&pod.revision, target_revision) {
                target_unavailable += 1;
            }
        }
    }
    let mut can_update = 0i32;
    let mut stopped = false;
    for &i in head {
        if !stopped {
            if target_unavailable + can_update >= diffs.update_max_unavailable {
                stopped = true;
            } else if pods[i].is_available(min_ready_seconds, now) {
                if unavailable >= diffs.update_max_unavailable {
                    stopped = true;
                } else {
                    unavailable += 1;
                }
            }
        }
        if stopped {
            out.blocked.push((i, LimitReason::MaxUnavailable));
        } else {
            can_update += 1;
            out.can_update.push(i);
        }
    }
    // Keep `blocked` in walk order: head first, then the truncated tail.
    let split = out
        .blocked
        .iter()
        .position(|(_, r)| *r == LimitReason::MaxUnavailable)
        .unwrap_or(out.blocked.len());
    out.blocked.rotate_left(split);
    out
}
