//! Which namespaces a ResourceDistribution targets and whether each copy is in sync.
//!
//! Port of pkg/controller/resourcedistribution/utils.go and resourcedistribution_controller.go
//! (v1.8.4): `listNamespacesForDistributor` (the targets against the cluster's namespaces),
//! `hashResource`, `makeResourceObject` (the annotations and controller reference a copy gets),
//! `isControlledByDistributor` and `needToUpdate` (a copy is rewritten when anything but its
//! metadata and status differs from `spec.resource`). Kruise v1.0 left out "forbidden"
//! namespaces (kube-system, kube-public); v1.1 dropped that (#861), so v1.8.4 targets them like
//! any other namespace, and so do we.

use std::collections::BTreeMap;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{
    selector::{self, SelectorError},
    sidecarset::gojson,
};
use crate::api::resourcedistribution::ResourceDistributionTargets;

/// The annotation holding the hash of the `spec.resource` a copy was written from.
pub const HASH_ANNOTATION: &str = "kruise.io/resourcedistribution.resource.hashcode";
/// The annotation naming the ResourceDistribution a copy comes from.
pub const SOURCE_ANNOTATION: &str = "kruise.io/resourcedistribution.resource.from";
/// The API version of the controller reference on a copy.
pub const API_VERSION: &str = "apps.kruise.io/v1alpha1";

/// A namespace of the cluster, as the targets see it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Namespace {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    /// Has a deletion timestamp.
    pub terminating: bool,
}

/// `hashResource`: hex SHA-256 of `spec.resource` as the API server hands it to the controller
/// (Go's JSON encoding: sorted keys, HTML characters escaped, no whitespace).
pub fn hash_resource(resource: &Value) -> String {
    let digest = Sha256::digest(gojson::encode_any(resource).as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// `listNamespacesForDistributor`: the namespaces the resource should be in, sorted. Listed
/// namespaces count even when they do not exist (upstream then reports NamespaceNotExists).
pub fn matched_namespaces(
    targets: &ResourceDistributionTargets,
    namespaces: &[Namespace],
) -> Result<Vec<String>, SelectorError> {
    let mut matched = std::collections::BTreeSet::new();
    if targets.all_namespaces {
        matched.extend(namespaces.iter().map(|n| n.name.clone()));
    } else {
        matched.extend(
            targets
                .included_namespaces
                .iter()
                .flat_map(|l| l.list.iter().map(|n| n.name.clone())),
        );
        if let Some(sel) = &targets.namespace_label_selector
            && !selector::is_empty(sel)
        {
            for ns in namespaces {
                if selector::matches(sel, &ns.labels)? {
                    matched.insert(ns.name.clone());
                }
            }
        }
    }
    for ns in targets
        .excluded_namespaces
        .iter()
        .flat_map(|l| l.list.iter())
    {
        matched.remove(&ns.name);
    }
    Ok(matched.into_iter().collect())
}

/// One target namespace's copy, as upstream's controller would judge it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopyState {
    /// Content equals `spec.resource`.
    InSync,
    /// Owned, but these top-level fields differ: the controller rewrites it.
    OutOfSync(Vec<String>),
    /// No copy yet: the controller creates it.
    Missing,
    /// An object of that name exists but is not controlled by this distribution (named owner,
    /// or empty): upstream leaves it and reports ConflictOccurred.
    Conflict(String),
    /// The namespace does not exist or is terminating (NamespaceNotExists).
    NoNamespace,
}

impl CopyState {
    pub fn word(&self) -> &'static str {
        match self {
            CopyState::InSync => "in sync",
            CopyState::OutOfSync(_) => "out of sync",
            CopyState::Missing => "missing",
            CopyState::Conflict(_) => "conflict",
            CopyState::NoNamespace => "no namespace",
        }
    }
}

/// The verdict on one copy, with whether its hash annotation names the current `spec.resource`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyCheck {
    pub state: CopyState,
    /// `Some(true)` when the copy's hash annotation equals [`hash_resource`] of the source;
    /// `None` without a copy or annotation.
    pub hash_current: Option<bool>,
}

/// `isControlledByDistributor`: the copy's controller reference names this distribution.
pub fn controlled_by(copy: &Value, distribution: &str) -> bool {
    controller_of(copy).is_some_and(|(api_version, kind, name)| {
        api_version == API_VERSION && kind == "ResourceDistribution" && name == distribution
    })
}

fn controller_of(copy: &Value) -> Option<(&str, &str, &str)> {
    let owners = copy["metadata"]["ownerReferences"].as_array()?;
    let c = owners
        .iter()
        .find(|o| o["controller"].as_bool() == Some(true))?;
    Some((
        c["apiVersion"].as_str()?,
        c["kind"].as_str()?,
        c["name"].as_str()?,
    ))
}

/// Judges the copy in `namespace` (`None`: no object of that name there) of `resource`.
pub fn check_copy(
    distribution: &str,
    resource: &Value,
    namespace: Option<&Namespace>,
    copy: Option<&Value>,
) -> CopyCheck {
    let hash_current = copy.and_then(|c| {
        let h = c["metadata"]["annotations"][HASH_ANNOTATION].as_str()?;
        Some(h == hash_resource(resource))
    });
    let state = match (namespace, copy) {
        (None, _) => CopyState::NoNamespace,
        (Some(ns), _) if ns.terminating => CopyState::NoNamespace,
        (_, None) => CopyState::Missing,
        (_, Some(c)) if !controlled_by(c, distribution) => CopyState::Conflict(
            controller_of(c).map_or_else(String::new, |(_, k, n)| format!("{k}/{n}")),
        ),
        (_, Some(c)) => {
            let differ = differing_fields(resource, c);
            if differ.is_empty() {
                CopyState::InSync
            } else {
                CopyState::OutOfSync(differ)
            }
        }
    };
    CopyCheck {
        state,
        hash_current,
    }
}

/// `needToUpdate`: the top-level fields, metadata and status aside, where the copy differs from
/// the source. `apiVersion` and `kind` are left out too (the copy was fetched as that kind; list
/// items carry neither), and a Secret source without `type` is compared as `Opaque`, the type
/// the API server gives its copies.
fn differing_fields(resource: &Value, copy: &Value) -> Vec<String> {
    const SKIP: [&str; 4] = ["metadata", "status", "apiVersion", "kind"];
    let mut source = resource.as_object().cloned().unwrap_or_default();
    if resource["kind"] == "Secret" && !source.contains_key("type") {
        source.insert("type".into(), Value::from("Opaque"));
    }
    let copy = copy.as_object().cloned().unwrap_or_default();
    let mut keys: Vec<&String> = source.keys().chain(copy.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| !SKIP.contains(&k.as_str()))
        .filter(|k| source.get(*k) != copy.get(*k))
        .cloned()
        .collect()
}

/// The copy upstream's controller writes into `namespace` (`makeResourceObject`, creation): the
/// source with that namespace, a controller reference to the distribution and the two
/// annotations.
pub fn make_copy(distribution: &str, uid: &str, resource: &Value, namespace: &str) -> Value {
    let mut copy = resource.clone();
    let hash = hash_resource(resource);
    if !copy["metadata"].is_object() {
        copy["metadata"] = Value::Object(Default::default());
    }
    let meta = &mut copy["metadata"];
    meta["namespace"] = Value::from(namespace);
    if !meta["annotations"].is_object() {
        meta["annotations"] = Value::Object(Default::default());
    }
    meta["annotations"][HASH_ANNOTATION] = Value::from(hash);
    meta["annotations"][SOURCE_ANNOTATION] = Value::from(distribution);
    meta["ownerReferences"] = serde_json::json!([{
        "apiVersion": API_VERSION,
        "kind": "ResourceDistribution",
        "name": distribution,
        "uid": uid,
        "controller": true,
        "blockOwnerDeletion": true,
    }]);
    copy
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ns(name: &str, labels: &[(&str, &str)]) -> Namespace {
        Namespace {
            name: name.into(),
            labels: labels
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect(),
            terminating: false,
        }
    }

    fn targets(v: Value) -> ResourceDistributionTargets {
        serde_json::from_value(v).expect("targets")
    }

    #[test]
    fn targets_union_then_exclusions() {
        let all = [
            ns("default", &[]),
            ns("kube-system", &[]),
            ns("team-a", &[("env", "prod")]),
            ns("team-b", &[("env", "prod")]),
            ns("team-c", &[("env", "dev")]),
        ];
        let t = targets(json!({
            "includedNamespaces": {"list": [{"name": "default"}, {"name": "ghost"}]},
            "namespaceLabelSelector": {"matchLabels": {"env": "prod"}},
            "excludedNamespaces": {"list": [{"name": "team-b"}]},
        }));
        assert_eq!(
            matched_namespaces(&t, &all).unwrap(),
            ["default", "ghost", "team-a"]
        );
        // All namespaces: kube-system included (v1.8.4 has no forbidden namespaces); the
        // list and the selector are then ignored, the exclusions are not.
        let t = targets(json!({"allNamespaces": true,
            "includedNamespaces": {"list": [{"name": "ghost"}]},
            "excludedNamespaces": {"list": [{"name": "team-c"}]}}));
        assert_eq!(
            matched_namespaces(&t, &all).unwrap(),
            ["default", "kube-system", "team-a", "team-b"]
        );
        // An empty selector selects nothing.
        let t = targets(json!({"namespaceLabelSelector": {}}));
        assert!(matched_namespaces(&t, &all).unwrap().is_empty());
        let t = targets(json!({"namespaceLabelSelector": {"matchExpressions": [
            {"key": "env", "operator": "Sideways"}]}}));
        assert!(matched_namespaces(&t, &all).is_err());
    }

    #[test]
    fn the_hash_is_sha256_of_go_json() {
        // Key order does not matter; Go's encoding (sorted, compact) does.
        let a = json!({"kind": "ConfigMap", "apiVersion": "v1", "data": {"b": "<2>", "a": "1"}});
        let b = json!({"apiVersion": "v1", "data": {"a": "1", "b": "<2>"}, "kind": "ConfigMap"});
        assert_eq!(hash_resource(&a), hash_resource(&b));
        let sha = Sha256::digest(
            br#"{"apiVersion":"v1","data":{"a":"1","b":"\u003c2\u003e"},"kind":"ConfigMap"}"#,
        );
        let hex: String = sha.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hash_resource(&a), hex);
        assert_eq!(hex.len(), 64);
    }

    #[test]
    fn copies_are_judged_as_the_controller_would() {
        let source = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "creds"}, "data": {"token": "YQ=="}});
        let team = ns("team-a", &[]);
        let copy = make_copy("creds", "uid-1", &source, "team-a");
        assert_eq!(copy["metadata"]["namespace"], "team-a");
        assert_eq!(copy["metadata"]["annotations"][SOURCE_ANNOTATION], "creds");
        // As stored: the API server gives the Secret its type.
        let mut stored = copy.clone();
        stored["type"] = json!("Opaque");
        let check = check_copy("creds", &source, Some(&team), Some(&stored));
        assert_eq!(check.state, CopyState::InSync);
        assert_eq!(check.hash_current, Some(true));

        let mut edited = stored.clone();
        edited["data"]["token"] = json!("Yg==");
        let check = check_copy("creds", &source, Some(&team), Some(&edited));
        assert_eq!(check.state, CopyState::OutOfSync(vec!["data".into()]));

        // The source changed since the copy was written.
        let mut newer = source.clone();
        newer["data"]["token"] = json!("Yw==");
        let check = check_copy("creds", &newer, Some(&team), Some(&stored));
        assert_eq!(check.state.word(), "out of sync");
        assert_eq!(check.hash_current, Some(false));

        // Someone else's object of that name; another distribution's.
        let mut hand = source.clone();
        hand["metadata"]["namespace"] = json!("team-a");
        let check = check_copy("creds", &source, Some(&team), Some(&hand));
        assert_eq!(check.state, CopyState::Conflict(String::new()));
        let other = make_copy("other", "uid-2", &source, "team-a");
        assert_eq!(
            check_copy("creds", &source, Some(&team), Some(&other)).state,
            CopyState::Conflict("ResourceDistribution/other".into())
        );

        assert_eq!(
            check_copy("creds", &source, Some(&team), None).state,
            CopyState::Missing
        );
        assert_eq!(
            check_copy("creds", &source, None, None).state,
            CopyState::NoNamespace
        );
        let mut gone = team.clone();
        gone.terminating = true;
        assert_eq!(
            check_copy("creds", &source, Some(&gone), Some(&stored)).state,
            CopyState::NoNamespace
        );
    }
}
