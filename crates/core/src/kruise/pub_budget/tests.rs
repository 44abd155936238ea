//! Tests of the PUB port: pod predicates, status pruning, admission bookkeeping and properties.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::kruise::{FeatureGates, KruiseVersion};

fn pod(name: &str, ready: bool, extra_annotations: serde_json::Value) -> Pod {
    let mut annotations = json!({ RELATED_PUB_ANNOTATION: "pub" });
    if let (Some(a), Some(extra)) = (annotations.as_object_mut(), extra_annotations.as_object()) {
        a.extend(extra.clone());
    }
    serde_json::from_value(json!({
        "metadata": { "name": name, "namespace": "ns", "annotations": annotations },
        "spec": { "containers": [{ "name": "main", "image": "nginx:v2" }] },
        "status": {
            "phase": "Running",
            "conditions": [{ "type": "Ready", "status": if ready { "True" } else { "False" } }],
            "containerStatuses": [{ "name": "main", "image": "nginx:v2", "imageID": "nginx@sha256:bbb",
                "ready": ready, "restartCount": 0 }]
        }
    }))
    .unwrap_or_default()
}

fn budget(allowed: i32, desired: i32, disrupted: &[&str]) -> PodUnavailableBudget {
    let mut p = PodUnavailableBudget::default();
    p.metadata.name = Some("pub".into());
    p.metadata.namespace = Some("ns".into());
    p.status.unavailable_allowed = allowed;
    p.status.desired_available = desired;
    for d in disrupted {
        p.status.disrupted_pods.insert((*d).to_owned(), "t0".into());
    }
    p
}

#[test]
fn in_place_state_decides_consistency() {
    let done = pod(
        "a",
        true,
        json!({ "apps.kruise.io/inplace-update-state":
        r#"{"revision":"r2","lastContainerStatuses":{"main":{"imageID":"nginx@sha256:aaa"}}}"# }),
    );
    assert!(is_pod_state_consistent(&done));
    let stuck = pod(
        "a",
        true,
        json!({ "apps.kruise.io/inplace-update-state":
        r#"{"revision":"r2","lastContainerStatuses":{"main":{"imageID":"nginx@sha256:bbb"}}}"# }),
    );
    // Same imageID as before; spec.image == status.image, so it is still complete.
    assert!(is_pod_state_consistent(&stuck));
    let mut stuck = stuck;
    if let Some(spec) = stuck.spec.as_mut() {
        spec.containers[0].image = Some("nginx:v3".into());
    }
    assert!(!is_pod_state_consistent(&stuck));
    let batches = pod(
        "a",
        true,
        json!({ "apps.kruise.io/inplace-update-state": r#"{"nextContainerImages":{"main":"x"}}"# }),
    );
    assert!(!is_pod_state_consistent(&batches));
    let grace = pod(
        "a",
        true,
        json!({ "apps.kruise.io/inplace-update-grace": "{}" }),
    );
    assert!(!is_pod_state_consistent(&grace));
    let garbage = pod(
        "a",
        true,
        json!({ "apps.kruise.io/inplace-update-state": "not json" }),
    );
    assert!(!is_pod_state_consistent(&garbage));
}

#[test]
fn digest_images_compare_repo_and_digest() {
    let mut p = pod("a", true, json!({}));
    if let Some(spec) = p.spec.as_mut() {
        spec.containers[0].image = Some("nginx@sha256:bbb".into());
    }
    if let Some(cs) = p
        .status
        .as_mut()
        .and_then(|s| s.container_statuses.as_mut())
    {
        cs[0].image_id = "docker-pullable://docker.io/library/nginx@sha256:bbb".into();
    }
    assert!(is_pod_state_consistent(&p));
    if let Some(cs) = p
        .status
        .as_mut()
        .and_then(|s| s.container_statuses.as_mut())
    {
        cs[0].image_id = "docker.io/library/busybox@sha256:bbb".into();
    }
    assert!(!is_pod_state_consistent(&p));
}

#[test]
fn status_prunes_expired_records_and_reports_recheck() {
    let pods: Vec<PubPod> = (0..4)
        .map(|i| PubPod {
            name: format!("p{i}"),
            active: true,
            ready: true,
            consistent: true,
        })
        .collect();
    let prior = PriorRecords {
        disrupted: [("p0".to_owned(), 5), ("p1".to_owned(), 21)].into(),
        unavailable: [("p2".to_owned(), 10)].into(),
    };
    let spec = PodUnavailableBudgetSpec {
        max_unavailable: Some(IntOrString::Int(1)),
        ..Default::default()
    };
    let st = pub_status(&spec, 4, &pods, &prior).unwrap_or_default();
    assert_eq!(st.disrupted_pods.keys().collect::<Vec<_>>(), vec!["p0"]);
    assert_eq!(st.unavailable_pods.keys().collect::<Vec<_>>(), vec!["p2"]);
    assert_eq!(
        (
            st.current_available,
            st.desired_available,
            st.unavailable_allowed
        ),
        (2, 3, 0)
    );
    assert_eq!(st.recheck_after_seconds, Some(0));
}

#[test]
fn admission_records_and_respects_dry_run_and_operations() {
    let gates = FeatureGates::new();
    let p = pod("a", true, json!({}));
    let mut b = budget(2, 1, &[]);
    let req = PodAdmissionRequest {
        operation: "DELETE",
        sub_resource: "",
        dry_run: false,
        old_pod: Some(&p),
        new_pod: None,
        pod: None,
    };
    assert!(pod_admission(KruiseVersion::V1_8, &gates, &req, Some(&mut b), "now").allowed);
    assert_eq!(b.status.unavailable_allowed, 1);
    assert_eq!(
        b.status.disrupted_pods.get("a").map(String::as_str),
        Some("now")
    );
    // Already recorded: allowed without spending budget.
    assert!(pod_admission(KruiseVersion::V1_8, &gates, &req, Some(&mut b), "later").allowed);
    assert_eq!(b.status.unavailable_allowed, 1);
    // UPDATE is off by default (alpha gate).
    let mut changed = p.clone();
    if let Some(spec) = changed.spec.as_mut() {
        spec.containers[0].image = Some("nginx:v3".into());
    }
    let q = pod("q", true, json!({}));
    let mut q2 = q.clone();
    q2.spec = changed.spec.clone();
    let upd = PodAdmissionRequest {
        operation: "UPDATE",
        sub_resource: "",
        dry_run: false,
        old_pod: Some(&q),
        new_pod: Some(&q2),
        pod: None,
    };
    let mut b0 = budget(0, 1, &[]);
    assert!(pod_admission(KruiseVersion::V1_8, &gates, &upd, Some(&mut b0), "now").allowed);
    let on = gates.clone().with("PodUnavailableBudgetUpdateGate", true);
    let v = pod_admission(KruiseVersion::V1_8, &on, &upd, Some(&mut b0), "now");
    assert_eq!((v.allowed, v.code), (false, 403));
    // A protect-operations annotation without UPDATE lets it through.
    b0.metadata.annotations = Some(
        [(
            PROTECT_OPERATIONS_ANNOTATION.to_owned(),
            "DELETE,EVICT".to_owned(),
        )]
        .into(),
    );
    assert!(pod_admission(KruiseVersion::V1_8, &on, &upd, Some(&mut b0), "now").allowed);
    // Evictions are CREATE on the eviction subresource.
    let ev = PodAdmissionRequest {
        operation: "CREATE",
        sub_resource: "eviction",
        dry_run: true,
        old_pod: None,
        new_pod: None,
        pod: Some(&q),
    };
    let mut b1 = budget(1, 1, &[]);
    assert!(pod_admission(KruiseVersion::V1_8, &gates, &ev, Some(&mut b1), "now").allowed);
    assert_eq!(
        b1.status,
        budget(1, 1, &[]).status,
        "dry run writes nothing"
    );
}

#[test]
fn validation_counts_errors() {
    let pub_ = |spec: serde_json::Value| -> PodUnavailableBudget {
        serde_json::from_value(json!({ "metadata": { "name": "x" }, "spec": spec }))
            .unwrap_or_default()
    };
    assert!(
        validate_pub(
            KruiseVersion::V1_8,
            &pub_(json!({"selector": {"matchLabels": {"a": "b"}}, "maxUnavailable": "10%"})),
            None,
            &[]
        )
        .is_empty()
    );
    assert_eq!(
        validate_pub(
            KruiseVersion::V1_8,
            &pub_(json!({"selector": {}, "maxUnavailable": "101%"})),
            None,
            &[]
        )
        .len(),
        2
    );
    assert_eq!(validate_pub(KruiseVersion::V1_8, &pub_(json!({"targetRef": {"apiVersion": "a/b/c", "kind": "K", "name": "n"}, "minAvailable": -1})), None, &[]).len(), 2);
    let other: PodUnavailableBudget = serde_json::from_value(json!({ "metadata": { "name": "y" },
        "spec": {"targetRef": {"apiVersion": "apps/v1beta2", "kind": "K", "name": "n"}, "maxUnavailable": 1}})).unwrap_or_default();
    let mine = pub_(
        json!({"targetRef": {"apiVersion": "apps/v1", "kind": "K", "name": "n"}, "maxUnavailable": 1}),
    );
    assert_eq!(
        validate_pub(KruiseVersion::V1_8, &mine, None, &[other]).len(),
        1,
        "the version is ignored"
    );
}

proptest! {
    #[test]
    fn admission_never_overspends(
        allowed in -2i32..4,
        desired in 0i32..3,
        ready in any::<bool>(),
        dry_run in any::<bool>(),
        op in prop::sample::select(vec!["DELETE", "UPDATE", "CREATE"]),
        recorded in any::<bool>(),
    ) {
        let gates = FeatureGates::all_on();
        let p = pod("a", ready, json!({}));
        let mut changed = p.clone();
        if let Some(spec) = changed.spec.as_mut() {
            spec.containers[0].image = Some("nginx:v9".into());
        }
        let req = PodAdmissionRequest {
            operation: op,
            sub_resource: if op == "CREATE" { "eviction" } else { "" },
            dry_run,
            old_pod: Some(&p),
            new_pod: Some(&changed),
            pod: Some(&p),
        };
        let before = budget(allowed, desired, if recorded { &["a"] } else { &[] });
        let mut after = before.clone();
        let verdict = pod_admission(KruiseVersion::V1_8, &gates, &req, Some(&mut after), "now");
        if !verdict.allowed || dry_run {
            prop_assert_eq!(&after, &before);
        } else {
            let spent = before.status.unavailable_allowed - after.status.unavailable_allowed;
            prop_assert!(spent == 0 || spent == 1);
            prop_assert!(after.status.unavailable_allowed >= before.status.unavailable_allowed.min(0));
        }
        if !verdict.allowed {
            prop_assert_eq!(verdict.code, 403);
        }
    }

    #[test]
    fn status_never_allows_negative(
        flags in prop::collection::vec((any::<bool>(), any::<bool>(), any::<bool>()), 0..30),
        total in 0i32..40,
        max in prop::option::of(0i32..50),
        pct in 0i32..=100,
    ) {
        let pods: Vec<PubPod> = flags.iter().enumerate()
            .map(|(i, (a, r, c))| PubPod { name: format!("p{i}"), active: *a, ready: *r, consistent: *c })
            .collect();
        let spec = match max {
            Some(m) => PodUnavailableBudgetSpec { max_unavailable: Some(IntOrString::Int(m)), ..Default::default() },
            None => PodUnavailableBudgetSpec { min_available: Some(IntOrString::String(format!("{pct}%"))), ..Default::default() },
        };
        let st = pub_status(&spec, total, &pods, &PriorRecords::default());
        prop_assert!(st.is_ok());
        let st = st.unwrap_or_default();
        prop_assert!(st.unavailable_allowed >= 0);
        prop_assert!(st.desired_available >= 0);
        prop_assert_eq!(st.unavailable_allowed, (st.current_available - st.desired_available).max(0));
    }
}

#[test]
fn raw_entries_decode_and_aggregate() {
    let gates = FeatureGates::new();
    let obj = json!({"metadata": {"name": "x"}, "spec": {}});
    let v = admit_pub(KruiseVersion::V1_8, &gates, "CREATE", &obj, None, &[]);
    assert_eq!(v.code, 400);
    assert!(v.message.unwrap_or_default().starts_with('['));
    let off = FeatureGates::new()
        .with("PodUnavailableBudgetDeleteGate", false)
        .with("PodUnavailableBudgetUpdateGate", false);
    assert!(!admit_pub(KruiseVersion::V1_8, &off, "CREATE", &obj, None, &[]).allowed);
    let bad = json!({"metadata": {"name": 5}});
    assert_eq!(
        pod_admission_json(
            KruiseVersion::V1_8,
            &gates,
            "DELETE",
            "",
            false,
            Some(&bad),
            None,
            None,
            None,
            "now"
        )
        .code,
        400
    );
    let p = serde_json::to_value(pod("a", true, json!({}))).unwrap_or_default();
    let mut b = budget(0, 1, &[]);
    let v = pod_admission_json(
        KruiseVersion::V1_8,
        &gates,
        "DELETE",
        "",
        false,
        Some(&p),
        None,
        None,
        Some(&mut b),
        "now",
    );
    assert_eq!(
        v.message.as_deref(),
        Some(
            "podunavailablebudget.policy.kruise.io \"pub\" is forbidden: pub unavailable allowed is negative"
        )
    );
}
