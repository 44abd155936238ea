//! The pod batch-label patcher (`labelpatch/patcher.go`) and the rollback-in-batch
//! no-need-update marking (`markNoNeedUpdatePodsIfNeeds`).

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Value, json};

use super::context::{BatchContext, pod_deleting, pod_label, pod_on_revision};
use crate::api::keys;
use crate::api::rollout::ReleaseBatch;
use crate::kruise::rollout::calculate_batch_replicas;

/// One pod label write (a strategic-merge / merge patch `{"metadata":{"labels":{…}}}`).
#[derive(Debug, Clone, PartialEq)]
pub struct PodPatch {
    pub name: String,
    pub body: Value,
}

/// `calculatePlannedStepIncrements`: per-batch quotas `P_0, P_1−P_0, …` up to the current
/// batch, zeros after it.
pub fn planned_step_increments(
    batches: &[ReleaseBatch],
    replicas: i32,
    current_batch: i32,
) -> Vec<i32> {
    let current = usize::try_from(current_batch).unwrap_or(0);
    let mut res = vec![0; batches.len()];
    for (i, slot) in res.iter_mut().enumerate().take(current + 1) {
        *slot = calculate_batch_replicas(&batches[i].canary_replicas, replicas);
    }
    for i in (1..=current.min(res.len().saturating_sub(1))).rev() {
        res[i] -= res[i - 1];
    }
    res
}

fn pod_revision(pod: &Pod) -> &str {
    pod_label(pod, "controller-revision-hash")
        .or_else(|| pod_label(pod, "pod-template-hash"))
        .unwrap_or("")
}

/// `PatchPodBatchLabel`: the labels to write so the updated pods carry the rollout-id and the
/// 1-based batch they belong to. Pods already labelled with this rollout-id and a valid
/// batch-id use up their batch's quota; the rest are labelled from the highest batch down;
/// nothing is ever unlabelled. `update_revision` is the workload's.
pub fn batch_label_patches(
    batches: &[ReleaseBatch],
    ctx: &BatchContext,
    pods: &[Pod],
    update_revision: &str,
) -> Vec<PodPatch> {
    if ctx.rollout_id.is_empty() || pods.is_empty() {
        return Vec::new();
    }
    let mut quotas = planned_step_increments(batches, ctx.replicas, ctx.current_batch);
    // A revision another rollout-id already claimed is a legacy pod's, not this run's.
    let mut revision_ids = std::collections::BTreeMap::<&str, &str>::new();
    for pod in pods {
        let id = pod_label(pod, keys::ROLLOUT_ID).unwrap_or("");
        let slot = revision_ids.entry(pod_revision(pod)).or_insert("");
        if slot.is_empty() {
            *slot = id;
        }
    }
    let mut unpatched: Vec<&Pod> = Vec::new();
    for pod in pods {
        if pod_deleting(pod) || !pod_on_revision(pod, update_revision) {
            continue;
        }
        if ctx.no_need_update_replicas.is_some()
            && pod_label(pod, keys::ROLLOUT_NO_NEED_UPDATE) == Some(ctx.rollout_id.as_str())
        {
            continue;
        }
        let claimed = revision_ids.get(pod_revision(pod)).copied().unwrap_or("");
        if !claimed.is_empty() && claimed != ctx.rollout_id {
            continue;
        }
        if pod_label(pod, keys::ROLLOUT_ID).unwrap_or("").is_empty() {
            unpatched.push(pod);
            continue;
        }
        let batch = pod_label(pod, keys::ROLLOUT_BATCH_ID).and_then(|b| b.parse::<usize>().ok());
        match batch {
            Some(b) if b >= 1 && b <= quotas.len() => quotas[b - 1] -= 1,
            // An out-of-range batch id is as good as none: relabel the pod.
            _ => unpatched.push(pod),
        }
    }
    let mut out = Vec::new();
    for i in (0..quotas.len()).rev() {
        while quotas[i] > 0 {
            let Some(pod) = unpatched.pop() else {
                return out;
            };
            out.push(PodPatch {
                name: pod.metadata.name.clone().unwrap_or_default(),
                body: json!({"metadata": {"labels": {
                    keys::ROLLOUT_ID: ctx.rollout_id,
                    keys::ROLLOUT_BATCH_ID: (i + 1).to_string(),
                }}}),
            });
            quotas[i] -= 1;
        }
    }
    out
}

/// `markNoNeedUpdatePodsIfNeeds`: (pods already counted, label writes) for the pods on
/// `update_revision` that do not yet carry `no-need-update=<rolloutID>`.
pub fn no_need_update_patches(
    rollout_id: &str,
    pods: &[Pod],
    update_revision: &str,
) -> (i32, Vec<PodPatch>) {
    let mut counted = 0;
    let mut patches = Vec::new();
    for pod in pods {
        if pod_deleting(pod) || !pod_on_revision(pod, update_revision) {
            continue;
        }
        if pod_label(pod, keys::ROLLOUT_NO_NEED_UPDATE) == Some(rollout_id) {
            counted += 1;
            continue;
        }
        patches.push(PodPatch {
            name: pod.metadata.name.clone().unwrap_or_default(),
            body: json!({"metadata": {"labels": {keys::ROLLOUT_NO_NEED_UPDATE: rollout_id}}}),
        });
    }
    (counted, patches)
}

/// Convenience for tests and vectors: a batch list from int-or-percent values.
pub fn batches(values: &[IntOrString]) -> Vec<ReleaseBatch> {
    values
        .iter()
        .map(|v| ReleaseBatch {
            canary_replicas: v.clone(),
        })
        .collect()
}
