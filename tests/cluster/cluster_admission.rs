//! The embedded API server's extension points and access rules: CRDs created at run time are
//! served and validated, admission hooks mutate and deny, the in-process Store API seeds and
//! reads objects, the token is required and only loopback addresses are accepted.

use crate::common;

use std::sync::Arc;

use common::*;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kruise_tui::cluster::server::{
    AdmissionHook, AdmissionRequest, EmbeddedCluster, Operation, ServerOptions, Verdict,
};
use kube::{
    Api, Error,
    api::{DeleteParams, DynamicObject, EvictParams, ListParams, PostParams},
};
use serde_json::json;

fn code(e: Error) -> (u16, String) {
    match e {
        Error::Api(s) => (s.code, s.reason.clone()),
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn new_crds_are_served() {
    let c = start().await;
    let client = c.client().await.unwrap();
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}}}]}
    });
    let crds: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &kube::api::ApiResource::from_gvk_with_plural(
            &kube::api::GroupVersionKind::gvk(
                "apiextensions.k8s.io",
                "v1",
                "CustomResourceDefinition",
            ),
            "customresourcedefinitions",
        ),
    );
    crds.create(
        &PostParams::default(),
        &serde_json::from_value(crd).unwrap(),
    )
    .await
    .unwrap();
    let ar = kube::api::ApiResource::from_gvk_with_plural(
        &kube::api::GroupVersionKind::gvk("example.com", "v1", "Widget"),
        "widgets",
    );
    let widgets: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);
    let w = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 3}});
    widgets
        .create(&PostParams::default(), &serde_json::from_value(w).unwrap())
        .await
        .unwrap();
    let mut bad = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "b"}, "spec": {"size": "big"}});
    let err = widgets
        .create(
            &PostParams::default(),
            &serde_json::from_value(bad.take()).unwrap(),
        )
        .await
        .unwrap_err();
    assert_eq!(code(err).0, 422);
    let discovery = kube::Discovery::new(client.clone()).run().await.unwrap();
    assert!(discovery.groups().any(|g| g.name() == "example.com"));
    assert!(discovery.groups().any(|g| g.name() == "apps.kruise.io"));

    // Deleting the CRD removes its custom resources and its endpoints.
    crds.delete("widgets.example.com", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(
        code(widgets.list(&ListParams::default()).await.unwrap_err()).0,
        404
    );
    eventually("custom resources purged", || {
        let store = c.store();
        async move {
            store
                .in_namespace("default")
                .iter()
                .all(|(_, o)| o.head["kind"] != "Widget")
        }
    })
    .await;
}

struct DenyProtected;
impl AdmissionHook for DenyProtected {
    fn name(&self) -> &str {
        "protect.test"
    }
    fn admit(&self, req: &AdmissionRequest) -> Verdict {
        let protected = req
            .old_object
            .as_ref()
            .is_some_and(|o| o["metadata"]["labels"]["protected"] == "true");
        if req.operation == Operation::Delete && protected {
            return Verdict::Deny {
                code: 403,
                message: "this object is protected".into(),
            };
        }
        Verdict::Allow
    }
}

struct AddLabel;
impl AdmissionHook for AddLabel {
    fn name(&self) -> &str {
        "label.test"
    }
    fn admit(&self, req: &AdmissionRequest) -> Verdict {
        match (&req.object, req.operation) {
            (Some(o), Operation::Create) if req.kind == "Pod" => {
                let mut o = o.clone();
                o["metadata"]["labels"]["injected"] = json!("yes");
                Verdict::Mutate(o)
            }
            _ => Verdict::Allow,
        }
    }
}

struct DenyEviction;
impl AdmissionHook for DenyEviction {
    fn name(&self) -> &str {
        "pub.test"
    }
    fn admit(&self, req: &AdmissionRequest) -> Verdict {
        if req.subresource == "eviction" {
            Verdict::Deny {
                code: 422,
                message: "no budget left".into(),
            }
        } else {
            Verdict::Allow
        }
    }
}

#[tokio::test]
async fn admission_chains_mutate_and_validate() {
    let c = start().await;
    c.admission().add_mutating(Arc::new(AddLabel));
    c.admission().add_validating(Arc::new(DenyProtected));
    c.admission().add_validating(Arc::new(DenyEviction));
    let client = c.client().await.unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client);
    let p: Pod = serde_json::from_value(pod_json("p", json!({"protected": "true"}))).unwrap();
    let created = pods.create(&PostParams::default(), &p).await.unwrap();
    assert_eq!(created.metadata.labels.unwrap()["injected"], "yes");
    let Error::Api(s) = pods
        .delete("p", &DeleteParams::default())
        .await
        .unwrap_err()
    else {
        panic!()
    };
    assert_eq!(s.code, 403);
    assert_eq!(
        s.message,
        "admission webhook \"protect.test\" denied the request: this object is protected"
    );
    let Error::Api(s) = pods.evict("p", &EvictParams::default()).await.unwrap_err() else {
        panic!()
    };
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    assert!(pods.get_opt("p").await.unwrap().is_some());
}

#[tokio::test]
async fn auth_and_loopback_rules() {
    let err = EmbeddedCluster::start(ServerOptions {
        listen: "0.0.0.0:0".parse().unwrap(),
        token: None,
        ..ServerOptions::default()
    })
    .await
    .err()
    .expect("non-loopback bind refused");
    assert!(err.to_string().contains("loopback"), "{err}");

    let c = EmbeddedCluster::start(ServerOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        token: Some("s3cret".into()),
        ..ServerOptions::default()
    })
    .await
    .unwrap();
    assert_eq!(c.token(), "s3cret");
    let mut cfg = kube::Config::new(c.url().parse().unwrap());
    cfg.auth_info.token = Some("wrong".to_string().into());
    let bad = kube::Client::try_from(cfg).unwrap();
    let cms: Api<ConfigMap> = Api::default_namespaced(bad);
    assert_eq!(
        code(cms.list(&ListParams::default()).await.unwrap_err()).0,
        401
    );
    // No token at all is system:anonymous (anonymous auth is on by default), which RBAC
    // refuses: 403, as on a real server, not 401.
    let cfg = kube::Config::new(c.url().parse().unwrap());
    let anonymous = kube::Client::try_from(cfg).unwrap();
    let cms: Api<ConfigMap> = Api::default_namespaced(anonymous);
    assert_eq!(
        code(cms.list(&ListParams::default()).await.unwrap_err()).0,
        403
    );

    // The written kubeconfig works for kube-rs too (TLS with the embedded CA).
    let kc = kube::config::Kubeconfig::from_yaml(&c.kubeconfig_yaml("t", "default")).unwrap();
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let via_tls = kube::Client::try_from(cfg).unwrap();
    let cms: Api<ConfigMap> = Api::default_namespaced(via_tls);
    let listed = cms.list(&ListParams::default()).await;
    assert!(listed.is_ok(), "{listed:?}");
}

#[tokio::test]
async fn in_process_store_api() {
    let c = start().await;
    let store = c.store();
    let created = store.create(pod_json("p", json!({"app": "web"}))).unwrap();
    assert!(created["metadata"]["uid"].is_string());
    assert_eq!(
        store.create(pod_json("p", json!({}))).unwrap_err().code,
        409
    );
    let mut changed = created.clone();
    changed["spec"]["containers"][0]["image"] = json!("nginx:2");
    let updated = store.update(changed).unwrap();
    // A v1.32 Pod keeps no metadata.generation (custom resources and workloads do).
    assert!(updated["metadata"]["generation"].is_null());
    assert_ne!(
        updated["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    let mut stale = created;
    stale["metadata"]["labels"] = json!({"x": "y"});
    assert_eq!(store.update(stale).unwrap_err().reason, "Conflict");
    assert_eq!(
        store.get_value("v1", "Pod", "default", "p").unwrap()["spec"]["containers"][0]["image"],
        "nginx:2"
    );
    assert_eq!(store.list_values("v1", "Pod", None).len(), 1);
    assert_eq!(
        store
            .list_values("apps.kruise.io/v1alpha1", "CloneSet", Some("default"))
            .len(),
        0
    );
    store.delete_value("v1", "Pod", "default", "p").unwrap();
    assert!(store.get_value("v1", "Pod", "default", "p").is_none());
    assert_eq!(
        store
            .delete_value("v1", "Pod", "default", "p")
            .unwrap_err()
            .code,
        404
    );
    assert_eq!(
        store
            .create(json!({"apiVersion": "x/v1", "kind": "Nope"}))
            .unwrap_err()
            .code,
        400
    );
}
