//! Shared helpers for the evaluators: field access with clear errors and JSON diffs.
#![allow(dead_code)]

use kruise_tui::kruise::KruiseVersion;
use serde_json::Value;

/// The case's `input`.
pub fn input(case: &Value) -> Result<&Value, String> {
    case.get("input")
        .ok_or_else(|| "case has no input".to_owned())
}

/// The case's `expected`.
pub fn expected(case: &Value) -> Result<&Value, String> {
    case.get("expected")
        .ok_or_else(|| "case has no expected".to_owned())
}

/// For vector files without ops: a case that names an `op` is a failure, not silently
/// evaluated as the file's one function.
pub fn no_op(op: Option<&str>, file: &str) -> Result<(), String> {
    match op {
        None => Ok(()),
        Some(op) => Err(format!("{file} has no ops, but the case names op {op:?}")),
    }
}

/// Deserializes a value into a typed input, naming the failure. A `null` (or missing) input
/// reads as Go's nil: `None` for an optional input, else the empty value (`{}`, then `[]`), so a
/// null struct, list or map is empty rather than a failure.
pub fn parse<T: serde::de::DeserializeOwned>(what: &str, v: &Value) -> Result<T, String> {
    serde_json::from_value(v.clone())
        .or_else(|e| {
            if v.is_null() {
                serde_json::from_value(serde_json::json!({}))
                    .or_else(|_| serde_json::from_value(serde_json::json!([])))
                    .map_err(|_| e)
            } else {
                Err(e)
            }
        })
        .map_err(|e| format!("cannot read {what}: {e}"))
}

/// Compares the whole of `actual` with `expected`.
pub fn expect_eq(expected: &Value, actual: &Value) -> Result<(), String> {
    let mut diffs = Vec::new();
    diff_values("$", expected, actual, false, &mut diffs);
    finish(diffs)
}

/// Compares only the keys present in `expected` (recursively for objects).
pub fn expect_subset(expected: &Value, actual: &Value) -> Result<(), String> {
    let mut diffs = Vec::new();
    diff_values("$", expected, actual, true, &mut diffs);
    finish(diffs)
}

/// Compares the keys present in `expected`, which must include every key of `required` (the
/// upstream test's own assertions; the other keys are derived values a case may leave out).
pub fn expect_assertions(
    expected: &Value,
    actual: &Value,
    required: &[&str],
) -> Result<(), String> {
    for key in required {
        if expected.get(*key).is_none() {
            return Err(format!("expected has no {key}"));
        }
    }
    expect_subset(expected, actual)
}

/// Compares a validation result with `expected`: `errorCount` (the upstream test's assertion)
/// and, when given, `errors`, the field paths one for one and in order.
pub fn expect_field_errors(
    expected: &Value,
    errors: &[kruise_tui::kruise::validation::FieldError],
) -> Result<(), String> {
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    let actual = serde_json::json!({ "errorCount": errors.len(), "errors": fields });
    if expected.get("errorCount").is_none() {
        return Err("expected has no errorCount".to_owned());
    }
    expect_subset(expected, &actual).map_err(|d| format!("{d}\nerrors: {errors:?}"))
}

fn finish(diffs: Vec<String>) -> Result<(), String> {
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(diffs.join("\n"))
    }
}

fn diff_values(path: &str, exp: &Value, act: &Value, subset: bool, out: &mut Vec<String>) {
    match (exp, act) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                let p = format!("{path}.{k}");
                match a.get(k) {
                    Some(av) => diff_values(&p, ev, av, subset, out),
                    None if ev.is_null() => {}
                    None => out.push(format!("{p}: expected {ev}, missing")),
                }
            }
            if !subset {
                for (k, av) in a {
                    if !e.contains_key(k) && !av.is_null() {
                        out.push(format!("{path}.{k}: unexpected {av}"));
                    }
                }
            }
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => {
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                diff_values(&format!("{path}[{i}]"), ev, av, subset, out);
            }
        }
        (Value::Number(e), Value::Number(a)) if e.as_f64() == a.as_f64() => {}
        _ if exp == act => {}
        _ => out.push(format!("{path}:\n  - expected {exp}\n  + actual   {act}")),
    }
}

/// The Kruise versions a case is checked at, each with its expectation: `expected` at v1.9.0
/// and `expected_v1_8_4` at v1.8.4 when the case has the latter; otherwise `expected` at the
/// case's `kruiseVersion` (`"v1.9.0"` or `"v1.8.4"`), by default v1.8.4, the reference of the
/// older cases.
pub fn versions(case: &Value) -> Result<Vec<(KruiseVersion, &Value)>, String> {
    let e = expected(case)?;
    if let Some(old) = case.get("expected_v1_8_4") {
        return Ok(vec![(KruiseVersion::V1_9, e), (KruiseVersion::V1_8, old)]);
    }
    let version = match case.get("kruiseVersion").and_then(Value::as_str) {
        None | Some("v1.8.4") => KruiseVersion::V1_8,
        Some("v1.9.0") => KruiseVersion::V1_9,
        Some(other) => return Err(format!("unknown kruiseVersion {other:?}")),
    };
    Ok(vec![(version, e)])
}

/// Runs `check` at every version of [`versions`], naming the version in a failure.
pub fn at_versions(
    case: &Value,
    mut check: impl FnMut(KruiseVersion, &Value) -> Result<(), String>,
) -> Result<(), String> {
    for (version, e) in versions(case)? {
        check(version, e).map_err(|m| format!("at {version:?}: {m}"))?;
    }
    Ok(())
}

/// A list input: `null` (Go's nil slice) reads as empty; anything else but an array is an error.
pub fn list<'a>(v: &'a Value, what: &str) -> Result<&'a [Value], String> {
    match v {
        Value::Null => Ok(&[]),
        Value::Array(items) => Ok(items),
        _ => Err(format!("{what} is not a list")),
    }
}
