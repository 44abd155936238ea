//! Node selection, budgets and one rolling-update pass of an Advanced DaemonSet.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{DsNode, DsPod, DsSpec, DsUpdateStrategyType, NodeToPods, RollingUpdateType};
use crate::kruise::{KruiseVersion, intstr::scaled_value_apimachinery, selector};

/// The partition in nodes.
///
/// v1.9.0 (`filterDaemonPodsNodeToUpdate`, `manage`): `intstrutil.GetScaledValueFromIntOrPercent(
/// partition, status.desiredNumberScheduled, false)`: an int as is, a percent of the last
/// desired node count rounded down, any other string an error. v1.8.4's field is an int32, so
/// a string cannot reach its controller (its schema refuses one): an error here too.
pub fn resolve_partition(
    partition: &IntOrString,
    desired_number_scheduled: i32,
    version: KruiseVersion,
) -> Result<i32, String> {
    match (partition, version) {
        (IntOrString::Int(n), _) => Ok(*n),
        (IntOrString::String(s), KruiseVersion::V1_8) => Err(format!(
            "partition {s:?} is not an int32 (a percent partition needs Kruise v1.9.0)"
        )),
        (value, KruiseVersion::V1_9) => {
            scaled_value_apimachinery(value, desired_number_scheduled, false)
                .map_err(|e| format!("invalid value for IntOrString: {e}"))
        }
    }
}

/// [`resolve_partition`] of `spec`'s partition (0 when there is no rolling update).
pub fn partition_nodes(spec: &DsSpec, version: KruiseVersion) -> Result<i32, String> {
    spec.rolling_update.as_ref().map_or(Ok(0), |r| {
        resolve_partition(&r.partition, spec.desired_number_scheduled, version)
    })
}

/// Port of pkg/controller/daemonset/daemonset_util.go::findUpdatedPodsOnNode (v1.8.4).
///
/// Skips terminating pods; returns `None` when a node has more than one new or more than one old
/// pod (the manage loop prunes those first).
pub fn find_updated_pods_on_node<'a>(
    spec: &DsSpec,
    pods: &'a [DsPod],
    hash: &str,
) -> Option<(Option<&'a DsPod>, Option<&'a DsPod>)> {
    let mut new_pod = None;
    let mut old_pod = None;
    for pod in pods.iter().filter(|p| !p.terminating) {
        let slot = if pod.is_updated(hash, spec.template_generation) {
            &mut new_pod
        } else {
            &mut old_pod
        };
        if slot.is_some() {
            return None;
        }
        *slot = Some(pod);
    }
    Some((new_pod, old_pod))
}

fn nil_or_pre_deleting(pod: Option<&DsPod>) -> bool {
    pod.is_none_or(DsPod::is_pre_deleting)
}

/// Port of pkg/controller/daemonset/daemonset_update.go::filterDaemonPodsNodeToUpdate (v1.8.4,
/// v1.9.0).
///
/// Walks the nodes of `node_to_pods` in reverse name order and lists, in this order: nodes
/// already updated (or with excess pods), nodes updating (no usable old pod), then nodes matching
/// the update selector (or, without a selector, every other node). The list is capped at
/// `nodes - partition` (the partition in nodes, [`partition_nodes`]; one that does not resolve
/// fails the rolling update). `nodes` is only read to match the selector.
pub fn filter_nodes_to_update(
    spec: &DsSpec,
    hash: &str,
    node_to_pods: &NodeToPods,
    nodes: &[DsNode],
    version: KruiseVersion,
) -> Result<Vec<String>, String> {
    let rolling = spec.rolling_update.as_ref();
    let partition = partition_nodes(spec, version)
        .map_err(|e| format!("failed to get partition value: {e}"))?;
    let selector = rolling.and_then(|r| r.selector.as_ref());
    let by_name: BTreeMap<&str, &DsNode> = nodes.iter().map(|n| (n.name.as_str(), n)).collect();
    let (mut updated, mut updating, mut selected, mut rest) = (vec![], vec![], vec![], vec![]);
    for (name, pods) in node_to_pods.iter().rev() {
        match find_updated_pods_on_node(spec, pods, hash) {
            None | Some((Some(_), _)) => {
                updated.push(name.clone());
                continue;
            }
            Some((None, old)) if nil_or_pre_deleting(old) => {
                updating.push(name.clone());
                continue;
            }
            Some(_) => {}
        }
        if let Some(sel) = selector {
            let node = by_name
                .get(name.as_str())
                .ok_or_else(|| format!("failed to get node {name}: node \"{name}\" not found"))?;
            if selector::matches(sel, &node.labels).map_err(|e| e.to_string())? {
                selected.push(name.clone());
                continue;
            }
        }
        rest.push(name.clone());
    }
    let mut sorted = updated;
    sorted.extend(updating);
    sorted.extend(if selector.is_some() { selected } else { rest });
    let max_update = i64::try_from(node_to_pods.len()).unwrap_or(i64::MAX) - i64::from(partition);
    if max_update <= 0 {
        return Ok(Vec::new());
    }
    sorted.truncate(usize::try_from(max_update).unwrap_or(usize::MAX));
    Ok(sorted)
}

/// Port of pkg/controller/daemonset/daemonset_util.go::surgeCount / unavailableCount (v1.8.4).
fn budget(spec: &DsSpec, surge: bool, desired: i32) -> Result<i32, String> {
    if spec.update_strategy_type != DsUpdateStrategyType::RollingUpdate {
        return Ok(0);
    }
    let Some(rolling) = &spec.rolling_update else {
        return Ok(0);
    };
    let value = if surge {
        &rolling.max_surge
    } else {
        &rolling.max_unavailable
    };
    value.as_ref().map_or(Ok(0), |v| {
        scaled_value_apimachinery(v, desired, true).map_err(|e| e.to_string())
    })
}

/// Port of pkg/controller/daemonset/daemonset_update.go::updatedDesiredNodeCounts (v1.8.4).
///
/// Returns `(maxSurge, maxUnavailable, emptyNodes)` and adds an empty entry to `node_to_pods`
/// for every node that should run a pod but has none. When both budgets are 0 and some node
/// should run the pod, maxUnavailable becomes 1.
pub fn updated_desired_node_counts(
    spec: &DsSpec,
    nodes_that_should_run: &[String],
    node_to_pods: &mut NodeToPods,
) -> Result<(i32, i32, usize), String> {
    let mut empty = 0;
    for name in nodes_that_should_run {
        // A node already listed without pods is as empty as one that was missing.
        if node_to_pods.entry(name.clone()).or_default().is_empty() {
            empty += 1;
        }
    }
    let desired = i32::try_from(nodes_that_should_run.len()).unwrap_or(i32::MAX);
    let mut max_unavailable = budget(spec, false, desired)
        .map_err(|e| format!("invalid value for MaxUnavailable: {e}"))?;
    let max_surge =
        budget(spec, true, desired).map_err(|e| format!("invalid value for MaxSurge: {e}"))?;
    if desired > 0 && max_unavailable == 0 && max_surge == 0 {
        max_unavailable = 1;
    }
    Ok((max_surge, max_unavailable, empty))
}

/// The outcome of one rolling-update pass.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DsRollingStep {
    /// The rolling update is paused: nothing is replaced.
    pub paused: bool,
    /// Surge budget.
    pub max_surge: i32,
    /// Unavailability budget.
    pub max_unavailable: i32,
    /// Nodes allowed to update, in priority order.
    pub nodes_to_update: Vec<String>,
    /// Nodes counted as unavailable (no surge) or surging (surge) before the pass.
    pub in_flight: usize,
    /// Old pods deleted this pass.
    pub pods_to_delete: Vec<String>,
    /// Old pods updated in place this pass (InPlaceIfPossible).
    pub pods_in_place: Vec<String>,
    /// Nodes that get a new (surge) pod this pass.
    pub nodes_to_create: Vec<String>,
}

/// Port of pkg/controller/daemonset/daemonset_update.go::rollingUpdate (v1.8.4).
///
/// `nodes` is the cluster's node list, `nodes_that_should_run` the nodes the pod should run on.
/// Upstream walks a Go map (random order); this walks the nodes in update priority order, so the
/// choice among equal candidates is the one [`filter_nodes_to_update`] ranks first.
/// `can_update_in_place` decides per pod whether InPlaceIfPossible may patch it.
pub fn rolling_update_step(
    spec: &DsSpec,
    hash: &str,
    nodes: &[DsNode],
    nodes_that_should_run: &[String],
    node_to_pods: &NodeToPods,
    can_update_in_place: &dyn Fn(&DsPod) -> bool,
    version: KruiseVersion,
) -> Result<DsRollingStep, String> {
    let mut map = node_to_pods.clone();
    let (max_surge, max_unavailable, _) =
        updated_desired_node_counts(spec, nodes_that_should_run, &mut map)?;
    let mut step = DsRollingStep {
        max_surge,
        max_unavailable,
        ..Default::default()
    };
    if spec.rolling_update.as_ref().is_some_and(|r| r.paused) {
        step.paused = true;
        return Ok(step);
    }
    map.retain(|name, _| nodes.iter().any(|n| &n.name == name));
    step.nodes_to_update = filter_nodes_to_update(spec, hash, &map, nodes, version)?;
    let min_ready = spec.min_ready_seconds;
    let to_update = step.nodes_to_update.clone();
    if max_surge == 0 {
        let mut allowed = Vec::new();
        let mut candidates = Vec::new();
        let mut unavailable = 0i32;
        for name in &to_update {
            let pods = map.get(name).map_or(&[][..], Vec::as_slice);
            let Some((new_pod, old_pod)) = find_updated_pods_on_node(spec, pods, hash) else {
                unavailable += 1;
                continue;
            };
            match (new_pod, old_pod) {
                (n, o) if nil_or_pre_deleting(o) == nil_or_pre_deleting(n) => unavailable += 1,
                (Some(n), _) => {
                    if !n.is_available(min_ready) {
                        unavailable += 1;
                    }
                    if n.is_pre_deleting() {
                        unavailable += 1;
                    }
                }
                (None, Some(o)) if !o.is_available(min_ready) => allowed.push(o.name.clone()),
                (None, Some(_)) if unavailable >= max_unavailable => {}
                (None, Some(o)) => candidates.push(o.name.clone()),
                (None, None) => {}
            }
        }
        step.in_flight = usize::try_from(unavailable).unwrap_or(0);
        let remaining = usize::try_from((max_unavailable - unavailable).max(0)).unwrap_or(0);
        candidates.truncate(remaining);
        allowed.extend(candidates);
        let in_place_type = spec
            .rolling_update
            .as_ref()
            .is_some_and(|r| r.rolling_update_type == RollingUpdateType::InPlaceIfPossible);
        if in_place_type {
            let burst = usize::try_from(spec.burst_replicas.unwrap_or(250)).unwrap_or(0);
            let pods: BTreeMap<&str, &DsPod> = map
                .values()
                .flatten()
                .map(|p| (p.name.as_str(), p))
                .collect();
            for name in allowed {
                let fits = pods
                    .get(name.as_str())
                    .is_some_and(|p| can_update_in_place(p));
                if fits && step.pods_in_place.len() < burst {
                    step.pods_in_place.push(name);
                } else {
                    step.pods_to_delete.push(name);
                }
            }
        } else {
            step.pods_to_delete = allowed;
        }
        return Ok(step);
    }
    let mut allowed_nodes = Vec::new();
    let mut candidate_nodes = Vec::new();
    let mut surging = 0i32;
    for name in &to_update {
        let pods = map.get(name).map_or(&[][..], Vec::as_slice);
        let Some((new_pod, old_pod)) = find_updated_pods_on_node(spec, pods, hash) else {
            surging += 1;
            continue;
        };
        match (new_pod, old_pod) {
            (_, o) if nil_or_pre_deleting(o) => {}
            (None, Some(o)) if !o.is_available(min_ready) => allowed_nodes.push(name.clone()),
            (None, Some(_)) if surging >= max_surge => {}
            (None, Some(_)) => candidate_nodes.push(name.clone()),
            (Some(n), Some(o)) => {
                if !n.is_available(min_ready) || n.is_pre_deleting() {
                    surging += 1;
                } else {
                    step.pods_to_delete.push(o.name.clone());
                }
            }
            (_, None) => {}
        }
    }
    step.in_flight = usize::try_from(surging).unwrap_or(0);
    let remaining = usize::try_from((max_surge - surging).max(0)).unwrap_or(0);
    candidate_nodes.truncate(remaining);
    allowed_nodes.extend(candidate_nodes);
    step.nodes_to_create = allowed_nodes;
    Ok(step)
}
