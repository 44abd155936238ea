//! What a PersistentPodState keeps for a pod and whether the pod still runs there.
//!
//! Port of pkg/controller/persistentpodstate/persistent_pod_state_controller.go (v1.8.4):
//! `Reconcile` records a pod only once it is Ready on a node, keeping the node's name and the
//! node's values for every topology key of the spec (required and preferred, `getPodState`); a
//! record is rewritten when the pod is Ready on another node. So a record that disagrees with
//! where the pod runs is one of a pod recreated elsewhere that is not Ready yet.

use std::collections::{BTreeMap, BTreeSet};

use crate::api::persistentpodstate::{PersistentPodStateSpec, PodState};

/// The node label keys a PersistentPodState keeps (required first, then preferred; sorted and
/// deduplicated as upstream's `sets.String` is).
pub fn topology_keys(spec: &PersistentPodStateSpec) -> BTreeSet<String> {
    let mut keys: BTreeSet<String> = spec
        .required_persistent_topology
        .iter()
        .flat_map(|t| t.node_topology_keys.iter().cloned())
        .collect();
    for p in &spec.preferred_persistent_topology {
        keys.extend(p.preference.node_topology_keys.iter().cloned());
    }
    keys
}

/// The state upstream records for a Ready pod on `node` (`getPodState`): the node's name and its
/// labels for `keys` (keys the node lacks are left out). Annotations are the pod's values for
/// the spec's persistent annotation keys.
pub fn recorded_state(
    node: &str,
    node_labels: &BTreeMap<String, String>,
    keys: &BTreeSet<String>,
    pod_annotations: &BTreeMap<String, String>,
    annotation_keys: &BTreeSet<String>,
) -> PodState {
    PodState {
        node_name: Some(node.to_owned()),
        node_topology_labels: keys
            .iter()
            .filter_map(|k| Some((k.clone(), node_labels.get(k)?.clone())))
            .collect(),
        annotations: annotation_keys
            .iter()
            .filter_map(|k| Some((k.clone(), pod_annotations.get(k)?.clone())))
            .collect(),
    }
}

/// Where a pod runs now, as far as a PersistentPodState is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running<'a> {
    /// `spec.nodeName`; empty while unscheduled.
    pub node: &'a str,
    /// That node's labels (`None` when the node could not be read).
    pub node_labels: Option<&'a BTreeMap<String, String>>,
}

/// How a kept state compares with where the pod runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// On the node kept.
    SameNode,
    /// On another node with the kept values of every required topology label (of every kept
    /// label when nothing is required); the preferred labels that differ are listed.
    SameTopology(Vec<String>),
    /// On a node whose required topology labels (or, with nothing required, any kept label)
    /// differ from the kept ones (listed `key: kept → now`).
    Moved(Vec<String>),
    /// The pod exists but is not scheduled yet.
    Pending,
    /// A state is kept for a pod that does not exist (scaled in, or being recreated).
    Gone,
    /// The pod runs but nothing is kept for it yet (upstream records Ready pods only).
    NotKept,
    /// The node's labels could not be read: only the node names can be compared.
    Unknown,
}

impl Placement {
    /// The short word the views show.
    pub fn word(&self) -> &'static str {
        match self {
            Placement::SameNode | Placement::SameTopology(_) => "match",
            Placement::Moved(_) => "moved",
            Placement::Pending => "pending",
            Placement::Gone => "pod gone",
            Placement::NotKept => "not kept",
            Placement::Unknown => "unknown",
        }
    }
}

/// Compares `kept` with where the pod runs (`None`: no such pod). `required` are the keys of
/// `requiredPersistentTopology`: the webhook pins a recreated pod to their kept values, while
/// the preferred ones are only weighed.
pub fn placement(
    kept: Option<&PodState>,
    running: Option<&Running<'_>>,
    required: &BTreeSet<String>,
) -> Placement {
    let Some(run) = running else {
        return Placement::Gone;
    };
    if run.node.is_empty() {
        return Placement::Pending;
    }
    let Some(kept) = kept else {
        return Placement::NotKept;
    };
    if kept.node_name.as_deref() == Some(run.node) {
        return Placement::SameNode;
    }
    let Some(labels) = run.node_labels else {
        return Placement::Unknown;
    };
    if kept.node_topology_labels.is_empty() {
        // Nothing but the node name was kept (the node lacked every key).
        return Placement::Moved(vec![format!(
            "node: {} → {}",
            kept.node_name.as_deref().unwrap_or("-"),
            run.node
        )]);
    }
    let (hard, soft): (Vec<_>, Vec<_>) = kept
        .node_topology_labels
        .iter()
        .filter(|(k, v)| labels.get(*k) != Some(*v))
        .map(|(k, v)| {
            let line = format!(
                "{k}: {v} → {}",
                labels.get(k).map_or("(none)", String::as_str)
            );
            (required.is_empty() || required.contains(k), line)
        })
        .partition(|(hard, _)| *hard);
    let lines = |v: Vec<(bool, String)>| v.into_iter().map(|(_, l)| l).collect::<Vec<_>>();
    if hard.is_empty() {
        Placement::SameTopology(lines(soft))
    } else {
        Placement::Moved(lines(hard))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn spec() -> PersistentPodStateSpec {
        serde_json::from_value(serde_json::json!({
            "targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "db"},
            "requiredPersistentTopology": {"nodeTopologyKeys": ["topology.kubernetes.io/zone"]},
            "preferredPersistentTopology": [
                {"weight": 100, "preference": {"nodeTopologyKeys": ["kubernetes.io/hostname", "topology.kubernetes.io/zone"]}}
            ]
        }))
        .expect("spec")
    }

    #[test]
    fn keys_are_the_union_of_required_and_preferred() {
        let keys: Vec<String> = topology_keys(&spec()).into_iter().collect();
        assert_eq!(
            keys,
            ["kubernetes.io/hostname", "topology.kubernetes.io/zone"]
        );
    }

    #[test]
    fn the_record_keeps_the_node_values_of_the_keys_it_has() {
        let node = labels(&[
            ("kubernetes.io/hostname", "n1"),
            ("topology.kubernetes.io/zone", "zone-a"),
            ("other", "x"),
        ]);
        let mut keys = topology_keys(&spec());
        keys.insert("missing/key".into());
        let pod = labels(&[("a", "1"), ("b", "2")]);
        let kept = recorded_state("n1", &node, &keys, &pod, &["a".to_owned()].into());
        assert_eq!(kept.node_name.as_deref(), Some("n1"));
        assert_eq!(kept.node_topology_labels.len(), 2);
        assert_eq!(
            kept.node_topology_labels["topology.kubernetes.io/zone"],
            "zone-a"
        );
        assert_eq!(kept.annotations, labels(&[("a", "1")]));
    }

    #[test]
    fn placements() {
        let kept = PodState {
            node_name: Some("n1".into()),
            node_topology_labels: labels(&[("topology.kubernetes.io/zone", "zone-a")]),
            annotations: BTreeMap::new(),
        };
        let zone_a = labels(&[("topology.kubernetes.io/zone", "zone-a")]);
        let zone_b = labels(&[("topology.kubernetes.io/zone", "zone-b")]);
        let on = |node, l| Running {
            node,
            node_labels: l,
        };
        let none = BTreeSet::new();
        let zone: BTreeSet<String> = ["topology.kubernetes.io/zone".to_owned()].into();
        let host: BTreeSet<String> = ["kubernetes.io/hostname".to_owned()].into();
        let p = |kept: Option<&PodState>, run: Option<&Running>| placement(kept, run, &none);
        assert_eq!(p(Some(&kept), None), Placement::Gone);
        assert_eq!(p(Some(&kept), Some(&on("", None))), Placement::Pending);
        assert_eq!(p(None, Some(&on("n1", Some(&zone_a)))), Placement::NotKept);
        assert_eq!(p(Some(&kept), Some(&on("n1", None))), Placement::SameNode);
        assert_eq!(
            p(Some(&kept), Some(&on("n2", Some(&zone_a)))),
            Placement::SameTopology(vec![])
        );
        let moved = vec!["topology.kubernetes.io/zone: zone-a → zone-b".to_owned()];
        assert_eq!(
            p(Some(&kept), Some(&on("n3", Some(&zone_b)))),
            Placement::Moved(moved.clone())
        );
        assert_eq!(
            placement(Some(&kept), Some(&on("n3", Some(&zone_b))), &zone),
            Placement::Moved(moved.clone())
        );
        // Only the hostname is required: another zone is a preference missed, not a move.
        assert_eq!(
            placement(Some(&kept), Some(&on("n3", Some(&zone_b))), &host),
            Placement::SameTopology(moved)
        );
        assert_eq!(p(Some(&kept), Some(&on("n3", None))), Placement::Unknown);
        assert_eq!(
            p(Some(&kept), Some(&on("n3", Some(&zone_b)))).word(),
            "moved"
        );
    }
}
