//! The Advanced DaemonSet planner: applies the change, then asks
//! [`crate::kruise::daemonset::plan_partition`] (which nodes may update under partition and
//! selector, in what order, and what one pass does under maxUnavailable/maxSurge) and maps its
//! answer onto the kind-neutral [`Plan`]; each move is the old pod of one node.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{
    Action, Blocker, Change, Direction, Plan, PlanError, PlanInput, PlanPod, PlanStatus, PlannedPod,
};
use crate::kruise::{
    KruiseVersion,
    cloneset::ExpectationDiffs,
    daemonset::{
        DsNode, DsPod, DsSpec, NodeToPods, RollingUpdateType, TEMPLATE_GENERATION_LABEL,
        plan_partition,
    },
    intstr::{self, PartitionInputError},
    selector,
};

/// What only an Advanced DaemonSet plan reads: its spec, the cluster's nodes and which of them
/// should run the daemon pod.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AdsInput {
    pub spec: DsSpec,
    /// Every node of the cluster (names and labels, for the update selector).
    pub nodes: Vec<DsNode>,
    /// The nodes the daemon pod should run on (see `kruise::daemonset::nodes_that_should_run`).
    pub nodes_that_should_run: Vec<String>,
}

fn ds_pod(p: &PlanPod, now: i64) -> DsPod {
    DsPod {
        name: p.name.clone(),
        hash: p.revision.clone(),
        template_generation: p.labels.get(TEMPLATE_GENERATION_LABEL).cloned(),
        terminating: false,
        ready: p.ready,
        ready_for_seconds: p.ready_since.filter(|_| p.ready).map(|s| now - s),
        lifecycle_state: p.lifecycle_state.clone(),
    }
}

/// Plans `input.change` on an Advanced DaemonSet (partition, pause, resume, nothing).
pub fn plan_daemonset(input: &PlanInput) -> Result<Plan, PlanError> {
    let w = &input.workload;
    let ads = w.ads.clone().unwrap_or_default();
    let mut spec = ads.spec.clone();
    let mut rolling = spec.rolling_update.take().unwrap_or_default();
    // The generic fields are the live values; they win over the kind-specific copy.
    if let Some(p) = &w.partition {
        rolling.partition = p.clone();
    }
    if w.max_unavailable.is_some() {
        rolling.max_unavailable = w.max_unavailable.clone();
    }
    if w.max_surge.is_some() {
        rolling.max_surge = w.max_surge.clone();
    }
    rolling.paused = w.paused;
    let desired = i32::try_from(ads.nodes_that_should_run.len()).unwrap_or(i32::MAX);
    match &input.change {
        Change::Nothing => {}
        Change::Partition(text) => match intstr::parse_partition_input(text, Some(desired))
            .map_err(|e| match e {
                // An Advanced DaemonSet counts nodes, not replicas.
                PartitionInputError::MoreThanReplicas(p, n) => PlanError::Unsupported(format!(
                    "partition {p} is more than the {n} nodes that should run the daemon pod"
                )),
                other => PlanError::BadPartition(other),
            })? {
            IntOrString::String(s) if input.version == KruiseVersion::V1_8 => {
                return Err(PlanError::Unsupported(format!(
                    "an Advanced DaemonSet partition is a number of nodes in Kruise v1.8.4, not a \
                     percent ({s}); v1.9.0 takes one"
                )));
            }
            p => rolling.partition = p,
        },
        Change::Pause => rolling.paused = true,
        Change::Resume => rolling.paused = false,
        other => {
            return Err(PlanError::Unsupported(format!(
                "Advanced DaemonSet plans cover partition, pause and resume, not {other:?}"
            )));
        }
    }
    let partition = rolling.partition.clone();
    let paused = rolling.paused;
    let in_place_type = rolling.rolling_update_type == RollingUpdateType::InPlaceIfPossible;
    let update_selector = rolling.selector.clone();
    spec.rolling_update = Some(rolling);

    let hash = w.update_revision.as_str();
    let mut node_to_pods = NodeToPods::new();
    for p in input.pods.iter().filter(|p| !p.node_name.is_empty()) {
        node_to_pods
            .entry(p.node_name.clone())
            .or_default()
            .push(ds_pod(p, input.now));
    }
    let in_place_possible = w.in_place_possible;
    let preview = plan_partition(
        &spec,
        hash,
        &ads.nodes,
        &ads.nodes_that_should_run,
        &node_to_pods,
        &partition,
        &|_| in_place_possible,
        input.version,
    )
    .map_err(PlanError::Unsupported)?;
    let pass = &preview.this_pass;

    let old_pod_on = |node: &str| {
        input.pods.iter().find(|p| {
            p.node_name == node && !ds_pod(p, input.now).is_updated(hash, spec.template_generation)
        })
    };
    let default_action = if in_place_type && in_place_possible {
        Action::InPlace
    } else {
        Action::Recreate
    };
    let mut notes = Vec::new();
    let mut moves = Vec::new();
    for node in &preview.nodes_waiting {
        let Some(pod) = old_pod_on(node) else {
            notes.push(format!(
                "node {node} has no pod: the controller creates one on {hash}"
            ));
            continue;
        };
        let now_action = if pass.pods_in_place.contains(&pod.name) {
            Some(Action::InPlace)
        } else if pass.pods_to_delete.contains(&pod.name) || pass.nodes_to_create.contains(node) {
            Some(Action::Recreate)
        } else {
            None
        };
        let blocked = match now_action {
            Some(_) => None,
            None if paused => Some(Blocker::Paused),
            None if pass.max_surge > 0 => Some(Blocker::MaxSurge),
            None => Some(Blocker::MaxUnavailable),
        };
        moves.push(PlannedPod {
            name: pod.name.clone(),
            from_revision: pod.revision.clone(),
            to_revision: hash.to_owned(),
            action: now_action.unwrap_or(default_action),
            blocked,
        });
    }
    let mut skipped = Vec::new();
    for node in &preview.nodes_kept_old {
        let matched = match &update_selector {
            None => true,
            Some(sel) => ads
                .nodes
                .iter()
                .find(|n| &n.name == node)
                .is_some_and(|n| selector::matches(sel, &n.labels).unwrap_or(false)),
        };
        let why = if matched {
            format!("on node {node}, kept on the old revision by the partition")
        } else {
            format!("on node {node}, not matched by the update selector")
        };
        let name =
            old_pod_on(node).map_or_else(|| format!("(no pod on {node})"), |p| p.name.clone());
        skipped.push((name, why));
    }
    if !preview.updated_beyond_partition.is_empty() {
        notes.push(format!(
            "an Advanced DaemonSet never rolls back by partition: nodes {:?} stay on {hash}",
            preview.updated_beyond_partition
        ));
    }
    if let IntOrString::String(p) = &partition {
        notes.push(format!(
            "partition {p} is {} of the {} nodes the last status counted (rounded down)",
            preview.partition, spec.desired_number_scheduled
        ));
    }
    if paused {
        notes.push("the rollout is paused: nothing updates until it is resumed".to_owned());
    }
    if moves.is_empty() {
        notes.push("nothing to move: the pods already match the partition".to_owned());
    }

    let min_ready = spec.min_ready_seconds;
    let pods: Vec<DsPod> = input.pods.iter().map(|p| ds_pod(p, input.now)).collect();
    let count = |f: &dyn Fn(&DsPod) -> bool| {
        i32::try_from(pods.iter().filter(|p| f(p)).count()).unwrap_or(0)
    };
    let on_update = |p: &DsPod| p.is_updated(hash, spec.template_generation);
    let updated = count(&on_update);
    let next = i32::try_from(moves.iter().filter(|m| m.blocked.is_none()).count()).unwrap_or(0);
    let expected = i32::try_from(preview.expected_updated_nodes).unwrap_or(i32::MAX);
    let status = PlanStatus {
        replicas: desired,
        ready_replicas: count(&|p| p.ready),
        available_replicas: count(&|p| p.is_available(min_ready)),
        updated_replicas: updated,
        updated_ready_replicas: count(&|p| on_update(p) && p.ready),
        expected_updated_replicas: expected,
        updated_after_next_step: updated + next,
        updated_at_convergence: if paused { updated } else { expected },
    };
    let current_revision = {
        let old: BTreeSet<&str> = pods
            .iter()
            .filter(|p| !on_update(p))
            .map(|p| p.hash.as_str())
            .collect();
        old.into_iter()
            .next()
            .map_or_else(|| w.update_revision.clone(), str::to_owned)
    };
    Ok(Plan {
        kind: w.kind,
        name: w.name.clone(),
        partition: preview.partition,
        max_unavailable: pass.max_unavailable,
        max_surge: pass.max_surge,
        paused,
        current_revision,
        update_revision: w.update_revision.clone(),
        direction: if moves.is_empty() {
            Direction::None
        } else {
            Direction::Forward
        },
        moves,
        skipped,
        status,
        diffs: ExpectationDiffs::default(),
        notes,
    })
}
