//! Deletes: single objects and whole collections, as the real server's delete handlers run them
//! (DeleteOptions read from the body, else the query, and validated; then the registry's delete,
//! see `store/delete.rs`), each through validating admission; and pod eviction.
//!
//! What a delete answers: the object when it stays (finalizers, a Foreground/Orphan cascade, a
//! pending graceful deletion, a terminating namespace; 202 instead of 200 when
//! `orphanDependents: false` asked for a cascade), and, when it is gone, the deleted object for
//! the kinds whose registry returns it (pods, services, ...) or a `Success` Status naming it.

use serde_json::{Value, json};

use super::{
    admission::Operation,
    http::{Req, Resp, Shared, bytes_response, json_response},
    listopts::ListOptions,
    patch,
    read::{matches_obj, output},
    resources::ResourceInfo,
    routes::Target,
    status::{ApiError, FieldError},
    store::{DeleteRequest, Deleted, Obj, Propagation},
    write::{admission_request, denied},
};

const POLICIES: [&str; 3] = ["Foreground", "Background", "Orphan"];

/// Go's `%#v` of a `[]string` (how validation errors print a dryRun list).
fn go_strings(vs: &[String]) -> String {
    let inner: Vec<String> = vs.iter().map(|v| format!("{v:?}")).collect();
    format!("[]string{{{}}}", inner.join(", "))
}

/// `ValidateDeleteOptions`, with the options as decoded: a 422 `DeleteOptions.meta.k8s.io`.
fn validate(
    policy: Option<&str>,
    orphan: Option<bool>,
    dry_run: &[String],
) -> Result<(), ApiError> {
    let mut errs = Vec::new();
    if let (Some(p), Some(_)) = (policy, orphan) {
        errs.push(FieldError::invalid(
            "propagationPolicy",
            &json!(p),
            "orphanDependents and deletionPropagation cannot be both set",
        ));
    }
    if let Some(p) = policy.filter(|p| !POLICIES.contains(p)) {
        let mut allowed: Vec<Value> = POLICIES.iter().map(|p| json!(p)).collect();
        allowed.push(json!("nil"));
        errs.push(FieldError::unsupported(
            "propagationPolicy",
            &json!(p),
            &allowed,
        ));
    }
    if dry_run.iter().any(|d| d != "All") {
        errs.push(FieldError {
            field: "dryRun".into(),
            reason: "FieldValueNotSupported",
            detail: format!("{}: supported values: \"All\"", go_strings(dry_run)),
            value: None,
        });
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid("DeleteOptions", "meta.k8s.io", "", &errs))
    }
}

/// DeleteOptions from a JSON body (or an Eviction's `deleteOptions`), else from the query.
fn options(req: &Req, body: Option<&Value>) -> Result<DeleteRequest, ApiError> {
    let (policy, orphan, dry_run, grace, uid, rv) = match body {
        Some(b) => (
            b["propagationPolicy"].as_str().map(str::to_string),
            b["orphanDependents"].as_bool(),
            b["dryRun"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|d| d.as_str().unwrap_or("").to_string())
                .collect::<Vec<_>>(),
            b["gracePeriodSeconds"].as_i64(),
            b["preconditions"]["uid"].as_str().map(str::to_string),
            b["preconditions"]["resourceVersion"]
                .as_str()
                .map(str::to_string),
        ),
        None => (
            req.q("propagationPolicy").map(str::to_string),
            req.query
                .get("orphanDependents")
                .map(|v| !(v == "0" || v.eq_ignore_ascii_case("false"))),
            req.q("dryRun").map(str::to_string).into_iter().collect(),
            req.q("gracePeriodSeconds").and_then(|g| g.parse().ok()),
            None,
            None,
        ),
    };
    validate(policy.as_deref(), orphan, &dry_run)?;
    Ok(DeleteRequest {
        precondition_uid: uid,
        precondition_rv: rv,
        propagation: policy.as_deref().and_then(|p| match p {
            "Foreground" => Some(Propagation::Foreground),
            "Orphan" => Some(Propagation::Orphan),
            "Background" => Some(Propagation::Background),
            _ => None,
        }),
        orphan_dependents: orphan,
        grace,
        dry_run: !dry_run.is_empty(),
    })
}

/// The request body as JSON, or None when there is none.
fn body_of(req: &Req) -> Result<Option<Value>, ApiError> {
    if req.body.iter().all(u8::is_ascii_whitespace) {
        Ok(None)
    } else if req.body.starts_with(b"k8s\0") {
        // A protobuf Eviction or DeleteOptions (kubectl drain).
        super::protobuf::decode(&req.body)
            .map(Some)
            .map_err(super::write::protobuf_error)
    } else {
        patch::parse_body(&req.body).map(Some)
    }
}

/// The DeleteOptions of a delete or deletecollection: the body when there is one, else the query.
fn request_options(req: &Req) -> Result<DeleteRequest, ApiError> {
    let body = body_of(req)?;
    options(req, body.as_ref())
}

/// Whether the kind's registry answers a finished delete with the deleted object
/// (`ReturnDeletedObject`) rather than a Status.
fn returns_deleted_object(res: &ResourceInfo) -> bool {
    match res.group.as_str() {
        "" => matches!(
            res.plural.as_str(),
            "pods" | "services" | "serviceaccounts" | "namespaces"
        ),
        "storage.k8s.io" => res.plural == "storageclasses",
        // The CRD registry answers with the CRD it marks as terminating.
        "apiextensions.k8s.io" => res.plural == "customresourcedefinitions",
        _ => false,
    }
}

fn delete_one(
    shared: &Shared,
    t: &Target,
    name: &str,
    opts: &DeleteRequest,
) -> Result<Deleted, ApiError> {
    let old = shared.store.get_for_delete(&t.res, t.ns(), name, opts)?;
    let areq = admission_request(
        t,
        Operation::Delete,
        name,
        opts.dry_run,
        None,
        Some(old.value()),
    );
    shared.admission.validate(&areq).map_err(denied)?;
    shared.store.delete_with(&t.res, t.ns(), name, opts)
}

/// The answer to a single delete.
fn answer(res: &ResourceInfo, opts: &DeleteRequest, done: &Deleted) -> Resp {
    match done {
        Deleted::Kept(o) => {
            let code = if opts.orphan_dependents == Some(false) {
                202
            } else {
                200
            };
            bytes_response(code, output(res, o))
        }
        Deleted::Gone(o) if returns_deleted_object(res) => bytes_response(200, output(res, o)),
        Deleted::Gone(o) => {
            let meta = &o.head["metadata"];
            let mut details = json!({"name": meta["name"], "kind": res.plural, "uid": meta["uid"]});
            if !res.group.is_empty() {
                details["group"] = json!(res.group);
            }
            json_response(
                200,
                &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}),
            )
        }
    }
}

pub fn delete(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    if t.sub.is_some() {
        return Err(ApiError::method_not_allowed(
            "delete is not supported on subresources",
        ));
    }
    let opts = request_options(req)?;
    let name = t.name.clone().unwrap_or_default();
    let done = delete_one(shared, t, &name, &opts)?;
    Ok(answer(&t.res, &opts, &done))
}

/// Delete every object the list options select; the answer is the list of them as they were.
pub fn delete_collection(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    let list = ListOptions::from_request(req, t, false)?;
    let opts = request_options(req)?;
    let filter = |o: &Obj| matches_obj(&list.label, &list.field, o);
    let listed = shared
        .store
        .list(&t.res, t.namespace.as_deref(), &filter, None, None);
    let mut items = Vec::new();
    for o in &listed.items {
        let name = o.head["metadata"]["name"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let ns = o.head["metadata"]["namespace"].as_str().map(str::to_string);
        let item_target = Target {
            res: t.res.clone(),
            namespace: ns,
            name: Some(name.clone()),
            sub: None,
        };
        match delete_one(shared, &item_target, &name, &opts) {
            Ok(_) => items
                .push(serde_json::from_slice::<Value>(&output(&t.res, o)).unwrap_or(Value::Null)),
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(json_response(
        200,
        &json!({
            "kind": format!("{}List", t.res.kind),
            "apiVersion": t.res.api_version(),
            "metadata": {"resourceVersion": listed.rv.to_string()},
            "items": items,
        }),
    ))
}

/// `POST pods/NAME/eviction`: validating admission sees the Eviction (PodUnavailableBudget
/// denies here with 429), then the pod is deleted.
pub fn evict(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    let name = t.name.clone().unwrap_or_default();
    let body = body_of(req)?.unwrap_or_else(|| json!({}));
    let pod = shared.store.get(&t.res, t.ns(), &name)?;
    let mut opts = options(req, Some(&body["deleteOptions"]))?;
    opts.dry_run |= super::write::dry_run(req);
    let areq = admission_request(
        t,
        Operation::Create,
        &name,
        opts.dry_run,
        Some(body.clone()),
        Some(pod.value()),
    );
    shared.admission.validate(&areq).map_err(denied)?;
    let main = Target {
        res: t.res.clone(),
        namespace: t.namespace.clone(),
        name: t.name.clone(),
        sub: None,
    };
    delete_one(shared, &main, &name, &opts)?;
    Ok(json_response(
        201,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
    ))
}
