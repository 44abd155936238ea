//! One Update() reconcile over full pod models: refresh (in-place condition, grace, lifecycle,
//! `pod-template-hash`), then choose, order, limit and update pods in place or by recreation.

use super::{
    CloneSetParams, IsPodUpdateMode, SPECIFIED_DELETE_LABEL, calculate_diffs,
    inplace::{self, PodModel, RevisionTemplate},
    lifecycle::{self, Lifecycle, RefreshFacts},
    state,
    update::{self, UpdateOrder},
};
use crate::kruise::{FeatureGates, KruiseVersion, revision};

/// The Kruise readiness gate `markPodNotReady` drives.
pub const KRUISE_POD_READY: &str = "KruisePodReady";

/// Everything one Update() pass reads besides the pods.
pub struct UpdatePassInput<'a> {
    pub cs: &'a CloneSetParams,
    /// `updateStrategy.type`: `""`/`ReCreate`, `InPlaceIfPossible` or `InPlaceOnly`.
    pub strategy_type: &'a str,
    /// `inPlaceUpdateStrategy.gracePeriodSeconds`.
    pub grace_seconds: i32,
    pub lifecycle: Option<&'a Lifecycle>,
    pub order: &'a UpdateOrder,
    pub current_revision: &'a RevisionTemplate,
    pub update_revision: &'a RevisionTemplate,
    /// Every ControllerRevision still present.
    pub revisions: &'a [RevisionTemplate],
    pub gates: &'a FeatureGates,
    pub version: KruiseVersion,
    pub now: i64,
}

/// What one Update() pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdatePassOutcome {
    /// Pods changed by the refresh step (then nothing else happens this pass).
    pub refreshed: Vec<usize>,
    /// Pods the update step changed, in order.
    pub updated: Vec<usize>,
    pub requeue_after: Option<i64>,
    pub errors: Vec<String>,
}

fn requeue(out: &mut UpdatePassOutcome, delay: Option<i64>) {
    if let Some(d) = delay.filter(|d| *d > 0) {
        out.requeue_after = Some(out.requeue_after.map_or(d, |r| r.min(d)));
    }
}

/// Port of sync/cloneset_update.go::Update (v1.8.4), one pass.
pub fn update_pass(input: &UpdatePassInput<'_>, pods: &mut [PodModel]) -> UpdatePassOutcome {
    let mut out = UpdatePassOutcome::default();
    let update_name = input.update_revision.name.as_str();
    for (i, pod) in pods.iter_mut().enumerate() {
        match inplace::refresh(pod, input.now) {
            Ok(delay) => requeue(&mut out, delay),
            Err(e) => {
                out.errors.push(format!("pod {}: {e}", pod.name));
                return out;
            }
        }
        let pod_rev = pod
            .labels
            .get(revision::CONTROLLER_REVISION_HASH_LABEL)
            .cloned()
            .unwrap_or_default();
        let completed = inplace::check_update_completed(pod).is_ok();
        let next = lifecycle::refresh_state(
            input.lifecycle,
            RefreshFacts {
                state: pod.lifecycle_state(),
                labels: &pod.labels,
                finalizers: &pod.finalizers,
                on_update_revision: revision::equal_to_revision_hash(&pod_rev, update_name),
                update_completed: completed,
                scheduled: !pod.node_name.is_empty(),
            },
            input.version,
        );
        let mut patched = false;
        if let Some(next) = next.filter(|n| *n != pod.lifecycle_state()) {
            pod.set_lifecycle_state(next, input.now);
            patched = true;
        }
        if !pod.labels.contains_key(revision::POD_TEMPLATE_HASH_LABEL) {
            pod.labels.insert(
                revision::POD_TEMPLATE_HASH_LABEL.to_owned(),
                revision::short_hash(&pod_rev).to_owned(),
            );
            patched = true;
        }
        if patched {
            out.refreshed.push(i);
        }
    }
    if !out.refreshed.is_empty() || input.cs.paused {
        return out;
    }

    let infos: Vec<_> = pods.iter().map(PodModel::info).collect();
    let diffs = calculate_diffs(
        input.cs,
        &infos,
        &input.current_revision.name,
        update_name,
        IsPodUpdateMode::RevisionOnly,
        input.gates,
        input.now,
    );
    if diffs.update_num == 0 {
        return out;
    }
    let candidates = update::update_candidates(&infos, diffs.update_num, update_name);
    let sorted = update::sort_update_indexes(&infos, &candidates, input.order, input.version);
    let target = if diffs.update_num < 0 {
        input.current_revision
    } else {
        input.update_revision
    };
    let limited = update::limit_update_indexes(
        &infos,
        &sorted,
        &diffs,
        &target.name,
        input.cs.min_ready_seconds,
        input.now,
    );
    for i in limited.can_update {
        match update_pod(input, target, &mut pods[i]) {
            Ok(delay) => {
                requeue(&mut out, delay);
                out.updated.push(i);
            }
            Err(e) => {
                out.errors.push(e);
                return out;
            }
        }
    }
    out
}

fn mark_not_ready(pod: &mut PodModel, now: i64) {
    if pod.readiness_gates.iter().any(|g| g == KRUISE_POD_READY) {
        pod.conditions.retain(|c| c.type_ != KRUISE_POD_READY);
        pod.conditions.push(inplace::Condition {
            type_: KRUISE_POD_READY.to_owned(),
            status: "False".to_owned(),
            reason: String::new(),
            last_transition: Some(now),
        });
    }
}

/// Port of sync/cloneset_update.go::updatePod (v1.8.4).
fn update_pod(
    input: &UpdatePassInput<'_>,
    target: &RevisionTemplate,
    pod: &mut PodModel,
) -> Result<Option<i64>, String> {
    let in_place_type = matches!(input.strategy_type, "InPlaceIfPossible" | "InPlaceOnly");
    if in_place_type {
        let pod_rev = pod
            .labels
            .get(revision::CONTROLLER_REVISION_HASH_LABEL)
            .cloned()
            .unwrap_or_default();
        let old = input
            .revisions
            .iter()
            .find(|r| revision::equal_to_revision_hash(&pod_rev, &r.name));
        if let Some(spec) = inplace::calculate_spec(old, target, input.grace_seconds) {
            let hook = input.lifecycle.and_then(|l| l.in_place_update.as_ref());
            let hooked = lifecycle::is_pod_hooked(hook, &pod.labels, &pod.finalizers);
            match pod.lifecycle_state() {
                "" | state::PREPARING_NORMAL | state::NORMAL => {
                    if input.lifecycle.is_some() && hooked {
                        pod.set_lifecycle_state(state::PREPARING_UPDATE, input.now);
                        if hook.is_some_and(|h| h.mark_pod_not_ready) {
                            mark_not_ready(pod, input.now);
                        }
                        return Ok(None);
                    }
                }
                state::PREPARING_UPDATE => {
                    if input.lifecycle.is_some() && hooked {
                        return Ok(None);
                    }
                }
                state::UPDATED => {
                    // A newer revision arrived before the user re-armed the hook: the controller
                    // re-adds the hook markers itself (UpdatePodLifecycleWithHandler, which does
                    // nothing without an InPlaceUpdate hook).
                    if let Some(h) = hook {
                        pod.labels.extend(h.labels_handler.clone());
                        for f in &h.finalizers_handler {
                            if !pod.finalizers.contains(f) {
                                pod.finalizers.push(f.clone());
                            }
                        }
                        pod.set_lifecycle_state(state::PREPARING_UPDATE, input.now);
                    }
                    return Ok(None);
                }
                state::UPDATING => {}
                other => {
                    return Err(format!(
                        "not allowed to in-place update pod {} in state {other}",
                        pod.name
                    ));
                }
            }
            return Ok(inplace::start_update(pod, &spec, input.gates, input.now));
        }
        if input.strategy_type == "InPlaceOnly" {
            return Err(format!(
                "find Pod {} update strategy is InPlaceOnly but can not update in-place",
                pod.name
            ));
        }
    }
    pod.labels
        .insert(SPECIFIED_DELETE_LABEL.to_owned(), "true".to_owned());
    Ok(None)
}
