//! The pod CREATE hook for serverless pods (gate `EnablePodProbeMarkerOnServerless`): the pod
//! carries its probes in annotations instead of a NodePodProbe.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;

use crate::kruise::{features::FeatureGates, selector, sidecarset::gojson};

use super::{
    POD_PROBE_ANNOTATION, POD_PROBE_MARKER_LIST_ANNOTATION,
    types::{PodContainerProbe, PodProbeMarker},
};

fn has_container(pod: &Pod, name: &str) -> bool {
    let Some(spec) = &pod.spec else {
        return false;
    };
    spec.containers.iter().any(|c| c.name == name)
        || spec
            .init_containers
            .iter()
            .flatten()
            .any(|c| c.name == name && c.restart_policy.as_deref() == Some("Always"))
}

/// Go encoding of `[]PodContainerProbe` with markerPolicy dropped.
fn encode_probes(probes: &[PodContainerProbe]) -> String {
    let mut out = String::from("[");
    for (i, p) in probes.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"name\":");
        gojson::write_str(&mut out, &p.name);
        out.push_str(",\"containerName\":");
        gojson::write_str(&mut out, &p.container_name);
        out.push_str(",\"probe\":");
        let probe = p
            .probe
            .as_ref()
            .and_then(|pr| serde_json::to_value(pr).ok());
        out.push_str(&gojson::encode_probe(probe.as_ref()));
        if !p.pod_condition_type.is_empty() {
            out.push_str(",\"podConditionType\":");
            gojson::write_str(&mut out, &p.pod_condition_type);
        }
        out.push('}');
    }
    out.push(']');
    out
}

/// Annotates a pod being created with the probes of the markers (in its namespace) that
/// select it: probes need a podConditionType not yet taken and a container of the pod
/// (regular or restartable init); duplicates by `container/name` are dropped. Returns
/// whether the pod changed.
///
/// Port of pkg/webhook/pod/mutating/pod_probe_marker.go::podProbeMakerMutatingPod (v1.8.4).
pub fn annotate_pod(gates: &FeatureGates, pod: &mut Pod, markers: &[PodProbeMarker]) -> bool {
    if !gates.enabled("EnablePodProbeMarkerOnServerless") {
        return false;
    }
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    let mut names = BTreeSet::new();
    let mut keys = BTreeSet::new();
    let mut condition_types = BTreeSet::new();
    let mut matched = Vec::new();
    for ppm in markers {
        let Some(sel) = &ppm.spec.selector else {
            continue;
        };
        if selector::is_empty(sel) || !selector::matches(sel, &labels).unwrap_or(false) {
            continue;
        }
        for probe in &ppm.spec.probes {
            if probe.pod_condition_type.is_empty()
                || condition_types.contains(&probe.pod_condition_type)
            {
                continue;
            }
            if !has_container(pod, &probe.container_name) {
                continue;
            }
            if !keys.insert(format!("{}/{}", probe.container_name, probe.name)) {
                continue;
            }
            condition_types.insert(probe.pod_condition_type.clone());
            names.insert(ppm.metadata.name.clone().unwrap_or_default());
            let mut p = probe.clone();
            p.marker_policy.clear();
            matched.push(p);
        }
    }
    if matched.is_empty() {
        return false;
    }
    let annotations = pod.metadata.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert(POD_PROBE_ANNOTATION.to_owned(), encode_probes(&matched));
    annotations.insert(
        POD_PROBE_MARKER_LIST_ANNOTATION.to_owned(),
        names.into_iter().collect::<Vec<_>>().join(","),
    );
    true
}
