//! The checks every kind's strategy makes before its own validation: `ValidateObjectMeta`'s
//! labels and annotations, and for a custom resource with a scale subresource, that its replicas
//! paths hold what `/scale` can read (`customResourceStrategy.validateScaleSpec`/`Status`).

use serde_json::{Value, json};

use super::{resources::ResourceInfo, status::FieldError};
use crate::kruise::validation::{label_value_errors, qualified_name_errors};

/// The most bytes all annotations of an object may hold (`TotalAnnotationSizeLimitB`).
const ANNOTATIONS_LIMIT: usize = 256 * 1024;

/// `ValidateLabels` and `ValidateAnnotations` of `metadata`.
pub fn meta_errors(meta: &Value) -> Vec<FieldError> {
    let mut out = Vec::new();
    if let Some(labels) = meta["labels"].as_object() {
        for (k, v) in labels {
            for msg in qualified_name_errors(k) {
                out.push(FieldError::invalid("metadata.labels", &json!(k), msg));
            }
            if let Some(v) = v.as_str() {
                for msg in label_value_errors(v) {
                    out.push(FieldError::invalid("metadata.labels", &json!(v), msg));
                }
            }
        }
    }
    if let Some(annotations) = meta["annotations"].as_object() {
        let mut total = 0;
        for (k, v) in annotations {
            for msg in qualified_name_errors(&k.to_lowercase()) {
                out.push(FieldError::invalid("metadata.annotations", &json!(k), msg));
            }
            total += k.len() + v.as_str().map_or(0, str::len);
        }
        if total > ANNOTATIONS_LIMIT {
            out.push(FieldError {
                field: "metadata.annotations".into(),
                reason: "FieldValueTooLong",
                detail: format!("must have at most {ANNOTATIONS_LIMIT} bytes"),
                value: None,
            });
        }
    }
    out
}

/// unstructured's `NestedInt64` at a `.spec.replicas`-style path: the value, or its error.
fn nested_int(obj: &Value, path: &str) -> Result<Option<i64>, String> {
    let mut cur = obj;
    for seg in path.trim_start_matches('.').split('.') {
        match cur.get(seg) {
            Some(v) => cur = v,
            None => return Ok(None),
        }
    }
    match cur {
        Value::Null => Ok(None),
        Value::Number(n) if n.is_i64() => Ok(n.as_i64()),
        Value::String(s) => Err(format!(
            "{path} accessor error: {s} is of the type string, expected int64"
        )),
        other => Err(format!(
            "{path} accessor error: {other} is of the type {}, expected int64",
            match other {
                Value::Bool(_) => "bool",
                Value::Number(_) => "float64",
                Value::Array(_) => "[]interface {}",
                _ => "map[string]interface {}",
            }
        )),
    }
}

fn replicas_errors(obj: &Value, path: &str) -> Vec<FieldError> {
    match nested_int(obj, path) {
        Err(e) => vec![FieldError::invalid(path, &json!(0), e)],
        Ok(Some(n)) if n < 0 => vec![FieldError::invalid(
            path,
            &json!(n),
            "should be a non-negative integer",
        )],
        Ok(Some(n)) if n > i64::from(i32::MAX) => vec![FieldError::invalid(
            path,
            &json!(n),
            format!("should be less than or equal to {}", i32::MAX),
        )],
        _ => Vec::new(),
    }
}

/// A custom resource's replicas paths, as its scale subresource reads them: the spec's on every
/// write of the object, the status's on a status write.
pub fn scale_errors(res: &ResourceInfo, obj: &Value, status_write: bool) -> Vec<FieldError> {
    let Some(scale) = res.scale.as_ref().filter(|_| res.crd) else {
        return Vec::new();
    };
    if status_write {
        replicas_errors(obj, &scale.status_replicas)
    } else {
        replicas_errors(obj, &scale.spec_replicas)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_checked_as_upstream_words_it() {
        let errs = meta_errors(&json!({"labels": {"ok": "v", "bad": "not a valid value!"}}));
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0].to_string().starts_with(
                "metadata.labels: Invalid value: \"not a valid value!\": a valid label"
            )
        );
        assert_eq!(meta_errors(&json!({"labels": {"bad key!": "v"}})).len(), 1);
        assert!(meta_errors(&json!({"annotations": {"example.com/x": "any text"}})).is_empty());
    }

    #[test]
    fn replicas_accessor_errors() {
        let obj = json!({"spec": {"replicas": "three"}});
        assert_eq!(
            replicas_errors(&obj, ".spec.replicas")[0].to_string(),
            ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: three is of the type string, expected int64"
        );
        let obj = json!({"spec": {"replicas": -1}});
        assert_eq!(
            replicas_errors(&obj, ".spec.replicas")[0].to_string(),
            ".spec.replicas: Invalid value: -1: should be a non-negative integer"
        );
        assert!(replicas_errors(&json!({"spec": {}}), ".spec.replicas").is_empty());
    }
}
