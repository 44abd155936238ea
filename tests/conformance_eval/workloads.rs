//! Evaluators for: statefulset_partition daemonset_partition deletion_protection pub_budget.

use serde_json::{Value, json};

use kruise_tui::kruise::{
    FeatureGates, KruiseVersion, daemonset as ds, protection, statefulset as asts,
};

use super::common::{expect_eq, expected, input, parse};

/// Feature gates from `input.featureGates` over upstream defaults.
fn gates_from(input: &Value, base: FeatureGates) -> FeatureGates {
    let mut gates = base;
    if let Some(map) = input.get("featureGates").and_then(Value::as_object) {
        for (name, on) in map {
            if let Some(on) = on.as_bool() {
                gates.set(name, on);
            }
        }
    }
    gates
}

fn int(v: &Value, field: &str) -> Result<i32, String> {
    v.get(field)
        .and_then(Value::as_i64)
        .and_then(|n| i32::try_from(n).ok())
        .ok_or_else(|| format!("input.{field} is not an int32"))
}

fn str_field<'a>(v: &'a Value, field: &str) -> Result<&'a str, String> {
    v.get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("input.{field} is not a string"))
}

fn slots_from(v: &Value) -> Result<Vec<Option<asts::AstsPod>>, String> {
    let arr = v
        .get("replicaSlots")
        .and_then(Value::as_array)
        .ok_or("input.replicaSlots is missing")?;
    arr.iter()
        .map(|s| {
            if s.is_null() {
                Ok(None)
            } else {
                parse::<asts::AstsPod>("replica slot", s).map(Some)
            }
        })
        .collect()
}

fn rolling_from(v: &Value) -> Result<Option<asts::RollingUpdate>, String> {
    match v.get("rollingUpdate") {
        None | Some(Value::Null) => Ok(None),
        Some(r) => parse("rollingUpdate", r).map(Some),
    }
}

pub fn statefulset_partition(op: Option<&str>, case: &Value) -> Result<(), String> {
    let input = input(case)?;
    let expected = expected(case)?;
    let gates = gates_from(input, FeatureGates::new());
    let actual = match op {
        Some("sortPodsToUpdate") => {
            let rolling = rolling_from(input)?;
            let slots = slots_from(input)?;
            let indexes = asts::sort_pods_to_update(
                rolling.as_ref(),
                str_field(input, "updateRevision")?,
                int(input, "replicas")?,
                &slots,
                &gates,
                KruiseVersion::V1_8,
            );
            json!({ "indexes": indexes })
        }
        Some("replicasRange") => {
            let spec = asts::AstsSpec {
                replicas: int(input, "replicas")?,
                reserve_ordinals: parse(
                    "reserveOrdinals",
                    input.get("reserveOrdinals").unwrap_or(&Value::Null),
                )?,
                ordinals_start: input
                    .get("ordinalsStart")
                    .and_then(Value::as_i64)
                    .and_then(|n| i32::try_from(n).ok()),
                ..Default::default()
            };
            let range = asts::replicas_range(&spec, &gates);
            json!({
                "startOrdinal": range.start,
                "endOrdinalExclusive": range.end,
                "count": range.slot_count(),
                "reserveOrdinals": range.reserved.iter().collect::<Vec<_>>(),
            })
        }
        Some("isCurrentRevisionNeeded") => {
            let spec = asts::AstsSpec {
                replicas: int(input, "replicas")?,
                reserve_ordinals: parse(
                    "reserveOrdinals",
                    input.get("reserveOrdinals").unwrap_or(&Value::Null),
                )?,
                ordinals_start: input
                    .get("ordinalsStart")
                    .and_then(Value::as_i64)
                    .and_then(|n| i32::try_from(n).ok()),
                update_strategy_type: parse(
                    "updateStrategyType",
                    input.get("updateStrategyType").unwrap_or(&Value::Null),
                )?,
                rolling_update: rolling_from(input)?,
                ..Default::default()
            };
            let slots = slots_from(input)?;
            let update_revision = str_field(input, "updateRevision")?;
            // The upstream harness recomputes status.currentReplicas from the slots.
            let current = slots
                .iter()
                .flatten()
                .filter(|p| p.revision != update_revision)
                .count();
            let needed = asts::is_current_revision_needed(
                &spec,
                &gates,
                i32::try_from(current).map_err(|e| e.to_string())?,
                update_revision,
                int(input, "ordinal")?,
                &slots,
            );
            json!({ "currentRevisionNeeded": needed })
        }
        Some("rollingUpdateStep") => {
            let spec = asts::AstsSpec {
                replicas: int(input, "replicas")?,
                pod_management_policy: parse(
                    "podManagementPolicy",
                    input.get("podManagementPolicy").unwrap_or(&Value::Null),
                )?,
                rolling_update: Some(asts::RollingUpdate {
                    partition: int(input, "partition")?,
                    max_unavailable: Some(parse(
                        "maxUnavailable",
                        input.get("maxUnavailable").unwrap_or(&Value::Null),
                    )?),
                    pod_update_policy: parse(
                        "podUpdatePolicy",
                        input.get("podUpdatePolicy").unwrap_or(&Value::Null),
                    )?,
                    ..Default::default()
                }),
                ..Default::default()
            };
            let pods = input
                .get("pods")
                .and_then(Value::as_array)
                .ok_or("input.pods is missing")?
                .iter()
                .map(|p| {
                    Ok(asts::AstsPod {
                        name: format!("ss-{}", int(p, "ordinal")?),
                        revision: str_field(p, "revision")?.to_owned(),
                        phase: str_field(p, "phase")?.to_owned(),
                        ready: p.get("ready").and_then(Value::as_bool).unwrap_or(false),
                        terminating: p
                            .get("terminating")
                            .and_then(Value::as_bool)
                            .unwrap_or(false),
                        ..Default::default()
                    })
                })
                .collect::<Result<Vec<_>, String>>()?;
            let (slots, _) = asts::replica_slots(&spec, &gates, &pods);
            let step = asts::rolling_update_step(
                &spec,
                &gates,
                KruiseVersion::V1_8,
                str_field(input, "updateRevision")?,
                &slots,
                &|_| false,
            )?;
            json!({ "podsDeletedForUpdate": step.deleted_for_update() })
        }
        Some("partitionFinalState") => {
            let before = int(input, "replicasBefore")?;
            let spec = asts::AstsSpec {
                replicas: int(input, "replicasAfter")?,
                pod_management_policy: parse(
                    "podManagementPolicy",
                    input.get("podManagementPolicy").unwrap_or(&Value::Null),
                )?,
                rolling_update: Some(asts::RollingUpdate {
                    partition: int(input, "partition")?,
                    ..Default::default()
                }),
                ..Default::default()
            };
            let pods: Vec<asts::AstsPod> = (0..before)
                .map(|o| asts::AstsPod {
                    name: format!("ss-{o}"),
                    revision: "old".to_owned(),
                    phase: "Running".to_owned(),
                    ready: true,
                    ..Default::default()
                })
                .collect();
            let state =
                asts::converge_partition(&spec, &gates, KruiseVersion::V1_8, &pods, "old", "new")?;
            json!({
                "oldRevisionOrdinals": state.old_revision_ordinals,
                "updateRevisionOrdinals": state.update_revision_ordinals,
            })
        }
        other => return Err(format!("unknown op {other:?} for statefulset-partition")),
    };
    expect_eq(expected, &actual)
}

fn node_to_pods(input: &Value) -> Result<ds::NodeToPods, String> {
    parse(
        "nodeToDaemonPods",
        input.get("nodeToDaemonPods").unwrap_or(&Value::Null),
    )
}

pub fn daemonset_partition(op: Option<&str>, case: &Value) -> Result<(), String> {
    let input = input(case)?;
    let expected = expected(case)?;
    let actual = match op {
        Some("filterNodesToUpdate") => {
            let spec = ds::DsSpec {
                rolling_update: Some(ds::DsRollingUpdate {
                    rolling_update_type: parse(
                        "rollingUpdateType",
                        input.get("rollingUpdateType").unwrap_or(&Value::Null),
                    )?,
                    partition: int(input, "partition")?,
                    selector: parse("selector", input.get("selector").unwrap_or(&Value::Null))?,
                    ..Default::default()
                }),
                ..Default::default()
            };
            let nodes: Vec<ds::DsNode> =
                parse("nodes", input.get("nodes").unwrap_or(&Value::Null))?;
            let chosen = ds::filter_nodes_to_update(
                &spec,
                str_field(input, "hash")?,
                &node_to_pods(input)?,
                &nodes,
            )?;
            json!({ "nodes": chosen })
        }
        Some("updatedDesiredNodeCounts") => {
            let spec = ds::DsSpec {
                rolling_update: Some(parse(
                    "rollingUpdate",
                    input.get("rollingUpdate").unwrap_or(&Value::Null),
                )?),
                ..Default::default()
            };
            let should_run: Vec<String> = parse(
                "nodesThatShouldRun",
                input.get("nodesThatShouldRun").unwrap_or(&Value::Null),
            )?;
            let mut map = node_to_pods(input)?;
            let (surge, unavailable, empty) =
                ds::updated_desired_node_counts(&spec, &should_run, &mut map)?;
            json!({ "maxSurge": surge, "maxUnavailable": unavailable, "emptyNodes": empty })
        }
        other => return Err(format!("unknown op {other:?} for daemonset-partition")),
    };
    expect_eq(expected, &actual)
}

pub fn deletion_protection(op: Option<&str>, case: &Value) -> Result<(), String> {
    if let Some(op) = op {
        return Err(format!("deletion-protection has no ops, got {op:?}"));
    }
    let input = input(case)?;
    let gates = gates_from(input, FeatureGates::new());
    let request = input.get("request").ok_or("input.request is missing")?;
    let facts: protection::ClusterFacts =
        parse("cluster", input.get("cluster").unwrap_or(&json!({})))?;
    let verdict = protection::validate_deletion(
        &gates,
        str_field(request, "operation")?,
        request
            .get("subResource")
            .and_then(Value::as_str)
            .unwrap_or(""),
        input.get("oldObject"),
        &facts,
    );
    let actual = serde_json::to_value(&verdict).map_err(|e| e.to_string())?;
    expect_eq(expected(case)?, &actual)
}

pub fn pub_budget(_op: Option<&str>, _case: &Value) -> Result<(), String> {
    Err("not evaluated yet".to_owned())
}
