//! SS3 (v1.9.0): a sidecar's resources computed from the pod's containers at pod creation
//! (`pkg/webhook/pod/mutating/sidecarset_resources.go`), and the SidecarSet validation of
//! `resourcesPolicy` (`pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go`).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Container, Pod, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::calculator::{Value, evaluate};
use super::{SidecarContainer, SidecarSet};
use crate::api::sidecarset::ResourceExprs;
use crate::kruise::validation::FieldError;

/// The aggregated quantities of the target containers, by resource name.
type Aggregate = BTreeMap<&'static str, Value>;

fn qty(list: Option<&BTreeMap<String, Quantity>>, name: &str) -> Option<Value> {
    list.and_then(|l| l.get(name)).map(|q| {
        Value::quantity(&q.0).unwrap_or(Value::Quantity {
            nanos: 0,
            binary: false,
        })
    })
}

fn nanos(v: Value) -> i128 {
    match v {
        Value::Quantity { nanos, .. } => nanos,
        Value::Number(_) => 0,
    }
}

/// `aggregateResourcesBySum` / `aggregateResourcesByMax`: a limit only when every target has it;
/// a sum of requests that is zero is left out.
fn aggregate(containers: &[&Container], mode: &str) -> (Aggregate, Aggregate) {
    let mut limits = Aggregate::new();
    let mut requests = Aggregate::new();
    if mode != "sum" && mode != "max" {
        return (limits, requests);
    }
    for name in ["cpu", "memory"] {
        let mut all_limit = true;
        let (mut lim, mut req): (Option<Value>, Option<Value>) = (None, None);
        for c in containers {
            let res = c.resources.clone().unwrap_or_default();
            let combine = |acc: Option<Value>, v: Value| -> Value {
                match acc {
                    None if mode == "sum" => add_q(
                        Value::Quantity {
                            nanos: 0,
                            binary: false,
                        },
                        v,
                    ),
                    None => v,
                    Some(a) if mode == "sum" => add_q(a, v),
                    Some(a) => {
                        if nanos(v) > nanos(a) {
                            v
                        } else {
                            a
                        }
                    }
                }
            };
            match qty(res.limits.as_ref(), name) {
                Some(v) => lim = Some(combine(lim, v)),
                None => all_limit = false,
            }
            if let Some(v) = qty(res.requests.as_ref(), name) {
                req = Some(combine(req, v));
            }
        }
        if all_limit && let Some(l) = lim {
            limits.insert(name, l);
        }
        if let Some(r) = req.filter(|r| mode == "max" || nanos(*r) != 0) {
            requests.insert(name, r);
        }
    }
    (limits, requests)
}

/// `Quantity.Add` (a zero receiver takes the other's format).
fn add_q(a: Value, b: Value) -> Value {
    match (a, b) {
        (
            Value::Quantity {
                nanos: x,
                binary: xb,
            },
            Value::Quantity {
                nanos: y,
                binary: yb,
            },
        ) => Value::Quantity {
            nanos: x + y,
            binary: if x == 0 { yb } else { xb },
        },
        _ => a,
    }
}

/// `\bmemory\b`.
fn mentions_memory(expr: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    expr.match_indices("memory")
        .any(|(i, _)| !word(expr[..i].chars().next_back()) && !word(expr[i + 6..].chars().next()))
}

/// `evaluateResourceExpression`: None for an empty limit expression; 0 for an empty request.
///
/// Port of pkg/webhook/pod/mutating/sidecarset_resources.go::evaluateResourceExpression (v1.9.0).
pub fn evaluate_resource_expression(
    expr: &str,
    aggregated: Value,
    is_limit: bool,
) -> Result<Option<String>, String> {
    if expr.is_empty() {
        return Ok((!is_limit).then(|| "0".to_owned()));
    }
    let var = if mentions_memory(expr) {
        "memory"
    } else {
        "cpu"
    };
    let vars = BTreeMap::from([(var.to_owned(), aggregated)]);
    let result =
        evaluate(expr, &vars).map_err(|e| format!("failed to parse expression {expr:?}: {e}"))?;
    Ok(Some(match result {
        Value::Number(n) if var == "cpu" => Value::Quantity {
            nanos: i128::from((n * 1000.0) as i64) * 1_000_000,
            binary: false,
        }
        .to_quantity_string(),
        Value::Number(n) => Value::Quantity {
            nanos: i128::from(n as i64) * 1_000_000_000,
            binary: false,
        }
        .to_quantity_string(),
        q => q.to_quantity_string(),
    }))
}

/// The pod's containers a policy aggregates: native sidecar init containers and all containers,
/// minus every container any matched SidecarSet injects, whose name matches the regex.
fn target_containers<'p>(
    pod: &'p Pod,
    regex: &str,
    matched: &[&SidecarSet],
) -> Result<Vec<&'p Container>, String> {
    let pattern =
        regex::Regex::new(regex).map_err(|e| format!("invalid regex pattern {regex:?}: {e}"))?;
    let kruise: BTreeSet<&str> = matched
        .iter()
        .flat_map(|s| s.spec.init_containers.iter().chain(&s.spec.containers))
        .map(SidecarContainer::name)
        .collect();
    let Some(spec) = pod.spec.as_ref() else {
        return Ok(Vec::new());
    };
    let natives = spec
        .init_containers
        .iter()
        .flatten()
        .filter(|c| c.restart_policy.as_deref() == Some("Always"));
    Ok(natives
        .chain(&spec.containers)
        .filter(|c| !kruise.contains(c.name.as_str()) && pattern.is_match(&c.name))
        .collect())
}

fn section(
    exprs: Option<&ResourceExprs>,
    aggregated: &Aggregate,
    is_limit: bool,
    what: &str,
) -> Result<Option<BTreeMap<String, Quantity>>, String> {
    let Some(exprs) = exprs else {
        return Ok(None);
    };
    let mut out = BTreeMap::new();
    for (name, expr, label) in [
        ("cpu", &exprs.cpu, "CPU"),
        ("memory", &exprs.memory, "memory"),
    ] {
        if expr.is_empty() {
            continue;
        }
        let value = match (aggregated.get(name), is_limit) {
            (Some(v), _) => *v,
            // an unlimited aggregate skips the limit
            (None, true) => continue,
            (None, false) => Value::Quantity {
                nanos: 0,
                binary: false,
            },
        };
        let result = evaluate_resource_expression(expr, value, is_limit)
            .map_err(|e| format!("failed to evaluate {label} {what} expression: {e}"))?;
        if let Some(q) = result {
            out.insert(name.to_owned(), Quantity(q));
        }
    }
    Ok((!out.is_empty()).then_some(out))
}

/// Replaces the sidecar's resources with those its `resourcesPolicy` computes from the pod
/// (no policy: unchanged). `matched` are the SidecarSets injected into the pod.
///
/// Port of pkg/webhook/pod/mutating/sidecarset_resources.go::applyResourcesPolicy (v1.9.0).
pub fn apply_resources_policy(
    pod: &Pod,
    sidecar: &mut SidecarContainer,
    matched: &[&SidecarSet],
) -> Result<(), String> {
    let Some(policy) = sidecar.resources_policy.clone() else {
        return Ok(());
    };
    let targets = target_containers(pod, &policy.target_containers_name_regex, matched)
        .map_err(|e| format!("failed to get target containers: {e}"))?;
    if targets.is_empty() {
        return Err(format!(
            "no containers match the regex pattern {:?}",
            policy.target_containers_name_regex
        ));
    }
    let (limits, requests) = aggregate(&targets, &policy.target_containers_mode);
    let expr = &policy.resources_expr;
    sidecar.container.resources = Some(ResourceRequirements {
        limits: section(expr.limits.as_ref(), &limits, true, "limits")?,
        requests: section(expr.requests.as_ref(), &requests, false, "requests")?,
        ..Default::default()
    });
    Ok(())
}

fn field_error(field: String, message: String) -> FieldError {
    FieldError { field, message }
}

fn validate_expression(expr: &str, variable: &str) -> Result<(), String> {
    if expr.is_empty() {
        return Ok(());
    }
    let vars = BTreeMap::from([(variable.to_owned(), Value::Number(1.0))]);
    evaluate(expr, &vars)
        .map(|_| ())
        .map_err(|e| format!("invalid expression: {e}"))
}

/// The field errors of one sidecar container's `resourcesPolicy` at `path`.
///
/// Port of pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go::
/// validateResourcesPolicy (v1.9.0).
pub fn validate_resources_policy(sidecar: &SidecarContainer, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(policy) = sidecar.resources_policy.as_ref() else {
        return errors;
    };
    let res = sidecar.container.resources.clone().unwrap_or_default();
    if res.limits.is_some_and(|l| !l.is_empty()) || res.requests.is_some_and(|r| !r.is_empty()) {
        errors.push(field_error(
            path.to_owned(),
            format!(
                "Invalid value: {}: resourcesPolicy and resources cannot be configured together",
                go_json(policy)
            ),
        ));
        return errors;
    }
    let regex = &policy.target_containers_name_regex;
    if regex.is_empty() {
        errors.push(field_error(
            format!("{path}.targetContainersNameRegex"),
            "Required value: invalid empty regex".to_owned(),
        ));
    } else if let Err(e) = regex::Regex::new(regex) {
        errors.push(field_error(
            format!("{path}.targetContainersNameRegex"),
            format!("Invalid value: {regex:?}: invalid regex pattern: {e}"),
        ));
    }
    let expr = &policy.resources_expr;
    let expr_path = format!("{path}.resourcesExpr");
    if expr.limits.is_none() && expr.requests.is_none() {
        errors.push(field_error(
            expr_path,
            format!(
                "Invalid value: {}: at least one of limits or requests must be configured",
                go_json(expr)
            ),
        ));
        return errors;
    }
    for (section, exprs) in [("limits", &expr.limits), ("requests", &expr.requests)] {
        let Some(exprs) = exprs else { continue };
        for (name, e) in [("cpu", &exprs.cpu), ("memory", &exprs.memory)] {
            if let Err(msg) = validate_expression(e, name) {
                errors.push(field_error(
                    format!("{expr_path}.{section}.{name}"),
                    format!("Invalid value: {e:?}: {msg}"),
                ));
            }
        }
    }
    errors
}

/// The JSON Go's field errors print for a struct value (same field order and omissions).
fn go_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The error of an init container whose policy is not on a native sidecar (`restartPolicy:
/// Always`), at `path`.
pub fn init_container_policy_error(sidecar: &SidecarContainer, path: &str) -> Option<FieldError> {
    let policy = sidecar.resources_policy.as_ref()?;
    (sidecar.container.restart_policy.as_deref() != Some("Always")).then(|| {
        field_error(
            path.to_owned(),
            format!(
                "Invalid value: {}: resourcesPolicy is only supported for containers with RestartPolicy Always",
                go_json(policy)
            ),
        )
    })
}

#[cfg(test)]
mod tests;
