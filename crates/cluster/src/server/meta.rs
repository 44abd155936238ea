//! Object metadata rules: uids, timestamps, names, generateName, what counts as a spec change.

use serde_json::{Map, Value};

use super::status::FieldError;

/// A random RFC 4122 v4 uid.
pub fn new_uid() -> String {
    let mut b = [0u8; 16];
    if getrandom::fill(&mut b).is_err() {
        // Fall back to time-derived bytes: uniqueness within one process is all that matters here.
        let nanos = jiff::Timestamp::now().as_nanosecond().to_le_bytes();
        b.copy_from_slice(&nanos);
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Random lowercase alphanumerics, for generateName suffixes and tokens.
pub fn random_suffix(n: usize) -> String {
    const ALPHA: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut b = vec![0u8; n];
    if getrandom::fill(&mut b).is_err() {
        let nanos = jiff::Timestamp::now().as_nanosecond().to_le_bytes();
        for (i, x) in b.iter_mut().enumerate() {
            *x = nanos[i % nanos.len()].wrapping_add(i as u8);
        }
    }
    b.iter()
        .map(|x| ALPHA[*x as usize % ALPHA.len()] as char)
        .collect()
}

/// Now, as an RFC 3339 timestamp with seconds precision (`metav1.Time`).
pub fn now() -> String {
    let ts = jiff::Timestamp::now();
    let secs = ts.as_second();
    jiff::Timestamp::from_second(secs)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| ts.to_string())
}

/// DNS-1123 subdomain check used for object names.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-' || c == b'.')
        && name
            .bytes()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .bytes()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric())
}

/// Like [`resolve_name`], with the name rules of `group`: RBAC objects take any path segment
/// (`system:discovery`), as upstream's `ValidateRBACName`; every other kind a DNS subdomain.
pub fn resolve_name_for(group: &str, meta: &Map<String, Value>) -> Result<String, Vec<FieldError>> {
    if group != "rbac.authorization.k8s.io" {
        return resolve_name(meta);
    }
    let given = meta.get("name").and_then(Value::as_str).unwrap_or("");
    let (field, name) = match meta.get("generateName").and_then(Value::as_str) {
        Some(prefix) if given.is_empty() && !prefix.is_empty() => (
            "metadata.generateName",
            format!("{prefix}{}", random_suffix(5)),
        ),
        _ => ("metadata.name", given.to_string()),
    };
    if name.is_empty() {
        return resolve_name(meta);
    }
    let problem = match name.as_str() {
        "." | ".." => Some(format!("may not be '{name}'")),
        _ if name.contains('/') => Some("may not contain '/'".to_string()),
        _ if name.contains('%') => Some("may not contain '%'".to_string()),
        _ => None,
    };
    match problem {
        Some(detail) => Err(vec![FieldError::invalid(
            field,
            &Value::String(name),
            detail,
        )]),
        None => Ok(name),
    }
}

/// Validate `metadata.name`/`generateName` and produce the final name.
pub fn resolve_name(meta: &Map<String, Value>) -> Result<String, Vec<FieldError>> {
    if let Some(name) = meta.get("name").and_then(Value::as_str)
        && !name.is_empty()
    {
        if !valid_name(name) {
            return Err(vec![FieldError::invalid(
                "metadata.name",
                &Value::String(name.into()),
                crate::kruise::validation::DNS1123_SUBDOMAIN_ERROR,
            )]);
        }
        return Ok(name.to_string());
    }
    match meta.get("generateName").and_then(Value::as_str) {
        Some(prefix) if !prefix.is_empty() => {
            let p: String = prefix.chars().take(58).collect();
            let name = format!("{p}{}", random_suffix(5));
            if !valid_name(&name) {
                return Err(vec![FieldError::invalid(
                    "metadata.generateName",
                    &Value::String(prefix.into()),
                    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \
                     '-' or '.', and must start with an alphanumeric character",
                )]);
            }
            Ok(name)
        }
        _ => Err(vec![FieldError {
            field: "metadata.name".into(),
            reason: "FieldValueRequired",
            detail: "name or generateName is required".into(),
            value: None,
        }]),
    }
}

/// Whether anything outside metadata and status changed (bumps `metadata.generation`).
pub fn spec_changed(old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| -> Map<String, Value> {
        v.as_object()
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| {
                        !matches!(k.as_str(), "metadata" | "status" | "apiVersion" | "kind")
                    })
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    strip(old) != strip(new)
}

/// The finalizers of an object.
pub fn finalizers(v: &Value) -> Vec<String> {
    v["metadata"]["finalizers"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Owner uids from `metadata.ownerReferences`.
pub fn owner_uids(v: &Value) -> Vec<String> {
    v["metadata"]["ownerReferences"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|o| o["uid"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Mutable access to `metadata`, creating it when missing.
pub fn meta_mut(v: &mut Value) -> Option<&mut Map<String, Value>> {
    let obj = v.as_object_mut()?;
    let m = obj
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !m.is_object() {
        *m = Value::Object(Map::new());
    }
    m.as_object_mut()
}

/// Read a `.a.b.c` JSON path.
pub fn get_path<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = v;
    for seg in path.trim_start_matches('.').split('.') {
        cur = cur.get(seg)?;
    }
    Some(cur)
}

/// Write a `.a.b.c` JSON path, creating objects on the way.
pub fn set_path(v: &mut Value, path: &str, value: Value) {
    let segs: Vec<&str> = path.trim_start_matches('.').split('.').collect();
    let mut cur = v;
    for (i, seg) in segs.iter().enumerate() {
        if !cur.is_object() {
            *cur = Value::Object(Map::new());
        }
        let Some(map) = cur.as_object_mut() else {
            return;
        };
        if i + 1 == segs.len() {
            map.insert(seg.to_string(), value);
            return;
        }
        cur = map
            .entry(seg.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_and_uids() {
        assert!(valid_name("web-1.a"));
        assert!(!valid_name("Web"));
        assert!(!valid_name("-a"));
        assert_eq!(new_uid().len(), 36);
        let m = json!({"generateName": "web-"});
        let n = resolve_name(m.as_object().unwrap()).unwrap();
        assert!(n.starts_with("web-") && n.len() == 9);
        assert!(resolve_name(&Map::new()).is_err());
        assert!(resolve_name(json!({"generateName": "éé"}).as_object().unwrap()).is_err());
        assert!(now().ends_with('Z'));
    }

    #[test]
    fn spec_change_ignores_metadata_and_status() {
        let a = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"x": 1}, "status": {"y": 1}});
        let b = json!({"metadata": {}, "spec": {"x": 1}, "status": {"y": 2}});
        assert!(!spec_changed(&a, &b));
        assert!(spec_changed(&a, &json!({"spec": {"x": 2}})));
    }

    #[test]
    fn paths() {
        let mut v = json!({});
        set_path(&mut v, ".spec.replicas", json!(3));
        assert_eq!(get_path(&v, ".spec.replicas"), Some(&json!(3)));
    }
}
