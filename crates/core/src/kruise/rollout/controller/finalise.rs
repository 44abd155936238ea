//! Finalising (`doFinalising`, `doCanaryFinalising`, `nextCanaryTask`), the BatchRelease's
//! release (`finalizingBatchRelease`, `removeBatchRelease`) and the Terminating and Disabling
//! phases (`reconcileRolloutTerminating`, `reconcileRolloutDisabling`).

use super::status::{get_condition, set_condition};
use super::{BrAction, Run, time};
use crate::api::keys;
use crate::api::rollout::{RolloutStatus, condition, finalising_step, phase};

/// Why a run is finalised (`FinaliseReason*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinaliseReason {
    Success,
    Rollback,
    /// `RolloutDisabled`.
    Disabled,
    /// `RolloutDeleting`.
    Deleting,
}

impl FinaliseReason {
    /// Upstream's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "Success",
            Self::Rollback => "Rollback",
            Self::Disabled => "RolloutDisabled",
            Self::Deleting => "RolloutDeleting",
        }
    }

    /// From upstream's spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "Success" => Self::Success,
            "Rollback" => Self::Rollback,
            "RolloutDisabled" => Self::Disabled,
            "RolloutDeleting" => Self::Deleting,
            _ => return None,
        })
    }
}

/// `nextCanaryTask`: the task after `current` in the reason's sequence; the first task when
/// `current` is empty; `END` after the last one and for a task not in the sequence.
pub fn next_canary_task(reason: FinaliseReason, current: &str) -> &'static str {
    use finalising_step::*;
    let sequence: [&'static str; 5] = match reason {
        FinaliseReason::Rollback => [
            ROUTE_TRAFFIC_TO_STABLE,
            RESUME_WORKLOAD,
            RELEASE_WORKLOAD_CONTROL,
            RESTORE_STABLE_SERVICE,
            REMOVE_CANARY_SERVICE,
        ],
        _ => [
            RESTORE_STABLE_SERVICE,
            ROUTE_TRAFFIC_TO_STABLE,
            REMOVE_CANARY_SERVICE,
            RESUME_WORKLOAD,
            RELEASE_WORKLOAD_CONTROL,
        ],
    };
    if current.is_empty() {
        return sequence[0];
    }
    sequence
        .windows(2)
        .find(|w| w[0] == current)
        .map_or(END, |w| w[1])
}

/// `removeBatchRelease`: true once the BatchRelease is gone (deletes it when it is not yet
/// being deleted).
pub(super) fn remove_batch_release(run: &mut Run<'_>) -> bool {
    match run.br {
        None => true,
        Some(br) if br.metadata.deletion_timestamp.is_some() => false,
        Some(_) => {
            run.out.batch_release.push(BrAction::Delete);
            false
        }
    }
}

/// `finalizingBatchRelease`: true once the BatchRelease has `batchPartition: null` and is
/// Completed (or is gone); otherwise patch `batchPartition: null` with the finalizing policy
/// (`WaitResume` after success, `Immediate` otherwise) unless it already reads so.
fn finalizing_batch_release(run: &mut Run<'_>) -> bool {
    let Some(br) = run.br else {
        return true;
    };
    let plan = &br.spec.release_plan;
    let completed = br
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .is_some_and(|p| p == crate::api::rollout::batch::COMPLETED);
    if plan.batch_partition.is_none() && completed {
        return true;
    }
    if plan.batch_partition.is_none()
        && (plan.finalizing_policy.as_deref() == Some("WaitResume")) == run.wait_ready
    {
        return false;
    }
    let policy = if run.wait_ready {
        "WaitResume"
    } else {
        "Immediate"
    };
    run.out
        .batch_release
        .push(BrAction::Patch(serde_json::json!({
            "spec": {"releasePlan": {"batchPartition": null, "finalizingPolicy": policy}}
        })));
    false
}

/// `doFinalising` → `doCanaryFinalising`: true once the task sequence reached `END`. The
/// in-progressing annotation is removed first, every time; traffic tasks are done at once.
pub(super) fn do_finalising(
    run: &mut Run<'_>,
    new: &mut RolloutStatus,
    reason: FinaliseReason,
) -> bool {
    if new.canary_status.is_none() {
        return true;
    }
    if let Some(w) = run.workload
        && w.annotations.contains_key(keys::ROLLOUT_IN_PROGRESSING)
    {
        run.out.workload_patches.push(serde_json::json!({
            "metadata": {"annotations": {keys::ROLLOUT_IN_PROGRESSING: null}}
        }));
    }
    let now = run.now;
    let current = new
        .canary_status
        .as_ref()
        .map(|c| c.finalising_step.clone())
        .unwrap_or_default();
    let next = next_canary_task(reason, &current);
    let step = if current.is_empty() {
        if let Some(cs) = new.canary_status.as_mut() {
            cs.finalising_step = next.into();
            cs.last_update_time = Some(time(now));
        }
        next.to_owned()
    } else if current == finalising_step::END {
        return true;
    } else {
        current
    };
    let done = match step.as_str() {
        finalising_step::RESUME_WORKLOAD => finalizing_batch_release(run),
        finalising_step::RELEASE_WORKLOAD_CONTROL => remove_batch_release(run),
        finalising_step::ROUTE_TRAFFIC_TO_STABLE
        | finalising_step::RESTORE_STABLE_SERVICE
        | finalising_step::REMOVE_CANARY_SERVICE => true,
        _ => {
            if let Some(cs) = new.canary_status.as_mut() {
                cs.finalising_step = next_canary_task(reason, "").into();
            }
            return false;
        }
    };
    if !done {
        return false;
    }
    if let Some(cs) = new.canary_status.as_mut() {
        cs.last_update_time = Some(time(now));
        cs.finalising_step = next.into();
    }
    next == finalising_step::END
}

/// `reconcileRolloutTerminating`: finalise for deletion (a promotion), then the Terminating
/// condition reads False/Completed and the finalizer can go.
pub(super) fn reconcile_terminating(run: &mut Run<'_>, new: &mut RolloutStatus) {
    let read = run.rollout.status.clone().unwrap_or_default();
    let cond = get_condition(&read, condition::TERMINATING);
    if cond
        .as_ref()
        .is_some_and(|c| c.reason == condition::REASON_COMPLETED)
    {
        return;
    }
    if do_finalising(run, new, FinaliseReason::Deleting) {
        let mut cond = cond.unwrap_or_else(|| {
            super::status::new_condition(condition::TERMINATING, "False", "", "", run.now)
        });
        cond.reason = condition::REASON_COMPLETED.into();
        cond.status = "False".into();
        set_condition(new, cond);
    } else {
        run.recheck_in_grace();
    }
}

/// `reconcileRolloutDisabling`: finalise (a promotion, `Immediate`), then `Disabled`.
pub(super) fn reconcile_disabling(run: &mut Run<'_>, new: &mut RolloutStatus) {
    if do_finalising(run, new, FinaliseReason::Disabled) {
        new.phase = Some(phase::DISABLED.into());
        new.message = Some("Rollout is disabled".into());
    } else {
        run.recheck_in_grace();
    }
}
