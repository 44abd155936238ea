//! `rollout_progressing.go`: the Progressing condition's reasons (Initializing, InRolling,
//! Paused, Finalising, Cancelling, Completed) and the InRolling cases in upstream's order.

use super::finalise::{self, FinaliseReason};
use super::status::{get_condition, new_condition, set_condition};
use super::{Run, canary, has_traffic_routings, next_batch_index, rollback_in_batch_policy};
use super::{rollout_id, status_consistent, time};
use crate::api::rollout::{
    BatchRelease, CanaryStatus, CanaryStep, RolloutStatus, condition, phase, step_state,
};
use crate::kruise::rollout::scale;

/// `progressingStateTransition`: status, reason and (when non-empty) message of the
/// Progressing condition change, its `lastUpdateTime` does not; `status.message` follows.
pub(super) fn transition(
    status: &mut RolloutStatus,
    cond_status: &str,
    reason: &str,
    message: &str,
    now: jiff::Timestamp,
) {
    let cond = match get_condition(status, condition::PROGRESSING) {
        None => new_condition(condition::PROGRESSING, cond_status, reason, message, now),
        Some(mut c) => {
            c.status = cond_status.into();
            c.reason = reason.into();
            if !message.is_empty() {
                c.message = message.into();
            }
            c
        }
    };
    status.message = Some(cond.message.clone());
    set_condition(status, cond);
}

/// `setRolloutSucceededCondition`.
fn set_succeeded(status: &mut RolloutStatus, cond_status: &str, now: jiff::Timestamp) {
    let cond = match get_condition(status, condition::SUCCEEDED) {
        None => new_condition(condition::SUCCEEDED, cond_status, "", "", now),
        Some(mut c) => {
            c.status = cond_status.into();
            c
        }
    };
    set_condition(status, cond);
}

/// `reconcileRolloutProgressing`, dispatching on the reason of the **read** status.
pub(super) fn reconcile_progressing(run: &mut Run<'_>, new: &mut RolloutStatus) {
    let Some(cond) = run.rollout.condition(condition::PROGRESSING).cloned() else {
        return;
    };
    let Some(workload) = run.workload else {
        return;
    };
    if !status_consistent(workload) {
        return;
    }
    let now = run.now;
    match cond.reason.as_str() {
        condition::REASON_INITIALIZING => {
            new.canary_status = None;
            new.blue_green_status = None;
            new.canary_status = Some(CanaryStatus {
                observed_workload_generation: Some(workload.generation),
                rollout_hash: Some(run.hash.clone()).filter(|h| !h.is_empty()),
                observed_rollout_id: Some(rollout_id(workload)).filter(|s| !s.is_empty()),
                stable_revision: Some(workload.stable_revision.clone()).filter(|s| !s.is_empty()),
                current_step_index: 1,
                next_step_index: next_batch_index(run.rollout, 1),
                current_step_state: step_state::BEFORE_STEP_UPGRADE.into(),
                last_update_time: Some(time(now)),
                canary_revision: workload.canary_revision.clone(),
                ..CanaryStatus::default()
            });
            new.current_step_index = 1;
            new.current_step_state = step_state::BEFORE_STEP_UPGRADE.into();
            // doProgressingInitializing: traffic routing is display only (done at once); wait
            // 3 s after the condition's lastUpdateTime.
            let base = get_condition(new, condition::PROGRESSING)
                .and_then(|c| c.last_update_time)
                .map(|t| t.0);
            let waiting = base.is_some_and(|t| super::after_grace(t) > now);
            if waiting {
                run.recheck_in_grace();
            } else {
                transition(
                    new,
                    "True",
                    condition::REASON_IN_ROLLING,
                    "Rollout is in Progressing",
                    now,
                );
            }
        }
        condition::REASON_IN_ROLLING => in_rolling(run, new),
        condition::REASON_FINALISING => {
            run.wait_ready = true;
            if finalise::do_finalising(run, new, FinaliseReason::Success) {
                transition(
                    new,
                    "False",
                    condition::REASON_COMPLETED,
                    "Rollout progressing has been completed",
                    now,
                );
                set_succeeded(new, "True", now);
            } else {
                run.recheck_in_grace();
            }
        }
        condition::REASON_PAUSED if !run.rollout.spec.strategy.paused => {
            transition(new, "True", condition::REASON_IN_ROLLING, "", now);
        }
        condition::REASON_CANCELLING => {
            if finalise::do_finalising(run, new, FinaliseReason::Rollback) {
                transition(
                    new,
                    "False",
                    condition::REASON_COMPLETED,
                    "Rollout progressing has been cancelled",
                    now,
                );
                set_succeeded(new, "False", now);
            } else {
                run.recheck_in_grace();
            }
        }
        condition::REASON_COMPLETED => {
            new.phase = Some(phase::HEALTHY.into());
        }
        _ => {}
    }
}

/// `doProgressingInRolling`: the special cases in upstream's order, then normal rolling.
fn in_rolling(run: &mut Run<'_>, new: &mut RolloutStatus) {
    let Some(workload) = run.workload else {
        return;
    };
    let now = run.now;
    let read = run.rollout.canary_status();
    let read_revision = read.map(|c| c.canary_revision.as_str()).unwrap_or_default();
    let in_batch = rollback_in_batch_policy(run.rollout, workload);
    let revision_moved = workload.canary_revision != read_revision;
    // 1. rollback directly
    if workload.in_rollback && revision_moved && !in_batch {
        if let Some(cs) = new.canary_status.as_mut() {
            cs.canary_revision = workload.canary_revision.clone();
        }
        run.event("workload has been rollback, then rollout is canceled");
        transition(
            new,
            "True",
            condition::REASON_CANCELLING,
            "The workload has been rolled back and the rollout process will be cancelled",
            now,
        );
        return;
    }
    // 2. paused
    if run.rollout.spec.strategy.paused {
        transition(
            new,
            "True",
            condition::REASON_PAUSED,
            "Rollout has been paused, you can resume it by kube-cli",
            now,
        );
        return;
    }
    // 3. rollback in batches
    if workload.in_rollback && revision_moved && in_batch {
        let next = next_batch_index(run.rollout, 1);
        if let Some(cs) = new.canary_status.as_mut() {
            cs.current_step_index = 1;
            cs.next_step_index = next;
            cs.canary_revision = workload.canary_revision.clone();
            cs.current_step_state = step_state::BEFORE_STEP_UPGRADE.into();
            cs.last_update_time = Some(time(now));
            cs.rollout_hash = Some(run.hash.clone());
        }
        return;
    }
    // 4. continuous release
    if !read_revision.is_empty() && revision_moved && !workload.in_rollback {
        run.event("workload continuous publishing canaryRevision, then restart publishing");
        if do_progressing_reset(run, new) {
            new.canary_status = None;
            new.blue_green_status = None;
            transition(
                new,
                "True",
                condition::REASON_INITIALIZING,
                "Workload is continuous release",
                now,
            );
        } else {
            run.recheck_in_grace();
        }
        return;
    }
    // 5. plan changed
    let read_hash = read
        .and_then(|c| c.rollout_hash.as_deref())
        .unwrap_or_default();
    if !read_hash.is_empty() && read_hash != run.hash {
        handle_plan_changed(run, new);
        return;
    }
    // 6. normal rolling
    let Some(cs) = new.canary_status.as_ref() else {
        return; // DIFF: upstream dereferences a nil sub-status here.
    };
    if cs.current_step_state == step_state::COMPLETED {
        transition(
            new,
            "True",
            condition::REASON_FINALISING,
            "Rollout has been completed and some closing work is being done",
            now,
        );
        return;
    }
    // util.CheckNextBatchIndexWithCorrect mutates the read Rollout, not the new status: a
    // no-op on what is saved, kept so.
    canary::run_canary(run, new);
}

/// `doProgressingReset`: without traffic routing, delete the BatchRelease; with it (display
/// only), the traffic tasks are done at once and the BatchRelease is deleted in between.
/// True once the BatchRelease is gone.
fn do_progressing_reset(run: &mut Run<'_>, new: &mut RolloutStatus) -> bool {
    if !has_traffic_routings(run.rollout) {
        return finalise::remove_batch_release(run);
    }
    let Some(cs) = new.canary_status.as_mut() else {
        return true;
    };
    cs.last_update_time = Some(time(run.now));
    cs.finalising_step = crate::api::rollout::finalising_step::RELEASE_WORKLOAD_CONTROL.into();
    finalise::remove_batch_release(run)
}

/// `handleRolloutPlanChanged`.
fn handle_plan_changed(run: &mut Run<'_>, new: &mut RolloutStatus) {
    let Some(workload) = run.workload else {
        return;
    };
    let current = new.canary_status.as_ref().map(|c| c.current_step_index);
    let target = recalculate_canary_step(run.rollout.steps(), run.br, workload.replicas, current);
    let now = run.now;
    let Some(cs) = new.canary_status.as_mut() else {
        return;
    };
    if cs.next_step_index == target {
        cs.current_step_state = step_state::STEP_READY.into();
        cs.last_update_time = Some(time(now));
        cs.rollout_hash = Some(run.hash.clone());
        return;
    }
    cs.next_step_index = target;
    cs.last_update_time = Some(time(now));
    cs.rollout_hash = Some(run.hash.clone());
    canary::do_step_jump(
        run.rollout,
        new,
        run.rollout.steps(),
        workload.replicas,
        now,
    );
}

/// `recalculateCanaryStep`: the step whose replicas first reach what the BatchRelease's
/// current batch asks (`cur = scale(batches[batchPartition], R)`), scanning the current step
/// first and then the others in order; the last scanned wins when none does; step 1 without a
/// BatchRelease. `current_step_index` None is upstream's `newStatus == nil` (index 0 first).
pub fn recalculate_canary_step(
    steps: &[CanaryStep],
    br: Option<&BatchRelease>,
    replicas: i32,
    current_step_index: Option<i32>,
) -> i32 {
    let Some(br) = br else {
        return 1;
    };
    let plan = &br.spec.release_plan;
    let batch = plan
        .batch_partition
        .and_then(|p| usize::try_from(p).ok())
        .and_then(|p| plan.batches.get(p));
    // DIFF: upstream indexes a nil or out-of-range batchPartition (a panic); here it counts 0.
    let current = batch
        .and_then(|b| scale(&b.canary_replicas, replicas).ok())
        .unwrap_or(0);
    let current_index = current_step_index.map_or(0, |c| c - 1);
    let mut order = Vec::with_capacity(steps.len());
    if let Ok(ci) = usize::try_from(current_index)
        && ci < steps.len()
    {
        order.push(ci);
    }
    order.extend(
        (0..steps.len()).filter(|i| i64::try_from(*i).ok() != Some(i64::from(current_index))),
    );
    let mut index = 0;
    for i in order {
        let desired = steps[i]
            .replicas
            .as_ref()
            .and_then(|r| scale(r, replicas).ok())
            .unwrap_or(0);
        index = i32::try_from(i + 1).unwrap_or(i32::MAX);
        if current <= desired {
            break;
        }
    }
    index
}
