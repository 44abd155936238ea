//! Deletion protection (`policy.kruise.io/delete-protection`): one validating hook per guarded
//! kind, named like upstream's webhook for it, feeding the port the cluster facts a Cascading
//! decision needs (the namespace's pods and PVCs, a CRD's custom resources) from the store.

use std::sync::Arc;

use serde_json::Value;

use super::{Hook, verdict};
use crate::kruise::{
    FeatureGates,
    protection::{
        ClusterFacts, CrFact, PodFact, ProtectedKind, PvcFact, validate_deletion_of_kind,
    },
};
use crate::server::{AdmissionHook, Operation, Store, Verdict};

/// (webhook name, group, plural, kind) of every guarded kind.
const GUARDED: &[(&str, &str, &str, ProtectedKind)] = &[
    (
        "vnamespace.kb.io",
        "",
        "namespaces",
        ProtectedKind::Namespace,
    ),
    (
        "vcustomresourcedefinition.kb.io",
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        ProtectedKind::CustomResourceDefinition,
    ),
    (
        "vcloneset.kb.io",
        "apps.kruise.io",
        "clonesets",
        ProtectedKind::CloneSet,
    ),
    (
        "vstatefulset.kb.io",
        "apps.kruise.io",
        "statefulsets",
        ProtectedKind::AdvancedStatefulSet,
    ),
    (
        "vuniteddeployment.kb.io",
        "apps.kruise.io",
        "uniteddeployments",
        ProtectedKind::UnitedDeployment,
    ),
    (
        "vbuiltindeployment.kb.io",
        "apps",
        "deployments",
        ProtectedKind::Deployment,
    ),
    (
        "vbuiltinreplicaset.kb.io",
        "apps",
        "replicasets",
        ProtectedKind::ReplicaSet,
    ),
    (
        "vbuiltinstatefulset.kb.io",
        "apps",
        "statefulsets",
        ProtectedKind::StatefulSet,
    ),
    ("vservice.kb.io", "", "services", ProtectedKind::Service),
    (
        "vingress.kb.io",
        "networking.k8s.io",
        "ingresses",
        ProtectedKind::Ingress,
    ),
];

pub(super) fn hooks(store: &Arc<Store>, gates: &FeatureGates) -> Vec<Arc<dyn AdmissionHook>> {
    GUARDED
        .iter()
        .map(|&(name, group, resource, kind)| {
            let store = store.clone();
            let gates = gates.clone();
            Hook::shared(name, group, resource, move |req| {
                if req.operation != Operation::Delete || !req.subresource.is_empty() {
                    return Verdict::Allow;
                }
                let Some(old) = req.old_object.as_ref() else {
                    return Verdict::Allow;
                };
                let facts = facts(&store, kind, old);
                let v = validate_deletion_of_kind(&gates, kind, old, &facts);
                verdict(v.allowed, v.code, v.message.as_deref())
            })
        })
        .collect()
}

/// The facts the port reads for `kind`; only namespaces and CRDs need any.
fn facts(store: &Store, kind: ProtectedKind, old: &Value) -> ClusterFacts {
    let deletion = |v: &Value| {
        v["metadata"]["deletionTimestamp"]
            .as_str()
            .map(str::to_string)
    };
    match kind {
        ProtectedKind::Namespace => {
            let ns = old["metadata"]["name"].as_str().unwrap_or_default();
            // Pods and PVCs are read alike: their phase and deletion timestamp.
            let phases = |kind: &str| -> Vec<(String, Option<String>)> {
                store
                    .list_values("v1", kind, Some(ns))
                    .iter()
                    .map(|p| {
                        let phase = p["status"]["phase"].as_str().unwrap_or_default();
                        (phase.to_string(), deletion(p))
                    })
                    .collect()
            };
            let pods = phases("Pod")
                .into_iter()
                .map(|(phase, deletion_timestamp)| PodFact {
                    phase,
                    deletion_timestamp,
                })
                .collect();
            let pvcs = phases("PersistentVolumeClaim")
                .into_iter()
                .map(|(phase, deletion_timestamp)| PvcFact {
                    phase,
                    deletion_timestamp,
                })
                .collect();
            ClusterFacts {
                pods: Some(pods),
                pvcs: Some(pvcs),
                custom_resources: None,
            }
        }
        ProtectedKind::CustomResourceDefinition => {
            let spec = &old["spec"];
            let group = spec["group"].as_str().unwrap_or_default();
            let kind = spec["names"]["kind"].as_str().unwrap_or_default();
            let version = spec["versions"]
                .as_array()
                .and_then(|vs| vs.iter().find(|v| v["storage"].as_bool() == Some(true)))
                .and_then(|v| v["name"].as_str())
                .unwrap_or_default();
            let crs = store
                .list_values(&format!("{group}/{version}"), kind, None)
                .iter()
                .map(|c| CrFact {
                    namespace: c["metadata"]["namespace"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    name: c["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    deletion_timestamp: deletion(c),
                })
                .collect();
            ClusterFacts {
                pods: None,
                pvcs: None,
                custom_resources: Some(crs),
            }
        }
        _ => ClusterFacts::default(),
    }
}
