//! Advanced DaemonSet pods: the pod created for a node (k8s `daemon/util.CreatePodTemplate`,
//! `ReplaceDaemonSetPodNodeNameNodeAffinity`, `controller.GetPodFromTemplate`), the node a pod
//! is meant for (`GetTargetNodeName`) and the oldest-first order (`podByCreationTimestampAndPhase`).

use std::cmp::Ordering;

use k8s_openapi::{
    api::core::v1::{
        Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod,
        PodReadinessGate,
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};

use super::owner_reference;
use crate::{
    api::DaemonSet,
    kruise::{
        cloneset::inplace::IN_PLACE_UPDATE_READY,
        daemonset::{HASH_LABEL, TEMPLATE_GENERATION_LABEL, scheduling::daemon_tolerations},
    },
};

/// The required node affinity that pins a pod to `node` (`metadata.name In [node]`).
fn node_term(node: &str) -> NodeSelectorTerm {
    NodeSelectorTerm {
        match_fields: Some(vec![NodeSelectorRequirement {
            key: "metadata.name".to_owned(),
            operator: "In".to_owned(),
            values: Some(vec![node.to_owned()]),
        }]),
        match_expressions: None,
    }
}

/// Port of `ReplaceDaemonSetPodNodeNameNodeAffinity`: the affinity with its required node
/// selector replaced by the one term naming `node` (preferred terms and pod affinities kept).
pub fn pin_to_node(affinity: Option<Affinity>, node: &str) -> Affinity {
    let mut affinity = affinity.unwrap_or_default();
    let node_affinity = affinity
        .node_affinity
        .get_or_insert_with(NodeAffinity::default);
    node_affinity.required_during_scheduling_ignored_during_execution = Some(NodeSelector {
        node_selector_terms: vec![node_term(node)],
    });
    affinity
}

/// The daemon pod for `node`: the template with the daemon tolerations, the hash (and template
/// generation) labels, the `InPlaceUpdateReady` gate when the update type is InPlaceIfPossible,
/// pinned to the node; named by the server from `<ds>-`.
pub fn new_pod(
    ds: &DaemonSet,
    hash: &str,
    generation: Option<i64>,
    in_place: bool,
    node: &str,
) -> Pod {
    let template = &ds.spec.template;
    let tmeta = template.metadata.clone().unwrap_or_default();
    let mut labels = tmeta.labels.unwrap_or_default();
    if let Some(g) = generation {
        labels.insert(TEMPLATE_GENERATION_LABEL.to_owned(), g.to_string());
    }
    if !hash.is_empty() {
        labels.insert(HASH_LABEL.to_owned(), hash.to_owned());
    }
    let mut spec = template.spec.clone().unwrap_or_default();
    spec.tolerations = Some(daemon_tolerations(&spec));
    if in_place {
        spec.readiness_gates
            .get_or_insert_with(Vec::new)
            .push(PodReadinessGate {
                condition_type: IN_PLACE_UPDATE_READY.to_owned(),
            });
    }
    spec.affinity = Some(pin_to_node(spec.affinity.take(), node));
    Pod {
        metadata: ObjectMeta {
            generate_name: Some(format!(
                "{}-",
                ds.metadata.name.as_deref().unwrap_or_default()
            )),
            namespace: ds.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: tmeta.annotations,
            finalizers: tmeta.finalizers,
            owner_references: owner_reference(ds).map(|r| vec![r]),
            ..ObjectMeta::default()
        },
        spec: Some(spec),
        status: None,
    }
}

/// Port of k8s `daemon/util.GetTargetNodeName`: the node the pod is bound to, or the one its
/// required node affinity names.
pub fn target_node(pod: &Pod) -> Option<String> {
    let spec = pod.spec.as_ref()?;
    if let Some(n) = spec.node_name.as_deref().filter(|n| !n.is_empty()) {
        return Some(n.to_owned());
    }
    let terms = &spec
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?
        .node_selector_terms;
    terms.iter().find_map(|t| {
        t.match_fields.iter().flatten().find_map(|r| {
            match (r.key.as_str(), r.operator.as_str(), r.values.as_deref()) {
                ("metadata.name", "In", Some([one])) => Some(one.clone()),
                _ => None,
            }
        })
    })
}

/// `podByCreationTimestampAndPhase`: bound pods first, then the oldest, then by name.
pub fn oldest_first(a: &Pod, b: &Pod) -> Ordering {
    let bound = |p: &Pod| {
        p.spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .is_some_and(|n| !n.is_empty())
    };
    let created = |p: &Pod| p.metadata.creation_timestamp.as_ref().map(|t| t.0);
    bound(b)
        .cmp(&bound(a))
        .then_with(|| created(a).cmp(&created(b)))
        .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_daemon_pod_is_pinned_tolerant_and_labelled() {
        let ds: DaemonSet = serde_json::from_value(json!({
            "metadata": {"name": "agent", "namespace": "ns", "uid": "u1"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                     "template": {"metadata": {"labels": {"app": "agent"}},
                                  "spec": {"containers": [{"name": "c", "image": "a:1"}],
                                           "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                               {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "Exists"}]}]}}}}}}
        }))
        .unwrap_or_default();
        let pod = new_pod(&ds, "h1", None, true, "node-a");
        assert_eq!(target_node(&pod).as_deref(), Some("node-a"));
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        assert_eq!(labels.get(HASH_LABEL).map(String::as_str), Some("h1"));
        assert!(!labels.contains_key(TEMPLATE_GENERATION_LABEL));
        let spec = pod.spec.clone().unwrap_or_default();
        assert!(
            spec.tolerations
                .unwrap_or_default()
                .iter()
                .any(|t| t.key.as_deref() == Some("node.kubernetes.io/unschedulable"))
        );
        assert_eq!(spec.readiness_gates.map(|g| g.len()), Some(1));
        assert_eq!(pod.metadata.generate_name.as_deref(), Some("agent-"));
        assert!(pod.metadata.name.is_none());
    }
}
