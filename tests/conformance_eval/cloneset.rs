//! Evaluators for: diffs lifecycle partition scale_down_order scale scatter update_count update_order int_or_percent revision_hash.

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_tui::kruise::{
    FeatureGates, KruiseVersion,
    cloneset::{
        CloneSetParams, EXCLUDE_PREPARING_DELETE_LABEL, ExpectationDiffs, IsPodUpdateMode, PodInfo,
        SPECIFIED_DELETE_LABEL, calculate_diffs,
        inplace::{self, PodModel},
        lifecycle::Lifecycle,
        pod_sort::{self, DeletionOrder, SpreadConstraint},
        scale, update, update_pass,
    },
    intstr, revision,
    updatesort::{self, Labels, PriorityStrategy, ScatterTerm},
};
use serde_json::{Value, json};

use super::common::{expect_assertions, expect_eq, expect_subset, expected, input, parse};

/// The evaluators' clock (unix seconds).
const NOW: i64 = 1_700_000_000;

fn int_or_string(v: &Value) -> Result<Option<IntOrString>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => n
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .map(|n| Some(IntOrString::Int(n)))
            .ok_or_else(|| format!("{n} is not an int32")),
        Value::String(s) => Ok(Some(IntOrString::String(s.clone()))),
        other => Err(format!("{other} is not an int-or-string")),
    }
}

fn field<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get(key).unwrap_or(&Value::Null)
}

fn gates(v: &Value) -> FeatureGates {
    let mut gates = FeatureGates::new();
    if let Some(map) = v.get("featureGates").and_then(Value::as_object) {
        for (k, on) in map {
            gates.set(k, on.as_bool().unwrap_or(false));
        }
    }
    gates
}

fn str_field(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// A vector pod (`{revision, lifecycleState, ready, specifiedDelete, name?, readyForSeconds?}`).
fn vector_pod(i: usize, p: &Value) -> PodInfo {
    let ready = p.get("ready").and_then(Value::as_bool).unwrap_or(false);
    let name = p
        .get("name")
        .and_then(Value::as_str)
        .map_or_else(|| format!("pod-{i}"), str::to_owned);
    PodInfo {
        uid: name.clone(),
        name,
        revision: str_field(p, "revision"),
        lifecycle_state: str_field(p, "lifecycleState"),
        phase: "Running".to_owned(),
        node_name: "node".to_owned(),
        ready,
        in_place_update_ready: true,
        ready_since: p
            .get("readyForSeconds")
            .and_then(Value::as_i64)
            .map(|s| NOW - s),
        specified_delete: p
            .get("specifiedDelete")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        ..PodInfo::default()
    }
}

struct DiffInput {
    cs: CloneSetParams,
    pods: Vec<PodInfo>,
    current: String,
    update: String,
    mode: IsPodUpdateMode,
    gates: FeatureGates,
}

fn diff_input(inp: &Value) -> Result<DiffInput, String> {
    let exclude = inp
        .get("cloneSetLabels")
        .and_then(|l| l.get(EXCLUDE_PREPARING_DELETE_LABEL))
        .and_then(Value::as_str)
        == Some("true");
    let cs = CloneSetParams {
        replicas: field(inp, "replicas")
            .as_i64()
            .and_then(|r| i32::try_from(r).ok())
            .unwrap_or(1),
        partition: int_or_string(field(inp, "partition"))?,
        max_unavailable: int_or_string(field(inp, "maxUnavailable"))?,
        max_surge: int_or_string(field(inp, "maxSurge"))?,
        paused: field(inp, "paused").as_bool().unwrap_or(false),
        scale_max_unavailable: int_or_string(field(inp, "scaleStrategyMaxUnavailable"))?,
        min_ready_seconds: field(inp, "minReadySeconds")
            .as_i64()
            .and_then(|r| i32::try_from(r).ok())
            .unwrap_or(0),
        exclude_preparing_delete: exclude,
        pods_to_delete: Vec::new(),
    };
    let mode = match field(inp, "isPodUpdate").as_str() {
        Some("revisionOnly") | None => IsPodUpdateMode::RevisionOnly,
        Some("revisionOrPreparingUpdate") => IsPodUpdateMode::RevisionOrPreparingUpdate,
        Some(other) => return Err(format!("unknown isPodUpdate {other:?}")),
    };
    let pods = field(inp, "pods")
        .as_array()
        .ok_or("input has no pods")?
        .iter()
        .enumerate()
        .map(|(i, p)| vector_pod(i, p))
        .collect();
    Ok(DiffInput {
        cs,
        pods,
        current: str_field(inp, "currentRevision"),
        update: str_field(inp, "updateRevision"),
        mode,
        gates: gates(inp),
    })
}

fn run_diffs(d: &DiffInput) -> ExpectationDiffs {
    calculate_diffs(&d.cs, &d.pods, &d.current, &d.update, d.mode, &d.gates, NOW)
}

fn diffs_json(r: &ExpectationDiffs) -> Value {
    json!({
        "scaleUpNum": r.scale_up_num,
        "scaleUpNumOldRevision": r.scale_up_num_old_revision,
        "scaleDownNum": r.scale_down_num,
        "scaleDownNumOldRevision": r.scale_down_num_old_revision,
        "scaleUpLimit": r.scale_up_limit,
        "deleteReadyLimit": r.delete_ready_limit,
        "useSurge": r.use_surge,
        "useSurgeOldRevision": r.use_surge_old_revision,
        "updateNum": r.update_num,
        "updateMaxUnavailable": r.update_max_unavailable,
    })
}

pub fn diffs(_op: Option<&str>, case: &Value) -> Result<(), String> {
    let d = diff_input(input(case)?)?;
    expect_eq(expected(case)?, &diffs_json(&run_diffs(&d)))
}

pub fn partition(_op: Option<&str>, case: &Value) -> Result<(), String> {
    let inp = input(case)?;
    let part = int_or_string(field(inp, "partition"))?;
    let replicas = field(inp, "replicas")
        .as_i64()
        .map(|r| i32::try_from(r).map_err(|e| e.to_string()))
        .transpose()?;
    let res = intstr::calculate_partition_replicas(part.as_ref(), replicas);
    let mut actual = json!({
        "partition": res.clone().unwrap_or(0),
        "error": res.is_err(),
    });
    if let Some(r) = replicas {
        actual["expectedUpdatedReplicas"] =
            json!(intstr::expected_updated_replicas(part.as_ref(), r));
    }
    expect_eq(expected(case)?, &actual)
}

pub fn int_or_percent(_op: Option<&str>, case: &Value) -> Result<(), String> {
    let inp = input(case)?;
    let value = int_or_string(field(inp, "value"))?.ok_or("value is null")?;
    let total = field(inp, "total")
        .as_i64()
        .and_then(|t| i32::try_from(t).ok())
        .ok_or("total is not an int32")?;
    let round_up = field(inp, "roundUp").as_bool().unwrap_or(false);
    let res = match field(inp, "parser").as_str() {
        Some("kruise-float") => intstr::scaled_value_kruise(&value, total, round_up),
        Some("apimachinery") => intstr::scaled_value_apimachinery(&value, total, round_up),
        other => return Err(format!("unknown parser {other:?}")),
    };
    let actual = match res {
        Ok(v) => json!({"error": false, "value": v}),
        Err(_) => json!({"error": true}),
    };
    expect_eq(expected(case)?, &actual)
}

pub fn revision_hash(_op: Option<&str>, case: &Value) -> Result<(), String> {
    let inp = input(case)?;
    let update = str_field(inp, "updateRevision");
    let pod_hash = str_field(inp, "podControllerRevisionHash");
    let state = str_field(inp, "podLifecycleState");
    let actual = json!({
        "isPodUpdate": revision::is_pod_update(&pod_hash, &state, &update, &gates(inp)),
        "equalToRevisionHash": revision::equal_to_revision_hash(&pod_hash, &update),
    });
    expect_assertions(expected(case)?, &actual, &["isPodUpdate"])
}

/// `expected` minus its prose `note`.
fn without_note(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("note");
    }
    v
}

fn indexes(v: &Value, key: &str) -> Result<Vec<usize>, String> {
    parse(key, field(v, key))
}

pub fn update_count(_op: Option<&str>, case: &Value) -> Result<(), String> {
    let inp = input(case)?;
    let d = diff_input(inp)?;
    let res = run_diffs(&d);
    let wait = indexes(inp, "waitUpdateIndexes")?;
    let target = if res.update_num < 0 {
        &d.current
    } else {
        &d.update
    };
    let limited =
        update::limit_update_indexes(&d.pods, &wait, &res, target, d.cs.min_ready_seconds, NOW);
    let actual = json!({
        "updateNum": res.update_num,
        "updateMaxUnavailable": res.update_max_unavailable,
        "canUpdateCount": limited.can_update.len(),
        "canUpdateIndexes": limited.can_update,
    });
    // The test's own assertion is canUpdateCount; the other fields are derived and optional.
    expect_assertions(expected(case)?, &actual, &["canUpdateCount"])
}

fn label_slots(v: &Value) -> Result<Vec<Option<Labels>>, String> {
    parse("podLabels", v)
}

fn slot_refs(slots: &[Option<Labels>]) -> Vec<Option<&Labels>> {
    slots.iter().map(Option::as_ref).collect()
}

pub fn update_order(op: Option<&str>, case: &Value) -> Result<(), String> {
    let inp = input(case)?;
    match op {
        Some("sortUpdateIndexes") => {
            let pods: Vec<PodInfo> = field(inp, "pods")
                .as_array()
                .ok_or("no pods")?
                .iter()
                .enumerate()
                .map(|(i, p)| PodInfo {
                    phase: str_field(p, "phase"),
                    ..vector_pod(i, p)
                })
                .collect();
            let priority: Option<PriorityStrategy> =
                match field(field(inp, "updateStrategy"), "priorityStrategy") {
                    Value::Null => None,
                    v => Some(parse("priorityStrategy", v)?),
                };
            let order = update::UpdateOrder {
                priority,
                scatter: Vec::new(),
            };
            let got = update::sort_update_indexes(
                &pods,
                &indexes(inp, "waitUpdateIndexes")?,
                &order,
                KruiseVersion::V1_8,
            );
            expect_eq(expected(case)?, &json!({ "indexes": got }))
        }
        Some("priorityCompare") => {
            let strategy: PriorityStrategy =
                parse("priorityStrategy", field(inp, "priorityStrategy"))?;
            let li: Labels = parse("podILabels", field(inp, "podILabels"))?;
            let lj: Labels = parse("podJLabels", field(inp, "podJLabels"))?;
            let tie = field(inp, "tieResult").as_bool().unwrap_or(false);
            let got = updatesort::priority::priority_compare(&strategy, &li, &lj, tie);
            expect_eq(expected(case)?, &json!({ "iBeforeJ": got }))
        }
        Some("prioritySort") => {
            let strategy: PriorityStrategy =
                parse("priorityStrategy", field(inp, "priorityStrategy"))?;
            let slots = label_slots(field(inp, "podLabels"))?;
            let refs = slot_refs(&slots);
            let base = indexes(inp, "indexes")?;
            let mut head = base.clone();
            updatesort::priority_sort(&strategy, &refs, &mut head, KruiseVersion::V1_9);
            expect_eq(expected(case)?, &json!({ "indexes": head }))
                .map_err(|e| format!("HEAD / v1.9 behaviour:\n{e}"))?;
            let old = case
                .get("expected_v1_8_4")
                .ok_or("prioritySort case has no expected_v1_8_4")?;
            let mut v18 = base;
            updatesort::priority_sort(&strategy, &refs, &mut v18, KruiseVersion::V1_8);
            expect_subset(&without_note(old), &json!({ "indexes": v18 }))
                .map_err(|e| format!("v1.8.4 behaviour:\n{e}"))
        }
        other => Err(format!("unknown op {other:?}")),
    }
}

pub fn scatter(op: Option<&str>, case: &Value) -> Result<(), String> {
    let inp = input(case)?;
    let slots = label_slots(field(inp, "podLabels"))?;
    let refs = slot_refs(&slots);
    let idx = indexes(inp, "indexes")?;
    match op {
        Some("scatterTerms") => {
            let strategy: Vec<ScatterTerm> =
                parse("scatterStrategy", field(inp, "scatterStrategy"))?;
            let terms = updatesort::scatter::scatter_terms(&strategy, &refs, &idx);
            expect_eq(expected(case)?, &json!({ "terms": terms }))
        }
        Some("scatterByRule") => {
            let term: ScatterTerm = parse("term", field(inp, "term"))?;
            let got = updatesort::scatter::scatter_by_rule(&term, &refs, &idx);
            expect_eq(expected(case)?, &json!({ "indexes": got }))
        }
        Some("scatterSort") => {
            let strategy: Vec<ScatterTerm> =
                parse("scatterStrategy", field(inp, "scatterStrategy"))?;
            let got = updatesort::scatter_sort(&strategy, &refs, &idx);
            expect_eq(expected(case)?, &json!({ "indexes": got }))
        }
        other => Err(format!("unknown op {other:?}")),
    }
}

fn order_pod(p: &Value) -> PodInfo {
    let name = str_field(p, "name");
    let uid = p
        .get("uid")
        .and_then(Value::as_str)
        .map_or_else(|| name.clone(), str::to_owned);
    PodInfo {
        name,
        uid,
        node_name: str_field(p, "nodeName"),
        phase: str_field(p, "phase"),
        ready: field(p, "ready").as_bool().unwrap_or(false),
        in_place_update_ready: true,
        restarts: field(p, "restarts")
            .as_i64()
            .and_then(|r| i32::try_from(r).ok())
            .unwrap_or(0),
        ready_since: field(p, "readySince").as_i64(),
        created: field(p, "created").as_i64(),
        deletion_cost: p
            .get("deletionCost")
            .and_then(Value::as_str)
            .map(str::to_owned),
        ..PodInfo::default()
    }
}

pub fn scale_down_order(op: Option<&str>, case: &Value) -> Result<(), String> {
    let inp = input(case)?;
    match op {
        Some("deletionLess") => {
            let (a, b) = (order_pod(field(inp, "a")), order_pod(field(inp, "b")));
            let ranks: Option<HashMap<String, f64>> = match field(inp, "ranks") {
                Value::Null => None,
                v => Some(parse("ranks", v)?),
            };
            let avail = |p: &PodInfo| p.is_available(0, NOW);
            let use_avail = field(inp, "useAvailability").as_bool().unwrap_or(false);
            let order = DeletionOrder {
                ranks: ranks.as_ref(),
                available: use_avail.then_some(&avail as &dyn Fn(&PodInfo) -> bool),
            };
            let actual = json!({"aLessB": order.less(&a, &b), "bLessA": order.less(&b, &a)});
            expect_eq(expected(case)?, &actual)
        }
        Some("sameNodeRanks") => {
            let pods: Vec<PodInfo> = field(inp, "pods")
                .as_array()
                .ok_or("no pods")?
                .iter()
                .map(order_pod)
                .collect();
            let refs: Vec<&PodInfo> = pods.iter().collect();
            let ranks: BTreeMap<String, f64> =
                pod_sort::same_node_ranks(&refs).into_iter().collect();
            let exp = expected(case)?;
            let exp_ranks = exp.get("ranks").ok_or("no expected ranks")?;
            expect_eq(exp_ranks, &json!(ranks))
        }
        Some("spreadRankOrder") => {
            let pods: Vec<PodInfo> = field(inp, "pods")
                .as_array()
                .ok_or("no pods")?
                .iter()
                .map(order_pod)
                .collect();
            let refs: Vec<&PodInfo> = pods.iter().collect();
            let nodes: Vec<(String, BTreeMap<String, String>)> = field(inp, "nodes")
                .as_array()
                .ok_or("no nodes")?
                .iter()
                .map(|n| {
                    let labels = parse("node labels", field(n, "labels"))?;
                    Ok((str_field(n, "name"), labels))
                })
                .collect::<Result<_, String>>()?;
            let constraints: Vec<SpreadConstraint> = field(inp, "constraints")
                .as_array()
                .ok_or("no constraints")?
                .iter()
                .map(|c| {
                    Ok(SpreadConstraint {
                        topology_key: str_field(c, "topologyKey"),
                        limited_values: match field(c, "limitedValues") {
                            Value::Null => Vec::new(),
                            v => parse("limitedValues", v)?,
                        },
                    })
                })
                .collect::<Result<_, String>>()?;
            let ranks = pod_sort::spread_ranks(&refs, &constraints, &nodes);
            let mut ranked: Vec<(&str, f64)> = pods
                .iter()
                .filter_map(|p| {
                    ranks
                        .get(&p.uid)
                        .filter(|r| **r > 0.0)
                        .map(|r| (p.uid.as_str(), *r))
                })
                .collect();
            ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
            let uids: Vec<&str> = ranked.into_iter().map(|(u, _)| u).collect();
            let exp = expected(case)?;
            expect_eq(
                exp.get("uidsByRankDesc").ok_or("no uidsByRankDesc")?,
                &json!(uids),
            )
        }
        other => Err(format!("unknown op {other:?}")),
    }
}

pub fn scale(op: Option<&str>, case: &Value) -> Result<(), String> {
    let inp = input(case)?;
    match op {
        Some("scaleReconcile") => {
            let d = diff_input(inp)?;
            let lc: Option<Lifecycle> = match field(inp, "lifecycle") {
                Value::Null => None,
                v => Some(parse("lifecycle", v)?),
            };
            let outcome = scale::scale(&scale::ScaleInput {
                cs: &d.cs,
                pods: &d.pods,
                current_revision: &d.current,
                update_revision: &d.update,
                gates: &d.gates,
                lifecycle: lc.as_ref(),
                spread_constraints: &[],
                nodes: &[],
                now: NOW,
            });
            let deleted = outcome.deleted().len();
            let pod_names = |pick: fn(&scale::ScaleAction) -> Option<usize>| -> Vec<String> {
                outcome
                    .actions
                    .iter()
                    .filter_map(pick)
                    .map(|i| d.pods[i].name.clone())
                    .collect()
            };
            let actual = json!({
                "revertedToPreparingNormal": pod_names(|a| match a {
                    scale::ScaleAction::RevertPreparingDelete(i) => Some(*i),
                    _ => None,
                }),
                "movedToPreparingDelete": pod_names(|a| match a {
                    scale::ScaleAction::PrepareDelete(i) => Some(*i),
                    _ => None,
                }),
                "modified": outcome.modified(),
                "activePodsAfter": d.pods.len() - deleted,
                "deletedCount": deleted,
                "diffs": diffs_json(&outcome.diffs),
            });
            expect_subset(expected(case)?, &actual)
        }
        Some("createPods") => {
            let names: Vec<String> = parse("availableIDs", field(inp, "availableIDs"))?;
            let vcts: Vec<String> =
                parse("volumeClaimTemplates", field(inp, "volumeClaimTemplates"))?;
            let existing: Vec<String> = parse("existingPVCNames", field(inp, "existingPVCNames"))?;
            let template_gates: Vec<String> = match field(inp, "templateReadinessGates") {
                Value::Null => Vec::new(),
                v => parse("templateReadinessGates", v)?,
            };
            let count = |k: &str| {
                field(inp, k)
                    .as_u64()
                    .map(|v| v as usize)
                    .ok_or(format!("no {k}"))
            };
            let plan = scale::plan_pod_creations(&scale::CreationInput {
                cloneset_name: &str_field(inp, "cloneSetName"),
                expected_creations: count("expectedCreations")?,
                expected_current_creations: count("expectedCurrentCreations")?,
                current_revision: &str_field(inp, "currentRevision"),
                update_revision: &str_field(inp, "updateRevision"),
                available_ids: &names,
                volume_claim_templates: &vcts,
                existing_pvcs: &existing,
                template_readiness_gates: &template_gates,
                gates: &gates(inp),
            });
            let pods: Vec<Value> = plan
                .pods
                .iter()
                .map(|p| {
                    json!({
                        "name": p.name,
                        "labels": p.labels,
                        "readinessGates": p.readiness_gates,
                        "claimNames": p.claim_names,
                        "templateFrom": if p.from_current { "currentRevision" } else { "updateRevision" },
                    })
                })
                .collect();
            expect_subset(
                &without_note(expected(case)?),
                &json!({"pods": pods, "pvcsCreated": plan.pvcs_to_create}),
            )
        }
        Some("deletePodsPvcs") => {
            let pvcs: Vec<(String, String)> = field(inp, "pvcs")
                .as_array()
                .ok_or("input has no pvcs")?
                .iter()
                .map(|p| (str_field(p, "name"), str_field(p, "instanceID")))
                .collect();
            let mut deleted = Vec::new();
            for pod in field(inp, "podsToDelete")
                .as_array()
                .ok_or("input has no podsToDelete")?
            {
                deleted.extend(scale::pvcs_deleted_with_pod(
                    &str_field(pod, "instanceID"),
                    &pvcs,
                ));
            }
            let left: Vec<&str> = pvcs
                .iter()
                .map(|(n, _)| n.as_str())
                .filter(|n| !deleted.iter().any(|d| d == n))
                .collect();
            expect_eq(expected(case)?, &json!({ "pvcsLeft": left }))
        }
        Some("availableIDs") => {
            let num = field(inp, "num").as_u64().ok_or("no num")? as usize;
            let pod_ids: Vec<String> = parse("podInstanceIDs", field(inp, "podInstanceIDs"))?;
            let pvc_ids: Vec<String> = parse("pvcInstanceIDs", field(inp, "pvcInstanceIDs"))?;
            let mut seed = 7u64;
            let mut rng = move || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            };
            let ids = scale::available_ids(num, &pod_ids, &pvc_ids, &mut rng);
            let exp = expected(case)?;
            let must: Vec<String> = parse("mustContain", field(exp, "mustContain"))?;
            let len = field(exp, "otherIDsAreRandomOfLength")
                .as_u64()
                .ok_or("no length")? as usize;
            let count = field(exp, "count").as_u64().ok_or("no count")? as usize;
            if ids.len() != count {
                return Err(format!("expected {count} ids, got {ids:?}"));
            }
            for m in &must {
                if !ids.contains(m) {
                    return Err(format!("{m:?} missing from {ids:?}"));
                }
            }
            for id in ids.iter().filter(|id| !must.contains(id)) {
                if id.len() != len || pod_ids.contains(id) || pvc_ids.contains(id) {
                    return Err(format!("{id:?} is not a fresh random id of length {len}"));
                }
            }
            Ok(())
        }
        other => Err(format!("unknown op {other:?}")),
    }
}

/// Replaces `<now>` / `<now-Ns>` placeholders with RFC 3339 times around [`NOW`].
fn fill_times(v: &Value) -> Value {
    match v {
        Value::String(s) if s.starts_with("<now") && s.ends_with('>') => {
            let offset = s
                .trim_start_matches("<now")
                .trim_end_matches('>')
                .trim_start_matches('-')
                .trim_end_matches('s')
                .parse::<i64>()
                .unwrap_or(0);
            Value::String(inplace::rfc3339(NOW - offset))
        }
        Value::Array(a) => Value::Array(a.iter().map(fill_times).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), fill_times(v))).collect())
        }
        other => other.clone(),
    }
}

fn lifecycle_pod(p: &Value) -> Result<PodModel, String> {
    let labels: BTreeMap<String, String> = parse("pod labels", field(p, "labels"))?;
    let mut annotations = BTreeMap::new();
    for (k, v) in field(p, "annotations").as_object().into_iter().flatten() {
        let text = match fill_times(v) {
            Value::String(s) => s,
            other => other.to_string(),
        };
        annotations.insert(k.clone(), text);
    }
    let images: BTreeMap<String, String> = parse("containers", field(p, "containers"))?;
    let ids: BTreeMap<String, String> = parse("containerImageIDs", field(p, "containerImageIDs"))?;
    let mut conditions = Vec::new();
    for (key, type_) in [
        ("readyCondition", "Ready"),
        (
            "inPlaceUpdateReadyCondition",
            inplace::IN_PLACE_UPDATE_READY,
        ),
    ] {
        if let Some(status) = field(p, key).as_str() {
            conditions.push(inplace::Condition {
                type_: type_.to_owned(),
                status: status.to_owned(),
                reason: String::new(),
                last_transition: Some(NOW - 1000),
            });
        }
    }
    Ok(PodModel {
        name: "pod-0".to_owned(),
        node_name: "node".to_owned(),
        phase: str_field(p, "phase"),
        labels,
        annotations,
        finalizers: parse("finalizers", field(p, "finalizers"))?,
        readiness_gates: parse("readinessGates", field(p, "readinessGates"))?,
        conditions,
        containers: images
            .iter()
            .map(|(name, image)| inplace::Container {
                name: name.clone(),
                image: image.clone(),
                status_image: image.clone(),
                image_id: ids.get(name).cloned().unwrap_or_default(),
            })
            .collect(),
        created: Some(NOW - 2000),
    })
}

pub fn lifecycle(_op: Option<&str>, case: &Value) -> Result<(), String> {
    let inp = input(case)?;
    let exp = expected(case)?;
    let image_only = field(inp, "templateDiffIsImageOnly").as_bool();
    let update_name = str_field(inp, "updateRevision");
    let mut revisions = Vec::new();
    for (name, t) in field(inp, "revisionTemplates")
        .as_object()
        .ok_or("no revisionTemplates")?
    {
        let containers = field(t, "containers")
            .as_array()
            .ok_or("revision has no containers")?
            .iter()
            .map(|c| (str_field(c, "name"), str_field(c, "image")))
            .collect();
        let comparable = !(image_only == Some(false) && *name == update_name);
        revisions.push(inplace::RevisionTemplate {
            name: name.clone(),
            containers: comparable.then_some(containers),
        });
    }
    let find = |name: &str| {
        revisions
            .iter()
            .find(|r| r.name == name)
            .cloned()
            .ok_or_else(|| format!("no revision template {name}"))
    };
    let current = find(&str_field(inp, "currentRevision"))?;
    let update_rev = find(&update_name)?;
    let lc: Option<Lifecycle> = match field(inp, "lifecycle") {
        Value::Null => None,
        v => Some(parse("lifecycle", v)?),
    };
    let cs = CloneSetParams {
        replicas: field(inp, "replicas")
            .as_i64()
            .and_then(|r| i32::try_from(r).ok())
            .unwrap_or(1),
        ..CloneSetParams::default()
    };
    let mut pods = vec![lifecycle_pod(field(inp, "pod"))?];
    let gates = FeatureGates::new();
    let outcome = update_pass::update_pass(
        &update_pass::UpdatePassInput {
            cs: &cs,
            strategy_type: &str_field(inp, "updateStrategyType"),
            grace_seconds: field(field(inp, "inPlaceUpdateStrategy"), "gracePeriodSeconds")
                .as_i64()
                .and_then(|g| i32::try_from(g).ok())
                .unwrap_or(0),
            lifecycle: lc.as_ref(),
            order: &update::UpdateOrder::default(),
            current_revision: &current,
            update_revision: &update_rev,
            revisions: &revisions,
            gates: &gates,
            version: KruiseVersion::V1_8,
            now: NOW,
        },
        &mut pods,
    );
    if !outcome.errors.is_empty() {
        return Err(format!("update failed: {:?}", outcome.errors));
    }
    let pod = &pods[0];
    let cond = pod.condition(inplace::IN_PLACE_UPDATE_READY);
    let containers: BTreeMap<&str, &str> = pod
        .containers
        .iter()
        .map(|c| (c.name.as_str(), c.image.as_str()))
        .collect();
    let actual = json!({
        "labels": pod.labels,
        "specifiedDelete": pod.labels.contains_key(SPECIFIED_DELETE_LABEL),
        "containers": containers,
        "inPlaceUpdateReadyCondition": cond.map(|c| c.status.clone()),
        "inPlaceUpdateReadyReason": cond.map(|c| c.reason.clone()),
    });
    let mut exp_rest = exp.clone();
    let exp_annotations = exp_rest.as_object_mut().and_then(|o| {
        o.remove("requeueAfterSecondsAtLeast");
        o.remove("annotations")
    });
    expect_subset(&exp_rest, &actual)?;
    if let Some(at_least) = exp
        .get("requeueAfterSecondsAtLeast")
        .and_then(Value::as_i64)
    {
        match outcome.requeue_after {
            Some(d) if d >= at_least => {}
            other => {
                return Err(format!(
                    "requeue after {other:?}, expected at least {at_least}s"
                ));
            }
        }
    }
    for (key, want) in exp_annotations
        .as_ref()
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let got = pod.annotations.get(key);
        match (fill_times(want), got) {
            (Value::Null, None) => {}
            (Value::Null, Some(g)) => return Err(format!("{key}: expected removed, found {g}")),
            (Value::String(w), Some(g)) if w == *g => {}
            (w @ Value::Object(_), Some(g)) => {
                let decoded: Value = serde_json::from_str(g).map_err(|e| format!("{key}: {e}"))?;
                expect_eq(&w, &decoded).map_err(|e| format!("annotation {key}:\n{e}"))?;
            }
            (w, g) => return Err(format!("{key}: expected {w}, found {g:?}")),
        }
    }
    Ok(())
}
