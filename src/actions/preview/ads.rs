//! An Advanced DaemonSet, the cluster's nodes and its pods mapped to the planner's input (pure,
//! tested on fixtures): the planner counts the nodes that should run the daemon pod.

use anyhow::{Context as _, Result, anyhow};
use k8s_openapi::{
    api::core::v1::{Node, Pod},
    apimachinery::pkg::{apis::meta::v1::ObjectMeta, util::intstr::IntOrString},
};
use serde_json::Value;

use super::partition_input;
use crate::{
    api::DaemonSet,
    kruise::{
        daemonset::{DsNode, nodes_that_should_run, reconcile::spec_of},
        plan::{AdsInput, PlanInput, PlanWorkload, WorkloadKind},
    },
};

/// Maps a served Advanced DaemonSet (JSON), the cluster's nodes and the listed pods to the
/// planner's input for `--partition partition`. Pods not owned by it, terminating or finished
/// are left out.
pub fn ads_plan_input_from_objects(
    json: Value,
    nodes: &[Node],
    pods: &[Pod],
    partition: &str,
    now: i64,
) -> Result<PlanInput> {
    let (workload, meta) = ads_workload(&json, nodes)?;
    Ok(partition_input(workload, &meta, pods, partition, now))
}

/// The planner's view of a served Advanced DaemonSet (JSON) on the cluster's `nodes`.
pub fn ads_workload(json: &Value, nodes: &[Node]) -> Result<(PlanWorkload, ObjectMeta)> {
    let ds: DaemonSet = crate::api::daemonset::from_any_served_json(json.clone())
        .context("cannot read the Advanced DaemonSet")?;
    let meta = &ds.metadata;
    let name = meta.name.clone().unwrap_or_default();
    let hash = ds
        .status
        .as_ref()
        .map(|s| s.daemon_set_hash.clone())
        .filter(|h| !h.is_empty())
        .ok_or_else(|| {
            anyhow!("Advanced DaemonSet {name} has no status yet: its controller has not seen it")
        })?;
    let strategy = ds.spec.update_strategy.clone().unwrap_or_default();
    let rolling = strategy.rolling_update.clone().unwrap_or_default();
    // The controller's reading of the spec (upstream's defaults included), so the plan predicts
    // what the embedded controller does.
    let spec = spec_of(&ds);
    let rolling_type = spec
        .rolling_update
        .as_ref()
        .map(|r| r.rolling_update_type)
        .unwrap_or_default();
    let template = ds.spec.template.spec.clone().unwrap_or_default();
    let should_run = nodes_that_should_run(&template, nodes);
    let workload = PlanWorkload {
        kind: WorkloadKind::AdvancedDaemonSet,
        namespace: meta.namespace.clone().unwrap_or_default(),
        name,
        replicas: i32::try_from(should_run.len()).unwrap_or(i32::MAX),
        partition: Some(rolling.partition.clone().unwrap_or(IntOrString::Int(0))),
        max_unavailable: rolling.max_unavailable.clone(),
        max_surge: rolling.max_surge.clone(),
        paused: rolling.paused,
        current_revision: hash.clone(),
        update_revision: hash,
        strategy_type: format!("{rolling_type:?}"),
        min_ready_seconds: spec.min_ready_seconds,
        ads: Some(AdsInput {
            spec,
            nodes: nodes.iter().map(DsNode::from_node).collect(),
            nodes_that_should_run: should_run,
        }),
        ..PlanWorkload::default()
    };
    Ok((workload, meta.clone()))
}
