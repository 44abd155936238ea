//! The Advanced StatefulSet planner: applies the change, then asks
//! [`crate::kruise::statefulset::plan_partition`] (ordinal order, maxUnavailable, final state)
//! and maps its answer onto the kind-neutral [`Plan`].

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{
    Action, Blocker, Change, Direction, Plan, PlanError, PlanInput, PlanStatus, PlannedPod,
    cloneset::plan_cloneset,
};
use crate::kruise::{
    cloneset::ExpectationDiffs,
    intstr,
    statefulset::{
        AstsPod, AstsSpec, RollingUpdate, UpdateAction, equal_to_revision_hash, plan_partition,
    },
};

/// Plans `input.change` on an Advanced StatefulSet.
pub fn plan_statefulset(input: &PlanInput) -> Result<Plan, PlanError> {
    if input.change == Change::Delete {
        // Deleting the set deletes every pod; the ordering and guards are kind-neutral.
        return plan_cloneset(input);
    }
    let mut w = input.workload.clone();
    let mut spec: AstsSpec = w.asts.clone().unwrap_or_default();
    spec.replicas = w.replicas;
    let mut rolling = spec.rolling_update.take().unwrap_or_else(|| RollingUpdate {
        max_unavailable: w.max_unavailable.clone(),
        paused: w.paused,
        ..RollingUpdate::default()
    });
    // The generic fields are the live values; they win over the kind-specific copy.
    if let Some(IntOrString::Int(p)) = &w.partition {
        rolling.partition = *p;
    }
    rolling.paused = w.paused;
    if w.max_unavailable.is_some() {
        rolling.max_unavailable = w.max_unavailable.clone();
    }
    let mut notes = Vec::new();
    let mut in_place_possible = w.in_place_possible;
    match &input.change {
        Change::Nothing | Change::Delete => {}
        Change::Partition(text) => match intstr::parse_partition_input(text, Some(w.replicas))? {
            IntOrString::Int(p) => rolling.partition = p,
            IntOrString::String(s) => {
                return Err(PlanError::Unsupported(format!(
                    "an Advanced StatefulSet partition is a number of pods, not a percent ({s})"
                )));
            }
        },
        Change::Pause => rolling.paused = true,
        Change::Resume => rolling.paused = false,
        Change::NewRevision {
            revision,
            in_place_possible: possible,
        } => {
            w.update_revision = revision.clone();
            in_place_possible = *possible;
        }
        Change::Undo { to } => {
            let target = to.clone().unwrap_or_else(|| w.current_revision.clone());
            if equal_to_revision_hash(&target, &w.update_revision) {
                return Err(PlanError::NothingToUndo(w.name.clone(), target));
            }
            w.update_revision = target;
        }
        Change::Restart => w.update_revision = format!("{}-restart", w.name),
    }
    let partition = rolling.partition;
    let paused = rolling.paused;
    spec.rolling_update = Some(rolling);

    let now = input.now;
    let pods: Vec<AstsPod> = input
        .pods
        .iter()
        .map(|p| AstsPod {
            name: p.name.clone(),
            revision: p.revision.clone(),
            phase: p.phase.clone(),
            ready: p.ready,
            ready_for_seconds: p.ready_since.filter(|_| p.ready).map(|s| now - s),
            terminating: false,
            lifecycle_state: p.lifecycle_state.clone(),
            specified_delete: p.specified_delete,
            in_place_update_pending: p.in_place_grace || !p.in_place_update_ready,
            labels: p.labels.clone(),
        })
        .collect();
    let preview = plan_partition(
        &spec,
        &input.gates,
        input.version,
        &pods,
        &w.current_revision,
        &w.update_revision,
        partition,
        &|_| in_place_possible,
    )
    .map_err(PlanError::Unsupported)?;

    let default_action = match spec.rolling_update.as_ref().map(|r| r.pod_update_policy) {
        Some(crate::kruise::statefulset::PodUpdatePolicy::ReCreate) | None => Action::Recreate,
        Some(_) if in_place_possible => Action::InPlace,
        Some(_) => Action::Recreate,
    };
    let moves: Vec<PlannedPod> = preview
        .to_update
        .iter()
        .map(|p| {
            let now_action =
                preview
                    .this_pass
                    .iter()
                    .find(|(o, _)| *o == p.ordinal)
                    .map(|(_, a)| match a {
                        UpdateAction::Delete => Action::Recreate,
                        UpdateAction::InPlace => Action::InPlace,
                    });
            let blocked = match now_action {
                Some(_) => None,
                None if preview.paused => Some(Blocker::Paused),
                None => Some(Blocker::MaxUnavailable),
            };
            PlannedPod {
                name: p.name.clone(),
                from_revision: p.revision.clone(),
                to_revision: w.update_revision.clone(),
                action: now_action.unwrap_or(default_action),
                blocked,
            }
        })
        .collect();
    if !preview.updated_below_partition.is_empty() {
        notes.push(format!(
            "an Advanced StatefulSet never rolls back by partition: ordinals {:?} stay on {} (use undo)",
            preview.updated_below_partition, w.update_revision
        ));
    }
    if preview.paused {
        notes.push("the rollout is paused: nothing updates until it is resumed".to_owned());
    }
    if moves.is_empty() {
        notes.push("nothing to move: the pods already match the partition".to_owned());
    }
    let count = |f: &dyn Fn(&AstsPod) -> bool| {
        i32::try_from(pods.iter().filter(|p| f(p)).count()).unwrap_or(0)
    };
    let min_ready = spec
        .rolling_update
        .as_ref()
        .map_or(0, |r| r.min_ready_seconds);
    let on_update = |p: &AstsPod| equal_to_revision_hash(&p.revision, &w.update_revision);
    let updated = count(&on_update);
    let next = i32::try_from(moves.iter().filter(|m| m.blocked.is_none()).count()).unwrap_or(0);
    let status = PlanStatus {
        replicas: i32::try_from(pods.len()).unwrap_or(i32::MAX),
        ready_replicas: count(&|p| p.phase == "Running" && p.ready),
        available_replicas: count(&|p| p.is_running_and_available(min_ready)),
        updated_replicas: updated,
        updated_ready_replicas: count(&|p| on_update(p) && p.phase == "Running" && p.ready),
        expected_updated_replicas: i32::try_from(preview.expected_updated_replicas()).unwrap_or(0),
        updated_after_next_step: updated + next,
        updated_at_convergence: if paused {
            updated
        } else {
            i32::try_from(preview.final_state.update_revision_ordinals.len()).unwrap_or(0)
        },
    };
    Ok(Plan {
        kind: w.kind,
        name: w.name.clone(),
        partition,
        max_unavailable: preview.max_unavailable,
        max_surge: 0,
        paused,
        current_revision: w.current_revision.clone(),
        update_revision: w.update_revision.clone(),
        direction: if moves.is_empty() {
            Direction::None
        } else {
            Direction::Forward
        },
        moves,
        skipped: Vec::new(),
        status,
        diffs: ExpectationDiffs::default(),
        notes,
    })
}
