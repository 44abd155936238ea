//! SelfSubjectAccessReview (`kubectl auth can-i VERB RESOURCE`) and SelfSubjectRulesReview
//! (`kubectl auth can-i --list`), answered by the same authorizer that guards every request, for
//! the user who asks — so a yes here is a request that will pass (the action layer asks before
//! every mutating action).

use serde_json::{Value, json};

use super::{
    resolver::{authorize, rules_for},
    rules::Attributes,
};
use crate::server::{
    auth,
    http::{Req, Resp, Shared, json_response},
    status::{ApiError, FieldError},
};

fn text(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or("").to_owned()
}

/// The attributes a SelfSubjectAccessReview spec asks about.
pub fn spec_attributes(spec: &Value) -> Result<Attributes, ApiError> {
    let resource = spec.get("resourceAttributes").filter(|v| v.is_object());
    let non_resource = spec.get("nonResourceAttributes").filter(|v| v.is_object());
    match (resource, non_resource) {
        (Some(r), None) => Ok(Attributes {
            verb: text(r, "verb"),
            resource_request: true,
            namespace: text(r, "namespace"),
            api_group: text(r, "group"),
            api_version: text(r, "version"),
            resource: text(r, "resource"),
            subresource: text(r, "subresource"),
            name: text(r, "name"),
            path: String::new(),
        }),
        (None, Some(n)) => Ok(Attributes::non_resource(&text(n, "verb"), &text(n, "path"))),
        (r, _) => {
            let detail = if r.is_some() {
                "cannot be specified in combination with resourceAttributes"
            } else {
                "exactly one of nonResourceAttributes or resourceAttributes must be specified"
            };
            let field = if r.is_some() {
                "spec.nonResourceAttributes"
            } else {
                "spec.resourceAttributes"
            };
            Err(ApiError::invalid(
                "SelfSubjectAccessReview",
                "authorization.k8s.io",
                "",
                &[FieldError::invalid(field, &json!("null"), detail)],
            ))
        }
    }
}

/// `POST .../selfsubjectaccessreviews`.
pub fn access_review(shared: &Shared, req: &Req) -> Result<Resp, ApiError> {
    let body = auth::body(req)?;
    let spec = body.get("spec").cloned().unwrap_or(Value::Null);
    let attrs = spec_attributes(&spec)?;
    let decision = authorize(&shared.store, &req.user, &attrs);
    let mut status = json!({"allowed": decision.allowed});
    if !decision.reason.is_empty() {
        status["reason"] = json!(decision.reason);
    }
    Ok(json_response(
        201,
        &json!({
            "kind": "SelfSubjectAccessReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": null},
            "spec": spec,
            "status": status,
        }),
    ))
}

/// `POST .../subjectaccessreviews` (and the namespaced `localsubjectaccessreviews`, whose
/// resource attributes must be in the URL's namespace): may the user the spec names do it?
pub fn subject_access_review(
    shared: &Shared,
    req: &Req,
    local: Option<&str>,
) -> Result<Resp, ApiError> {
    let body = auth::body(req)?;
    let spec = body.get("spec").cloned().unwrap_or(Value::Null);
    let kind = if local.is_some() {
        "LocalSubjectAccessReview"
    } else {
        "SubjectAccessReview"
    };
    let user = spec["user"].as_str().unwrap_or("").to_owned();
    let groups: Vec<String> = spec["groups"]
        .as_array()
        .map(|g| {
            g.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if user.is_empty() && groups.is_empty() {
        return Err(ApiError::invalid(
            kind,
            "authorization.k8s.io",
            "",
            &[crate::server::status::FieldError::invalid(
                "spec.user",
                &json!(""),
                "at least one of user or group must be specified",
            )],
        ));
    }
    if let Some(ns) = local {
        let want = spec["resourceAttributes"]["namespace"]
            .as_str()
            .unwrap_or("");
        if want != ns {
            return Err(ApiError::invalid(
                kind,
                "authorization.k8s.io",
                "",
                &[crate::server::status::FieldError::invalid(
                    "spec.resourceAttributes.namespace",
                    &json!(want),
                    "must match metadata.namespace",
                )],
            ));
        }
    }
    let attrs = spec_attributes(&spec)?;
    let subject = crate::server::auth::UserInfo {
        name: user,
        uid: spec["uid"].as_str().unwrap_or("").to_owned(),
        groups,
    };
    let decision = if subject.groups.iter().any(|g| g == super::resolver::MASTERS) {
        super::resolver::Decision {
            allowed: true,
            reason: String::new(),
        }
    } else {
        authorize(&shared.store, &subject, &attrs)
    };
    let mut status = json!({"allowed": decision.allowed});
    if !decision.reason.is_empty() {
        status["reason"] = json!(decision.reason);
    }
    let mut metadata = json!({"creationTimestamp": null});
    if let Some(ns) = local {
        metadata["namespace"] = json!(ns);
    }
    Ok(json_response(
        201,
        &json!({
            "kind": kind,
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": metadata,
            "spec": spec,
            "status": status,
        }),
    ))
}

/// `POST .../selfsubjectrulesreviews`: every rule that applies in `spec.namespace`.
pub fn rules_review(shared: &Shared, req: &Req) -> Result<Resp, ApiError> {
    let body = auth::body(req)?;
    let namespace = body["spec"]["namespace"].as_str().unwrap_or("").to_owned();
    let (rules, error) = rules_for(&shared.store, &req.user, &namespace);
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for rule in &rules {
        if !rule.resources.is_empty() {
            let mut r = json!({"verbs": rule.verbs, "apiGroups": rule.api_groups,
                "resources": rule.resources});
            if !rule.resource_names.is_empty() {
                r["resourceNames"] = json!(rule.resource_names);
            }
            resource_rules.push(r);
        }
        if !rule.non_resource_urls.is_empty() {
            non_resource_rules
                .push(json!({"verbs": rule.verbs, "nonResourceURLs": rule.non_resource_urls}));
        }
    }
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": false,
    });
    if !error.is_empty() {
        status["evaluationError"] = json!(error);
    }
    Ok(json_response(
        201,
        &json!({
            "kind": "SelfSubjectRulesReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": null},
            "spec": {"namespace": namespace},
            "status": status,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_asks_about_a_resource_or_a_path_never_both() {
        let a = spec_attributes(
            &json!({"resourceAttributes": {"verb": "get", "resource": "pods",
            "subresource": "log", "namespace": "demo", "name": "web-0"}}),
        )
        .unwrap();
        assert!(a.resource_request);
        assert_eq!((a.subresource.as_str(), a.name.as_str()), ("log", "web-0"));
        let n =
            spec_attributes(&json!({"nonResourceAttributes": {"verb": "get", "path": "/healthz"}}))
                .unwrap();
        assert!(!n.resource_request);
        assert_eq!(n.path, "/healthz");
        let neither = spec_attributes(&json!({})).unwrap_err();
        assert_eq!(neither.code, 422);
        assert!(
            neither.message.contains("exactly one of"),
            "{}",
            neither.message
        );
        let both = spec_attributes(&json!({"resourceAttributes": {}, "nonResourceAttributes": {}}))
            .unwrap_err();
        assert_eq!(both.code, 422);
    }
}
