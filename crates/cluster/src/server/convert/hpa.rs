//! HorizontalPodAutoscaler at `autoscaling/v1` over `autoscaling/v2` storage (kubectl v1.32's
//! `autoscale` writes v1). v1 holds a CPU utilization target only; what it cannot hold (other
//! metrics, behavior, current metrics, conditions) travels in the `autoscaling.alpha.kubernetes.io/`
//! annotations the real server uses for the same purpose, so a v1 read-modify-write loses nothing.

use serde_json::{Map, Value, json};

const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
const CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";

fn is_cpu_utilization(m: &Value, target: &str) -> bool {
    m["type"] == "Resource"
        && m["resource"]["name"] == "cpu"
        && (target.is_empty() || m["resource"]["target"]["type"] == target)
}

fn copy(from: &Value, to: &mut Map<String, Value>, keys: &[&str]) {
    for k in keys {
        if let Some(v) = from.get(*k).filter(|v| !v.is_null()) {
            to.insert(k.to_string(), v.clone());
        }
    }
}

fn annotate(meta: &mut Value, key: &str, v: &Value) {
    if v.as_array().is_some_and(|a| a.is_empty()) || v.is_null() {
        return;
    }
    if !meta["annotations"].is_object() {
        meta["annotations"] = json!({});
    }
    meta["annotations"][key] = json!(v.to_string());
}

/// Take a JSON-valued annotation out of metadata.
fn take(meta: &mut Value, key: &str) -> Option<Value> {
    let annotations = meta.get_mut("annotations")?.as_object_mut()?;
    let raw = annotations.remove(key)?;
    if annotations.is_empty()
        && let Some(m) = meta.as_object_mut()
    {
        m.remove("annotations");
    }
    serde_json::from_str(raw.as_str()?).ok()
}

/// A stored (v2) HPA as autoscaling/v1 serves it.
pub fn to_v1(v2: &Value) -> Value {
    let mut meta = v2["metadata"].clone();
    let spec = &v2["spec"];
    let mut s = Map::new();
    copy(
        spec,
        &mut s,
        &["scaleTargetRef", "minReplicas", "maxReplicas"],
    );
    let metrics: Vec<Value> = spec["metrics"].as_array().cloned().unwrap_or_default();
    let (cpu, rest): (Vec<Value>, Vec<Value>) = metrics
        .into_iter()
        .partition(|m| is_cpu_utilization(m, "Utilization"));
    if let Some(u) = cpu
        .first()
        .map(|m| m["resource"]["target"]["averageUtilization"].clone())
        .filter(|u| !u.is_null())
    {
        s.insert("targetCPUUtilizationPercentage".into(), u);
    }
    annotate(&mut meta, METRICS, &Value::Array(rest));
    annotate(&mut meta, BEHAVIOR, &spec["behavior"]);
    let mut out = json!({
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "spec": Value::Object(s),
    });
    if let Some(st) = v2.get("status").filter(|s| s.is_object()) {
        let mut s1 = Map::new();
        copy(
            st,
            &mut s1,
            &[
                "observedGeneration",
                "lastScaleTime",
                "currentReplicas",
                "desiredReplicas",
            ],
        );
        let current: Vec<Value> = st["currentMetrics"].as_array().cloned().unwrap_or_default();
        let (cpu, rest): (Vec<Value>, Vec<Value>) =
            current.into_iter().partition(|m| is_cpu_utilization(m, ""));
        if let Some(u) = cpu
            .first()
            .map(|m| m["resource"]["current"]["averageUtilization"].clone())
            .filter(|u| !u.is_null())
        {
            s1.insert("currentCPUUtilizationPercentage".into(), u);
        }
        annotate(&mut meta, CURRENT_METRICS, &Value::Array(rest));
        annotate(&mut meta, CONDITIONS, &st["conditions"]);
        out["status"] = Value::Object(s1);
    }
    out["metadata"] = meta;
    out
}

/// An autoscaling/v1 HPA in its stored (v2) form.
pub fn to_v2(v1: &Value) -> Value {
    let mut meta = v1["metadata"].clone();
    let spec = &v1["spec"];
    let mut s = Map::new();
    copy(
        spec,
        &mut s,
        &["scaleTargetRef", "minReplicas", "maxReplicas"],
    );
    let mut metrics = match take(&mut meta, METRICS) {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    };
    if let Some(u) = spec
        .get("targetCPUUtilizationPercentage")
        .filter(|u| !u.is_null())
    {
        metrics.insert(
            0,
            json!({"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": u}}}),
        );
    }
    if !metrics.is_empty() {
        s.insert("metrics".into(), Value::Array(metrics));
    }
    if let Some(b) = take(&mut meta, BEHAVIOR) {
        s.insert("behavior".into(), b);
    }
    let current = take(&mut meta, CURRENT_METRICS);
    let conditions = take(&mut meta, CONDITIONS);
    let mut out = json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "spec": Value::Object(s),
    });
    if let Some(st) = v1.get("status").filter(|s| s.is_object()) {
        let mut s2 = Map::new();
        copy(
            st,
            &mut s2,
            &[
                "observedGeneration",
                "lastScaleTime",
                "currentReplicas",
                "desiredReplicas",
            ],
        );
        let mut cm = match current {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        };
        if let Some(u) = st
            .get("currentCPUUtilizationPercentage")
            .filter(|u| !u.is_null())
        {
            cm.insert(
                0,
                json!({"type": "Resource", "resource": {"name": "cpu",
                    "current": {"averageUtilization": u}}}),
            );
        }
        if !cm.is_empty() {
            s2.insert("currentMetrics".into(), Value::Array(cm));
        }
        if let Some(c) = conditions {
            s2.insert("conditions".into(), c);
        }
        out["status"] = Value::Object(s2);
    }
    out["metadata"] = meta;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_round_trips_through_v2_without_losing_v2_only_fields() {
        let v2 = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "demo"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 1, "maxReplicas": 5,
                "metrics": [
                    {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}},
                    {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "200Mi"}}}
                ],
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}},
            "status": {"currentReplicas": 2, "desiredReplicas": 3,
                "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 70}}}],
                "conditions": [{"type": "AbleToScale", "status": "True"}]}});
        let v1 = to_v1(&v2);
        assert_eq!(v1["apiVersion"], "autoscaling/v1");
        assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 50);
        assert_eq!(v1["status"]["currentCPUUtilizationPercentage"], 70);
        assert!(v1["spec"].get("metrics").is_none());
        assert!(v1["metadata"]["annotations"][METRICS].is_string());
        let back = to_v2(&v1);
        assert_eq!(back, v2);
        // A v1 object written from scratch.
        let fresh = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "x"}, "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "x"},
            "maxReplicas": 3, "targetCPUUtilizationPercentage": 80}});
        let v2 = to_v2(&fresh);
        assert_eq!(
            v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
            80
        );
        assert!(v2["metadata"].get("annotations").is_none());
    }
}
