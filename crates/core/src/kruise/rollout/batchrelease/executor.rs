//! The BatchRelease executor (`batchrelease_controller.go` `Reconcile` + `handleFinalizer`,
//! `batchrelease_executor.go` `Executor.Do`, `batchrelease_status.go`
//! `syncStatusBeforeExecuting`, `control/partitionstyle/control_plane.go`) as one pure step.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::Value;

use super::context::{
    BatchContext, calculate_batch_context, is_batch_ready, pod_deleting, pod_label,
    pod_on_revision, updated_ready_replicas,
};
use super::control::{finalize_patch, initialize_patch, upgrade_patch};
use super::labels::{PodPatch, batch_label_patches, no_need_update_patches};
use crate::api::keys;
use crate::api::rollout::{
    BatchRelease, BatchReleaseCanaryStatus, BatchReleaseStatus, batch, condition,
};
use crate::kruise::rollout::hash_release_plan;
use crate::kruise::rollout::workload::{TargetKind, WorkloadInfo};

/// `DefaultDuration`: the BatchRelease's requeue.
pub const REQUEUE_SECONDS: u64 = 2;

/// What to do with the BatchRelease's finalizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FinalizerChange {
    #[default]
    None,
    Add,
    Remove,
}

/// One reconcile's decisions, for the shell to apply in this order: finalizer, workload patch,
/// pod patches, then the status (only when `status_changed`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    pub finalizer: FinalizerChange,
    /// A merge patch for the workload.
    pub workload_patch: Option<Value>,
    /// Label writes on the workload's pods.
    pub pod_patches: Vec<PodPatch>,
    /// The whole new status (with `observedGeneration`).
    pub status: BatchReleaseStatus,
    pub status_changed: bool,
    pub requeue_after_seconds: Option<u64>,
    /// What happened (for the log): the special case hit, or the machine's step.
    pub message: String,
}

/// The workload kind a BatchRelease drives partition-style, or None: Deployment, canary or
/// blue-green style, and unknown kinds are another controller's (left alone).
pub fn target_kind(br: &BatchRelease) -> Option<TargetKind> {
    let r = br.spec.workload_ref.as_ref()?;
    let kind = TargetKind::from_ref(&r.api_version, &r.kind)?;
    match br.spec.release_plan.rolling_style.as_deref() {
        Some("BlueGreen") => None,
        _ => Some(kind),
    }
}

fn normalized(mut s: BatchReleaseStatus) -> BatchReleaseStatus {
    s.canary_status.get_or_insert_with(Default::default);
    s
}

fn canary(s: &mut BatchReleaseStatus) -> &mut BatchReleaseCanaryStatus {
    s.canary_status.get_or_insert_with(Default::default)
}

/// `resetStatus`.
fn reset(s: &mut BatchReleaseStatus) {
    s.phase = Some(batch::PREPARING.into());
    s.stable_revision = None;
    s.update_revision = None;
    s.observed_release_plan_hash = None;
    s.observed_workload_replicas = Some(-1);
    s.canary_status = Some(BatchReleaseCanaryStatus::default());
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Normal,
    Gone,
    Unstable,
    Scaling,
    Rollback,
    RevisionChanged,
}

/// `SyncWorkloadInformation`.
fn workload_event(br: &BatchRelease, w: Option<&WorkloadInfo>, s: &BatchReleaseStatus) -> Event {
    if br.metadata.deletion_timestamp.is_some() {
        return Event::Normal;
    }
    let Some(w) = w else { return Event::Gone };
    if w.observed_generation < w.generation {
        return Event::Unstable;
    }
    if w.status_replicas == w.updated_replicas {
        return Event::Normal;
    }
    let observed = s.observed_workload_replicas.unwrap_or(-1);
    if observed != -1 && w.replicas != observed {
        return Event::Scaling;
    }
    let stable = s.stable_revision.as_deref().unwrap_or("");
    let update = s.update_revision.as_deref().unwrap_or("");
    if !update.is_empty()
        && w.update_revision == w.current_revision
        && stable == w.update_revision
        && stable != update
    {
        return Event::Rollback;
    }
    if !update.is_empty() && w.update_revision != update {
        return Event::RevisionChanged;
    }
    Event::Normal
}

/// One reconcile of a BatchRelease: `workload` is None when it is not found; `pods` are the
/// workload's pods; `now` stamps `batchReadyTime`.
pub fn reconcile(
    br: &BatchRelease,
    workload: Option<&WorkloadInfo>,
    pods: &[Pod],
    now: Time,
) -> Outcome {
    let mut out = Outcome {
        status: br.status.clone().unwrap_or_default(),
        ..Outcome::default()
    };
    let Some(kind) = target_kind(br) else {
        out.message = "not a partition-style release of a supported kind".into();
        return out;
    };
    let old = normalized(br.status.clone().unwrap_or_default());
    let has_finalizer = br
        .metadata
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|x| x == keys::BATCH_RELEASE_FINALIZER));
    let deleting = br.metadata.deletion_timestamp.is_some();
    if deleting && old.phase.as_deref() == Some(batch::COMPLETED) {
        if has_finalizer {
            out.finalizer = FinalizerChange::Remove;
        }
        out.message = "release completed and deleted: finalizer removed".into();
        return out;
    }
    if !deleting && !has_finalizer {
        out.finalizer = FinalizerChange::Add;
    }

    let mut new = old.clone();
    if new.phase.as_deref().unwrap_or("").is_empty() {
        reset(&mut new);
    }
    let stop = sync_status_before_executing(br, &mut new, workload, pods, &old, &mut out);
    if !stop {
        execute(br, kind, &mut new, workload, pods, now, &mut out);
    }
    new.observed_generation = br.metadata.generation;
    out.status_changed = normalized(new.clone()) != old
        || br
            .status
            .as_ref()
            .and_then(|s| s.canary_status.as_ref())
            .is_none();
    out.status = new;
    out
}

fn plan_hash(br: &BatchRelease) -> String {
    hash_release_plan(&br.spec.release_plan)
}

/// `syncStatusBeforeExecuting`: the special cases of research §4.5 in order, then
/// `refreshStatus`; true = stop this round.
fn sync_status_before_executing(
    br: &BatchRelease,
    new: &mut BatchReleaseStatus,
    w: Option<&WorkloadInfo>,
    pods: &[Pod],
    old: &BatchReleaseStatus,
    out: &mut Outcome,
) -> bool {
    let plan = &br.spec.release_plan;
    let phase = old.phase.as_deref().unwrap_or("");
    let progressing = phase == batch::PROGRESSING;
    let old_canary = old.canary_status.clone().unwrap_or_default();
    let event = workload_event(br, w, new);
    let mut stop = false;
    let message: &str;
    if phase == batch::COMPLETED {
        message = "release plan has been completed, will do nothing";
        stop = true;
    } else if br.metadata.deletion_timestamp.is_some()
        || phase == batch::FINALIZING
        || plan.batch_partition.is_none()
    {
        message = "release plan is deleted or cancelled, then finalize";
        new.phase = Some(batch::FINALIZING.into());
    } else if progressing && old.observed_release_plan_hash.as_deref() != Some(&plan_hash(br)) {
        message = "release plan is changed, then recalculate status";
        let mut current = 0;
        if let Some(p) = plan.batch_partition
            && plan.rollout_id == old.observed_rollout_id
        {
            current = p.min(i32::try_from(plan.batches.len()).unwrap_or(i32::MAX) - 1);
        }
        let c = canary(new);
        c.batch_ready_time = None;
        c.current_batch = current;
        c.batch_state = Some(batch::UPGRADING.into());
        new.observed_rollout_id = plan.rollout_id.clone();
        new.observed_release_plan_hash = Some(plan_hash(br));
    } else if progressing
        && usize::try_from(old_canary.current_batch).unwrap_or(0) >= plan.batches.len()
    {
        message = "release plan is unhealthy, then restart";
        *new = BatchReleaseStatus::default();
        reset(new);
    } else if event == Event::Gone && !phase.is_empty() && phase != "Initial" {
        message = "target workload has gone, then finalize";
        new.phase = Some(batch::FINALIZING.into());
    } else if event == Event::Scaling && progressing {
        message = "workload is scaling, then reinitialize batch status";
        let c = canary(new);
        c.batch_ready_time = None;
        c.batch_state = Some(batch::UPGRADING.into());
        new.observed_workload_replicas = w.map(|w| w.replicas);
    } else if event == Event::RevisionChanged && progressing {
        message = "workload revision was changed, then abort";
        new.update_revision = w.map(|w| w.update_revision.clone());
        stop = true;
    } else if event == Event::Unstable {
        message = "workload status is not stable, then wait";
        stop = true;
    } else if (event == Event::Rollback || rollback_annotated(br))
        && old_canary.no_need_update_replicas.is_none()
        && progressing
    {
        let satisfied =
            w.is_some_and(|w| w.current_revision == w.update_revision) && rollback_annotated(br);
        if satisfied {
            message = "workload is rollback in batch";
            new.phase = Some(batch::PREPARING.into());
            let c = canary(new);
            c.batch_ready_time = None;
            c.batch_state = Some(batch::UPGRADING.into());
            new.update_revision = w.map(|w| w.update_revision.clone());
        } else {
            message = "workload is preparing rollback, wait condition to be satisfied";
            stop = true;
        }
    } else {
        message = "";
    }
    out.message = message.into();

    // refreshStatus
    if let Some(w) = w {
        let ready = updated_ready_replicas(w, pods);
        let c = canary(new);
        c.updated_replicas = Some(w.updated_replicas);
        c.updated_ready_replicas = Some(ready);
    }
    if new
        .observed_release_plan_hash
        .as_deref()
        .unwrap_or("")
        .is_empty()
    {
        new.observed_release_plan_hash = Some(plan_hash(br));
    }

    if normalized(new.clone()) != *old {
        out.requeue_after_seconds = Some(REQUEUE_SECONDS);
        return true;
    }
    stop
}

fn rollback_annotated(br: &BatchRelease) -> bool {
    br.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(keys::ROLLBACK_IN_BATCH))
        .is_some_and(|v| !v.is_empty())
}

/// The release with `status` replaced (what the control plane calculates from).
fn with_status(br: &BatchRelease, status: &BatchReleaseStatus) -> BatchRelease {
    let mut copy = br.clone();
    copy.status = Some(status.clone());
    copy
}

/// `executeBatchReleasePlan` + `progressBatches`.
fn execute(
    br: &BatchRelease,
    kind: TargetKind,
    new: &mut BatchReleaseStatus,
    w: Option<&WorkloadInfo>,
    pods: &[Pod],
    now: Time,
    out: &mut Outcome,
) {
    let phase = new.phase.clone().unwrap_or_default();
    match phase.as_str() {
        batch::PROGRESSING => progress_batches(br, kind, new, w, pods, now, out),
        batch::FINALIZING => {
            if let Some(w) = w {
                out.workload_patch = Some(finalize_patch(br, w.kind.unwrap_or(kind)));
            }
            new.phase = Some(batch::COMPLETED.into());
            out.message = "finalized".into();
        }
        batch::COMPLETED => {}
        _ => {
            new.phase = Some(batch::PREPARING.into());
            initialize(br, new, w, pods, out);
        }
    }
}

/// `realBatchControlPlane.Initialize`.
fn initialize(
    br: &BatchRelease,
    new: &mut BatchReleaseStatus,
    w: Option<&WorkloadInfo>,
    pods: &[Pod],
    out: &mut Outcome,
) {
    let Some(w) = w else {
        out.message = "workload not found, cannot initialize".into();
        out.requeue_after_seconds = Some(REQUEUE_SECONDS);
        return;
    };
    out.workload_patch = initialize_patch(br, w);
    new.stable_revision = Some(w.current_revision.clone());
    new.update_revision = Some(w.update_revision.clone());
    new.observed_workload_replicas = Some(w.replicas);
    if rollback_annotated(br) {
        let rollout_id = br.spec.release_plan.rollout_id.clone().unwrap_or_default();
        if rollout_id.is_empty() {
            let updated = canary(new).updated_replicas.unwrap_or(0);
            canary(new).no_need_update_replicas = Some(updated);
        } else {
            let (counted, patches) = no_need_update_patches(&rollout_id, pods, &w.update_revision);
            if !patches.is_empty() {
                out.message = format!(
                    "initialization not yet: patch and find {} pods with no-need-update-label",
                    counted + i32::try_from(patches.len()).unwrap_or(0)
                );
                out.pod_patches = patches;
                return;
            }
            canary(new).no_need_update_replicas = Some(counted);
        }
    }
    new.phase = Some(batch::PROGRESSING.into());
    out.requeue_after_seconds = Some(REQUEUE_SECONDS);
    out.message = "initialized".into();
}

fn context_for(
    br: &BatchRelease,
    status: &BatchReleaseStatus,
    w: &WorkloadInfo,
    pods: &[Pod],
) -> BatchContext {
    calculate_batch_context(&with_status(br, status), w, pods)
}

fn ready(
    br: &BatchRelease,
    status: &BatchReleaseStatus,
    w: Option<&WorkloadInfo>,
    pods: &[Pod],
) -> Result<(), String> {
    let Some(w) = w else {
        return Err("workload not found".into());
    };
    if w.replicas == 0 {
        return Ok(());
    }
    is_batch_ready(&context_for(br, status, w, pods), pods)
}

/// `progressBatches`.
fn progress_batches(
    br: &BatchRelease,
    kind: TargetKind,
    new: &mut BatchReleaseStatus,
    w: Option<&WorkloadInfo>,
    pods: &[Pod],
    now: Time,
    out: &mut Outcome,
) {
    let state = canary(new).batch_state.clone().unwrap_or_default();
    match state.as_str() {
        batch::VERIFYING => match ready(br, new, w, pods) {
            Ok(()) => {
                let c = canary(new);
                c.batch_ready_time = Some(now);
                c.batch_state = Some(batch::READY.into());
                out.requeue_after_seconds = Some(REQUEUE_SECONDS);
                out.message = "batch ready".into();
            }
            Err(e) => {
                canary(new).batch_state = Some(batch::UPGRADING.into());
                out.message = e;
            }
        },
        batch::READY => match ready(br, new, w, pods) {
            Err(e) => {
                let c = canary(new);
                c.batch_ready_time = None;
                c.batch_state = Some(batch::UPGRADING.into());
                out.message = e;
            }
            Ok(()) => {
                let current = canary(new).current_batch;
                let partitioned = br
                    .spec
                    .release_plan
                    .batch_partition
                    .is_some_and(|p| p <= current);
                if !partitioned {
                    let plan = &br.spec.release_plan;
                    let c = canary(new);
                    if plan.batch_partition.is_none_or(|p| p > c.current_batch) {
                        c.current_batch += 1;
                    }
                    c.batch_state = Some(batch::UPGRADING.into());
                    out.requeue_after_seconds = Some(REQUEUE_SECONDS);
                    out.message = "moved to the next batch".into();
                }
            }
        },
        _ => {
            canary(new).batch_state = Some(batch::UPGRADING.into());
            upgrade(br, kind, new, w, pods, out);
        }
    }
}

/// `realBatchControlPlane.UpgradeBatch` + `PatchPodBatchLabel`, then → Verifying.
fn upgrade(
    br: &BatchRelease,
    kind: TargetKind,
    new: &mut BatchReleaseStatus,
    w: Option<&WorkloadInfo>,
    pods: &[Pod],
    out: &mut Outcome,
) {
    let Some(w) = w else {
        out.message = "workload not found".into();
        return;
    };
    if w.replicas != 0 {
        let rollout_id = br.spec.release_plan.rollout_id.clone().unwrap_or_default();
        if !rollout_id.is_empty() && canary(new).no_need_update_replicas.is_some() {
            let update = new.update_revision.clone().unwrap_or_default();
            let n = pods
                .iter()
                .filter(|p| !pod_deleting(p) && pod_on_revision(p, &update))
                .filter(|p| pod_label(p, keys::ROLLOUT_NO_NEED_UPDATE) == Some(rollout_id.as_str()))
                .count();
            canary(new).no_need_update_replicas = Some(i32::try_from(n).unwrap_or(i32::MAX));
        }
        let ctx = context_for(br, new, w, pods);
        out.workload_patch = upgrade_patch(w.kind.unwrap_or(kind), &ctx);
        out.pod_patches = batch_label_patches(
            &br.spec.release_plan.batches,
            &ctx,
            pods,
            &w.update_revision,
        );
    }
    new.conditions.retain(|c| c.type_ != condition::PROGRESSING);
    new.message = None;
    canary(new).batch_state = Some(batch::VERIFYING.into());
    out.requeue_after_seconds = Some(REQUEUE_SECONDS);
    out.message = "batch upgraded".into();
}
