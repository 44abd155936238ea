//! The columns of built-in kinds, as the real server's table convertors print them.

use serde_json::{Value, json};

use super::{CellsFn, age, age_of, col, human, name_of, num};
use crate::server::resources::ResourceInfo;

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

/// Columns and cells of built-in kinds, like the real server's table convertors.
pub(super) fn columns(res: &ResourceInfo) -> Option<(Vec<Value>, CellsFn)> {
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
        ("", "ConfigMap") => (
            vec![s("Name"), s("Data"), s("Age")],
            Box::new(|o: &Value| {
                let n = count(&o["data"]) + count(&o["binaryData"]);
                vec![name_of(o), json!(n), age_of(o)]
            }),
        ),
        ("", "Secret") => (
            vec![s("Name"), s("Type"), s("Data"), s("Age")],
            Box::new(|o: &Value| {
                vec![
                    name_of(o),
                    json!(o["type"].as_str().unwrap_or("Opaque")),
                    json!(count(&o["data"])),
                    age_of(o),
                ]
            }),
        ),
        ("", "ServiceAccount") => (
            vec![s("Name"), s("Secrets"), s("Age")],
            Box::new(|o: &Value| vec![name_of(o), json!(count(&o["secrets"])), age_of(o)]),
        ),
        ("batch", "Job") => (
            vec![
                s("Name"),
                s("Status"),
                s("Completions"),
                s("Duration"),
                s("Age"),
            ],
            Box::new(|o: &Value| {
                vec![
                    name_of(o),
                    json!(job_status(o)),
                    json!(job_completions(o)),
                    json!(job_duration(&o["status"])),
                    age_of(o),
                ]
            }),
        ),
        ("batch", "CronJob") => (
            vec![
                s("Name"),
                s("Schedule"),
                s("Timezone"),
                s("Suspend"),
                i("Active"),
                s("Last Schedule"),
                s("Age"),
            ],
            Box::new(|o: &Value| {
                let spec = &o["spec"];
                let last = o["status"]["lastScheduleTime"]
                    .as_str()
                    .map(age)
                    .unwrap_or_else(|| "<none>".into());
                let suspend = if spec["suspend"].as_bool() == Some(true) {
                    "True"
                } else {
                    "False"
                };
                vec![
                    name_of(o),
                    spec["schedule"].clone(),
                    json!(spec["timeZone"].as_str().unwrap_or("<none>")),
                    json!(suspend),
                    json!(count(&o["status"]["active"])),
                    json!(last),
                    age_of(o),
                ]
            }),
        ),
        ("policy", "PodDisruptionBudget") => (
            vec![
                s("Name"),
                s("Min Available"),
                s("Max Unavailable"),
                i("Allowed Disruptions"),
                s("Age"),
            ],
            Box::new(|o: &Value| {
                let or_na = |v: &Value| match v {
                    Value::Null => json!("N/A"),
                    Value::String(s) => json!(s),
                    other => json!(other.to_string()),
                };
                vec![
                    name_of(o),
                    or_na(&o["spec"]["minAvailable"]),
                    or_na(&o["spec"]["maxUnavailable"]),
                    num(&o["status"]["disruptionsAllowed"]),
                    age_of(o),
                ]
            }),
        ),
        ("rbac.authorization.k8s.io", "Role" | "ClusterRole") => (
            vec![s("Name"), s("Created At")],
            Box::new(|o: &Value| vec![name_of(o), o["metadata"]["creationTimestamp"].clone()]),
        ),
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => (
            vec![s("Name"), s("Role"), s("Age")],
            Box::new(|o: &Value| {
                let r = &o["roleRef"];
                let role = format!(
                    "{}/{}",
                    r["kind"].as_str().unwrap_or(""),
                    r["name"].as_str().unwrap_or("")
                );
                vec![name_of(o), json!(role), age_of(o)]
            }),
        ),
        ("networking.k8s.io", "Ingress") => (
            vec![
                s("Name"),
                s("Class"),
                s("Hosts"),
                s("Address"),
                s("Ports"),
                s("Age"),
            ],
            Box::new(|o: &Value| {
                let hosts: Vec<&str> = o["spec"]["rules"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|r| r["host"].as_str())
                    .collect();
                let hosts = if hosts.is_empty() {
                    "*".to_string()
                } else {
                    hosts.join(",")
                };
                let ports = if o["spec"]["tls"].as_array().is_some_and(|t| !t.is_empty()) {
                    "80, 443"
                } else {
                    "80"
                };
                vec![
                    name_of(o),
                    json!(o["spec"]["ingressClassName"].as_str().unwrap_or("<none>")),
                    json!(hosts),
                    json!(""),
                    json!(ports),
                    age_of(o),
                ]
            }),
        ),
        _ => return None,
    };
    Some(out)
}

/// How many entries a map or list has (0 when absent).
fn count(v: &Value) -> usize {
    match v {
        Value::Object(m) => m.len(),
        Value::Array(a) => a.len(),
        _ => 0,
    }
}

/// A Job's STATUS, from its terminal or suspended condition (kubectl v1.32's printer).
fn job_status(o: &Value) -> &'static str {
    let has = |t: &str| {
        o["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == t && c["status"] == "True")
    };
    if has("Complete") {
        "Complete"
    } else if has("Failed") {
        "Failed"
    } else if o["metadata"]["deletionTimestamp"].is_string() {
        "Terminating"
    } else if has("SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else if has("FailureTarget") {
        "FailureTarget"
    } else if has("Suspended") {
        "Suspended"
    } else {
        "Running"
    }
}

/// A Job's COMPLETIONS: `succeeded/completions`, or `succeeded/1 of parallelism`.
fn job_completions(o: &Value) -> String {
    let succeeded = o["status"]["succeeded"].as_i64().unwrap_or(0);
    match o["spec"]["completions"].as_i64() {
        Some(c) => format!("{succeeded}/{c}"),
        None => match o["spec"]["parallelism"].as_i64().unwrap_or(0) {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    }
}

/// A Job's DURATION: start to completion (or now); empty before it starts.
fn job_duration(status: &Value) -> String {
    let ts = |k: &str| {
        status[k]
            .as_str()
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
    };
    let Some(start) = ts("startTime") else {
        return String::new();
    };
    let end = ts("completionTime").unwrap_or_else(jiff::Timestamp::now);
    human((end.as_second() - start.as_second()).max(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_columns() {
        let o = serde_json::json!({"spec": {"completions": 3},
            "status": {"succeeded": 2, "startTime": "2026-01-01T00:00:00Z",
                "completionTime": "2026-01-01T00:01:05Z",
                "conditions": [{"type": "Complete", "status": "True"}]}});
        assert_eq!(job_status(&o), "Complete");
        assert_eq!(job_completions(&o), "2/3");
        assert_eq!(job_duration(&o["status"]), "65s");
        let p = serde_json::json!({"spec": {"parallelism": 4}, "status": {}});
        assert_eq!(job_status(&p), "Running");
        assert_eq!(job_completions(&p), "0/1 of 4");
        assert_eq!(job_duration(&p["status"]), "");
    }
}
