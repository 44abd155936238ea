//! Deletes: single objects (DeleteOptions: propagationPolicy, preconditions, dryRun), whole
//! collections (with label/field selectors) and pod eviction, each through validating admission.
//! A pod bound to a node is deleted gracefully (see `store/grace.rs`) unless the grace is 0.

use serde_json::{Value, json};

use super::{
    admission::Operation,
    http::{Req, Resp, Shared, bytes_response, json_response},
    patch,
    read::output,
    routes::Target,
    selector::{FieldSelector, LabelSelector},
    status::ApiError,
    store::Propagation,
    write::{admission_request, denied, dry_run},
};

struct DeleteOpts {
    propagation: Propagation,
    uid: Option<String>,
    rv: Option<String>,
    dry_run: bool,
    /// `gracePeriodSeconds` from the DeleteOptions body or the query.
    grace: Option<i64>,
}

fn options(req: &Req, body: &Value) -> Result<DeleteOpts, ApiError> {
    let policy = body["propagationPolicy"]
        .as_str()
        .or(req.q("propagationPolicy"));
    let propagation = match policy {
        Some("Foreground") => Propagation::Foreground,
        Some("Orphan") => Propagation::Orphan,
        Some("Background") | None => {
            if body["orphanDependents"].as_bool() == Some(true)
                || req.q("orphanDependents") == Some("true")
            {
                Propagation::Orphan
            } else {
                Propagation::Background
            }
        }
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "unknown propagationPolicy {other:?}"
            )));
        }
    };
    let dry = dry_run(req)
        || body["dryRun"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == "All"));
    Ok(DeleteOpts {
        propagation,
        uid: body["preconditions"]["uid"].as_str().map(str::to_string),
        rv: body["preconditions"]["resourceVersion"]
            .as_str()
            .map(str::to_string),
        dry_run: dry,
        grace: body["gracePeriodSeconds"]
            .as_i64()
            .or_else(|| req.q("gracePeriodSeconds").and_then(|g| g.parse().ok())),
    })
}

fn body_of(req: &Req) -> Result<Value, ApiError> {
    if req.body.iter().all(u8::is_ascii_whitespace) {
        Ok(json!({}))
    } else if req.body.starts_with(b"k8s\0") {
        // A protobuf Eviction or DeleteOptions (kubectl drain).
        super::protobuf::decode(&req.body).map_err(super::write::protobuf_error)
    } else {
        patch::parse_body(&req.body)
    }
}

fn delete_one(
    shared: &Shared,
    t: &Target,
    name: &str,
    opts: &DeleteOpts,
) -> Result<bytes::Bytes, ApiError> {
    let old = shared.store.get(&t.res, t.ns(), name)?;
    let areq = admission_request(
        t,
        Operation::Delete,
        name,
        opts.dry_run,
        None,
        Some(old.value()),
    );
    shared.admission.validate(&areq).map_err(denied)?;
    if opts.dry_run {
        return Ok(output(&t.res, &old));
    }
    if let Some(grace) = pod_grace(t, &old.value(), opts.grace) {
        let obj = shared.store.delete_gracefully(
            &t.res,
            t.ns(),
            name,
            opts.uid.as_deref(),
            opts.rv.as_deref(),
            grace,
        )?;
        return Ok(output(&t.res, &obj));
    }
    let (obj, _gone) = shared.store.delete(
        &t.res,
        t.ns(),
        name,
        opts.uid.as_deref(),
        opts.rv.as_deref(),
        opts.propagation,
    )?;
    Ok(output(&t.res, &obj))
}

/// The grace period of a graceful pod deletion: only for a pod bound to a node and not finished, from the
/// request, else `spec.terminationGracePeriodSeconds`, else 30; None when the pod goes at once.
fn pod_grace(t: &Target, pod: &Value, requested: Option<i64>) -> Option<i64> {
    if !t.res.group.is_empty() || t.res.plural != "pods" {
        return None;
    }
    // As the pod strategy's CheckGracefulDelete: unscheduled or terminal pods go at once, and
    // a negative grace period means 1.
    if pod["spec"]["nodeName"].as_str().is_none_or(str::is_empty)
        || matches!(
            pod["status"]["phase"].as_str(),
            Some("Succeeded" | "Failed")
        )
    {
        return None;
    }
    let grace = requested
        .or_else(|| pod["spec"]["terminationGracePeriodSeconds"].as_i64())
        .unwrap_or(30);
    match grace {
        0 => None,
        g if g < 0 => Some(1),
        g => Some(g),
    }
}

pub fn delete(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    if t.sub.is_some() {
        return Err(ApiError::method_not_allowed(
            "delete is not supported on subresources",
        ));
    }
    let opts = options(req, &body_of(req)?)?;
    let name = t.name.clone().unwrap_or_default();
    Ok(bytes_response(200, delete_one(shared, t, &name, &opts)?))
}

pub fn delete_collection(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    let opts = options(req, &body_of(req)?)?;
    let label = LabelSelector::parse(req.q("labelSelector").unwrap_or(""))?;
    let field = FieldSelector::parse(req.q("fieldSelector").unwrap_or(""))?;
    let filter = |o: &super::store::Obj| super::read::matches_obj(&label, &field, o);
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
            Ok(b) => items.push(serde_json::from_slice::<Value>(&b).unwrap_or(Value::Null)),
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(json_response(
        200,
        &json!({
            "kind": format!("{}List", t.res.kind),
            "apiVersion": t.res.api_version(),
            "metadata": {"resourceVersion": shared.store.current_rv().to_string()},
            "items": items,
        }),
    ))
}

/// `POST pods/NAME/eviction`: validating admission sees the Eviction (PodUnavailableBudget
/// denies here with 429), then the pod is deleted.
pub fn evict(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    let name = t.name.clone().unwrap_or_default();
    let body = body_of(req)?;
    let pod = shared.store.get(&t.res, t.ns(), &name)?;
    let opts = options(req, &body["deleteOptions"])?;
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
