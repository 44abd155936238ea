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
use crate::kruise::{FeatureGates, KruiseVersion};

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
    let (v, errs) = admit(KruiseVersion::V1_9, &FeatureGates::new(), &marker(), None);
    assert!(v.allowed, "{errs:?}");
    let mut bad = marker();
    bad.spec.probes[0].name = "Ready".to_owned();
    // validatingPodProbeMarkerFn errors go back as admission.Errored(http.StatusBadRequest, ...).
    let (v, _) = admit(KruiseVersion::V1_9, &FeatureGates::new(), &bad, None);
    assert_eq!(v.code, 400);
    let (v, _) = admit(
        KruiseVersion::V1_9,
        &FeatureGates::new().with("KruiseDaemon", false),
        &marker(),
        None,
    );
    assert_eq!(
        (v.code, v.message_text()),
        // Handle names the gate that is off.
        (403, "feature-gate KruiseDaemon is not enabled")
    );
    // P1: httpGet is validated at v1.9.0 (scheme required), rejected outright at v1.8.4
    let mut http = marker();
    http.spec.probes[0].probe =
        serde_json::from_value(serde_json::json!({"httpGet": {"path": "/healthz", "port": 8080}}))
            .expect("probe");
    let (v, errs) = admit(KruiseVersion::V1_9, &FeatureGates::new(), &http, None);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].field, "spec.probe.httpGet.scheme");
    assert_eq!(
        v.message_text(),
        "spec.probe.httpGet.scheme: Unsupported value: \"\": supported values: \"HTTP\", \"HTTPS\""
    );
    let (_, errs) = admit(KruiseVersion::V1_8, &FeatureGates::new(), &http, None);
    assert_eq!(errs[0].message, "Forbidden: current no support http probe");
    if let Some(h) = http.spec.probes[0]
        .probe
        .as_mut()
        .and_then(|p| p.http_get.as_mut())
    {
        h.scheme = Some("HTTP".to_owned());
    }
    assert!(
        admit(KruiseVersion::V1_9, &FeatureGates::new(), &http, None)
            .0
            .allowed
    );
    assert!(qualified_name_errors("example.com/ok-name").is_empty());
    assert_eq!(qualified_name_errors("a/b/c").len(), 1);
}

#[test]
fn marker_sync_feeds_node_probes_and_marks_serverless_pods() {
    use super::controller::{sync_node_pod_probe, sync_pod_probe_marker};
    use super::types::{NodePodProbe, NodePodProbeSpec};
    use std::collections::BTreeMap;

    let mk = |name: &str, node: &str| -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns", "uid": format!("{name}-uid"), "labels": {"app": "web"}},
            "spec": {"nodeName": node, "containers": [{"name": "main", "ports": [{"name": "http", "containerPort": 8080}]}]},
            "status": {"phase": "Running", "conditions": [{"type": "Initialized", "status": "True"},
                {"type": "game.kruise.io/healthy", "status": "False"}]}
        }))
        .unwrap()
    };
    let pods = vec![mk("a", "n1"), mk("b", "vk"), mk("c", "n2")];
    let mut nodes = BTreeMap::from([("n1".to_owned(), NodePodProbeSpec::default())]);
    let out = sync_pod_probe_marker(
        KruiseVersion::V1_9,
        &marker(),
        &pods,
        &|n| n == "vk",
        &mut nodes,
    );
    assert_eq!(out.matched_pods, 3);
    assert_eq!(out.changed_nodes.iter().collect::<Vec<_>>(), ["n1"]);
    assert_eq!(out.errors, ["NodePodProbe n2 not found"]);
    let entry = &nodes["n1"].pod_probes[0];
    assert_eq!(entry.probes[0].name, "ppm#healthy");
    let port = &entry.probes[0]
        .probe
        .as_ref()
        .unwrap()
        .tcp_socket
        .as_ref()
        .unwrap()
        .port;
    assert_eq!(
        port,
        &k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(8080)
    );
    assert_eq!(out.pod_updates.len(), 1);
    assert_eq!(
        out.pod_updates[0]
            .1
            .metadata
            .labels
            .as_ref()
            .unwrap()
            .get("bad")
            .map(String::as_str),
        Some("true")
    );

    let mut npp: NodePodProbe = serde_json::from_value(json!({
        "metadata": {"name": "n1"},
        "spec": serde_json::to_value(&nodes["n1"]).unwrap(),
        "status": {"podProbeStatuses": [{"name": "a", "namespace": "ns", "uid": "a-uid",
            "probeStates": [{"name": "ppm#healthy", "state": "Succeeded"}]}]}
    }))
    .unwrap();
    let (changed, updates) = sync_node_pod_probe(&mut npp, &pods, &[marker()]);
    assert!(!changed);
    assert_eq!(updates.len(), 1);
    assert_eq!(
        updates[0]
            .1
            .metadata
            .labels
            .as_ref()
            .unwrap()
            .get("ok")
            .map(String::as_str),
        Some("true")
    );
    let (changed, _) = sync_node_pod_probe(&mut npp, &pods[1..], &[marker()]);
    assert!(changed);
    assert!(npp.spec.pod_probes.is_empty());
}
