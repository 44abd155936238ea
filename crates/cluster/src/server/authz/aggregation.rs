//! ClusterRole aggregation, as kube-controller-manager's `clusterrole-aggregation` controller
//! does it: a ClusterRole with an `aggregationRule` gets, as its `rules`, the rules of every other
//! ClusterRole its selectors match (by name order, each rule once). Runs on every ClusterRole
//! change until nothing moves (`view` feeds `edit`, which feeds `admin`).

use std::sync::Arc;

use serde_json::Value;
use tokio::task::JoinHandle;

use super::resolver::RBAC;
use crate::server::{
    selector::LabelSelector,
    store::{Store, WatchFrom},
};

/// The rules `role` aggregates from `all` (None if it has no aggregationRule).
pub fn aggregated_rules(role: &Value, all: &[Value]) -> Option<Vec<Value>> {
    let selectors = role["aggregationRule"]["clusterRoleSelectors"].as_array()?;
    let name = role["metadata"]["name"].as_str().unwrap_or("");
    let mut sorted: Vec<&Value> = all.iter().collect();
    sorted.sort_by(|a, b| {
        let n = |v: &Value| v["metadata"]["name"].as_str().unwrap_or("").to_owned();
        n(a).cmp(&n(b))
    });
    let mut rules: Vec<Value> = Vec::new();
    for selector in selectors {
        let selector = LabelSelector::from_object(selector);
        for other in &sorted {
            if other["metadata"]["name"].as_str() == Some(name) || !selector.matches(other) {
                continue;
            }
            for rule in other["rules"].as_array().into_iter().flatten() {
                if !rules.contains(rule) {
                    rules.push(rule.clone());
                }
            }
        }
    }
    Some(rules)
}

/// Brings every aggregated ClusterRole up to date; returns how many it rewrote.
pub fn aggregate(store: &Store) -> usize {
    let mut rewritten = 0;
    // Each pass can feed the next (view → edit → admin); a few passes reach the fixed point.
    for _ in 0..8 {
        let all = store.list_values(RBAC, "ClusterRole", None);
        let mut changed = false;
        for role in &all {
            let Some(rules) = aggregated_rules(role, &all) else {
                continue;
            };
            let current = role["rules"].as_array().cloned().unwrap_or_default();
            if current == rules {
                continue;
            }
            let mut updated = role.clone();
            updated["rules"] = Value::Array(rules);
            if let Some(meta) = updated["metadata"].as_object_mut() {
                meta.remove("resourceVersion");
            }
            if store.update(updated).is_ok() {
                changed = true;
                rewritten += 1;
            }
        }
        if !changed {
            break;
        }
    }
    rewritten
}

/// Runs the aggregation on every ClusterRole change until aborted.
pub fn spawn(store: Arc<Store>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let Some(res) = store.registry().by_kind(RBAC, "ClusterRole") else {
            return;
        };
        let Ok(mut sub) = store.watch(
            Some(res.key.clone()),
            None,
            WatchFrom::Version(store.current_rv()),
        ) else {
            return;
        };
        aggregate(&store);
        while sub.rx.recv().await.is_some() {
            // A burst of changes is one pass.
            while sub.rx.try_recv().is_ok() {}
            aggregate(&store);
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn selected_roles_rules_are_merged_once_by_name_order() {
        let view = json!({"metadata": {"name": "view"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg": "view"}}]}});
        let b = json!({"metadata": {"name": "b", "labels": {"agg": "view"}},
            "rules": [{"verbs": ["get"], "resources": ["pods"]}]});
        let a = json!({"metadata": {"name": "a", "labels": {"agg": "view"}},
            "rules": [{"verbs": ["list"], "resources": ["pods"]}, {"verbs": ["get"], "resources": ["pods"]}]});
        let other = json!({"metadata": {"name": "c"}, "rules": [{"verbs": ["*"]}]});
        let rules = aggregated_rules(&view, &[view.clone(), b, a, other]).unwrap();
        assert_eq!(
            rules,
            vec![
                json!({"verbs": ["list"], "resources": ["pods"]}),
                json!({"verbs": ["get"], "resources": ["pods"]})
            ]
        );
        assert_eq!(
            aggregated_rules(&json!({"metadata": {"name": "x"}}), &[]),
            None
        );
    }
}
