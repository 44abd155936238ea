//! `kubectl-kruise rollout undo rollout/NAME --fast` (kruise-tools
//! `pkg/internal/polymorphichelpers/steps.go`, `rolloutRollbackGetter`): the step to jump back
//! to, written as `status.canaryStatus.nextStepIndex` on `/status`.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::api::rollout::{CanaryStep, Rollout};
use crate::kruise::rollout::scale;

/// A step with a non-zero traffic percent (`hasTraffic`).
fn has_traffic(step: &CanaryStep) -> bool {
    step.traffic
        .as_ref()
        .is_some_and(|t| scale(&IntOrString::String(t.clone()), 100).unwrap_or(0) != 0)
}

/// `findPreviousStepWithNoTrafficAndMostReplicas`: among the steps before `current`, the one
/// without traffic with the most replicas (as a percent of 100), the latest on a tie.
pub fn previous_step_without_traffic(steps: &[CanaryStep], current: i32) -> Result<i32, String> {
    let mut best = 0;
    let mut target = -1;
    let mut i = current - 2;
    while i >= 0 {
        if let Some(step) = usize::try_from(i).ok().and_then(|i| steps.get(i))
            && !has_traffic(step)
        {
            let replicas = step
                .replicas
                .as_ref()
                .and_then(|r| scale(r, 100).ok())
                .unwrap_or(0);
            if replicas > best {
                best = replicas;
                target = i + 1;
            }
        }
        i -= 1;
    }
    if target == -1 {
        return Err("no previous step with no traffic found".into());
    }
    Ok(target)
}

/// `rolloutRollbackGetter(target)`: the `nextStepIndex` to write; `target` −1 picks the step
/// ([`previous_step_without_traffic`]). Reads the top-level `status.currentStepIndex`.
pub fn fast_undo_target(rollout: &Rollout, target: i32) -> Result<i32, String> {
    let steps = rollout.steps();
    let current = rollout.status.as_ref().map_or(0, |s| s.current_step_index);
    if i32::try_from(steps.len()).unwrap_or(i32::MAX) < current {
        return Err(format!(
            "has {} steps, but current step is too large {current}",
            steps.len()
        ));
    }
    if current <= 1 {
        return Err(
            "already at the first step, use kubectl-kruise rollout undo to cancel the release"
                .into(),
        );
    }
    let target = if target == -1 {
        previous_step_without_traffic(steps, current)?
    } else {
        target
    };
    if target >= current {
        return Err(format!(
            "specified step {target} is not a previous step (current step is {current})"
        ));
    }
    Ok(target)
}
