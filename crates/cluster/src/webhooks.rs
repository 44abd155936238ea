//! Kruise's admission webhooks installed on the embedded API server: thin adapters from the
//! server's [`AdmissionRequest`] to the sans-IO ports in `crate::kruise` (deletion protection,
//! PodUnavailableBudget, SidecarSet, ContainerRecreateRequest, PodProbeMarker, Advanced
//! DaemonSet validation). Each hook is
//! named like the upstream webhook (`vcloneset.kb.io`, `vpodeviction.kb.io`, ...) so a denial
//! reads `admission webhook "NAME" denied the request: MESSAGE` as with a real Kruise install.

use std::sync::Arc;

use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

use crate::kruise::FeatureGates;
use crate::server::{AdmissionHook, AdmissionRequest, EmbeddedCluster, Operation, Store, Verdict};

mod cloneset;
mod daemonset;
mod objects;
mod protection;
mod pub_budget;
mod rollout_validate;
mod rollout_workload;
mod workloadspread;

/// Register every Kruise webhook on `cluster`'s admission chains, deciding with `gates`.
pub fn install_kruise_webhooks(cluster: &EmbeddedCluster, gates: FeatureGates) {
    let admission = cluster.admission();
    let store = cluster.store();
    install_conversion(&store, &cluster.ca_pem());
    for hook in protection::hooks(&store, &gates) {
        admission.add_validating(hook);
    }
    for hook in pub_budget::hooks(&store, &gates) {
        admission.add_validating(hook);
    }
    admission.add_mutating(pub_budget::annotating(&store, &gates));
    for hook in objects::mutating(&store, &gates) {
        admission.add_mutating(hook);
    }
    admission.add_mutating(workloadspread::hook(&store));
    for hook in rollout_workload::hooks(&store) {
        admission.add_mutating(hook);
    }
    for hook in objects::validating(&store, &gates) {
        admission.add_validating(hook);
    }
    admission.add_validating(cloneset::hook(&store, store.kruise_version()));
    admission.add_validating(daemonset::hook(store.kruise_version()));
    admission.add_validating(rollout_validate::hook(&store));
}

/// What kruise-manager does at start-up (`pkg/webhook/util/crd`): every Kruise CRD served at
/// more than one version converts through the manager's webhook (`/convert` on
/// `kruise-system/kruise-webhook-service`). The embedded server runs that conversion in-process
/// for CRDs whose strategy is `Webhook`.
fn install_conversion(store: &Store, ca_pem: &str) {
    use base64::Engine as _;
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    for mut crd in store.list_values("apiextensions.k8s.io/v1", "CustomResourceDefinition", None) {
        let group = crd["spec"]["group"].as_str().unwrap_or_default();
        let versions = crd["spec"]["versions"].as_array().map_or(0, Vec::len);
        // Kruise Rollout's manager does the same for its CRDs (its own webhook service).
        let (namespace, service) = match group {
            "apps.kruise.io" | "policy.kruise.io" => ("kruise-system", "kruise-webhook-service"),
            "rollouts.kruise.io" => ("kruise-rollout", "kruise-rollout-webhook-service"),
            _ => continue,
        };
        if versions < 2 {
            continue;
        }
        crd["spec"]["conversion"] = serde_json::json!({
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": {
                    "service": {
                        "namespace": namespace,
                        "name": service,
                        "path": "/convert",
                        "port": 443,
                    },
                    "caBundle": ca_bundle,
                },
                "conversionReviewVersions": ["v1", "v1beta1"],
            },
        });
        if let Err(err) = store.update(crd) {
            tracing::warn!(?err, "cannot set the conversion webhook of a Kruise CRD");
        }
    }
}

type Decide = dyn Fn(&AdmissionRequest) -> Verdict + Send + Sync;

/// A named hook for one resource (`group`, plural `resource`), deciding with a closure.
struct Hook {
    name: String,
    group: &'static str,
    resource: &'static str,
    decide: Box<Decide>,
}

impl Hook {
    /// The hook, ready to register.
    fn shared(
        name: impl Into<String>,
        group: &'static str,
        resource: &'static str,
        decide: impl Fn(&AdmissionRequest) -> Verdict + Send + Sync + 'static,
    ) -> Arc<dyn AdmissionHook> {
        Arc::new(Hook {
            name: name.into(),
            group,
            resource,
            decide: Box::new(decide),
        })
    }
}

impl AdmissionHook for Hook {
    fn name(&self) -> &str {
        &self.name
    }

    fn admit(&self, req: &AdmissionRequest) -> Verdict {
        if req.group != self.group || req.resource != self.resource {
            return Verdict::Allow;
        }
        (self.decide)(req)
    }
}

/// The request's operation as an admission review spells it.
fn op_str(op: Operation) -> &'static str {
    match op {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
    }
}

/// A port's answer (allowed + code + message) as the server's verdict.
fn verdict(allowed: bool, code: u16, message: Option<&str>) -> Verdict {
    if allowed {
        Verdict::Allow
    } else {
        Verdict::Deny {
            code,
            message: message.unwrap_or_default().to_string(),
        }
    }
}

/// Decode a request object into a port type; a malformed object is a 400 as upstream's decoder
/// answers it.
fn decode<T: DeserializeOwned>(v: Option<&Value>) -> Result<Option<T>, Verdict> {
    match v.filter(|v| !v.is_null()) {
        None => Ok(None),
        Some(v) => serde_json::from_value(v.clone())
            .map(Some)
            .map_err(|e| Verdict::Deny {
                code: 400,
                message: e.to_string(),
            }),
    }
}

/// A mutating port's result as the server's verdict: `patch` (from the port, computed against the
/// typed `before`) is applied to the typed object, and the result merged over the raw request
/// object so fields the typed model does not know survive, as the API server applies a
/// mutating webhook's patch.
fn mutated<T: Serialize>(object: Option<&Value>, before: &T, patch: &json_patch::Patch) -> Verdict {
    let Some(raw) = object else {
        return Verdict::Allow;
    };
    if patch.0.is_empty() {
        return Verdict::Allow;
    }
    let patched = serde_json::to_value(before)
        .map_err(|e| e.to_string())
        .and_then(|mut v| {
            json_patch::patch(&mut v, patch)
                .map(|()| v)
                .map_err(|e| e.to_string())
        });
    match patched {
        Ok(after) => {
            let mut merged = raw.clone();
            json_patch::merge(&mut merged, &after);
            if &merged == raw {
                Verdict::Allow
            } else {
                Verdict::Mutate(merged)
            }
        }
        Err(e) => Verdict::Deny {
            code: 500,
            message: format!("cannot apply the webhook's patch: {e}"),
        },
    }
}

/// Every object of a kind in `ns` (all namespaces when None), decoded; undecodable ones skipped.
fn list_typed<T: DeserializeOwned>(
    store: &Store,
    api_version: &str,
    kind: &str,
    ns: Option<&str>,
) -> Vec<T> {
    store
        .list_values(api_version, kind, ns)
        .into_iter()
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect()
}

/// Namespace name → labels, for SidecarSet namespace selectors. Read from the stored heads
/// (metadata already parsed), not by parsing every Namespace: the pod-create webhook asks for
/// this on every pod, and at 100,000 pods over a hundred namespaces the parse was a fifth of the
/// server's time.
fn namespace_labels(store: &Store) -> crate::kruise::sidecarset::matching::NamespaceLabels {
    let Some(res) = store.registry().by_kind("v1", "Namespace") else {
        return Default::default();
    };
    store
        .list(&res, None, &|_| true, None, None)
        .items
        .iter()
        .filter_map(|ns| {
            let meta = &ns.head["metadata"];
            let name = meta["name"].as_str()?.to_string();
            let labels = meta["labels"]
                .as_object()
                .map(|l| {
                    l.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                        .collect()
                })
                .unwrap_or_default();
            Some((name, labels))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kruise::KruiseVersion;

    #[test]
    fn namespace_labels_are_read_from_the_stored_namespaces_and_follow_their_updates() {
        let store = Store::new(KruiseVersion::V1_9).unwrap();
        for (name, labels) in [("team-a", json!({"env": "prod"})), ("team-b", json!({}))] {
            store
                .create(json!({"apiVersion": "v1", "kind": "Namespace",
                               "metadata": {"name": name, "labels": labels}}))
                .unwrap();
        }
        let got = namespace_labels(&store);
        assert_eq!(got["team-a"].get("env").map(String::as_str), Some("prod"));
        assert!(got["team-b"].is_empty());

        let res = store.registry().by_kind("v1", "Namespace").unwrap();
        let mut ns = store.get(&res, "", "team-b").unwrap().value();
        ns["metadata"]["labels"] = json!({"sidecar": "on"});
        store.update(ns).unwrap();
        let got = namespace_labels(&store);
        assert_eq!(got["team-b"].get("sidecar").map(String::as_str), Some("on"));
    }
}
