//! The workload mutating webhook of Kruise Rollout (`pkg/webhook/workload/mutating`:
//! `handleCloneSet`, `handleDaemonSet`, `handleStatefulSetLikeWorkload`): on an effective
//! template change of a workload a Rollout names, hold the whole update back (partition) and
//! mark the workload `in-progressing`, so the Rollout takes over the release.

use serde_json::{Value, json};

use super::control::MAX_PARTITION;
use crate::api::keys;
use crate::api::rollout::Rollout;
use crate::kruise::rollout::controlling;
use crate::kruise::rollout::workload::TargetKind;

fn annotation<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `util.EqualIgnoreHash`: the pod templates equal once `pod-template-hash` is dropped from
/// their labels.
pub fn equal_ignore_hash(old: Option<&Value>, new: Option<&Value>) -> bool {
    let strip = |t: Option<&Value>| {
        let mut t = t.cloned().unwrap_or(Value::Null);
        if let Some(labels) = t
            .pointer_mut("/metadata/labels")
            .and_then(Value::as_object_mut)
        {
            labels.remove("pod-template-hash");
            if labels.is_empty()
                && let Some(meta) = t.pointer_mut("/metadata").and_then(Value::as_object_mut)
            {
                meta.remove("labels");
            }
        }
        t
    };
    strip(old) == strip(new)
}

/// The rollout-id / template test shared by every kind: false means the update is let through.
pub fn is_effective_change(old: &Value, new: &Value) -> bool {
    let new_id = annotation(new, keys::ROLLOUT_ID);
    if !new_id.is_empty() && annotation(old, keys::ROLLOUT_ID) == new_id {
        return false;
    }
    if new_id.is_empty()
        && equal_ignore_hash(old.pointer("/spec/template"), new.pointer("/spec/template"))
    {
        return false;
    }
    true
}

fn replicas(obj: &Value) -> i64 {
    obj.pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

/// The admitted object, mutated, when the update is intercepted; None lets it through as is.
/// `rollouts` are the Rollouts of the workload's namespace.
pub fn intercept(
    kind: TargetKind,
    old: &Value,
    new: &Value,
    rollouts: &[Rollout],
) -> Option<Value> {
    match kind {
        TargetKind::CloneSet => {
            if replicas(new) == 0 {
                return None;
            }
        }
        TargetKind::StatefulSet | TargetKind::AdvancedStatefulSet => {
            let type_ = new
                .pointer("/spec/updateStrategy/type")
                .and_then(Value::as_str)
                .unwrap_or("");
            if replicas(new) == 0 || !(type_.is_empty() || type_ == "RollingUpdate") {
                return None;
            }
            if old.pointer("/spec/template").is_none() || new.pointer("/spec/template").is_none() {
                return None;
            }
        }
        TargetKind::AdvancedDaemonSet => {}
    }
    if !is_effective_change(old, new) {
        return None;
    }
    let (group, kind_name) = kind.group_kind();
    let name = new
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let rollout = controlling(rollouts, group, kind_name, name)?;
    let canary = rollout.spec.strategy.canary.as_ref()?;
    if kind == TargetKind::CloneSet && !canary.traffic_routings.is_empty() {
        let status = |k: &str| {
            new.pointer(&format!("/status/{k}"))
                .and_then(Value::as_i64)
                .unwrap_or(0)
        };
        if status("replicas") != status("updatedReplicas") {
            return None;
        }
    }
    let mut out = new.clone();
    let partition = match kind {
        TargetKind::CloneSet => json!("100%"),
        _ => json!(MAX_PARTITION),
    };
    // A CloneSet admitted at v1beta1 keeps its partition under `rollingUpdate`.
    let v1beta1 = new.get("apiVersion").and_then(Value::as_str) == Some("apps.kruise.io/v1beta1");
    let path: &[&str] = match kind {
        TargetKind::CloneSet if !v1beta1 => &["spec", "updateStrategy"],
        _ => &["spec", "updateStrategy", "rollingUpdate"],
    };
    let mut cursor = &mut out;
    for key in path {
        cursor = ensure_object(cursor, key);
    }
    if let Some(map) = cursor.as_object_mut() {
        map.insert("partition".into(), partition);
    }
    let rollout_name = rollout.metadata.name.clone().unwrap_or_default();
    let state = json!({"rolloutName": rollout_name}).to_string();
    let annotations = ensure_object(ensure_object(&mut out, "metadata"), "annotations");
    if let Some(map) = annotations.as_object_mut() {
        map.insert(keys::ROLLOUT_IN_PROGRESSING.into(), Value::String(state));
    }
    copy_uid(old, &mut out);
    Some(out)
}

fn ensure_object<'a>(v: &'a mut Value, key: &str) -> &'a mut Value {
    if !v.is_object() {
        *v = json!({});
    }
    let slot = &mut v[key];
    if !slot.is_object() {
        *slot = json!({});
    }
    slot
}

/// The old UID copied into a new object that lacks one (Karmada/OCM compatibility).
fn copy_uid(old: &Value, new: &mut Value) {
    let old_uid = old
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("");
    let new_uid = new
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("");
    if new_uid.is_empty() && !old_uid.is_empty() {
        let meta = ensure_object(new, "metadata");
        if let Some(map) = meta.as_object_mut() {
            map.insert("uid".into(), Value::String(old_uid.to_owned()));
        }
    }
}
