use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::server::{
    builtin::{builtin_resources, kruise_crds},
    resources::Registry,
};

fn registry() -> Registry {
    Registry::new(
        builtin_resources(),
        &kruise_crds(crate::kruise::KruiseVersion::V1_9).unwrap(),
    )
}

fn res(reg: &Registry, group: &str, version: &str, plural: &str) -> Arc<ResourceInfo> {
    reg.lookup(group, version, plural).unwrap()
}

fn cloneset(replicas: i64) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}})
}

/// The stored form: what the store adds on create.
fn stored(mut v: Value) -> Value {
    v["metadata"]["uid"] = json!("u-1");
    v["metadata"]["creationTimestamp"] = json!("2024-01-01T00:00:00Z");
    v["metadata"]["generation"] = json!(1);
    v
}

/// The entries without their times.
fn entries(obj: &Value) -> Vec<Value> {
    obj["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e.as_object_mut().unwrap().remove("time");
            e
        })
        .collect()
}

const UPDATE_SET: &str = r#"{"f:spec":{".":{},"f:replicas":{},"f:selector":{},"f:template":{".":{},"f:metadata":{".":{},"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:containers":{}}}}}"#;
const APPLY_SET: &str = r#"{"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{".":{},"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:containers":{}}}}}"#;

fn set(s: &str) -> Value {
    serde_json::from_str(s).unwrap()
}

#[test]
fn create_and_merge_patch_record_update_entries() {
    let reg = registry();
    let cs = res(&reg, "apps.kruise.io", "v1alpha1", "clonesets");
    let mut created = cloneset(1);
    update(&cs, None, None, &mut created, "");
    assert_eq!(
        entries(&created),
        vec![json!({"manager": "unknown", "operation": "Update",
            "apiVersion": "apps.kruise.io/v1alpha1", "fieldsType": "FieldsV1",
            "fieldsV1": set(UPDATE_SET)})]
    );
    let live = stored(created);
    let mut patched = live.clone();
    patched["metadata"]["labels"] = json!({"u": "1"});
    update(&cs, None, Some(&live), &mut patched, "corpus-merge");
    let e = entries(&patched);
    assert_eq!(e.len(), 2);
    assert_eq!(e[0]["manager"], "corpus-merge");
    assert_eq!(
        e[0]["fieldsV1"],
        json!({"f:metadata": {"f:labels": {".": {}, "f:u": {}}}})
    );
    // Nothing changed: nothing recorded, the time stays.
    let mut same = patched.clone();
    update(&cs, None, Some(&patched), &mut same, "other");
    assert_eq!(same, patched);
}

#[test]
fn updates_do_not_start_tracking_an_untracked_object() {
    let reg = registry();
    let cm = res(&reg, "", "v1", "configmaps");
    let live = stored(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "a", "namespace": "ns"}, "data": {"a": "1"}}));
    let mut new = live.clone();
    new["data"]["a"] = json!("2");
    update(&cm, None, Some(&live), &mut new, "kubectl-edit");
    assert_eq!(new["metadata"]["managedFields"], json!([]));
}

#[test]
fn apply_creates_conflicts_and_forces() {
    let reg = registry();
    let cs = res(&reg, "apps.kruise.io", "v1alpha1", "clonesets");
    let created = apply(&cs, None, None, &cloneset(1), "corpus-one", false).unwrap();
    assert_eq!(
        entries(&created),
        vec![json!({"manager": "corpus-one", "operation": "Apply",
            "apiVersion": "apps.kruise.io/v1alpha1", "fieldsType": "FieldsV1",
            "fieldsV1": set(APPLY_SET)})]
    );
    let live = stored(created);
    let err = apply(&cs, None, Some(&live), &cloneset(5), "corpus-two", false).unwrap_err();
    assert_eq!(err.code, 409);
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"corpus-one\": .spec.replicas"
    );
    assert_eq!(err.details.unwrap()["causes"][0]["field"], ".spec.replicas");
    let forced = apply(&cs, None, Some(&live), &cloneset(5), "corpus-two", true).unwrap();
    assert_eq!(forced["spec"]["replicas"], 5);
    let e = entries(&forced);
    assert_eq!(e[0]["manager"], "corpus-one");
    assert!(e[0]["fieldsV1"]["f:spec"].get("f:replicas").is_none());
    assert_eq!(e[1]["manager"], "corpus-two");
    assert_eq!(e[1]["fieldsV1"], set(APPLY_SET));
    // The same value applied by another manager is shared, not a conflict.
    let shared = apply(&cs, None, Some(&live), &cloneset(1), "corpus-two", false).unwrap();
    assert_eq!(entries(&shared).len(), 2);
}

#[test]
fn apply_prunes_what_its_manager_dropped() {
    let reg = registry();
    let cs = res(&reg, "apps.kruise.io", "v1alpha1", "clonesets");
    let mut with_label = cloneset(1);
    with_label["metadata"]["labels"] = json!({"a": "1", "b": "2"});
    let live = stored(apply(&cs, None, None, &with_label, "m", false).unwrap());
    let mut other = live.clone();
    other["metadata"]["labels"]["c"] = json!("3");
    update(&cs, None, Some(&live), &mut other, "editor");
    let mut fewer = cloneset(1);
    fewer["metadata"]["labels"] = json!({"a": "1"});
    let out = apply(&cs, None, Some(&other), &fewer, "m", false).unwrap();
    assert_eq!(out["metadata"]["labels"], json!({"a": "1", "c": "3"}));
    // An unchanged re-apply writes nothing new.
    let again = apply(&cs, None, Some(&out), &fewer, "m", false).unwrap();
    assert_eq!(again, out);
}

#[test]
fn apply_refuses_what_upstream_refuses() {
    let reg = registry();
    let cm = res(&reg, "", "v1", "configmaps");
    let body = json!({"apiVersion": "v1", "metadata": {"name": "a"}, "data": {"a": "1"}});
    let err = apply(&cm, None, None, &body, "m", false).unwrap_err();
    assert_eq!(
        (err.code, err.message.as_str()),
        (400, "invalid object type: /v1, Kind=")
    );
    let mut bogus = body.clone();
    bogus["kind"] = json!("ConfigMap");
    bogus["bogus"] = json!(1);
    let err = apply(&cm, None, None, &bogus, "m", false).unwrap_err();
    assert_eq!(err.code, 500);
    assert_eq!(
        err.message,
        "failed to create typed patch object (/a; /v1, Kind=ConfigMap): .bogus: field not declared in schema"
    );
    // A POST by "unknown" owns data.a; another value is a conflict with it.
    let mut created = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "a", "namespace": "ns"}, "data": {"a": "1"}});
    update(&cm, None, None, &mut created, "");
    let live = stored(created);
    let mut changed = bogus.clone();
    changed.as_object_mut().unwrap().remove("bogus");
    changed["data"]["a"] = json!("changed");
    let err = apply(&cm, None, Some(&live), &changed, "corpus-two", false).unwrap_err();
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"unknown\" using v1: .data.a"
    );
}

#[test]
fn status_apply_owns_only_status() {
    let reg = registry();
    let cs = res(&reg, "apps.kruise.io", "v1alpha1", "clonesets");
    let mut created = cloneset(1);
    update(&cs, None, None, &mut created, "");
    let live = stored(created);
    let body = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "web"}, "status": {"replicas": 1, "observedGeneration": 1}});
    let out = apply(&cs, Some("status"), Some(&live), &body, "st", true).unwrap();
    let e = entries(&out);
    assert_eq!(e[0]["subresource"], "status");
    assert_eq!(
        e[0]["fieldsV1"],
        json!({"f:status": {"f:observedGeneration": {}, "f:replicas": {}}})
    );
    assert_eq!(e[1]["manager"], "unknown");
}

#[test]
fn pods_key_containers_by_name() {
    let reg = registry();
    let pods = res(&reg, "", "v1", "pods");
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a", "image": "x",
            "ports": [{"containerPort": 80, "protocol": "TCP"}]}]}});
    update(&pods, None, None, &mut pod, "kubectl-create");
    let e = entries(&pod);
    let c = &e[0]["fieldsV1"]["f:spec"]["f:containers"][r#"k:{"name":"a"}"#];
    assert!(c["f:ports"][r#"k:{"containerPort":80,"protocol":"TCP"}"#].is_object());
    assert!(c["f:image"].is_object());
}

#[test]
fn a_builtin_create_is_compared_with_the_zero_struct() {
    let reg = registry();
    let deps = res(&reg, "apps", "v1", "deployments");
    let mut dep = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "strategy": {},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27", "resources": {}}]}}}});
    update(&deps, None, None, &mut dep, "kubectl-create");
    // What a real server records for `kubectl create deployment` before defaulting: the value
    // structs (spec, template, strategy) exist in the zero Deployment, so only what differs is
    // owned (an empty strategy is the zero one), and they carry no "." of their own.
    assert_eq!(
        entries(&dep)[0]["fieldsV1"],
        json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {"f:replicas": {}, "f:selector": {},
                "f:template": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                    "f:spec": {"f:containers": {r#"k:{"name":"nginx"}"#: {".": {},
                        "f:image": {}, "f:name": {}, "f:resources": {}}}}}}})
    );
}
