//! What a default kube-apiserver does to a new Pod after its defaults ([`super::poddefaults`]):
//! the admission plugins every cluster runs (`ServiceAccount`: the service account and
//! its projected token volume; `DefaultTolerationSeconds`; `Priority`), and the QoS class the
//! status starts with. A pod read back from the embedded cluster looks as it would on a real one.

use serde_json::{Map, Value, json};

use super::{meta, poddefaults::or_insert, status::ApiError, store::Store};

/// Where the ServiceAccount admission plugin mounts the token volume.
const TOKEN_MOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The admission plugins of a default cluster, on a new pod in `namespace`: ServiceAccount
/// (refuses a pod whose service account does not exist, as upstream does), then
/// DefaultTolerationSeconds and Priority.
pub fn admit_new(store: &Store, namespace: &str, pod: &mut Value) -> Result<(), ApiError> {
    service_account(store, namespace, pod)?;
    default_tolerations(pod);
    priority(pod);
    if let Some(m) = pod.as_object_mut() {
        let qos = qos_class(m.get("spec").unwrap_or(&Value::Null));
        let status = m.entry("status").or_insert(json!({}));
        if let Some(s) = status.as_object_mut() {
            or_insert(s, "phase", json!("Pending"));
            or_insert(s, "qosClass", json!(qos));
        }
    }
    Ok(())
}

fn service_account(store: &Store, namespace: &str, pod: &mut Value) -> Result<(), ApiError> {
    let name = pod["metadata"]["name"]
        .as_str()
        .or(pod["metadata"]["generateName"].as_str())
        .unwrap_or("")
        .to_string();
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    let sa_name = spec
        .get("serviceAccountName")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or("default")
        .to_string();
    spec.insert("serviceAccountName".into(), json!(sa_name));
    spec.insert("serviceAccount".into(), json!(sa_name));
    let sa = store
        .get_value("v1", "ServiceAccount", namespace, &sa_name)
        .ok_or_else(|| {
            ApiError::forbidden(format!(
                "pods \"{name}\" is forbidden: error looking up service account {namespace}/{sa_name}: serviceaccount \"{sa_name}\" not found"
            ))
        })?;
    let automount = spec
        .get("automountServiceAccountToken")
        .and_then(Value::as_bool)
        .or(sa["automountServiceAccountToken"].as_bool())
        .unwrap_or(true);
    if !automount {
        return Ok(());
    }
    let volume_name = format!("kube-api-access-{}", meta::random_suffix(5));
    let volumes = spec.entry("volumes").or_insert(json!([]));
    if !volumes.is_array() {
        *volumes = json!([]);
    }
    if let Some(vs) = volumes.as_array_mut() {
        vs.push(json!({
            "name": volume_name,
            "projected": {
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt",
                                   "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef":
                        {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
                ],
                "defaultMode": 420
            }
        }));
    }
    for list in ["containers", "initContainers"] {
        for c in spec
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            let Some(cm) = c.as_object_mut() else {
                continue;
            };
            let mounts = cm.entry("volumeMounts").or_insert(json!([]));
            if !mounts.is_array() {
                *mounts = json!([]);
            }
            let Some(ms) = mounts.as_array_mut() else {
                continue;
            };
            if ms.iter().any(|m| m["mountPath"] == TOKEN_MOUNT) {
                continue;
            }
            ms.push(json!({"name": volume_name, "readOnly": true, "mountPath": TOKEN_MOUNT}));
        }
    }
    Ok(())
}

/// `DefaultTolerationSeconds`: tolerate not-ready and unreachable nodes for 300 s unless the pod
/// already tolerates them.
fn default_tolerations(pod: &mut Value) {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let tolerations = spec.entry("tolerations").or_insert(json!([]));
    if !tolerations.is_array() {
        *tolerations = json!([]);
    }
    let Some(ts) = tolerations.as_array_mut() else {
        return;
    };
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let tolerated = ts.iter().any(|t| {
            let effect = t["effect"].as_str().unwrap_or("");
            (t["key"] == key || (t["key"].is_null() && t["operator"] == "Exists"))
                && (effect.is_empty() || effect == "NoExecute")
        });
        if !tolerated {
            ts.push(
                json!({"key": key, "operator": "Exists", "effect": "NoExecute",
                           "tolerationSeconds": 300}),
            );
        }
    }
}

/// `Priority`: no class named and no global default → priority 0 and the default preemption.
fn priority(pod: &mut Value) {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let class = spec
        .get("priorityClassName")
        .and_then(Value::as_str)
        .unwrap_or("");
    let value = match class {
        "system-node-critical" => 2_000_001_000,
        "system-cluster-critical" => 2_000_000_000,
        _ => 0,
    };
    or_insert(spec, "priority", json!(value));
    or_insert(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
}

/// `GetPodQOS`: BestEffort without requests or limits, Guaranteed when every container limits
/// cpu and memory at its requests, Burstable otherwise.
fn qos_class(spec: &Value) -> &'static str {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .flat_map(|l| spec[l].as_array().into_iter().flatten())
        .collect();
    let none = |v: &Value| v.as_object().is_none_or(Map::is_empty);
    if containers
        .iter()
        .all(|c| none(&c["resources"]["requests"]) && none(&c["resources"]["limits"]))
    {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        let limits = &c["resources"]["limits"];
        let requests = &c["resources"]["requests"];
        ["cpu", "memory"]
            .iter()
            .all(|r| !limits[r].is_null() && (requests[r].is_null() || requests[r] == limits[r]))
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerations_are_added_once() {
        let mut pod = json!({"spec": {"tolerations": [
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 5}
        ]}});
        default_tolerations(&mut pod);
        let ts = pod["spec"]["tolerations"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(ts.len(), 2);
        assert_eq!(ts[0]["tolerationSeconds"], 5);
    }

    #[test]
    fn qos_classes() {
        assert_eq!(
            qos_class(&json!({"containers": [{"name": "a"}]})),
            "BestEffort"
        );
        let g = json!({"containers": [{"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]});
        assert_eq!(qos_class(&g), "Guaranteed");
        let b = json!({"containers": [{"resources": {"requests": {"cpu": "1"}}}]});
        assert_eq!(qos_class(&b), "Burstable");
    }
}
