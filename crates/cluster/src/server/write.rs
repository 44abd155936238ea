//! Writes: create (generateName, dryRun, fieldValidation), update (PUT, 409 on a stale
//! resourceVersion), the status and scale subresources (PATCH is [`super::patch::verb`], which
//! ends in the same update); the auth kinds are answered by `auth` and `authz`. Each write runs
//! mutating admission, schema validation, then validating admission, like the real server, and
//! records its manager in managedFields ([`super::managed`]).

use std::sync::Arc;

use serde_json::{Value, json};

use super::{
    admission::{AdmissionRequest, Denied, Operation},
    builtin::catalog,
    convert, decode, defaults,
    http::{Req, Resp, Shared, bytes_response, json_response, with_warnings},
    managed,
    meta::{self, meta_mut},
    objectmeta, patch, podadmit, poddefaults, protobuf,
    read::{output, output_value},
    resources::ResourceInfo,
    routes::Target,
    schema,
    status::{ApiError, FieldError},
    store::Obj,
    subresource::{apply_scale, scale_of, split_status},
    typed::typed_body,
};

mod bind;

use bind::bind;

pub use super::remove::{delete, delete_collection};

fn reason_for(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        404 => "NotFound",
        409 => "Conflict",
        422 => "Invalid",
        429 => "TooManyRequests",
        500 => "InternalError",
        _ => "Forbidden",
    }
}

pub fn denied(d: Denied) -> ApiError {
    ApiError::new(d.code, reason_for(d.code), d.message)
}

/// The request body as JSON: JSON, YAML or Kubernetes protobuf (any built-in kind; see
/// [`protobuf`]). A protobuf body of a kind upstream's messages do not describe (a custom
/// resource) is refused with 415 and a hint to send JSON or YAML.
pub fn body_json(req: &Req) -> Result<Value, ApiError> {
    let ct = req.header(http::header::CONTENT_TYPE);
    if ct.starts_with("application/vnd.kubernetes.protobuf") {
        return protobuf::decode(&req.body).map_err(protobuf_error);
    }
    patch::parse_body(&req.body)
}

/// The status a protobuf body that could not be read is answered with.
pub fn protobuf_error(e: protobuf::Error) -> ApiError {
    match e {
        protobuf::Error::Malformed(_) => ApiError::bad_request(e.to_string()),
        protobuf::Error::Unsupported { .. } => {
            ApiError::new(415, "UnsupportedMediaType", e.to_string())
        }
    }
}

/// The resource (and version) objects written through `res` are stored as.
fn storage(shared: &Shared, res: &Arc<ResourceInfo>) -> Arc<ResourceInfo> {
    let reg = shared.store.registry();
    convert::storage_of(res)
        .and_then(|(g, v, p)| reg.lookup(g, v, p))
        .or_else(|| reg.storage_resource(res))
        .unwrap_or_else(|| res.clone())
}

/// `obj` written through `res`, in the form the store keeps.
fn stored_form(shared: &Shared, res: &ResourceInfo, obj: Value) -> Value {
    convert::to_stored(&shared.store.registry(), res, obj)
}

pub fn dry_run(req: &Req) -> bool {
    req.q("dryRun") == Some("All")
}

/// `dryRun` as the real server reads it into `options` (`CreateOptions`, `UpdateOptions`,
/// `PatchOptions`, `DeleteOptions`): absent or `All`; any other value fails that options kind's
/// validation (`ValidateDryRun`), before anything else is looked at.
pub fn checked_dry_run(req: &Req, options: &str) -> Result<bool, ApiError> {
    match req.query.get("dryRun").map(String::as_str) {
        None | Some("") => Ok(false),
        Some("All") => Ok(true),
        Some(other) => Err(ApiError::invalid(
            options,
            "meta.k8s.io",
            "",
            &[FieldError {
                field: "dryRun".into(),
                reason: "FieldValueNotSupported",
                detail: format!("[]string{{{other:?}}}: supported values: \"All\""),
                value: None,
            }],
        )),
    }
}

/// Build an admission request for a target.
pub fn admission_request(
    t: &Target,
    op: Operation,
    name: &str,
    dry_run: bool,
    object: Option<Value>,
    old: Option<Value>,
) -> AdmissionRequest {
    AdmissionRequest {
        operation: op,
        group: t.res.group.clone(),
        version: t.res.version.clone(),
        kind: t.res.kind.clone(),
        resource: t.res.plural.clone(),
        subresource: t.sub.clone().unwrap_or_default(),
        namespace: t.ns().to_string(),
        name: name.to_string(),
        dry_run,
        object,
        old_object: old,
    }
}

/// What the real server's decoder refuses before admission runs: for a built-in kind, values of
/// the wrong type and (under fieldValidation=Strict) unknown fields, which are pruned. Returns the
/// unknown-field warnings.
fn decode_body(
    res: &ResourceInfo,
    obj: &mut Value,
    mode: &str,
    skip_status: bool,
) -> Result<Vec<String>, ApiError> {
    if res.schema.is_some() || res.definition.is_none() {
        return Ok(Vec::new());
    }
    let warnings = check(res, obj, "", mode, skip_status, None, false)?;
    match (res.group.as_str(), res.kind.as_str()) {
        ("", "Secret") => {
            convert::merge_string_data(obj);
            defaults::secret(obj);
        }
        ("", "Service") => defaults::service(obj),
        ("", "Namespace") => defaults::namespace(obj),
        ("", "Pod") => poddefaults::defaults(obj),
        _ => {}
    }
    Ok(warnings)
}

/// The fields Go writes even when a client left them out (zero `Time`s as null, non-omitempty
/// strings as ""), put back after validation dropped the nulls.
fn go_zero_fields(res: &ResourceInfo, obj: &mut Value) {
    match (res.group.as_str(), res.kind.as_str()) {
        ("", "Event") => defaults::event(obj),
        ("", "Pod") => defaults::pod_conditions(obj),
        _ => {}
    }
}

/// Schema validation (after mutating admission). Returns warnings for unknown fields.
fn validate(
    res: &ResourceInfo,
    obj: &mut Value,
    name: &str,
    mode: &str,
    skip_status: bool,
    status_write: bool,
    leading: Vec<FieldError>,
) -> Result<Vec<String>, ApiError> {
    check(
        res,
        obj,
        name,
        mode,
        skip_status,
        Some(leading),
        status_write,
    )
}

/// Decode-time checks (`field_errors` None) or validation (`Some(errors found before it)`).
fn check(
    res: &ResourceInfo,
    obj: &mut Value,
    name: &str,
    mode: &str,
    skip_status: bool,
    field_errors: Option<Vec<FieldError>>,
    status_write: bool,
) -> Result<Vec<String>, ApiError> {
    let held_status = if skip_status {
        obj.as_object_mut().and_then(|m| m.remove("status"))
    } else {
        None
    };
    let outcome = match (&res.schema, &res.definition) {
        (Some(s), _) => schema::validate_object(s, obj),
        (None, Some(d)) => {
            let o = decode::check(catalog::catalog(), d, obj);
            if let Some(e) = o.decode_error {
                return Err(ApiError::bad_request(format!(
                    "{kind} in version \"{v}\" cannot be handled as a {kind}: {e}",
                    kind = res.kind,
                    v = res.version
                )));
            }
            schema::Outcome {
                errors: o.errors,
                unknown: o.unknown,
            }
        }
        (None, None) => schema::Outcome::default(),
    };
    if let (Some(s), Some(m)) = (held_status, obj.as_object_mut()) {
        m.insert("status".into(), s);
    }
    let unknown: Vec<String> = outcome
        .unknown
        .iter()
        .map(|u| format!("unknown field \"{u}\""))
        .collect();
    if mode == "Strict" && !unknown.is_empty() {
        return Err(ApiError::bad_request(format!(
            "{kind} in version \"{v}\" cannot be handled as a {kind}: strict decoding error: {}",
            unknown.join(", "),
            kind = res.kind,
            v = res.version
        )));
    }
    if let Some(mut errors) = field_errors {
        // The strategy's order: object meta, the schema, then what the scale subresource reads.
        errors.extend(objectmeta::meta_errors(&obj["metadata"]));
        errors.extend(outcome.errors);
        errors.extend(objectmeta::scale_errors(res, obj, status_write));
        if !errors.is_empty() {
            return Err(ApiError::invalid(&res.kind, &res.group, name, &errors));
        }
    }
    Ok(if mode == "Ignore" {
        Vec::new()
    } else {
        unknown
    })
}

pub(super) fn field_validation(req: &Req) -> &str {
    req.q("fieldValidation").unwrap_or("Warn")
}

fn check_identity(res: &ResourceInfo, t: &Target, obj: &mut Value) -> Result<(), ApiError> {
    if !obj.is_object() {
        return Err(ApiError::bad_request(
            "the request body must be a JSON object",
        ));
    }
    if let Some(ns) = obj["metadata"]["namespace"].as_str()
        && res.namespaced
        && !ns.is_empty()
        && t.namespace.as_deref().is_some_and(|u| u != ns)
    {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    if let Some(m) = obj.as_object_mut() {
        m.insert("apiVersion".into(), json!(res.api_version()));
        m.insert("kind".into(), json!(res.kind));
    }
    Ok(())
}

/// Create `obj` in the target (shared by POST and server-side apply of a missing object).
pub(super) fn create_object(
    shared: &Shared,
    req: &Req,
    t: &Target,
    mut obj: Value,
) -> Result<Resp, ApiError> {
    let res = &t.res;
    if res.namespaced && t.namespace.is_none() {
        return Err(ApiError::method_not_allowed(
            "create needs a namespace in the URL",
        ));
    }
    let dry = checked_dry_run(req, "CreateOptions")?;
    check_identity(res, t, &mut obj)?;
    if res.status
        && let Some(m) = obj.as_object_mut()
    {
        m.remove("status");
    }
    let name = obj["metadata"]["name"].as_str().unwrap_or("").to_string();
    let mut warnings = decode_body(res, &mut obj, field_validation(req), false)?;
    if req.method != http::Method::PATCH {
        // A create through PATCH is an apply, whose managedFields are the apply's.
        managed::update(res, None, None, &mut obj, &managed::manager_of(req));
    }
    // What the built-in strategies and admission plugins do to a new object, before the
    // admission webhooks see it.
    if res.group.is_empty() {
        match res.kind.as_str() {
            "Pod" => podadmit::admit_new(&shared.store, t.ns(), &mut obj)?,
            "Namespace" => {
                let spec = &mut obj["spec"];
                if spec["finalizers"].as_array().is_none_or(Vec::is_empty) {
                    spec["finalizers"] = json!(["kubernetes"]);
                }
            }
            "Service" => obj["status"] = json!({"loadBalancer": {}}),
            _ => {}
        }
    }
    let mut areq = admission_request(t, Operation::Create, &name, dry, Some(obj), None);
    shared.admission.mutate(&mut areq).map_err(denied)?;
    let mut obj = areq.object.take().unwrap_or(Value::Null);
    // `BeforeCreate`: the name generated from generateName, then checked with the rest of the
    // object meta (so an invalid name is the server's 422, before any validating webhook).
    let mut name_errors = Vec::new();
    if let Some(m) = meta_mut(&mut obj) {
        match meta::resolve_name_for(&res.group, m) {
            Ok(n) => {
                m.insert("name".into(), json!(n));
            }
            Err(e) => name_errors = e,
        }
    }
    warnings.extend(validate(
        res,
        &mut obj,
        &name,
        field_validation(req),
        false,
        false,
        name_errors,
    )?);
    go_zero_fields(res, &mut obj);
    areq.object = Some(obj.clone());
    shared.admission.validate(&areq).map_err(denied)?;
    if res.group.is_empty() && res.kind == "Service" {
        defaults::allocate_cluster_ip(&shared.store, &mut obj);
    }
    if dry {
        let (_, obj) = super::store::Store::stamp_new(res, t.ns(), obj)?;
        return Ok(with_warnings(json_response(201, &obj), &warnings));
    }
    let o = shared
        .store
        .insert(&storage(shared, res), t.ns(), stored_form(shared, res, obj))?;
    if res.group.is_empty()
        && res.kind == "Namespace"
        && let Some(ns) = o.head["metadata"]["name"].as_str()
    {
        super::nsinit::populate(&shared.store, ns, &shared.ca_pem);
    }
    Ok(with_warnings(
        bytes_response(201, output(res, &o)),
        &warnings,
    ))
}

pub fn create(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    if t.sub.as_deref() == Some("eviction") {
        return super::remove::evict(shared, req, t);
    }
    if t.sub.as_deref() == Some("binding") {
        return bind(shared, req, t);
    }
    if t.sub.as_deref() == Some("token") {
        return super::auth::token_request(shared, req, t);
    }
    if t.sub.is_some() {
        return Err(ApiError::method_not_allowed(
            "create is not supported on this subresource",
        ));
    }
    match (t.res.group.as_str(), t.res.kind.as_str()) {
        ("authorization.k8s.io", "SelfSubjectAccessReview") => {
            return super::authz::reviews::access_review(shared, req);
        }
        // `POST namespaces/NS/bindings` binds the pod the Binding names (the old form of
        // pods/NAME/binding).
        ("", "Binding") => {
            let body = body_json(req)?;
            let pod = body["metadata"]["name"].as_str().unwrap_or("").to_string();
            let reg = shared.store.registry();
            let pods = reg
                .lookup("", "v1", "pods")
                .ok_or_else(|| ApiError::not_found("pods", "", &pod))?;
            let target = Target {
                res: pods,
                namespace: t.namespace.clone(),
                name: Some(pod),
                sub: Some("binding".into()),
            };
            return bind(shared, req, &target);
        }
        ("authorization.k8s.io", "SubjectAccessReview") => {
            return super::authz::reviews::subject_access_review(shared, req, None);
        }
        ("authorization.k8s.io", "LocalSubjectAccessReview") => {
            return super::authz::reviews::subject_access_review(shared, req, Some(t.ns()));
        }
        ("authorization.k8s.io", "SelfSubjectRulesReview") => {
            return super::authz::reviews::rules_review(shared, req);
        }
        ("authentication.k8s.io", "SelfSubjectReview") => {
            return Ok(super::auth::self_subject_review(req));
        }
        _ => {}
    }
    let obj = typed_body(req, &t.res, None)?;
    create_object(shared, req, t, obj)
}

/// A written object (None when dry-run) with its value (Null when written and not a scale) and
/// warnings.
pub(super) type Committed = (Value, Option<Arc<Obj>>, Vec<String>);

/// Admit, validate and store an update of the object whose value (as served at the target's
/// version) is `old_value` to `new` (the caller has parsed it already: parsing a stored pod again for
/// each reader was a large part of every write).
pub(super) fn commit_update(
    shared: &Shared,
    req: &Req,
    t: &Target,
    old_value: &Value,
    mut new: Value,
) -> Result<Committed, ApiError> {
    let res = &t.res;
    let name = t.name.clone().unwrap_or_default();
    check_identity(res, t, &mut new)?;
    let dry = dry_run(req);
    let skip_status = res.status && t.sub.as_deref() != Some("status");
    let mut warnings = decode_body(res, &mut new, field_validation(req), skip_status)?;
    if res.group.is_empty() && res.kind == "Service" {
        // An update that leaves the cluster IP out keeps the allocated one.
        for k in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
            let unset = new["spec"][k].is_null() || new["spec"][k] == "";
            if unset {
                let live = old_value["spec"][k].clone();
                if !live.is_null() && new["spec"].is_object() {
                    new["spec"][k] = live;
                }
            }
        }
    }
    let mut areq = admission_request(
        t,
        Operation::Update,
        &name,
        dry,
        Some(new),
        Some(old_value.clone()),
    );
    shared.admission.mutate(&mut areq).map_err(denied)?;
    let mut new = areq.object.take().unwrap_or(Value::Null);
    warnings.extend(validate(
        res,
        &mut new,
        &name,
        field_validation(req),
        skip_status,
        t.sub.as_deref() == Some("status"),
        Vec::new(),
    )?);
    go_zero_fields(res, &mut new);
    if res.group.is_empty() && res.kind == "Pod" && t.sub.is_none() {
        let errors = super::podupdate::spec_errors(old_value, &new);
        if !errors.is_empty() {
            return Err(ApiError::invalid(&res.kind, &res.group, &name, &errors));
        }
    }
    areq.object = Some(new.clone());
    shared.admission.validate(&areq).map_err(denied)?;
    if dry {
        return Ok((new, None, warnings));
    }
    let o = shared.store.replace(
        &storage(shared, res),
        t.ns(),
        &name,
        stored_form(shared, res, new),
    )?;
    // The written value is read back only to answer a scale write (the others send the
    // stored JSON as it is).
    let value = if t.sub.as_deref() == Some("scale") {
        o.value()
    } else {
        Value::Null
    };
    Ok((value, Some(o), warnings))
}

pub(super) fn respond(t: &Target, code: u16, committed: Committed) -> Resp {
    let (value, obj, warnings) = committed;
    let resp = if t.sub.as_deref() == Some("scale") {
        json_response(code, &scale_of(&t.res, &value))
    } else {
        match obj {
            Some(o) => bytes_response(code, output(&t.res, &o)),
            None => json_response(code, &value),
        }
    };
    with_warnings(resp, &warnings)
}

pub fn update(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    checked_dry_run(req, "UpdateOptions")?;
    let name = t.name.clone().unwrap_or_default();
    let mut body = typed_body(req, &t.res, t.sub.as_deref())?;
    let old = match shared.store.get(&t.res, t.ns(), &name) {
        Ok(o) => o,
        Err(e) if e.code == 404 && t.sub.is_none() && t.res.allows_create_on_update() => {
            if let Some(m) = meta_mut(&mut body) {
                m.entry("name").or_insert(json!(name));
            }
            return create_object(shared, req, t, body);
        }
        Err(e) => return Err(e),
    };
    let unconditional = body["metadata"]["resourceVersion"]
        .as_str()
        .is_none_or(str::is_empty);
    if unconditional && t.sub.as_deref() != Some("scale") && !t.res.allows_unconditional_update() {
        return Err(ApiError::invalid(
            &t.res.plural,
            &t.res.group,
            &name,
            &[FieldError {
                field: "metadata.resourceVersion".into(),
                reason: "FieldValueInvalid",
                detail: "0x0: must be specified for an update".into(),
                value: None,
            }],
        ));
    }
    // A stale resourceVersion is a 409 before anything is validated (the real server's
    // GuaranteedUpdate compares it first): the writer re-reads, rather than meeting a 422.
    if let Some(want) = body["metadata"]["resourceVersion"]
        .as_str()
        .filter(|rv| !rv.is_empty())
        && want != old.rv.to_string()
    {
        return Err(ApiError::conflict(&t.res.plural, &t.res.group, &name));
    }
    let served = output_value(&t.res, &old);
    let new = if t.sub.as_deref() == Some("scale") {
        let mut n = served.clone();
        if let Some(m) = n["metadata"].as_object_mut() {
            m.remove("resourceVersion");
        }
        apply_scale(&t.res, &mut n, &body);
        n
    } else {
        split_status(&t.res, t.sub.as_deref(), &served, body)
    };
    let mut new = new;
    managed::update(
        &t.res,
        t.sub.as_deref(),
        Some(&served),
        &mut new,
        &managed::manager_of(req),
    );
    let committed = commit_update(shared, req, t, &served, new)?;
    Ok(respond(t, 200, committed))
}
