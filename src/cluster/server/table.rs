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

/// Computes a row's cells.
type CellsFn = Box<dyn Fn(&Value) -> Vec<Value>>;

fn name_of(o: &Value) -> Value {
    o["metadata"]["name"].clone()
}

fn age_of(o: &Value) -> Value {
    json!(age(o["metadata"]["creationTimestamp"]
        .as_str()
        .unwrap_or("")))
}

fn num(v: &Value) -> Value {
    json!(v.as_i64().unwrap_or(0))
}

/// Columns and cells of built-in kinds, like the real server's table convertors.
fn builtin_columns(res: &ResourceInfo) -> Option<(Vec<Value>, CellsFn)> {
    let s = |n: &str| col(n, "string", 0);
    let i = |n: &str| col(n, "integer", 0);
    let out: (Vec<Value>, CellsFn) = match (res.group.as_str(), res.kind.as_str()) {
        ("", "Pod") => (
            vec![
                s("Name"),
                s("Ready"),
                s("Status"),
                i("Restarts"),
                s("Age"),
                col("IP", "string", 1),
                col("Node", "string", 1),
            ],
            Box::new(|o: &Value| {
                let mut c = vec![name_of(o)];
                c.extend(pod_cells(o));
                c
            }),
        ),
        ("", "Namespace") => (
            vec![s("Name"), s("Status"), s("Age")],
            Box::new(|o: &Value| vec![name_of(o), o["status"]["phase"].clone(), age_of(o)]),
        ),
        ("", "Node") => (
            vec![s("Name"), s("Status"), s("Roles"), s("Age"), s("Version")],
            Box::new(|o: &Value| {
                let ready = o["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True");
                let mut status = if ready {
                    "Ready".to_string()
                } else {
                    "NotReady".to_string()
                };
                if o["spec"]["unschedulable"].as_bool() == Some(true) {
                    status.push_str(",SchedulingDisabled");
                }
                let roles: Vec<&str> = o["metadata"]["labels"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter_map(|(k, _)| k.strip_prefix("node-role.kubernetes.io/"))
                    .collect();
                let roles = if roles.is_empty() {
                    "<none>".to_string()
                } else {
                    roles.join(",")
                };
                vec![
                    name_of(o),
                    json!(status),
                    json!(roles),
                    age_of(o),
                    o["status"]["nodeInfo"]["kubeletVersion"].clone(),
                ]
            }),
        ),
        ("" | "events.k8s.io", "Event") => (
            vec![
                s("Last Seen"),
                s("Type"),
                s("Reason"),
                s("Object"),
                s("Message"),
            ],
            Box::new(|o: &Value| {
                let seen = o["lastTimestamp"]
                    .as_str()
                    .or(o["eventTime"].as_str())
                    .or(o["metadata"]["creationTimestamp"].as_str())
                    .unwrap_or("");
                let io = &o["involvedObject"];
                let object = format!(
                    "{}/{}",
                    io["kind"].as_str().unwrap_or("").to_lowercase(),
                    io["name"].as_str().unwrap_or("")
                );
                vec![
                    json!(age(seen)),
                    o["type"].clone(),
                    o["reason"].clone(),
                    json!(object),
                    o["message"].clone(),
                ]
            }),
        ),
        ("", "Service") => (
            vec![
                s("Name"),
                s("Type"),
                s("Cluster-IP"),
                s("External-IP"),
                s("Port(s)"),
                s("Age"),
            ],
            Box::new(|o: &Value| {
                let ports: Vec<String> = o["spec"]["ports"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| format!("{}/{}", p["port"], p["protocol"].as_str().unwrap_or("TCP")))
                    .collect();
                let ports = if ports.is_empty() {
                    "<none>".to_string()
                } else {
                    ports.join(",")
                };
                vec![
                    name_of(o),
                    json!(o["spec"]["type"].as_str().unwrap_or("ClusterIP")),
                    json!(o["spec"]["clusterIP"].as_str().unwrap_or("<none>")),
                    json!("<none>"),
                    json!(ports),
                    age_of(o),
                ]
            }),
        ),
        ("apps", "Deployment") => (
            vec![
                s("Name"),
                s("Ready"),
                i("Up-to-date"),
                i("Available"),
                s("Age"),
            ],
            Box::new(|o: &Value| {
                let st = &o["status"];
                let ready = format!(
                    "{}/{}",
                    st["readyReplicas"].as_i64().unwrap_or(0),
                    o["spec"]["replicas"].as_i64().unwrap_or(1)
                );
                vec![
                    name_of(o),
                    json!(ready),
                    num(&st["updatedReplicas"]),
                    num(&st["availableReplicas"]),
                    age_of(o),
                ]
            }),
        ),
        ("apps", "ReplicaSet") => (
            vec![s("Name"), i("Desired"), i("Current"), i("Ready"), s("Age")],
            Box::new(|o: &Value| {
                let st = &o["status"];
                vec![
                    name_of(o),
                    num(&o["spec"]["replicas"]),
                    num(&st["replicas"]),
                    num(&st["readyReplicas"]),
                    age_of(o),
                ]
            }),
        ),
        ("apps", "StatefulSet") => (
            vec![s("Name"), s("Ready"), s("Age")],
            Box::new(|o: &Value| {
                let ready = format!(
                    "{}/{}",
                    o["status"]["readyReplicas"].as_i64().unwrap_or(0),
                    o["spec"]["replicas"].as_i64().unwrap_or(1)
                );
                vec![name_of(o), json!(ready), age_of(o)]
            }),
        ),
        ("apps", "DaemonSet") => (
            vec![
                s("Name"),
                i("Desired"),
                i("Current"),
                i("Ready"),
                i("Up-to-date"),
                i("Available"),
                s("Age"),
            ],
            Box::new(|o: &Value| {
                let st = &o["status"];
                vec![
                    name_of(o),
                    num(&st["desiredNumberScheduled"]),
                    num(&st["currentNumberScheduled"]),
                    num(&st["numberReady"]),
                    num(&st["updatedNumberScheduled"]),
                    num(&st["numberAvailable"]),
                    age_of(o),
                ]
            }),
        ),
        _ => return None,
    };
    Some(out)
}

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
        let f = move |o: &Value| {
            let mut c = vec![name_of(o)];
            c.extend(pcs.iter().map(|p| cell(o, p)));
            c
        };
        (cols, Box::new(f))
    } else if let Some(b) = builtin_columns(res) {
        b
    } else {
        (
            vec![col("Name", "string", 0), col("Age", "string", 0)],
            Box::new(|o: &Value| vec![name_of(o), age_of(o)]),
        )
    };
    let rows: Vec<Value> = items
        .iter()
        .map(|o| {
            json!({
                "cells": cells(&o.value()),
                "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o.head["metadata"]},
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
