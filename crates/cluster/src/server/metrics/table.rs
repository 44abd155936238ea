//! `as=Table` for PodMetrics and NodeMetrics, as metrics-server's `addPodMetricsToTable` and
//! `addNodeMetricsToTable` build it: the name, each resource (summed over a pod's containers)
//! as a quantity, and the window.

use serde_json::{Value, json};

use super::serve::{cpu, memory};

fn column(name: &str, format: &str, description: &str) -> Value {
    json!({"name": name, "type": "string", "format": format, "description": description,
           "priority": 0})
}

/// A parsed quantity back in nano units (cpu) or bytes (memory), for the pod's sum.
fn amount(q: &Value, bytes: bool) -> u64 {
    let n = q
        .as_str()
        .and_then(kruise_core::kruise::sidecarset::quantity::nanos)
        .unwrap_or(0);
    let v = if bytes { n / 1_000_000_000 } else { n };
    u64::try_from(v).unwrap_or(0)
}

/// The Table of these PodMetrics or NodeMetrics items (`kind` says which).
pub fn table(kind: &str, items: &[Value]) -> Value {
    let columns = vec![
        column("Name", "name", "Name of the resource"),
        column("cpu", "quantity", ""),
        column("memory", "quantity", ""),
        column("Window", "duration", ""),
    ];
    let rows: Vec<Value> = items
        .iter()
        .map(|item| {
            let usages: Vec<&Value> = if kind == "NodeMetrics" {
                vec![&item["usage"]]
            } else {
                item["containers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| &c["usage"])
                    .collect()
            };
            let c: u64 = usages.iter().map(|u| amount(&u["cpu"], false)).sum();
            let m: u64 = usages.iter().map(|u| amount(&u["memory"], true)).sum();
            json!({
                "cells": [item["metadata"]["name"], cpu(c), memory(m), item["window"]],
                "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                           "metadata": item["metadata"]},
            })
        })
        .collect();
    // Go's nil slices when nothing is listed.
    let (columns, rows) = if items.is_empty() {
        (Value::Null, Value::Null)
    } else {
        (json!(columns), json!(rows))
    };
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {},
           "columnDefinitions": columns, "rows": rows})
}
