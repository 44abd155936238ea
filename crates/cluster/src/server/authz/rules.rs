//! RBAC rules and how one request is matched against them, as the real authorizer evaluates
//! them (upstream `plugin/pkg/auth/authorizer/rbac/rbac.go` `RuleAllows` and
//! `pkg/apis/rbac/v1/evaluation_helpers.go`): verbs, API groups, resources with subresources
//! (`pods/log`, `*/scale`, `*`), resource names and non-resource URLs (exact or `prefix*`).
//! Pure: no store, no IO.

use serde_json::{Value, json};

/// One `rules[]` entry of a Role or ClusterRole.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyRule {
    pub verbs: Vec<String>,
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
    pub non_resource_urls: Vec<String>,
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect()
}

impl PolicyRule {
    /// Reads a rule as stored (missing lists are empty).
    pub fn from_json(v: &Value) -> PolicyRule {
        PolicyRule {
            verbs: strings(&v["verbs"]),
            api_groups: strings(&v["apiGroups"]),
            resources: strings(&v["resources"]),
            resource_names: strings(&v["resourceNames"]),
            non_resource_urls: strings(&v["nonResourceURLs"]),
        }
    }

    /// The `rules` of a Role or ClusterRole object.
    pub fn all_of(role: &Value) -> Vec<PolicyRule> {
        role["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .map(PolicyRule::from_json)
            .collect()
    }

    /// The rule as JSON, with the empty lists left out (as the real server serializes it).
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("verbs".into(), json!(self.verbs));
        for (key, list) in [
            ("apiGroups", &self.api_groups),
            ("resources", &self.resources),
            ("resourceNames", &self.resource_names),
            ("nonResourceURLs", &self.non_resource_urls),
        ] {
            if !list.is_empty() {
                m.insert(key.into(), json!(list));
            }
        }
        Value::Object(m)
    }
}

/// What a request asks to do: upstream's `authorizer.Attributes`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attributes {
    pub verb: String,
    /// True for `/api/...` and `/apis/...` resource paths.
    pub resource_request: bool,
    pub namespace: String,
    pub api_group: String,
    pub api_version: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
    /// The URL path, for non-resource requests.
    pub path: String,
}

impl Attributes {
    /// A resource request.
    pub fn resource(verb: &str, group: &str, resource: &str, namespace: &str) -> Attributes {
        Attributes {
            verb: verb.to_owned(),
            resource_request: true,
            namespace: namespace.to_owned(),
            api_group: group.to_owned(),
            resource: resource.to_owned(),
            ..Attributes::default()
        }
    }

    /// A non-resource request (`/healthz`, `/apis`, ...).
    pub fn non_resource(verb: &str, path: &str) -> Attributes {
        Attributes {
            verb: verb.to_owned(),
            path: path.to_owned(),
            ..Attributes::default()
        }
    }
}

fn verb_matches(rule: &PolicyRule, verb: &str) -> bool {
    rule.verbs.iter().any(|v| v == "*" || v == verb)
}

fn group_matches(rule: &PolicyRule, group: &str) -> bool {
    rule.api_groups.iter().any(|g| g == "*" || g == group)
}

fn resource_matches(rule: &PolicyRule, combined: &str, subresource: &str) -> bool {
    rule.resources.iter().any(|r| {
        r == "*"
            || r == combined
            || (!subresource.is_empty()
                && r.len() == subresource.len() + 2
                && r.starts_with("*/")
                && r.ends_with(subresource))
    })
}

fn name_matches(rule: &PolicyRule, name: &str) -> bool {
    rule.resource_names.is_empty() || rule.resource_names.iter().any(|n| n == name)
}

fn url_matches(rule: &PolicyRule, path: &str) -> bool {
    rule.non_resource_urls.iter().any(|u| {
        u == "*" || u == path || (u.ends_with('*') && path.starts_with(u.trim_end_matches('*')))
    })
}

/// Whether `rule` allows the request.
pub fn allows(attrs: &Attributes, rule: &PolicyRule) -> bool {
    if !verb_matches(rule, &attrs.verb) {
        return false;
    }
    if !attrs.resource_request {
        return url_matches(rule, &attrs.path);
    }
    let combined = if attrs.subresource.is_empty() {
        attrs.resource.clone()
    } else {
        format!("{}/{}", attrs.resource, attrs.subresource)
    };
    group_matches(rule, &attrs.api_group)
        && resource_matches(rule, &combined, &attrs.subresource)
        && name_matches(rule, &attrs.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(v: Value) -> PolicyRule {
        PolicyRule::from_json(&v)
    }

    fn pods(verb: &str) -> Attributes {
        Attributes::resource(verb, "", "pods", "demo")
    }

    #[test]
    fn verbs_groups_and_resources() {
        let r = rule(json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}));
        assert!(allows(&pods("list"), &r));
        assert!(!allows(&pods("delete"), &r));
        assert!(!allows(
            &Attributes::resource("list", "apps", "pods", "demo"),
            &r
        ));
        let all = rule(json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}));
        let mut scale = Attributes::resource("update", "apps.kruise.io", "clonesets", "x");
        scale.subresource = "scale".into();
        assert!(allows(&scale, &all));
    }

    #[test]
    fn subresources_need_their_own_rule_or_a_star_form() {
        let pods_only = rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}));
        let mut log = pods("get");
        log.subresource = "log".into();
        assert!(!allows(&log, &pods_only), "pods does not grant pods/log");
        let log_rule =
            rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}));
        assert!(allows(&log, &log_rule));
        assert!(
            !allows(&pods("get"), &log_rule),
            "pods/log does not grant pods"
        );
        let any_log = rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["*/log"]}));
        assert!(allows(&log, &any_log));
        let mut status = pods("get");
        status.subresource = "status".into();
        assert!(!allows(&status, &any_log));
    }

    #[test]
    fn resource_names_limit_named_requests_only() {
        let r = rule(json!({"verbs": ["get", "list"], "apiGroups": [""],
            "resources": ["configmaps"], "resourceNames": ["settings"]}));
        let mut get = Attributes::resource("get", "", "configmaps", "demo");
        get.name = "settings".into();
        assert!(allows(&get, &r));
        get.name = "other".into();
        assert!(!allows(&get, &r));
        let list = Attributes::resource("list", "", "configmaps", "demo");
        assert!(
            !allows(&list, &r),
            "a list has no name, so resourceNames never match it"
        );
    }

    #[test]
    fn non_resource_urls_match_exactly_or_by_star_prefix() {
        let r = rule(json!({"verbs": ["get"], "nonResourceURLs": ["/healthz", "/apis/*"]}));
        assert!(allows(&Attributes::non_resource("get", "/healthz"), &r));
        assert!(!allows(
            &Attributes::non_resource("get", "/healthz/etcd"),
            &r
        ));
        assert!(allows(
            &Attributes::non_resource("get", "/apis/apps/v1"),
            &r
        ));
        assert!(!allows(&Attributes::non_resource("get", "/apis"), &r));
        assert!(!allows(&Attributes::non_resource("post", "/healthz"), &r));
        let resource = rule(json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}));
        assert!(
            !allows(&Attributes::non_resource("get", "/healthz"), &resource),
            "resource rules never grant a path"
        );
    }

    #[test]
    fn rules_round_trip_without_empty_lists() {
        let v = json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]});
        assert_eq!(rule(v.clone()).to_json(), v);
    }
}
