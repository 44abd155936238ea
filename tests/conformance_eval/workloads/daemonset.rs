//! Evaluators for the Advanced DaemonSet files: daemonset-partition (node choice, budgets),
//! daemonset-partition-percent (v1.9.0's int-or-percent partition) and daemonset-admission
//! (the validating webhook).
//!
//! Every case runs at both Kruise versions: v1.9.0 against `expected`, v1.8.4 against
//! `expected_v1_8_4` when the case has one, else against `expected` too (the versions agree).

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Value, json};

use kruise_tui::kruise::{KruiseVersion, daemonset as ds};

use super::super::common::{expect_eq, expected, input, parse};
use super::{int, str_field};

/// Runs `run` at v1.9.0 and v1.8.4 and compares each with its expectation.
pub(super) fn at_both_versions(
    case: &Value,
    run: impl Fn(KruiseVersion) -> Result<Value, String>,
) -> Result<(), String> {
    let v19 = expected(case)?;
    expect_eq(v19, &run(KruiseVersion::V1_9)?).map_err(|e| format!("v1.9.0 behaviour:\n{e}"))?;
    let v18 = case.get("expected_v1_8_4").unwrap_or(v19);
    expect_eq(v18, &run(KruiseVersion::V1_8)?).map_err(|e| format!("v1.8.4 behaviour:\n{e}"))
}

fn node_to_pods(input: &Value) -> Result<ds::NodeToPods, String> {
    parse(
        "nodeToDaemonPods",
        input.get("nodeToDaemonPods").unwrap_or(&Value::Null),
    )
}

fn partition(input: &Value) -> Result<IntOrString, String> {
    parse("partition", input.get("partition").unwrap_or(&json!(0)))
}

fn desired(input: &Value) -> Result<i32, String> {
    match input.get("desiredNumberScheduled") {
        None => Ok(0),
        Some(_) => int(input, "desiredNumberScheduled"),
    }
}

pub fn daemonset_partition(op: Option<&str>, case: &Value) -> Result<(), String> {
    let input = input(case)?;
    match op {
        Some("filterNodesToUpdate") => {
            let spec = ds::DsSpec {
                rolling_update: Some(ds::DsRollingUpdate {
                    rolling_update_type: parse(
                        "rollingUpdateType",
                        input.get("rollingUpdateType").unwrap_or(&Value::Null),
                    )?,
                    partition: partition(input)?,
                    selector: parse("selector", input.get("selector").unwrap_or(&Value::Null))?,
                    ..Default::default()
                }),
                desired_number_scheduled: desired(input)?,
                ..Default::default()
            };
            let nodes: Vec<ds::DsNode> =
                parse("nodes", input.get("nodes").unwrap_or(&Value::Null))?;
            let map = node_to_pods(input)?;
            let hash = str_field(input, "hash")?;
            at_both_versions(case, |version| {
                Ok(
                    match ds::filter_nodes_to_update(&spec, hash, &map, &nodes, version) {
                        Ok(chosen) => json!({ "nodes": chosen }),
                        Err(_) => json!({ "error": true }),
                    },
                )
            })
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
            let actual =
                json!({ "maxSurge": surge, "maxUnavailable": unavailable, "emptyNodes": empty });
            expect_eq(expected(case)?, &actual)
        }
        other => Err(format!("unknown op {other:?} for daemonset-partition")),
    }
}

pub fn daemonset_partition_percent(op: Option<&str>, case: &Value) -> Result<(), String> {
    let input = input(case)?;
    match op {
        Some("resolvePartition") => {
            let p = partition(input)?;
            let total = desired(input)?;
            at_both_versions(case, |version| {
                Ok(match ds::resolve_partition(&p, total, version) {
                    Ok(n) => json!({ "partition": n }),
                    Err(_) => json!({ "error": true }),
                })
            })
        }
        other => Err(format!(
            "unknown op {other:?} for daemonset-partition-percent"
        )),
    }
}

pub fn daemonset_admission(op: Option<&str>, case: &Value) -> Result<(), String> {
    let input = input(case)?;
    match op {
        Some("validateDaemonSet") => {
            let operation = str_field(input, "operation")?;
            let served = str_field(input, "resourceVersion")?;
            let object = input.get("object");
            let old = input.get("oldObject");
            at_both_versions(case, |version| {
                let verdict = ds::validate::admit(operation, served, object, old, version);
                serde_json::to_value(&verdict).map_err(|e| e.to_string())
            })
        }
        other => Err(format!("unknown op {other:?} for daemonset-admission")),
    }
}
