//! Which nodes should run a daemon pod: node name, node selector and required node affinity,
//! taints against the pod's tolerations plus the default daemon tolerations (the predicates
//! themselves are the shared ones in [`crate::kruise::scheduling`]).

use k8s_openapi::api::core::v1::{Node, PodSpec, Toleration};

use crate::kruise::scheduling::{fits_node_affinity, untolerated};

/// Whether a node should run the daemon pod, and whether an existing pod may keep running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeFit {
    /// A pod should be created on the node if none is there.
    pub should_run: bool,
    /// A pod already on the node may stay (only NoExecute taints evict it).
    pub should_continue_running: bool,
}

/// Port of k8s.io/kubernetes/pkg/controller/daemon/util::AddOrUpdateDaemonPodTolerations (v1.8.4
/// pin): the tolerations every daemon pod gets.
pub fn daemon_tolerations(spec: &PodSpec) -> Vec<Toleration> {
    let mut out = spec.tolerations.clone().unwrap_or_default();
    let mut add = |key: &str, effect: &str| {
        let exists = out.iter().any(|t| {
            t.key.as_deref() == Some(key)
                && t.effect.as_deref() == Some(effect)
                && t.operator.as_deref() == Some("Exists")
        });
        if !exists {
            out.retain(|t| !(t.key.as_deref() == Some(key) && t.effect.as_deref() == Some(effect)));
            out.push(Toleration {
                key: Some(key.to_owned()),
                operator: Some("Exists".to_owned()),
                effect: Some(effect.to_owned()),
                ..Default::default()
            });
        }
    };
    add("node.kubernetes.io/not-ready", "NoExecute");
    add("node.kubernetes.io/unreachable", "NoExecute");
    add("node.kubernetes.io/disk-pressure", "NoSchedule");
    add("node.kubernetes.io/memory-pressure", "NoSchedule");
    add("node.kubernetes.io/pid-pressure", "NoSchedule");
    add("node.kubernetes.io/unschedulable", "NoSchedule");
    if spec.host_network == Some(true) {
        add("node.kubernetes.io/network-unavailable", "NoSchedule");
    }
    out
}

/// Port of pkg/controller/daemonset/daemonset_util.go::nodeShouldRunDaemonPod (v1.8.4) for the
/// daemon's pod template spec.
pub fn node_should_run_daemon_pod(template: &PodSpec, node: &Node) -> NodeFit {
    let no = NodeFit {
        should_run: false,
        should_continue_running: false,
    };
    let name = node.metadata.name.as_deref().unwrap_or_default();
    if template
        .node_name
        .as_deref()
        .is_some_and(|n| !n.is_empty() && n != name)
    {
        return no;
    }
    if !fits_node_affinity(template, node) {
        return no;
    }
    let taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or_default();
    let tolerations = daemon_tolerations(template);
    if untolerated(taints, &tolerations, &["NoExecute", "NoSchedule"]).is_some() {
        return NodeFit {
            should_run: false,
            should_continue_running: untolerated(taints, &tolerations, &["NoExecute"]).is_none(),
        };
    }
    NodeFit {
        should_run: true,
        should_continue_running: true,
    }
}

/// The names of the nodes that should run the daemon pod, in the given order.
pub fn nodes_that_should_run(template: &PodSpec, nodes: &[Node]) -> Vec<String> {
    nodes
        .iter()
        .filter(|n| node_should_run_daemon_pod(template, n).should_run)
        .filter_map(|n| n.metadata.name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn node(v: serde_json::Value) -> Node {
        serde_json::from_value(v).unwrap_or_default()
    }

    #[test]
    fn taints_selector_and_affinity() {
        let plain = node(json!({"metadata": {"name": "a", "labels": {"zone": "z1", "cpu": "8"}}}));
        let tainted = node(
            json!({"metadata": {"name": "b"}, "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]}}),
        );
        let evicting = node(
            json!({"metadata": {"name": "c"}, "spec": {"taints": [{"key": "x", "effect": "NoExecute"}]}}),
        );
        let unschedulable = node(
            json!({"metadata": {"name": "d"}, "spec": {"taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]}}),
        );
        let spec = PodSpec::default();
        assert!(node_should_run_daemon_pod(&spec, &plain).should_run);
        let fit = node_should_run_daemon_pod(&spec, &tainted);
        assert!(!fit.should_run && fit.should_continue_running);
        assert!(!node_should_run_daemon_pod(&spec, &evicting).should_continue_running);
        assert!(
            node_should_run_daemon_pod(&spec, &unschedulable).should_run,
            "default toleration"
        );
        let tolerant: PodSpec = serde_json::from_value(
            json!({"containers": [], "tolerations": [{"key": "gpu", "operator": "Exists"}]}),
        )
        .unwrap_or_default();
        assert!(node_should_run_daemon_pod(&tolerant, &tainted).should_run);
        let picky: PodSpec =
            serde_json::from_value(json!({"containers": [], "nodeSelector": {"zone": "z2"}}))
                .unwrap_or_default();
        assert!(!node_should_run_daemon_pod(&picky, &plain).should_run);
        let affinity: PodSpec = serde_json::from_value(json!({"containers": [], "affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "cpu", "operator": "Gt", "values": ["4"]}]},
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}}})).unwrap_or_default();
        assert!(node_should_run_daemon_pod(&affinity, &plain).should_run);
        assert_eq!(
            nodes_that_should_run(&affinity, &[plain, tainted, evicting]),
            vec!["a"]
        );
    }
}
