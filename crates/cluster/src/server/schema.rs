//! Structural-schema validation of custom resources against their CRD's openAPIV3Schema: types,
//! required fields, enums, bounds, int-or-string, preserve-unknown-fields; unknown fields are
//! collected (for fieldValidation=Strict/Warn) and pruned, like the real server.

use serde_json::Value;

use super::{builtin::METADATA_FIELDS, status::FieldError};

/// What validation found.
#[derive(Debug, Default)]
pub struct Outcome {
    pub errors: Vec<FieldError>,
    /// Paths of unknown fields (already pruned from the object).
    pub unknown: Vec<String>,
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn type_ok(want: &str, v: &Value) -> bool {
    match want {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => true,
    }
}

/// Validate (and prune) a whole custom resource.
pub fn validate_object(schema: &Value, obj: &mut Value) -> Outcome {
    let mut out = Outcome::default();
    if let Some(m) = obj.as_object_mut() {
        let props = schema["properties"].as_object();
        let keys: Vec<String> = m.keys().cloned().collect();
        for k in keys {
            if matches!(k.as_str(), "apiVersion" | "kind") {
                continue;
            }
            if k == "metadata" {
                if let Some(meta) = m.get_mut("metadata") {
                    check_metadata(meta, &mut out);
                }
                continue;
            }
            match props.and_then(|p| p.get(&k)) {
                Some(s) => {
                    if let Some(v) = m.get_mut(&k) {
                        if v.is_null() && s["nullable"].as_bool() != Some(true) {
                            m.remove(&k);
                        } else {
                            walk(s, v, &k, &mut out);
                        }
                    }
                }
                None if schema["x-kubernetes-preserve-unknown-fields"].as_bool() == Some(true) => {}
                None => {
                    m.remove(&k);
                    out.unknown.push(k);
                }
            }
        }
        for r in schema["required"].as_array().into_iter().flatten() {
            if let Some(r) = r.as_str()
                && !m.contains_key(r)
            {
                out.errors.push(FieldError::required(r));
            }
        }
    }
    out
}

fn check_metadata(meta: &mut Value, out: &mut Outcome) {
    if let Some(mm) = meta.as_object_mut() {
        let unknown: Vec<String> = mm
            .keys()
            .filter(|k| !METADATA_FIELDS.contains(&k.as_str()))
            .cloned()
            .collect();
        for k in unknown {
            mm.remove(&k);
            out.unknown.push(format!("metadata.{k}"));
        }
        for k in ["labels", "annotations"] {
            if let Some(Value::Object(map)) = mm.get(k) {
                for (lk, lv) in map {
                    if !lv.is_string() {
                        out.errors.push(FieldError::invalid(
                            &format!("metadata.{k}.{lk}"),
                            &Value::String(type_name(lv).into()),
                            format!("metadata.{k}.{lk} in body must be of type string: {lv}"),
                        ));
                    }
                }
            }
        }
    }
}

/// kube-openapi's `errors.InvalidType`: the value's type named, quoted, as the real server words it.
fn type_invalid(path: &str, v: &Value, want: &str) -> FieldError {
    let got = type_name(v);
    FieldError {
        field: path.to_string(),
        reason: "FieldValueTypeInvalid",
        detail: format!("{path} in body must be of type {want}: \"{got}\""),
        value: Some(Value::String(got.into())),
    }
}

fn walk(s: &Value, v: &mut Value, path: &str, out: &mut Outcome) {
    if v.is_null() {
        if s["nullable"].as_bool() != Some(true) {
            out.errors.push(FieldError::invalid(
                path,
                &Value::String("null".into()),
                format!(
                    "{path} in body must be of type {}: \"null\"",
                    s["type"].as_str().unwrap_or("object")
                ),
            ));
        }
        return;
    }
    if s["x-kubernetes-int-or-string"].as_bool() == Some(true) {
        if !(v.is_string() || type_ok("integer", v)) {
            out.errors.push(type_invalid(path, v, "integer,string"));
        }
        return;
    }
    if let Some(t) = s["type"].as_str()
        && !type_ok(t, v)
    {
        out.errors.push(type_invalid(path, v, t));
        return;
    }
    if let Some(allowed) = s["enum"].as_array()
        && !allowed.contains(v)
    {
        out.errors.push(FieldError::unsupported(path, v, allowed));
    }
    if let Some(n) = v.as_f64() {
        if let Some(min) = s["minimum"].as_f64()
            && n < min
        {
            out.errors.push(FieldError::invalid(
                path,
                v,
                format!("{path} in body should be greater than or equal to {min}"),
            ));
        }
        if let Some(max) = s["maximum"].as_f64()
            && n > max
        {
            out.errors.push(FieldError::invalid(
                path,
                v,
                format!("{path} in body should be less than or equal to {max}"),
            ));
        }
    }
    if let Some(st) = v.as_str() {
        let len = st.chars().count() as u64;
        if let Some(max) = s["maxLength"].as_u64()
            && len > max
        {
            out.errors.push(FieldError::invalid(
                path,
                v,
                format!("{path} in body should be at most {max} chars long"),
            ));
        }
        if let Some(min) = s["minLength"].as_u64()
            && len < min
        {
            out.errors.push(FieldError::invalid(
                path,
                v,
                format!("{path} in body should be at least {min} chars long"),
            ));
        }
    }
    match v {
        Value::Array(items) => {
            if let Some(max) = s["maxItems"].as_u64()
                && items.len() as u64 > max
            {
                out.errors.push(FieldError::invalid(
                    path,
                    &Value::from(items.len()),
                    format!("{path} in body should have at most {max} items"),
                ));
            }
            if let Some(min) = s["minItems"].as_u64()
                && (items.len() as u64) < min
            {
                out.errors.push(FieldError::invalid(
                    path,
                    &Value::from(items.len()),
                    format!("{path} in body should have at least {min} items"),
                ));
            }
            if let Some(is) = s.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    walk(is, item, &format!("{path}[{i}]"), out);
                }
            }
        }
        Value::Object(m) => {
            let preserve = s["x-kubernetes-preserve-unknown-fields"].as_bool() == Some(true);
            let props = s["properties"].as_object();
            let additional = s.get("additionalProperties");
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                let sub = props
                    .and_then(|p| p.get(&k))
                    .or(additional.filter(|a| a.is_object()));
                match sub {
                    Some(ss) => {
                        let drop_null = m.get(&k).is_some_and(Value::is_null)
                            && ss["nullable"].as_bool() != Some(true);
                        if drop_null {
                            m.remove(&k);
                        } else if let Some(x) = m.get_mut(&k) {
                            walk(ss, x, &join(path, &k), out);
                        }
                    }
                    None if preserve || additional.and_then(Value::as_bool) == Some(true) => {}
                    None if props.is_none() && additional.is_none() && s.get("type").is_none() => {}
                    None => {
                        m.remove(&k);
                        out.unknown.push(join(path, &k));
                    }
                }
            }
            for r in s["required"].as_array().into_iter().flatten() {
                if let Some(r) = r.as_str()
                    && !m.contains_key(r)
                {
                    out.errors.push(FieldError::required(&join(path, r)));
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "required": ["selector"], "properties": {
                "replicas": {"type": "integer", "format": "int32", "minimum": 0},
                "selector": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "maxUnavailable": {"x-kubernetes-int-or-string": true},
                "policy": {"type": "string", "enum": ["A", "B"]},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}}
            }},
            "status": {"type": "object", "required": ["readyReplicas"], "properties": {"readyReplicas": {"type": "integer"}}}
        }})
    }

    #[test]
    fn type_errors_and_required() {
        let mut o = json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"}, "spec": {"replicas": "three", "selector": {}}});
        let out = validate_object(&schema(), &mut o);
        assert_eq!(out.errors.len(), 1);
        assert_eq!(
            out.errors[0].to_string(),
            "spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\""
        );
        let mut o = json!({"spec": {"selector": {"any": 1}, "maxUnavailable": "10%", "policy": "C", "replicas": -1}, "status": {}});
        let out = validate_object(&schema(), &mut o);
        let msgs: Vec<String> = out.errors.iter().map(|e| e.to_string()).collect();
        assert!(
            msgs.iter()
                .any(|m| m.starts_with("spec.policy: Unsupported value: \"C\"")),
            "{msgs:?}"
        );
        assert!(
            msgs.iter()
                .any(|m| m == "status.readyReplicas: Required value"),
            "{msgs:?}"
        );
        assert!(
            msgs.iter()
                .any(|m| m.contains("greater than or equal to 0")),
            "{msgs:?}"
        );
    }

    #[test]
    fn unknown_fields_are_pruned_and_reported() {
        let mut o = json!({"spec": {"selector": {}, "bogus": 1, "labels": {"a": "b"}}, "extra": true, "metadata": {"nme": "x"}});
        let out = validate_object(&schema(), &mut o);
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert_eq!(out.unknown, vec!["spec.bogus", "extra", "metadata.nme"]);
        assert!(o["spec"].get("bogus").is_none());
    }
}
