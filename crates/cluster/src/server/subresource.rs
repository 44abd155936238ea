//! The `/scale` subresource (autoscaling/v1 Scale over a kind's replicas paths) and the status
//! subresource's rule that each endpoint only changes its own half of the object.

use serde_json::{Value, json};

use super::{
    meta::{get_path, set_path},
    resources::ResourceInfo,
    selector::LabelSelector,
};

/// The Scale view of an object.
pub fn scale_of(res: &ResourceInfo, obj: &Value) -> Value {
    let Some(paths) = &res.scale else {
        return Value::Null;
    };
    let spec = get_path(obj, &paths.spec_replicas)
        .cloned()
        .unwrap_or(json!(0));
    let status = get_path(obj, &paths.status_replicas)
        .cloned()
        .unwrap_or(json!(0));
    let selector = paths
        .label_selector
        .as_deref()
        .and_then(|p| get_path(obj, p))
        .map(|s| match s {
            Value::String(s) => s.clone(),
            // A ReplicationController's selector is a plain label map.
            Value::Object(m)
                if !m.contains_key("matchLabels") && !m.contains_key("matchExpressions") =>
            {
                LabelSelector::from_object(&json!({"matchLabels": m})).to_query()
            }
            other => LabelSelector::from_object(other).to_query(),
        })
        .unwrap_or_default();
    let m = &obj["metadata"];
    let mut meta = json!({
        "name": m["name"],
        "uid": m["uid"],
        "resourceVersion": m["resourceVersion"],
        "creationTimestamp": m["creationTimestamp"],
    });
    if m["namespace"].is_string() {
        meta["namespace"] = m["namespace"].clone();
    }
    // `selector` is omitempty in autoscaling/v1's ScaleStatus.
    let mut status = json!({"replicas": status});
    if !selector.is_empty() {
        status["selector"] = json!(selector);
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": meta,
        // `replicas` is omitempty in autoscaling/v1's ScaleSpec.
        "spec": if spec == json!(0) { json!({}) } else { json!({"replicas": spec}) },
        "status": status,
    })
}

/// Write a (patched) Scale's replicas back into the object; carries its resourceVersion.
pub fn apply_scale(res: &ResourceInfo, obj: &mut Value, scale: &Value) {
    let Some(paths) = &res.scale else {
        return;
    };
    set_path(obj, &paths.spec_replicas, scale["spec"]["replicas"].clone());
    if let Some(rv) = scale["metadata"]["resourceVersion"].as_str() {
        set_path(obj, ".metadata.resourceVersion", json!(rv));
    }
}

/// Merge a write into the live object according to the endpoint: the main endpoint keeps the
/// live status; `/status` keeps everything but status (and takes the caller's resourceVersion).
pub fn split_status(res: &ResourceInfo, sub: Option<&str>, old: &Value, new: Value) -> Value {
    if !res.status {
        return new;
    }
    let core = |kind: &str| res.group.is_empty() && res.kind == kind;
    match sub {
        Some("status") => {
            let mut out = old.clone();
            if let Some(m) = out.as_object_mut() {
                match new.get("status") {
                    Some(s) => m.insert("status".into(), s.clone()),
                    None => m.remove("status"),
                };
            }
            // A pod's QoS class is the server's, never the status writer's.
            if core("Pod")
                && let Some(qos) = old["status"].get("qosClass").cloned()
                && let Some(st) = out.get_mut("status").and_then(Value::as_object_mut)
            {
                st.insert("qosClass".into(), qos);
            }
            match new["metadata"]["resourceVersion"].as_str() {
                Some(rv) => set_path(&mut out, ".metadata.resourceVersion", json!(rv)),
                None => {
                    if let Some(m) = out["metadata"].as_object_mut() {
                        m.remove("resourceVersion");
                    }
                }
            }
            out
        }
        _ => {
            let mut out = new;
            if let Some(m) = out.as_object_mut() {
                match old.get("status") {
                    Some(s) => m.insert("status".into(), s.clone()),
                    None => m.remove("status"),
                };
            }
            // A namespace's spec.finalizers change only through /finalize.
            if core("Namespace") && sub.is_none() {
                let kept = old["spec"].get("finalizers").cloned();
                if let (Some(f), Some(m)) = (kept, out.as_object_mut()) {
                    let spec = m.entry("spec").or_insert(json!({}));
                    if spec.is_object() {
                        spec["finalizers"] = f;
                    }
                }
            }
            out
        }
    }
}
