//! How probe results land on a pod: conditions, and marker-policy labels and annotations.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodCondition};

use super::{
    PROBE_FAILED, PROBE_SUCCEEDED, PROBE_UNKNOWN,
    types::{ContainerProbeState, PodProbeMarker},
};

/// Sets a condition, replacing an existing one of the same type only when its status or
/// message changed.
///
/// Port of pkg/util/pods.go::SetPodConditionIfMsgChanged (v1.8.4).
pub fn set_pod_condition_if_msg_changed(pod: &mut Pod, condition: PodCondition) {
    let conditions = pod
        .status
        .get_or_insert_with(Default::default)
        .conditions
        .get_or_insert_with(Vec::new);
    if let Some(c) = conditions.iter_mut().find(|c| c.type_ == condition.type_) {
        if c.status != condition.status || c.message != condition.message {
            *c = condition;
        }
        return;
    }
    conditions.push(condition);
}

/// Applies a pod's NodePodProbe probe states: for each state, the `<ppm>#<probe>` marker
/// (looked up in `markers`, the pod namespace's live PodProbeMarkers) gives a condition
/// (True only for Succeeded) and marker policies (the opposite policy's keys deleted, then
/// the matched policy's values set). Returns whether the pod changed.
///
/// Port of pkg/controller/nodepodprobe/node_pod_probe_controller.go::updatePodProbeStatus (v1.8.4).
pub fn apply_probe_states(
    pod: &mut Pod,
    markers: &[PodProbeMarker],
    states: &[ContainerProbeState],
) -> bool {
    let before = pod.clone();
    let mut labels: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut annotations: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut conditions: Vec<PodCondition> = Vec::new();
    for state in states.iter().filter(|s| !s.state.is_empty()) {
        let Some((ppm_name, probe_name)) = state.name.split_once('#') else {
            continue;
        };
        let Some(ppm) = markers.iter().find(|m| {
            m.metadata.name.as_deref() == Some(ppm_name) && m.metadata.deletion_timestamp.is_none()
        }) else {
            continue;
        };
        let Some(probe) = ppm.spec.probes.iter().find(|p| p.name == probe_name) else {
            continue;
        };
        if !probe.pod_condition_type.is_empty()
            && !conditions
                .iter()
                .any(|c| c.type_ == probe.pod_condition_type)
        {
            conditions.push(PodCondition {
                type_: probe.pod_condition_type.clone(),
                status: if state.state == PROBE_SUCCEEDED {
                    "True"
                } else {
                    "False"
                }
                .to_owned(),
                last_probe_time: state.last_probe_time.clone(),
                last_transition_time: state.last_transition_time.clone(),
                message: (!state.message.is_empty()).then(|| state.message.clone()),
                ..Default::default()
            });
        }
        let mut matched = None;
        let mut opposite = None;
        for policy in &probe.marker_policy {
            if policy.state == state.state {
                matched = Some(policy);
            } else {
                opposite = Some(policy);
            }
        }
        if let Some(p) = opposite {
            labels.extend(p.labels.keys().map(|k| (k.clone(), None)));
            annotations.extend(p.annotations.keys().map(|k| (k.clone(), None)));
        }
        if let Some(p) = matched {
            labels.extend(p.labels.iter().map(|(k, v)| (k.clone(), Some(v.clone()))));
            annotations.extend(
                p.annotations
                    .iter()
                    .map(|(k, v)| (k.clone(), Some(v.clone()))),
            );
        }
    }
    let apply = |target: &mut Option<BTreeMap<String, String>>,
                 changes: BTreeMap<String, Option<String>>| {
        if changes.is_empty() {
            return;
        }
        let map = target.get_or_insert_with(BTreeMap::new);
        for (k, v) in changes {
            match v {
                Some(v) => map.insert(k, v),
                None => map.remove(&k),
            };
        }
    };
    apply(&mut pod.metadata.labels, labels);
    apply(&mut pod.metadata.annotations, annotations);
    for c in conditions {
        set_pod_condition_if_msg_changed(pod, c);
    }
    *pod != before
}

/// For a pod on a virtual-kubelet node (not probed): adds the labels and annotations of the
/// policy matching each probe's existing pod condition (True -> Succeeded, False -> Failed,
/// else Unknown). Never deletes. Returns whether the pod changed.
///
/// Port of pkg/controller/podprobemarker/pod_probe_marker_controller.go::markServerlessPod (v1.8.4).
pub fn mark_serverless_pod(pod: &mut Pod, ppm: &PodProbeMarker) -> bool {
    let before = pod.clone();
    let conditions = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    for probe in &ppm.spec.probes {
        let Some(c) = conditions
            .iter()
            .find(|c| c.type_ == probe.pod_condition_type)
        else {
            continue;
        };
        let state = match c.status.as_str() {
            "True" => PROBE_SUCCEEDED,
            "False" => PROBE_FAILED,
            _ => PROBE_UNKNOWN,
        };
        for policy in probe.marker_policy.iter().filter(|p| p.state == state) {
            if !policy.labels.is_empty() {
                let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
                labels.extend(policy.labels.clone());
            }
            if !policy.annotations.is_empty() {
                let annotations = pod.metadata.annotations.get_or_insert_with(BTreeMap::new);
                annotations.extend(policy.annotations.clone());
            }
        }
    }
    *pod != before
}
