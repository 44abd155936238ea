//! Deletion protection (`policy.kruise.io/delete-protection`), ported sans-IO from Kruise v1.8.4
//! `pkg/webhook/util/deletionprotection/deletion_protection.go` and the DELETE branches of the
//! webhooks that call it. The embedded API server calls [`validate_deletion`] as a validating
//! admission hook: plain request data and cluster facts in, an allow/deny [`Verdict`] out.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::kruise::FeatureGates;

/// The protection label.
pub const DELETION_PROTECTION_KEY: &str = "policy.kruise.io/delete-protection";
/// Label value: never delete.
pub const PROTECTION_ALWAYS: &str = "Always";
/// Label value: delete only when nothing depends on the object.
pub const PROTECTION_CASCADING: &str = "Cascading";

pub use crate::kruise::admission::Verdict;

pub use crate::api::kinds::ProtectedKind;

/// Which webhook guards a kind, by apiVersion and kind. Anything else (Advanced DaemonSet,
/// DaemonSet, Jobs, Pods, ...) is not protected.
pub fn protected_kind(api_version: &str, kind: &str) -> Option<ProtectedKind> {
    crate::api::kinds::find_by_api_version(api_version, kind).and_then(|k| k.protected)
}

/// A pod of the namespace being deleted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodFact {
    /// `status.phase`.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub phase: String,
    /// `metadata.deletionTimestamp`, if set.
    #[serde(default)]
    pub deletion_timestamp: Option<String>,
}

/// A PVC of the namespace being deleted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PvcFact {
    /// `status.phase`.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub phase: String,
    /// `metadata.deletionTimestamp`, if set.
    #[serde(default)]
    pub deletion_timestamp: Option<String>,
}

/// A custom resource of the CRD being deleted (storage version, all namespaces).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrFact {
    /// Namespace (empty for cluster-scoped).
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub namespace: String,
    /// Name.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub name: String,
    /// `metadata.deletionTimestamp`, if set.
    #[serde(default)]
    pub deletion_timestamp: Option<String>,
}

/// What the decision needs from the cluster. `None` means the list is unavailable (upstream's
/// list error), which denies a Cascading deletion that needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterFacts {
    /// Pods of the namespace being deleted.
    #[serde(default)]
    pub pods: Option<Vec<PodFact>>,
    /// PVCs of the namespace being deleted.
    #[serde(default)]
    pub pvcs: Option<Vec<PvcFact>>,
    /// Custom resources of the CRD being deleted.
    #[serde(default)]
    pub custom_resources: Option<Vec<CrFact>>,
}

fn forbidden(val: &str) -> String {
    format!("forbidden by ResourcesProtectionDeletion for {DELETION_PROTECTION_KEY}={val}")
}

/// Port of pkg/webhook/util/deletionprotection/deletion_protection.go::ValidateWorkloadDeletion
/// (v1.8.4): `replicas` is the old object's `spec.replicas` (None = nil pointer, passes).
pub fn validate_workload_deletion(
    label: Option<&str>,
    replicas: Option<i64>,
) -> Result<(), String> {
    match label {
        Some(val @ PROTECTION_ALWAYS) => Err(forbidden(val)),
        Some(val @ PROTECTION_CASCADING) => match replicas {
            Some(n) if n > 0 => Err(format!("{} and replicas {n}>0", forbidden(val))),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// Port of pkg/webhook/util/deletionprotection/deletion_protection.go::ValidateNamespaceDeletion
/// (v1.8.4): Cascading denies while an active pod (not Succeeded/Failed, not terminating) or a
/// Bound, non-terminating PVC exists.
pub fn validate_namespace_deletion(
    label: Option<&str>,
    facts: &ClusterFacts,
) -> Result<(), String> {
    match label {
        Some(val @ PROTECTION_ALWAYS) => Err(forbidden(val)),
        Some(val @ PROTECTION_CASCADING) => {
            let pods = facts.pods.as_ref().ok_or_else(|| {
                "forbidden by ResourcesProtectionDeletion for list pods error: pods unavailable"
                    .to_owned()
            })?;
            let active = pods
                .iter()
                .filter(|p| {
                    p.phase != "Succeeded" && p.phase != "Failed" && p.deletion_timestamp.is_none()
                })
                .count();
            if active > 0 {
                return Err(format!("{} and active pods {active}>0", forbidden(val)));
            }
            let pvcs = facts.pvcs.as_ref().ok_or_else(|| {
                "forbidden by ResourcesProtectionDeletion for list pvc error: pvcs unavailable"
                    .to_owned()
            })?;
            let bound = pvcs
                .iter()
                .filter(|p| p.phase == "Bound" && p.deletion_timestamp.is_none())
                .count();
            if bound > 0 {
                return Err(format!(
                    "{} and \"Bound\" status pvc {bound}>0",
                    forbidden(val)
                ));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Port of pkg/webhook/util/deletionprotection/deletion_protection.go::ValidateCRDDeletion
/// (v1.8.4). `storage_gvk` names the listed version in the list-error message.
pub fn validate_crd_deletion(
    gates: &FeatureGates,
    label: Option<&str>,
    storage_gvk: &str,
    facts: &ClusterFacts,
) -> Result<(), String> {
    match label {
        Some(val @ PROTECTION_ALWAYS) => Err(forbidden(val)),
        Some(val @ PROTECTION_CASCADING) => {
            if !gates.enabled("DeletionProtectionForCRDCascadingGate") {
                return Err(
                    "feature-gate DeletionProtectionForCRDCascadingGate is not enabled".to_owned(),
                );
            }
            let crs = facts.custom_resources.as_ref().ok_or_else(|| {
                format!("failed to list CRs of {storage_gvk}: custom resources unavailable")
            })?;
            let active = crs
                .iter()
                .filter(|c| c.deletion_timestamp.is_none())
                .count();
            if active > 0 {
                return Err(format!("{} and active CRs {active}>0", forbidden(val)));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Port of pkg/webhook/util/deletionprotection/deletion_protection.go::ValidateServiceDeletion /
/// ValidateIngressDeletion (v1.8.4): only `Always` is honoured.
pub fn validate_always_only_deletion(label: Option<&str>) -> Result<(), String> {
    match label {
        Some(val @ PROTECTION_ALWAYS) => Err(forbidden(val)),
        _ => Ok(()),
    }
}

/// The GVK the CRD webhook lists, as Go prints it (`group/version, Kind=kind`): the storage
/// version of `spec.versions`, and upstream uses `spec.names.listKind` as the kind. With no
/// storage version the GVK stays empty (`/, Kind=`), as upstream's does.
fn crd_storage_gvk(crd: &Value) -> String {
    let spec = &crd["spec"];
    let storage = spec["versions"]
        .as_array()
        .and_then(|vs| vs.iter().find(|v| v["storage"].as_bool() == Some(true)));
    let Some(version) = storage else {
        return "/, Kind=".to_owned();
    };
    let group = spec["group"].as_str().unwrap_or_default();
    let list_kind = spec["names"]["listKind"].as_str().unwrap_or_default();
    let version = version["name"].as_str().unwrap_or_default();
    format!("{group}/{version}, Kind={list_kind}")
}

/// The DELETE admission decision for any object (the webhooks' DELETE branches, v1.8.4).
///
/// * `operation`/`sub_resource` are the admission request's; only a DELETE of the object itself
///   is checked.
/// * `old_object` is the object being deleted (None, as on Kubernetes < 1.16, passes).
/// * `facts` are the cluster facts a Cascading decision needs.
///
/// Denials are 403 with upstream's exact text; everything else is allowed with code 200.
pub fn validate_deletion(
    gates: &FeatureGates,
    operation: &str,
    sub_resource: &str,
    old_object: Option<&Value>,
    facts: &ClusterFacts,
) -> Verdict {
    if operation != "DELETE" || !sub_resource.is_empty() {
        return Verdict::allow();
    }
    let Some(obj) = old_object.filter(|o| o.as_object().is_some_and(|m| !m.is_empty())) else {
        return Verdict::allow();
    };
    if !gates.enabled("ResourcesDeletionProtection") {
        return Verdict::allow();
    }
    let api_version = obj["apiVersion"].as_str().unwrap_or_default();
    let kind = obj["kind"].as_str().unwrap_or_default();
    match protected_kind(api_version, kind) {
        Some(protected) => validate_deletion_of_kind(gates, protected, obj, facts),
        None => Verdict::allow(),
    }
}

/// [`validate_deletion`] once the kind is known (for callers that take it from the request's
/// resource rather than from the object): `obj` is the object being deleted.
pub fn validate_deletion_of_kind(
    gates: &FeatureGates,
    protected: ProtectedKind,
    obj: &Value,
    facts: &ClusterFacts,
) -> Verdict {
    if !gates.enabled("ResourcesDeletionProtection") {
        return Verdict::allow();
    }
    let meta = &obj["metadata"];
    if !meta["deletionTimestamp"].is_null() {
        return Verdict::allow();
    }
    let label = meta["labels"][DELETION_PROTECTION_KEY].as_str();
    let replicas = obj["spec"]["replicas"].as_i64();
    let result = match protected {
        ProtectedKind::Namespace => validate_namespace_deletion(label, facts),
        ProtectedKind::CustomResourceDefinition => {
            validate_crd_deletion(gates, label, &crd_storage_gvk(obj), facts)
        }
        ProtectedKind::Service | ProtectedKind::Ingress => validate_always_only_deletion(label),
        ProtectedKind::CloneSet
        | ProtectedKind::AdvancedStatefulSet
        | ProtectedKind::UnitedDeployment
        | ProtectedKind::Deployment
        | ProtectedKind::ReplicaSet
        | ProtectedKind::StatefulSet => validate_workload_deletion(label, replicas),
    };
    match result {
        Ok(()) => Verdict::allow(),
        Err(message) => Verdict::deny(403, message),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn on() -> FeatureGates {
        FeatureGates::new().with("ResourcesDeletionProtection", true)
    }

    #[test]
    fn gate_off_allows_everything() {
        let obj = json!({"apiVersion":"v1","kind":"Service","metadata":{"labels":{DELETION_PROTECTION_KEY:"Always"}}});
        let facts = ClusterFacts::default();
        assert!(validate_deletion(&FeatureGates::new(), "DELETE", "", Some(&obj), &facts).allowed);
        assert!(!validate_deletion(&on(), "DELETE", "", Some(&obj), &facts).allowed);
        assert!(validate_deletion(&on(), "DELETE", "status", Some(&obj), &facts).allowed);
        assert!(validate_deletion(&on(), "UPDATE", "", Some(&obj), &facts).allowed);
    }

    #[test]
    fn values_are_case_sensitive_and_lists_must_be_known() {
        assert!(validate_workload_deletion(Some("always"), Some(3)).is_ok());
        let ns = json!({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x","labels":{DELETION_PROTECTION_KEY:"Cascading"}}});
        let v = validate_deletion(&on(), "DELETE", "", Some(&ns), &ClusterFacts::default());
        assert_eq!(v.code, 403);
        assert!(v.message.unwrap_or_default().contains("list pods error"));
        let facts = ClusterFacts {
            pods: Some(vec![]),
            pvcs: Some(vec![PvcFact {
                phase: "Bound".into(),
                deletion_timestamp: None,
            }]),
            custom_resources: None,
        };
        let v = validate_deletion(&on(), "DELETE", "", Some(&ns), &facts);
        assert_eq!(
            v.message.as_deref(),
            Some(
                "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and \"Bound\" status pvc 1>0"
            )
        );
    }

    #[test]
    fn crd_list_error_names_the_storage_version() {
        let crd = json!({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
            "metadata":{"labels":{DELETION_PROTECTION_KEY:"Cascading"}},
            "spec":{"group":"g.io","names":{"kind":"K","listKind":"KList"},"versions":[{"name":"v1","storage":false},{"name":"v2","storage":true}]}});
        let gates = on().with("DeletionProtectionForCRDCascadingGate", true);
        let v = validate_deletion(&gates, "DELETE", "", Some(&crd), &ClusterFacts::default());
        assert_eq!(
            v.message.as_deref(),
            Some("failed to list CRs of g.io/v2, Kind=KList: custom resources unavailable")
        );
    }

    proptest::proptest! {
        #[test]
        fn always_denies_every_protected_kind_only_when_the_gate_is_on(
            kind in proptest::sample::select(vec![
                ("v1", "Namespace"), ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
                ("apps.kruise.io/v1alpha1", "CloneSet"), ("apps.kruise.io/v1beta1", "StatefulSet"),
                ("apps.kruise.io/v1alpha1", "UnitedDeployment"), ("apps/v1", "Deployment"),
                ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet"), ("v1", "Service"),
                ("networking.k8s.io/v1", "Ingress"), ("apps/v1", "DaemonSet"),
                ("apps.kruise.io/v1alpha1", "DaemonSet"),
            ]),
            gate in proptest::bool::ANY,
            replicas in proptest::option::of(0i64..5),
            terminating in proptest::bool::ANY,
        ) {
            let (api_version, kind) = kind;
            let mut obj = json!({"apiVersion": api_version, "kind": kind,
                "metadata": {"name": "x", "labels": {DELETION_PROTECTION_KEY: "Always"}},
                "spec": {"replicas": replicas}});
            if terminating {
                obj["metadata"]["deletionTimestamp"] = json!("2025-01-01T00:00:00Z");
            }
            let gates = FeatureGates::new().with("ResourcesDeletionProtection", gate);
            let v = validate_deletion(&gates, "DELETE", "", Some(&obj), &ClusterFacts::default());
            let protected = protected_kind(api_version, kind).is_some();
            proptest::prop_assert_eq!(v.allowed, !(gate && protected && !terminating));
            if !v.allowed {
                proptest::prop_assert_eq!(v.code, 403);
                proptest::prop_assert_eq!(v.message.as_deref(), Some("forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always"));
            }
        }
    }
}
