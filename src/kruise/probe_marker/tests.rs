//! Behaviour tests of probe-result marking, the serverless pod hook and validation.

use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use super::{
    POD_PROBE_ANNOTATION, POD_PROBE_MARKER_LIST_ANNOTATION, PodProbeMarker,
    apply::{apply_probe_states, mark_serverless_pod},
    mutating::annotate_pod,
    types::ContainerProbeState,
    validate::{admit, qualified_name_errors},
};
use crate::kruise::FeatureGates;

fn marker() -> PodProbeMarker {
    serde_json::from_value(json!({
        "metadata": {"name": "ppm", "namespace": "ns"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "probes": [{
            "name": "healthy", "containerName": "main",
            "probe": {"tcpSocket": {"port": "http"}, "periodSeconds": 5},
            "podConditionType": "game.kruise.io/healthy",
            "markerPolicy": [{"state": "Succeeded", "labels": {"ok": "true"}}, {"state": "Failed", "labels": {"bad": "true"}}]
        }]}
    }))
    .expect("valid marker")
}

fn pod() -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "web", "bad": "true"}},
        "spec": {"containers": [{"name": "main"}]},
        "status": {"conditions": []}
    }))
    .expect("valid pod")
}

fn probe_state(state: &str, message: &str) -> ContainerProbeState {
    ContainerProbeState {
        name: "ppm#healthy".to_owned(),
        state: state.to_owned(),
        message: message.to_owned(),
        ..Default::default()
    }
}

#[test]
fn results_mark_pod_and_conditions_change_only_on_news() {
    let mut p = pod();
    assert!(apply_probe_states(
        &mut p,
        &[marker()],
        &[probe_state("Succeeded", "up")]
    ));
    let labels = p.metadata.labels.clone().unwrap();
    assert_eq!(labels.get("ok").map(String::as_str), Some("true"));
    assert!(!labels.contains_key("bad"));
    assert!(!apply_probe_states(
        &mut p,
        &[marker()],
        &[probe_state("Succeeded", "up")]
    ));
    assert!(apply_probe_states(
        &mut p,
        &[marker()],
        &[probe_state("Succeeded", "still up")]
    ));
    let conditions = p.status.as_ref().unwrap().conditions.clone().unwrap();
    assert_eq!(conditions.len(), 1);
    assert_eq!(conditions[0].message.as_deref(), Some("still up"));
    // A state for a marker that is gone is ignored.
    let mut q = pod();
    assert!(!apply_probe_states(
        &mut q,
        &[],
        &[probe_state("Failed", "")]
    ));
}

#[test]
fn serverless_marking_only_adds() {
    let mut p = pod();
    p.status.as_mut().unwrap().conditions = Some(vec![k8s_openapi::api::core::v1::PodCondition {
        type_: "game.kruise.io/healthy".to_owned(),
        status: "True".to_owned(),
        ..Default::default()
    }]);
    assert!(mark_serverless_pod(&mut p, &marker()));
    let labels = p.metadata.labels.unwrap();
    assert_eq!(labels.get("ok").map(String::as_str), Some("true"));
    assert_eq!(labels.get("bad").map(String::as_str), Some("true"));
}

#[test]
fn serverless_pod_hook_writes_go_encoded_probes() {
    let gates = FeatureGates::new().with("EnablePodProbeMarkerOnServerless", true);
    let mut p = pod();
    assert!(annotate_pod(&gates, &mut p, &[marker()]));
    let ann = p.metadata.annotations.unwrap();
    assert_eq!(
        ann[POD_PROBE_ANNOTATION],
        r#"[{"name":"healthy","containerName":"main","probe":{"tcpSocket":{"port":"http"},"periodSeconds":5},"podConditionType":"game.kruise.io/healthy"}]"#
    );
    assert_eq!(ann[POD_PROBE_MARKER_LIST_ANNOTATION], "ppm");
    let mut q = pod();
    assert!(!annotate_pod(&FeatureGates::new(), &mut q, &[marker()]));
}

#[test]
fn admission_verdicts() {
    let (v, errs) = admit(&FeatureGates::new(), &marker(), None);
    assert!(v.allowed, "{errs:?}");
    let mut bad = marker();
    bad.spec.probes[0].name = "Ready".to_owned();
    let (v, _) = admit(&FeatureGates::new(), &bad, None);
    assert_eq!(v.code, 422);
    let (v, _) = admit(
        &FeatureGates::new().with("KruiseDaemon", false),
        &marker(),
        None,
    );
    assert_eq!(
        (v.code, v.message.as_str()),
        (403, "feature-gate PodProbeMarkerGate is not enabled")
    );
    assert!(qualified_name_errors("example.com/ok-name").is_empty());
    assert_eq!(qualified_name_errors("a/b/c").len(), 1);
}
