//! Strategic merge patch with the built-in kinds' merge keys (directives `$patch`,
//! `$retainKeys`, `$setElementOrder/...`, `$deleteFromPrimitiveList/...` understood). A merged
//! list is ordered as upstream orders it: the patch's items in the patch's (or
//! `$setElementOrder`'s) order, merged with the items only the server had, which keep theirs.

use serde_json::{Map, Value};

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

/// Apply a strategic merge patch.
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
        let order = pm
            .get(&format!("$setElementOrder/{k}"))
            .and_then(Value::as_array)
            .map(Vec::as_slice);
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
                    (Some(Value::Array(cur)), Some(key)) => merge_list(cur, items, key, order),
                    (Some(Value::Array(cur)), None) if merges_as_set(k) => {
                        let original = cur.clone();
                        for it in items {
                            if !cur.contains(it) {
                                cur.push(it.clone());
                            }
                        }
                        let order = order.unwrap_or(items);
                        reorder(cur, &original, order, |v| Some(v.clone()));
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

fn merge_list(cur: &mut Vec<Value>, items: &[Value], key: &str, order: Option<&[Value]>) {
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
    let original = cur.clone();
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
    let live: Vec<&Value> = items
        .iter()
        .filter(|i| i.get("$patch").and_then(Value::as_str) != Some("delete"))
        .collect();
    let order: Vec<Value> = match order {
        Some(o) => o.to_vec(),
        None => live.into_iter().cloned().collect(),
    };
    reorder(cur, &original, &order, |v| v.get(key).cloned());
}

/// Upstream's `normalizeElementOrder`: the items the patch names (in `patch_order`) and the
/// items only the server had (in the server's order), merged so that two items the server had
/// keep the server's relative order and a new item comes before a server-only one.
fn reorder(
    merged: &mut Vec<Value>,
    server: &[Value],
    patch_order: &[Value],
    id: impl Fn(&Value) -> Option<Value>,
) {
    let index_in = |list: &[Value], v: &Value| {
        let want = id(v)?;
        list.iter().position(|x| id(x).as_ref() == Some(&want))
    };
    let (mut patched, server_only): (Vec<Value>, Vec<Value>) = merged
        .drain(..)
        .partition(|v| index_in(patch_order, v).is_some());
    patched.sort_by_key(|v| index_in(patch_order, v));
    let (mut i, mut j) = (0, 0);
    while i < server_only.len() || j < patched.len() {
        let take_left = if i >= server_only.len() {
            false
        } else if j >= patched.len() {
            true
        } else {
            match (
                index_in(server, &server_only[i]),
                index_in(server, &patched[j]),
            ) {
                (Some(l), Some(r)) => l < r,
                _ => false,
            }
        };
        if take_left {
            merged.push(server_only[i].clone());
            i += 1;
        } else {
            merged.push(patched[j].clone());
            j += 1;
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
    fn merged_lists_are_ordered_as_upstream_orders_them() {
        let mut svc = json!({"spec": {"ports": [{"name": "http", "port": 80}]}});
        strategic_merge(
            &mut svc,
            &json!({"spec": {"ports": [{"port": 443, "name": "https"}]}}),
        );
        assert_eq!(svc["spec"]["ports"][0]["port"], 443);
        assert_eq!(svc["spec"]["ports"][1]["port"], 80);
        let mut pod = json!({"spec": {"containers": [{"name": "a"}, {"name": "b", "image": "1"}]}});
        strategic_merge(
            &mut pod,
            &json!({"spec": {"containers": [{"name": "b", "image": "2"}]}}),
        );
        assert_eq!(
            pod["spec"]["containers"],
            json!([{"name": "a"}, {"name": "b", "image": "2"}])
        );
        let mut ordered = json!({"containers": [{"name": "a"}, {"name": "b"}]});
        strategic_merge(
            &mut ordered,
            &json!({"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
                "containers": [{"name": "a", "image": "2"}]}),
        );
        assert_eq!(
            ordered["containers"],
            json!([{"name": "b"}, {"name": "a", "image": "2"}])
        );
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
}
