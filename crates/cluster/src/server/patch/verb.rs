//! The PATCH verb, in the real server's order: the media type (415 with the types this resource
//! takes), the PatchOptions (fieldManager required to apply, `force` only for apply, dryRun,
//! fieldValidation), the object (404, except that an apply creates it), the patch itself, the
//! decoding of the patched object (unknown fields under fieldValidation, wrongly typed values),
//! managedFields, then the update as PUT runs it (admission, validation, storage), retried when
//! the object changed underneath unless the patch named a resourceVersion.

use serde_json::{Value, json};

use super::{
    APPLY_PATCH, JSON_PATCH, MERGE_PATCH, PatchKind, STRATEGIC_PATCH, json, parse_body,
    strategic_merge,
};
use crate::{
    kruise::sidecarset::gojson::encode_any,
    server::{
        builtin::catalog::catalog,
        decode,
        http::{Req, Resp, Shared, with_warnings},
        managed,
        read::output_value,
        routes::Target,
        schema,
        status::{ApiError, FieldError},
        subresource::{apply_scale, scale_of, split_status},
        write::{checked_dry_run, commit_update, create_object, field_validation, respond},
    },
};

/// The patch types a resource takes, in the order the real server lists them.
fn accepted(t: &Target) -> Vec<&'static str> {
    if t.res.strategic_merge() {
        vec![JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH]
    } else {
        vec![JSON_PATCH, MERGE_PATCH, APPLY_PATCH]
    }
}

/// `ValidatePatchOptions`.
fn check_options(req: &Req, kind: PatchKind) -> Result<(), ApiError> {
    let mut errs = Vec::new();
    let manager = req
        .query
        .get("fieldManager")
        .map(String::as_str)
        .unwrap_or("");
    if kind == PatchKind::Apply {
        if manager.is_empty() {
            errs.push(FieldError {
                field: "fieldManager".into(),
                reason: "FieldValueRequired",
                detail: "is required for apply patch".into(),
                value: None,
            });
        }
    } else if req.query.contains_key("force") {
        errs.push(FieldError {
            field: "force".into(),
            reason: "FieldValueForbidden",
            detail: "may not be specified for non-apply patch".into(),
            value: None,
        });
    }
    if manager.len() > 128 {
        errs.push(FieldError {
            field: "fieldManager".into(),
            reason: "FieldValueTooLong",
            detail: "may not be more than 128 bytes".into(),
            value: None,
        });
    }
    for (i, c) in manager.char_indices() {
        if c.is_control() {
            errs.push(FieldError::invalid(
                "fieldManager",
                &json!(manager),
                format!("invalid character U+{:04X} (at position {i})", c as u32),
            ));
        }
    }
    if let Err(e) = checked_dry_run(req, "PatchOptions") {
        if errs.is_empty() {
            return Err(e);
        }
        let other = req.q("dryRun").unwrap_or("");
        errs.push(FieldError {
            field: "dryRun".into(),
            reason: "FieldValueNotSupported",
            detail: format!("[]string{{{other:?}}}: supported values: \"All\""),
            value: None,
        });
    }
    let fv = req
        .query
        .get("fieldValidation")
        .map(String::as_str)
        .unwrap_or("");
    if !matches!(fv, "" | "Ignore" | "Strict" | "Warn") {
        errs.push(FieldError {
            field: "fieldValidation".into(),
            reason: "FieldValueNotSupported",
            detail: "supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"".into(),
            value: Some(json!(fv)),
        });
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid("PatchOptions", "meta.k8s.io", "", &errs))
    }
}

/// The applied configuration: YAML (or JSON) holding an object.
fn apply_config(req: &Req) -> Result<Value, ApiError> {
    let v = parse_body(&req.body)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {}", e.message)))?;
    match v {
        Value::Object(_) => Ok(v),
        Value::Null => Ok(json!({})),
        other => Err(ApiError::bad_request(format!(
            "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot \
             unmarshal {} into Go value of type map[string]interface {{}}",
            match other {
                Value::Array(_) => "array",
                Value::String(_) => "string",
                Value::Number(_) => "number",
                _ => "bool",
            }
        ))),
    }
}

/// The patched object decoded as the real server decodes it: unknown fields (and the patch's
/// own strict complaints) are an error under fieldValidation=Strict, warnings under Warn; a value
/// of the wrong type is an error. The object comes back without the unknown fields.
fn decode_patched(
    t: &Target,
    doc: &mut Value,
    mut strict: Vec<String>,
    validation: &str,
) -> Result<Vec<String>, ApiError> {
    let mut probe = doc.clone();
    let (decode_error, unknown) = match (&t.res.schema, &t.res.definition) {
        (Some(s), _) => (None, schema::validate_object(s, &mut probe).unknown),
        (None, Some(d)) => {
            let o = decode::check(catalog(), d, &mut probe);
            (o.decode_error, o.unknown)
        }
        (None, None) => (None, Vec::new()),
    };
    let shown = json!(encode_any(doc));
    let invalid =
        |why: String| ApiError::invalid("", "", "", &[FieldError::invalid("patch", &shown, why)]);
    if let Some(e) = decode_error {
        return Err(invalid(e));
    }
    strict.extend(unknown.iter().map(|u| format!("unknown field {u:?}")));
    if !unknown.is_empty() {
        *doc = probe;
    }
    match validation {
        _ if strict.is_empty() => Ok(Vec::new()),
        "Strict" => Err(invalid(format!(
            "strict decoding error: {}",
            strict.join(", ")
        ))),
        "Ignore" => Ok(Vec::new()),
        _ => Ok(strict),
    }
}

pub fn patch(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    let ct = req.header(http::header::CONTENT_TYPE);
    let types = accepted(t);
    let kind = PatchKind::from_content_type(ct)
        .filter(|k| types.contains(&k.media_type()))
        .ok_or_else(|| ApiError::unsupported_media_type(&types))?;
    check_options(req, kind)?;
    let validation = field_validation(req).to_string();
    let name = t.name.clone().unwrap_or_default();
    let manager = match kind {
        PatchKind::Apply => req.q("fieldManager").unwrap_or("").to_string(),
        _ => managed::manager_of(req),
    };
    let force = req.q("force") == Some("true");
    let scale = t.sub.as_deref() == Some("scale");
    let mut attempt = 0;
    loop {
        attempt += 1;
        let old = match shared.store.get(&t.res, t.ns(), &name) {
            Ok(o) => o,
            Err(e) if e.code == 404 && kind == PatchKind::Apply && t.sub.is_none() => {
                let config = apply_config(req)?;
                let created = managed::apply(&t.res, None, None, &config, &manager, force)?;
                check_name(&created, &name)?;
                return create_object(shared, req, t, created);
            }
            Err(e) => return Err(e),
        };
        let served = output_value(&t.res, &old);
        let mut doc = if scale {
            scale_of(&t.res, &served)
        } else {
            served.clone()
        };
        let mut warnings = Vec::new();
        match kind {
            PatchKind::Json => {
                let strict = json::json_patch(&mut doc, &req.body, &validation)?;
                if !scale {
                    warnings = decode_patched(t, &mut doc, strict, &validation)?;
                }
            }
            PatchKind::Merge => {
                json::merge_patch(&mut doc, &req.body, &validation)?;
                if !scale {
                    warnings = decode_patched(t, &mut doc, Vec::new(), &validation)?;
                }
            }
            PatchKind::Strategic => {
                if let Some(e) = json::syntax_error(&req.body) {
                    return Err(ApiError::bad_request(e));
                }
                let body: Value = serde_json::from_slice(&req.body)
                    .map_err(|e| ApiError::bad_request(e.to_string()))?;
                strategic_merge(&mut doc, &body);
                if !scale {
                    warnings = decode_patched(t, &mut doc, Vec::new(), &validation)?;
                }
            }
            PatchKind::Apply => {
                let config = apply_config(req)?;
                if scale {
                    json::merge_value(&mut doc, &config);
                } else {
                    doc = managed::apply(
                        &t.res,
                        t.sub.as_deref(),
                        Some(&served),
                        &config,
                        &manager,
                        force,
                    )?;
                    check_name(&doc, &name)?;
                }
            }
        }
        let user_rv =
            doc["metadata"]["resourceVersion"].as_str() != Some(old.rv.to_string().as_str());
        let new = if scale {
            let mut n = served.clone();
            apply_scale(&t.res, &mut n, &doc);
            managed::update(&t.res, Some("scale"), Some(&served), &mut n, &manager);
            n
        } else {
            let applied = doc["metadata"].get("managedFields").cloned();
            let mut n = split_status(&t.res, t.sub.as_deref(), &served, doc);
            match (kind, applied) {
                (PatchKind::Apply, Some(fields)) => n["metadata"]["managedFields"] = fields,
                (PatchKind::Apply, None) => n["metadata"]["managedFields"] = json!([]),
                _ => managed::update(&t.res, t.sub.as_deref(), Some(&served), &mut n, &manager),
            }
            n
        };
        match commit_update(shared, req, t, &served, new) {
            Err(e) if e.reason == "Conflict" && !user_rv && attempt < 8 => continue,
            Err(e) => return Err(e),
            Ok(c) => return Ok(with_warnings(respond(t, 200, c), &warnings)),
        }
    }
}

/// The patched object must keep the name on the URL.
fn check_name(obj: &Value, name: &str) -> Result<(), ApiError> {
    let got = obj["metadata"]["name"].as_str().unwrap_or("");
    if got == name {
        return Ok(());
    }
    Err(ApiError::bad_request(format!(
        "the name of the object ({got}) does not match the name on the URL ({name})"
    )))
}
