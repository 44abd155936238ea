//! Evaluators for: statefulset_partition deletion_protection pub_budget; the Advanced DaemonSet
//! files in [`daemonset`], the Advanced StatefulSet files of v1.9.0's changes in [`statefulset`].

mod daemonset;
mod statefulset;

pub use daemonset::{daemonset_admission, daemonset_partition, daemonset_partition_percent};
pub use statefulset::{statefulset_parallel, statefulset_pvc_labels};

use serde_json::{Value, json};

use kruise_tui::kruise::{
    FeatureGates, KruiseVersion, protection, pub_budget as pubb, statefulset as asts,
};

use super::common::{expect_eq, expect_field_errors, expect_subset, expected, input, parse};

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

fn field<'a>(v: &'a Value, name: &str) -> Result<&'a Value, String> {
    v.get(name)
        .ok_or_else(|| format!("input.{name} is missing"))
}

fn sorted_names<'a>(names: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = names.into_iter().cloned().collect();
    out.sort();
    out
}

/// Sorts the name lists of `expected` so they compare as sets.
fn normalize_lists(v: &Value, keys: &[&str]) -> Value {
    let mut v = v.clone();
    for key in keys {
        if let Some(Value::Array(items)) = v.get_mut(*key) {
            items.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        }
    }
    v
}

fn prior_ages(v: &Value, key: &str) -> Result<std::collections::BTreeMap<String, i64>, String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|arr| {
            arr.iter()
                .map(|e| {
                    Ok((
                        str_field(e, "name")?.to_owned(),
                        e.get("ageSeconds").and_then(Value::as_i64).unwrap_or(0),
                    ))
                })
                .collect()
        })
        .unwrap_or_else(|| Ok(Default::default()))
}

fn pub_status_case(input: &Value) -> Result<Value, String> {
    let pub_: pubb::PodUnavailableBudget = parse("pub", field(input, "pub")?)?;
    let resolved = field(input, "resolved")?;
    let counted: Vec<String> = parse("resolved.countedPods", field(resolved, "countedPods")?)?;
    let pods: Vec<pubb::PubPod> = field(input, "pods")?
        .as_array()
        .ok_or("input.pods is not a list")?
        .iter()
        .map(|p| {
            Ok(pubb::PubPod {
                name: str_field(p, "name")?.to_owned(),
                active: p.get("active").and_then(Value::as_bool).unwrap_or(false),
                ready: p.get("ready").and_then(Value::as_bool).unwrap_or(false),
                consistent: p
                    .get("consistent")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            })
        })
        .collect::<Result<Vec<_>, String>>()?
        .into_iter()
        .filter(|p| counted.contains(&p.name))
        .collect();
    let prior_v = field(input, "priorStatus")?;
    let prior = pubb::PriorRecords {
        disrupted: prior_ages(prior_v, "disruptedPods")?,
        unavailable: prior_ages(prior_v, "unavailablePods")?,
    };
    let total = int(resolved, "totalReplicas")?;
    let st = pubb::pub_status(&pub_.spec, total, &pods, &prior)?;
    Ok(json!({
        "unavailableAllowed": st.unavailable_allowed,
        "currentAvailable": st.current_available,
        "desiredAvailable": st.desired_available,
        "totalReplicas": st.total_replicas,
        "disruptedPods": sorted_names(st.disrupted_pods.keys()),
        "unavailablePods": sorted_names(st.unavailable_pods.keys()),
    }))
}

fn pod_admission_case(input: &Value) -> Result<Value, String> {
    let gates = gates_from(input, FeatureGates::all_on());
    let request = field(input, "request")?;
    let mut pub_: pubb::PodUnavailableBudget = parse("pub", field(input, "pub")?)?;
    let pod_of = |name: &str| -> Result<Option<k8s_openapi::api::core::v1::Pod>, String> {
        input.get(name).map(|p| parse(name, p)).transpose()
    };
    let (pod, old_pod, new_pod) = (pod_of("pod")?, pod_of("oldPod")?, pod_of("newPod")?);
    let operation = str_field(request, "operation")?;
    let dry_run = request
        .get("dryRun")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let now = "2025-01-01T00:00:10Z";
    let verdict = if request.get("note").is_some() {
        // Upstream calls PodUnavailableBudgetValidatePod(pod, operation) directly.
        let op = match operation {
            "UPDATE" => pubb::PubOperation::Update,
            "DELETE" => pubb::PubOperation::Delete,
            other => {
                return Err(format!(
                    "direct validation of {other:?} is not a PUB operation"
                ));
            }
        };
        let pod = pod.as_ref().ok_or("input.pod is missing")?;
        pubb::admission::validate_pod(pod, op, dry_run, Some(&mut pub_), now)
    } else {
        let req = pubb::PodAdmissionRequest {
            operation,
            sub_resource: request
                .get("subResource")
                .and_then(Value::as_str)
                .unwrap_or(""),
            dry_run,
            old_pod: if operation == "DELETE" {
                pod.as_ref()
            } else {
                old_pod.as_ref()
            },
            new_pod: new_pod.as_ref(),
            pod: pod.as_ref(),
        };
        pubb::pod_admission(&gates, &req, Some(&mut pub_), now)
    };
    let mut out = json!({
        "allowed": verdict.allowed,
        "pubStatusAfter": {
            "unavailableAllowed": pub_.status.unavailable_allowed,
            "disruptedPods": sorted_names(pub_.status.disrupted_pods.keys()),
            "unavailablePods": sorted_names(pub_.status.unavailable_pods.keys()),
        },
    });
    if !verdict.allowed {
        out["code"] = json!(verdict.code);
        out["message"] = json!(verdict.message);
    }
    Ok(out)
}

pub fn pub_budget(op: Option<&str>, case: &Value) -> Result<(), String> {
    let input = input(case)?;
    let expected = expected(case)?;
    let actual = match op {
        Some("pubStatus") => {
            let expected = normalize_lists(expected, &["disruptedPods", "unavailablePods"]);
            return expect_eq(&expected, &pub_status_case(input)?);
        }
        Some("pubReconcile") => {
            return expect_eq(expected, &super::pub_reconcile::pub_reconcile(input)?);
        }
        Some("desiredAvailable") => {
            let spec: pubb::PodUnavailableBudgetSpec = parse("spec", field(input, "spec")?)?;
            json!({ "desiredAvailable": pubb::desired_available(&spec, int(input, "totalReplicas")?)? })
        }
        Some("podAdmission") => {
            let mut expected = expected.clone();
            if let Some(after) = expected.get("pubStatusAfter") {
                expected["pubStatusAfter"] =
                    normalize_lists(after, &["disruptedPods", "unavailablePods"]);
            }
            let actual = pod_admission_case(input)?;
            // An allowed answer carries no message; its code (200) is not asserted upstream.
            if expected["allowed"] == json!(true) && actual.get("message").is_some() {
                return Err(format!("allowed answer with a message: {actual}"));
            }
            return expect_subset(&expected, &actual);
        }
        Some("isPodUnavailableChanged") => {
            let old: k8s_openapi::api::core::v1::Pod = parse("oldPod", field(input, "oldPod")?)?;
            let new: k8s_openapi::api::core::v1::Pod = parse("newPod", field(input, "newPod")?)?;
            json!({ "changed": pubb::is_pod_unavailable_changed(Some(&old), Some(&new)) })
        }
        Some("isPodReady") => {
            let pod: k8s_openapi::api::core::v1::Pod = parse("pod", field(input, "pod")?)?;
            json!({ "ready": pubb::is_pod_ready(&pod) })
        }
        Some("pubValidation") => {
            let obj: pubb::PodUnavailableBudget = parse("object", field(input, "object")?)?;
            let old: Option<pubb::PodUnavailableBudget> = input
                .get("oldObject")
                .map(|o| parse("oldObject", o))
                .transpose()?;
            let others: Vec<pubb::PodUnavailableBudget> = parse(
                "otherPubsInCluster",
                input.get("otherPubsInCluster").unwrap_or(&json!([])),
            )?;
            let errors = pubb::validate_pub(&obj, old.as_ref(), &others);
            return expect_field_errors(expected, &errors);
        }
        Some("matchExpOverlap") => {
            let a = parse("a", field(input, "a")?)?;
            let b = parse("b", field(input, "b")?)?;
            json!({ "overlap": pubb::validation::requirement_overlap(&a, &b) })
        }
        Some("selectorLooseOverlap") => {
            let a = parse("a", field(input, "a")?)?;
            let b = parse("b", field(input, "b")?)?;
            json!({ "overlap": pubb::selector_loose_overlap(&a, &b) })
        }
        other => return Err(format!("unknown op {other:?} for pub")),
    };
    expect_eq(expected, &actual)
}
