//! `ValidatePodUpdate`'s spec rule: after creation a pod's spec may change only in its
//! containers' images, `activeDeadlineSeconds`, added tolerations and a negative
//! `terminationGracePeriodSeconds` set to 1. Anything else is refused, as on a real server, so a
//! client that PUTs a pod it rebuilt (and so drops what admission added) fails here as it would
//! there.

use serde_json::{Map, Value};

use super::status::FieldError;

const UPDATABLE: &str = "`spec.containers[*].image`,`spec.initContainers[*].image`,\
`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),\
`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

fn list_len(spec: &Value, k: &str) -> usize {
    spec[k].as_array().map_or(0, Vec::len)
}

/// The spec errors of updating a pod from `old` to `new` (empty when allowed).
pub fn spec_errors(old: &Value, new: &Value) -> Vec<FieldError> {
    // The old pod as a real server would hold it: defaulted (a pod seeded into the store
    // in-process skipped the defaults, which the new one has been given).
    let mut old = old.clone();
    super::poddefaults::defaults(&mut old);
    let (old_spec, new_spec) = (&old["spec"], &new["spec"]);
    for list in ["containers", "initContainers"] {
        if list_len(old_spec, list) != list_len(new_spec, list) {
            return vec![FieldError {
                field: format!("spec.{list}"),
                reason: "FieldValueForbidden",
                detail: "pod updates may not add or remove containers".into(),
                value: None,
            }];
        }
    }
    // The new spec with every updatable field taken from the old one must equal the old spec.
    let mut munged = new_spec.clone();
    for list in ["containers", "initContainers"] {
        if let (Some(olds), Some(news)) = (
            old_spec[list].as_array(),
            munged.get_mut(list).and_then(Value::as_array_mut),
        ) {
            for (o, n) in olds.iter().zip(news.iter_mut()) {
                if let Some(n) = n.as_object_mut() {
                    n.insert("image".into(), o["image"].clone());
                }
            }
        }
    }
    if let Some(m) = munged.as_object_mut() {
        copy(m, old_spec, "activeDeadlineSeconds");
        let old_grace = old_spec["terminationGracePeriodSeconds"].as_i64();
        if old_grace.is_some_and(|g| g < 0) && m["terminationGracePeriodSeconds"] == 1 {
            copy(m, old_spec, "terminationGracePeriodSeconds");
        }
        // Tolerations may only be added to.
        let old_tol = old_spec["tolerations"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let new_tol = m
            .get("tolerations")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if old_tol.iter().all(|t| new_tol.contains(t)) {
            copy(m, old_spec, "tolerations");
        }
    }
    if strip_nulls(&munged) == strip_nulls(old_spec) {
        return Vec::new();
    }
    vec![FieldError {
        field: "spec".into(),
        reason: "FieldValueForbidden",
        detail: format!(
            "pod updates may not change fields other than {UPDATABLE}\n{}",
            diff(old_spec, &munged)
        ),
        value: None,
    }]
}

fn copy(m: &mut Map<String, Value>, from: &Value, k: &str) {
    match from.get(k) {
        Some(v) => m.insert(k.into(), v.clone()),
        None => m.remove(k),
    };
}

fn strip_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| (k.clone(), strip_nulls(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_nulls).collect()),
        other => other.clone(),
    }
}

/// Which spec fields differ, one line each (upstream prints a `cmp.Diff` here).
fn diff(old: &Value, new: &Value) -> String {
    let empty = Map::new();
    let (o, n) = (
        old.as_object().unwrap_or(&empty),
        new.as_object().unwrap_or(&empty),
    );
    let mut keys: Vec<&String> = o.keys().chain(n.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut out = String::from("  core.PodSpec{\n");
    for k in keys {
        let (a, b) = (
            o.get(k).unwrap_or(&Value::Null),
            n.get(k).unwrap_or(&Value::Null),
        );
        if strip_nulls(a) != strip_nulls(b) {
            out.push_str(&format!("-  {k}: {a}\n+  {k}: {b}\n"));
        }
    }
    out.push_str("  }\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A pod as the server holds it (defaulted).
    fn pod(image: &str) -> Value {
        let mut p = json!({"spec": {"containers": [{"name": "c", "image": image}],
                        "tolerations": [{"key": "a", "operator": "Exists"}],
                        "restartPolicy": "Always"}});
        crate::server::poddefaults::defaults(&mut p);
        p
    }

    #[test]
    fn images_and_added_tolerations_may_change() {
        let mut new = pod("nginx:2");
        if let Some(t) = new["spec"]["tolerations"].as_array_mut() {
            t.push(json!({"key": "b", "operator": "Exists"}));
        }
        assert!(spec_errors(&pod("nginx:1"), &new).is_empty());
    }

    #[test]
    fn anything_else_is_forbidden() {
        let mut new = pod("nginx:1");
        new["spec"]["restartPolicy"] = json!("Never");
        let errs = spec_errors(&pod("nginx:1"), &new);
        assert_eq!(errs.len(), 1);
        assert!(errs[0].to_string().starts_with(
            "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`"
        ));
        let mut fewer = pod("nginx:1");
        fewer["spec"]["containers"] = json!([]);
        assert_eq!(
            spec_errors(&pod("nginx:1"), &fewer)[0].to_string(),
            "spec.containers: Forbidden: pod updates may not add or remove containers"
        );
    }
}
