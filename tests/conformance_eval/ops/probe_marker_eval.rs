//! probe-marker.json: PodProbeMarker admission, the serverless pod hook, results on pods and
//! NodePodProbe maintenance.

use k8s_openapi::api::core::v1::{Pod, Probe, TCPSocketAction};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_tui::kruise::probe_marker::{
    PodProbeMarker, apply, mutating, node_probe,
    types::{ContainerProbeState, NodePodProbeSpec, PodContainerProbe},
    validate,
};
use kruise_tui::kruise::{FeatureGates, KruiseVersion};
use serde_json::{Value, json};

use crate::eval::common::{at_versions, expect_eq, expect_field_errors, input, parse};

fn gates(v: &Value) -> FeatureGates {
    let mut g = FeatureGates::new();
    for (k, on) in v.as_object().into_iter().flatten() {
        g.set(k, on.as_bool().unwrap_or(false));
    }
    g
}

/// The podProbes as the vectors write them. Go writes an entry's required `namespace`, `uid`
/// and `IP` even when empty (and so does the API type, for the CRD's validation); the vectors
/// leave empty ones out.
fn pod_probes_json(spec: &NodePodProbeSpec) -> Value {
    let mut v = json!({"podProbes": spec.pod_probes});
    for entry in v["podProbes"].as_array_mut().into_iter().flatten() {
        if let Some(obj) = entry.as_object_mut() {
            obj.retain(|k, v| !(matches!(k.as_str(), "namespace" | "uid" | "IP") && v == ""));
        }
    }
    v
}

pub fn eval(op: &str, case: &Value) -> Result<(), String> {
    let i = input(case)?;
    at_versions(case, |version, e| eval_at(op, i, e, version))
}

fn eval_at(op: &str, i: &Value, e: &Value, version: KruiseVersion) -> Result<(), String> {
    let actual = match op {
        "validatePodProbeMarker" => {
            let obj: PodProbeMarker = parse("object", &i["object"])?;
            let old: Option<PodProbeMarker> =
                parse("oldObject", i.get("oldObject").unwrap_or(&Value::Null))?;
            let (verdict, errs) =
                validate::admit(version, &gates(&i["featureGates"]), &obj, old.as_ref());
            if e.get("errorCount").is_some() {
                return expect_field_errors(e, &errs);
            }
            json!({"allowed": verdict.allowed, "code": verdict.code, "message": verdict.message_text()})
        }
        "validateHandler" => {
            let probe: Probe = parse("handler", &i["handler"])?;
            json!({"valid": validate::validate_handler(version, &probe, "probe").is_empty()})
        }
        "validatePortNumOrName" => {
            let port: IntOrString = parse("port", &i["port"])?;
            json!({"valid": validate::validate_port_num_or_name(&port, "port").is_empty()})
        }
        "validateHTTPGetAction" => {
            let http: k8s_openapi::api::core::v1::HTTPGetAction = parse("httpGet", &i["httpGet"])?;
            return expect_field_errors(e, &validate::validate_http_get_action(&http, "test"));
        }
        "validateTCPSocketAction" => {
            let tcp: TCPSocketAction = parse("tcpSocket", &i["tcpSocket"])?;
            json!({"valid": validate::validate_tcp_socket_action(&tcp, "tcpSocket").is_empty()})
        }
        "podProbeMarkerMutatingPod" => {
            let mut pod: Pod = parse("pod", &i["pod"])?;
            let markers: Vec<PodProbeMarker> = parse("podProbeMarkers", &i["podProbeMarkers"])?;
            mutating::annotate_pod(&gates(&i["featureGates"]), &mut pod, &markers);
            json!({"annotations": pod.metadata.annotations.unwrap_or_default()})
        }
        "nodePodProbeToPod" => {
            let mut pod: Pod = parse("pod", &i["pod"])?;
            let markers: Vec<PodProbeMarker> = parse("podProbeMarkers", &i["podProbeMarkers"])?;
            let states: Vec<ContainerProbeState> = parse("probeStates", &i["probeStates"])?;
            apply::apply_probe_states(&mut pod, &markers, &states);
            let conditions: Vec<Value> = pod
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .into_iter()
                .flatten()
                .map(|c| json!({"type": c.type_, "status": c.status}))
                .collect();
            json!({
                "labels": pod.metadata.labels.unwrap_or_default(),
                "annotations": pod.metadata.annotations.unwrap_or_default(),
                "conditions": conditions,
            })
        }
        "markServerlessPod" => {
            let mut pod: Pod = parse("pod", &i["pod"])?;
            let ppm: PodProbeMarker = parse("podProbeMarker", &i["podProbeMarker"])?;
            apply::mark_serverless_pod(&mut pod, &ppm);
            json!({"labels": pod.metadata.labels.unwrap_or_default(), "annotations": pod.metadata.annotations.unwrap_or_default()})
        }
        "convertTcpSocketProbeCheckPort" => {
            let port: IntOrString = parse("port", &i["port"])?;
            let pod: Pod = parse("pod", &i["pod"])?;
            let container = i["containerName"].as_str().unwrap_or_default();
            // Upstream returns the probe unchanged with the error: the port stays as given.
            match node_probe::convert_tcp_socket_port(&port, container, &pod) {
                Ok(p) => json!({"port": p, "error": null}),
                Err(err) => json!({"port": port, "error": err}),
            }
        }
        "syncPodFromNodePodProbe" => {
            let mut spec: NodePodProbeSpec = parse("nodePodProbeSpec", &i["nodePodProbeSpec"])?;
            let pods: Vec<node_probe::PodPresence> = i["pods"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| node_probe::PodPresence {
                    name: p["name"].as_str().unwrap_or_default().to_owned(),
                    namespace: p["namespace"].as_str().unwrap_or_default().to_owned(),
                    uid: p["uid"].as_str().unwrap_or_default().to_owned(),
                    active: p["active"].as_bool().unwrap_or(false)
                        && p["deleting"].as_bool() != Some(true),
                })
                .collect();
            node_probe::sync_pod_from_node_pod_probe(&mut spec, &pods);
            pod_probes_json(&spec)
        }
        "removePodProbeFromNodePodProbe" => {
            let mut spec: NodePodProbeSpec = parse("nodePodProbeSpec", &i["nodePodProbeSpec"])?;
            node_probe::remove_pod_probe(
                version,
                &mut spec,
                i["ppmNamespace"].as_str().unwrap_or_default(),
                i["ppmName"].as_str().unwrap_or_default(),
            );
            pod_probes_json(&spec)
        }
        "mergeNodePodProbe" => {
            let mut spec: NodePodProbeSpec = parse("nodePodProbeSpec", &i["nodePodProbeSpec"])?;
            let probes: Vec<PodContainerProbe> = parse("ppm.probes", &i["ppm"]["probes"])?;
            let ppm = PodProbeMarker {
                metadata: ObjectMeta {
                    name: i["ppm"]["name"].as_str().map(str::to_owned),
                    ..Default::default()
                },
                spec: kruise_tui::kruise::probe_marker::types::PodProbeMarkerSpec {
                    selector: None,
                    probes,
                },
                status: None,
            };
            let p = &i["pod"];
            let pod: Pod = serde_json::from_value(json!({
                "metadata": {"name": p["name"], "uid": p["uid"]},
                "spec": {"nodeName": p["nodeName"], "containers": []},
                "status": {"phase": "Running", "conditions": p["conditions"]},
            }))
            .map_err(|e| e.to_string())?;
            node_probe::merge_node_pod_probe(&mut spec, &ppm, &pod)?;
            pod_probes_json(&spec)
        }
        other => return Err(format!("unknown op {other:?}")),
    };
    expect_eq(e, &actual)
}
