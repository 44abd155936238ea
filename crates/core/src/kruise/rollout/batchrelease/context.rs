//! Batch arithmetic (`control/util.go`, `control/partitionstyle/*/control.go`
//! `CalculateBatchContext`) and readiness (`context/context.go` `IsBatchReady`).

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::api::keys;
use crate::api::rollout::BatchRelease;
use crate::kruise::rollout::workload::{TargetKind, WorkloadInfo};
use crate::kruise::rollout::{calculate_batch_replicas, scale};

/// `ParseIntegerAsPercentageIfPossible(S, R, b)`: `S ≥ R → "100%"`, `S ≤ 0 → "0%"`, else
/// `S*100/R` (integer division) as `"p%"`, lifted to `"1%"` when that would resolve to 0 pods
/// while the batch is not `"100%"`.
pub fn parse_integer_as_percentage_if_possible(
    stable: i32,
    replicas: i32,
    batch: &IntOrString,
) -> IntOrString {
    if stable >= replicas {
        return IntOrString::String("100%".into());
    }
    if stable <= 0 {
        return IntOrString::String("0%".into());
    }
    let pct = i64::from(stable) * 100 / i64::from(replicas.max(1));
    let as_str = IntOrString::String(format!("{pct}%"));
    let is_hundred = matches!(batch, IntOrString::String(s) if s == "100%");
    if scale(&as_str, replicas).unwrap_or(0) == 0 && !is_hundred {
        return IntOrString::String("1%".into());
    }
    as_str
}

/// The partition the BatchRelease writes for a step of `batch` pods on `replicas` (no
/// no-need-update pods): the stable count `S = R − CalculateBatchReplicas(b, R)`, as a percent
/// ([`parse_integer_as_percentage_if_possible`]) for a CloneSet step written as a percent, else
/// the int `S` (never below 0). What the console shows beside each step of a Rollout.
pub fn step_partition(kind: TargetKind, batch: &IntOrString, replicas: i32) -> IntOrString {
    let stable = (replicas - calculate_batch_replicas(batch, replicas)).max(0);
    match (kind, batch) {
        (TargetKind::CloneSet, IntOrString::String(_)) => {
            parse_integer_as_percentage_if_possible(stable, replicas, batch)
        }
        _ => IntOrString::Int(stable),
    }
}

/// `IsCurrentMoreThanOrEqualToDesired`: both ints, or both percents compared by number.
pub fn is_current_more_than_or_equal_to_desired(
    current: &IntOrString,
    desired: &IntOrString,
) -> bool {
    match (current, desired) {
        (IntOrString::Int(c), IntOrString::Int(d)) => c >= d,
        (IntOrString::String(c), IntOrString::String(d)) => {
            let num = |s: &str| s.trim_end_matches('%').parse::<f64>().unwrap_or(0.0);
            num(c) >= num(d)
        }
        _ => false,
    }
}

/// A pod is "on revision X" when its `controller-revision-hash` or `pod-template-hash` label is
/// a suffix of X (`util.IsConsistentWithRevision`).
pub fn pod_on_revision(pod: &Pod, revision: &str) -> bool {
    if revision.is_empty() {
        return false;
    }
    let labels = pod.metadata.labels.as_ref();
    ["controller-revision-hash", "pod-template-hash"]
        .iter()
        .filter_map(|k| labels.and_then(|l| l.get(*k)))
        .any(|v| !v.is_empty() && revision.ends_with(v.as_str()))
}

pub(crate) fn pod_deleting(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
}

pub(crate) fn pod_label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .map(String::as_str)
}

/// Updated-ready replicas: CloneSet's own status field; for the StatefulSets and ADS, the pods
/// (not deleting) on `update_revision` whose Ready condition is True.
pub fn updated_ready_replicas(workload: &WorkloadInfo, pods: &[Pod]) -> i32 {
    if workload.kind == Some(TargetKind::CloneSet) || workload.updated_ready_replicas > 0 {
        return workload.updated_ready_replicas;
    }
    let n = pods
        .iter()
        .filter(|p| !pod_deleting(p))
        .filter(|p| pod_on_revision(p, &workload.update_revision))
        .filter(|p| crate::api::pod::is_ready(p))
        .count();
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// `BatchContext`: one batch's numbers for one workload.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BatchContext {
    pub rollout_id: String,
    pub current_batch: i32,
    pub update_revision: String,
    /// R.
    pub replicas: i32,
    pub updated_replicas: i32,
    pub updated_ready_replicas: i32,
    /// N.
    pub no_need_update_replicas: Option<i32>,
    /// P.
    pub planned_updated_replicas: i32,
    /// D.
    pub desired_updated_replicas: i32,
    pub current_partition: IntOrString,
    pub desired_partition: IntOrString,
    pub failure_threshold: Option<IntOrString>,
}

/// `CalculateBatchContext` per kind (§3.5 table). `pods` are the workload's pods; they count
/// only for the StatefulSets' and ADS's updated-ready number here.
pub fn calculate_batch_context(br: &BatchRelease, w: &WorkloadInfo, pods: &[Pod]) -> BatchContext {
    let plan = &br.spec.release_plan;
    let status = br.status.clone().unwrap_or_default();
    let canary = status.canary_status.unwrap_or_default();
    let current_batch = canary.current_batch;
    let batch = plan
        .batches
        .get(usize::try_from(current_batch).unwrap_or(0))
        .map(|b| b.canary_replicas.clone())
        .unwrap_or(IntOrString::Int(0));
    let r = w.replicas;
    let n = canary.no_need_update_replicas;
    let planned = calculate_batch_replicas(&batch, r);
    let mut desired_update = planned;
    let mut desired_stable = r - desired_update;
    if let Some(nn) = n.filter(|nn| *nn > 0) {
        let new = calculate_batch_replicas(&batch, r - nn);
        desired_stable = r - nn - new;
        desired_update = r - desired_stable;
    }
    let kind = w.kind.unwrap_or(TargetKind::CloneSet);
    let (desired_partition, current_partition) = match kind {
        TargetKind::CloneSet => {
            let desired = match batch {
                IntOrString::String(_) => {
                    parse_integer_as_percentage_if_possible(desired_stable, r, &batch)
                }
                IntOrString::Int(_) => IntOrString::Int(desired_stable),
            };
            (desired, w.partition.clone().unwrap_or(IntOrString::Int(0)))
        }
        TargetKind::StatefulSet | TargetKind::AdvancedStatefulSet => {
            if !w.unordered_update
                && let Some(nn) = n
            {
                desired_stable += nn;
                desired_update = r - desired_stable + nn;
            }
            (IntOrString::Int(desired_stable), current_int(w))
        }
        TargetKind::AdvancedDaemonSet => {
            desired_stable = desired_stable.max(0);
            (IntOrString::Int(desired_stable), current_int(w))
        }
    };
    BatchContext {
        rollout_id: plan.rollout_id.clone().unwrap_or_default(),
        current_batch,
        update_revision: status.update_revision.unwrap_or_default(),
        replicas: r,
        updated_replicas: w.updated_replicas,
        updated_ready_replicas: updated_ready_replicas(w, pods),
        no_need_update_replicas: n,
        planned_updated_replicas: planned,
        desired_updated_replicas: desired_update,
        current_partition,
        desired_partition,
        failure_threshold: plan.failure_threshold.clone(),
    }
}

fn current_int(w: &WorkloadInfo) -> IntOrString {
    IntOrString::Int(match &w.partition {
        Some(IntOrString::Int(i)) => *i,
        Some(p) => scale(p, w.replicas).unwrap_or(0),
        None => 0,
    })
}

/// The partition resolved to a count of pods kept on the old revision (`scale`, an error → 0).
pub fn resolve(partition: &IntOrString, replicas: i32) -> i32 {
    scale(partition, replicas).unwrap_or(0)
}

/// Why a batch is not ready (`IsBatchReady`'s errors), or Ok.
pub fn is_batch_ready(ctx: &BatchContext, pods: &[Pod]) -> Result<(), String> {
    let d = ctx.desired_updated_replicas;
    if ctx.updated_replicas < d {
        return Err(format!(
            "current batch not ready: updated replicas not satisfied, UpdatedReplicas {} < DesiredUpdatedReplicas {d}",
            ctx.updated_replicas
        ));
    }
    let tolerated = ctx
        .failure_threshold
        .as_ref()
        .map(|t| scale(t, ctx.updated_replicas).unwrap_or(0))
        .unwrap_or(0);
    if tolerated + ctx.updated_ready_replicas < d {
        return Err(format!(
            "current batch not ready: updated ready replicas not satisfied, allowedUnavailable + UpdatedReadyReplicas {} < DesiredUpdatedReplicas {d}",
            tolerated + ctx.updated_ready_replicas
        ));
    }
    if d > 0 && ctx.updated_ready_replicas == 0 {
        return Err(format!(
            "current batch not ready: no updated ready replicas, DesiredUpdatedReplicas {d} > 0 and UpdatedReadyReplicas 0 = 0"
        ));
    }
    if !ctx.rollout_id.is_empty() && !pods.is_empty() {
        let labelled = pods
            .iter()
            .filter(|p| !pod_deleting(p))
            .filter(|p| pod_label(p, keys::ROLLOUT_ID) == Some(ctx.rollout_id.as_str()))
            .count();
        if i32::try_from(labelled).unwrap_or(i32::MAX) < ctx.planned_updated_replicas {
            return Err(format!(
                "current batch not ready: pods with batch label not satisfied, RolloutID {}, PlannedUpdatedReplicas {}",
                ctx.rollout_id, ctx.planned_updated_replicas
            ));
        }
    }
    Ok(())
}
