//! What kube-controller-manager puts in every namespace the moment it exists: the `default`
//! ServiceAccount (the service account controller) and the `kube-root-ca.crt` ConfigMap holding
//! the cluster's CA (the root CA publisher). Done here as the namespace is created, so a pod
//! created right after finds its service account, as it does on a real cluster within
//! milliseconds.

use serde_json::json;

use super::store::Store;

/// Create what a new namespace gets, where it is missing.
pub fn populate(store: &Store, namespace: &str, ca_pem: &str) {
    if store
        .get_value("v1", "ServiceAccount", namespace, "default")
        .is_none()
    {
        let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount",
                        "metadata": {"name": "default", "namespace": namespace}});
        if let Err(e) = store.create(sa) {
            tracing::debug!("namespace {namespace}: no default ServiceAccount: {e}");
        }
    }
    if store
        .get_value("v1", "ConfigMap", namespace, "kube-root-ca.crt")
        .is_none()
    {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "kube-root-ca.crt", "namespace": namespace,
                                     "annotations": {"kubernetes.io/description":
                                         "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."}},
                        "data": {"ca.crt": ca_pem}});
        if let Err(e) = store.create(cm) {
            tracing::debug!("namespace {namespace}: no kube-root-ca.crt: {e}");
        }
    }
}

/// Every existing namespace, as the controllers find them when they start.
pub fn populate_all(store: &Store, ca_pem: &str) {
    for ns in store.list_values("v1", "Namespace", None) {
        if let Some(name) = ns["metadata"]["name"].as_str() {
            populate(store, name, ca_pem);
        }
    }
}
