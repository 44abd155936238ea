//! The two controllers as pure passes: a PodProbeMarker sync (NodePodProbe specs, serverless
//! marking, matchedPods) and a NodePodProbe sync (pruning, results onto pods).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;

use crate::kruise::{KruiseVersion, selector};

use super::{
    apply::{apply_probe_states, mark_serverless_pod},
    node_probe::{
        PodPresence, merge_node_pod_probe, remove_pod_probe, sync_pod_from_node_pod_probe,
    },
    types::{NodePodProbe, NodePodProbeSpec, PodProbeMarker},
};

/// What a PodProbeMarker pass decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MarkerSync {
    /// `status.matchedPods`.
    pub matched_pods: i64,
    /// Nodes whose NodePodProbe spec changed (the caller writes them).
    pub changed_nodes: BTreeSet<String>,
    /// Serverless pods to write: `(index into the input pods, new pod)`.
    pub pod_updates: Vec<(usize, Pod)>,
    /// Remove the cleanup finalizer (the marker is being deleted and cleanup is done).
    pub remove_finalizer: bool,
    /// Problems that do not stop the pass (missing NodePodProbe, unresolvable port).
    pub errors: Vec<String>,
}

fn is_initialized_active(pod: &Pod) -> bool {
    let status = pod.status.as_ref();
    let phase = status.and_then(|s| s.phase.as_deref());
    pod.metadata.deletion_timestamp.is_none()
        && phase != Some("Succeeded")
        && phase != Some("Failed")
        && status
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| {
                cs.iter()
                    .any(|c| c.type_ == "Initialized" && c.status == "True")
            })
}

/// One PodProbeMarker pass over `pods` (any pods; the matching ones are picked here).
/// `node_probes` maps node name to its NodePodProbe spec and is edited in place;
/// `is_virtual_node` tells virtual-kubelet nodes (label `type=virtual-kubelet`).
///
/// Port of pkg/controller/podprobemarker/pod_probe_marker_controller.go::syncPodProbeMarker (v1.8.4).
pub fn sync_pod_probe_marker(
    version: KruiseVersion,
    ppm: &PodProbeMarker,
    pods: &[Pod],
    is_virtual_node: &dyn Fn(&str) -> bool,
    node_probes: &mut BTreeMap<String, NodePodProbeSpec>,
) -> MarkerSync {
    let mut out = MarkerSync::default();
    let name = ppm.metadata.name.clone().unwrap_or_default();
    if ppm.metadata.deletion_timestamp.is_some() {
        for (node, spec) in node_probes.iter_mut() {
            let ns = ppm.metadata.namespace.as_deref().unwrap_or_default();
            if remove_pod_probe(version, spec, ns, &name) {
                out.changed_nodes.insert(node.clone());
            }
        }
        out.remove_finalizer = true;
        return out;
    }
    let Some(sel) = ppm
        .spec
        .selector
        .as_ref()
        .filter(|s| !selector::is_empty(s))
    else {
        out.errors.push("selector is required".to_owned());
        return out;
    };
    let ns = ppm.metadata.namespace.as_deref().unwrap_or_default();
    for (i, pod) in pods.iter().enumerate() {
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        let node = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default();
        if pod.metadata.namespace.as_deref().unwrap_or_default() != ns
            || !selector::matches(sel, &labels).unwrap_or(false)
            || !is_initialized_active(pod)
            || node.is_empty()
        {
            continue;
        }
        out.matched_pods += 1;
        if is_virtual_node(&node) {
            let mut p = pod.clone();
            if mark_serverless_pod(&mut p, ppm) {
                out.pod_updates.push((i, p));
            }
            continue;
        }
        let Some(spec) = node_probes.get_mut(&node) else {
            out.errors.push(format!("NodePodProbe {node} not found"));
            continue;
        };
        match merge_node_pod_probe(spec, ppm, pod) {
            Ok(true) => {
                out.changed_nodes.insert(node);
            }
            Ok(false) => {}
            Err(e) => out.errors.push(e),
        }
    }
    out
}

/// One NodePodProbe pass: drop entries of pods that are gone, then write each live pod's
/// probe results. `markers` are the live PodProbeMarkers (any namespace; a pod only uses
/// those of its own namespace). Returns whether the spec changed and the pods to write.
///
/// Port of pkg/controller/nodepodprobe/node_pod_probe_controller.go::syncNodePodProbe (v1.8.4).
pub fn sync_node_pod_probe(
    npp: &mut NodePodProbe,
    pods: &[Pod],
    markers: &[PodProbeMarker],
) -> (bool, Vec<(usize, Pod)>) {
    let presence: Vec<PodPresence> = pods
        .iter()
        .map(|p| PodPresence {
            name: p.metadata.name.clone().unwrap_or_default(),
            namespace: p.metadata.namespace.clone().unwrap_or_default(),
            uid: p.metadata.uid.clone().unwrap_or_default(),
            active: {
                let phase = p.status.as_ref().and_then(|s| s.phase.as_deref());
                p.metadata.deletion_timestamp.is_none()
                    && phase != Some("Succeeded")
                    && phase != Some("Failed")
            },
        })
        .collect();
    let changed = sync_pod_from_node_pod_probe(&mut npp.spec, &presence);
    let mut updates = Vec::new();
    for status in npp.status.iter().flat_map(|s| s.pod_probe_statuses.iter()) {
        let Some(i) = pods.iter().position(|p| {
            p.metadata.name.as_deref() == Some(status.name.as_str())
                && p.metadata.namespace.as_deref().unwrap_or_default() == status.namespace
                && p.metadata.uid.as_deref().unwrap_or_default() == status.uid
        }) else {
            continue;
        };
        let ns_markers: Vec<PodProbeMarker> = markers
            .iter()
            .filter(|m| m.metadata.namespace.as_deref().unwrap_or_default() == status.namespace)
            .cloned()
            .collect();
        let mut pod = pods[i].clone();
        if apply_probe_states(&mut pod, &ns_markers, &status.probe_states) {
            updates.push((i, pod));
        }
    }
    (changed, updates)
}
