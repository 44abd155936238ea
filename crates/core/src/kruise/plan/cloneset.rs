//! The CloneSet planner: applies the change to the spec, then runs the ported Scale()/Update()
//! decisions (diffs, candidates, order, maxUnavailable limit) and the caller's guards.

use super::{
    Action, Blocker, Change, Direction, Plan, PlanError, PlanInput, PlanPod, PlanStatus,
    PlanWorkload, PlannedPod, Protection,
};
use crate::kruise::{
    cloneset::{
        CloneSetParams, IsPodUpdateMode, PodInfo, calculate_diffs,
        diffs::{StrategyNumbers, strategy_numbers},
        lifecycle,
        pod_sort::{self, DeletionOrder},
        scale::{self, ScaleAction, ScaleInput},
        state,
        update::{self, LimitReason, UpdateOrder},
    },
    intstr, revision,
};

fn pod_info(p: &PlanPod) -> PodInfo {
    PodInfo {
        name: p.name.clone(),
        uid: p.name.clone(),
        revision: p.revision.clone(),
        lifecycle_state: p.lifecycle_state.clone(),
        phase: p.phase.clone(),
        node_name: p.node_name.clone(),
        ready: p.ready,
        in_place_update_ready: p.in_place_update_ready,
        ready_since: p.ready_since,
        created: p.created,
        restarts: p.restarts,
        deletion_cost: p.deletion_cost.clone(),
        specified_delete: p.specified_delete,
        in_place_grace: p.in_place_grace,
        finalizers: p.finalizers.clone(),
        labels: p.labels.clone(),
        ..PodInfo::default()
    }
}

fn params(w: &PlanWorkload) -> CloneSetParams {
    CloneSetParams {
        replicas: w.replicas,
        partition: w.partition.clone(),
        max_unavailable: w.max_unavailable.clone(),
        max_surge: w.max_surge.clone(),
        paused: w.paused,
        scale_max_unavailable: w.scale_max_unavailable.clone(),
        min_ready_seconds: w.min_ready_seconds,
        exclude_preparing_delete: w.exclude_preparing_delete,
        pods_to_delete: w.pods_to_delete.clone(),
    }
}

/// Applies the change to the workload; returns notes about it.
fn apply_change(input: &PlanInput, w: &mut PlanWorkload) -> Result<Vec<String>, PlanError> {
    let mut notes = Vec::new();
    match &input.change {
        Change::Nothing | Change::Delete => {}
        Change::Partition(text) => {
            w.partition = Some(intstr::parse_partition_input(text, Some(w.replicas))?);
        }
        Change::NewRevision {
            revision,
            in_place_possible,
        } => {
            w.update_revision = revision.clone();
            w.in_place_possible = *in_place_possible;
        }
        Change::Pause => w.paused = true,
        Change::Resume => w.paused = false,
        Change::Undo { to } => {
            let target = to.clone().unwrap_or_else(|| w.current_revision.clone());
            if revision::equal_to_revision_hash(&target, &w.update_revision) {
                return Err(PlanError::NothingToUndo(w.name.clone(), target));
            }
            w.update_revision = target;
            notes.push(
                "undo keeps the partition: pods held by it stay on their revision; lower the \
                 partition to move them"
                    .to_owned(),
            );
        }
        Change::Restart => {
            w.update_revision = format!("{}-restart", w.name);
            notes.push(
                "restart changes the template metadata: every pod gets a new revision".to_owned(),
            );
        }
    }
    Ok(notes)
}

fn action_for(w: &PlanWorkload) -> Action {
    match w.strategy_type.as_str() {
        "InPlaceIfPossible" | "InPlaceOnly" if w.in_place_possible => Action::InPlace,
        _ => Action::Recreate,
    }
}

/// Port-driven CloneSet plan (Scale() then Update() decisions of v1.8.4).
pub fn plan_cloneset(input: &PlanInput) -> Result<Plan, PlanError> {
    let mut w = input.workload.clone();
    let mut notes = apply_change(input, &mut w)?;
    let cs = params(&w);
    // Upstream breaks ties in its orders by list order; name order makes the plan and the
    // embedded controller (which reconciles pods in name order too) agree.
    let mut pods: Vec<PodInfo> = input.pods.iter().map(pod_info).collect();
    pods.sort_by(|a, b| a.name.cmp(&b.name));
    let gates = &input.gates;
    let now = input.now;
    let numbers = strategy_numbers(&cs);
    let partition = numbers.partition;
    let status =
        |moved_now: i32, moved_total: i32| status_numbers(&w, &pods, moved_now, moved_total, now);

    if input.change == Change::Delete {
        return Ok(plan_delete(input, &w, &pods, numbers, status(0, 0)));
    }

    let diffs = calculate_diffs(
        &cs,
        &pods,
        &w.current_revision,
        &w.update_revision,
        IsPodUpdateMode::RevisionOnly,
        gates,
        now,
    );
    let scale_outcome = scale::scale(&ScaleInput {
        cs: &cs,
        pods: &pods,
        current_revision: &w.current_revision,
        update_revision: &w.update_revision,
        gates,
        lifecycle: w.lifecycle.as_ref(),
        spread_constraints: &[],
        nodes: &[],
        now,
    });
    let scaling_first = scale_outcome.modified();
    if scaling_first {
        notes.push(describe_scaling(&scale_outcome.actions, &pods));
    }
    let direction = match diffs.update_num {
        n if n > 0 => Direction::Forward,
        n if n < 0 => Direction::Rollback,
        _ => Direction::None,
    };
    let target = if diffs.update_num < 0 {
        w.current_revision.clone()
    } else {
        w.update_revision.clone()
    };
    if direction == Direction::None {
        let (_, new_active) = active_split(&pods, &w.update_revision);
        let raised = new_active > w.replicas - partition && w.current_revision != w.update_revision;
        notes.push(if raised && !gates.enabled("CloneSetPartitionRollback") {
            "raising the partition does not roll pods back unless the CloneSetPartitionRollback \
             feature gate is on: nothing moves"
                .to_owned()
        } else {
            "nothing to move: the pods already match the partition".to_owned()
        });
    }

    let candidates = update::update_candidates(&pods, diffs.update_num, &w.update_revision);
    let skipped = skipped_pods(&pods, diffs.update_num, &w.update_revision);
    let order = UpdateOrder {
        priority: w.priority.clone(),
        scatter: w.scatter.clone(),
    };
    let sorted = update::sort_update_indexes(&pods, &candidates, &order, input.version);
    let limited =
        update::limit_update_indexes(&pods, &sorted, &diffs, &target, w.min_ready_seconds, now);
    let action = action_for(&w);
    if w.strategy_type == "InPlaceOnly" && !w.in_place_possible && direction != Direction::None {
        notes.push(
            "InPlaceOnly cannot apply this change in place: the controller will report an error"
                .to_owned(),
        );
    }
    let pub_gate = match action {
        Action::InPlace => gates.enabled("PodUnavailableBudgetUpdateGate"),
        _ => gates.enabled("PodUnavailableBudgetDeleteGate"),
    };
    let mut budget = input.guards.pub_unavailable_allowed.filter(|_| pub_gate);
    let mut moves = Vec::new();
    for &i in &limited.can_update {
        let pod = &pods[i];
        let blocked = if w.paused {
            Some(Blocker::Paused)
        } else if scaling_first {
            Some(Blocker::ScalingFirst)
        } else if action == Action::InPlace && in_place_hooked(&w, pod) {
            Some(Blocker::LifecycleHook)
        } else if let Some(left) = budget.as_mut() {
            if pod.is_available(w.min_ready_seconds, now) {
                if *left > 0 {
                    *left -= 1;
                    None
                } else {
                    Some(Blocker::PodUnavailableBudget)
                }
            } else {
                None
            }
        } else {
            None
        };
        moves.push(planned(pod, &target, action, blocked));
    }
    for &(i, reason) in &limited.blocked {
        if reason == LimitReason::MaxUnavailable {
            let blocker = if w.paused {
                Blocker::Paused
            } else {
                Blocker::MaxUnavailable
            };
            moves.push(planned(&pods[i], &target, action, Some(blocker)));
        }
    }
    if w.paused {
        notes.push("the rollout is paused: nothing updates until it is resumed".to_owned());
    }
    let now_moving =
        i32::try_from(moves.iter().filter(|m| m.blocked.is_none()).count()).unwrap_or(0);
    let total = if w.paused { 0 } else { diffs.update_num };
    let signed_now = if diffs.update_num < 0 {
        -now_moving
    } else {
        now_moving
    };
    Ok(Plan {
        kind: w.kind,
        name: w.name.clone(),
        partition,
        max_unavailable: numbers.max_unavailable,
        max_surge: numbers.max_surge,
        paused: w.paused,
        current_revision: w.current_revision.clone(),
        update_revision: w.update_revision.clone(),
        direction,
        moves,
        skipped,
        status: status(signed_now, total),
        diffs,
        notes,
    })
}

/// An in-place update of this pod first parks it in PreparingUpdate (hooked), or it is already
/// parked there with the hook still on.
fn in_place_hooked(w: &PlanWorkload, pod: &PodInfo) -> bool {
    let hook = w
        .lifecycle
        .as_ref()
        .and_then(|l| l.in_place_update.as_ref());
    lifecycle::is_pod_hooked(hook, &pod.labels, &pod.finalizers)
        && matches!(
            pod.lifecycle_state.as_str(),
            "" | state::NORMAL | state::PREPARING_UPDATE | state::UPDATED
        )
}

fn planned(pod: &PodInfo, target: &str, action: Action, blocked: Option<Blocker>) -> PlannedPod {
    PlannedPod {
        name: pod.name.clone(),
        from_revision: pod.revision.clone(),
        to_revision: target.to_owned(),
        action,
        blocked,
    }
}

/// (old active, new active) pods, PreparingDelete excluded.
fn active_split(pods: &[PodInfo], update_revision: &str) -> (i32, i32) {
    let mut split = (0, 0);
    for p in pods
        .iter()
        .filter(|p| p.lifecycle_state != state::PREPARING_DELETE)
    {
        if revision::equal_to_revision_hash(&p.revision, update_revision) {
            split.1 += 1;
        } else {
            split.0 += 1;
        }
    }
    split
}

fn skipped_pods(pods: &[PodInfo], update_num: i32, update_revision: &str) -> Vec<(String, String)> {
    if update_num == 0 {
        return Vec::new();
    }
    pods.iter()
        .filter(|p| {
            let on_update = revision::equal_to_revision_hash(&p.revision, update_revision);
            if update_num > 0 {
                !on_update
            } else {
                on_update
            }
        })
        .filter_map(|p| {
            if p.lifecycle_state == state::PREPARING_DELETE {
                Some((p.name.clone(), "being deleted (PreparingDelete)".to_owned()))
            } else if p.lifecycle_state != state::UPDATED && p.in_place_grace {
                Some((
                    p.name.clone(),
                    "in an in-place update grace period".to_owned(),
                ))
            } else {
                None
            }
        })
        .collect()
}

fn describe_scaling(actions: &[ScaleAction], pods: &[PodInfo]) -> String {
    let mut parts = Vec::new();
    for a in actions {
        match a {
            ScaleAction::Create {
                total,
                from_current,
            } => parts.push(format!(
                "create {total} pod(s) ({from_current} at the current revision)"
            )),
            ScaleAction::Delete(i) => parts.push(format!("delete {}", pods[*i].name)),
            ScaleAction::PrepareDelete(i) => {
                parts.push(format!("move {} to PreparingDelete", pods[*i].name));
            }
            ScaleAction::RevertPreparingDelete(i) => {
                parts.push(format!("keep {} (cancel its deletion)", pods[*i].name));
            }
        }
    }
    format!(
        "the controller scales before it updates: next it will {}",
        parts.join(", ")
    )
}

fn status_numbers(
    w: &PlanWorkload,
    pods: &[PodInfo],
    moved_now: i32,
    moved_total: i32,
    now: i64,
) -> PlanStatus {
    let count = |f: &dyn Fn(&PodInfo) -> bool| {
        i32::try_from(pods.iter().filter(|p| f(p)).count()).unwrap_or(0)
    };
    let on_update = |p: &PodInfo| revision::equal_to_revision_hash(&p.revision, &w.update_revision);
    let updated = count(&on_update);
    PlanStatus {
        replicas: i32::try_from(pods.len()).unwrap_or(i32::MAX),
        ready_replicas: count(&|p| p.is_update_ready(0, now)),
        available_replicas: count(&|p| p.is_available(w.min_ready_seconds, now)),
        updated_replicas: updated,
        updated_ready_replicas: count(&|p| on_update(p) && p.is_update_ready(0, now)),
        expected_updated_replicas: intstr::expected_updated_replicas(
            w.partition.as_ref(),
            w.replicas,
        ),
        updated_after_next_step: updated + moved_now,
        updated_at_convergence: updated + moved_total,
    }
}

fn plan_delete(
    input: &PlanInput,
    w: &PlanWorkload,
    pods: &[PodInfo],
    numbers: StrategyNumbers,
    status: PlanStatus,
) -> Plan {
    let refs: Vec<&PodInfo> = pods.iter().collect();
    let ranks = pod_sort::same_node_ranks(&refs);
    let min_ready = w.min_ready_seconds;
    let now = input.now;
    let available = move |p: &PodInfo| p.is_available(min_ready, now);
    let order = DeletionOrder {
        ranks: Some(&ranks),
        available: Some(&available),
    };
    let mut sorted = refs;
    order.sort(&mut sorted);
    let denied = match &input.guards.protection {
        Some(Protection::Denied(why)) => Some(why.clone()),
        _ => None,
    };
    let mut budget = input
        .guards
        .pub_unavailable_allowed
        .filter(|_| input.gates.enabled("PodUnavailableBudgetDeleteGate"));
    let moves = sorted
        .into_iter()
        .map(|pod| {
            let blocked = if let Some(why) = &denied {
                Some(Blocker::Protection(why.clone()))
            } else if let Some(left) = budget.as_mut().filter(|_| available(pod)) {
                if *left > 0 {
                    *left -= 1;
                    None
                } else {
                    Some(Blocker::PodUnavailableBudget)
                }
            } else {
                None
            };
            PlannedPod {
                name: pod.name.clone(),
                from_revision: pod.revision.clone(),
                to_revision: String::new(),
                action: Action::Delete,
                blocked,
            }
        })
        .collect();
    let mut notes = Vec::new();
    if denied.is_some() {
        notes.push("deletion protection refuses this delete: nothing is deleted".to_owned());
    }
    Plan {
        kind: w.kind,
        name: w.name.clone(),
        partition: numbers.partition,
        max_unavailable: numbers.max_unavailable,
        max_surge: numbers.max_surge,
        paused: w.paused,
        current_revision: w.current_revision.clone(),
        update_revision: w.update_revision.clone(),
        direction: Direction::Delete,
        moves,
        skipped: Vec::new(),
        status: PlanStatus {
            updated_after_next_step: status.updated_replicas,
            updated_at_convergence: 0,
            ..status
        },
        diffs: Default::default(),
        notes,
    }
}
