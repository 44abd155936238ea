//! What an action would do, before it is sent: the served objects (a workload as JSON, its pods,
//! for an Advanced DaemonSet the nodes) mapped to the plan API's input, and an [`Action`] mapped
//! to the plan API's [`Change`]. Pure (no IO): the console's confirm dialog and the subcommands
//! (`plan`, `rollout`, `set image`) call the same functions, on objects they read themselves.
//!
//! [`plan_input_from_objects`] (CloneSet), [`asts_plan_input_from_objects`] and
//! [`ads::ads_plan_input_from_objects`] build the input for a partition change;
//! [`preview_input`] builds it for any action on the object an action was prepared on, with
//! [`change_for`] choosing the change.
//!
//! [`Action`]: super::Action

pub mod ads;
mod change;

use anyhow::{Context as _, Result, anyhow};
use k8s_openapi::{
    api::core::v1::Pod,
    apimachinery::pkg::{apis::meta::v1::ObjectMeta, util::intstr::IntOrString},
};
use serde_json::Value;

pub use change::{change_for, live_input, preview_input, workload_kind};

use crate::{
    api::cloneset::from_served_json,
    kruise::{
        FeatureGates, KruiseVersion,
        cloneset::{
            DELETION_COST_ANNOTATION, EXCLUDE_PREPARING_DELETE_LABEL, SPECIFIED_DELETE_LABEL,
            inplace,
        },
        plan::{Change, Guards, PlanInput, PlanPod, PlanWorkload, WorkloadKind},
        revision,
        statefulset::RollingUpdate,
    },
};

/// Maps a served Advanced StatefulSet (v1beta1 or v1alpha1 JSON) and its listed pods to the
/// planner's input for `--partition partition`.
pub fn asts_plan_input_from_objects(
    json: Value,
    pods: &[Pod],
    partition: &str,
    now: i64,
) -> Result<PlanInput> {
    let (workload, meta) = asts_workload(&json)?;
    Ok(partition_input(workload, &meta, pods, partition, now))
}

/// The planner's view of a served Advanced StatefulSet (v1beta1 or v1alpha1 JSON).
pub fn asts_workload(json: &Value) -> Result<(PlanWorkload, ObjectMeta)> {
    let meta: ObjectMeta = json
        .get("metadata")
        .map(|m| serde_json::from_value(m.clone()))
        .transpose()
        .context("cannot read the metadata")?
        .unwrap_or_default();
    let name = meta.name.clone().unwrap_or_default();
    let field = |pointer: &str| json.pointer(pointer).filter(|v| !v.is_null()).cloned();
    let rolling: Option<RollingUpdate> = field("/spec/updateStrategy/rollingUpdate")
        .map(serde_json::from_value)
        .transpose()
        .context("cannot read updateStrategy.rollingUpdate")?;
    // The controller's reading of the spec (upstream's defaults included), so the plan predicts
    // what the embedded controller does. v1alpha1 and v1beta1 read alike.
    let set = crate::api::statefulset::from_served_json("v1beta1", json.clone())
        .context("cannot read the Advanced StatefulSet")?;
    let asts = crate::kruise::statefulset::reconcile::spec_of(&set);
    let revision_of =
        |key: &str| field(&format!("/status/{key}")).and_then(|v| v.as_str().map(str::to_owned));
    let update_revision = revision_of("updateRevision").ok_or_else(|| {
        anyhow!("Advanced StatefulSet {name} has no status yet: its controller has not seen it")
    })?;
    let workload = PlanWorkload {
        kind: WorkloadKind::AdvancedStatefulSet,
        namespace: meta.namespace.clone().unwrap_or_default(),
        name: name.clone(),
        replicas: asts.replicas,
        partition: rolling.as_ref().map(|r| IntOrString::Int(r.partition)),
        max_unavailable: rolling.as_ref().and_then(|r| r.max_unavailable.clone()),
        paused: rolling.as_ref().is_some_and(|r| r.paused),
        current_revision: revision_of("currentRevision").unwrap_or_else(|| update_revision.clone()),
        update_revision,
        strategy_type: field("/spec/updateStrategy/rollingUpdate/podUpdatePolicy")
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| {
                WorkloadKind::AdvancedStatefulSet
                    .default_update_policy()
                    .unwrap_or_default()
                    .to_owned()
            }),
        min_ready_seconds: rolling.as_ref().map_or(0, |r| r.min_ready_seconds),
        asts: Some(asts),
        ..PlanWorkload::default()
    };
    Ok((workload, meta))
}

fn strategy_field<'a>(json: &'a Value, key: &str) -> Option<&'a Value> {
    let strategy = json.pointer("/spec/updateStrategy")?;
    strategy
        .get(key)
        .or_else(|| strategy.pointer(&format!("/rollingUpdate/{key}")))
        .filter(|v| !v.is_null())
}

fn parse_strategy<T: serde::de::DeserializeOwned>(json: &Value, key: &str) -> Result<Option<T>> {
    strategy_field(json, key)
        .map(|v| serde_json::from_value(v.clone()))
        .transpose()
        .with_context(|| format!("cannot read updateStrategy.{key}"))
}

/// Maps a served CloneSet (JSON, in its served `version`) and its listed pods to the planner's
/// input for `--partition partition`.
pub fn plan_input_from_objects(
    version: &str,
    json: Value,
    pods: &[Pod],
    partition: &str,
    now: i64,
) -> Result<PlanInput> {
    let (workload, meta) = cloneset_workload(version, &json)?;
    Ok(partition_input(workload, &meta, pods, partition, now))
}

/// The planner's view of a served CloneSet (JSON, in its served `version`).
pub fn cloneset_workload(version: &str, json: &Value) -> Result<(PlanWorkload, ObjectMeta)> {
    let cs = from_served_json(version, json.clone()).context("cannot read the CloneSet")?;
    let meta = &cs.metadata;
    let name = meta.name.clone().unwrap_or_default();
    let status = cs.status.clone().ok_or_else(|| {
        anyhow!("CloneSet {name} has no status yet: its controller has not seen it")
    })?;
    let strategy = &cs.spec.update_strategy;
    let mut strategy_type = strategy.type_.clone().unwrap_or_default();
    if matches!(strategy_type.as_str(), "RollingUpdate" | "OnDelete") {
        strategy_type = strategy_field(json, "podUpdatePolicy")
            .and_then(Value::as_str)
            .unwrap_or("ReCreate")
            .to_owned();
    }
    let scale = json.pointer("/spec/scaleStrategy");
    let workload = PlanWorkload {
        kind: WorkloadKind::CloneSet,
        namespace: meta.namespace.clone().unwrap_or_default(),
        name: name.clone(),
        replicas: cs.spec.replicas.unwrap_or(1),
        partition: strategy.partition.clone(),
        max_unavailable: strategy.max_unavailable.clone(),
        max_surge: strategy.max_surge.clone(),
        paused: strategy.paused,
        current_revision: status.current_revision.clone(),
        update_revision: status.update_revision.clone(),
        strategy_type,
        priority: parse_strategy(json, "priorityStrategy")?,
        scatter: parse_strategy(json, "scatterStrategy")?.unwrap_or_default(),
        min_ready_seconds: cs.spec.min_ready_seconds.unwrap_or(0),
        scale_max_unavailable: scale
            .and_then(|s| s.get("maxUnavailable"))
            .filter(|v| !v.is_null())
            .map(|v| serde_json::from_value(v.clone()))
            .transpose()
            .context("cannot read scaleStrategy.maxUnavailable")?,
        exclude_preparing_delete: meta
            .labels
            .as_ref()
            .and_then(|l| l.get(EXCLUDE_PREPARING_DELETE_LABEL))
            .is_some_and(|v| v == "true")
            || scale
                .and_then(|s| s.get("excludePreparingDelete"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
        pods_to_delete: scale
            .and_then(|s| s.get("podsToDelete"))
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default(),
        in_place_possible: true,
        lifecycle: json
            .pointer("/spec/lifecycle")
            .filter(|v| !v.is_null())
            .map(|v| serde_json::from_value(v.clone()))
            .transpose()
            .context("cannot read spec.lifecycle")?,
        asts: None,
        ads: None,
    };
    Ok((workload, meta.clone()))
}

/// The planner's input for a partition change: the workload plus its active, owned pods.
pub fn partition_input(
    workload: PlanWorkload,
    meta: &ObjectMeta,
    pods: &[Pod],
    partition: &str,
    now: i64,
) -> PlanInput {
    plan_input(
        workload,
        meta,
        pods,
        Change::Partition(partition.to_owned()),
        now,
    )
}

/// The planner's input for `change`: the workload plus its active, owned pods (upstream's
/// upstream's default feature gates, Kruise v1.8).
pub fn plan_input(
    workload: PlanWorkload,
    meta: &ObjectMeta,
    pods: &[Pod],
    change: Change,
    now: i64,
) -> PlanInput {
    let uid = meta.uid.clone().unwrap_or_default();
    let pods = pods
        .iter()
        .filter(|p| is_active_and_owned(p, &uid))
        .map(plan_pod)
        .collect();
    PlanInput {
        workload,
        pods,
        change,
        guards: Guards::default(),
        gates: FeatureGates::new(),
        // The current release unless the caller knows the cluster's (`kube::gates`).
        version: KruiseVersion::default(),
        now,
    }
}

/// Whether a pod counts for its workload: not terminating, not finished, controlled by
/// `owner_uid` (or by no controller).
pub fn is_active_and_owned(pod: &Pod, owner_uid: &str) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    let owned =
        controller_uid(&pod.metadata).is_none_or(|u| owner_uid.is_empty() || u == owner_uid);
    pod.metadata.deletion_timestamp.is_none()
        && !matches!(phase, Some("Succeeded" | "Failed"))
        && owned
}

fn controller_uid(meta: &ObjectMeta) -> Option<&str> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
        .map(|r| r.uid.as_str())
}

/// The planner's view of one pod.
pub fn plan_pod(pod: &Pod) -> PlanPod {
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    let annotations = pod.metadata.annotations.clone().unwrap_or_default();
    let status = pod.status.clone().unwrap_or_default();
    let conditions = status.conditions.unwrap_or_default();
    let condition = |t: &str| conditions.iter().find(|c| c.type_ == t);
    let ready = crate::api::pod::ready_condition(pod);
    PlanPod {
        name: pod.metadata.name.clone().unwrap_or_default(),
        revision: labels
            .get(revision::CONTROLLER_REVISION_HASH_LABEL)
            .cloned()
            .unwrap_or_default(),
        phase: status.phase.unwrap_or_default(),
        node_name: pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default(),
        ready: ready.is_some(),
        ready_since: ready
            .and_then(|c| c.last_transition_time.as_ref())
            .map(|t| t.0.as_second()),
        in_place_update_ready: condition(inplace::IN_PLACE_UPDATE_READY)
            .is_none_or(|c| c.status == "True"),
        lifecycle_state: labels
            .get(revision::LIFECYCLE_STATE_LABEL)
            .cloned()
            .unwrap_or_default(),
        created: pod
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|t| t.0.as_second()),
        restarts: status
            .container_statuses
            .iter()
            .flatten()
            .map(|c| c.restart_count)
            .max()
            .unwrap_or(0),
        deletion_cost: annotations.get(DELETION_COST_ANNOTATION).cloned(),
        specified_delete: labels.contains_key(SPECIFIED_DELETE_LABEL),
        in_place_grace: annotations.contains_key(inplace::GRACE_KEY)
            || annotations.contains_key(inplace::GRACE_KEY_OLD),
        finalizers: pod.metadata.finalizers.clone().unwrap_or_default(),
        labels,
    }
}
