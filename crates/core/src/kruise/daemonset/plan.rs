//! Partition preview for the plan API: given an Advanced DaemonSet, its nodes and pods and a
//! proposed partition, which nodes would update, in what order, what this pass does, and how
//! many nodes end on the new revision.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{DsNode, DsPod, DsSpec, NodeToPods, update};
use crate::kruise::KruiseVersion;

/// The preview of a partition change (see [`plan_partition`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DsPartitionPlan {
    /// The partition the plan was made for, in nodes (a percent resolved against
    /// [`DsSpec::desired_number_scheduled`]).
    pub partition: i32,
    /// Nodes the partition and selector let update, in priority order (already-updated first).
    pub nodes_to_update: Vec<String>,
    /// Of those, the nodes whose pod is not on the new revision yet, in order.
    pub nodes_waiting: Vec<String>,
    /// Nodes that keep their old pod (by partition or selector), by name.
    pub nodes_kept_old: Vec<String>,
    /// Nodes already on the new revision that the partition would keep old: an Advanced
    /// DaemonSet never rolls them back by partition.
    pub updated_beyond_partition: Vec<String>,
    /// What the next pass does.
    pub this_pass: update::DsRollingStep,
    /// Nodes expected on the new revision once converged.
    pub expected_updated_nodes: usize,
}

/// Previews setting `rollingUpdate.partition` to `partition`.
///
/// `nodes` are the cluster nodes, `nodes_that_should_run` the nodes the daemon should run on,
/// `node_to_pods` the daemon pods by node, `hash` the current revision hash. `version` decides
/// whether a percent partition resolves ([`update::resolve_partition`]).
#[allow(clippy::too_many_arguments)]
pub fn plan_partition(
    spec: &DsSpec,
    hash: &str,
    nodes: &[DsNode],
    nodes_that_should_run: &[String],
    node_to_pods: &NodeToPods,
    partition: &IntOrString,
    can_update_in_place: &dyn Fn(&DsPod) -> bool,
    version: KruiseVersion,
) -> Result<DsPartitionPlan, String> {
    let mut spec = spec.clone();
    let mut rolling = spec.rolling_update.take().unwrap_or_default();
    rolling.partition = partition.clone();
    spec.rolling_update = Some(rolling);
    let partition = update::partition_nodes(&spec, version)?;

    let mut map = node_to_pods.clone();
    update::updated_desired_node_counts(&spec, nodes_that_should_run, &mut map)?;
    map.retain(|name, _| nodes.iter().any(|n| &n.name == name));
    let nodes_to_update = update::filter_nodes_to_update(&spec, hash, &map, nodes, version)?;
    let is_new = |name: &String| {
        let pods = map.get(name).map_or(&[][..], Vec::as_slice);
        update::find_updated_pods_on_node(&spec, pods, hash).is_none_or(|(new, _)| new.is_some())
    };
    let nodes_waiting: Vec<String> = nodes_to_update
        .iter()
        .filter(|n| !is_new(n))
        .cloned()
        .collect();
    let nodes_kept_old: Vec<String> = map
        .keys()
        .filter(|n| !nodes_to_update.contains(n) && !is_new(n))
        .cloned()
        .collect();
    let updated_beyond_partition: Vec<String> = map
        .keys()
        .filter(|n| !nodes_to_update.contains(n) && is_new(n))
        .cloned()
        .collect();
    let this_pass = update::rolling_update_step(
        &spec,
        hash,
        nodes,
        nodes_that_should_run,
        node_to_pods,
        can_update_in_place,
        version,
    )?;
    Ok(DsPartitionPlan {
        partition,
        expected_updated_nodes: nodes_to_update.len() + updated_beyond_partition.len(),
        updated_beyond_partition,
        nodes_to_update,
        nodes_waiting,
        nodes_kept_old,
        this_pass,
    })
}
