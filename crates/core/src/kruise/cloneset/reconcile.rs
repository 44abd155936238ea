//! One CloneSet reconcile (`cloneset_controller.go::doReconcile` after the revisions are
//! settled, `syncCloneSet`, v1.8.4; v1.9.0's conditions behind `KruiseVersion`), pure: what the
//! controller read (the CloneSet, its active pods, claims and revisions, the clock) in, what it
//! writes out. Scale runs first; only when it changed nothing does Update run, exactly as
//! upstream.
//!
//! The IO shell (src/controllers/cloneset.rs) settles the revisions first
//! ([`revisions::active_revisions`], creating the update revision if new), then applies the
//! returned writes in order and records their events.

pub mod create;
pub mod pods;
pub mod revisions;
pub mod status;
mod write;

pub use write::{PodOp, PodWrite, Why};

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{
    api::{
        apps::v1::ControllerRevision,
        core::v1::{PersistentVolumeClaim, Pod},
    },
    apimachinery::pkg::apis::meta::v1::OwnerReference,
};

use super::{
    CloneSetParams, EXCLUDE_PREPARING_DELETE_LABEL, IsPodUpdateMode, PodInfo, calculate_diffs,
    inplace::{PodModel, RevisionTemplate},
    lifecycle::Lifecycle,
    pod_sort::SpreadConstraint,
    progress,
    scale::{self, ScaleAction, ScaleInput},
    state,
    update::UpdateOrder,
    update_pass::{self, KRUISE_POD_READY, UpdatePassInput},
};
use crate::{
    api::{CloneSet, cloneset::CloneSetStatus},
    kruise::{
        FeatureGates, KruiseVersion,
        events::EventRecord,
        updatesort::{PriorityStrategy, ScatterTerm},
    },
};

/// The controller ownerReference a CloneSet puts on what it creates.
pub fn owner_reference(cs: &CloneSet) -> Option<OwnerReference> {
    Some(OwnerReference {
        api_version: "apps.kruise.io/v1alpha1".to_owned(),
        kind: "CloneSet".to_owned(),
        name: cs.metadata.name.clone()?,
        uid: cs.metadata.uid.clone()?,
        controller: Some(true),
        block_owner_deletion: Some(true),
    })
}

/// Everything one reconcile reads.
pub struct Input<'a> {
    pub cs: &'a CloneSet,
    /// Active pods owned by the CloneSet (not terminating, not Succeeded/Failed).
    pub pods: &'a [Pod],
    /// Every pod owned by the CloneSet, terminating ones included (instance ids in use).
    pub all_pod_names: &'a [String],
    /// Claims owned by the CloneSet.
    pub pvcs: &'a [PersistentVolumeClaim],
    /// Every revision of the CloneSet (the update revision included).
    pub revisions: &'a [ControllerRevision],
    pub current: &'a ControllerRevision,
    pub update: &'a ControllerRevision,
    pub collision_count: i32,
    /// `selector.String()` of the CloneSet's selector.
    pub label_selector: String,
    /// Node names and labels (for the topology-spread scale-down ranking).
    pub nodes: &'a [(String, BTreeMap<String, String>)],
    pub gates: &'a FeatureGates,
    pub version: KruiseVersion,
    /// The clock, unix seconds.
    pub now: i64,
}

/// What one reconcile writes, in order: claims, pods, status, spec (podsToDelete), revisions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    pub pvcs: Vec<PersistentVolumeClaim>,
    pub pods: Vec<PodWrite>,
    /// Whether Scale (rather than Update) made the pod writes.
    pub scaled: bool,
    pub status: CloneSetStatus,
    /// `status` differs from what is stored in a way upstream writes.
    pub status_changed: bool,
    /// `scaleStrategy.podsToDelete` without the pods that are gone, when that changes it.
    pub pods_to_delete: Option<Vec<String>>,
    /// Revisions to prune.
    pub delete_revisions: Vec<String>,
    /// Events not tied to one write.
    pub events: Vec<EventRecord>,
    /// Seconds until the controller must look again (grace period, minReadySeconds).
    pub requeue_after: Option<i64>,
    pub errors: Vec<String>,
}

/// The CloneSet's spec as the ported algorithms read it.
pub fn params(cs: &CloneSet) -> CloneSetParams {
    let strategy = &cs.spec.update_strategy;
    let scale = cs.spec.scale_strategy.as_ref();
    CloneSetParams {
        replicas: cs.spec.replicas.unwrap_or(1),
        partition: strategy.partition.clone(),
        max_unavailable: strategy.max_unavailable.clone(),
        max_surge: strategy.max_surge.clone(),
        paused: strategy.paused,
        scale_max_unavailable: scale.and_then(|s| s.max_unavailable.clone()),
        min_ready_seconds: cs.spec.min_ready_seconds.unwrap_or(0),
        exclude_preparing_delete: cs
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(EXCLUDE_PREPARING_DELETE_LABEL))
            .is_some_and(|v| v == "true"),
        pods_to_delete: scale.map(|s| s.pods_to_delete.clone()).unwrap_or_default(),
    }
}

/// `spec.lifecycle` in the port's shape.
pub fn lifecycle(cs: &CloneSet) -> Option<Lifecycle> {
    let value = serde_json::to_value(cs.spec.lifecycle.as_ref()?).ok()?;
    serde_json::from_value(value).ok()
}

/// `priorityStrategy` and `scatterStrategy` in the port's shape.
pub fn update_order(cs: &CloneSet) -> UpdateOrder {
    let strategy = &cs.spec.update_strategy;
    let priority: Option<PriorityStrategy> = strategy
        .priority_strategy
        .as_ref()
        .and_then(|p| serde_json::to_value(p).ok())
        .and_then(|v| serde_json::from_value(v).ok());
    UpdateOrder {
        priority,
        scatter: strategy
            .scatter_strategy
            .iter()
            .map(|t| ScatterTerm {
                key: t.key.clone(),
                value: t.value.clone(),
            })
            .collect(),
    }
}

fn spread_constraints(cs: &CloneSet) -> Vec<SpreadConstraint> {
    cs.spec
        .template
        .spec
        .as_ref()
        .and_then(|s| s.topology_spread_constraints.as_ref())
        .into_iter()
        .flatten()
        .map(|c| SpreadConstraint {
            topology_key: c.topology_key.clone(),
            limited_values: Vec::new(),
        })
        .collect()
}

fn name_of(r: &ControllerRevision) -> &str {
    r.metadata.name.as_deref().unwrap_or_default()
}

/// One reconcile. `rng` supplies randomness for new instance ids.
pub fn reconcile(input: &Input<'_>, rng: &mut dyn FnMut() -> u64) -> Outcome {
    let cs = input.cs;
    let mut out = Outcome {
        status: status::calculate(
            cs,
            input.pods,
            name_of(input.current),
            name_of(input.update),
            input.collision_count,
            input.label_selector.clone(),
            input.now,
        ),
        ..Outcome::default()
    };
    if cs.metadata.deletion_timestamp.is_none() {
        sync(input, rng, &mut out);
    }
    let failure = (!out.errors.is_empty()).then(|| {
        let kind = if out.scaled {
            progress::FAILED_SCALE
        } else {
            progress::FAILED_UPDATE
        };
        (kind, out.errors.join("; "))
    });
    let finished = status::finish(
        cs,
        &mut out.status,
        failure.as_ref().map(|(k, m)| (*k, m.as_str())),
        input.version,
        input.now,
    );
    out.status_changed = finished.changed;
    if let Some(after) = finished.requeue_after {
        requeue(&mut out, after);
    }

    // podsToDelete keeps only pods that still exist.
    let to_delete = cs
        .spec
        .scale_strategy
        .as_ref()
        .map(|s| s.pods_to_delete.clone())
        .unwrap_or_default();
    if !to_delete.is_empty() {
        let existing: BTreeSet<&str> = input
            .pods
            .iter()
            .filter_map(|p| p.metadata.name.as_deref())
            .collect();
        let kept: Vec<String> = to_delete
            .iter()
            .filter(|n| existing.contains(n.as_str()))
            .cloned()
            .collect();
        if kept.len() != to_delete.len() {
            out.pods_to_delete = Some(kept);
        }
    }
    let pod_revisions: Vec<&str> = input
        .pods
        .iter()
        .filter_map(|p| {
            p.metadata
                .labels
                .as_ref()?
                .get(crate::kruise::revision::CONTROLLER_REVISION_HASH_LABEL)
                .map(String::as_str)
        })
        .collect();
    out.delete_revisions = revisions::truncate_history(
        cs,
        input.revisions,
        &pod_revisions,
        name_of(input.current),
        name_of(input.update),
    );
    let min_ready = cs.spec.min_ready_seconds.unwrap_or(0);
    if out.errors.is_empty()
        && min_ready > 0
        && out.status.available_replicas != out.status.ready_replicas
    {
        requeue(&mut out, i64::from(min_ready));
    }
    out
}

fn requeue(out: &mut Outcome, secs: i64) {
    if secs > 0 {
        out.requeue_after = Some(out.requeue_after.map_or(secs, |r| r.min(secs)));
    }
}

fn sync(input: &Input<'_>, rng: &mut dyn FnMut() -> u64, out: &mut Outcome) {
    let cs = input.cs;
    let params = params(cs);
    let infos: Vec<PodInfo> = input.pods.iter().map(pods::pod_info).collect();
    let lifecycle = lifecycle(cs);
    let spread = spread_constraints(cs);
    let current = name_of(input.current);
    let update = name_of(input.update);
    let outcome = scale::scale(&ScaleInput {
        cs: &params,
        pods: &infos,
        current_revision: current,
        update_revision: update,
        gates: input.gates,
        lifecycle: lifecycle.as_ref(),
        spread_constraints: &spread,
        nodes: input.nodes,
        now: input.now,
    });
    if outcome.diffs.scale_up_num > outcome.diffs.scale_up_limit {
        out.events.push(EventRecord::warning(
            "ScaleUpLimited",
            format!(
                "scaleUp is limited because of scaleStrategy.maxUnavailable, limit: {}",
                outcome.diffs.scale_up_limit
            ),
        ));
    }
    if outcome.modified() {
        out.scaled = true;
        apply_scale(
            input,
            &infos,
            &outcome.actions,
            lifecycle.as_ref(),
            rng,
            out,
        );
        return;
    }
    run_update(input, &params, lifecycle.as_ref(), out);
}

fn apply_scale(
    input: &Input<'_>,
    infos: &[PodInfo],
    actions: &[ScaleAction],
    lifecycle: Option<&Lifecycle>,
    rng: &mut dyn FnMut() -> u64,
    out: &mut Outcome,
) {
    for action in actions {
        match *action {
            ScaleAction::RevertPreparingDelete(i) => {
                relabel(input, i, state::PREPARING_NORMAL, false, out);
            }
            ScaleAction::PrepareDelete(i) => {
                let mark = lifecycle
                    .and_then(|l| l.pre_delete.as_ref())
                    .is_some_and(|h| h.mark_pod_not_ready);
                relabel(input, i, state::PREPARING_DELETE, mark, out);
            }
            ScaleAction::Delete(i) => out.pods.push(PodWrite {
                name: infos[i].name.clone(),
                op: PodOp::Delete {
                    uid: infos[i].uid.clone(),
                },
                why: Why::Delete,
            }),
            ScaleAction::Create {
                total,
                from_current,
            } => create::create_pods(input, total, from_current, rng, out),
        }
    }
}

/// Moves pod `i` to lifecycle `state` (optionally marking it not ready through KruisePodReady).
fn relabel(input: &Input<'_>, i: usize, to: &str, mark_not_ready: bool, out: &mut Outcome) {
    let pod = &input.pods[i];
    let mut model = pods::pod_model(pod);
    model.set_lifecycle_state(to, input.now);
    if mark_not_ready && model.readiness_gates.iter().any(|g| g == KRUISE_POD_READY) {
        model.conditions.retain(|c| c.type_ != KRUISE_POD_READY);
        model
            .conditions
            .push(crate::kruise::cloneset::inplace::Condition {
                type_: KRUISE_POD_READY.to_owned(),
                status: "False".to_owned(),
                reason: String::new(),
                last_transition: Some(input.now),
            });
    }
    push_changes(pod, &model, Why::Refresh, out);
}

fn push_changes(pod: &Pod, model: &PodModel, why: Why, out: &mut Outcome) {
    let changes = pods::changes(pod, model);
    if changes.is_empty() {
        return;
    }
    out.pods.push(PodWrite {
        name: model.name.clone(),
        op: PodOp::Update {
            status: changes.status.map(Box::new),
            pod: changes.pod.map(Box::new),
        },
        why,
    });
}

fn run_update(
    input: &Input<'_>,
    params: &CloneSetParams,
    lifecycle: Option<&Lifecycle>,
    out: &mut Outcome,
) {
    let cs = input.cs;
    let infos: Vec<PodInfo> = input.pods.iter().map(pods::pod_info).collect();
    let current = name_of(input.current);
    let update = name_of(input.update);
    // The direction decides which revision the in-place diff is taken against.
    let diffs = calculate_diffs(
        params,
        &infos,
        current,
        update,
        IsPodUpdateMode::RevisionOnly,
        input.gates,
        input.now,
    );
    let target = if diffs.update_num < 0 {
        input.current
    } else {
        input.update
    };
    let templates = revisions::revision_templates(input.revisions, target);
    let find = |name: &str| {
        templates
            .iter()
            .find(|t| t.name == name)
            .cloned()
            .unwrap_or_else(|| RevisionTemplate {
                name: name.to_owned(),
                containers: None,
            })
    };
    let order = update_order(cs);
    let strategy_type = cs.spec.update_strategy.type_.clone().unwrap_or_default();
    let grace = cs
        .spec
        .update_strategy
        .in_place_update_strategy
        .as_ref()
        .and_then(|s| s.grace_period_seconds)
        .unwrap_or(0);
    let mut models: Vec<PodModel> = input.pods.iter().map(pods::pod_model).collect();
    let pass = update_pass::update_pass(
        &UpdatePassInput {
            cs: params,
            strategy_type: &strategy_type,
            grace_seconds: grace,
            lifecycle,
            order: &order,
            current_revision: &find(current),
            update_revision: &find(update),
            revisions: &templates,
            gates: input.gates,
            version: input.version,
            now: input.now,
        },
        &mut models,
    );
    out.errors.extend(pass.errors);
    if let Some(after) = pass.requeue_after {
        requeue(out, after);
    }
    let target_name = name_of(target).to_owned();
    for (i, (pod, model)) in input.pods.iter().zip(&models).enumerate() {
        let why = if pass.updated.contains(&i) {
            let before = &infos[i];
            if model.labels.contains_key(super::SPECIFIED_DELETE_LABEL) && !before.specified_delete
            {
                Why::RecreateUpdate {
                    revision: target_name.clone(),
                }
            } else {
                Why::InPlaceUpdate {
                    revision: target_name.clone(),
                }
            }
        } else {
            Why::Refresh
        };
        push_changes(pod, model, why, out);
    }
}

#[cfg(test)]
mod tests;
