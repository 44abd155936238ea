//! The actions on one object rather than on a rollout: an in-place container restart (a
//! ContainerRecreateRequest created for the pod), the deletion-protection label, and a delete
//! that applies only to the object the user decided on.

use serde_json::{Map, Value, json};

use super::{
    Action, ActionError, ApiRequest, ObjectState, Prepared, RestartStrategy, Target,
    prepare::{Patcher, api_path, present},
};
use crate::api::kinds::{self, ProtectedKind};
use crate::kruise::protection::{DELETION_PROTECTION_KEY, PROTECTION_ALWAYS, PROTECTION_CASCADING};

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
        (
            "ttlSecondsAfterFinished",
            i64::from(s.ttl_seconds_after_finished),
        ),
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
    if *target.kind != kinds::POD {
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
            path: format!(
                "/apis/apps.kruise.io/v1alpha1/namespaces/{ns}/containerrecreaterequests"
            ),
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
        then: Vec::new(),
    })
}

fn protect(
    target: &Target,
    action: &Action,
    value: Option<&str>,
    state: &ObjectState,
) -> Result<Prepared, ActionError> {
    if target.kind.protected.is_none() {
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
        Some(_) => notes.push(match target.kind.protected {
            Some(ProtectedKind::Namespace) => {
                "Cascading: a delete is denied while the namespace has active pods or Bound PVCs"
            }
            Some(ProtectedKind::CustomResourceDefinition) => {
                "Cascading: a delete is denied while custom resources of the CRD exist (needs \
                 the DeletionProtectionForCRDCascadingGate gate)"
            }
            Some(ProtectedKind::Service | ProtectedKind::Ingress) => {
                "Cascading is not honoured for this kind: only Always is"
            }
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
        then: Vec::new(),
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
        notes: vec![
            "a delete has no inverse: the journal records it but cannot revert it".to_owned(),
        ],
        then: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::api::kinds::parse_kind;

    fn state(object: Value) -> ObjectState {
        ObjectState {
            version: "v1alpha1".into(),
            plural: "clonesets".into(),
            object,
            revisions: Vec::new(),
        }
    }

    #[test]
    fn protection_is_added_under_its_real_key_and_reverted_to_the_old_value() {
        let cs = Target::new(parse_kind("cs").expect("kind"), Some("demo"), "web");
        let object = json!({"metadata": {"name": "web", "resourceVersion": "7"}});
        let p = prepare(
            &cs,
            &Action::Protect {
                value: Some("Always".into()),
            },
            &state(object.clone()),
        )
        .expect("prepared");
        let mut patched = object.clone();
        let patch: json_patch::Patch = serde_json::from_value(p.request.body).expect("patch");
        json_patch::patch(&mut patched, &patch).expect("applies");
        assert_eq!(protection_of(&patched), Some("Always"));
        assert_eq!(p.inverse, Some(Action::Protect { value: None }));
        // Off removes it, pinned on the value read.
        let off = prepare(
            &cs,
            &Action::Protect { value: None },
            &state(patched.clone()),
        )
        .expect("prepared");
        let patch: json_patch::Patch = serde_json::from_value(off.request.body).expect("patch");
        json_patch::patch(&mut patched, &patch).expect("applies");
        assert_eq!(protection_of(&patched), None);
        let bad = prepare(
            &cs,
            &Action::Protect {
                value: Some("always".into()),
            },
            &state(object),
        );
        assert!(matches!(bad, Err(ActionError::Invalid(m)) if m.contains("case-sensitive")));
        assert_eq!(next_protection(None).as_deref(), Some("Always"));
        assert_eq!(
            next_protection(Some("Always")).as_deref(),
            Some("Cascading")
        );
        assert_eq!(next_protection(Some("Cascading")), None);
    }

    #[test]
    fn a_restart_posts_a_request_for_the_running_pods_containers() {
        let pod = Target::new(parse_kind("pod").expect("kind"), Some("demo"), "web-1");
        let object = json!({"metadata": {"name": "web-1"},
            "spec": {"containers": [{"name": "main", "ports": [{"containerPort": 80}]}, {"name": "side"}]},
            "status": {"phase": "Running", "containerStatuses": [{"name": "main", "restartCount": 2}]}});
        let mut s = state(object.clone());
        s.version = "v1".into();
        s.plural = "pods".into();
        let action = Action::Restart {
            containers: vec![],
            strategy: RestartStrategy::default(),
        };
        let p = prepare(&pod, &action, &s).expect("prepared");
        assert_eq!(p.request.verb, "POST");
        assert_eq!(
            p.request.path,
            "/apis/apps.kruise.io/v1alpha1/namespaces/demo/containerrecreaterequests"
        );
        let spec = &p.request.body["spec"];
        assert_eq!(spec["podName"], "web-1");
        assert_eq!(spec["containers"][0]["ports"][0]["containerPort"], 80);
        assert_eq!(spec["containers"][1]["name"], "side");
        assert_eq!(spec["strategy"]["unreadyGracePeriodSeconds"], 3);
        assert_eq!(spec["activeDeadlineSeconds"], 300);
        assert_eq!(spec["ttlSecondsAfterFinished"], 1800);
        assert_eq!(p.inverse, None);
        assert!(p.changes[0].contains("main (restarts 2)"));
        let unknown = Action::Restart {
            containers: vec!["nope".into()],
            strategy: RestartStrategy::default(),
        };
        assert!(
            matches!(prepare(&pod, &unknown, &s), Err(ActionError::Invalid(m)) if m.contains("main, side"))
        );
        s.object["status"]["phase"] = json!("Pending");
        assert!(
            matches!(prepare(&pod, &action, &s), Err(ActionError::Invalid(m)) if m.contains("Pending"))
        );
    }
}
