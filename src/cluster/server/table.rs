//! `as=Table` responses for `kubectl get`: CRD additionalPrinterColumns, pods' usual columns,
//! namespaces' status, and NAME/AGE for the rest.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{
    http::Req,
    resources::{PrinterColumn, ResourceInfo},
    store::Obj,
};

pub fn wants_table(req: &Req) -> bool {
    req.header(http::header::ACCEPT).contains("as=Table")
}

/// `kubectl`-style age: 45s, 3m10s, 12m, 5h3m, 20h, 3d4h, 12d.
pub fn age(ts: &str) -> String {
    let Ok(t) = ts.parse::<jiff::Timestamp>() else {
        return "<unknown>".into();
    };
    let secs = (jiff::Timestamp::now().as_second() - t.as_second()).max(0);
    let (m, h, d) = (secs / 60, secs / 3600, secs / 86_400);
    if secs < 120 {
        format!("{secs}s")
    } else if m < 10 {
        format!("{m}m{}s", secs % 60)
    } else if h < 3 {
        format!("{m}m")
    } else if h < 8 {
        format!("{h}h{}m", m % 60)
    } else if d < 2 {
        format!("{h}h")
    } else if d < 8 {
        format!("{d}d{}h", h % 24)
    } else {
        format!("{d}d")
    }
}

/// Evaluate a simple printer-column JSONPath (`.a.b`, `.a[*].b`, `.a[0].b`).
fn eval_path(v: &Value, path: &str) -> Vec<Value> {
    let mut cur = vec![v.clone()];
    for seg in path.trim_start_matches('.').split('.') {
        let (name, idx) = match seg.split_once('[') {
            Some((n, rest)) => (n, Some(rest.trim_end_matches(']'))),
            None => (seg, None),
        };
        let mut next = Vec::new();
        for c in &cur {
            let x = if name.is_empty() {
                Some(c)
            } else {
                c.get(name)
            };
            let Some(x) = x else { continue };
            match idx {
                None => next.push(x.clone()),
                Some("*") => next.extend(x.as_array().into_iter().flatten().cloned()),
                Some(i) => {
                    if let Some(e) = i.parse::<usize>().ok().and_then(|i| x.get(i)) {
                        next.push(e.clone());
                    }
                }
            }
        }
        cur = next;
    }
    cur
}

fn cell(obj: &Value, c: &PrinterColumn) -> Value {
    let vals = eval_path(obj, &c.json_path);
    if c.type_ == "date" {
        return vals
            .first()
            .and_then(Value::as_str)
            .map(|s| json!(age(s)))
            .unwrap_or(Value::Null);
    }
    match vals.len() {
        0 => Value::Null,
        1 => vals[0].clone(),
        _ => json!(
            vals.iter()
                .map(|v| v
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string()))
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

fn col(name: &str, type_: &str, priority: i64) -> Value {
    let format = if name == "Name" { "name" } else { "" };
    json!({"name": name, "type": type_, "format": format, "description": "", "priority": priority})
}

fn pod_cells(p: &Value) -> Vec<Value> {
    let statuses = p["status"]["containerStatuses"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let total = p["spec"]["containers"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(0);
    let ready = statuses
        .iter()
        .filter(|s| s["ready"].as_bool() == Some(true))
        .count();
    let restarts: i64 = statuses
        .iter()
        .filter_map(|s| s["restartCount"].as_i64())
        .sum();
    let waiting = statuses
        .iter()
        .find_map(|s| s["state"]["waiting"]["reason"].as_str());
    let status = if p["metadata"]["deletionTimestamp"].is_string() {
        "Terminating".to_string()
    } else if let Some(w) = waiting {
        w.to_string()
    } else {
        p["status"]["phase"]
            .as_str()
            .unwrap_or("Pending")
            .to_string()
    };
    vec![
        json!(format!("{ready}/{total}")),
        json!(status),
        json!(restarts),
        json!(age(p["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap_or(""))),
        json!(p["status"]["podIP"].as_str().unwrap_or("<none>")),
        json!(p["spec"]["nodeName"].as_str().unwrap_or("<none>")),
    ]
}

/// Computes a row's cells after the name.
type CellsFn = Box<dyn Fn(&Value) -> Vec<Value>>;

/// A Table of these objects.
pub fn table(
    res: &ResourceInfo,
    items: &[Arc<Obj>],
    continue_token: Option<String>,
    rv: u64,
) -> Value {
    let (cols, cells): (Vec<Value>, CellsFn) = if !res.printer_columns.is_empty() {
        let pcs = res.printer_columns.clone();
        let mut cols = vec![col("Name", "string", 0)];
        cols.extend(pcs.iter().map(|c| {
            col(
                &c.name,
                if c.type_ == "date" {
                    "string"
                } else {
                    &c.type_
                },
                c.priority,
            )
        }));
        (
            cols,
            Box::new(move |o: &Value| pcs.iter().map(|c| cell(o, c)).collect()),
        )
    } else if res.kind == "Pod" && res.group.is_empty() {
        let cols = vec![
            col("Name", "string", 0),
            col("Ready", "string", 0),
            col("Status", "string", 0),
            col("Restarts", "integer", 0),
            col("Age", "string", 0),
            col("IP", "string", 1),
            col("Node", "string", 1),
        ];
        (cols, Box::new(pod_cells))
    } else if res.kind == "Namespace" {
        let cols = vec![
            col("Name", "string", 0),
            col("Status", "string", 0),
            col("Age", "string", 0),
        ];
        (
            cols,
            Box::new(|o: &Value| {
                vec![
                    o["status"]["phase"].clone(),
                    json!(age(o["metadata"]["creationTimestamp"]
                        .as_str()
                        .unwrap_or(""))),
                ]
            }),
        )
    } else {
        let cols = vec![col("Name", "string", 0), col("Age", "string", 0)];
        (
            cols,
            Box::new(|o: &Value| {
                vec![json!(age(o["metadata"]["creationTimestamp"]
                    .as_str()
                    .unwrap_or("")))]
            }),
        )
    };
    let rows: Vec<Value> = items
        .iter()
        .map(|o| {
            let mut c = vec![o.value["metadata"]["name"].clone()];
            c.extend(cells(&o.value));
            json!({
                "cells": c,
                "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o.value["metadata"]},
            })
        })
        .collect();
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if let Some(t) = continue_token {
        meta["continue"] = json!(t);
    }
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "columnDefinitions": cols, "rows": rows})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_paths_and_ages() {
        let v = json!({"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}});
        let c = PrinterColumn {
            name: "C".into(),
            type_: "string".into(),
            json_path: ".spec.containers[*].name".into(),
            priority: 0,
        };
        assert_eq!(cell(&v, &c), json!("a,b"));
        let c = PrinterColumn {
            json_path: ".spec.containers[1].image".into(),
            ..c
        };
        assert_eq!(cell(&v, &c), json!("y"));
        assert_eq!(age("bogus"), "<unknown>");
        assert!(age(&super::super::meta::now()).ends_with('s'));
    }
}
