//! Which rules apply to a user in a namespace, read from the RBAC objects in the store, and the
//! decision for one request. Follows upstream's `DefaultRuleResolver.VisitRulesFor`: every
//! ClusterRoleBinding first, then the RoleBindings of the request's namespace; a binding whose
//! role is missing adds an error to a denial's reason ("RBAC: clusterrole... not found"). The
//! `system:masters` group is allowed everything before RBAC is asked, as the real server's
//! privileged-group authorizer does.

use serde_json::Value;

use super::rules::{Attributes, PolicyRule, allows};
use crate::server::{auth::UserInfo, store::Store};

/// The RBAC API version the objects are read at.
pub const RBAC: &str = "rbac.authorization.k8s.io/v1";
/// The group whose members may do anything.
pub const MASTERS: &str = "system:masters";

/// What the authorizers decided, with the reason the real server gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    /// "RBAC: allowed by RoleBinding ..." when allowed; resolution errors (or empty) when not.
    pub reason: String,
}

fn subject_applies(user: &UserInfo, subject: &Value, binding_ns: &str) -> bool {
    let name = subject["name"].as_str().unwrap_or("");
    match subject["kind"].as_str().unwrap_or("") {
        "User" => user.name == name,
        "Group" => user.groups.iter().any(|g| g == name),
        "ServiceAccount" => {
            let ns = subject["namespace"]
                .as_str()
                .filter(|n| !n.is_empty())
                .unwrap_or(binding_ns);
            !ns.is_empty() && user.name == format!("system:serviceaccount:{ns}:{name}")
        }
        _ => false,
    }
}

fn describe_subject(subject: &Value, binding_ns: &str) -> String {
    let kind = subject["kind"].as_str().unwrap_or("");
    let name = subject["name"].as_str().unwrap_or("");
    if kind == "ServiceAccount" {
        let ns = subject["namespace"]
            .as_str()
            .filter(|n| !n.is_empty())
            .unwrap_or(binding_ns);
        format!("{kind} \"{name}/{ns}\"")
    } else {
        format!("{kind} \"{name}\"")
    }
}

/// The source of a rule, as upstream's binding describers print it.
fn describe_binding(binding: &Value, subject: &Value) -> String {
    let name = binding["metadata"]["name"].as_str().unwrap_or("");
    let ns = binding["metadata"]["namespace"].as_str().unwrap_or("");
    let role_kind = binding["roleRef"]["kind"].as_str().unwrap_or("");
    let role = binding["roleRef"]["name"].as_str().unwrap_or("");
    if ns.is_empty() {
        format!(
            "ClusterRoleBinding \"{name}\" of {role_kind} \"{role}\" to {}",
            describe_subject(subject, "")
        )
    } else {
        format!(
            "RoleBinding \"{name}/{ns}\" of {role_kind} \"{role}\" to {}",
            describe_subject(subject, ns)
        )
    }
}

fn values(store: &Store, kind: &str, ns: Option<&str>) -> Vec<Value> {
    store.list_values(RBAC, kind, ns)
}

/// The rules a binding's roleRef names (a Role in the binding's namespace, or a ClusterRole).
fn role_rules(
    store: &Store,
    role_ref: &Value,
    binding_ns: &str,
) -> Result<Vec<PolicyRule>, String> {
    let name = role_ref["name"].as_str().unwrap_or("");
    match role_ref["kind"].as_str().unwrap_or("") {
        "Role" => store
            .get_value(RBAC, "Role", binding_ns, name)
            .map(|r| PolicyRule::all_of(&r))
            .ok_or_else(|| format!("role.rbac.authorization.k8s.io \"{name}\" not found")),
        "ClusterRole" => store
            .get_value(RBAC, "ClusterRole", "", name)
            .map(|r| PolicyRule::all_of(&r))
            .ok_or_else(|| format!("clusterrole.rbac.authorization.k8s.io \"{name}\" not found")),
        other => Err(format!("unsupported role reference kind: \"{other}\"")),
    }
}

/// Calls `visit(source, rule)` for each rule that applies to `user` in `namespace` (cluster-wide
/// when empty), until it returns false; returns the resolution errors met on the way.
fn visit_rules(
    store: &Store,
    user: &UserInfo,
    namespace: &str,
    mut visit: impl FnMut(&dyn Fn() -> String, &PolicyRule) -> bool,
) -> Vec<String> {
    let mut errors = Vec::new();
    let mut bindings = values(store, "ClusterRoleBinding", None);
    if !namespace.is_empty() {
        bindings.extend(values(store, "RoleBinding", Some(namespace)));
    }
    for binding in &bindings {
        let binding_ns = binding["metadata"]["namespace"].as_str().unwrap_or("");
        let Some(subject) = binding["subjects"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|s| subject_applies(user, s, binding_ns))
        else {
            continue;
        };
        match role_rules(store, &binding["roleRef"], binding_ns) {
            Ok(rules) => {
                let source = || describe_binding(binding, subject);
                for rule in &rules {
                    if !visit(&source, rule) {
                        return errors;
                    }
                }
            }
            Err(e) => errors.push(e),
        }
    }
    errors
}

/// Upstream's `utilerrors.NewAggregate(...).Error()`: one message, or `[a, b]` (deduplicated).
fn aggregate(errors: &[String]) -> String {
    let mut unique: Vec<&String> = Vec::new();
    for e in errors {
        if !unique.contains(&e) {
            unique.push(e);
        }
    }
    match unique.as_slice() {
        [one] => (*one).clone(),
        many => format!(
            "[{}]",
            many.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Whether `user` may do what `attrs` describe.
pub fn authorize(store: &Store, user: &UserInfo, attrs: &Attributes) -> Decision {
    if user.groups.iter().any(|g| g == MASTERS) {
        return Decision {
            allowed: true,
            reason: String::new(),
        };
    }
    let mut allowed_by = None;
    let errors = visit_rules(store, user, &attrs.namespace, |source, rule| {
        if allows(attrs, rule) {
            allowed_by = Some(source());
            false
        } else {
            true
        }
    });
    match allowed_by {
        Some(source) => Decision {
            allowed: true,
            reason: format!("RBAC: allowed by {source}"),
        },
        None if errors.is_empty() => Decision {
            allowed: false,
            reason: String::new(),
        },
        None => Decision {
            allowed: false,
            reason: format!("RBAC: {}", aggregate(&errors)),
        },
    }
}

/// Every rule that applies to `user` in `namespace`, and the resolution errors (for
/// SelfSubjectRulesReview).
pub fn rules_for(store: &Store, user: &UserInfo, namespace: &str) -> (Vec<PolicyRule>, String) {
    let mut rules = Vec::new();
    if user.groups.iter().any(|g| g == MASTERS) {
        // The privileged-group authorizer answers first in the real server's union.
        rules.push(PolicyRule::from_json(
            &serde_json::json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}),
        ));
        rules.push(PolicyRule::from_json(
            &serde_json::json!({"verbs": ["*"], "nonResourceURLs": ["*"]}),
        ));
    }
    let errors = visit_rules(store, user, namespace, |_, rule| {
        rules.push(rule.clone());
        true
    });
    let error = if errors.is_empty() {
        String::new()
    } else {
        aggregate(&errors)
    };
    (rules, error)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn sa() -> UserInfo {
        UserInfo::service_account("demo", "viewer", "uid-1")
    }

    #[test]
    fn subjects_match_users_groups_and_service_accounts() {
        let user = sa();
        assert!(subject_applies(
            &user,
            &json!({"kind": "ServiceAccount", "name": "viewer"}),
            "demo"
        ));
        assert!(!subject_applies(
            &user,
            &json!({"kind": "ServiceAccount", "name": "viewer"}),
            "other"
        ));
        assert!(subject_applies(
            &user,
            &json!({"kind": "ServiceAccount", "name": "viewer", "namespace": "demo"}),
            ""
        ));
        assert!(!subject_applies(
            &user,
            &json!({"kind": "ServiceAccount", "name": "viewer"}),
            ""
        ));
        assert!(subject_applies(
            &user,
            &json!({"kind": "Group", "name": "system:serviceaccounts:demo"}),
            ""
        ));
        assert!(subject_applies(
            &user,
            &json!({"kind": "User", "name": "system:serviceaccount:demo:viewer"}),
            ""
        ));
        assert!(!subject_applies(
            &user,
            &json!({"kind": "User", "name": "viewer"}),
            ""
        ));
    }

    #[test]
    fn sources_are_described_like_upstream() {
        let rb = json!({"metadata": {"name": "read", "namespace": "demo"},
            "roleRef": {"kind": "Role", "name": "pod-reader"}});
        assert_eq!(
            describe_binding(&rb, &json!({"kind": "ServiceAccount", "name": "viewer"})),
            "RoleBinding \"read/demo\" of Role \"pod-reader\" to ServiceAccount \"viewer/demo\""
        );
        let crb = json!({"metadata": {"name": "basic"}, "roleRef": {"kind": "ClusterRole", "name": "system:basic-user"}});
        assert_eq!(
            describe_binding(
                &crb,
                &json!({"kind": "Group", "name": "system:authenticated"})
            ),
            "ClusterRoleBinding \"basic\" of ClusterRole \"system:basic-user\" to Group \"system:authenticated\""
        );
    }

    #[test]
    fn errors_aggregate_like_utilerrors() {
        assert_eq!(aggregate(&["a".into()]), "a");
        assert_eq!(aggregate(&["a".into(), "b".into(), "a".into()]), "[a, b]");
    }
}
