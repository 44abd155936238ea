//! Node scheduling predicates shared by the DaemonSet port and the simulated scheduler, pure:
//! a pod's node selector and required node affinity against a node's labels and name, and its
//! tolerations against a node's taints (k8s.io/component-helpers nodeaffinity and
//! k8s.io/api/core/v1 Toleration, as pinned by Kruise v1.8.4).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Node, NodeSelectorRequirement, NodeSelectorTerm, PodSpec, Taint, Toleration,
};

/// Port of k8s.io/api/core/v1::Toleration.ToleratesTaint.
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or_default();
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or_default();
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or_default() {
        "" | "Equal" => {
            toleration.value.as_deref().unwrap_or_default()
                == taint.value.as_deref().unwrap_or_default()
        }
        "Exists" => true,
        _ => false,
    }
}

/// The first of `taints` with one of `effects` that no toleration tolerates.
pub fn untolerated<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
    effects: &[&str],
) -> Option<&'a Taint> {
    taints
        .iter()
        .filter(|t| effects.contains(&t.effect.as_str()))
        .find(|t| !tolerations.iter().any(|tol| tolerates(tol, t)))
}

/// One node selector requirement against the node's value for its key (`None`: absent).
pub fn requirement_matches(req: &NodeSelectorRequirement, value: Option<&str>) -> bool {
    let values = req.values.as_deref().unwrap_or_default();
    let int = |s: &str| s.parse::<i64>().ok();
    match req.operator.as_str() {
        "In" => value.is_some_and(|v| values.iter().any(|x| x == v)),
        "NotIn" => value.is_none_or(|v| !values.iter().any(|x| x == v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" => {
            let (Some(v), [bound]) = (value.and_then(int), values) else {
                return false;
            };
            let Some(bound) = int(bound) else {
                return false;
            };
            if req.operator == "Gt" {
                v > bound
            } else {
                v < bound
            }
        }
        _ => false,
    }
}

/// A node selector term: every expression and field expression must match; an empty term
/// matches nothing. Only `metadata.name` with `In`/`NotIn` is a valid field expression.
pub fn term_matches(
    term: &NodeSelectorTerm,
    labels: &BTreeMap<String, String>,
    name: &str,
) -> bool {
    let exprs = term.match_expressions.as_deref().unwrap_or_default();
    let fields = term.match_fields.as_deref().unwrap_or_default();
    if exprs.is_empty() && fields.is_empty() {
        return false;
    }
    exprs
        .iter()
        .all(|r| requirement_matches(r, labels.get(&r.key).map(String::as_str)))
        && fields.iter().all(|r| {
            r.key == "metadata.name"
                && matches!(r.operator.as_str(), "In" | "NotIn")
                && requirement_matches(r, Some(name))
        })
}

/// Port of k8s.io/component-helpers/scheduling/corev1/nodeaffinity::GetRequiredNodeAffinity
/// Match: the node selector, and any of the required node-affinity terms.
pub fn fits_node_affinity(spec: &PodSpec, node: &Node) -> bool {
    let empty = BTreeMap::new();
    let labels = node.metadata.labels.as_ref().unwrap_or(&empty);
    let name = node.metadata.name.as_deref().unwrap_or_default();
    let selector_ok = spec
        .node_selector
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let required = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|na| {
            na.required_during_scheduling_ignored_during_execution
                .as_ref()
        });
    selector_ok
        && required.is_none_or(|r| {
            r.node_selector_terms
                .iter()
                .any(|t| term_matches(t, labels, name))
        })
}
