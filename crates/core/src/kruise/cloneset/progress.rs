//! The CloneSet `Progressing` condition (v1.9.0, #2108): `calculateProgressingStatus` and
//! `getRequeueSecondsFromCondition` of `cloneset_status.go`, and the condition helpers of
//! `utils/cloneset_utils.go` (`SetCloneSetCondition`, `HasProgressDeadline`, ...).
//!
//! One clock: upstream reads `time.Now()` for the deadline case and a package clock for the
//! others; here every case uses the reconcile's `now` (unix seconds).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::api::{
    CloneSet,
    cloneset::{CloneSetCondition, CloneSetStatus},
};

/// `CloneSetConditionTypeProgressing`.
pub const PROGRESSING: &str = "Progressing";
/// `CloneSetConditionFailedScale` / `CloneSetConditionFailedUpdate`.
pub const FAILED_SCALE: &str = "FailedScale";
pub const FAILED_UPDATE: &str = "FailedUpdate";

/// The reasons of the `Progressing` condition.
pub mod reason {
    pub const DEADLINE_EXCEEDED: &str = "ProgressDeadlineExceeded";
    pub const PAUSED: &str = "CloneSetPaused";
    pub const UPDATED: &str = "CloneSetUpdated";
    pub const PARTITION_AVAILABLE: &str = "ProgressPartitionAvailable";
    pub const AVAILABLE: &str = "CloneSetAvailable";
}

/// Go's `math.MaxInt32`: a deadline of this value means "no deadline".
const NO_DEADLINE: i32 = i32::MAX;

fn time(now: i64) -> Option<Time> {
    jiff::Timestamp::from_second(now).ok().map(Time)
}

/// Unix seconds of a condition time (`None` is Go's zero time).
pub fn seconds(t: Option<&Time>) -> Option<i64> {
    t.map(|t| t.0.as_second())
}

/// Port of `HasProgressDeadline`: the field is set and not `MaxInt32`.
pub fn has_progress_deadline(cs: &CloneSet) -> bool {
    cs.spec
        .progress_deadline_seconds
        .is_some_and(|pds| pds != NO_DEADLINE)
}

/// Port of `GetCloneSetCondition`.
pub fn condition<'a>(status: &'a CloneSetStatus, type_: &str) -> Option<&'a CloneSetCondition> {
    status.conditions.iter().find(|c| c.type_ == type_)
}

/// Port of `NewCloneSetCondition`: both times are `now`.
pub fn new_condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: i64,
) -> CloneSetCondition {
    CloneSetCondition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        last_update_time: time(now),
        last_transition_time: time(now),
        reason: Some(reason.to_owned()).filter(|r| !r.is_empty()),
        message: Some(message.to_owned()).filter(|m| !m.is_empty()),
    }
}

fn reason_of(c: &CloneSetCondition) -> &str {
    c.reason.as_deref().unwrap_or_default()
}

/// Port of `SetCloneSetCondition`: a condition with the same status and reason is kept as it is
/// (times and message); with the same status only, its `lastTransitionTime` carries over; the
/// written condition goes to the end, after the other types.
pub fn set_condition(status: &mut CloneSetStatus, mut cond: CloneSetCondition) {
    if let Some(current) = condition(status, &cond.type_) {
        if current.status == cond.status && reason_of(current) == reason_of(&cond) {
            return;
        }
        if current.status == cond.status {
            cond.last_transition_time = current.last_transition_time.clone();
        }
    }
    status.conditions.retain(|c| c.type_ != cond.type_);
    status.conditions.push(cond);
}

/// Port of `RemoveCloneSetCondition`.
pub fn remove_condition(status: &mut CloneSetStatus, type_: &str) {
    status.conditions.retain(|c| c.type_ != type_);
}

/// Port of `CloneSetAvailable`.
pub fn is_available(cs: &CloneSet, new: &CloneSetStatus) -> bool {
    let replicas = cs.spec.replicas.unwrap_or(1);
    new.current_revision == new.update_revision
        && new.replicas == replicas
        && new.updated_replicas == replicas
        && new.updated_available_replicas == replicas
}

/// Port of `CloneSetPartitionAvailable`: a partition holds some pods back and the pods it lets
/// through are available.
pub fn is_partition_available(cs: &CloneSet, new: &CloneSetStatus) -> bool {
    let replicas = cs.spec.replicas.unwrap_or(1);
    let expected = new.expected_updated_replicas.unwrap_or(0);
    expected < replicas && expected <= new.updated_available_replicas
}

/// Port of `CloneSetDeadlineExceeded`: the condition in `new` already says so, or it was last
/// updated more than `progressDeadlineSeconds` before `now`. False without a condition.
pub fn is_deadline_exceeded(cs: &CloneSet, new: &CloneSetStatus, now: i64) -> bool {
    let Some(cond) = condition(new, PROGRESSING) else {
        return false;
    };
    if reason_of(cond) == reason::DEADLINE_EXCEEDED {
        return true;
    }
    let pds = i64::from(cs.spec.progress_deadline_seconds.unwrap_or(0));
    // A zero lastUpdateTime is Go's year 1: long past any deadline.
    seconds(cond.last_update_time.as_ref()).is_none_or(|at| at + pds < now)
}

/// Port of `getRequeueSecondsFromCondition` in whole seconds: `lastUpdateTime + pds − now`,
/// plus one second when that is at least a second (below a second it is returned as is, and a
/// value ≤ 0 means no requeue). `None` without a condition.
pub fn requeue_seconds(cond: Option<&CloneSetCondition>, pds: i32, now: i64) -> Option<i64> {
    let cond = cond?;
    // Go's zero time is year 1: far in the past (no requeue).
    let at = seconds(cond.last_update_time.as_ref()).unwrap_or(i64::MIN / 2);
    let after = at + i64::from(pds) - now;
    Some(if after < 1 { after } else { after + 1 })
}

/// Port of `calculateProgressingStatus` (v1.9.0): sets or removes the `Progressing` condition on
/// `new` and returns the requeue upstream pushes (seconds; ≤ 0 or `None` means none).
pub fn calculate(cs: &CloneSet, new: &mut CloneSetStatus, now: i64) -> Option<i64> {
    if !has_progress_deadline(cs) {
        remove_condition(new, PROGRESSING);
        return None;
    }
    let (status, why, message) = if is_available(cs, new) {
        (
            "True",
            reason::AVAILABLE,
            "CloneSet is available".to_owned(),
        )
    } else if cs.spec.update_strategy.paused {
        ("True", reason::PAUSED, "CloneSet is paused".to_owned())
    } else if is_partition_available(cs, new) {
        (
            "True",
            reason::PARTITION_AVAILABLE,
            "CloneSet has been paused due to partition ready".to_owned(),
        )
    } else if is_deadline_exceeded(cs, new, now) {
        (
            "False",
            reason::DEADLINE_EXCEEDED,
            format!(
                "CloneSet revision {} has timed out progressing",
                new.update_revision
            ),
        )
    } else {
        set_condition(
            new,
            new_condition(
                PROGRESSING,
                "True",
                reason::UPDATED,
                "CloneSet is progressing",
                now,
            ),
        );
        let pds = cs.spec.progress_deadline_seconds.unwrap_or(0);
        return requeue_seconds(condition(new, PROGRESSING), pds, now);
    };
    set_condition(new, new_condition(PROGRESSING, status, why, &message, now));
    None
}

/// Port of `hasProgressingConditionChanged`: presence, status or reason of `Progressing`
/// differs (a new time or message alone does not count).
pub fn progressing_changed(old: Option<&CloneSetStatus>, new: &CloneSetStatus) -> bool {
    let old = old.and_then(|s| condition(s, PROGRESSING));
    let new = condition(new, PROGRESSING);
    match (old, new) {
        (None, None) => false,
        (Some(o), Some(n)) => o.status != n.status || reason_of(o) != reason_of(n),
        _ => true,
    }
}

/// A failure condition (`FailedScale` / `FailedUpdate`) as `syncCloneSet` builds it: status
/// True, no reason, `lastTransitionTime` now, the error as message.
pub fn failure_condition(type_: &str, message: &str, now: i64) -> CloneSetCondition {
    CloneSetCondition {
        type_: type_.to_owned(),
        status: "True".to_owned(),
        last_transition_time: time(now),
        message: Some(message.to_owned()),
        ..CloneSetCondition::default()
    }
}

#[cfg(test)]
mod tests;
