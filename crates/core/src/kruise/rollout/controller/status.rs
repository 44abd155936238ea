//! `rollout_status.go`: the plan hash, the phase machine (`calculateRolloutStatus`) and the
//! condition helpers (`pkg/util/condition.go`).

use jiff::Timestamp;

use super::{WorkloadInfo, pod_template_hash, rollout_id, status_consistent, time};
use crate::api::keys;
use crate::api::rollout::{
    CanaryStatus, Rollout, RolloutCondition, RolloutPause, RolloutStatus, condition, phase,
    step_state,
};

/// `util.NextBatchIndex`: `current + 1`, or −1 at (or past) the last step.
pub fn next_batch_index(rollout: &Rollout, current: i32) -> i32 {
    let steps = i32::try_from(rollout.steps().len()).unwrap_or(i32::MAX);
    if current >= steps { -1 } else { current + 1 }
}

/// `calculateRolloutHash`: `rand.SafeEncodeString(hex(sha256(json(canary))))` over the canary
/// strategy with `failureThreshold` dropped and every step's `pause` blanked, so pause and
/// failureThreshold edits are not plan changes. Only stable within the port (serde's JSON, not
/// Go's).
pub fn calculate_rollout_hash(rollout: &Rollout) -> String {
    use sha2::Digest as _;
    let mut canary = rollout.spec.strategy.canary.clone().unwrap_or_default();
    canary.failure_threshold = None;
    for step in &mut canary.steps {
        step.pause = Some(RolloutPause::default());
    }
    let json = serde_json::to_vec(&canary).unwrap_or_default();
    let digest = sha2::Sha256::digest(&json);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    safe_encode(&hex)
}

/// `k8s.io/apimachinery/pkg/util/rand.SafeEncodeString`.
fn safe_encode(s: &str) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    s.chars()
        .map(|c| char::from(ALPHANUMS[(c as usize) % ALPHANUMS.len()]))
        .collect()
}

/// `util.NewRolloutCondition`.
pub(super) fn new_condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> RolloutCondition {
    RolloutCondition {
        type_: type_.into(),
        status: status.into(),
        last_update_time: Some(time(now)),
        last_transition_time: Some(time(now)),
        reason: reason.into(),
        message: message.into(),
    }
}

/// `util.SetRolloutCondition`: no change when status, reason and message are the same; the
/// transition time is kept while the status is; the condition moves to the end.
pub(super) fn set_condition(status: &mut RolloutStatus, mut cond: RolloutCondition) {
    let current = status.conditions.iter().find(|c| c.type_ == cond.type_);
    if let Some(c) = current {
        if c.status == cond.status && c.reason == cond.reason && c.message == cond.message {
            return;
        }
        if c.status == cond.status {
            cond.last_transition_time = c.last_transition_time.clone();
        }
    }
    status.conditions.retain(|c| c.type_ != cond.type_);
    status.conditions.push(cond);
}

/// `util.GetRolloutCondition` (a copy, as upstream's helper returns one).
pub(super) fn get_condition(status: &RolloutStatus, type_: &str) -> Option<RolloutCondition> {
    status.conditions.iter().find(|c| c.type_ == type_).cloned()
}

fn nonempty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

/// `calculateRolloutStatus`: the phase machine of research §4.1, on a copy of the status.
/// Returns `(retry, status)`: `retry` when the workload's status is not yet of its generation
/// (look again in 3 s, write nothing); `status` None only then.
pub fn calculate_rollout_status(
    rollout: &Rollout,
    hash: &str,
    workload: Option<&WorkloadInfo>,
    now: Timestamp,
) -> (bool, Option<RolloutStatus>) {
    let mut new = rollout.status.clone().unwrap_or_default();
    let generation = rollout.metadata.generation.unwrap_or(0);
    new.observed_generation = Some(generation);
    let phase_is = |s: &RolloutStatus, p: &str| s.phase.as_deref() == Some(p);
    if rollout.metadata.deletion_timestamp.is_some() {
        if !phase_is(&new, phase::TERMINATING) {
            new.phase = Some(phase::TERMINATING.into());
            let cond = new_condition(
                condition::TERMINATING,
                "True",
                condition::REASON_IN_TERMINATING,
                "Rollout is in terminating",
                now,
            );
            set_condition(&mut new, cond);
        }
        return (false, Some(new));
    }
    let disabled = rollout.spec.disabled;
    if disabled && !phase_is(&new, phase::DISABLED) && !phase_is(&new, phase::DISABLING) {
        if phase_is(&new, phase::PROGRESSING) {
            new.phase = Some(phase::DISABLING.into());
            new.message = Some("Disabling rollout, release resources".into());
        } else {
            new.phase = Some(phase::DISABLED.into());
            new.message = Some("Rollout is disabled".into());
        }
    }
    if new.phase.as_deref().unwrap_or_default().is_empty() {
        new.phase = Some(phase::INITIAL.into());
    }
    let Some(workload) = workload else {
        if !disabled {
            new = RolloutStatus {
                observed_generation: Some(generation),
                phase: Some(phase::INITIAL.into()),
                message: Some("Workload Not Found".into()),
                ..RolloutStatus::default()
            };
        }
        return (false, Some(new));
    };
    if !status_consistent(workload) {
        return (true, None);
    }
    if let Some(cs) = new.canary_status.as_mut()
        && !cs.canary_revision.is_empty()
        && cs.canary_revision == workload.canary_revision
    {
        cs.observed_rollout_id = nonempty(&rollout_id(workload));
        cs.observed_workload_generation = Some(workload.generation);
    }
    match new.phase.as_deref().unwrap_or_default() {
        phase::INITIAL => {
            new.phase = Some(phase::HEALTHY.into());
            new.message = Some("rollout is healthy".into());
        }
        phase::HEALTHY => {
            if workload
                .annotations
                .contains_key(keys::ROLLOUT_IN_PROGRESSING)
            {
                new.phase = Some(phase::PROGRESSING.into());
                let cond = new_condition(
                    condition::PROGRESSING,
                    "True",
                    condition::REASON_INITIALIZING,
                    "Rollout is in Progressing",
                    now,
                );
                set_condition(&mut new, cond);
                new.conditions.retain(|c| c.type_ != condition::SUCCEEDED);
            } else if new.canary_status.is_none() && new.blue_green_status.is_none() {
                let n = i32::try_from(rollout.steps().len()).unwrap_or(i32::MAX);
                new.canary_status = Some(CanaryStatus {
                    observed_rollout_id: nonempty(&rollout_id(workload)),
                    observed_workload_generation: Some(workload.generation),
                    pod_template_hash: pod_template_hash(workload),
                    stable_revision: nonempty(&workload.stable_revision),
                    current_step_index: n,
                    next_step_index: super::next_batch_index(rollout, n),
                    current_step_state: step_state::COMPLETED.into(),
                    rollout_hash: nonempty(hash),
                    canary_revision: workload.canary_revision.clone(),
                    ..CanaryStatus::default()
                });
                new.message = Some("workload deployment is completed".into());
            }
        }
        phase::DISABLED if !disabled => {
            new.phase = Some(phase::HEALTHY.into());
            new.message = Some("rollout is healthy".into());
        }
        _ => {}
    }
    (false, Some(new))
}
