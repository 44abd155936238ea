//! An [`Action`] as the plan API's [`Change`], and the plan input for an action on the object it
//! was prepared on.
//!
//! A template change (set image, undo, a journal revert) gets the revision the controller will
//! give it: the same hash of the same revision data the embedded controllers compute, so the
//! planner compares it with the pods' `controller-revision-hash` exactly as the controller will.

use anyhow::{Result, anyhow};
use k8s_openapi::api::core::v1::{Node, Pod, PodTemplateSpec};
use serde_json::Value;

use super::{ads::ads_workload, asts_workload, cloneset_workload, plan_input};
use crate::{
    actions::{Action, ActionError, ObjectState, Target, intstr, prepare::undo_target},
    api::DaemonSet,
    kruise::{
        cloneset::reconcile::revisions as cloneset_revisions,
        daemonset::reconcile::history,
        plan::{Change, PlanInput, WorkloadKind},
        statefulset::reconcile::revisions as statefulset_revisions,
    },
};

const TEMPLATE: &str = "/spec/template";

/// The planner's kind of `target`, for the kinds with a rollout.
pub fn workload_kind(target: &Target) -> Option<WorkloadKind> {
    match (target.group.as_str(), target.kind.as_str()) {
        ("apps.kruise.io", "CloneSet") => Some(WorkloadKind::CloneSet),
        ("apps.kruise.io", "StatefulSet") => Some(WorkloadKind::AdvancedStatefulSet),
        ("apps.kruise.io", "DaemonSet") => Some(WorkloadKind::AdvancedDaemonSet),
        _ => None,
    }
}

/// The plan API's change for `action` on `target` as `state` shows it: Partition →
/// `Change::Partition`, Pause/Resume → `Change::Pause`/`Resume`, SetImage and SetTemplate →
/// `Change::NewRevision` (the revision the controller will make, and whether pods can move to
/// it in place), Undo → `Change::Undo` to the revision the undo restores (the same one
/// [`crate::actions::prepare`] picks). Scale has no change of revision: `Change::Nothing`
/// ([`preview_input`] applies the new replica count and the pods to delete to the workload).
pub fn change_for(
    target: &Target,
    action: &Action,
    state: &ObjectState,
) -> Result<Change, ActionError> {
    match action {
        Action::Partition { value } => Ok(Change::Partition(intstr(value))),
        Action::Pause => Ok(Change::Pause),
        Action::Resume => Ok(Change::Resume),
        Action::Scale { .. } => Ok(Change::Nothing),
        Action::SetImage { images } => {
            let mut template = current_template(target, state)?.clone();
            for (container, image) in images {
                let slot = template
                    .pointer_mut("/spec/containers")
                    .and_then(Value::as_array_mut)
                    .and_then(|cs| cs.iter_mut().find(|c| c["name"] == *container))
                    .ok_or_else(|| {
                        ActionError::Invalid(format!(
                            "{} has no container {container:?}",
                            target.describe()
                        ))
                    })?;
                slot["image"] = Value::String(image.clone());
            }
            new_revision(target, state, &template)
        }
        Action::SetTemplate { template, .. } => new_revision(target, state, template),
        Action::Undo { to_revision } => {
            let current = current_template(target, state)?;
            let rev = undo_target(target, &state.revisions, current, *to_revision)?;
            Ok(Change::Undo {
                to: Some(rev.name.clone()),
            })
        }
    }
}

fn current_template<'s>(target: &Target, state: &'s ObjectState) -> Result<&'s Value, ActionError> {
    state
        .object
        .pointer(TEMPLATE)
        .filter(|t| t.is_object())
        .ok_or_else(|| ActionError::NotApplicable {
            kind: target.describe(),
            what: "pod template".to_owned(),
        })
}

/// `Change::NewRevision` for the object with its template replaced by `template`.
fn new_revision(
    target: &Target,
    state: &ObjectState,
    template: &Value,
) -> Result<Change, ActionError> {
    let current = current_template(target, state)?.clone();
    let mut object = state.object.clone();
    if let Some(slot) = object.pointer_mut(TEMPLATE) {
        *slot = template.clone();
    }
    let collision = object
        .pointer("/status/collisionCount")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok());
    let unreadable = |e: serde_json::Error| {
        ActionError::Invalid(format!("cannot read {}: {e}", target.describe()))
    };
    let revision = match workload_kind(target) {
        Some(WorkloadKind::CloneSet) => {
            let cs = crate::api::cloneset::from_served_json(&state.version, object)
                .map_err(unreadable)?;
            cloneset_revisions::new_revision(&cs, 0, collision.unwrap_or(0))
                .metadata
                .name
        }
        Some(WorkloadKind::AdvancedStatefulSet) => {
            let set = crate::api::statefulset::from_served_json(&state.version, object)
                .map_err(unreadable)?;
            statefulset_revisions::new_revision(&set, 0, collision.unwrap_or(0))
                .metadata
                .name
        }
        Some(WorkloadKind::AdvancedDaemonSet) => {
            let ds: DaemonSet = serde_json::from_value(object).map_err(unreadable)?;
            Some(history::template_hash(&ds, collision))
        }
        None => {
            return Err(ActionError::NotApplicable {
                kind: target.describe(),
                what: "rollout".to_owned(),
            });
        }
    };
    Ok(Change::NewRevision {
        revision: revision.unwrap_or_default(),
        in_place_possible: images_only(&current, template),
    })
}

/// Whether two pod templates differ in container images at most (what an in-place update can
/// apply; the controllers decide the same way).
fn images_only(a: &Value, b: &Value) -> bool {
    let spec = |v: &Value| {
        let mut t: PodTemplateSpec = serde_json::from_value(v.clone()).ok()?;
        let mut spec = t.spec.take()?;
        for c in &mut spec.containers {
            c.image = None;
        }
        Some(spec)
    };
    match (spec(a), spec(b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// The plan input for `action` on `target` as `state` shows it (the object the action was
/// prepared on), with the workload's `pods` and, for an Advanced DaemonSet, the cluster's
/// `nodes`. `now` is the clock in unix seconds.
pub fn preview_input(
    target: &Target,
    action: &Action,
    state: &ObjectState,
    pods: &[Pod],
    nodes: &[Node],
    now: i64,
) -> Result<PlanInput> {
    let kind = workload_kind(target)
        .ok_or_else(|| anyhow!("{} has no rollout to preview", target.describe()))?;
    let (mut workload, meta) = match kind {
        WorkloadKind::CloneSet => cloneset_workload(&state.version, &state.object)?,
        WorkloadKind::AdvancedStatefulSet => asts_workload(&state.object)?,
        WorkloadKind::AdvancedDaemonSet => ads_workload(&state.object, nodes)?,
    };
    let change = change_for(target, action, state)?;
    if let Action::Scale {
        replicas,
        pods: doomed,
    } = action
        && kind != WorkloadKind::AdvancedDaemonSet
    {
        workload.replicas = *replicas;
        if let Some(asts) = &mut workload.asts {
            asts.replicas = *replicas;
        }
        for pod in doomed {
            if !workload.pods_to_delete.contains(pod) {
                workload.pods_to_delete.push(pod.clone());
            }
        }
    }
    Ok(plan_input(workload, &meta, pods, change, now))
}
