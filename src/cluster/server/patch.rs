//! Patch application: JSON merge patch (RFC 7386), JSON patch (RFC 6902, a failed `test` is 422),
//! strategic merge patch with the built-in kinds' merge keys, and server-side apply.

use serde_json::{Map, Value};

use super::status::ApiError;

/// The patch media types the server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchKind {
    Merge,
    Json,
    Strategic,
    Apply,
}

impl PatchKind {
    pub fn from_content_type(ct: &str) -> Option<PatchKind> {
        let base = ct.split(';').next().unwrap_or("").trim();
        match base {
            "application/merge-patch+json" => Some(PatchKind::Merge),
            "application/json-patch+json" => Some(PatchKind::Json),
            "application/strategic-merge-patch+json" => Some(PatchKind::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+json" => {
                Some(PatchKind::Apply)
            }
            _ => None,
        }
    }
}

/// Apply a JSON patch document.
pub fn json_patch(doc: &mut Value, patch: &Value) -> Result<(), ApiError> {
    let ops: json_patch::Patch = serde_json::from_value(patch.clone())
        .map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?;
    json_patch::patch(doc, &ops).map_err(|e| {
        // What the real server answers (apimachinery's NewGenericServerResponse for 422), with
        // the patch library's reason as an UnexpectedServerResponse cause.
        let why = match e.kind {
            json_patch::PatchErrorKind::TestFailed => {
                format!("testing value {} failed: test failed", e.path)
            }
            _ => e.to_string(),
        };
        let mut err = ApiError::new(
            422,
            "Invalid",
            "the server rejected our request due to an error in our request",
        );
        err.details = Some(serde_json::json!({
            "causes": [{"reason": "UnexpectedServerResponse", "message": why}]
        }));
        err
    })
}

/// Apply a JSON merge patch.
pub fn merge_patch(doc: &mut Value, patch: &Value) {
    json_patch::merge(doc, patch);
}

/// The merge key of a list field in built-in kinds (None: the list is replaced whole).
fn merge_key(field: &str, sample: Option<&Value>) -> Option<&'static str> {
    match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "containerStatuses"
        | "initContainerStatuses"
        | "resourceClaims" => Some("name"),
        "volumeMounts" => Some("mountPath"),
        "volumeDevices" => Some("devicePath"),
        "conditions" => Some("type"),
        "ownerReferences" => Some("uid"),
        "hostAliases" => Some("ip"),
        "topologySpreadConstraints" => Some("topologyKey"),
        "ports" => {
            // Container ports merge on containerPort, service ports on port.
            if sample.is_some_and(|s| s.get("containerPort").is_some()) {
                Some("containerPort")
            } else {
                Some("port")
            }
        }
        _ => None,
    }
}

/// Lists of scalars merged as sets.
fn merges_as_set(field: &str) -> bool {
    matches!(field, "finalizers")
}

/// Apply a strategic merge patch (directives `$patch`, `$retainKeys`, `$setElementOrder/...`,
/// `$deleteFromPrimitiveList/...` understood).
pub fn strategic_merge(doc: &mut Value, patch: &Value) {
    let Some(pm) = patch.as_object() else {
        *doc = patch.clone();
        return;
    };
    if pm.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut p = pm.clone();
        p.remove("$patch");
        *doc = Value::Object(p);
        return;
    }
    if !doc.is_object() {
        *doc = Value::Object(Map::new());
    }
    let Some(dm) = doc.as_object_mut() else {
        return;
    };
    if let Some(keep) = pm.get("$retainKeys").and_then(Value::as_array) {
        let keep: Vec<&str> = keep.iter().filter_map(Value::as_str).collect();
        dm.retain(|k, _| keep.contains(&k.as_str()));
    }
    for (k, pv) in pm {
        if k.starts_with("$setElementOrder/") || k == "$retainKeys" || k == "$patch" {
            continue;
        }
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(list), Some(del)) = (
                dm.get_mut(field).and_then(Value::as_array_mut),
                pv.as_array(),
            ) {
                list.retain(|x| !del.contains(x));
            }
            continue;
        }
        match pv {
            Value::Null => {
                dm.remove(k);
            }
            Value::Object(_) => {
                if pv.get("$patch").and_then(Value::as_str) == Some("delete") {
                    dm.remove(k);
                } else {
                    strategic_merge(dm.entry(k.clone()).or_insert(Value::Null), pv);
                }
            }
            Value::Array(items) => {
                let existing = dm.get_mut(k);
                match (existing, merge_key(k, items.first())) {
                    (Some(Value::Array(cur)), Some(key)) => merge_list(cur, items, key),
                    (Some(Value::Array(cur)), None) if merges_as_set(k) => {
                        for it in items {
                            if !cur.contains(it) {
                                cur.push(it.clone());
                            }
                        }
                    }
                    _ => {
                        let clean: Vec<Value> = items
                            .iter()
                            .filter(|i| i.get("$patch").is_none())
                            .cloned()
                            .collect();
                        dm.insert(k.clone(), Value::Array(clean));
                    }
                }
            }
            other => {
                dm.insert(k.clone(), other.clone());
            }
        }
    }
}

fn merge_list(cur: &mut Vec<Value>, items: &[Value], key: &str) {
    if items
        .iter()
        .any(|i| i.get("$patch").and_then(Value::as_str) == Some("replace"))
    {
        *cur = items
            .iter()
            .filter(|i| i.get("$patch").is_none())
            .cloned()
            .collect();
        return;
    }
    for it in items {
        let kv = it.get(key);
        let pos = kv.and_then(|kv| cur.iter().position(|c| c.get(key) == Some(kv)));
        let delete = it.get("$patch").and_then(Value::as_str) == Some("delete");
        match (pos, delete) {
            (Some(p), true) => {
                cur.remove(p);
            }
            (None, true) => {}
            (Some(p), false) => strategic_merge(&mut cur[p], it),
            (None, false) => {
                let mut fresh = Value::Object(Map::new());
                strategic_merge(&mut fresh, it);
                cur.push(fresh);
            }
        }
    }
}

/// Server-side apply: merge the applied configuration into the live object. Built-in kinds merge
/// lists by their merge keys; custom resources replace lists (atomic), like their default
/// list type. Fields are never removed (ownership is not tracked).
pub fn apply(doc: &mut Value, applied: &Value, strategic: bool) {
    if strategic {
        strategic_merge(doc, applied);
    } else {
        apply_atomic(doc, applied);
    }
}

fn apply_atomic(doc: &mut Value, applied: &Value) {
    match (doc.as_object_mut(), applied.as_object()) {
        (Some(d), Some(a)) => {
            for (k, v) in a {
                if v.is_object() && d.get(k).is_some_and(Value::is_object) {
                    if let Some(slot) = d.get_mut(k) {
                        apply_atomic(slot, v);
                    }
                } else {
                    d.insert(k.clone(), v.clone());
                }
            }
        }
        _ => *doc = applied.clone(),
    }
}

/// Remove from `doc` what a manager applied before (`prev`) but no longer applies (`now`).
/// Objects recurse; lists with a merge key (built-in kinds) drop the items whose key vanished.
pub fn remove_unapplied(doc: &mut Value, prev: &Value, now: &Value, strategic: bool) {
    let (Some(d), Some(p), Some(n)) = (doc.as_object_mut(), prev.as_object(), now.as_object())
    else {
        return;
    };
    for (k, pv) in p {
        let Some(nv) = n.get(k) else {
            d.remove(k);
            continue;
        };
        let Some(dv) = d.get_mut(k) else { continue };
        match (pv, nv) {
            (Value::Object(_), Value::Object(_)) => remove_unapplied(dv, pv, nv, strategic),
            (Value::Array(pa), Value::Array(na)) if strategic => {
                let Some(key) = merge_key(k, pa.first().or(na.first())) else {
                    continue;
                };
                let Some(da) = dv.as_array_mut() else {
                    continue;
                };
                for item in pa {
                    let Some(id) = item.get(key) else { continue };
                    match na.iter().find(|x| x.get(key) == Some(id)) {
                        None => da.retain(|x| x.get(key) != Some(id)),
                        Some(ni) => {
                            if let Some(di) = da.iter_mut().find(|x| x.get(key) == Some(id)) {
                                remove_unapplied(di, item, ni, strategic);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// Parse a request body as JSON, or as YAML (apply patches and kubectl's YAML bodies).
pub fn parse_body(body: &[u8]) -> Result<Value, ApiError> {
    match serde_json::from_slice(body) {
        Ok(v) => Ok(v),
        Err(je) => {
            let text = std::str::from_utf8(body).map_err(|_| {
                ApiError::bad_request(format!("the request body is not valid JSON: {je}"))
            })?;
            serde_saphyr::from_str::<Value>(text).map_err(|e| {
                ApiError::bad_request(format!("the request body is neither JSON nor YAML: {e}"))
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strategic_merges_containers_by_name_and_env() {
        let mut pod = json!({"spec": {"containers": [
            {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}]},
            {"name": "b", "image": "b:1"}
        ], "finalizers": []}});
        strategic_merge(
            &mut pod,
            &json!({"spec": {"containers": [
                {"name": "a", "image": "a:2", "env": [{"name": "Y", "value": "2"}]},
                {"name": "b", "$patch": "delete"},
                {"name": "c", "image": "c:1"}
            ]}}),
        );
        let cs = pod["spec"]["containers"].as_array().unwrap();
        assert_eq!(cs.len(), 2);
        assert_eq!(cs[0]["image"], "a:2");
        assert_eq!(cs[0]["env"].as_array().unwrap().len(), 2);
        assert_eq!(cs[1]["name"], "c");
    }

    #[test]
    fn strategic_replace_and_null() {
        let mut v = json!({"a": {"b": 1, "c": 2}, "tolerations": [{"key": "x"}]});
        strategic_merge(
            &mut v,
            &json!({"a": {"b": null}, "tolerations": [{"key": "y"}]}),
        );
        assert_eq!(v, json!({"a": {"c": 2}, "tolerations": [{"key": "y"}]}));
        strategic_merge(&mut v, &json!({"a": {"$patch": "replace", "z": 1}}));
        assert_eq!(v["a"], json!({"z": 1}));
    }

    #[test]
    fn json_patch_test_failure_is_422() {
        let mut v = json!({"spec": {"replicas": 1}});
        let err = json_patch(
            &mut v,
            &json!([{"op": "test", "path": "/spec/replicas", "value": 2}]),
        )
        .unwrap_err();
        assert_eq!(err.code, 422);
        assert_eq!(
            err.message,
            "the server rejected our request due to an error in our request"
        );
        assert_eq!(
            err.details.unwrap()["causes"][0]["message"],
            "testing value /spec/replicas failed: test failed"
        );
        json_patch(
            &mut v,
            &json!([{"op": "replace", "path": "/spec/replicas", "value": 3}]),
        )
        .unwrap();
        assert_eq!(v["spec"]["replicas"], 3);
    }

    #[test]
    fn reapply_removes_dropped_fields() {
        let prev = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"containers": [
            {"name": "x", "image": "x", "args": ["1"]}, {"name": "y", "image": "y"}]}});
        let now = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"containers": [{"name": "x", "image": "x"}]}});
        let mut live = json!({"metadata": {"labels": {"a": "1", "b": "2", "other": "keep"}}, "spec": {"containers": [
            {"name": "x", "image": "x", "args": ["1"]}, {"name": "y", "image": "y"}, {"name": "z", "image": "z"}]}});
        remove_unapplied(&mut live, &prev, &now, true);
        assert_eq!(
            live,
            json!({"metadata": {"labels": {"a": "1", "other": "keep"}}, "spec": {"containers": [
            {"name": "x", "image": "x"}, {"name": "z", "image": "z"}]}})
        );
    }

    #[test]
    fn yaml_bodies() {
        let v = parse_body(b"a: 1\nb: [x]\n").unwrap();
        assert_eq!(v, json!({"a": 1, "b": ["x"]}));
    }
}
