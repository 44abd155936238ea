//! Simulated Node objects, pure: names, labels (hostname, zone), capacity, addresses, and the
//! Ready condition with its heartbeat.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::{
    api::core::v1::{
        Node, NodeAddress, NodeCondition, NodeDaemonEndpoints, NodeSpec, NodeStatus, NodeSystemInfo,
    },
    apimachinery::pkg::{
        api::resource::Quantity,
        apis::meta::v1::{ObjectMeta, Time},
    },
};

/// The label every simulated node carries; the simulator only runs pods on nodes with it.
pub const SIM_NODE_LABEL: &str = "kruise-tui.io/simulated-node";

/// The zones nodes are spread over, round-robin.
pub const ZONES: [&str; 3] = ["zone-a", "zone-b", "zone-c"];

/// The name of simulated node `index`.
pub fn node_name(index: usize) -> String {
    format!("sim-node-{index}")
}

/// The InternalIP of simulated node `index` (10.240.0.0/16, apart from the pod IPs).
pub fn node_ip(index: usize) -> String {
    format!("10.240.{}.{}", (index / 250) % 256, index % 250 + 2)
}

/// The Node object of simulated node `index`, Ready as of `now`.
pub fn node_object(index: usize, now: Timestamp) -> Node {
    let name = node_name(index);
    let labels: BTreeMap<String, String> = [
        ("kubernetes.io/hostname", name.as_str()),
        ("kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", "amd64"),
        ("topology.kubernetes.io/zone", ZONES[index % ZONES.len()]),
        ("topology.kubernetes.io/region", "sim-region"),
        ("node.kubernetes.io/instance-type", "sim.large"),
        (SIM_NODE_LABEL, "true"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    Node {
        metadata: ObjectMeta {
            name: Some(name),
            labels: Some(labels),
            annotations: Some(BTreeMap::from([(
                "node.alpha.kubernetes.io/ttl".to_owned(),
                "0".to_owned(),
            )])),
            ..Default::default()
        },
        spec: Some(NodeSpec {
            pod_cidr: Some(format!("10.{}.0.0/16", 100 + index % 100)),
            ..Default::default()
        }),
        status: Some(node_status(index, now)),
    }
}

/// The status a healthy simulated node reports at `now` (its heartbeat).
pub fn node_status(index: usize, now: Timestamp) -> NodeStatus {
    let capacity: BTreeMap<String, Quantity> = [
        ("cpu", "32"),
        ("memory", "256Gi"),
        ("pods", "10000"),
        ("ephemeral-storage", "1Ti"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), Quantity(v.to_owned())))
    .collect();
    let beat = Some(Time(Timestamp::from_second(now.as_second()).unwrap_or(now)));
    let condition = |type_: &str, status: &str, reason: &str, message: &str| NodeCondition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: Some(reason.to_owned()),
        message: Some(message.to_owned()),
        last_heartbeat_time: beat.clone(),
        last_transition_time: beat.clone(),
    };
    NodeStatus {
        allocatable: Some(capacity.clone()),
        capacity: Some(capacity),
        addresses: Some(vec![
            NodeAddress {
                type_: "InternalIP".into(),
                address: node_ip(index),
            },
            NodeAddress {
                type_: "Hostname".into(),
                address: node_name(index),
            },
        ]),
        conditions: Some(vec![
            condition(
                "MemoryPressure",
                "False",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            condition(
                "DiskPressure",
                "False",
                "KubeletHasNoDiskPressure",
                "kubelet has no disk pressure",
            ),
            condition(
                "PIDPressure",
                "False",
                "KubeletHasSufficientPID",
                "kubelet has sufficient PID available",
            ),
            condition(
                "Ready",
                "True",
                "KubeletReady",
                "kubelet is posting ready status (simulated by kruise-tui)",
            ),
        ]),
        daemon_endpoints: Some(NodeDaemonEndpoints::default()),
        node_info: Some(NodeSystemInfo {
            architecture: "amd64".into(),
            boot_id: format!("sim-boot-{index}"),
            container_runtime_version: "containerd://sim".into(),
            kernel_version: "6.8.0-sim".into(),
            kube_proxy_version: String::new(),
            kubelet_version: "v1.33.0-sim".into(),
            machine_id: format!("sim-machine-{index}"),
            operating_system: "linux".into(),
            os_image: "kruise-tui simulated node".into(),
            system_uuid: format!("sim-uuid-{index}"),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A heartbeat for an existing node: the Ready family of conditions with a fresh
/// lastHeartbeatTime, keeping each condition's lastTransitionTime when its status is unchanged.
pub fn heartbeat(existing: Option<&NodeStatus>, index: usize, now: Timestamp) -> NodeStatus {
    let mut fresh = node_status(index, now);
    let old = existing
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    for condition in fresh.conditions.iter_mut().flatten() {
        if let Some(prev) = old
            .iter()
            .find(|c| c.type_ == condition.type_ && c.status == condition.status)
        {
            condition.last_transition_time = prev.last_transition_time.clone();
        }
    }
    fresh
}

/// The index of a simulated node from its name (`sim-node-<i>`).
pub fn node_index(name: &str) -> Option<usize> {
    name.strip_prefix("sim-node-")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        Timestamp::from_second(1_800_000_000).unwrap()
    }

    #[test]
    fn nodes_carry_hostname_and_zone_labels_and_are_ready() {
        let node = node_object(4, now());
        let labels = node.metadata.labels.as_ref().unwrap();
        assert_eq!(node.metadata.name.as_deref(), Some("sim-node-4"));
        assert_eq!(labels["kubernetes.io/hostname"], "sim-node-4");
        assert_eq!(labels["topology.kubernetes.io/zone"], "zone-b");
        assert_eq!(labels[SIM_NODE_LABEL], "true");
        let status = node.status.unwrap();
        let ready = status
            .conditions
            .unwrap()
            .into_iter()
            .find(|c| c.type_ == "Ready")
            .unwrap();
        assert_eq!(ready.status, "True");
        assert_eq!(node_index("sim-node-4"), Some(4));
        assert_eq!(node_index("other"), None);
    }

    #[test]
    fn heartbeats_refresh_the_heartbeat_but_keep_transition_times() {
        let first = node_status(0, now());
        let later = now() + jiff::SignedDuration::from_secs(60);
        let beat = heartbeat(Some(&first), 0, later);
        let ready = |s: &NodeStatus| {
            s.conditions
                .clone()
                .unwrap()
                .into_iter()
                .find(|c| c.type_ == "Ready")
                .unwrap()
        };
        assert_eq!(ready(&beat).last_heartbeat_time, Some(Time(later)));
        assert_eq!(ready(&beat).last_transition_time, Some(Time(now())));
    }

    #[test]
    fn node_ips_are_distinct() {
        let ips: std::collections::HashSet<String> = (0..600).map(node_ip).collect();
        assert_eq!(ips.len(), 600);
    }
}
