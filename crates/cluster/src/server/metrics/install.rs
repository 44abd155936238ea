//! What installing metrics-server leaves in a cluster's API (its `manifests/base`): the
//! APIService that registers the group with the aggregator, and the ClusterRole that lets
//! view, edit and admin read it.

use serde_json::{Value, json};

use crate::server::{meta, store::Store};

fn objects(now: &str) -> Vec<Value> {
    vec![
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {
                "name": "system:aggregated-metrics-reader",
                "labels": {
                    "k8s-app": "metrics-server",
                    "rbac.authorization.k8s.io/aggregate-to-view": "true",
                    "rbac.authorization.k8s.io/aggregate-to-edit": "true",
                    "rbac.authorization.k8s.io/aggregate-to-admin": "true",
                },
            },
            "rules": [{"apiGroups": ["metrics.k8s.io"], "resources": ["pods", "nodes"],
                       "verbs": ["get", "list", "watch"]}],
        }),
        json!({
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": "v1beta1.metrics.k8s.io", "labels": {"k8s-app": "metrics-server"}},
            "spec": {
                "service": {"name": "metrics-server", "namespace": "kube-system", "port": 443},
                "group": "metrics.k8s.io",
                "version": "v1beta1",
                "insecureSkipTLSVerify": true,
                "groupPriorityMinimum": 100,
                "versionPriority": 100,
            },
            "status": {"conditions": [{
                "type": "Available",
                "status": "True",
                "lastTransitionTime": now,
                "reason": "Passed",
                "message": "all checks passed",
            }]},
        }),
    ]
}

/// Stores the APIService and the ClusterRole (objects already there are left as they are).
pub fn install(store: &Store) -> anyhow::Result<()> {
    for obj in objects(&meta::now()) {
        match store.create(obj) {
            Ok(_) => {}
            Err(e) if e.code == 409 => {}
            Err(e) => anyhow::bail!("cannot store metrics-server's objects: {e}"),
        }
    }
    Ok(())
}
