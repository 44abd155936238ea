//! Simulated Node objects, pure: names, labels (hostname, zone), capacity, addresses, the
//! Ready condition with its heartbeat, and the node Lease a kubelet renews.

use std::collections::BTreeMap;

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::{
    api::{
        coordination::v1::{Lease, LeaseSpec},
        core::v1::{
            Node, NodeAddress, NodeCondition, NodeDaemonEndpoints, NodeSpec, NodeStatus,
            NodeSystemInfo,
        },
    },
    apimachinery::pkg::{
        api::resource::Quantity,
        apis::meta::v1::{MicroTime, ObjectMeta, OwnerReference, Time},
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

/// Whether a node's status needs posting at `now`: a condition we report is missing or has
/// another status (someone, e.g. the node lifecycle controller, set Ready to Unknown), or the
/// Ready heartbeat is `every` old. Otherwise the Lease alone tells the cluster the node lives.
pub fn status_due(
    existing: Option<&NodeStatus>,
    index: usize,
    now: Timestamp,
    every: Duration,
) -> bool {
    let Some(existing) = existing else {
        return true;
    };
    let have = existing.conditions.as_deref().unwrap_or_default();
    let want = node_status(index, now).conditions.unwrap_or_default();
    let differs = want.iter().any(|w| {
        !have
            .iter()
            .any(|h| h.type_ == w.type_ && h.status == w.status)
    });
    let beat = have
        .iter()
        .find(|c| c.type_ == "Ready")
        .and_then(|c| c.last_heartbeat_time.as_ref())
        .map(|t| t.0);
    let every = SignedDuration::try_from(every).unwrap_or(SignedDuration::MAX);
    differs || beat.is_none_or(|beat| now.duration_since(beat) >= every)
}

/// The namespace of node Leases (every cluster has it).
pub const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";

/// The kubelet's node lease duration (`nodeLeaseDurationSeconds`).
pub const NODE_LEASE_SECONDS: i32 = 40;

/// The node Lease the kubelet of `node` renews at `now`, built on `existing` (its metadata, the
/// resourceVersion included, is kept): holder and name are the node's, owned by the Node (so it
/// goes with it), renewTime in microseconds.
pub fn node_lease(existing: Option<&Lease>, node: &Node, now: Timestamp) -> Lease {
    let name = node.metadata.name.clone().unwrap_or_default();
    let mut metadata = existing.map(|l| l.metadata.clone()).unwrap_or_default();
    metadata.name = Some(name.clone());
    metadata.namespace = Some(NODE_LEASE_NAMESPACE.to_owned());
    metadata.managed_fields = None;
    if let Some(uid) = node.metadata.uid.clone() {
        metadata.owner_references = Some(vec![OwnerReference {
            api_version: "v1".to_owned(),
            kind: "Node".to_owned(),
            name: name.clone(),
            uid,
            ..Default::default()
        }]);
    }
    let spec = existing.and_then(|l| l.spec.clone()).unwrap_or_default();
    Lease {
        metadata,
        spec: Some(LeaseSpec {
            holder_identity: Some(name),
            lease_duration_seconds: Some(NODE_LEASE_SECONDS),
            renew_time: Some(micro_time(now)),
            ..spec
        }),
    }
}

/// `now` as a MicroTime (truncated to the microsecond, as the API stores it).
pub fn micro_time(now: Timestamp) -> MicroTime {
    let micros = now.as_microsecond();
    MicroTime(Timestamp::from_microsecond(micros).unwrap_or(now))
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
    fn the_status_is_due_when_a_condition_changed_or_the_heartbeat_is_old() {
        let every = Duration::from_secs(40);
        let posted = node_status(0, now());
        assert!(status_due(None, 0, now(), every));
        assert!(!status_due(
            Some(&posted),
            0,
            now() + SignedDuration::from_secs(39),
            every
        ));
        assert!(status_due(
            Some(&posted),
            0,
            now() + SignedDuration::from_secs(40),
            every
        ));
        // The node lifecycle controller marked it unreachable: post at once.
        let mut unknown = posted.clone();
        for c in unknown.conditions.iter_mut().flatten() {
            if c.type_ == "Ready" {
                c.status = "Unknown".into();
                c.reason = Some("NodeStatusUnknown".into());
            }
        }
        assert!(status_due(Some(&unknown), 0, now(), every));
    }

    #[test]
    fn a_node_lease_is_held_by_and_owned_by_its_node() {
        let mut node = node_object(2, now());
        node.metadata.uid = Some("uid-2".into());
        let at = now() + SignedDuration::from_micros(1_234_567_891);
        let lease = node_lease(None, &node, at);
        assert_eq!(lease.metadata.name.as_deref(), Some("sim-node-2"));
        assert_eq!(
            lease.metadata.namespace.as_deref(),
            Some(NODE_LEASE_NAMESPACE)
        );
        let owner = &lease.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (
                owner.api_version.as_str(),
                owner.kind.as_str(),
                owner.name.as_str(),
                owner.uid.as_str()
            ),
            ("v1", "Node", "sim-node-2", "uid-2")
        );
        let json = serde_json::to_value(&lease).unwrap();
        assert_eq!(json["apiVersion"], "coordination.k8s.io/v1");
        assert_eq!(json["kind"], "Lease");
        assert_eq!(json["spec"]["holderIdentity"], "sim-node-2");
        assert_eq!(json["spec"]["leaseDurationSeconds"], 40);
        let renew = json["spec"]["renewTime"].as_str().unwrap();
        assert!(renew.ends_with(":34.567891Z"), "{renew}");

        // A renewal keeps what the server stored (resourceVersion) and moves renewTime.
        let mut stored = lease.clone();
        stored.metadata.resource_version = Some("42".into());
        let later = at + SignedDuration::from_secs(10);
        let renewed = node_lease(Some(&stored), &node, later);
        assert_eq!(renewed.metadata.resource_version.as_deref(), Some("42"));
        assert_eq!(renewed.spec.unwrap().renew_time, Some(micro_time(later)));
    }

    #[test]
    fn node_ips_are_distinct() {
        let ips: std::collections::HashSet<String> = (0..600).map(node_ip).collect();
        assert_eq!(ips.len(), 600);
    }
}
