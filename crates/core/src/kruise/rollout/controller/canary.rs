//! `rollout_canary.go` and `rollout_releaseManager.go`: the step machine (`runCanary`), the
//! BatchRelease the Rollout writes (`createBatchRelease`, `runBatchRelease`,
//! `syncBatchRelease`), the pause (`doCanaryPaused`) and the jump (`doStepJump`).

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::time;
use super::{BrAction, Run, next_batch_index, pod_template_hash, rollout_id, step_has_traffic};
use crate::api::keys;
use crate::api::rollout::{
    BatchRelease, BatchReleaseSpec, CanaryStep, ReleaseBatch, ReleasePlan, Rollout, RolloutStatus,
    WorkloadRef, batch, step_state,
};
use crate::kruise::rollout::{hash_release_plan, scale};

/// `scale(step.replicas, R)`, 0 when missing or malformed (upstream ignores the error).
fn step_replicas(step: &CanaryStep, replicas: i32) -> i32 {
    step.replicas
        .as_ref()
        .and_then(|r| scale(r, replicas).ok())
        .unwrap_or(0)
}

/// `doStepJump`: when `nextStepIndex` is neither the default next step nor out of `1..=N`,
/// jump there: `StepTrafficRouting` if that step's replicas already equal `canaryReplicas`,
/// else `BeforeStepUpgrade`. True when it jumped.
pub fn do_step_jump(
    rollout: &Rollout,
    status: &mut RolloutStatus,
    steps: &[CanaryStep],
    replicas: i32,
    now: Timestamp,
) -> bool {
    let Some(cs) = status.canary_status.as_mut() else {
        return false;
    };
    let next = cs.next_step_index;
    let n = i32::try_from(steps.len()).unwrap_or(i32::MAX);
    if next == next_batch_index(rollout, cs.current_step_index) || next <= 0 || next > n {
        return false;
    }
    cs.current_step_index = next;
    cs.next_step_index = next_batch_index(rollout, next);
    let target = usize::try_from(next - 1)
        .ok()
        .and_then(|i| steps.get(i))
        .map_or(0, |s| step_replicas(s, replicas));
    cs.current_step_state = if target == cs.canary_replicas {
        step_state::STEP_TRAFFIC_ROUTING.into()
    } else {
        step_state::BEFORE_STEP_UPGRADE.into()
    };
    cs.last_update_time = Some(time(now));
    true
}

/// What `doCanaryPaused` decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paused {
    /// Go on (`StepReady`).
    pub done: bool,
    /// The new `status.message`, when it writes one.
    pub message: Option<String>,
    /// Look again then (a timed pause not yet over).
    pub recheck: Option<Timestamp>,
}

/// `doCanaryPaused` for step `current` (1-based) of `steps`: the last step at `"100%"` (the
/// string) goes on at once; no duration waits for approval; a duration goes on once
/// `lastUpdateTime + duration` is before `now`.
pub fn do_canary_paused(
    steps: &[CanaryStep],
    current: i32,
    last_update: Option<Timestamp>,
    now: Timestamp,
) -> Paused {
    let n = i32::try_from(steps.len()).unwrap_or(i32::MAX);
    let Some(step) = usize::try_from(current - 1).ok().and_then(|i| steps.get(i)) else {
        return Paused {
            done: false,
            message: None,
            recheck: None,
        };
    };
    if n == current && step.replicas == Some(IntOrString::String("100%".into())) {
        return Paused {
            done: true,
            message: None,
            recheck: None,
        };
    }
    let Some(duration) = step.pause.as_ref().and_then(|p| p.duration) else {
        return Paused {
            done: false,
            message: Some(format!(
                "Rollout is in step({current}/{n}), and you need manually confirm to enter the next step"
            )),
            recheck: None,
        };
    };
    let message = Some(format!(
        "Rollout is in step({current}/{n}), and wait duration({duration} seconds) to enter the next step"
    ));
    // DIFF: upstream dereferences a nil lastUpdateTime; here the timer starts now.
    let expected =
        last_update.unwrap_or(now) + jiff::SignedDuration::from_secs(i64::from(duration));
    if expected < now {
        Paused {
            done: true,
            message,
            recheck: None,
        }
    } else {
        Paused {
            done: false,
            message,
            recheck: Some(expected),
        }
    }
}

/// `createBatchRelease`: the BatchRelease the Rollout wants at batch `batch` (= step − 1).
/// The BatchRelease controller adds its own finalizer (`handleFinalizer`), as upstream's does.
pub fn build_batch_release(
    rollout: &Rollout,
    rollout_id: &str,
    batch: i32,
    is_rollback: bool,
) -> BatchRelease {
    let canary = rollout.spec.strategy.canary.clone().unwrap_or_default();
    let batches = canary
        .steps
        .iter()
        .map(|s| ReleaseBatch {
            canary_replicas: s.replicas.clone().unwrap_or(IntOrString::Int(0)),
        })
        .collect();
    let meta = &rollout.metadata;
    let owner = OwnerReference {
        api_version: "rollouts.kruise.io/v1beta1".into(),
        kind: "Rollout".into(),
        name: meta.name.clone().unwrap_or_default(),
        uid: meta.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    let annotations = is_rollback.then(|| {
        let value = meta
            .annotations
            .as_ref()
            .and_then(|a| a.get(keys::ROLLBACK_IN_BATCH))
            .cloned()
            .unwrap_or_default();
        BTreeMap::from([(keys::ROLLBACK_IN_BATCH.to_owned(), value)])
    });
    BatchRelease {
        metadata: ObjectMeta {
            namespace: meta.namespace.clone(),
            name: meta.name.clone(),
            owner_references: Some(vec![owner]),
            annotations,
            ..ObjectMeta::default()
        },
        spec: BatchReleaseSpec {
            workload_ref: Some(WorkloadRef {
                api_version: rollout.spec.workload_ref.api_version.clone(),
                kind: rollout.spec.workload_ref.kind.clone(),
                name: rollout.spec.workload_ref.name.clone(),
            }),
            release_plan: ReleasePlan {
                batches,
                batch_partition: Some(batch),
                rollout_id: Some(rollout_id.to_owned()).filter(|s| !s.is_empty()),
                failure_threshold: canary.failure_threshold.clone(),
                finalizing_policy: None,
                patch_pod_template_metadata: canary.patch_pod_template_metadata.clone(),
                rolling_style: Some(rollout.rolling_style().to_owned()),
                enable_extra_workload_for_canary: canary.enable_extra_workload_for_canary,
            },
        },
        status: None,
    }
}

fn annotations_of(br: &BatchRelease) -> BTreeMap<String, String> {
    br.metadata.annotations.clone().unwrap_or_default()
}

/// `runBatchRelease` at step `step` (1-based): create the BatchRelease, or update it to what
/// the Rollout wants; "done" only once it is in sync, observed, and its batch is Ready.
fn run_batch_release(run: &mut Run<'_>, rollout_id: &str, step: i32, is_rollback: bool) -> bool {
    let wanted = build_batch_release(run.rollout, rollout_id, step - 1, is_rollback);
    let Some(br) = run.br else {
        run.out
            .batch_release
            .push(BrAction::Create(Box::new(wanted)));
        return false;
    };
    if br.spec != wanted.spec || annotations_of(br) != annotations_of(&wanted) {
        let mut updated = br.clone();
        updated.spec = wanted.spec;
        updated.metadata.annotations = wanted.metadata.annotations;
        run.out
            .batch_release
            .push(BrAction::Update(Box::new(updated)));
        return false;
    }
    batch_done(br, step)
}

/// The "done" test of `doCanaryUpgrade`: the BatchRelease observed this plan and generation,
/// and its current batch is Ready and at least the step's.
pub fn batch_done(br: &BatchRelease, step: i32) -> bool {
    let Some(status) = br.status.as_ref() else {
        return false;
    };
    let observed_hash = status
        .observed_release_plan_hash
        .as_deref()
        .unwrap_or_default();
    if observed_hash != hash_release_plan(&br.spec.release_plan)
        || br.metadata.generation.unwrap_or(0) != status.observed_generation.unwrap_or(0)
    {
        return false;
    }
    let Some(cs) = status.canary_status.as_ref() else {
        return false;
    };
    cs.batch_state.as_deref() == Some(batch::READY) && cs.current_batch + 1 >= step
}

/// `syncBatchRelease`: the BatchRelease's numbers and message into the sub-status, and the
/// sub-status's rollout-id into the BatchRelease.
fn sync_batch_release(run: &mut Run<'_>, br: &BatchRelease, new: &mut RolloutStatus) {
    let Some(cs) = new.canary_status.as_mut() else {
        return;
    };
    let status = br.status.clone().unwrap_or_default();
    let bcs = status.canary_status.clone().unwrap_or_default();
    cs.canary_replicas = bcs.updated_replicas.unwrap_or(0);
    cs.canary_ready_replicas = bcs.updated_ready_replicas.unwrap_or(0);
    let mut message = format!(
        "BatchRelease is at state {}, rollout-id {}, step {}",
        bcs.batch_state.as_deref().unwrap_or_default(),
        status.observed_rollout_id.as_deref().unwrap_or_default(),
        bcs.current_batch + 1
    );
    if let Some(m) = status.message.as_deref().filter(|m| !m.is_empty()) {
        message.push_str(&format!(", {m}"));
    }
    cs.message = Some(message);
    let observed = cs.observed_rollout_id.clone().unwrap_or_default();
    if observed != br.spec.release_plan.rollout_id.clone().unwrap_or_default() {
        run.out.batch_release.push(BrAction::Patch(
            serde_json::json!({"spec": {"releasePlan": {"rolloutID": observed}}}),
        ));
    }
}

/// `runCanary`: sync with the BatchRelease, fill `podTemplateHash`, jump if asked, then one
/// move of the step machine (research §4.3).
pub(super) fn run_canary(run: &mut Run<'_>, new: &mut RolloutStatus) {
    let Some(workload) = run.workload else {
        return;
    };
    if new.canary_status.is_none() {
        return;
    }
    if let Some(br) = run.br {
        sync_batch_release(run, br, new);
    }
    let now = run.now;
    let replicas = workload.replicas;
    if let Some(cs) = new.canary_status.as_mut()
        && cs.pod_template_hash.is_empty()
    {
        cs.pod_template_hash = pod_template_hash(workload);
    }
    let steps = run.rollout.steps();
    if do_step_jump(run.rollout, new, steps, replicas, now) {
        return;
    }
    let n = i32::try_from(steps.len()).unwrap_or(i32::MAX);
    let Some(cs) = new.canary_status.as_ref() else {
        return;
    };
    let current = cs.current_step_index;
    // DIFF: upstream indexes the steps with an out-of-range current step (a panic).
    let Some(step) = usize::try_from(current - 1).ok().and_then(|i| steps.get(i)) else {
        return;
    };
    // FinalisingTrafficRouting before a step without traffic: display only, done at once.
    let full = step_replicas(step, replicas) >= replicas && run.rollout.is_real_partition();
    let mut state = cs.current_step_state.clone();
    if state == step_state::BEFORE_STEP_UPGRADE {
        if let Some(cs) = new.canary_status.as_mut() {
            cs.current_step_state = step_state::STEP_UPGRADE.into();
            if !step_has_traffic(step) {
                return;
            }
            // A traffic step: the stable Service work is display only; fall through.
            cs.last_update_time = Some(time(now));
        }
        state = step_state::STEP_UPGRADE.into();
    }
    match state.as_str() {
        step_state::STEP_UPGRADE => {
            new.message = Some(format!(
                "Rollout is in step({current}/{n}), and upgrade workload to new version"
            ));
            let id = rollout_id(workload);
            if run_batch_release(run, &id, current, workload.in_rollback) {
                run.event(format!(
                    "upgrade step({current}) canary pods with new versions done"
                ));
                if let Some(cs) = new.canary_status.as_mut() {
                    cs.pod_template_hash = pod_template_hash(workload);
                    cs.current_step_state = if full {
                        step_state::STEP_METRICS_ANALYSIS.into()
                    } else {
                        step_state::STEP_TRAFFIC_ROUTING.into()
                    };
                    cs.last_update_time = Some(time(now));
                }
            }
        }
        step_state::STEP_TRAFFIC_ROUTING => {
            // DoTrafficRouting: display only, done at once.
            if let Some(cs) = new.canary_status.as_mut() {
                cs.last_update_time = Some(time(now));
                cs.current_step_state = step_state::STEP_METRICS_ANALYSIS.into();
            }
            run.recheck_in_grace();
        }
        step_state::STEP_METRICS_ANALYSIS => {
            if let Some(cs) = new.canary_status.as_mut() {
                cs.current_step_state = step_state::STEP_PAUSED.into();
            }
        }
        step_state::STEP_PAUSED => {
            let last = cs_last_update(new);
            let paused = do_canary_paused(steps, current, last, now);
            if let Some(m) = paused.message {
                new.message = Some(m);
            }
            if let Some(t) = paused.recheck {
                run.recheck = Some(t);
            }
            if paused.done
                && let Some(cs) = new.canary_status.as_mut()
            {
                cs.last_update_time = Some(time(now));
                cs.current_step_state = step_state::STEP_READY.into();
            }
        }
        step_state::STEP_READY => {
            let next = next_batch_index(run.rollout, current + 1);
            if let Some(cs) = new.canary_status.as_mut() {
                cs.last_update_time = Some(time(now));
                if n > current {
                    cs.current_step_index = current + 1;
                    cs.next_step_index = next;
                    cs.current_step_state = step_state::BEFORE_STEP_UPGRADE.into();
                } else {
                    cs.current_step_state = step_state::COMPLETED.into();
                }
            }
        }
        _ => {}
    }
}

fn cs_last_update(status: &RolloutStatus) -> Option<Timestamp> {
    status
        .canary_status
        .as_ref()
        .and_then(|c| c.last_update_time.as_ref())
        .map(|t| t.0)
}
