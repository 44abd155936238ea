//! The binding subresource: how a scheduler places a pod.

use serde_json::json;

use super::{
    ApiError, Req, Resp, Shared, Target, body_json, commit_update, json_response, meta,
    output_value,
};

/// `POST pods/NAME/binding` (what a scheduler does): sets `spec.nodeName` once.
pub(super) fn bind(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    let body = body_json(req)?;
    let node = body["target"]["name"]
        .as_str()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| ApiError::bad_request("a Binding needs target.name"))?
        .to_string();
    let name = t.name.clone().unwrap_or_default();
    let old = shared.store.get(&t.res, t.ns(), &name)?;
    let served = output_value(&t.res, &old);
    let mut new = served.clone();
    if let Some(bound) = new["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
        return Err(ApiError::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on pods/binding \"{name}\": pod {name} is already assigned to node \"{bound}\""
            ),
        ));
    }
    meta::set_path(&mut new, ".spec.nodeName", json!(node));
    // Admitted as the real server admits it: an update of pods/binding (not of the pod's spec,
    // which no client may change this way).
    let binding = Target {
        res: t.res.clone(),
        namespace: t.namespace.clone(),
        name: t.name.clone(),
        sub: Some("binding".into()),
    };
    commit_update(shared, req, &binding, &served, new)?;
    Ok(json_response(
        201,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
    ))
}
