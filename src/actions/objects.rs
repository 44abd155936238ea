//! The actions on one object rather than on a rollout: an in-place container restart (a
//! ContainerRecreateRequest created for the pod), the deletion-protection label, and a delete
//! that applies only to the object the user decided on.

use serde_json::{Map, Value, json};

use super::{
    Action, ActionError, ApiRequest, ObjectState, Prepared, RestartStrategy, Target,
    prepare::{Patcher, api_path, present},
};
use crate::kruise::protection::{
    DELETION_PROTECTION_KEY, PROTECTION_ALWAYS, PROTECTION_CASCADING, protected_kind,
};

/// The JSON pointer of the protection label.
pub const PROTECTION_LABEL_PATH: &str = "/metadata/labels/policy.kruise.io~1delete-protection";

pub(super) fn prepare(
    target: &Target,
    action: &Action,
    state: &ObjectState,
) -> Result<Prepared, ActionError> {
    match action {
        Action::Restart {
            containers,
            strategy,
        } => restart(target, action, containers, strategy, state),
        Action::Protect { value } => protect(target, action, value.as_deref(), state),
        Action::Delete => delete(target, action, state),
        _ => Err(ActionError::NotApplicable {
            kind: target.describe(),
            what: action.describe(),
        }),
    }
}

/// The protection label's value on an object (`None`: unset).
pub fn protection_of(object: &Value) -> Option<&str> {
    object["metadata"]["labels"][DELETION_PROTECTION_KEY].as_str()
}

/// The label's next value as `x` cycles it: off → Always → Cascading → off.
pub fn next_protection(current: Option<&str>) -> Option<String> {
    match current {
        None => Some(PROTECTION_ALWAYS.to_owned()),
        Some(PROTECTION_ALWAYS) => Some(PROTECTION_CASCADING.to_owned()),
        // Cascading, or a value Kruise does not know (which protects nothing): off.
        Some(_) => None,
    }
}

/// Checks a strategy as the form and the flags give it.
pub fn check_strategy(s: &RestartStrategy) -> Result<(), ActionError> {
    let bad = |why: String| Err(ActionError::Invalid(why));
    if s.failure_policy != "Fail" && s.failure_policy != "Ignore" {
        return bad(format!(
            "failurePolicy {:?}: it must be Fail or Ignore",
            s.failure_policy
        ));
    }
    for (name, v) in [
        ("unreadyGracePeriodSeconds", s.unready_grace_period_seconds),
        ("minStartedSeconds", i64::from(s.min_started_seconds)),
        ("activeDeadlineSeconds", s.active_deadline_seconds),
        ("ttlSecondsAfterFinished", i64::from(s.ttl_seconds_after_finished)),
    ] {
        if v < 0 {
            return bad(format!("{name} {v} is negative: it must be 0 or more"));
        }
    }
    if s.active_deadline_seconds == 0 {
        return bad("activeDeadlineSeconds 0 leaves no time to restart: give 1 or more".to_owned());
    }
    Ok(())
}

fn restart(
    target: &Target,
    action: &Action,
    containers: &[String],
    strategy: &RestartStrategy,
    state: &ObjectState,
) -> Result<Prepared, ActionError> {
    if target.kind != "Pod" || !target.group.is_empty() {
        return Err(ActionError::NotApplicable {
            kind: target.describe(),
            what: "containers to restart (a restart is for a pod)".to_owned(),
        });
    }
    check_strategy(strategy)?;
    let pod = &state.object;
    let spec_containers: Vec<&Value> = pod["spec"]["containers"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let names: Vec<&str> = spec_containers
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    let mut chosen: Vec<&Value> = Vec::new();
    if containers.is_empty() {
        chosen = spec_containers.clone();
    } else {
        for name in containers {
            let Some(c) = spec_containers.iter().find(|c| c["name"] == *name) else {
                return Err(ActionError::Invalid(format!(
                    "pod {} has no container {name:?} (containers: {})",
                    target.name,
                    names.join(", ")
                )));
            };
            if !chosen.iter().any(|x| x["name"] == *name) {
                chosen.push(c);
            }
        }
    }
    if chosen.is_empty() {
        return Err(ActionError::Invalid(format!(
            "pod {} has no containers",
            target.name
        )));
    }
    if pod["metadata"]["deletionTimestamp"].is_string() {
        return Err(ActionError::Invalid(format!(
            "pod {} is being deleted: nothing to restart",
            target.name
        )));
    }
    let phase = pod["status"]["phase"].as_str().unwrap_or("Unknown");
    if phase != "Running" {
        return Err(ActionError::Invalid(format!(
            "pod {} is {phase}: only the containers of a running pod can be restarted in place",
            target.name
        )));
    }
    // As kubectl-kruise does: each container's preStop hook and ports go along.
    let crr_containers: Vec<Value> = chosen
        .iter()
        .map(|c| {
            let mut out = Map::new();
            out.insert("name".into(), c["name"].clone());
            if let Some(pre_stop) = c["lifecycle"]["preStop"].as_object() {
                let handler: Map<String, Value> = pre_stop
                    .iter()
                    .filter(|(k, _)| matches!(k.as_str(), "exec" | "httpGet" | "tcpSocket"))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if !handler.is_empty() {
                    out.insert("preStop".into(), Value::Object(handler));
                }
            }
            if let Some(ports) = c["ports"].as_array().filter(|p| !p.is_empty()) {
                out.insert("ports".into(), Value::Array(ports.clone()));
            }
            Value::Object(out)
        })
        .collect();
    let ns = target.namespace.clone().unwrap_or_default();
    let body = json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ContainerRecreateRequest",
        "metadata": {
            "generateName": format!("{}-restart-", target.name),
            "namespace": ns,
        },
        "spec": {
            "podName": target.name,
            "containers": crr_containers,
            "strategy": {
                "failurePolicy": strategy.failure_policy,
                "orderedRecreate": strategy.ordered_recreate,
                "unreadyGracePeriodSeconds": strategy.unready_grace_period_seconds,
                "minStartedSeconds": strategy.min_started_seconds,
            },
            "activeDeadlineSeconds": strategy.active_deadline_seconds,
            "ttlSecondsAfterFinished": strategy.ttl_seconds_after_finished,
        },
    });
    let restarts: Vec<String> = chosen
        .iter()
        .filter_map(|c| c["name"].as_str())
        .map(|name| {
            let count = pod["status"]["containerStatuses"]
                .as_array()
                .and_then(|s| s.iter().find(|s| s["name"] == name))
                .and_then(|s| s["restartCount"].as_i64())
                .unwrap_or(0);
            format!("{name} (restarts {count})")
        })
        .collect();
    Ok(Prepared {
        target: target.clone(),
        action: action.clone(),
        request: ApiRequest {
            verb: "POST".to_owned(),
            path: format!("/apis/apps.kruise.io/v1alpha1/namespaces/{ns}/containerrecreaterequests"),
            content_type: "application/json".to_owned(),
            body,
        },
        inverse: None,
        changes: vec![format!("restart in place: {}", restarts.join(", "))],
        notes: vec![
            format!(
                "the pod keeps its name, IP and volumes; it is marked not ready {}s before each \
                 container stops, and the request fails after {}s",
                strategy.unready_grace_period_seconds, strategy.active_deadline_seconds
            ),
            "a restart has no inverse: the journal records it but cannot revert it".to_owned(),
        ],
    })
}

fn api_version(target: &Target, state: &ObjectState) -> String {
    if target.group.is_empty() {
        state.version.clone()
    } else {
        format!("{}/{}", target.group, state.version)
    }
}

fn protect(
    target: &Target,
    action: &Action,
    value: Option<&str>,
    state: &ObjectState,
) -> Result<Prepared, ActionError> {
    if protected_kind(&api_version(target, state), &target.kind).is_none() {
        return Err(ActionError::NotApplicable {
            kind: target.describe(),
            what: "deletion protection (Kruise guards namespaces, CRDs, CloneSets, Advanced \
                   StatefulSets, UnitedDeployments, Deployments, ReplicaSets, StatefulSets, \
                   Services and Ingresses)"
                .to_owned(),
        });
    }
    if let Some(v) = value
        && v != PROTECTION_ALWAYS
        && v != PROTECTION_CASCADING
    {
        return Err(ActionError::Invalid(format!(
            "delete-protection {v:?}: it must be Always, Cascading or off (the value is \
             case-sensitive)"
        )));
    }
    let object = &state.object;
    let old = protection_of(object);
    if old == value {
        return Err(ActionError::NoChange(format!(
            "delete-protection is already {}",
            value.unwrap_or("off")
        )));
    }
    let mut p = Patcher::new(object);
    match value {
        Some(v) => p.set(PROTECTION_LABEL_PATH, json!(v)),
        None => {
            let current = present(object, PROTECTION_LABEL_PATH)
                .cloned()
                .unwrap_or(Value::Null);
            p.test(PROTECTION_LABEL_PATH, &current);
            p.ops
                .push(json!({"op": "remove", "path": PROTECTION_LABEL_PATH}));
        }
    }
    let mut notes = Vec::new();
    match value {
        Some(PROTECTION_ALWAYS) => notes.push("Always: every delete is denied".to_owned()),
        Some(_) => notes.push(match target.kind.as_str() {
            "Namespace" => {
                "Cascading: a delete is denied while the namespace has active pods or Bound PVCs"
            }
            "CustomResourceDefinition" => {
                "Cascading: a delete is denied while custom resources of the CRD exist (needs \
                 the DeletionProtectionForCRDCascadingGate gate)"
            }
            "Service" | "Ingress" => "Cascading is not honoured for this kind: only Always is",
            _ => "Cascading: a delete is denied while replicas > 0",
        }
        .to_owned()),
        None => notes.push("off: deletes are not checked".to_owned()),
    }
    Ok(Prepared {
        target: target.clone(),
        action: action.clone(),
        request: ApiRequest {
            verb: "PATCH".to_owned(),
            path: api_path(target, state),
            content_type: "application/json-patch+json".to_owned(),
            body: Value::Array(p.ops),
        },
        inverse: Some(Action::Protect {
            value: old.map(str::to_owned),
        }),
        changes: vec![format!(
            "delete-protection {} → {}",
            old.unwrap_or("off"),
            value.unwrap_or("off")
        )],
        notes,
    })
}

fn delete(target: &Target, action: &Action, state: &ObjectState) -> Result<Prepared, ActionError> {
    let meta = &state.object["metadata"];
    if meta["deletionTimestamp"].is_string() {
        return Err(ActionError::NoChange(format!(
            "{} is already being deleted",
            target.describe()
        )));
    }
    let body = json!({
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        // The uid, not the resourceVersion: a status write by a controller must not turn the
        // delete into a conflict; the admission chain judges the object as it is then.
        "preconditions": {"uid": meta["uid"]},
    });
    Ok(Prepared {
        target: target.clone(),
        action: action.clone(),
        request: ApiRequest {
            verb: "DELETE".to_owned(),
            path: api_path(target, state),
            content_type: "application/json".to_owned(),
            body,
        },
        inverse: None,
        changes: vec![format!("delete {}", target.describe())],
        notes: vec!["a delete has no inverse: the journal records it but cannot revert it".to_owned()],
    })
}
