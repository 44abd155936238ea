//! The Rollout side of Kruise Rollout (`pkg/controller/rollout`): phase, the Progressing
//! condition, the step machine, approve/jump/plan change, rollback and continuous release,
//! finalising, and the Rollout validating webhook.
//!
//! One pure entry point, [`reconcile`]: the Rollout, what the controller reads of its workload
//! ([`WorkloadInfo`]) and of its BatchRelease (same name), and `now` → an [`Outcome`]: the whole
//! new status (written as upstream's `updateRolloutStatusInternal` does, a full replace), the
//! merge patches on the Rollout and the workload, the BatchRelease writes, the events and when
//! to look again. Upstream does its writes as it goes; here they are listed in the order
//! upstream makes them, each decided on the objects as they were read (a later reconcile sees
//! their effect, as upstream's next reconcile does).
//!
//! Scope: partition style on CloneSet, Advanced StatefulSet, native StatefulSet and Advanced
//! DaemonSet. Traffic routing is display only: with `trafficRoutings` set, every traffic task
//! counts as done at once and nothing acts on a Service or Ingress. Blue-green and canary-style
//! Deployment Rollouts are recognised and left alone ([`Outcome::unsupported`]).
//!
//! Deliberate differences from v0.6.2, each marked `DIFF` at its place: the `workload-type`
//! label is patched only when missing or different (upstream's guard reads the annotations by
//! mistake and patches every reconcile); a state upstream would panic on (a current step out of
//! range, a nil sub-status in InRolling, a nil `lastUpdateTime`) is a no-op here.

mod canary;
mod finalise;
mod progressing;
mod status;
pub mod undo;
pub mod validate;

#[cfg(test)]
mod sim;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod walk;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::Value;

use super::workload::{TargetKind, WorkloadInfo};
use crate::api::keys;
use crate::api::rollout::{BatchRelease, CanaryStep, Rollout, RolloutStatus, condition};

pub use canary::{build_batch_release, do_canary_paused, do_step_jump};
pub use finalise::{FinaliseReason, next_canary_task};
pub use progressing::recalculate_canary_step;
pub use status::{calculate_rollout_hash, calculate_rollout_status, next_batch_index};

/// `defaultGracePeriodSeconds`: the Initializing grace and every "look again" of the Rollout.
pub const GRACE_SECONDS: i64 = 3;

/// The event reason every Rollout event carries (type Normal).
pub const EVENT_REASON: &str = "Progressing";

/// A write to the BatchRelease named like the Rollout.
#[derive(Debug, Clone, PartialEq)]
pub enum BrAction {
    /// Create it (`createBatchRelease`); AlreadyExists counts as success.
    Create(Box<BatchRelease>),
    /// Replace it (`Update`): the read object with the spec and annotations the Rollout wants.
    Update(Box<BatchRelease>),
    /// A JSON merge patch (`rolloutID` sync; `batchPartition: null` + `finalizingPolicy`).
    Patch(Value),
    /// Delete it (`removeBatchRelease`); NotFound counts as success.
    Delete,
}

/// Add or remove the Rollout's finalizer `rollouts.kruise.io/rollout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinalizerOp {
    Add,
    Remove,
}

/// Everything one reconcile decides.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// The Rollout is blue-green, canary-style Deployment or names a kind this port does not
    /// drive: nothing was decided and nothing is written.
    pub unsupported: bool,
    /// `handleFinalizer`.
    pub finalizer: Option<FinalizerOp>,
    /// JSON merge patches on the Rollout itself (the hash annotation), in order.
    pub rollout_patches: Vec<Value>,
    /// JSON merge patches on the workload (the `workload-type` label, the in-progressing
    /// annotation's removal), in order.
    pub workload_patches: Vec<Value>,
    /// Writes to the BatchRelease, in order.
    pub batch_release: Vec<BrAction>,
    /// The whole new status when it differs from the read one (a full replace).
    pub status: Option<RolloutStatus>,
    /// Event messages (reason [`EVENT_REASON`], type Normal).
    pub events: Vec<String>,
    /// When to reconcile again (None: only on a watch event).
    pub requeue_at: Option<Timestamp>,
}

/// Whether the port drives this Rollout: a canary strategy in real partition style on one of
/// the four kinds.
pub fn supported(rollout: &Rollout) -> bool {
    rollout.spec.strategy.canary.is_some()
        && rollout.spec.strategy.blue_green.is_none()
        && rollout.is_real_partition()
        && target_kind(rollout).is_some()
}

/// The kind `spec.workloadRef` names, when it is one of the four this port drives.
pub fn target_kind(rollout: &Rollout) -> Option<TargetKind> {
    let r = &rollout.spec.workload_ref;
    match (r.group(), r.kind.as_str()) {
        ("apps.kruise.io", "CloneSet") => Some(TargetKind::CloneSet),
        ("apps.kruise.io", "StatefulSet") => Some(TargetKind::AdvancedStatefulSet),
        ("apps", "StatefulSet") => Some(TargetKind::StatefulSet),
        ("apps.kruise.io", "DaemonSet") => Some(TargetKind::AdvancedDaemonSet),
        _ => None,
    }
}

/// The `rollouts.kruise.io/workload-type` value for a kind (`patchWorkloadRolloutWebhookLabel`).
pub fn workload_type(kind: TargetKind) -> &'static str {
    match kind {
        TargetKind::CloneSet => "cloneset",
        TargetKind::AdvancedStatefulSet | TargetKind::StatefulSet => "statefulset",
        TargetKind::AdvancedDaemonSet => "daemonset",
    }
}

/// `getRolloutID`: the workload's `rollout-id` label, else its canary revision (prefixed
/// `rollback-` in a rollback).
pub fn rollout_id(workload: &WorkloadInfo) -> String {
    match workload.labels.get(keys::ROLLOUT_ID) {
        Some(id) if !id.is_empty() => id.clone(),
        _ if workload.in_rollback => format!("rollback-{}", workload.canary_revision),
        _ => workload.canary_revision.clone(),
    }
}

/// The pod-template hash the Rollout records (`util.Workload.PodTemplateHash`): for the four
/// partition kinds, the canary revision.
fn pod_template_hash(workload: &WorkloadInfo) -> String {
    workload.canary_revision.clone()
}

/// `IsStatusConsistent`: the workload's status describes its current generation.
fn status_consistent(workload: &WorkloadInfo) -> bool {
    workload.generation == workload.observed_generation
}

/// `IsRollbackInBatchPolicy`.
pub fn rollback_in_batch_policy(rollout: &Rollout, workload: &WorkloadInfo) -> bool {
    if has_traffic_routings(rollout) {
        return false;
    }
    let kind = rollout.spec.workload_ref.kind.as_str();
    let sts_label = workload
        .labels
        .get(keys::ROLLOUT_WORKLOAD_TYPE)
        .is_some_and(|t| t.eq_ignore_ascii_case("StatefulSet"));
    (kind == "StatefulSet" || kind == "CloneSet" || sts_label)
        && rollout
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(keys::ROLLBACK_IN_BATCH))
            .is_some_and(|v| v == "true")
}

fn has_traffic_routings(rollout: &Rollout) -> bool {
    rollout
        .spec
        .strategy
        .canary
        .as_ref()
        .is_some_and(|c| !c.traffic_routings.is_empty())
}

/// A step with `traffic` or `matches` (a traffic step).
fn step_has_traffic(step: &CanaryStep) -> bool {
    step.traffic.is_some() || !step.matches.is_empty()
}

fn time(now: Timestamp) -> Time {
    Time(now)
}

fn after_grace(now: Timestamp) -> Timestamp {
    now + jiff::SignedDuration::from_secs(GRACE_SECONDS)
}

/// What one reconcile works on (`RolloutContext`), and what it has decided so far.
struct Run<'a> {
    rollout: &'a Rollout,
    /// The hash annotation as it is after this reconcile's patch.
    hash: String,
    workload: Option<&'a WorkloadInfo>,
    br: Option<&'a BatchRelease>,
    now: Timestamp,
    out: Outcome,
    recheck: Option<Timestamp>,
    /// `WaitReady`: finalising after success (the BatchRelease's `WaitResume` policy).
    wait_ready: bool,
}

impl Run<'_> {
    fn event(&mut self, message: impl Into<String>) {
        self.out.events.push(message.into());
    }

    fn recheck_in_grace(&mut self) {
        self.recheck = Some(after_grace(self.now));
    }
}

/// One reconcile of `rollout` (upstream `RolloutReconciler.Reconcile`): `workload` is the
/// workload `spec.workloadRef` names (None when missing), `br` the BatchRelease of the same
/// name (None when missing).
pub fn reconcile(
    rollout: &Rollout,
    workload: Option<&WorkloadInfo>,
    br: Option<&BatchRelease>,
    now: Timestamp,
) -> Outcome {
    if !supported(rollout) {
        return Outcome {
            unsupported: true,
            ..Outcome::default()
        };
    }
    let mut run = Run {
        rollout,
        hash: String::new(),
        workload,
        br,
        now,
        out: Outcome::default(),
        recheck: None,
        wait_ready: false,
    };
    run.out.finalizer = handle_finalizer(rollout);
    // DIFF: patched only when missing or different (upstream patches every reconcile).
    if let Some(w) = workload {
        let want = target_kind(rollout).map(workload_type).unwrap_or_default();
        if !want.is_empty()
            && w.labels
                .get(keys::ROLLOUT_WORKLOAD_TYPE)
                .map(String::as_str)
                != Some(want)
        {
            run.out.workload_patches.push(
                serde_json::json!({"metadata": {"labels": {keys::ROLLOUT_WORKLOAD_TYPE: want}}}),
            );
        }
    }
    let hash = calculate_rollout_hash(rollout);
    let current = rollout
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(keys::ROLLOUT_HASH));
    if current != Some(&hash) {
        run.out
            .rollout_patches
            .push(serde_json::json!({"metadata": {"annotations": {keys::ROLLOUT_HASH: hash}}}));
    }
    run.hash = hash;
    let (retry, new_status) = calculate_rollout_status(rollout, &run.hash, workload, now);
    if retry {
        run.out.requeue_at = Some(after_grace(now));
        return run.out;
    }
    let Some(mut new_status) = new_status else {
        return run.out;
    };
    match rollout.phase() {
        crate::api::rollout::phase::PROGRESSING => {
            progressing::reconcile_progressing(&mut run, &mut new_status);
        }
        crate::api::rollout::phase::TERMINATING => {
            finalise::reconcile_terminating(&mut run, &mut new_status);
        }
        crate::api::rollout::phase::DISABLING => {
            finalise::reconcile_disabling(&mut run, &mut new_status);
        }
        _ => {}
    }
    // updateRolloutStatusInternal: mirror the sub-status, write only a change.
    if let Some(cs) = &new_status.canary_status {
        new_status.current_step_index = cs.current_step_index;
        new_status.current_step_state = cs.current_step_state.clone();
    }
    let old = rollout.status.clone().unwrap_or_default();
    if old != new_status {
        run.out.status = Some(new_status);
    }
    run.out.requeue_at = run.recheck;
    run.out
}

/// `handleFinalizer`: add the finalizer to a live Rollout; remove it from a deleted one once
/// its Terminating condition reads `Completed`.
fn handle_finalizer(rollout: &Rollout) -> Option<FinalizerOp> {
    let has = rollout
        .metadata
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|f| f == keys::ROLLOUT_FINALIZER));
    if rollout.metadata.deletion_timestamp.is_some() {
        let done = rollout
            .condition(condition::TERMINATING)
            .is_some_and(|c| c.reason == condition::REASON_COMPLETED);
        return (done && has).then_some(FinalizerOp::Remove);
    }
    (!has).then_some(FinalizerOp::Add)
}
