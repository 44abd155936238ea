//! cloneset-update-order, cloneset-scatter and cloneset-scale-down-order: which pod is updated
//! or deleted first.

use std::collections::{BTreeMap, HashMap};

use kruise_tui::kruise::{
    KruiseVersion,
    cloneset::{
        PodInfo,
        pod_sort::{self, DeletionOrder, SpreadConstraint},
        update,
    },
    updatesort::{self, Labels, PriorityStrategy, ScatterTerm},
};
use serde_json::{Value, json};

use super::{NOW, field, indexes, str_field, vector_pod, without_note};
use crate::eval::common::{expect_eq, expect_subset, expected, input, parse};

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
