//! Representations that share storage: `events.k8s.io/v1` Events are stored as core `v1` Events
//! (so `kubectl describe` sees what kube-rs' event recorder writes), `autoscaling/v1`
//! HorizontalPodAutoscalers as `autoscaling/v2` ones, and the versions of a multi-version CRD
//! share one stored object, as on a real server without a conversion webhook (strategy `None`):
//! an object is stored at the CRD's storage version, and each read or write through a version only
//! rewrites `apiVersion` and prunes the fields that version's schema does not know (upstream's
//! `schemaCoercingConverter`). So a CloneSet written as v1beta1 with `rollingUpdate.partition`
//! reads at v1alpha1 without a partition, as a real server serves it.

mod hpa;

use base64::{Engine, engine::general_purpose::STANDARD};
use serde_json::{Map, Value, json};

use super::{
    resources::{Registry, ResourceInfo},
    schema,
};

fn is_hpa_v1(res: &ResourceInfo) -> bool {
    res.group == "autoscaling" && res.version == "v1" && res.plural == "horizontalpodautoscalers"
}

const NEW_EVENTS: &str = "events.k8s.io";

/// Whether this resource is stored in another resource's table (and which one).
pub fn storage_of(res: &ResourceInfo) -> Option<(&'static str, &'static str, &'static str)> {
    if is_hpa_v1(res) {
        return Some(("autoscaling", "v2", "horizontalpodautoscalers"));
    }
    (res.group == NEW_EVENTS && res.plural == "events").then_some(("", "v1", "events"))
}

fn put(m: &mut Map<String, Value>, k: &str, v: Option<&Value>) {
    if let Some(v) = v.filter(|v| !v.is_null()) {
        m.insert(k.to_string(), v.clone());
    }
}

fn core_to_new(v: &Value) -> Value {
    let mut m = Map::new();
    m.insert("apiVersion".into(), json!("events.k8s.io/v1"));
    m.insert("kind".into(), json!("Event"));
    put(&mut m, "metadata", v.get("metadata"));
    put(&mut m, "eventTime", v.get("eventTime"));
    put(&mut m, "series", v.get("series"));
    let controller = v
        .get("reportingComponent")
        .filter(|x| x.as_str().is_some_and(|s| !s.is_empty()));
    put(
        &mut m,
        "reportingController",
        controller.or(v["source"].get("component")),
    );
    let instance = v
        .get("reportingInstance")
        .filter(|x| x.as_str().is_some_and(|s| !s.is_empty()));
    put(
        &mut m,
        "reportingInstance",
        instance.or(v["source"].get("host")),
    );
    put(&mut m, "action", v.get("action"));
    put(&mut m, "reason", v.get("reason"));
    put(&mut m, "regarding", v.get("involvedObject"));
    put(&mut m, "related", v.get("related"));
    put(&mut m, "note", v.get("message"));
    put(&mut m, "type", v.get("type"));
    put(&mut m, "deprecatedSource", v.get("source"));
    put(&mut m, "deprecatedFirstTimestamp", v.get("firstTimestamp"));
    put(&mut m, "deprecatedLastTimestamp", v.get("lastTimestamp"));
    put(&mut m, "deprecatedCount", v.get("count"));
    Value::Object(m)
}

fn new_to_core(v: &Value) -> Value {
    let mut m = Map::new();
    m.insert("apiVersion".into(), json!("v1"));
    m.insert("kind".into(), json!("Event"));
    put(&mut m, "metadata", v.get("metadata"));
    put(&mut m, "involvedObject", v.get("regarding"));
    put(&mut m, "reason", v.get("reason"));
    put(&mut m, "message", v.get("note"));
    let source = v.get("deprecatedSource").cloned().unwrap_or_else(|| {
        let mut s = Map::new();
        put(&mut s, "component", v.get("reportingController"));
        put(&mut s, "host", v.get("reportingInstance"));
        Value::Object(s)
    });
    m.insert("source".into(), source);
    let first = v.get("deprecatedFirstTimestamp").or(v.get("eventTime"));
    put(&mut m, "firstTimestamp", first);
    let last = v["series"]
        .get("lastObservedTime")
        .or(v.get("deprecatedLastTimestamp"))
        .or(v.get("eventTime"));
    put(&mut m, "lastTimestamp", last);
    let count = v
        .get("deprecatedCount")
        .cloned()
        .or_else(|| v["series"].get("count").cloned())
        .unwrap_or(json!(1));
    m.insert("count".into(), count);
    put(&mut m, "type", v.get("type"));
    put(&mut m, "eventTime", v.get("eventTime"));
    put(&mut m, "series", v.get("series"));
    put(&mut m, "action", v.get("action"));
    put(&mut m, "related", v.get("related"));
    put(&mut m, "reportingComponent", v.get("reportingController"));
    put(&mut m, "reportingInstance", v.get("reportingInstance"));
    Value::Object(m)
}

/// Whether serving `res` needs more than the stored bytes (`head`: apiVersion, kind, metadata).
pub fn needs_conversion(res: &ResourceInfo, head: &Value) -> bool {
    (res.group == NEW_EVENTS && res.plural == "events")
        || head["apiVersion"].as_str() != Some(res.api_version().as_str())
}

/// A stored object as served by `res` (None: the stored bytes are already right).
pub fn to_served(res: &ResourceInfo, stored: &Value) -> Option<Value> {
    if res.group == NEW_EVENTS && res.plural == "events" {
        return Some(core_to_new(stored));
    }
    if stored["apiVersion"].as_str() == Some(res.api_version().as_str()) {
        return None;
    }
    if is_hpa_v1(res) {
        return Some(hpa::to_v1(stored));
    }
    let mut v = stored.clone();
    if let Some(m) = v.as_object_mut() {
        m.insert("apiVersion".into(), json!(res.api_version()));
    }
    if res.webhook_conversion {
        let from = stored["apiVersion"]
            .as_str()
            .and_then(|a| a.rsplit_once('/'))
            .map_or("", |(_, version)| version);
        kruise_convert(res, from, &res.version, stored, &mut v);
    }
    prune_for(res, &mut v);
    Some(v)
}

/// Kruise's conversion webhook (run in-process) from `from` to `to`, on a copy of `object`
/// written into `out`. A refusal (an AdvancedCronJob with an ImageListPullJob template read as
/// v1alpha1) leaves `out` as the schema-coerced copy, which then prunes the field: a real server
/// fails the read instead.
fn kruise_convert(res: &ResourceInfo, from: &str, to: &str, object: &Value, out: &mut Value) {
    let mut converted = object.clone();
    match crate::api::conversion::convert(&res.group, &res.kind, from, to, &mut converted) {
        Ok(()) => *out = converted,
        Err(err) => tracing::warn!(kind = %res.kind, %err, "conversion refused"),
    }
}

/// Drops what the schema of `res` (a CRD version) does not know, as the real server does after
/// converting an object to that version.
fn prune_for(res: &ResourceInfo, v: &mut Value) {
    if let (true, Some(schema)) = (res.crd, &res.schema) {
        // Only the pruning matters here: the object was validated when it was written.
        let _ = schema::validate_object(schema, v);
    }
}

/// An object written through `res`, in its storage form: core Events for `events.k8s.io`, the
/// storage version (pruned to its schema) for a CRD served at several versions.
pub fn to_stored(reg: &Registry, res: &ResourceInfo, served: Value) -> Value {
    if res.group == NEW_EVENTS && res.plural == "events" {
        return new_to_core(&served);
    }
    if is_hpa_v1(res) {
        return hpa::to_v2(&served);
    }
    let mut v = served;
    if res.crd
        && reg.storage_version(res) != res.version
        && let Some(storage) = reg.storage_resource(res)
    {
        if let Some(m) = v.as_object_mut() {
            m.insert("apiVersion".into(), json!(storage.api_version()));
        }
        if res.webhook_conversion {
            let written = v.clone();
            kruise_convert(res, &res.version, &storage.version, &written, &mut v);
        }
        prune_for(&storage, &mut v);
    }
    v
}

/// A Secret's write-only `stringData`, merged into `data` (base64) as the real server's
/// conversion does; it is never stored.
pub fn merge_string_data(secret: &mut Value) {
    let Some(m) = secret.as_object_mut() else {
        return;
    };
    let Some(Value::Object(plain)) = m.remove("stringData") else {
        return;
    };
    let data = m.entry("data").or_insert_with(|| json!({}));
    if !data.is_object() {
        *data = json!({});
    }
    if let Some(d) = data.as_object_mut() {
        for (k, v) in plain {
            let text = v.as_str().unwrap_or_default();
            d.insert(k, json!(STANDARD.encode(text)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_data_is_merged_into_data() {
        let mut s = json!({"kind": "Secret", "data": {"a": "YQ==", "b": "eA=="}, "stringData": {"b": "b", "c": "hi"}});
        merge_string_data(&mut s);
        assert_eq!(
            s,
            json!({"kind": "Secret", "data": {"a": "YQ==", "b": "Yg==", "c": "aGk="}})
        );
    }

    #[test]
    fn events_round_trip() {
        let new = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"},
            "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "kruise", "reportingInstance": "i",
            "action": "Scale", "reason": "Scaled", "regarding": {"kind": "CloneSet", "name": "web"},
            "note": "scaled to 3", "type": "Normal"});
        let core = new_to_core(&new);
        assert_eq!(core["involvedObject"]["name"], "web");
        assert_eq!(core["message"], "scaled to 3");
        assert_eq!(core["source"]["component"], "kruise");
        assert_eq!(core["count"], 1);
        let back = core_to_new(&core);
        for k in [
            "reportingController",
            "reason",
            "regarding",
            "note",
            "type",
            "action",
            "eventTime",
        ] {
            assert_eq!(back[k], new[k], "{k}");
        }
    }
}
