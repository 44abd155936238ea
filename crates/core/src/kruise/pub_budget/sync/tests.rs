//! PUB passes over a CloneSet's pods (targetRef), a Deployment's pods (selector, through its
//! ReplicaSet), with the webhook's records expiring.

use std::collections::BTreeMap;

use serde_json::json;

use super::*;

fn now() -> jiff::Timestamp {
    jiff::Timestamp::from_second(1_000_000).unwrap()
}

fn ago(seconds: i64) -> String {
    jiff::Timestamp::from_second(now().as_second() - seconds)
        .unwrap()
        .to_string()
}

fn pub_(spec: serde_json::Value, status: serde_json::Value) -> PodUnavailableBudget {
    serde_json::from_value(json!({
        "metadata": {"name": "web-pub", "namespace": "demo", "generation": 3},
        "spec": spec,
        "status": status,
    }))
    .unwrap()
}

fn pod(name: &str, owner_uid: &str, ready: bool, annotated: bool) -> Pod {
    let annotations = if annotated {
        json!({RELATED_PUB_ANNOTATION: "web-pub"})
    } else {
        json!({})
    };
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "demo", "labels": {"app": "web"},
            "annotations": annotations,
            "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                "name": "web", "uid": owner_uid, "controller": true}]},
        "spec": {"containers": [{"name": "app", "image": "app:1"}]},
        "status": {"phase": "Running", "conditions": [
            {"type": "Ready", "status": if ready { "True" } else { "False" }}]},
    }))
    .unwrap()
}

fn refs(pods: &[Pod]) -> Vec<&Pod> {
    pods.iter().collect()
}

fn workload(api_version: &str, kind: &str, name: &str, uid: &str, replicas: i32) -> Workload {
    Workload {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        name: name.to_owned(),
        uid: uid.to_owned(),
        replicas,
        ..Workload::default()
    }
}

fn counts(s: &PodUnavailableBudgetStatus) -> (i32, i32, i32, i32) {
    (
        s.unavailable_allowed,
        s.current_available,
        s.desired_available,
        s.total_replicas,
    )
}

#[test]
fn a_clone_set_target_with_max_unavailable_one() {
    let p = pub_(
        json!({"targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "maxUnavailable": 1}),
        json!({}),
    );
    let pods = vec![
        pod("web-a", "cs-uid", true, true),
        pod("web-b", "cs-uid", true, false),
        pod("web-c", "cs-uid", true, true),
        pod("other", "someone", true, false),
    ];
    let workloads = [workload(
        "apps.kruise.io/v1alpha1",
        "CloneSet",
        "web",
        "cs-uid",
        3,
    )];
    let out = sync(&p, &refs(&pods), &workloads, now()).unwrap();
    assert_eq!(out.resolved.pods, vec![0, 1, 2]);
    assert_eq!(counts(&out.status.status), (1, 3, 2, 3));
    assert_eq!(out.status.status.observed_generation, 3);
    assert!(out.status.changed);
    assert_eq!(out.annotate, vec!["web-b".to_owned()]);
    assert!(out.events.is_empty());

    // The webhook let web-a go 5 s ago: it is not available until its record expires.
    let p = pub_(
        spec_of(&p),
        json!({"disruptedPods": {"web-a": ago(5)}, "unavailableAllowed": 0, "currentAvailable": 3,
            "desiredAvailable": 2, "totalReplicas": 3, "observedGeneration": 3}),
    );
    let out = sync(&p, &refs(&pods), &workloads, now()).unwrap();
    assert_eq!(counts(&out.status.status), (0, 2, 2, 3));
    assert_eq!(out.status.status.disrupted_pods.len(), 1);
    assert_eq!(out.status.recheck_after_seconds, Some(15));
    assert!(out.pod_events.is_empty());

    // 25 s later the pod is still there: the record goes and the pod gets NotDeleted.
    let p = pub_(
        spec_of(&p),
        json!({"disruptedPods": {"web-a": ago(25)}, "unavailablePods": {"web-c": ago(3)}}),
    );
    let out = sync(&p, &refs(&pods), &workloads, now()).unwrap();
    assert!(out.status.status.disrupted_pods.is_empty());
    assert_eq!(
        out.status.status.unavailable_pods,
        BTreeMap::from([("web-c".to_owned(), ago(3))])
    );
    assert_eq!(counts(&out.status.status), (0, 2, 2, 3));
    assert_eq!(out.pod_events.len(), 1);
    assert_eq!(out.pod_events[0].0, "web-a");
    assert_eq!(
        out.pod_events[0].1.message,
        "Pod was expected by PUB demo/web-pub to be deleted but it wasn't"
    );

    // A deleted (terminating) pod is not counted, and its record goes with it.
    let mut gone = pods.clone();
    gone[0].metadata.deletion_timestamp =
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now()));
    let p = pub_(spec_of(&p), json!({"disruptedPods": {"web-a": ago(1)}}));
    let out = sync(&p, &refs(&gone), &workloads, now()).unwrap();
    assert_eq!(counts(&out.status.status), (0, 2, 2, 3));
    assert!(out.status.status.disrupted_pods.is_empty());
}

fn spec_of(p: &PodUnavailableBudget) -> serde_json::Value {
    serde_json::to_value(&p.spec).unwrap()
}

#[test]
fn a_selector_counts_the_deployment_above_the_replica_set() {
    let p = pub_(
        json!({"selector": {"matchLabels": {"app": "web"}}, "minAvailable": "50%"}),
        json!({}),
    );
    let pods = vec![
        pod("web-a", "rs-uid", true, true),
        pod("web-b", "rs-uid", false, true),
        pod("web-c", "gone-uid", true, true),
    ];
    let mut rs = workload("apps/v1", "ReplicaSet", "web-1", "rs-uid", 2);
    rs.controller_uid = Some("dep-uid".to_owned());
    let workloads = [rs, workload("apps/v1", "Deployment", "web", "dep-uid", 4)];
    let out = sync(&p, &refs(&pods), &workloads, now()).unwrap();
    assert_eq!(out.resolved.pods.len(), 3);
    // Total 4 (the Deployment; the unknown controller adds nothing), 50% → 2 desired.
    assert_eq!(counts(&out.status.status), (0, 2, 2, 4));

    // targetRef to the Deployment: its ReplicaSet's pods.
    let p = pub_(
        json!({"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxUnavailable": "25%"}),
        json!({}),
    );
    let out = sync(&p, &refs(&pods), &workloads, now()).unwrap();
    assert_eq!(out.resolved.pods, vec![0, 1]);
    assert_eq!(counts(&out.status.status), (0, 1, 3, 4));
}

#[test]
fn no_pods_and_a_missing_target() {
    let p = pub_(
        json!({"targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "nope"},
            "maxUnavailable": 1}),
        json!({}),
    );
    let out = sync(&p, &[], &[], now()).unwrap();
    assert_eq!(out.events[0].reason, "NoPods");
    assert_eq!(out.events[0].message, "No matching pods found");
    assert_eq!(counts(&out.status.status), (0, 0, 0, 0));
    // Computed once and written: the same pass again changes nothing.
    let mut written = p.clone();
    written.status = out.status.status.clone();
    assert!(!sync(&written, &[], &[], now()).unwrap().status.changed);
}
