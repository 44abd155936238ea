//! The PodProbeMarker and NodePodProbe controllers' reconciles as plans of writes, built on
//! [`super::controller`]: the finalizer, the NodePodProbe specs, serverless marking and the
//! marker's status; a NodePodProbe's existence per node, pruning and results onto pods.
//!
//! Port of pkg/controller/podprobemarker/pod_probe_marker_controller.go::syncPodProbeMarker
//! and pkg/controller/nodepodprobe/node_pod_probe_controller.go::syncNodePodProbe (v1.8.4).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, Pod};

use crate::kruise::KruiseVersion;

use super::{
    CLEANUP_FINALIZER,
    controller::{MarkerSync, sync_node_pod_probe, sync_pod_probe_marker},
    types::{NodePodProbe, NodePodProbeSpec, PodProbeMarker, PodProbeMarkerStatus},
};

/// The label value of virtual-kubelet (serverless) nodes, under the `type` label.
pub const VIRTUAL_KUBELET: &str = "virtual-kubelet";

/// What one PodProbeMarker reconcile writes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MarkerPlan {
    /// Add the `kruise.io/node-pod-probe-cleanup` finalizer first.
    pub add_finalizer: bool,
    /// NodePodProbe specs to write (`node_probes` was edited in place), serverless pods to
    /// write, and the finalizer removal of a deleted marker.
    pub sync: MarkerSync,
    /// The new status (matchedPods, observedGeneration), when it changed.
    pub status: Option<PodProbeMarkerStatus>,
}

fn has_finalizer(ppm: &PodProbeMarker) -> bool {
    ppm.metadata
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == CLEANUP_FINALIZER)
}

/// Whether `node` is a virtual-kubelet (serverless) node.
pub fn is_virtual_node(node: &Node) -> bool {
    node.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get("type"))
        .is_some_and(|t| t == VIRTUAL_KUBELET)
}

/// Plans one PodProbeMarker reconcile. `node_probes` maps each node that has a NodePodProbe
/// to its spec (edited in place; the changed ones are in `sync.changed_nodes`);
/// `serverless` is the `EnablePodProbeMarkerOnServerless` gate.
pub fn plan_marker(
    version: KruiseVersion,
    ppm: &PodProbeMarker,
    pods: &[Pod],
    is_virtual_node: &dyn Fn(&str) -> bool,
    node_probes: &mut BTreeMap<String, NodePodProbeSpec>,
    serverless: bool,
) -> MarkerPlan {
    let deleting = ppm.metadata.deletion_timestamp.is_some();
    if deleting && !has_finalizer(ppm) {
        return MarkerPlan::default();
    }
    let mut sync = sync_pod_probe_marker(version, ppm, pods, is_virtual_node, node_probes);
    if deleting {
        return MarkerPlan {
            sync,
            ..MarkerPlan::default()
        };
    }
    let has_markers = ppm
        .spec
        .probes
        .iter()
        .any(|p| !p.pod_condition_type.is_empty() && !p.marker_policy.is_empty());
    if !serverless || !has_markers {
        sync.pod_updates.clear();
    }
    let generation = ppm.metadata.generation.unwrap_or_default();
    let current = ppm.status.clone().unwrap_or_default();
    let status = (current.observed_generation != generation
        || current.matched_pods != sync.matched_pods)
        .then_some(PodProbeMarkerStatus {
            observed_generation: generation,
            matched_pods: sync.matched_pods,
        });
    MarkerPlan {
        add_finalizer: !has_finalizer(ppm),
        sync,
        status,
    }
}

/// Whether `node` should have a NodePodProbe: a Ready, non-virtual node not being deleted.
///
/// Port of pkg/controller/nodepodprobe/nodepodprobe_event_handler.go::nodeCreate (v1.8.4).
pub fn wants_node_pod_probe(node: &Node) -> bool {
    let ready = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
    ready && !is_virtual_node(node) && node.metadata.deletion_timestamp.is_none()
}

/// What one NodePodProbe reconcile writes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeProbePlan {
    /// Delete the NodePodProbe: its node is gone or being deleted.
    pub delete: bool,
    /// The pruned spec, when entries of gone pods were dropped.
    pub spec: Option<NodePodProbeSpec>,
    /// Pods whose labels, annotations or probe conditions change: `(index into pods, pod)`.
    pub pods: Vec<(usize, Pod)>,
}

/// Plans one NodePodProbe reconcile with its node (`None`: not found), the pods its spec and
/// status name, and the live PodProbeMarkers.
pub fn plan_node_probe(
    npp: &NodePodProbe,
    node: Option<&Node>,
    pods: &[Pod],
    markers: &[PodProbeMarker],
) -> NodeProbePlan {
    if node.is_none_or(|n| n.metadata.deletion_timestamp.is_some()) {
        return NodeProbePlan {
            delete: true,
            ..NodeProbePlan::default()
        };
    }
    let mut pruned = npp.clone();
    let (changed, pods) = sync_node_pod_probe(&mut pruned, pods, markers);
    NodeProbePlan {
        delete: false,
        spec: changed.then_some(pruned.spec),
        pods,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn marker() -> PodProbeMarker {
        serde_json::from_value(json!({
            "metadata": {"name": "m", "namespace": "ns", "generation": 2},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "probes": [{
                "name": "healthy", "containerName": "main",
                "probe": {"exec": {"command": ["true"]}},
                "podConditionType": "game.kruise.io/healthy",
                "markerPolicy": [{"state": "Succeeded", "labels": {"healthy": "true"}}]}]}
        }))
        .unwrap()
    }

    fn pod(name: &str, node: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns", "uid": format!("u-{name}"), "labels": {"app": "web"}},
            "spec": {"nodeName": node, "containers": [{"name": "main"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Initialized", "status": "True"}]}
        }))
        .unwrap()
    }

    #[test]
    fn a_new_marker_gets_its_finalizer_probes_per_node_and_status() {
        let ppm = marker();
        let pods = [pod("a", "n1"), pod("b", "n2"), pod("c", "n1")];
        let mut specs = BTreeMap::from([
            ("n1".to_owned(), NodePodProbeSpec::default()),
            ("n2".to_owned(), NodePodProbeSpec::default()),
        ]);
        let out = plan_marker(
            KruiseVersion::V1_9,
            &ppm,
            &pods,
            &|_| false,
            &mut specs,
            false,
        );
        assert!(out.add_finalizer);
        assert_eq!(out.sync.changed_nodes.len(), 2);
        assert_eq!(specs["n1"].pod_probes.len(), 2);
        assert_eq!(specs["n1"].pod_probes[0].probes[0].name, "m#healthy");
        assert_eq!(
            out.status,
            Some(PodProbeMarkerStatus {
                observed_generation: 2,
                matched_pods: 3
            })
        );
        // Again with what was written: nothing to do.
        let mut done = ppm.clone();
        done.metadata.finalizers = Some(vec![CLEANUP_FINALIZER.to_owned()]);
        done.status = out.status.clone();
        let again = plan_marker(
            KruiseVersion::V1_9,
            &done,
            &pods,
            &|_| false,
            &mut specs,
            false,
        );
        assert!(!again.add_finalizer && again.status.is_none());
        assert!(again.sync.changed_nodes.is_empty());

        // Deleted: its probes go, then its finalizer.
        done.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::UNIX_EPOCH),
        );
        let gone = plan_marker(
            KruiseVersion::V1_9,
            &done,
            &pods,
            &|_| false,
            &mut specs,
            false,
        );
        assert!(gone.sync.remove_finalizer);
        assert!(specs.values().all(|s| s.pod_probes.is_empty()));
    }

    #[test]
    fn a_pod_listed_before_it_had_an_ip_gets_it_later() {
        let mut ppm = marker();
        ppm.metadata.finalizers = Some(vec![CLEANUP_FINALIZER.to_owned()]);
        let mut p = pod("a", "n1");
        let mut specs = BTreeMap::from([("n1".to_owned(), NodePodProbeSpec::default())]);
        plan_marker(
            KruiseVersion::V1_9,
            &ppm,
            std::slice::from_ref(&p),
            &|_| false,
            &mut specs,
            false,
        );
        assert_eq!(specs["n1"].pod_probes[0].ip, "");
        let written = serde_json::to_value(&specs["n1"]).unwrap();
        assert_eq!(
            written["podProbes"][0]["IP"], "",
            "IP is required: written even empty"
        );
        p.status.as_mut().unwrap().pod_ip = Some("10.0.0.7".into());
        let out = plan_marker(
            KruiseVersion::V1_9,
            &ppm,
            std::slice::from_ref(&p),
            &|_| false,
            &mut specs,
            false,
        );
        assert!(out.sync.changed_nodes.contains("n1"));
        assert_eq!(specs["n1"].pod_probes[0].ip, "10.0.0.7");
    }

    #[test]
    fn a_node_probe_goes_with_its_node_and_only_ready_real_nodes_get_one() {
        let npp: NodePodProbe =
            serde_json::from_value(json!({"metadata": {"name": "n1"}})).unwrap();
        assert!(plan_node_probe(&npp, None, &[], &[]).delete);
        let node: Node = serde_json::from_value(json!({
            "metadata": {"name": "n1"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}
        }))
        .unwrap();
        assert!(!plan_node_probe(&npp, Some(&node), &[], &[]).delete);
        assert!(wants_node_pod_probe(&node));
        let mut virtual_node = node.clone();
        virtual_node.metadata.labels = Some([("type".into(), VIRTUAL_KUBELET.into())].into());
        assert!(!wants_node_pod_probe(&virtual_node));
        let mut not_ready = node.clone();
        not_ready.status = None;
        assert!(!wants_node_pod_probe(&not_ready));
    }
}
