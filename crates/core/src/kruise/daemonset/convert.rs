//! Building [`DsPod`] and [`DsNode`] from Kubernetes objects (time is a parameter).

use k8s_openapi::{
    api::core::v1::{Node, Pod},
    jiff::Timestamp,
};

use super::{DsNode, DsPod, HASH_LABEL, TEMPLATE_GENERATION_LABEL};
use crate::kruise::statefulset::{LIFECYCLE_STATE_LABEL, convert::ready_for_seconds};

impl DsPod {
    /// The rollout view of a daemon pod at time `now`.
    pub fn from_pod(pod: &Pod, now: Timestamp) -> Self {
        let labels = pod.metadata.labels.as_ref();
        let label = |k: &str| labels.and_then(|l| l.get(k)).cloned();
        let ready = crate::api::pod::is_ready(pod);
        Self {
            name: pod.metadata.name.clone().unwrap_or_default(),
            hash: label(HASH_LABEL).unwrap_or_default(),
            template_generation: label(TEMPLATE_GENERATION_LABEL),
            terminating: pod.metadata.deletion_timestamp.is_some(),
            ready,
            ready_for_seconds: ready_for_seconds(pod, now),
            lifecycle_state: label(LIFECYCLE_STATE_LABEL).unwrap_or_default(),
        }
    }
}

impl DsNode {
    /// Name and labels of a node.
    pub fn from_node(node: &Node) -> Self {
        Self {
            name: node.metadata.name.clone().unwrap_or_default(),
            labels: node.metadata.labels.clone().unwrap_or_default(),
        }
    }
}
